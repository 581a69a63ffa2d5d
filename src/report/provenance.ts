import sparqljs from 'sparqljs';

/**
 * The queries that find which shards a gold query's solutions use (realised fan-out, issue 3):
 * every triple pattern `t` of the query's pattern is rewritten to `GRAPH ?g_i { t }` and the query
 * is run on a store holding each shard as a named graph; the bound `?g_i` name the shards.
 *
 * What counts as "used by a solution of the query's pattern":
 * - the WHERE pattern's solutions before grouping, HAVING, ORDER BY, LIMIT and OFFSET;
 * - patterns in OPTIONAL and UNION count where they match; patterns under MINUS and inside
 *   FILTER (NOT) EXISTS do not (a solution exists because they do *not* match, or they only test);
 * - a subquery without aggregation is kept in place, its graph variables added to its projection;
 * - a subquery with aggregation (GROUP BY, HAVING or an aggregate) depends on all solutions of
 *   its own pattern: it is answered by a separate query over its WHERE, counted only when the
 *   outer query has a solution;
 * - a property path must match inside one shard (none occur in Spider4SPARQL).
 */
export interface ProvenanceQueries {
  /** SELECT DISTINCT over the graph variables of the outer pattern (or `?fkgqa_one` if it has none). */
  main: string;
  /** Number of graph variables of `main`. */
  graphVariables: number;
  /** One query per aggregating subquery (recursively), same shape as `main`. */
  aggregates: string[];
}

type Pattern = sparqljs.Pattern;
type Select = sparqljs.SelectQuery;
const variable = (value: string) => ({ termType: 'Variable', value }) as unknown as sparqljs.VariableTerm;

function hasAggregate(x: unknown): boolean {
  if (!x || typeof x !== 'object') return false;
  if ((x as { type?: string }).type === 'aggregate') return true;
  if ((x as { type?: string }).type === 'query') return false;
  return Object.values(x as object).some(hasAggregate);
}

function isAggregating(q: Select): boolean {
  return Boolean(q.group?.length || q.having?.length || q.variables.some((v) => 'expression' in v && hasAggregate(v.expression)));
}

function isWildcard(q: Select): boolean {
  return q.variables.length === 1 && (q.variables[0] as { termType?: string }).termType === 'Wildcard';
}

interface Context {
  counter: { n: number };
  vars: string[];
  aggregates: Select[];
}

function rewrite(patterns: Pattern[], ctx: Context): Pattern[] {
  const out: Pattern[] = [];
  for (const p of patterns) {
    switch (p.type) {
      case 'bgp':
        for (const t of p.triples) {
          const name = `fkgqa_g${++ctx.counter.n}`;
          ctx.vars.push(name);
          out.push({ type: 'graph', name: variable(name), patterns: [{ type: 'bgp', triples: [t] }] } as unknown as Pattern);
        }
        break;
      case 'group':
      case 'optional':
        out.push({ ...p, patterns: rewrite(p.patterns, ctx) });
        break;
      case 'union':
        out.push({ ...p, patterns: p.patterns.map((x) => rewrite([x], ctx)[0] ?? x) });
        break;
      case 'query': {
        const sub = p as unknown as Select;
        if (isAggregating(sub)) {
          ctx.aggregates.push(sub);
          out.push(p);
          break;
        }
        const before = ctx.vars.length;
        const where = rewrite(sub.where ?? [], ctx);
        const added = ctx.vars.slice(before).map(variable);
        out.push({ ...sub, where, variables: isWildcard(sub) ? sub.variables : [...sub.variables, ...added] } as unknown as Pattern);
        break;
      }
      default:
        // minus, filter, bind, values, service, graph: left as they are.
        out.push(p);
    }
  }
  return out;
}

function provenanceSelect(where: Pattern[], vars: string[]): string {
  const q = {
    type: 'query',
    queryType: 'SELECT',
    prefixes: {},
    distinct: vars.length > 0,
    variables: vars.length
      ? vars.map(variable)
      : [{ expression: { termType: 'Literal', value: '1', language: '', datatype: { termType: 'NamedNode', value: 'http://www.w3.org/2001/XMLSchema#integer' } }, variable: variable('fkgqa_one') }],
    where,
    ...(vars.length ? {} : { limit: 1 }),
  };
  return new sparqljs.Generator({ allPrefixes: false }).stringify(q as unknown as sparqljs.SparqlQuery);
}

/**
 * Builds the provenance queries of a parsed query (IRIs already fixed, see parseQuery).
 * @param ast the gold query's AST; it is not modified
 */
export function provenanceQueries(ast: sparqljs.SparqlQuery): ProvenanceQueries {
  const clone = ast as sparqljs.Query; // rewrite() builds new objects and never changes its input
  const counter = { n: 0 };
  const ctx: Context = { counter, vars: [], aggregates: [] };
  const where = rewrite(clone.where ?? [], ctx);
  const aggregates: string[] = [];
  const pending = [...ctx.aggregates];
  while (pending.length) {
    const sub = pending.shift()!;
    const inner: Context = { counter, vars: [], aggregates: [] };
    const w = rewrite(sub.where ?? [], inner);
    aggregates.push(provenanceSelect(w, inner.vars));
    pending.push(...inner.aggregates);
  }
  return { main: provenanceSelect(where, ctx.vars), graphVariables: ctx.vars.length, aggregates };
}
