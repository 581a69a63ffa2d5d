import fs from 'node:fs';
import type { StoreWorker } from '../common/store-worker.js';

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
 * Gold answers of one graph: `<state>/gold-answers/<kg>.json` in the state folder of the build (src/common/state.ts). `buildDigest` is the output
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

/** A distinct gold query to execute. */
export interface GoldQueryToRun {
  id: string;
  /** Query text with full IRIs (ParsedQuery.normalized). */
  normalized: string;
  /** `SELECT`, `ASK`, `CONSTRUCT` or `DESCRIBE`. */
  queryType: string;
  ordered: boolean;
}

export const ANSWERS_FILE = 'gold-answers.json';

/**
 * Executes every query on a store holding the unsharded graph (the union of the graph's shards,
 * which guarantee 1 of `fkgqa partition` makes equal to the input), each under a time limit that
 * stops it (StoreWorker). A failing or timed-out query is recorded with its status, never dropped.
 * `onQuery` is told when each query starts and ends (progress, see ProgressTicker).
 */
export async function executeGoldQueries(
  store: StoreWorker,
  queries: GoldQueryToRun[],
  timeoutMs: number,
  onQuery?: { start(id: string): void; done(id: string): void },
): Promise<GoldAnswer[]> {
  const out: GoldAnswer[] = [];
  for (const q of queries) {
    onQuery?.start(`${q.id} (gold answer)`);
    const graphResult = q.queryType === 'CONSTRUCT' || q.queryType === 'DESCRIBE';
    const r = await store.query({
      query: q.normalized,
      resultsFormat: graphResult ? 'application/n-triples' : 'application/sparql-results+json',
      timeoutMs,
    });
    if (r.status === 'timeout') out.push({ query: q.id, status: 'timeout', ordered: q.ordered });
    else if (r.status === 'error') out.push({ query: q.id, status: 'error', error: r.error, ordered: q.ordered });
    else if (graphResult) {
      const rows = r.body.split('\n').filter((l) => l.trim()).length;
      out.push({ query: q.id, status: 'ok', rows, empty: rows === 0, ordered: q.ordered, results: r.body });
    } else {
      const results = JSON.parse(r.body) as SparqlJsonResults;
      const rows = results.results ? results.results.bindings.length : 1;
      const empty = results.results ? rows === 0 : results.boolean === false;
      out.push({ query: q.id, status: 'ok', rows, empty, ordered: q.ordered, results });
    }
    onQuery?.done(`${q.id} (gold answer)`);
  }
  return out;
}

/** Reads stored gold answers, or undefined if the file is missing or unreadable. */
export function readGoldAnswers(file: string): GoldAnswers | undefined {
  if (!fs.existsSync(file)) return undefined;
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as GoldAnswers;
  } catch {
    return undefined;
  }
}
