/**
 * Gold answers: the answer of every distinct gold query on its unsharded graph, computed by
 * `fkgqa stats` (src/report/answers.ts) and stored in the state folder
 * (`<state>/gold-answers/<kg>.json`, src/build/state.ts). `readGoldAnswers` is the one reader
 * (stats, questions, verify, score and the MCP gold check use it); answers of another build
 * (another output digest) are never used.
 */
import crypto from 'node:crypto';
import path from 'node:path';
import type { SparqlResults, TieSegment } from '../sparql/results.js';
import { readJsonIfExists } from './open.js';
import { stateDir, STATE_FILES } from './state.js';

/**
 * Time limit of one query run on an unsharded graph (a gold answer, its realised fan-out, a tie
 * key, a negated pattern's shards), in ms, when none is given: `--timeout` of stats, questions,
 * score and view, and the library's default.
 */
export const GOLD_QUERY_TIMEOUT_MS = 60_000;

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
  results?: SparqlResults | string;
  /**
   * How the answer depends on ties under ORDER BY (src/answers/ties.ts), present only when it does
   * or when that could not be decided; absent when the answer is the only correct one. Written by
   * `fkgqa stats` since gold-answers files carry `tieAnalysis` (TIE_ANALYSIS).
   */
  ties?: GoldTies;
}

/** Another correct answer of a gold query whose sub-SELECT keeps some of tied solutions (LIMIT/OFFSET). */
export interface GoldAlternative {
  results: SparqlResults;
  /** Its own ties under the top-level ORDER BY, as for the gold answer. */
  segments?: TieSegment[];
}

/**
 * What scoring needs to accept every admissible answer of a gold query whose answer depends on how
 * ties are broken. `dependence`:
 * - `order`: the top-level ORDER BY leaves the order of some tied rows open (same rows, any order within `segments`);
 * - `choice`: a LIMIT/OFFSET keeps some of the solutions that tie at its boundary — at the top level
 *   (`segments` with `rows`) or in a sub-SELECT (`alternatives`: every other answer the choice gives);
 * - `unknown`: the dependence could not be decided or enumerated (`reason` says why: a time limit,
 *   too many choices); score reports such questions apart when an answer matches neither gold nor a known alternative.
 */
export interface GoldTies {
  dependence: 'order' | 'choice' | 'unknown';
  /** In words: where the tie is, how many solutions tie, how many admissible answers there are. */
  reason: string;
  segments?: TieSegment[];
  alternatives?: GoldAlternative[];
}

/** Version of the tie analysis stored in a gold-answers file (`tieAnalysis`); `fkgqa stats` computes a file of another version anew, `fkgqa score` refuses it. */
export const TIE_ANALYSIS = 1;

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
  /** TIE_ANALYSIS when every `ok` answer was checked for ties (its `ties`); absent in files of earlier versions. */
  tieAnalysis?: number;
  answers: GoldAnswer[];
}

/** Which stored answers count (besides the build's output digest). */
interface GoldAnswersLookup {
  /** The `--state` folder, if not `<build>.state/`. */
  state?: string;
  /** Only answers computed with this time limit per query (ms), as `fkgqa stats` reuses them. */
  timeoutMs?: number;
}

/**
 * The gold answers `fkgqa stats` stored for one graph of this build: `<state>/gold-answers/<kg>.json`;
 * it counts only when its `buildDigest` is the build's output digest (and, when asked, its time limit is `timeoutMs`).
 * @param build the build folder
 * @param graph the graph
 * @param digest the build's output digest (build.json)
 * @returns the stored answers, or undefined when none match (missing, unreadable, another build)
 */
export function readGoldAnswers(build: string, graph: string, digest: string, lookup: GoldAnswersLookup = {}): GoldAnswers | undefined {
  return findGoldAnswers(build, graph, digest, lookup)?.answers;
}

/** Stored gold answers with the file they came from. */
interface StoredGoldAnswers {
  file: string;
  answers: GoldAnswers;
}

/**
 * The gold answers `readGoldAnswers` would use, with their file.
 * @returns undefined when none match (missing, unreadable, another build, another time limit)
 */
export function findGoldAnswers(build: string, graph: string, digest: string, lookup: GoldAnswersLookup = {}): StoredGoldAnswers | undefined {
  const file = path.join(stateDir(build, lookup.state), STATE_FILES.goldAnswers(graph));
  const a = readJsonIfExists<GoldAnswers>(file);
  return a?.buildDigest === digest && Array.isArray(a.answers) && (lookup.timeoutMs === undefined || a.timeoutMs === lookup.timeoutMs) ? { file, answers: a } : undefined;
}

/** JSON with the keys of every object sorted (arrays keep their order): equal values give equal text. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v,
  );
}

/**
 * The digest of one gold answer as `fkgqa stats` stored it (an entry of
 * `<state>/gold-answers/<kg>.json`): sha256 (hex, first 16 digits) of the canonical JSON of the
 * whole entry (query id, status, error, rows, empty, ordered, results, ties), or null when there is
 * none. It is what a run record's `build.goldDigest` holds (run format `fkgqa-run/2`, written by
 * eval) and what `fkgqa score` checks it against: recomputing the answer with another outcome (a
 * time limit hit before) changes it, and so does a change of the entry's shape (the tie analysis
 * added `ties` to the 31 dev answers that depend on ties); storing the same entry again does not.
 */
export function goldAnswerDigest(answer: GoldAnswer | undefined): string | null {
  return answer ? crypto.createHash('sha256').update(canonicalJson(answer)).digest('hex').slice(0, 16) : null;
}

/** The gold answer of one query as `verify` and `score` compare with it: stored, or computed on the unsharded graph. */
export interface GoldResult {
  status: 'ok' | 'error' | 'timeout';
  error?: string;
  rows?: number;
  ms?: number;
  /** Stored by `fkgqa stats` (`<state>/gold-answers/<kg>.json`, for this very build), or computed here on the union of the graph's shards. */
  source: 'gold-answers.json' | 'computed';
  results?: SparqlResults;
  /** Its dependence on ties (stored answers with a tie analysis only). */
  ties?: GoldTies;
}

/** The stored answers by query id, in the shape `verify` and `score` compare with (`GoldResult`). */
export function goldResultsById(stored: GoldAnswers): Map<string, GoldResult> {
  return new Map(
    stored.answers.map((a) => [
      a.query,
      { status: a.status, error: a.error, rows: a.rows, results: a.results as SparqlResults | undefined, source: 'gold-answers.json' as const, ...(a.ties ? { ties: a.ties } : {}) },
    ]),
  );
}
