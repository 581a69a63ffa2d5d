/**
 * Ties under ORDER BY. When solutions tie on every ORDER BY key, SPARQL leaves their order open
 * (SPARQL 1.1 Query §15.1), so with LIMIT/OFFSET two correct engines may return different rows,
 * and without them the same rows in another order. To tell such answers from lost ones, the query
 * is run once more on the unsharded graph with its ORDER BY keys projected and without LIMIT/OFFSET
 * ("key query"); an answer is *equivalent* to gold when it is what some ordering of the tied
 * solutions would give.
 */
import sparqljs from 'sparqljs';
import type { JsonResults, JsonTerm } from '../sparql/results.js';
import { rowKey, termKey } from './compare.js';

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

/**
 * Decides whether an answer is one that some ordering of tied solutions gives.
 * @param ast the parsed query (for its LIMIT, OFFSET and ORDER BY)
 * @param keyed the key query's answer on the unsharded graph (all solutions, sorted, keys projected)
 * @param answer the federated answer
 * @param gold the gold answer (the query on the unsharded graph): an equivalent answer has exactly
 *   its number of rows (a lost row is never "equivalent", even when the key query lost it too)
 * @returns `{equivalent: true, ties}` with the number of tied solutions involved, or
 *   `{equivalent: false, why}`
 */
export function equivalentUnderTies(ast: sparqljs.SparqlQuery, keyed: JsonResults, answer: JsonResults, gold?: JsonResults): { equivalent: true; ties: number } | { equivalent: false; why: string } {
  if (ast.type !== 'query' || ast.queryType !== 'SELECT' || !ast.order?.length) return { equivalent: false, why: 'the query is no ordered SELECT' };
  const keyVars = keyVariables(ast);
  const projected = (answer.head.vars ?? []).filter((v) => !v.startsWith(KEY_VAR));
  const project = (row: Record<string, JsonTerm>) => rowKey(Object.fromEntries(projected.filter((v) => row[v]).map((v) => [v, row[v]])));
  const all = (keyed.results?.bindings ?? []).map((row) => ({ row: project(row), key: keyVars.map((v) => (row[v] ? termKey(row[v]) : '')).join(' | ') }));
  // Runs of equal keys, in order.
  const runs: { key: string; rows: string[] }[] = [];
  for (const r of all) {
    if (runs.length > 0 && runs[runs.length - 1].key === r.key) runs[runs.length - 1].rows.push(r.row);
    else runs.push({ key: r.key, rows: [r.row] });
  }
  const offset = ast.offset ?? 0;
  const end = ast.limit === undefined ? all.length : Math.min(all.length, offset + ast.limit);
  const got = (answer.results?.bindings ?? []).map(project);
  if (gold) {
    const goldRows = gold.results?.bindings.length ?? 0;
    if (got.length !== goldRows) return { equivalent: false, why: `${got.length} rows where gold has ${goldRows}` };
  }
  if (got.length !== Math.max(0, end - offset)) return { equivalent: false, why: `${got.length} rows where the query selects ${Math.max(0, end - offset)}` };
  // Walk the runs overlapping the window [offset, end): from each, the answer must take exactly as
  // many rows as the window does, in run order, any of the run's rows.
  let pos = 0;
  let at = 0;
  let ties = 0;
  for (const run of runs) {
    const from = Math.max(pos, offset);
    const to = Math.min(pos + run.rows.length, end);
    pos += run.rows.length;
    if (to <= from) continue;
    const take = to - from;
    const pool = new Map<string, number>();
    for (const r of run.rows) pool.set(r, (pool.get(r) ?? 0) + 1);
    for (const r of got.slice(at, at + take)) {
      const n = pool.get(r) ?? 0;
      if (n === 0) return { equivalent: false, why: `row ${r} is not among the solutions ranked ${from + 1}–${to} (ORDER BY key ${run.key})` };
      pool.set(r, n - 1);
    }
    if (run.rows.length > 1 && (take < run.rows.length || got.slice(at, at + take).some((r, i) => r !== all[from + i].row))) ties += run.rows.length;
    at += take;
  }
  return { equivalent: true, ties };
}
