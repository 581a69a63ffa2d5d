/**
 * `fkgqa serve`: every shard of a build served as its own SPARQL endpoint (SPARQL 1.1 Protocol),
 * each backed by an oxigraph store in a worker thread (pitfall B10), with service description,
 * VoID, behaviour profiles and a request log.
 *
 * The main thread only reads requests, applies the text guard (guard.ts) and forwards query texts;
 * parsing, evaluation and serialisation run in the endpoint's worker under the time limit
 * (answer.ts). Every request path has an error boundary: a bad request is a 4xx, an internal error
 * a 500, never an exit. A worker whose engine faulted is replaced (StoreWorker). The build folder
 * is never written: runtime state goes to the state folder (run-state.ts), VoID and catalogue are
 * served with the live URLs filled in (live-void.ts).
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { graphShards, openBuild } from '../build/open.js';
import { InputError } from '../common/errors.js';
import { STATE_FILES, stateDir } from '../build/state.js';
import { StoreWorker, type StoreSource } from '../common/store-worker.js';
import { TOOL } from '../common/version.js';
import type { EndpointAnswer, EndpointTask } from './answer.js';
import { checkQueryText, MAX_QUERY_DEPTH } from '../sparql/guard.js';
import { LiveDescriptions } from './live-void.js';
import { profileFor, readProfileConfig, type EndpointProfile, type ProfileConfig } from './profile.js';
import { seededRandom } from '../common/random.js';
import { MEDIA, negotiate, parseProtocolRequest, ProtocolError, readBody, strictSearchParams, type ProtocolRequest } from '../sparql/protocol.js';
import type { RequestKind } from './request-log.js';
import { REQUEST_LOG_MAX_BYTES, RequestLog, type RequestLogEntry } from './request-log.js';
import { acquireServeLock, releaseServeState } from './state.js';
import type { EndpointEntry, EndpointsFileContents, ServeOwner } from '../build/state.js';
import { writeFileAtomic } from '../common/output.js';
import { serviceDescription } from './service-description.js';
import { FEDERATION_PATH, FederationEndpoint } from './federation-endpoint.js';
import type { EndpointLauncher } from '../federation/registry.js';
import { registryFromEndpointsValue } from '../federation/registry.js';

/** Options of `serve`. */
export interface ServeOptions {
  /** Directory of a `fkgqa partition` build (`<kg>/manifest.json`, `<kg>/shard<N>.nt`). */
  shards: string;
  /** Interface to bind (default `127.0.0.1`, loopback only). */
  host?: string;
  /** Port (default 0: any free port). With `portPerEndpoint`, the first port; endpoints take consecutive ports (0: each any free port). */
  port?: number;
  /** One port per endpoint (`http://host:port/sparql`) instead of one path per endpoint on one port. */
  portPerEndpoint?: boolean;
  /** Serve only these graphs (default all graphs of the build). */
  kgs?: string[];
  /** Also serve each unsharded graph (the union of its shards) as endpoint `<kg>`. */
  withOriginals?: boolean;
  /** Time limit of one query in ms (default 30,000); a query over it is stopped and answered 503. */
  timeoutMs?: number;
  /** Largest request body accepted, in bytes (default 1 MiB); larger bodies get 413. Also the longest query text (characters) accepted, GET or POST (400). */
  maxBodyBytes?: number;
  /** Deepest bracket nesting of a query accepted (default MAX_QUERY_DEPTH = 64); deeper ones get 400 before any parsing. */
  maxQueryDepth?: number;
  /** Behaviour profiles: a profile file path, or the configuration itself (default none). */
  profiles?: string | ProfileConfig;
  /**
   * Worker threads: `shard` (default) gives every endpoint its own store and thread, so a slow query
   * on one endpoint never delays another; `graph` puts all shards of a graph in one store (each in
   * its own named graph), saving memory, but endpoints of one graph then wait for each other.
   */
  workerPer?: 'shard' | 'graph';
  /**
   * Append every request as a JSON line to this file; `true`: to `requests.jsonl` in the state
   * folder (default none; counts are always kept). Capped at `requestLogMaxBytes`, then rotated.
   */
  requestLog?: string | true;
  /** Size cap of the request log file in bytes (default 64 MiB); over it the file is rotated to `.1`. */
  requestLogMaxBytes?: number;
  /** The state folder (default `<shards>.state/`, see src/common/state.ts). */
  state?: string;
  /**
   * Take the state folder's serve lock and write `endpoints.json` there (default true). Without,
   * nothing at all is written (in-process use, e.g. verify starting its own endpoints).
   */
  writeFiles?: boolean;
  /** The federation engine of `/federation/sparql`, by `--federation-engine` name (default `comunica`; src/federation/engine.ts). */
  federationEngine?: string;
  /** Progress lines (stderr in the CLI). */
  progress?: (line: string) => void;
}

/** One endpoint of this server, as listed in `endpoints.json` (EndpointEntry with serve's profile type). */
export interface EndpointInfo extends EndpointEntry {
  /** Its behaviour profile, or null (complete and reliable). */
  profile: EndpointProfile | null;
}

/** The contents of `endpoints.json` as this server writes it. */
export interface EndpointsFile extends EndpointsFileContents {
  endpoints: EndpointInfo[];
}

interface Endpoint {
  info: EndpointInfo;
  store: StoreWorker;
  /** Named graphs that form the endpoint's default graph when stores hold several shards. */
  defaultGraphs?: string[];
  /** URL of the endpoint's VoID route. */
  voidUrl?: string;
  profile?: EndpointProfile;
  random: () => number;
  /** Service descriptions already written, by media type and VoID link. */
  sd: Map<string, string>;
}

const DEFAULTS = { host: '127.0.0.1', timeoutMs: 30_000, maxBodyBytes: 1 << 20 };

/** Named graph holding a shard when several shards share one store (`workerPer: 'graph'`). */
function shardGraphIri(endpoint: string): string {
  return `urn:fkgqa:shard:${encodeURIComponent(endpoint)}`;
}

/** Runs `fn` over `items` with at most `limit` running at once. */
async function pool<T, R>(items: T[], limit: number, fn: (x: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const run = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, run));
  return out;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const CORS = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Expose-Headers': 'Content-Type, Link, Fkgqa-Truncated, Fkgqa-Profile',
};

/** An answer to send. */
interface Answer extends EndpointAnswer {
  timeout?: true;
  /** The query text, for the log file. */
  query?: string;
}

const text = (status: number, body: string, kind: RequestKind, headers?: Record<string, string>): Answer => ({
  status,
  body: body.endsWith('\n') ? body : `${body}\n`,
  type: 'text/plain; charset=utf-8',
  kind,
  headers,
});

/** The endpoint worker script (src/serve/endpoint-thread.ts), relative to `dist/`. */
const ENDPOINT_THREAD = 'serve/endpoint-thread.js';

/**
 * A running set of shard endpoints. Create with `serve`; stop with `close`.
 */
export class ShardServer {
  /** The endpoints, in the order of `endpoints.json`. */
  readonly endpoints: EndpointInfo[] = [];
  /** The request log (counts per endpoint and kind; its file is opened once the state folder's lock is taken). */
  log: RequestLog;
  /** Milliseconds from the call of `serve` until every endpoint answered. */
  startupMs = 0;
  /** The state folder (absolute), whether or not anything was written there. */
  readonly stateDir: string;
  /** The request log file, if any. */
  readonly requestLogFile: string | undefined;
  private readonly byId = new Map<string, Endpoint>();
  private readonly servers: http.Server[] = [];
  private readonly stores: StoreWorker[] = [];
  private readonly timeoutMs: number;
  private readonly maxBodyBytes: number;
  private readonly maxQueryDepth: number;
  private live: LiveDescriptions | undefined;
  private owner: ServeOwner | undefined;
  private profileFile: string | null = null;
  private outputDigest: string | undefined;
  /** `/federation/sparql`: SERVICE queries over the shard endpoints (src/serve/federation.ts). */
  private federation: FederationEndpoint | undefined;
  private closed = false;

  /** @internal use `serve` */
  constructor(private readonly options: ServeOptions) {
    this.timeoutMs = options.timeoutMs ?? DEFAULTS.timeoutMs;
    this.maxBodyBytes = options.maxBodyBytes ?? DEFAULTS.maxBodyBytes;
    this.maxQueryDepth = options.maxQueryDepth ?? MAX_QUERY_DEPTH;
    this.stateDir = stateDir(options.shards, options.state);
    this.requestLogFile = options.requestLog === true ? path.join(this.stateDir, STATE_FILES.requestLog) : options.requestLog;
    this.log = new RequestLog(undefined);
  }

  /** The endpoint with this id. */
  endpoint(id: string): EndpointInfo | undefined {
    return this.byId.get(id)?.info;
  }

  /** Restarts of the endpoint's store worker so far (after timeouts and engine faults). */
  restartsOf(id: string): { restarts: number; faults: number } | undefined {
    const s = this.byId.get(id)?.store;
    return s ? { restarts: s.restarts, faults: s.faults } : undefined;
  }

  /** @internal loads the stores and starts listening */
  async start(): Promise<void> {
    const t0 = performance.now();
    const o = this.options;
    const progress = o.progress ?? (() => {});
    const opened = openBuild(o.shards, { kgs: o.kgs });
    this.outputDigest = opened.build.outputDigest;
    const build = graphShards(opened);
    const profiles = typeof o.profiles === 'string' ? readProfileConfig(o.profiles) : o.profiles;
    this.profileFile = profiles && typeof o.profiles === 'string' ? path.resolve(o.profiles) : null;
    // Before any loading: a second serve with the same state folder stops here (exit 2).
    if (o.writeFiles !== false) this.owner = acquireServeLock(this.stateDir, o.shards);
    if (this.requestLogFile) {
      fs.mkdirSync(path.dirname(this.requestLogFile), { recursive: true });
      this.log = new RequestLog(this.requestLogFile, o.requestLogMaxBytes ?? REQUEST_LOG_MAX_BYTES);
    }
    const workerPer = o.workerPer ?? 'shard';
    const shardCount = build.reduce((n, g) => n + g.shards.length, 0);
    const plannedEndpoints = shardCount + (o.withOriginals ? build.length : 0);
    const workers = workerPer === 'graph' ? build.length : plannedEndpoints;
    progress(`fkgqa serve: ${build.length} graphs, ${shardCount} shards${o.withOriginals ? ` + ${build.length} unsharded graphs` : ''}; loading ${workers} oxigraph stores in worker threads`);

    type Planned = { id: string; graph: string; shard: string | null; triples: number; sources: StoreSource[]; group?: string; defaultGraphs?: string[] };
    const planned: Planned[] = [];
    for (const g of build) {
      for (const s of g.shards) {
        planned.push({
          id: s.endpoint,
          graph: g.graph,
          shard: s.name,
          triples: s.triples,
          sources: [{ file: s.file, format: 'application/n-triples' }],
          ...(workerPer === 'graph' ? { group: g.graph, defaultGraphs: [shardGraphIri(s.endpoint)] } : {}),
        });
      }
      if (o.withOriginals) {
        planned.push({
          id: g.graph,
          graph: g.graph,
          shard: null,
          triples: g.shards.reduce((n, s) => n + s.triples, 0),
          // The union of the shards equals the (skolemised) input: guarantee 1 of the build.
          sources: g.shards.map((s) => ({ file: s.file, format: 'application/n-triples' })),
          ...(workerPer === 'graph' ? { group: g.graph, defaultGraphs: g.shards.map((s) => shardGraphIri(s.endpoint)) } : {}),
        });
      }
    }

    // Stores: one per endpoint, or one per graph holding every shard in its own named graph.
    const jobs = new Map<string, StoreSource[]>();
    for (const p of planned) {
      if (p.group) {
        if (!jobs.has(p.group)) {
          const g = build.find((b) => b.graph === p.group)!;
          jobs.set(p.group, g.shards.map((s) => ({ file: s.file, format: 'application/n-triples', graph: shardGraphIri(s.endpoint) })));
        }
      } else jobs.set(p.id, p.sources);
    }
    const stores = new Map<string, StoreWorker>();
    let loaded = 0;
    const keys = [...jobs.keys()];
    // Loading is CPU-bound (WASM compile + parse); a few at a time keeps memory peaks moderate.
    await pool(keys, Math.max(2, os.availableParallelism()), async (k) => {
      const t = performance.now();
      try {
        const w = await StoreWorker.start(jobs.get(k)!, { script: ENDPOINT_THREAD });
        stores.set(k, w);
        this.stores.push(w);
      } catch (e) {
        throw new InputError(`could not load store ${k}: ${(e as Error).message}`, { file: jobs.get(k)![0]?.file });
      }
      loaded++;
      progress(`  loaded ${k} (${stores.get(k)!.triples} triples, ${((performance.now() - t) / 1000).toFixed(2)} s) [${loaded}/${keys.length}]`);
    });

    for (const p of planned) {
      const profile = profileFor(profiles, p.id, p.graph);
      const ep: Endpoint = {
        info: { id: p.id, graph: p.graph, role: p.shard ? 'shard' : 'original', shard: p.shard, url: '', void: null, triples: p.triples, profile: profile ?? null },
        store: stores.get(p.group ?? p.id)!,
        defaultGraphs: p.defaultGraphs,
        profile,
        random: seededRandom(profile?.seed ?? 0, p.id),
        sd: new Map(),
      };
      this.byId.set(p.id, ep);
      this.endpoints.push(ep.info);
    }

    await this.listen();
    this.live = new LiveDescriptions(
      o.shards,
      [...this.byId.values()].filter((e) => e.info.shard).map((e) => ({ id: e.info.id, graph: e.info.graph, shard: e.info.shard!, url: e.info.url })),
    );
    for (const ep of this.byId.values()) ep.info.void = this.liveShard(ep) && this.live.has(this.liveShard(ep)!) ? ep.voidUrl! : null;
    const fedUrl = this.endpoints[0] ? `${new URL(this.endpoints[0].url).origin}${FEDERATION_PATH}` : FEDERATION_PATH;
    this.federation = new FederationEndpoint(() => registryFromEndpointsValue(this.endpointsFile(), 'serve'), () => fedUrl, {
      timeoutMs: this.timeoutMs,
      maxBodyBytes: this.maxBodyBytes,
      ...(o.federationEngine ? { federationEngine: o.federationEngine } : {}),
    });
    this.startupMs = performance.now() - t0;
    if (this.owner) {
      writeFileAtomic(path.join(this.stateDir, STATE_FILES.endpoints), JSON.stringify(this.endpointsFile(), null, 2) + '\n');
      progress(`  endpoints: ${path.join(this.stateDir, STATE_FILES.endpoints)}`);
    }
    progress(`fkgqa serve: ${this.endpoints.length} endpoints up in ${(this.startupMs / 1000).toFixed(2)} s`);
  }

  private async listen(): Promise<void> {
    const o = this.options;
    const host = o.host ?? DEFAULTS.host;
    const urlHost = host === '0.0.0.0' || host === '::' ? os.hostname() : host.includes(':') ? `[${host}]` : host;
    const bind = (port: number, only?: Endpoint) =>
      new Promise<number>((resolve, reject) => {
        const server = http.createServer((req, res) => {
          this.handle(req, res, only).catch((e) => this.lastResort(res, e));
        });
        // Longer than clients keep idle sockets (Comunica's fetch reuses sockets idle for ~5 s; a
        // 5 s server timeout raced with it and failed queries with "other side closed").
        server.keepAliveTimeout = 65_000;
        server.headersTimeout = 66_000;
        server.once('error', reject);
        server.listen(port, host, () => {
          server.off('error', reject);
          // After startup, a server error (e.g. from a socket) is not a reason to exit.
          server.on('error', (e) => o.progress?.(`fkgqa serve: server error: ${e.message}`));
          this.servers.push(server);
          resolve((server.address() as AddressInfo).port);
        });
      });
    if (o.portPerEndpoint) {
      let i = 0;
      for (const ep of this.byId.values()) {
        const port = await bind(o.port ? o.port + i++ : 0, ep);
        this.setUrls(ep, `http://${urlHost}:${port}`);
      }
    } else {
      const port = await bind(o.port ?? 0);
      for (const ep of this.byId.values()) this.setUrls(ep, `http://${urlHost}:${port}/${encodeURIComponent(ep.info.id)}`);
    }
  }

  /** Answers 500 when handling a request failed outside every other boundary (never rethrows). */
  private lastResort(res: http.ServerResponse, e: unknown): void {
    try {
      this.options.progress?.(`fkgqa serve: internal error: ${(e as Error)?.message ?? String(e)}`);
      if (!res.headersSent) {
        res.writeHead(500, { ...CORS, 'Content-Type': 'text/plain; charset=utf-8', Connection: 'close' });
        res.end(`internal error: ${(e as Error)?.message ?? String(e)}\n`);
      } else res.destroy();
    } catch {
      res.destroy();
    }
  }

  private setUrls(ep: Endpoint, base: string): void {
    ep.info.url = `${base}/sparql`;
    ep.voidUrl = `${base}/.well-known/void`;
  }

  private liveShard(ep: Endpoint) {
    return ep.info.shard ? { id: ep.info.id, graph: ep.info.graph, shard: ep.info.shard, url: ep.info.url } : undefined;
  }

  /** The endpoint's VoID with its live URL, if the build has a VoID file for it. */
  private voidOf(ep: Endpoint): string | undefined {
    const s = this.liveShard(ep);
    return s && this.live ? this.live.void(s) : undefined;
  }

  /** The contents of `endpoints.json`. */
  endpointsFile(): EndpointsFile {
    return {
      tool: { name: TOOL.name, version: TOOL.version },
      shards: path.resolve(this.options.shards),
      ...(this.outputDigest ? { outputDigest: this.outputDigest } : {}),
      ...(this.owner ?? {}),
      timeoutMs: this.timeoutMs,
      maxBodyBytes: this.maxBodyBytes,
      profileFile: this.profileFile,
      endpoints: this.endpoints,
    };
  }

  /** Resolves a request path to what it asks for. */
  private route(pathname: string, only?: Endpoint): { ep?: Endpoint; what: 'sparql' | 'void' | 'index' | 'stats' | 'catalogue' | 'catalogue-json' | 'federation' | 'none' } {
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
    const ep = this.byId.get(id);
    if (!ep) return { what: 'none' };
    return { ep, what: m[2] === 'sparql' ? 'sparql' : 'void' };
  }

  /**
   * Whether a request's Host header names this server. Bound to a loopback interface (the
   * default), only loopback names are accepted, so a web page whose domain was rebound to
   * 127.0.0.1 cannot read the endpoints (as fkgqa mcp --http does); a request without Host
   * (HTTP/1.0) and servers bound to other interfaces accept any.
   */
  private hostAllowed(header: string | undefined): boolean {
    const bound = this.options.host ?? DEFAULTS.host;
    if (!header || !/^(127\.\d+\.\d+\.\d+|::1|\[::1\]|localhost)$/i.test(bound)) return true;
    const name = header.replace(/:\d+$/, '').toLowerCase();
    return /^127\.\d+\.\d+\.\d+$/.test(name) || name === 'localhost' || name === '[::1]';
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse, only?: Endpoint): Promise<void> {
    const started = performance.now();
    const time = new Date().toISOString();
    let ep: Endpoint | undefined;
    let answer: Answer;
    try {
      let url: URL;
      try {
        url = new URL(req.url ?? '/', 'http://localhost');
      } catch {
        throw new ProtocolError(400, `the request target is not a valid URL path: ${String(req.url).slice(0, 200)}`);
      }
      if (!this.hostAllowed(req.headers.host)) {
        throw new ProtocolError(403, `Host "${String(req.headers.host).slice(0, 100)}" is not a name of this loopback server (a guard against DNS rebinding): use 127.0.0.1, localhost or [::1]`);
      }
      const route = this.route(url.pathname, only);
      ep = route.ep;
      if (req.method === 'OPTIONS') {
        req.resume();
        answer = { status: 204, body: '', type: 'text/plain', kind: 'other', headers: { 'Access-Control-Allow-Methods': 'GET, POST, OPTIONS', 'Access-Control-Allow-Headers': 'Content-Type, Accept', 'Access-Control-Max-Age': '86400' } };
      } else if (route.what === 'sparql') answer = await this.sparql(req, url, ep!);
      else if (route.what === 'void') answer = await this.voidFile(req, ep!);
      else if (route.what === 'federation') answer = await this.federation!.handle(req, url);
      else {
        req.resume();
        answer = this.serverPath(route.what, req.method ?? 'GET');
      }
    } catch (e) {
      req.resume();
      answer = e instanceof ProtocolError ? text(e.status, e.message, 'invalid', e.headers) : text(500, `internal error: ${(e as Error)?.message ?? String(e)}`, 'invalid');
    }
    const body = Buffer.from(answer.body, 'utf8');
    const headers: Record<string, string | number> = { ...CORS, 'Content-Type': answer.type, 'Content-Length': body.length, ...answer.headers };
    if (answer.status === 413) headers.Connection = 'close';
    const a = answer;
    res.once('close', () => {
      try {
        this.log.record({
          time,
          endpoint: ep?.info.id ?? '-',
          kind: a.kind,
          method: req.method ?? '?',
          status: a.status,
          ms: Math.round((performance.now() - started) * 10) / 10,
          bytes: body.length,
          ...(a.profile ? { profile: a.profile } : {}),
          ...(a.timeout ? { timeout: true as const } : {}),
          ...(a.query !== undefined ? { query: a.query } : {}),
        });
      } catch (e) {
        this.options.progress?.(`fkgqa serve: request log: ${(e as Error).message}`);
      }
    });
    res.writeHead(answer.status, headers);
    res.end(req.method === 'HEAD' ? undefined : body);
  }

  /** `/`, `/_stats`, the root `/.well-known/void` and `/catalogue.json` (the catalogue), unknown paths. */
  private serverPath(what: string, method: string): Answer {
    if (method !== 'GET' && method !== 'HEAD') return text(405, `method ${method} is not allowed here: use GET`, 'other', { Allow: 'GET, OPTIONS' });
    const json = (v: unknown): Answer => ({ status: 200, body: JSON.stringify(v, null, 2) + '\n', type: 'application/json', kind: 'other' });
    if (what === 'index') return json(this.endpointsFile());
    if (what === 'stats') return json(this.log.counts());
    if (what === 'catalogue' || what === 'catalogue-json') {
      const file = what === 'catalogue' ? 'catalogue.ttl' : 'catalogue.json';
      const body = this.live?.catalogue(file);
      if (!body) return text(404, `no VoID catalogue in this build (${file} is written by the VoID build)`, 'void');
      return { status: 200, body, type: what === 'catalogue' ? `${MEDIA.turtle}; charset=utf-8` : 'application/json', kind: 'void' };
    }
    const paths = this.options.portPerEndpoint ? '/sparql and /.well-known/void' : '/<endpoint>/sparql and /<endpoint>/.well-known/void';
    return text(404, `not found: endpoints are at ${paths}; GET / lists them`, 'other');
  }

  private async applyLatency(ep: Endpoint): Promise<void> {
    const p = ep.profile;
    if (!p || (!p.latencyMs && !p.jitterMs)) return;
    await sleep((p.latencyMs ?? 0) + (p.jitterMs ? Math.floor(ep.random() * p.jitterMs) : 0));
  }

  private async voidFile(req: http.IncomingMessage, ep: Endpoint): Promise<Answer> {
    req.resume();
    if (req.method !== 'GET' && req.method !== 'HEAD') return text(405, `method ${req.method} is not allowed here: use GET`, 'void', { Allow: 'GET, OPTIONS' });
    await this.applyLatency(ep);
    const body = this.voidOf(ep);
    if (!body) {
      return text(404, `no VoID description for ${ep.info.id}: the build has no ${ep.info.shard ? `${ep.info.graph}/${ep.info.shard}_void.ttl` : 'VoID for unsharded graphs'} (VoID files are written by the VoID build)`, 'void');
    }
    return { status: 200, body, type: `${MEDIA.turtle}; charset=utf-8`, kind: 'void' };
  }

  /** The SPARQL endpoint: service description or query (SPARQL 1.1 Protocol §2.1). */
  private async sparql(req: http.IncomingMessage, url: URL, ep: Endpoint): Promise<Answer> {
    const method = req.method ?? 'GET';
    let body: Buffer | undefined;
    if (method === 'POST') body = await readBody(req, this.maxBodyBytes);
    else req.resume();
    const request = parseProtocolRequest(method, strictSearchParams(url.search), req.headers['content-type'], body);
    if (request.type === 'query') {
      try {
        checkQueryText(request.query, { maxLength: this.maxBodyBytes, maxDepth: this.maxQueryDepth });
      } catch (e) {
        if (e instanceof ProtocolError) return { ...text(e.status, e.message, 'invalid'), query: request.query.slice(0, 10_000) };
        throw e;
      }
    }
    await this.applyLatency(ep);
    if (request.type === 'service-description') {
      const accept = req.headers.accept;
      // An RDF serialisation the client accepts, else Turtle: a probe must never fail (pitfall B6).
      const format = negotiate(accept, 'graph') === MEDIA.ntriples ? MEDIA.ntriples : MEDIA.turtle;
      const info = ep.info;
      // The build may gain (or lose) its VoID files while serving: looked for on every probe.
      const shard = this.liveShard(ep);
      const voidUrl = shard && this.live?.has(shard) ? ep.voidUrl : undefined;
      const key = `${format} ${voidUrl ?? ''}`;
      let sd = ep.sd.get(key);
      if (sd === undefined) {
        const title = info.shard ? `${info.id}: ${info.shard} of graph ${info.graph}` : `${info.id}: graph ${info.graph}, unsharded`;
        sd = await serviceDescription({ url: info.url, title, triples: info.triples, voidUrl }, format);
        ep.sd.set(key, sd);
      }
      return { status: 200, body: sd, type: `${format}; charset=utf-8`, kind: 'service-description', headers: voidUrl ? { Link: `<${voidUrl}>; rel="describedby"` } : {} };
    }
    return { ...(await this.query(ep, request, req.headers.accept)), query: request.query };
  }

  /** Sends a query to the endpoint's worker, which answers it whole (answer.ts), under the time limit. */
  private async query(ep: Endpoint, request: Extract<ProtocolRequest, { type: 'query' }>, accept: string | undefined): Promise<Answer> {
    const p = ep.profile;
    // Drawn for every query request that reaches the endpoint, so the same request sequence fails the same way.
    const fail = p?.failureRate ? ep.random() < p.failureRate : false;
    const task: EndpointTask = {
      endpoint: ep.info.id,
      query: request.query,
      ...(accept !== undefined ? { accept } : {}),
      protocolDataset: request.defaultGraphs.length > 0 || request.namedGraphs.length > 0,
      ...(ep.defaultGraphs ? { defaultGraphs: ep.defaultGraphs } : {}),
      ...(p?.refuse ? { refuse: p.refuse } : {}),
      ...(p?.maxRows !== undefined ? { maxRows: p.maxRows } : {}),
      ...(fail ? { failStatus: p?.failureStatus ?? 503 } : {}),
    };
    const outcome = await ep.store.run<EndpointAnswer>(task, this.timeoutMs);
    if (outcome.status === 'timeout') return { ...text(503, `query stopped at the time limit of ${this.timeoutMs} ms`, 'data'), timeout: true };
    if (outcome.status === 'error') {
      if (outcome.fault) {
        return text(500, `query evaluation failed: the query engine of ${ep.info.id} faulted (${outcome.error}); the endpoint was restarted from its shard file and answers further queries`, 'invalid');
      }
      return text(500, `query evaluation failed: ${outcome.error}`, 'invalid');
    }
    return outcome.value;
  }

  /** Stops listening, closes open connections, stops the workers, closes the log and removes `endpoints.json` and the lock. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all(
      this.servers.map(
        (s) =>
          new Promise<void>((resolve) => {
            s.close(() => resolve());
            s.closeAllConnections();
          }),
      ),
    );
    await Promise.all(this.stores.map((w) => w.close()));
    await this.federation?.close();
    await this.log.close();
    if (this.owner) releaseServeState(this.stateDir);
  }
}

/**
 * Starts the endpoints of a build: takes the state folder's serve lock, loads every shard (and with
 * `withOriginals` every unsharded graph) into oxigraph stores in worker threads, listens, and writes
 * `endpoints.json` into the state folder. Writes nothing into the build.
 * @throws InputError for a missing build, unknown graph, bad profile file, a shard that does not load,
 *   or a state folder in use by a running serve (naming its pid)
 * @throws Error (EADDRINUSE…) when a port cannot be bound
 */
export async function serve(options: ServeOptions): Promise<ShardServer> {
  const server = new ShardServer(options);
  try {
    await server.start();
  } catch (e) {
    await server.close();
    throw e;
  }
  return server;
}

/**
 * Starts a build's endpoints in this process without writing anything (no lock, no endpoints.json):
 * the `EndpointLauncher` that the library entry point gives to `verify` and the MCP gold check.
 */
export const launchEndpoints: EndpointLauncher = (o) => serve({ shards: o.shards, kgs: o.kgs, timeoutMs: o.timeoutMs, writeFiles: false });
