/**
 * The VoID of registered endpoints as get_void_descriptions shows it to an agent, and what a VoID
 * says an endpoint holds (for run_sparql_query's notes on patterns that cannot match there).
 *
 * For the agent a description is rewritten, not cut: every dataset an endpoint of the registry
 * describes is named by that endpoint's URL (an fkgqa shard's `urn:fkgqa:void:<graph>:<shard>`,
 * also as the `fkgqa:typesIn` of a remote class partition or the target of a linkset, and a dataset
 * whose `void:sparqlEndpoint` is a registered URL), so that the agent can put it in a SERVICE
 * clause; then it is written as Turtle statements of one line each (n3's Writer, whitespace
 * collapsed): one statement of the dataset's own values, then one per partition, linkset or other
 * blank node hanging off it, with prefixes (VoID's vocabularies, the build's `:`, and one per
 * namespace ending in `#`, e.g. `singer: <http://valuenet/ontop/singer#>`). Those statements are the
 * items of a page (offset, max_chars), as run_sparql_query pages rows: nothing is cut without the
 * note that says where the next page starts.
 */
import { DataFactory, Parser, Store, termToId, Writer } from 'n3';
import type * as RDF from '@rdfjs/types';
import { DCTERMS, RDF_TYPE, SD, VOID, XSD } from '../common/vocab.js';
import { shardDatasetIri } from '../describe/model.js';
import { FKGQA_VOCAB, VOID_EXT, VOID_PREFIXES, writerText } from '../describe/void-turtle.js';
import type { RegisteredEndpoint } from '../federation/registry.js';
import { pageNote, pickPage, type PageArgs } from './paging.js';
import { sparqlIri } from '../sparql/results.js';

const { namedNode, quad } = DataFactory;
/** PN_PREFIX in the ASCII range (SPARQL 1.1 / Turtle grammar), for namespace prefixes derived from IRIs. */
const PREFIX_LABEL = /^[A-Za-z](?:[A-Za-z0-9_\-.]*[A-Za-z0-9_-])?$/;

/** The dataset IRI of an endpoint's VoID (an fkgqa shard's, or the one `computeVoid` mints for another endpoint). */
export const datasetIriOf = (e: RegisteredEndpoint): string => shardDatasetIri(e.graph ?? e.id, e.shard ?? 'endpoint');

/**
 * The endpoint URL each dataset IRI of the registry stands for: every endpoint's own dataset IRI
 * (`datasetIriOf`), and in `store` every dataset whose `void:sparqlEndpoint` is a registered URL.
 */
function datasetNames(store: Store, endpoints: readonly RegisteredEndpoint[]): Map<string, string> {
  const names = new Map<string, string>(endpoints.map((e) => [datasetIriOf(e), e.url]));
  const norm = (u: string) => u.replace(/\/+$/, '');
  const byUrl = new Map(endpoints.map((e) => [norm(e.url), e.url]));
  for (const q of store.getQuads(null, namedNode(`${VOID}sparqlEndpoint`), null, null)) {
    const url = byUrl.get(norm(q.object.value));
    if (url && q.subject.termType === 'NamedNode' && q.subject.value !== url) names.set(q.subject.value, url);
  }
  return names;
}

/** The store with every dataset IRI of `names` replaced by its endpoint URL. */
function renamed(store: Store, names: Map<string, string>): Store {
  const out = new Store();
  const term = <T extends RDF.Term>(t: T): T => (t.termType === 'NamedNode' && names.has(t.value) ? (namedNode(names.get(t.value)!) as unknown as T) : t);
  for (const q of store.getQuads(null, null, null, null)) out.addQuad(quad(term(q.subject), q.predicate, term(q.object)));
  return out;
}

/** Prefixes for the namespaces ending in `#` of the description's IRIs (`…/singer#age` → `singer:`), where the label is free and valid. */
function namespacePrefixes(store: Store, taken: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  const used = new Set(Object.keys(taken));
  const iris = new Set<string>();
  for (const q of store.getQuads(null, null, null, null)) for (const t of [q.subject, q.object]) if (t.termType === 'NamedNode') iris.add(t.value);
  for (const iri of [...iris].sort()) {
    const hash = iri.indexOf('#');
    if (hash < 0 || hash === iri.length - 1) continue;
    const ns = iri.slice(0, hash + 1);
    if (Object.values(taken).includes(ns) || Object.values(out).includes(ns)) continue;
    const label = ns.slice(0, -1).replace(/^.*[/:]/, '');
    if (!PREFIX_LABEL.test(label) || used.has(label)) continue;
    used.add(label);
    out[label] = ns;
  }
  return out;
}

/** One statement of a description on one line (n3's Writer with `prefixes`, its prefix lines left out, whitespace outside literals collapsed). */
function statementText(prefixes: Record<string, string>, add: (w: Writer) => void): string {
  const w = new Writer({ prefixes });
  add(w);
  return writerText(w)
    .split('\n')
    .filter((l) => !l.startsWith('@prefix'))
    .join('\n')
    .trim()
    .replace(/\s*\n\s*/g, ' ');
}

/** A VoID description as the items of get_void_descriptions' pages. */
interface VoidStatements {
  /** The endpoint's URL (the name of its dataset). */
  endpoint: string;
  /** Statements of one line each: the dataset's own values first, then one per blank node hanging off it, then other subjects. */
  statements: string[];
  /** Prefixes the statements may use (label → namespace IRI). */
  prefixes: Record<string, string>;
}

/**
 * A VoID description (Turtle) as statements for the agent (module comment).
 * @param endpoint the registered endpoint it describes
 * @param endpoints every registered endpoint (their dataset IRIs are renamed to their URLs)
 * @param defaultPrefix the build's `:` namespace, if any
 * @throws Error when the Turtle does not parse
 */
export function voidStatements(turtle: string, endpoint: RegisteredEndpoint, endpoints: readonly RegisteredEndpoint[], defaultPrefix?: string): VoidStatements {
  const parsed = new Store(new Parser({ format: 'text/turtle', baseIRI: endpoint.url }).parse(turtle));
  const store = renamed(parsed, datasetNames(parsed, endpoints));
  const base: Record<string, string> = { ...VOID_PREFIXES, ...(defaultPrefix ? { '': defaultPrefix } : {}) };
  const prefixes = { ...base, ...namespacePrefixes(store, base) };
  const pairs = (w: Writer, node: RDF.Term, seen: Set<string>): { predicate: RDF.NamedNode; object: RDF.Term }[] =>
    store.getQuads(node as RDF.Quad_Subject, null, null, null).map((q) => ({
      predicate: q.predicate as RDF.NamedNode,
      object: q.object.termType === 'BlankNode' && !seen.has(q.object.value) ? (seen.add(q.object.value), w.blank(pairs(w, q.object, seen) as never)) : q.object,
    }));
  const subjects = store.getSubjects(null, null, null).filter((s) => s.termType === 'NamedNode');
  const own = subjects.filter((s) => s.value === endpoint.url);
  const others = subjects.filter((s) => s.value !== endpoint.url).sort((a, b) => (a.value < b.value ? -1 : a.value > b.value ? 1 : 0));
  const statements: string[] = [];
  for (const s of [...own, ...others]) {
    const quads = store.getQuads(s, null, null, null);
    const values = quads.filter((q) => q.object.termType !== 'BlankNode');
    if (values.length > 0) statements.push(statementText(prefixes, (w) => values.forEach((q) => w.addQuad(s, q.predicate, q.object))));
    for (const q of quads.filter((x) => x.object.termType === 'BlankNode')) {
      statements.push(statementText(prefixes, (w) => w.addQuad(s, q.predicate, w.blank(pairs(w, q.object, new Set([q.object.value])) as never))));
    }
  }
  return { endpoint: endpoint.url, statements, prefixes };
}

/** The formats of get_void_descriptions: `summary` (the default: one line per dataset, partition and linkset) and `text/turtle` (one Turtle statement per line). */
export const VOID_FORMATS = ['summary', 'text/turtle'] as const;
export type VoidFormat = (typeof VOID_FORMATS)[number];

const FK = FKGQA_VOCAB;
const VOID_EXT_NS = VOID_EXT;
const RDF_NS = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#';

/**
 * A VoID description (Turtle) as the lines of its summary (module comment; docs/mcp.md): one line
 * for the dataset (its counts, title, description, entity IRI space, vocabularies), one per class
 * partition (`class :singer: 3 entities; :singer\#age 3 xsd:integer, …`: each nested property
 * partition with its triples, datatypes and object classes, those typed at another endpoint named
 * `typed at <url>`), one per remote class partition (subjects described here, typed at another
 * endpoint), one per property partition (triples, distinct subjects and objects), one per linkset;
 * every triple the summary does not read is given after them as a Turtle statement, so that no
 * statement of the description is lost. IRIs are written as SPARQL writes them, with the build's
 * `:` (`:singer\#age`, as the gold queries write it), `xsd:` and `rdf:`, or, without a build prefix,
 * one prefix per namespace ending in `#`.
 * @param endpoint the registered endpoint it describes
 * @param endpoints every registered endpoint (their dataset IRIs are renamed to their URLs)
 * @param defaultPrefix the build's `:` namespace, if any
 * @throws Error when the Turtle does not parse
 */
export function voidSummary(turtle: string, endpoint: RegisteredEndpoint, endpoints: readonly RegisteredEndpoint[], defaultPrefix?: string): VoidStatements {
  const parsed = new Store(new Parser({ format: 'text/turtle', baseIRI: endpoint.url }).parse(turtle));
  const store = renamed(parsed, datasetNames(parsed, endpoints));
  const base: Record<string, string> = { xsd: XSD, rdf: RDF_NS, ...(defaultPrefix ? { '': defaultPrefix } : {}) };
  const prefixes = defaultPrefix ? base : { ...base, ...namespacePrefixes(store, base) };
  const name = (t: RDF.Term) => (t.termType === 'NamedNode' ? sparqlIri(t.value, prefixes) : t.termType === 'Literal' ? JSON.stringify(t.value) : `_:${t.value}`);
  const key = (q: RDF.Quad) => `${termToId(q.subject as never)} ${q.predicate.value} ${termToId(q.object as never)}`;
  const read = new Set<string>();
  /** The objects of `s p`, marking those triples read. */
  const take = (s: RDF.Term, p: string): RDF.Term[] =>
    store.getQuads(s as RDF.Quad_Subject, namedNode(p), null, null).map((q) => {
      read.add(key(q));
      return q.object;
    });
  const one = (s: RDF.Term, p: string) => take(s, p)[0];
  const num = (s: RDF.Term, p: string) => one(s, p)?.value;
  /** `3 entities`, `1 entity`, `? entities` (a count the description lacks). */
  const counted = (n: string | undefined, singular: string, plural: string) => `${n ?? '?'} ${n === '1' ? singular : plural}`;
  const v = (x: string) => `${VOID}${x}`;
  const lines: string[] = [];
  const ds = namedNode(endpoint.url);
  for (const q of store.getQuads(ds, namedNode(RDF_TYPE), null, null)) if ([v('Dataset'), `${SD}Graph`].includes(q.object.value)) read.add(key(q));
  const counts = (
    [
      ['triples', 'triple', 'triples'],
      ['entities', 'entity', 'entities'],
      ['classes', 'class', 'classes'],
      ['properties', 'property', 'properties'],
      ['distinctSubjects', 'distinct subject', 'distinct subjects'],
      ['distinctObjects', 'distinct object', 'distinct objects'],
    ] as const
  )
    .map(([p, one_, many]) => ({ n: num(ds, v(p)), one_, many }))
    .filter((c) => c.n !== undefined)
    .map((c) => counted(c.n, c.one_, c.many));
  const title = one(ds, `${DCTERMS}title`);
  const description = one(ds, `${DCTERMS}description`);
  const uriSpace = one(ds, v('uriSpace'));
  const vocabularies = take(ds, v('vocabulary'));
  const sparqlEndpoints = take(ds, v('sparqlEndpoint')).filter((o) => o.value !== endpoint.url);
  if (counts.length || title || description) {
    lines.push(
      `dataset <${endpoint.url}>${title ? ` ${JSON.stringify(title.value)}` : ''}: ${counts.join(', ') || 'no counts'}` +
        (uriSpace ? `; entity IRIs start ${JSON.stringify(uriSpace.value)}` : '') +
        (vocabularies.length ? `; vocabularies ${vocabularies.map((x) => `<${x.value}>`).join(', ')}` : '') +
        (sparqlEndpoints.length ? `; SPARQL endpoint ${sparqlEndpoints.map((x) => `<${x.value}>`).join(', ')}` : '') +
        (description ? `; ${JSON.stringify(description.value)}` : ''),
    );
  }
  /** A nested property partition: `p 3 xsd:integer`, `p 3 → :book 3 typed at <url>`. */
  const nestedProperty = (pp: RDF.Term): string => {
    const p = one(pp, v('property'));
    const triples = num(pp, v('triples'));
    const parts = [p ? name(p) : '?', triples ?? '?'];
    for (const dp of take(pp, `${VOID_EXT_NS}datatypePartition`)) {
      const n = num(dp, v('triples'));
      const dt = one(dp, `${VOID_EXT_NS}datatype`);
      parts.push(`${dt ? name(dt) : '?'}${n !== triples ? ` ${n}` : ''}`);
    }
    for (const cp of take(pp, v('classPartition'))) parts.push(`→ ${name(one(cp, v('class')) ?? namedNode('?'))} ${num(cp, v('triples')) ?? '?'}`);
    for (const rp of take(pp, `${FK}remoteClassPartition`))
      parts.push(`→ ${name(one(rp, `${FK}class`) ?? namedNode('?'))} ${num(rp, v('triples')) ?? '?'} typed at <${one(rp, `${FK}typesIn`)?.value ?? '?'}>`);
    return parts.join(' ');
  };
  const properties = (c: RDF.Term) => {
    const list = take(c, v('propertyPartition')).map(nestedProperty);
    return list.length ? `; ${list.join(', ')}` : '';
  };
  for (const c of take(ds, v('classPartition'))) lines.push(`class ${name(one(c, v('class')) ?? namedNode('?'))}: ${counted(num(c, v('entities')), 'entity', 'entities')}${properties(c)}`);
  for (const c of take(ds, `${FK}remoteClassPartition`)) {
    lines.push(
      `subjects of class ${name(one(c, `${FK}class`) ?? namedNode('?'))} typed at <${one(c, `${FK}typesIn`)?.value ?? '?'}>: ${counted(num(c, v('entities')), 'entity', 'entities')} here${properties(c)}`,
    );
  }
  for (const pp of take(ds, v('propertyPartition'))) {
    const extra = (['Subject', 'Object'] as const)
      .filter((x) => num(pp, v(`distinct${x}s`)) !== undefined)
      .map((x) => `, ${counted(num(pp, v(`distinct${x}s`)), `distinct ${x.toLowerCase()}`, `distinct ${x.toLowerCase()}s`)}`);
    lines.push(`property ${name(one(pp, v('property')) ?? namedNode('?'))}: ${counted(num(pp, v('triples')), 'triple', 'triples')}${extra.join('')}`);
  }
  for (const l of take(ds, v('subset'))) {
    const isLinkset = store.getQuads(l as RDF.Quad_Subject, namedNode(RDF_TYPE), namedNode(v('Linkset')), null);
    if (isLinkset.length === 0) {
      read.delete(key(store.getQuads(ds, namedNode(v('subset')), l as RDF.Quad_Object, null)[0]));
      continue;
    }
    isLinkset.forEach((q) => read.add(key(q)));
    const from = one(l, v('subjectsTarget'));
    const to = one(l, v('objectsTarget'));
    lines.push(`linkset <${from?.value ?? '?'}> → <${to?.value ?? '?'}>: ${take(l, v('linkPredicate')).map(name).join(', ')} ${counted(num(l, v('triples')), 'triple', 'triples')}`);
  }
  // What the summary did not read, as Turtle statements (nothing of an fkgqa VoID file; other VoID may say more).
  const left = store.getQuads(null, null, null, null).filter((q) => !read.has(key(q)));
  if (left.length) {
    const rest = new Store(left);
    const blanks = new Set(left.filter((q) => q.object.termType === 'BlankNode').map((q) => q.object.value));
    for (const s of rest.getSubjects(null, null, null).filter((x) => !(x.termType === 'BlankNode' && blanks.has(x.value)))) {
      lines.push(statementText({}, (w) => rest.getQuads(s, null, null, null).forEach((q) => w.addQuad(q.subject, q.predicate, q.object))));
    }
  }
  return { endpoint: endpoint.url, statements: lines, prefixes };
}

/** One section of a get_void_descriptions answer: a heading comment, and the statements of a description (none for a description that was not found). */
export interface VoidSection {
  heading: string;
  void?: VoidStatements;
}

/**
 * One page of a get_void_descriptions answer: the page's note on the first line (`12 lines`,
 * `statements 1–40 of 95; pass offset=40 to continue`), the prefix declarations the page uses
 * (`PREFIX x: <…>` for the summary, as a query declares them; `@prefix x: <…>.` for Turtle), then
 * each section's heading and its lines of the page (a section without lines, such as "not found",
 * is shown on the first page). In Turtle, what follows the note is one Turtle document.
 */
export function voidPage(sections: readonly VoidSection[], page: PageArgs, format: VoidFormat): { text: string; statements: number; truncated: boolean } {
  const items = sections.flatMap((s, i) => (s.void?.statements ?? []).map((text) => ({ section: i, text })));
  const prefixes: Record<string, string> = Object.assign({}, ...sections.map((s) => s.void?.prefixes ?? {}));
  const prefixLine = (label: string) => (format === 'summary' ? `PREFIX ${label}: <${prefixes[label]}>` : `@prefix ${label}: <${prefixes[label]}>.`);
  // The note (at most 200 characters) and every prefix line are counted up front; a section's heading with the first of its lines on the page.
  const fixed = Object.keys(prefixes).map(prefixLine).join('\n').length + 200;
  let section = -1;
  const p = pickPage(items, page.offset, Number.MAX_SAFE_INTEGER, page.maxChars - fixed, (x) => {
    const heading = x.section !== section ? sections[x.section].heading.length + 1 : 0;
    section = x.section;
    return x.text.length + heading;
  });
  const note = pageNote({ offset: page.offset, shown: p.items.length, total: items.length, unit: format === 'summary' ? 'lines' : 'statements', cutByChars: p.cutByChars, maxChars: page.maxChars });
  const shownText = p.items.map((x) => x.text).join('\n');
  // A label is used when `label:` starts a name in the page's statements (over-approximated: an unused line costs a line, a missing one breaks the Turtle).
  const used = Object.keys(prefixes).filter((label) => new RegExp(`(^|[\\s\\[(,;^])${label.replace(/[.-]/g, '\\$&')}:`, 'm').test(shownText));
  const lines = [note, ...used.map(prefixLine)];
  sections.forEach((s, i) => {
    const mine = p.items.filter((x) => x.section === i);
    if (mine.length > 0 || (!s.void?.statements.length && page.offset === 0)) lines.push(s.heading, ...mine.map((x) => x.text));
  });
  return { text: lines.join('\n'), statements: items.length, truncated: page.offset > 0 || p.items.length < items.length };
}

/** What a VoID description says an endpoint holds: the classes with instances typed there and the properties of its triples. */
export interface VoidFacts {
  /** `void:class` of the dataset's class partitions (rdf:type triples with that object are there). */
  classes: Set<string>;
  /** `void:property` of the dataset's property partitions. */
  properties: Set<string>;
}

/**
 * The classes and properties an endpoint's VoID gives it (its dataset: named by the endpoint URL or
 * `datasetIri`, or the only dataset of the document), or undefined when the description has no
 * property partitions to go by (then it says nothing about what cannot match).
 * @throws Error when the Turtle does not parse
 */
export function voidFacts(turtle: string, endpointUrl: string, datasetIri: string): VoidFacts | undefined {
  const store = new Store(new Parser({ format: 'text/turtle', baseIRI: endpointUrl }).parse(turtle));
  const v = (local: string) => namedNode(`${VOID}${local}`);
  const datasets = store.getSubjects(namedNode(RDF_TYPE), v('Dataset'), null);
  const byEndpoint = store.getSubjects(v('sparqlEndpoint'), namedNode(endpointUrl), null);
  const ds = [...byEndpoint, ...datasets.filter((d) => d.value === datasetIri || d.value === endpointUrl)][0] ?? (datasets.length === 1 ? datasets[0] : undefined);
  if (!ds) return undefined;
  const objects = (s: RDF.Term, p: string) => store.getObjects(s as RDF.Quad_Subject, v(p), null);
  const properties = new Set(objects(ds, 'propertyPartition').flatMap((pp) => objects(pp, 'property').map((o) => o.value)));
  if (properties.size === 0) return undefined;
  const classes = new Set(objects(ds, 'classPartition').flatMap((cp) => objects(cp, 'class').map((o) => o.value)));
  return { classes, properties };
}
