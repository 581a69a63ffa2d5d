import type { QueryAnalysis } from '../analyze/analyze.js';
import type { PatternMatcher } from '../analyze/match.js';
import { patternKey } from '../analyze/patterns.js';
import { getHasher, SetChecksum } from '../common/hash.js';
import { scanTriples } from '../load/triples.js';
import type { ShardingRule } from '../plan/rules.js';
import { createLineWriter } from './profile.js';
import type { MaterializeResult } from './write.js';

/** Guarantee 1: the shards of a graph together hold exactly the input triples. */
export interface CompletenessCheck {
  ok: boolean;
  inputTriples: number;
  inputChecksum: string;
  /** Count and checksum computed by parsing the written shard files back. */
  shardTriples: number;
  shardChecksum: string;
}

/**
 * Parses the written shard files back and compares their triples (count and order-independent
 * checksum) with the input's, as computed by the first pass.
 */
export async function checkCompleteness(
  files: { file: string; graph: string }[],
  input: { triples: number; checksum: string },
): Promise<CompletenessCheck> {
  const hasher = await getHasher();
  const line = createLineWriter();
  const total = new SetChecksum(hasher);
  for (const f of files) {
    // Shard files hold skolem IRIs only, so re-parsing them gives the same lines.
    await scanTriples({ file: f.file, format: 'n-triples', graph: f.graph }, (t) => total.add(line(t)));
  }
  return {
    ok: total.count === input.triples && total.digest === input.checksum,
    inputTriples: input.triples,
    inputChecksum: input.checksum,
    shardTriples: total.count,
    shardChecksum: total.digest,
  };
}

/** Guarantee 2 for one covered query: the implied fan-out f(Q) and, if below 2, why. */
export interface FederationCheck {
  query: string;
  /** f(Q) = |∪_t E_t| (section 4.2 of the FKGQA paper), over slots. */
  fanOut: number;
  /**
   * Σ_t |E_t|: triple-pattern-wise sources (TPWSS, as LargeRDFBench and FedShop report it), the
   * number of (pattern, shard) pairs a source selection has to consider.
   */
  tpwss: number;
  /** The slots in ∪_t E_t, ascending. */
  slots: number[];
  ok: boolean;
  reason?: string;
}

/**
 * Computes f(Q) of every covered query from the slots each pattern matched during materialisation
 * and checks f(Q) ≥ 2 (guarantee 2).
 */
export function checkFederation(
  analyses: QueryAnalysis[],
  covered: Set<string>,
  matcher: PatternMatcher,
  result: MaterializeResult,
  slotName: (slot: number) => string,
): FederationCheck[] {
  const out: FederationCheck[] = [];
  for (const a of analyses) {
    if (!covered.has(a.id)) continue;
    const union = new Set<number>();
    const unmatched: string[] = [];
    let tpwss = 0;
    for (const tp of a.patterns) {
      const e = result.patternSlots[matcher.indexOf.get(patternKey(tp))!];
      tpwss += e.size;
      if (e.size === 0) unmatched.push(patternKey(tp));
      for (const s of e) union.add(s);
    }
    const slots = [...union].sort((x, y) => x - y);
    const check: FederationCheck = { query: a.id, fanOut: slots.length, tpwss, slots, ok: slots.length >= 2 };
    if (!check.ok) {
      check.reason =
        slots.length === 0
          ? `no triple pattern has a match in the data (${unmatched.length} patterns)`
          : `every matching triple is in ${slotName(slots[0])}` +
            (unmatched.length ? `; no match at all for ${unmatched.join(' ; ')}` : '');
    }
    out.push(check);
  }
  return out;
}

/** Whether a chosen rule's split is visible in the materialised data. */
export interface RuleCheck {
  rule: string;
  ok: boolean;
  /** What was seen: the slots of each element. */
  detail: string;
}

/**
 * Checks that every chosen rule is realised: a predicate rule's two predicates share no shard, a
 * class rule's two classes share no shard (their instances' placement, predicate shards aside), a
 * horizontal rule's class spans at least two shards.
 */
export function checkRules(rules: ShardingRule[], result: MaterializeResult, slotName: (slot: number) => string): RuleCheck[] {
  const names = (s: Set<number> | undefined) => [...(s ?? [])].sort((a, b) => a - b).map(slotName).join(', ') || 'none';
  return rules.map((r) => {
    if (r.kind === 'horizontal') {
      const s = result.classSlots.get(r.elements[0]);
      return { rule: r.key, ok: (s?.size ?? 0) >= 2, detail: `instances in ${names(s)}` };
    }
    const m = r.kind === 'predicate' ? result.predicateSlots : result.classSlots;
    const [a, b] = r.elements.map((e) => m.get(e));
    const shared = [...(a ?? [])].filter((x) => b?.has(x));
    return {
      rule: r.key,
      ok: shared.length === 0 && (a?.size ?? 0) > 0 && (b?.size ?? 0) > 0,
      detail: `first in ${names(a)}; second in ${names(b)}`,
    };
  });
}
