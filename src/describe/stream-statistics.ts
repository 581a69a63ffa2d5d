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
import { getHasher } from '../common/hash.js';
import { RDF, RDF_TYPE } from '../common/vocab.js';
import { scanTriples } from '../load/triples.js';
import { detach } from '../common/strings.js';
import { byCodePoint, shardDatasetIri, sortDescription, type ClassPartition, type RemoteClassPartition, type ShardStatistics } from './model.js';
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

/**
 * Computes the statistics of every shard of a graph from its shard files.
 * @param linksets compute the linksets too (the extended variant)
 * @returns one value per shard, in the order of `g.shards`, every list sorted
 * @throws InputError naming a file that is missing or does not parse
 */
export async function streamStatistics(g: GraphShardFiles, linksets = true): Promise<ShardStatistics[]> {
  const hasher = await getHasher();
  const n = g.shards.length;
  // Pass A: subjects, where they are subjects, and their classes.
  const subjectIndex = new Map<string, number>();
  const subjectOf = new BitRows(n);
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

  const out: ShardStatistics[] = [];
  for (const [k, file] of g.files.entries()) {
    const dataset = shardDatasetIri(g.graph, g.shards[k]);
    let triples = 0;
    const subjects = new BitSet();
    let lo: string | undefined;
    let hi: string | undefined;
    const objects = new FingerprintSet();
    const typeObjects = new Set<string>();
    interface PredicateStats {
      id: number;
      iri: string;
      triples: number;
      subjects: BitSet;
      objects: FingerprintSet;
    }
    const predicates = new Map<string, PredicateStats>();
    const predicateList: PredicateStats[] = [];
    const datatypeIds = new Map<string, number>();
    const datatypeList: string[] = [];
    // Counts keyed by numbers (class set of the subject, predicate id, object class set or datatype
    // id, other shard), expanded to classes at the end.
    const P = 1 << 20; // predicate ids are below this
    const nested = new Map<number, number>(); // set * P + p
    const objectClass = new Map<number, number>(); // (set * P + p) * classSets + objectSet
    const datatype = new Map<number, number>(); // (set * P + p) * D + dt
    const D = 1 << 16; // datatype ids are below this
    const links = new Map<number, number>(); // b * P + p
    const bump = (m: Map<number, number>, key: number) => m.set(key, (m.get(key) ?? 0) + 1);
    const nSets = classSets.length;
    let last = '';
    let lastIndex = -1;
    await scanTriples({ file, format: 'n-triples', graph: g.graph }, (t) => {
      triples++;
      const s = t.subject.value;
      const si = s === last ? lastIndex : subjectIndex.get(s)!;
      if (s !== last) {
        last = s;
        lastIndex = si;
        if (lo === undefined || s < lo) lo = detach(s);
        if (hi === undefined || s > hi) hi = detach(s);
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

    // (Remote) class partitions: entities from pass A, nested counts expanded from class sets to
    // (shard of the type triple, class) pairs; a pair of this shard is a class partition.
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
      if (subjectOf.get(i, k)) for (const c of classSets[classSetOf[i]]) partition(c).entities++;
    }
    const nestedOf = (c: string, p: string) => {
      const cp = partition(c);
      let pp = cp.properties.find((x) => x.property === p);
      if (!pp) cp.properties.push((pp = { property: p, triples: 0, objectClasses: [], remoteObjectClasses: [], datatypes: [] }));
      return pp;
    };
    const split = (key: number) => ({ set: Math.floor(key / P), p: predicateList[key % P].iri });
    for (const [key, count] of nested) {
      const { set, p } = split(key);
      for (const c of classSets[set]) nestedOf(c, p).triples += count;
    }
    const add = <T extends { iri: string; triples: number }>(list: T[], x: T) => {
      const y = list.find((z) => z.iri === x.iri && (z as { typesIn?: string }).typesIn === (x as { typesIn?: string }).typesIn);
      if (y) y.triples += x.triples;
      else list.push(x);
    };
    for (const [key, count] of objectClass) {
      const { set, p } = split(Math.floor(key / nSets));
      for (const c of classSets[set]) {
        for (const entry of classSets[key % nSets]) {
          const oc = typed(entry);
          const pp = nestedOf(c, p);
          if (oc.shard === k) add(pp.objectClasses, { iri: oc.iri, triples: count });
          else add(pp.remoteObjectClasses, { iri: oc.iri, typesIn: shardDatasetIri(g.graph, g.shards[oc.shard]), triples: count });
        }
      }
    }
    for (const [key, count] of datatype) {
      const { set, p } = split(Math.floor(key / D));
      for (const c of classSets[set]) add(nestedOf(c, p).datatypes, { iri: datatypeList[key % D], triples: count });
    }
    const all = [...partitions.values()].filter((c) => c.entities > 0);
    const stats: ShardStatistics = {
      graph: g.graph,
      shard: g.shards[k],
      dataset,
      triples,
      entities: subjects.size,
      classes: typeObjects.size,
      properties: predicates.size,
      distinctSubjects: subjects.size,
      distinctObjects: objects.size,
      vocabularies: [],
      classPartitions: all.filter((c) => !('typesIn' in c)),
      remoteClassPartitions: all.filter((c): c is RemoteClassPartition => 'typesIn' in c),
      propertyPartitions: predicateList.map((ps) => ({
        property: ps.iri,
        triples: ps.triples,
        distinctSubjects: ps.subjects.size,
        distinctObjects: ps.objects.size,
      })),
      linksets: [...links].map(([key, count]) => ({
        subjectsTarget: dataset,
        objectsTarget: shardDatasetIri(g.graph, g.shards[Math.floor(key / P)]),
        linkPredicate: predicateList[key % P].iri,
        triples: count,
      })),
    };
    const space = uriSpaceOf(lo, hi);
    if (space) stats.uriSpace = space;
    const terms = [...stats.propertyPartitions.map((p) => p.property), ...stats.classPartitions.map((c) => c.class)];
    stats.vocabularies = [...new Set(terms.map((t) => namespaceOf(t, g.namespaces)))].sort(byCodePoint);
    out.push(sortDescription(stats));
  }
  return out;
}
