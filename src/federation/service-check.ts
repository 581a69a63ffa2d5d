/**
 * The precondition every federation engine checks before it sends anything: a SERVICE-explicit
 * query names its data only through SERVICE clauses whose targets are registered endpoints. Routing
 * (routing.ts) refuses such queries already for agents; engines check again because they are also
 * called directly (verify, the library), and because an engine would otherwise fail with a message
 * about its own internals (Comunica: "none of the configured actors were able to handle …") or,
 * worse, answer from its empty local dataset (Jena ARQ: a triple pattern outside SERVICE matches
 * nothing, so the answer is silently empty). A refused query costs 0 requests.
 */
import sparqljs from 'sparqljs';
import { explainParseError, fixIris } from '../sparql/parse.js';
import { serviceClauses, triplesOutsideServices } from '../sparql/services.js';
import { sameEndpoint } from './http.js';

/** A query an engine may evaluate (its AST, IRIs fixed, and its distinct SERVICE targets), or why not. */
export type ServiceCheck = { ok: true; ast: sparqljs.SparqlQuery; services: string[] } | { ok: false; error: string };

const term = (x: { termType?: string; value?: string; type?: string }): string =>
  x.type === 'path' ? '<property path>' : x.termType === 'Variable' ? `?${x.value}` : x.termType === 'NamedNode' ? `<${x.value}>` : JSON.stringify(x.value);

/**
 * Parses a query (sparqljs 3.7.4, IRIs fixed: sparqljs keeps the backslash of escaped local names) and checks that every triple pattern is
 * inside a SERVICE clause whose target is one of `endpoints` (compared as the registry does:
 * exactly, but for trailing slashes).
 * @param query SPARQL 1.1 query text (prefixes declared in it)
 * @param endpoints the registered endpoint URLs
 * @returns the AST and the distinct SERVICE targets in order of appearance; or an error naming the
 *   parse error, an update, FROM/FROM NAMED, a variable SERVICE target, the first unregistered
 *   target, or the first triple pattern outside every SERVICE clause
 */
export function checkServiceQuery(query: string, endpoints: string[]): ServiceCheck {
  let parsed: sparqljs.SparqlQuery | sparqljs.Update;
  try {
    parsed = new sparqljs.Parser().parse(query);
  } catch (e) {
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
  return { ok: true, ast, services };
}
