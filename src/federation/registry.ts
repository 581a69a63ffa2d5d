/**
 * The endpoint registry: the SPARQL endpoints a federated query may name in SERVICE clauses, for
 * every command that federates (`fkgqa mcp`, `eval`, `verify`, serve's `/federation/sparql`). It is
 * read from the endpoints files of running `fkgqa serve`s (one or several: shards served by several
 * hosts form one federation), from a build plus a base URL, or from plain SPARQL endpoint URLs (any
 * endpoints, not only fkgqa's), or several of these at once.
 *
 * `readEndpointsFile` here is the only reader of a serve's `endpoints.json` (src/build/state.ts,
 * `EndpointsFileContents`): it checks the file's shape, that it serves the expected build and that
 * its serve is alive; `unreachableEndpoints` checks over HTTP that endpoints answer.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { InputError } from '../common/errors.js';
import { readJsonFile } from '../build/open.js';
import { ownerAlive } from '../common/output.js';
import { stateDir, STATE_FILES, type EndpointsFileContents } from '../build/state.js';
import type { CatalogueEntry } from '../describe/catalogue.js';
import { endpointUrl } from '../describe/describe.js';
import { readBuild } from '../build/open.js';
import { endpointKey, endpointOf, networkWords, RedirectRefused, sameEndpoint, send } from '../common/http-client.js';
import { endpointUrlProblem, urlWithoutCredentials } from '../sparql/protocol.js';
import { RDF, SD, VOID } from '../common/vocab.js';
import { DATASET_PREFIX, shardDatasetIri } from '../describe/model.js';

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
  /** Where the endpoint's triples are held, as its endpoints file lists it; absent for endpoints not read from one (or from files of earlier versions). */
  placement?: Placement;
  /** The endpoints file (or value) and entry that list the endpoint, with the VoID it claims; absent for endpoints not read from one. */
  listing?: EndpointListing;
}

/**
 * Where an endpoint of an endpoints file is listed, and the VoID the entry claims for it: what
 * `placementMismatches` checks (with or without a `host`).
 */
interface EndpointListing {
  /** The endpoints file's absolute path, or the registry source of an endpoints value held in this process (`started`, `serve`). */
  file: string;
  /** The entry's index in the file's `endpoints` list. */
  entry: number;
  /** The entry's `void` URL and `voidDigest` (sha256, hex), null when absent or null. */
  void: string | null;
  voidDigest: string | null;
  /** The file names the build it serves (`outputDigest` or `shards`). */
  namesBuild: boolean;
}

/**
 * The placement of a shard endpoint, from the endpoints file of the serve that serves it
 * (src/build/state.ts `EndpointEntry`): shard → host → URL, with its triples and VoID digest. The
 * endpoints files of several serves (one per host) read together are one registry of a federation
 * spread over hosts.
 */
export interface Placement {
  /** `host:port` holding the triples: a Virtuoso instance (`store` virtuoso) or the serve's own listener. */
  host: string;
  /** `oxigraph` or `virtuoso` (`fkgqa serve --store`), or null when the file does not say. */
  store: string | null;
  /** Triples the endpoint serves. */
  triples: number | null;
  /** The endpoint's VoID URL and the sha256 (hex) of its VoID as served when listed; null without VoID. */
  void: string | null;
  voidDigest: string | null;
}

/** The registry: endpoints in a stable order (graph, then shard number; foreign ones by URL). */
export interface EndpointRegistry {
  /** Where the registry came from, e.g. `serve:/abs/shards.state/endpoints.json`, `build:/abs/shards`, `urls`; several joined by ` + `. */
  source: string;
  /** The endpoints files it was read from (absolute paths), in order; empty when none. */
  endpointsFiles?: string[];
  /** Absolute path of the build, when the endpoints are an fkgqa build's shards. */
  build: string | null;
  endpoints: RegisteredEndpoint[];
}

/** `<kg>-shard<N>` in an endpoint URL path (`…/<kg>-shard<N>/sparql`, the SPARQL-MCP shard convention, field notes §0). */
const SHARD_IN_URL = /\/([^/]+)-(shard\d+)\/sparql\/?$/;

/** Number of a `shard<N>` name (0 when none), for ordering. */
const shardNumber = (s: string | null) => Number(/(\d+)$/.exec(s ?? '')?.[1] ?? 0);

/** Sorts endpoints into the registry's order: graph, shard number; foreign endpoints (no graph) last, by URL. */
function sortEndpoints(endpoints: RegisteredEndpoint[]): RegisteredEndpoint[] {
  return [...endpoints].sort((a, b) => {
    if (a.graph !== null && b.graph !== null) return a.graph < b.graph ? -1 : a.graph > b.graph ? 1 : shardNumber(a.shard) - shardNumber(b.shard);
    if (a.graph !== null) return -1;
    if (b.graph !== null) return 1;
    return a.url < b.url ? -1 : a.url > b.url ? 1 : 0;
  });
}

/** Checks a URL by the one rule for endpoint URLs (`endpointUrlProblem`). @throws InputError naming `what` and the URL (its credentials not shown) */
function checkUrl(url: string, what: string): void {
  const problem = endpointUrlProblem(url);
  if (problem) throw new InputError(`${what} "${urlWithoutCredentials(url)}": ${problem}`);
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
export function filterGraphs(r: EndpointRegistry, kgs: string[] | undefined): EndpointRegistry {
  if (!kgs || kgs.length === 0) return r;
  const graphs = new Set(r.endpoints.map((e) => e.graph).filter((g): g is string => g !== null));
  for (const k of kgs) if (!graphs.has(k)) throw new InputError(`graph ${k} has no endpoint in the registry (graphs: ${[...graphs].sort().join(', ') || 'none'})`);
  return { ...r, endpoints: r.endpoints.filter((e) => e.graph !== null && kgs.includes(e.graph)) };
}

/** What `readEndpointsFile` checks besides the shape. */
interface EndpointsFileCheck {
  /**
   * The build the endpoints must serve: the file's `outputDigest` must be this build's (when the
   * file records one), else its `shards` path must be this build's folder.
   */
  build?: string;
  /** What to do when the file is missing, appended to the message (e.g. "start it, or …"). */
  hint?: string;
}

/** Names the first thing wrong with the shape of an endpoints file, or undefined. */
function endpointsProblem(e: unknown): string | undefined {
  if (!e || typeof e !== 'object' || Array.isArray(e)) return 'not a JSON object';
  const x = e as Record<string, unknown>;
  if (!Array.isArray(x.endpoints)) return '"endpoints" is missing or not a list';
  for (const [i, en] of (x.endpoints as unknown[]).entries()) {
    const o = en as Record<string, unknown> | null;
    if (!o || typeof o !== 'object' || typeof o.id !== 'string' || typeof o.url !== 'string' || typeof o.role !== 'string' || typeof o.graph !== 'string') {
      return `endpoints[${i}]: needs string fields "id", "url", "role" and "graph"`;
    }
  }
  const firstOf = new Map<string, number>();
  for (const [i, en] of (x.endpoints as Record<string, unknown>[]).entries()) {
    const first = firstOf.get(en.id as string);
    if (first !== undefined) return `endpoints[${i}]: the id "${en.id as string}" is listed twice (also endpoints[${first}]): each endpoint is listed once`;
    firstOf.set(en.id as string, i);
    // A shard's id is its graph and shard: an id that names another shard would mislabel every answer and fault.
    if (en.role === 'shard' && typeof en.shard === 'string' && en.id !== `${en.graph as string}-${en.shard}`)
      return `endpoints[${i}]: the id "${en.id as string}" is not its graph and shard ("${en.graph as string}", "${en.shard}"): a shard's id is <graph>-<shard>, here "${en.graph as string}-${en.shard}"`;
    if (en.void !== undefined && en.void !== null && typeof en.void !== 'string') return `endpoints[${i}]: "void" must be a URL or null`;
    if (en.host !== undefined && (typeof en.host !== 'string' || !/^[^\s/]+:\d+$/.test(en.host))) return `endpoints[${i}]: "host" must be host:port`;
    if (en.voidDigest !== undefined && en.voidDigest !== null && (typeof en.voidDigest !== 'string' || !/^[0-9a-f]{64}$/.test(en.voidDigest)))
      return `endpoints[${i}]: "voidDigest" must be a sha256 in hex or null`;
  }
  if (x.pid !== undefined && typeof x.pid !== 'number') return '"pid" is not a number';
  return undefined;
}

/** The output digest of a build (its build.json), or undefined when it cannot be read. */
function buildDigest(build: string): string | undefined {
  try {
    return readJsonFile<{ outputDigest?: string }>(path.join(build, 'build.json'), 'build.json').outputDigest;
  } catch {
    return undefined;
  }
}

/**
 * Reads an endpoints file written by `fkgqa serve` — the only reader of such files. Checks, in
 * order: it exists; it is JSON; its shape (`endpoints`, each with string `id`, `url`, `role`,
 * `graph`; ids listed once; a shard's id `<graph>-<shard>`); with `check.build`, that it serves that build; that the serve that wrote it is alive
 * (its pid, on this host; a file without pid, e.g. written by hand, is taken as it is).
 * @throws InputError (exit 2) naming the file and what is wrong: not found (is fkgqa serve
 *   running?), not JSON, not an endpoints file, another build, stale (its serve is gone)
 */
export function readEndpointsFile(file: string, check: EndpointsFileCheck = {}): EndpointsFileContents {
  if (!fs.existsSync(file)) throw new InputError(`endpoints file not found: is fkgqa serve running on this build?${check.hint ? ` (${check.hint})` : ''}`, { file });
  const e = readJsonFile<unknown>(file, 'endpoints file');
  const problem = endpointsProblem(e);
  if (problem) throw new InputError(`not an endpoints file written by fkgqa serve: ${problem}`, { file });
  const f = e as EndpointsFileContents;
  // The rule of --endpoint: a file cannot bring in a file:, ftp: or javascript: URL, nor credentials.
  for (const [i, en] of f.endpoints.entries()) {
    const bad = endpointUrlProblem(en.url);
    if (bad) throw new InputError(`endpoints[${i}] (id ${en.id}): the url "${urlWithoutCredentials(en.url)}" is refused: ${bad}`, { file });
    // Its VoID URL by the same rule: the VoID is read before any query, to check what the endpoint serves.
    const badVoid = typeof en.void === 'string' ? endpointUrlProblem(en.void) : undefined;
    if (badVoid) throw new InputError(`endpoints[${i}] (id ${en.id}): the void "${urlWithoutCredentials(en.void!)}" is refused: ${badVoid}`, { file });
  }
  if (check.build) {
    const abs = path.resolve(check.build);
    const digest = f.outputDigest ? buildDigest(abs) : undefined;
    const other = digest !== undefined ? f.outputDigest !== digest : typeof f.shards === 'string' && path.resolve(f.shards) !== abs;
    if (other) {
      const served = f.outputDigest ? `output digest ${f.outputDigest.slice(0, 16)}` : String(f.shards);
      const wanted = digest !== undefined ? `output digest ${digest.slice(0, 16)}` : abs;
      const rebuilt = typeof f.shards === 'string' && path.resolve(f.shards) === abs ? ` (${abs} was built again since serve started: restart serve)` : '';
      throw new InputError(`the endpoints serve another build (${served}), not the build asked for (${wanted})${rebuilt}`, { file });
    }
  }
  if (typeof f.pid === 'number' && !ownerAlive({ pid: f.pid, procStart: f.procStart ?? null, started: f.started ?? '?', ...(f.hostname ? { hostname: f.hostname } : {}) })) {
    throw new InputError(`stale: the fkgqa serve that wrote it (pid ${f.pid}) is no longer running`, { file });
  }
  return f;
}

/**
 * The endpoints file of the serve running on a build (`<state>/endpoints.json`), read and checked by
 * `readEndpointsFile`.
 * @param build the build folder
 * @param state the `--state` folder, when not the default `<build>.state/`
 * @throws InputError (exit 2) when no serve of this build is running with that state folder, or as readEndpointsFile
 */
export function readServeEndpoints(build: string, state?: string): EndpointsFileContents {
  const file = path.join(stateDir(build, state), STATE_FILES.endpoints);
  if (!fs.existsSync(file)) {
    throw new InputError(`no fkgqa serve is running on ${path.resolve(build)} (start one with fkgqa serve --shards ${build}${state ? ` --state ${state}` : ''})`, { file });
  }
  return readEndpointsFile(file, { build });
}

/**
 * The registry of endpoints described by an endpoints-file value (`EndpointsFileContents`, e.g.
 * `ShardServer.endpointsFile()` of a server in the same process, or a file read by
 * `readEndpointsFile`). Only shard endpoints are registered: the unsharded graphs that
 * `serve --with-originals` adds would let an agent skip the federation.
 * @param source recorded as the registry's `source`
 * @throws InputError for a graph of `kgs` with no endpoint
 */
export function registryFromEndpointsValue(f: EndpointsFileContents, source: string, kgs?: string[]): EndpointRegistry {
  const build = f.shards && fs.existsSync(f.shards) ? path.resolve(f.shards) : null;
  const catalogue = build ? readCatalogue(build) : new Map<string, CatalogueEntry>();
  const file = source.replace(/^serve:/, '');
  const namesBuild = Boolean(f.outputDigest || f.shards);
  const endpoints = f.endpoints.flatMap((e, entry): RegisteredEndpoint[] => {
    if (e.role !== 'shard' || !e.shard) return [];
    const r: RegisteredEndpoint = build
      ? shardEndpoint(build, catalogue, e.id, e.graph, e.shard, e.url)
      : { id: e.id, url: e.url, graph: e.graph, shard: e.shard, description: null, voidFile: null, voidExtendedFile: null };
    if (typeof e.host === 'string') {
      r.placement = { host: e.host, store: e.store ?? null, triples: typeof e.triples === 'number' ? e.triples : null, void: e.void ?? null, voidDigest: e.voidDigest ?? null };
    }
    r.listing = { file, entry, void: e.void ?? null, voidDigest: e.voidDigest ?? null, namesBuild };
    return [r];
  });
  return filterGraphs({ source, build, endpoints: sortEndpoints(endpoints) }, kgs);
}

/**
 * The registry of a build whose shards are served under a base URL, `<base>/<kg>-shard<N>/sparql`
 * (the URL convention of `fkgqa serve` and of the reference server).
 * @throws InputError for a missing build or a base that is not an http(s) URL
 */
function registryFromBuild(build: string, base: string, kgs?: string[]): EndpointRegistry {
  const abs = path.resolve(build);
  const catalogue = readCatalogue(abs);
  const endpoints = readBuild(abs, kgs).flatMap((g) => g.shards.map((s) => shardEndpoint(abs, catalogue, s.endpoint, g.graph, s.name, endpointUrl(base, s.endpoint))));
  return { source: `build:${abs}`, build: abs, endpoints: sortEndpoints(endpoints) };
}

/**
 * A registry of plain SPARQL endpoint URLs (any endpoints, not only fkgqa's). A URL whose path, in
 * the normal form of `endpointKey`, is `…/<kg>-shard<N>/sparql` is named `<kg>-shard<N>` with its
 * graph and shard; others get an id from host and path (`127.0.0.1-7001-sparql`). Two spellings of
 * one endpoint (`endpointKey`) are one endpoint, under the first spelling. With a build, shard URLs also get the build's
 * descriptions and VoID files.
 * @throws InputError for a URL that is not http(s), or two URLs with the same id
 */
export function registryFromUrls(urls: string[], build?: string): EndpointRegistry {
  const abs = build ? path.resolve(build) : null;
  const catalogue = abs ? readCatalogue(abs) : new Map<string, CatalogueEntry>();
  const seen = new Map<string, string>();
  const endpoints: RegisteredEndpoint[] = [];
  const keys = new Set<string>();
  for (const url of urls) {
    checkUrl(url, '--endpoint');
    // Two spellings of one endpoint are one endpoint, registered under the first.
    const key = endpointKey(url);
    if (keys.has(key)) continue;
    keys.add(key);
    // The path in its normal form: `library%2Dshard1` is `library-shard1`.
    const m = SHARD_IN_URL.exec(new URL(key).pathname);
    const id = m ? `${decodeURIComponent(m[1])}-${m[2]}` : urlId(url);
    if (seen.has(id)) throw new InputError(`two endpoint URLs get the same name ${id}: ${seen.get(id)} and ${url}`);
    seen.set(id, url);
    if (m && abs) endpoints.push(shardEndpoint(abs, catalogue, id, decodeURIComponent(m[1]), m[2], url));
    else endpoints.push({ id, url, graph: m ? decodeURIComponent(m[1]) : null, shard: m ? m[2] : null, description: null, voidFile: null, voidExtendedFile: null });
  }
  return { source: 'urls', build: abs, endpoints: sortEndpoints(endpoints) };
}

/** An id for a foreign endpoint: host, port and path with every run of other characters as `-`. */
function urlId(url: string): string {
  const u = new URL(url);
  return `${u.host}${u.pathname}`.replace(/[^A-Za-z0-9_.]+/g, '-').replace(/^-+|-+$/g, '');
}

/** Where `openRegistry` reads the endpoints from (the endpoint options of `fkgqa mcp`, `eval` and `verify`). */
export interface RegistryOptions {
  /** Endpoints files of running `fkgqa serve`s (several: one federation over all their endpoints). */
  endpointsFiles?: string[];
  /** Plain endpoint URLs (with `build`, shard URLs get the build's descriptions and VoID files). */
  urls?: string[];
  /**
   * A build: its shards' descriptions and VoID files; every endpoints file must serve it; with
   * `endpointBase` its shards under that URL; with neither files nor URLs nor a base, the endpoints
   * file of its running serve (`<state>/endpoints.json`).
   */
  build?: string;
  /** `--state`: the build's state folder, when not `<build>.state`. */
  state?: string;
  /** Base URL of the build's endpoints: `<base>/<kg>-shard<N>/sparql`. */
  endpointBase?: string;
  /** Only endpoints of these graphs. */
  kgs?: string[];
  /** Appended to "endpoints file not found" (what the user should do). */
  hint?: string;
}

/** Where an endpoints file lists an endpoint, in words: `endpoints[2] of /abs/endpoints.json`. */
function listingWords(l: EndpointListing): string {
  return `endpoints[${l.entry}] of ${l.file}`;
}

/**
 * The registry from every source given (see RegistryOptions), in the registry's order. An endpoint
 * listed twice with the same URL (`sameEndpoint`: two spellings of one URL are one) and the same
 * VoID claim counts once, under its first spelling (an endpoints file's before a URL given); a URL
 * given or a build's that is an endpoint already registered under another id counts as that
 * endpoint; two URLs, or two VoID claims, with the same name are refused, and so are two entries of
 * endpoints files that list one URL under two ids (one URL is one endpoint, `endpointKey`).
 * @throws InputError when no source is given, a file is missing or fails a check of
 *   `readEndpointsFile`, two sources give one name to different URLs or different VoIDs, entries
 *   give one URL two names, or the registry is empty
 */
export function openRegistry(o: RegistryOptions): EndpointRegistry {
  const parts: EndpointRegistry[] = [];
  const files = o.endpointsFiles ?? [];
  for (const file of files) parts.push(registryFromEndpointsValue(readEndpointsFile(file, { build: o.build, hint: o.hint }), `serve:${path.resolve(file)}`));
  if (o.urls && o.urls.length > 0) parts.push(registryFromUrls(o.urls, o.build));
  if (o.build && o.endpointBase) parts.push(registryFromBuild(o.build, o.endpointBase));
  const usedFiles = files.map((f) => path.resolve(f));
  if (parts.length === 0) {
    if (!o.build) throw new InputError('no endpoints: give --endpoints <file>, --shards <build> (with or without --endpoint-base <url>), or --endpoint <url...>');
    const file = path.join(stateDir(o.build, o.state), STATE_FILES.endpoints);
    if (!fs.existsSync(file))
      throw new InputError(`no endpoints file of a running fkgqa serve (looked for ${file}): ${o.hint ?? `start fkgqa serve --shards ${o.build}, or give --endpoint-base or --endpoint`}`);
    parts.push(registryFromEndpointsValue(readEndpointsFile(file, { build: o.build }), `serve:${file}`));
    usedFiles.push(file);
  }
  const byId = new Map<string, RegisteredEndpoint>();
  for (const p of parts) {
    for (const e of p.endpoints) {
      // A URL given (or a build's) that spells an endpoint already registered, under another id, is that endpoint.
      if (!e.listing && !byId.has(e.id) && [...byId.values()].some((x) => sameEndpoint(x.url, e.url))) continue;
      // Two entries of endpoints files, one URL under two ids: which of them a query's SERVICE URL names is undecidable.
      const sameUrl = e.listing ? [...byId.values()].find((x) => x.id !== e.id && x.listing && sameEndpoint(x.url, e.url)) : undefined;
      if (sameUrl) {
        throw new InputError(
          `two endpoints have one url, ${e.url}: ${sameUrl.id} (${listingWords(sameUrl.listing!)}) and ${e.id} (${listingWords(e.listing!)}); ` + 'one url is one endpoint: list it once, under one id',
        );
      }
      const seen = byId.get(e.id);
      if (seen && !sameEndpoint(seen.url, e.url)) throw new InputError(`two endpoints are named ${e.id}: ${seen.url} and ${e.url} (sources: ${parts.map((x) => x.source).join(', ')})`);
      // The same endpoint in two endpoints files: both VoID claims must be one, or the one not checked could pass.
      if (seen && e.listing && (seen.listing?.void !== e.listing.void || seen.listing?.voidDigest !== e.listing.voidDigest)) {
        const where = (x: RegisteredEndpoint) => (x.listing ? listingWords(x.listing) : 'a URL given');
        throw new InputError(
          `${e.id} <${e.url}> is listed twice with different VoIDs (${where(seen)}: ${seen.listing?.void ?? 'none'}, digest ${seen.listing?.voidDigest?.slice(0, 12) ?? 'none'}; ` +
            `${where(e)}: ${e.listing.void ?? 'none'}, digest ${e.listing.voidDigest?.slice(0, 12) ?? 'none'}): one of them is stale`,
        );
      }
      if (!seen) byId.set(e.id, e);
    }
  }
  const merged: EndpointRegistry = {
    source: parts.map((p) => p.source).join(' + '),
    endpointsFiles: usedFiles,
    build: o.build ? path.resolve(o.build) : (parts.find((p) => p.build)?.build ?? null),
    endpoints: sortEndpoints([...byId.values()]),
  };
  const r = filterGraphs(merged, o.kgs);
  if (r.endpoints.length === 0) throw new InputError(`the registry (${r.source}) has no endpoints`);
  return r;
}

/**
 * The hosts of a registry's endpoints in one line (for the progress of mcp, query, verify and
 * eval), e.g. `2 hosts: 127.0.0.2:41001 (virtuoso: 4 endpoints, 95 triples), 127.0.0.3:41003 (…)`.
 * @returns undefined when no endpoint has a placement
 */
export function placementLine(r: EndpointRegistry): string | undefined {
  const hosts = new Map<string, { store: string | null; endpoints: number; triples: number }>();
  for (const e of r.endpoints) {
    if (!e.placement) continue;
    const h = hosts.get(e.placement.host) ?? { store: e.placement.store, endpoints: 0, triples: 0 };
    h.endpoints++;
    h.triples += e.placement.triples ?? 0;
    hosts.set(e.placement.host, h);
  }
  if (hosts.size === 0) return undefined;
  const each = [...hosts].map(([host, h]) => `${host} (${h.store ? `${h.store}: ` : ''}${h.endpoints} endpoints, ${h.triples} triples)`);
  return `${hosts.size} host${hosts.size === 1 ? '' : 's'}: ${each.join(', ')}`;
}

/** Why an endpoint's VoID does not vouch for its placement (`placementMismatches`). */
type PlacementProblem =
  /** Its VoID answered, with another sha256 than the placement lists. */
  | 'digest'
  /** Its VoID URL answered another status than 2xx, or a body that is no UTF-8. */
  | 'status'
  /** The placement lists a VoID URL without its sha256: nothing to check it against. */
  | 'no-digest'
  /** The entry claims a shard of the build, which has a VoID for it (or is not at hand), but lists no VoID URL: nothing to read. */
  | 'no-void'
  /** Its VoID URL gave no answer (connection refused, no answer within `VOID_READ_MS`): the endpoint is likely down. */
  | 'unread'
  /**
   * Its VoID states as its `void:sparqlEndpoint` the url of another registered endpoint, or another
   * endpoint's VoID states its url: the urls of two entries are swapped, or one url is listed under
   * two ids, and a query would reach another shard than the one its id names.
   */
  | 'claimed'
  /**
   * Its entry's `host` (store oxigraph: the listener of the serve holding its triples) is not the
   * host of the SPARQL endpoint its VoID states: the placement names another host than the serve.
   */
  | 'host'
  /**
   * Its VoID does not describe the one shard its entry claims (`urn:fkgqa:void:<graph>:shard<N>`):
   * it describes another shard (the entry's url, VoID and digest are another shard's: two entries'
   * ids swapped), several, or — the entry claiming a build — none of fkgqa's.
   */
  | 'shard'
  /**
   * Its VoID states its SPARQL endpoint at another url than the entry's (a reverse proxy), and the
   * service description read through the entry's url states an endpoint its VoID does not: the url
   * answers for another shard (urls swapped behind a proxy).
   */
  | 'served';

/** An endpoint whose VoID does not vouch for its placement. */
interface PlacementMismatch {
  /** The endpoint's id and SPARQL endpoint URL. */
  id: string;
  endpoint: string;
  /** The VoID URL its placement lists, or null when it lists none (`no-void`). */
  url: string | null;
  /** The endpoints file and entry that list it (`listingWords`), e.g. `endpoints[0] of /abs/endpoints.json`. */
  listed: string;
  /** Why, in words naming the VoID URL and the status, the digests or the missing digest; for `claimed`, the other endpoint's id, url and listing. */
  why: string;
  problem: PlacementProblem;
}

/** The problems of an entry that contradicts what its VoID or its url states (not of a VoID that is not the listed one). */
const CONTRADICTED: ReadonlySet<PlacementProblem> = new Set(['shard', 'served', 'host']);

/**
 * The refusal for endpoints whose VoID does not vouch for their placement: how many, then each
 * endpoint (id, URL, the file and entry listing it) with why, in up to three sentences: endpoints
 * listed under another endpoint's url (`claimed`), entries that their VoID or the endpoint at
 * their url contradicts (`shard`, `served`, `host`), and VoIDs that are not the listed ones or
 * cannot be checked (the rest: a stale file, another build).
 * @param nothingSent say that no query was sent (the check ran before the query)
 */
export function placementRefusal(moved: PlacementMismatch[], nothingSent = false): string {
  const each = (ms: PlacementMismatch[]) => ms.map((m) => `${m.id} <${m.endpoint}> (${m.listed}): ${m.why}`).join('; ');
  const claimed = moved.filter((m) => m.problem === 'claimed');
  const contradicted = moved.filter((m) => CONTRADICTED.has(m.problem));
  const other = moved.filter((m) => m.problem !== 'claimed' && !CONTRADICTED.has(m.problem));
  let sent = nothingSent ? '; nothing was sent' : '';
  const once = () => {
    const s = sent;
    sent = '';
    return s;
  };
  const parts: string[] = [];
  // Endpoints, not mismatches: one endpoint can be named twice (by its own VoID and by another's).
  const count = (ms: PlacementMismatch[]) => new Set(ms.map((m) => m.id)).size;
  if (claimed.length > 0)
    parts.push(
      `${count(claimed)} endpoint(s) are listed under the url of another registered endpoint: the VoID of one states the other's url as its SPARQL endpoint (are the urls of two entries swapped?)${once()}: ${each(claimed)}`,
    );
  if (contradicted.length > 0)
    parts.push(
      `${count(contradicted)} endpoint(s) are not what their endpoints file lists: their VoID or the endpoint answering at their url names another shard, endpoint or host than their entry (are the urls, ids or hosts of entries swapped or mistyped?)${once()}: ${each(contradicted)}`,
    );
  if (other.length > 0)
    parts.push(`${count(other)} endpoint(s) do not serve the VoID their endpoints file lists, or it cannot be checked (is the file stale, or the serve another build?)${once()}: ${each(other)}`);
  return parts.join('; ');
}

/** The most bytes of a VoID answer `placementMismatches` reads (16 MiB; a shard's VoID, extended, is some kB): more is the endpoint's fault. */
export const VOID_MAX_BYTES = 16 << 20;

/**
 * How long `placementMismatches` waits for one VoID answer, whole, in ms: 10 s, whatever the
 * query's `--timeout` (a VoID is some kB that serve holds ready; a VoID URL that never answers
 * refuses the run after this wait, not after the query's limit).
 */
export const VOID_READ_MS = 10_000;

/** True when the build at `build` has a VoID file for the shard endpoint (its catalogue's, or `<kg>/<shard>_void.ttl`). */
function buildHasVoid(build: string, e: RegisteredEndpoint): boolean {
  return e.voidFile !== null || (e.graph !== null && e.shard !== null && fs.existsSync(path.join(build, e.graph, `${e.shard}_void.ttl`)));
}

/** What `placementMismatches` checks besides the registry. */
interface PlacementCheckOptions {
  /**
   * The endpoints whose placement is checked and reported (default: every endpoint of the
   * registry). The VoIDs of all the registry's listed endpoints are read either way: which
   * endpoint a VoID states is compared with the urls of all.
   */
  checked?: (e: RegisteredEndpoint) => boolean;
  /** How long each VoID read may take, whole, in ms (default `VOID_READ_MS`). */
  timeoutMs?: number;
}

/** One listed VoID as read: what is wrong with it, or its text (2xx, UTF-8, its digest the one listed). */
type VoidRead = { mismatch: PlacementMismatch; text?: undefined } | { mismatch?: undefined; text: string };

/** Reads the VoID an endpoints file lists for `e` and compares its sha256 with the listed one (`placementMismatches`). */
async function readListedVoid(r: EndpointRegistry, e: RegisteredEndpoint, timeoutMs: number): Promise<VoidRead> {
  const l = e.listing!;
  const at = { id: e.id, endpoint: e.url, listed: listingWords(l) };
  const url = l.void;
  if (!url)
    return {
      mismatch: {
        ...at,
        url: null,
        problem: 'no-void',
        why: `its entry lists no VoID URL ("void" is null or absent), though it claims a shard of ${r.build ? `the build ${r.build}, which has a VoID for it` : 'a build'}, so what it serves cannot be checked`,
      },
    };
  const expected = l.voidDigest;
  if (!expected) return { mismatch: { ...at, url, problem: 'no-digest', why: `its endpoints file lists its VoID (${url}) without a voidDigest, so the VoID it serves cannot be checked` } };
  const badUrl = endpointUrlProblem(url);
  if (badUrl) return { mismatch: { ...at, url, problem: 'unread', why: `its VoID URL "${urlWithoutCredentials(url)}" cannot be read: ${badUrl}` } };
  const signal = AbortSignal.timeout(timeoutMs);
  const wrong = (problem: PlacementProblem, why: string): VoidRead => ({ mismatch: { ...at, url, problem, why } });
  try {
    const res = await send({ url, signal }, { allowed: (u) => u === url, maxBytes: VOID_MAX_BYTES });
    if (res.text === undefined) return wrong('status', `its VoID (${url}) answered HTTP ${res.status} with more than ${VOID_MAX_BYTES} bytes, larger than any VoID of a shard`);
    const text = res.text;
    if (res.status < 200 || res.status > 299 || res.encodingProblem) return wrong('status', `its VoID (${url}) answered HTTP ${res.status}${res.encodingProblem ? ` and ${res.encodingProblem}` : ''}`);
    const digest = createHash('sha256').update(text).digest('hex');
    return digest === expected ? { text } : wrong('digest', `its VoID (${url}) has sha256 ${digest.slice(0, 12)}…, the placement lists ${expected.slice(0, 12)}…`);
  } catch (err) {
    // A redirect (its message names the URL and the status), or an answer cut after its status line: the URL answered, with no VoID.
    if (err instanceof RedirectRefused) return wrong('status', `its VoID: ${err.message}`);
    const status = (err as { status?: number }).status;
    if (status !== undefined)
      return wrong('status', `its VoID (${url}) answered HTTP ${status}, but its answer ${signal.aborted ? `had not ended within ${timeoutMs} ms` : `broke off: ${networkWords(err as Error, true)}`}`);
    return wrong('unread', `its VoID (${url}) could not be read: ${signal.aborted ? `no answer within ${timeoutMs} ms` : networkWords(err as Error)}`);
  }
}

/**
 * `host:port` of a URL by the one notion of endpoint identity (`endpointKey`: a loopback name is
 * `127.0.0.1`), with the scheme's default port written out, or undefined when it is no URL.
 */
function hostKey(u: string): string | undefined {
  try {
    const x = new URL(endpointKey(u));
    return `${x.hostname}:${x.port || (x.protocol === 'https:' ? '443' : '80')}`;
  } catch {
    return undefined;
  }
}

/**
 * What a VoID (Turtle) says of where it is and what it is: the IRIs it states as
 * `void:sparqlEndpoint` (of any dataset it describes), and the shard datasets fkgqa minted that it
 * describes (`urn:fkgqa:void:<graph>:shard<N>` typed void:Dataset); both empty when it does not parse.
 */
async function voidClaims(turtle: string): Promise<{ endpoints: string[]; shards: string[] }> {
  const { Parser } = await import('n3');
  try {
    const quads = new Parser().parse(turtle);
    return {
      endpoints: quads.filter((q) => q.predicate.value === `${VOID}sparqlEndpoint` && q.object.termType === 'NamedNode').map((q) => q.object.value),
      shards: [
        ...new Set(
          quads
            .filter((q) => q.predicate.value === `${RDF}type` && q.object.value === `${VOID}Dataset` && q.subject.value.startsWith(DATASET_PREFIX) && /:shard\d+$/.test(q.subject.value))
            .map((q) => q.subject.value),
        ),
      ],
    };
  } catch {
    return { endpoints: [], shards: [] };
  }
}

/** Media types asked for a service description (SPARQL 1.1 Service Description: RDF; serve answers Turtle or N-Triples). */
const SD_ACCEPT = 'text/turtle, application/n-triples;q=0.9';

/**
 * The endpoint URLs the service description served at an endpoint's url (a GET without query)
 * states as `sd:endpoint`, read through that url (a reverse proxy's, when the url is one).
 * @returns the IRIs (empty when the description states none), or why none could be read, in words
 */
async function serviceEndpoints(url: string, timeoutMs: number): Promise<{ endpoints: string[] } | { why: string }> {
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    const res = await send({ url, headers: { accept: SD_ACCEPT }, signal }, { allowed: (u) => u === url, maxBytes: VOID_MAX_BYTES });
    if (res.text === undefined) return { why: `it answered HTTP ${res.status} with more than ${VOID_MAX_BYTES} bytes` };
    if (res.status < 200 || res.status > 299 || res.encodingProblem) return { why: `it answered HTTP ${res.status}${res.encodingProblem ? ` and ${res.encodingProblem}` : ''}` };
    const { Parser } = await import('n3');
    try {
      const quads = new Parser({ baseIRI: url }).parse(res.text);
      return { endpoints: quads.filter((q) => q.predicate.value === `${SD}endpoint` && q.object.termType === 'NamedNode').map((q) => q.object.value) };
    } catch {
      return { endpoints: [] };
    }
  } catch (err) {
    if (err instanceof RedirectRefused) return { why: err.message };
    return { why: signal.aborted ? `no answer within ${timeoutMs} ms` : networkWords(err as Error) };
  }
}

/**
 * Checks that the endpoints listed by endpoints files still serve the VoID their entry lists (its
 * sha256), are listed under their own url and are the shard their entry names: an endpoint whose
 * serve was restarted on another build, whose file is stale, or whose url is another entry's, is
 * found before any query. Urls are compared by the one notion of endpoint identity (`sameEndpoint`).
 *
 * Two phases. First the VoID of every endpoint of the registry that an endpoints file lists is
 * read, all at once. Every shard endpoint of an endpoints file that claims a build (the file names
 * one, or the registry is opened on one) is checked, with or without a `host`; one listed twice is
 * checked once (`openRegistry` refuses two different claims). Such an entry without a VoID URL is
 * reported (`no-void`), unless the build is at hand and has no VoID for the shard (nothing to check
 * against); one with a VoID URL without its sha256 too (`no-digest`); a VoID that cannot be read
 * within the time (a URL no server answers, no answer in time) too (`unread`). Endpoints given as
 * plain URLs, and entries of a file that names no build read without one, are not checked.
 *
 * Then, over the VoIDs read whole with the listed sha256:
 * - `claimed`: an endpoint whose VoID states as its `void:sparqlEndpoint` the url of another
 *   registered endpoint (another id), naming that endpoint's id, url and listing; so is, from its
 *   side, that other endpoint. Two entries whose urls are swapped (each VoID states the other's
 *   url), urls rotated over several entries, and one url listed under two ids (the VoID of one
 *   states the url both list), are refused.
 * - `shard`: a shard entry whose VoID describes another shard of fkgqa's
 *   (`urn:fkgqa:void:<graph>:shard<N>`) than the one its graph and shard name (url, VoID and digest
 *   of two entries swapped, ids kept), or several shards (a VoID of one shard describes only it),
 *   or — when the entry claims a build — no shard of fkgqa's at all (a foreign VoID). A foreign
 *   VoID of an entry whose file names no build, read without one, is a pass: nothing names the
 *   build whose VoID it should be, and its sha256 is the one listed. (An entry's id is its graph and
 *   shard, `<graph>-<shard>`: `readEndpointsFile` refuses any other.)
 * - `served`: an entry whose url no VoID statement names (its VoID states another endpoint that no
 *   entry lists, e.g. a reverse proxy in front of a serve: the VoID states the serve's url) is asked,
 *   through its own url, for its service description (a GET without query, as Comunica probes): an
 *   endpoint it states as `sd:endpoint` must be one its VoID states. A swap behind a proxy (each
 *   proxy url in front of another shard's serve) is refused; a plain reverse proxy runs (the serve
 *   behind it describes itself by the url its VoID states). A url that answers no service
 *   description stating an endpoint (a foreign endpoint, an error, no answer) passes, documented:
 *   nothing to compare, and a failing endpoint is its own fault when queried. A VoID that states no
 *   endpoint (one not written by serve) is not compared.
 * - `host`: an entry with store oxigraph whose `host` is not the host of the endpoint its VoID
 *   states (the serve's listener, loopback names being one host); with store virtuoso, `host` names
 *   the Virtuoso instance, which no VoID states, and is taken as listed.
 * VoIDs that cannot be read, or are not the listed ones, state nothing (the first phase reports
 * them for the checked endpoints).
 * @returns the checked endpoints (`o.checked`) whose VoID differs, cannot be checked or could not be
 *   read, or that are listed under another endpoint's url, in the registry's order
 *   (PlacementMismatch); empty when all agree
 */
export async function placementMismatches(r: EndpointRegistry, o: PlacementCheckOptions = {}): Promise<PlacementMismatch[]> {
  const timeoutMs = o.timeoutMs ?? VOID_READ_MS;
  const inScope = o.checked ?? (() => true);
  const listed = r.endpoints.filter((e) => e.listing && (e.listing.void || ((e.listing.namesBuild || r.build !== null) && (r.build === null || buildHasVoid(r.build, e)))));
  const reads = await Promise.all(listed.map((e) => readListedVoid(r, e, timeoutMs)));
  const out: PlacementMismatch[] = [];
  for (const [i, read] of reads.entries()) if (read.mismatch && inScope(listed[i])) out.push(read.mismatch);
  // Phase two: what the VoIDs read state, against the entries and the urls of the whole registry.
  const claims = await Promise.all(reads.map((read) => (read.text === undefined ? undefined : voidClaims(read.text))));
  // The checked entries whose url their VoID does not state: their service description, read through their url, all at once.
  // (A VoID that states a registered url is judged by it: its own is agreement, another's a `claimed` swap.)
  const registered = (n: string) => r.endpoints.some((x) => sameEndpoint(n, x.url));
  const behind = listed.map((e, i) => inScope(e) && claims[i] !== undefined && claims[i].endpoints.length > 0 && !claims[i].endpoints.some(registered));
  const served = await Promise.all(listed.map((e, i) => (behind[i] ? serviceEndpoints(e.url, timeoutMs) : undefined)));
  const where = (x: RegisteredEndpoint) => (x.listing ? listingWords(x.listing) : 'given as a URL');
  for (const [i, claim] of claims.entries()) {
    if (claim === undefined) continue;
    const e = listed[i];
    const stated = claim.endpoints;
    const at = { id: e.id, endpoint: e.url, listed: where(e), url: e.listing!.void };
    // A VoID of an fkgqa shard describes that one shard: the one the entry's graph and shard (its id, `<graph>-<shard>`) name.
    const own = e.graph !== null && e.shard !== null ? shardDatasetIri(e.graph, e.shard) : undefined;
    const claimsBuild = e.listing!.namesBuild || r.build !== null;
    if (inScope(e) && own !== undefined) {
      const shards = claim.shards.map((x) => `<${x}>`).join(', ');
      const whose = `${e.graph}'s ${e.shard} (<${own}>), which its id claims`;
      const why =
        claim.shards.length === 1 && claim.shards[0] !== own
          ? `its VoID (${e.listing!.void}) describes ${shards}, not ${whose}: are its url, VoID and digest another entry's?`
          : claim.shards.length > 1
            ? `its VoID (${e.listing!.void}) describes ${claim.shards.length} shards (${shards}), not only ${whose}: the VoID of a shard describes that shard only`
            : claim.shards.length === 0 && claimsBuild
              ? `its VoID (${e.listing!.void}) describes no shard of fkgqa (no void:Dataset <${DATASET_PREFIX}…:shard<N>>), not ${whose}: is its VoID another endpoint's?`
              : undefined;
      if (why) out.push({ ...at, problem: 'shard', why });
    }
    // Through its url: the endpoint answering there must be one its VoID states (none stated: nothing to compare).
    const sd = served[i];
    const answered = sd !== undefined && 'endpoints' in sd ? sd.endpoints : [];
    if (answered.length > 0 && !answered.some((n) => stated.some((v) => sameEndpoint(n, v))))
      out.push({
        ...at,
        problem: 'served',
        why: `its url answers as <${answered[0]}> (the sd:endpoint of the service description read through it), but its VoID (${e.listing!.void}) states its SPARQL endpoint at <${stated[0]}>: is its url another entry's (urls swapped behind a proxy)?`,
      });
    // With store oxigraph, `host` is the serve's own listener: the host of the endpoint its VoID states (serve's url, also behind a proxy).
    const listedHost = e.placement ? hostKey(`http://${e.placement.host}`) : undefined;
    if (inScope(e) && e.placement?.store === 'oxigraph' && stated.length > 0 && !stated.some((n) => hostKey(n) === listedHost))
      out.push({
        ...at,
        problem: 'host',
        why: `its entry lists host ${e.placement.host}, but its VoID (${e.listing!.void}) states its SPARQL endpoint at <${stated[0]}>, on ${hostOf(stated[0]) ?? 'no host'}: with store oxigraph, "host" is the listener of the serve holding its triples`,
      });
    for (const other of r.endpoints) {
      if (other.id === e.id || !(inScope(e) || inScope(other))) continue;
      const named = stated.find((n) => sameEndpoint(n, other.url));
      if (named === undefined) continue;
      // Once per pair: under the endpoint whose VoID states the url; when only the other is checked, under the
      // other, from its side, if its VoID states the url of this one (two urls swapped), else under this one
      // (urls rotated over three entries or more: each entry is named once, by its own VoID).
      const otherClaims = claims[listed.indexOf(other)];
      const swappedPair = otherClaims?.endpoints.some((n) => sameEndpoint(n, e.url)) ?? false;
      if (inScope(e) || !swappedPair)
        out.push({
          ...at,
          problem: 'claimed',
          why: `its VoID (${e.listing!.void}) states as its SPARQL endpoint <${named}>, the url of ${other.id} (${where(other)})`,
        });
      else
        out.push({
          id: other.id,
          endpoint: other.url,
          listed: where(other),
          url: other.listing?.void ?? null,
          problem: 'claimed',
          why: `the VoID of ${e.id} <${e.url}> (${where(e)}, ${e.listing!.void}) states its url as its SPARQL endpoint`,
        });
    }
  }
  const order = new Map(r.endpoints.map((e, i) => [e.id, i]));
  return out
    .map((m, i) => ({ m, i }))
    .sort((x, y) => order.get(x.m.id)! - order.get(y.m.id)! || x.i - y.i)
    .map(({ m }) => m);
}

/** `host:port` of a URL as written in messages (the port only when not the scheme's default, as `URL.host`), or undefined when it is none. */
function hostOf(u: string): string | undefined {
  try {
    return new URL(u).host;
  } catch {
    return undefined;
  }
}

/** The largest answer to the probe's `ASK {}` read, in bytes (a SPARQL results boolean is under 100). */
export const PROBE_MAX_BYTES = 64 << 10;

/**
 * Checks that endpoints answer a SPARQL query (`ASK {}` by GET, SPARQL 1.1 Protocol) with a 2xx
 * status and a whole answer (at most `PROBE_MAX_BYTES`) within `timeoutMs`, all at once; no redirect
 * is followed.
 * @returns the endpoints that do not, each with why in words (`refused the connection: nothing listens there
 *   (ECONNREFUSED)`, `closed the connection before answering (ECONNRESET)`, `no answer
 *   within … ms`, `HTTP 404`, a redirect, `answered HTTP 200, but its answer had not ended within … ms`
 *   or `… was larger than … bytes`) and, when it answered (a status line: another status than 2xx, a
 *   redirect, or a 2xx whose body did not end within the time or size limit), the HTTP `status`: such
 *   an endpoint is reachable but refuses or is faulty, never unreachable; empty when all answer
 */
export async function unreachableEndpoints(urls: string[], timeoutMs = 5_000): Promise<{ url: string; why: string; status?: number }[]> {
  const results = await Promise.all(
    urls.map(async (url) => {
      const signal = AbortSignal.timeout(timeoutMs);
      try {
        // The body within the same limits: an endless or huge answer is the endpoint's fault, not a sign that it is down.
        const r = await send(
          { url: `${url}${url.includes('?') ? '&' : '?'}query=${encodeURIComponent('ASK {}')}`, headers: { accept: 'application/sparql-results+json' }, signal },
          { allowed: (u) => urls.some((x) => sameEndpoint(x, endpointOf(u))), maxBytes: PROBE_MAX_BYTES },
        );
        if (r.text === undefined) return { url, why: `answered HTTP ${r.status}, but its answer to ASK {} was larger than ${PROBE_MAX_BYTES} bytes`, status: r.status };
        if (r.encodingProblem) return { url, why: `answered HTTP ${r.status}, but ${r.encodingProblem}`, status: r.status };
        return r.status >= 200 && r.status <= 299 ? undefined : { url, why: `HTTP ${r.status}`, status: r.status };
      } catch (e) {
        const err = e as Error & { status?: number };
        if (err instanceof RedirectRefused) return { url, why: err.message, status: err.status };
        // An abort or a cut after the status line carries the status: the endpoint answered.
        const status = err.status;
        if (status !== undefined) {
          const words = signal.aborted ? `had not ended within ${timeoutMs} ms` : `broke off: ${networkWords(err, true)}`;
          return { url, why: `answered HTTP ${status}, but its answer to ASK {} ${words}`, status };
        }
        return { url, why: signal.aborted ? `no answer within ${timeoutMs} ms` : networkWords(err) };
      }
    }),
  );
  return results.filter((x): x is { url: string; why: string; status?: number } => x !== undefined);
}

/** Endpoints started in this process for a build (what `fkgqa serve`'s library function returns). */
export interface RunningEndpoints {
  /** The endpoints-file value of the running endpoints. */
  endpointsFile(): EndpointsFileContents;
  close(): Promise<void>;
}

/**
 * Starts endpoints for some graphs of a build in this process, for commands that check a build
 * without a running serve (`fkgqa verify` without `--endpoints`, the MCP gold check). The
 * composition root (src/index.ts) passes `fkgqa serve`'s library function, so that verify and
 * mcp never import serve.
 */
export type EndpointLauncher = (o: { shards: string; kgs: string[]; timeoutMs: number }) => Promise<RunningEndpoints>;

/**
 * The registered endpoint a URL names, or undefined: the one whose url is the same endpoint
 * (`sameEndpoint`, the one notion of endpoint identity: `HTTP://`, `/./`, `%2D` for `-`, `:07600`
 * for `:7600`, a trailing `/`, `localhost` or `[::1]` for `127.0.0.1` are spellings of one URL).
 * Callers send to, count and name the endpoint by its registered `url`, never by the spelling looked up.
 */
export function findEndpoint(r: EndpointRegistry, url: string): RegisteredEndpoint | undefined {
  return r.endpoints.find((e) => e.url === url) ?? r.endpoints.find((e) => sameEndpoint(e.url, url));
}
