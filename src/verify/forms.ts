/** The forms `fkgqa verify` runs each gold query in (light: the CLI reads them for its help). */

/**
 * The forms of a gold query verify runs on each federation engine:
 * - `federated`: the query as it is, the engine selecting sources among the graph's shard
 *   endpoints (engines that select sources only: not `jena`);
 * - `trivial`: the paper's trivial federation, every triple pattern a UNION of SERVICE over all
 *   shards of the graph (src/sparql/trivial.ts);
 * - `oracle`: the trivial federation over exactly the shards the gold answer needs (realised
 *   fan-out of `fkgqa stats`), what `fkgqa eval`'s oracle agent submits (`oracleFederation`).
 */
export type FederationForm = 'federated' | 'trivial' | 'oracle';
/** Every form, in report order. */
export const FORMS: FederationForm[] = ['federated', 'trivial', 'oracle'];
