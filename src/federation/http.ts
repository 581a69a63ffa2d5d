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
    super(`${endpoint} closed the connection before the answer was complete (HTTP ${status}, ${bytes} bytes received${cause?.message && !/^(aborted|terminated)$/.test(cause.message) ? `: ${cause.message}` : ''})`, cause ? { cause } : undefined);
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
  const first = text.split(/\r?\n/).map((l) => l.replace(/\s+/g, ' ').trim()).find((l) => l.length > 0) ?? '';
  return first.length > 200 ? `${first.slice(0, 199)}…` : first;
}

/** How `fetchWithin` bounds one request. */
export interface FetchBounds {
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
    const res = await fetch(next, { ...init, redirect: 'manual' });
    if (!REDIRECT.has(res.status)) return res;
    const location = res.headers.get('location');
    let to = '';
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
 * The request options of a URL, parsed once (a call parses the same endpoint URL each time: issue 20).
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
   * Set when the body has a `Content-Encoding` that does not decode (a cut or corrupt gzip stream) or
   * that is not known, in words after the endpoint's URL (e.g. "sent a gzip-encoded answer that does
   * not decode (unexpected end of file)"); `text` is '' then. An answer gzip-, deflate- or
   * br-encoded although no encoding was asked for is decoded, as `fetch` (and so Comunica) does.
   */
  encodingProblem?: string;
}

/** The decoders of `Content-Encoding` values (RFC 9110 §8.4.1), as `fetch` decodes them. */
const DECODERS: Record<string, (b: Buffer, o: zlib.ZlibOptions) => Buffer> = {
  gzip: zlib.gunzipSync,
  'x-gzip': zlib.gunzipSync,
  deflate: zlib.inflateSync,
  br: zlib.brotliDecompressSync as (b: Buffer, o: zlib.ZlibOptions) => Buffer,
};

/**
 * Decodes a body by its `Content-Encoding` (several codings applied in order are undone in reverse).
 * @returns the decoded body, undefined when it is larger than `maxBytes` decoded, or the problem in words
 */
export function decodeBody(raw: Buffer, encoding: string | null, maxBytes: number): { body: Buffer } | { problem: string } | undefined {
  const codings = (encoding ?? '').split(',').map((c) => c.trim().toLowerCase()).filter((c) => c !== '' && c !== 'identity');
  let body = raw;
  for (const c of codings.reverse()) {
    const decode = DECODERS[c];
    if (!decode) return { problem: `sent an answer with Content-Encoding ${c}, which is not decoded` };
    try {
      body = decode(body, { maxOutputLength: maxBytes });
    } catch (e) {
      if (e instanceof RangeError || (e as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') return undefined;
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
  1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102, 103, 104, 109, 110, 111, 113, 115, 117, 119, 123, 135, 137, 139, 143, 161, 179, 389, 427, 465, 512, 513, 514, 515, 526, 530,
  531, 532, 540, 548, 554, 556, 563, 587, 601, 636, 989, 990, 993, 995, 1719, 1720, 1723, 2049, 3659, 4045, 4190, 5060, 5061, 6000, 6566, 6665, 6666, 6667, 6668, 6669, 6679, 6697, 10080,
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
export async function postWithin(url: string, body: string, headers: Record<string, string>, signal: AbortSignal, maxBytes: number, bounds: Pick<FetchBounds, 'allowed' | 'count'>): Promise<PostAnswer> {
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
      // and its end-of-stream watcher cost about as much CPU as the rest of the request: issue 20).
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
          let to = '';
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
          if (decoded === undefined) return finish(undefined);
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
  try {
    return await once();
  } catch (e) {
    if ((e as { retry?: boolean }).retry) return once().catch((e2: Error) => Promise.reject((e2 as { retry?: boolean }).retry ? fetchFailed(e2) : e2));
    throw e;
  }
}
