import crypto from 'node:crypto';
import { InputError } from '../common/errors.js';
import { getHasher, type Hasher } from '../common/hash.js';
import { detach } from '../common/strings.js';
import { findLine, iriError } from '../common/iri.js';
import { RDF_TYPE } from '../common/vocab.js';
import { scanTriples, type ByteProgress, type TripleFile } from '../load/triples.js';
import type { DataFacts } from '../plan/rules.js';

/** Options of the first pass that the bucket spread depends on. */
interface BucketOptions {
  /** Buckets per horizontal group (≥ 2). */
  buckets: number;
  /** Seed of the xxh64 subject hash. */
  seed: number;
}

/**
 * What the first pass over a graph's data learns (section 4.1: "types first, then assignment"):
 * the classes of every subject and counts per predicate and class. It only parses: no
 * serialisation, hashing of triples or duplicate removal (counts are of triples as read, which is
 * all that realisability and the layout's weights need). Memory grows with the number of distinct
 * subjects (the subject map), not with the triples.
 */
export interface DataProfile extends DataFacts {
  file: string;
  /** sha256 of the file's bytes (hex). */
  sha256: string;
  /** Triples read (duplicates included). */
  triplesRead: number;
  /** Distinct subjects, and those without an rdf:type triple. */
  subjects: number;
  untypedSubjects: number;
  /** Triples whose subject is an instance of the class. */
  classTriples: Map<string, number>;
  /** Subject IRI → subject number (index into the arrays below). */
  subjectIndex: Map<string, number>;
  /** Subject number → class set id (0: untyped). */
  subjectClassSet: Int32Array;
  /** Subject number → bucket of its subject hash (xxh64(IRI, seed) mod buckets). */
  subjectBucket: Uint16Array;
  /** Class set id → sorted class IRIs (id 0 is the empty set). */
  classSets: string[][];
  buckets: number;
  seed: number;
}

/** The bucket of a subject: xxh64 of its IRI (UTF-8) with the seed, modulo the bucket count. */
export function bucketOf(hasher: Hasher, subject: string, seed: number, buckets: number): number {
  return Number(hasher.h64(subject, BigInt(seed)) % BigInt(buckets));
}

/**
 * The class sets of a graph's subjects, each a sorted list of class IRIs with an id (id 0 is the
 * empty set), and the set a subject's class set becomes with one more class (memoised: a
 * subject's type triples make few distinct transitions).
 */
class ClassSets {
  /** Class set id → sorted class IRIs. */
  readonly sets: string[][] = [[]];
  private readonly ids = new Map<string, number>([['', 0]]);
  private readonly transitions = new Map<string, number>();

  /** The id of class set `set` with class `cls` added. */
  withClass(set: number, cls: string): number {
    const key = `${set} ${cls}`;
    let next = this.transitions.get(key);
    if (next === undefined) {
      const classes = this.sets[set].includes(cls) ? this.sets[set] : [...this.sets[set], cls].sort();
      const id = classes.join('\n');
      next = this.ids.get(id);
      if (next === undefined) {
        next = this.sets.length;
        this.sets.push(classes);
        this.ids.set(id, next);
      }
      this.transitions.set(key, next);
    }
    return next;
  }
}

/** An Int32Array twice as long, holding `a` at its start. */
function grown(a: Int32Array<ArrayBuffer>): Int32Array<ArrayBuffer> {
  const b = new Int32Array(a.length * 2);
  b.set(a);
  return b;
}

/** What the one pass over a graph's data reads (`scanData`). */
interface DataScan {
  /** sha256 of the file's bytes (hex). */
  sha256: string;
  /** Triples read (duplicates included). */
  triplesRead: number;
  /** Subject IRI → subject number. */
  subjectIndex: Map<string, number>;
  /** Subject number → class set id (0: untyped); longer than the number of subjects. */
  subjectClassSet: Int32Array;
  /** Subject number → triples with that subject; longer than the number of subjects. */
  subjectTriples: Int32Array;
  classSets: ClassSets;
  /** Predicate IRI → triples with it. */
  predicateTriples: Map<string, number>;
}

/**
 * The one pass over a graph's data: the checksum, the subjects with their triple counts and class
 * sets, and the triples per predicate. Every IRI is checked once, when first seen, against the
 * IRI syntax oxigraph enforces: n3 is lenient, and an IRI the shard endpoints reject must fail the
 * build here, naming the input.
 * @throws InputError for a syntax error or an invalid IRI (file and line) or a missing file
 */
async function scanData(src: TripleFile, onProgress?: ByteProgress): Promise<DataScan> {
  const sha = crypto.createHash('sha256');
  let triplesRead = 0;
  let lastSubject = '';
  let lastIndex: number | undefined;
  const subjectIndex = new Map<string, number>();
  let subjectClassSet = new Int32Array(1024);
  let subjectTriples = new Int32Array(1024);
  const classSets = new ClassSets();
  let badIri: { iri: string; error: string } | undefined;
  const check = (iri: string) => {
    const error = iriError(iri);
    if (error) {
      badIri = { iri, error };
      throw new InputError(`invalid IRI <${iri}>: ${error}`, { file: src.file });
    }
  };
  const otherIris = new Set<string>();
  const predicateCounts = new Map<string, { n: number }>();
  try {
    await scanTriples(
      src,
      (t) => {
        triplesRead++;
        const p = t.predicate.value;
        let counter = predicateCounts.get(p);
        if (counter === undefined) {
          check(p);
          predicateCounts.set(detach(p), (counter = { n: 0 }));
        }
        counter.n++;
        const o = t.object;
        if (o.termType === 'NamedNode') {
          if (!subjectIndex.has(o.value) && !otherIris.has(o.value)) {
            check(o.value);
            if (otherIris.size < 1_000_000) otherIris.add(detach(o.value));
          }
        } else if (!otherIris.has(o.datatype.value)) {
          check(o.datatype.value);
          otherIris.add(detach(o.datatype.value));
        }
        const s = t.subject.value;
        // Triples of one subject usually come together (sorted N-Triples, Turtle): remember the last one.
        let i = s === lastSubject ? lastIndex : subjectIndex.get(s);
        if (i === undefined) {
          check(s);
          i = subjectIndex.size;
          // The parser's strings are slices of its input chunks: keep a copy, or every key would
          // keep its whole chunk alive (the subject map would hold the file).
          subjectIndex.set(detach(s), i);
          if (i >= subjectClassSet.length) {
            subjectClassSet = grown(subjectClassSet);
            subjectTriples = grown(subjectTriples);
          }
        }
        lastSubject = s;
        lastIndex = i;
        subjectTriples[i]++;
        if (p === RDF_TYPE && t.object.termType === 'NamedNode') subjectClassSet[i] = classSets.withClass(subjectClassSet[i], t.object.value);
      },
      { onProgress, onChunk: (c) => sha.update(c) },
    );
  } catch (e) {
    if (badIri) {
      throw new InputError(`invalid IRI <${badIri.iri}>: ${badIri.error}`, { file: src.file, line: await findLine(src.file, badIri.iri) });
    }
    throw e;
  }
  const predicateTriples = new Map([...predicateCounts].map(([p, c]) => [p, c.n]));
  return { sha256: sha.digest('hex'), triplesRead, subjectIndex, subjectClassSet, subjectTriples, classSets, predicateTriples };
}

/**
 * First pass over a graph's data: types, counts, checksum (`scanData`), then per class its
 * instances, their triples and the buckets its instances fall into.
 * @throws InputError for a syntax error (file and line) or a missing file
 */
export async function profileData(src: TripleFile, opts: BucketOptions, onProgress?: ByteProgress): Promise<DataProfile> {
  const hasher = await getHasher();
  const scan = await scanData(src, onProgress);
  const { subjectIndex, subjectClassSet, subjectTriples } = scan;
  const classSets = scan.classSets.sets;
  const n = subjectIndex.size;
  const subjectBucket = new Uint16Array(n);
  const classInstances = new Map<string, number>();
  const classTriples = new Map<string, number>();
  const bucketSets = new Map<string, Set<number>>();
  let untypedSubjects = 0;
  for (const [s, i] of subjectIndex) {
    const set = subjectClassSet[i];
    if (set === 0) {
      untypedSubjects++;
      continue;
    }
    const b = bucketOf(hasher, s, opts.seed, opts.buckets);
    subjectBucket[i] = b;
    for (const c of classSets[set]) {
      classInstances.set(c, (classInstances.get(c) ?? 0) + 1);
      classTriples.set(c, (classTriples.get(c) ?? 0) + subjectTriples[i]);
      let bs = bucketSets.get(c);
      if (!bs) bucketSets.set(c, (bs = new Set()));
      bs.add(b);
    }
  }
  return {
    file: src.file,
    sha256: scan.sha256,
    triplesRead: scan.triplesRead,
    subjects: n,
    untypedSubjects,
    predicateTriples: scan.predicateTriples,
    classInstances,
    classTriples,
    classBucketSpread: new Map([...bucketSets].map(([c, s]) => [c, s.size])),
    subjectIndex,
    subjectClassSet: subjectClassSet.subarray(0, n),
    subjectBucket,
    classSets,
    buckets: opts.buckets,
    seed: opts.seed,
  };
}
