/**
 * The groups of `fkgqa serve`'s endpoint pool (pool.ts): the endpoints are split into `workers`
 * groups of about equal size in triples, each held by one worker thread.
 */
import type { StoreSource } from '../common/store-worker.js';

/** One endpoint of the pool: its id, the RDF files of its store, and their triples (for the split into groups). */
export interface PoolEndpoint {
  id: string;
  sources: StoreSource[];
  triples: number;
}

/**
 * Splits endpoints into at most `n` groups of about equal triples: largest first, each into the
 * group with the fewest triples so far (ties: the lower index). Deterministic.
 */
export function splitIntoGroups(endpoints: PoolEndpoint[], n: number): PoolEndpoint[][] {
  const k = Math.max(1, Math.min(n, endpoints.length));
  const groups: PoolEndpoint[][] = Array.from({ length: k }, () => []);
  const load = new Array<number>(k).fill(0);
  const order = endpoints.map((e, i) => ({ e, i })).sort((a, b) => b.e.triples - a.e.triples || a.i - b.i);
  for (const { e } of order) {
    let best = 0;
    for (let g = 1; g < k; g++) if (load[g] < load[best]) best = g;
    groups[best].push(e);
    load[best] += e.triples;
  }
  return groups.filter((g) => g.length > 0);
}
