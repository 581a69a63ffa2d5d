/**
 * The KGVoyager tools over several knowledge graphs, kept apart: the graphs of
 * a build reuse IRIs (`:singer` is a class of concert_singer and of singer, with different
 * instances), so entries merged by IRI over graphs would count, list and join unrelated data
 * ("14 instances at 4 endpoints"). Here each graph has its own `KgVoyager` (its endpoints, its
 * indexes), and
 *
 * - a search without `graph` ranks the entries of every graph in one index whose documents are
 *   (graph, IRI) pairs, so each hit names its graph and its counts are that graph's;
 * - lookup_class_instances and explore_property_usage without `graph` answer for each graph whose
 *   index holds the IRI, one section per graph; explore_entity_relations asks every graph and shows
 *   the graphs where the entity or value occurs, one section each;
 * - with `graph`, every tool answers for that graph alone.
 */
import type { EndpointRegistry, RegisteredEndpoint } from '../../federation/registry.js';
import type { PageArgs } from '../paging.js';
import { allFailed, argumentError, DEFAULT_PAGE, type KgVoyagerContext, type ToolAnswer } from './core.js';
import { NgramEmbedder } from './embedder.js';
import { HybridIndex } from './retrieval.js';
import type { ClassEntry, IndexFailure, PropertyEntry, SchemaIndex } from './schema-index.js';
import { classDetail, NO_CLASS, NO_PROPERTY, propertyDetail } from './search.js';
import { KgVoyager, type ExplorationTools, type LookupArgs } from './tools.js';

/** Graphs asked at once by explore_entity_relations without `graph` (each asks its endpoints with its own concurrency). */
const GRAPHS_AT_ONCE = 4;

/** The name of the scope of endpoints that belong to no fkgqa graph (foreign endpoints). */
const OTHER = '(other endpoints)';

/** One search index over the entries of every graph. */
interface Combined<E> {
  parts: SchemaIndex<E>[];
  search: HybridIndex;
  byId: Map<string, { entry: E; graph: string }>;
}

/**
 * The KGVoyager tools with one scope per knowledge graph (module comment). `graphs` are the fkgqa
 * graphs of the registry, sorted; endpoints of no graph form one more scope, searched with the rest.
 */
export class GraphScopedKgVoyager implements ExplorationTools {
  readonly graphs: readonly string[];
  private readonly scopes = new Map<string, KgVoyager>();
  private readonly combined: { classes?: Combined<ClassEntry>; properties?: Combined<PropertyEntry> } = {};

  constructor(context: KgVoyagerContext) {
    const embedder = context.embedder ?? new NgramEmbedder();
    const byGraph = new Map<string, RegisteredEndpoint[]>();
    for (const e of context.registry.endpoints) byGraph.set(e.graph ?? OTHER, [...(byGraph.get(e.graph ?? OTHER) ?? []), e]);
    this.graphs = [...byGraph.keys()].filter((g) => g !== OTHER).sort();
    for (const [g, endpoints] of [...byGraph].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      const registry: EndpointRegistry = { ...context.registry, endpoints };
      this.scopes.set(g, new KgVoyager({ ...context, registry, embedder, graph: g }));
    }
  }

  /** The tools of one graph. @throws Error for a graph that is not one of `graphs` (the tool schema allows only those) */
  scope(graph: string): KgVoyager {
    const k = this.scopes.get(graph);
    if (!k) throw new Error(`no knowledge graph ${graph}: ${this.graphs.join(', ')}`);
    return k;
  }

  private get all(): KgVoyager[] {
    return [...this.scopes.values()];
  }

  /** A search over every graph: one index of (graph, IRI) documents, rebuilt when a graph's index changed. */
  private async searchAll<E extends ClassEntry>(
    kind: 'classes' | 'properties',
    term: string,
    page: PageArgs,
    index: (k: KgVoyager, requests: Record<string, number>) => Promise<{ index: SchemaIndex<E> }>,
    detail: (e: E) => string,
    none: string,
  ): Promise<ToolAnswer> {
    const t = term.trim();
    if (!t) return argumentError(`search_all_${kind} needs a non-empty term (e.g. "${kind === 'classes' ? 'singer' : 'name'}").`);
    const requests: Record<string, number> = {};
    const scopes = this.all;
    const parts = (await Promise.all(scopes.map((k) => index(k, requests)))).map((p) => p.index);
    const failures: IndexFailure[] = parts.flatMap((p) => p.failures);
    const down = allFailed(
      scopes.reduce((n, k) => n + k.endpoints.length, 0),
      failures,
      requests,
    );
    if (down) return down;
    let c = this.combined[kind] as Combined<E> | undefined;
    if (!c || c.parts.length !== parts.length || c.parts.some((p, i) => p !== parts[i])) {
      const byId = new Map<string, { entry: E; graph: string }>();
      const docs = scopes.flatMap((k, i) =>
        parts[i].entries.map((entry) => {
          const id = `${k.graph}\u0001${entry.iri}`;
          byId.set(id, { entry, graph: k.graph! });
          return { id, name: entry.text, label: entry.labels.join(' ') };
        }),
      );
      c = { parts, search: await HybridIndex.build(docs, scopes[0].embedder, scopes[0].options.stem), byId };
      (this.combined as Record<string, unknown>)[kind] = c;
    }
    const first = scopes[0];
    const result = await c.search.search(t, first.searchOptions());
    return first.searchAnswer(kind, t, c.byId.size, result, (id) => c!.byId.get(id)!, detail, none, failures, requests, page, this.graphs.length, '');
  }

  searchAllClasses(term: string, page: PageArgs = DEFAULT_PAGE, graph?: string): Promise<ToolAnswer> {
    if (graph) return this.scope(graph).searchAllClasses(term, page);
    return this.searchAll('classes', term, page, (k, r) => k.classIndex(r), classDetail, NO_CLASS);
  }

  searchAllProperties(term: string, page: PageArgs = DEFAULT_PAGE, graph?: string): Promise<ToolAnswer> {
    if (graph) return this.scope(graph).searchAllProperties(term, page);
    return this.searchAll('properties', term, page, (k, r) => k.propertyIndex(r), propertyDetail, NO_PROPERTY);
  }

  /**
   * A tool without `graph`: run for each scope of `candidates` and shown one section per graph
   * that found something (all sections share the character budget).
   * @param what the head of a combined answer, e.g. `lookup_class_instances <iri>`
   */
  private async perGraph(what: string, candidates: KgVoyager[], page: PageArgs, run: (k: KgVoyager, page: PageArgs) => Promise<ToolAnswer>, requests: Record<string, number>): Promise<ToolAnswer> {
    const answers: { k: KgVoyager; a: ToolAnswer }[] = [];
    const share = { ...page, maxChars: Math.max(1000, Math.floor(page.maxChars / Math.max(1, Math.min(candidates.length, 4)))) };
    for (let i = 0; i < candidates.length; i += GRAPHS_AT_ONCE) {
      const batch = candidates.slice(i, i + GRAPHS_AT_ONCE);
      const got = await Promise.all(batch.map((k) => run(k, candidates.length === 1 ? page : share)));
      batch.forEach((k, j) => answers.push({ k, a: got[j] }));
    }
    for (const { a } of answers) for (const [u, n] of Object.entries(a.requests)) requests[u] = (requests[u] ?? 0) + n;
    const found = answers.filter(({ a }) => !a.isError && (a.hits ?? 1) > 0);
    const failed = answers.filter(({ a }) => a.isError);
    if (found.length === 0 && failed.length > 0 && failed.length === answers.length) return { ...failed[0].a, requests };
    if (found.length === 1 && failed.length === 0) return { ...found[0].a, requests };
    const names = found.map(({ k }) => k.graph).join(', ');
    const head =
      found.length === 0
        ? `${what}: found in none of the ${this.graphs.length} knowledge graphs asked.`
        : `${what}: found in ${found.length} knowledge graph${found.length === 1 ? '' : 's'} (${names}). The graphs reuse IRIs, so each is shown apart; pass graph to ask one.`;
    const sections = [...found.map(({ k, a }) => `[knowledge graph ${k.graph}]\n${a.text}`), ...failed.map(({ k, a }) => `[knowledge graph ${k.graph}]\n${a.text}`)];
    return { text: [head, ...sections].join('\n\n'), isError: false, requests, hits: found.length };
  }

  /** The scopes whose index holds `iri` (classes or properties). */
  private async holding(iri: string, kind: 'classes' | 'properties', requests: Record<string, number>): Promise<KgVoyager[]> {
    const scopes = this.all;
    const has = await Promise.all(scopes.map(async (k) => (kind === 'classes' ? (await k.classIndex(requests)).byIri : (await k.propertyIndex(requests)).byIri).has(iri)));
    return scopes.filter((_, i) => has[i]);
  }

  async lookupClassInstances(args: LookupArgs, page: PageArgs = DEFAULT_PAGE, graph?: string): Promise<ToolAnswer> {
    if (graph) return this.scope(graph).lookupClassInstances(args, page);
    const cls = args.class?.trim().replace(/^<|>$/g, '');
    if (!cls) return argumentError('lookup_class_instances needs a class IRI (from search_all_classes).');
    const requests: Record<string, number> = {};
    const where = await this.holding(cls, 'classes', requests);
    if (where.length === 0) {
      return {
        text: `<${cls}> is not in the class index of any of the ${this.graphs.length} knowledge graphs (no endpoint has instances of it). Find classes with search_all_classes, or pass graph to ask that graph's endpoints.`,
        isError: false,
        requests,
        hits: 0,
      };
    }
    return this.perGraph(`lookup_class_instances <${cls}>`, where, page, (k, p) => k.lookupClassInstances(args, p), requests);
  }

  async explorePropertyUsage(args: { property: string }, page: PageArgs = DEFAULT_PAGE, graph?: string): Promise<ToolAnswer> {
    if (graph) return this.scope(graph).explorePropertyUsage(args, page);
    const prop = args.property?.trim().replace(/^<|>$/g, '');
    if (!prop) return argumentError('explore_property_usage needs a property IRI (from search_all_properties).');
    const requests: Record<string, number> = {};
    const where = await this.holding(prop, 'properties', requests);
    if (where.length === 0) {
      return {
        text: `<${prop}> is not in the property index of any of the ${this.graphs.length} knowledge graphs (no endpoint uses it as a predicate). Find properties with search_all_properties, or pass graph to ask that graph's endpoints.`,
        isError: false,
        requests,
        hits: 0,
      };
    }
    return this.perGraph(`explore_property_usage <${prop}>`, where, page, (k, p) => k.explorePropertyUsage(args, p), requests);
  }

  async exploreEntityRelations(args: { entity?: string; literal?: string }, page: PageArgs = DEFAULT_PAGE, graph?: string): Promise<ToolAnswer> {
    if (graph) return this.scope(graph).exploreEntityRelations(args, page);
    const entity = args.entity?.trim().replace(/^<|>$/g, '');
    if ((!entity && args.literal === undefined) || (entity && args.literal !== undefined)) return argumentError('explore_entity_relations needs exactly one of: entity (an IRI) or literal (a value).');
    const what = entity ? `explore_entity_relations <${entity}>` : `explore_entity_relations ${JSON.stringify(String(args.literal))}`;
    return this.perGraph(what, this.all, page, (k, p) => k.exploreEntityRelations(args, p), {});
  }
}
