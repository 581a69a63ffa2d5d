/**
 * Executing the submitted query in full, the way `fkgqa mcp` routes it (FKGQA paper, section 3;
 * src/mcp/run-query.ts): its SERVICE clauses name the endpoints; one SERVICE wrapping the whole
 * WHERE is sent straight to its endpoint, anything else goes to the federation engine (stopped at
 * the time limit; src/federation/); only registered endpoints may be named. The harness keeps the full
 * answer (the agent only ever saw a preview): it is what `fkgqa score` scores.
 */
import { createMcpContext } from '../mcp/server.js';
import type { McpToolContext } from '../mcp/context.js';
import type { EndpointRegistry } from '../federation/registry.js';
import { runSparqlQuery } from '../mcp/run-query.js';
import type { JsonResults } from '../sparql/results.js';
import { serviceTargets } from '../sparql/services.js';

/** The outcome of one execution. */
export interface Execution {
  status: 'ok' | 'error' | 'timeout';
  ms: number;
  results?: JsonResults;
  rows?: number;
  error?: string;
  route?: 'direct' | 'federation';
  /** SERVICE targets of the query (empty when it does not parse). */
  endpoints: string[];
}

/** Runs submitted queries through the library of `fkgqa mcp` (module comment). Call `close` at the end. */
export class QueryExecutor {
  private readonly ctx: McpToolContext & { close(): Promise<void> };

  /**
   * @param registry the registered endpoints (those of the question's graph)
   * @param timeoutMs time limit of one query in ms (clamped to 1,000..100,000 like run_sparql_query's)
   * @param maxQueryChars longest query accepted (the agent's tool has the same bound)
   * @param federationEngine the federation engine by name (default `comunica`)
   */
  constructor(
    registry: EndpointRegistry,
    readonly timeoutMs = 30_000,
    maxQueryChars = 8000,
    federationEngine?: string,
  ) {
    this.ctx = createMcpContext({ registry, setup: 'baseline', callLog: null, state: null, limits: { defaultTimeoutMs: timeoutMs, maxQueryChars }, ...(federationEngine ? { federationEngine } : {}) });
  }

  /** Executes a query; never throws (errors are outcomes). */
  async run(query: string): Promise<Execution> {
    const r = await runSparqlQuery(this.ctx, { query, timeout_ms: this.timeoutMs });
    const endpoints = serviceTargets(query) ?? [];
    if (r.isError) return { status: r.errorClass === 'timeout' ? 'timeout' : 'error', error: r.text, ms: r.ms, endpoints };
    if (!r.results) return { status: 'error', error: 'the answer is an RDF graph (CONSTRUCT/DESCRIBE): only SELECT and ASK answers are scored', ms: r.ms, endpoints };
    return { status: 'ok', results: r.results, rows: r.rows, ms: r.ms, route: r.route === 'direct' ? 'direct' : 'federation', endpoints };
  }

  /** Stops the federation engine. */
  async close(): Promise<void> {
    await this.ctx.close();
  }
}
