/**
 * The routes of `fkgqa serve`: which path asks for what (an endpoint's SPARQL or VoID path, the
 * federation endpoint, the server's own paths), the Host check against DNS rebinding, the answers of
 * the server's own paths, the CORS headers (`corsHeaders`: none unless `--cors-origin` allows the
 * request's origin), and the shape of every answer (`Answer`). Pure functions, testable without a server.
 */
import { MEDIA, parseAccept, ProtocolError, TIME_LIMIT_HEADER } from '../sparql/protocol.js';
import type { EndpointAnswer } from './answer.js';
import { CLIENT_HEADER, FEDERATION_PATH } from './defaults.js';
import type { RequestKind } from './request-log.js';

/** What a request path asks for. */
type RouteKind = 'sparql' | 'void' | 'index' | 'stats' | 'catalogue' | 'catalogue-json' | 'federation' | 'none';

/** The response headers a web page allowed by CORS may read besides the CORS-safelisted ones. */
const EXPOSED = 'Content-Type, Link, Fkgqa-Truncated, Fkgqa-Profile, Fkgqa-Stopped, Retry-After';

/**
 * Checks `--cors-origin` values: each `*` (any origin) or an origin, `http(s)://host[:port]` with
 * nothing after it (as a browser sends it in `Origin`).
 * @returns the origins, lower-cased
 * @throws Error naming the value that is not one
 */
export function corsOrigins(values: readonly string[]): string[] {
  return values.map((v) => {
    if (v === '*') return v;
    let origin: string | undefined;
    try {
      const u = new URL(v);
      origin = (u.protocol === 'http:' || u.protocol === 'https:') && u.origin === v.replace(/\/$/, '').toLowerCase() ? u.origin : undefined;
    } catch {
      origin = undefined;
    }
    if (!origin) throw new Error(`--cors-origin ${JSON.stringify(v)}: not an origin (http(s)://host[:port], as a browser sends it in Origin) nor *`);
    return origin;
  });
}

/**
 * The CORS headers of an answer to a request with this `Origin` (Fetch standard, CORS protocol).
 * None unless serve was told to allow that origin (`--cors-origin`): by default a web page in the
 * researcher's browser cannot read the endpoints or `/federation/sparql` (the page of any site the
 * browser visits could otherwise query them, and through the federation endpoint make serve send
 * requests). `*` among `allowed` allows every origin (`Access-Control-Allow-Origin: *`).
 * @param preflight also the headers of an answer to a CORS preflight (OPTIONS)
 */
export function corsHeaders(origin: string | undefined, allowed: readonly string[], preflight = false): Record<string, string> {
  if (allowed.length === 0) return {};
  const any = allowed.includes('*');
  const match = origin !== undefined && allowed.includes(origin.toLowerCase());
  if (!any && !match) return { Vary: 'Origin' };
  const headers: Record<string, string> = { 'Access-Control-Allow-Origin': any ? '*' : origin!, 'Access-Control-Expose-Headers': EXPOSED };
  if (!any) headers.Vary = 'Origin';
  if (preflight)
    Object.assign(headers, {
      'Access-Control-Allow-Methods': 'GET, POST, OPTIONS',
      'Access-Control-Allow-Headers': `Content-Type, Accept, ${TIME_LIMIT_HEADER}, ${CLIENT_HEADER}`,
      'Access-Control-Max-Age': '86400',
    });
  return headers;
}

/** An answer to send. */
export interface Answer extends EndpointAnswer {
  timeout?: true;
  /** The endpoint was busy: the query waited behind others (503, `Fkgqa-Stopped: busy`). */
  busy?: true;
  /** The client went away before the answer: nothing is sent (logged as status 499). */
  cancelled?: true;
  /** The store failed on the query (500): its engine or instance, not the query. */
  failed?: true;
  /** The query text, for the log file. */
  query?: string;
  /** `/federation/sparql`: the client the fair share counted the query to, for the log file. */
  client?: string;
  /** `/federation/sparql`: ms the query waited for the federation engine, for the log file. */
  waited?: number;
}

/** A plain-text answer (a newline is added when missing). */
export const text = (status: number, body: string, kind: RequestKind, headers?: Record<string, string>): Answer => ({
  status,
  body: body.endsWith('\n') ? body : `${body}\n`,
  type: 'text/plain; charset=utf-8',
  kind,
  headers,
});

/**
 * Resolves a request path to what it asks for: one endpoint's SPARQL or VoID path (`/<id>/sparql`,
 * `/<id>/.well-known/void`, or `/sparql` with a port per endpoint), the federation endpoint, the
 * server's own paths, or nothing.
 * @param byId the endpoint with an id, if any
 * @param only the endpoint of this port (`--port-per-endpoint`)
 * @throws ProtocolError 400 for a malformed percent-encoding in the path
 */
export function route<E>(pathname: string, byId: (id: string) => E | undefined, only?: E): { ep?: E; what: RouteKind } {
  if (pathname === '/') return { what: 'index' };
  if (pathname === FEDERATION_PATH) return { what: 'federation' };
  if (pathname === '/_stats') return { what: 'stats' };
  if (only) {
    if (pathname === '/sparql') return { ep: only, what: 'sparql' };
    if (pathname === '/.well-known/void') return { ep: only, what: 'void' };
    return { what: 'none' };
  }
  if (pathname === '/.well-known/void') return { what: 'catalogue' };
  if (pathname === '/catalogue.json') return { what: 'catalogue-json' };
  const m = /^\/([^/]+)\/(sparql|\.well-known\/void)$/.exec(pathname);
  if (!m) return { what: 'none' };
  let id: string;
  try {
    id = decodeURIComponent(m[1]);
  } catch {
    throw new ProtocolError(400, `the path ${pathname.slice(0, 200)} has a malformed percent-encoding`);
  }
  const ep = byId(id);
  if (!ep) return { what: 'none' };
  return { ep, what: m[2] === 'sparql' ? 'sparql' : 'void' };
}

/**
 * Whether a request's Host header names this server. Bound to a loopback interface (the
 * default), only loopback names are accepted, so a web page whose domain was rebound to
 * 127.0.0.1 cannot read the endpoints (as fkgqa mcp --http does); a request without Host
 * (HTTP/1.0) and servers bound to other interfaces accept any.
 * @param bound the interface the server is bound to
 */
export function hostAllowed(bound: string, header: string | undefined): boolean {
  if (!header || !/^(127\.\d+\.\d+\.\d+|::1|\[::1\]|localhost)$/i.test(bound)) return true;
  const name = header.replace(/:\d+$/, '').toLowerCase();
  return /^127\.\d+\.\d+\.\d+$/.test(name) || name === 'localhost' || name === '[::1]';
}

/**
 * Whether a request for `/` asks for the query page rather than the endpoints file: its `Accept`
 * names `text/html` explicitly and rates it above JSON (a browser: `text/html,…,*\/*;q=0.8`). No
 * header, `*\/*` alone (curl, fetch) or `application/json` keep the endpoints file, as before the page.
 */
export function prefersHtml(accept: string | undefined): boolean {
  if (!accept) return false;
  const ranges = parseAccept(accept);
  const q = (type: string) => {
    const [t] = type.split('/');
    const r = ranges.find((x) => x.range === type) ?? ranges.find((x) => x.range === `${t}/*`) ?? ranges.find((x) => x.range === '*/*');
    return r?.q ?? 0;
  };
  return ranges.some((r) => r.range === 'text/html' && r.q > 0) && q('text/html') > q('application/json');
}

/** What the server's own paths show. */
interface ServerPaths {
  /** `GET /`: the endpoints file. */
  endpointsFile(): unknown;
  /** `GET /` from a browser (`prefersHtml`): the query page and its headers (query-page.ts), for the request's Host. */
  queryPage?(host: string | undefined): { html: string; headers: Record<string, string> };
  /** `GET /_stats`: request counts per endpoint and kind. */
  counts(): unknown;
  /** The catalogue with live URLs, or undefined when the build has none. */
  catalogue(file: 'catalogue.ttl' | 'catalogue.json'): string | undefined;
  portPerEndpoint: boolean;
}

/**
 * `/` (the endpoints file, or the query page for a browser), `/_stats`, the root `/.well-known/void`
 * and `/catalogue.json` (the catalogue), unknown paths.
 * @param request the request's `Accept` and `Host` headers
 */
export function serverPathAnswer(what: RouteKind, method: string, server: ServerPaths, request: { accept?: string; host?: string } = {}): Answer {
  const paths = server.portPerEndpoint ? '/sparql and /.well-known/void' : '/<endpoint>/sparql and /<endpoint>/.well-known/void';
  // An unknown path is not found whatever the method (a POST to /nope/sparql is 404, not 405).
  if (what === 'none') return text(404, `not found: endpoints are at ${paths}; GET / lists them`, 'other');
  if (method !== 'GET' && method !== 'HEAD') return text(405, `method ${method} is not allowed here: use GET`, 'other', { Allow: 'GET, OPTIONS' });
  const json = (v: unknown): Answer => ({ status: 200, body: JSON.stringify(v, null, 2) + '\n', type: 'application/json', kind: 'other' });
  if (what === 'index' && server.queryPage && prefersHtml(request.accept)) {
    const page = server.queryPage(request.host);
    return { status: 200, body: page.html, type: 'text/html; charset=utf-8', kind: 'other', headers: { ...page.headers, Vary: 'Accept' } };
  }
  if (what === 'index') return { ...json(server.endpointsFile()), headers: { Vary: 'Accept' } };
  if (what === 'stats') return json(server.counts());
  if (what === 'catalogue' || what === 'catalogue-json') {
    const file = what === 'catalogue' ? 'catalogue.ttl' : 'catalogue.json';
    const body = server.catalogue(file);
    if (!body) return text(404, `no VoID catalogue in this build (${file} is written by the VoID build)`, 'void');
    return { status: 200, body, type: what === 'catalogue' ? `${MEDIA.turtle}; charset=utf-8` : 'application/json', kind: 'void' };
  }
  return text(404, `not found: endpoints are at ${paths}; GET / lists them`, 'other');
}
