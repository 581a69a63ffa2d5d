/**
 * The core of the KGVoyager tools: options, the class and property indexes, ranking, and what the
 * tool families share (search.ts, instances.ts, explore.ts; assembled in tools.ts). The tools (Wisam & Li, "KGVoyager: Knowledge Graph Agnostic Question Answering via
 * Agentic Navigation", section 3) over a federation of SPARQL endpoints: search_all_classes,
 * search_all_properties, lookup_class_instances, explore_property_usage and
 * explore_entity_relations, as plain library functions on one `KgVoyager` object per registry.
 * Every answer is text for an LLM, bounded in rows ("showing N of M") and time, and names the
 * endpoints that hold what it shows — in a federation that is source selection, which the
 * single-endpoint tools of the paper do not need.
 */
import { RDFS } from '../../common/vocab.js';
import type { EndpointRegistry, RegisteredEndpoint } from '../../federation/registry.js';
import { NgramEmbedder, type Embedder } from './embedder.js';
import { HybridIndex, RETRIEVAL_DEFAULTS, type RetrievalMode, type SearchResult } from './retrieval.js';
import {
  CLASS_INDEX_QUERY,
  fetchIndexRows,
  indexDocuments,
  mergeClassIndex,
  mergePropertyIndex,
  PROPERTY_INDEX_QUERY,
  voidAnnotations,
  type ClassEntry,
  type EndpointCount,
  type IndexFailure,
  type PropertyEntry,
  type SchemaIndex,
} from './schema-index.js';
import type { SparqlRow } from '../../sparql/results.js';
import { iriRef, settleAll, type SparqlSelect } from './sparql.js';
import { pageNote, pickPage, type PageArgs } from '../paging.js';
import { sparqlIri } from '../../sparql/results.js';
import { counted } from '../../common/strings.js';

/** Options of the tools. */
export interface KgVoyagerOptions {
  /** Ranking of the search tools (default `hybrid`; `bm25` is the paper's keyword-only ablation). */
  retrieval: RetrievalMode;
  /** Harman's S-stemmer on the BM25 side (default true). */
  stem: boolean;
  /** RRF constant k (default 2; see docs/kgvoyager.md). */
  rrfK: number;
  /** δ of the adaptive filter (default 0.125, the paper's). */
  delta: number;
  /** Hits the filter always keeps (default 3). */
  minKeep: number;
  /** Most hits a search shows after the filter (default 20). */
  maxHits: number;
  /** Time limit of one exploration tool call, in ms, shared by its requests (default 10,000). */
  timeoutMs: number;
  /** Time limit of one endpoint's index query, in ms (default 60,000). */
  indexTimeoutMs: number;
  /** Largest index answer read from one endpoint, in rows (default 100,000). */
  indexMaxRows: number;
  /** Rows shown per list of an exploration tool (default 20). */
  maxRows: number;
  /** Subjects or candidates sampled for cross-endpoint type look-ups and fallback ranking (default 200). */
  sampleSize: number;
  /** Requests in flight at once (default 8). */
  concurrency: number;
}

/** The default options. */
export const KGVOYAGER_DEFAULTS: KgVoyagerOptions = {
  retrieval: 'hybrid',
  stem: true,
  rrfK: RETRIEVAL_DEFAULTS.rrfK,
  delta: RETRIEVAL_DEFAULTS.delta,
  minKeep: RETRIEVAL_DEFAULTS.minKeep,
  maxHits: 20,
  timeoutMs: 10_000,
  indexTimeoutMs: 60_000,
  indexMaxRows: 100_000,
  maxRows: 20,
  sampleSize: 200,
  concurrency: 8,
};

/** A tool's answer: text for the agent, whether it is an error, and facts for the call log. */
export interface ToolAnswer {
  text: string;
  isError: boolean;
  /** Endpoint URLs asked, and SPARQL requests sent per URL. */
  requests: Record<string, number>;
  /** For an error: its class (`invalid-arguments`, `endpoint`, `internal`) and whether the infrastructure caused it (`_meta["fkgqa/error"]`). */
  error?: { class: string; infrastructure: boolean; endpoint?: string };
  /** How many things the answer found (hits, instances, triples); 0 when it found nothing. */
  hits?: number;
}

/** An argument error of a tool (the agent's: not infrastructure). */
export const argumentError = (text: string): ToolAnswer => ({ text: `Error (invalid-arguments): ${text}`, isError: true, requests: {}, error: { class: 'invalid-arguments', infrastructure: false } });

/**
 * The error answer when every endpoint asked failed (nothing could be looked up: the
 * infrastructure's fault), or undefined when some answered.
 */
export function allFailed(asked: number, failures: readonly { url: string; error: string }[], requests: Record<string, number>): ToolAnswer | undefined {
  if (asked === 0 || failures.length < asked) return undefined;
  return {
    text: ['Error (endpoint): no endpoint answered, so nothing could be looked up (this is not an empty result):', ...failureLines(failures).slice(1)].join('\n'),
    isError: true,
    requests,
    error: { class: 'endpoint', infrastructure: true, endpoint: failures[0].url },
  };
}

/** The default page of a tool called as a library function (no offset, 20,000 characters). */
export const DEFAULT_PAGE: PageArgs = { offset: 0, maxChars: 20_000 };

/** What the tools need: the endpoints, a way to query them, and the embedder of the dense side. */
export interface KgVoyagerContext {
  registry: EndpointRegistry;
  select: SparqlSelect;
  /** Default: `NgramEmbedder` (3-grams, 2048 dimensions). */
  embedder?: Embedder;
  options?: Partial<KgVoyagerOptions>;
  /**
   * The knowledge graph these tools cover when they are one graph of several (scope.ts): answers
   * name it, and a continuation says `graph="…", offset=…`.
   */
  graph?: string;
  /**
   * Prefixes the search answers write IRIs with (label → namespace; the build's `:` of `fkgqa mcp`),
   * as SPARQL writes them (`:singer\#name`), declared in the answer's head line. Default none: `<iri>`.
   */
  prefixes?: Record<string, string>;
}

export const LABEL = `${RDFS}label`;
export const XSD = 'http://www.w3.org/2001/XMLSchema#';
export const short = (iri: string) => (iri.startsWith(XSD) ? `xsd:${iri.slice(XSD.length)}` : `<${iri}>`);

/** A deadline shared by the requests of one tool call. */
export class Budget {
  private readonly end: number;
  readonly requests: Record<string, number> = {};
  constructor(
    ms: number,
    private readonly select: SparqlSelect,
  ) {
    this.end = Date.now() + ms;
  }
  /** Runs a query with the time that is left (at least 1 ms); counts the request. */
  run(url: string, query: string, maxRows: number): Promise<SparqlRow[]> {
    this.requests[url] = (this.requests[url] ?? 0) + 1;
    return this.select(url, query, { timeoutMs: Math.max(1, this.end - Date.now()), maxRows });
  }
}

/** Messages of endpoints that failed during a call, as lines. */
export function failureLines(failures: readonly { url: string; error: string }[]): string[] {
  if (failures.length === 0) return [];
  return [
    `Incomplete: ${counted(failures.length, 'endpoint')} did not answer (results from them are missing, not empty):`,
    ...failures.map((f) => `- <${f.url}>: ${f.error.split('\n')[0].slice(0, 300)}`),
  ];
}

export const endpointList = (eps: readonly EndpointCount[], max = 8) =>
  eps
    .slice(0, max)
    .map((c) => `<${c.url}> ${c.count}`)
    .join(', ') + (eps.length > max ? `, … ${eps.length - max} more` : '');

/**
 * The KGVoyager tools over one endpoint registry. The class and property indexes are built on
 * first use (one query per endpoint each) and kept in memory; endpoints that failed are asked again
 * at the next search.
 */
export class KgVoyagerCore {
  readonly options: KgVoyagerOptions;
  readonly embedder: Embedder;
  private readonly registry: EndpointRegistry;
  /** @internal the query function of every tool */
  readonly select: SparqlSelect;
  private readonly classRows = new Map<string, SparqlRow[]>();
  private readonly propertyRows = new Map<string, SparqlRow[]>();
  private classes: { index: SchemaIndex<ClassEntry>; search: HybridIndex; byIri: Map<string, ClassEntry> } | undefined;
  private properties: { index: SchemaIndex<PropertyEntry>; search: HybridIndex; byIri: Map<string, PropertyEntry> } | undefined;

  /** The graph of a per-graph instance (KgVoyagerContext.graph), else undefined. */
  readonly graph: string | undefined;
  /** Prefixes of the search answers' IRIs (KgVoyagerContext.prefixes). */
  readonly prefixes: Record<string, string>;

  constructor(context: KgVoyagerContext) {
    this.graph = context.graph;
    this.prefixes = context.prefixes ?? {};
    this.registry = context.registry;
    this.select = context.select;
    this.embedder = context.embedder ?? new NgramEmbedder();
    this.options = { ...KGVOYAGER_DEFAULTS, ...context.options };
  }

  /** The registry's endpoints. */
  get endpoints(): readonly RegisteredEndpoint[] {
    return this.registry.endpoints;
  }

  private indexBounds() {
    return { timeoutMs: this.options.indexTimeoutMs, maxRows: this.options.indexMaxRows };
  }

  /** `select`, counting requests per URL into `requests`. */
  private counting(requests: Record<string, number>): SparqlSelect {
    return (url, query, bounds) => {
      requests[url] = (requests[url] ?? 0) + 1;
      return this.select(url, query, bounds);
    };
  }

  /**
   * The class index (built, or completed for endpoints that failed before).
   * @param requests index queries sent now are counted here, per endpoint URL
   * @returns the merged index and its search index
   */
  async classIndex(requests: Record<string, number> = {}): Promise<{ index: SchemaIndex<ClassEntry>; search: HybridIndex; byIri: Map<string, ClassEntry> }> {
    if (this.classes && this.classes.index.failures.length === 0) return this.classes;
    const before = this.classRows.size;
    const rows = await fetchIndexRows(this.endpoints, CLASS_INDEX_QUERY, this.counting(requests), this.indexBounds(), this.classRows, this.options.concurrency);
    if (!this.classes || this.classRows.size !== before) {
      const index = mergeClassIndex(this.endpoints, rows);
      this.classes = { index, search: await HybridIndex.build(indexDocuments(index.entries), this.embedder, this.options.stem), byIri: new Map(index.entries.map((e) => [e.iri, e])) };
    }
    return this.classes;
  }

  /** The property index (see `classIndex`). */
  async propertyIndex(requests: Record<string, number> = {}): Promise<{ index: SchemaIndex<PropertyEntry>; search: HybridIndex; byIri: Map<string, PropertyEntry> }> {
    if (this.properties && this.properties.index.failures.length === 0) return this.properties;
    const before = this.propertyRows.size;
    const rows = await fetchIndexRows(this.endpoints, PROPERTY_INDEX_QUERY, this.counting(requests), this.indexBounds(), this.propertyRows, this.options.concurrency);
    if (!this.properties || this.propertyRows.size !== before) {
      const index = mergePropertyIndex(this.endpoints, rows, voidAnnotations(this.endpoints));
      this.properties = { index, search: await HybridIndex.build(indexDocuments(index.entries), this.embedder, this.options.stem), byIri: new Map(index.entries.map((e) => [e.iri, e])) };
    }
    return this.properties;
  }

  /** @internal */
  searchOptions(mode?: RetrievalMode) {
    return { mode: mode ?? this.options.retrieval, rrfK: this.options.rrfK, delta: this.options.delta, minKeep: this.options.minKeep };
  }

  /** Ranks classes for a term (all hits and the filtered ones), for the tools and the retrieval benchmark. */
  async rankClasses(term: string, mode?: RetrievalMode): Promise<SearchResult> {
    return (await this.classIndex()).search.search(term, this.searchOptions(mode));
  }

  /** Ranks properties for a term (see `rankClasses`). */
  async rankProperties(term: string, mode?: RetrievalMode): Promise<SearchResult> {
    return (await this.propertyIndex()).search.search(term, this.searchOptions(mode));
  }

  /**
   * The head line of a search: what was searched, how many entries of the index match, and how many
   * the adaptive filter kept (the hits, best first). How they were ranked (the retrieval mode, RRF k,
   * δ) is the server's configuration, in docs/kgvoyager.md and the call log, not in every answer.
   * @internal
   */
  describeSearch(kind: string, term: string, total: number, result: SearchResult, graphs?: number): string {
    const where = graphs ? ` over ${graphs} knowledge graphs, each hit naming its graph` : this.graph ? ` in the knowledge graph ${this.graph}` : '';
    const kept = result.kept.length === result.ranked.length ? `${result.kept.length} matching ${kind}` : `the best ${result.kept.length} of ${result.ranked.length} matching ${kind}`;
    return `search_all_${kind} ${JSON.stringify(term)}${where}: ${kept}`;
  }

  /** `how` of a continuation: `graph="g", ` for one graph of several. @internal */
  continuation(): string {
    return this.graph ? `graph=${JSON.stringify(this.graph)}, ` : '';
  }

  /**
   * One search tool: ranks the index for a term, keeps the filtered hits and shows one page of
   * them (at most `maxHits` from `page.offset`, within `page.maxChars`), one line per hit with
   * `detail` (what follows the IRI's words).
   */
  /** @internal */
  async searchTool<E extends ClassEntry>(
    kind: 'classes' | 'properties',
    term: string,
    build: (requests: Record<string, number>) => Promise<{ index: SchemaIndex<E>; search: HybridIndex; byIri: Map<string, E> }>,
    detail: (e: E, name: (iri: string) => string) => string,
    none: string,
    page: PageArgs = DEFAULT_PAGE,
  ): Promise<ToolAnswer> {
    const t = term.trim();
    if (!t) return argumentError(`search_all_${kind} needs a non-empty term (e.g. "${kind === 'classes' ? 'singer' : 'name'}").`);
    const requests: Record<string, number> = {};
    const { index, search, byIri } = await build(requests);
    const down = allFailed(this.endpoints.length, index.failures, requests);
    if (down) return down;
    const result = await search.search(t, this.searchOptions());
    return this.searchAnswer(kind, t, index.entries.length, result, (id) => ({ entry: byIri.get(id)! }), detail, none, index.failures, requests, page);
  }

  /**
   * The answer of a search: the head line, one page of hits and what failed.
   * @param entryOf the entry of a hit's id, and its graph when hits come from several graphs
   * @internal
   */
  searchAnswer<E extends ClassEntry>(
    kind: 'classes' | 'properties',
    term: string,
    total: number,
    result: SearchResult,
    entryOf: (id: string) => { entry: E; graph?: string },
    detail: (e: E, name: (iri: string) => string) => string,
    none: string,
    failures: readonly IndexFailure[],
    requests: Record<string, number>,
    page: PageArgs,
    graphs?: number,
    continuation = this.continuation(),
  ): ToolAnswer {
    const declared = Object.entries(this.prefixes);
    const head = this.describeSearch(kind, term, total, result, graphs) + (declared.length ? `; ${declared.map(([l, ns]) => `PREFIX ${l}: <${ns}>`).join(' ')}` : '');
    const tail = failureLines(failures);
    const names = { xsd: XSD, ...this.prefixes };
    const name = (iri: string) => sparqlIri(iri, names);
    const lineOf = (h: { id: string; score: number }, i: number) => {
      const { entry: e, graph } = entryOf(h.id);
      const labels = e.labels.length ? ` labels ${e.labels.map((l) => JSON.stringify(l)).join(', ')};` : '';
      return `${i + 1}. ${name(e.iri)}${graph ? ` in graph ${graph}` : ''};${labels} ${detail(e, name)}`;
    };
    const lines = result.kept.map(lineOf);
    const fixed = head.length + tail.join('\n').length + 200;
    const p = pickPage(lines, page.offset, this.options.maxHits, page.maxChars - fixed, (l) => l.length);
    const note = pageNote({ offset: page.offset, shown: p.items.length, total: lines.length, unit: 'hits', cutByChars: p.cutByChars, maxChars: page.maxChars, how: continuation });
    // The page's note only when the hits do not all fit on it.
    const out = [p.items.length < lines.length || page.offset > 0 ? `${head}. Showing ${note}.` : `${head}.`, ...p.items];
    if (result.kept.length === 0) out.push(none);
    out.push(...tail);
    return { text: out.join('\n'), isError: false, requests, hits: result.kept.length };
  }

  /** Endpoints of the same graph as `e` (fkgqa shards), or the other foreign endpoints; `e` excluded. */
  /** @internal */
  colocated(eps: readonly RegisteredEndpoint[]): RegisteredEndpoint[] {
    const ids = new Set(eps.map((e) => e.id));
    const graphs = new Set(eps.map((e) => e.graph));
    return this.endpoints.filter((x) => !ids.has(x.id) && graphs.has(x.graph));
  }

  /** @internal */
  endpointsOf(counts: readonly EndpointCount[] | undefined): RegisteredEndpoint[] {
    if (!counts) return [...this.endpoints];
    const ids = new Set(counts.map((c) => c.endpoint));
    return this.endpoints.filter((e) => ids.has(e.id));
  }

  /**
   * Classes of IRIs as stated at other endpoints (the federation join of an untyped subject in a
   * vertical shard with its type triple elsewhere): `VALUES ?s {…} ?s a ?c` at each endpoint.
   * @returns IRI → classes with the endpoints that state them
   */
  /** @internal */
  async typesAt(iris: readonly string[], eps: readonly RegisteredEndpoint[], budget: Budget, failures: IndexFailure[]): Promise<Map<string, Map<string, Set<string>>>> {
    const out = new Map<string, Map<string, Set<string>>>();
    if (iris.length === 0 || eps.length === 0) return out;
    const q = `SELECT ?s ?c WHERE { VALUES ?s { ${iris.map(iriRef).join(' ')} } ?s a ?c }`;
    const settled = await settleAll(eps, this.options.concurrency, (e) => budget.run(e.url, q, iris.length * 20));
    eps.forEach((e, i) => {
      const s = settled[i];
      if (s.status === 'rejected') return void failures.push({ endpoint: e.id, url: e.url, error: String((s.reason as Error)?.message ?? s.reason) });
      for (const row of s.value) {
        if (row.s?.type !== 'uri' || row.c?.type !== 'uri') continue;
        let m = out.get(row.s.value);
        if (!m) out.set(row.s.value, (m = new Map()));
        let where = m.get(row.c.value);
        if (!where) m.set(row.c.value, (where = new Set()));
        where.add(e.id);
      }
    });
    return out;
  }
}
