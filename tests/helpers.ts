import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { inject } from 'vitest';

/** Repository root. */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/**
 * The real corpus, beside the repository (CI provides it; tests that need it are skipped without
 * it); `FKGQA_SPIDER` names another place (e.g. for a worktree that has no ../shared).
 */
export const SPIDER = process.env.FKGQA_SPIDER ? path.resolve(process.env.FKGQA_SPIDER) : path.resolve(ROOT, '../shared/spider4sparql');
export const HAS_SPIDER = fs.existsSync(path.join(SPIDER, 'dev.json'));
/** The demo dataset. */
export const DEMO = path.join(ROOT, 'datasets/demo');

/** The time limit per query (ms) of the gold answers stored with the shared demo build (`demoBuild`). */
export const DEMO_GOLD_TIMEOUT_MS = 20_000;

/**
 * A copy of the demo build (default options, VoID included) at `<dir>/shards`, made once per run by
 * tests/global-setup.ts; with `gold`, its state folder `<dir>/shards.state` too, holding the gold
 * answers of `fkgqa stats` (time limit DEMO_GOLD_TIMEOUT_MS per query). Without that setup (another
 * vitest config) the build is made here. A copy, so that a test may write beside it.
 * @returns the path of the build
 */
export async function demoBuild(dir: string, o: { gold?: boolean } = {}): Promise<string> {
  const out = path.join(dir, 'shards');
  const template = inject('demoBuild');
  if (template) {
    fs.cpSync(template, out, { recursive: true });
    if (o.gold) fs.cpSync(`${template}.state`, `${out}.state`, { recursive: true });
    return out;
  }
  const { DEFAULT_PARTITION_OPTIONS, partition } = await import('../src/partition/index.js');
  await partition({ ...DEFAULT_PARTITION_OPTIONS, source: DEMO, out });
  if (o.gold) {
    const { computeStats } = await import('../src/report/stats.js');
    await computeStats({ shards: out, timeoutMs: DEMO_GOLD_TIMEOUT_MS });
  }
  return out;
}

/** The graphs of the real corpus in `tiesBuild`: tie-dependent gold answers (car_1/q37 and dog_kennels/q19 in a sub-SELECT) and necessarily empty ones (network_1). */
export const TIES_GRAPHS = ['car_1', 'dog_kennels', 'network_1'];
/** The time limit per query (ms) of the gold answers stored with `tiesBuild`. */
export const TIES_GOLD_TIMEOUT_MS = 60_000;

/**
 * A copy of the build of TIES_GRAPHS of the real corpus (default options) at `<dir>/shards`, made
 * once per run by tests/global-setup.ts (waited for: it is made while the first test files run); with `gold`, its state folder too (the gold answers and tie
 * analysis of `fkgqa stats`, time limit TIES_GOLD_TIMEOUT_MS per query). Only where HAS_SPIDER.
 * Without that setup (another vitest config) the build is made here.
 * @returns the path of the build
 */
export async function tiesBuild(dir: string, o: { gold?: boolean } = {}): Promise<string> {
  const out = path.join(dir, 'shards');
  const template = inject('tiesBuild');
  if (template) {
    // tests/global-setup.ts makes the template while the first test files run: it appears (renamed into place) once made.
    while (!fs.existsSync(template)) {
      if (fs.existsSync(`${template}.failed`)) throw new Error(`the build of ${TIES_GRAPHS.join(', ')} (tests/global-setup.ts) failed: ${fs.readFileSync(`${template}.failed`, 'utf8')}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    fs.cpSync(template, out, { recursive: true });
    if (o.gold) fs.cpSync(`${template}.state`, `${out}.state`, { recursive: true });
    return out;
  }
  const { DEFAULT_PARTITION_OPTIONS, partition } = await import('../src/partition/index.js');
  await partition({ ...DEFAULT_PARTITION_OPTIONS, source: SPIDER, out, kgs: TIES_GRAPHS });
  if (o.gold) {
    const { computeStats } = await import('../src/report/stats.js');
    await computeStats({ shards: out, timeoutMs: TIES_GOLD_TIMEOUT_MS });
  }
  return out;
}

/**
 * A fresh temporary directory inside the test run's temporary folder (made by tests/global-setup.ts
 * and removed with everything in it when the run ends, passed or failed); without that setup (a
 * script outside vitest), inside the system's temporary folder, left to the caller.
 */
export function tmpDir(prefix = 'fkgqa-test-'): string {
  let root = '';
  try {
    root = inject('tmpRoot');
  } catch {
    // Not inside a vitest run.
  }
  return fs.mkdtempSync(path.join(root || os.tmpdir(), prefix));
}

/** Copies a source directory (small: the demo) into a temporary directory and returns the copy. */
export function copyDir(src: string): string {
  const dst = path.join(tmpDir(), path.basename(src));
  fs.cpSync(src, dst, { recursive: true });
  return dst;
}

/** Reads an N-Triples file into its non-empty lines. */
export function ntLines(file: string): string[] {
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.length > 0);
}

/** sha256 of every file below `dir`, hidden ones included, by relative path. */
export function fileHashes(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out[path.relative(dir, p)] = crypto.createHash('sha256').update(fs.readFileSync(p)).digest('hex');
    }
  };
  walk(dir);
  return out;
}

/** Runs the built CLI (`npm test` builds dist/ first) and waits for it, optionally with extra environment. */
export function fkgqaSync(args: string[], env: Record<string, string> = {}): CliResult {
  const r = spawnSync(process.execPath, [path.join(ROOT, 'bin/fkgqa.js'), ...args], { encoding: 'utf8', env: { ...process.env, ...env } });
  return { code: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}

/**
 * Runs the built CLI as a child process (what a user runs) and waits for it to exit; `onStderr` sees
 * stderr as it comes (all of it so far, and the child: to signal the process at the right moment).
 */
export function fkgqaChild(args: string[], onStderr?: (text: string, child: ChildProcess) => void): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const c = spawn(process.execPath, [path.join(ROOT, 'bin/fkgqa.js'), ...args]);
    let stdout = '';
    let stderr = '';
    c.stdout.on('data', (d) => (stdout += d));
    c.stderr.on('data', (d) => {
      stderr += d;
      onStderr?.(stderr, c);
    });
    c.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

/** What a run of the CLI gave: its exit code, and all it wrote to stdout and stderr. */
export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** The in-process runs of the CLI, one after another: each replaces the process's stdout/stderr writers while it runs. */
let cliQueue: Promise<unknown> = Promise.resolve();

/**
 * Runs the built CLI in this process (dist/cli/main.js, as bin/fkgqa.js does, without its signal
 * handlers): the same commander program and command actions as `fkgqaSync`'s child, with
 * process.stdout/stderr captured and the exit code the child would exit with (process.exitCode
 * as the command and the CLI's error mapping left it, 0 when unset). Saves a process start and the
 * loading of every module per call (about 1-2 s of CPU). Runs are queued, one at a time.
 * `env` is added to process.env for the run (undefined removes a variable), `cwd` is the working directory for the run.
 * Not for what only a process shows: `serve`, `mcp` (they wait for signals and exit themselves; their --help is fine),
 * signals, stdin (`--file -`), FKGQA_FAULT_AT (the process kills itself): those throw here.
 * `refusal: true` runs a `serve` or `mcp` expected to refuse before it serves (exit 2: a usage error, a damaged
 * build, a held lock, a stale endpoints file): the SIGINT/SIGTERM handlers it installed are removed when it
 * returns. Should it serve instead (serve writes its endpoints to stdout; mcp listens for signals only once it
 * serves), it is stopped at once through its own SIGTERM handler: the run returns (or throws, mcp exiting itself)
 * and the test's assertions fail, rather than the test waiting on a server.
 * A stray `process.exit` in a command, or a SIGINT/SIGTERM handler left behind, throws: the test fails rather than the test process ending or changing.
 */
export function fkgqaInProcess(args: string[], o: InProcessOptions = {}): Promise<CliResult> {
  if ((args[0] === 'serve' || args[0] === 'mcp') && !args.includes('--help') && !o.refusal) throw new Error(`fkgqaInProcess: fkgqa ${args[0]} runs as a child (serveProcess, spawn)`);
  if (args.some((a, i) => a === '-' && args[i - 1] === '--file')) throw new Error('fkgqaInProcess: no stdin in-process (--file -): run a child');
  if (o.env?.FKGQA_FAULT_AT) throw new Error('fkgqaInProcess: FKGQA_FAULT_AT kills the process: run a child');
  const run = cliQueue.then(() => runInProcess(args, o));
  cliQueue = run.catch(() => undefined);
  return run;
}

/** Options of `fkgqaInProcess`: environment added for the run (undefined removes), working directory, a serve or mcp expected to refuse. */
export interface InProcessOptions {
  env?: Record<string, string | undefined>;
  cwd?: string;
  refusal?: boolean;
}

async function runInProcess(args: string[], o: InProcessOptions): Promise<CliResult> {
  const { runCli } = (await import(pathToFileURL(path.join(ROOT, 'dist/cli/main.js')).href)) as { runCli: (argv: string[]) => Promise<void> };
  let stdout = '';
  let stderr = '';
  const capture = (add: (s: string) => void) =>
    ((chunk: string | Uint8Array, enc?: BufferEncoding | ((e?: Error | null) => void), cb?: (e?: Error | null) => void) => {
      add(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString(typeof enc === 'string' ? enc : 'utf8'));
      const done = typeof enc === 'function' ? enc : cb;
      if (done) process.nextTick(done);
      return true;
    }) as typeof process.stdout.write;
  const saved = { out: process.stdout.write, err: process.stderr.write, exit: process.exit, exitCode: process.exitCode, cwd: process.cwd() };
  const handlers = () => ['SIGINT', 'SIGTERM'].map((sig) => process.listenerCount(sig)).join(',');
  const handlersBefore = handlers();
  const savedEnv: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(o.env ?? {})) {
    savedEnv[k] = process.env[k];
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  // refusal: the signal handlers there were before the run; a handler added since is the command's.
  const signals = ['SIGINT', 'SIGTERM'] as const;
  const listenersBefore = new Set(signals.flatMap((sig) => process.listeners(sig)));
  const added = () => signals.flatMap((sig) => process.listeners(sig).map((l) => [sig, l] as const)).filter(([, l]) => !listenersBefore.has(l));
  let stopping = false;
  const stopServing = () => {
    if (!o.refusal || stopping) return;
    stopping = true;
    setImmediate(() => {
      const [first] = added().filter(([sig]) => sig === 'SIGTERM');
      (first?.[1] as ((sig: string) => void) | undefined)?.('SIGTERM');
    });
  };
  const onNewListener = (event: string | symbol) => {
    if (args[0] === 'mcp' && (event === 'SIGINT' || event === 'SIGTERM')) stopServing();
  };
  if (o.refusal) process.on('newListener', onNewListener);
  process.stdout.write = capture((s) => {
    stdout += s;
    stopServing();
  });
  process.stderr.write = capture((s) => (stderr += s));
  let exited: number | string | null | undefined;
  process.exit = ((c?: number | string | null) => {
    exited = c ?? 0;
    throw new Error(`fkgqaInProcess: the command called process.exit(${c}): run it as a child`);
  }) as typeof process.exit;
  process.exitCode = undefined;
  if (o.cwd) process.chdir(o.cwd);
  let code: number;
  try {
    await runCli([process.execPath, path.join(ROOT, 'bin/fkgqa.js'), ...args]);
    code = typeof process.exitCode === 'number' ? process.exitCode : Number(process.exitCode ?? 0);
  } finally {
    if (o.refusal) {
      process.off('newListener', onNewListener);
      // serve listens for signals from its start: a refused serve leaves its handlers behind.
      for (const [sig, l] of added()) process.off(sig, l as (...a: unknown[]) => void);
    }
    process.stdout.write = saved.out;
    process.stderr.write = saved.err;
    process.exit = saved.exit;
    process.exitCode = saved.exitCode;
    if (o.cwd) process.chdir(saved.cwd);
    for (const [k, v] of Object.entries(savedEnv)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
  // A command that left a signal handler behind would change how this process (and every later run in it) stops.
  if (handlers() !== handlersBefore) throw new Error(`fkgqaInProcess: fkgqa ${args.join(' ')} left SIGINT/SIGTERM handlers behind (${handlersBefore} → ${handlers()})`);
  if (exited !== undefined) throw new Error(`fkgqaInProcess: fkgqa ${args.join(' ')} called process.exit(${exited}): run it as a child; stderr: ${stderr}`);
  return { code, signal: null, stdout, stderr };
}

/**
 * Whether the tests of a federation engine run here. `jena` needs Java and Debian's Jena
 * (`findJena`): where they are missing the tests are skipped and the reason printed, except in CI
 * (`CI` set, as `.ci/run` installs them), where they run and fail with that reason.
 */
export async function engineTestsRun(name: string): Promise<boolean> {
  const { engineUnavailable } = await import('../src/federation/engines.js');
  const why = await engineUnavailable(name as 'jena');
  if (!why || process.env.CI) return true;
  process.stderr.write(`federation engine ${name}: its tests are SKIPPED here (in CI they fail): ${why}\n`);
  return false;
}

/** A `fkgqa serve` process (the CLI, as a user runs it), resolved once it printed its endpoints. */
export async function serveProcess(args: string[]): Promise<{ child: ChildProcess; endpoints: string[]; stop(): Promise<number | null> }> {
  const child = spawn(process.execPath, [path.join(ROOT, 'bin/fkgqa.js'), 'serve', ...args, '-q'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr!.on('data', (c) => (err += c));
  const endpoints = await new Promise<string[]>((resolve, reject) => {
    child.stdout!.on('data', (c) => {
      out += c;
      // serve prints every "id<TAB>url" line in one write, once all endpoints listen.
      if (out.endsWith('\n')) resolve(out.trim().split('\n'));
    });
    child.once('exit', (code) => reject(new Error(`fkgqa serve exited (${code}) before listening: ${err}`)));
  });
  const stop = () =>
    new Promise<number | null>((resolve) => {
      child.once('exit', (code) => resolve(code));
      child.kill('SIGTERM');
    });
  return { child, endpoints, stop };
}

/**
 * The output digest of the default build of the real corpus (partition's `outputDigest`): the dev
 * build's digest (93f7f94c9e811cd0…), the same on every machine. A change that changes any shard, manifest or VoID file of the benchmark must change it
 * here, on purpose (tests/partition.slow.test.ts, with a rebuild).
 */
export const DEV_OUTPUT_DIGEST = '93f7f94c9e811cd054bb08f2bef9a04f4ddb07b511bcbb29b02be028cb6b594f';

/** The redis-server of this machine (Debian's `redis-server`; `REDIS_SERVER` names another), or undefined when none is installed. */
export function findRedisServer(): string | undefined {
  const given = process.env.REDIS_SERVER;
  if (given) return fs.existsSync(given) ? given : undefined;
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const p = path.join(dir, 'redis-server');
    if (dir && fs.existsSync(p)) return p;
  }
  return undefined;
}

/**
 * Whether the tests of the queue (fkgqa eval --queue, fkgqa worker) run here: they need redis-server.
 * Where it is missing they are skipped and the reason printed, except in CI (`CI` set, as `.ci/run`
 * installs it), where they run and fail with that reason.
 */
export function queueTestsRun(): boolean {
  if (findRedisServer() || process.env.CI) return true;
  process.stderr.write('the queue tests (fkgqa eval --queue, fkgqa worker) are SKIPPED here (in CI they fail): redis-server is not installed (apt-get install redis-server)\n');
  return false;
}

/**
 * A redis-server of its own for a test: on a free loopback port, in a temporary folder, nothing
 * saved (`--save '' --appendonly no`); resolved once it accepts connections. `stop` ends it.
 * @throws Error when redis-server is missing or exits before it is ready
 */
export async function redisServer(): Promise<{ url: string; port: number; stop(): Promise<void> }> {
  const bin = findRedisServer();
  if (!bin) throw new Error('redis-server is not installed (apt-get install redis-server; .ci/run installs it)');
  const dir = tmpDir('fkgqa-redis-');
  for (let attempt = 0; ; attempt++) {
    const port = await new Promise<number>((resolve, reject) => {
      const s = net.createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as net.AddressInfo).port;
        s.close(() => resolve(p));
      });
      s.on('error', reject);
    });
    const child = spawn(bin, ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const ready = await new Promise<boolean>((resolve) => {
      child.stdout!.on('data', (c) => {
        out += c;
        if (/Ready to accept connections/.test(out)) resolve(true);
      });
      child.once('exit', () => resolve(false));
    });
    if (!ready) {
      if (attempt < 3 && /Address already in use/.test(out)) continue; // the port was taken meanwhile
      throw new Error(`redis-server exited before it was ready: ${out.slice(-500)}`);
    }
    const stop = () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => {
          fs.rmSync(dir, { recursive: true, force: true });
          resolve();
        });
        child.kill('SIGTERM');
      });
    return { url: `redis://127.0.0.1:${port}`, port, stop };
  }
}

/** Whether `virtuoso-t` (Debian's virtuoso-opensource-7-bin; `VIRTUOSO_T` names another) and its `isql-vt` are on this machine. */
export function findVirtuoso(): boolean {
  const onPath = (name: string) => (process.env.PATH ?? '').split(path.delimiter).some((dir) => dir && fs.existsSync(path.join(dir, name)));
  const server = process.env.VIRTUOSO_T;
  return (server ? fs.existsSync(server) : onPath('virtuoso-t')) && onPath(process.env.VIRTUOSO_ISQL ?? 'isql-vt');
}

/**
 * Whether the tests of `fkgqa serve --store virtuoso` run here: they need Virtuoso. Where it is
 * missing they are skipped and the reason printed, except in CI (`CI` set, as `.ci/run` installs
 * it), where they run and fail with that reason.
 */
export function virtuosoTestsRun(): boolean {
  if (findVirtuoso() || process.env.CI) return true;
  process.stderr.write('the tests of fkgqa serve --store virtuoso are SKIPPED here (in CI they fail): virtuoso-t or isql-vt is not installed (apt-get install virtuoso-opensource-7-bin)\n');
  return false;
}

/** The VoID a fake shard host serves (`fakeShardHost`): one dataset, as Turtle. */
export const FAKE_VOID = '@prefix void: <http://rdfs.org/ns/void#> .\n<urn:d> a void:Dataset .\n';
/** SHA-256 (hex) of `FAKE_VOID`: the `voidDigest` an endpoints file lists for it. */
export const FAKE_VOID_DIGEST = crypto.createHash('sha256').update(FAKE_VOID).digest('hex');

/** A running fake shard host (`fakeShardHost`). */
export interface FakeShardHost {
  /** `127.0.0.1:<port>`. */
  host: string;
  /** Queries received per endpoint name (the first path segment), the `ASK {}` probe not counted. */
  queries: Record<string, number>;
  /** Stops listening and drops open connections. */
  close(): Promise<void>;
}

/**
 * An HTTP server standing in for shard endpoints of `fkgqa serve`, one per name:
 * `http://<host>/<name>/sparql` answers every query with one row (`?s` = `<urn:s>`, SPARQL JSON),
 * counting per name the queries other than `ASK {}`; `http://<host>/<name>/.well-known/void…`
 * answers `FAKE_VOID` as Turtle, unless `onVoid(name, res)` answered it (returns true; it may also
 * leave the response open).
 */
export async function fakeShardHost(onVoid: (name: string, res: http.ServerResponse) => boolean = () => false): Promise<FakeShardHost> {
  const queries: Record<string, number> = {};
  const server = http.createServer((req, res) => {
    req.resume();
    const [, name, rest] = /^\/([^/]+)\/(.*)$/.exec(req.url!)!;
    if (rest.startsWith('.well-known/void')) {
      if (!onVoid(name, res)) res.writeHead(200, { 'content-type': 'text/turtle' }).end(FAKE_VOID);
      return;
    }
    if (new URL(req.url!, 'http://x').searchParams.get('query') !== 'ASK {}') queries[name] = (queries[name] ?? 0) + 1;
    res.writeHead(200, { 'content-type': 'application/sparql-results+json' }).end(JSON.stringify({ head: { vars: ['s'] }, results: { bindings: [{ s: { type: 'uri', value: 'urn:s' } }] } }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    host: `127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    queries,
    close: () => new Promise<void>((r) => (server.close(() => r()), server.closeAllConnections())),
  };
}

/** Sends raw bytes on a fresh socket and returns all the server at `port` (127.0.0.1) sends until it closes the connection. */
export function rawAnswer(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(request));
    let data = '';
    socket.on('data', (c) => (data += c));
    socket.on('error', reject);
    socket.on('close', () => resolve(data));
  });
}
