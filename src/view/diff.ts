/**
 * Which rows of an answer differ from the gold answer, for marking them in `fkgqa view`. The
 * verdict itself is `fkgqa score`'s (src/score/metrics.ts, `matchAnswer`); this only says where to
 * look: terms compare as for the verdict (`termKey`, src/answers/compare.ts: by value), rows as
 * multisets, under the column pairing (gold column → predicted column) that matches the most rows.
 */
import type { SparqlResults } from '../sparql/results.js';
import { answerVars, cell, columnBijections } from '../score/metrics.js';

/** A row's mark: '' same as in the other answer, `m` a gold row missing from the answer, `x` an answer row not in gold, `o` in both but at another position (ordered gold). */
export type RowMark = '' | 'm' | 'x' | 'o';

/** Where two answers differ. */
interface RowDiff {
  /** One mark per gold row. */
  gold: RowMark[];
  /** One mark per answer row. */
  answer: RowMark[];
  /** Gold rows missing from the answer (multiset difference). */
  missing: number;
  /** Answer rows not in gold. */
  extra: number;
  /** The column pairing used, gold variable → answer variable (null when the numbers of columns differ). */
  mapping: Record<string, string> | null;
}

/** Rows above which only the pairing by name (or position) is tried. */
const MAX_ROWS_FOR_PERMUTATIONS = 2_000;
/** Columns above which only the pairing by name (or position) is tried (6! = 720 pairings). */
const MAX_COLUMNS_FOR_PERMUTATIONS = 6;

/**
 * Marks the rows in which an answer differs from gold (module comment). ASK answers have no rows:
 * both mark lists are empty.
 * @param gold the gold answer (SPARQL JSON results)
 * @param answer the answer the run's final query gave
 * @param ordered the gold query has a top-level ORDER BY: rows present in both but at other
 *   positions are marked `o`
 */
export function diffAnswers(gold: SparqlResults, answer: SparqlResults, ordered: boolean): RowDiff {
  const g = gold.results?.bindings ?? [];
  const a = answer.results?.bindings ?? [];
  if (gold.boolean !== undefined || answer.boolean !== undefined) return { gold: [], answer: [], missing: 0, extra: 0, mapping: null };
  const gv = answerVars(gold);
  const av = answerVars(answer);
  if (gv.length !== av.length) {
    // No row of an answer with other columns can be a gold row.
    return { gold: g.map(() => 'm'), answer: a.map(() => 'x'), missing: g.length, extra: a.length, mapping: null };
  }
  const candidates: Record<string, string>[] = [];
  if (gv.every((v) => av.includes(v))) candidates.push(Object.fromEntries(gv.map((v) => [v, v])));
  candidates.push(Object.fromEntries(gv.map((v, i) => [v, av[i]])));
  if (gv.length <= MAX_COLUMNS_FOR_PERMUTATIONS && Math.max(g.length, a.length) <= MAX_ROWS_FOR_PERMUTATIONS) candidates.push(...columnBijections(gold, answer, true));
  const goldKeys = g.map((row) => gv.map((v) => cell(row, v)).join('\u0001'));
  let best: { mapping: Record<string, string>; keys: string[]; overlap: number } | undefined;
  for (const m of candidates) {
    const keys = a.map((row) => gv.map((v) => cell(row, m[v])).join('\u0001'));
    const overlap = multisetOverlap(goldKeys, keys);
    if (!best || overlap > best.overlap) best = { mapping: m, keys, overlap };
    if (overlap === Math.min(g.length, a.length)) break;
  }
  const keys = best!.keys;
  const goldMarks = unmatched(goldKeys, keys, 'm');
  const answerMarks = unmatched(keys, goldKeys, 'x');
  const missing = goldMarks.filter((x) => x === 'm').length;
  const extra = answerMarks.filter((x) => x === 'x').length;
  if (ordered && missing === 0 && extra === 0) {
    for (let i = 0; i < keys.length; i++) {
      if (keys[i] !== goldKeys[i]) {
        answerMarks[i] = 'o';
        goldMarks[i] = 'o';
      }
    }
  }
  return { gold: goldMarks, answer: answerMarks, missing, extra, mapping: best!.mapping };
}

function counts(keys: string[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const k of keys) m.set(k, (m.get(k) ?? 0) + 1);
  return m;
}

function multisetOverlap(a: string[], b: string[]): number {
  const cb = counts(b);
  let n = 0;
  for (const k of a) {
    const c = cb.get(k) ?? 0;
    if (c > 0) {
      n++;
      cb.set(k, c - 1);
    }
  }
  return n;
}

/** Marks the rows of `keys` that the multiset `other` does not hold (each of its rows matches one row at most). */
function unmatched(keys: string[], other: string[], mark: RowMark): RowMark[] {
  const pool = counts(other);
  return keys.map((k) => {
    const c = pool.get(k) ?? 0;
    if (c === 0) return mark;
    pool.set(k, c - 1);
    return '';
  });
}
