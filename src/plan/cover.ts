import type { ShardingRule } from './rules.js';
import { atomArgs, readEncoding, solve, type SolverStatistics } from './solver.js';

/** The rule set chosen for one graph, with the solver's statistics. */
interface CoverSolution {
  /** The chosen rules R*, in canonical order. */
  rules: ShardingRule[];
  statistics: SolverStatistics;
  /** Wall time of the solve in ms (not deterministic; kept out of manifests). */
  wallMs: number;
}

/**
 * The ASP facts of the set-cover instance of one graph (see asp/cover.lp): rules and queries are
 * numbered from 1 in canonical order; ranks follow the rules' canonical (key) order.
 */
export function coverFacts(rules: ShardingRule[], queries: string[]): string {
  const qid = new Map(queries.map((q, i) => [q, i + 1]));
  const lines: string[] = [`nrules(${rules.length}).`];
  queries.forEach((_, i) => lines.push(`query(${i + 1}).`));
  rules.forEach((r, i) => {
    const id = i + 1;
    lines.push(`rule(${id}). rank(${id},${id}).`);
    const cs = r.covers.filter((q) => qid.has(q)).map((q) => `covers(${id},${qid.get(q)}).`);
    lines.push(cs.join(' '));
  });
  return lines.join('\n') + '\n';
}

/**
 * Leaves out the rules that cannot be in the optimum of asp/cover.lp, to keep the search small:
 * rule r is dominated by r' when C(r) ⊆ C(r') and either C(r) ⊊ C(r') or r' comes first in
 * canonical order. Swapping r for r' in any cover keeps it a cover of no larger size, with at least
 * as many coverage pairs (objective 2) and, at equal coverage, a better canonical order (objective
 * 3); so the unique optimum never contains a dominated rule, and removing them changes nothing.
 * @returns the undominated rules, in their original (canonical) order
 */
export function undominatedRules(rules: ShardingRule[]): ShardingRule[] {
  const sets = rules.map((r) => new Set(r.covers));
  return rules.filter(
    (r, i) =>
      !rules.some((other, j) => {
        if (j === i || sets[j].size < sets[i].size) return false;
        for (const q of r.covers) if (!sets[j].has(q)) return false;
        return sets[j].size > sets[i].size || j < i;
      }),
  );
}

/**
 * Selects a minimum-size set of rules that covers every query (section 4.1, "Rule Selection as Set
 * Cover"), ties broken as documented in asp/cover.lp.
 * @param rules realisable candidate rules in canonical order
 * @param queries ids of the queries to cover (each covered by at least one rule)
 * @param timeoutMs solver time limit; on timeout the best model found is returned, not optimal
 */
export async function selectRules(rules: ShardingRule[], queries: string[], timeoutMs: number): Promise<CoverSolution> {
  if (queries.length === 0) {
    return {
      rules: [],
      statistics: { result: 'OPTIMUM FOUND', optimal: true, costs: [], models: 0, programBytes: 0 },
      wallMs: 0,
    };
  }
  const kept = undominatedRules(rules);
  const program = coverFacts(kept, queries) + readEncoding('cover.lp');
  const { atoms, statistics, wallMs } = await solve(program, timeoutMs);
  const chosen = new Set(atomArgs(atoms, 'select').map(([r]) => r));
  return { rules: kept.filter((_, i) => chosen.has(i + 1)), statistics, wallMs };
}
