/**
 * What the eval tests share: the demo build (with the gold answers of `fkgqa stats`) served in the
 * test's own process with an endpoints file naming it, and the CLI run asynchronously.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { DEFAULT_PARTITION_OPTIONS, partition } from '../src/partition/index.js';
import { computeStats } from '../src/report/stats.js';
import type { RunRecord } from '../src/eval/record.js';
import { serve, type ShardServer } from '../src/serve/server.js';
import { fakeApi, type FakeApi } from './fake-chat.js';
import { DEMO, DEMO_GOLD_TIMEOUT_MS, demoBuild, ROOT } from './helpers.js';

/** A served demo build. */
export interface ServedBuild {
  build: string;
  endpointsFile: string;
  server: ShardServer;
}

/**
 * Builds the demo (only `kgs`, default both graphs) into `<dir>/shards`, computes its gold answers
 * (20 s per query) and serves it in this process, without state files; writes `<dir>/endpoints.json`.
 */
export async function serveDemo(dir: string, kgs?: string[]): Promise<ServedBuild> {
  let build = path.join(dir, 'shards');
  if (kgs) {
    await partition({ ...DEFAULT_PARTITION_OPTIONS, source: DEMO, out: build, kgs });
    await computeStats({ shards: build, timeoutMs: DEMO_GOLD_TIMEOUT_MS });
  } else build = await demoBuild(dir, { gold: true }); // the same build and gold answers, made once per run
  const server = await serve({ shards: build, writeFiles: false });
  const endpointsFile = path.join(dir, 'endpoints.json');
  fs.writeFileSync(endpointsFile, JSON.stringify(server.endpointsFile()));
  return { build, endpointsFile, server };
}

/**
 * Runs the built CLI without blocking the event loop (spawnSync would: the endpoints and fake APIs
 * a test serves in its own process could not answer), with extra environment (undefined removes a
 * variable); `onStderr` sees the stderr so far and may send a signal.
 */
export function fkgqaAsync(args: string[], env: Record<string, string | undefined> = {}, onStderr?: (text: string, kill: (s: NodeJS.Signals) => void) => void) {
  const child = spawn(process.execPath, [path.join(ROOT, 'bin/fkgqa.js'), ...args], { env: { ...process.env, ...env } as NodeJS.ProcessEnv });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => {
    stderr += d;
    onStderr?.(stderr, (s) => child.kill(s));
  });
  return new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
}

/** A benchmark entry of a build's benchmark.json. */
export type BenchEntry = { index: number; kg: string; question: string; query: string; queryId: string };

/**
 * What the tests of `fkgqa eval`'s runs share (eval-runs*.test.ts): fake chat APIs to close at the
 * end (`fakes`), the run records of a JSON-lines file, and the entries of graph library of `build()`.
 */
export function runHelpers(build: () => string) {
  const fakes: FakeApi[] = [];
  const newFake = async (...a: Parameters<typeof fakeApi>) => {
    const f = await fakeApi(...a);
    fakes.push(f);
    return f;
  };
  const bench = () => JSON.parse(fs.readFileSync(path.join(build(), 'benchmark.json'), 'utf8')) as { defaultPrefix: string; entries: BenchEntry[] };
  const lines = (file: string) =>
    fs
      .readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => l.trim());
  const records = (file: string) => lines(file).map((l) => JSON.parse(l) as RunRecord);
  const lib = () => bench().entries.filter((e) => e.kg === 'library');
  return { fakes, newFake, bench, lines, records, lib };
}
