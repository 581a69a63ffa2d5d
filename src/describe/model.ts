/**
 * The VoID description of a shard as typed values: what the SPARQL queries compute
 * (`statistics.ts`), what the Turtle writer renders and its reader recovers (`void-turtle.ts`), and
 * what the catalogue summarises (`catalogue.ts`). Every list is sorted (see `sortDescription`), so
 * equal statistics give equal values and byte-identical files.
 *
 * Vocabulary: VoID, "Describing Linked Datasets with the VoID Vocabulary", W3C Interest Group
 * Note, 3 March 2011 (https://www.w3.org/TR/void/); `void-ext:` is http://ldf.fi/void-ext# (as
 * written by the SIB void-generator and read by sparql-llm); `fkgqa:` (`urn:fkgqa:vocab#`) for
 * the partitions whose rdf:type triples are in another shard (docs/void.md).
 *
 * Every statement is true at the shard's own endpoint: a class partition (`void:classPartition`,
 * at any depth) counts only instances typed by the shard's own rdf:type triples; instances typed
 * in another shard are in remote class partitions, which name that shard (`typesIn`).
 */
import { byCodePoint } from '../common/strings.js';

/** A property partition at dataset level (VoID "Partitioning a dataset based on classes and properties"). */
interface PropertyPartition {
  /** `void:property`: the predicate IRI. */
  property: string;
  /** `void:triples`: triples of the shard with this predicate. */
  triples: number;
  /** `void:distinctSubjects` of those triples. */
  distinctSubjects: number;
  /** `void:distinctObjects` of those triples, literals included. */
  distinctObjects: number;
}

/** Triples of a nested property partition whose objects are instances of `class`, or literals of `datatype`. */
export interface ObjectPartition {
  /** IRI of the object class (`void:classPartition [ void:class … ]`) or datatype (`void-ext:datatypePartition [ void-ext:datatype … ]`). */
  iri: string;
  /** `void:triples`. */
  triples: number;
}

/**
 * Triples of a nested property partition whose objects are instances of a class by rdf:type
 * triples held in *another* shard (`fkgqa:remoteClassPartition [ fkgqa:class … ; fkgqa:typesIn … ]`).
 */
export interface RemoteObjectPartition extends ObjectPartition {
  /** `fkgqa:typesIn`: dataset IRI of the shard that holds the objects' `rdf:type iri` triples. */
  typesIn: string;
}

/** A property partition nested in a (remote) class partition: the triples of the shard with this predicate whose subject is an instance of the class. */
export interface ClassPropertyPartition {
  property: string;
  /** `void:triples`. */
  triples: number;
  /** Object classes by this shard's own rdf:type triples (`?o a D` answers here), sorted by IRI. */
  objectClasses: ObjectPartition[];
  /** Object classes by rdf:type triples held in other shards, sorted by IRI, then `typesIn`. */
  remoteObjectClasses: RemoteObjectPartition[];
  /** Datatypes of the literal objects, sorted by IRI. */
  datatypes: ObjectPartition[];
}

/**
 * A class partition (`void:classPartition`): the part of the shard that describes the subjects
 * typed with the class *in this shard* (the shard holds their `rdf:type` triples, so `ASK { ?s a
 * C }` answers true at its endpoint), as the SIB void-generator and SPORTAL count it.
 */
export interface ClassPartition {
  /** `void:class`. */
  class: string;
  /** `void:entities`: distinct subjects of the shard typed with the class by the shard's own rdf:type triples. */
  entities: number;
  /** Property partitions of those subjects' triples in this shard, sorted by property IRI. */
  properties: ClassPropertyPartition[];
}

/**
 * A remote class partition (`fkgqa:remoteClassPartition`): the part of the shard that describes
 * subjects typed with the class by rdf:type triples held in another shard of the knowledge graph
 * (`typesIn`; `ASK { ?s a C }` answers there, not here). fkgqa vocabulary, see docs/void.md.
 */
export interface RemoteClassPartition extends ClassPartition {
  /** `fkgqa:typesIn`: dataset IRI of the shard that holds the subjects' `rdf:type class` triples. */
  typesIn: string;
}

/** A linkset from this shard to another shard of the same knowledge graph (the extended variant). */
export interface Linkset {
  /** `void:subjectsTarget`: dataset IRI of this shard. */
  subjectsTarget: string;
  /** `void:objectsTarget`: dataset IRI of the shard in which the objects are subjects. */
  objectsTarget: string;
  /** `void:linkPredicate`. */
  linkPredicate: string;
  /** `void:triples`: triples of the subjects' shard with this predicate whose object IRI is a subject in the objects' shard. */
  triples: number;
}

/** The statistics of one shard, as computed by SPARQL queries. */
export interface ShardStatistics {
  /** Knowledge graph name, e.g. `concert_singer`. */
  graph: string;
  /** Shard name, `shard<N>`. */
  shard: string;
  /** IRI of the shard's `void:Dataset` (and named graph while describing). */
  dataset: string;
  /** `void:triples`. */
  triples: number;
  /** `void:entities`: distinct IRI subjects (skolem IRIs of blank nodes included). */
  entities: number;
  /** `void:classes`: distinct objects of the shard's own rdf:type triples. */
  classes: number;
  /** `void:properties`: distinct predicates. */
  properties: number;
  /** `void:distinctSubjects`. */
  distinctSubjects: number;
  /** `void:distinctObjects`, literals included. */
  distinctObjects: number;
  /** `void:uriSpace`, when every entity IRI shares a hierarchical prefix (see `uriSpaceOf`). */
  uriSpace?: string;
  /** `void:vocabulary`: namespaces of the predicates and classes, sorted. */
  vocabularies: string[];
  /** Class partitions by the shard's own rdf:type triples, sorted by class IRI. */
  classPartitions: ClassPartition[];
  /** Class partitions by other shards' rdf:type triples, sorted by class IRI, then `typesIn`. */
  remoteClassPartitions: RemoteClassPartition[];
  /** Sorted by property IRI. */
  propertyPartitions: PropertyPartition[];
  /** Linksets whose subjects are in this shard, sorted by objects' shard, then predicate. */
  linksets: Linkset[];
}

/** A shard's full description: statistics plus the words and access information around them. */
export interface ShardDescription extends ShardStatistics {
  /** `dcterms:title`: the endpoint name, `<graph>-shard<N>`. */
  title: string;
  /** `dcterms:description`: the one-sentence topical description (see `describeInWords`). */
  description: string;
  /** `void:sparqlEndpoint` / `sd:endpoint`, once known. */
  endpoint?: string;
}

/** Sorts every list of a description in place (see the field docs) and returns it. */
export function sortDescription<T extends ShardStatistics>(d: T): T {
  d.vocabularies.sort(byCodePoint);
  d.propertyPartitions.sort((a, b) => byCodePoint(a.property, b.property));
  d.classPartitions.sort((a, b) => byCodePoint(a.class, b.class));
  d.remoteClassPartitions.sort((a, b) => byCodePoint(a.class, b.class) || byCodePoint(a.typesIn, b.typesIn));
  for (const c of [...d.classPartitions, ...d.remoteClassPartitions]) {
    c.properties.sort((a, b) => byCodePoint(a.property, b.property));
    for (const p of c.properties) {
      p.objectClasses.sort((a, b) => byCodePoint(a.iri, b.iri));
      p.remoteObjectClasses.sort((a, b) => byCodePoint(a.iri, b.iri) || byCodePoint(a.typesIn, b.typesIn));
      p.datatypes.sort((a, b) => byCodePoint(a.iri, b.iri));
    }
  }
  d.linksets.sort((a, b) => byCodePoint(a.objectsTarget, b.objectsTarget) || byCodePoint(a.linkPredicate, b.linkPredicate));
  return d;
}

/** Prefix of the dataset IRIs fkgqa mints. */
export const DATASET_PREFIX = 'urn:fkgqa:void:';

/** IRI of the `void:Dataset` of a whole knowledge graph (the catalogue's parent of its shards): `urn:fkgqa:void:<graph>`, graph percent-encoded. */
export const graphDatasetIri = (graph: string) => `${DATASET_PREFIX}${encodeURIComponent(graph)}`;

/** IRI of a shard's `void:Dataset`: `urn:fkgqa:void:<graph>:shard<N>`. Stable across builds and endpoints. */
export const shardDatasetIri = (graph: string, shard: string) => `${graphDatasetIri(graph)}:${shard}`;
