/**
 * The endpoint registry of `fkgqa mcp`: the SPARQL endpoints an agent may name in SERVICE clauses.
 * It is read from a running `fkgqa serve` (its state folder's `endpoints.json`), from a build plus
 * endpoint URLs, or from a plain list of SPARQL endpoint URLs (any endpoints, not only fkgqa's).
 * Every tool of `fkgqa mcp` (run_sparql_query, get_void_descriptions, the KGVoyager tools) works
 * on this one shape.
 */
import fs from 'node:fs';
import path from 'node:path';
import { InputError } from '../common/errors.js';
import { stateDir, STATE_FILES } from '../build/state.js';
import type { CatalogueEntry } from '../describe/catalogue.js';
import { endpointUrl } from '../describe/describe.js';
import type { EndpointsFile } from '../serve/server.js';
import { readBuild } from '../serve/server.js';

/** One registered SPARQL endpoint. */
export interface RegisteredEndpoint {
  /** Stable name: `<kg>-shard<N>` for fkgqa shards, otherwise derived from the URL. */
  id: string;
  /** The SPARQL 1.1 Protocol endpoint URL, exactly as an agent writes it in `SERVICE <…>`. */
  url: string;
  /** Knowledge graph of an fkgqa shard, or null for a foreign endpoint. */
  graph: string | null;
  /** `shard<N>` of an fkgqa shard, or null. */
  shard: string | null;
  /** One-sentence description from the build's catalogue (high_level setup), or null. */
  description: string | null;
  /** The build's pre-generated VoID file of this endpoint (`<kg>/shard<N>_void.ttl`), or null. */
  voidFile: string | null;
  /** The extended VoID file (with linksets), or null. */
  voidExtendedFile: string | null;
}

/** The registry: endpoints in a stable order (graph, then shard number; foreign ones by URL). */
export interface EndpointRegistry {
  /** Where the registry came from, e.g. `serve:/abs/shards.state/endpoints.json`, `build:/abs/shards`, `urls`. */
  source: string;
  /** Absolute path of the build, when the endpoints are an fkgqa build's shards. */
  build: string | null;
  endpoints: RegisteredEndpoint[];
}


/** `<kg>-shard<N>` in an endpoint URL path (`…/<kg>-shard<N>/sparql`, the SPARQL-MCP shard convention, field notes §0). */
const SHARD_IN_URL = /\/([^/]+)-(shard\d+)\/sparql\/?$/;

/** Number of a `shard<N>` name (0 when none), for ordering. */
const shardNumber = (s: string | null) => Number(/(\d+)$/.exec(s ?? '')?.[1] ?? 0);

/** Sorts endpoints into the registry's order: graph, shard number; foreign endpoints (no graph) last, by URL. */
export function sortEndpoints(endpoints: RegisteredEndpoint[]): RegisteredEndpoint[] {
  return [...endpoints].sort((a, b) => {
    if (a.graph !== null && b.graph !== null) return a.graph < b.graph ? -1 : a.graph > b.graph ? 1 : shardNumber(a.shard) - shardNumber(b.shard);
    if (a.graph !== null) return -1;
    if (b.graph !== null) return 1;
    return a.url < b.url ? -1 : a.url > b.url ? 1 : 0;
  });
}

/** Checks that a string is an absolute http(s) URL. @throws InputError naming `what` */
function checkUrl(url: string, what: string): void {
  let u: URL | undefined;
  try {
    u = new URL(url);
  } catch {
    /* below */
  }
  if (!u || (u.protocol !== 'http:' && u.protocol !== 'https:')) throw new InputError(`${what}: not an absolute http(s) URL: "${url}"`);
}

/** The build's `catalogue.json` entries by endpoint name, or an empty map when the build has none. */
function readCatalogue(build: string): Map<string, CatalogueEntry> {
  const file = path.join(build, 'catalogue.json');
  if (!fs.existsSync(file)) return new Map();
  const c = JSON.parse(fs.readFileSync(file, 'utf8')) as { shards?: CatalogueEntry[] };
  return new Map((c.shards ?? []).map((e) => [e.endpoint, e]));
}

/** An endpoint of an fkgqa build: description from the catalogue, VoID files where they exist. */
function shardEndpoint(build: string, catalogue: Map<string, CatalogueEntry>, id: string, graph: string, shard: string, url: string): RegisteredEndpoint {
  const entry = catalogue.get(id);
  const file = (rel: string | undefined, fallback: string) => {
    const f = path.join(build, rel ?? fallback);
    return fs.existsSync(f) ? f : null;
  };
  return {
    id,
    url,
    graph,
    shard,
    description: entry?.description ?? null,
    voidFile: file(entry?.void, `${graph}/${shard}_void.ttl`),
    voidExtendedFile: file(entry?.voidExtended, `${graph}/${shard}_void_extended.ttl`),
  };
}

/** Keeps only endpoints of the given graphs (all when `kgs` is empty or undefined). @throws InputError for a graph with no endpoint */
function filterGraphs(r: EndpointRegistry, kgs: string[] | undefined): EndpointRegistry {
  if (!kgs || kgs.length === 0) return r;
  const graphs = new Set(r.endpoints.map((e) => e.graph).filter((g): g is string => g !== null));
  for (const k of kgs) if (!graphs.has(k)) throw new InputError(`graph ${k} has no endpoint in the registry (graphs: ${[...graphs].sort().join(', ') || 'none'})`);
  return { ...r, endpoints: r.endpoints.filter((e) => e.graph !== null && kgs.includes(e.graph)) };
}

/**
 * The registry of a running `fkgqa serve`, from its endpoints file (`EndpointsFile`, src/serve/server.ts).
 * Only shard endpoints are registered: the unsharded graphs that `serve --with-originals` adds
 * would let an agent skip the federation.
 * @param file path of the endpoints file
 * @param kgs only the endpoints of these graphs
 * @throws InputError when the file is missing, not JSON, or not an endpoints file
 */
export function registryFromEndpointsFile(file: string, kgs?: string[]): EndpointRegistry {
  if (!fs.existsSync(file)) throw new InputError('endpoints file not found (is fkgqa serve running?)', { file });
  let f: EndpointsFile;
  try {
    f = JSON.parse(fs.readFileSync(file, 'utf8')) as EndpointsFile;
  } catch (e) {
    throw new InputError(`not JSON: ${(e as Error).message}`, { file });
  }
  if (!Array.isArray(f.endpoints)) throw new InputError('not an endpoints file of fkgqa serve (no "endpoints" list)', { file });
  return registryFromEndpointsValue(f, `serve:${path.resolve(file)}`, kgs);
}

/**
 * The registry of endpoints described by an `EndpointsFile` value (e.g. `ShardServer.endpointsFile()`
 * of a server in the same process).
 * @param source recorded as the registry's `source`
 */
export function registryFromEndpointsValue(f: EndpointsFile, source: string, kgs?: string[]): EndpointRegistry {
  const build = f.shards && fs.existsSync(f.shards) ? path.resolve(f.shards) : null;
  const catalogue = build ? readCatalogue(build) : new Map<string, CatalogueEntry>();
  const endpoints = f.endpoints
    .filter((e) => e.role === 'shard' && e.shard)
    .map((e) => (build ? shardEndpoint(build, catalogue, e.id, e.graph, e.shard!, e.url) : { id: e.id, url: e.url, graph: e.graph, shard: e.shard, description: null, voidFile: null, voidExtendedFile: null }));
  return filterGraphs({ source, build, endpoints: sortEndpoints(endpoints) }, kgs);
}

/**
 * The registry of a build whose shards are served under a base URL, `<base>/<kg>-shard<N>/sparql`
 * (the URL convention of `fkgqa serve` and of the reference server).
 * @throws InputError for a missing build or a base that is not an http(s) URL
 */
export function registryFromBuild(build: string, base: string, kgs?: string[]): EndpointRegistry {
  const abs = path.resolve(build);
  const catalogue = readCatalogue(abs);
  const endpoints = readBuild(abs, kgs).flatMap((g) => g.shards.map((s) => shardEndpoint(abs, catalogue, s.endpoint, g.graph, s.name, endpointUrl(base, s.endpoint))));
  return { source: `build:${abs}`, build: abs, endpoints: sortEndpoints(endpoints) };
}

/**
 * A registry of plain SPARQL endpoint URLs (any endpoints, not only fkgqa's). A URL of the form
 * `…/<kg>-shard<N>/sparql` is named `<kg>-shard<N>` with its graph and shard; others get an id
 * from host and path (`127.0.0.1-7001-sparql`). With a build, shard URLs also get the build's
 * descriptions and VoID files.
 * @throws InputError for a URL that is not http(s), or two URLs with the same id
 */
export function registryFromUrls(urls: string[], build?: string): EndpointRegistry {
  const abs = build ? path.resolve(build) : null;
  const catalogue = abs ? readCatalogue(abs) : new Map<string, CatalogueEntry>();
  const seen = new Map<string, string>();
  const endpoints: RegisteredEndpoint[] = [];
  for (const url of [...new Set(urls)]) {
    checkUrl(url, '--endpoint');
    const m = SHARD_IN_URL.exec(new URL(url).pathname);
    const id = m ? `${decodeURIComponent(m[1])}-${m[2]}` : urlId(url);
    if (seen.has(id)) throw new InputError(`two endpoint URLs get the same name ${id}: ${seen.get(id)} and ${url}`);
    seen.set(id, url);
    if (m && abs) endpoints.push(shardEndpoint(abs, catalogue, id, decodeURIComponent(m[1]), m[2], url));
    else endpoints.push({ id, url, graph: m ? decodeURIComponent(m[1]) : null, shard: m ? m[2] : null, description: null, voidFile: null, voidExtendedFile: null });
  }
  return { source: 'urls', build: abs, endpoints: sortEndpoints(endpoints) };
}

/** An id for a foreign endpoint: host, port and path with every run of other characters as `-`. */
export function urlId(url: string): string {
  const u = new URL(url);
  return `${u.host}${u.pathname}`.replace(/[^A-Za-z0-9_.]+/g, '-').replace(/^-+|-+$/g, '');
}

/** Where `loadRegistry` reads the endpoints from (the options of `fkgqa mcp`). */
export interface RegistrySourceOptions {
  /** An endpoints file of `fkgqa serve`. */
  endpointsFile?: string;
  /** A build: with `endpointBase` its shards under that URL; else the endpoints file of its running serve. */
  build?: string;
  /** `--state`: the build's state folder, when not `<build>.state`. */
  state?: string;
  /** Base URL of the build's endpoints. */
  endpointBase?: string;
  /** Plain endpoint URLs. */
  urls?: string[];
  /** Only endpoints of these graphs. */
  kgs?: string[];
}

/**
 * The registry from the first source given: `urls` (with `build` for descriptions), `endpointsFile`,
 * `build` + `endpointBase`, or `build` alone, which reads the endpoints file of the running
 * `fkgqa serve`: `<state>/endpoints.json` (src/common/state.ts), falling back to
 * `<build>/endpoints.json` (where serve wrote it before the state folder existed).
 * @throws InputError when no source is given, a file is missing, or the registry is empty
 */
export function loadRegistry(o: RegistrySourceOptions): EndpointRegistry {
  let r: EndpointRegistry;
  if (o.urls && o.urls.length > 0) r = filterGraphs(registryFromUrls(o.urls, o.build), o.kgs);
  else if (o.endpointsFile) r = registryFromEndpointsFile(o.endpointsFile, o.kgs);
  else if (o.build && o.endpointBase) r = registryFromBuild(o.build, o.endpointBase, o.kgs);
  else if (o.build) {
    const candidates = [path.join(stateDir(o.build, o.state), STATE_FILES.endpoints), path.join(path.resolve(o.build), 'endpoints.json')];
    const file = candidates.find((f) => fs.existsSync(f));
    if (!file) throw new InputError(`no endpoints file of a running fkgqa serve (looked for ${candidates.join(' and ')}): start fkgqa serve --shards ${o.build}, or give --endpoint-base or --endpoint`);
    r = registryFromEndpointsFile(file, o.kgs);
  } else throw new InputError('no endpoints: give --endpoints <file>, --shards <build> (with or without --endpoint-base <url>), or --endpoint <url...>');
  if (r.endpoints.length === 0) throw new InputError(`the registry (${r.source}) has no endpoints`);
  return r;
}

/**
 * The registered endpoint with this URL, or undefined. URLs are compared exactly, except that a
 * trailing `/` is ignored.
 */
export function findEndpoint(r: EndpointRegistry, url: string): RegisteredEndpoint | undefined {
  const norm = (u: string) => u.replace(/\/+$/, '');
  const n = norm(url);
  return r.endpoints.find((e) => norm(e.url) === n);
}
