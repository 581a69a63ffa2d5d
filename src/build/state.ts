/**
 * The state folder of a build: everything commands produce *about* a build after `fkgqa partition`
 * wrote it (the endpoints of a running `fkgqa serve`, stored gold answers, request logs, caches of
 * the MCP tools). A build folder is a read-only artefact once written: its output digest must still
 * check after serving, scoring or evaluating, so nothing here ever lies inside it.
 *
 * Default location: beside the build, `<parent>/<build name>.state/` (for `shards/`,
 * `shards.state/`); every command that writes state takes `--state <dir>` to put it elsewhere. Its
 * layout is in docs/robustness.md (`STATE_FILES` names the files; each is documented where written).
 */
import path from 'node:path';
import type { LockOwner } from '../common/output.js';

/** File names inside a state folder, relative to it. */
export const STATE_FILES = {
  /** Endpoints of a running `fkgqa serve` (`EndpointsFileContents`; read only through src/federation/registry.ts). */
  endpoints: 'endpoints.json',
  /** Request log of `fkgqa serve`, one JSON line per request. */
  requestLog: 'requests.jsonl',
  /** Gold answers of one graph, computed by `fkgqa stats`. */
  goldAnswers: (kg: string) => path.join('gold-answers', `${kg}.json`),
  /** Realised fan-out of one graph's queries, computed by `fkgqa stats`. */
  realisedFanOut: (kg: string) => path.join('realised-fan-out', `${kg}.json`),
  /** Folder of `fkgqa mcp` caches and call logs. */
  mcp: 'mcp',
  /** Lock of the `fkgqa serve` serving the build (a `LockOwner`), held while it runs. */
  serveLock: 'serve.lock',
} as const;

/**
 * The state folder of a build.
 * @param build path of the build folder (as given)
 * @param override the `--state` option, when given
 * @returns an absolute path; the folder is not created
 */
export function stateDir(build: string, override?: string): string {
  if (override) return path.resolve(override);
  const abs = path.resolve(build);
  return path.join(path.dirname(abs), `${path.basename(abs)}.state`);
}

/** One endpoint as `endpoints.json` lists it. */
export interface EndpointEntry {
  /** `<kg>-shard<N>` (the name in the manifest), or `<kg>` for an unsharded graph. */
  id: string;
  graph: string;
  role: 'shard' | 'original';
  /** `shard<N>`, or null for an unsharded graph. */
  shard: string | null;
  /** The SPARQL endpoint URL. */
  url: string;
  /** URL of the endpoint's VoID (`…/.well-known/void`), or null when the build has no VoID file for it. */
  void: string | null;
  /** sha256 (hex) of the endpoint's VoID description as served (live URLs filled in), or null without one; absent in files of earlier versions. */
  voidDigest?: string | null;
  /** Triples the endpoint serves. */
  triples: number;
  /** What holds its triples (`fkgqa serve --store`): `oxigraph` or `virtuoso`; absent in files of earlier versions. */
  store?: string;
  /**
   * Where its triples are held, `host:port`: the Virtuoso instance for `--store virtuoso`, else the
   * serve's own listener. With `url` and `triples`, the placement of the shard. Absent in files of earlier versions.
   */
  host?: string;
  /** Its behaviour profile (see src/serve/profile.ts), or null (complete and reliable). */
  profile: object | null;
}

/**
 * The contents of `endpoints.json` in the state folder, written by `fkgqa serve` once every
 * endpoint listens and removed when it stops (with LockOwner fields: pid, procStart, started,
 * hostname). Read only by the endpoint registry (src/federation/registry.ts), which checks its shape,
 * its build and that its serve is alive.
 */
export interface EndpointsFileContents extends Partial<LockOwner> {
  tool: { name: string; version: string };
  /** Absolute path of the build directory. */
  shards: string;
  /** The build's output digest (build.json), so that a copy of the endpoints file elsewhere still names its build. Absent in files of earlier versions. */
  outputDigest?: string;
  timeoutMs: number;
  maxBodyBytes: number;
  /** The profile file, when profiles were given as a file. */
  profileFile: string | null;
  endpoints: EndpointEntry[];
}
