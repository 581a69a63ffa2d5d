/**
 * Computes the VoID statistics of the shards of one knowledge graph by sending the SPARQL
 * aggregate queries of `queries.ts` through a `SparqlClient` (in-process store or remote
 * endpoint: the code cannot tell them apart) and assembling the answers into sorted values.
 */
import { OWL, RDF, RDFS, XSD } from '../common/vocab.js';
import type { SparqlRow } from '../sparql/results.js';
import type { SparqlClient } from './client.js';
import { classesQuery, classPartitionQuery, classPropertyQuery, datasetQuery, datatypeQuery, entitiesQuery, linksetQuery, objectClassQuery, propertyPartitionQuery } from './queries.js';
import { shardDatasetIri, sortDescription, type ClassPartition, type ClassPropertyPartition, type ShardStatistics } from './model.js';
import { byCodePoint } from '../common/strings.js';

/** Namespaces recognised as vocabularies whatever their terms look like. */
const WELL_KNOWN_NAMESPACES = [RDF, RDFS, OWL, XSD];

/**
 * The vocabulary (namespace) of a class or property IRI, for `void:vocabulary`: the longest of
 * `namespaces` (plus rdf, rdfs, owl, xsd) that the IRI starts with; otherwise the IRI up to and
 * including its last `#` or `/`. With `http://valuenet/ontop/` given, `…/ontop/concert#year` belongs
 * to `http://valuenet/ontop/`, not to `…/ontop/concert#` (which is the class `:concert`).
 */
export function namespaceOf(iri: string, namespaces: string[] = []): string {
  let best = '';
  for (const ns of [...WELL_KNOWN_NAMESPACES, ...namespaces]) if (iri.startsWith(ns) && ns.length > best.length) best = ns;
  if (best) return best;
  const cut = Math.max(iri.lastIndexOf('#'), iri.lastIndexOf('/'));
  return cut >= 0 ? iri.slice(0, cut + 1) : iri;
}

/**
 * `void:uriSpace` "where evident": the longest common prefix of the shard's entity IRIs, computed
 * from the code-point least (`lo`) and greatest (`hi`) of them (the common prefix of the least and
 * greatest strings of a set is the common prefix of the whole set), cut back to its last `/` or
 * `#`. It is evident only if that is a hierarchical IRI with an authority and a path
 * (`scheme://host/…/`); subjects from two URI spaces, e.g. `http://valuenet/ontop/…` and the
 * skolem IRIs `urn:fkgqa:bnode:…`, have none.
 * @returns the prefix, or undefined when none is evident
 */
export function uriSpaceOf(lo: string | undefined, hi: string | undefined): string | undefined {
  if (lo === undefined || hi === undefined) return undefined;
  let n = 0;
  while (n < lo.length && n < hi.length && lo[n] === hi[n]) n++;
  const common = lo.slice(0, n);
  const cut = Math.max(common.lastIndexOf('/'), common.lastIndexOf('#'));
  const prefix = common.slice(0, cut + 1);
  return /^[a-z][a-z0-9+.-]*:\/\/[^/?#]+\/(.*[/#])?$/i.test(prefix) ? prefix : undefined;
}

/** The shards of one knowledge graph to describe. */
export interface GraphShards {
  /** Knowledge graph name. */
  graph: string;
  /** Shard names (`shard<N>`); each is the named graph `shardDatasetIri(graph, shard)` of the client's dataset. */
  shards: string[];
  /** Namespaces to recognise as vocabularies (e.g. the build's default prefix `http://valuenet/ontop/`). */
  namespaces?: string[];
}

const int = (row: SparqlRow, v: string): number => {
  const t = row[v];
  const n = t ? Number(t.value) : NaN;
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`expected a count in ?${v}, got ${JSON.stringify(t)}`);
  return n;
};
const iri = (row: SparqlRow, v: string): string => {
  const t = row[v];
  if (!t || t.type !== 'uri') throw new Error(`expected an IRI in ?${v}, got ${JSON.stringify(t)}`);
  return t.value;
};

/**
 * Computes the statistics of every shard of a knowledge graph: nine SELECT queries, each over all
 * shards at once (grouped by shard), sent through `client`, whose dataset must hold each shard as
 * the named graph `shardDatasetIri(graph, shard)` (other named graphs are ignored).
 * @param linksets compute the linksets between the shards too (the extended variant)
 * @returns one value per shard, in the order of `g.shards`, every list sorted
 * @throws Error from the client (naming the endpoint or files) or on an answer that is not a count
 */
export async function computeStatistics(client: SparqlClient, g: GraphShards, linksets = true): Promise<ShardStatistics[]> {
  const graphs = g.shards.map((s) => shardDatasetIri(g.graph, s));
  const byIri = new Map<string, ShardStatistics>();
  for (const [i, shard] of g.shards.entries()) {
    byIri.set(graphs[i], {
      graph: g.graph,
      shard,
      dataset: graphs[i],
      triples: 0,
      entities: 0,
      classes: 0,
      properties: 0,
      distinctSubjects: 0,
      distinctObjects: 0,
      vocabularies: [],
      classPartitions: [],
      remoteClassPartitions: [],
      propertyPartitions: [],
      linksets: [],
    });
  }
  const shardOf = (row: SparqlRow, v = 'g'): ShardStatistics => {
    const s = byIri.get(iri(row, v));
    if (!s) throw new Error(`${client.label}: answer names graph ${row[v].value}, which is not a shard of ${g.graph}`);
    return s;
  };

  for (const row of await client.select(datasetQuery(graphs))) {
    const s = shardOf(row);
    s.triples = int(row, 'triples');
    s.distinctSubjects = int(row, 'subjects');
    s.distinctObjects = int(row, 'objects');
    s.properties = int(row, 'properties');
  }
  for (const row of await client.select(entitiesQuery(graphs))) {
    const s = shardOf(row);
    s.entities = int(row, 'entities');
    const space = uriSpaceOf(row.lo?.value, row.hi?.value);
    if (space) s.uriSpace = space;
  }
  for (const row of await client.select(classesQuery(graphs))) shardOf(row).classes = int(row, 'classes');
  for (const row of await client.select(propertyPartitionQuery(graphs))) {
    shardOf(row).propertyPartitions.push({
      property: iri(row, 'p'),
      triples: int(row, 'triples'),
      distinctSubjects: int(row, 'subjects'),
      distinctObjects: int(row, 'objects'),
    });
  }

  // Class partitions (types in this shard) and remote class partitions (types in shard ?tg), then
  // the property partitions nested in them, then their object classes and datatypes.
  const classPartition = new Map<string, ClassPartition>();
  const keyC = (s: ShardStatistics, row: SparqlRow) => `${s.dataset} ${shardOf(row, 'tg').dataset} ${iri(row, 'c')}`;
  for (const row of await client.select(classPartitionQuery(graphs))) {
    const s = shardOf(row);
    const typesIn = shardOf(row, 'tg').dataset;
    const cp: ClassPartition = { class: iri(row, 'c'), entities: int(row, 'entities'), properties: [] };
    if (typesIn === s.dataset) s.classPartitions.push(cp);
    else s.remoteClassPartitions.push({ ...cp, typesIn });
    classPartition.set(keyC(s, row), typesIn === s.dataset ? cp : s.remoteClassPartitions[s.remoteClassPartitions.length - 1]);
  }
  const nested = new Map<string, ClassPropertyPartition>();
  const nestedOf = (row: SparqlRow, what: string): ClassPropertyPartition => {
    const key = `${keyC(shardOf(row), row)} ${iri(row, 'p')}`;
    const pp = nested.get(key);
    if (!pp) throw new Error(`${client.label}: ${what} for ${key}, which has no triples`);
    return pp;
  };
  for (const row of await client.select(classPropertyQuery(graphs))) {
    const s = shardOf(row);
    const cp = classPartition.get(keyC(s, row));
    if (!cp) throw new Error(`${client.label}: triples of class ${row.c.value} (typed in ${row.tg.value}) in ${s.shard}, which has no instances of it`);
    const pp: ClassPropertyPartition = { property: iri(row, 'p'), triples: int(row, 'triples'), objectClasses: [], remoteObjectClasses: [], datatypes: [] };
    cp.properties.push(pp);
    nested.set(`${keyC(s, row)} ${pp.property}`, pp);
  }
  for (const row of await client.select(objectClassQuery(graphs))) {
    const pp = nestedOf(row, 'object class');
    const typesIn = shardOf(row, 'tg2').dataset;
    const o = { iri: iri(row, 'oc'), triples: int(row, 'triples') };
    if (typesIn === shardOf(row).dataset) pp.objectClasses.push(o);
    else pp.remoteObjectClasses.push({ ...o, typesIn });
  }
  for (const row of await client.select(datatypeQuery(graphs))) {
    nestedOf(row, 'datatype').datatypes.push({ iri: iri(row, 'dt'), triples: int(row, 'triples') });
  }

  if (linksets) {
    for (const row of await client.select(linksetQuery(graphs))) {
      const s = shardOf(row, 'a');
      s.linksets.push({ subjectsTarget: s.dataset, objectsTarget: shardOf(row, 'b').dataset, linkPredicate: iri(row, 'p'), triples: int(row, 'triples') });
    }
  }

  for (const s of byIri.values()) {
    // Terms used in the shard: its predicates and the classes of its own rdf:type triples.
    const terms = [...s.propertyPartitions.map((p) => p.property), ...s.classPartitions.map((c) => c.class)];
    s.vocabularies = [...new Set(terms.map((t) => namespaceOf(t, g.namespaces)))].sort(byCodePoint);
    sortDescription(s);
  }
  return graphs.map((iri) => byIri.get(iri)!);
}
