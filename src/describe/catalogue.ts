/**
 * The catalogue of a build (`catalogue.json`, `catalogue.ttl`): every shard with its endpoint
 * name, endpoint URL once known, VoID files, and a one-sentence topical description generated
 * from its VoID statistics (the paper's "high_level" setup gives agents such sentences, §4.2).
 * The sentence says which kinds of things a shard describes, how many, and which of their
 * attributes it holds; it never names how the shards were made.
 */
import { Writer, DataFactory } from 'n3';
import type * as RDF from '@rdfjs/types';
import { DCTERMS, RDF_TYPE, VOID, XSD } from '../common/vocab.js';
import { TOOL } from '../common/version.js';
import { writerText } from './void-turtle.js';
import { graphDatasetIri, type ClassPartition, type ShardDescription, type ShardStatistics } from './model.js';
import { byCodePoint } from '../common/strings.js';

/** Local name of an IRI: after its last `#`, or else its last `/`. */
function localName(iri: string): string {
  const cut = iri.includes('#') ? iri.lastIndexOf('#') : iri.lastIndexOf('/');
  return iri.slice(cut + 1);
}

/** Words of an identifier: `singer_in_concert` → `singer in concert`. */
const words = (id: string) => id.replace(/[_\s]+/g, ' ').trim();

/**
 * A class label in the number that goes with a count, in plain English. Plural: single words get
 * -s/-es/-ies unless they already end in `s` (tables are often named in the plural: `pets`,
 * `countries`); a multi-word label already in the plural (`car makers`) is kept, others become
 * `… records` (`singer in concert records`), which reads right whatever the words are. Singular
 * (n = 1): a final plural `s` is dropped (`1 pet`, `1 charge`).
 */
export function countedLabel(label: string, n: number): string {
  const parts = label.split(' ');
  const last = parts[parts.length - 1];
  const plural = /[^s]s$/i.test(last) || /^(people|data|staff|news|series)$/i.test(last);
  if (n === 1) {
    if (!/[^s]s$/i.test(last)) return label;
    const one = /ies$/i.test(last) ? `${last.slice(0, -3)}y` : /(xes|ches|shes|sses)$/i.test(last) ? last.slice(0, -2) : last.slice(0, -1);
    return [...parts.slice(0, -1), one].join(' ');
  }
  if (parts.length > 1) return plural ? label : `${label} records`;
  if (plural) return label;
  if (/[^aeiou]y$/i.test(label)) return `${label.slice(0, -1)}ies`;
  if (/(x|z|ch|sh|ss)$/i.test(label)) return `${label}es`;
  return `${label}s`;
}

/** `12345` → `12,345` (fixed separators, independent of the locale). */
const formatCount = (n: number) => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');

/** `a`, `a and b`, `a, b and c`. */
const listed = (xs: string[]) => (xs.length <= 1 ? xs.join('') : `${xs.slice(0, -1).join(', ')} and ${xs[xs.length - 1]}`);

/** Attributes listed per kind of thing before "and N more". */
const MAX_ATTRIBUTES = 6;

/**
 * The attributes of a class partition's instances in the shard, as words, sorted. A link (`ref-x`,
 * Spider4SPARQL's object properties) is named by its column and target class (typed here or in
 * another shard), `x (link to y)`, and the column's plain value (`x`) is then not listed again.
 */
function attributes(c: ClassPartition): string[] {
  const table = localName(c.class);
  const columns = new Map<string, string>();
  for (const p of c.properties) {
    if (p.property === RDF_TYPE) continue;
    const local = localName(p.property);
    const owner = p.property.includes('#') ? localName(p.property.slice(0, p.property.lastIndexOf('#'))) : table;
    const column = owner === table ? local : `${owner} ${local}`;
    const link = /^ref-/.test(column);
    const name = words(column.replace(/^ref-/, ''));
    const targets = [...p.objectClasses, ...p.remoteObjectClasses].map((o) => o.iri).sort(byCodePoint);
    const target = targets[0] ? words(localName(targets[0])) : undefined;
    if (link) columns.set(name, target ? `${name} (link to ${target})` : `${name} (link)`);
    else if (!columns.has(name)) columns.set(name, name);
  }
  return [...columns.values()].sort(byCodePoint);
}

/**
 * The kinds of things a shard describes: its class partitions and remote class partitions merged
 * by class (a subject's type triple is in one shard, so the two never share a subject), with
 * whether the class's instances here are all typed in other shards (no class partition of it here).
 */
function kindsOf(s: ShardStatistics): { kind: ClassPartition; remote: boolean }[] {
  const byClass = new Map<string, { kind: ClassPartition; remote: boolean }>();
  for (const c of [...s.classPartitions, ...s.remoteClassPartitions]) {
    const remote = 'typesIn' in c;
    const x = byClass.get(c.class);
    if (!x) byClass.set(c.class, { kind: { class: c.class, entities: c.entities, properties: [...c.properties] }, remote });
    else {
      x.kind.entities += c.entities;
      x.kind.properties.push(...c.properties);
      x.remote &&= remote;
    }
  }
  return [...byClass.values()];
}

/**
 * The one-sentence topical description of a shard, generated from its statistics: the kinds of
 * things it describes (its class partitions and remote class partitions, largest first) with how
 * many of each and up to six of their attributes held here, e.g. "Data about 6 concerts (year), 6
 * singers (name) and 9 stadiums (capacity, name) from the concert_singer knowledge graph." When the
 * rdf:type triples of a kind's instances are all at other endpoints, the sentence says so (so that
 * no one reads it as `?s a :stadium` answering here): "…, without their rdf:type statements (held at
 * another endpoint)", or "without the rdf:type statements of the stadiums (…)" when only some kinds
 * are typed elsewhere. A shard without (remote) class partitions is described by its properties.
 */
export function describeInWords(s: ShardStatistics): string {
  const kinds = kindsOf(s).sort((a, b) => b.kind.entities - a.kind.entities || byCodePoint(a.kind.class, b.kind.class));
  const label = (c: ClassPartition) => countedLabel(words(localName(c.class)), c.entities);
  const phrases = kinds.map(({ kind: c }) => {
    const attrs = attributes(c);
    const shown = attrs.slice(0, MAX_ATTRIBUTES);
    const more = attrs.length - shown.length;
    const list = shown.length ? ` (${shown.join(', ')}${more > 0 ? ` and ${more} more` : ''})` : '';
    return `${formatCount(c.entities)} ${label(c)}${list}`;
  });
  if (phrases.length > 0) {
    const remote = kinds.filter((k) => k.remote);
    const where =
      remote.length === 0
        ? ''
        : remote.length === kinds.length
          ? ', without their rdf:type statements (held at another endpoint)'
          : `, without the rdf:type statements of the ${listed(remote.map((k) => countedLabel(words(localName(k.kind.class)), 2)))} (held at another endpoint)`;
    return `Data about ${listed(phrases)} from the ${s.graph} knowledge graph${where}.`;
  }
  const props = s.propertyPartitions.map((p) => words(localName(p.property))).sort(byCodePoint);
  return `${formatCount(s.triples)} statements (${listed(props.slice(0, MAX_ATTRIBUTES))}${props.length > MAX_ATTRIBUTES ? ' and more' : ''}) from the ${s.graph} knowledge graph.`;
}

/** One shard in `catalogue.json`. */
export interface CatalogueEntry {
  /** Endpoint name, `<graph>-shard<N>` (the SPARQL-MCP server's convention). */
  endpoint: string;
  graph: string;
  shard: string;
  /** IRI of the shard's `void:Dataset`. */
  dataset: string;
  /** Endpoint URL, or null until known. */
  url: string | null;
  /** The one-sentence description (`describeInWords`). */
  description: string;
  triples: number;
  /** VoID files, relative to the build directory: standard and extended (with linksets). */
  void: string;
  voidExtended: string;
}

/** Paths of a shard's VoID files relative to the build directory: `<graph>/shard<N>_void.ttl` and `<graph>/shard<N>_void_extended.ttl`. */
export const voidFiles = (graph: string, shard: string) => ({ void: `${graph}/${shard}_void.ttl`, voidExtended: `${graph}/${shard}_void_extended.ttl` });

/** The catalogue entries of a build's shards, sorted by graph, then shard number. */
function catalogueEntries(descriptions: ShardDescription[]): CatalogueEntry[] {
  return descriptions
    .map((d) => ({
      endpoint: d.title,
      graph: d.graph,
      shard: d.shard,
      dataset: d.dataset,
      url: d.endpoint ?? null,
      description: d.description,
      triples: d.triples,
      ...voidFiles(d.graph, d.shard),
    }))
    .sort((a, b) => byCodePoint(a.graph, b.graph) || Number(a.shard.slice(5)) - Number(b.shard.slice(5)));
}

/** `catalogue.json`: `{ tool, count, shards: CatalogueEntry[] }`, two-space indented, final newline. */
function renderCatalogueJson(entries: CatalogueEntry[]): string {
  return JSON.stringify({ tool: TOOL, count: entries.length, shards: entries }, null, 2) + '\n';
}

/**
 * `catalogue.ttl`: a `void:Dataset` per knowledge graph (title, total triples, its shards as
 * `void:subset`s) and per shard (title, description, triples, `void:sparqlEndpoint` once known).
 */
function renderCatalogueTurtle(entries: CatalogueEntry[]): string {
  const { namedNode: iri, literal } = DataFactory;
  const w = new Writer({ prefixes: { void: VOID, dcterms: DCTERMS, xsd: XSD } });
  const add = (s: string, p: string, o: RDF.Term) => w.addQuad(iri(s), iri(p), o as RDF.Quad_Object);
  const count = (n: number) => literal(String(n), iri(`${XSD}integer`));
  const graphs = [...new Set(entries.map((e) => e.graph))];
  for (const g of graphs) {
    const shards = entries.filter((e) => e.graph === g);
    const gds = graphDatasetIri(g);
    add(gds, RDF_TYPE, iri(`${VOID}Dataset`));
    add(gds, `${DCTERMS}title`, literal(g));
    add(gds, `${VOID}triples`, count(shards.reduce((n, e) => n + e.triples, 0)));
    for (const e of shards) add(gds, `${VOID}subset`, iri(e.dataset));
    for (const e of shards) {
      add(e.dataset, RDF_TYPE, iri(`${VOID}Dataset`));
      add(e.dataset, `${DCTERMS}title`, literal(e.endpoint));
      add(e.dataset, `${DCTERMS}description`, literal(e.description));
      add(e.dataset, `${VOID}triples`, count(e.triples));
      if (e.url) add(e.dataset, `${VOID}sparqlEndpoint`, iri(e.url));
    }
  }
  return writerText(w);
}

/** The catalogue files of a build's shards: `catalogue.json` and `catalogue.ttl`. */
export function catalogueFileTexts(descriptions: ShardDescription[]): Map<string, string> {
  const entries = catalogueEntries(descriptions);
  return new Map([
    ['catalogue.json', renderCatalogueJson(entries)],
    ['catalogue.ttl', renderCatalogueTurtle(entries)],
  ]);
}
