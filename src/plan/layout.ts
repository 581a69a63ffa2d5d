import { RDF_TYPE } from '../common/vocab.js';
import type { ShardingRule } from './rules.js';
import { atomArgs, readEncoding, solve, type SolverStatistics } from './solver.js';

/**
 * Where the chosen rules send triples (see asp/layout.lp). Shards are named here by slot:
 * `base`, `predicate-K`, `class-K`, `bucket-G-B` (group G, bucket B counted from 0); the public
 * names `shard<N>` are given later and reveal nothing of this.
 */
export interface ShardLayout {
  /** Buckets per horizontal group. */
  buckets: number;
  /** Predicate IRI → its predicate shard number K (1-based). */
  predicateShard: Map<string, number>;
  /** Class IRI → its class shard number K (1-based). */
  classShard: Map<string, number>;
  /** Class IRI → its horizontal group G (1-based). */
  horizontalGroup: Map<string, number>;
  /** Every slot the layout defines, base first, then predicate, class and bucket slots in order. */
  slots: string[];
  /**
   * Only with `horizontal = 'all-shards'` (see `spreadLayout`): horizontal class IRI → the slots
   * its instances are hashed over (`xxh64(subject, seed) mod` their number), in slot order.
   */
  spread?: Map<string, string[]>;
  statistics: SolverStatistics;
  /** Wall time of the solve in ms (not deterministic; kept out of manifests). */
  wallMs: number;
}

/** Weights for the layout's second objective: triples that would move if a node got its own shard. */
interface LayoutWeights {
  /** Triples per predicate. */
  predicateTriples: Map<string, number>;
  /** Triples whose subject is an instance of the class. */
  classTriples: Map<string, number>;
}

/**
 * `compact` (default): the fewest shards that realise every rule, solved with asp/layout.lp.
 * `separate`: the paper's literal reading — every predicate of a predicate rule (but rdf:type)
 * and every class of a class rule gets a shard of its own, every horizontal class its own buckets.
 */
export type LayoutMode = 'compact' | 'separate';

/**
 * Where the instances of a horizontal class go (section 4.1, "Horizontal Sharding": "all subjects
 * s_d that are instances of c are assigned to shards by a deterministic rule (e.g., hash of the
 * IRI)"; "Shard Materialisation": "class-conditioned hash of s_d"). The paper does not say which
 * shards the hash ranges over:
 * - `own-buckets` (default): every horizontal group gets `buckets` bucket shards of its own;
 * - `all-shards`: the instances are hashed over every shard of the graph that holds whole
 *   subjects (the base shard and the class shards, not the predicate shards, which hold one
 *   predicate each), leaving out the shard of any class a chosen class rule separates from the
 *   class; extra shards are added only where fewer than `buckets` remain. A query about such a
 *   class then may need nearly every shard of its graph, as the paper's implied fan-out (6.48
 *   against 6.21 shards per graph, section 4.2) suggests.
 * - `every-shard`: the most literal reading of "hashed over all shards of the graph": every shard,
 *   predicate shards included, with no exclusions. A predicate shard then also holds the other
 *   triples of the subjects hashed into it, and two separated classes share shards, so chosen
 *   predicate and class rules can fail (`checkRules` reports them as not realised): measured in
 *   docs/preset-paper.md, not a reading any preset uses.
 */
export type HorizontalPlacement = 'own-buckets' | 'all-shards' | 'every-shard';

/**
 * Turns a layout into its `all-shards` form (see HorizontalPlacement): horizontal classes lose
 * their bucket groups and are spread over the base shard and the class shards, minus the shards of
 * classes that a chosen class rule separates from them. Classes are taken in IRI order; a class
 * separated from a horizontal class taken before it also leaves out that class's slots, so every
 * class rule stays realised. Extra slots `bucket-1-B` are added, and offered to the classes taken
 * after, only when a class would have fewer than `buckets` slots to be hashed over.
 * @param layout the layout of the predicate and class rules (compact or separate)
 * @param rules the chosen rules
 * @param buckets the fewest slots a horizontal class is hashed over (≥ 2)
 * @param everyShard the `every-shard` reading: predicate shards are targets too and nothing is excluded
 */
export function spreadLayout(layout: ShardLayout, rules: ShardingRule[], buckets: number, everyShard = false): ShardLayout {
  const horizontal = [...new Set(rules.filter((r) => r.kind === 'horizontal').map((r) => r.elements[0]))].sort();
  if (horizontal.length === 0) return layout;
  const nPredicate = new Set(layout.predicateShard.values()).size;
  const nClass = new Set(layout.classShard.values()).size;
  const subjectSlots = ['base', ...(everyShard ? Array.from({ length: nPredicate }, (_, k) => `predicate-${k + 1}`) : []), ...Array.from({ length: nClass }, (_, k) => `class-${k + 1}`)];
  const fixedSlot = (c: string): string | undefined => (layout.classShard.has(c) ? `class-${layout.classShard.get(c)}` : horizontal.includes(c) ? undefined : 'base');
  // In IRI order, each class takes every slot not excluded: the fixed shards of the classes it is
  // separated from and the slots of the separated horizontal classes before it; slots are added
  // only when fewer than `buckets` remain.
  const extras: string[] = [];
  const targets = new Map<string, string[]>();
  for (const c of horizontal) {
    const excluded = new Set<string>();
    for (const r of rules) {
      if (everyShard || r.kind !== 'class' || !r.elements.includes(c)) continue;
      const other = r.elements.find((e) => e !== c)!;
      const slot = fixedSlot(other);
      if (slot) excluded.add(slot);
      for (const t of targets.get(other) ?? []) excluded.add(t);
    }
    const mine = [...subjectSlots, ...extras].filter((x) => !excluded.has(x));
    while (mine.length < buckets) {
      const extra = `bucket-1-${extras.length}`;
      extras.push(extra);
      mine.push(extra);
    }
    targets.set(c, mine);
  }
  const extra = extras.length;
  return {
    ...layout,
    buckets: extra,
    horizontalGroup: new Map(horizontal.map((c) => [c, 1])),
    slots: layoutSlots(nPredicate, nClass, extra > 0 ? 1 : 0, extra),
    spread: targets,
  };
}

/** The `separate` layout: one shard per element, numbered in IRI order; no solver needed. */
export function separateLayout(rules: ShardingRule[], buckets: number): ShardLayout {
  const sorted = (xs: Iterable<string>) => [...new Set(xs)].sort();
  const predicates = sorted(
    rules
      .filter((r) => r.kind === 'predicate')
      .flatMap((r) => r.elements)
      .filter((p) => p !== RDF_TYPE),
  );
  const horizontal = sorted(rules.filter((r) => r.kind === 'horizontal').map((r) => r.elements[0]));
  const classes = sorted(rules.filter((r) => r.kind === 'class').flatMap((r) => r.elements)).filter((c) => !horizontal.includes(c));
  const numbered = (xs: string[]) => new Map(xs.map((x, i) => [x, i + 1]));
  return {
    buckets,
    predicateShard: numbered(predicates),
    classShard: numbered(classes),
    horizontalGroup: numbered(horizontal),
    slots: layoutSlots(predicates.length, classes.length, horizontal.length, buckets),
    statistics: { result: 'NOT SOLVED (separate layout)', optimal: true, costs: [], models: 0, programBytes: 0 },
    wallMs: 0,
  };
}

/** Lists the slots of a layout in their fixed order. */
function layoutSlots(p: number, c: number, h: number, buckets: number): string[] {
  const slots = ['base'];
  for (let k = 1; k <= p; k++) slots.push(`predicate-${k}`);
  for (let k = 1; k <= c; k++) slots.push(`class-${k}`);
  for (let g = 1; g <= h; g++) for (let b = 0; b < buckets; b++) slots.push(`bucket-${g}-${b}`);
  return slots;
}

/**
 * Computes the fewest shards that realise the chosen rules, solved with asp/layout.lp: predicate
 * rules need the two predicates in different shards, class rules the two classes, horizontal rules
 * their class spread over `buckets` buckets. rdf:type never moves to a predicate shard.
 * @param rules the chosen rules of one graph
 * @param buckets buckets per horizontal group (≥ 2)
 * @param weights triple counts for the tie-break
 * @param timeoutMs solver time limit
 * @param mode `compact` or `separate` (see LayoutMode)
 * @param horizontal `own-buckets`, `all-shards` or `every-shard` (see HorizontalPlacement)
 */
export async function planLayout(
  rules: ShardingRule[],
  buckets: number,
  weights: LayoutWeights,
  timeoutMs: number,
  mode: LayoutMode = 'compact',
  horizontal: HorizontalPlacement = 'own-buckets',
): Promise<ShardLayout> {
  if (horizontal !== 'own-buckets') {
    return spreadLayout(await planLayout(rules, buckets, weights, timeoutMs, mode), rules, buckets, horizontal === 'every-shard');
  }
  if (mode === 'separate') return separateLayout(rules, buckets);
  const nodes = new Map<string, { id: number; kind: 'p' | 'c'; iri: string }>();
  const node = (kind: 'p' | 'c', iri: string) => {
    const key = `${kind} ${iri}`;
    let n = nodes.get(key);
    if (!n) nodes.set(key, (n = { id: 0, kind, iri }));
    return n;
  };
  for (const r of rules) for (const e of r.elements) node(r.kind === 'predicate' ? 'p' : 'c', e);
  const ordered = [...nodes.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  ordered.forEach(([, n], i) => (n.id = i + 1));
  const empty: ShardLayout = {
    buckets,
    predicateShard: new Map(),
    classShard: new Map(),
    horizontalGroup: new Map(),
    slots: ['base'],
    statistics: { result: 'OPTIMUM FOUND', optimal: true, costs: [], models: 0, programBytes: 0 },
    wallMs: 0,
  };
  if (rules.length === 0) return empty;

  const facts: string[] = [`nnodes(${nodes.size}).`, `buckets(${buckets}).`, `slot(1..${nodes.size}).`];
  for (const [, n] of ordered) {
    const w = n.kind === 'p' ? weights.predicateTriples.get(n.iri) : weights.classTriples.get(n.iri);
    facts.push(`rank(${n.id},${n.id}). weight(${n.id},${w ?? 0}).`);
    if (n.kind === 'p' && n.iri === RDF_TYPE) facts.push(`stays(${n.id}).`);
  }
  for (const r of rules) {
    if (r.kind === 'horizontal') facts.push(`hclass(${node('c', r.elements[0]).id}).`);
    else {
      const k = r.kind === 'predicate' ? 'p' : 'c';
      facts.push(`${k === 'p' ? 'psplit' : 'csplit'}(${node(k, r.elements[0]).id},${node(k, r.elements[1]).id}).`);
    }
  }
  const { atoms, statistics, wallMs } = await solve(facts.join('\n') + '\n' + readEncoding('layout.lp'), timeoutMs);
  const iriOf = new Map(ordered.map(([, n]) => [n.id, n.iri]));
  // Slot numbers are labels: renumber each kind's slots by their first member in canonical order.
  const canonical = (pairs: number[][]): Map<string, number> => {
    const sorted = [...pairs].sort((a, b) => a[0] - b[0]);
    const renumber = new Map<number, number>();
    for (const [, k] of sorted) if (!renumber.has(k)) renumber.set(k, renumber.size + 1);
    return new Map(sorted.map(([id, k]) => [iriOf.get(id)!, renumber.get(k)!]));
  };
  const predicateShard = canonical(atomArgs(atoms, 'pshard'));
  const classShard = canonical(atomArgs(atoms, 'cshard'));
  const horizontalGroup = canonical(atomArgs(atoms, 'hgroup'));
  const count = (m: Map<string, number>) => new Set(m.values()).size;
  return {
    buckets,
    predicateShard,
    classShard,
    horizontalGroup,
    slots: layoutSlots(count(predicateShard), count(classShard), count(horizontalGroup), buckets),
    statistics,
    wallMs,
  };
}
