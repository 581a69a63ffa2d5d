/**
 * Executing the submitted query in full, the way `fkgqa mcp` routes it (FKGQA paper, section 3;
 * src/mcp/run-query.ts); the harness keeps the full answer (the agent only ever saw a preview): it
 * is what `fkgqa score` scores.
 *
 * A failure is classified from the bounded client's outcome as run_sparql_query reports it
 * (`errorClass`), never from message text, as docs/evaluation.md ("Infrastructure failures are not
 * wrong answers") says: `endpoint` is an infrastructure failure; `federation` is one when an
 * endpoint the query names does not answer `ASK {}` right after (`unreachableEndpoints`); every
 * other class is the agent's. The failed endpoint is the one the probe found down, else the one
 * run_sparql_query names in `_meta["fkgqa/error"].endpoint` (e.g. an endpoint that cut its answer
 * inside a federated query: it answers the probe), else the query's only SERVICE target.
 */
import { createMcpContext } from '../mcp/server.js';
import type { McpToolContext } from '../mcp/context.js';
import { unreachableEndpoints, type EndpointRegistry } from '../federation/registry.js';
import { runSparqlQuery } from '../mcp/run-query.js';
import type { FinalAnswer } from './record.js';
import { serviceTargets } from '../sparql/services.js';

/** The outcome of one execution: the run record's `FinalAnswer`, and for an infrastructure error the endpoint that failed. */
export interface Execution extends FinalAnswer {
  failedEndpoint?: string;
}

/** Time limit of the `ASK {}` that checks whether an endpoint answers after a failure, in ms. */
const PROBE_TIMEOUT_MS = 5_000;

/**
 * Whether an execution error is an infrastructure failure (module comment), and which endpoint failed.
 * @param errorClass run_sparql_query's class of the error
 * @param targets the query's SERVICE targets
 * @param metaEndpoint the endpoint run_sparql_query's `_meta["fkgqa/error"]` names, if any
 */
async function classifyFailure(errorClass: string | undefined, targets: string[], metaEndpoint?: string): Promise<{ infrastructure: boolean; endpoint?: string; why?: string }> {
  if (errorClass !== 'endpoint' && errorClass !== 'federation') return { infrastructure: false };
  const down = targets.length ? await unreachableEndpoints(targets, PROBE_TIMEOUT_MS) : [];
  if (down.length)
    return { infrastructure: true, endpoint: down[0].url, why: `${down[0].url} ${down[0].status === undefined ? 'does not answer' : 'does not answer ASK {} properly'}: ${down[0].why}` };
  const endpoint = metaEndpoint ?? (targets.length === 1 ? targets[0] : undefined);
  if (errorClass === 'endpoint') return { infrastructure: true, ...(endpoint ? { endpoint } : {}) };
  return { infrastructure: false };
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
    if (r.isError) {
      const c = await classifyFailure(r.errorClass, endpoints, r.error?.endpoint);
      return {
        status: r.errorClass === 'timeout' ? 'timeout' : 'error',
        error: c.why ? `${r.text} (${c.why})` : r.text,
        ms: r.ms,
        endpoints,
        ...(r.errorClass ? { errorClass: r.errorClass } : {}),
        infrastructure: c.infrastructure,
        ...(c.endpoint ? { failedEndpoint: c.endpoint } : {}),
      };
    }
    if (!r.results) return { status: 'error', error: 'the answer is an RDF graph (CONSTRUCT/DESCRIBE): only SELECT and ASK answers are scored', ms: r.ms, endpoints };
    return { status: 'ok', results: r.results, rows: r.rows, ms: r.ms, route: r.route === 'direct' ? 'direct' : 'federation', endpoints };
  }

  /** Stops the federation engine. */
  async close(): Promise<void> {
    await this.ctx.close();
  }
}
