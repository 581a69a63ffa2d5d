/**
 * What an endpoint needs to know about an incoming query before it runs it: its result form (for
 * content negotiation), its kind (for the request log) and the SPARQL features it uses (for the
 * behaviour profiles). Queries are parsed with sparqljs; the text sent to oxigraph is the client's
 * own, unchanged (oxigraph parses escaped local names correctly; sparqljs does not, pitfall B1).
 */
import sparqljs from 'sparqljs';
import { explainParseError } from '../analyze/parse.js';
import { ProtocolError, type ResultForm } from './protocol.js';

/**
 * Kind of a request, as logged per endpoint (pitfall B6: federation engines send service-description
 * probes and COUNT queries besides the data queries):
 * - `service-description`: a GET without a query (the probe engines send first);
 * - `void`: a request for the endpoint's VoID file;
 * - `ask`: an ASK query (FedX-style source selection);
 * - `count`: a SELECT whose projection is only COUNT aggregates, without GROUP BY (Comunica's
 *   cardinality queries have this shape, and so do "how many" questions);
 * - `data`: any other query;
 * - `invalid`: a request refused before running (bad protocol use, syntax error, update, 406);
 * - `other`: CORS preflight and unknown paths.
 */
export type RequestKind = 'service-description' | 'void' | 'ask' | 'count' | 'data' | 'invalid' | 'other';

/** SPARQL features a behaviour profile can refuse (challenge C2 of the FKGQA paper). */
export const FEATURES = ['service', 'values', 'aggregates', 'subqueries'] as const;
/** One of FEATURES. */
export type Feature = (typeof FEATURES)[number];

/** The facts about a query an endpoint acts on. */
export interface QueryInfo {
  /** SELECT → bindings, ASK → boolean, CONSTRUCT/DESCRIBE → graph. */
  form: ResultForm;
  kind: 'ask' | 'count' | 'data';
  /** Features used anywhere in the query (SERVICE, VALUES, aggregates, sub-SELECTs). */
  features: Set<Feature>;
  /** The query has FROM or FROM NAMED clauses. */
  hasFrom: boolean;
}

function walk(node: unknown, visit: (o: Record<string, unknown>) => void, seen = new Set<unknown>()): void {
  if (node === null || typeof node !== 'object' || seen.has(node)) return;
  seen.add(node);
  if (Array.isArray(node)) {
    for (const x of node) walk(x, visit, seen);
    return;
  }
  const o = node as Record<string, unknown>;
  visit(o);
  for (const k of Object.keys(o)) walk(o[k], visit, seen);
}

/** True for a SELECT whose projection is only COUNT aggregates and that has no GROUP BY. */
function isCountQuery(ast: sparqljs.SelectQuery): boolean {
  if (ast.group || !Array.isArray(ast.variables) || ast.variables.length === 0) return false;
  return ast.variables.every((v) => {
    const e = (v as { expression?: { type?: string; aggregation?: string } }).expression;
    return e?.type === 'aggregate' && e.aggregation === 'count';
  });
}

/**
 * Parses a query and reports its form, kind and features.
 * @throws ProtocolError 400 with sparqljs's message when the text does not parse; 403 when it is a
 *   SPARQL Update (the endpoints are read-only)
 */
export function inspectQuery(text: string): QueryInfo {
  let ast: sparqljs.SparqlQuery;
  try {
    ast = new sparqljs.Parser().parse(text);
  } catch (e) {
    const message = explainParseError(((e as Error).message ?? String(e)).trim(), ' (the gold queries in benchmark.json declare theirs)');
    throw new ProtocolError(400, `malformed query: ${message}`);
  }
  if (ast.type === 'update') throw new ProtocolError(403, 'this endpoint is read-only: SPARQL Update is not accepted');
  const features = new Set<Feature>();
  walk(ast, (o) => {
    if (o.type === 'service') features.add('service');
    if (o.type === 'values') features.add('values');
    if (o.type === 'aggregate') features.add('aggregates');
    if (o.type === 'query' && o !== (ast as unknown)) features.add('subqueries');
  });
  if (ast.values) features.add('values');
  const form: ResultForm = ast.queryType === 'SELECT' ? 'bindings' : ast.queryType === 'ASK' ? 'boolean' : 'graph';
  const kind = ast.queryType === 'ASK' ? 'ask' : ast.queryType === 'SELECT' && isCountQuery(ast) ? 'count' : 'data';
  const hasFrom = !!ast.from && (ast.from.default.length > 0 || ast.from.named.length > 0);
  return { form, kind, features, hasFrom };
}
