/**
 * The request side of the SPARQL 1.1 Protocol (https://www.w3.org/TR/sparql11-protocol/, §2.1):
 * reading the query out of a GET or POST request, and content negotiation of the response.
 * Everything here is pure except `readBody`, so the rules can be tested without a server.
 */
import type { IncomingMessage } from 'node:http';

/** SPARQL results and RDF media types the endpoints produce. */
export const MEDIA = {
  json: 'application/sparql-results+json',
  xml: 'application/sparql-results+xml',
  csv: 'text/csv',
  tsv: 'text/tab-separated-values',
  turtle: 'text/turtle',
  ntriples: 'application/n-triples',
  rdfxml: 'application/rdf+xml',
  sparqlQuery: 'application/sparql-query',
  sparqlUpdate: 'application/sparql-update',
  form: 'application/x-www-form-urlencoded',
} as const;

/** A client error: the HTTP status (4xx) and a message for the client. */
export class ProtocolError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** Extra response headers (e.g. `Allow` for 405). */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ProtocolError';
  }
}

/** What a protocol request asks for. */
export type ProtocolRequest =
  /** A GET with no `query`: the service description (SPARQL 1.1 Service Description §2). */
  | { type: 'service-description' }
  | {
      type: 'query';
      /** The query text, exactly as sent. */
      query: string;
      /** SPARQL Protocol `default-graph-uri` parameters (§2.1.4), in order. */
      defaultGraphs: string[];
      /** SPARQL Protocol `named-graph-uri` parameters (§2.1.4), in order. */
      namedGraphs: string[];
      /** How the query was sent: §2.1.1 GET, §2.1.2 POST form, §2.1.3 POST direct. */
      via: 'get' | 'post-form' | 'post-direct';
      /** The `timeout` parameter, as sent (a per-request time limit, as Fuseki and QLever take it; see `parseTimeLimit`). */
      timeout?: string;
    };

/** Splits `type/subtype; a=b` into the lower-cased media type and its parameters. */
function parseMediaType(value: string): { type: string; params: Record<string, string> } {
  const [type, ...rest] = value.split(';');
  const params: Record<string, string> = {};
  for (const p of rest) {
    const i = p.indexOf('=');
    if (i > 0)
      params[p.slice(0, i).trim().toLowerCase()] = p
        .slice(i + 1)
        .trim()
        .replace(/^"(.*)"$/, '$1');
  }
  return { type: type.trim().toLowerCase(), params };
}

/**
 * Request bodies Node's HTTP parser refused before their handler read them (a request pipelined behind others, whose handler
 * reads its body later): what is wrong with each, for `readBody`. Set by the server's 'clientError' listener.
 */
export const refusedBodies = new WeakMap<IncomingMessage, Error>();

/**
 * Reads a request body into a Buffer, refusing more than `maxBytes`.
 * @throws ProtocolError 413 when the declared `Content-Length` or the bytes received exceed `maxBytes`
 *   (the rest of the body is drained and discarded so the client can read the answer); 400 when the
 *   request fails or closes before its body ends (also when it closed before this was called), or Node's parser refused
 *   its body before this was called (`refusedBodies`)
 */
export function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const refused = refusedBodies.get(req);
    if (refused) {
      reject(new ProtocolError(400, `could not read the request body: ${refused.message}`));
      return;
    }
    const tooLarge = () => new ProtocolError(413, `request body larger than the limit of ${maxBytes} bytes`);
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > maxBytes) {
      req.resume();
      reject(tooLarge());
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on('data', (c: Buffer) => {
      if (over) return;
      size += c.length;
      if (size > maxBytes) {
        over = true;
        chunks.length = 0;
        reject(tooLarge());
        return;
      }
      chunks.push(c);
    });
    let ended = false;
    req.on('end', () => {
      ended = true;
      if (!over) resolve(Buffer.concat(chunks));
    });
    req.on('error', (e) => {
      if (!over) reject(new ProtocolError(400, `could not read the request body: ${e.message}`));
    });
    // A request closed before its body ended (its client went away, perhaps before this was called) never ends.
    const cut = () => {
      if (!ended && !over) reject(new ProtocolError(400, 'the connection closed before the request body ended'));
    };
    if (req.destroyed) cut();
    else req.on('close', cut);
  });
}

/** Decodes a body as UTF-8, refusing bytes that are not UTF-8 (W3C protocol test `bad_query_non_utf8`). */
function utf8(body: Buffer): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(body);
  } catch {
    throw new ProtocolError(400, 'the request body is not valid UTF-8');
  }
}

function checkCharset(params: Record<string, string>): void {
  const cs = params.charset?.toLowerCase();
  if (cs && cs !== 'utf-8' && cs !== 'utf8') {
    throw new ProtocolError(415, `charset ${params.charset} is not supported: send the query as UTF-8`);
  }
}

/** Decodes `application/x-www-form-urlencoded` percent-encoding (`+` is a space) strictly: the bytes must be UTF-8. */
function strictDecode(raw: string): string | undefined {
  const s = raw.replace(/\+/g, ' ');
  if (!s.includes('%')) return s;
  try {
    // Fast path: well-formed escapes of UTF-8 (throws a URIError for a bad byte or a "%" without two hex digits).
    return decodeURIComponent(s);
  } catch {
    // decoded byte by byte below
  }
  const bytes: number[] = [];
  for (let i = 0; i < s.length;) {
    if (s[i] === '%' && /^[0-9a-fA-F]{2}$/.test(s.slice(i + 1, i + 3))) {
      bytes.push(parseInt(s.slice(i + 1, i + 3), 16));
      i += 3;
    } else {
      const cp = s.codePointAt(i)!;
      const ch = String.fromCodePoint(cp);
      for (const b of Buffer.from(ch, 'utf8')) bytes.push(b);
      i += ch.length;
    }
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(bytes));
  } catch {
    return undefined;
  }
}

/**
 * Parses a URL query string or a form body like `URLSearchParams`, but refuses percent-encoded bytes
 * that are not UTF-8 (`%FF`), which `URLSearchParams` would silently turn into U+FFFD (WHATWG URL
 * §5.1; the SPARQL 1.1 Protocol §2.1 requires UTF-8). A `%` not followed by two hex digits stays
 * as it is, as in `URLSearchParams`.
 * @param raw the query string (with or without its leading `?`) or the form body
 * @throws ProtocolError 400 naming the parameter whose name or value is not UTF-8
 */
export function strictSearchParams(raw: string): URLSearchParams {
  const params = new URLSearchParams();
  for (const pair of raw.replace(/^\?/, '').split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const rawName = eq < 0 ? pair : pair.slice(0, eq);
    const rawValue = eq < 0 ? '' : pair.slice(eq + 1);
    const name = strictDecode(rawName);
    if (name === undefined) throw new ProtocolError(400, `a parameter name (${rawName.slice(0, 40)}) is not UTF-8 once percent-decoded`);
    const value = strictDecode(rawValue);
    if (value === undefined) throw new ProtocolError(400, `parameter ${name}: its value is not UTF-8 once percent-decoded (e.g. %FF): send the query as UTF-8`);
    params.append(name, value);
  }
  return params;
}

/** The `Allow` header of an endpoint's 405 and OPTIONS answers: the methods of the SPARQL 1.1 Protocol (§2.1) and the CORS preflight (HEAD is answered as GET). */
export const ALLOWED_METHODS = 'GET, POST, OPTIONS';

const UPDATE_REFUSED = 'this endpoint is read-only: SPARQL Update is not accepted';

function fromParams(params: URLSearchParams, via: 'get' | 'post-form', extra?: URLSearchParams): ProtocolRequest {
  if (params.has('update') || extra?.has('update')) throw new ProtocolError(403, UPDATE_REFUSED);
  const queries = params.getAll('query');
  if (extra?.has('query')) queries.push(...extra.getAll('query'));
  if (queries.length > 1) throw new ProtocolError(400, `${queries.length} query parameters: send exactly one`);
  const all = (k: string) => [...params.getAll(k), ...(extra?.getAll(k) ?? [])];
  if (queries.length === 0) {
    if (via === 'get') return { type: 'service-description' };
    throw new ProtocolError(400, 'the form has no query parameter');
  }
  // As for an empty application/sparql-query body: oxigraph's own message for "" is "error at 1:1: expected [_]".
  if (queries[0].trim() === '') throw new ProtocolError(400, 'parameter query is empty: give the query text');
  const timeouts = all('timeout');
  if (timeouts.length > 1) throw new ProtocolError(400, `${timeouts.length} timeout parameters: send at most one`);
  return { type: 'query', query: queries[0], defaultGraphs: all('default-graph-uri'), namedGraphs: all('named-graph-uri'), via, ...(timeouts.length ? { timeout: timeouts[0] } : {}) };
}

/**
 * Reads a SPARQL 1.1 Protocol query request (§2.1): GET with `query` in the URL, POST with an
 * `application/x-www-form-urlencoded` body, or POST with an `application/sparql-query` body (then
 * `default-graph-uri`/`named-graph-uri` come from the URL). A GET with no `query` asks for the
 * service description.
 * @param method the HTTP method
 * @param search the URL's query string (`URLSearchParams`; read it with `strictSearchParams` to refuse non-UTF-8 percent-encoding)
 * @param contentType the request's `Content-Type` header (POST only)
 * @param body the request body (POST only)
 * @throws ProtocolError 405 for another method; 400 for two `query` parameters, an empty query, a POST without
 *   Content-Type or without a query, a body that is not UTF-8 (also once percent-decoded); 415 for another media type or charset;
 *   403 for a SPARQL Update (the endpoints are read-only)
 */
export function parseProtocolRequest(method: string, search: URLSearchParams, contentType?: string, body?: Buffer): ProtocolRequest {
  if (method === 'GET' || method === 'HEAD') return fromParams(search, 'get');
  if (method !== 'POST') {
    throw new ProtocolError(405, `method ${method} is not allowed: use GET or POST (SPARQL 1.1 Protocol §2.1)`, { Allow: ALLOWED_METHODS });
  }
  if (!contentType) {
    throw new ProtocolError(400, `a POST needs a Content-Type: ${MEDIA.sparqlQuery} or ${MEDIA.form}`);
  }
  const { type, params } = parseMediaType(contentType);
  if (type === MEDIA.sparqlUpdate) throw new ProtocolError(403, UPDATE_REFUSED);
  if (type === MEDIA.form) {
    checkCharset(params);
    return fromParams(strictSearchParams(utf8(body ?? Buffer.alloc(0))), 'post-form', search);
  }
  if (type === MEDIA.sparqlQuery) {
    checkCharset(params);
    if (search.has('query')) throw new ProtocolError(400, `a query in the URL and in the ${MEDIA.sparqlQuery} body: send one`);
    if (search.has('update')) throw new ProtocolError(403, UPDATE_REFUSED);
    const query = utf8(body ?? Buffer.alloc(0));
    if (query.trim() === '') throw new ProtocolError(400, 'the request body holds no query');
    const timeouts = search.getAll('timeout');
    if (timeouts.length > 1) throw new ProtocolError(400, `${timeouts.length} timeout parameters: send at most one`);
    return {
      type: 'query',
      query,
      defaultGraphs: search.getAll('default-graph-uri'),
      namedGraphs: search.getAll('named-graph-uri'),
      via: 'post-direct',
      ...(timeouts.length ? { timeout: timeouts[0] } : {}),
    };
  }
  throw new ProtocolError(415, `media type ${type} is not supported: POST ${MEDIA.sparqlQuery} or ${MEDIA.form}`);
}

/**
 * What is wrong with a URL as the URL of a SPARQL endpoint fkgqa contacts, in words, or undefined
 * when it is fine: it must be absolute, `http:` or `https:` (never `file:`, `ftp:`, `javascript:`,
 * `data:` …), and carry no credentials (`http://user:password@host/…`). Credentials are refused
 * rather than sent: an endpoint URL is shown to agents (the endpoint lists of fkgqa mcp, VoID, error
 * messages, SERVICE clauses they write), and the federation engines could not all send them (Node's
 * `fetch` refuses such a URL; Java's HTTP client ignores them). The one rule of `--endpoint`,
 * endpoints files, `--endpoint-base` and the registry built from them (src/federation/registry.ts).
 * @returns e.g. `not an absolute http(s) URL`, `not an http(s) URL (its scheme is file:)`, `it carries credentials (user name or password), …`
 */
export function endpointUrlProblem(url: string): string | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return 'not an absolute http(s) URL';
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return `not an http(s) URL (its scheme is ${u.protocol})`;
  if (u.username !== '' || u.password !== '') return 'it carries credentials (user name or password), which fkgqa refuses: endpoint URLs are shown to agents';
  return undefined;
}

/**
 * A URL as a message may show it: credentials (`user:password@`) replaced by `…@`, so that an error
 * about such a URL does not print them.
 */
export function urlWithoutCredentials(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/?#]*@/i, '$1…@');
}

/** The request header that carries a client's time limit in milliseconds (sent by fkgqa's bounded client, src/federation/client.ts, and by the federation engines). */
export const TIME_LIMIT_HEADER = 'Fkgqa-Timeout';

/**
 * The response header (with 503) of fkgqa serve that marks a query stopped at a time limit, `time-limit;
 * by=endpoint|request; ms=N` (the query's own), or stopped because the endpoint was busy, `busy;
 * by=request|queue; waited=W; ms=N` (the endpoint's fault: BUSY_WAIT_SHARE of src/federation/limit.ts).
 */
export const STOPPED_HEADER = 'Fkgqa-Stopped';

/**
 * The response header of fkgqa serve's endpoints on an error the query caused although it parsed:
 * `evaluation` (oxigraph cannot evaluate it as written, e.g. "The custom function <bif:contains> is
 * not supported"; answered 400), `engine-fault` (it trapped oxigraph's engine, whose worker was
 * replaced; 400), `unsupported` (it uses SERVICE, which a shard endpoint does not evaluate; 501). A
 * client reads it as the query's fault, not the endpoint's (src/federation/client.ts `causedByQuery`),
 * and does not re-send the query in another form.
 */
export const QUERY_ERROR_HEADER = 'Fkgqa-Query-Error';

/** The whole milliseconds of a time, the fraction dropped; read to 15 digits first, so that `1.001` s (1000.9999… in binary) is 1001 ms. */
const wholeMs = (ms: number): number => Math.floor(Number(ms.toPrecision(15)));

/**
 * A header value as a message shows it: Node reads header bytes as Latin-1, so bytes that form
 * UTF-8 are decoded as UTF-8 (`Fkgqa-Timeout: ５` shows `５`, not `ï¼\u0095`); quoted as a JSON
 * string (control characters escaped, C1 and DEL too), at most 40 characters.
 */
function headerText(value: string): string {
  let text = value;
  if (/[\x80-\xff]/.test(value) && !/[^\x00-\xff]/.test(value)) {
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(value, 'latin1'));
    } catch {
      // not UTF-8: the Latin-1 reading stands
    }
  }
  // JSON escapes the C0 controls; DEL and the C1 controls too, so that no control character is shown raw.
  return JSON.stringify(text.slice(0, 40)).replace(/[\x7f-\x9f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * The time limit a request asks for, in ms: the `timeout` parameter — seconds, as Fuseki reads it
 * (`timeout=1.5`), or with a unit, as QLever writes it (`timeout=1500ms`, `timeout=1.5s`) — and the
 * `Fkgqa-Timeout` header (milliseconds); with both, the smaller. The endpoint applies the smaller
 * of this and its own limit. A fraction of a millisecond is dropped (`Fkgqa-Timeout: 1.5` is 1 ms):
 * a limit is never made longer than asked, so a value under 1 ms is refused.
 * @param param the `timeout` parameter, if any
 * @param header the `Fkgqa-Timeout` header, if any
 * @returns the limit in whole ms (capped at `MAX_TIME_LIMIT_MS`), or undefined when the request names none
 * @throws ProtocolError 400 naming the parameter or header when it is not a number, or under 1 ms
 */
export function parseTimeLimit(param: string | undefined, header: string | string[] | undefined): number | undefined {
  let limit: number | undefined;
  if (param !== undefined) {
    const m = /^\s*(\d+(?:\.\d+)?|\.\d+)\s*(ms|s)?\s*$/i.exec(param);
    const ms = m ? Number(m[1]) * (m[2]?.toLowerCase() === 'ms' ? 1 : 1000) : NaN;
    if (!(ms > 0) || !Number.isFinite(ms)) {
      throw new ProtocolError(400, `parameter timeout: "${param.slice(0, 40)}" is not a time limit: give seconds (timeout=1.5) or a value with a unit (timeout=1500ms, timeout=1.5s)`);
    }
    if (ms < 1) throw new ProtocolError(400, `parameter timeout: "${param.slice(0, 40)}" is under 1 ms, the shortest time limit (timeout=1ms)`);
    limit = wholeMs(ms);
  }
  if (header !== undefined) {
    const value = Array.isArray(header) ? header.join(',') : header;
    const ms = /^\s*\d+(\.\d+)?\s*$/.test(value) ? Number(value) : NaN;
    if (!(ms > 0) || !Number.isFinite(ms)) throw new ProtocolError(400, `header ${TIME_LIMIT_HEADER}: ${headerText(value)} is not a time limit in milliseconds (a positive number)`);
    if (ms < 1) throw new ProtocolError(400, `header ${TIME_LIMIT_HEADER}: ${headerText(value)} is under 1 ms, the shortest time limit`);
    limit = limit === undefined ? wholeMs(ms) : Math.min(limit, wholeMs(ms));
  }
  // Node's timers hold at most 2^31 - 1 ms (about 24.8 days); a longer limit would fire at once.
  return limit === undefined ? undefined : Math.min(MAX_TIME_LIMIT_MS, limit);
}

/** What Node's HTTP parser tells of a request it refused before any handler saw it (the server's 'clientError' event). */
export interface ParserRefusal {
  /** llhttp's error code (`HPE_INVALID_HEADER_TOKEN`), or a socket error's (`ECONNRESET`). */
  code?: string;
  /** llhttp's reason (`Invalid header value char`). */
  reason?: string;
  /** The bytes being parsed, and the offset of the refused byte in them. */
  rawPacket?: Buffer;
  bytesParsed?: number;
}

/**
 * The answer to a request that Node's HTTP parser refused before the server's handler saw it: a
 * header holding a control character (`Fkgqa-Timeout: 1\x0100`; RFC 9110 §5.5 allows none but tab in
 * a field value, and llhttp refuses them), a header line without a colon, headers too large, or no
 * HTTP at all; 408 for headers that did not end within Node's headersTimeout; 501 (with `Allow`) naming a
 * method llhttp does not know (`FOO`, `get`). The refused header is named, the time limit header with the message `parseTimeLimit`
 * gives for any other value that is no time limit. Node's own answer to these is a bare `400 Bad Request`.
 * @returns the status and the message, or undefined when there is no one to answer (the client reset the connection)
 */
export function refusedRequestAnswer(e: ParserRefusal): { status: number; message: string; headers?: Record<string, string> } | undefined {
  if (e.code === 'ECONNRESET') return undefined;
  // A method llhttp does not know (`FOO`, or `get`: methods are case-sensitive, RFC 9110 §9.1): 501, the answer to a method the server does not recognise (RFC 9110 §15.6.2), naming it.
  if (e.code === 'HPE_INVALID_METHOD') {
    const method = refusedMethod(e);
    if (method !== undefined) {
      const upper = method.toUpperCase();
      const why = upper !== method && ['GET', 'POST', 'HEAD', 'OPTIONS'].includes(upper) ? ` (methods are case-sensitive, RFC 9110 §9.1: send ${upper})` : '';
      return { status: 501, message: `method ${headerText(method)} is not known here${why}: send SPARQL queries with GET or POST (SPARQL 1.1 Protocol §2.1)`, headers: { Allow: ALLOWED_METHODS } };
    }
  }
  // A request line whose version is not followed by CRLF (a bare LF, `GET / HTTP/1.1\n`): llhttp refuses it as a version error,
  // but the version may be HTTP/1.1; what is wrong is the line's end (RFC 9112 §2.2 lets a server refuse a bare LF).
  if (e.code === 'HPE_INVALID_VERSION' && /CRLF after version/i.test(e.reason ?? ''))
    return { status: 400, message: 'the request line does not end with CRLF after its HTTP version (a bare LF is refused, RFC 9112 §2.2): end every line with CRLF' };
  // A version llhttp does not read (`HTTP/3.0`, `HTTP/1.9`): 505, as for any version but HTTP/1.x (RFC 9110 §15.6.6), naming it.
  if (e.code === 'HPE_INVALID_VERSION') {
    const version = refusedVersion(e);
    const shown = version === undefined ? 'the HTTP version of the request line' : /^[\x21-\x7e]+$/.test(version) ? version : headerText(version);
    return { status: 505, message: `${shown} is not supported: send HTTP/1.1 (RFC 9112)` };
  }
  // The request line or headers did not end in time (Node's headersTimeout): a version-less line with no blank line after it, or a stalled client.
  if (e.code === 'ERR_HTTP_REQUEST_TIMEOUT') return { status: 408, message: 'the request line and headers did not end in time (a blank line ends them): send an HTTP/1.1 request (RFC 9112 §3)' };
  if (e.code === 'HPE_HEADER_OVERFLOW') return { status: 431, message: "the request's headers are larger than the server reads (Node's limit, 16 KiB by default)" };
  if (e.code === 'HPE_CHUNK_EXTENSIONS_OVERFLOW') return { status: 413, message: "the request body's chunk extensions are larger than the server reads" };
  const raw = e.rawPacket?.toString('latin1');
  if (e.code === 'HPE_INVALID_HEADER_TOKEN' && raw !== undefined && e.bytesParsed !== undefined && e.bytesParsed < raw.length) {
    const at = e.bytesParsed;
    const start = raw.lastIndexOf('\n', at - 1) + 1;
    const end = raw.indexOf('\n', at);
    const line = raw.slice(start, end < 0 ? raw.length : end).replace(/\r$/, '');
    const colon = line.indexOf(':');
    const bad = `U+${raw.charCodeAt(at).toString(16).toUpperCase().padStart(4, '0')}`;
    // The refused byte after the colon: in the value (the line starts in this packet when it has a colon before the byte).
    if (colon >= 0 && start + colon < at) {
      const name = line.slice(0, colon).trim();
      const value = line.slice(colon + 1).trim();
      const why = `it holds the control character ${bad}, which HTTP does not allow in a header value (RFC 9110 §5.5)`;
      if (name.toLowerCase() === TIME_LIMIT_HEADER.toLowerCase())
        return { status: 400, message: `header ${TIME_LIMIT_HEADER}: ${headerText(value)} is not a time limit in milliseconds (a positive number): ${why}` };
      return { status: 400, message: `header ${headerText(name)}: ${headerText(value)} is refused: ${why}` };
    }
    // The line ended before any colon: llhttp refuses its CR (or LF) as a byte of the name, but what is wrong is the missing colon.
    if (start > 0 && colon < 0 && (raw[at] === '\r' || raw[at] === '\n'))
      return { status: 400, message: `the header line ${headerText(line)} is refused: a header line without a colon (RFC 9112 §5: a field line is a name, a colon, then the value)` };
    if (start > 0) return { status: 400, message: `the header ${headerText(line)} is refused: its name holds ${bad}, which HTTP does not allow in a header name (RFC 9110 §5.1)` };
  }
  return { status: 400, message: `the request is not valid HTTP/1.1 (${e.reason ?? e.code ?? 'unreadable'})` };
}

/**
 * The request line (method and request target) of the request Node's HTTP parser refused, when the
 * packet it was parsing holds that line whole: the line after the last blank line (end of an earlier
 * request's headers) before the refused byte, if it has the form `METHOD target HTTP/x.y`.
 * @returns undefined when the packet does not hold it (e.g. headers longer than one packet)
 */
export function refusedRequestLine(e: ParserRefusal): { method: string; target: string } | undefined {
  const raw = e.rawPacket?.toString('latin1');
  if (raw === undefined) return undefined;
  const at = Math.min(e.bytesParsed ?? raw.length, raw.length);
  const blank = raw.lastIndexOf('\r\n\r\n', at - 1);
  const start = blank < 0 ? 0 : blank + 4;
  const end = raw.indexOf('\n', start);
  const m = /^([!#$%&'*+.^_`|~0-9A-Za-z-]{1,20}) (\S{1,8000}) HTTP\/\d\.\d\r?$/.exec(raw.slice(start, end < 0 ? raw.length : end));
  return m ? { method: m[1], target: m[2] } : undefined;
}

/**
 * The version of the request whose request line Node's parser refused for its version: the word
 * after the method and target of the line that holds the refused byte.
 * @returns undefined when the packet does not hold the line
 */
function refusedVersion(e: ParserRefusal): string | undefined {
  const raw = e.rawPacket?.toString('latin1');
  if (raw === undefined) return undefined;
  const at = Math.min(e.bytesParsed ?? raw.length, raw.length);
  const start = raw.lastIndexOf('\n', at - 1) + 1;
  const end = raw.indexOf('\n', at);
  return /^\S+ +\S+ +(\S{1,40})$/.exec(raw.slice(start, end < 0 ? raw.length : end).replace(/\r$/, ''))?.[1];
}

/**
 * The method of the request whose request line Node's parser refused for its method: the token from
 * the start of that request (after the last blank line before the refused byte) to the first space.
 * @returns undefined when the packet does not hold it, or it is no token (RFC 9110 §5.6.2)
 */
function refusedMethod(e: ParserRefusal): string | undefined {
  const raw = e.rawPacket?.toString('latin1');
  if (raw === undefined) return undefined;
  const at = Math.min(e.bytesParsed ?? raw.length, raw.length);
  const blank = raw.lastIndexOf('\r\n\r\n', at - 1);
  const m = /^([!#$%&'*+.^_`|~0-9A-Za-z-]{1,40}) /.exec(raw.slice(blank < 0 ? 0 : blank + 4));
  return m?.[1];
}

/** The longest time limit a request may give, in ms (2^31 - 1, the longest delay of Node's timers): longer ones are capped to it. */
export const MAX_TIME_LIMIT_MS = 2_147_483_647;

/** The forms of SPARQL query result, which decide the media types on offer. */
export type ResultForm = 'bindings' | 'boolean' | 'graph';

/** One media type on offer: what `Accept` may name, and what it is served as. */
interface Offer {
  accept: string;
  serve: string;
}

/** Aliases clients send for the SPARQL results formats. */
const RESULT_ALIASES: Offer[] = [
  { accept: 'application/json', serve: MEDIA.json },
  { accept: 'application/xml', serve: MEDIA.xml },
  { accept: 'text/xml', serve: MEDIA.xml },
];
const JSON_XML: Offer[] = [MEDIA.json, MEDIA.xml].map((t) => ({ accept: t, serve: t }));

const OFFERS: Record<ResultForm, Offer[]> = {
  // In order of preference; the first is the default for an empty Accept or */* (JSON, what agents and most clients read).
  bindings: [...JSON_XML, ...[MEDIA.csv, MEDIA.tsv].map((t) => ({ accept: t, serve: t })), ...RESULT_ALIASES],
  // CSV and TSV are not defined for ASK (SPARQL 1.1 Query Results CSV and TSV Formats §1): 406.
  boolean: [...JSON_XML, ...RESULT_ALIASES],
  graph: [
    ...[MEDIA.turtle, MEDIA.ntriples, MEDIA.rdfxml].map((t) => ({ accept: t, serve: t })),
    { accept: 'application/x-turtle', serve: MEDIA.turtle },
    { accept: 'text/plain', serve: MEDIA.ntriples },
  ],
};

/** Parses an `Accept` header into media ranges with their q-values (RFC 9110 §12.5.1). */
export function parseAccept(header: string): { range: string; q: number }[] {
  return header
    .split(',')
    .map((part) => {
      const { type, params } = parseMediaType(part);
      const q = params.q === undefined ? 1 : Number(params.q);
      return { range: type, q: Number.isFinite(q) ? Math.min(Math.max(q, 0), 1) : 0 };
    })
    .filter((r) => r.range.length > 0);
}

/**
 * Chooses the media type of a response by the request's `Accept` header, honouring q-values, `*\/*`
 * and `type/*` (the most specific matching range decides a type's q). No header, or one that
 * matches anything, gives the default of the form: SPARQL JSON results, or Turtle for graphs.
 * @param accept the `Accept` header, if any
 * @param form what the query returns
 * @param except media types not on offer for this answer (e.g. the XML formats for an answer XML
 *   cannot carry, src/sparql/xml-chars.ts)
 * @returns the media type to serve, or undefined when nothing acceptable is on offer (→ 406)
 */
export function negotiate(accept: string | undefined, form: ResultForm, except: readonly string[] = []): string | undefined {
  const offers = except.length ? OFFERS[form].filter((o) => !except.includes(o.serve)) : OFFERS[form];
  if (!accept || accept.trim() === '') return offers[0]?.serve;
  const ranges = parseAccept(accept);
  let best: { offer: Offer; q: number } | undefined;
  for (const offer of offers) {
    const [t] = offer.accept.split('/');
    let match: { q: number; specificity: number } | undefined;
    for (const r of ranges) {
      const specificity = r.range === offer.accept ? 3 : r.range === `${t}/*` ? 2 : r.range === '*/*' ? 1 : 0;
      if (specificity > 0 && (!match || specificity > match.specificity)) match = { q: r.q, specificity };
    }
    if (match && match.q > 0 && (!best || match.q > best.q)) best = { offer, q: match.q };
  }
  return best?.offer.serve;
}

/** The media types a form can be served as (for 406 messages and the service description). */
export function offered(form: ResultForm): string[] {
  return [...new Set(OFFERS[form].map((o) => o.serve))];
}
