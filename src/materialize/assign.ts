import type { Hasher } from '../common/hash.js';
import type { ShardLayout } from '../plan/layout.js';
import { bucketOf, type DataProfile } from './profile.js';

/**
 * Decides the shard (slot index into `layout.slots`) of every triple, with this precedence
 * (docs/method.md, "The method, and the decisions fkgqa makes where the paper is silent"):
 * 1. a predicate with a predicate shard: the triple goes there, whatever its subject;
 * 2. a subject that is an instance of a horizontal class: the bucket of its group given by the
 *    subject hash (the first such class in IRI order, if the subject has several); with a spread
 *    layout (`layout.spread`, horizontal placement `all-shards`), the slot of the class's spread
 *    list given by `xxh64(subject, seed) mod` its length;
 * 3. a subject that is an instance of a class with a class shard: that shard (first in IRI order);
 * 4. otherwise the base shard (slot 0).
 */
export class ShardAssigner {
  private readonly slotIndex: Map<string, number>;
  private readonly predicateSlot = new Map<string, number>();
  /** Per class set id: base slot of the set's placement, and whether it is bucketed. */
  private readonly setSlot: Int32Array;
  private readonly setBucketed: Uint8Array;
  /** Spread layouts: per class set, its spread slots (undefined: not spread); per subject, its index into them. */
  private readonly setSpread: (Int32Array | undefined)[] = [];
  private readonly spreadIndex?: Uint16Array;

  /**
   * @param layout the shard layout
   * @param profile the first pass over the graph's data
   * @param hasher needed for a spread layout (`layout.spread`), whose hash ranges over a per-class number of slots
   * @throws Error for a spread layout without a hasher
   */
  constructor(
    readonly layout: ShardLayout,
    readonly profile: DataProfile,
    hasher?: Hasher,
  ) {
    this.slotIndex = new Map(layout.slots.map((s, i) => [s, i]));
    for (const [p, k] of layout.predicateShard) this.predicateSlot.set(p, this.slotIndex.get(`predicate-${k}`)!);
    const sets = profile.classSets;
    this.setSlot = new Int32Array(sets.length);
    this.setBucketed = new Uint8Array(sets.length);
    const spread = layout.spread;
    if (spread) {
      if (!hasher) throw new Error('a spread layout needs the subject hasher');
      sets.forEach((classes, id) => {
        const h = classes.find((c) => spread.has(c));
        if (h !== undefined) this.setSpread[id] = Int32Array.from(spread.get(h)!, (s) => this.slotIndex.get(s)!);
      });
      this.spreadIndex = new Uint16Array(profile.subjectClassSet.length);
      for (const [s, i] of profile.subjectIndex) {
        const slots = this.setSpread[profile.subjectClassSet[i]];
        if (slots) this.spreadIndex[i] = bucketOf(hasher, s, profile.seed, slots.length);
      }
    }
    sets.forEach((classes, id) => {
      if (this.setSpread[id]) return;
      const h = classes.find((c) => layout.horizontalGroup.has(c));
      if (h !== undefined) {
        this.setSlot[id] = this.slotIndex.get(`bucket-${layout.horizontalGroup.get(h)}-0`)!;
        this.setBucketed[id] = 1;
        return;
      }
      const c = classes.find((x) => layout.classShard.has(x));
      this.setSlot[id] = c !== undefined ? this.slotIndex.get(`class-${layout.classShard.get(c)}`)! : 0;
    });
  }

  /** The slot of the triple (subject IRI, predicate IRI). */
  slotOf(subject: string, predicate: string): number {
    return this.predicateSlotOf(predicate) ?? this.subjectSlotAt(this.profile.subjectIndex.get(subject));
  }

  /** The predicate shard's slot of a predicate (rule 1 of the precedence), if it has one. */
  predicateSlotOf(predicate: string): number | undefined {
    return this.predicateSlot.get(predicate);
  }

  /** The slot a subject's triples go to by rules 2–4, given its number in the profile. */
  subjectSlotAt(subjectNumber: number | undefined): number {
    if (subjectNumber === undefined) return 0;
    const set = this.profile.subjectClassSet[subjectNumber];
    const spread = this.setSpread[set];
    if (spread) return spread[this.spreadIndex![subjectNumber]];
    const slot = this.setSlot[set];
    return this.setBucketed[set] ? slot + this.profile.subjectBucket[subjectNumber] : slot;
  }
}
