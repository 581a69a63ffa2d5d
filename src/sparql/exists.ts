/**
 * FILTER (NOT) EXISTS as a federation engine evaluates it: the EXISTS of a SERVICE-explicit query
 * outside every SERVICE clause, which the engine (not an endpoint) evaluates once per solution by
 * putting the solution's values into the pattern (SPARQL 1.1's `substitute`, section 18.6), where
 * the unsharded graph (oxigraph) evaluates the pattern starting from the solution instead. Both
 * agree but for a few shapes; this module finds those an engine cannot answer as the unsharded
 * graph does (refused, with what to write instead) and rewrites those it can into a form both
 * engines answer right. docs/federation.md ("Shapes around SERVICE") lists each with its reason.
 */
import { DataFactory } from 'n3';
import { type Algebra, translate } from 'sparqlalgebrajs';
import type sparqljs from 'sparqljs';

type Node = Record<string, unknown>;

const isExists = (o: Node) => o.type === 'operation' && (o.operator === 'exists' || o.operator === 'notexists');

/**
 * Calls `visit` on every object of a sparqljs AST that a federation engine evaluates itself: all
 * but the bodies of SERVICE clauses (the SERVICE clause itself is visited). Terms are not visited.
 * `visit` returning false skips the object's children.
 */
export function visitOutsideServices(node: unknown, visit: (o: Node) => boolean | void): void {
  if (Array.isArray(node)) return node.forEach((x) => visitOutsideServices(x, visit));
  if (node === null || typeof node !== 'object') return;
  const o = node as Node;
  if ('termType' in o) return;
  if (visit(o) === false || o.type === 'service') return;
  for (const v of Object.values(o)) visitOutsideServices(v, visit);
}

/** Every object of an AST (SERVICE bodies included), terms aside. */
function visitAll(node: unknown, visit: (o: Node) => boolean | void): void {
  if (Array.isArray(node)) return node.forEach((x) => visitAll(x, visit));
  if (node === null || typeof node !== 'object') return;
  const o = node as Node;
  if ('termType' in o) return;
  if (visit(o) === false) return;
  for (const v of Object.values(o)) visitAll(v, visit);
}

/** Names of the variables that occur in a part of an AST (VALUES keys included), `skip` and its contents left out. */
function variablesIn(node: unknown, skip?: unknown, out = new Set<string>()): Set<string> {
  if (node === skip) return out;
  if (Array.isArray(node)) {
    for (const x of node) variablesIn(x, skip, out);
    return out;
  }
  if (node === null || typeof node !== 'object') return out;
  const o = node as Node;
  if (o.termType === 'Variable') {
    out.add(o.value as string);
    return out;
  }
  if ('termType' in o) return out;
  for (const [k, v] of Object.entries(o)) {
    if (k.startsWith('?')) out.add(k.slice(1));
    variablesIn(v, skip, out);
  }
  return out;
}

/**
 * Why a federation engine would not answer an EXISTS of this query as the unsharded graph does,
 * with what to write instead; undefined when it would. Two shapes, inside an EXISTS or NOT EXISTS
 * that the engine evaluates (outside every SERVICE clause), SERVICE bodies inside it included:
 * - a MINUS: the solution's values put into both of its sides, it may share no variable any more and
 *   remove nothing, where the unsharded graph removes (Comunica, and both engines for a MINUS first
 *   in the group);
 * - a BIND to a variable the query uses outside the EXISTS: the engines drop or keep it differently
 *   (Comunica drops it, Jena compares).
 * And an EXISTS in ORDER BY that cannot be moved into a BIND (`existsInOrderProblem`).
 * @param ast a parsed SPARQL query (sparqljs)
 */
export function existsShapeProblem(ast: sparqljs.SparqlQuery): string | undefined {
  let problem: string | undefined;
  visitOutsideServices(ast, (o) => {
    if (problem || !isExists(o)) return;
    const word = o.operator === 'exists' ? 'EXISTS' : 'NOT EXISTS';
    const outer = variablesIn(ast, o);
    visitAll(o.args, (x) => {
      if (problem) return false;
      if (x.type === 'minus') {
        problem =
          `MINUS inside FILTER ${word} is refused: a federation engine puts each solution's values into the pattern of FILTER ${word} (SPARQL 1.1's substitution), ` +
          'so the MINUS may share no variable any more and remove nothing, where the unsharded graph removes; nothing was sent. ' +
          `Write FILTER NOT EXISTS { … } in place of MINUS { … } inside the FILTER ${word}`;
      } else if (x.type === 'bind' && outer.has((x.variable as { value: string }).value)) {
        const v = (x.variable as { value: string }).value;
        problem =
          `BIND(… AS ?${v}) inside FILTER ${word} assigns ?${v}, which the query also uses outside it: the federation engines and the unsharded graph disagree on what that means; nothing was sent. ` +
          `Bind a new variable and compare it: BIND(… AS ?${v}2) FILTER(?${v}2 = ?${v})`;
      }
    });
  });
  return problem ?? existsInOrderProblem(ast);
}

/** Variables named `?fkgqa_exists<N>`: the BINDs this module adds (N counts from 1, past any such name in the query). */
const BOUND_PREFIX = 'fkgqa_exists';

/** The SELECT queries of an AST that an engine evaluates: the top level and sub-SELECTs outside SERVICE bodies. */
function engineSelects(ast: sparqljs.SparqlQuery): sparqljs.SelectQuery[] {
  const out: sparqljs.SelectQuery[] = [];
  visitOutsideServices(ast, (o) => {
    if (o.type === 'query' && o.queryType === 'SELECT') out.push(o as unknown as sparqljs.SelectQuery);
  });
  return out;
}

/**
 * Calls `found(holder, key)` for every EXISTS directly at `holder[key]` in `node`, not looking into
 * sub-SELECTs, SERVICE clauses or EXISTS patterns; `inside` says whether to take only those inside
 * an aggregate (true) or only those outside aggregates (false).
 */
function existsAt(node: unknown, inAggregate: boolean, found: (holder: Node, key: string) => void, inside = false): void {
  if (Array.isArray(node)) {
    node.forEach((x, i) => (x && typeof x === 'object' && isExists(x as Node) ? inside === inAggregate && found(node as unknown as Node, String(i)) : existsAt(x, inAggregate, found, inside)));
    return;
  }
  if (node === null || typeof node !== 'object' || 'termType' in (node as Node)) return;
  const o = node as Node;
  if (o.type === 'query' || o.type === 'service' || isExists(o)) return;
  const now = inside || o.type === 'aggregate';
  for (const [k, v] of Object.entries(o)) {
    if (v && typeof v === 'object' && !Array.isArray(v) && isExists(v as Node)) {
      if (now === inAggregate) found(o, k);
    } else existsAt(v, inAggregate, found, now);
  }
}

/** Whether a query groups: GROUP BY, HAVING, or an aggregate among its SELECT expressions. */
function groups(query: sparqljs.SelectQuery): boolean {
  let aggregate = false;
  visitOutsideServices(query.variables, (o) => {
    if (o.type === 'aggregate') aggregate = true;
    return o.type !== 'query';
  });
  return aggregate || (query.group?.length ?? 0) > 0 || (query.having?.length ?? 0) > 0;
}

/**
 * Why an EXISTS in ORDER BY (outside an aggregate) cannot be moved into a BIND
 * (`bindExistsOutOfOrderAndAggregates`): in a query that groups, the key is a group's, not a
 * solution's. Undefined when every one can.
 * @param ast a parsed SPARQL query (sparqljs)
 */
function existsInOrderProblem(ast: sparqljs.SparqlQuery): string | undefined {
  for (const query of engineSelects(ast)) {
    let found = false;
    existsAt(query.order ?? [], false, () => (found = true));
    if (!found) continue;
    if (!groups(query)) continue;
    return (
      'ORDER BY with EXISTS { … } is refused in a query that groups or aggregates: the federation engines do not order groups by it as the unsharded graph does; nothing was sent. ' +
      'Group in a sub-SELECT and bind it after: SELECT … WHERE { { SELECT … GROUP BY … } BIND(EXISTS { … } AS ?e) } ORDER BY ?e'
    );
  }
  return undefined;
}

/**
 * Moves every EXISTS out of aggregates and ORDER BY into a BIND at the end of the WHERE clause of
 * its (sub-)query, so that engines evaluate it once per solution, as in a FILTER: Jena 4.5
 * evaluates an EXISTS inside an aggregate (`SUM(IF(EXISTS { … }, 1, 0))`) without its SERVICE
 * clauses (always false, no request sent), and one in ORDER BY gives no rows at all.
 * `ORDER BY DESC(EXISTS { … })` becomes `BIND(EXISTS { … } AS ?fkgqa_existsN)` and
 * `ORDER BY DESC(?fkgqa_existsN)` (the same order), an aggregate's `EXISTS { … }` the same (the
 * same value per solution); a `SELECT *` whose ORDER BY has one then names the variables it
 * projected (sparqlalgebrajs's in-scope variables), so that the new one is not answered. ORDER BY
 * keys that `existsInOrderProblem` names are left as they are.
 * SERVICE bodies are left as they are (their endpoint evaluates them). Changes `ast` in place.
 * @param ast a parsed SPARQL query (sparqljs)
 * @returns how many EXISTS were moved
 */
export function bindExistsOutOfOrderAndAggregates(ast: sparqljs.SparqlQuery): number {
  let n = 0;
  for (const v of variablesIn(ast)) {
    const m = new RegExp(`^${BOUND_PREFIX}(\\d+)$`).exec(v);
    if (m) n = Math.max(n, Number(m[1]));
  }
  const first = n;
  for (const query of engineSelects(ast)) {
    const binds: sparqljs.BindPattern[] = [];
    const move = (holder: Node, key: string) => {
      const variable = DataFactory.variable(`${BOUND_PREFIX}${++n}`) as unknown as sparqljs.VariableTerm;
      binds.push({ type: 'bind', variable, expression: holder[key] as sparqljs.Expression });
      holder[key] = variable;
    };
    existsAt([query.variables, query.having ?? [], query.order ?? []], true, move);
    if (!groups(query)) {
      const before = binds.length;
      existsAt(query.order ?? [], false, move);
      if (binds.length > before && query.variables.some((v) => (v as { termType?: string }).termType === 'Wildcard')) {
        // SELECT *: the variables it projects, before the BIND adds one (the algebra's projection of the query without ORDER BY).
        const { order: _order, limit: _limit, offset: _offset, ...bare } = query;
        let algebra = translate({ ...bare, type: 'query', prefixes: {} } as sparqljs.SelectQuery, { quads: false });
        while (algebra.type !== 'project' && 'input' in algebra && !Array.isArray(algebra.input)) algebra = algebra.input as Algebra.Operation;
        query.variables = (algebra as Algebra.Project).variables.map((v) => DataFactory.variable(v.value) as unknown as sparqljs.VariableTerm);
      }
    }
    if (binds.length > 0) query.where = [...(query.where ?? []), ...binds];
  }
  return n - first;
}
