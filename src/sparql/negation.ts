/**
 * Negated triple patterns: those under MINUS and FILTER (NOT) EXISTS. They use no triple of a
 * solution, but every triple that matches them can remove one (the oracle agent and `score` count
 * the shards where they match as needed).
 */
import type sparqljs from 'sparqljs';

/** Triple patterns under MINUS and FILTER (NOT) EXISTS of a query. */
export function negatedTriples(ast: sparqljs.SparqlQuery): sparqljs.Triple[] {
  const out: sparqljs.Triple[] = [];
  const walk = (node: unknown, negated: boolean) => {
    if (!node || typeof node !== 'object') return;
    if (Array.isArray(node)) return node.forEach((x) => walk(x, negated));
    const o = node as { type?: string; operator?: string; triples?: sparqljs.Triple[]; termType?: string };
    if (o.termType) return;
    if (o.type === 'bgp' && negated) out.push(...(o.triples ?? []));
    const under = negated || o.type === 'minus' || (o.type === 'operation' && (o.operator === 'exists' || o.operator === 'notexists'));
    for (const v of Object.values(o)) walk(v, under);
  };
  walk(ast, false);
  return out;
}
