/**
 * Tool error results of `fkgqa mcp` and their machine-readable class (the contract between the
 * MCP tools and `fkgqa eval`, see docs/mcp.md): every tool result that is an error carries, outside
 * the text the model sees, `_meta["fkgqa/error"] = { class, infrastructure, endpoint? }`.
 * `infrastructure` is true when the cause is an endpoint or the federation engine — down, refusing
 * connections, answering 5xx for a reason other than the query's own time limit, a faulted worker —
 * and false for the agent's own mistakes (syntax, unknown endpoint, no SERVICE, too long, the
 * query's time limit). eval classifies runs by it, not by parsing messages.
 */
import net from 'node:net';
import type { McpServer } from '@modelcontextprotocol/server';

/** The key of the error class in a tool result's `_meta`. */
export const ERROR_META_KEY = 'fkgqa/error';

/**
 * `_meta["fkgqa/error"]` of a tool error result; the run record's tool steps hold it too, given by
 * the harness (`class` `mcp-transport`) for a call that did not reach the server.
 */
export interface ToolErrorMeta {
  /** The error class (the call log's `errorClass`: `syntax`, `timeout`, `endpoint`, …). */
  class: string;
  /** The cause is an endpoint or the engine, not the agent (module comment). */
  infrastructure: boolean;
  /** The endpoint URL concerned, when one is. */
  endpoint?: string;
}

/** A tool result as the MCP SDK takes it. */
interface TextToolResult {
  [key: string]: unknown;
  content: { type: 'text'; text: string }[];
  isError?: boolean;
  _meta?: Record<string, unknown>;
}

/** A text tool result; an error one when `error` is given (with its `_meta`). */
export function textResult(text: string, error?: ToolErrorMeta): TextToolResult {
  if (!error) return { content: [{ type: 'text', text }] };
  return { content: [{ type: 'text', text }], isError: true, _meta: { [ERROR_META_KEY]: error } };
}

/**
 * Makes the SDK's own tool error results carry `_meta["fkgqa/error"]` too: arguments that fail the
 * tool's input schema (class `invalid-arguments`, not infrastructure) and a handler that threw
 * (class `internal`: a fault of the server, not of the agent, so infrastructure). The SDK builds
 * both with its `createToolError(message)`, replaced here on the instance.
 */
export function installToolErrorMeta(server: McpServer): void {
  const s = server as unknown as { createToolError?: (message: string) => TextToolResult };
  if (typeof s.createToolError !== 'function') throw new Error('the MCP SDK has no createToolError: update src/mcp/tool-error.ts for this SDK version');
  s.createToolError = (message: string) =>
    /^(Input validation error|Invalid arguments for tool)/.test(message)
      ? textResult(`Error (invalid-arguments): ${message}`, { class: 'invalid-arguments', infrastructure: false })
      : textResult(`Error (internal): the tool failed: ${message}`, { class: 'internal', infrastructure: true });
}

/**
 * Whether an error message names a connection failure (refused, reset, unreachable host, a
 * `fetch` that failed before any answer), as opposed to an HTTP status or a fault of an engine.
 */
export function connectionFailure(message: string): boolean {
  return CONNECTION.test(message);
}

const CONNECTION = /ECONNREFUSED|ECONNRESET|EHOSTUNREACH|ENETUNREACH|ENOTFOUND|EAI_AGAIN|fetch failed|socket hang up|other side closed|cannot reach/i;

/**
 * The first of `urls` (in their order) whose host and port refuse a TCP connection or cannot be
 * resolved or reached: for a federation engine's "fetch failed", which names no endpoint. Opens
 * one TCP connection per distinct host:port, in parallel, and closes it at once (no HTTP request
 * is sent). A connection that neither opens nor fails within `timeoutMs` counts as not known to
 * be down.
 * @param timeoutMs per connection, in ms
 * @returns the endpoint URL, or undefined when every one accepted a connection (or was undecided)
 */
export async function firstUnreachable(urls: readonly string[], timeoutMs = 5000): Promise<string | undefined> {
  const probes = new Map<string, Promise<boolean>>();
  const down = (u: string): Promise<boolean> => {
    let host: string;
    let port: number;
    try {
      const x = new URL(u);
      host = x.hostname.replace(/^\[|\]$/g, '');
      port = Number(x.port || (x.protocol === 'https:' ? 443 : 80));
    } catch {
      return Promise.resolve(false);
    }
    const key = `${host}:${port}`;
    if (!probes.has(key)) {
      probes.set(
        key,
        new Promise<boolean>((resolve) => {
          const socket = net.connect({ host, port });
          const done = (isDown: boolean) => {
            socket.destroy();
            resolve(isDown);
          };
          socket.setTimeout(timeoutMs, () => done(false));
          socket.once('connect', () => done(false));
          socket.once('error', () => done(true));
        }),
      );
    }
    return probes.get(key)!;
  };
  const results = await Promise.all(urls.map(down));
  return urls.find((_, i) => results[i]);
}

/** Connection failures in an error message (Node, undici, Comunica, the engine's thread). */
const UNREACHABLE =
  /ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|ENOTFOUND|EAI_AGAIN|fetch failed|socket hang up|other side closed|cannot reach|engine thread crashed|engine is closed|failed to start/i;

/**
 * Whether an HTTP status from an endpoint is the endpoint's fault: 5xx (the query's own time
 * limit is reported as a timeout before this), 404 (no endpoint there: a serve that is gone or
 * serves something else), 408 and 429.
 */
export function infrastructureStatus(status: number): boolean {
  return status >= 500 || status === 404 || status === 408 || status === 429;
}

/**
 * Whether an error message of an endpoint or the federation engine names an infrastructure
 * failure: a connection failure, or an HTTP status for which `infrastructureStatus` holds
 * (Comunica writes "HTTP status 500").
 */
export function infrastructureMessage(message: string): boolean {
  if (UNREACHABLE.test(message)) return true;
  const m = /HTTP(?: status)? (\d{3})\b/.exec(message);
  return m ? infrastructureStatus(Number(m[1])) : false;
}

/** The first of `urls` that occurs in `text` (the endpoint an error message names), or undefined. */
export function endpointNamed(text: string, urls: readonly string[]): string | undefined {
  let best: { url: string; at: number } | undefined;
  for (const u of urls) {
    const at = text.indexOf(u);
    if (at >= 0 && (!best || at < best.at || (at === best.at && u.length > best.url.length))) best = { url: u, at };
  }
  return best?.url;
}
