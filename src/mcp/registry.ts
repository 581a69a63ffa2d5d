/**
 * The endpoint registry of `fkgqa mcp`: the SPARQL endpoints an agent may name in SERVICE clauses.
 * It is read from a running `fkgqa serve` (its state folder's `endpoints.json`), from a build plus
 * endpoint URLs, or from a plain list of SPARQL endpoint URLs (any endpoints, not only fkgqa's).
 * Every tool of `fkgqa mcp` (run_sparql_query, get_void_descriptions, the KGVoyager tools) works
 * on this one shape.
 */

/** One registered SPARQL endpoint. */
export interface RegisteredEndpoint {
  /** Stable name: `<kg>-shard<N>` for fkgqa shards, otherwise derived from the URL. */
  id: string;
  /** The SPARQL 1.1 Protocol endpoint URL, exactly as an agent writes it in `SERVICE <…>`. */
  url: string;
  /** Knowledge graph of an fkgqa shard, or null for a foreign endpoint. */
  graph: string | null;
  /** `shard<N>` of an fkgqa shard, or null. */
  shard: string | null;
  /** One-sentence description from the build's catalogue (high_level setup), or null. */
  description: string | null;
  /** The build's pre-generated VoID file of this endpoint (`<kg>/shard<N>_void.ttl`), or null. */
  voidFile: string | null;
  /** The extended VoID file (with linksets), or null. */
  voidExtendedFile: string | null;
}

/** The registry: endpoints in a stable order (graph, then shard number; foreign ones by URL). */
export interface EndpointRegistry {
  /** Where the registry came from, e.g. `serve:/abs/shards.state/endpoints.json`, `build:/abs/shards`, `urls`. */
  source: string;
  /** Absolute path of the build, when the endpoints are an fkgqa build's shards. */
  build: string | null;
  endpoints: RegisteredEndpoint[];
}
