/**
 * What every tool of `fkgqa mcp` works with: the setup, the endpoint registry, the bounded SPARQL
 * client, the call log and the limits. Tool sets (run_sparql_query and get_void_descriptions
 * here, the KGVoyager exploration tools elsewhere) register onto one `McpServer` with a
 * `ToolRegistrar`, `(server, context) => void`, and share this context.
 */
import type { McpServer } from '@modelcontextprotocol/server';
import type { CallLog } from './call-log.js';
import type { KgVoyagerSetup } from './kgvoyager/setup.js';
import type { EndpointRegistry } from '../federation/registry.js';
import type { BoundedSparqlClient } from '../federation/client.js';

/**
 * The evaluation setups of the FKGQA paper (section 5): `baseline` (endpoint URLs and
 * run_sparql_query), `high_level` (plus each endpoint's one-sentence description from the build's
 * catalogue), `void_tool` (baseline plus get_void_descriptions); and `kgvoyager` (baseline plus
 * the exploration tools of KGVoyager, Wisam & Li, section 3; see src/mcp/kgvoyager/ — they can
 * also be added to the other setups).
 */
export const SETUPS = ['baseline', 'high_level', 'void_tool', 'kgvoyager'] as const;
/** One of SETUPS: the tools and endpoint information given to an agent. */
export type Setup = (typeof SETUPS)[number];

/** Bounds of the tools. Defaults follow the reference SPARQL-MCP server (field notes §0). */
export interface McpLimits {
  /** Largest query accepted, in characters (reference MAX_QUERY_CHARS: 8000). */
  maxQueryChars: number;
  /** Rows (or triples) shown to the agent; the rest are counted ("showing N of M rows"). Reference DEFAULT_QUERY_LIMIT: 100. */
  previewRows: number;
  /** Time limit of run_sparql_query when the agent gives no `timeout_ms`, in ms. */
  defaultTimeoutMs: number;
  /** Smallest and largest `timeout_ms` an agent may ask for, in ms (reference: 1000..100000). */
  minTimeoutMs: number;
  maxTimeoutMs: number;
  /** Largest answer read from an endpoint or the federation engine, in bytes. */
  maxResultBytes: number;
  /** Time limit of each step of the VoID chain (each request; each aggregate query of the computed step), in ms. */
  voidStepTimeoutMs: number;
  /** Age after which a cached VoID description is fetched again, in ms (reference: 604,800 s). */
  voidCacheTtlMs: number;
  /**
   * Characters of a tool answer when the agent gives no `max_chars` (run_sparql_query and the
   * KGVoyager tools): rows beyond it are left for the next page ("pass offset=… to continue").
   * MCP clients cap tool output (e.g. 25,000 tokens); 20,000 characters are about 5,000 tokens.
   */
  defaultMaxChars: number;
  /** Smallest and largest `max_chars` an agent may ask for. */
  minMaxChars: number;
  maxMaxChars: number;
  /** Largest JSON-RPC message accepted on stdio or HTTP, in bytes (the MCP SDK's HTTP limit: 4 MiB). */
  maxMessageBytes: number;
}

/** The default limits. */
export const DEFAULT_LIMITS: McpLimits = {
  maxQueryChars: 8000,
  previewRows: 100,
  defaultTimeoutMs: 30_000,
  minTimeoutMs: 1000,
  maxTimeoutMs: 100_000,
  maxResultBytes: 32 << 20,
  voidStepTimeoutMs: 10_000,
  voidCacheTtlMs: 604_800_000,
  defaultMaxChars: 20_000,
  minMaxChars: 1000,
  maxMaxChars: 200_000,
  maxMessageBytes: 4 << 20,
};

/** The shared context of the tools on one server. */
export interface McpToolContext {
  setup: Setup;
  registry: EndpointRegistry;
  /** Queries to registered endpoints only, within time and size bounds. */
  sparql: BoundedSparqlClient;
  /** Every tool call is recorded here. */
  callLog: CallLog;
  limits: McpLimits;
  /** The build folder, when the endpoints are a build's shards (catalogue, VoID files, default prefix). */
  build: string | null;
  /** The state folder for caches (`<state>/mcp/`), or null: caches only in memory. */
  stateDir: string | null;
  /** Prefixes suggested in error messages for undeclared ones (the build's `:` prefix). */
  prefixes: Record<string, string>;
  /** The KGVoyager tool set's configuration when the server has it (setup `kgvoyager`, or added to another setup), else null. */
  kgvoyager: KgVoyagerSetup | null;
  /**
   * The knowledge graphs of the registry's fkgqa endpoints, sorted (empty for foreign endpoints
   * only). Graphs reuse IRIs (`:singer` in concert_singer and in singer), so with several of them
   * the tools keep them apart unless `mixGraphs`: a query may name endpoints of one graph only,
   * and the KGVoyager tools answer per graph.
   */
  graphs: string[];
  /** Let one query join endpoints of several graphs, and KGVoyager merge entries by IRI over graphs (`--mix-graphs`). */
  mixGraphs: boolean;
  /** The folder of the prompt files `<setup>.md` (the texts `fkgqa eval` gives an agent), served as MCP prompts; null: none. */
  promptsDir: string | null;
}

/** Registers a set of tools (and resources) on a server. */
export type ToolRegistrar = (server: McpServer, context: McpToolContext) => void;
