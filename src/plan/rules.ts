import { RDF_TYPE } from '../common/vocab.js';
import type { QueryAnalysis, ShardingKind } from '../analyze/analyze.js';

/**
 * A candidate sharding rule (section 4.1 of the FKGQA paper):
 * - `predicate` {p1, p2}: triples with predicate p1 and triples with p2 go to different shards;
 * - `class` {c1, c2}: triples whose subject is an instance of c1 and those of c2 go to different shards;
 * - `horizontal` {c}: the instances of c are spread over buckets by a hash of the subject.
 */
export interface ShardingRule {
  /** Canonical text, e.g. `predicate <p1> <p2>`; rules are ordered by it (code-point order). */
  key: string;
  kind: ShardingKind;
  /** The two predicate or class IRIs (sorted), or the one class of a horizontal rule. */
  elements: string[];
  /** C(r): ids of the queries the rule federates, in query order. */
  covers: string[];
}

/** Facts about the data that decide whether a rule can split anything. */
export interface DataFacts {
  /** Triples per predicate IRI. */
  predicateTriples: Map<string, number>;
  /** Instances (distinct subjects) per class IRI. */
  classInstances: Map<string, number>;
  /** Number of distinct buckets the instances of each class hash to. */
  classBucketSpread: Map<string, number>;
}

/** A candidate that the data cannot realise, with the reason. */
export interface DroppedRule {
  key: string;
  reason: string;
}

/** The candidates of one graph, and what became of its queries. */
export interface Candidates {
  /** Realisable candidates in canonical (key) order. */
  rules: ShardingRule[];
  /** Candidates that the data cannot realise. */
  dropped: DroppedRule[];
  /** Queries with at least one realisable candidate: these must be covered. */
  coverable: string[];
  /** Queries without any realisable candidate, with the reason. */
  uncoverable: { id: string; reason: string }[];
}

const iri = (x: string) => `<${x}>`;

function pairs(xs: string[]): [string, string][] {
  const out: [string, string][] = [];
  for (let i = 0; i < xs.length; i++) for (let j = i + 1; j < xs.length; j++) out.push([xs[i], xs[j]]);
  return out;
}

/**
 * Which queries get horizontal candidates h(c) (section 4.1, "Rule Selection as Set Cover"):
 * - `unless-class` (default): only queries to which class sharding does not apply, the literal
 *   reading of "we omit horizontal shardings as candidates for any query where a class sharding is
 *   applicable";
 * - `every-query`: every query to which horizontal sharding applies (|S| ≥ 1, |C| ≥ 1), a reading
 *   under which the omission is not applied (the paper's 3.7 rules per graph and 51.28% horizontal
 *   rules are closer to this; see docs/preset-paper.md).
 */
export type HorizontalCandidates = 'unless-class' | 'every-query';

/**
 * Which pairs of P(q) are predicate candidates (section 4.1, "Predicate (Vertical) Sharding":
 * "triple patterns (s1,p1,o1), (s2,p2,o2) where p1 ≠ p2 with p1, p2 ∈ I"):
 * - `all-pairs` (default): every pair, rdf:type included (P(q) counts rdf:type, as the paper's
 *   95.94% predicate applicability requires);
 * - `no-rdf-type`: pairs of two predicates other than rdf:type, a reading in which rdf:type counts
 *   for applicability but is not a predicate one would move to a shard of its own (every shard
 *   keeps the types of its subjects anyway). A query with one predicate besides rdf:type then
 *   has no predicate candidate.
 */
export type PredicateCandidates = 'all-pairs' | 'no-rdf-type';

/** Options of `candidateRules` (defaults: fkgqa's reading). */
interface CandidateOptions {
  horizontal?: HorizontalCandidates;
  predicate?: PredicateCandidates;
}

/**
 * Generates the candidate rules of a graph with their coverage sets (section 4.1): every pair of
 * P(q) when predicate sharding applies, every pair of C(q) when class sharding applies, and h(c)
 * for every c in C(q) when horizontal sharding applies and class sharding does not (with
 * `horizontal = 'every-query'`: whenever horizontal sharding applies). A candidate
 * is dropped when the data cannot realise it: a predicate without triples, a class without
 * instances, or a class whose instances all hash to one bucket.
 * @param analyses the analysed queries of one graph
 * @param data counts from the first pass over the graph's data
 * @param options which queries get horizontal candidates (default `unless-class`), which predicate pairs are candidates (default `all-pairs`)
 */
export function candidateRules(analyses: QueryAnalysis[], data: DataFacts, options: CandidateOptions = {}): Candidates {
  const horizontal = options.horizontal ?? 'unless-class';
  const withType = (options.predicate ?? 'all-pairs') === 'all-pairs';
  const byKey = new Map<string, ShardingRule>();
  const add = (kind: ShardingKind, elements: string[], q: string) => {
    const key = `${kind} ${elements.map(iri).join(' ')}`;
    let r = byKey.get(key);
    if (!r) byKey.set(key, (r = { key, kind, elements, covers: [] }));
    if (r.covers[r.covers.length - 1] !== q) r.covers.push(q);
  };
  for (const a of analyses) {
    if (a.applicable.predicate) for (const p of pairs(a.predicates)) if (withType || !p.includes(RDF_TYPE)) add('predicate', p, a.id);
    if (a.applicable.class) for (const p of pairs(a.classes)) add('class', p, a.id);
    if (a.applicable.horizontal && (horizontal === 'every-query' || !a.applicable.class)) for (const c of a.classes) add('horizontal', [c], a.id);
  }
  const dropped: DroppedRule[] = [];
  const unrealisable = (r: ShardingRule): string | undefined => {
    if (r.kind === 'predicate') {
      const missing = r.elements.filter((p) => !data.predicateTriples.get(p));
      return missing.length ? `no triples with predicate ${missing.map(iri).join(', ')}` : undefined;
    }
    const missing = r.elements.filter((c) => !data.classInstances.get(c));
    if (missing.length) return `no instances of class ${missing.map(iri).join(', ')}`;
    if (r.kind === 'horizontal' && (data.classBucketSpread.get(r.elements[0]) ?? 0) < 2) {
      return `all ${data.classInstances.get(r.elements[0])} instances of ${iri(r.elements[0])} hash to one bucket`;
    }
    return undefined;
  };
  const rules: ShardingRule[] = [];
  for (const r of [...byKey.values()].sort((x, y) => (x.key < y.key ? -1 : x.key > y.key ? 1 : 0))) {
    const reason = unrealisable(r);
    if (reason) dropped.push({ key: r.key, reason });
    else rules.push(r);
  }
  const coveredBy = new Set(rules.flatMap((r) => r.covers));
  const coverable: string[] = [];
  const uncoverable: { id: string; reason: string }[] = [];
  for (const a of analyses) {
    if (coveredBy.has(a.id)) {
      coverable.push(a.id);
      continue;
    }
    const mine = [...byKey.values()].filter((r) => r.covers.includes(a.id));
    const noTriples = new Set<string>();
    const noInstances = new Set<string>();
    const oneBucket = new Set<string>();
    for (const r of mine) {
      if (r.kind === 'predicate') r.elements.filter((p) => !data.predicateTriples.get(p)).forEach((p) => noTriples.add(p));
      else if (r.elements.some((c) => !data.classInstances.get(c))) r.elements.filter((c) => !data.classInstances.get(c)).forEach((c) => noInstances.add(c));
      else if (r.kind === 'horizontal') oneBucket.add(r.elements[0]);
    }
    const parts = [
      noInstances.size ? `no instances of ${[...noInstances].sort().map(iri).join(', ')}` : '',
      noTriples.size ? `no triples with ${[...noTriples].sort().map(iri).join(', ')}` : '',
      oneBucket.size ? `all instances of ${[...oneBucket].sort().map(iri).join(', ')} hash to one bucket` : '',
    ].filter(Boolean);
    const reason = mine.length
      ? `no candidate rule can be realised in the data: ${parts.join('; ')}`
      : `no sharding applies (|P|=${a.predicates.length}, |C|=${a.classes.length}, |S|=${a.subjectVariables.length})`;
    uncoverable.push({ id: a.id, reason });
  }
  return { rules, dropped, coverable, uncoverable };
}
