/**
 * The class index and the property index of KGVoyager (paper section 3.1: "a lightweight class
 * index via SPARQL", "enumerating all distinct predicates"), built over a federation: one SPARQL
 * query per endpoint and index, merged by IRI, so that every entry lists the endpoints that hold it
 * with their counts (a class split horizontally over shards lists all of them: source selection).
 */
import fs from 'node:fs';
import { RDFS } from '../../common/vocab.js';
import { readVoid } from '../../describe/void-turtle.js';
import type { RegisteredEndpoint } from '../../federation/registry.js';
import type { SparqlRow } from '../../sparql/results.js';
import { settleAll, type SelectBounds, type SparqlSelect } from './sparql.js';
import { iriText } from './text.js';
import type { IndexDocument } from './retrieval.js';
import { byCodePoint } from '../../common/strings.js';

/** The class index query of one endpoint: classes with their distinct instances, and labels. */
export const CLASS_INDEX_QUERY = `SELECT ?c ?n ?l WHERE {
  { SELECT ?c (COUNT(DISTINCT ?s) AS ?n) WHERE { ?s a ?c } GROUP BY ?c }
  OPTIONAL { ?c <${RDFS}label> ?l }
}`;

/** The property index query of one endpoint: predicates with their triples, labels, rdfs:domain and rdfs:range. */
export const PROPERTY_INDEX_QUERY = `SELECT ?p ?n ?l ?d ?r WHERE {
  { SELECT ?p (COUNT(*) AS ?n) WHERE { ?s ?p ?o } GROUP BY ?p }
  OPTIONAL { ?p <${RDFS}label> ?l }
  OPTIONAL { ?p <${RDFS}domain> ?d }
  OPTIONAL { ?p <${RDFS}range> ?r }
}`;

/** How many of something one endpoint holds. */
export interface EndpointCount {
  /** Endpoint id in the registry. */
  endpoint: string;
  /** Endpoint URL (what an agent writes in `SERVICE <…>`). */
  url: string;
  /** Instances (classes) or triples (properties) at that endpoint. */
  count: number;
}

/** A class or datatype that a property's subjects or objects have, and where that is stated. */
export interface Annotation {
  iri: string;
  /** `rdfs` (an `rdfs:domain`/`rdfs:range` triple at an endpoint) or `void` (the endpoint's VoID class/property partitions: observed in the data). */
  source: 'rdfs' | 'void';
  /** Triples behind it (VoID), summed over endpoints; null for rdfs annotations. */
  triples: number | null;
}

/** An entry of the class index. */
export interface ClassEntry {
  iri: string;
  /** Words of the IRI's local name (see `iriText`). */
  text: string;
  /** `rdfs:label` values (any language), sorted, distinct. */
  labels: string[];
  /** Sum of the per-endpoint instance counts (an entity typed at two endpoints counts twice). */
  total: number;
  /** Endpoints holding instances, most instances first (ties by endpoint id). */
  endpoints: EndpointCount[];
}

/** An entry of the property index. */
export interface PropertyEntry {
  iri: string;
  text: string;
  labels: string[];
  /** Sum of the per-endpoint triple counts. */
  total: number;
  endpoints: EndpointCount[];
  /** Domains: rdfs:domain at an endpoint, or the classes of its subjects in the VoID class partitions. */
  domains: Annotation[];
  /** Ranges: rdfs:range, or object classes and literal datatypes in the VoID. */
  ranges: Annotation[];
}

/** An endpoint whose index query failed. */
export interface IndexFailure {
  endpoint: string;
  url: string;
  error: string;
}

/** The merged index of a registry. */
export interface SchemaIndex<E> {
  /** Entries sorted by IRI. */
  entries: E[];
  /** Endpoints that did not answer (their entries are missing; the next search asks them again). */
  failures: IndexFailure[];
}

const sortCounts = (xs: EndpointCount[]) => xs.sort((a, b) => b.count - a.count || byCodePoint(a.endpoint, b.endpoint));

/** The rows of one endpoint's index query, or its error. */
type EndpointRows = { ok: true; rows: SparqlRow[] } | { ok: false; error: string };

/**
 * Runs one index query at every endpoint (at most `concurrency` at a time).
 * @param cache rows already fetched, by endpoint id; successful answers are added to it
 */
export async function fetchIndexRows(
  endpoints: readonly RegisteredEndpoint[],
  query: string,
  select: SparqlSelect,
  bounds: SelectBounds,
  cache: Map<string, SparqlRow[]>,
  concurrency = 8,
): Promise<Map<string, EndpointRows>> {
  const todo = endpoints.filter((e) => !cache.has(e.id));
  const settled = await settleAll(todo, concurrency, (e) => select(e.url, query, bounds));
  todo.forEach((e, i) => {
    const s = settled[i];
    if (s.status === 'fulfilled') cache.set(e.id, s.value);
  });
  const out = new Map<string, EndpointRows>();
  for (const e of endpoints) {
    const rows = cache.get(e.id);
    if (rows) out.set(e.id, { ok: true, rows });
    else {
      const s = settled[todo.indexOf(e)];
      out.set(e.id, { ok: false, error: s && s.status === 'rejected' ? String((s.reason as Error)?.message ?? s.reason) : 'not asked' });
    }
  }
  return out;
}

const intOf = (row: SparqlRow, v: string) => {
  const n = Number(row[v]?.value);
  return Number.isFinite(n) ? n : 0;
};

/** What the rows of one IRI have in common before merging: labels, counts per endpoint, and the rdfs:domain/rdfs:range IRIs. */
interface Gathered {
  labels: Set<string>;
  counts: Map<string, EndpointCount>;
  d: Set<string>;
  r: Set<string>;
}

/**
 * Gathers index rows by the IRI in variable `v` (`?c` or `?p`), with `?n` the count, `?l` labels,
 * `?d`/`?r` domains and ranges; an endpoint without rows is a failure.
 */
function gather(endpoints: readonly RegisteredEndpoint[], rows: Map<string, EndpointRows>, v: string): { byIri: Map<string, Gathered>; failures: IndexFailure[] } {
  const byIri = new Map<string, Gathered>();
  const failures: IndexFailure[] = [];
  for (const e of endpoints) {
    const r = rows.get(e.id);
    if (!r || !r.ok) {
      failures.push({ endpoint: e.id, url: e.url, error: r && !r.ok ? r.error : 'not asked' });
      continue;
    }
    for (const row of r.rows) {
      if (row[v]?.type !== 'uri') continue;
      let entry = byIri.get(row[v].value);
      if (!entry) byIri.set(row[v].value, (entry = { labels: new Set(), counts: new Map(), d: new Set(), r: new Set() }));
      if (row.l) entry.labels.add(row.l.value);
      if (row.d?.type === 'uri') entry.d.add(row.d.value);
      if (row.r?.type === 'uri') entry.r.add(row.r.value);
      entry.counts.set(e.id, { endpoint: e.id, url: e.url, count: intOf(row, 'n') });
    }
  }
  return { byIri: new Map([...byIri].sort(([x], [y]) => byCodePoint(x, y))), failures };
}

/** The fields every entry has, from gathered rows. */
function baseEntry(iri: string, x: Gathered): ClassEntry {
  const eps = sortCounts([...x.counts.values()]);
  return { iri, text: iriText(iri), labels: [...x.labels].sort(byCodePoint), total: eps.reduce((s, c) => s + c.count, 0), endpoints: eps };
}

/**
 * Merges the class index rows of every endpoint into entries.
 * @param rows per endpoint id, from `fetchIndexRows(…, CLASS_INDEX_QUERY, …)`
 */
export function mergeClassIndex(endpoints: readonly RegisteredEndpoint[], rows: Map<string, EndpointRows>): SchemaIndex<ClassEntry> {
  const { byIri, failures } = gather(endpoints, rows, 'c');
  return { entries: [...byIri].map(([iri, x]) => baseEntry(iri, x)), failures };
}

/** Domains and ranges of properties read from the endpoints' VoID files (fkgqa builds), per property IRI. */
interface VoidAnnotations {
  domains: Map<string, Map<string, number>>;
  ranges: Map<string, Map<string, number>>;
}

/**
 * Reads domains (classes of a property's subjects) and ranges (classes of its IRI objects, datatypes
 * of its literals) from the class partitions and remote class partitions (`fkgqa:remoteClassPartition`)
 * of the endpoints' VoID files (`voidFile` in the registry), summing triples over endpoints. Endpoints without a VoID file, or whose file does not
 * read, contribute nothing.
 */
export function voidAnnotations(endpoints: readonly RegisteredEndpoint[]): VoidAnnotations {
  const out: VoidAnnotations = { domains: new Map(), ranges: new Map() };
  const add = (m: Map<string, Map<string, number>>, p: string, c: string, n: number) => {
    let x = m.get(p);
    if (!x) m.set(p, (x = new Map()));
    x.set(c, (x.get(c) ?? 0) + n);
  };
  for (const e of endpoints) {
    if (!e.voidFile || !fs.existsSync(e.voidFile)) continue;
    let d;
    try {
      d = readVoid(fs.readFileSync(e.voidFile, 'utf8'), e.voidFile);
    } catch {
      continue;
    }
    // Class partitions and remote class partitions (types in another shard) alike: a domain or
    // range is a fact of the knowledge graph, wherever the rdf:type triples are.
    for (const cp of [...d.classPartitions, ...d.remoteClassPartitions]) {
      for (const pp of cp.properties) {
        add(out.domains, pp.property, cp.class, pp.triples);
        for (const oc of [...pp.objectClasses, ...pp.remoteObjectClasses]) add(out.ranges, pp.property, oc.iri, oc.triples);
        for (const dt of pp.datatypes) add(out.ranges, pp.property, dt.iri, dt.triples);
      }
    }
  }
  return out;
}

/**
 * Merges the property index rows of every endpoint into entries, with rdfs:domain/rdfs:range found
 * at the endpoints and the VoID annotations.
 */
export function mergePropertyIndex(endpoints: readonly RegisteredEndpoint[], rows: Map<string, EndpointRows>, voidInfo: VoidAnnotations): SchemaIndex<PropertyEntry> {
  const { byIri, failures } = gather(endpoints, rows, 'p');
  const annotations = (declared: Set<string>, observed: Map<string, number> | undefined): Annotation[] => [
    ...[...declared].sort(byCodePoint).map((iri) => ({ iri, source: 'rdfs' as const, triples: null })),
    ...[...(observed ?? new Map<string, number>())].sort(([a, x], [b, y]) => y - x || byCodePoint(a, b)).map(([iri, triples]) => ({ iri, source: 'void' as const, triples })),
  ];
  const entries = [...byIri].map(([iri, x]) => ({ ...baseEntry(iri, x), domains: annotations(x.d, voidInfo.domains.get(iri)), ranges: annotations(x.r, voidInfo.ranges.get(iri)) }));
  return { entries, failures };
}

/** The search documents of index entries: the IRI's words and its labels. */
export function indexDocuments(entries: readonly { iri: string; text: string; labels: string[] }[]): IndexDocument[] {
  return entries.map((e) => ({ id: e.iri, name: e.text, label: e.labels.join(' ') }));
}
