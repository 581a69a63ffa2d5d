import fs from 'node:fs';
import path from 'node:path';
import { InputError } from '../common/errors.js';
import { sha256OfFile } from '../common/hash.js';
import { recoverInterruptedCommit } from '../common/output.js';
import { checkGraphName, unknownGraphError } from './names.js';

/** What the later stages (`describe`, `stats`, `serve`) read of a build written by `fkgqa partition`. */
interface BuildDir {
  dir: string;
  /** `build.json`: the graphs and the output digest. */
  build: { graphs: string[]; outputDigest: string };
  /** `<kg>/manifest.json` of every graph, in the order of `build.graphs`. */
  manifests: BuildManifest[];
}

/** The parts of a graph manifest the later stages rely on (see GraphManifest in partition.ts). */
export interface BuildManifest {
  graph: string;
  options: { defaultPrefix: string };
  shards: { name: string; endpoint: string; file: string; triples: number; sha256: string }[];
  [key: string]: unknown;
}

/** Reads a JSON file, naming it in the error if it is missing or does not parse. */
export function readJsonFile<T>(file: string, what: string): T {
  if (!fs.existsSync(file)) throw new InputError(`${what} not found`, { file });
  if (!fs.statSync(file).isFile()) throw new InputError(`${what} is not a regular file`, { file });
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as T;
  } catch (e) {
    throw new InputError(`${what} is not valid JSON: ${(e as Error).message}`, { file });
  }
}

/** Reads a JSON file, or undefined if it is missing or not valid JSON (a stale or broken cache). */
export function readJsonIfExists<T>(file: string): T | undefined {
  try {
    return fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, 'utf8')) as T) : undefined;
  } catch {
    return undefined;
  }
}

/** The shards of one graph in a build, for commands that serve or query them. */
export interface GraphShards {
  graph: string;
  /** In shard-number order; `file` is the path of the shard's N-Triples file. */
  shards: { name: string; endpoint: string; file: string; triples: number }[];
}

/**
 * Reads the shards of a build from its manifests, graphs and shards in order (graph name, then
 * shard number).
 * @throws InputError when the directory has no build or a requested graph is not in it
 */
export function readBuild(dir: string, kgs?: string[]): GraphShards[] {
  // One way to open a build: build.json, benchmark.json, manifests, shard sha256.
  return graphShards(openBuild(dir, { kgs }));
}

/** The shards of an opened build's graphs (see `readBuild`). */
export function graphShards(build: OpenedBuild): GraphShards[] {
  const dir = build.dir;
  const num = (name: string) => Number(/(\d+)$/.exec(name)?.[1] ?? 0);
  return build.manifests
    .map((m) => ({
      graph: m.graph,
      shards: [...m.shards].sort((a, b) => num(a.name) - num(b.name)).map((s) => ({ name: s.name, endpoint: s.endpoint, triples: s.triples, file: path.join(dir, m.graph, s.file) })),
    }))
    .sort((a, b) => (a.graph < b.graph ? -1 : a.graph > b.graph ? 1 : 0));
}

/**
 * One entry of `benchmark.json`: a question (its 0-based index in the questions file) with its
 * graph, gold query and query id, and the shard endpoints that may match it (partition's
 * `BenchmarkEntry` has every field).
 */
export interface BenchmarkEntry {
  index: number;
  kg: string;
  question: string;
  query: string;
  queryId: string;
  shardsImplied?: string[] | null;
  [key: string]: unknown;
}

/** The parts of `benchmark.json` the later stages rely on. */
interface BenchmarkFile {
  defaultPrefix: string;
  entries: BenchmarkEntry[];
  [key: string]: unknown;
}

/** Options of `openBuild`. */
interface OpenBuildOptions {
  /** Check every shard file's sha256 against its manifest (default true; ~1 s per 35 MB). */
  checkShards?: boolean;
  /** Only these graphs' manifests and shards are read and checked; each must be in the build. */
  kgs?: string[];
  /** How long (ms) to wait for a live writer to finish moving the build into place (default 5,000; `recoverInterruptedCommit`). */
  commitWaitMs?: number;
}

/** A build as `openBuild` returns it: `BuildDir` plus its checked `benchmark.json`. */
interface OpenedBuild extends BuildDir {
  benchmark: BenchmarkFile;
}

const isString = (x: unknown): x is string => typeof x === 'string';
const isCount = (x: unknown): x is number => Number.isSafeInteger(x) && (x as number) >= 0;

/** Names the first thing wrong with the shape of a graph manifest, or undefined. */
function manifestProblem(m: unknown, kg: string): string | undefined {
  if (!m || typeof m !== 'object' || Array.isArray(m)) return 'not a JSON object';
  const x = m as Record<string, unknown>;
  if ((x.tool as { name?: unknown } | undefined)?.name !== 'fkgqa') return 'not written by fkgqa partition (no "tool": {"name": "fkgqa"})';
  if (x.graph !== kg) return `not the manifest of graph ${kg} ("graph": ${JSON.stringify(x.graph)})`;
  if (!isString((x.options as { defaultPrefix?: unknown } | undefined)?.defaultPrefix)) return '"options.defaultPrefix" is missing or not a string';
  if (!Array.isArray(x.shards) || x.shards.length === 0) return '"shards" is missing, empty or not a list';
  for (const [i, s] of (x.shards as unknown[]).entries()) {
    const sh = s as Record<string, unknown> | null;
    const bad =
      !sh || typeof sh !== 'object'
        ? 'not an object'
        : !isString(sh.name)
          ? '"name" is not a string'
          : !isString(sh.endpoint)
            ? '"endpoint" is not a string'
            : !isString(sh.file) || path.basename(sh.file) !== sh.file || sh.file.startsWith('.')
              ? '"file" is not a plain file name'
              : !isCount(sh.triples)
                ? '"triples" is not a non-negative integer'
                : !isString(sh.sha256) || !/^[0-9a-f]{64}$/.test(sh.sha256)
                  ? '"sha256" is not 64 hex digits'
                  : undefined;
    if (bad) return `shards[${i}]: ${bad}`;
  }
  if (x.queries !== undefined && !Array.isArray(x.queries)) return '"queries" is not a list';
  return undefined;
}

/** Names the first thing wrong with the shape of `benchmark.json`, or undefined. */
function benchmarkProblem(b: unknown, graphs: string[]): string | undefined {
  if (!b || typeof b !== 'object' || Array.isArray(b)) return 'not a JSON object';
  const x = b as Record<string, unknown>;
  if (!isString(x.defaultPrefix)) return '"defaultPrefix" is missing or not a string';
  if (!Array.isArray(x.entries)) return '"entries" is missing or not a list';
  for (const [i, e] of (x.entries as unknown[]).entries()) {
    const en = e as Record<string, unknown> | null;
    if (!en || typeof en !== 'object' || !isString(en.kg) || !isString(en.question) || !isString(en.query) || !isString(en.queryId))
      return `entries[${i}]: needs string fields "kg", "question", "query" and "queryId"`;
    if (!graphs.includes(en.kg)) return `entries[${i}]: graph "${en.kg}" is not in build.json`;
  }
  return undefined;
}

/**
 * Opens a build written by `fkgqa partition`: the one way every command (stats, describe, verify,
 * serve, …) reads a build. Completes a commit a killed `partition` had decided
 * (`recoverInterruptedCommit`), then checks `build.json` (written by fkgqa, graphs are safe
 * names), `benchmark.json` (defaultPrefix, entries naming graphs of the build), every selected
 * graph's `<kg>/manifest.json` (its graph is its folder's name, shards with name, endpoint, plain
 * file name, triple count and sha256) and, unless `checkShards: false`, the sha256 of every shard
 * file against its manifest. Only the graphs build.json lists are read: hidden folders such as
 * `.X.fkgqa-old-<pid>` are never taken for graphs.
 * @returns the build, its manifests in build.json order (restricted to `kgs`) and benchmark.json
 * @throws InputError naming the file (or folder) and what is wrong with it
 */
export function openBuild(dir: string, options: OpenBuildOptions = {}): OpenedBuild {
  recoverInterruptedCommit(dir, options.commitWaitMs);
  if (!fs.existsSync(dir)) throw new InputError('no such build directory (run fkgqa partition first)', { file: dir });
  if (!fs.statSync(dir).isDirectory()) throw new InputError('not a directory: expected a build written by fkgqa partition', { file: dir });
  const buildFile = path.join(dir, 'build.json');
  const build = readJsonFile<{ tool?: { name?: string }; graphs?: unknown; outputDigest?: unknown } | null>(buildFile, 'build.json of an fkgqa build');
  if (!build || typeof build !== 'object' || build.tool?.name !== 'fkgqa') throw new InputError('not a build.json written by fkgqa partition (no "tool": {"name": "fkgqa"})', { file: buildFile });
  if (!Array.isArray(build.graphs) || build.graphs.length === 0 || !build.graphs.every(isString)) throw new InputError('"graphs" is missing, empty or not a list of names', { file: buildFile });
  if (!isString(build.outputDigest)) throw new InputError('"outputDigest" is missing or not a string', { file: buildFile });
  const graphs = build.graphs as string[];
  for (const kg of graphs) checkGraphName(kg, buildFile);
  for (const kg of options.kgs ?? []) if (!graphs.includes(kg)) throw unknownGraphError(kg, graphs, 'this build', dir);

  const benchFile = path.join(dir, 'benchmark.json');
  const benchmark = readJsonFile<unknown>(benchFile, 'benchmark.json of an fkgqa build');
  const bp = benchmarkProblem(benchmark, graphs);
  if (bp) throw new InputError(`not a benchmark.json written by fkgqa partition: ${bp}`, { file: benchFile });

  const selected = options.kgs?.length ? graphs.filter((g) => options.kgs!.includes(g)) : graphs;
  const manifests = selected.map((kg) => {
    const file = path.join(dir, kg, 'manifest.json');
    const m = readJsonFile<unknown>(file, 'graph manifest');
    const mp = manifestProblem(m, kg);
    if (mp) throw new InputError(`not a graph manifest written by fkgqa partition: ${mp}`, { file });
    const manifest = m as BuildManifest;
    for (const s of manifest.shards) {
      // Always (a stat per file): a FIFO or device read by a loading thread would block it for good.
      const shard = path.join(dir, kg, s.file);
      const st = fs.statSync(shard, { throwIfNoEntry: false });
      if (!st) throw new InputError('shard file listed in the manifest is missing', { file: shard });
      if (!st.isFile()) throw new InputError('shard file listed in the manifest is not a regular file (a folder, FIFO or device): rebuild with fkgqa partition', { file: shard });
    }
    if (options.checkShards !== false) {
      for (const s of manifest.shards) {
        const shard = path.join(dir, kg, s.file);
        const sha = sha256OfFile(shard);
        if (sha !== s.sha256) {
          throw new InputError(`shard file differs from the one the build wrote (sha256 ${sha.slice(0, 12)}…, manifest ${s.sha256.slice(0, 12)}…): rebuild with fkgqa partition`, { file: shard });
        }
      }
    }
    return manifest;
  });
  return { dir, build: { graphs, outputDigest: build.outputDigest }, manifests, benchmark: benchmark as BenchmarkFile };
}

/**
 * Reads and checks a build directory (`openBuild`, all graphs); with `checkShards`, every shard
 * file must exist and have the sha256 the manifest records.
 * @throws InputError naming the file that is missing, unreadable, or does not match
 */
export function readBuildDir(dir: string, checkShards = true): BuildDir {
  const { benchmark: _benchmark, ...b } = openBuild(dir, { checkShards });
  return b;
}
