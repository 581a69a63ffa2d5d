/**
 * `fkgqa serve`: every shard of a build served as its own SPARQL endpoint (SPARQL 1.1 Protocol),
 * each backed by an oxigraph store in a worker thread (pitfall B10), with service description,
 * VoID, behaviour profiles and a request log.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { InputError } from '../common/errors.js';
import { writeJson } from '../common/output.js';
import { StoreWorker, type StoreSource } from '../common/store-worker.js';
import { TOOL } from '../version.js';
import { setEndpoints } from '../describe/index.js';
import { profileFor, readProfileConfig, seededRandom, type EndpointProfile, type ProfileConfig } from './profile.js';
import { MEDIA, negotiate, offered, parseProtocolRequest, ProtocolError, readBody, type ProtocolRequest } from './protocol.js';
import { inspectQuery, type RequestKind } from './query-info.js';
import { RequestLog, type RequestLogEntry } from './request-log.js';
import { serializeResults, truncateBindings, truncateNTriples, type JsonResults } from './results.js';
import { serviceDescription } from './service-description.js';
import { FEDERATION_PATH, FederationEndpoint } from './federation.js';
import { registryFromEndpointsValue } from '../mcp/registry.js';

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
  /** Largest request body accepted, in bytes (default 1 MiB); larger bodies get 413. */
  maxBodyBytes?: number;
  /** Behaviour profiles: a profile file path, or the configuration itself (default none). */
  profiles?: string | ProfileConfig;
  /**
   * Worker threads: `shard` (default) gives every endpoint its own store and thread, so a slow query
   * on one endpoint never delays another; `graph` puts all shards of a graph in one store (each in
   * its own named graph), saving memory, but endpoints of one graph then wait for each other.
   */
  workerPer?: 'shard' | 'graph';
  /** Append every request as a JSON line to this file (default none; counts are always kept). */
  requestLog?: string;
  /** Write `<shards>/endpoints.json` and fill `catalogue.json` (default true). */
  writeFiles?: boolean;
  /** Progress lines (stderr in the CLI). */
  progress?: (line: string) => void;
}

/** One endpoint, as listed in `endpoints.json`. */
export interface EndpointInfo {
  /** `<kg>-shard<N>` (the name in the manifest), or `<kg>` for an unsharded graph. */
  id: string;
  graph: string;
  role: 'shard' | 'original';
  /** `shard<N>`, or null for an unsharded graph. */
  shard: string | null;
  /** The SPARQL endpoint URL. */
  url: string;
  /** URL of the endpoint's VoID (`…/.well-known/void`), or null when the build has no VoID file for it. */
  void: string | null;
  /** Triples the endpoint serves. */
  triples: number;
  /** Its behaviour profile, or null (complete and reliable). */
  profile: EndpointProfile | null;
}

/** The contents of `endpoints.json`. */
export interface EndpointsFile {
  tool: { name: string; version: string };
  /** Absolute path of the build directory. */
  shards: string;
  timeoutMs: number;
  maxBodyBytes: number;
  /** The profile file, when profiles were given as a file. */
  profileFile: string | null;
  endpoints: EndpointInfo[];
}

interface Endpoint {
  info: EndpointInfo;
  store: StoreWorker;
  /** Named graphs that form the endpoint's default graph when stores hold several shards. */
  defaultGraphs?: string[];
  /** Where the endpoint's VoID file is (or would be). */
  voidFile?: string;
  /** URL of the endpoint's VoID route. */
  voidUrl?: string;
  profile?: EndpointProfile;
  random: () => number;
}

/** The shards of one graph in a build. */
interface GraphShards {
  graph: string;
  shards: { name: string; endpoint: string; file: string; triples: number }[];
}

const DEFAULTS = { host: '127.0.0.1', timeoutMs: 30_000, maxBodyBytes: 1 << 20 };

/**
 * Reads the shards of a build from its manifests, graphs and shards in order (graph name, then
 * shard number).
 * @throws InputError when the directory has no build or a requested graph is not in it
 */
export function readBuild(dir: string, kgs?: string[]): GraphShards[] {
  if (!fs.existsSync(dir)) throw new InputError('shards directory not found (run fkgqa partition first)', { file: dir });
  const graphs = fs
    .readdirSync(dir)
    .filter((n) => fs.existsSync(path.join(dir, n, 'manifest.json')))
    .sort();
  if (graphs.length === 0) throw new InputError('no <kg>/manifest.json here: not a fkgqa partition build', { file: dir });
  for (const k of kgs ?? []) if (!graphs.includes(k)) throw new InputError(`graph ${k} is not in the build (graphs: ${graphs.join(', ')})`, { file: dir });
  const num = (name: string) => Number(/(\d+)$/.exec(name)?.[1] ?? 0);
  return graphs
    .filter((g) => !kgs || kgs.length === 0 || kgs.includes(g))
    .map((graph) => {
      const m = JSON.parse(fs.readFileSync(path.join(dir, graph, 'manifest.json'), 'utf8')) as { shards: { name: string; endpoint: string; file: string; triples: number }[] };
      const shards = [...m.shards].sort((a, b) => num(a.name) - num(b.name)).map((s) => ({ ...s, file: path.join(dir, graph, s.file) }));
      return { graph, shards };
    });
}

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
interface Answer {
  status: number;
  body: string;
  type: string;
  headers?: Record<string, string>;
  kind: RequestKind;
  profile?: RequestLogEntry['profile'];
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

/**
 * A running set of shard endpoints. Create with `serve`; stop with `close`.
 */
export class ShardServer {
  /** The endpoints, in the order of `endpoints.json`. */
  readonly endpoints: EndpointInfo[] = [];
  /** The request log (counts per endpoint and kind). */
  readonly log: RequestLog;
  /** Milliseconds from the call of `serve` until every endpoint answered. */
  startupMs = 0;
  private readonly byId = new Map<string, Endpoint>();
  private readonly servers: http.Server[] = [];
  private readonly stores: StoreWorker[] = [];
  private readonly timeoutMs: number;
  private readonly maxBodyBytes: number;
  private catalogueTtl: string | undefined;
  /** `/federation/sparql`: SERVICE queries over the shard endpoints (src/serve/federation.ts). */
  private federation: FederationEndpoint | undefined;
  private closed = false;

  /** @internal use `serve` */
  constructor(private readonly options: ServeOptions) {
    this.timeoutMs = options.timeoutMs ?? DEFAULTS.timeoutMs;
    this.maxBodyBytes = options.maxBodyBytes ?? DEFAULTS.maxBodyBytes;
    this.log = new RequestLog(options.requestLog);
  }

  /** The endpoint with this id. */
  endpoint(id: string): EndpointInfo | undefined {
    return this.byId.get(id)?.info;
  }

  /** @internal loads the stores and starts listening */
  async start(): Promise<void> {
    const t0 = performance.now();
    const o = this.options;
    const progress = o.progress ?? (() => {});
    const build = readBuild(o.shards, o.kgs);
    const profiles = typeof o.profiles === 'string' ? readProfileConfig(o.profiles) : o.profiles;
    const workerPer = o.workerPer ?? 'shard';
    const shardCount = build.reduce((n, g) => n + g.shards.length, 0);
    const plannedEndpoints = shardCount + (o.withOriginals ? build.length : 0);
    const workers = workerPer === 'graph' ? build.length : plannedEndpoints;
    progress(`fkgqa serve: ${build.length} graphs, ${shardCount} shards${o.withOriginals ? ` + ${build.length} unsharded graphs` : ''}; loading ${workers} oxigraph stores in worker threads`);

    type Planned = { id: string; graph: string; shard: string | null; triples: number; sources: StoreSource[]; group?: string; defaultGraphs?: string[]; voidFile?: string };
    const planned: Planned[] = [];
    for (const g of build) {
      for (const s of g.shards) {
        // The VoID build may write this file later: it is looked for again on every request.
        const voidFile = path.join(o.shards, g.graph, `${s.name}_void.ttl`);
        planned.push({
          id: s.endpoint,
          graph: g.graph,
          shard: s.name,
          triples: s.triples,
          sources: [{ file: s.file, format: 'application/n-triples' }],
          voidFile,
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
        const w = await StoreWorker.start(jobs.get(k)!);
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
        voidFile: p.voidFile,
        profile,
        random: seededRandom(profile?.seed ?? 0, p.id),
      };
      this.byId.set(p.id, ep);
      this.endpoints.push(ep.info);
    }
    const catalogueTtl = path.join(o.shards, 'catalogue.ttl');
    this.catalogueTtl = fs.existsSync(catalogueTtl) ? catalogueTtl : undefined;

    await this.listen();
    const fedUrl = this.endpoints[0] ? `${new URL(this.endpoints[0].url).origin}${FEDERATION_PATH}` : FEDERATION_PATH;
    this.federation = new FederationEndpoint(() => registryFromEndpointsValue(this.endpointsFile(), 'serve'), () => fedUrl, { timeoutMs: this.timeoutMs, maxBodyBytes: this.maxBodyBytes });
    this.startupMs = performance.now() - t0;
    if (o.writeFiles !== false) this.writeFiles(profiles && typeof o.profiles === 'string' ? path.resolve(o.profiles) : null);
    progress(`fkgqa serve: ${this.endpoints.length} endpoints up in ${(this.startupMs / 1000).toFixed(2)} s`);
  }

  private async listen(): Promise<void> {
    const o = this.options;
    const host = o.host ?? DEFAULTS.host;
    const urlHost = host === '0.0.0.0' || host === '::' ? os.hostname() : host.includes(':') ? `[${host}]` : host;
    const bind = (port: number, only?: Endpoint) =>
      new Promise<number>((resolve, reject) => {
        const server = http.createServer((req, res) => void this.handle(req, res, only));
        // Longer than clients keep idle sockets (Comunica's fetch reuses sockets idle for ~5 s; a
        // 5 s server timeout raced with it and failed queries with "other side closed").
        server.keepAliveTimeout = 65_000;
        server.headersTimeout = 66_000;
        server.once('error', reject);
        server.listen(port, host, () => {
          server.off('error', reject);
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

  private setUrls(ep: Endpoint, base: string): void {
    ep.info.url = `${base}/sparql`;
    ep.voidUrl = `${base}/.well-known/void`;
    ep.info.void = this.voidOf(ep) ? ep.voidUrl : null;
  }

  /** The endpoint's VoID file if it exists now. */
  private voidOf(ep: Endpoint): string | undefined {
    return ep.voidFile && fs.existsSync(ep.voidFile) ? ep.voidFile : undefined;
  }

  /** The contents of `endpoints.json`. */
  endpointsFile(profileFile: string | null = null): EndpointsFile {
    return {
      tool: { name: TOOL.name, version: TOOL.version },
      shards: path.resolve(this.options.shards),
      timeoutMs: this.timeoutMs,
      maxBodyBytes: this.maxBodyBytes,
      profileFile,
      endpoints: this.endpoints,
    };
  }

  private writeFiles(profileFile: string | null): void {
    const dir = this.options.shards;
    writeJson(path.join(dir, 'endpoints.json'), this.endpointsFile(profileFile));
    // With a VoID build (describe stage), give every shard's VoID and the catalogue its URL.
    if (fs.existsSync(path.join(dir, 'catalogue.json'))) {
      const urls = new Map(this.endpoints.filter((e) => e.role === 'shard').map((e) => [e.id, e.url]));
      try {
        const { updated } = setEndpoints(dir, urls);
        this.options.progress?.(`  VoID and catalogue: endpoint URLs set for ${updated} shards`);
      } catch (e) {
        if (!(e instanceof InputError)) throw e;
        this.options.progress?.(`  VoID and catalogue left without endpoint URLs: ${e.message}`);
      }
    }
  }

  /** Resolves a request path to what it asks for. */
  private route(pathname: string, only?: Endpoint): { ep?: Endpoint; what: 'sparql' | 'void' | 'index' | 'stats' | 'catalogue' | 'federation' | 'none' } {
    if (pathname === '/') return { what: 'index' };
    if (pathname === FEDERATION_PATH) return { what: 'federation' };
    if (pathname === '/_stats') return { what: 'stats' };
    if (only) {
      if (pathname === '/sparql') return { ep: only, what: 'sparql' };
      if (pathname === '/.well-known/void') return { ep: only, what: 'void' };
      return { what: 'none' };
    }
    if (pathname === '/.well-known/void') return { what: 'catalogue' };
    const m = /^\/([^/]+)\/(sparql|\.well-known\/void)$/.exec(pathname);
    const ep = m ? this.byId.get(decodeURIComponent(m[1])) : undefined;
    if (!m || !ep) return { what: 'none' };
    return { ep, what: m[2] === 'sparql' ? 'sparql' : 'void' };
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse, only?: Endpoint): Promise<void> {
    const started = performance.now();
    const time = new Date().toISOString();
    const url = new URL(req.url ?? '/', 'http://localhost');
    const { ep, what } = this.route(url.pathname, only);
    let answer: Answer;
    try {
      if (req.method === 'OPTIONS') {
        req.resume();
        answer = { status: 204, body: '', type: 'text/plain', kind: 'other', headers: { 'Access-Control-Allow-Methods': 'GET, POST, OPTIONS', 'Access-Control-Allow-Headers': 'Content-Type, Accept', 'Access-Control-Max-Age': '86400' } };
      } else if (what === 'sparql') answer = await this.sparql(req, url, ep!);
      else if (what === 'void') answer = await this.voidFile(req, ep!);
      else if (what === 'federation') answer = await this.federation!.handle(req, url);
      else {
        req.resume();
        answer = this.serverPath(what, req.method ?? 'GET');
      }
    } catch (e) {
      req.resume();
      answer = e instanceof ProtocolError ? text(e.status, e.message, 'invalid', e.headers) : text(500, `internal error: ${(e as Error).message}`, 'invalid');
    }
    const body = Buffer.from(answer.body, 'utf8');
    const headers: Record<string, string | number> = { ...CORS, 'Content-Type': answer.type, 'Content-Length': body.length, ...answer.headers };
    if (answer.status === 413) headers.Connection = 'close';
    res.once('close', () => {
      this.log.record({
        time,
        endpoint: ep?.info.id ?? '-',
        kind: answer.kind,
        method: req.method ?? '?',
        status: answer.status,
        ms: Math.round((performance.now() - started) * 10) / 10,
        bytes: body.length,
        ...(answer.profile ? { profile: answer.profile } : {}),
        ...(answer.timeout ? { timeout: true as const } : {}),
        ...(answer.query !== undefined ? { query: answer.query } : {}),
      });
    });
    res.writeHead(answer.status, headers);
    res.end(body);
  }

  /** `/`, `/_stats`, the root `/.well-known/void` (the catalogue), unknown paths. */
  private serverPath(what: string, method: string): Answer {
    if (method !== 'GET' && method !== 'HEAD') return text(405, `method ${method} is not allowed here: use GET`, 'other', { Allow: 'GET, OPTIONS' });
    const json = (v: unknown): Answer => ({ status: 200, body: JSON.stringify(v, null, 2) + '\n', type: 'application/json', kind: 'other' });
    if (what === 'index') return json(this.endpointsFile());
    if (what === 'stats') return json(this.log.counts());
    if (what === 'catalogue') {
      if (!this.catalogueTtl) return text(404, 'no VoID catalogue in this build (catalogue.ttl is written by the VoID build)', 'void');
      return { status: 200, body: fs.readFileSync(this.catalogueTtl, 'utf8'), type: `${MEDIA.turtle}; charset=utf-8`, kind: 'void' };
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
    const file = this.voidOf(ep);
    if (!file) {
      return text(404, `no VoID description for ${ep.info.id}: the build has no ${ep.info.shard ? `${ep.info.graph}/${ep.info.shard}_void.ttl` : 'VoID for unsharded graphs'} (VoID files are written by the VoID build)`, 'void');
    }
    return { status: 200, body: fs.readFileSync(file, 'utf8'), type: `${MEDIA.turtle}; charset=utf-8`, kind: 'void' };
  }

  /** The SPARQL endpoint: service description or query (SPARQL 1.1 Protocol §2.1). */
  private async sparql(req: http.IncomingMessage, url: URL, ep: Endpoint): Promise<Answer> {
    const method = req.method ?? 'GET';
    let body: Buffer | undefined;
    if (method === 'POST') body = await readBody(req, this.maxBodyBytes);
    else req.resume();
    const request = parseProtocolRequest(method, url.searchParams, req.headers['content-type'], body);
    await this.applyLatency(ep);
    if (request.type === 'service-description') {
      const accept = req.headers.accept;
      // An RDF serialisation the client accepts, else Turtle: a probe must never fail (pitfall B6).
      const format = negotiate(accept, 'graph') === MEDIA.ntriples ? MEDIA.ntriples : MEDIA.turtle;
      const info = ep.info;
      const title = info.shard ? `${info.id}: ${info.shard} of graph ${info.graph}` : `${info.id}: graph ${info.graph}, unsharded`;
      const voidUrl = this.voidOf(ep) ? ep.voidUrl : undefined;
      const sd = await serviceDescription({ url: info.url, title, triples: info.triples, voidUrl }, format);
      return { status: 200, body: sd, type: `${format}; charset=utf-8`, kind: 'service-description', headers: voidUrl ? { Link: `<${voidUrl}>; rel="describedby"` } : {} };
    }

    try {
      return { ...(await this.query(ep, request, req.headers.accept)), query: request.query };
    } catch (e) {
      if (e instanceof ProtocolError) return { ...text(e.status, e.message, 'invalid', e.headers), query: request.query };
      throw e;
    }
  }

  /** Runs a query on an endpoint's store, applying its profile (SPARQL 1.1 Protocol §2.1, responses). */
  private async query(ep: Endpoint, request: Extract<ProtocolRequest, { type: 'query' }>, accept: string | undefined): Promise<Answer> {
    const q = inspectQuery(request.query);
    if (request.defaultGraphs.length > 0 || request.namedGraphs.length > 0 || q.hasFrom) {
      throw new ProtocolError(
        400,
        `${ep.info.id} serves one graph, its default graph; it has no named graphs, so default-graph-uri, named-graph-uri, FROM and FROM NAMED are not supported: leave them out`,
      );
    }
    const format = negotiate(accept, q.form);
    if (!format) {
      throw new ProtocolError(406, `the Accept header (${accept}) names no format this query can be answered in: ${offered(q.form).join(', ')}`);
    }
    const p = ep.profile;
    const refused = p?.refuse?.find((f) => q.features.has(f));
    if (refused) return { ...text(403, `${ep.info.id} refuses queries using ${refused} (behaviour profile)`, q.kind), profile: 'refused' };
    if (p?.failureRate && ep.random() < p.failureRate) {
      return { ...text(p.failureStatus ?? 503, `${ep.info.id} is unavailable (simulated failure, behaviour profile)`, q.kind), profile: 'failure' };
    }
    if (q.features.has('service')) {
      // oxigraph (npm) has no SERVICE, and SERVICE SILENT would quietly give one empty solution (pitfall B11).
      return text(501, `${ep.info.id} does not evaluate SERVICE: send federated queries to a federation engine (e.g. Comunica) with the shard endpoints as sources`, q.kind);
    }

    const cap = p?.maxRows;
    const runFormat = cap === undefined ? format : q.form === 'graph' ? MEDIA.ntriples : q.form === 'bindings' ? MEDIA.json : format;
    const outcome = await ep.store.query({
      query: request.query,
      resultsFormat: runFormat,
      timeoutMs: this.timeoutMs,
      ...(ep.defaultGraphs ? { defaultGraphs: ep.defaultGraphs, namedGraphs: [] } : {}),
    });
    if (outcome.status === 'timeout') {
      return { ...text(503, `query stopped at the time limit of ${this.timeoutMs} ms`, q.kind), timeout: true };
    }
    if (outcome.status === 'error') {
      const syntax = /^error at \d+:\d+/.test(outcome.error);
      return text(syntax ? 400 : 500, `${syntax ? 'malformed query' : 'query evaluation failed'}: ${outcome.error}`, q.kind);
    }
    const type = format.startsWith('text/') ? `${format}; charset=utf-8` : format;
    if (cap !== undefined && q.form === 'bindings') {
      const cut = truncateBindings(JSON.parse(outcome.body) as JsonResults, cap);
      if (cut.truncated) {
        return { status: 200, body: serializeResults(cut.results, format), type, kind: q.kind, profile: 'truncated', headers: { 'Fkgqa-Truncated': `rows=${cap}; of=${cut.rows}` } };
      }
      return { status: 200, body: format === MEDIA.json ? outcome.body : serializeResults(cut.results, format), type, kind: q.kind };
    }
    if (cap !== undefined && q.form === 'graph') {
      const cut = truncateNTriples(outcome.body, cap);
      // N-Triples is Turtle too; RDF/XML is not: a capped graph answer is served as Turtle then.
      const served = format === MEDIA.rdfxml ? MEDIA.turtle : format;
      const t = served.startsWith('text/') ? `${served}; charset=utf-8` : served;
      return { status: 200, body: cut.text, type: t, kind: q.kind, ...(cut.truncated ? { profile: 'truncated' as const, headers: { 'Fkgqa-Truncated': `triples=${cap}; of=${cut.triples}` } } : {}) };
    }
    return { status: 200, body: outcome.body, type, kind: q.kind };
  }

  /** Stops listening, closes open connections, stops the workers and closes the log. Idempotent. */
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
  }
}

/**
 * Starts the endpoints of a build: loads every shard (and with `withOriginals` every unsharded
 * graph) into oxigraph stores in worker threads, listens, writes `<shards>/endpoints.json` and
 * fills endpoint URLs into `catalogue.json` when it exists.
 * @throws InputError for a missing build, unknown graph, bad profile file or a shard that does not load
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
