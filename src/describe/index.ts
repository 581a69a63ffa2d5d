/**
 * The describe stage: VoID (standard and extended) for every shard and the build's catalogue,
 * computed with SPARQL 1.1 aggregate queries through one client interface (in-process oxigraph
 * or a remote endpoint), or by streaming the shard files for graphs too large for a store.
 * See docs/void.md.
 */
export { HttpSparqlClient, OxigraphClient, type GraphFile, type SparqlClient } from './client.js';
export * from './queries.js';
export * from './model.js';
export { computeStatistics, namespaceOf, uriSpaceOf, type GraphShards } from './statistics.js';
export { streamStatistics, type GraphShardFiles } from './stream-statistics.js';
export { readVoid, renderVoid, FKGQA_VOCAB, VOID_EXT, type VoidVariant } from './void-turtle.js';
export { checkVoid, formatUntrue, type UntrueStatement, type VoidCheck } from './check.js';
export * from './catalogue.js';
export * from './describe.js';
