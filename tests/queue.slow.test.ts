/**
 * An evaluation spread over processes through Redis (src/eval/queue.ts): `fkgqa eval --queue` as the
 * coordinator and `fkgqa worker`s, each a child process as a user runs them, against the demo build
 * and the fake chat API (tests/fake-chat.ts), whose replies take 200 ms like a slow LLM API. Needs
 * redis-server (skipped where it is missing, failing in CI: `queueTestsRun`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PARTITION_OPTIONS, partition } from '../src/partition/index.js';
import { conditionDigest, runCondition, type RunRecord } from '../src/eval/record.js';
import { serve, type ShardServer } from '../src/serve/server.js';
import { Queue } from 'bullmq';
import { fakeApi, ok, toolCall, type FakeApi } from './fake-chat.js';
import { DEMO, demoBuild, fkgqaInProcess, queueTestsRun, redisServer, ROOT, tmpDir } from './helpers.js';

/** A child `fkgqa` process whose stderr can be waited on, line by line. */
interface Cli {
  child: ChildProcess;
  stderr: () => string;
  /** Resolves with the first stderr line matching `re` (rejects if the process exits first). */
  line(re: RegExp): Promise<string>;
  /** Resolves with the exit code (or signal) and the whole stdout. */
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string }>;
}

function cli(args: string[], env: Record<string, string> = {}): Cli {
  const child = spawn(process.execPath, [path.join(ROOT, 'bin/fkgqa.js'), ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  let err = '';
  let out = '';
  const waiters: { re: RegExp; resolve: (l: string) => void; reject: (e: Error) => void }[] = [];
  const scan = () => {
    for (const w of [...waiters]) {
      const hit = err.split('\n').find((l) => w.re.test(l));
      if (hit !== undefined) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(hit);
      }
    }
  };
  child.stdout!.on('data', (c) => (out += c));
  child.stderr!.on('data', (c) => {
    err += c;
    scan();
  });
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string }>((resolve) =>
    child.once('close', (code, signal) => {
      for (const w of waiters.splice(0)) w.reject(new Error(`fkgqa ${args[0]} exited (${code ?? signal}) before a line matched ${w.re}: ${err.slice(-2000)}`));
      resolve({ code, signal, stdout: out });
    }),
  );
  return {
    child,
    stderr: () => err,
    line: (re) =>
      new Promise((resolve, reject) => {
        waiters.push({ re, resolve, reject });
        scan();
        if (child.exitCode !== null || child.signalCode !== null) reject(new Error(`fkgqa ${args[0]} has exited: ${err.slice(-2000)}`));
      }),
    exit,
  };
}

const run = queueTestsRun();
const dir = tmpDir('fkgqa-queue-');
const children: Cli[] = [];
let redis: Awaited<ReturnType<typeof redisServer>>;
let build: string;
let endpointsFile: string;
let server: ShardServer;
let fake: FakeApi;
/** A question whose API calls are held until `release` is called (none when undefined). */
let held: { question: string; release: () => void; released: Promise<void> } | undefined;
/** Resolved with the question of worker A's first request to the API (the run it is in when killed). */
let aRequested!: (question: string) => void;
const aInRun = new Promise<string>((resolve) => (aRequested = resolve));

const start = (args: string[], env?: Record<string, string>) => {
  const c = cli(args, env);
  children.push(c);
  return c;
};
const records = (file: string) =>
  fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as RunRecord);
/** The last part of a run's id: the first 8 hex digits of its condition's digest, computed from the record's fields. */
const conditionOf = (r: RunRecord) => conditionDigest(runCondition(r)).slice(0, 8);

describe.runIf(run)('fkgqa eval --queue and fkgqa worker: an evaluation spread over processes', () => {
  beforeAll(async () => {
    redis = await redisServer();
    build = await demoBuild(dir, { gold: true });
    server = await serve({ shards: build, writeFiles: false });
    endpointsFile = path.join(dir, 'endpoints.json');
    fs.writeFileSync(endpointsFile, JSON.stringify(server.endpointsFile()));
    // A model that gives up at once (cancel): one LLM call of 200 ms per run, no query. Worker A's
    // first call never gets an answer: A is killed in the middle of that run.
    fake = await fakeApi(async (question, _turn, _attempt, request) => {
      if (request.authorization === 'Bearer worker-a') {
        aRequested(question);
        return 'hang';
      }
      if (held && question === held.question) await held.released;
      await new Promise((r) => setTimeout(r, 200));
      return ok({ tool_calls: [toolCall('c1', 'cancel', JSON.stringify({ reason: 'scripted' }))] });
    });
  }, 300_000);

  afterAll(async () => {
    for (const c of children) if (c.child.exitCode === null && c.child.signalCode === null) c.child.kill('SIGKILL');
    await Promise.all(children.map((c) => c.exit));
    await fake?.close();
    await server?.close();
    await redis?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a worker and the coordinator killed mid-run (SIGKILL): the restarted coordinator completes the file, every selected run exactly once', async () => {
    const out = path.join(dir, 'runs.jsonl');
    const queue = `${redis.url}/0`;
    const evalArgs = [
      'eval',
      '--shards',
      build,
      '--endpoints',
      endpointsFile,
      '--queue',
      queue,
      '--base-url',
      fake.url,
      '--model',
      'fake-model',
      '--tools',
      'in-process',
      '--repeats',
      '2',
      '--out',
      out,
    ];
    const workerArgs = (key: string) => ['worker', '--queue', queue, '--shards', build, '--endpoints', endpointsFile, '--api-key-env', key, '--lock-duration', '2000'];
    const coordinator = start(evalArgs);
    await coordinator.line(/queued 32 runs/);
    const a = start(workerArgs('KEY_A'), { KEY_A: 'worker-a' });
    const hungQuestion = await aInRun;
    a.child.kill('SIGKILL');
    expect((await a.exit).signal).toBe('SIGKILL');
    const b = start(workerArgs('KEY_B'), { KEY_B: 'worker-b' });
    await coordinator.line(/\[6\/32\]/);
    coordinator.child.kill('SIGKILL');
    expect((await coordinator.exit).signal).toBe('SIGKILL');
    const before = records(out).length;
    expect(before).toBeLessThan(32);

    const again = start(evalArgs);
    const done = await again.exit;
    expect(done.code, again.stderr()).toBe(0);
    // The runs it found in the file are skipped; the others were queued already (or their records waited): none is queued twice.
    expect(again.stderr()).toMatch(new RegExp(`${before} runs already in`));
    expect(again.stderr()).toMatch(/queued 0 runs/);

    const rs = records(out);
    const ids = rs.map((r) => r.id);
    expect(rs).toHaveLength(32);
    expect(new Set(ids).size).toBe(32);
    const bench = JSON.parse(fs.readFileSync(path.join(build, 'benchmark.json'), 'utf8')) as { entries: { index: number; question: string }[] };
    expect(bench.entries).toHaveLength(16);
    const condition = conditionOf(rs[0]);
    expect(condition).toMatch(/^[0-9a-f]{8}$/);
    expect([...ids].sort()).toEqual(bench.entries.flatMap((e) => [0, 1].map((r) => `baseline|fake-model|${e.index}|r${r}|${condition}`)).sort());
    expect(rs.every((r) => r.endReason === 'cancelled' && r.build?.outputDigest === JSON.parse(fs.readFileSync(path.join(build, 'build.json'), 'utf8')).outputDigest)).toBe(true);
    // The run worker A was killed in was taken over by worker B once A's lock expired.
    expect(fake.requests.some((r) => r.question === hungQuestion && r.authorization === 'Bearer worker-b')).toBe(true);

    b.child.kill('SIGTERM');
    expect((await b.exit).code).toBe(0);
    expect(b.stderr()).toMatch(/fkgqa worker: \d+ runs made and sent/);
  }, 600_000);

  it('a second record of a run already in the run file (a second worker finished the same job) is dropped: the file holds each run once', async () => {
    const bench = JSON.parse(fs.readFileSync(path.join(build, 'benchmark.json'), 'utf8')) as { entries: { index: number; question: string }[] };
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    held = { question: bench.entries[1].question, release, released };
    const out = path.join(dir, 'twice.jsonl');
    const queue = `${redis.url}/2`;
    const coordinator = start([
      'eval',
      '--shards',
      build,
      '--endpoints',
      endpointsFile,
      '--queue',
      queue,
      '--base-url',
      fake.url,
      '--model',
      'fake-model',
      '--tools',
      'in-process',
      '--limit',
      '2',
      '--out',
      out,
    ]);
    const queued = await coordinator.line(/queued 2 runs/);
    const resultQueue = /results (fkgqa-results-[0-9a-f]+)\)/.exec(queued)![1];
    start(['worker', '--queue', queue, '--shards', build, '--endpoints', endpointsFile, '--api-key-env', 'KEY_B', '--concurrency', '2'], { KEY_B: 'worker-b' });
    await coordinator.line(/\[1\/2\] baseline\|fake-model\|0\|r0/);
    // What a second worker sends when it finishes the same job: the run's record again.
    const [first] = records(out);
    const results = new Queue(resultQueue, { connection: { url: queue }, prefix: 'fkgqa' });
    await results.add('record', { kind: 'record', worker: 'second-worker:1', record: { ...first, startedAt: new Date().toISOString() } }, { jobId: 'second-record', removeOnComplete: true });
    await results.close();
    // Dropped (or, were it appended, the line of a run made by that worker).
    expect(await coordinator.line(/second-worker:1/)).toMatch(/dropped a second record of run baseline\|fake-model\|0\|r0\|[0-9a-f]{8} \(by second-worker:1\): the run file holds it already/);
    release();
    const c = await coordinator.exit;
    expect(c.code, coordinator.stderr()).toBe(0);
    const twice = records(out);
    expect(twice.map((r) => r.id)).toEqual([`baseline|fake-model|0|r0|${conditionOf(twice[0])}`, `baseline|fake-model|1|r0|${conditionOf(twice[0])}`]);
    held = undefined;
  }, 600_000);

  it('a worker of another build refuses the run (exit 2, both digests named) and puts it back for a worker of the right build', async () => {
    const other = path.join(dir, 'other');
    await partition({ ...DEFAULT_PARTITION_OPTIONS, source: DEMO, out: other, seed: 7 });
    const digestOf = (b: string) => (JSON.parse(fs.readFileSync(path.join(b, 'build.json'), 'utf8')) as { outputDigest: string }).outputDigest;
    expect(digestOf(other)).not.toBe(digestOf(build));
    // The other build's endpoints file: the same serve's description, naming the other build.
    const otherEndpoints = path.join(dir, 'other-endpoints.json');
    fs.writeFileSync(otherEndpoints, JSON.stringify({ ...server.endpointsFile(), shards: other, outputDigest: digestOf(other) }));
    const out = path.join(dir, 'refused.jsonl');
    const queue = `${redis.url}/1`;
    const coordinator = start([
      'eval',
      '--shards',
      build,
      '--endpoints',
      endpointsFile,
      '--queue',
      queue,
      '--base-url',
      fake.url,
      '--model',
      'fake-model',
      '--tools',
      'in-process',
      '--limit',
      '1',
      '--repeats',
      '2',
      '--out',
      out,
    ]);
    await coordinator.line(/queued 2 runs/);
    const wrong = start(['worker', '--queue', queue, '--shards', other, '--endpoints', otherEndpoints, '--api-key-env', 'KEY_C'], { KEY_C: 'worker-c' });
    // Refused (or, were it made, its record dropped by the coordinator as of another build).
    expect(await coordinator.line(/refused run|dropped run/)).toMatch(/worker \S+ refused run baseline\|fake-model\|0\|r\d\|[0-9a-f]{8} and stops: the run is of the build with output digest/);
    const w = await wrong.exit;
    expect(w.code).toBe(2);
    expect(wrong.stderr()).toContain(`the run is of the build with output digest ${digestOf(build).slice(0, 16)}, this worker's --shards ${other} is ${digestOf(other).slice(0, 16)}`);
    expect(fs.existsSync(out) ? records(out) : []).toHaveLength(0);

    const right = start(['worker', '--queue', queue, '--shards', build, '--endpoints', endpointsFile, '--api-key-env', 'KEY_B'], { KEY_B: 'worker-b' });
    const c = await coordinator.exit;
    expect(c.code, coordinator.stderr()).toBe(0);
    const made = records(out);
    expect(made.map((r) => r.id).sort()).toEqual([`baseline|fake-model|0|r0|${conditionOf(made[0])}`, `baseline|fake-model|0|r1|${conditionOf(made[0])}`]);
    right.child.kill('SIGTERM');
    expect((await right.exit).code).toBe(0);
  }, 600_000);
  it("one run, one id: a direct eval, the parts of --part and the queued jobs of the same runs carry the same run id, ending with the condition's digest; merge refuses parts of another temperature", async () => {
    const queue = `${redis.url}/3`;
    const options = (temperature: string) => [
      '--shards',
      build,
      '--endpoints',
      endpointsFile,
      '--base-url',
      fake.url,
      '--model',
      'fake-model',
      '--temperature',
      temperature,
      '--tools',
      'in-process',
      '--limit',
      '2',
    ];
    const direct = path.join(dir, 'same-direct.jsonl');
    const d = await fkgqaInProcess(['eval', ...options('0'), '--out', direct, '-q']);
    expect(d.code, d.stderr).toBe(0);
    const parts = [1, 2].map((k) => path.join(dir, `same-part${k}.jsonl`));
    for (const [i, file] of parts.entries()) expect((await fkgqaInProcess(['eval', ...options('0'), '--part', `${i + 1}/2`, '--out', file, '-q'])).code).toBe(0);
    // The queued jobs, read from Redis before any worker takes them.
    const queued = path.join(dir, 'same-queued.jsonl');
    const coordinator = start(['eval', ...options('0'), '--queue', queue, '--out', queued]);
    await coordinator.line(/queued 2 runs/);
    const runQueue = new Queue('fkgqa-runs', { connection: { url: queue }, prefix: 'fkgqa' });
    const jobs = await runQueue.getJobs(['waiting']);
    await runQueue.close();
    const worker = start(['worker', '--queue', queue, '--shards', build, '--endpoints', endpointsFile, '--api-key-env', 'KEY_B'], { KEY_B: 'worker-b' });
    const c = await coordinator.exit;
    expect(c.code, coordinator.stderr()).toBe(0);
    worker.child.kill('SIGTERM');
    expect((await worker.exit).code).toBe(0);

    const condition = conditionOf(records(direct)[0]);
    const expected = [`baseline|fake-model|0|r0|${condition}`, `baseline|fake-model|1|r0|${condition}`];
    expect(records(direct).map((r) => r.id)).toEqual(expected);
    expect(parts.flatMap((f) => records(f).map((r) => r.id)).sort()).toEqual(expected);
    expect(jobs.map((j) => j.data.id).sort()).toEqual(expected);
    // A job's id is the coordinator's key and the run id: the queue makes and appends each run id once.
    expect(jobs.map((j) => decodeURIComponent(j.id!.slice(j.id!.indexOf('.') + 1))).sort()).toEqual(expected);
    expect(
      records(queued)
        .map((r) => r.id)
        .sort(),
    ).toEqual(expected);

    // Another temperature is another condition: other ids, and its parts cannot join these.
    const warm = [1, 2].map((k) => path.join(dir, `warm-part${k}.jsonl`));
    for (const [i, file] of warm.entries()) expect((await fkgqaInProcess(['eval', ...options('0.7'), '--part', `${i + 1}/2`, '--out', file, '-q'])).code).toBe(0);
    const warmIds = warm.flatMap((f) => records(f).map((r) => r.id)).sort();
    expect(warmIds).toHaveLength(2);
    expect(warmIds.filter((id) => expected.includes(id))).toEqual([]);
    const firstWarm = warm.find((f) => records(f).length > 0)!;
    const firstCold = parts.find((f) => records(f).length > 0)!;
    const merged = path.join(dir, 'same-merged.jsonl');
    const refused = await fkgqaInProcess(['merge', ...parts, ...warm, '--out', merged]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(
      `run ${records(firstWarm)[0].id} (${firstWarm}, line 1) was made under another condition than run ${records(firstCold)[0].id} (${firstCold}, line 1): temperature 0 ≠ 0.7`,
    );
    expect(fs.existsSync(merged)).toBe(false);
    const m = await fkgqaInProcess(['merge', ...parts, '--out', merged]);
    expect(m.code, m.stderr).toBe(0);
    expect(
      records(merged)
        .map((r) => r.id)
        .sort(),
    ).toEqual(expected);
  }, 600_000);
});
