/**
 * Gold answers: the answer of every distinct gold query on its unsharded graph, computed by
 * `fkgqa stats` (src/report/answers.ts) and stored in the state folder
 * (`<state>/gold-answers/<kg>.json`, src/build/state.ts). `readGoldAnswers` is the one reader
 * (stats, questions, verify, score and the MCP gold check use it); answers of another build
 * (another output digest) are never used.
 */
import path from 'node:path';
import type { JsonResults } from '../sparql/results.js';
import { readJsonIfExists } from './open.js';
import { stateDir, STATE_FILES } from './state.js';

/** Where versions before the state folder kept a graph's gold answers: `<build>/<kg>/gold-answers.json`. */
export const ANSWERS_FILE = 'gold-answers.json';

/** A SPARQL 1.1 Query Results JSON document (W3C "SPARQL 1.1 Query Results JSON Format"). */
export interface SparqlJsonResults {
  head: { vars?: string[]; link?: string[] };
  results?: { bindings: Record<string, { type: string; value: string; datatype?: string; 'xml:lang'?: string }>[] };
  boolean?: boolean;
}

/** The gold answer of one distinct query, executed on its unsharded graph. */
export interface GoldAnswer {
  /** Query id `<kg>/q<N>`. */
  query: string;
  status: 'ok' | 'error' | 'timeout';
  /** The engine's message (status `error`). */
  error?: string;
  /** Result rows (SELECT), 1 for ASK, triples for CONSTRUCT/DESCRIBE. */
  rows?: number;
  empty?: boolean;
  /** Whether the query orders its results (ORDER BY): compare answers in order then. */
  ordered?: boolean;
  /** SELECT/ASK: the results document; CONSTRUCT/DESCRIBE: N-Triples text. */
  results?: SparqlJsonResults | string;
}

/**
 * Gold answers of one graph: `<state>/gold-answers/<kg>.json` in the state folder of the build (src/build/state.ts). `buildDigest` is the output
 * digest of the build they were computed for (build.json), so stale answers are recomputed.
 */
export interface GoldAnswers {
  graph: string;
  buildDigest: string;
  /** Time limit per query in ms. */
  timeoutMs: number;
  engine: string;
  answers: GoldAnswer[];
}

/** Which stored answers count (besides the build's output digest). */
export interface GoldAnswersLookup {
  /** The `--state` folder, if not `<build>.state/`. */
  state?: string;
  /** Only answers computed with this time limit per query (ms), as `fkgqa stats` reuses them. */
  timeoutMs?: number;
}

/**
 * The gold answers `fkgqa stats` stored for one graph of this build: `<state>/gold-answers/<kg>.json`,
 * else `<build>/<kg>/gold-answers.json` (where earlier versions kept them); a file counts only when
 * its `buildDigest` is the build's output digest (and, when asked, its time limit is `timeoutMs`).
 * @param build the build folder
 * @param graph the graph
 * @param digest the build's output digest (build.json)
 * @returns the stored answers, or undefined when none match (missing, unreadable, another build)
 */
export function readGoldAnswers(build: string, graph: string, digest: string, lookup: GoldAnswersLookup = {}): GoldAnswers | undefined {
  return [path.join(stateDir(build, lookup.state), STATE_FILES.goldAnswers(graph)), path.join(build, graph, ANSWERS_FILE)]
    .map((f) => readJsonIfExists<GoldAnswers>(f))
    .find((a) => a?.buildDigest === digest && Array.isArray(a.answers) && (lookup.timeoutMs === undefined || a.timeoutMs === lookup.timeoutMs));
}

/** The gold answer of one query as `verify` and `score` compare with it: stored, or computed on the unsharded graph. */
export interface GoldResult {
  status: 'ok' | 'error' | 'timeout';
  error?: string;
  rows?: number;
  ms?: number;
  /** Stored by `fkgqa stats` (`<state>/gold-answers/<kg>.json`, for this very build), or computed here on the union of the graph's shards. */
  source: 'gold-answers.json' | 'computed';
  results?: JsonResults;
}

/** The stored answers by query id, in the shape `verify` and `score` compare with (`GoldResult`). */
export function goldResultsById(stored: GoldAnswers): Map<string, GoldResult> {
  return new Map(stored.answers.map((a) => [a.query, { status: a.status, error: a.error, rows: a.rows, results: a.results as JsonResults | undefined, source: 'gold-answers.json' as const }]));
}
