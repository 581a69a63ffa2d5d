/**
 * The VoID statistics of `statistics.ts`, computed by streaming the shard files instead of loading
 * them into a store: for graphs too large for one oxigraph store (about 1 KB per triple inside a
 * 4 GiB WebAssembly heap, about 1 KB per triple). Gives the same values as the nine SPARQL queries of
 * `queries.ts` (a test checks equality on every graph of the dev build), with the same definitions:
 * instances of a class are the subjects typed with it in any shard of the graph; linksets are the
 * triples of shard A whose IRI object is a subject in shard B.
 *
 * Two passes over the graph's shard files: (A) subjects, the shards each is a subject in, and the
 * classes from rdf:type triples with the shard holding each; (B) per shard, the counts, split into
 * class partitions (type triples in the shard) and remote class partitions (in another shard). Memory: the subject map (as in
 * `partition`), one 64-bit fingerprint per distinct object per shard and per property partition
 * (distinct counts of objects are exact up to xxh64 collisions, probability about n²/2^65), and
 * a bit per subject per predicate; not the triples.
 */
import { FingerprintSet } from '../common/fingerprints.js';
import { getHasher, type Hasher } from '../common/hash.js';
import { RDF, RDF_TYPE } from '../common/vocab.js';
import { scanTriples } from '../load/triples.js';
import { detach, byCodePoint } from '../common/strings.js';
import { shardDatasetIri, sortDescription, type ClassPartition, type RemoteClassPartition, type ShardStatistics } from './model.js';
import { namespaceOf, uriSpaceOf } from './statistics.js';

/** The shard files of one knowledge graph. */
export interface GraphShardFiles {
  graph: string;
  /** Shard names `shard<N>`, in the order of `files`. */
  shards: string[];
  /** N-Triples files of the shards (as written by `partition`: no blank nodes, no duplicates). */
  files: string[];
  /** Namespaces to recognise as vocabularies. */
  namespaces?: string[];
}

const LANG_STRING = `${RDF}langString`;

/** A growable bit matrix: rows × a fixed number of columns. */
class BitRows {
  private bits = new Uint8Array(1024);
  constructor(private readonly columns: number) {}
  set(row: number, col: number): void {
    const i = row * this.columns + col;
    if (i >= this.bits.length) {
      let n = this.bits.length;
      while (n <= i) n *= 2;
      const b = new Uint8Array(n);
      b.set(this.bits);
      this.bits = b;
    }
    this.bits[i] = 1;
  }
  get(row: number, col: number): boolean {
    const i = row * this.columns + col;
    return i < this.bits.length && this.bits[i] === 1;
  }
}

/** A growable set of small non-negative integers. */
class BitSet {
  private words = new Uint32Array(64);
  size = 0;
  add(n: number): void {
    const w = n >>> 5;
    if (w >= this.words.length) {
      let len = this.words.length;
      while (len <= w) len *= 2;
      const b = new Uint32Array(len);
      b.set(this.words);
      this.words = b;
    }
    const m = 1 << (n & 31);
    if (!(this.words[w] & m)) {
      this.words[w] |= m;
      this.size++;
    }
  }
}

/** Predicate ids of one shard are below this (the low part of a count key). */
const PREDICATE_IDS = 1 << 20;
/** Datatype ids of one shard are below this (the low part of a datatype count key). */
const DATATYPE_IDS = 1 << 16;

/** What pass A learns over all shard files of the graph: the subjects and their classes. */
interface SubjectClasses {
  /** Subject IRI → subject number. */
  subjectIndex: Map<string, number>;
  /** Row: subject number; column: shard k; set when the subject is a subject in shard k. */
  subjectOf: BitRows;
  /** Class set id → sorted entries `<k> <class IRI>` (the class and the shard k holding the type triple); id 0 is the empty set. */
  classSets: string[][];
  /** Subject number → class set id. */
  classSetOf: Int32Array;
}

/**
 * Pass A: subjects, the shards each is a subject in, and their classes with the shard of each type triple.
 * @throws InputError naming a file that is missing or does not parse
 */
async function scanSubjects(g: GraphShardFiles): Promise<SubjectClasses> {
  const subjectIndex = new Map<string, number>();
  const subjectOf = new BitRows(g.shards.length);
  const classSets: string[][] = [[]];
  const setIds = new Map<string, number>([['', 0]]);
  let classSetOf = new Int32Array(1024);
  const withClass = (set: number, c: string) => {
    if (classSets[set].includes(c)) return set;
    const classes = [...classSets[set], c].sort(byCodePoint);
    const key = classes.join('\n');
    let id = setIds.get(key);
    if (id === undefined) {
      id = classSets.length;
      classSets.push(classes);
      setIds.set(key, id);
    }
    return id;
  };
  for (const [k, file] of g.files.entries()) {
    let last = '';
    let lastIndex = -1;
    await scanTriples({ file, format: 'n-triples', graph: g.graph }, (t) => {
      const s = t.subject.value;
      let i = s === last ? lastIndex : subjectIndex.get(s);
      if (i === undefined) {
        i = subjectIndex.size;
        subjectIndex.set(detach(s), i);
        if (i >= classSetOf.length) {
          const b = new Int32Array(classSetOf.length * 2);
          b.set(classSetOf);
          classSetOf = b;
        }
      }
      last = s;
      lastIndex = i;
      subjectOf.set(i, k);
      // A class set holds `<k> <class IRI>`: the class and the shard k holding the type triple.
      if (t.predicate.value === RDF_TYPE && t.object.termType === 'NamedNode') classSetOf[i] = withClass(classSetOf[i], `${k} ${t.object.value}`);
    });
  }
  return { subjectIndex, subjectOf, classSets, classSetOf };
}

/** The counts of one predicate in one shard. */
interface PredicateStats {
  id: number;
  iri: string;
  triples: number;
  subjects: BitSet;
  objects: FingerprintSet;
}

/**
 * What pass B counts in one shard. The nested counts are keyed by numbers (class set of the
 * subject, predicate id, object class set or datatype id, other shard), expanded to classes by
 * `classPartitionsOf`.
 */
interface ShardCounts {
  triples: number;
  subjects: BitSet;
  /** The least and greatest subject IRI (code-unit order), for the URI space. */
  lo: string | undefined;
  hi: string | undefined;
  objects: FingerprintSet;
  /** Objects of rdf:type triples, as N-Triples terms. */
  typeObjects: Set<string>;
  predicates: Map<string, PredicateStats>;
  /** The predicates by id. */
  predicateList: PredicateStats[];
  /** The datatypes by id. */
  datatypeList: string[];
  /** Triples by `set * PREDICATE_IDS + p` (subjects with a class only). */
  nested: Map<number, number>;
  /** Triples by `(set * PREDICATE_IDS + p) * classSets + objectSet` (subject and IRI object with a class). */
  objectClass: Map<number, number>;
  /** Literal triples by `(set * PREDICATE_IDS + p) * DATATYPE_IDS + dt` (subjects with a class only). */
  datatype: Map<number, number>;
  /** Triples by `b * PREDICATE_IDS + p`: IRI objects that are subjects in shard b (linksets). */
  links: Map<number, number>;
}

/**
 * Pass B over shard k: the counts of the shard (`ShardCounts`).
 * @throws InputError naming a file that is missing or does not parse; Error beyond PREDICATE_IDS predicates
 */
async function countShard(g: GraphShardFiles, k: number, a: SubjectClasses, hasher: Hasher, linksets: boolean): Promise<ShardCounts> {
  const { subjectIndex, subjectOf, classSets, classSetOf } = a;
  const n = g.shards.length;
  const P = PREDICATE_IDS;
  const D = DATATYPE_IDS;
  const c: ShardCounts = {
    triples: 0,
    subjects: new BitSet(),
    lo: undefined,
    hi: undefined,
    objects: new FingerprintSet(),
    typeObjects: new Set<string>(),
    predicates: new Map<string, PredicateStats>(),
    predicateList: [],
    datatypeList: [],
    nested: new Map<number, number>(),
    objectClass: new Map<number, number>(),
    datatype: new Map<number, number>(),
    links: new Map<number, number>(),
  };
  const { subjects, objects, typeObjects, predicates, predicateList, datatypeList, nested, objectClass, datatype, links } = c;
  const datatypeIds = new Map<string, number>();
  const bump = (m: Map<number, number>, key: number) => m.set(key, (m.get(key) ?? 0) + 1);
  const nSets = classSets.length;
  let last = '';
  let lastIndex = -1;
  await scanTriples({ file: g.files[k], format: 'n-triples', graph: g.graph }, (t) => {
    c.triples++;
    const s = t.subject.value;
    const si = s === last ? lastIndex : subjectIndex.get(s)!;
    if (s !== last) {
      last = s;
      lastIndex = si;
      if (c.lo === undefined || s < c.lo) c.lo = detach(s);
      if (c.hi === undefined || s > c.hi) c.hi = detach(s);
    }
    subjects.add(si);
    const p = t.predicate.value;
    let ps = predicates.get(p);
    if (!ps) {
      if (predicateList.length >= P) throw new Error(`more than ${P} predicates in one shard`);
      ps = { id: predicateList.length, iri: detach(p), triples: 0, subjects: new BitSet(), objects: new FingerprintSet(16) };
      predicates.set(ps.iri, ps);
      predicateList.push(ps);
    }
    ps.triples++;
    ps.subjects.add(si);
    const o = t.object;
    const key = o.termType === 'NamedNode' ? `<${o.value}>` : `"${o.value}"${o.language ? `@${o.language}` : `^^<${o.datatype.value}>`}`;
    const h = hasher.h64(key);
    const hiBits = Number(h >> 32n);
    const loBits = Number(h & 0xffffffffn);
    objects.add(hiBits, loBits);
    ps.objects.add(hiBits, loBits);
    if (p === RDF_TYPE) typeObjects.add(key);
    const set = classSetOf[si];
    const sp = set * P + ps.id;
    if (set !== 0) {
      bump(nested, sp);
      if (o.termType === 'Literal') {
        const dtIri = o.language ? LANG_STRING : o.datatype.value;
        let dt = datatypeIds.get(dtIri);
        if (dt === undefined) {
          dt = datatypeList.length;
          datatypeIds.set(detach(dtIri), dt);
          datatypeList.push(detach(dtIri));
        }
        bump(datatype, sp * D + dt);
      }
    }
    if (o.termType === 'NamedNode') {
      const oi = subjectIndex.get(o.value);
      if (oi !== undefined) {
        if (set !== 0 && classSetOf[oi] !== 0) bump(objectClass, sp * nSets + classSetOf[oi]);
        if (linksets) for (let b = 0; b < n; b++) if (b !== k && subjectOf.get(oi, b)) bump(links, b * P + ps.id);
      }
    }
  });
  return c;
}

/**
 * The (remote) class partitions of shard k with at least one entity: entities from pass A, nested
 * counts expanded from class sets to (shard of the type triple, class) pairs; a pair of this shard
 * is a class partition, of another shard a remote class partition. Unsorted.
 */
function classPartitionsOf(g: GraphShardFiles, k: number, a: SubjectClasses, c: ShardCounts): (ClassPartition | RemoteClassPartition)[] {
  const { subjectIndex, subjectOf, classSets, classSetOf } = a;
  const P = PREDICATE_IDS;
  const D = DATATYPE_IDS;
  const nSets = classSets.length;
  const partitions = new Map<string, ClassPartition | RemoteClassPartition>();
  const typed = (entry: string) => {
    const cut = entry.indexOf(' ');
    return { shard: Number(entry.slice(0, cut)), iri: entry.slice(cut + 1) };
  };
  const partition = (entry: string) => {
    let cp = partitions.get(entry);
    if (!cp) {
      const t = typed(entry);
      cp = t.shard === k ? { class: t.iri, entities: 0, properties: [] } : { class: t.iri, typesIn: shardDatasetIri(g.graph, g.shards[t.shard]), entities: 0, properties: [] };
      partitions.set(entry, cp);
    }
    return cp;
  };
  for (const i of subjectIndex.values()) {
    if (subjectOf.get(i, k)) for (const cls of classSets[classSetOf[i]]) partition(cls).entities++;
  }
  const nestedOf = (cls: string, p: string) => {
    const cp = partition(cls);
    let pp = cp.properties.find((x) => x.property === p);
    if (!pp) cp.properties.push((pp = { property: p, triples: 0, objectClasses: [], remoteObjectClasses: [], datatypes: [] }));
    return pp;
  };
  const split = (key: number) => ({ set: Math.floor(key / P), p: c.predicateList[key % P].iri });
  for (const [key, count] of c.nested) {
    const { set, p } = split(key);
    for (const cls of classSets[set]) nestedOf(cls, p).triples += count;
  }
  const add = <T extends { iri: string; triples: number }>(list: T[], x: T) => {
    const y = list.find((z) => z.iri === x.iri && (z as { typesIn?: string }).typesIn === (x as { typesIn?: string }).typesIn);
    if (y) y.triples += x.triples;
    else list.push(x);
  };
  for (const [key, count] of c.objectClass) {
    const { set, p } = split(Math.floor(key / nSets));
    for (const cls of classSets[set]) {
      for (const entry of classSets[key % nSets]) {
        const oc = typed(entry);
        const pp = nestedOf(cls, p);
        if (oc.shard === k) add(pp.objectClasses, { iri: oc.iri, triples: count });
        else add(pp.remoteObjectClasses, { iri: oc.iri, typesIn: shardDatasetIri(g.graph, g.shards[oc.shard]), triples: count });
      }
    }
  }
  for (const [key, count] of c.datatype) {
    const { set, p } = split(Math.floor(key / D));
    for (const cls of classSets[set]) add(nestedOf(cls, p).datatypes, { iri: c.datatypeList[key % D], triples: count });
  }
  return [...partitions.values()].filter((cp) => cp.entities > 0);
}

/** The statistics of shard k from its counts and class partitions, every list sorted (`sortDescription`). */
function shardStatistics(g: GraphShardFiles, k: number, c: ShardCounts, partitions: (ClassPartition | RemoteClassPartition)[]): ShardStatistics {
  const dataset = shardDatasetIri(g.graph, g.shards[k]);
  const stats: ShardStatistics = {
    graph: g.graph,
    shard: g.shards[k],
    dataset,
    triples: c.triples,
    entities: c.subjects.size,
    classes: c.typeObjects.size,
    properties: c.predicates.size,
    distinctSubjects: c.subjects.size,
    distinctObjects: c.objects.size,
    vocabularies: [],
    classPartitions: partitions.filter((cp) => !('typesIn' in cp)),
    remoteClassPartitions: partitions.filter((cp): cp is RemoteClassPartition => 'typesIn' in cp),
    propertyPartitions: c.predicateList.map((ps) => ({
      property: ps.iri,
      triples: ps.triples,
      distinctSubjects: ps.subjects.size,
      distinctObjects: ps.objects.size,
    })),
    linksets: [...c.links].map(([key, count]) => ({
      subjectsTarget: dataset,
      objectsTarget: shardDatasetIri(g.graph, g.shards[Math.floor(key / PREDICATE_IDS)]),
      linkPredicate: c.predicateList[key % PREDICATE_IDS].iri,
      triples: count,
    })),
  };
  const space = uriSpaceOf(c.lo, c.hi);
  if (space) stats.uriSpace = space;
  const terms = [...stats.propertyPartitions.map((p) => p.property), ...stats.classPartitions.map((cp) => cp.class)];
  stats.vocabularies = [...new Set(terms.map((t) => namespaceOf(t, g.namespaces)))].sort(byCodePoint);
  return sortDescription(stats);
}

/**
 * Computes the statistics of every shard of a graph from its shard files: pass A over every file
 * (`scanSubjects`), then per shard pass B (`countShard`), its class partitions (`classPartitionsOf`)
 * and its statistics (`shardStatistics`).
 * @param linksets compute the linksets too (the extended variant)
 * @returns one value per shard, in the order of `g.shards`, every list sorted
 * @throws InputError naming a file that is missing or does not parse
 */
export async function streamStatistics(g: GraphShardFiles, linksets = true): Promise<ShardStatistics[]> {
  const hasher = await getHasher();
  const subjects = await scanSubjects(g);
  const out: ShardStatistics[] = [];
  for (const k of g.files.keys()) {
    const counts = await countShard(g, k, subjects, hasher, linksets);
    out.push(shardStatistics(g, k, counts, classPartitionsOf(g, k, subjects, counts)));
  }
  return out;
}
