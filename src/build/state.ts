/**
 * The state folder of a build: everything commands produce *about* a build after `fkgqa partition`
 * wrote it (the endpoints of a running `fkgqa serve`, stored gold answers, request logs, caches of
 * the MCP tools). A build folder is a read-only artefact once written: its output digest must still
 * check after serving, scoring or evaluating, so nothing here ever lies inside it.
 *
 * Default location: beside the build, `<parent>/<build name>.state/` (for `shards/`,
 * `shards.state/`); every command that writes state takes `--state <dir>` to put it elsewhere.
 *
 * Layout (each file documented where it is written):
 * ```
 * <build>.state/
 *   endpoints.json            the endpoints of the running fkgqa serve (EndpointsFile), removed at stop
 *   requests.jsonl            request log of fkgqa serve (capped, rotated to requests.1.jsonl)
 *   gold-answers/<kg>.json    gold answers computed by fkgqa stats on the unsharded graphs
 *   realised-fan-out/<kg>.json realised fan-out computed by fkgqa stats (provenance queries)
 *   serve.lock                the running fkgqa serve (pid and process start time; a reused pid is stale)
 *   mcp/calls.jsonl           call log of fkgqa mcp (one JSON line per tool call, for the harness)
 *   mcp/void/<hash>.json      VoID descriptions fetched or computed by get_void_descriptions (7-day cache)
 * ```
 */
import fs from 'node:fs';
import path from 'node:path';

/** File names inside a state folder, relative to it. */
export const STATE_FILES = {
  /** Endpoints of a running `fkgqa serve` (see `EndpointsFile` in src/serve/server.ts). */
  endpoints: 'endpoints.json',
  /** Request log of `fkgqa serve`, one JSON line per request. */
  requestLog: 'requests.jsonl',
  /** Gold answers of one graph, computed by `fkgqa stats`. */
  goldAnswers: (kg: string) => path.join('gold-answers', `${kg}.json`),
  /** Realised fan-out of one graph's queries, computed by `fkgqa stats`. */
  realisedFanOut: (kg: string) => path.join('realised-fan-out', `${kg}.json`),
  /** Folder of `fkgqa mcp` caches and call logs. */
  mcp: 'mcp',
} as const;

/**
 * The state folder of a build.
 * @param build path of the build folder (as given)
 * @param override the `--state` option, when given
 * @returns an absolute path; the folder is not created (see `ensureStateDir`)
 */
export function stateDir(build: string, override?: string): string {
  if (override) return path.resolve(override);
  const abs = path.resolve(build);
  return path.join(path.dirname(abs), `${path.basename(abs)}.state`);
}

/** Creates the state folder (and parents) if needed and returns its absolute path. */
export function ensureStateDir(build: string, override?: string): string {
  const dir = stateDir(build, override);
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}
