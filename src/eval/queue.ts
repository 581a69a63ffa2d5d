/**
 * An evaluation spread over hosts through a Redis queue (BullMQ 6): `fkgqa eval --queue <url>` is
 * the **coordinator**, the only writer of the run file, which queues each selected run not yet in
 * it as a job of `fkgqa-runs` (`QueuedRun`) and appends each record the workers send to its result
 * queue, each run id at most once; `fkgqa worker --queue <url>` are the **workers**, which make each
 * run as `fkgqa eval` does (`RunMaker`) and refuse a job whose fkgqa, build, prompt or gold answer
 * differs from theirs (`refusalOf`). Execution is at least once (a stalled job runs again), the file
 * exactly once, and a restarted coordinator resumes from its file and result queue:
 * docs/evaluation.md ("With a queue: `fkgqa eval --queue` and `fkgqa worker`").
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Queue, WaitingError, Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import { InputError } from '../common/errors.js';
import { codeDigest, TOOL } from '../common/version.js';
import { prepareEval, RunMaker, type EvalContext, type EvalOptions, type EvalSummary, type PlannedRun, type RunTally } from './run-maker.js';
import { canonicalJson, goldAnswerDigest } from '../build/gold-answers.js';
import { digest16, type RunRecord } from './record.js';
import type { RunFile } from './run-file.js';
import { counted, seconds } from '../common/strings.js';

/** The queue of runs to make, shared by every coordinator and worker on one Redis database. */
const RUN_QUEUE = 'fkgqa-runs';
/** The prefix of every Redis key of fkgqa's queues (BullMQ's `prefix`). */
const KEY_PREFIX = 'fkgqa';
/** Format tag of a queued run (`QueuedRun`): a worker refuses any other. */
const QUEUED_RUN_FORMAT = 'fkgqa-queued-run/1';
/** Tries of a queued run whose worker failed with an internal error (not a run that ended badly: that is a record). */
const ATTEMPTS = 3;
/** How often a job may stall (its worker killed or hung) before it is given up. */
const MAX_STALLED = 10;

/** The options of `runEval` that decide a run's outcome: sent with every queued run (no paths, no API key). */
const RUN_SETTING_KEYS = [
  'setup',
  'agent',
  'baseUrl',
  'model',
  'temperature',
  'seed',
  'extraBody',
  'maxRetries',
  'backoffMs',
  'requestTimeoutMs',
  'maxTurns',
  'messageLimit',
  'tokenLimit',
  'timeLimitMs',
  'probe',
  'tools',
  'mcpArgs',
  'timeoutMs',
  'maxQueryChars',
  'federationEngine',
] as const;
/** The settings of a run (`RUN_SETTING_KEYS` of `EvalOptions`). */
type RunSettings = Pick<EvalOptions, (typeof RUN_SETTING_KEYS)[number]>;

/** What a worker must have to make a queued run: otherwise it refuses it (`refusalOf`). */
interface RunExpectation {
  /** fkgqa's version (package.json). */
  fkgqa: string;
  /** `codeDigest()` of the coordinator's fkgqa: sha256 of its compiled code. */
  code: string;
  /** The build's output digest (build.json). */
  outputDigest: string;
  /** sha256 of the setup's prompt file. */
  prompt: string;
  /** `goldAnswerDigest` of the question's gold answer (null: fkgqa stats has not stored it). */
  goldDigest: string | null;
}

/** A job of the run queue. */
interface QueuedRun {
  format: typeof QUEUED_RUN_FORMAT;
  /** The run id (`runIdOf` of run-maker.ts: setup, model or agent, question, repeat and the condition's digest): a worker whose run of these settings gets another id refuses the job. */
  id: string;
  /** benchmark.json index of the question. */
  question: number;
  repeat: number;
  settings: RunSettings;
  expect: RunExpectation;
  /** The coordinator's result queue. */
  results: string;
  /** `host:pid` of the coordinator, for messages. */
  coordinator: string;
}

/** A message to a coordinator's result queue: a finished run, a refusal, or a run given up. */
type QueueResult =
  { kind: 'record'; worker: string; record: RunRecord } | { kind: 'refused'; worker: string; id: string; reason: string } | { kind: 'lost'; worker: string; id: string; error: string };

/** The settings of `runEval`'s options (`RUN_SETTING_KEYS`), without undefined values. */
function runSettings(o: EvalOptions): RunSettings {
  return Object.fromEntries(RUN_SETTING_KEYS.filter((k) => o[k] !== undefined).map((k) => [k, o[k]])) as RunSettings;
}

/** The URL without its password, for messages. */
function shownUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return url;
  }
}

/**
 * Checks that `url` is a Redis URL and that Redis answers PING, so that a wrong `--queue` is said at
 * once instead of the client retrying for ever.
 * @throws InputError naming the URL (password hidden) when it is no redis:// or rediss:// URL or Redis cannot be reached
 */
async function checkRedis(url: string): Promise<void> {
  let u: URL | undefined;
  try {
    u = new URL(url);
  } catch {
    // said below
  }
  if (!u || (u.protocol !== 'redis:' && u.protocol !== 'rediss:')) throw new InputError(`--queue ${shownUrl(url)}: not a Redis URL (redis://host:port[/db])`);
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 10_000, enableOfflineQueue: false });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.ping();
  } catch (e) {
    throw new InputError(`the queue at ${shownUrl(url)} cannot be reached (${(e as Error).message}): start Redis (redis-server) there, or check --queue`);
  } finally {
    client.disconnect();
  }
}

/** The id of a run's job (in the run queue and in the result queue): the coordinator's key, a dot, the run id URI-encoded (BullMQ ids may not hold `:`). */
function jobIdOf(key: string, runId: string): string {
  return `${key}.${encodeURIComponent(runId)}`;
}

/** `host:pid` of this process. */
const me = () => `${os.hostname()}:${process.pid}`;

/** Seconds with one decimal, for progress lines. */

/**
 * The coordinator (module comment): queues `todo` and appends the records the workers send back
 * until every run of `todo` is in the run file (or was given up). Called by `runEval` with the run
 * file open (and locked).
 * @returns the runs given up (`EvalSummary.lost`)
 * @throws InputError when the queue cannot be reached; Error when the run file cannot be written
 */
export async function coordinate(ctx: EvalContext, runFile: RunFile, todo: PlannedRun[], tally: RunTally): Promise<NonNullable<EvalSummary['lost']>> {
  const o = ctx.options;
  const url = o.queue!;
  const progress = o.progress ?? (() => {});
  const warn = o.warn ?? progress;
  await checkRedis(url);
  const settings = runSettings(o);
  let out = path.resolve(o.out);
  try {
    out = fs.realpathSync(out);
  } catch {
    // not written yet: its resolved path
  }
  const key = digest16(canonicalJson({ host: os.hostname(), out, settings, outputDigest: ctx.digest }));
  const resultsName = `fkgqa-results-${key}`;
  const connection = { url };
  const runs = new Queue(RUN_QUEUE, { connection, prefix: KEY_PREFIX });
  const results = new Queue(resultsName, { connection, prefix: KEY_PREFIX });
  const remaining = new Map(todo.map((p) => [p.id, p]));
  const lost: NonNullable<EvalSummary['lost']> = [];
  let finish!: () => void;
  let fail!: (e: unknown) => void;
  const finished = new Promise<void>((resolve, reject) => {
    finish = resolve;
    fail = reject;
  });
  const consumer = new Worker(
    resultsName,
    async (job: Job<QueueResult>) => {
      const m = job.data;
      if (m.kind === 'refused') warn(`warning: worker ${m.worker} refused run ${m.id} and stops: ${m.reason}`);
      else if (m.kind === 'lost') {
        if (remaining.delete(m.id)) {
          lost.push({ id: m.id, error: m.error });
          warn(`warning: run ${m.id} was given up (${m.error.slice(0, 300)}); the same command queues it again`);
        }
      } else if (remaining.has(m.record.id) && m.record.build?.outputDigest === ctx.digest) {
        try {
          runFile.append(m.record);
        } catch (e) {
          fail(e);
          throw e;
        }
        remaining.delete(m.record.id);
        tally.note(m.record, m.worker);
      } else if (m.record.build?.outputDigest !== ctx.digest) {
        warn(`warning: dropped run ${m.record.id} from ${m.worker}: it was made on the build ${String(m.record.build?.outputDigest).slice(0, 16)}, this run file's is ${ctx.digest.slice(0, 16)}`);
      } else {
        // A run already in the file (made twice: its worker was taken for dead, or another coordinator queued it): dropped.
        progress(`  dropped a second record of run ${m.record.id} (by ${m.worker}): the run file holds it already`);
      }
      if (remaining.size === 0) finish();
    },
    { connection, prefix: KEY_PREFIX, concurrency: 1, lockDuration: 10_000, stalledInterval: 10_000, maxStalledCount: MAX_STALLED },
  );
  consumer.on('error', (e) => warn(`warning: the result queue ${resultsName}: ${e.message}`));
  let status: NodeJS.Timeout | undefined;
  try {
    const expectBase = { fkgqa: TOOL.version, code: codeDigest(), prompt: ctx.prompt.sha256, outputDigest: ctx.digest };
    // A run whose job is still queued or running, or whose record waits in the result queue, is not
    // queued again; nor one whose record the consumer appended meanwhile (it appends a record, then
    // removes it from the result queue: asked in this order, one of the three questions sees it).
    const toAdd: PlannedRun[] = [];
    for (const p of todo) {
      const id = jobIdOf(key, p.id);
      if ((await results.getJobState(id)) === 'unknown' && (await runs.getJobState(id)) === 'unknown' && remaining.has(p.id)) toAdd.push(p);
    }
    for (let i = 0; i < toAdd.length; i += 500) {
      await runs.addBulk(
        toAdd.slice(i, i + 500).map((p) => {
          const data: QueuedRun = {
            format: QUEUED_RUN_FORMAT,
            id: p.id,
            question: p.q.index,
            repeat: p.repeat,
            settings,
            expect: { ...expectBase, goldDigest: goldAnswerDigest(ctx.goldOf(p.q)) },
            results: resultsName,
            coordinator: me(),
          };
          return { name: 'run', data, opts: { jobId: jobIdOf(key, p.id), attempts: ATTEMPTS, backoff: { type: 'fixed', delay: 1000 }, removeOnComplete: true, removeOnFail: true } };
        }),
      );
    }
    progress(
      `fkgqa eval: queued ${counted(toAdd.length, 'run')} on ${shownUrl(url)} (queue ${RUN_QUEUE}, results ${resultsName})${todo.length - toAdd.length ? `, ${todo.length - toAdd.length} already queued or finished by a worker` : ''}; ` +
        `waiting for fkgqa worker --queue ${shownUrl(url)} --shards <this build>`,
    );
    if (remaining.size === 0) finish();
    status = setInterval(() => {
      void Promise.all([runs.getJobCounts('waiting', 'active', 'delayed', 'prioritized'), runs.getWorkersCount()]).then(
        ([c, workers]) =>
          progress(
            `  waiting for ${counted(remaining.size, 'run')}: ${(c.waiting ?? 0) + (c.prioritized ?? 0) + (c.delayed ?? 0)} queued, ${c.active ?? 0} running; ${counted(workers, 'worker')} connected`,
          ),
        () => {},
      );
    }, 30_000);
    status.unref();
    await finished;
    return lost;
  } finally {
    clearInterval(status);
    await consumer.close();
    await runs.close();
    await results.close();
  }
}

/** Options of `runWorker`: where this host finds the build, endpoints, prompts and model; how many runs at once. */
export interface WorkerOptions {
  /** The Redis URL (`redis://host:port[/db]`). */
  queue: string;
  /** This host's copy of the build the runs are made on. */
  shards: string;
  /** Endpoints files of the `fkgqa serve`s this host uses (default: the state folder's, else the build's). */
  endpoints?: string | string[];
  state?: string;
  /** Folder of the prompt files (default the shipped ones); each must be the one the coordinator used. */
  promptsDir?: string;
  /** Where this host reaches the model API (default: the run's `--base-url`); recorded in the run. */
  baseUrl?: string;
  apiKey?: string;
  /** Runs at once (default 1). */
  concurrency?: number;
  /** At most `max` runs started per `durationMs`, over all workers of the queue (BullMQ's limiter). */
  rate?: { max: number; durationMs: number };
  /** How long a run's lock lasts without renewal, in ms (default 30,000): a killed worker's run is taken over after about this long. */
  lockDurationMs?: number;
  /** Interval of the "waiting for the API" lines, in ms. */
  noticeMs?: number;
  /** Stops taking runs; the runs in progress finish and are sent. */
  signal?: AbortSignal;
  progress?: (line: string) => void;
  warn?: (line: string) => void;
}

/** What `runWorker` did. */
export interface WorkerSummary {
  /** Runs made and sent. */
  runs: number;
  /** Why the worker refused a run and stopped, if it did. */
  refused?: string;
  ms: number;
}

/** What a worker has, compared with a queued run's `RunExpectation` by `refusalOf`. */
interface WorkerHas {
  fkgqa: string;
  code: string;
  /** Its `--shards` and that build's output digest. */
  shards: string;
  outputDigest: string;
  /** Its prompt file for the run's setup: name and sha256. */
  prompt: { name: string; sha256: string };
  goldDigest: string | null;
}

/**
 * Why a worker must refuse a queued run, or undefined when it may make it: another fkgqa (version or
 * code digest), another build (output digest of its `--shards`), another prompt file, another gold
 * answer for the question (its state folder's fkgqa stats). All differences are named.
 */
function refusalOf(expect: RunExpectation, has: WorkerHas): string | undefined {
  const why: string[] = [];
  if (expect.fkgqa !== has.fkgqa || expect.code !== has.code) {
    why.push(
      `the coordinator runs fkgqa ${expect.fkgqa} (code digest ${expect.code.slice(0, 16)}), this worker fkgqa ${has.fkgqa} (code digest ${has.code.slice(0, 16)}): install the same fkgqa on both`,
    );
  }
  if (expect.outputDigest !== has.outputDigest) {
    why.push(
      `the run is of the build with output digest ${expect.outputDigest.slice(0, 16)}, this worker's --shards ${has.shards} is ${has.outputDigest.slice(0, 16)}: give the worker a copy of the coordinator's build`,
    );
  }
  if (expect.prompt !== has.prompt.sha256)
    why.push(`the prompt ${has.prompt.name} differs (sha256 ${expect.prompt.slice(0, 16)} at the coordinator, ${has.prompt.sha256.slice(0, 16)} here): give the worker the same --prompts`);
  if (expect.goldDigest !== has.goldDigest) {
    why.push(
      `the question's gold answer differs (digest ${expect.goldDigest ?? 'none'} at the coordinator, ${has.goldDigest ?? 'none'} here): copy the coordinator's state folder (fkgqa stats) or give --state`,
    );
  }
  return why.length ? why.join('; ') : undefined;
}

/**
 * A worker (module comment): takes runs from the queue until `signal` aborts (the runs in progress
 * finish and are sent) or it refuses a run (it then stops taking runs).
 * @throws InputError when the queue cannot be reached
 */
export async function runWorker(o: WorkerOptions): Promise<WorkerSummary> {
  const t0 = performance.now();
  const progress = o.progress ?? (() => {});
  const warn = o.warn ?? progress;
  await checkRedis(o.queue);
  const connection = { url: o.queue };
  const has = { fkgqa: TOOL.version, code: codeDigest() };
  const concurrency = o.concurrency ?? 1;
  const freeSlots = Array.from({ length: concurrency }, (_, i) => concurrency - 1 - i);
  const contexts = new Map<string, Promise<{ ctx: EvalContext; maker: RunMaker }>>();
  const resultQueues = new Map<string, Queue>();
  let made = 0;
  let refused: string | undefined;
  const send = async (name: string, m: QueueResult, jobId: string) => {
    if (!resultQueues.has(name)) resultQueues.set(name, new Queue(name, { connection, prefix: KEY_PREFIX }));
    await resultQueues.get(name)!.add(m.kind, m, { jobId, removeOnComplete: true, removeOnFail: true, attempts: 5, backoff: { type: 'fixed', delay: 1000 } });
  };
  const contextOf = (settings: RunSettings) => {
    const k = canonicalJson(settings);
    if (!contexts.has(k)) {
      const options: EvalOptions = {
        ...settings,
        ...(o.baseUrl && settings.agent === 'llm' ? { baseUrl: o.baseUrl } : {}),
        shards: o.shards,
        endpoints: o.endpoints,
        state: o.state,
        promptsDir: o.promptsDir,
        apiKey: o.apiKey,
        noticeMs: o.noticeMs,
        out: '',
        progress,
        warn,
      };
      const ready = prepareEval(options).then((ctx) => ({ ctx, maker: new RunMaker(ctx) }));
      ready.catch(() => contexts.delete(k));
      contexts.set(k, ready);
    }
    return contexts.get(k)!;
  };
  let stopped!: () => void;
  const closed = new Promise<void>((resolve) => (stopped = resolve));
  const stop = () => setImmediate(() => void worker.close().then(stopped, stopped));
  const worker = new Worker(
    RUN_QUEUE,
    async (job: Job<QueuedRun>, token?: string) => {
      const data = job.data;
      const refuse = async (reason: string): Promise<never> => {
        if (!refused) {
          refused = reason;
          warn(`fkgqa worker: refused run ${data.id ?? job.id} (job ${job.id}): ${reason}; it goes back to the queue for another worker, and this worker stops`);
        }
        if (typeof data.results === 'string') await send(data.results, { kind: 'refused', worker: me(), id: String(data.id ?? job.id), reason }, `${job.id}.refused.${process.pid}`).catch(() => {});
        await job.moveToWait(token);
        stop();
        throw new WaitingError();
      };
      if (refused) return refuse(refused);
      if (data.format !== QUEUED_RUN_FORMAT)
        return refuse(`the job is a queued run of format ${JSON.stringify(data.format)}, this fkgqa ${TOOL.version} reads ${QUEUED_RUN_FORMAT}: install the same fkgqa on both`);
      let ctx: EvalContext;
      let maker: RunMaker;
      try {
        ({ ctx, maker } = await contextOf(data.settings));
      } catch (e) {
        if (e instanceof InputError) return refuse(e.message);
        throw e;
      }
      const q = ctx.byIndex.get(data.question);
      const why = refusalOf(data.expect, { ...has, shards: o.shards, outputDigest: ctx.digest, prompt: ctx.prompt, goldDigest: q ? goldAnswerDigest(ctx.goldOf(q)) : null });
      if (why) return refuse(why);
      if (!q) return refuse(`the build has no question with index ${data.question}`);
      const slot = freeSlots.pop() ?? 0;
      let record: RunRecord;
      try {
        record = await maker.run(q, data.repeat, slot);
      } catch (e) {
        if (e instanceof InputError) return refuse(e.message);
        throw e;
      } finally {
        freeSlots.push(slot);
      }
      if (record.id !== data.id) return refuse(`the run's id here is ${record.id}, the coordinator's ${data.id}: install the same fkgqa on both`);
      await send(data.results, { kind: 'record', worker: me(), record }, String(job.id));
      made++;
      progress(`  ${record.id} ${record.question.queryId}: ${record.endReason} in ${seconds(record.ms)} (${counted(made, 'run')} by this worker)`);
      return { endReason: record.endReason };
    },
    {
      connection,
      prefix: KEY_PREFIX,
      concurrency,
      ...(o.rate ? { limiter: { max: o.rate.max, duration: o.rate.durationMs } } : {}),
      lockDuration: o.lockDurationMs ?? 30_000,
      stalledInterval: o.lockDurationMs ?? 30_000,
      maxStalledCount: MAX_STALLED,
    },
  );
  worker.on('error', (e) => warn(`warning: the run queue: ${e.message}`));
  // A run given up (an internal error on its last try, or stalled too often): the coordinator is told, so it does not wait for it.
  worker.on('failed', (job, err) => {
    if (!job || err instanceof WaitingError || err.name === 'WaitingError') return;
    const last = job.attemptsMade >= (job.opts.attempts ?? 1) || /stalled more than/i.test(err.message);
    warn(`fkgqa worker: run ${job.data?.id ?? job.id} failed${last ? '' : ` (try ${job.attemptsMade} of ${job.opts.attempts ?? 1})`}: ${err.message}`);
    if (last && typeof job.data?.results === 'string') void send(job.data.results, { kind: 'lost', worker: me(), id: job.data.id, error: err.message }, `${job.id}.lost`).catch(() => {});
  });
  o.signal?.addEventListener('abort', stop, { once: true });
  if (o.signal?.aborted) stop();
  await worker.waitUntilReady();
  progress(
    `fkgqa worker: taking runs from ${shownUrl(o.queue)} (queue ${RUN_QUEUE}), ${concurrency} at a time${o.rate ? `, at most ${counted(o.rate.max, 'run')} started per ${seconds(o.rate.durationMs)} over all workers` : ''}; --shards ${o.shards}`,
  );
  await closed;
  for (const c of contexts.values())
    await c.then(
      (x) => x.maker.close(),
      () => {},
    );
  for (const q of resultQueues.values()) await q.close();
  return { runs: made, ...(refused ? { refused } : {}), ms: performance.now() - t0 };
}
