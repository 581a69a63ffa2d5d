/**
 * SERVICE clauses of a query (SPARQL 1.1 Federated Query): where they are, what they name, and
 * the triple patterns left outside every one of them (which name no endpoint).
 */
import type sparqljs from 'sparqljs';
import { parseQuery } from './parse.js';

/** A SERVICE clause of a sparqljs AST. */
interface ServiceClause {
  name: { termType: string; value: string };
  silent: boolean;
  patterns: unknown[];
}

/**
 * Every SERVICE clause of an AST (in document order), however deeply nested (OPTIONAL, UNION,
 * MINUS, GRAPH, sub-SELECT, FILTER EXISTS).
 */
export function serviceClauses(node: unknown, out: ServiceClause[] = []): ServiceClause[] {
  if (Array.isArray(node)) {
    for (const x of node) serviceClauses(x, out);
    return out;
  }
  if (node === null || typeof node !== 'object') return out;
  const o = node as Record<string, unknown>;
  if ('termType' in o) return out;
  if (o.type === 'service') out.push(o as unknown as ServiceClause);
  for (const v of Object.values(o)) serviceClauses(v, out);
  return out;
}

/**
 * The triple patterns (of BGPs and property paths) that are outside every SERVICE clause, in
 * document order: in a SERVICE-explicit federation (the FKGQA setups) no endpoint is named for
 * them. Patterns under FILTER (NOT) EXISTS count too.
 */
export function triplesOutsideServices(node: unknown, out: sparqljs.Triple[] = []): sparqljs.Triple[] {
  if (Array.isArray(node)) {
    for (const x of node) triplesOutsideServices(x, out);
    return out;
  }
  if (node === null || typeof node !== 'object') return out;
  const o = node as Record<string, unknown>;
  if ('termType' in o || o.type === 'service') return out;
  if (o.type === 'bgp' && Array.isArray(o.triples)) {
    out.push(...(o.triples as sparqljs.Triple[]));
    return out;
  }
  for (const v of Object.values(o)) triplesOutsideServices(v, out);
  return out;
}

/**
 * The SERVICE targets of a query (distinct IRIs, in order of appearance), read from the parsed
 * query; undefined when it does not parse.
 */
export function serviceTargets(query: string): string[] | undefined {
  const parsed = parseQuery(query, undefined);
  if (!parsed.ok) return undefined;
  const out: string[] = [];
  const walk = (node: unknown) => {
    if (!node || typeof node !== 'object') return;
    const o = node as { type?: string; name?: { termType?: string; value?: string } };
    if (o.type === 'service' && o.name?.termType === 'NamedNode' && !out.includes(o.name.value!)) out.push(o.name.value!);
    for (const v of Object.values(node as object)) walk(v);
  };
  walk(parsed.query.ast);
  return out;
}

/**
 * The endpoints a query names in `SERVICE SILENT` clauses (their IRIs without query string or
 * fragment): an engine may swallow their errors on purpose, so a federation engine takes none of
 * their `503` stops as the query's verdict (DueAnswers of src/federation/limit.ts). Empty when the
 * query has none or does not parse (comments and string literals are not clauses).
 */
export function silentTargets(query: string): Set<string> {
  const out = new Set<string>();
  if (!/SILENT/i.test(query)) return out;
  const parsed = parseQuery(query, undefined);
  if (!parsed.ok) return out;
  for (const s of serviceClauses(parsed.query.ast)) if (s.silent && s.name.termType === 'NamedNode') out.add(s.name.value.replace(/[?#].*$/, ''));
  return out;
}
