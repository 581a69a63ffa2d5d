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
import { KgVoyager, type ExplorationTools } from './tools.js';
import { GraphScopedKgVoyager } from './scope.js';
import type { KgVoyagerSetup } from './setup.js';

/** One set of tools (and so one index cache) per server context, shared by the servers built from it (one per HTTP session). */
const instances = new WeakMap<McpToolContext, ExplorationTools>();

/** The `SparqlSelect` of a context: its bounded client, rows cut to `maxRows`. */
function contextSelect(ctx: McpToolContext): SparqlSelect {
  return async (url, query, bounds) => {
    const rows = await ctx.sparql.select(url, query, bounds.timeoutMs);
    return rows.length > bounds.maxRows ? rows.slice(0, bounds.maxRows) : rows;
  };
}

/**
 * The KGVoyager tools of a context, created on first use: one scope per knowledge graph when the
 * registry has several graphs (scope.ts: they reuse IRIs), unless the context mixes graphs; else
 * one `KgVoyager` over all endpoints.
 * @param setup used only when the instance is created
 */
function kgVoyagerOf(ctx: McpToolContext, setup: KgVoyagerSetup = {}): ExplorationTools {
  let k = instances.get(ctx);
  if (!k) {
    const context = { registry: ctx.registry, select: contextSelect(ctx), embedder: createEmbedder(setup.embedder), options: setup.options, prefixes: ctx.prefixes };
    k = ctx.graphs.length > 1 && !ctx.mixGraphs ? new GraphScopedKgVoyager(context) : new KgVoyager(context);
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
    ...(call.error ? { errorClass: call.errorClass ?? 'kgvoyager', error: call.error.slice(0, 1000), ...(call.infrastructure ? { infrastructure: true } : {}) } : {}),
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
        if (args.format && !format)
          return {
            text: `Error (invalid-arguments): unknown format "${args.format}"; one of ${RESULT_FORMATS.join(', ')}`,
            isError: true,
            error: { class: 'invalid-arguments', infrastructure: false },
          };
        const { format: _f, ...rest } = args;
        void _f;
        const r = await runSparqlQuery(ctx, { ...rest, ...(format ? { format } : {}) });
        return { text: r.text, isError: r.isError, ...(r.error ? { error: r.error } : {}) };
      },
      executeQueryBounds: { formats: RESULT_FORMATS, minTimeoutMs: ctx.limits.minTimeoutMs, maxTimeoutMs: ctx.limits.maxTimeoutMs, defaultTimeoutMs: ctx.limits.defaultTimeoutMs },
      pageBounds: ctx.limits,
    });
  };
}
