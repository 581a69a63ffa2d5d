/**
 * The KGVoyager tools as a tool set of `fkgqa mcp` (a `ToolRegistrar`): setup `kgvoyager`, or
 * added to any other setup. Their SPARQL goes through the server's bounded client (registered
 * endpoints only), every call is recorded in the server's call log, and `execute_query` is
 * run_sparql_query under the paper's name.
 */
import type { McpServer } from '@modelcontextprotocol/server';
import type { McpToolContext, ToolRegistrar } from '../context.js';
import { runSparqlQuery, RESULT_FORMATS, type ResultFormat } from '../run-query.js';
import { createEmbedder } from './embedder.js';
import { registerKgVoyagerToolsOn, type KgVoyagerCall } from './register.js';
import type { SparqlSelect } from './sparql.js';
import { KgVoyager } from './tools.js';
import type { KgVoyagerSetup } from './setup.js';

/** One `KgVoyager` (and so one index cache) per server context, shared by the servers built from it (one per HTTP session). */
const instances = new WeakMap<McpToolContext, KgVoyager>();

/** The `SparqlSelect` of a context: its bounded client, rows cut to `maxRows`. */
export function contextSelect(ctx: McpToolContext): SparqlSelect {
  return async (url, query, bounds) => {
    const rows = await ctx.sparql.select(url, query, bounds.timeoutMs);
    return rows.length > bounds.maxRows ? rows.slice(0, bounds.maxRows) : rows;
  };
}

/**
 * The `KgVoyager` of a context, created on first use.
 * @param setup used only when the instance is created
 */
export function kgVoyagerOf(ctx: McpToolContext, setup: KgVoyagerSetup = {}): KgVoyager {
  let k = instances.get(ctx);
  if (!k) {
    k = new KgVoyager({ registry: ctx.registry, select: contextSelect(ctx), embedder: createEmbedder(setup.embedder), options: setup.options });
    instances.set(ctx, k);
  }
  return k;
}

/** Records a KGVoyager tool call in the server's call log (route `kgvoyager`). execute_query is logged by run_sparql_query itself. */
function logCall(ctx: McpToolContext, call: KgVoyagerCall): void {
  if (call.tool === 'execute_query') return;
  ctx.callLog.record({
    time: new Date(Date.now() - call.ms).toISOString(),
    tool: call.tool,
    setup: ctx.setup,
    route: call.error ? 'error' : 'kgvoyager',
    endpoints: Object.keys(call.requests),
    requests: call.requests,
    ms: Math.round(call.ms * 10) / 10,
    ...(call.error ? { errorClass: 'kgvoyager', error: call.error.slice(0, 1000) } : {}),
    details: { args: call.args },
  });
}

/**
 * A `ToolRegistrar` for the KGVoyager tools with a given configuration.
 * @throws InputError (when the first server is built) for a bad embedder configuration
 */
export function kgVoyagerRegistrar(setup: KgVoyagerSetup = {}): ToolRegistrar {
  return (server: McpServer, ctx: McpToolContext) => {
    registerKgVoyagerToolsOn(server, kgVoyagerOf(ctx, setup), {
      log: (call) => logCall(ctx, call),
      executeQuery: async (args) => {
        const format = args.format && (RESULT_FORMATS as readonly string[]).includes(args.format) ? (args.format as ResultFormat) : undefined;
        if (args.format && !format) return { text: `Error (format): unknown format "${args.format}"; one of ${RESULT_FORMATS.join(', ')}`, isError: true };
        const r = await runSparqlQuery(ctx, { query: args.query, ...(format ? { format } : {}), ...(args.timeout_ms !== undefined ? { timeout_ms: args.timeout_ms } : {}) });
        return { text: r.text, isError: r.isError };
      },
      executeQueryBounds: { formats: RESULT_FORMATS, minTimeoutMs: ctx.limits.minTimeoutMs, maxTimeoutMs: ctx.limits.maxTimeoutMs, defaultTimeoutMs: ctx.limits.defaultTimeoutMs },
    });
  };
}

/** The KGVoyager tools with the default configuration (n-gram embedder, hybrid retrieval, RRF k = 2). */
export const registerKgVoyagerTools: ToolRegistrar = kgVoyagerRegistrar();
