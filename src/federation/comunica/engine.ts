/**
 * `--federation-engine comunica` and `comunica-default`: Comunica 4.5.0 behind the
 * `FederationEngine` interface. `comunica` (the default) is federation/comunica/engine-service.cjs,
 * compiled from config-service.json (Comunica's default configuration with four overrides of
 * documented actor parameters); `comunica-default` is @comunica/query-sparql's own
 * engine-default.js, the baseline of `npm run bench:federation`. docs/federation.md ("`comunica`:
 * Comunica 4.5.0, configured") explains each override and how the engine is rebuilt and checked.
 *
 * Each query runs in a worker thread (thread.ts) of a pool of `parallel` threads; a query past its
 * limit or aborted is cancelled in its thread, which is kept for the next query (a start costs
 * 0.5–0.9 s of CPU and a cold JIT) unless it does not say the query stopped within `CANCEL_WAIT_MS`
 * or crashed: then it is replaced (docs/serving.md, "The federation engine", gives the rules of
 * waits, late starts and failed starts). SERVICE-explicit queries are checked first
 * (`checkServiceQuery`: 0 requests for a refused query); every query is handed to Comunica as
 * algebra (algebra.ts), a query with `sources` with them, Comunica selecting sources itself (with
 * two of its actors corrected: corrections.ts).
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { compiledScript } from '../../common/thread-script.js';
import { DEFAULT_MAX_DECODED_BYTES, type EngineOutcome, type EngineQueryOptions, type EngineSetup, type FederationEngine, warnOnce } from '../engine.js';
import { dueGraceMs, DueAnswers, lateStart, outcomeAtLimit, runLimit, waitLimit, waitOutcome } from '../limit.js';
import { checkServiceQuery } from '../service-check.js';
import { silentTargets } from '../../sparql/services.js';
import type { ThreadData, ThreadReply, ThreadRequest } from './thread.js';
import { bundleFor } from './engine-module.js';

/** The configurations of Comunica fkgqa offers, by engine name. */
type ComunicaConfig = 'comunica' | 'comunica-default';

/** The compiled engine of `comunica`: federation/comunica/engine-service.cjs at the package root. */
export const COMUNICA_SERVICE_ENGINE = fileURLToPath(new URL('../../../federation/comunica/engine-service.cjs', import.meta.url));

/** The compiled engine file of a configuration (absolute path). */
export function comunicaEngineFile(config: ComunicaConfig): string {
  return config === 'comunica' ? COMUNICA_SERVICE_ENGINE : createRequire(import.meta.url).resolve('@comunica/query-sparql/engine-default.js');
}

/**
 * The longest wait (ms) for a thread to say it cancelled a stopped query (thread.ts `cancelled`), during which the
 * thread takes no other query; past it the thread is taken as stuck in work it cannot leave, and is terminated and
 * replaced. A thread that is not stuck answers within a few ms, and within tens of ms at load 20 on 2 cores; the
 * wait is as long as `DUE_ANSWER_GRACE_MS` (a thread start is 0.5–0.9 s of CPU, so a kept thread is worth waiting for).
 */
export const CANCEL_WAIT_MS = 2000;

/** How a thread loaded Comunica (thread.ts `ready`): from its bundle or module by module, and why its bundle was not used. */
interface ThreadStart {
  loadedFrom: 'bundle' | 'modules';
  problem?: string;
}

/** A Comunica thread (thread.ts), owned by one engine at a time or parked (`park`). */
interface EngineThread {
  worker: Worker;
  /** The configuration it was started with: a parked thread serves engines of the same one only. */
  key: string;
  /** Settles when the thread said `ready`; rejects when it failed or exited before. */
  ready: Promise<ThreadStart>;
  /** Whether it said `ready`. */
  started: boolean;
}

/** The key of the threads a configuration's engines share (`park`): the compiled engine, its bundle, and what its joins are planned on. */
const threadKey = (data: ThreadData) => JSON.stringify([data.enginePath, data.bundle ?? null, data.serviceCardinality]);

/**
 * Starts a thread. Referenced (it keeps Node running) while it starts, unless parked meanwhile; unreferenced once ready:
 * a running query's timer keeps Node alive, and an idle thread does not keep Node from exiting.
 */
function startThread(data: ThreadData): EngineThread {
  const worker = new Worker(compiledScript('federation/comunica/thread.js'), { workerData: data });
  // An error outside any query (its owner, if any, hears it too): never an unhandled 'error' event, which would end the process.
  worker.on('error', () => undefined);
  const thread: EngineThread = {
    worker,
    key: threadKey(data),
    started: false,
    ready: new Promise((resolve, reject) => {
      const onMessage = (m: ThreadReply) => {
        if (m.type !== 'ready') return;
        worker.off('message', onMessage);
        thread.started = true;
        worker.unref();
        resolve({ loadedFrom: m.loadedFrom, ...(m.problem ? { problem: m.problem } : {}) });
      };
      worker.on('message', onMessage);
      worker.once('error', reject);
      worker.once('exit', (code) => reject(new Error(`the Comunica thread exited (code ${code}) before it was ready`)));
    }),
  };
  // Read by its owner, if any; a parked thread that fails is dropped from the shelf when it exits.
  thread.ready.catch(() => undefined);
  return thread;
}

/**
 * How long a parked thread waits for another engine before it is terminated, ms: a process that closes one engine and
 * creates another within this time (a client per request, per test, per command run in-process) starts Comunica once,
 * not once per engine (a start is 0.5–0.9 s of CPU); idle, a thread holds only memory.
 */
const PARKED_THREAD_MS = 300_000;
/** The most threads parked per configuration in a process; a thread past it is terminated when its engine closes. */
const MAX_PARKED_THREADS = 4;

/** What the engines of a process share, once per process even where this module is loaded twice (from its TypeScript and from dist/). */
interface Shared {
  /** Parked threads by `threadKey`, most recently parked last. */
  shelf: Map<string, { thread: EngineThread; timer: NodeJS.Timeout; onExit: () => void }[]>;
  /** Engines created in this process: each query tells its thread which engine sent it (`ThreadQuery.engine`). */
  engines: number;
}
const SHARED = Symbol.for('fkgqa.comunica.threads');
const shared: Shared = ((globalThis as { [SHARED]?: Shared })[SHARED] ??= { shelf: new Map(), engines: 0 });
const shelf = shared.shelf;

/**
 * Keeps an idle thread of a closed engine for the next engine of its configuration in this process (`unpark`), for
 * `PARKED_THREAD_MS` at most, then terminates it; terminates it at once when `MAX_PARKED_THREADS` are parked already.
 * A thread still starting is parked too (it goes on starting, unreferenced). Parked threads do not keep Node from exiting.
 */
function park(thread: EngineThread): void {
  const parked = shelf.get(thread.key) ?? [];
  if (parked.length >= MAX_PARKED_THREADS) {
    void thread.worker.terminate();
    return;
  }
  thread.worker.unref();
  const leave = () => {
    const i = parked.indexOf(entry);
    if (i >= 0) parked.splice(i, 1);
    if (parked.length === 0 && shelf.get(thread.key) === parked) shelf.delete(thread.key);
  };
  const entry = {
    thread,
    timer: setTimeout(() => {
      leave();
      void thread.worker.terminate();
    }, PARKED_THREAD_MS).unref(),
    onExit: leave,
  };
  thread.worker.once('exit', entry.onExit);
  parked.push(entry);
  shelf.set(thread.key, parked);
}

/** The most recently parked thread of a configuration (its JIT the warmest), taken off the shelf; undefined when none. */
function unpark(data: ThreadData): EngineThread | undefined {
  const parked = shelf.get(threadKey(data));
  const entry = parked?.pop();
  if (!entry) return undefined;
  if (parked!.length === 0) shelf.delete(threadKey(data));
  clearTimeout(entry.timer);
  entry.thread.worker.off('exit', entry.onExit);
  // Starting still: referenced again until ready, as a thread the engine started itself.
  if (!entry.thread.started) entry.thread.worker.ref();
  return entry.thread;
}

/** How many threads closed Comunica engines of this process left parked for the next engine (`park`), all configurations. */
export function parkedThreads(): number {
  return [...shelf.values()].reduce((n, parked) => n + parked.length, 0);
}

/**
 * Terminates the threads closed Comunica engines of this process left parked for the next engine (their memory
 * released now rather than after `PARKED_THREAD_MS`; the next engine starts its threads anew). Open engines keep theirs.
 */
export async function closeParkedThreads(): Promise<void> {
  const all = [...shelf.values()].flat();
  shelf.clear();
  await Promise.all(
    all.map((e) => {
      clearTimeout(e.timer);
      e.thread.worker.off('exit', e.onExit);
      return e.thread.worker.terminate();
    }),
  );
}

interface Slot {
  thread: EngineThread;
  worker: Worker;
  /** The thread's start as this engine sees it: settles when ready, or when the engine closed while it started. */
  ready: Promise<void>;
  busy: boolean;
  /** This engine's listener of the thread's warnings (removed when the thread is parked). */
  onWarning: (m: ThreadReply) => void;
}

/** Comunica 4.5.0 in a pool of worker threads (module comment). Threads start at the first query or at `warm`. */
export class ComunicaEngine implements FederationEngine {
  readonly name: ComunicaConfig;
  readonly selectsSources = true;
  private readonly slots: Slot[] = [];
  private readonly waiting: (() => void)[] = [];
  private readonly parallel: number;
  private readonly data: ThreadData;
  /** The endpoints it may contact (`EngineSetup.endpoints`) and its answer limit, sent with each query (`ThreadQuery`). */
  private readonly endpoints: string[];
  private readonly maxDecodedBytes: number;
  /** This engine's number in the process (`ThreadQuery.engine`). */
  private readonly id = ++shared.engines;
  private readonly warn: ((message: string) => void) | undefined;
  private nextId = 1;
  private closed = false;
  /** Set by `warm`: a thread stopped after a timeout, an abort or a crash is replaced at once (a warm spare), not at the next query. */
  private keepWarm = false;
  /** Threads replaced: stuck after a cancel (`CANCEL_WAIT_MS`), crashed or exited. */
  restarts = 0;
  /** Threads kept after their query was stopped (at its time limit, or aborted) and cancelled in them. */
  kept = 0;
  /** How the last thread that started loaded Comunica: from its bundle (`npm run build`, engine-module.ts) or module by module; undefined before one started. */
  loadedFrom: 'bundle' | 'modules' | undefined;
  /** Errors raised in a thread outside any query (late failures of abandoned response streams), newest last, at most 20. */
  readonly warnings: string[] = [];

  /**
   * @param setup the endpoints it may contact and its threads (`parallel`)
   * @param config which configuration (default `comunica`)
   * @throws Error when the compiled engine file is missing
   */
  constructor(setup: EngineSetup, config: ComunicaConfig = 'comunica') {
    this.name = config;
    this.parallel = Math.max(1, setup.parallel ?? 1);
    this.warn = setup.warn;
    this.endpoints = [...setup.endpoints];
    this.maxDecodedBytes = setup.maxDecodedBytes ?? DEFAULT_MAX_DECODED_BYTES;
    this.data = {
      enginePath: comunicaEngineFile(config),
      // The baseline plans its joins on the sizes Comunica as shipped sees (its COUNT estimates), not on the rows read.
      serviceCardinality: config === 'comunica' ? 'exact' : 'endpoint',
    };
    if (!fs.existsSync(this.data.enginePath)) throw new Error(`the compiled Comunica engine ${this.data.enginePath} is missing: run npm run build:comunica-engine`);
    this.data.bundle = bundleFor(this.data.enginePath);
  }

  /** A thread for this engine: one parked by an engine closed before (`unpark`), else a new one. */
  private spawn(): Slot {
    const thread = unpark(this.data) ?? startThread(this.data);
    const worker = thread.worker;
    const onWarning = (m: ThreadReply) => {
      if (m.type !== 'warning') return;
      this.warnings.push(m.message);
      if (this.warnings.length > 20) this.warnings.shift();
    };
    worker.on('message', onWarning);
    const slot: Slot = {
      thread,
      worker,
      busy: false,
      onWarning,
      ready: thread.ready.then(
        (start) => {
          if (this.closed) return;
          this.loadedFrom = start.loadedFrom;
          // A bundle that is not the one npm run build recorded: the user is told (once), not only this object.
          if (start.problem) warnOnce(start.problem, this.warn);
        },
        (e: unknown) => {
          // Terminated by close() while starting: nothing to report (acquire and warm see `closed`).
          if (!this.closed) throw e;
        },
      ),
    };
    slot.ready.catch(() => this.drop(slot));
    this.slots.push(slot);
    return slot;
  }

  private drop(slot: Slot): void {
    const i = this.slots.indexOf(slot);
    if (i >= 0) this.slots.splice(i, 1);
    slot.worker.off('message', slot.onWarning);
    void slot.worker.terminate();
  }

  /** Starts every thread now (building Comunica's actors takes 1–3 s) instead of at the first query. */
  async warm(): Promise<void> {
    this.keepWarm = true;
    while (this.slots.length < this.parallel && !this.closed) this.spawn();
    await Promise.all(this.slots.map((s) => s.ready));
  }

  /**
   * A free thread, waiting for one while all `parallel` threads are busy; undefined once `stop`
   * settled or the engine closed; a string (the error) when the thread failed to start.
   */
  private async acquire(stop: Promise<unknown>): Promise<Slot | string | undefined> {
    let stopped = false;
    void stop.then(() => {
      stopped = true;
      this.waiting.splice(0).forEach((w) => w());
    });
    for (;;) {
      if (stopped || this.closed) return undefined;
      const idle = this.slots.find((s) => !s.busy);
      if (idle) {
        idle.busy = true;
        // A thread still starting (a replacement: Comunica's start takes 1–3 s, more at load) is waited for within the
        // wait's limit only: the verdict at that limit (busy, or the time limit) comes then, not when the thread is ready.
        const started = await Promise.race([
          idle.ready.then(
            () => undefined,
            // Dropped by spawn's catch. A thread that cannot start is an error of the engine (infrastructure), not a wait until the time limit.
            (e: unknown) => (e as Error)?.message ?? String(e),
          ),
          stop.then(() => 'stopped' as const),
        ]);
        if (started !== undefined && started !== 'stopped') return started;
        if (stopped || this.closed || started === 'stopped') {
          this.release(idle);
          return undefined;
        }
        return idle;
      }
      if (this.slots.length < this.parallel) {
        this.spawn();
        continue;
      }
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    }
  }

  private release(slot: Slot): void {
    slot.busy = false;
    this.waiting.shift()?.();
  }

  /** Evaluates one query (FederationEngine.query); never rejects. */
  async query(given: string, mediaType: string, options: EngineQueryOptions): Promise<EngineOutcome> {
    const requests: Record<string, number> = {};
    if (this.closed) return { status: 'error', error: 'the federation engine is closed', requests };
    const sources = options.sources ?? [];
    let query = given;
    if (sources.length === 0) {
      const checked = checkServiceQuery(given, this.endpoints);
      if (!checked.ok) return { status: 'error', error: checked.error, httpStatus: 400, requests };
      query = checked.query;
    }
    // The limit counts from the call, or (a deadline `from: 'start'`) from when a ready thread takes the query.
    const wait = waitLimit(options);
    let limit = wait;
    try {
      const slot = await this.acquire(wait.stopped);
      if (typeof slot === 'string') return { status: 'error', error: `the federation engine ${this.name} failed to start: ${slot}`, requests };
      if (!slot) return this.closed ? { status: 'error', error: 'the federation engine is closed', requests } : waitOutcome(options, this.name, wait, await wait.stopped, requests);
      // The wait's limit passed by the clock, its timer not yet fired (a loaded event loop): the query is not started.
      if (wait.passed() && !this.closed) {
        this.release(slot);
        return waitOutcome(options, this.name, wait, 'timeout', requests);
      }
      // Too little of its client's limit left to finish (startFloor): busy now, the thread left to the next query.
      const late = lateStart(options, this.name, wait, requests);
      if (late) {
        this.release(slot);
        return late;
      }
      limit = runLimit(options, wait);
      const id = this.nextId++;
      const worker = slot.worker;
      return await new Promise<EngineOutcome>((resolve) => {
        let finished = false;
        // Requests awaiting answers, and a 503 that stopped the query at its endpoint's limit: read at the engine's limit.
        const due = new DueAnswers(silentTargets(query));
        const grace = dueGraceMs(options.deadline);
        let pastLimit = false;
        // The thread after the query: idle (it ended the query), to cancel it in (stopped), or gone (crashed, exited).
        const done = (o: EngineOutcome, thread: 'idle' | 'stopped' | 'gone') => {
          if (finished) return;
          finished = true;
          worker.off('message', onMessage);
          worker.off('error', onError);
          worker.off('exit', onExit);
          if (thread === 'idle') this.release(slot);
          else if (thread === 'stopped') this.cancel(slot, id);
          else this.replace(slot);
          resolve(o);
        };
        const onMessage = (m: ThreadReply) => {
          if (m.type === 'request' && m.id === id) {
            requests[m.endpoint] = (requests[m.endpoint] ?? 0) + 1;
            due.sent();
          } else if (m.type === 'answered' && m.id === id) due.answered(m.fault);
          // After the engine's limit (waiting for due answers): the query's end is a report, not its outcome; so too when the
          // limit has passed by the clock but its timer, due, has not fired yet (a loaded event loop reads the thread first).
          else if ((pastLimit || limit.passed()) && (m.type === 'result' || m.type === 'error') && m.id === id) {
            pastLimit = true;
            due.end(m.type === 'error' ? m.fault : undefined);
          } else if (m.type === 'result' && m.id === id) done({ status: 'ok', body: m.body, contentType: mediaType, requests }, 'idle');
          else if (m.type === 'error' && m.id === id)
            done({ status: 'error', error: m.error, ...(m.httpStatus ? { httpStatus: m.httpStatus } : {}), ...(m.fault ? { fault: m.fault } : {}), requests }, 'idle');
        };
        const onError = (e: Error) => done({ status: 'error', error: `engine thread crashed: ${e.message}`, requests }, 'gone');
        const onExit = () => done({ status: 'error', error: this.closed ? 'the federation engine is closed' : 'engine thread exited', requests }, 'gone');
        worker.on('message', onMessage);
        worker.on('error', onError);
        worker.on('exit', onExit);
        void limit.stopped.then(async (why) => {
          // An endpoint's 503 at the limit it was sent (busy, or that limit) may still be on its way: it is the verdict.
          if (why === 'timeout' && !finished) pastLimit = true;
          const o = pastLimit ? await outcomeAtLimit(due, limit, grace, options.signal, requests) : limit.outcome(why, requests);
          // A thread that ended the query itself is idle again; else the query is cancelled in it.
          done(o, due.isEnded ? 'idle' : 'stopped');
        });
        worker.postMessage({
          type: 'query',
          id,
          engine: this.id,
          query,
          sources,
          endpoints: this.endpoints,
          maxDecodedBytes: this.maxDecodedBytes,
          mediaType,
          httpTimeoutMs: limit.left(),
          graceMs: grace,
        } satisfies ThreadRequest);
      });
    } finally {
      limit.dispose();
      wait.dispose();
    }
  }

  /**
   * Cancels query `id` in its thread (thread.ts `cancel`); the thread stays taken until it says `cancelled`, then
   * takes the next query (`kept`); when it does not say so within `CANCEL_WAIT_MS`, or crashes or exits meanwhile,
   * it is replaced.
   */
  private cancel(slot: Slot, id: number): void {
    const worker = slot.worker;
    let over = false;
    const end = (cancelled: boolean) => {
      if (over) return;
      over = true;
      clearTimeout(timer);
      worker.off('message', onMessage);
      worker.off('error', onGone);
      worker.off('exit', onGone);
      if (cancelled && !this.closed) {
        this.kept++;
        this.release(slot);
      } else this.replace(slot);
    };
    const onMessage = (m: ThreadReply) => {
      if (m.type === 'cancelled' && m.id === id) end(true);
    };
    const onGone = () => end(false);
    const timer = setTimeout(() => end(false), CANCEL_WAIT_MS);
    worker.on('message', onMessage);
    worker.on('error', onGone);
    worker.on('exit', onGone);
    worker.postMessage({ type: 'cancel', id } satisfies ThreadRequest);
  }

  /** Terminates a thread that is stuck, crashed or exited; a warm engine starts its replacement now (the next query does not wait for Comunica's 1–3 s start). */
  private replace(slot: Slot): void {
    if (!this.closed) this.restarts++;
    this.drop(slot);
    if (this.keepWarm && !this.closed) this.spawn();
    this.waiting.shift()?.();
  }

  /** How the last thread loaded Comunica (FederationEngine.startedHow). */
  startedHow(): string | undefined {
    return this.loadedFrom === undefined ? undefined : this.loadedFrom === 'bundle' ? 'loaded from its bundle' : 'loaded module by module: no usable bundle (run npm run build)';
  }

  /**
   * Stops the engine: threads running a query (or cancelling one) are terminated, and those queries end with `error`;
   * idle threads, and threads still starting, are parked for the next engine of this configuration in the process
   * (`park`; `closeParkedThreads` terminates them). Idempotent.
   */
  async close(): Promise<void> {
    this.closed = true;
    this.waiting.splice(0).forEach((w) => w());
    const stopped: Promise<number>[] = [];
    for (const s of this.slots.splice(0)) {
      s.worker.off('message', s.onWarning);
      if (s.busy) stopped.push(s.worker.terminate());
      else park(s.thread);
    }
    await Promise.all(stopped);
  }
}
