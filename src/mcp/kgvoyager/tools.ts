/**
 * The KGVoyager tools (Wisam & Li, "KGVoyager: Knowledge Graph Agnostic Question Answering via
 * Agentic Navigation", section 3) over a federation of SPARQL endpoints: search_all_classes,
 * search_all_properties, lookup_class_instances, explore_property_usage and
 * explore_entity_relations, as plain library functions on one `KgVoyager` object per registry.
 * Every answer is text for an LLM, bounded in rows ("showing N of M") and time, and names the
 * endpoints that hold what it shows — in a federation that is source selection, which the
 * single-endpoint tools of the paper do not need.
 */
import { RDF_TYPE, RDFS } from '../../common/vocab.js';
import type { EndpointRegistry, RegisteredEndpoint } from '../../federation/registry.js';
import { cosine, NgramEmbedder, type Embedder } from './embedder.js';
import { HybridIndex, RETRIEVAL_DEFAULTS, type RetrievalMode, type SearchResult } from './retrieval.js';
import {
  CLASS_INDEX_QUERY,
  fetchIndexRows,
  indexDocuments,
  mergeClassIndex,
  mergePropertyIndex,
  PROPERTY_INDEX_QUERY,
  voidAnnotations,
  type Annotation,
  type ClassEntry,
  type EndpointCount,
  type IndexFailure,
  type PropertyEntry,
  type SchemaIndex,
} from './schema-index.js';
import { iriRef, settleAll, stringLiteral, termText, type SparqlRow, type SparqlSelect, type SparqlTerm } from './sparql.js';
import { iriText } from './text.js';

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
}

/** What the tools need: the endpoints, a way to query them, and the embedder of the dense side. */
export interface KgVoyagerContext {
  registry: EndpointRegistry;
  select: SparqlSelect;
  /** Default: `NgramEmbedder` (3-grams, 2048 dimensions). */
  embedder?: Embedder;
  options?: Partial<KgVoyagerOptions>;
}

const LABEL = `${RDFS}label`;
const XSD = 'http://www.w3.org/2001/XMLSchema#';
const short = (iri: string) => (iri.startsWith(XSD) ? `xsd:${iri.slice(XSD.length)}` : `<${iri}>`);
const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
const byCodePoint = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** A deadline shared by the requests of one tool call. */
class Budget {
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
function failureLines(failures: { url: string; error: string }[]): string[] {
  if (failures.length === 0) return [];
  return [
    `Incomplete: ${plural(failures.length, 'endpoint')} did not answer (results from them are missing, not empty):`,
    ...failures.map((f) => `- <${f.url}>: ${f.error.split('\n')[0].slice(0, 300)}`),
  ];
}

const endpointList = (eps: readonly EndpointCount[], max = 8) =>
  eps
    .slice(0, max)
    .map((c) => `<${c.url}> ${c.count}`)
    .join(', ') + (eps.length > max ? `, … ${eps.length - max} more` : '');

/**
 * The KGVoyager tools over one endpoint registry. The class and property indexes are built on
 * first use (one query per endpoint each) and kept in memory; endpoints that failed are asked again
 * at the next search.
 */
export class KgVoyager {
  readonly options: KgVoyagerOptions;
  readonly embedder: Embedder;
  private readonly registry: EndpointRegistry;
  private readonly select: SparqlSelect;
  private readonly classRows = new Map<string, SparqlRow[]>();
  private readonly propertyRows = new Map<string, SparqlRow[]>();
  private classes: { index: SchemaIndex<ClassEntry>; search: HybridIndex; byIri: Map<string, ClassEntry> } | undefined;
  private properties: { index: SchemaIndex<PropertyEntry>; search: HybridIndex; byIri: Map<string, PropertyEntry> } | undefined;

  constructor(context: KgVoyagerContext) {
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

  private searchOptions(mode?: RetrievalMode) {
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

  private describeSearch(kind: string, term: string, total: number, result: SearchResult, mode: RetrievalMode): string {
    const how =
      mode === 'hybrid'
        ? `hybrid retrieval: BM25 + dense (${this.embedder.id}) fused by RRF k=${this.options.rrfK}`
        : mode === 'bm25'
          ? 'BM25 only'
          : `dense only (${this.embedder.id})`;
    const shown = Math.min(result.kept.length, this.options.maxHits);
    return `search_all_${kind} ${JSON.stringify(term)}: showing ${shown} of ${result.ranked.length} matching ${kind} (${total} in the index; ${how}; adaptive filter δ=${this.options.delta} kept ${result.kept.length}).`;
  }

  /**
   * One search tool: ranks the index for a term, keeps the filtered hits (at most `maxHits`) and
   * writes one line per hit with `detail` (what follows the IRI's words).
   */
  private async searchTool<E extends ClassEntry>(
    kind: 'classes' | 'properties',
    term: string,
    build: (requests: Record<string, number>) => Promise<{ index: SchemaIndex<E>; search: HybridIndex; byIri: Map<string, E> }>,
    detail: (e: E) => string,
    none: string,
  ): Promise<ToolAnswer> {
    const t = term.trim();
    if (!t) return { text: `search_all_${kind} needs a non-empty term (e.g. "${kind === 'classes' ? 'singer' : 'name'}").`, isError: true, requests: {} };
    const requests: Record<string, number> = {};
    const { index, search, byIri } = await build(requests);
    const mode = this.options.retrieval;
    const result = await search.search(t, this.searchOptions(mode));
    const lines = [this.describeSearch(kind, t, index.entries.length, result, mode)];
    result.kept.slice(0, this.options.maxHits).forEach((h, i) => {
      const e = byIri.get(h.id)!;
      const labels = e.labels.length ? ` labels ${e.labels.map((l) => JSON.stringify(l)).join(', ')};` : '';
      lines.push(`${i + 1}. <${e.iri}> (${e.text});${labels} ${detail(e)} [score ${h.score.toFixed(4)}]`);
    });
    if (result.kept.length === 0) lines.push(none);
    lines.push(...failureLines(index.failures));
    return { text: lines.join('\n'), isError: false, requests };
  }

  /**
   * search_all_classes: classes whose IRI words or labels match a term, with instance counts per
   * endpoint (paper section 3.1, "Class Search").
   */
  async searchAllClasses(term: string): Promise<ToolAnswer> {
    return this.searchTool(
      'classes',
      term,
      (r) => this.classIndex(r),
      (e) => `${plural(e.total, 'instance')} at ${plural(e.endpoints.length, 'endpoint')}: ${endpointList(e.endpoints)}`,
      'No class matches. Try a shorter or more general term, or search_all_properties.',
    );
  }

  /**
   * search_all_properties: properties whose IRI words or labels match a term, with triple counts
   * per endpoint and domains/ranges where the data (rdfs:domain, rdfs:range) or the VoID has them
   * (paper section 3.1, "Property Search").
   */
  async searchAllProperties(term: string): Promise<ToolAnswer> {
    const ann = (xs: Annotation[]) =>
      xs
        .slice(0, 5)
        .map((a) => (a.source === 'rdfs' ? `${short(a.iri)} (rdfs)` : `${short(a.iri)} (${a.triples} in VoID)`))
        .join(', ');
    return this.searchTool(
      'properties',
      term,
      (r) => this.propertyIndex(r),
      (e) => {
        const dr = [e.domains.length ? ` domain ${ann(e.domains)}` : '', e.ranges.length ? ` range ${ann(e.ranges)}` : ''].filter(Boolean).join(';');
        return `${plural(e.total, 'triple')} at ${plural(e.endpoints.length, 'endpoint')}: ${endpointList(e.endpoints)}${dr ? `;${dr}` : ''}`;
      },
      'No property matches. Try a shorter or more general term.',
    );
  }

  /** Endpoints of the same graph as `e` (fkgqa shards), or the other foreign endpoints; `e` excluded. */
  private colocated(eps: readonly RegisteredEndpoint[]): RegisteredEndpoint[] {
    const ids = new Set(eps.map((e) => e.id));
    const graphs = new Set(eps.map((e) => e.graph));
    return this.endpoints.filter((x) => !ids.has(x.id) && graphs.has(x.graph));
  }

  private endpointsOf(counts: readonly EndpointCount[] | undefined): RegisteredEndpoint[] {
    if (!counts) return [...this.endpoints];
    const ids = new Set(counts.map((c) => c.endpoint));
    return this.endpoints.filter((e) => ids.has(e.id));
  }

  /**
   * Classes of IRIs as stated at other endpoints (the federation join of an untyped subject in a
   * vertical shard with its type triple elsewhere): `VALUES ?s {…} ?s a ?c` at each endpoint.
   * @returns IRI → classes with the endpoints that state them
   */
  private async typesAt(iris: readonly string[], eps: readonly RegisteredEndpoint[], budget: Budget, failures: IndexFailure[]): Promise<Map<string, Map<string, Set<string>>>> {
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

  /**
   * lookup_class_instances (paper section 3.1, "Instance Lookup"): instances of a class, optionally
   * those whose IRI or `rdfs:label` contains `exact_term` (case-insensitive); with `all_attributes`
   * any literal value of the instance is matched instead of labels (slower). When `exact_term`
   * finds nothing and `fallback_term` is given, instances matching the broader fallback are
   * ranked by the similarity (the embedder's cosine) of their matched text to `exact_term`.
   * Federation: values held at other endpoints of the class's graph (a vertical split puts the
   * type triple and the attributes in different shards) are matched there and kept when the
   * subject is an instance of the class at an endpoint that holds the class.
   */
  async lookupClassInstances(args: { class: string; exact_term?: string; fallback_term?: string; all_attributes?: boolean }): Promise<ToolAnswer> {
    const cls = args.class?.trim().replace(/^<|>$/g, '');
    if (!cls) return { text: 'lookup_class_instances needs a class IRI (from search_all_classes).', isError: true, requests: {} };
    const budget = new Budget(this.options.timeoutMs, this.select);
    const { byIri } = await this.classIndex(budget.requests);
    const entry = byIri.get(cls);
    const failures: IndexFailure[] = [];
    const holders = this.endpointsOf(entry?.endpoints);
    const head = entry
      ? `<${cls}>: ${plural(entry.total, 'instance')} at ${plural(entry.endpoints.length, 'endpoint')} (${endpointList(entry.endpoints)}).`
      : `<${cls}> is not in the class index (no endpoint has instances of it); asking every endpoint.`;
    const exact = args.exact_term?.trim();
    const n = this.options.maxRows;

    if (!exact) {
      const q = `SELECT DISTINCT ?s ?l WHERE { ?s a ${iriRef(cls)} OPTIONAL { ?s <${LABEL}> ?l } } ORDER BY ?s LIMIT ${n}`;
      const settled = await settleAll(holders, this.options.concurrency, (e) => budget.run(e.url, q, n));
      const rows: { s: string; label?: string; endpoint: string }[] = [];
      holders.forEach((e, i) => {
        const s = settled[i];
        if (s.status === 'rejected') failures.push({ endpoint: e.id, url: e.url, error: String((s.reason as Error)?.message ?? s.reason) });
        else for (const r of s.value) if (r.s) rows.push({ s: r.s.value, label: r.l?.value, endpoint: e.id });
      });
      const shown = rows.slice(0, n);
      const total = entry?.total ?? rows.length;
      const lines = [head, `Instances (showing ${shown.length} of ${total}):`];
      for (const r of shown) lines.push(`- <${r.s}>${r.label ? ` ${JSON.stringify(r.label)}` : ''} [${r.endpoint}]`);
      lines.push(...failureLines(failures));
      return { text: lines.join('\n'), isError: false, requests: budget.requests };
    }

    const first = await this.matchInstances(cls, holders, exact, args.all_attributes ?? false, n, budget, failures);
    const where = args.all_attributes ? 'IRI or any literal value' : 'IRI or rdfs:label';
    const lines = [head];
    if (first.matches.size > 0 || !args.fallback_term?.trim()) {
      const shown = [...first.matches.values()].slice(0, n);
      lines.push(`Instances whose ${where} contains ${JSON.stringify(exact)} (case-insensitive): showing ${shown.length} of ${first.matches.size}${first.more ? '+ (more exist; refine the term)' : ''}:`);
      for (const m of shown) lines.push(`- <${m.s}>${m.text ? ` ${m.text}` : ''} [${[...m.endpoints].join(', ')}]`);
      if (first.matches.size === 0) lines.push(args.all_attributes ? 'None. Try a fallback_term (a broader word).' : 'None. Try all_attributes: true (names are often in literal attributes, not labels), or a fallback_term.');
    } else {
      const fb = args.fallback_term!.trim();
      const wide = await this.matchInstances(cls, holders, fb, args.all_attributes ?? false, this.options.sampleSize, budget, failures);
      const cands = [...wide.matches.values()];
      const texts = cands.map((c) => c.plain || iriText(c.s));
      const [q, ...vs] = cands.length ? await this.embedder.embed([exact, ...texts]) : [];
      const ranked = cands.map((c, i) => ({ c, sim: cosine(q, vs[i]) })).sort((a, b) => b.sim - a.sim || byCodePoint(a.c.s, b.c.s));
      const shown = ranked.slice(0, n);
      lines.push(
        `No instance's ${where} contains ${JSON.stringify(exact)}. ${cands.length}${wide.more ? '+' : ''} ${cands.length === 1 ? 'instance matches' : 'instances match'} the fallback ${JSON.stringify(fb)}; showing ${shown.length} of ${cands.length}, most similar to ${JSON.stringify(exact)} first (${this.embedder.id} cosine):`,
      );
      for (const { c, sim } of shown) lines.push(`- <${c.s}>${c.text ? ` ${c.text}` : ''} [${[...c.endpoints].join(', ')}] similarity ${sim.toFixed(3)}`);
    }
    lines.push(...failureLines(failures));
    return { text: lines.join('\n'), isError: false, requests: budget.requests };
  }

  /** Instances of `cls` matching a term on IRI and labels (or all literals), across the federation. */
  private async matchInstances(
    cls: string,
    holders: RegisteredEndpoint[],
    term: string,
    allAttributes: boolean,
    limit: number,
    budget: Budget,
    failures: IndexFailure[],
  ): Promise<{ matches: Map<string, { s: string; text: string; plain: string; endpoints: Set<string> }>; more: boolean }> {
    const lc = stringLiteral(term.toLowerCase());
    const value = allAttributes ? `?s ?p ?v . FILTER(isLiteral(?v) && CONTAINS(LCASE(STR(?v)), ${lc}))` : `?s <${LABEL}> ?v . BIND(<${LABEL}> AS ?p) FILTER(CONTAINS(LCASE(STR(?v)), ${lc}))`;
    const local = `SELECT DISTINCT ?s ?p ?v WHERE { ?s a ${iriRef(cls)} . OPTIONAL { ${value} } FILTER(BOUND(?v) || CONTAINS(LCASE(STR(?s)), ${lc})) } ORDER BY ?s LIMIT ${limit + 1}`;
    const remote = `SELECT DISTINCT ?s ?p ?v WHERE { ${value} FILTER(isIRI(?s)) } ORDER BY ?s LIMIT ${this.options.sampleSize}`;
    const others = this.colocated(holders);
    const jobs = [...holders.map((e) => ({ e, q: local, local: true })), ...others.map((e) => ({ e, q: remote, local: false }))];
    const settled = await settleAll(jobs, this.options.concurrency, (j) => budget.run(j.e.url, j.q, this.options.sampleSize + 1));
    const matches = new Map<string, { s: string; text: string; plain: string; endpoints: Set<string> }>();
    const pending = new Map<string, { p: string; v: SparqlTerm; endpoint: string }[]>();
    let more = false;
    const add = (s: string, endpoint: string, p?: string, v?: SparqlTerm) => {
      let m = matches.get(s);
      if (!m) matches.set(s, (m = { s, text: '', plain: '', endpoints: new Set() }));
      m.endpoints.add(endpoint);
      if (p && v && !m.text) {
        m.text = `${short(p)} = ${termText(v)}`;
        m.plain = v.value;
      }
    };
    jobs.forEach((j, i) => {
      const s = settled[i];
      if (s.status === 'rejected') return void failures.push({ endpoint: j.e.id, url: j.e.url, error: String((s.reason as Error)?.message ?? s.reason) });
      if (j.local && s.value.length > limit) more = true;
      for (const r of s.value) {
        if (r.s?.type !== 'uri') continue;
        if (j.local) add(r.s.value, j.e.id, r.p?.value, r.v);
        else {
          let xs = pending.get(r.s.value);
          if (!xs) pending.set(r.s.value, (xs = []));
          if (r.p && r.v) xs.push({ p: r.p.value, v: r.v, endpoint: j.e.id });
        }
      }
    });
    const unresolved = [...pending.keys()].filter((s) => !matches.has(s) || !matches.get(s)!.text);
    if (unresolved.length > 0) {
      const types = await this.typesAt(unresolved.slice(0, this.options.sampleSize), holders, budget, failures);
      for (const s of unresolved) {
        const where = types.get(s)?.get(cls);
        if (!where) continue;
        for (const x of pending.get(s)!) add(s, x.endpoint, x.p, x.v);
        for (const id of where) add(s, id);
      }
    }
    const sorted = new Map([...matches].sort(([a], [b]) => byCodePoint(a, b)));
    if (sorted.size > limit) more = true;
    return { matches: new Map([...sorted].slice(0, limit)), more };
  }

  /**
   * explore_property_usage (paper section 3.2): how a property is used — at which endpoints, the
   * classes of its subjects and objects (or the datatypes of its literals) with triple counts, and
   * example triples. Subjects or objects without a type at the endpoint of the triple are looked up
   * at the other endpoints of the same graph (a sample of `sampleSize`), so a property in a vertical
   * shard still shows the class of its subjects.
   */
  async explorePropertyUsage(args: { property: string }): Promise<ToolAnswer> {
    const prop = args.property?.trim().replace(/^<|>$/g, '');
    if (!prop) return { text: 'explore_property_usage needs a property IRI (from search_all_properties).', isError: true, requests: {} };
    const budget = new Budget(this.options.timeoutMs, this.select);
    const { byIri } = await this.propertyIndex(budget.requests);
    const entry = byIri.get(prop);
    const holders = this.endpointsOf(entry?.endpoints);
    const failures: IndexFailure[] = [];
    const p = iriRef(prop);
    const k = this.options.maxRows;
    const qs = {
      subjects: `SELECT ?c (COUNT(*) AS ?n) (SAMPLE(?s) AS ?x) WHERE { ?s ${p} ?o OPTIONAL { ?s a ?c } } GROUP BY ?c ORDER BY DESC(?n) ?c LIMIT ${k}`,
      objects: `SELECT ?c ?dt (COUNT(*) AS ?n) (SAMPLE(?o) AS ?x) WHERE { ?s ${p} ?o OPTIONAL { ?o a ?c } BIND(DATATYPE(?o) AS ?dt) } GROUP BY ?c ?dt ORDER BY DESC(?n) ?c ?dt LIMIT ${k}`,
      examples: `SELECT ?s ?o WHERE { ?s ${p} ?o } LIMIT 3`,
      untypedSubjects: `SELECT DISTINCT ?s WHERE { ?s ${p} ?o FILTER(isIRI(?s) && NOT EXISTS { ?s a ?t }) } LIMIT ${this.options.sampleSize}`,
      untypedObjects: `SELECT DISTINCT ?o WHERE { ?s ${p} ?o FILTER(isIRI(?o) && NOT EXISTS { ?o a ?t }) } LIMIT ${this.options.sampleSize}`,
    };
    type Per = { e: RegisteredEndpoint; subjects: SparqlRow[]; objects: SparqlRow[]; examples: SparqlRow[]; untypedS: string[]; untypedO: string[] };
    const settled = await settleAll(holders, this.options.concurrency, async (e): Promise<Per> => {
      const [subjects, objects, examples] = await Promise.all([budget.run(e.url, qs.subjects, k), budget.run(e.url, qs.objects, k), budget.run(e.url, qs.examples, 3)]);
      const hasUntypedS = subjects.some((r) => !r.c && r.x?.type === 'uri');
      const hasUntypedO = objects.some((r) => !r.c && !r.dt && r.x?.type === 'uri');
      const [us, uo] = await Promise.all([
        hasUntypedS ? budget.run(e.url, qs.untypedSubjects, this.options.sampleSize) : Promise.resolve([]),
        hasUntypedO ? budget.run(e.url, qs.untypedObjects, this.options.sampleSize) : Promise.resolve([]),
      ]);
      return { e, subjects, objects, examples, untypedS: us.map((r) => r.s?.value).filter((x): x is string => !!x), untypedO: uo.map((r) => r.o?.value).filter((x): x is string => !!x) };
    });
    const per: Per[] = [];
    holders.forEach((e, i) => {
      const s = settled[i];
      if (s.status === 'rejected') failures.push({ endpoint: e.id, url: e.url, error: String((s.reason as Error)?.message ?? s.reason) });
      else per.push(s.value);
    });

    // Subject classes and object kinds, summed over endpoints.
    type Agg = { n: number; at: Map<string, number>; example?: SparqlTerm };
    const tally = (m: Map<string, Agg>, key: string, n: number, endpoint: string, example?: SparqlTerm) => {
      let a = m.get(key);
      if (!a) m.set(key, (a = { n: 0, at: new Map(), example }));
      a.n += n;
      a.at.set(endpoint, (a.at.get(endpoint) ?? 0) + n);
    };
    const sClasses = new Map<string, Agg>();
    const oKinds = new Map<string, Agg>();
    let triples = 0;
    for (const x of per) {
      for (const r of x.subjects) tally(sClasses, r.c ? `<${r.c.value}>` : '(no type at this endpoint)', Number(r.n?.value ?? 0), x.e.id, r.x);
      for (const r of x.objects) {
        const key = r.c ? `<${r.c.value}>` : r.dt ? `literal ${short(r.dt.value)}` : r.x?.type === 'uri' ? '(IRI without type at this endpoint)' : '(other)';
        const n = Number(r.n?.value ?? 0);
        tally(oKinds, key, n, x.e.id, r.x);
      }
      triples += entry?.endpoints.find((c) => c.endpoint === x.e.id)?.count ?? 0;
    }
    // Cross-endpoint types of untyped subjects/objects.
    const resolve = async (side: 'subjects' | 'objects') => {
      const lines: string[] = [];
      for (const x of per) {
        const iris = side === 'subjects' ? x.untypedS : x.untypedO;
        if (iris.length === 0) continue;
        const others = this.colocated([x.e]);
        const types = await this.typesAt(iris, others, budget, failures);
        const byClass = new Map<string, { n: number; at: Set<string> }>();
        for (const iri of iris)
          for (const [c, at] of types.get(iri) ?? []) {
            let b = byClass.get(c);
            if (!b) byClass.set(c, (b = { n: 0, at: new Set() }));
            b.n++;
            for (const id of at) b.at.add(id);
          }
        const found = [...byClass].sort(([a, x1], [b, y1]) => y1.n - x1.n || byCodePoint(a, b));
        lines.push(
          `  ${side} without a type at ${x.e.id}: ${iris.length}${iris.length >= this.options.sampleSize ? '+ (sampled)' : ''}; typed at other endpoints of the graph: ` +
            (found.length ? found.map(([c, b]) => `<${c}> ${b.n} of ${iris.length} (type at ${[...b.at].sort().join(', ')})`).join('; ') : 'none'),
        );
      }
      return lines;
    };
    const sExtra = await resolve('subjects');
    const oExtra = await resolve('objects');

    const fmt = (m: Map<string, Agg>) =>
      [...m]
        .sort(([a, x], [b, y]) => y.n - x.n || byCodePoint(a, b))
        .slice(0, k)
        .map(([key, a]) => `- ${key}: ${plural(a.n, 'triple')} (${[...a.at].map(([id, n]) => `${id} ${n}`).join(', ')})${a.example ? `, e.g. ${termText(a.example, 80)}` : ''}`);
    const head = entry
      ? `explore_property_usage <${prop}>: ${plural(entry.total, 'triple')} at ${plural(entry.endpoints.length, 'endpoint')} (${endpointList(entry.endpoints)}).`
      : `explore_property_usage <${prop}>: not in the property index (no endpoint uses it as a predicate); asked every endpoint.`;
    const lines = [head];
    if (entry && entry.domains.length) lines.push(`Domain: ${entry.domains.map((a) => `${short(a.iri)} (${a.source === 'rdfs' ? 'rdfs:domain' : `VoID, ${a.triples} triples`})`).join(', ')}`);
    if (entry && entry.ranges.length) lines.push(`Range: ${entry.ranges.map((a) => `${short(a.iri)} (${a.source === 'rdfs' ? 'rdfs:range' : `VoID, ${a.triples} triples`})`).join(', ')}`);
    lines.push(`Subject classes (triples whose subject has the class at the same endpoint; showing ${Math.min(k, sClasses.size)} of ${sClasses.size}):`, ...fmt(sClasses), ...sExtra);
    lines.push(`Objects (classes or literal datatypes; showing ${Math.min(k, oKinds.size)} of ${oKinds.size}):`, ...fmt(oKinds), ...oExtra);
    const ex = per.flatMap((x) => x.examples.map((r) => `- ${termText(r.s, 120)} <${prop}> ${termText(r.o, 120)} [${x.e.id}]`));
    lines.push(`Examples (showing ${Math.min(ex.length, k)} of ${triples || ex.length}):`, ...ex.slice(0, k));
    lines.push(...failureLines(failures));
    return { text: lines.join('\n'), isError: false, requests: budget.requests };
  }

  /**
   * explore_entity_relations (paper section 3.2): for an entity IRI, its outgoing and incoming
   * properties at every endpoint, with counts and an example object or subject each; for a
   * literal, the entities that have that value (lexical form, case-insensitive) and the properties
   * holding it, with the entities' classes (looked up across the federation).
   */
  async exploreEntityRelations(args: { entity?: string; literal?: string }): Promise<ToolAnswer> {
    const entity = args.entity?.trim().replace(/^<|>$/g, '');
    const literal = args.literal;
    if ((!entity && literal === undefined) || (entity && literal !== undefined)) {
      return { text: 'explore_entity_relations needs exactly one of: entity (an IRI) or literal (a value).', isError: true, requests: {} };
    }
    const budget = new Budget(this.options.timeoutMs, this.select);
    const failures: IndexFailure[] = [];
    const k = this.options.maxRows;
    const eps = this.endpoints;
    if (entity) {
      const e = iriRef(entity);
      const qOut = `SELECT ?p (COUNT(*) AS ?n) (SAMPLE(?o) AS ?x) WHERE { ${e} ?p ?o } GROUP BY ?p ORDER BY DESC(?n) ?p LIMIT ${k}`;
      const qIn = `SELECT ?p (COUNT(*) AS ?n) (SAMPLE(?s) AS ?x) WHERE { ?s ?p ${e} } GROUP BY ?p ORDER BY DESC(?n) ?p LIMIT ${k}`;
      const settled = await settleAll(eps, this.options.concurrency, (x) => Promise.all([budget.run(x.url, qOut, k), budget.run(x.url, qIn, k)]));
      type Rel = { n: number; at: Map<string, number>; example?: SparqlTerm };
      const out = new Map<string, Rel>();
      const inc = new Map<string, Rel>();
      const found = new Set<string>();
      const add = (m: Map<string, Rel>, r: SparqlRow, endpoint: string) => {
        if (!r.p) return;
        let a = m.get(r.p.value);
        if (!a) m.set(r.p.value, (a = { n: 0, at: new Map(), example: r.x }));
        const n = Number(r.n?.value ?? 0);
        a.n += n;
        a.at.set(endpoint, (a.at.get(endpoint) ?? 0) + n);
        found.add(endpoint);
      };
      eps.forEach((x, i) => {
        const s = settled[i];
        if (s.status === 'rejected') return void failures.push({ endpoint: x.id, url: x.url, error: String((s.reason as Error)?.message ?? s.reason) });
        for (const r of s.value[0]) add(out, r, x.id);
        for (const r of s.value[1]) add(inc, r, x.id);
      });
      const fmt = (m: Map<string, Rel>) =>
        [...m]
          .sort(([a, x], [b, y]) => (a === RDF_TYPE ? -1 : b === RDF_TYPE ? 1 : y.n - x.n || byCodePoint(a, b)))
          .slice(0, k)
          .map(([p, a]) => `- <${p}>: ${plural(a.n, 'triple')} (${[...a.at].map(([id, n]) => `${id} ${n}`).join(', ')}), e.g. ${termText(a.example, 120)}`);
      const lines = [`explore_entity_relations <${entity}>: found at ${plural(found.size, 'endpoint')}${found.size ? ` (${[...found].join(', ')})` : ''}.`];
      lines.push(`Outgoing properties (showing ${Math.min(k, out.size)} of ${out.size}):`, ...fmt(out));
      lines.push(`Incoming properties (showing ${Math.min(k, inc.size)} of ${inc.size}):`, ...fmt(inc));
      if (found.size === 0) lines.push('No endpoint has triples with this IRI. Check the IRI (copy it from lookup_class_instances), or give a literal instead.');
      lines.push(...failureLines(failures));
      return { text: lines.join('\n'), isError: false, requests: budget.requests };
    }

    const lit = stringLiteral(String(literal).toLowerCase());
    const pattern = `?s ?p ?v FILTER(isLiteral(?v) && LCASE(STR(?v)) = ${lit})`;
    const qRows = `SELECT ?s ?p ?v WHERE { ${pattern} } ORDER BY ?s ?p LIMIT ${k}`;
    const qCount = `SELECT ?p (COUNT(*) AS ?n) WHERE { ${pattern} } GROUP BY ?p ORDER BY DESC(?n) ?p LIMIT ${k}`;
    const settled = await settleAll(eps, this.options.concurrency, (x) => Promise.all([budget.run(x.url, qRows, k), budget.run(x.url, qCount, k)]));
    const rows: { s: string; p: string; v: SparqlTerm; endpoint: RegisteredEndpoint }[] = [];
    const props = new Map<string, { n: number; at: Map<string, number> }>();
    let total = 0;
    eps.forEach((x, i) => {
      const s = settled[i];
      if (s.status === 'rejected') return void failures.push({ endpoint: x.id, url: x.url, error: String((s.reason as Error)?.message ?? s.reason) });
      for (const r of s.value[0]) if (r.s && r.p && r.v) rows.push({ s: r.s.value, p: r.p.value, v: r.v, endpoint: x });
      for (const r of s.value[1]) {
        if (!r.p) continue;
        const n = Number(r.n?.value ?? 0);
        total += n;
        let a = props.get(r.p.value);
        if (!a) props.set(r.p.value, (a = { n: 0, at: new Map() }));
        a.n += n;
        a.at.set(x.id, n);
      }
    });
    const shown = rows.sort((a, b) => byCodePoint(a.s, b.s) || byCodePoint(a.p, b.p)).slice(0, k);
    // Classes of the subjects: at their own endpoint or anywhere in the same graph.
    const byGraph = new Map<string | null, Set<string>>();
    for (const r of shown) {
      let set = byGraph.get(r.endpoint.graph);
      if (!set) byGraph.set(r.endpoint.graph, (set = new Set()));
      set.add(r.s);
    }
    const classes = new Map<string, Set<string>>();
    for (const [graph, iris] of byGraph) {
      const t = await this.typesAt([...iris].filter((x) => !x.startsWith('_:')), this.endpoints.filter((x) => x.graph === graph), budget, failures);
      for (const [iri, cs] of t) classes.set(iri, new Set(cs.keys()));
    }
    const lines = [`explore_entity_relations ${JSON.stringify(String(literal))}: ${plural(total, 'triple')} with this value (lexical form, case-insensitive) at ${plural(new Set([...props.values()].flatMap((a) => [...a.at.keys()])).size, 'endpoint')}.`];
    lines.push(`Data properties (showing ${Math.min(k, props.size)} of ${props.size}):`);
    for (const [p, a] of [...props].sort(([a, x], [b, y]) => y.n - x.n || byCodePoint(a, b)).slice(0, k)) lines.push(`- <${p}>: ${plural(a.n, 'triple')} (${[...a.at].map(([id, n]) => `${id} ${n}`).join(', ')})`);
    lines.push(`Entities (showing ${shown.length} of ${total}):`);
    for (const r of shown) {
      const cs = [...(classes.get(r.s) ?? [])].sort(byCodePoint);
      lines.push(`- <${r.s}> <${r.p}> ${termText(r.v, 120)} [${r.endpoint.id}]${cs.length ? `; class ${cs.map((c) => `<${c}>`).join(', ')}` : ''}`);
    }
    if (total === 0) lines.push('No triple has this value. Values must match whole (ignoring case); to search inside values use lookup_class_instances with all_attributes.');
    lines.push(...failureLines(failures));
    return { text: lines.join('\n'), isError: false, requests: budget.requests };
  }
}
