/**
 * The HTTP primitives of the federation layer: `fetch` that never leaves the registry, and a POST
 * with the same rules on node:http. Every request of the bounded client (src/federation/client.ts),
 * of the federation engines (the Comunica thread imports this module; it imports only Node's own
 * modules so that a worker thread can load it) and of the endpoint probe goes through `fetchWithin`,
 * except the bounded client's query to one endpoint (a lone SERVICE: the most common tool call),
 * which goes through `postWithin`:
 *
 * - the first URL must pass the caller's check (`allowed`), else nothing is sent;
 * - redirects are never followed by `fetch` itself (`redirect: 'manual'`): a query (POST) is never
 *   re-sent to a redirect target; a document (GET/HEAD) follows a redirect only when the target
 *   passes the same check, hop by hop (at most `maxHops`);
 * - every request actually sent is counted per endpoint (the URL without query string and fragment).
 *
 * A redirect that is not followed is an error (`RedirectRefused`) naming both URLs, never a
 * silently empty answer.
 */

import http from 'node:http';
import https from 'node:https';
import { urlToHttpOptions } from 'node:url';
import { pipeline, Readable } from 'node:stream';
import zlib from 'node:zlib';

/** The endpoint a request goes to: its URL without query string and fragment (how requests are counted). */
export const endpointOf = (url: string): string => url.replace(/[?#].*$/, '');

/** Compares endpoint URLs as the registry does: exactly, except for trailing slashes. */
export const sameEndpoint = (a: string, b: string): boolean => a.replace(/\/+$/, '') === b.replace(/\/+$/, '');

/** A request refused before it was sent: its URL is outside the registry. */
export class RequestRefused extends Error {
  constructor(readonly url: string) {
    super(`refused to contact ${url}: not a registered endpoint`);
    this.name = 'RequestRefused';
  }
}

/** A URL for a message: its query string (a whole SPARQL query, percent-encoded) shown as `?…`. */
const shown = (url: string): string => (/[?#]/.test(url) ? `${endpointOf(url)}?…` : url);

/** A redirect answered by an endpoint and not followed (see the module comment). */
export class RedirectRefused extends Error {
  constructor(
    /** The URL that answered with the redirect. */
    readonly from: string,
    /** The redirect target (`Location`, resolved), or '' when the answer had none. */
    readonly to: string,
    /** The HTTP status (301, 302, 303, 307, 308). */
    readonly status: number,
    /** Whether the target passes the registry's check. */
    readonly targetAllowed: boolean,
  ) {
    super(
      `${shown(from)} answered HTTP ${status} with a redirect to ${to ? shown(to) : '(no Location)'}: not followed, ` +
        (targetAllowed ? 'a query goes only to the endpoint named in its SERVICE clause' : `${to ? shown(to) : 'the target'} is not a registered endpoint`) +
        '; nothing was sent there',
    );
    this.name = 'RedirectRefused';
  }
}

/**
 * An endpoint's answer that ended before it was complete: the connection closed (or was reset)
 * after the status line, before the end of the body (fewer bytes than its `Content-Length`, or a
 * chunked body without its last chunk). Thrown by `postWithin`; never an answer with fewer rows.
 */
export class AnswerCut extends Error {
  constructor(
    /** The endpoint (URL without query string). */
    readonly endpoint: string,
    /** The HTTP status it answered. */
    readonly status: number,
    /** Bytes of the body received before the connection closed. */
    readonly bytes: number,
    cause?: Error,
  ) {
    super(
      `${endpoint} closed the connection before the answer was complete (HTTP ${status}, ${bytes} bytes received${cause?.message && !/^(aborted|terminated)$/.test(cause.message) ? `: ${cause.message}` : ''})`,
      cause ? { cause } : undefined,
    );
    this.name = 'AnswerCut';
  }
}

/** Words for the network failures of undici and Node, by error code. */
const NETWORK_WORDS: Record<string, string> = {
  ECONNREFUSED: 'refused the connection: nothing listens there',
  ECONNRESET: 'reset the connection',
  EPIPE: 'closed the connection while the query was being sent',
  UND_ERR_SOCKET: 'closed the connection',
  UND_ERR_CLOSED: 'closed the connection',
  ENOTFOUND: 'has a host name that does not resolve',
  EAI_AGAIN: 'has a host name that could not be resolved (DNS failed)',
  EHOSTUNREACH: 'is on a host that cannot be reached',
  ENETUNREACH: 'is on a network that cannot be reached',
  ETIMEDOUT: 'did not accept the connection in time',
  UND_ERR_CONNECT_TIMEOUT: 'did not accept the connection in time',
  UND_ERR_HEADERS_TIMEOUT: 'sent no answer headers in time',
  UND_ERR_BODY_TIMEOUT: 'stopped sending its answer',
  HPE_INVALID_CONSTANT: 'answered something that is not HTTP',
  HPE_INVALID_STATUS: 'answered something that is not HTTP',
  HPE_INVALID_HEADER_TOKEN: 'answered malformed HTTP headers',
};

/**
 * What a network failure of `fetch` or `postWithin` means, in words, for a message that names the
 * endpoint first ("<endpoint> closed the connection before answering"): raw codes such as
 * `UND_ERR_SOCKET` are translated (`NETWORK_WORDS`); the code follows in parentheses.
 * @param err the error thrown (`TypeError('fetch failed', { cause })`, `terminated`, an AnswerCut, …)
 * @param answered whether the endpoint had sent its status line (the body was being read)
 */
export function networkWords(err: Error, answered = false): string {
  if (err instanceof AnswerCut) return err.message.slice(err.endpoint.length + 1);
  const cause = (err.cause ?? undefined) as (Error & { code?: string }) | undefined;
  const code = cause?.code ?? (err as Error & { code?: string }).code;
  const words = code ? NETWORK_WORDS[code] : undefined;
  if (answered || err.message === 'terminated') return `closed the connection before the answer was complete${code ? ` (${code})` : ''}`;
  // node:http's "socket hang up": the connection closed before any answer.
  if (cause?.message === 'socket hang up' || err.message === 'socket hang up') return `closed the connection before answering${code ? ` (${code})` : ''}`;
  if (words === 'closed the connection') return `closed the connection before answering${code ? ` (${code})` : ''}`;
  if (words) return `${words} (${code})`;
  const detail = cause?.message && cause.message !== err.message ? `${err.message}: ${cause.message}` : err.message;
  return `could not be reached (${detail})`;
}

/**
 * An endpoint's error answer as quoted in a message: an HTML page (or a 5xx answer) gives its
 * first non-empty line of text, tags and entities stripped, at most 200 characters (an error page
 * quoted whole buried the point); another 4xx answer — the endpoint's explanation of why it refused
 * the query, e.g. a syntax error, which the agent needs — up to 1,000 characters.
 * @param status the HTTP status
 */
export function errorBody(body: string, contentType: string, status: number): string {
  const html = /html|xml/.test(contentType) || /^\s*</.test(body);
  if (!html && status < 500) return body.trim().slice(0, 1000);
  const text = html
    ? body
        .replace(/<(script|style|head)\b[\s\S]*?<\/\1\s*>/gi, ' ')
        .replace(/<[^>]*>/g, '\n')
        .replace(/&nbsp;/g, ' ')
        .replace(/&lt;/g, '<')
        .replace(/&gt;/g, '>')
        .replace(/&quot;/g, '"')
        .replace(/&amp;/g, '&')
    : body;
  const first =
    text
      .split(/\r?\n/)
      .map((l) => l.replace(/\s+/g, ' ').trim())
      .find((l) => l.length > 0) ?? '';
  return first.length > 200 ? `${first.slice(0, 199)}…` : first;
}

/** How `fetchWithin` bounds one request. */
export interface FetchBounds {
  /** The `fetch` that sends each request (default Node's own; the engines pass `nodeFetch`). */
  via?: typeof fetch;
  /** Whether a URL (the first one and every redirect target) may be contacted. */
  allowed(url: string): boolean;
  /** Called once per request sent, with its endpoint (`endpointOf`). */
  count?(endpoint: string): void;
  /** Follow redirects whose target is allowed (GET and HEAD only; default false: every redirect is refused). */
  followRedirects?: boolean;
  /** Most redirects followed (default 5). */
  maxHops?: number;
}

const REDIRECT = new Set([301, 302, 303, 307, 308]);

/**
 * `fetch` within the registry (module comment).
 * @param input a URL, or a `Request` (as federation engines pass it)
 * @returns the response of the last request sent (never a 3xx)
 * @throws RequestRefused before sending to a URL that is not allowed; RedirectRefused for a redirect
 *   not followed; whatever `fetch` throws (network errors, aborts)
 */
export async function fetchWithin(input: string | URL | Request, init: RequestInit | undefined, bounds: FetchBounds): Promise<Response> {
  let url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
  const method = (init?.method ?? (typeof input === 'object' && 'method' in input ? input.method : 'GET')).toUpperCase();
  const maxHops = bounds.maxHops ?? 5;
  let next: string | URL | Request = input;
  for (let hop = 0; ; hop++) {
    if (!bounds.allowed(url)) throw new RequestRefused(endpointOf(url));
    bounds.count?.(endpointOf(url));
    const res = await (bounds.via ?? fetch)(next, { ...init, redirect: 'manual' });
    if (!REDIRECT.has(res.status)) return res;
    const location = res.headers.get('location');
    let to: string;
    try {
      to = location ? new URL(location, url).href : '';
    } catch {
      to = location ?? '';
    }
    await res.body?.cancel().catch(() => {});
    const ok = to !== '' && bounds.allowed(to);
    if (!bounds.followRedirects || (method !== 'GET' && method !== 'HEAD') || !ok || hop >= maxHops) throw new RedirectRefused(url, to, res.status, ok);
    url = to;
    next = to;
  }
}

/** Reads a response body up to `maxBytes` bytes (the rest is not read). @returns the text, or undefined when it is larger */
export async function boundedText(res: Response, maxBytes: number): Promise<string | undefined> {
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel();
      return undefined;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The keep-alive agents of `postWithin` (one per scheme, for the process): connections to an endpoint are reused across calls. */
const AGENTS = { 'http:': new http.Agent({ keepAlive: true }), 'https:': new https.Agent({ keepAlive: true }) };

/**
 * The error a request aborted by its signal fails with: Node's own (`AbortError`, code `ABORT_ERR`,
 * the signal's reason as its cause), as http.request's `signal` option gives it.
 */
function abortError(signal: AbortSignal): Error {
  return Object.assign(new Error('The operation was aborted', { cause: signal.reason }), { name: 'AbortError', code: 'ABORT_ERR' });
}

/** A URL's request options (`urlToHttpOptions`), its protocol and port, parsed once per URL string (`requestTarget`). */
interface RequestTarget {
  protocol: string;
  port: string;
  options: http.RequestOptions;
}
const TARGETS = new Map<string, RequestTarget>();
/** The most URLs whose options `requestTarget` keeps (the registry's endpoints; the oldest is dropped beyond). */
const MAX_TARGETS = 4096;

/**
 * The request options of a URL, parsed once (parsing the same endpoint URL on every call costs CPU on the point query's path).
 * @throws TypeError for a string that is not a URL (as `new URL`)
 */
function requestTarget(url: string): RequestTarget {
  let t = TARGETS.get(url);
  if (t) return t;
  const u = new URL(url);
  t = { protocol: u.protocol, port: u.port, options: urlToHttpOptions(u) };
  if (TARGETS.size >= MAX_TARGETS) TARGETS.delete(TARGETS.keys().next().value!);
  TARGETS.set(url, t);
  return t;
}

/** An answer of `postWithin`. */
export interface PostAnswer {
  /** HTTP status (never a 3xx). */
  status: number;
  statusText: string;
  /** A response header by lower-case name (several values joined with ", "), or null. */
  header(name: string): string | null;
  /** The body as UTF-8, or undefined when it is larger than `maxBytes` (the rest was not read). */
  text: string | undefined;
  /**
   * Set when the body has a `Content-Encoding` that does not decode (a cut or corrupt gzip stream),
   * decodes to more than `maxBytes`, or is not one fkgqa decodes (`DECODED_CODINGS`), in words after
   * the endpoint's URL (e.g. "sent a gzip-encoded answer that does not decode (unexpected end of
   * file)"); `text` is '' then. A gzip- or deflate-encoded answer (none is asked for) is decoded.
   */
  encodingProblem?: string;
}

/**
 * The content codings fkgqa decodes, on every route (the direct route, Comunica's and Jena's HTTP;
 * docs/federation.md, "Content codings"): gzip (and its alias x-gzip) and deflate (RFC 9110 §8.4.1),
 * alone or applied one after another. fkgqa asks for none (`Accept-Encoding: identity`); an endpoint
 * that sends one anyway is read when its answer decodes completely and to at most the answer limit.
 * Any other coding (br, zstd, compress, …) is the endpoint's fault: Jena's JVM has no brotli decoder,
 * and one rule for all routes keeps a verdict independent of the engine.
 */
export const DECODED_CODINGS: readonly string[] = ['gzip', 'x-gzip', 'deflate'];

/** The codings of a `Content-Encoding` header in the order they were applied (lower case; `identity` and empty items dropped). */
export function codingsOf(encoding: string | null | undefined): string[] {
  return (encoding ?? '')
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== '' && c !== 'identity');
}

/** What is wrong with an answer's `Content-Encoding` in words (after the endpoint's URL), or undefined when every coding is one fkgqa decodes (`DECODED_CODINGS`). */
export function codingProblem(codings: string[]): string | undefined {
  const unknown = codings.find((c) => !DECODED_CODINGS.includes(c));
  return unknown === undefined ? undefined : `sent an answer with Content-Encoding ${codings.join(', ')}, which is not decoded (${unknown} is none of ${DECODED_CODINGS.join(', ')})`;
}

/** Words for an encoded answer that decodes to more than the answer limit (after the endpoint's URL): a compression bomb is the endpoint's fault, not a large answer to the query. */
export const decodedTooLarge = (codings: string[], sentBytes: number, maxBytes: number): string =>
  `sent a ${codings.join(', ')}-encoded answer of ${sentBytes} bytes that decodes to more than ${maxBytes} bytes (the answer limit): not read`;

/** The decoders of `DECODED_CODINGS`. */
const DECODERS: Record<string, (b: Buffer, o: zlib.ZlibOptions) => Buffer> = {
  gzip: zlib.gunzipSync,
  'x-gzip': zlib.gunzipSync,
  deflate: zlib.inflateSync,
};

/**
 * Decodes a body by its `Content-Encoding` (several codings applied in order are undone in reverse)
 * under the rule of `DECODED_CODINGS`.
 * @param maxBytes the answer limit: a body that decodes to more is the endpoint's fault (`decodedTooLarge`)
 * @returns the decoded body, or the problem in words (an unknown coding, a body that does not decode or decodes to more than `maxBytes`)
 */
export function decodeBody(raw: Buffer, encoding: string | null, maxBytes: number): { body: Buffer } | { problem: string } {
  const codings = codingsOf(encoding);
  const unknown = codingProblem(codings);
  if (unknown) return { problem: unknown };
  let body = raw;
  for (const c of [...codings].reverse()) {
    try {
      body = DECODERS[c](body, { maxOutputLength: maxBytes });
    } catch (e) {
      if (e instanceof RangeError || (e as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') return { problem: decodedTooLarge(codings, raw.length, maxBytes) };
      return { problem: `sent a ${c}-encoded answer that does not decode (${((e as Error).message || String(e)).split('\n')[0]}; ${raw.length} bytes received)` };
    }
  }
  return { body };
}

/**
 * The ports `fetch` refuses to connect to ("bad ports" of the Fetch standard, §2.9 port blocking; the
 * list of Node 20's undici): `postWithin` refuses them too, so that an endpoint is reachable, or not,
 * alike on the direct route and through a federation engine (which uses `fetch`).
 */
const BAD_PORTS = new Set([
  1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102, 103, 104, 109, 110, 111, 113, 115, 117, 119, 123, 135, 137, 139, 143, 161, 179, 389, 427, 465, 512,
  513, 514, 515, 526, 530, 531, 532, 540, 548, 554, 556, 563, 587, 601, 636, 989, 990, 993, 995, 1719, 1720, 1723, 2049, 3659, 4045, 4190, 5060, 5061, 6000, 6566, 6665, 6666, 6667, 6668, 6669, 6679,
  6697, 10080,
]);

/** A network error as `fetch` words it (`fetch failed`, the cause attached), so that callers' messages and their classification (tool-error.ts) are the same on both primitives. */
const fetchFailed = (cause: Error): TypeError => new TypeError('fetch failed', { cause });

/**
 * POSTs `body` to `url` with node:http(s) and a keep-alive agent, under the rules of `fetchWithin`
 * (module comment): the URL must pass `bounds.allowed` (else `RequestRefused`, nothing sent), the
 * request is counted, and a redirect is never followed (`RedirectRefused`). Reads at most
 * `maxBytes` bytes of the answer, and refuses the ports `fetch` refuses (`BAD_PORTS`, as fetch
 * words it: `fetch failed`, cause `bad port`). `fetch` costs 0.7–0.9 ms more CPU and 1.3–1.5 ms more time per
 * request than node:http (undici's web streams; docs/mcp.md), the larger part of a lone-SERVICE tool
 * call's own cost.
 * A request that fails on a reused connection before any answer (the endpoint closed the idle
 * connection as it was reused: ECONNRESET, EPIPE) is sent once more on a new one, and counted once
 * (the endpoint did not answer it).
 * @param headers request headers (content-length is set here)
 * @param signal aborts the request (and the reading of its answer): the promise rejects with an AbortError
 * @throws RequestRefused, RedirectRefused; AnswerCut when the connection closed after the status line
 *   and before the end of the body; `TypeError('fetch failed', { cause })` for a network error
 *   before any answer; the abort reason
 */
export async function postWithin(
  url: string,
  body: string,
  headers: Record<string, string>,
  signal: AbortSignal,
  maxBytes: number,
  bounds: Pick<FetchBounds, 'allowed' | 'count'>,
): Promise<PostAnswer> {
  if (!bounds.allowed(url)) throw new RequestRefused(endpointOf(url));
  const target = requestTarget(url);
  const mod = target.protocol === 'https:' ? https : target.protocol === 'http:' ? http : undefined;
  if (!mod) throw fetchFailed(new Error(`unsupported protocol ${target.protocol}`));
  bounds.count?.(endpointOf(url));
  if (target.port !== '' && BAD_PORTS.has(Number(target.port))) throw fetchFailed(new Error('bad port'));
  const payload = Buffer.from(body, 'utf8');
  const once = () =>
    new Promise<PostAnswer>((resolve_, reject_) => {
      if (signal.aborted) return reject_(abortError(signal));
      let answered = false;
      // The abort is wired here rather than through request's `signal` option (Node's addAbortSignal
      // and its end-of-stream watcher cost about as much CPU as the rest of the request).
      const onAbort = () => req.destroy(abortError(signal));
      const settled = () => signal.removeEventListener('abort', onAbort);
      const resolve = (a: PostAnswer) => (settled(), resolve_(a));
      const reject = (e: unknown) => (settled(), reject_(e));
      const req = mod.request({ ...target.options, method: 'POST', agent: AGENTS[target.protocol as 'http:' | 'https:'], headers: { ...headers, 'content-length': String(payload.length) } }, (res) => {
        answered = true;
        const status = res.statusCode ?? 0;
        const header = (name: string) => {
          const v = res.headers[name];
          return v === undefined ? null : Array.isArray(v) ? v.join(', ') : v;
        };
        if (REDIRECT.has(status)) {
          const location = header('location');
          let to: string;
          try {
            to = location ? new URL(location, url).href : '';
          } catch {
            to = location ?? '';
          }
          res.destroy();
          reject(new RedirectRefused(url, to, status, to !== '' && bounds.allowed(to)));
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        let done = false;
        const finish = (text: string | undefined) => {
          done = true;
          resolve({ status, statusText: res.statusMessage ?? '', header, text });
        };
        res.on('data', (c: Buffer) => {
          if (done) return;
          size += c.length;
          if (size > maxBytes) {
            finish(undefined);
            res.destroy();
            return;
          }
          chunks.push(c);
        });
        res.on('end', () => {
          if (done) return;
          const encoding = header('content-encoding');
          if (!encoding) return finish(Buffer.concat(chunks).toString('utf8'));
          const decoded = decodeBody(Buffer.concat(chunks), encoding, maxBytes);
          if ('problem' in decoded) {
            done = true;
            resolve({ status, statusText: res.statusMessage ?? '', header, text: '', encodingProblem: decoded.problem });
            return;
          }
          finish(decoded.body.toString('utf8'));
        });
        // After the status line, a connection that ends early is an incomplete answer, not an unreachable endpoint.
        res.on('error', (e) => done || ((done = true), reject(signal.aborted ? e : new AnswerCut(endpointOf(url), status, size, e))));
        res.on('close', () => done || ((done = true), reject(signal.aborted ? (signal.reason ?? new Error('aborted')) : new AnswerCut(endpointOf(url), status, size))));
      });
      req.on('error', (e: NodeJS.ErrnoException) => {
        if (answered) return;
        if (signal.aborted) return reject(e);
        if (req.reusedSocket && (e.code === 'ECONNRESET' || e.code === 'EPIPE')) return reject(Object.assign(e, { retry: true }));
        reject(fetchFailed(e));
      });
      signal.addEventListener('abort', onAbort, { once: true });
      req.end(payload);
    });
  return onceMoreIfStale(once);
}

/**
 * An answer's body that is its endpoint's fault once read: a content coding that does not decode
 * (a cut or corrupt gzip stream), that fkgqa does not decode, or that decodes to more than the
 * answer limit. `words` follow the endpoint's URL in a message (as `PostAnswer.encodingProblem`).
 */
export class AnswerUndecodable extends Error {
  constructor(
    readonly words: string,
    cause?: Error,
  ) {
    super(words, cause ? { cause } : undefined);
    this.name = 'AnswerUndecodable';
  }
}

/** A streaming decoder of one of `DECODED_CODINGS` (strict: a stream without its end or trailer fails, as `decodeBody`). */
const streamDecoder = (coding: string): zlib.Gunzip | zlib.Inflate => (coding === 'deflate' ? zlib.createInflate() : zlib.createGunzip());

/** Statuses whose answer has no body (Fetch standard "null body status"). */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

/**
 * `fetch` on node:http for the federation engines' HTTP (the Comunica thread passes it to
 * `fetchWithin`), so that an answer's content coding follows the rule of `DECODED_CODINGS` as on the
 * direct route: Node's `fetch` (undici) decodes br and zstd-free codings leniently — a gzip stream
 * without its end or trailer read as complete (a row kept from a cut answer), an unknown coding passed
 * through as if plain. Here the body decodes strictly: an unknown coding, a stream that does not
 * decode, or more than `maxDecodedBytes` decoded errors the body with an `AnswerUndecodable`.
 * Asks for no coding (`Accept-Encoding: identity`), follows no redirect (a 3xx is returned as is, for
 * `fetchWithin`), refuses `BAD_PORTS` as `fetch` does, and resends once a request that failed on a
 * reused keep-alive connection before any answer (as `postWithin`).
 * @param maxDecodedBytes the answer limit for an encoded body, decoded, in bytes
 * @returns a `fetch`: network failures reject with `TypeError('fetch failed', { cause })`, an abort with an AbortError
 */
export function nodeFetch(maxDecodedBytes: number): typeof fetch {
  return async (input, init) => {
    const request = input instanceof Request ? input : undefined;
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const method = (init?.method ?? request?.method ?? 'GET').toUpperCase();
    const signal = init?.signal ?? request?.signal ?? undefined;
    const headers: Record<string, string> = {};
    new Headers(init?.headers ?? request?.headers).forEach((v, k) => (headers[k] = v));
    let payload: Buffer | undefined;
    const rawBody = init?.body ?? (request?.body ? await request.arrayBuffer() : undefined);
    if (rawBody !== undefined && rawBody !== null) {
      if (typeof rawBody === 'string') payload = Buffer.from(rawBody, 'utf8');
      else if (rawBody instanceof URLSearchParams) {
        payload = Buffer.from(rawBody.toString(), 'utf8');
        headers['content-type'] ??= 'application/x-www-form-urlencoded;charset=UTF-8';
      } else payload = Buffer.from(await new Response(rawBody as BodyInit).arrayBuffer());
    }
    headers['accept-encoding'] = 'identity';
    if (payload) headers['content-length'] = String(payload.length);
    let target: RequestTarget;
    try {
      target = requestTarget(url);
    } catch (e) {
      throw fetchFailed(e as Error);
    }
    const mod = target.protocol === 'https:' ? https : target.protocol === 'http:' ? http : undefined;
    if (!mod) throw fetchFailed(new Error(`unsupported protocol ${target.protocol}`));
    if (target.port !== '' && BAD_PORTS.has(Number(target.port))) throw fetchFailed(new Error('bad port'));
    const once = () =>
      new Promise<Response>((resolve, reject) => {
        if (signal?.aborted) return reject(abortError(signal));
        let answered = false;
        const onAbort = () => req.destroy(abortError(signal!));
        signal?.addEventListener('abort', onAbort, { once: true });
        const req = mod.request({ ...target.options, method, agent: AGENTS[target.protocol as 'http:' | 'https:'], headers }, (res) => {
          answered = true;
          const status = res.statusCode ?? 0;
          const h = new Headers();
          for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) {
            try {
              h.append(res.rawHeaders[i], res.rawHeaders[i + 1]);
            } catch {
              /* a header value fetch cannot hold: dropped, as undici drops it */
            }
          }
          const respond = (body: ReadableStream<Uint8Array> | null) => {
            try {
              const r = new Response(body, { status, statusText: res.statusMessage ?? '', headers: h });
              Object.defineProperty(r, 'url', { value: url });
              resolve(r);
            } catch (e) {
              res.destroy();
              reject(fetchFailed(e as Error));
            }
          };
          if (method === 'HEAD' || NULL_BODY.has(status)) {
            res.resume();
            res.once('end', () => signal?.removeEventListener('abort', onAbort));
            return respond(null);
          }
          const codings = codingsOf(h.get('content-encoding'));
          let raw = 0;
          res.on('data', (c: Buffer) => (raw += c.length));
          const problem = codingProblem(codings);
          const decoders = problem ? [] : [...codings].reverse().map(streamDecoder);
          let source: Readable = res;
          let decodeError: { e: Error; coding: string } | undefined;
          if (decoders.length > 0) {
            decoders.forEach((d, i) => d.once('error', (e) => (decodeError ??= { e, coding: codings[codings.length - 1 - i] })));
            source = pipeline([res, ...decoders] as unknown as [NodeJS.ReadableStream, ...NodeJS.ReadWriteStream[]], () => {}) as unknown as typeof source;
          }
          // Node's own bridge to a web stream (backpressure included); the count and the errors' words are added here.
          const reader = (Readable.toWeb(source as Readable) as ReadableStream<Uint8Array>).getReader();
          let decoded = 0;
          const done = () => signal?.removeEventListener('abort', onAbort);
          const body = new ReadableStream<Uint8Array>({
            async pull(controller) {
              const fail = (e: Error) => {
                done();
                controller.error(e);
                res.destroy();
              };
              if (problem) return fail(new AnswerUndecodable(problem));
              let r: ReadableStreamReadResult<Uint8Array>;
              try {
                r = await reader.read();
              } catch (e) {
                const z = signal?.aborted ? undefined : decodeError;
                // After the status line, a connection closed before the end of the body is an incomplete answer (undici: "terminated").
                return fail(
                  z
                    ? new AnswerUndecodable(`sent a ${z.coding}-encoded answer that does not decode (${(z.e.message || String(z.e)).split('\n')[0]}; ${raw} bytes received)`, z.e)
                    : new TypeError('terminated', { cause: e as Error }),
                );
              }
              if (r.done) {
                done();
                return controller.close();
              }
              decoded += r.value.byteLength;
              if (decoders.length > 0 && decoded > maxDecodedBytes) {
                void reader.cancel().catch(() => undefined);
                return fail(new AnswerUndecodable(decodedTooLarge(codings, raw, maxDecodedBytes)));
              }
              controller.enqueue(r.value);
            },
            cancel(reason) {
              done();
              res.destroy();
              return reader.cancel(reason).catch(() => undefined);
            },
          });
          respond(body);
        });
        req.on('error', (e: NodeJS.ErrnoException) => {
          if (answered) return;
          signal?.removeEventListener('abort', onAbort);
          if (signal?.aborted) return reject(e);
          if (req.reusedSocket && (e.code === 'ECONNRESET' || e.code === 'EPIPE')) return reject(Object.assign(e, { retry: true }));
          reject(fetchFailed(e));
        });
        req.end(payload);
      });
    return onceMoreIfStale(once);
  };
}

/**
 * Runs a request, and once more when it failed on a reused keep-alive socket the server had closed
 * (the request's error carries `retry`: ECONNRESET or EPIPE on `req.reusedSocket`); a second such
 * failure is `fetchFailed`. Used by `postWithin` and `nodeFetch`.
 */
async function onceMoreIfStale<T>(once: () => Promise<T>): Promise<T> {
  try {
    return await once();
  } catch (e) {
    if ((e as { retry?: boolean }).retry) return once().catch((e2: Error) => Promise.reject((e2 as { retry?: boolean }).retry ? fetchFailed(e2) : e2));
    throw e;
  }
}
