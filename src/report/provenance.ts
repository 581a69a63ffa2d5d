import sparqljs from 'sparqljs';
import { parseSparqlJson } from '../sparql/results.js';
import { hasAggregate } from '../sparql/inspect.js';

/**
 * The queries that find which shards a gold query's solutions use (realised fan-out):
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
interface ProvenanceQueries {
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

/** Why realised fan-out is missing (`ok` when it was computed). */
export type RealisedStatus = 'ok' | 'timeout' | 'error' | 'unparsable';

/** The shards a gold query's solutions use (realised fan-out), or why they are unknown. */
interface RealisedShards {
  status: RealisedStatus;
  /** Shard names `shard<N>`, in shard order; empty unless `status` is `ok`. */
  shards: string[];
}

/** The part of a StoreWorker that `realisedShards` needs (a store holding every shard as a named graph and all shards in the default graph). */
interface ProvenanceStore {
  query(q: { query: string; resultsFormat: string; timeoutMs: number }): Promise<{ status: 'ok'; body: string } | { status: 'error' | 'timeout' }>;
}

/**
 * Runs the provenance queries of one gold query (see `provenanceQueries`) and collects the shards
 * whose named graphs they bind: the realised fan-out (`fkgqa stats`, `fkgqa questions`).
 * @param store holds each shard in its own named graph (the keys of `shardOfGraph`) and the union of
 *   the shards in the default graph
 * @param ast the gold query's AST with IRIs fixed (`parseQuery`)
 * @param shardOfGraph named-graph IRI → shard name `shard<N>`
 * @param timeoutMs time limit of each provenance query, in ms
 * @returns status `timeout`/`error` (and no shards) when any provenance query does not finish
 */
export async function realisedShards(store: ProvenanceStore, ast: sparqljs.SparqlQuery, shardOfGraph: Map<string, string>, timeoutMs: number): Promise<RealisedShards> {
  const pq = provenanceQueries(ast);
  const shards = new Set<string>();
  let solutions = 0;
  for (const [i, text] of [pq.main, ...pq.aggregates].entries()) {
    if (i > 0 && solutions === 0) break;
    const r = await store.query({ query: text, resultsFormat: 'application/sparql-results+json', timeoutMs });
    if (r.status !== 'ok') return { status: r.status, shards: [] };
    const bindings = parseSparqlJson(r.body, 'the provenance query');
    if (i === 0) solutions = bindings.length;
    for (const b of bindings) for (const v of Object.values(b)) if (shardOfGraph.has(v.value)) shards.add(shardOfGraph.get(v.value)!);
  }
  return { status: 'ok', shards: [...shards].sort((a, b) => Number(a.slice(5)) - Number(b.slice(5))) };
}
