/**
 * Ties under ORDER BY. When solutions tie on every ORDER BY key, SPARQL leaves their order open
 * (SPARQL 1.1 Query §15.1), so with LIMIT/OFFSET two correct engines may return different rows,
 * and without them the same rows in another order. To tell such answers from lost ones, the query
 * is run once more on the unsharded graph with its ORDER BY keys projected and without LIMIT/OFFSET
 * ("key query"); an answer is *equivalent* to gold when it is what some ordering of the tied
 * solutions would give.
 */
import sparqljs from 'sparqljs';
import type { SparqlResults, SparqlTerm, TieSegment } from '../sparql/results.js';
import { compareResults, type GroupConcats, rowKey, termKey } from './compare.js';
import { counted } from '../common/strings.js';
import { hasAggregate } from '../sparql/inspect.js';

const KEY_VAR = '__fkgqa_order';

/** Names of the variables a SELECT projects (plain variables and `(expr AS ?v)` aliases). */
function projectedNames(ast: sparqljs.SelectQuery): Set<string> {
  return new Set(ast.variables.map((v) => ((v as { variable?: { value: string } }).variable ?? (v as { value: string })).value));
}

/**
 * The variables holding the ORDER BY keys of an ordered SELECT in its key query: a condition that
 * is a projected variable is its own key; any other gets `?__fkgqa_orderN`.
 */
function keyVariables(ast: sparqljs.SelectQuery): string[] {
  const wildcard = (ast.variables[0] as { termType?: string }).termType === 'Wildcard';
  const projected = wildcard ? undefined : projectedNames(ast);
  return (ast.order ?? []).map((o, i) => {
    const e = o.expression as { termType?: string; value?: string };
    return e.termType === 'Variable' && (wildcard || projected!.has(e.value!)) ? e.value! : `${KEY_VAR}${i}`;
  });
}

/**
 * The key query of an ordered query: its projection plus `(expr AS ?__fkgqa_orderN)` for every
 * ORDER BY condition that is not a projected variable, without LIMIT and OFFSET. For `SELECT *`
 * only variables can be keys.
 * @returns the query text (full IRIs), or undefined when the query has no ORDER BY or its keys
 *   cannot be projected
 */
export function keyQuery(ast: sparqljs.SparqlQuery): string | undefined {
  if (ast.type !== 'query' || ast.queryType !== 'SELECT' || !ast.order?.length) return undefined;
  const keys = keyVariables(ast);
  const wildcard = (ast.variables[0] as { termType?: string }).termType === 'Wildcard';
  const extra = ast.order.flatMap((o, i) => (keys[i].startsWith(KEY_VAR) ? [{ expression: o.expression, variable: { termType: 'Variable', value: keys[i] } }] : []));
  if (wildcard && extra.length > 0) return undefined;
  const q = { ...ast, variables: [...ast.variables, ...extra], limit: undefined, offset: undefined, prefixes: {} } as unknown as sparqljs.SparqlQuery;
  return new sparqljs.Generator({ allPrefixes: false }).stringify(q);
}

// ---------------------------------------------------------------------------------------------
// Tie-dependent gold answers: what `fkgqa stats` stores and `fkgqa score` reads.
// ---------------------------------------------------------------------------------------------

/** A run of solutions with equal ORDER BY keys in a key query's answer, with its place in the sequence. */
interface KeyRun {
  key: string;
  /** First position of the run in the whole (unlimited) sequence. */
  from: number;
  rows: Record<string, SparqlTerm>[];
}

/** The key query's solutions grouped into runs of equal ORDER BY keys, rows projected on `vars`. */
function keyRuns(ast: sparqljs.SelectQuery, keyed: SparqlResults, vars: string[]): KeyRun[] {
  const keyVars = keyVariables(ast);
  const runs: KeyRun[] = [];
  let at = 0;
  for (const row of keyed.results?.bindings ?? []) {
    const key = keyVars.map((v) => (row[v] ? termKey(row[v]) : '')).join(' | ');
    const projected = Object.fromEntries(vars.filter((v) => row[v]).map((v) => [v, row[v]]));
    if (runs.length > 0 && runs[runs.length - 1].key === key) runs[runs.length - 1].rows.push(projected);
    else runs.push({ key, from: at, rows: [projected] });
    at++;
  }
  return runs;
}

/** The window [offset, end) an ordered SELECT keeps of its `total` solutions. */
function windowOf(ast: sparqljs.SelectQuery, total: number): { offset: number; end: number } {
  const offset = ast.offset ?? 0;
  return { offset, end: ast.limit === undefined ? total : Math.min(total, offset + ast.limit) };
}

const distinctRows = (rows: Record<string, SparqlTerm>[]) => new Set(rows.map((r) => rowKey(r))).size;

/**
 * Whether a SELECT has exactly one solution whatever the data: it aggregates without GROUP BY (one
 * group over all solutions) and has no HAVING. Its ORDER BY, LIMIT and OFFSET cannot meet a tie.
 */
export function singleSolution(ast: sparqljs.SelectQuery): boolean {
  return !ast.group?.length && !ast.having?.length && ast.variables.some((v) => 'expression' in (v as object) && hasAggregate((v as { expression: unknown }).expression));
}

/**
 * Why the tie analysis of an ordered SELECT cannot be trusted, or undefined: with DISTINCT and an
 * ORDER BY key that is not projected, the key query (which projects the key) keeps solutions that
 * the query's DISTINCT would merge.
 */
export function tieAnalysisProblem(ast: sparqljs.SparqlQuery): string | undefined {
  if (ast.type !== 'query' || ast.queryType !== 'SELECT' || !ast.order?.length) return 'the query is no ordered SELECT';
  if (keyQuery(ast) === undefined) return 'SELECT * ordered by an expression: its keys cannot be projected';
  if ((ast.distinct || ast.reduced) && keyVariables(ast).some((k) => k.startsWith(KEY_VAR)))
    return 'SELECT DISTINCT ordered by a key it does not project: the key query would keep solutions DISTINCT merges';
  return undefined;
}

/**
 * The tie segments of an ordered SELECT's answer: every run of solutions with equal ORDER BY keys
 * that overlaps the kept window [OFFSET, OFFSET+LIMIT) and holds at least two distinct rows (on
 * `vars`). A run that the window cuts (more tie than it keeps) carries its `rows`: another choice
 * among them gives another correct answer; a run inside the window only leaves the order open.
 * @param ast the parsed query (ORDER BY, LIMIT, OFFSET)
 * @param keyed the key query's answer (`keyQuery`) on the same graph
 * @param vars the answer's variables (the gold answer's head)
 */
export function tieSegments(ast: sparqljs.SelectQuery, keyed: SparqlResults, vars: string[]): TieSegment[] {
  const runs = keyRuns(ast, keyed, vars);
  const total = runs.reduce((n, r) => n + r.rows.length, 0);
  const { offset, end } = windowOf(ast, total);
  const out: TieSegment[] = [];
  for (const run of runs) {
    const from = Math.max(run.from, offset);
    const to = Math.min(run.from + run.rows.length, end);
    if (to <= from || distinctRows(run.rows) < 2) continue;
    const take = to - from;
    // A run the window keeps whole only leaves its order open; a cut one leaves the choice open.
    const cut = take < run.rows.length;
    out.push({ start: from - offset, take, tied: run.rows.length, key: run.key, ...(cut ? { rows: run.rows } : {}) });
  }
  return out;
}

/**
 * Whether `answer` is the `gold` answer up to its tie segments: as many rows; outside the segments
 * the same rows in the same places; in each segment `take` rows drawn from its tied solutions (the
 * segment's `rows`, or gold's own rows there), in any order. Rows compare by `rowKey` (variable
 * names: rename the answer's columns to gold's first).
 */
export function admittedBySegments(gold: SparqlResults, segments: TieSegment[], answer: SparqlResults): { admitted: true } | { admitted: false; why: string } {
  const g = gold.results?.bindings ?? [];
  const a = answer.results?.bindings ?? [];
  if (a.length !== g.length) return { admitted: false, why: `${counted(a.length, 'row')} where gold has ${g.length}` };
  const inSegment = new Array<boolean>(g.length).fill(false);
  for (const s of segments) {
    const pool = new Map<string, number>();
    for (const r of s.rows ?? g.slice(s.start, s.start + s.take)) pool.set(rowKey(r), (pool.get(rowKey(r)) ?? 0) + 1);
    for (let i = s.start; i < s.start + s.take && i < a.length; i++) {
      inSegment[i] = true;
      const k = rowKey(a[i]);
      const n = pool.get(k) ?? 0;
      if (n === 0) return { admitted: false, why: `row ${i + 1} (${k}) is none of the ${s.tied} solutions tied at ORDER BY key ${s.key}` };
      pool.set(k, n - 1);
    }
  }
  for (let i = 0; i < g.length; i++) {
    if (!inSegment[i] && rowKey(a[i]) !== rowKey(g[i])) return { admitted: false, why: `row ${i + 1} differs from gold's (${rowKey(a[i])} for ${rowKey(g[i])})` };
  }
  return { admitted: true };
}

/** A sub-SELECT of a query (at any depth) that keeps a window of its ordered solutions (ORDER BY with LIMIT or OFFSET). */
export function windowedSubSelects(ast: sparqljs.SparqlQuery): sparqljs.SelectQuery[] {
  const out: sparqljs.SelectQuery[] = [];
  const walk = (node: unknown, top: boolean) => {
    if (!node || typeof node !== 'object') return;
    if (Array.isArray(node)) {
      for (const n of node) walk(n, false);
      return;
    }
    const o = node as { type?: string; queryType?: string; order?: unknown[]; limit?: number; offset?: number };
    if (!top && o.type === 'query' && o.queryType === 'SELECT' && o.order?.length && (o.limit !== undefined || o.offset !== undefined)) out.push(node as sparqljs.SelectQuery);
    for (const [k, v] of Object.entries(node)) if (k !== 'prefixes' && typeof v === 'object') walk(v, false);
  };
  walk(ast, true);
  return out;
}

/** The variables a SELECT's answer has, from its key query's answer (without the added key variables). */
export function answerVariables(keyed: SparqlResults): string[] {
  return (keyed.head.vars ?? []).filter((v) => !v.startsWith(KEY_VAR));
}

/** The choices a windowed sub-SELECT leaves: each is one correct answer of the sub-SELECT alone. */
type SubSelectChoices =
  | { status: 'fixed' }
  | { status: 'choices'; choices: Record<string, SparqlTerm>[][]; tied: number; key: string; keep: number }
  | { status: 'too-many'; count: number; tied: number; key: string; keep: number };

/** Distinct sub-multisets of size k of `rows` (by rowKey), up to `max` + 1 of them. */
function subMultisets(rows: Record<string, SparqlTerm>[], k: number, max: number): Record<string, SparqlTerm>[][] {
  const groups = new Map<string, { row: Record<string, SparqlTerm>; n: number }>();
  for (const r of rows) {
    const key = rowKey(r);
    const g = groups.get(key);
    if (g) g.n++;
    else groups.set(key, { row: r, n: 1 });
  }
  const list = [...groups.values()];
  const out: Record<string, SparqlTerm>[][] = [];
  const current: Record<string, SparqlTerm>[] = [];
  const walk = (i: number, left: number) => {
    if (out.length > max) return;
    if (left === 0) {
      out.push([...current]);
      return;
    }
    if (i >= list.length) return;
    for (let c = Math.min(left, list[i].n); c >= 0; c--) {
      for (let j = 0; j < c; j++) current.push(list[i].row);
      walk(i + 1, left - c);
      for (let j = 0; j < c; j++) current.pop();
    }
  };
  walk(0, k);
  return out;
}

/**
 * The answers a windowed sub-SELECT may give when solutions tie at the edges of its window: the
 * rows the window keeps for sure, plus each distinct choice of tied rows (at most `max` choices).
 * @param sub the sub-SELECT (ORDER BY with LIMIT/OFFSET)
 * @param keyed the answer of `keyQuery(sub)` on the unsharded graph
 */
export function subSelectChoices(sub: sparqljs.SelectQuery, keyed: SparqlResults, max: number): SubSelectChoices {
  const vars = answerVariables(keyed);
  const runs = keyRuns(sub, keyed, vars);
  const total = runs.reduce((n, r) => n + r.rows.length, 0);
  const { offset, end } = windowOf(sub, total);
  const fixed: Record<string, SparqlTerm>[] = [];
  const options: Record<string, SparqlTerm>[][][] = [];
  let tied = 0;
  const keys: string[] = [];
  let keep = 0;
  for (const run of runs) {
    const from = Math.max(run.from, offset);
    const to = Math.min(run.from + run.rows.length, end);
    if (to <= from) continue;
    const take = to - from;
    if (take === run.rows.length || distinctRows(run.rows) < 2) {
      fixed.push(...run.rows.slice(from - run.from, to - run.from));
      continue;
    }
    const subsets = subMultisets(run.rows, take, max);
    if (subsets.length > max) return { status: 'too-many', count: subsets.length, tied: run.rows.length, key: run.key, keep: take };
    options.push(subsets);
    tied += run.rows.length;
    keys.push(run.key);
    keep += take;
  }
  if (options.length === 0) return { status: 'fixed' };
  // The product of the choices at each cut run (at most two: the window's two edges).
  let product: Record<string, SparqlTerm>[][] = [fixed];
  for (const o of options) {
    product = product.flatMap((p) => o.map((c) => [...p, ...c]));
    if (product.length > max) return { status: 'too-many', count: product.length, tied, key: keys.join('; '), keep };
  }
  return { status: 'choices', choices: product, tied, key: keys.join('; '), keep };
}

/** An RDF/JS term (as sparqljs builds them) of a SPARQL JSON term; undefined for a blank node (VALUES cannot hold one). */
function rdfTerm(t: SparqlTerm): object | undefined {
  if (t.type === 'uri') return { termType: 'NamedNode', value: t.value };
  if (t.type === 'literal' || t.type === 'typed-literal') {
    const lang = t['xml:lang'] ?? '';
    const dt = lang ? 'http://www.w3.org/1999/02/22-rdf-syntax-ns#langString' : (t.datatype ?? 'http://www.w3.org/2001/XMLSchema#string');
    return { termType: 'Literal', value: t.value, language: lang, datatype: { termType: 'NamedNode', value: dt } };
  }
  return undefined;
}

/** A sub-SELECT and the answer it is to give (rows over `vars`). */
export interface SubSelectAnswer {
  sub: sparqljs.SelectQuery;
  rows: Record<string, SparqlTerm>[];
  vars: string[];
}

/**
 * The query with sub-SELECTs replaced by `VALUES` holding the given rows: what the query answers
 * when each sub-SELECT answers exactly its rows (a sub-SELECT is evaluated on its own, bottom up,
 * so inline data in its place joins the same way).
 * @returns the rewritten query (its text with full IRIs, and its AST), or undefined when a row
 *   holds a blank node (VALUES cannot)
 */
export function withSubSelectAnswers(ast: sparqljs.SparqlQuery, answers: SubSelectAnswer[]): { text: string; ast: sparqljs.SparqlQuery } | undefined {
  const inline = new Map<unknown, object>();
  for (const { sub, rows, vars } of answers) {
    const values: Record<string, object | undefined>[] = [];
    for (const row of rows) {
      const v: Record<string, object | undefined> = {};
      for (const name of vars) {
        if (!row[name]) {
          v[`?${name}`] = undefined;
          continue;
        }
        const t = rdfTerm(row[name]);
        if (!t) return undefined;
        v[`?${name}`] = t;
      }
      values.push(v);
    }
    inline.set(sub, { type: 'values', values });
  }
  const replace = (node: unknown): unknown => {
    if (inline.has(node)) return inline.get(node);
    if (Array.isArray(node)) return node.map(replace);
    if (!node || typeof node !== 'object') return node;
    // Terms are kept as they are (sparqljs's generator relies on their prototypes).
    if ('termType' in (node as object)) return node;
    return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, replace(v)]));
  };
  const q = { ...(replace(ast) as object), prefixes: {} } as sparqljs.SparqlQuery;
  return { text: new sparqljs.Generator({ allPrefixes: false }).stringify(q), ast: q };
}

// ---------------------------------------------------------------------------------------------
// The admissibility rule: one home for score and verify.
// ---------------------------------------------------------------------------------------------

/**
 * What the tie analysis of a gold answer says (the shape of `GoldTies` of src/build/gold-answers.ts,
 * written by `fkgqa stats`): top-level `segments`, and `alternatives` (other correct answers that
 * another choice among solutions tied in a sub-SELECT gives, each with its own top-level segments).
 */
export interface AdmissibleAnswers {
  segments?: TieSegment[];
  alternatives?: { results: SparqlResults; segments?: TieSegment[] }[];
}

/**
 * How a caller matches an answer with a reference answer: score's `matchAnswer` (columns matched by
 * bijection), verify's by variable name. `tieCheck`, when given, decides an ordered answer that
 * is not identical (the answer renamed to the reference's columns is passed to it).
 */
type AnswerMatcher<M extends { correct: boolean }> = (ref: SparqlResults, answer: SparqlResults, ordered: boolean, tieCheck?: (renamed: SparqlResults) => boolean) => M;

/**
 * The matcher of `fkgqa verify` and the MCP gold check for the admissibility rule: rows compared by
 * variable name (`compareResults`: same variables, same rows, in order when `ordered`; the values of
 * GROUP_CONCAT variables as multisets of parts), or, when not identical, `tieCheck`'s verdict.
 * @param concats the query's GROUP_CONCAT variables and separators (`groupConcatSeparators`)
 */
export function byVariableNameOf(concats: GroupConcats): AnswerMatcher<{ correct: boolean }> {
  return (ref, answer, ordered, tieCheck) => ({ correct: compareResults(ref, answer, ordered, undefined, concats).identical || (tieCheck ? tieCheck(answer) : false) });
}

/**
 * The admissibility rule: an answer is correct when it matches gold; else, when gold depends on ties
 * (`ties`), when it is what another order or choice of the solutions tied under the top-level
 * ORDER BY gives (`admittedBySegments` against gold's segments: `by: 'ties'`), or when it matches
 * one of the alternatives (sub-SELECT ties), up to that alternative's own top-level segments
 * (`by: 'alternative'`).
 * @param gold the gold answer
 * @param ties the gold answer's tie analysis, or undefined when gold is the only correct answer
 * @param answer the answer to judge
 * @param ordered the query has a top-level ORDER BY
 * @param match the matcher (see AnswerMatcher)
 * @returns the matcher's verdict that decided (against gold when nothing matched) and by what
 */
export function admissibleUnderTies<M extends { correct: boolean }>(
  gold: SparqlResults,
  ties: AdmissibleAnswers | undefined,
  answer: SparqlResults,
  ordered: boolean,
  match: AnswerMatcher<M>,
): { match: M; by: 'gold' | 'ties' | 'alternative' | null; admissible: number } {
  const m = match(gold, answer, ordered);
  const admissible = 1 + (ties?.alternatives?.length ?? 0);
  if (m.correct) return { match: m, by: 'gold', admissible };
  if (!ties) return { match: m, by: null, admissible };
  const segCheck = (ref: SparqlResults, segments: TieSegment[] | undefined) => (segments?.length ? (renamed: SparqlResults) => admittedBySegments(ref, segments, renamed).admitted : undefined);
  const goldCheck = segCheck(gold, ties.segments);
  if (goldCheck) {
    const bySegments = match(gold, answer, true, goldCheck);
    if (bySegments.correct) return { match: bySegments, by: 'ties', admissible };
  }
  for (const alt of ties.alternatives ?? []) {
    const a = match(alt.results, answer, ordered, ordered ? segCheck(alt.results, alt.segments) : undefined);
    if (a.correct) return { match: a, by: 'alternative', admissible };
  }
  return { match: m, by: null, admissible };
}
