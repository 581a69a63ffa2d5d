/**
 * Query shapes that Virtuoso (Open Source 7.2) answers with other rows than SPARQL 1.1 whatever
 * the data, rewritten to an equal query it answers faithfully, or refused as a limit of the store
 * (the caller's refusal, answered 500). Applied to the parsed query before the rewrites of
 * virtuoso-query.ts (which gives `||`, `&&`, `!` and IN with a variable member outside a FILTER's
 * top their three-valued meaning):
 *
 * - **A VALUES block in a UNION branch.** Virtuoso loses the rows of a branch holding a VALUES
 *   block (`{ VALUES ?o { 1 } } UNION { VALUES ?o { 2 } }` answers no row). Such a branch is sent
 *   as a sub-query `{ SELECT * WHERE { … } }`: the same solutions (a branch is evaluated on its own,
 *   SPARQL 1.1 §18.2.2), which Virtuoso answers. A branch whose VALUES hold a boolean is refused
 *   (Virtuoso answers it as 0 or 1, and the column mixes it with the other branches' terms).
 *   So is one inside `GRAPH ?g` (inside MINUS, EXISTS, NOT EXISTS: any VALUES), or naming a variable not bound in the
 *   branch (a FILTER on an outer variable): Virtuoso answers the sub-query there otherwise than SPARQL.
 * - **MINUS sharing no variable.** A MINUS whose in-scope variables (§18.2.1: not those of a FILTER,
 *   EXISTS, a nested MINUS, nor a sub-SELECT not projecting them) are disjoint from those of the
 *   patterns before it removes no solution (§18.5, Minus: only compatible solutions with a shared
 *   variable remove one); Virtuoso removes every one. Such a MINUS is dropped.
 * - **MINUS of a sub-SELECT.** Virtuoso removes every solution when the right side of a MINUS is a
 *   sub-SELECT (`VALUES ?c { 1 2 } MINUS { SELECT (?y AS ?c) WHERE { VALUES ?y { 1 } } }`: no row).
 *   One of variables and aliases of variables is sent as its pattern, renamed (`minusOfSubSelect`).
 * - **VALUES, BIND and other sub-SELECTs on the right side of a MINUS; VALUES in EXISTS.** Virtuoso
 *   removes every solution there, or none (`?s a ?t MINUS { VALUES ?s { <a> } }` removes none;
 *   `FILTER EXISTS { VALUES ?s { <a> } }` keeps none): refused (`minusRightSide`).
 * - **Aggregate without GROUP BY, with ORDER BY or LIMIT.** Virtuoso orders and limits the rows
 *   before aggregating them; the one row of the aggregate is the same without them: dropped
 *   (`oneRowModifiers`).
 * - **EXISTS or NOT EXISTS of a FILTER only.** Virtuoso evaluates `EXISTS { FILTER(?s = 2) }`
 *   without the bindings of the solution tested: refused.
 * - **OPTIONAL of BIND and FILTER only.** Virtuoso keeps the BIND of `OPTIONAL { BIND(3 AS ?y)
 *   FILTER(?x = 7) }` where the filter is false: refused.
 * - **NOT IN with a variable member in a FILTER.** Virtuoso takes an unbound member for a mismatch
 *   (`NOT IN` true) where SPARQL gives an error: in the `&&`/`||` tree of a FILTER (where an error and
 *   false drop the same solutions) `a NOT IN (b, c)` is sent as `a != b && a != c` (its definition,
 *   SPARQL 1.1 §17.4.1.10).
 * - **Tests of an unbound variable.** `isIRI(?y)`, `REGEX(?y, …)`, `sameTerm(?y, 5)`, … of an unbound
 *   ?y are false in Virtuoso (their negation true), an error in SPARQL (§17.2): in a graph pattern
 *   and an ungrouped projection, a negated one is sent as `IF(BOUND(?y), !f(?y), ?fkgqa_error)`, and
 *   one outside the `&&`/`||` of a FILTER (where an error and false drop the same solutions) as
 *   `IF(BOUND(?y), f(?y), ?fkgqa_error)` (arguments that are variables and constants only).
 * - **sameTerm with a simple literal or an integer.** Virtuoso finds no stored string sameTerm as a
 *   simple literal constant, nor a VALUES integer joined through OPTIONAL as the same integer
 *   constant: `sameTerm(?o, "s")` is sent as `isLiteral(?o) && DATATYPE(?o) = xsd:string && STR(?o)
 *   = "s"`, `sameTerm(?o, 5)` likewise with xsd:integer and "5" (the same terms: a literal of that
 *   datatype and lexical form; an integer constant in canonical form only); `sameTerm(?o, "s"@en)`
 *   (Virtuoso also true of "s") as `isLiteral(?o) && LCASE(LANG(?o)) = "en" && STR(?o) = "s"`. Only
 *   against a variable: sameTerm of an expression is sent as written.
 * - **String functions of constants.** `STR` of a string, an IRI or an integer (its canonical form),
 *   `LCASE`, `UCASE` (ASCII) and `CONCAT` of string constants (keeping the language tag they share,
 *   §17.4.3.12) are computed before sending (`?o > STR("a")` is `?o > "a"`), so that the comparisons
 *   with a string constant are rewritten, or refused in a grouped query, as such. `STR` of a decimal,
 *   double or float constant (Virtuoso: "1.0" for `STR(1.0e0)`) and a comparison with a string
 *   function of constants left uncomputed (`?o > UCASE("é")`) are refused.
 * - **GROUP_CONCAT** of anything but `STR(…)`: Virtuoso concatenates numbers and IRIs (SPARQL: an
 *   error, unbound) and drops a common language tag (oxigraph keeps it): refused.
 */
import { RDF, XSD } from '../common/vocab.js';
import { sparqljsLib } from '../sparql/parse.js';

type Node = Record<string, unknown>;
const isNode = (x: unknown): x is Node => x !== null && typeof x === 'object';
/** An operation written by this module, marked by the caller as its own (its tests are Virtuoso's two-valued ones, not rewritten again). */
const operation = (operator: string, args: unknown[]): Node => context.operation(operator, args);
const STRING = `${XSD}string`;
/** The datatypes of the numbers whose canonical form Virtuoso writes otherwise (`STR(1.0e0)` is "1.0"; SPARQL "1.0E0", oxigraph "1"). */
const INEXACT_NUMBERS = new Set([`${XSD}decimal`, `${XSD}double`, `${XSD}float`]);
/** The comparison operators (SPARQL 1.1 §17.3). */
const COMPARISONS = new Set(['=', '!=', '<', '>', '<=', '>=']);

/** The words closing every refusal of this module. */
const REFUSED = 'its answer would be wrong; this store does not answer it (an oxigraph-backed serve does)';

/** Boolean-valued built-ins whose negation Virtuoso takes for true when an argument is unbound (module comment). */
const NEGATED_TESTS = new Set(['isiri', 'isuri', 'isblank', 'isliteral', 'isnumeric', 'regex', 'sameterm', 'langmatches', 'contains', 'strstarts', 'strends']);

/** True for a simple literal constant (no language tag; xsd:string). */
const isSimpleLiteral = (x: unknown): x is Node => isNode(x) && x.termType === 'Literal' && !x.language && [undefined, STRING].includes((x.datatype as { value?: string } | undefined)?.value);

/** True for a literal constant with a language tag. */
const isLangLiteral = (x: unknown): x is Node => isNode(x) && x.termType === 'Literal' && typeof x.language === 'string' && x.language !== '';

const simpleLiteral = (value: string): Node => ({ termType: 'Literal', value, language: '', datatype: { termType: 'NamedNode', value: STRING } });

/** True for a simple literal or an xsd:integer in canonical form: sameTerm with it is a test of datatype and lexical form (module comment). */
const isSameTermConstant = (x: unknown): x is Node =>
  isSimpleLiteral(x) || (isNode(x) && x.termType === 'Literal' && (x.datatype as Node | undefined)?.value === `${XSD}integer` && /^(0|-?[1-9]\d*)$/.test(x.value as string));

/** True for an RDF term constant (IRI or literal). */
const isConstant = (x: unknown): boolean => isNode(x) && (x.termType === 'Literal' || x.termType === 'NamedNode');

/** The names of every variable written in a node (patterns, expressions, sub-queries), a superset of its in-scope variables. */
function variablesOf(node: unknown, out = new Set<string>(), seen = new Set<unknown>()): Set<string> {
  if (!isNode(node) || seen.has(node)) return out;
  seen.add(node);
  if (node.termType === 'Variable') out.add(node.value as string);
  else if (typeof node.termType !== 'string') for (const v of Object.values(node)) variablesOf(v, out, seen);
  // VALUES rows name their variables as keys (`?x`).
  if (node.type === 'values' && Array.isArray(node.values)) for (const row of node.values as Record<string, unknown>[]) for (const k of Object.keys(row)) out.add(k.replace(/^\?/, ''));
  return out;
}

/**
 * The in-scope variables of a graph pattern or a list of a group's elements (SPARQL 1.1 §18.2.1): those
 * of its triple patterns, BIND, VALUES, GRAPH, OPTIONAL and UNION; the projection of a sub-SELECT; not
 * those of a FILTER, of EXISTS, nor of the right side of a MINUS. Used for the MINUS that shares no
 * variable, UNION branches naming outer variables, and the columns of `SELECT *` (virtuoso-query.ts).
 * @param node a pattern, a list of a group's elements, or a sub-SELECT (sparqljs)
 * @param out filled and returned: the variables' names, without `?`
 */
export function inScope(node: unknown, out = new Set<string>()): Set<string> {
  if (Array.isArray(node)) {
    for (const p of node) inScope(p, out);
    return out;
  }
  if (!isNode(node)) return out;
  const term = (t: unknown) => {
    if (isNode(t) && t.termType === 'Variable') out.add(t.value as string);
    else if (isNode(t) && t.termType === 'Quad') for (const k of ['subject', 'predicate', 'object']) term(t[k]);
  };
  switch (node.type) {
    case 'bgp':
      for (const t of node.triples as Node[]) for (const k of ['subject', 'predicate', 'object']) term(t[k]);
      break;
    case 'bind':
      term(node.variable);
      break;
    case 'values':
      for (const row of node.values as Record<string, unknown>[]) for (const k of Object.keys(row)) out.add(k.replace(/^\?/, ''));
      break;
    case 'graph':
    case 'service':
      term(node.name);
      inScope(node.patterns, out);
      break;
    case 'group':
    case 'optional':
    case 'union':
      inScope(node.patterns, out);
      break;
    case 'query':
      for (const item of node.variables as Node[]) {
        if (item.termType === 'Variable') term(item);
        else if (isNode(item.variable)) term(item.variable);
        else if (item.termType === 'Wildcard' || item.value === '*') inScope(node.where, out);
      }
      break;
    default:
      // filter, minus (its right side), and anything else: no in-scope variable.
      break;
  }
  return out;
}

/** True when the VALUES blocks of a pattern hold a boolean constant. */
function holdsBoolean(node: unknown): boolean {
  if (Array.isArray(node)) return node.some(holdsBoolean);
  if (!isNode(node)) return false;
  if (node.termType === 'Literal') return (node.datatype as Node | undefined)?.value === `${XSD}boolean`;
  if (typeof node.termType === 'string') return false;
  return node.type === 'values' ? (node.values as Record<string, unknown>[]).some((row) => Object.values(row).some(holdsBoolean)) : Object.values(node).some(holdsBoolean);
}

/** True when a pattern holds a VALUES block (its sub-queries included). */
function holdsValues(node: unknown): boolean {
  if (Array.isArray(node)) return node.some(holdsValues);
  if (!isNode(node) || typeof node.termType === 'string') return false;
  return node.type === 'values' || Object.values(node).some(holdsValues);
}

/** What virtuosoShapes needs of its caller. */
export interface ShapeContext {
  /** Filled with the projected variables whose expression was turned into an `IF` (read back from Virtuoso's 0/1 as booleans). */
  booleanVars: Set<string>;
  /** The error thrown for a shape refused, given the words naming the construct (the store's limit: a 500). */
  refuse: (why: string) => Error;
  /** A variable never bound (an error in every expression, SPARQL §17.2). */
  errorVariable: string;
  /** Makes an operation node `{type: 'operation', operator, args}` the caller knows as written by the store, not the client. */
  operation: (operator: string, args: unknown[]) => Node;
}

let context: ShapeContext;
/** The construct enclosing the patterns walked whose evaluation depends on outer solutions (MINUS, EXISTS, GRAPH ?variable), or undefined. */
let enclosing: string | undefined;

/** Runs `walk` with `construct` as the enclosing construct (the outermost one kept). */
function within(construct: string, walk: () => void): void {
  const saved = enclosing;
  enclosing ??= construct;
  try {
    walk();
  } finally {
    enclosing = saved;
  }
}

/**
 * Rewrites or refuses the shapes Virtuoso answers wrongly (module comment), in place.
 * @param ast the parsed query (sparqljs), its IRIs fixed and its `*` sparqljs Wildcards
 * @throws `refuse(…)` naming the construct, for a shape refused
 */
export function virtuosoShapes(ast: unknown, shapeContext: ShapeContext): void {
  context = shapeContext;
  enclosing = undefined;
  visit(ast, shapeContext.booleanVars, true);
}

/** Walks a query or a sub-query: its patterns, then its projection (as a graph pattern where ungrouped). */
function visit(node: unknown, booleanVars: Set<string>, inPattern: boolean, seen = new Set<unknown>()): void {
  if (!isNode(node) || seen.has(node) || typeof node.termType === 'string') return;
  seen.add(node);
  if (Array.isArray(node)) {
    patterns(node, booleanVars, inPattern, seen);
    return;
  }
  if (node.type === 'query') {
    const grouped = node.group !== undefined || hasAggregate(node.variables) || hasAggregate(node.having) || hasAggregate(node.order);
    if (node.group === undefined && (hasAggregate(node.variables) || hasAggregate(node.having))) oneRowModifiers(node);
    if (Array.isArray(node.where)) patterns(node.where as unknown[], booleanVars, true, seen);
    if (Array.isArray(node.variables))
      for (const item of node.variables as Node[]) {
        if (!('expression' in item)) continue;
        const before = item.expression;
        item.expression = expression(item.expression, grouped ? 'grouped' : 'pattern', booleanVars, seen);
        if (before !== item.expression && isNode(item.expression) && item.expression.operator === 'if') booleanVars.add((item.variable as Node).value as string);
      }
    for (const key of ['having', 'order', 'group'] as const) if (node[key] !== undefined) node[key] = expression(node[key], 'grouped', booleanVars, seen);
    return;
  }
  for (const v of Object.values(node)) visit(v, booleanVars, inPattern, seen);
}

/** Rewrites one list of graph patterns (a group's elements) in place. */
function patterns(list: unknown[], booleanVars: Set<string>, inPattern: boolean, seen: Set<unknown>): void {
  for (let i = 0; i < list.length; i++) {
    const p = list[i];
    if (!isNode(p)) continue;
    if (p.type === 'minus') {
      const flat = minusOfSubSelect(p.patterns as unknown[]);
      if (flat) p.patterns = flat;
      const before = inScope(list.slice(0, i));
      if (![...inScope(p.patterns)].some((v) => before.has(v))) {
        list.splice(i--, 1);
        continue;
      }
      const unanswered = minusRightSide(p.patterns);
      if (unanswered) throw context.refuse(`${unanswered} on the right side of a MINUS: Virtuoso removes other solutions than SPARQL there (every one, or none); ${REFUSED}`);
    }
    if (p.type === 'union')
      p.patterns = (p.patterns as Node[]).map((branch) => {
        if (!holdsValues(branch)) return branch;
        if (holdsBoolean(branch))
          throw context.refuse(
            `a boolean of a VALUES block in a UNION branch: Virtuoso answers it as the integer 0 or 1, and the column cannot be read back as booleans beside the other branches' terms; ${REFUSED}`,
          );
        if (enclosing)
          throw context.refuse(`a VALUES block in a UNION branch inside ${enclosing}: Virtuoso loses the rows of such a branch, and answers it as a sub-query there otherwise than SPARQL; ${REFUSED}`);
        const outer = [...variablesOf(branch)].filter((v) => !inScope(branch).has(v));
        if (outer.length > 0)
          throw context.refuse(
            `a VALUES block in a UNION branch naming a variable not bound in the branch (?${outer.sort().join(', ?')}): Virtuoso loses the rows of such a branch, and answers it as a sub-query otherwise than SPARQL; ${REFUSED}`,
          );
        return asSubQuery(branch);
      });
    if (p.type === 'optional') {
      const elements = p.patterns as Node[];
      if (elements.every((e) => e.type === 'bind' || e.type === 'filter') && elements.some((e) => e.type === 'bind') && elements.some((e) => e.type === 'filter'))
        throw context.refuse(`an OPTIONAL of BIND and FILTER only (\`OPTIONAL { BIND(… AS ?y) FILTER(…) }\`): Virtuoso keeps the BIND where the FILTER is false; ${REFUSED}`);
    }
    const position = p.type === 'minus' ? 'a MINUS' : p.type === 'graph' && isNode(p.name) && p.name.termType === 'Variable' ? 'GRAPH ?variable' : undefined;
    if (p.type === 'filter') p.expression = expression(p.expression, 'filter', booleanVars, seen);
    else if (position) within(position, () => visit(p, booleanVars, inPattern, seen));
    else if (p.type === 'bind') {
      const before = p.expression;
      p.expression = expression(p.expression, 'pattern', booleanVars, seen);
      if (before !== p.expression && isNode(p.expression) && p.expression.operator === 'if') booleanVars.add((p.variable as Node).value as string);
    } else visit(p, booleanVars, inPattern, seen);
  }
}

/** Prefix of the variables a MINUS of a sub-SELECT renames its unprojected variables to (fresh: no query of the benchmark names one). */
export const MINUS_PREFIX = 'fkgqa_minus_';

/**
 * The right side of a MINUS that is one sub-SELECT projecting variables and aliases of variables
 * (`MINUS { SELECT ?a (?y AS ?c) WHERE { P } }`; `SELECT *`: its in-scope variables), as the pattern P with ?y renamed ?c and every other
 * variable not projected renamed `?fkgqa_minus_…`; undefined for any other right side (left as written).
 * The same MINUS (SPARQL 1.1 §18.5: a solution is removed by a compatible one sharing a variable; the
 * renamed variables occur nowhere else, so only the projected ones are shared or compared, and
 * duplicates do not matter). Virtuoso removes every solution with a sub-SELECT there (`VALUES ?c { 1 2 }
 * MINUS { SELECT ?c WHERE { VALUES ?c { 1 } } }`: no row; SPARQL: 2) or an alias or BIND on its right side.
 * Only a sub-SELECT without GROUP BY, aggregate, HAVING, LIMIT, OFFSET, VALUES or FROM, and whose alias
 * sources are distinct variables not projected as themselves.
 */
function minusOfSubSelect(right: unknown[]): unknown[] | undefined {
  let q = right.length === 1 ? right[0] : undefined;
  if (isNode(q) && q.type === 'group' && Array.isArray(q.patterns) && q.patterns.length === 1) q = q.patterns[0];
  if (!isNode(q) || q.type !== 'query' || q.queryType !== 'SELECT' || !Array.isArray(q.where) || !Array.isArray(q.variables)) return undefined;
  if (['group', 'having', 'limit', 'offset', 'values', 'from'].some((k) => q[k] !== undefined && !(Array.isArray(q[k]) && q[k].length === 0)) || hasAggregate(q.variables)) return undefined;
  if (isNode(q.from) && Object.values(q.from).some((v) => Array.isArray(v) && v.length > 0)) return undefined;
  const rename = new Map<string, string>();
  const projected = new Set<string>();
  for (const item of q.variables as Node[]) {
    if (item.termType === 'Variable') projected.add(item.value as string);
    else if (item.termType === 'Wildcard') for (const v of inScope(q.where)) projected.add(v);
    else if (isNode(item.expression) && item.expression.termType === 'Variable' && isNode(item.variable)) {
      const source = item.expression.value as string;
      if (rename.has(source)) return undefined;
      rename.set(source, item.variable.value as string);
    } else return undefined;
  }
  // An alias naming a variable of the pattern is no valid sub-SELECT (SPARQL 1.1 §18.2.1).
  const written = variablesOf(q.where);
  if ([...rename.keys()].some((v) => projected.has(v)) || [...rename.values()].some((v) => written.has(v))) return undefined;
  for (const v of written) if (!projected.has(v) && !rename.has(v)) rename.set(v, MINUS_PREFIX + v);
  return renamed(q.where, rename) as unknown[];
}

/**
 * What the right side of a MINUS holds that Virtuoso answers wrongly there, or undefined: a VALUES
 * block (`?s a ?t MINUS { VALUES ?s { <a> } }` removes no solution; with a FILTER beside it, every
 * one), a BIND (`MINUS { ?b ?p ?z BIND(1998 AS ?y) }`: every one), or a sub-SELECT that
 * `minusOfSubSelect` does not send as its pattern (with LIMIT, OFFSET, GROUP BY, an aggregate, or
 * inside other patterns: every one). A nested MINUS of a sub-SELECT is sent as its pattern first.
 * @param right the right side's elements (sparqljs), nested MINUS rewritten in place
 * @returns the words naming the construct
 */
function minusRightSide(right: unknown): string | undefined {
  if (Array.isArray(right)) {
    for (const p of right) {
      const found = minusRightSide(p);
      if (found) return found;
    }
    return undefined;
  }
  if (!isNode(right) || typeof right.termType === 'string') return undefined;
  if (right.type === 'minus') {
    const flat = minusOfSubSelect(right.patterns as unknown[]);
    if (flat) right.patterns = flat;
  }
  if (right.type === 'values') return 'a VALUES block';
  if (right.type === 'bind') return 'a BIND';
  if (right.type === 'query') return 'a sub-SELECT with LIMIT, OFFSET, GROUP BY, HAVING, an aggregate or an expression, or beside other patterns';
  // A FILTER's expression: its EXISTS patterns are refused apart (`expression`).
  if (right.type === 'filter') return undefined;
  return minusRightSide(Object.values(right));
}

/** A copy of a pattern with its variables renamed (a simultaneous substitution: `from` name to `to` name). */
function renamed(node: unknown, rename: Map<string, string>): unknown {
  if (Array.isArray(node)) return node.map((x) => renamed(x, rename));
  if (!isNode(node)) return node;
  if (node.termType === 'Variable') return rename.has(node.value as string) ? { termType: 'Variable', value: rename.get(node.value as string) } : node;
  if (typeof node.termType === 'string' || node instanceof sparqljsLib().Wildcard) return node;
  const copy: Node = Object.create(Object.getPrototypeOf(node) as object) as Node;
  for (const [k, v] of Object.entries(node)) copy[k] = renamed(v, rename);
  // VALUES rows name their variables as keys (`?x`).
  if (node.type === 'values' && Array.isArray(copy.values))
    copy.values = (copy.values as Record<string, unknown>[]).map((row) => Object.fromEntries(Object.entries(row).map(([k, v]) => [`?${rename.get(k.replace(/^\?/, '')) ?? k.replace(/^\?/, '')}`, v])));
  return copy;
}

/**
 * Drops the ORDER BY and a LIMIT of one or more (without OFFSET) of a query aggregating without GROUP BY,
 * in place: its solutions are one group, so at most one row (SPARQL 1.1 §18.2.4.1), which neither
 * changes. Virtuoso applies them to the rows before aggregating (`SELECT (COUNT(*) AS ?c) WHERE {
 * VALUES ?x { 1 2 3 } } LIMIT 1`: 1; SPARQL: 3).
 */
function oneRowModifiers(query: Node): void {
  delete query.order;
  if (typeof query.limit === 'number' && query.limit >= 1 && !query.offset) delete query.limit;
}

/** A UNION branch as the group `{ SELECT * WHERE { branch } }`. */
function asSubQuery(branch: Node): Node {
  const where = branch.type === 'group' ? branch.patterns : [branch];
  return { type: 'group', patterns: [{ type: 'query', queryType: 'SELECT', prefixes: {}, variables: [new (sparqljsLib().Wildcard)()], where }] };
}

/** True when an expression (or a projection, HAVING or ORDER BY list) holds an aggregate, in a nested sub-query too. */
export function hasAggregate(e: unknown): boolean {
  if (Array.isArray(e)) return e.some(hasAggregate);
  if (!isNode(e) || typeof e.termType === 'string') return false;
  return e.type === 'aggregate' || Object.values(e).some(hasAggregate);
}

/**
 * Rewrites one expression (module comment).
 * @param where `filter`: the root of a FILTER (its `&&`/`||` tree, where an error is false);
 *   `pattern`: elsewhere in a graph pattern or an ungrouped projection (the never-bound error variable is taken there);
 *   `grouped`: a grouped projection, HAVING, GROUP BY or ORDER BY
 */
function expression(e: unknown, where: 'filter' | 'pattern' | 'negated' | 'grouped', booleanVars: Set<string>, seen: Set<unknown>): unknown {
  if (Array.isArray(e)) return e.map((x) => expression(x, where, booleanVars, seen));
  if (!isNode(e) || typeof e.termType === 'string') return e;
  if (e.type === 'aggregate') {
    const aggregation = String(e.aggregation).toLowerCase();
    const argument = e.expression;
    if (aggregation === 'group_concat' && !(isNode(argument) && argument.type === 'operation' && argument.operator === 'str'))
      throw context.refuse(
        `GROUP_CONCAT of anything but STR(…): Virtuoso concatenates numbers and IRIs (SPARQL: an error, unbound) and drops a language tag the values share (write GROUP_CONCAT(STR(…))); ${REFUSED}`,
      );
    e.expression = expression(argument, 'grouped', booleanVars, seen);
    return e;
  }
  if (e.type !== 'operation') {
    for (const [k, v] of Object.entries(e)) if (k !== 'variable') e[k] = k === 'where' || k === 'patterns' ? (visit(v, booleanVars, true, seen), v) : expression(v, where, booleanVars, seen);
    return e;
  }
  const operator = String(e.operator).toLowerCase();
  if (operator === 'exists' || operator === 'notexists') {
    const elements = (e.args as Node[]).flatMap((x) => (isNode(x) && x.type === 'group' ? (x.patterns as Node[]) : [x]));
    if (elements.length > 0 && elements.every((x) => x.type === 'filter'))
      throw context.refuse(
        `${operator === 'exists' ? 'EXISTS' : 'NOT EXISTS'} of a FILTER only (\`${operator === 'exists' ? 'EXISTS' : 'NOT EXISTS'} { FILTER(…) }\`): Virtuoso evaluates the FILTER without the bindings of the solution tested; ${REFUSED}`,
      );
    // `FILTER EXISTS { VALUES ?s { <a> } }`: Virtuoso finds no solution (NOT EXISTS: keeps every one), with a FILTER beside it the other way round.
    if (holdsValues(e.args)) throw context.refuse(`a VALUES block inside ${operator === 'exists' ? 'EXISTS' : 'NOT EXISTS'}: Virtuoso matches other solutions than SPARQL there; ${REFUSED}`);
    within(operator === 'exists' ? 'EXISTS' : 'NOT EXISTS', () => visit(e.args, booleanVars, true, seen));
    return e;
  }
  const args = e.args as unknown[];
  // `!f(?y)` of a test whose arguments are variables and constants, read before sameTerm is rewritten.
  const [first] = args as Node[];
  const negatedTest = operator === '!' && where !== 'grouped' && isNode(first) && first.type === 'operation' && NEGATED_TESTS.has(String(first.operator).toLowerCase());
  // A test itself, where its error is not taken for false (outside the &&/|| of a FILTER and a negation, which is guarded).
  const test = where === 'pattern' && NEGATED_TESTS.has(operator) ? e : negatedTest ? first : undefined;
  const testedVariables = test && (test.args as unknown[]).every((a) => isConstant(a) || (isNode(a) && a.termType === 'Variable')) ? [...variablesOf(test.args)].sort() : [];
  const inner = where === 'filter' && (operator === '&&' || operator === '||') ? 'filter' : negatedTest ? 'negated' : where === 'filter' || where === 'negated' ? 'pattern' : where;
  e.args = args.map((a) => expression(a, inner, booleanVars, seen));
  const folded = fold(operator, e.args as unknown[]);
  if (folded) return folded;
  if (COMPARISONS.has(operator) && (e.args as unknown[]).some(unfoldedString))
    throw context.refuse(
      `a comparison with a string function of constants not computed before sending (${operator}; CONCAT, LCASE or UCASE of a non-ASCII string, STR of a number): Virtuoso compares it otherwise than SPARQL; ${REFUSED}`,
    );
  let result: Node = e;
  if (operator === 'sameterm') {
    const [a, b] = e.args as unknown[];
    const isVariable = (x: unknown) => isNode(x) && x.termType === 'Variable';
    const isIri = (x: unknown): x is Node => isNode(x) && x.termType === 'NamedNode';
    const constant = isSameTermConstant(b) || isLangLiteral(b) || isIri(b) ? b : isSameTermConstant(a) || isLangLiteral(a) || isIri(a) ? a : undefined;
    const other = constant === b ? a : b;
    if (constant && isVariable(other) && isIri(constant)) {
      // The same IRI: Virtuoso's `IF(BOUND(?o), !SAMETERM(?o, <iri>), …)` removed every solution (or ran without end for an IRI it does not hold).
      result = operation('&&', [operation('isiri', [other]), operation('=', [operation('str', [other]), simpleLiteral(constant.value as string)])]);
    } else if (constant && isVariable(other) && isLangLiteral(constant)) {
      // The same term: a literal of that language tag (compared in lower case, RDF 1.1 §3.3) and lexical form.
      result = operation('&&', [
        operation('&&', [operation('isliteral', [other]), operation('=', [operation('lcase', [operation('lang', [other])]), simpleLiteral((constant.language as string).toLowerCase())])]),
        operation('=', [operation('str', [other]), simpleLiteral(constant.value as string)]),
      ]);
    } else if (constant && isVariable(other)) {
      const datatype = (constant.datatype as Node | undefined) ?? { termType: 'NamedNode', value: STRING };
      result = operation('&&', [
        operation('&&', [operation('isliteral', [other]), operation('=', [operation('datatype', [other]), { termType: 'NamedNode', value: datatype.value }])]),
        operation('=', [operation('str', [other]), simpleLiteral(constant.value as string)]),
      ]);
    }
  }
  if (testedVariables.length > 0) {
    const bound = testedVariables.map((v) => operation('bound', [{ termType: 'Variable', value: v }])).reduce((x, y) => operation('&&', [x, y]));
    return operation('if', [bound, result, { termType: 'Variable', value: context.errorVariable }]);
  }
  return result;
}

/** The string functions whose value of constants fold computes, or the comparison refuses when fold does not (module comment). */
const STRING_FUNCTIONS = new Set(['str', 'lcase', 'ucase', 'concat']);

/** True for a string literal constant: simple, xsd:string or with a language tag (the arguments of CONCAT, LCASE, UCASE, SPARQL 1.1 §17.4.3). */
const isStringLiteral = (x: unknown): x is Node => isSimpleLiteral(x) || isLangLiteral(x);

/** A string literal of a lexical form and the language tag of `like` (none for a simple literal). */
const stringLiteral = (value: string, language: string): Node =>
  language ? { termType: 'Literal', value, language, datatype: { termType: 'NamedNode', value: `${RDF}langString` } } : simpleLiteral(value);

/**
 * A string function of constants computed (module comment), or undefined: STR of a simple literal, a
 * literal with a language tag or an IRI (its lexical form; not of a number, whose lexical form the
 * store may canonicalize); LCASE and UCASE of an ASCII string literal (its language tag kept);
 * CONCAT of string literals (the language tag they all share, else a simple literal, §17.4.3.12).
 */
function fold(operator: string, args: unknown[]): Node | undefined {
  const [first] = args as Node[];
  const isIri = isNode(first) && first.termType === 'NamedNode';
  if (operator === 'str' && (isIri || isStringLiteral(first))) return simpleLiteral(first.value as string);
  // An integer's canonical form (XML Schema 1.1 Part 2 §3.4.13.2), the lexical form oxigraph keeps.
  if (operator === 'str' && isNode(first) && first.termType === 'Literal' && (first.datatype as Node | undefined)?.value === `${XSD}integer` && /^[+-]?\d+$/.test(first.value as string))
    return simpleLiteral(BigInt(first.value as string).toString());
  if (operator === 'str' && isNode(first) && first.termType === 'Literal' && INEXACT_NUMBERS.has((first.datatype as Node | undefined)?.value as string))
    throw context.refuse(`STR of a decimal, double or float constant (STR(${first.value as string})): Virtuoso writes its lexical form otherwise than SPARQL's canonical form; ${REFUSED}`);
  if (!args.every(isStringLiteral)) return undefined;
  const values = (args as Node[]).map((a) => a.value as string);
  const languages = (args as Node[]).map((a) => ((a.language as string | undefined) ?? '').toLowerCase());
  // XPath's fn:lower-case / fn:upper-case and JavaScript's agree on ASCII.
  if ((operator === 'lcase' || operator === 'ucase') && /^[\x00-\x7f]*$/.test(values[0])) return stringLiteral(operator === 'lcase' ? values[0].toLowerCase() : values[0].toUpperCase(), languages[0]);
  if (operator === 'concat') return stringLiteral(values.join(''), languages.every((l) => l === languages[0]) ? (languages[0] ?? '') : '');
  return undefined;
}

/** True for a string function of constants only that fold left as it is (CONCAT, LCASE, UCASE of non-ASCII, STR of a number, …), at any depth. */
function unfoldedString(e: unknown): boolean {
  if (!isNode(e) || e.type !== 'operation' || !STRING_FUNCTIONS.has(String(e.operator).toLowerCase())) return false;
  return (e.args as unknown[]).every((a) => isConstant(a) || unfoldedString(a));
}

/**
 * Whether Virtuoso's error answer to a query is a data exception of its evaluation (SQL state class
 * 22: `22012 SR083` division by zero, `22003 SR087` arithmetic on a string, `22007 DT001` YEAR of
 * an IRI, `22007` STRLANG with a language tag it does not know, `22005 SR341` an ill-typed VALUES
 * literal). SPARQL 1.1 never fails a whole query on an expression's error (§17.3: the expression is
 * an error for that solution, a FILTER drops it, a projection or BIND leaves it unbound), so for a
 * query that parsed as SPARQL 1.1 such an error is the store's failure (500), not the query's.
 * Compilation errors (37000) and access errors (42xxx) are not data exceptions.
 * @param body Virtuoso's error text (`Virtuoso 22012 Error SR083: …`)
 * @returns the words of the 500 naming Virtuoso's error, or undefined for any other error
 */
export function virtuosoDataException(body: string): string | undefined {
  const first = body.trim().split('\n').slice(0, 2).join(' ');
  if (!/^Virtuoso 22\w{3}\b/.test(first)) return undefined;
  return `Virtuoso failed on a data exception where SPARQL 1.1 gives an error for one solution only (an unbound value or a solution filtered out), never a failed query: ${first}; this store does not answer it (an oxigraph-backed serve does)`;
}

/**
 * Whether Virtuoso's error answer to a query is a failure of its SQL compiler (SQL state 37000
 * with an `SQ…` code: `SQ156 Internal Optimized compiler error … Bad dfe in sqlo_place_exp` over an
 * expression of a sub-SELECT's aggregate). The query parsed as SPARQL 1.1 and was rewritten by
 * this store, so a shape Virtuoso cannot compile is the store's limit (500), not the client's
 * error (400); so is a query whose compiled code exceeds Virtuoso's code vector (`42000 … SQ199:
 * Maximum size (32767) of a code vector exceeded`: a query within serve's limits, long IN lists sent
 * as one test per member). SPARQL syntax errors (`SP…`) and access errors (other 42xxx) are not.
 * @param body Virtuoso's error text (`Virtuoso 37000 Error SQ156: …`)
 * @returns the words of the 500 naming Virtuoso's error, or undefined for any other error
 */
export function virtuosoCannotCompile(body: string): string | undefined {
  const first = body.trim().split('\n').slice(0, 2).join(' ');
  if (/^Virtuoso 42000 Error SQ199/.test(first))
    return `a query larger than Virtuoso's compiled code may be (${first}): each IN member and each comparison is sent as its own test (two IN lists of 200 members are too many); this store does not answer it (an oxigraph-backed serve does)`;
  if (!/^Virtuoso 37000 Error SQ\d+/.test(first)) return undefined;
  return `a shape Virtuoso's SQL compiler fails on (${first}); this store does not answer it (an oxigraph-backed serve does)`;
}
