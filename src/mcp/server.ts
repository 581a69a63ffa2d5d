/**
 * `fkgqa mcp`: the SPARQL-MCP server of the FKGQA paper (section 3, Figure 1) — the endpoint
 * registry as a resource, `run_sparql_query` (lone SERVICE stripped and sent directly, several
 * SERVICE clauses through the local federation engine), and in the `void_tool` setup
 * `get_void_descriptions` — over stdio or Streamable HTTP, with every call logged.
 *
 * Library API (`createMcpServer`, tool sets as `ToolRegistrar`s, one shared context per HTTP server
 * through `createMcpContext` and `buildMcpServer`): docs/mcp.md ("Library API").
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { createMcpHandler, hostHeaderValidationResponse, localhostAllowedHostnames, McpServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import * as z from 'zod';
import { InputError, listenError } from '../common/errors.js';
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
import { VOID_FORMATS } from './void-text.js';
import { DEFAULT_PROMPTS_DIR, ENDPOINTS_RESOURCE, endpointsResource, instructions, PROMPT_NAME, promptFile, promptText, runQueryDescription } from './surface.js';
import { installToolErrorMeta, textResult } from './tool-error.js';
import { checkMessage, HardenedStdioTransport, oversizedReply } from './transport.js';
import { buildPrefixes } from '../build/benchmark.js';

export { ENDPOINTS_RESOURCE, instructions } from './surface.js';

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
  /**
   * Let one query join endpoints of several knowledge graphs and KGVoyager merge entries by IRI
   * over graphs (`--mix-graphs`; default false: graphs reuse IRIs, so they are kept apart).
   */
  mixGraphs?: boolean;
  /** Folder of the prompt files `<setup>.md` served as the prompt answer_question (default the shipped prompts/; null: no prompt). */
  promptsDir?: string | null;
}

/**
 * A prompts folder given by the user (`--prompts`), checked: a folder holding `<setup>.md`.
 * @returns the folder
 * @throws InputError naming the folder when it is missing, not a folder, or lacks the setup's file
 *   (without the check the server started and answered prompts/get with "Method not found")
 */
function promptsFolder(dir: string, setup: Setup): string {
  if (!fs.statSync(dir, { throwIfNoEntry: false })?.isDirectory()) throw new InputError('--prompts: no such folder', { file: dir });
  if (!fs.existsSync(path.join(dir, `${setup}.md`))) throw new InputError(`--prompts: the folder has no ${setup}.md (the prompt of setup ${setup})`, { file: dir });
  return dir;
}

/**
 * The shared context of the tools (registry, bounded SPARQL client, call log, limits). Close it
 * with `close` (stops the federation engine's thread).
 * @throws InputError for an unknown setup or limits out of range, a prompts folder without the
 *   setup's file, a call log that is a folder
 */
export function createMcpContext(options: McpServerOptions): McpToolContext & { close(): Promise<void> } {
  const setup = options.setup ?? 'baseline';
  if (!(SETUPS as readonly string[]).includes(setup)) throw new InputError(`unknown setup "${setup}": ${SETUPS.join(', ')}`);
  const limits = { ...DEFAULT_LIMITS, ...options.limits };
  if (limits.minTimeoutMs > limits.maxTimeoutMs || limits.previewRows < 0) throw new InputError('limits out of range: minTimeoutMs > maxTimeoutMs or previewRows < 0');
  const build = options.build !== undefined ? (options.build ? path.resolve(options.build) : null) : options.registry.build;
  const state = options.state !== undefined ? (options.state ? path.resolve(options.state) : null) : build ? buildStateDir(build) : null;
  const logFile = options.callLog !== undefined ? options.callLog : state ? path.join(state, STATE_FILES.mcp, 'calls.jsonl') : null;
  const sparql = new BoundedSparqlClient(options.registry, {
    maxResultBytes: limits.maxResultBytes,
    parallel: options.engines ?? 1,
    ...(options.federationEngine ? { engine: options.federationEngine } : {}),
  });
  // Only high_level gives the catalogue's descriptions (section 5): every other setup's registry has none, so no path can show them.
  const registry = setup === 'high_level' ? options.registry : { ...options.registry, endpoints: options.registry.endpoints.map((e) => ({ ...e, description: null })) };
  const callLog = new CallLog(logFile);
  const graphs = [...new Set(registry.endpoints.map((e) => e.graph).filter((g): g is string => g !== null))].sort();
  return {
    setup,
    registry,
    graphs,
    mixGraphs: options.mixGraphs ?? false,
    promptsDir: options.promptsDir !== undefined ? options.promptsDir && promptsFolder(path.resolve(options.promptsDir), setup) : DEFAULT_PROMPTS_DIR,
    sparql,
    callLog,
    limits,
    build,
    stateDir: state,
    prefixes: buildPrefixes(build),
    kgvoyager: typeof options.kgvoyager === 'object' ? options.kgvoyager : options.kgvoyager || setup === 'kgvoyager' ? {} : null,
    close: async () => {
      callLog.close();
      await sparql.close();
    },
  };
}

/**
 * Registers the fkgqa tools on a server: the endpoint resource, run_sparql_query, and (setup
 * `void_tool`) get_void_descriptions. A `ToolRegistrar`.
 */
const registerSparqlTools: ToolRegistrar = (server, ctx) => {
  server.registerResource(
    'endpoints',
    ENDPOINTS_RESOURCE,
    {
      title: 'SPARQL endpoints',
      description: `The SPARQL endpoints of this server (setup ${ctx.setup})${ctx.setup === 'high_level' ? ', each with a one-sentence description' : ''}`,
      mimeType: 'application/json',
    },
    async (uri) => ({ contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(endpointsResource(ctx), null, 2) }] }),
  );
  const l = ctx.limits;
  const paging = {
    offset: z.number().int().min(0).optional().describe('rows of the answer to skip: the next page starts at the offset the previous answer names (default 0)'),
    max_chars: z.number().int().min(l.minMaxChars).max(l.maxMaxChars).optional().describe(`characters of the answer shown (default ${l.defaultMaxChars}); rows beyond it are left for the next page`),
  };
  server.registerTool(
    'run_sparql_query',
    {
      title: 'Run a SPARQL query',
      description: runQueryDescription(ctx),
      inputSchema: z.object({
        query: z.string().min(1).describe('the SPARQL query, with SERVICE <endpoint URL> { … } clauses'),
        format: z
          .enum(RESULT_FORMATS)
          .optional()
          .describe(
            'result format: table (default: a header line of ?variables, one tab-separated line per row, terms as in SPARQL with your PREFIXes), application/sparql-results+json (SPARQL JSON results); the RDF formats apply to CONSTRUCT/DESCRIBE',
          ),
        timeout_ms: z.number().int().min(l.minTimeoutMs).max(l.maxTimeoutMs).optional().describe(`time limit in ms (default ${l.defaultTimeoutMs})`),
        ...paging,
      }),
      annotations: { readOnlyHint: true, openWorldHint: true },
    },
    async (args) => {
      const r = await runSparqlQuery(ctx, args);
      return textResult(r.text, r.isError ? (r.error ?? { class: r.errorClass ?? 'error', infrastructure: false }) : undefined);
    },
  );
  if (ctx.setup === 'void_tool') {
    server.registerTool(
      'get_void_descriptions',
      {
        title: 'Get VoID descriptions',
        description:
          'Returns the VoID description of one or more of the endpoints listed in the description of run_sparql_query: dataset size, classes with their entity counts and properties, properties with their triple counts; datasets are named by their endpoint URL. ' +
          'variant "extended" adds the linksets to the other endpoints. Give endpoint (one URL) or endpoints (a list). Long answers come in pages (offset, max_chars).',
        inputSchema: z.object({
          endpoint: z.string().optional().describe('one endpoint URL'),
          endpoints: z.array(z.string()).optional().describe('several endpoint URLs'),
          variant: z.enum(VOID_VARIANTS).optional().describe('standard (default) or extended (with linksets)'),
          format: z.enum(VOID_FORMATS).optional().describe('summary (default: a line per dataset, class, property and linkset, names as in SPARQL) or text/turtle (a Turtle statement per line)'),
          offset: z.number().int().min(0).optional().describe('statements of the answer to skip: the next page starts at the offset the previous answer names (default 0)'),
          max_chars: paging.max_chars,
        }),
        annotations: { readOnlyHint: true, openWorldHint: true },
      },
      async (args) => {
        const r = await getVoidDescriptions(ctx, args);
        return textResult(r.text, r.error);
      },
    );
  }
  if (promptFile(ctx)) {
    const graph =
      ctx.graphs.length > 1
        ? {
            graph: z
              .enum(ctx.graphs as [string, ...string[]])
              .optional()
              .describe('list only the endpoints of this knowledge graph (default: all)'),
          }
        : {};
    server.registerPrompt(
      PROMPT_NAME,
      {
        title: `Answer a question (setup ${ctx.setup})`,
        description: `The instructions fkgqa eval gives an agent in setup ${ctx.setup} (prompts/${ctx.setup}.md), with the endpoints filled in, followed by the question.`,
        argsSchema: z.object({ question: z.string().optional().describe('the question to answer'), ...graph }),
      },
      async (args) => ({ messages: [{ role: 'user', content: { type: 'text', text: promptText(ctx, args as { question?: string; graph?: string }) } }] }),
    );
  }
};

/** A new `McpServer` with the fkgqa tools and the given tool sets registered on the shared context. */
function buildMcpServer(ctx: McpToolContext, tools: ToolRegistrar[] = []): McpServer {
  const server = new McpServer({ name: TOOL.name, version: TOOL.version }, { instructions: instructions(ctx) });
  installToolErrorMeta(server);
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
interface McpHttpServer {
  /** The MCP endpoint, e.g. `http://127.0.0.1:41234/mcp`. */
  url: string;
  context: McpToolContext;
  close(): Promise<void>;
}

/** The headers of a Node request as web `Headers`. */
function webHeaders(req: http.IncomingMessage): Headers {
  const headers = new Headers();
  for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(', ') : v);
  return headers;
}

/**
 * Reads a request body up to `max` bytes.
 * @returns the body, or — when it is larger (by its Content-Length, or once more than `max` bytes
 *   arrived) — its size when known and its first bytes (for the request id), without reading the rest
 */
async function readBounded(req: http.IncomingMessage, max: number): Promise<{ body: Buffer } | { tooLarge: true; bytes: number | null; head: string }> {
  const declared = Number(req.headers['content-length']);
  const over = Number.isFinite(declared) && declared > max;
  // Events rather than `for await`: leaving an async iterator early destroys the request, and its client would get no answer.
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (c: Buffer) => {
      size += c.length;
      if (size <= max && (!over || size < 4096)) return void chunks.push(c);
      req.off('data', onData).off('end', onEnd).off('error', reject);
      req.pause();
      resolve({
        tooLarge: true,
        bytes: over ? declared : null,
        head: Buffer.concat([...chunks, c])
          .subarray(0, 4096)
          .toString('utf8'),
      });
    };
    const onEnd = () => resolve({ body: Buffer.concat(chunks) });
    req.on('data', onData).on('end', onEnd).on('error', reject);
  });
}

/** The most bytes of a refused body read (and dropped) so that its client gets the answer; beyond, the connection is cut. */
const DRAIN_BYTES = 64 << 20;

/**
 * Answers a JSON-RPC error (or several) over HTTP. With `unread`, the body was not read to its
 * end: the answer is written at once (a client that reads while it sends has it), but the response
 * ends, and the connection closes, only once the rest of the body was read and dropped, up to
 * DRAIN_BYTES (beyond, the connection is cut). Ending it at once closed a socket holding unread
 * bytes: the kernel then resets the connection, and a client still sending (or slow to read, as at
 * load 20) lost the 413 to ECONNRESET.
 */
function sendJsonRpcError(res: http.ServerResponse, status: number, reply: unknown, unread?: http.IncomingMessage): void {
  const body = JSON.stringify(reply);
  if (!unread) {
    res.writeHead(status, { 'content-type': 'application/json' }).end(body);
    return;
  }
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), connection: 'close' });
  res.write(body);
  let dropped = 0;
  unread.on('data', (c: Buffer) => {
    dropped += c.length;
    if (dropped > DRAIN_BYTES) unread.destroy();
  });
  unread.once('end', () => res.end());
  unread.once('close', () => res.end());
  unread.resume();
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
 * Host header is not a loopback name are refused when bound to loopback (DNS rebinding). A body
 * over `limits.maxMessageBytes` is answered 413 without reading it all, a malformed JSON-RPC
 * message 400 with the JSON-RPC error of transport.ts (as on stdio); `onRefused` is told why.
 * @param host interface (default 127.0.0.1)
 * @param port port (default 0: any free port)
 */
export async function serveMcpHttp(options: McpServerOptions & { host?: string; port?: number; onRefused?: (why: string) => void }): Promise<McpHttpServer> {
  const context = createMcpContext(options);
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
        const target = new URL(req.url ?? '/', `http://${req.headers.host ?? 'localhost'}`);
        const headers = webHeaders(req);
        const refused = loopback ? hostHeaderValidationResponse(new Request(target, { headers }), localhostAllowedHostnames()) : undefined;
        if (refused) {
          req.resume();
          await fromResponse(refused, res);
          return;
        }
        let body: Buffer | undefined;
        if (req.method !== 'GET' && req.method !== 'HEAD') {
          const read = await readBounded(req, context.limits.maxMessageBytes);
          if ('tooLarge' in read) return sendJsonRpcError(res, 413, oversizedReply(read.bytes, context.limits.maxMessageBytes, read.head), req);
          body = read.body.length > 0 ? read.body : undefined;
          // The JSON-RPC envelope is checked as on stdio (transport.ts), so both answer malformed messages alike.
          if (req.method === 'POST' && body) {
            const c = checkMessage(body.toString('utf8'));
            if (!c.ok) {
              options.onRefused?.(c.why);
              if (c.reply) return sendJsonRpcError(res, 400, c.reply);
              res.writeHead(202).end();
              return;
            }
          }
        }
        await fromResponse(await handler.fetch(new Request(target, { method: req.method, headers, ...(body ? { body: new Uint8Array(body) } : {}) })), res);
      } catch (e) {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
        res.end(`internal error: ${(e as Error).message}\n`);
      }
    })();
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', (e: NodeJS.ErrnoException) => reject(listenError(e, host, options.port ?? 0)));
      server.listen(options.port ?? 0, host, () => resolve());
    });
  } catch (e) {
    // A port in use or a foreign --host: nothing was started but the context (no engine thread yet).
    await handler.close();
    await context.close();
    throw e;
  }
  // The federation engine's thread starts once the server listens: a server that cannot listen starts none.
  void context.sparql.warm();
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

/** A running stdio server (`serveMcpStdio`). */
interface McpStdioServer {
  context: McpToolContext;
  /** Resolves when the client closed stdin and every request read before was answered. */
  closed: Promise<void>;
  /** Resolves when the federation engine's start-up (begun at once) ended: true started, false failed (each federated query then says why). */
  warmed: Promise<boolean>;
  close(): Promise<void>;
}

/**
 * Serves MCP on this process's stdin/stdout (the MCP stdio binding) through `HardenedStdioTransport`
 * (transport.ts): malformed or oversized messages are answered with their JSON-RPC error and the
 * server keeps serving; the SDK's `serveStdio` negotiates the protocol era and builds one server
 * instance for the connection.
 * @param onRefused told about every message refused (e.g. to print it on stderr)
 */
export function serveMcpStdio(options: McpServerOptions & { onRefused?: (why: string) => void }): McpStdioServer {
  const context = createMcpContext(options);
  const warmed = context.sparql.warm().then(
    () => true,
    () => false,
  );
  const transport = new HardenedStdioTransport(process.stdin, process.stdout, { maxMessageBytes: context.limits.maxMessageBytes, ...(options.onRefused ? { onRefused: options.onRefused } : {}) });
  const closed = transport.finished;
  const handle = serveStdio(() => buildMcpServer(context, options.tools), { transport });
  return {
    context,
    closed,
    warmed,
    close: async () => {
      await handle.close();
      await context.close();
    },
  };
}
