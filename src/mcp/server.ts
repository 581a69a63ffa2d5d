/**
 * `fkgqa mcp`: the SPARQL-MCP server of the FKGQA paper (section 3, Figure 1) — the endpoint
 * registry as a resource, `run_sparql_query` (lone SERVICE stripped and sent directly, several
 * SERVICE clauses through the local federation engine), and in the `void_tool` setup
 * `get_void_descriptions` — over stdio or Streamable HTTP, with every call logged.
 *
 * Library API (what the CLI, the tests and other tool sets call):
 * ```ts
 * const mcp = await createMcpServer({ registry, setup: 'void_tool', kgvoyager: true }); // + the KGVoyager tools
 * await mcp.server.connect(transport);          // e.g. one end of InMemoryTransport.createLinkedPair()
 * mcp.callLog.entries;                          // every call so far
 * await mcp.close();
 * ```
 * A tool set is a `ToolRegistrar`, `(server, context) => void`: it calls `server.registerTool`
 * and sends its SPARQL through `context.sparql` (registered endpoints only, bounded), logging
 * through `context.callLog`. For HTTP, where the SDK builds one `McpServer` per session or request,
 * create the shared context once with `createMcpContext` and pass `() => buildMcpServer(context, tools)`
 * as the factory (`serveMcpHttp` does this).
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { createMcpHandler, hostHeaderValidationResponse, localhostAllowedHostnames, McpServer } from '@modelcontextprotocol/server';
import * as z from 'zod';
import { InputError } from '../common/errors.js';
import { STATE_FILES, stateDir as buildStateDir } from '../build/state.js';
import { TOOL } from '../common/version.js';
import { CallLog } from './call-log.js';
import { DEFAULT_LIMITS, SETUPS, type McpLimits, type McpToolContext, type Setup, type ToolRegistrar } from './context.js';
import { kgVoyagerRegistrar } from './kgvoyager/mcp.js';
import { type KgVoyagerSetup } from './kgvoyager/setup.js';
import type { EndpointRegistry } from '../federation/registry.js';
import { RESULT_FORMATS, runSparqlQuery } from './run-query.js';
import { BoundedSparqlClient } from '../federation/client.js';
import { getVoidDescriptions, VOID_VARIANTS } from './void.js';

/** Options of `createMcpServer` / `createMcpContext`. */
export interface McpServerOptions {
  /** The endpoints (see registry.ts: `loadRegistry` and friends). */
  registry: EndpointRegistry;
  /** The paper's evaluation setup (default `baseline`). */
  setup?: Setup;
  /** Bounds, each defaulting to `DEFAULT_LIMITS`. */
  limits?: Partial<McpLimits>;
  /** The build folder (default the registry's): catalogue, VoID files, default prefix. */
  build?: string | null;
  /** The state folder (default `<build>.state` when there is a build, else none: caches in memory). */
  state?: string | null;
  /**
   * Call log file: a path, `null` for none (in memory only), or undefined for the default
   * `<state>/mcp/calls.jsonl` when there is a state folder.
   */
  callLog?: string | null;
  /** More tool sets to register on the server after the fkgqa tools. */
  tools?: ToolRegistrar[];
  /**
   * The KGVoyager tools (src/mcp/kgvoyager/): always with setup `kgvoyager`; `true` or a
   * configuration adds them to any other setup (default: only with setup `kgvoyager`).
   */
  kgvoyager?: KgVoyagerSetup | boolean;
  /** Federated queries evaluated at once (federation engine threads, default 1); each goes to the least busy one. */
  engines?: number;
  /** The federation engine, by `--federation-engine` name (default `comunica`; src/federation/engine.ts). */
  federationEngine?: string;
}

/** The IRI of the endpoint list resource. */
export const ENDPOINTS_RESOURCE = 'fkgqa://endpoints';

/** The build's default prefix (`benchmark.json` defaultPrefix), suggested for an undeclared `:`. */
function buildPrefixes(build: string | null): Record<string, string> {
  if (!build) return {};
  const f = path.join(build, 'benchmark.json');
  if (!fs.existsSync(f)) return {};
  const b = JSON.parse(fs.readFileSync(f, 'utf8')) as { defaultPrefix?: string };
  return b.defaultPrefix ? { '': b.defaultPrefix } : {};
}

/**
 * The shared context of the tools (registry, bounded SPARQL client, call log, limits). Close it
 * with `close` (stops the federation engine's thread).
 * @throws InputError for an unknown setup or limits out of range
 */
export function createMcpContext(options: McpServerOptions): McpToolContext & { close(): Promise<void> } {
  const setup = options.setup ?? 'baseline';
  if (!SETUPS.includes(setup)) throw new InputError(`unknown setup "${setup}": ${SETUPS.join(', ')}`);
  const limits = { ...DEFAULT_LIMITS, ...options.limits };
  if (limits.minTimeoutMs > limits.maxTimeoutMs || limits.previewRows < 0) throw new InputError('limits out of range: minTimeoutMs > maxTimeoutMs or previewRows < 0');
  const build = options.build !== undefined ? (options.build ? path.resolve(options.build) : null) : options.registry.build;
  const state = options.state !== undefined ? (options.state ? path.resolve(options.state) : null) : build ? buildStateDir(build) : null;
  const logFile = options.callLog !== undefined ? options.callLog : state ? path.join(state, STATE_FILES.mcp, 'calls.jsonl') : null;
  const sparql = new BoundedSparqlClient(options.registry, { maxResultBytes: limits.maxResultBytes, parallel: options.engines ?? 1, ...(options.federationEngine ? { engine: options.federationEngine } : {}) });
  return {
    setup,
    registry: options.registry,
    sparql,
    callLog: new CallLog(logFile),
    limits,
    build,
    stateDir: state,
    prefixes: buildPrefixes(build),
    kgvoyager: typeof options.kgvoyager === 'object' ? options.kgvoyager : options.kgvoyager || setup === 'kgvoyager' ? {} : null,
    close: () => sparql.close(),
  };
}

/** The endpoint list as the setup shows it: URLs, plus descriptions in `high_level`. */
export function endpointList(ctx: McpToolContext): { id: string; url: string; description?: string }[] {
  return ctx.registry.endpoints.map((e) => ({ id: e.id, url: e.url, ...(ctx.setup === 'high_level' && e.description ? { description: e.description } : {}) }));
}

/** The server's instructions: the setup, how to name endpoints, the endpoint list. */
export function instructions(ctx: McpToolContext): string {
  const lines = [
    `fkgqa SPARQL-MCP server (setup: ${ctx.setup}; ${ctx.registry.endpoints.length} SPARQL endpoints).`,
    'Answer questions by querying the SPARQL endpoints below with run_sparql_query. Every query must name the endpoints it uses with SERVICE <endpoint URL> { … }:',
    'a query whose whole WHERE clause is one SERVICE clause is sent to that endpoint directly; a query with several SERVICE clauses (or patterns outside them) is evaluated by the federation engine, which joins the parts.',
    'The data of one knowledge graph is split over several endpoints, so a question may need more than one.',
  ];
  if (ctx.setup === 'void_tool') lines.push('get_void_descriptions returns the VoID description of endpoints (classes, properties and their counts): use it to find which endpoint holds what.');
  if (ctx.kgvoyager) {
    lines.push(
      'search_all_classes and search_all_properties find classes and properties by a term and list the endpoints that hold them (use those in SERVICE clauses); ' +
        'lookup_class_instances finds instances of a class, explore_property_usage shows the classes a property connects, explore_entity_relations the neighbourhood of an entity or a literal; ' +
        'execute_query is run_sparql_query.',
    );
  }
  lines.push('', 'Endpoints:');
  for (const e of endpointList(ctx)) lines.push(`- ${e.url}${e.description ? ` — ${e.description}` : ''}`);
  return lines.join('\n');
}

/**
 * Registers the fkgqa tools on a server: the endpoint resource, run_sparql_query, and (setup
 * `void_tool`) get_void_descriptions. A `ToolRegistrar`.
 */
export const registerSparqlTools: ToolRegistrar = (server, ctx) => {
  server.registerResource(
    'endpoints',
    ENDPOINTS_RESOURCE,
    { title: 'SPARQL endpoints', description: `The registered SPARQL endpoints (setup ${ctx.setup})`, mimeType: 'application/json' },
    async (uri) => ({ contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify({ setup: ctx.setup, source: ctx.registry.source, endpoints: endpointList(ctx) }, null, 2) }] }),
  );
  const l = ctx.limits;
  server.registerTool(
    'run_sparql_query',
    {
      title: 'Run a SPARQL query',
      description:
        'Runs a read-only SPARQL 1.1 query over the registered endpoints. Name every endpoint with SERVICE <endpoint URL> { … }: ' +
        'one SERVICE clause that is the whole WHERE goes straight to that endpoint; several SERVICE clauses are joined by the federation engine. ' +
        `Declare every prefix you use. Answers show at most ${l.previewRows} rows ("showing N of M rows" when cut); queries up to ${l.maxQueryChars} characters.`,
      inputSchema: z.object({
        query: z.string().min(1).describe('the SPARQL query, with SERVICE <endpoint URL> { … } clauses'),
        format: z.enum(RESULT_FORMATS).optional().describe('result format (default application/sparql-results+json; the RDF formats apply to CONSTRUCT/DESCRIBE)'),
        timeout_ms: z.number().int().min(l.minTimeoutMs).max(l.maxTimeoutMs).optional().describe(`time limit in ms (default ${l.defaultTimeoutMs})`),
      }),
      annotations: { readOnlyHint: true, openWorldHint: true },
    },
    async (args) => {
      const r = await runSparqlQuery(ctx, args);
      return { content: [{ type: 'text', text: r.text }], ...(r.isError ? { isError: true } : {}) };
    },
  );
  if (ctx.setup === 'void_tool') {
    server.registerTool(
      'get_void_descriptions',
      {
        title: 'Get VoID descriptions',
        description:
          'Returns the VoID description (Turtle) of one or more registered endpoints: dataset size, classes with their entity counts, properties with their triple counts. ' +
          'variant "extended" adds the linksets to the other endpoints where known. Give endpoint (one URL) or endpoints (a list).',
        inputSchema: z.object({
          endpoint: z.string().optional().describe('one endpoint URL'),
          endpoints: z.array(z.string()).optional().describe('several endpoint URLs'),
          variant: z.enum(VOID_VARIANTS).optional().describe('standard (default) or extended (with linksets)'),
        }),
        annotations: { readOnlyHint: true, openWorldHint: true },
      },
      async (args) => {
        const r = await getVoidDescriptions(ctx, args);
        return { content: [{ type: 'text', text: r.text }], ...(r.isError ? { isError: true } : {}) };
      },
    );
  }
};

/** A new `McpServer` with the fkgqa tools and the given tool sets registered on the shared context. */
export function buildMcpServer(ctx: McpToolContext, tools: ToolRegistrar[] = []): McpServer {
  const server = new McpServer({ name: TOOL.name, version: TOOL.version }, { instructions: instructions(ctx) });
  registerSparqlTools(server, ctx);
  if (ctx.kgvoyager) kgVoyagerRegistrar(ctx.kgvoyager)(server, ctx);
  for (const t of tools) t(server, ctx);
  return server;
}

/** What `createMcpServer` returns. */
export interface FkgqaMcpServer {
  /** The server, not yet connected: `await server.connect(transport)`. */
  server: McpServer;
  /** The shared context of its tools. */
  context: McpToolContext;
  registry: EndpointRegistry;
  callLog: CallLog;
  /** Closes the server and stops the federation engine. */
  close(): Promise<void>;
}

/**
 * Creates the SPARQL-MCP server (see the module comment).
 * @throws InputError for a bad setup or limits
 */
export async function createMcpServer(options: McpServerOptions): Promise<FkgqaMcpServer> {
  const context = createMcpContext(options);
  const server = buildMcpServer(context, options.tools);
  return {
    server,
    context,
    registry: context.registry,
    callLog: context.callLog,
    close: async () => {
      await server.close();
      await context.close();
    },
  };
}

/** A running Streamable HTTP server (`serveMcpHttp`). */
export interface McpHttpServer {
  /** The MCP endpoint, e.g. `http://127.0.0.1:41234/mcp`. */
  url: string;
  context: McpToolContext;
  close(): Promise<void>;
}

/** Reads a Node request into a web `Request`. */
async function toRequest(req: http.IncomingMessage, base: string): Promise<Request> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const headers = new Headers();
  for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(', ') : v);
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD' && chunks.length > 0;
  return new Request(new URL(req.url ?? '/', base), { method: req.method, headers, ...(hasBody ? { body: Buffer.concat(chunks) } : {}) });
}

/** Writes a web `Response` to a Node response, streaming its body (SSE answers stay open). */
async function fromResponse(r: Response, res: http.ServerResponse): Promise<void> {
  const headers: Record<string, string> = {};
  r.headers.forEach((v, k) => (headers[k] = v));
  res.writeHead(r.status, headers);
  if (!r.body) {
    res.end();
    return;
  }
  const reader = r.body.getReader();
  res.on('close', () => void reader.cancel().catch(() => {}));
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    res.write(value);
  }
  res.end();
}

/**
 * Serves MCP over Streamable HTTP at `http://host:port/mcp` (MCP SDK v2 `createMcpHandler`, one
 * server instance per request from the shared context). Loopback by default; requests whose
 * Host header is not a loopback name are refused when bound to loopback (DNS rebinding).
 * @param host interface (default 127.0.0.1)
 * @param port port (default 0: any free port)
 */
export async function serveMcpHttp(options: McpServerOptions & { host?: string; port?: number }): Promise<McpHttpServer> {
  const context = createMcpContext(options);
  void context.sparql.warm();
  const handler = createMcpHandler(() => buildMcpServer(context, options.tools));
  const host = options.host ?? '127.0.0.1';
  const loopback = host === '127.0.0.1' || host === 'localhost' || host === '::1';
  const server = http.createServer((req, res) => {
    void (async () => {
      try {
        const url = new URL(req.url ?? '/', 'http://localhost');
        if (url.pathname !== '/mcp') {
          req.resume();
          res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found: the MCP endpoint is /mcp\n');
          return;
        }
        const request = await toRequest(req, `http://${req.headers.host ?? 'localhost'}`);
        const refused = loopback ? hostHeaderValidationResponse(request, localhostAllowedHostnames()) : undefined;
        await fromResponse(refused ?? (await handler.fetch(request)), res);
      } catch (e) {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
        res.end(`internal error: ${(e as Error).message}\n`);
      }
    })();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const urlHost = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${urlHost}:${port}/mcp`,
    context,
    close: async () => {
      await handler.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await context.close();
    },
  };
}
