/**
 * Computing gold answers: every distinct gold query on its unsharded graph (`fkgqa stats`; stored
 * and read through src/build/gold-answers.ts).
 */
import type { StoreWorker } from '../common/store-worker.js';
import type { GoldAnswer, SparqlJsonResults } from '../build/gold-answers.js';

/** A distinct gold query to execute. */
export interface GoldQueryToRun {
  id: string;
  /** Query text with full IRIs (ParsedQuery.normalized). */
  normalized: string;
  /** `SELECT`, `ASK`, `CONSTRUCT` or `DESCRIBE`. */
  queryType: string;
  ordered: boolean;
}

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
