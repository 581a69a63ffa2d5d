/**
 * Writes a shard's description as Turtle (VoID, SPARQL 1.1 Service Description, Dublin Core
 * terms) and reads it back: `readVoid(renderVoid(d))` gives `d` again, so a VoID file can be
 * re-rendered with endpoint URLs without recomputing anything (serve's live VoID, serve/live-void.ts).
 *
 * Partitions and linksets are anonymous, nested resources (`[ … ]`): n3's Writer prints them
 * without blank-node labels, and the writer adds every triple in a fixed order from sorted values,
 * so equal descriptions give byte-identical files.
 */
import { DataFactory, Parser, Store, Writer } from 'n3';
import type * as RDF from '@rdfjs/types';
import { InputError } from '../common/errors.js';
import { DCTERMS, RDF_TYPE, SD, VOID, XSD } from '../common/vocab.js';
import {
  DATASET_PREFIX,
  sortDescription,
  type ClassPartition,
  type ClassPropertyPartition,
  type Linkset,
  type ObjectPartition,
  type RemoteClassPartition,
  type RemoteObjectPartition,
  type ShardDescription,
} from './model.js';

/** `void-ext:` (http://ldf.fi/void-ext#), for datatype partitions as the SIB void-generator writes them. */
export const VOID_EXT = 'http://ldf.fi/void-ext#';
/**
 * `fkgqa:` (urn:fkgqa:vocab#), fkgqa's own terms for partitions whose rdf:type triples are in
 * another shard (docs/void.md, "Where the types are"): `fkgqa:remoteClassPartition` (a subset, like
 * `void:classPartition`, whose subjects, or objects when nested in a property partition, are
 * typed in another dataset), `fkgqa:class` (its class; not `void:class`, so that VoID readers do
 * not take it for a class partition of this dataset) and `fkgqa:typesIn` (the dataset holding the
 * `rdf:type` triples: `ASK { ?s a C }` is true at its endpoint).
 */
export const FKGQA_VOCAB = 'urn:fkgqa:vocab#';
/** The prefixes of every VoID fkgqa writes: VoID, its extension, fkgqa's terms, SPARQL 1.1 Service Description, Dublin Core terms, XSD. */
export const VOID_PREFIXES: Readonly<Record<string, string>> = { void: VOID, 'void-ext': VOID_EXT, fkgqa: FKGQA_VOCAB, sd: SD, dcterms: DCTERMS, xsd: XSD };
/** The W3C format IRI of the SPARQL 1.1 Query Results JSON Format (https://www.w3.org/ns/formats/). */
const FORMAT_SPARQL_JSON = 'http://www.w3.org/ns/formats/SPARQL_Results_JSON';

/**
 * Which VoID to write: `standard` (the dataset, its class and property partitions) or `extended`
 * (the same plus the linksets from this shard to the other shards of its knowledge graph).
 */
export type VoidVariant = 'standard' | 'extended';

const { namedNode: iri, literal } = DataFactory;
const v = (local: string) => iri(`${VOID}${local}`);
const sd = (local: string) => iri(`${SD}${local}`);
const ext = (local: string) => iri(`${VOID_EXT}${local}`);
const dc = (local: string) => iri(`${DCTERMS}${local}`);
const fk = (local: string) => iri(`${FKGQA_VOCAB}${local}`);
const TYPE = iri(RDF_TYPE);
const count = (n: number) => literal(String(n), iri(`${XSD}integer`));

type Pair = { predicate: RDF.NamedNode; object: RDF.Quad_Object };

/**
 * Renders a shard's VoID as Turtle.
 * @param d the description (its lists sorted, as `computeStatistics` returns them)
 * @param variant `extended` adds the linksets as `void:subset`s of the dataset
 * @param prefix IRI written as the empty prefix `:` (e.g. `http://valuenet/ontop/`, the prefix of the gold queries), if any
 * @returns the Turtle text, ending with a newline
 */
export function renderVoid(d: ShardDescription, variant: VoidVariant, prefix?: string): string {
  const w = new Writer({ prefixes: prefix ? { ...VOID_PREFIXES, '': prefix } : VOID_PREFIXES });
  const ds = iri(d.dataset);
  const add = (p: RDF.NamedNode, o: RDF.Quad_Object) => w.addQuad(ds, p, o);

  add(TYPE, v('Dataset'));
  if (d.endpoint) add(TYPE, sd('Graph'));
  add(dc('title'), literal(d.title));
  add(dc('description'), literal(d.description));
  if (d.endpoint) add(v('sparqlEndpoint'), iri(d.endpoint));
  add(v('triples'), count(d.triples));
  add(v('entities'), count(d.entities));
  add(v('classes'), count(d.classes));
  add(v('properties'), count(d.properties));
  add(v('distinctSubjects'), count(d.distinctSubjects));
  add(v('distinctObjects'), count(d.distinctObjects));
  if (d.uriSpace) add(v('uriSpace'), literal(d.uriSpace));
  for (const ns of d.vocabularies) add(v('vocabulary'), iri(ns));
  for (const c of d.classPartitions) add(v('classPartition'), w.blank(classPartitionPairs(w, c)));
  for (const c of d.remoteClassPartitions) add(fk('remoteClassPartition'), w.blank(classPartitionPairs(w, c)));
  for (const p of d.propertyPartitions) {
    add(
      v('propertyPartition'),
      w.blank([
        { predicate: v('property'), object: iri(p.property) },
        { predicate: v('triples'), object: count(p.triples) },
        { predicate: v('distinctSubjects'), object: count(p.distinctSubjects) },
        { predicate: v('distinctObjects'), object: count(p.distinctObjects) },
      ]),
    );
  }
  if (variant === 'extended') for (const l of d.linksets) add(v('subset'), w.blank(linksetPairs(l)));
  if (d.endpoint) {
    const svc = iri(d.endpoint);
    w.addQuad(svc, TYPE, sd('Service'));
    w.addQuad(svc, sd('endpoint'), svc);
    w.addQuad(svc, sd('supportedLanguage'), sd('SPARQL11Query'));
    w.addQuad(svc, sd('resultFormat'), iri(FORMAT_SPARQL_JSON));
    w.addQuad(
      svc,
      sd('defaultDataset'),
      w.blank([
        { predicate: TYPE, object: sd('Dataset') },
        { predicate: sd('defaultGraph'), object: ds },
      ]),
    );
  }
  return writerText(w);
}

/** Ends an n3 Writer (which calls back synchronously when writing to a string) and returns its text with a final newline. */
export function writerText(w: Writer): string {
  let out = '';
  w.end((error, result) => {
    if (error) throw error;
    out = result;
  });
  return out.endsWith('\n') ? out : `${out}\n`;
}

/** The pairs of a class partition, or of a remote one (`fkgqa:class`, `fkgqa:typesIn`), with the partitions nested in it. */
function classPartitionPairs(w: Writer, c: ClassPartition | RemoteClassPartition): Pair[] {
  const nestedPair = (kind: 'class' | 'datatype', o: ObjectPartition): Pair =>
    kind === 'class'
      ? {
          predicate: v('classPartition'),
          object: w.blank([
            { predicate: v('class'), object: iri(o.iri) },
            { predicate: v('triples'), object: count(o.triples) },
          ]),
        }
      : {
          predicate: ext('datatypePartition'),
          object: w.blank([
            { predicate: ext('datatype'), object: iri(o.iri) },
            { predicate: v('triples'), object: count(o.triples) },
          ]),
        };
  const remotePair = (o: RemoteObjectPartition): Pair => ({
    predicate: fk('remoteClassPartition'),
    object: w.blank([
      { predicate: fk('class'), object: iri(o.iri) },
      { predicate: fk('typesIn'), object: iri(o.typesIn) },
      { predicate: v('triples'), object: count(o.triples) },
    ]),
  });
  const head: Pair[] =
    'typesIn' in c
      ? [
          { predicate: fk('class'), object: iri(c.class) },
          { predicate: fk('typesIn'), object: iri(c.typesIn) },
        ]
      : [{ predicate: v('class'), object: iri(c.class) }];
  return [
    ...head,
    { predicate: v('entities'), object: count(c.entities) },
    ...c.properties.map((p) => ({
      predicate: v('propertyPartition'),
      object: w.blank([
        { predicate: v('property'), object: iri(p.property) },
        { predicate: v('triples'), object: count(p.triples) },
        ...p.objectClasses.map((o) => nestedPair('class', o)),
        ...p.remoteObjectClasses.map(remotePair),
        ...p.datatypes.map((o) => nestedPair('datatype', o)),
      ]),
    })),
  ];
}

function linksetPairs(l: Linkset): Pair[] {
  return [
    { predicate: TYPE, object: v('Linkset') },
    { predicate: v('subjectsTarget'), object: iri(l.subjectsTarget) },
    { predicate: v('objectsTarget'), object: iri(l.objectsTarget) },
    { predicate: v('linkPredicate'), object: iri(l.linkPredicate) },
    { predicate: v('triples'), object: count(l.triples) },
  ];
}

/**
 * Reads a VoID file written by `renderVoid` back into a description (the inverse of rendering).
 * @param text the Turtle text
 * @param file the file's path, for messages
 * @throws InputError naming the file: Turtle syntax error (with its line), no fkgqa shard dataset,
 *   or a missing or non-integer count
 */
export function readVoid(text: string, file: string): ShardDescription {
  let store: Store;
  try {
    store = new Store(new Parser({ format: 'text/turtle' }).parse(text));
  } catch (e) {
    const m = /line (\d+)/.exec((e as Error).message);
    throw new InputError(`not valid Turtle: ${(e as Error).message}`, { file, line: m ? Number(m[1]) : undefined });
  }
  const datasets = store.getSubjects(TYPE, v('Dataset'), null).filter((s) => s.termType === 'NamedNode' && s.value.startsWith(DATASET_PREFIX));
  if (datasets.length !== 1) throw new InputError(`expected one void:Dataset named ${DATASET_PREFIX}<graph>:<shard>, found ${datasets.length}`, { file });
  const ds = datasets[0];
  const m = /^urn:fkgqa:void:([^:]+):(shard\d+)$/.exec(ds.value);
  if (!m) throw new InputError(`dataset IRI ${ds.value} does not name a graph and shard`, { file });

  const objects = (s: RDF.Term, p: RDF.NamedNode) => store.getObjects(s as RDF.Quad_Subject, p, null);
  const one = (s: RDF.Term, p: RDF.NamedNode, what: string): RDF.Term => {
    const os = objects(s, p);
    if (os.length !== 1) throw new InputError(`${what}: expected one ${p.value}, found ${os.length}`, { file });
    return os[0];
  };
  const num = (s: RDF.Term, p: RDF.NamedNode, what: string): number => {
    const o = one(s, p, what);
    const n = Number(o.value);
    if (o.termType !== 'Literal' || !Number.isSafeInteger(n) || n < 0) throw new InputError(`${what}: ${p.value} is not a count: ${o.value}`, { file });
    return n;
  };
  const str = (s: RDF.Term, p: RDF.NamedNode, what: string) => one(s, p, what).value;
  const optional = (s: RDF.Term, p: RDF.NamedNode) => objects(s, p)[0]?.value;
  const nested = (pp: RDF.Term, link: RDF.NamedNode, key: RDF.NamedNode, what: string): ObjectPartition[] =>
    objects(pp, link).map((o) => ({ iri: str(o, key, what), triples: num(o, v('triples'), what) }));
  const properties = (c: RDF.Term, w: string): ClassPropertyPartition[] =>
    objects(c, v('propertyPartition')).map((p) => {
      const prop = str(p, v('property'), w);
      const wp = `${w}, property ${prop}`;
      return {
        property: prop,
        triples: num(p, v('triples'), wp),
        objectClasses: nested(p, v('classPartition'), v('class'), wp),
        remoteObjectClasses: objects(p, fk('remoteClassPartition')).map((o): RemoteObjectPartition => ({
          iri: str(o, fk('class'), wp),
          typesIn: str(o, fk('typesIn'), wp),
          triples: num(o, v('triples'), wp),
        })),
        datatypes: nested(p, ext('datatypePartition'), ext('datatype'), wp),
      };
    });

  const where = `dataset ${ds.value}`;
  const d: ShardDescription = {
    graph: decodeURIComponent(m[1]),
    shard: m[2],
    dataset: ds.value,
    title: str(ds, dc('title'), where),
    description: str(ds, dc('description'), where),
    triples: num(ds, v('triples'), where),
    entities: num(ds, v('entities'), where),
    classes: num(ds, v('classes'), where),
    properties: num(ds, v('properties'), where),
    distinctSubjects: num(ds, v('distinctSubjects'), where),
    distinctObjects: num(ds, v('distinctObjects'), where),
    vocabularies: objects(ds, v('vocabulary')).map((o) => o.value),
    classPartitions: objects(ds, v('classPartition')).map((c) => {
      const cls = str(c, v('class'), `class partition of ${where}`);
      const w = `class partition ${cls}`;
      return { class: cls, entities: num(c, v('entities'), w), properties: properties(c, w) };
    }),
    remoteClassPartitions: objects(ds, fk('remoteClassPartition')).map((c) => {
      const cls = str(c, fk('class'), `remote class partition of ${where}`);
      const w = `remote class partition ${cls}`;
      return { class: cls, typesIn: str(c, fk('typesIn'), w), entities: num(c, v('entities'), w), properties: properties(c, w) };
    }),
    propertyPartitions: objects(ds, v('propertyPartition')).map((p) => {
      const prop = str(p, v('property'), `property partition of ${where}`);
      const w = `property partition ${prop}`;
      return { property: prop, triples: num(p, v('triples'), w), distinctSubjects: num(p, v('distinctSubjects'), w), distinctObjects: num(p, v('distinctObjects'), w) };
    }),
    linksets: objects(ds, v('subset'))
      .filter((l) => store.has(DataFactory.quad(l as RDF.Quad_Subject, TYPE, v('Linkset'))))
      .map((l) => {
        const w = `linkset of ${where}`;
        return {
          subjectsTarget: str(l, v('subjectsTarget'), w),
          objectsTarget: str(l, v('objectsTarget'), w),
          linkPredicate: str(l, v('linkPredicate'), w),
          triples: num(l, v('triples'), w),
        };
      }),
  };
  const uriSpace = optional(ds, v('uriSpace'));
  if (uriSpace !== undefined) d.uriSpace = uriSpace;
  const endpoint = optional(ds, v('sparqlEndpoint'));
  if (endpoint !== undefined) d.endpoint = endpoint;
  return sortDescription(d);
}
