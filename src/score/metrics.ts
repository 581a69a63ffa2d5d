/**
 * Answer metrics of `fkgqa score`: `matchAnswer` (the accuracy verdict: one bijection of columns,
 * rows as multisets or, under a top-level ORDER BY, sequences, terms by value), `graspF1` (F1 as
 * ad-freiburg/grasp's `f1_score` computes it) and `spinachF1` (row-major F1 as stanford-oval/spinach's
 * `f1` computes it). docs/evaluation.md ("Accuracy", "F1, two ways") gives the definitions and where
 * the two F1s differ.
 */
import { munkres } from 'munkres';
import type { SparqlResults, SparqlTerm } from '../sparql/results.js';
import { termKey } from '../answers/compare.js';
import { counted } from '../common/strings.js';

/** The key of an unbound cell. */
export const UNDEF = 'UNDEF';

/** The key of a row's value of `v` (`termKey`), `UNDEF` when unbound. */
export const cell = (row: Record<string, SparqlTerm>, v: string) => (row[v] ? termKey(row[v]) : UNDEF);

/** Largest number of column bijections tried (7! = 5,040: wider answers are compared by name only). */
const MAX_BIJECTIONS = 5_040;

/** The verdict of `matchAnswer`. */
export interface AnswerMatch {
  correct: boolean;
  /** For each gold variable, the predicted variable matched to it (absent when no bijection was found). */
  mapping?: Record<string, string>;
  /** Why the answer is wrong, in words (absent when correct). */
  reason?: string;
}

/** The variables of an answer: the head's, plus any variable bound in a row but missing from the head. */
export function answerVars(r: SparqlResults): string[] {
  const vars = [...(r.head.vars ?? [])];
  for (const row of r.results?.bindings ?? []) for (const v of Object.keys(row)) if (!vars.includes(v)) vars.push(v);
  return vars;
}

/**
 * All bijections from gold columns to predicted columns whose columns hold equal multisets of terms
 * (a necessary condition for equal row multisets), up to MAX_BIJECTIONS, or every bijection when
 * `any` is set (needed under ties, where the columns may differ).
 */
export function columnBijections(gold: SparqlResults, pred: SparqlResults, any = false): Record<string, string>[] {
  const gv = answerVars(gold);
  const pv = answerVars(pred);
  if (gv.length !== pv.length) return [];
  const sig = (r: SparqlResults, v: string) =>
    (r.results?.bindings ?? [])
      .map((row) => cell(row, v))
      .sort()
      .join('\u0000');
  const gs = gv.map((v) => sig(gold, v));
  const ps = pv.map((v) => sig(pred, v));
  const out: Record<string, string>[] = [];
  const used = new Array<boolean>(pv.length).fill(false);
  const current: string[] = [];
  const walk = (i: number) => {
    if (out.length >= MAX_BIJECTIONS) return;
    if (i === gv.length) {
      out.push(Object.fromEntries(gv.map((v, k) => [v, current[k]])));
      return;
    }
    for (let j = 0; j < pv.length; j++) {
      if (used[j] || (!any && gs[i] !== ps[j])) continue;
      used[j] = true;
      current.push(pv[j]);
      walk(i + 1);
      current.pop();
      used[j] = false;
    }
  };
  walk(0);
  return out;
}

/** The predicted answer with its columns renamed to the gold variables through `mapping`. */
function renameColumns(pred: SparqlResults, mapping: Record<string, string>): SparqlResults {
  const back = Object.entries(mapping);
  return {
    head: { vars: back.map(([g]) => g) },
    results: { bindings: (pred.results?.bindings ?? []).map((row) => Object.fromEntries(back.filter(([, p]) => row[p]).map(([g, p]) => [g, row[p]]))) },
  };
}

/**
 * The accuracy verdict (module comment). Ties under ORDER BY are decided by the caller
 * (`tieCheck`), which receives the predicted answer renamed through each candidate bijection.
 * @param gold the gold answer (SPARQL JSON results)
 * @param pred the predicted answer
 * @param ordered the gold query has a top-level ORDER BY
 * @param tieCheck optional: whether a renamed answer is what some ordering of tied solutions gives
 */
export function matchAnswer(gold: SparqlResults, pred: SparqlResults, ordered: boolean, tieCheck?: (renamed: SparqlResults) => boolean): AnswerMatch {
  if (gold.boolean !== undefined || pred.boolean !== undefined) {
    const ok = gold.boolean === pred.boolean;
    return ok ? { correct: true } : { correct: false, reason: `ASK answered ${pred.boolean ?? 'rows'}, gold ${gold.boolean ?? 'rows'}` };
  }
  const g = gold.results?.bindings ?? [];
  const p = pred.results?.bindings ?? [];
  if (g.length === 0 && p.length === 0) return { correct: true };
  const gv = answerVars(gold);
  const pv = answerVars(pred);
  if (gv.length !== pv.length) return { correct: false, reason: `${pv.length} columns where gold has ${gv.length}` };
  const rowsOf = (rows: Record<string, SparqlTerm>[], vars: string[]) => rows.map((row) => vars.map((v) => cell(row, v)).join('\u0001'));
  const goldRows = rowsOf(g, gv);
  const goldSorted = [...goldRows].sort();
  for (const m of columnBijections(gold, pred)) {
    const predRows = rowsOf(
      p,
      gv.map((v) => m[v]),
    );
    if (
      ordered ? predRows.every((r, i) => r === goldRows[i]) && predRows.length === goldRows.length : [...predRows].sort().every((r, i) => r === goldSorted[i]) && predRows.length === goldRows.length
    ) {
      return { correct: true, mapping: m };
    }
  }
  if (ordered && tieCheck) {
    for (const m of columnBijections(gold, pred, true)) if (tieCheck(renameColumns(pred, m))) return { correct: true, mapping: m };
  }
  if (g.length !== p.length) return { correct: false, reason: `${counted(p.length, 'row')} where gold has ${g.length}` };
  return { correct: false, reason: ordered ? 'no column matching gives the gold rows in the gold order' : 'no column matching gives the gold rows' };
}

/** Bound terms of each row, in column order (GRASP's `SelectResult.bindings()`). */
function boundRows(r: SparqlResults): string[][] {
  const vars = answerVars(r);
  return (r.results?.bindings ?? []).map((row) => vars.filter((v) => row[v]).map((v) => termKey(row[v])));
}

function counter(xs: string[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const x of xs) m.set(x, (m.get(x) ?? 0) + 1);
  return m;
}

function overlap(a: Map<string, number>, b: Map<string, number>): number {
  let n = 0;
  for (const [k, c] of a) n += Math.min(c, b.get(k) ?? 0);
  return n;
}

const total = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);

/**
 * A maximum-weight assignment between the rows and columns of a score matrix (scipy's
 * `linear_sum_assignment(maximize=True)`), with munkres on the negated matrix.
 * @returns pairs [row, column], min(rows, columns) of them
 */
function maxAssignment(scores: number[][]): [number, number][] {
  if (scores.length === 0 || scores[0].length === 0) return [];
  return munkres(scores.map((r) => r.map((x) => -x))) as [number, number][];
}

/** GRASP's `exact_f1_score`: F1 over multisets of row tuples. */
export function exactF1(pred: string[][], target: string[][]): number {
  const p = counter(pred.map((r) => r.join('\u0001')));
  const t = counter(target.map((r) => r.join('\u0001')));
  const tp = overlap(p, t);
  if (tp === 0) return 0;
  const prec = tp / total(p);
  const rec = tp / total(t);
  return (2 * prec * rec) / (prec + rec);
}

/** GRASP's `assignment_f1_score` over rows given as lists of term keys. */
export function assignmentF1(pred: string[][], target: string[][]): number {
  const p = pred.map(counter);
  const t = target.map(counter);
  const scores = p.map((pr) => t.map((tr) => overlap(pr, tr) / Math.max(1, total(tr))));
  const pairs = maxAssignment(scores);
  const tp = pairs.reduce((s, [i, j]) => s + scores[i][j], 0);
  const fn = pairs.reduce((s, [i, j]) => s + (1 - scores[i][j]), 0) + target.length - pairs.length;
  const fp = pred.length - pairs.length;
  if (tp <= 0) return 0;
  const prec = tp / (tp + fp);
  const rec = tp / (tp + fn);
  return (2 * prec * rec) / (prec + rec);
}

/** Rows above which GRASP switches to exact F1 (its `exact=1024` default). */
const GRASP_EXACT_AFTER = 1024;

/**
 * F1 as GRASP computes it (module comment). A missing prediction (no final answer) scores 0.
 * Gold ASK: the prediction counts as `true` when it has rows; a predicted ASK against a gold
 * SELECT scores 0; two empty SELECT answers score 1, one empty one 0.
 */
export function graspF1(pred: SparqlResults | undefined, gold: SparqlResults): number {
  if (!pred) return 0;
  if (gold.boolean !== undefined) {
    const b = pred.boolean !== undefined ? pred.boolean : (pred.results?.bindings.length ?? 0) > 0;
    return b === gold.boolean ? 1 : 0;
  }
  if (pred.boolean !== undefined) return 0;
  const p = boundRows(pred);
  const t = boundRows(gold);
  if (p.length === 0 && t.length === 0) return 1;
  if (p.length === 0 || t.length === 0) return 0;
  return p.length > GRASP_EXACT_AFTER || t.length > GRASP_EXACT_AFTER ? exactF1(p, t) : assignmentF1(p, t);
}

/**
 * Row-major F1 as Spinach computes it (module comment). A missing prediction scores 0; ASK
 * answers score 1 when the booleans are equal. Two empty answers score 1 (Spinach's own code
 * divides 0 by 0 there and fails its assertion; fkgqa defines it).
 */
export function spinachF1(pred: SparqlResults | undefined, gold: SparqlResults): number {
  if (!pred) return 0;
  if (gold.boolean !== undefined || pred.boolean !== undefined) return gold.boolean === pred.boolean ? 1 : 0;
  const gvars = answerVars(gold).filter((v) => !(v.endsWith('Label') || v.endsWith('Description')));
  const gRows = (gold.results?.bindings ?? []).map((row) => counter(gvars.filter((v) => row[v]).map((v) => termKey(row[v]))));
  const pRows = (pred.results?.bindings ?? []).map((row) => counter(Object.values(row).map(termKey)));
  if (gRows.length === 0 && pRows.length === 0) return 1;
  const scores = pRows.map((pr) => gRows.map((gr) => (total(gr) === 0 ? 0 : overlap(gr, pr) / total(gr))));
  const pairs = maxAssignment(scores);
  const assigned = pairs.map(([i, j]) => scores[i][j]);
  const tp = assigned.filter((w) => w > 0).reduce((a, b) => a + b, 0);
  let fpFn = assigned.filter((w) => w > 0 && w < 1).reduce((s, w) => s + (1 - w), 0);
  fpFn += 2 * assigned.filter((w) => w <= 0).length;
  fpFn += pRows.length - pairs.length + (gRows.length - pairs.length);
  const denom = 2 * tp + fpFn;
  return denom === 0 ? 0 : (2 * tp) / denom;
}
