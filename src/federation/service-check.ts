/**
 * The precondition every federation engine checks before it sends anything: a SERVICE-explicit
 * query names its data only through SERVICE clauses whose targets are registered endpoints. Routing
 * (routing.ts) refuses such queries already for agents; engines check again because they are also
 * called directly (verify, the library), and because an engine would otherwise fail with a message
 * about its own internals (Comunica: "none of the configured actors were able to handle …") or,
 * worse, answer from its empty local dataset (Jena ARQ: a triple pattern outside SERVICE matches
 * nothing, so the answer is silently empty). A refused query costs 0 requests.
 */
import type sparqljs from 'sparqljs';
import { builtinProblem, rewriteBuiltins } from '../sparql/builtins.js';
import { bindExistsOutOfOrderAndAggregates, existsShapeProblem } from '../sparql/exists.js';
import { generateQuery } from '../sparql/generate.js';
import { MAX_SERVED_QUERY_DEPTH } from '../sparql/guard.js';
import { explainParseError, fixIris, parseSparql, QueryTooComplex } from '../sparql/parse.js';
import { serviceClauses, triplesOutsideServices } from '../sparql/services.js';
import { sameEndpoint } from '../common/http-client.js';

/**
 * A query an engine may evaluate — its AST (IRIs fixed, EXISTS moved out of aggregates and ORDER
 * BY), the text to evaluate (the query as given, or regenerated from that AST when an EXISTS was
 * moved) and its distinct SERVICE targets — or why not.
 */
type ServiceCheck = { ok: true; ast: sparqljs.SparqlQuery; query: string; services: string[] } | { ok: false; error: string };

/** Why a SERVICE-explicit query of a valid shape is refused: `nested-service` or `unsupported-shape` (the error classes of run_sparql_query). */
interface ShapeRefusal {
  errorClass: 'nested-service' | 'unsupported-shape';
  /** What is refused and why, that nothing was sent, and what to write instead. */
  message: string;
}

/**
 * The shapes around SERVICE that no federation engine answers as the unsharded graph does, refused
 * by every engine (`checkServiceQuery`) and by routing (`planQuery`) in the same words
 * (docs/federation.md, "Shapes around SERVICE"):
 * - a SERVICE inside a SERVICE (`nested-service`): an endpoint does not evaluate SERVICE (fkgqa
 *   serve's shard endpoints answer 501);
 * - inside a FILTER (NOT) EXISTS the engine evaluates, a MINUS or a BIND to a variable used outside
 *   it, and an EXISTS in the ORDER BY of a query that groups or selects `*` (`unsupported-shape`,
 *   src/sparql/exists.ts);
 * - outside SERVICE, a function IRI that is no SPARQL 1.1 built-in or cast, SUBSTR with a constant
 *   position below 1 or not an integer, REGEX or REPLACE with the flag `x` (`unsupported-shape`,
 *   src/sparql/builtins.ts).
 * @param ast a parsed query (IRIs fixed)
 * @returns the refusal, or undefined when the shape is answered
 */
export function refusedShape(ast: sparqljs.Query): ShapeRefusal | undefined {
  const outer = serviceClauses(ast.where ?? []).find((s) => serviceClauses(s.patterns).length > 0);
  if (outer) {
    const inner = serviceClauses(outer.patterns)[0];
    return {
      errorClass: 'nested-service',
      message: `SERVICE <${inner.name.value}> is inside SERVICE <${outer.name.value}>: an endpoint does not evaluate SERVICE, so nothing was sent; put the SERVICE clauses side by side, SERVICE <A> { … } SERVICE <B> { … }, and the federation engine joins them`,
    };
  }
  const problem = existsShapeProblem(ast) ?? builtinProblem(ast);
  return problem ? { errorClass: 'unsupported-shape', message: problem } : undefined;
}

const term = (x: { termType?: string; value?: string; type?: string }): string =>
  x.type === 'path' ? '<property path>' : x.termType === 'Variable' ? `?${x.value}` : x.termType === 'NamedNode' ? `<${x.value}>` : JSON.stringify(x.value);

/**
 * Parses a query (sparqljs 3.7.4, IRIs fixed: sparqljs keeps the backslash of escaped local names) and checks that every triple pattern is
 * inside a SERVICE clause whose target is one of `endpoints` (compared as the registry does:
 * exactly, but for trailing slashes).
 * @param query SPARQL 1.1 query text (prefixes declared in it)
 * @param endpoints the registered endpoint URLs
 * Then refuses the shapes of `refusedShape`, and moves every EXISTS out of aggregates and ORDER BY
 * into a BIND (src/sparql/exists.ts), and rewrites STR, xsd:string and GROUP_CONCAT outside SERVICE so
 * that they give oxigraph's strings of numbers on every engine (src/sparql/builtins.ts), so that every
 * engine answers them as the unsharded graph.
 * @returns the AST, the text to evaluate and the distinct SERVICE targets in order of appearance;
 *   or an error naming the parse error, an update, FROM/FROM NAMED, a variable SERVICE target, the
 *   first unregistered target, the first triple pattern outside every SERVICE clause, or the
 *   refused shape
 */
export function checkServiceQuery(query: string, endpoints: string[]): ServiceCheck {
  let parsed: sparqljs.SparqlQuery | sparqljs.Update;
  try {
    // The text is often generated (routing's, a caller's rewrite): held to the served limit, the agent's own text to MAX_QUERY_DEPTH by routing.
    parsed = parseSparql(query, { maxQueryDepth: MAX_SERVED_QUERY_DEPTH });
  } catch (e) {
    if (e instanceof QueryTooComplex) return { ok: false, error: `the query is too complex: ${e.message}` };
    const lines = ((e as Error).message ?? String(e)).split('\n').filter((l) => l.trim() && !/^-*\^$/.test(l.trim()));
    return { ok: false, error: `the query does not parse: ${explainParseError(lines.join(' '))}` };
  }
  if (parsed.type !== 'query') return { ok: false, error: 'SPARQL Update is refused: a federation engine only answers queries' };
  const ast = parsed;
  fixIris(ast);
  if (ast.from && (ast.from.default.length > 0 || ast.from.named.length > 0)) {
    return { ok: false, error: 'FROM and FROM NAMED are refused: a federation engine has no dataset of its own; name each endpoint in SERVICE <url> { … }' };
  }
  const services: string[] = [];
  for (const s of serviceClauses(ast.where ?? [])) {
    if (s.name.termType !== 'NamedNode') return { ok: false, error: `SERVICE ?${s.name.value}: a variable SERVICE target is refused; name a registered endpoint` };
    if (!endpoints.some((e) => sameEndpoint(e, s.name.value))) {
      return { ok: false, error: `refused to contact ${s.name.value}: not a registered endpoint (SERVICE <${s.name.value}>); nothing was sent` };
    }
    if (!services.includes(s.name.value)) services.push(s.name.value);
  }
  const outside = triplesOutsideServices(ast.where ?? []);
  if (outside.length > 0) {
    const t = outside[0] as unknown as Record<'subject' | 'predicate' | 'object', { termType?: string; value?: string; type?: string }>;
    return {
      ok: false,
      error:
        `the triple pattern ${term(t.subject)} ${term(t.predicate)} ${term(t.object)} is outside every SERVICE clause` +
        `${outside.length > 1 ? ` (and ${outside.length - 1} more)` : ''}: a federation engine has no data of its own; put it inside SERVICE <endpoint URL> { … }`,
    };
  }
  const refused = refusedShape(ast);
  if (refused) return { ok: false, error: refused.message };
  const moved = bindExistsOutOfOrderAndAggregates(ast) + rewriteBuiltins(ast);
  const text = moved > 0 ? generateQuery(ast) : query;
  return { ok: true, ast, query: text, services };
}
