/**
 * fkgqa's one HTTP client: every request to an endpoint — the bounded client's query to one endpoint
 * and its documents (src/federation/client.ts), the endpoint probe, the oracle's ASK probes, the
 * queries of `fkgqa describe --sparql` and of the KGVoyager tools (src/describe/client.ts), the
 * embeddings service (`postWithin`), and the Comunica engine's requests (its thread imports this module; it imports only Node's own modules so
 * that a worker thread can load it) — is sent by `send` (the answer read whole, up to a byte limit)
 * or by the `fetch` that `fetchVia` makes (the answer as a stream, for libraries that take a
 * `fetch`). Both send on node:http(s) with keep-alive agents, under the same rules:
 *
 * - the first URL must pass the caller's check (`allowed`), else nothing is sent (`RequestRefused`);
 * - redirects are never followed by the transport: a query (POST) is never re-sent to a redirect
 *   target; a document (GET/HEAD) follows a redirect only when `followRedirects` is set and the
 *   target passes the same check, hop by hop (at most `maxHops`); any other redirect is an error
 *   (`RedirectRefused`) naming both URLs, never a silently empty answer;
 * - every request actually sent is counted per endpoint (the URL without query string and fragment);
 * - no content coding is asked for (`Accept-Encoding: identity`); one sent anyway is decoded strictly
 *   (`DECODED_CODINGS`), within the answer limit;
 * - the ports `fetch` refuses are refused (`BAD_PORTS`), and a request that fails on a reused
 *   keep-alive connection before any answer is sent once more on a new one;
 * - network failures are worded as `fetch` words them (`TypeError('fetch failed', { cause })`), an
 *   abort is an `AbortError` whose cause is the signal's reason.
 *
 * Node's own `fetch` (undici) is not used: it costs more CPU and time per request than node:http
 * (docs/performance.md) and decodes content codings leniently (docs/federation.md).
 */

import http from 'node:http';
import https from 'node:https';
import { urlToHttpOptions } from 'node:url';
import { pipeline, Readable } from 'node:stream';
import zlib from 'node:zlib';

/** The endpoint a request goes to: its URL without query string and fragment (how requests are counted). */
export const endpointOf = (url: string): string => url.replace(/[?#].*$/, '');

/**
 * Host names of this machine's loopback interface, as the WHATWG URL parser serialises them:
 * `localhost` (with or without its final dot), `127.0.0.1` (also written `127.1`, `2130706433`,
 * `0x7f.1`, …), `[::1]` and `[::ffff:7f00:1]` (IPv4-mapped `127.0.0.1`). The rest of 127.0.0.0/8
 * (`127.0.0.2`, …) are other hosts: serves bind them apart on one machine.
 */
const LOOPBACK = /^(localhost\.?|127\.0\.0\.1|\[::1\]|\[::ffff:7f00:1\])$/;

/** The host every loopback name stands for in `endpointKey`. */
const LOOPBACK_KEY = '127.0.0.1';

/** Keys already computed (the registry's urls are looked up on every request); cleared when full. */
const keys = new Map<string, string>();

/**
 * An endpoint URL in the one form two spellings of the same endpoint share — the one notion of
 * endpoint identity: the registry's lookup of a SERVICE IRI (`findEndpoint`), its url claims, the
 * allow-lists of every request. It is the WHATWG URL serialisation (scheme and host in lower case,
 * IPv4 numbers in dotted form, no default port, a port without leading zeros, `.` and `..`
 * segments resolved), with percent-encoded unreserved characters decoded (RFC 3986, section
 * 6.2.2.2), other percent-encodings in upper case, trailing slashes removed, and every loopback
 * host name (`localhost`, `127.0.0.1`, `[::1]`: `LOOPBACK`) taken as one host, `127.0.0.1`,
 * without DNS: a name that resolves to the loopback interface only through DNS or the hosts file
 * is another host. A user name or password is kept: a URL with credentials is another endpoint than
 * the same URL without (fkgqa registers no URL with credentials). Two URLs with one key name one endpoint. A text that is no URL is compared as
 * written, without trailing slashes.
 * @param url an endpoint URL (its query string, if any, is kept, normalised the same way; its
 *   fragment is dropped)
 * @returns the key: a URL text, not meant to be sent (a loopback name is replaced)
 */
export function endpointKey(url: string): string {
  const known = keys.get(url);
  if (known !== undefined) return known;
  let key: string;
  let u: URL | undefined;
  try {
    u = new URL(url);
  } catch {
    key = url.replace(/\/+$/, '');
  }
  if (u) {
    const unreserved = (s: string) =>
      s.replace(/%([0-9A-Fa-f]{2})/g, (m, h: string) => (/[A-Za-z0-9\-._~]/.test(String.fromCharCode(parseInt(h, 16))) ? String.fromCharCode(parseInt(h, 16)) : m.toUpperCase()));
    const host = LOOPBACK.test(u.hostname) ? `${LOOPBACK_KEY}${u.port ? `:${u.port}` : ''}` : u.host;
    // Credentials are part of the authority: a URL with them is not the registered endpoint (whose URL has none).
    const auth = u.username !== '' || u.password !== '' ? `${u.username}:${u.password}@` : '';
    key = `${u.protocol}//${auth}${host}${unreserved(u.pathname)}`.replace(/\/+$/, '') + unreserved(u.search);
  }
  if (keys.size >= 10_000) keys.clear();
  keys.set(url, key!);
  return key!;
}

/** Compares endpoint URLs by the one notion of endpoint identity: two spellings of one URL are one endpoint (`endpointKey`). */
export const sameEndpoint = (a: string, b: string): boolean => a === b || endpointKey(a) === endpointKey(b);

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
 * chunked body without its last chunk). Thrown by `send`; never an answer with fewer rows.
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
 * What a network failure of `send` or `fetchVia` means, in words, for a message that names the
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
function codingProblem(codings: string[]): string | undefined {
  const unknown = codings.find((c) => !DECODED_CODINGS.includes(c));
  return unknown === undefined ? undefined : `sent an answer with Content-Encoding ${codings.join(', ')}, which is not decoded (${unknown} is none of ${DECODED_CODINGS.join(', ')})`;
}

/** Words for an encoded answer that decodes to more than the answer limit (after the endpoint's URL): a compression bomb is the endpoint's fault, not a large answer to the query. */
const decodedTooLarge = (codings: string[], sentBytes: number, maxBytes: number): string =>
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
 * list of Node 20's undici): refused here too, so that an endpoint is reachable, or not,
 * alike on the direct route and through a federation engine (which uses `fetch`).
 */
const BAD_PORTS = new Set([
  1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102, 103, 104, 109, 110, 111, 113, 115, 117, 119, 123, 135, 137, 139, 143, 161, 179, 389, 427, 465, 512,
  513, 514, 515, 526, 530, 531, 532, 540, 548, 554, 556, 563, 587, 601, 636, 989, 990, 993, 995, 1719, 1720, 1723, 2049, 3659, 4045, 4190, 5060, 5061, 6000, 6566, 6665, 6666, 6667, 6668, 6669, 6679,
  6697, 10080,
]);

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

/** A network error as `fetch` words it (`fetch failed`, the cause attached), so that callers' messages and their classification (tool-error.ts) are the same on `send` and `fetchVia`. */
const fetchFailed = (cause: Error): TypeError => new TypeError('fetch failed', { cause });

/**
 * The error a request aborted by its signal fails with: Node's own (`AbortError`, code `ABORT_ERR`,
 * the signal's reason as its cause), as http.request's `signal` option gives it.
 */
function abortError(signal: AbortSignal): Error {
  return Object.assign(new Error('The operation was aborted', { cause: signal.reason }), { name: 'AbortError', code: 'ABORT_ERR' });
}

/** The keep-alive agents (one per scheme, for the process): connections to an endpoint are reused across calls. */
const AGENTS = { 'http:': new http.Agent({ keepAlive: true }), 'https:': new https.Agent({ keepAlive: true }) };

/** A URL's request options (`urlToHttpOptions`) and module, parsed once per URL string (`requestTarget`). */
interface RequestTarget {
  protocol: 'http:' | 'https:';
  options: http.RequestOptions;
}
const TARGETS = new Map<string, RequestTarget>();
/** The most URLs whose options `requestTarget` keeps (the registry's endpoints; the oldest is dropped beyond). */
const MAX_TARGETS = 4096;

/**
 * The request options of a URL, parsed once (parsing the same endpoint URL on every call costs CPU on the point query's path).
 * @throws `fetchFailed` for a string that is not a URL, a scheme other than http(s), or a port of `BAD_PORTS`
 */
function requestTarget(url: string): RequestTarget {
  let t = TARGETS.get(url);
  if (t) return t;
  let u: URL;
  try {
    u = new URL(url);
  } catch (e) {
    throw fetchFailed(e as Error);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw fetchFailed(new Error(`unsupported protocol ${u.protocol}`));
  if (u.port !== '' && BAD_PORTS.has(Number(u.port))) throw fetchFailed(new Error('bad port'));
  t = { protocol: u.protocol, options: urlToHttpOptions(u) };
  if (TARGETS.size >= MAX_TARGETS) TARGETS.delete(TARGETS.keys().next().value!);
  TARGETS.set(url, t);
  return t;
}

/** How a request is bounded: where it may go, how it is counted, which redirects it follows. */
interface HttpBounds {
  /** Whether a URL (the first one and every redirect target) may be contacted. */
  allowed(url: string): boolean;
  /** Called once per request sent, with its endpoint (`endpointOf`). */
  count?(endpoint: string): void;
  /** Follow redirects whose target is allowed (GET and HEAD only; default false: every redirect is refused). */
  followRedirects?: boolean;
  /** Most redirects followed (default 5). */
  maxHops?: number;
}

/** One request of `send`. */
interface HttpRequest {
  url: string;
  /** Default GET. */
  method?: string;
  /** Request headers (lower-case names); content-length and accept-encoding (identity) are set here. */
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Aborts the request and the reading of its answer: the promise rejects with an AbortError. */
  signal?: AbortSignal;
}

/** An answer of `send`. */
interface HttpAnswer {
  /** HTTP status (never a 3xx). */
  status: number;
  statusText: string;
  /** The URL that answered (the last one after redirects followed). */
  url: string;
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

/** One hop's result: a redirect (not read), or the answer. */
type Hop<T> = { redirect: { status: number; location: string | null } } | { answer: T };

/**
 * Sends one request on node:http(s) and hands its answer to `read` at the status line (a 3xx is
 * returned as a redirect, its body not read). A request that fails before any answer on a reused
 * keep-alive connection the server had closed (ECONNRESET, EPIPE) is sent once more on a new one.
 * @param read reads the answer; it settles the hop with `resolve`/`reject` and calls `release` once the answer is read or dropped
 * @throws `fetchFailed` for a network error before any answer; an AbortError when `signal` aborts before the status line
 */
function exchange<T>(
  url: string,
  method: string,
  headers: Record<string, string>,
  payload: Buffer | undefined,
  signal: AbortSignal | undefined,
  read: (res: http.IncomingMessage, resolve: (a: T) => void, reject: (e: unknown) => void, release: () => void) => void,
): Promise<Hop<T>> {
  const target = requestTarget(url);
  const once = () =>
    new Promise<Hop<T>>((resolve, reject) => {
      if (signal?.aborted) return reject(abortError(signal));
      let answered = false;
      // The abort is wired here rather than through request's `signal` option (Node's addAbortSignal
      // and its end-of-stream watcher cost about as much CPU as the rest of the request).
      const onAbort = () => req.destroy(abortError(signal!));
      const release = () => signal?.removeEventListener('abort', onAbort);
      const req = (target.protocol === 'https:' ? https : http).request({ ...target.options, method, agent: AGENTS[target.protocol], headers }, (res) => {
        answered = true;
        const status = res.statusCode ?? 0;
        if (REDIRECT.has(status)) {
          release();
          res.destroy();
          return resolve({ redirect: { status, location: headerOf(res, 'location') } });
        }
        read(
          res,
          (a) => resolve({ answer: a }),
          (e) => (release(), reject(e)),
          release,
        );
      });
      req.on('error', (e: NodeJS.ErrnoException) => {
        if (answered) return;
        release();
        if (signal?.aborted) return reject(e);
        if (req.reusedSocket && (e.code === 'ECONNRESET' || e.code === 'EPIPE')) return reject(Object.assign(e, { retry: true }));
        reject(fetchFailed(e));
      });
      signal?.addEventListener('abort', onAbort, { once: true });
      req.end(payload);
    });
  return once().catch((e: Error & { retry?: boolean }) => {
    if (!e.retry) throw e;
    return once().catch((e2: Error & { retry?: boolean }) => Promise.reject(e2.retry ? fetchFailed(e2) : e2));
  });
}

/** A response header by lower-case name (several values joined with ", "), or null. */
function headerOf(res: http.IncomingMessage, name: string): string | null {
  const v = res.headers[name];
  return v === undefined ? null : Array.isArray(v) ? v.join(', ') : v;
}

const REDIRECT = new Set([301, 302, 303, 307, 308]);

/**
 * Sends a request hop by hop under `bounds` (module comment): each URL checked and counted before
 * it is sent, a redirect followed only as `bounds` allow.
 * @throws RequestRefused before sending to a URL that is not allowed; RedirectRefused for a redirect not followed
 */
async function within<T>(url: string, method: string, bounds: HttpBounds, hop: (url: string) => Promise<Hop<T>>): Promise<T> {
  const maxHops = bounds.maxHops ?? 5;
  for (let n = 0; ; n++) {
    if (!bounds.allowed(url)) throw new RequestRefused(endpointOf(url));
    bounds.count?.(endpointOf(url));
    const h = await hop(url);
    if ('answer' in h) return h.answer;
    const { status, location } = h.redirect;
    let to: string;
    try {
      to = location ? new URL(location, url).href : '';
    } catch {
      to = location ?? '';
    }
    const ok = to !== '' && bounds.allowed(to);
    if (!bounds.followRedirects || (method !== 'GET' && method !== 'HEAD') || !ok || n >= maxHops) throw new RedirectRefused(url, to, status, ok);
    url = to;
  }
}

/**
 * Sends a request and reads its answer whole (module comment), at most `maxBytes` bytes of it; a
 * gzip- or deflate-encoded answer is decoded within the same limit.
 * @param bounds where the request may go and at most how many bytes of the answer are read (`maxBytes`, default unbounded)
 * @throws RequestRefused, RedirectRefused; AnswerCut when the connection closed after the status line
 *   and before the end of the body; `TypeError('fetch failed', { cause })` for a network error
 *   before any answer; an AbortError (the signal's reason as its cause) when `request.signal` aborts
 */
export async function send(request: HttpRequest, bounds: HttpBounds & { maxBytes?: number }): Promise<HttpAnswer> {
  const method = (request.method ?? 'GET').toUpperCase();
  const maxBytes = bounds.maxBytes ?? Infinity;
  const payload = request.body === undefined ? undefined : Buffer.isBuffer(request.body) ? request.body : Buffer.from(request.body, 'utf8');
  const headers: Record<string, string> = { ...request.headers, 'accept-encoding': 'identity', ...(payload ? { 'content-length': String(payload.length) } : {}) };
  const { signal } = request;
  return within(request.url, method, bounds, (url) =>
    exchange<HttpAnswer>(url, method, headers, payload, signal, (res, resolve, reject, release) => {
      const status = res.statusCode ?? 0;
      const answer = (text: string | undefined, encodingProblem?: string): HttpAnswer => ({
        status,
        statusText: res.statusMessage ?? '',
        url,
        header: (name) => headerOf(res, name),
        text,
        ...(encodingProblem !== undefined ? { encodingProblem } : {}),
      });
      const chunks: Buffer[] = [];
      let size = 0;
      let done = false;
      const finish = (a: HttpAnswer) => ((done = true), release(), resolve(a));
      res.on('data', (c: Buffer) => {
        if (done) return;
        size += c.length;
        if (size > maxBytes) {
          finish(answer(undefined));
          res.destroy();
          return;
        }
        chunks.push(c);
      });
      res.on('end', () => {
        if (done) return;
        const encoding = headerOf(res, 'content-encoding');
        if (!encoding) return finish(answer(Buffer.concat(chunks).toString('utf8')));
        const decoded = decodeBody(Buffer.concat(chunks), encoding, maxBytes);
        finish('problem' in decoded ? answer('', decoded.problem) : answer(decoded.body.toString('utf8')));
      });
      // After the status line, a connection that ends early is an incomplete answer, not an unreachable endpoint.
      const cut = (e?: Error) => done || ((done = true), reject(signal?.aborted ? Object.assign(abortError(signal), { status }) : new AnswerCut(endpointOf(url), status, size, e)));
      res.on('error', cut);
      res.on('close', () => cut());
    }),
  );
}

/** A streaming decoder of one of `DECODED_CODINGS` (strict: a stream without its end or trailer fails, as `decodeBody`). */
const streamDecoder = (coding: string): zlib.Gunzip | zlib.Inflate => (coding === 'deflate' ? zlib.createInflate() : zlib.createGunzip());

/** Statuses whose answer has no body (Fetch standard "null body status"). */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

/**
 * A `fetch` for libraries that take one (the Comunica engine), on the transport of `send` and under
 * the same rules (module comment). The body is a stream decoded strictly: an unknown coding, a
 * stream that does not decode, or more than `maxDecodedBytes` decoded errors the body with an
 * `AnswerUndecodable`; a connection closed before the end of the body errors it with
 * `TypeError('terminated')` (as undici).
 * @param maxDecodedBytes the answer limit for an encoded body, decoded, in bytes
 * @returns a `fetch`: RequestRefused and RedirectRefused as `send`; network failures reject with
 *   `TypeError('fetch failed', { cause })`, an abort with an AbortError
 */
export function fetchVia(bounds: HttpBounds, maxDecodedBytes: number): typeof fetch {
  return async (input, init) => {
    const request = input instanceof Request ? input : undefined;
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const method = (init?.method ?? request?.method ?? 'GET').toUpperCase();
    const signal = init?.signal ?? request?.signal ?? undefined;
    const headers: Record<string, string> = {};
    new Headers(init?.headers ?? request?.headers).forEach((v, k) => (headers[k] = v));
    const payload = await payloadOf(init?.body ?? (request?.body ? await request.arrayBuffer() : undefined), headers);
    headers['accept-encoding'] = 'identity';
    if (payload) headers['content-length'] = String(payload.length);
    return within(url, method, bounds, (to) =>
      exchange<Response>(to, method, headers, payload, signal, (res, resolve, reject, release) => {
        const status = res.statusCode ?? 0;
        const h = new Headers();
        for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) {
          try {
            h.append(res.rawHeaders[i], res.rawHeaders[i + 1]);
          } catch {
            /* a header value fetch cannot hold: dropped, as undici drops it */
          }
        }
        let body: ReadableStream<Uint8Array> | null = null;
        if (method === 'HEAD' || NULL_BODY.has(status)) {
          res.resume();
          res.once('end', release);
        } else body = streamedBody(res, codingsOf(h.get('content-encoding')), maxDecodedBytes, signal, release);
        try {
          const r = new Response(body, { status, statusText: res.statusMessage ?? '', headers: h });
          Object.defineProperty(r, 'url', { value: to });
          resolve(r);
        } catch (e) {
          res.destroy();
          reject(fetchFailed(e as Error));
        }
      }),
    );
  };
}

/** A `fetch` body as bytes (a URLSearchParams body sets its content type, as `fetch` does). */
async function payloadOf(raw: BodyInit | ArrayBuffer | null | undefined, headers: Record<string, string>): Promise<Buffer | undefined> {
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw === 'string') return Buffer.from(raw, 'utf8');
  if (raw instanceof URLSearchParams) {
    headers['content-type'] ??= 'application/x-www-form-urlencoded;charset=UTF-8';
    return Buffer.from(raw.toString(), 'utf8');
  }
  return Buffer.from(await new Response(raw as BodyInit).arrayBuffer());
}

/**
 * The body of a `fetchVia` answer as a web stream, decoded strictly by its codings (module comment).
 * @param release called once the body has ended, failed or was cancelled
 */
function streamedBody(res: http.IncomingMessage, codings: string[], maxDecodedBytes: number, signal: AbortSignal | undefined, release: () => void): ReadableStream<Uint8Array> {
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
  const reader = (Readable.toWeb(source) as ReadableStream<Uint8Array>).getReader();
  let decoded = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const fail = (e: Error) => {
        release();
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
        release();
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
      release();
      res.destroy();
      return reader.cancel(reason).catch(() => undefined);
    },
  });
}

/**
 * POSTs `body` to a service the user named (a SPARQL endpoint to describe, an embeddings API) with
 * `send`, waiting at most `timeoutMs` for the whole answer.
 * @param headers request headers (lower-case names)
 * @returns the answer (`status`, `statusText`, `text`), or `{ unreachable }` in words when no whole
 *   answer came: `no answer within <timeoutMs> ms`, a network failure as `fetch` words it
 *   (`fetch failed (connect ECONNREFUSED …)`), or a redirect (never followed for a POST)
 */
export async function postWithin(
  url: string,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
): Promise<{ status: number; statusText: string; text: string } | { unreachable: string }> {
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    const a = await send({ url, method: 'POST', headers, body, signal }, { allowed: () => true });
    return a.encodingProblem ? { unreachable: a.encodingProblem } : { status: a.status, statusText: a.statusText, text: a.text ?? '' };
  } catch (e) {
    const err = e as Error;
    return { unreachable: signal.aborted ? `no answer within ${timeoutMs} ms` : `${err.message}${err.cause ? ` (${(err.cause as Error).message})` : ''}` };
  }
}
