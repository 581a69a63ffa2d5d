/**
 * Describing a build: VoID files for every shard and the catalogue, computed from the shards
 * (`describeGraph`, used by `partition`), recomputed for an existing build (`describeBuild`,
 * `fkgqa describe`).
 */
import fs from 'node:fs';
import path from 'node:path';
import { InputError } from '../common/errors.js';
import { iriError } from '../common/iri.js';
import { readBuildDir } from '../build/open.js';
import { endpointUrlProblem, urlWithoutCredentials } from '../sparql/protocol.js';
import { HttpSparqlClient, OxigraphClient, type SparqlClient } from './client.js';
import { catalogueFileTexts, describeInWords, voidFiles } from './catalogue.js';
import { checkVoid, formatUntrue } from './check.js';
import { shardDatasetIri, type ShardDescription, type ShardStatistics } from './model.js';
import { computeStatistics } from './statistics.js';
import { streamStatistics } from './stream-statistics.js';
import { readVoid, renderVoid } from './void-turtle.js';
import { counted } from '../common/strings.js';

/**
 * The endpoint URL of a shard under a base URL, following the SPARQL-MCP convention
 * `<base>/<graph>-shard<N>/sparql` (field notes §0).
 * @param base e.g. `http://localhost:7001` (a trailing `/` is ignored)
 * @param endpoint endpoint name `<graph>-shard<N>`
 * @throws InputError if `base` is not an absolute http(s) URL
 */
export function endpointUrl(base: string, endpoint: string): string {
  let u: URL;
  try {
    u = new URL(base);
  } catch {
    throw new InputError(`--endpoint-base must be an absolute URL, got "${base}"`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new InputError(`--endpoint-base must be an http(s) URL, got "${urlWithoutCredentials(base)}"`);
  // Credentials would be written into the VoID files and the catalogue, which agents read.
  const problem = endpointUrlProblem(base);
  if (problem) throw new InputError(`--endpoint-base "${urlWithoutCredentials(base)}": ${problem}`);
  const url = `${base.replace(/\/+$/, '')}/${encodeURIComponent(endpoint)}/sparql`;
  const error = iriError(url);
  if (error) throw new InputError(`--endpoint-base gives endpoint URLs that are not IRIs ("${url}": ${error})`);
  return url;
}

/** What `describeGraph` needs to know about one knowledge graph. */
interface GraphToDescribe {
  /** Knowledge graph name. */
  graph: string;
  /** Its folder in the build, holding `shard<N>.nt`. */
  dir: string;
  /** Shard names `shard<N>`, in any order. */
  shards: string[];
  /** The build's default prefix (e.g. `http://valuenet/ontop/`): a vocabulary namespace, and `:` in the Turtle. */
  prefix?: string;
  /** Endpoint URL of a shard by endpoint name `<graph>-shard<N>`, if known. */
  endpointOf?: (endpoint: string) => string | undefined;
  /**
   * Where the statistics are computed. Default: an in-process oxigraph store loaded with the shard
   * files, each in the named graph `shardDatasetIri(graph, shard)`. A remote client must hold the
   * shards under the same graph names.
   */
  client?: SparqlClient;
  /**
   * How the statistics are computed without a `client`: `sparql` (default: the aggregate queries
   * on an in-process oxigraph store) or `stream` (`streamStatistics`: the same values from the
   * shard files, without a store, for graphs too large for one; see `chooseVoidEngine`).
   */
  engine?: VoidEngine;
}

/** Where VoID statistics come from: SPARQL queries on a store, or streaming the shard files. */
export type VoidEngine = 'sparql' | 'stream';

/**
 * Graphs above this many triples are described by streaming by default: an oxigraph store needs
 * about 1 KB per triple inside a 4 GiB WebAssembly heap, and streaming is faster at
 * every size measured (`fkgqa describe` of 1M triples: 17.5 s and 837 MiB by SPARQL, 4.9 s and
 * 290 MiB streamed); below it, the SPARQL path (the SPORTAL way, and the one a remote endpoint needs)
 * stays the default, and every dev graph (at most 152,328 triples) uses it.
 */
const STREAM_VOID_ABOVE_TRIPLES = 500_000;

/** `auto` → `sparql` for graphs up to STREAM_VOID_ABOVE_TRIPLES (500,000) triples, `stream` above. */
export function chooseVoidEngine(choice: VoidEngine | 'auto', triples: number): VoidEngine {
  return choice === 'auto' ? (triples > STREAM_VOID_ABOVE_TRIPLES ? 'stream' : 'sparql') : choice;
}

/**
 * Computes the descriptions of every shard of a knowledge graph: statistics by SPARQL
 * (`computeStatistics`, linksets included), title `<graph>-shard<N>`, the one-sentence
 * description, and the endpoint URL if known. With SPARQL (not `engine: 'stream'`), every
 * statement of the VoID as it will be written is then checked against the shards (`checkVoid`).
 * @returns one description per shard, in the order of `g.shards`
 * @throws InputError naming a shard file that is missing or does not load; Error from a remote
 *   client, or naming every VoID statement that is not true at its endpoint (a bug: exit 3)
 */
export async function describeGraph(g: GraphToDescribe): Promise<ShardDescription[]> {
  let client = g.client;
  if (!client && g.engine === 'stream') {
    const files = g.shards.map((s) => path.join(g.dir, `${s}.nt`));
    for (const f of files) if (!fs.existsSync(f)) throw new InputError('shard file not found', { file: f });
    const stats = await streamStatistics({ graph: g.graph, shards: g.shards, files, namespaces: g.prefix ? [g.prefix] : [] });
    return stats.map((s) => words(s, g));
  }
  if (!client) {
    const files = g.shards.map((s) => ({ file: path.join(g.dir, `${s}.nt`), graph: shardDatasetIri(g.graph, s) }));
    for (const f of files) if (!fs.existsSync(f.file)) throw new InputError('shard file not found', { file: f.file });
    client = OxigraphClient.load(files);
  }
  try {
    const stats = await computeStatistics(client, { graph: g.graph, shards: g.shards, namespaces: g.prefix ? [g.prefix] : [] });
    const descriptions = stats.map((s) => words(s, g));
    // The build's own check: every statement of the VoID as written (rendered and read back) is
    // true at its shard's endpoint.
    const written = descriptions.map((d) => readVoid(renderVoid(d, 'extended', g.prefix), voidFiles(d.graph, d.shard).voidExtended));
    const check = await checkVoid(client, written);
    if (check.untrue.length > 0) {
      const names = new Map(descriptions.map((d) => [d.dataset, d.title]));
      throw new Error(`VoID of ${g.graph}: ${check.untrue.length} statements not true at their endpoints:\n${formatUntrue(check.untrue, (ds) => names.get(ds) ?? ds)}`);
    }
    return descriptions;
  } finally {
    if (!g.client) client.close();
  }
}

/** A shard's statistics with its title, one-sentence description and endpoint URL. */
function words(s: ShardStatistics, g: GraphToDescribe): ShardDescription {
  const title = `${s.graph}-${s.shard}`;
  const endpoint = g.endpointOf?.(title);
  return { ...s, title, description: describeInWords(s), ...(endpoint ? { endpoint } : {}) };
}

/**
 * The VoID files of described shards, by path relative to the build directory:
 * `<graph>/shard<N>_void.ttl` (standard) and `<graph>/shard<N>_void_extended.ttl` (with linksets).
 */
export function voidFileTexts(descriptions: ShardDescription[], prefix?: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const d of descriptions) {
    const f = voidFiles(d.graph, d.shard);
    out.set(f.void, renderVoid(d, 'standard', prefix));
    out.set(f.voidExtended, renderVoid(d, 'extended', prefix));
  }
  return out;
}

/**
 * Writes files under `dir` so that none is half-written: every file goes to a temporary file
 * beside its target first, and the temporary files are renamed only when all are written.
 * @param files path relative to `dir` → content
 */
function writeFilesTogether(dir: string, files: Map<string, string>): void {
  const temps: [string, string][] = [];
  try {
    for (const [rel, text] of files) {
      const target = path.join(dir, rel);
      const temp = `${target}.fkgqa-tmp-${process.pid}`;
      fs.writeFileSync(temp, text);
      temps.push([temp, target]);
    }
  } catch (e) {
    for (const [temp] of temps) fs.rmSync(temp, { force: true });
    throw e;
  }
  for (const [temp, target] of temps) fs.renameSync(temp, target);
}

/** A graph of a build, as its manifest lists it. */
interface BuiltGraph {
  graph: string;
  dir: string;
  shards: string[];
  prefix: string;
  /** Triples in the shards. */
  triples: number;
}

/**
 * Reads the graphs of a build (`readBuildDir`: build.json, manifests whose graph is their folder,
 * shard files that match the manifest), sorted by name.
 */
function builtGraphs(dir: string): BuiltGraph[] {
  return readBuildDir(dir)
    .manifests.map((m) => ({
      graph: m.graph,
      dir: path.join(dir, m.graph),
      shards: m.shards.map((s) => s.name),
      prefix: m.options?.defaultPrefix ?? '',
      triples: m.shards.reduce((n, s) => n + (s.triples ?? 0), 0),
    }))
    .sort((x, y) => (x.graph < y.graph ? -1 : x.graph > y.graph ? 1 : 0));
}

/** Options of `describeBuild` (`fkgqa describe`). */
export interface DescribeBuildOptions {
  /** The build directory written by `fkgqa partition`. */
  dir: string;
  /** Base URL of the endpoints (see `endpointUrl`); without it, no endpoint URLs are written. */
  endpointBase?: string;
  /**
   * Compute the statistics through this SPARQL endpoint (SPARQL 1.1 Protocol) instead of an
   * in-process store. It must hold every shard of the build as the named graph
   * `shardDatasetIri(graph, shard)`.
   */
  sparql?: string;
  /** Without `sparql`: `sparql`, `stream`, or `auto` (default; see `chooseVoidEngine`). */
  engine?: VoidEngine | 'auto';
  /** Receives progress lines (the CLI prints them on stderr). */
  progress?: (line: string) => void;
}

/** What `describeBuild` did. */
export interface DescribeBuildResult {
  graphs: number;
  shards: number;
  /** Files written, relative to the build directory, sorted. */
  files: string[];
  /** Bytes of the VoID files (both variants, all shards). */
  voidBytes: number;
  /** Linksets found (each counted once, in its subjects' shard). */
  linksets: number;
  descriptions: ShardDescription[];
  timings: { totalMs: number };
}

/**
 * `fkgqa describe`: (re)computes the VoID of every shard of an existing build and its catalogue
 * from the shard files (or through a SPARQL endpoint), and writes them all at once.
 * @throws InputError for a directory that is not a build, a missing or unloadable shard file, or a
 *   bad `endpointBase` (nothing is written then); Error from a remote endpoint
 */
export async function describeBuild(o: DescribeBuildOptions): Promise<DescribeBuildResult> {
  const t0 = performance.now();
  const log = o.progress ?? (() => {});
  if (o.endpointBase) endpointUrl(o.endpointBase, 'x'); // validate before any work
  const graphs = builtGraphs(o.dir);
  const client = o.sparql ? new HttpSparqlClient(o.sparql) : undefined;
  const descriptions: ShardDescription[] = [];
  const files = new Map<string, string>();
  for (const [i, g] of graphs.entries()) {
    const t = performance.now();
    const engine = chooseVoidEngine(o.engine ?? 'auto', g.triples);
    const ds = await describeGraph({ ...g, client, engine, endpointOf: o.endpointBase ? (e) => endpointUrl(o.endpointBase!, e) : undefined });
    for (const [rel, text] of voidFileTexts(ds, g.prefix)) files.set(rel, text);
    descriptions.push(...ds);
    log(`[${i + 1}/${graphs.length}] ${g.graph}: ${counted(ds.length, 'shard')} described (${Math.round(performance.now() - t)} ms)`);
  }
  let voidBytes = 0;
  for (const text of files.values()) voidBytes += Buffer.byteLength(text);
  for (const [rel, text] of catalogueFileTexts(descriptions)) files.set(rel, text);
  writeFilesTogether(o.dir, files);
  return {
    graphs: graphs.length,
    shards: descriptions.length,
    files: [...files.keys()].sort(),
    voidBytes,
    linksets: descriptions.reduce((n, d) => n + d.linksets.length, 0),
    descriptions,
    timings: { totalMs: Math.round(performance.now() - t0) },
  };
}
