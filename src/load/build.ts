import fs from 'node:fs';
import path from 'node:path';
import { InputError } from '../common/errors.js';
import { sha256OfFile } from '../common/hash.js';
import { checkGraphName } from './source.js';

/** What the later stages (`describe`, `stats`, `serve`) read of a build written by `fkgqa partition`. */
export interface BuildDir {
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

/**
 * Reads and checks a build directory: `build.json`, and each graph's `manifest.json`, whose graph
 * name must be its folder's name; with `checkShards`, every shard file must exist and have the
 * sha256 the manifest records (a shard changed or cut short after the build is refused).
 * @throws InputError naming the file that is missing, unreadable, or does not match
 */
export function readBuildDir(dir: string, checkShards = true): BuildDir {
  if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) throw new InputError('no such build directory', { file: dir });
  const build = readJsonFile<{ tool?: { name?: string }; graphs?: unknown; outputDigest?: unknown }>(path.join(dir, 'build.json'), 'build.json of an fkgqa build');
  if (build.tool?.name !== 'fkgqa' || !Array.isArray(build.graphs) || typeof build.outputDigest !== 'string') {
    throw new InputError('not a build.json written by fkgqa partition', { file: path.join(dir, 'build.json') });
  }
  const graphs = build.graphs as string[];
  const manifests = graphs.map((kg) => {
    checkGraphName(String(kg), path.join(dir, 'build.json'));
    const file = path.join(dir, kg, 'manifest.json');
    const m = readJsonFile<BuildManifest>(file, 'graph manifest');
    if (m.graph !== kg || !Array.isArray(m.shards)) throw new InputError(`not the manifest of graph ${kg} (graph "${m.graph}")`, { file });
    if (checkShards) {
      for (const s of m.shards) {
        const shard = path.join(dir, kg, path.basename(String(s.file)));
        if (!fs.existsSync(shard)) throw new InputError('shard file listed in the manifest is missing', { file: shard });
        const sha = sha256OfFile(shard);
        if (sha !== s.sha256) throw new InputError(`shard file differs from the one the build wrote (sha256 ${sha.slice(0, 12)}…, manifest ${String(s.sha256).slice(0, 12)}…)`, { file: shard });
      }
    }
    return m;
  });
  return { dir, build: { graphs, outputDigest: build.outputDigest as string }, manifests };
}
