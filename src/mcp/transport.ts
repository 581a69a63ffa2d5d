/**
 * The JSON-RPC 2.0 envelope of `fkgqa mcp`, checked the same way on stdio and on Streamable HTTP
 * before the MCP SDK sees a message: every malformed message that a client could be
 * waiting on is answered with the JSON-RPC error the specification names, and the server keeps
 * serving.
 *
 * | input | answer |
 * |---|---|
 * | not JSON | -32700 Parse error, id null |
 * | a message over `maxMessageBytes` | -32600 Invalid Request (its size and the limit), the request's id when it can be read from the message's head, else null; on HTTP status 413 |
 * | JSON that is no JSON-RPC 2.0 object (`jsonrpc` missing, `method` not a string, an `id` that is not a string or number, …) | -32600 Invalid Request, the id when it is valid, else null |
 * | a request whose `params` is not an object (MCP's params are objects) | -32602 Invalid params, its id |
 * | a request whose `params` do not fit the MCP schema of its method (`_meta` not an object, `cursor` not a string, `name` of prompts/get not a string, …) | -32602 Invalid params naming the field, its id |
 * | a batch (an array) | one -32600 per request in it (MCP 2025-06-18 removed batching), as an array; an empty batch: one -32600 |
 * | a notification whose `params` is not an object | no answer (JSON-RPC never answers notifications), reported on stderr |
 *
 * The stdio transport (`HardenedStdioTransport`, given to the SDK's `serveStdio` as its wire) reads
 * newline-delimited messages without copying a long line repeatedly, drops an oversized line as it
 * streams in (the SDK's own buffer made the server close its input at 10 MiB, so that a 20 MB
 * line ended the process with code 13 and no output), and writes each message as one line.
 */
import { specTypeSchemas, type JSONRPCMessage, type Transport } from '@modelcontextprotocol/server';
import { counted } from '../common/strings.js';

/** JSON-RPC 2.0 error codes (JSON-RPC 2.0 specification, section 5.1). */
export const JSONRPC_ERRORS = { parseError: -32700, invalidRequest: -32600, methodNotFound: -32601, invalidParams: -32602, internalError: -32603 } as const;

/** A JSON-RPC error response. */
interface JsonRpcErrorReply {
  jsonrpc: '2.0';
  id: string | number | null;
  error: { code: number; message: string };
}

/** The outcome of `checkMessage`: a message for the SDK, or the reply to send instead (null: none) and why, for the log. */
type CheckedMessage = { ok: true; message: JSONRPCMessage } | { ok: false; reply: JsonRpcErrorReply | JsonRpcErrorReply[] | null; why: string };

const errorReply = (id: string | number | null, code: number, message: string): JsonRpcErrorReply => ({ jsonrpc: '2.0', id, error: { code, message } });
const validId = (id: unknown): id is string | number => typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id));
const isObject = (x: unknown): x is Record<string, unknown> => x !== null && typeof x === 'object' && !Array.isArray(x);

const BATCH = 'Invalid Request: JSON-RPC batches are not supported (MCP 2025-06-18 removed them): send each message on its own';

/**
 * The MCP request schema (SDK `specTypeSchemas`) of each method a client sends to this server. The
 * SDK validates params itself, but answers a mismatch of these with -32603 Internal error (a
 * `cursor` that is a number), or not at all (a `_meta` that is not an object: the message is
 * dropped and the client waits forever); checked here, it is -32602 Invalid params.
 */
const REQUEST_SCHEMAS: Record<string, keyof typeof specTypeSchemas> = {
  initialize: 'InitializeRequest',
  ping: 'PingRequest',
  'tools/list': 'ListToolsRequest',
  'tools/call': 'CallToolRequest',
  'prompts/list': 'ListPromptsRequest',
  'prompts/get': 'GetPromptRequest',
  'resources/list': 'ListResourcesRequest',
  'resources/templates/list': 'ListResourceTemplatesRequest',
  'resources/read': 'ReadResourceRequest',
  'resources/subscribe': 'SubscribeRequest',
  'resources/unsubscribe': 'UnsubscribeRequest',
  'completion/complete': 'CompleteRequest',
  'logging/setLevel': 'SetLevelRequest',
};

/** What is wrong with the params of a request (`params.cursor: expected string, …`), or null. */
function paramsProblem(method: string, params: unknown): string | null {
  const name = REQUEST_SCHEMAS[method] ?? 'Request';
  const schema = specTypeSchemas[name] as unknown as { '~standard': { validate(v: unknown): { issues?: readonly { path?: readonly unknown[]; message: string }[] } | Promise<unknown> } };
  const r = schema['~standard'].validate(params === undefined ? { method } : { method, params });
  if (r instanceof Promise || !r.issues?.length) return null;
  return r.issues
    .slice(0, 3)
    .map((i) => `${(i.path ?? []).map((k) => (typeof k === 'object' && k !== null && 'key' in k ? String((k as { key: unknown }).key) : String(k))).join('.') || method}: ${i.message}`)
    .join('; ');
}

/**
 * True when the params of a `tools/call` (from JSON.parse) are of the plain form every client sends
 * per call — only `name` (a string) and optionally `arguments` (an object) — which the SDK's
 * CallToolRequest schema always accepts (tests/mcp-transport.test.ts compares both on such params).
 * Any other form (a `_meta`, a `task`, a wrong type) goes through `paramsProblem`: this skips a zod
 * validation per tool call (a measurable share of a point query's CPU), it never changes an answer.
 */
function plainToolCall(method: string, params: unknown): boolean {
  if (method !== 'tools/call' || !isObject(params) || typeof params.name !== 'string') return false;
  for (const k in params) if (k !== 'name' && k !== 'arguments') return false;
  return !('arguments' in params) || isObject(params.arguments);
}

/** Checks one parsed JSON value as a single JSON-RPC 2.0 message (see the module comment). */
function checkValue(x: unknown): CheckedMessage {
  if (!isObject(x)) return { ok: false, reply: errorReply(null, JSONRPC_ERRORS.invalidRequest, 'Invalid Request: a JSON-RPC message is a JSON object'), why: 'not a JSON object' };
  const hasId = 'id' in x && x.id !== null && x.id !== undefined;
  if (hasId && !validId(x.id)) return { ok: false, reply: errorReply(null, JSONRPC_ERRORS.invalidRequest, 'Invalid Request: "id" must be a string or a number'), why: 'an id of the wrong type' };
  const id = hasId ? (x.id as string | number) : null;
  if (x.jsonrpc !== '2.0') return { ok: false, reply: errorReply(id, JSONRPC_ERRORS.invalidRequest, 'Invalid Request: "jsonrpc" must be "2.0"'), why: '"jsonrpc" is not "2.0"' };
  if ('method' in x) {
    if (typeof x.method !== 'string') return { ok: false, reply: errorReply(id, JSONRPC_ERRORS.invalidRequest, 'Invalid Request: "method" must be a string'), why: '"method" is not a string' };
    if ('params' in x && x.params !== undefined && !isObject(x.params)) {
      const what = Array.isArray(x.params) ? 'an array' : x.params === null ? 'null' : `a ${typeof x.params}`;
      if (!hasId) return { ok: false, reply: null, why: `the notification ${x.method} has params that are ${what}, not an object (no answer: it is a notification)` };
      return { ok: false, reply: errorReply(id, JSONRPC_ERRORS.invalidParams, `Invalid params: the params of ${x.method} must be an object, not ${what}`), why: `params of ${x.method} are ${what}` };
    }
    if (hasId) {
      const bad = plainToolCall(x.method, x.params) ? null : paramsProblem(x.method, x.params);
      if (bad) return { ok: false, reply: errorReply(id, JSONRPC_ERRORS.invalidParams, `Invalid params: ${bad}`), why: `params of ${x.method}: ${bad}` };
    }
    return { ok: true, message: x as unknown as JSONRPCMessage };
  }
  // A response to a request of the server (sampling, elicitation, …): an id and exactly one of result/error.
  if (hasId && 'result' in x !== 'error' in x && (!('error' in x) || isObject(x.error))) return { ok: true, message: x as unknown as JSONRPCMessage };
  return {
    ok: false,
    reply: errorReply(id, JSONRPC_ERRORS.invalidRequest, 'Invalid Request: neither a request ("method") nor a response ("id" with "result" or "error")'),
    why: 'neither a request nor a response',
  };
}

/**
 * Checks one JSON-RPC message text (a line on stdio, a POST body on HTTP): parses it and checks
 * its envelope (module comment). Does not validate the params of a method (the SDK does, with
 * -32602).
 */
export function checkMessage(text: string): CheckedMessage {
  let x: unknown;
  try {
    x = JSON.parse(text);
  } catch (e) {
    return { ok: false, reply: errorReply(null, JSONRPC_ERRORS.parseError, `Parse error: ${(e as Error).message}`), why: 'not JSON' };
  }
  if (!Array.isArray(x)) return checkValue(x);
  if (x.length === 0) return { ok: false, reply: errorReply(null, JSONRPC_ERRORS.invalidRequest, 'Invalid Request: an empty batch'), why: 'an empty batch' };
  const replies = x
    .map((m) =>
      isObject(m) && typeof m.method === 'string' && !('id' in m && m.id !== null && m.id !== undefined)
        ? null
        : errorReply(isObject(m) && validId(m.id) ? m.id : null, JSONRPC_ERRORS.invalidRequest, BATCH),
    )
    .filter((r): r is JsonRpcErrorReply => r !== null);
  return { ok: false, reply: replies.length ? replies : null, why: `a batch of ${counted(x.length, 'message')}` };
}

/**
 * The id of a message from its first bytes, when it comes before any `params` or `result` (the
 * order the MCP SDKs write: `{"jsonrpc":"2.0","id":…,"method":…,"params":…}`), for the reply to
 * an oversized message. Best effort: null when not found there.
 */
function idFromHead(head: string): string | number | null {
  const end = head.search(/"(?:params|result|error)"\s*:/);
  const m = /"id"\s*:\s*(-?\d+(?:\.\d+)?|"(?:[^"\\]|\\.)*")/.exec(end < 0 ? head : head.slice(0, end));
  if (!m) return null;
  try {
    const id = JSON.parse(m[1]) as string | number;
    return validId(id) ? id : null;
  } catch {
    return null;
  }
}

/** The reply to a message over the size limit. */
export function oversizedReply(bytes: number | null, limit: number, head: string): JsonRpcErrorReply {
  const size = bytes === null ? `is larger than the limit of ${limit} bytes` : `has ${bytes} bytes, more than the limit of ${limit}`;
  return errorReply(idFromHead(head), JSONRPC_ERRORS.invalidRequest, `Invalid Request: the message ${size}; it was dropped`);
}

/** Options of `HardenedStdioTransport`. */
interface StdioTransportOptions {
  /** Largest message, in bytes (default 4 MiB). */
  maxMessageBytes?: number;
  /** Told about every message refused (what and why), e.g. to print it on stderr. */
  onRefused?: (why: string) => void;
}

const NEWLINE = 0x0a;

/**
 * MCP's stdio binding (newline-delimited JSON-RPC on stdin/stdout) with the checks of
 * `checkMessage` and a size limit per message; an MCP SDK `Transport`, for `serveStdio`'s
 * `transport` option. When stdin ends it reads no more, but answers first every request it read
 * (a client may write its requests and close stdin at once, as `printf … | fkgqa mcp` does): it
 * closes once each has had its response written, or was cancelled (`notifications/cancelled`), and
 * `finished` then resolves. `close` closes at once (and stops reading stdin).
 */
export class HardenedStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private readonly max: number;
  private parts: Buffer[] = [];
  private size = 0;
  /** While an oversized line streams in: its size so far and its first bytes. */
  private dropping: { bytes: number; head: string } | null = null;
  private started = false;
  private closed = false;
  /** Stdin has ended: no more requests come. */
  private ended = false;
  /** Ids of the requests read and not yet answered. */
  private readonly pending = new Set<string | number>();
  private markFinished!: () => void;
  /** Resolves when the transport has closed (stdin ended and every request read was answered, or `close`). */
  readonly finished = new Promise<void>((resolve) => (this.markFinished = resolve));

  constructor(
    private readonly stdin: NodeJS.ReadableStream = process.stdin,
    private readonly stdout: NodeJS.WritableStream = process.stdout,
    private readonly options: StdioTransportOptions = {},
  ) {
    this.max = options.maxMessageBytes ?? 4 << 20;
  }

  private readonly onData = (chunk: Buffer | string) => {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    let from = 0;
    for (;;) {
      const nl = buf.indexOf(NEWLINE, from);
      const piece = nl < 0 ? buf.subarray(from) : buf.subarray(from, nl);
      this.add(piece);
      if (nl < 0) break;
      this.endLine();
      from = nl + 1;
    }
  };

  /** Adds bytes to the current line, switching to dropping it once it is over the limit. */
  private add(piece: Buffer): void {
    if (piece.length === 0) return;
    if (this.dropping) {
      this.dropping.bytes += piece.length;
      return;
    }
    if (this.size + piece.length > this.max) {
      const head = Buffer.concat([...this.parts, piece.subarray(0, 4096)])
        .subarray(0, 4096)
        .toString('utf8');
      this.dropping = { bytes: this.size + piece.length, head };
      this.parts = [];
      this.size = 0;
      return;
    }
    this.parts.push(piece);
    this.size += piece.length;
  }

  private endLine(): void {
    if (this.dropping) {
      const { bytes, head } = this.dropping;
      this.dropping = null;
      this.refuse(oversizedReply(bytes, this.max, head), `a message of ${bytes} bytes (limit ${this.max})`);
      return;
    }
    const line = (this.parts.length === 1 ? this.parts[0] : Buffer.concat(this.parts)).toString('utf8').replace(/\r$/, '');
    this.parts = [];
    this.size = 0;
    if (line.trim() === '') return;
    const c = checkMessage(line);
    if (c.ok) {
      const m = c.message as { id?: string | number | null; method?: string; params?: { requestId?: string | number } };
      if (typeof m.method === 'string' && m.id !== undefined && m.id !== null) this.pending.add(m.id);
      if (m.method === 'notifications/cancelled' && m.params?.requestId !== undefined) {
        this.pending.delete(m.params.requestId);
        queueMicrotask(() => this.closeWhenAnswered());
      }
      try {
        this.onmessage?.(c.message);
      } catch (e) {
        this.onerror?.(e as Error);
      }
      return;
    }
    this.refuse(c.reply, c.why);
  }

  private refuse(reply: JsonRpcErrorReply | JsonRpcErrorReply[] | null, why: string): void {
    this.options.onRefused?.(why);
    if (reply) void this.write(reply).catch((e: Error) => this.onerror?.(e));
  }

  /** Stdin ended: a last line without its newline is read too; the transport closes once every request read is answered. */
  private readonly onEnd = () => {
    if (this.ended || this.closed) return;
    this.ended = true;
    this.stopReading();
    if (this.dropping || this.size > 0) this.endLine();
    this.closeWhenAnswered();
  };

  private closeWhenAnswered(): void {
    if (this.ended && this.pending.size === 0) void this.close();
  }
  private readonly onStdinError = (e: Error) => this.onerror?.(e);

  async start(): Promise<void> {
    if (this.started) throw new Error('HardenedStdioTransport already started');
    this.started = true;
    this.stdin.on('data', this.onData);
    this.stdin.on('end', this.onEnd);
    this.stdin.on('close', this.onEnd);
    this.stdin.on('error', this.onStdinError);
  }

  /** Writes one line; resolves when it is handed to the stream (after `drain` when the stream is full). */
  private write(message: unknown): Promise<void> {
    if (this.closed) return Promise.reject(new Error('the stdio transport is closed'));
    const json = JSON.stringify(message) + '\n';
    return new Promise((resolve, reject) => {
      const ok = this.stdout.write(json, (e) => (e ? reject(e) : undefined));
      if (ok) resolve();
      else this.stdout.once('drain', () => resolve());
    });
  }

  async send(message: JSONRPCMessage): Promise<void> {
    await this.write(message);
    const m = message as { id?: string | number | null; result?: unknown; error?: unknown };
    if (m.id !== undefined && m.id !== null && ('result' in m || 'error' in m) && this.pending.delete(m.id)) this.closeWhenAnswered();
  }

  private stopReading(): void {
    this.stdin.off('data', this.onData);
    this.stdin.off('end', this.onEnd);
    this.stdin.off('close', this.onEnd);
    this.stdin.off('error', this.onStdinError);
    // Stops reading: an open stdin that is still read keeps Node's event loop alive after the close.
    this.stdin.pause();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stopReading();
    this.parts = [];
    this.pending.clear();
    this.onclose?.();
    this.markFinished();
  }
}
