/**
 * The query a Comunica thread (thread.ts) hands to Comunica: SPARQL algebra made by the
 * sparqlalgebrajs that Comunica 4.5.0 itself uses (5.0.2), from a sparqljs AST, with four changes
 * that give the same answers and that Comunica evaluates right: escaped local names without their
 * backslash (`fixIris`), the pattern of an EXISTS put back in its group (`groupExistsPatterns`),
 * variables a sub-SELECT does not project renamed (`renameSubSelectLocals`), and a FILTER condition
 * inside an EXISTS that is no operator as `IF(condition, true, false)` (`conditionsAsOperators`).
 * docs/federation.md ("Comunica 4.5.0, corrected") has the defect each one avoids.
 */
import { DataFactory } from 'n3';
import { type Algebra, Factory, translate } from 'sparqlalgebrajs';
import type sparqljs from 'sparqljs';
import { fixIris, parseSparql } from '../../sparql/parse.js';
import { MAX_SERVED_QUERY_DEPTH } from '../../sparql/guard.js';

type Node = Record<string, unknown>;

/**
 * Puts the pattern of every `EXISTS` and `NOT EXISTS` of a sparqljs AST (FILTER, BIND, SELECT
 * expressions, ORDER BY, HAVING; at any depth) back into a group when sparqljs gave it alone (see
 * the module comment). Changes the AST in place; a group stays as it is.
 * @param node a sparqljs AST or any part of it
 * @returns how many patterns were put into a group
 */
function groupExistsPatterns(node: unknown, seen = new Set<unknown>()): number {
  if (node === null || typeof node !== 'object' || seen.has(node)) return 0;
  seen.add(node);
  if (Array.isArray(node)) return node.reduce((n: number, x) => n + groupExistsPatterns(x, seen), 0);
  const o = node as Record<string, unknown>;
  if ('termType' in o) return 0;
  let n = 0;
  if (o.type === 'operation' && (o.operator === 'exists' || o.operator === 'notexists') && Array.isArray(o.args)) {
    const pattern = o.args[0] as { type?: string } | undefined;
    if (pattern && pattern.type !== 'group') {
      o.args[0] = { type: 'group', patterns: [pattern] };
      n++;
    }
  }
  for (const v of Object.values(o)) n += groupExistsPatterns(v, seen);
  return n;
}

/** The variables of a sparqljs SELECT's projection; undefined for `SELECT *` (it projects every variable in scope). */
function projected(query: Node): Set<string> | undefined {
  const names = new Set<string>();
  for (const v of query.variables as Node[]) {
    if (v.termType === 'Wildcard') return undefined;
    const variable = (v.termType === 'Variable' ? v : v.variable) as { value: string } | undefined;
    if (variable) names.add(variable.value);
  }
  return names;
}

/** Every variable name in a part of a sparqljs AST (VALUES keys included). */
function variableNames(node: unknown, out = new Set<string>()): Set<string> {
  if (Array.isArray(node)) node.forEach((x) => variableNames(x, out));
  else if (node !== null && typeof node === 'object') {
    const o = node as Node;
    if (o.termType === 'Variable') out.add(o.value as string);
    else if (!('termType' in o)) {
      for (const [k, v] of Object.entries(o)) {
        if (k.startsWith('?')) out.add(k.slice(1));
        variableNames(v, out);
      }
    }
  }
  return out;
}

/** Replaces the variables of a part of a sparqljs AST named in `names` (terms are replaced, never changed: sparqljs shares them). */
function renameVariables(node: unknown, names: Map<string, string>): void {
  if (node === null || typeof node !== 'object' || 'termType' in (node as Node)) return;
  const o = node as Node;
  for (const key of Object.keys(o)) {
    const value = o[key] as Node | null;
    const renamedKey = key.startsWith('?') && names.has(key.slice(1)) ? `?${names.get(key.slice(1))}` : key;
    const renamed = value && typeof value === 'object' && value.termType === 'Variable' && names.has(value.value as string) ? DataFactory.variable(names.get(value.value as string)!) : value;
    if (renamedKey !== key) delete o[key];
    o[renamedKey] = renamed;
    if (renamed === value) renameVariables(value, names);
  }
}

/**
 * Gives the variables each sub-SELECT does not project names of their own, `?<name>_local<N>`
 * (unused in the query), innermost sub-SELECT first (module comment). `SELECT *` projects all its
 * variables. Changes `ast` in place; the answer is the same.
 * @param ast a sparqljs query
 * @returns how many variables were renamed
 */
function renameSubSelectLocals(ast: sparqljs.SparqlQuery): number {
  const used = variableNames(ast);
  const given = new Set<string>();
  let n = 0;
  const visit = (node: unknown, top: boolean): void => {
    if (Array.isArray(node)) return node.forEach((x) => visit(x, false));
    if (node === null || typeof node !== 'object' || 'termType' in (node as Node)) return;
    const o = node as Node;
    for (const v of Object.values(o)) visit(v, false);
    if (top || o.type !== 'query' || o.queryType !== 'SELECT') return;
    const keep = projected(o);
    if (!keep) return;
    const names = new Map<string, string>();
    for (const name of variableNames({ ...o, variables: [] })) {
      if (keep.has(name) || given.has(name)) continue;
      let fresh: string;
      do fresh = `${name}_local${++n}`;
      while (used.has(fresh));
      used.add(fresh);
      given.add(fresh);
      names.set(name, fresh);
    }
    if (names.size === 0) return;
    // The projection's expressions use them too: `(COUNT(?x) AS ?n)`.
    renameVariables(o, names);
  };
  visit(ast, true);
  return given.size;
}

const XSD_BOOLEAN = 'http://www.w3.org/2001/XMLSchema#boolean';

/**
 * Gives every FILTER inside an EXISTS pattern whose condition is not an operator the condition
 * `IF(condition, true, false)` (module comment). Changes `op` in place.
 * @param op algebra (sparqlalgebrajs)
 * @returns how many conditions were changed
 */
function conditionsAsOperators(op: Algebra.Operation): number {
  const factory = new Factory();
  const bool = (value: boolean) => factory.createTermExpression(factory.dataFactory.literal(String(value), factory.dataFactory.namedNode(XSD_BOOLEAN)));
  const asOperator = (e: Algebra.Expression): Algebra.Expression => (e.expressionType === 'operator' ? e : factory.createOperatorExpression('if', [e, bool(true), bool(false)]));
  let n = 0;
  const visit = (node: unknown, inside: boolean): void => {
    if (Array.isArray(node)) return node.forEach((x) => visit(x, inside));
    if (node === null || typeof node !== 'object' || 'termType' in (node as Node)) return;
    const o = node as { type?: string; expressionType?: string; input?: unknown; expression?: Algebra.Expression };
    if (o.type === 'expression' && o.expressionType === 'existence') return visit(o.input, true);
    if (o.type === 'filter' && inside) {
      const changed = asOperator(o.expression!);
      if (changed !== o.expression) n++;
      o.expression = changed;
    }
    for (const [k, v] of Object.entries(o)) if (k !== 'metadata') visit(v, inside);
  };
  visit(op, false);
  return n;
}

/**
 * A query as the algebra Comunica evaluates: parsed (`parseSparql`: long queries on the parser
 * thread, a query nesting deeper than the operator depth limit refused), IRIs fixed, EXISTS patterns
 * grouped, sub-SELECT locals renamed, translated as Comunica's own SPARQL parser does (`quads: true`,
 * `blankToVariable: true`: @comunica/actor-query-parse-sparql 4.5.0), FILTER conditions inside
 * EXISTS as operators (module comment).
 * @param query SPARQL 1.1 query text (prefixes declared in it)
 * @returns the algebra of the query
 * @throws Error when the text does not parse, or is an update; QueryTooComplex beyond the operator depth limit
 */
export function comunicaAlgebra(query: string): Algebra.Operation {
  // The text fkgqa hands on brackets every arithmetic operator (generate.ts): the served bracket limit.
  const ast = parseSparql(query, { maxQueryDepth: MAX_SERVED_QUERY_DEPTH });
  if (ast.type !== 'query') throw new Error('SPARQL Update is refused: a federation engine only answers queries');
  fixIris(ast);
  groupExistsPatterns(ast);
  renameSubSelectLocals(ast);
  const op = translate(ast, { quads: true, blankToVariable: true });
  conditionsAsOperators(op);
  return op;
}
