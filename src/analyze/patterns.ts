import type * as RDF from '@rdfjs/types';
import type sparqljs from 'sparqljs';
import { compactTerm, jsonTerm } from '../sparql/results.js';

/** A term of a triple pattern, as sparqljs gives it: an IRI, a variable, a literal or a blank node. */
export type PatternTerm = RDF.NamedNode | RDF.Variable | RDF.Literal | RDF.BlankNode;

/**
 * A triple pattern of a query. When the predicate is a property path, `predicate` is undefined and
 * `pathIris` lists the IRIs the path mentions (sorted, distinct).
 */
export interface TriplePattern {
  subject: PatternTerm;
  predicate?: RDF.NamedNode | RDF.Variable;
  pathIris?: string[];
  object: PatternTerm;
}

/** A compact, unambiguous text form of a pattern term (`<iri>`, `?var`, `_:b`, or a literal as `compactTerm` writes it). */
export function termKey(t: PatternTerm | RDF.Term): string {
  switch (t.termType) {
    case 'NamedNode':
      return `<${t.value}>`;
    case 'Variable':
      return `?${t.value}`;
    case 'BlankNode':
      return `_:${t.value}`;
    case 'Literal':
      return compactTerm(jsonTerm(t as RDF.Literal));
    default:
      return `${t.termType}:${(t as RDF.Term).value}`;
  }
}

/** The text form of a triple pattern, used to deduplicate patterns and in reports. */
export function patternKey(tp: TriplePattern): string {
  const p = tp.predicate ? termKey(tp.predicate) : `path(${(tp.pathIris ?? []).map((i) => `<${i}>`).join(' ')})`;
  return `${termKey(tp.subject)} ${p} ${termKey(tp.object)}`;
}

function pathIris(path: unknown, out: Set<string>): void {
  if (!path || typeof path !== 'object') return;
  const p = path as { termType?: string; value?: string; items?: unknown[] };
  if (p.termType === 'NamedNode' && p.value) out.add(p.value);
  for (const item of p.items ?? []) pathIris(item, out);
}

/** Which triple patterns T(q) takes from a query. */
export interface PatternScope {
  /**
   * Take the patterns inside expressions — FILTER (NOT) EXISTS, and EXISTS in BIND, HAVING,
   * ORDER BY or the projection. Default true (the method's T(q)); false reproduces the paper's
   * published applicability figures (docs/method.md, "How the figures compare with the paper").
   */
  expressionPatterns?: boolean;
}

/**
 * T(q): every triple pattern anywhere in the query — the outer pattern, subqueries, OPTIONAL,
 * UNION, MINUS, GRAPH, SERVICE, and EXISTS / NOT EXISTS inside FILTER, BIND, HAVING, ORDER BY or
 * the projection — deduplicated by text form, in order of first appearance (section 4.1 of the
 * FKGQA paper calls this the BGP of q).
 * @param scope `expressionPatterns: false` leaves out the patterns inside expressions
 */
export function triplePatterns(ast: sparqljs.SparqlQuery, scope: PatternScope = {}): TriplePattern[] {
  const inExpressions = scope.expressionPatterns ?? true;
  const out = new Map<string, TriplePattern>();
  const visit = (node: unknown): void => {
    if (node === null || typeof node !== 'object') return;
    if (Array.isArray(node)) {
      for (const x of node) visit(x);
      return;
    }
    const o = node as Record<string, unknown>;
    if (o.type === 'bgp' && Array.isArray(o.triples)) {
      for (const t of o.triples as sparqljs.Triple[]) {
        const pred = t.predicate as { termType?: string; type?: string };
        const tp: TriplePattern = { subject: t.subject as PatternTerm, object: t.object as PatternTerm };
        if (pred.termType === 'NamedNode' || pred.termType === 'Variable') {
          tp.predicate = t.predicate as RDF.NamedNode | RDF.Variable;
        } else {
          const iris = new Set<string>();
          pathIris(pred, iris);
          tp.pathIris = [...iris].sort();
        }
        const key = patternKey(tp);
        if (!out.has(key)) out.set(key, tp);
      }
      return;
    }
    if ('termType' in o) return; // a term, nothing below it
    if (!inExpressions && (o.type === 'filter' || o.type === 'bind' || o.type === 'operation')) return;
    for (const key of Object.keys(o)) {
      if (!inExpressions && (key === 'having' || key === 'order' || key === 'variables')) continue;
      visit(o[key]);
    }
  };
  visit(ast);
  return [...out.values()];
}

/**
 * The triple patterns every solution of a query's WHERE clause must match: those of the BGPs of
 * its top-level group and of groups nested in it directly, with an IRI or variable as predicate
 * (not a property path, which may match zero triples). Patterns under OPTIONAL, UNION, MINUS,
 * GRAPH, SERVICE, in subqueries or in expressions (FILTER EXISTS …) are left out: the query can
 * have solutions without them (SPARQL 1.1 Query §18.5, the algebra of Join, LeftJoin, Union).
 * If one of them matches no triple of the graph, the WHERE clause has no solution, whatever the
 * shards: the answer is necessarily empty (`implicitGroup`: an aggregate without GROUP BY gives one
 * row over no solutions, e.g. COUNT 0; ASK gives false).
 * @returns the pattern keys (see `patternKey`) and whether the query aggregates over one implicit group
 */
export function requiredPatterns(ast: sparqljs.SparqlQuery): { keys: string[]; implicitGroup: boolean } {
  const keys = new Set<string>();
  const walk = (elements: unknown[] | undefined) => {
    for (const el of elements ?? []) {
      const o = el as { type?: string; triples?: sparqljs.Triple[]; patterns?: unknown[] };
      if (o.type === 'bgp') {
        for (const t of o.triples ?? []) {
          const pred = t.predicate as { termType?: string };
          if (pred.termType !== 'NamedNode' && pred.termType !== 'Variable') continue;
          keys.add(patternKey({ subject: t.subject as PatternTerm, predicate: t.predicate as RDF.NamedNode | RDF.Variable, object: t.object as PatternTerm }));
        }
      } else if (o.type === 'group') walk(o.patterns);
    }
  };
  if (ast.type !== 'query') return { keys: [], implicitGroup: false };
  walk(ast.where);
  const q = ast as sparqljs.SelectQuery;
  const aggregates = ast.queryType === 'SELECT' && !q.group && (q.having !== undefined || JSON.stringify(q.variables ?? []).includes('"type":"aggregate"'));
  return { keys: [...keys], implicitGroup: aggregates };
}
