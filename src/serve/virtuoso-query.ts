/**
 * The query text sent to Virtuoso for one shard endpoint, and the answer read back, so that an
 * endpoint served from Virtuoso answers as the same endpoint served from oxigraph does. Virtuoso
 * (Open Source 7.2) deviates from SPARQL 1.1 in ways this module absorbs:
 *
 * - **Prefixed names.** It rejects escaped local names (`:t\#c`): the text sent is regenerated from
 *   the parsed query (sparqljs Generator) with full IRIs and no prefix declarations (sparqljs keeps the backslash of such names).
 * - **Other graphs.** One Virtuoso instance holds several shards (one named graph each) and its own
 *   system graphs: the text sent names the shard's graph as its only default graph (`FROM`), and a
 *   `GRAPH` pattern, which sees no graph on an endpoint that has only a default graph, is replaced by
 *   an empty group (`{ FILTER(false) }`), which is what oxigraph gives for it.
 * - **Integer division.** `?a / ?b` of two integers is an integer in Virtuoso, an xsd:decimal in
 *   SPARQL (§17.4.2.4 op:numeric-divide): the dividend is multiplied by `1.0` (xsd:decimal), which
 *   keeps the SPARQL type promotion (integer → decimal, double stays double).
 * - **Strings compared with numbers.** `?x > 150` with `?x` a string is a type error in SPARQL
 *   (§17.3: the solution is filtered out), and `?x = 150` false; Virtuoso casts the string and
 *   compares. A comparison of a numeric constant with anything but a literal constant is sent as
 *   `IF(isNumeric(?x), ?x > 150, ?fkgqa_error)` (a variable never bound: an error, as in SPARQL),
 *   `IF(isNumeric(?x), ?x = 150, false)`, `IF(isNumeric(?x), ?x != 150, true)`; one with a string
 *   constant the other way round (`IF(isNumeric(?x), ?fkgqa_error, ?x > '2013')`). `isNumeric(?x)`
 *   stands for `isNumber` (Virtuoso's own is true for booleans, false for INF and NaN); an `=` or `!=`
 *   is guarded by `BOUND` of its variables (`IF(BOUND(?x), …, ?fkgqa_error)`: Virtuoso takes the
 *   failed test of an unbound ?x for the fallback); IN and NOT IN are sent as `=` joined by `||`
 *   and `!=` joined by `&&` (`inAsComparisons`), but at a FILTER's top a list of IRIs, simple
 *   literals or integers only as Virtuoso's own IN (`nativeIn`: one test per member took seconds).
 *   INF, -INF and NaN of the data, which Virtuoso orders as no numbers (`-INF > 0` true), are told
 *   by `STR()` and compared as oxigraph compares them (`numberComparison`, `nonFiniteOrder`). The same in
 *   the projection of a SELECT without grouping or aggregate (`(?o > 2 AS ?big)`: unbound for a
 *   string or an IRI); a grouped projection keeps Virtuoso's comparison with a number (it refuses
 *   the variable there, and fails on `isNumeric` of an aggregate). Virtuoso compares a double
 *   with a decimal in decimal (`?x = 74.4` false for the double 74.4): the comparison with a
 *   decimal, double or float constant gets SPARQL's type promotion (`promotedComparison`).
 * - **Grouped projections and HAVING.** There, a comparison with a boolean, arithmetic on one, or a
 *   comparison with a string or another non-numeric constant would be answered otherwise than
 *   SPARQL whatever the data: such a query is refused as a limit of the store (`groupedDifference`).
 * - **Booleans compared and computed as integers.** Virtuoso takes `true` for 1 (`true > 0`,
 *   `true + 1` = 2, `?o = 1` for a stored `true`; its isNumeric takes an xsd:boolean). In a graph
 *   pattern and an ungrouped projection, the comparisons and arithmetic are sent as oxigraph
 *   evaluates them: arithmetic on a boolean-typed operand (a `true`/`false` constant, a
 *   boolean-valued operator, a variable bound to one) is the error ?fkgqa_error, and a variable
 *   operand of arithmetic is sent as `IF(isNumeric(?x) && DATATYPE(?x) != xsd:boolean, ?x,
 *   ?fkgqa_error)` (a string or a boolean is no number); a number is that same test wherever a
 *   comparison checks for one; a boolean is ordered only with an equal boolean (oxigraph: `true >=
 *   true` true, `true > false` an error); `=`/`!=` of a boolean with a number or another literal
 *   are false/true, with a term of the data compared only when it is an xsd:boolean (Virtuoso alone
 *   binds ?o to 1 for `FILTER(?o = true)`). `IN` with booleans is not rewritten.
 * - **Booleans of VALUES and negations.** The booleans of a one-row VALUES block come back as the
 *   integers 1 and 0: a column of booleans only is a boolean variable (read back, compared as one;
 *   `valuesBooleanColumns`); SUM or AVG over a column holding a boolean beside other terms is refused.
 *   `!?x` of a number or a simple literal is sent as `IF(?x, false, true)` (Virtuoso negates 0.0 and
 *   "" as true values), an error for other terms but booleans. A comparison with an error operand is
 *   the error; a negated `=`/`!=` sent as IF is `IF(BOUND(?v) && …, !e, ?fkgqa_error)` (Virtuoso's IF
 *   takes an error condition for false); an IN whose list holds a variable or an expression,
 *   outside a FILTER's top or negated, is sent as the `||` of its `=` (`truth`; Virtuoso takes an
 *   unbound member for a mismatch).
 * - **`||`, `&&`, `!` and IF with an error operand.** Virtuoso answers `error || true` with an
 *   error (SPARQL §17.2: true), `error && false` too (false), takes an error condition of IF for
 *   false, and `!` of STR(), LANG() or arithmetic by its own truth. Only at a FILTER's top (its
 *   expression through `||`, `&&`) is its answer SPARQL's, since an error and false drop the same
 *   solutions there. Elsewhere (BIND, projections, operands of comparisons and functions, `!` of
 *   `||`/`&&`/`!` in a FILTER) the expression is sent as two-valued tests of its truth and falsity
 *   (`truth`): `IF(true-test, true, IF(false-test, false, ?fkgqa_error))`, in a FILTER's top the
 *   truth test alone; the condition of IF as `IF(true-test, x, IF(false-test, y, ?fkgqa_error))`.
 *   A boolean-valued operand is false where it is defined: the variables whose being unbound makes
 *   it an error are bound and `COALESCE(v * 0, 1) = 0` (Virtuoso fails on COALESCE of a comparison);
 *   a variable, a number-valued or a simple-literal-valued expression by its effective boolean
 *   value (§17.2.2); another expression (COALESCE, IF, a cast) is refused as a limit of the store.
 *   A negated `=` of two variables gets the same `BOUND` test (Virtuoso takes an unbound operand
 *   from OPTIONAL for unequal).
 * - **Arithmetic on terms that are no numbers.** Virtuoso fails the whole query (`SR087`) for
 *   `STR(?o) + 1` where SPARQL has an error for the row: an operand that may be no number (a
 *   variable, an expression that is no arithmetic or numeric function) is sent as `IF(isNumeric(x)
 *   && DATATYPE(x) != xsd:boolean, x, ?fkgqa_error)`, in a graph pattern, an ungrouped projection
 *   and the ORDER BY of a query without grouping (a key's error orders its row as unbound, §15.1).
 * - **Booleans as integers.** A projected or bound expression whose value is a boolean (comparisons,
 *   `&&`, `||`, `!`, `IN`, `EXISTS`, `BOUND`, `isIRI`, `REGEX`, …, or a `true`/`false` constant)
 *   comes back as `0`/`1` (`IN` as the 1-based position of the value found): read back as
 *   `false` for 0, `true` otherwise (xsd:boolean). An xsd:boolean of the data comes back as
 *   `"1"^^xsd:boolean`: read back as `true`.
 * - **Strings after IRIs in VALUES.** A simple literal of a VALUES block that comes after an IRI
 *   in its column (with only simple literals between) comes back as an IRI (7.2.5, when it is not
 *   joined to the data). The rows of a VALUES block are sent in an order that puts, in every column,
 *   the rows holding a simple literal before those holding an IRI (`literalsBeforeIris`; a block
 *   that has no such order, two columns asking opposite orders, is sent as written). The same with
 *   `BIND` in the branches of a UNION is not rewritten.
 * - **ASK** is answered as a one-column result (`__ASK_RETVAL`, which Comunica fails on): sent as
 *   `SELECT (1 AS ?…) … LIMIT 1` and read back as a boolean.
 * - **Deep `||`/`&&` chains.** Virtuoso refuses parentheses nested about 150 deep: a chain of one
 *   operator is sent as a balanced tree (same value: both operators are associative, and SPARQL's
 *   error handling of `||`/`&&` does not depend on the grouping).
 * - **Lost rows with long IN lists and `||` chains.** A FILTER testing a variable against about 20
 *   or more values (`IN`, or `=` joined by `||`) is evaluated as a lookup in an index that keeps one
 *   row per (object, subject): rows differing only in their predicate are lost (7.2.5). Such a
 *   filter is sent as `FILTER(COALESCE(e, false))`, equal in SPARQL (an error is false either way),
 *   which Virtuoso evaluates row by row; Virtuoso takes `COALESCE(error || true, false)` for false,
 *   so inside it ?fkgqa_error is sent as false where that keeps the solutions (`errorsAsFalse`).
 *   The same loss with a VALUES block of 20 or more objects
 *   joined to a pattern whose predicate is a variable is not rewritten (docs/serving.md).
 * - **Numbers ordered with other terms of the data.** `?n > ?d` with a string and an integer is a
 *   type error in SPARQL; Virtuoso casts. An ordering comparison of two non-constant operands is
 *   sent as `IF(isNumeric(?n) = isNumeric(?d), ?n > ?d, ?fkgqa_error)`, at a FILTER's top as
 *   `isNumeric(?n) = isNumeric(?d) && ?n > ?d` (Virtuoso fails to compile the IF over a
 *   sub-SELECT's aggregate, SQ156). Each variable of the data is compared as `COALESCE(?n)`:
 *   Virtuoso compares a stored integer with a sub-SELECT's decimal wrongly through an index range
 *   (a sub-SELECT's own column stays bare: an expression of it is SQ156).
 * - **Strings and dates compared with a constant.** `?x > 'B'` with `?x` bound from the store
 *   compares wrongly in Virtuoso (no row of a FILTER passes, every string passes inside `IF`), and
 *   `?x > '2011-01-01'^^xsd:date` passes strings and IRIs too. An ordering comparison (`<`, `>`,
 *   `<=`, `>=`) with a string constant is sent as `IF(isLiteral(?x) && DATATYPE(?x) = xsd:string,
 *   STR(?x) > 'B', ?fkgqa_error)`, one with a constant of another non-numeric datatype as
 *   `IF(isLiteral(?x) && DATATYPE(?x) = dt, ?x > c, ?fkgqa_error)`: an error for other terms, as in
 *   SPARQL (§17.3).
 * - **Doubles written with 6 significant digits.** Virtuoso writes an xsd:double (or xsd:float)
 *   of its answer as `1.23457e+06`; `STR()` of the same value has 16 significant digits. Each projected
 *   column of a SELECT gets a companion column `STR(…)` in the text sent (in a query without
 *   grouping, for a double, followed by the difference to the double those digits read as:
 *   `exactLexical`), and a double or float is read back from the companion, written as oxigraph
 *   writes it (the shortest round-trip decimal, plain: virtuoso-numbers.ts). A plain variable of a query without grouping or
 *   aggregate gets `IF(isNumeric(?x), STR(?x), ?fkgqa_error)`, bound for numbers only: Virtuoso's
 *   result writer spends its time per term written (about 0.07 ms in SPARQL XML, load 7).
 * - **MAX, MIN, SUM and AVG over terms of several kinds.** Virtuoso orders stored strings and IRIs
 *   in MAX and MIN by its own order of stored terms (with or without GROUP BY), numbers above
 *   strings, and sums strings as 0: a projected aggregate gets companions by kind of term
 *   (`extremeCompanions`), read back in SPARQL's order (`extremeTerm`); an ORDER BY key on one
 *   is sent as the keys of the term read back (`extremeOrder`). One inside another expression is
 *   refused (`extremeInExpression`), and so is MAX of language-tagged literals (no value). One in a
 *   sub-SELECT compared at a FILTER's top is compared through companions by kind of term the
 *   sub-SELECT projects (`subSelectExtremeComparison`), and one projected by a query without grouping
 *   read back from them (`projectedSubSelectExtremes`); read otherwise it is sent as written (docs/serving.md).
 * - **Aggregate shapes Virtuoso fails on** (`aggregateShapes`): a HAVING without GROUP BY inside a
 *   sub-SELECT (SP031) and the same aggregate projected twice (SR066) are refused.
 * - **HAVING without GROUP BY** is refused (SP031), and a GROUP BY of a constant makes no group of
 *   no rows: its conditions are projected (`havingColumns`) and the rows kept where they are true
 *   (refused when one names a variable outside an aggregate: the projection's alias is not in scope).
 * - **Constants and booleans evaluated otherwise.** `DATATYPE` is sent as SPARQL evaluates it
 *   (`datatypeOf`: Virtuoso leaves it unbound for simple and language-tagged literals), and
 *   `ENCODE_FOR_URI` of a string constant is computed; the other shapes of `constantShapes`
 *   (REGEX flags x and q, IRI ordering, booleans under IN, COALESCE, IF, SAMPLE, …) are refused.
 * - **AVG** is an xsd:decimal divided with about 15 fractional digits in Virtuoso: a projected AVG
 *   gets companions for the widest type of its numbers, their sum and count (`averageKinds`), and
 *   is read back typed and divided as oxigraph does (`averageTerm`).
 * - **SUM and AVG over no rows** are unbound in Virtuoso, `0` in SPARQL (§18.5.1.3, §18.5.1.4). An
 *   aggregate SELECT without GROUP BY gets a companion `COUNT(*)`; where it is 0, an unbound SUM or
 *   AVG column is read back as `0` (xsd:integer).
 * - **Columns of `SELECT *`** come in the order of the query; oxigraph orders them by name: read
 *   back by name.
 * - **OFFSET without LIMIT** is refused (`SR350: TOP parameter < 0`): such a query or sub-query is
 *   sent with the LIMIT that makes offset + limit VIRTUOSO_MAX_ROWS (Virtuoso sorts no more rows);
 *   the store refuses an answer that reaches it. A sub-SELECT with OFFSET and no LIMIT is refused
 *   (the rows such a LIMIT cut would not be seen outside it).
 * - **Rows cut at ResultSetMaxRows** with HTTP 200: virtuoso.ts sets the cap high and the store
 *   refuses an answer that reaches it (never a silently cut answer).
 */
import type * as sparqljs from 'sparqljs';
import { fixIris, parseSparql, sparqljsLib, type SparqlParseOptions } from '../sparql/parse.js';
import type { SparqlResults, SparqlRow, SparqlTerm } from '../sparql/results.js';
import { XSD, XSD_NUMERIC_TYPES } from '../common/vocab.js';
import { VIRTUOSO_MAX_ROWS } from './virtuoso.js';
import { hasAggregate, inScope, virtuosoShapes } from './virtuoso-shapes.js';
import { decimalQuotient, doubleLexical, floatLexical } from './virtuoso-numbers.js';

/** A variable never bound: its value is an error in every expression (SPARQL §17.2), where Virtuoso would not give one. */
export const ERROR_VARIABLE = 'fkgqa_error';

/** The comparison operators (SPARQL 1.1 §17.3). */
const COMPARISONS = new Set(['=', '!=', '<', '>', '<=', '>=']);

/** True for a numeric literal constant. */
const isNumericLiteral = (x: unknown): boolean => isNode(x) && x.termType === 'Literal' && XSD_NUMERIC_TYPES.has((x.datatype as { value?: string } | undefined)?.value ?? '');

/** True for a simple literal constant (no language tag; xsd:string). */
const isStringLiteral = (x: unknown): boolean => isNode(x) && x.termType === 'Literal' && !x.language && [undefined, `${XSD}string`].includes((x.datatype as { value?: string } | undefined)?.value);

/** True for a literal constant of a datatype neither numeric, string nor boolean (xsd:date, xsd:dateTime, …). */
const isOtherTypedLiteral = (x: unknown): boolean => {
  if (!isNode(x) || x.termType !== 'Literal' || x.language) return false;
  const datatype = (x.datatype as { value?: string } | undefined)?.value;
  return datatype !== undefined && !XSD_NUMERIC_TYPES.has(datatype) && datatype !== `${XSD}string` && datatype !== `${XSD}boolean`;
};

/** The variable that carries an ASK query's answer in the SELECT sent instead. */
export const ASK_VARIABLE = 'fkgqa_ask';

/** Operators and functions whose value is an xsd:boolean (SPARQL 1.1 §17.4), in sparqljs's lower-case spelling. */
const BOOLEAN_OPERATORS = new Set([
  '=',
  '!=',
  '<',
  '>',
  '<=',
  '>=',
  '&&',
  '||',
  '!',
  'in',
  'notin',
  'exists',
  'notexists',
  'bound',
  'isiri',
  'isuri',
  'isblank',
  'isliteral',
  'isnumeric',
  'regex',
  'sameterm',
  'langmatches',
  'contains',
  'strstarts',
  'strends',
  'istriple',
]);

/** The text to send to Virtuoso and how to read its answer back. */
export interface VirtuosoQuery {
  /** The query text: full IRIs, the shard's graph as its only default graph. */
  text: string;
  /** The form of the answer the client asked for: SELECT bindings, an ASK boolean, or a graph. */
  form: 'bindings' | 'boolean' | 'graph';
  /** Variables bound to a boolean-valued expression (read back from Virtuoso's 0/1). */
  booleanVars: Set<string>;
  /** `SELECT *`: the columns are read back in name order, as oxigraph orders them. */
  wildcard: boolean;
  /** Per projected variable, its companion column holding `STR()` of its value (doubles read back with all their digits). */
  lexical: Map<string, string>;
  /** Projected SUM and AVG columns of an aggregate without GROUP BY, read back as 0 where the column `rows` is 0. */
  emptySums: string[];
  /** The column holding `COUNT(*)` of such an aggregate: the query's own, or the companion ROWS_VARIABLE. */
  rows?: string;
  /** The LIMIT given to a query with OFFSET and none: an answer of this many rows may be cut, and is refused. */
  rowCap?: number;
  /** Per projected MAX, MIN, SUM or AVG column, its companion columns by kind of term (`extremeCompanions`). */
  extremes: Map<string, Extreme>;
  /** The columns holding the HAVING conditions of an aggregate without GROUP BY (`havingColumns`): a row is kept where each is true. */
  having: string[];
  /** Per projected AVG column, its companion columns (`averageKinds`): Virtuoso types every average xsd:decimal, and divides decimals with fewer digits. */
  averages?: Map<string, Average>;
}

/**
 * The companion columns of one projected `MAX(e)`, `MIN(e)`, `SUM(e)` or `AVG(e)` (module comment): the
 * aggregate over the numbers of `e` (MAX and MIN), over `STR()` of its simple literals and of its IRIs
 * (MAX and MIN), the number of its NaNs (MAX and MIN: SPARQL orders NaN above every number), and the number of
 * its other terms (MAX and MIN), of its terms that are no number (SUM and AVG).
 */
export interface Extreme {
  aggregation: 'max' | 'min' | 'sum' | 'avg';
  numbers?: string;
  strings?: string;
  iris?: string;
  /** The number of NaNs among the numbers (MAX and MIN; Virtuoso's MAX skips them, its `STR()` of one is "nan"). */
  nans?: string;
  others: string;
  /** A sub-SELECT's column (`projectedSubSelectExtremes`): refused where it holds terms of other kinds or a NaN. */
  sub?: boolean;
}

/** Prefix of the companion columns (lexical forms, row count); never a variable of a gold query. */
export const COMPANION_PREFIX = 'fkgqa_lex_';

/** Prefix of the columns holding the HAVING conditions of an aggregate without GROUP BY; never a variable of a gold query. */
export const HAVING_PREFIX = 'fkgqa_having_';

/** Prefix of the companion columns of MAX, MIN, SUM and AVG (`Extreme`); never a variable of a gold query. */
export const EXTREME_PREFIX = 'fkgqa_ext_';

/** The companion column of the row count of an aggregate without GROUP BY. */
export const ROWS_VARIABLE = 'fkgqa_rows';

/**
 * The companion columns of one projected `AVG(e)` (`averageKinds`): the widest type of its
 * numbers (2 double, 1 float, 0 else), and, unless DISTINCT, their sum and count.
 */
export interface Average {
  kind: string;
  sum?: string;
  count?: string;
}

/** Prefix of the companion columns of AVG (`averageKinds`); never a variable of a gold query. */
export const AVERAGE_PREFIX = 'fkgqa_avg_';

type Node = Record<string, unknown>;
const isNode = (x: unknown): x is Node => x !== null && typeof x === 'object';
/** The operations this module writes (never rewritten again as the client's: their `&&`, `IF`, `!` are Virtuoso's own two-valued tests). */
const GENERATED = new WeakSet<object>();
const operation = (operator: string, args: unknown[]): Node => {
  const node = { type: 'operation', operator, args };
  GENERATED.add(node);
  return node;
};
/** The `||`/`&&`/`!` nodes of a FILTER's top (its expression through `||`, `&&`), where Virtuoso's own evaluation keeps the right solutions. */
const FILTER_TOP = new WeakSet<object>();
/** The comparisons of a FILTER's top (the expression, or an operand of its `||`/`&&` top): there false and a type error remove the same solutions. */
const FILTER_TOP_COMPARISONS = new WeakSet<object>();
const boolean = (value: boolean): Node => ({ termType: 'Literal', value: String(value), language: '', datatype: { termType: 'NamedNode', value: `${XSD}boolean` } });

/**
 * Balances a chain of one associative operator (`a || b || c || …`, left-deep as sparqljs builds it).
 * @returns the same operands as a tree of depth about log2(n)
 */
function balanced(operator: string, operands: unknown[]): unknown {
  if (operands.length === 1) return operands[0];
  const mid = operands.length >> 1;
  return operation(operator, [balanced(operator, operands.slice(0, mid)), balanced(operator, operands.slice(mid))]);
}

/** The operands of a chain of `operator`, in order (iterative: chains may be thousands long). */
function chainOperands(node: Node, operator: string): unknown[] {
  const out: unknown[] = [];
  const stack: unknown[] = [node];
  while (stack.length > 0) {
    const n = stack.pop();
    if (isNode(n) && n.type === 'operation' && n.operator === operator) {
      const args = n.args as unknown[];
      for (let i = args.length - 1; i >= 0; i--) stack.push(args[i]);
    } else out.push(n);
  }
  return out;
}

/** The arithmetic operators (SPARQL 1.1 §17.4.2), unary ones in sparqljs's spelling. */
const ARITHMETIC = new Set(['+', '-', '*', '/', 'UMINUS', 'UPLUS']);

const errorVariable = (): Node => ({ termType: 'Variable', value: ERROR_VARIABLE });
const BOOLEAN_DATATYPE = { termType: 'NamedNode', value: `${XSD}boolean` };

/** Virtuoso's test that a term is an xsd:boolean (of the data: Virtuoso keeps its datatype, and takes it for a number). */
const isDataBoolean = (x: unknown): Node => operation('&&', [operation('isliteral', [x]), operation('=', [operation('datatype', [x]), BOOLEAN_DATATYPE])]);

/**
 * Virtuoso's test that a term is a number in SPARQL: `(isNumeric(x) && DATATYPE(x) != xsd:boolean)
 * || DATATYPE(x) IN (xsd:double, xsd:float)`. Virtuoso's isNumeric takes an xsd:boolean and is
 * false for the doubles and floats INF, -INF and NaN (whose DATATYPE it gives right).
 */
const isNumber = (x: unknown): Node =>
  operation('||', [
    operation('&&', [operation('isnumeric', [x]), operation('!=', [operation('datatype', [x]), BOOLEAN_DATATYPE])]),
    operation('in', [operation('datatype', [x]), [XSD_TYPE('double'), XSD_TYPE('float')]]),
  ]);

/**
 * True when an expression's value is an xsd:boolean whatever the data (a constant, a boolean-valued
 * operator, a variable bound to one): Virtuoso evaluates it as the integer 0 or 1.
 */
function isBooleanTyped(e: unknown, booleanVars: Set<string>): boolean {
  return isBooleanValued(e) || (isNode(e) && e.termType === 'Variable' && booleanVars.has(e.value as string));
}

/**
 * A comparison (its operands rewritten) one of whose operands is boolean-typed (`booleans`), as
 * oxigraph evaluates it: a boolean is ordered only with an equal boolean (`true >= true`; a type
 * error otherwise: oxigraph orders no two different booleans); `=` and `!=` of a boolean with a
 * number or another literal are false and true (keeping the error of the boolean operand); a term
 * of the data is compared only when it is an xsd:boolean; two booleans compare as in Virtuoso (0/1).
 */
function booleanComparison(node: Node, booleans: boolean[]): unknown {
  const args = node.args as unknown[];
  const ordering = !['=', '!='].includes(node.operator as string);
  const b = args[booleans[0] ? 0 : 1];
  const other = args[booleans[0] ? 1 : 0];
  const both = (booleans[0] && booleans[1]) || (isNode(other) && other.termType === 'Literal' && (other.datatype as { value?: string } | undefined)?.value === `${XSD}boolean`);
  if (both) return ordering ? operation('if', [operation('=', [args[0], args[1]]), node, errorVariable()]) : node;
  if (isNode(other) && other.termType === 'Literal') {
    if (ordering) return errorVariable();
    const otherwise = boolean(node.operator === '!=');
    return isNode(b) && b.termType === 'Literal' ? otherwise : operation('if', [b, otherwise, otherwise]);
  }
  if (ordering) return operation('if', [operation('&&', [isDataBoolean(other), operation('=', [args[0], args[1]])]), node, errorVariable()]);
  return operation('if', [isDataBoolean(other), node, boolean(node.operator === '!=')]);
}

/**
 * A FILTER's expression with the never-bound ERROR_VARIABLE replaced by `false` where it is a value
 * of the whole expression or of an operand of its `||`/`&&` tree (through the branches of `IF`): the
 * same solutions (an error and false both drop a solution there: `e || error` and `e || false`, `e &&
 * error` and `e && false` keep the same ones; a negation is taken into `IF` branches, `&&` and `||`). Virtuoso evaluates `COALESCE(error || true, false)` as
 * false: inside the COALESCE sent for long filters, an error operand of `||` would lose the row.
 */
function errorsAsFalse(e: unknown): unknown {
  if (isNode(e) && e.termType === 'Variable' && e.value === ERROR_VARIABLE) return boolean(false);
  if (!isNode(e) || e.type !== 'operation') return e;
  if (e.operator === '||' || e.operator === '&&') e.args = (e.args as unknown[]).map(errorsAsFalse);
  else if (e.operator === 'if') e.args = (e.args as unknown[]).map((a, i) => (i === 0 ? a : errorsAsFalse(a)));
  else if (e.operator === '!') {
    // `!IF(c, x, y)` is `IF(c, !x, !y)`, and `!error` an error: the negation taken into the branches.
    const [a] = e.args as unknown[];
    if (isNode(a) && a.termType === 'Variable' && a.value === ERROR_VARIABLE) return boolean(false);
    if (isNode(a) && a.termType === 'Literal' && (a.datatype as { value?: string } | undefined)?.value === `${XSD}boolean`) return boolean(a.value !== 'true' && a.value !== '1');
    if (isNode(a) && a.type === 'operation' && a.operator === 'if') {
      const [c, x, y] = a.args as unknown[];
      return errorsAsFalse(operation('if', [c, operation('!', [x]), operation('!', [y])]));
    }
    // De Morgan's laws hold for SPARQL's `!`, `&&`, `||` with errors (§17.2, the tables of logical-or and logical-and).
    if (isNode(a) && a.type === 'operation' && (a.operator === '&&' || a.operator === '||'))
      return errorsAsFalse(
        operation(
          a.operator === '&&' ? '||' : '&&',
          (a.args as unknown[]).map((x) => operation('!', [x])),
        ),
      );
  }
  return e;
}

/**
 * The variables of a comparison whose being unbound makes it an error (SPARQL §17.3): those of its
 * operands, through arithmetic and functions, but not under BOUND, COALESCE, IF, EXISTS, `||`, `&&`,
 * IN (which have a value beside an error operand).
 */
function strictVariables(comparison: Node): Node[] {
  const out = new Map<string, Node>();
  const stack = [...(comparison.args as unknown[])];
  while (stack.length > 0) {
    const n = stack.pop();
    if (!isNode(n)) continue;
    if (n.termType === 'Variable' && n.value !== ERROR_VARIABLE) out.set(n.value as string, n);
    else if (n.type === 'operation' && !['bound', 'coalesce', 'if', 'exists', 'notexists', '||', '&&', 'in', 'notin'].includes(String(n.operator).toLowerCase())) stack.push(...(n.args as unknown[]));
    else if (n.type === 'functionCall') stack.push(...(n.args as unknown[]));
  }
  return [...out.keys()].sort().map((k) => out.get(k)!);
}

/** True for the never-bound ERROR_VARIABLE. */
const isErrorVariable = (x: unknown): boolean => isNode(x) && x.termType === 'Variable' && x.value === ERROR_VARIABLE;

/**
 * The columns of the query's VALUES blocks (inline and trailing, sub-queries too) that hold a
 * boolean constant. A column of booleans only (UNDEF aside) is added to `booleanVars`: Virtuoso
 * answers the booleans of a one-row block as the integers 0 and 1, read back as booleans.
 * @returns the names of the columns holding a boolean beside other terms (for SUM and AVG, groupedDifference)
 */
function valuesBooleanColumns(ast: unknown, booleanVars: Set<string>): Set<string> {
  const mixed = new Set<string>();
  for (const n of astNodes(ast)) {
    const rows = Array.isArray(n) ? undefined : n.type === 'values' ? n.values : n.type === 'query' ? n.values : undefined;
    if (Array.isArray(rows)) {
      const columns = new Set((rows as Record<string, unknown>[]).flatMap((r) => Object.keys(r)));
      for (const column of columns) {
        const terms = (rows as Record<string, unknown>[]).map((r) => r[column]).filter((t) => t !== undefined);
        const booleans = terms.filter((t) => isNode(t) && t.termType === 'Literal' && isBooleanValued(t)).length;
        const name = column.replace(/^\?/, '');
        if (booleans > 0 && booleans === terms.length) booleanVars.add(name);
        else if (booleans > 0) mixed.add(name);
      }
    }
  }
  return mixed;
}

const RDF_LANG_STRING = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#langString';
const DATE_TYPES = new Set(['date', 'dateTime', 'time', 'dateTimeStamp'].map((t) => `${XSD}${t}`));
const isLanguageLiteral = (x: unknown): boolean => isNode(x) && x.termType === 'Literal' && Boolean(x.language);
const isDateLiteral = (x: unknown): boolean => isNode(x) && x.termType === 'Literal' && DATE_TYPES.has((x.datatype as { value?: string } | undefined)?.value ?? '');
const simpleLiteral = (value: string): Node => ({ termType: 'Literal', value, language: '', datatype: XSD_TYPE('string') });

/** ENCODE_FOR_URI (SPARQL 1.1 §17.4.3.11): each UTF-8 byte but the unreserved characters of RFC 3986 percent-encoded. */
const encodeForUri = (text: string): string => encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/**
 * `DATATYPE(x)` as SPARQL evaluates it (§17.4.2.7), in a form Virtuoso evaluates so: of a literal
 * constant its datatype (xsd:string for a simple literal, rdf:langString for a language-tagged
 * one; Virtuoso: unbound for both), of an IRI constant the error ?fkgqa_error (Virtuoso:
 * xsd:anyURI), of another operand `IF(STRLEN(LANG(x)) > 0, rdf:langString, DATATYPE(x))`
 * (Virtuoso: unbound for a language-tagged value; LANG of an IRI is unbound there, which IF takes
 * for false, and DATATYPE of an IRI is unbound too); of an aggregate as written.
 * @param x the operand (parsed)
 * @returns the expression to send
 */
function datatypeOf(x: unknown): unknown {
  if (isNode(x) && x.termType === 'Literal') {
    if (x.language) return { termType: 'NamedNode', value: RDF_LANG_STRING };
    return { termType: 'NamedNode', value: (x.datatype as { value?: string } | undefined)?.value ?? `${XSD}string` };
  }
  if (isNode(x) && x.termType === 'NamedNode') return errorVariable();
  // An aggregate written twice inside other expressions fails to compile in Virtuoso: sent as written.
  if (hasAggregate(x)) return operation('datatype', [x]);
  return operation('if', [operation('>', [operation('strlen', [operation('lang', [x])]), integer(0)]), { termType: 'NamedNode', value: RDF_LANG_STRING }, operation('datatype', [copy(x)])]);
}

/**
 * Shapes of constants and VALUES booleans that Virtuoso evaluates otherwise than SPARQL (module
 * comment), computed where the text gives the value and refused (StoreCannotAnswer naming the
 * shape) where it does not: `DATATYPE` as SPARQL evaluates it (`datatypeOf`; refused in a GROUP BY key
 * but of a constant: Virtuoso groups by that form wrongly) and
 * `ENCODE_FOR_URI` of a constant its percent-encoding (Virtuoso: unbound; raw non-ASCII bytes and a
 * NUL); refused are `REGEX`/`REPLACE` flags `x` and `q` (Virtuoso ignores them), `REPLACE` with
 * the empty pattern (Virtuoso replaces nothing), `MD5`/`SHA*`/`STRLEN`/`ENCODE_FOR_URI` of a
 * language-tagged constant or of an IRI constant (an error in SPARQL, a value in Virtuoso), `-` with
 * a date operand (Virtuoso: unbound; SPARQL: a duration), an ordering comparison with an IRI
 * constant (`?s < <iri>`: an error in SPARQL, Virtuoso orders IRIs), `IN` with a boolean operand
 * or member (Virtuoso takes booleans for 0/1), a boolean-valued operand of COALESCE (outside a
 * FILTER), an IF branch, SAMPLE or an xsd:string cast (Virtuoso gives it back as 0/1, or takes it
 * for an error).
 * @param ast the parsed query, changed in place
 * @param booleanVars variables bound to booleans only
 * @throws StoreCannotAnswer for a shape refused
 */
function constantShapes(ast: unknown, booleanVars: Set<string>): void {
  const refuse = (shape: string) => {
    throw new StoreCannotAnswer(`${shape}: Virtuoso evaluates it otherwise than SPARQL; this store does not answer it (an oxigraph-backed serve does)`);
  };
  const booleanOperand = (x: unknown) => isBooleanTyped(x, booleanVars);
  const visit = (n: unknown, inExpression: boolean, seen: Set<unknown>, inFilter = false, inGroup = false): unknown => {
    if (!isNode(n) || seen.has(n)) return n;
    if (typeof n.termType === 'string') return n;
    seen.add(n);
    const expression = inExpression || n.type === 'operation' || n.type === 'functionCall' || n.type === 'aggregate';
    if (Array.isArray(n)) {
      for (let i = 0; i < n.length; i++) n[i] = visit(n[i], inExpression, seen, inFilter, inGroup);
      return n;
    }
    for (const [k, v] of Object.entries(n)) {
      // The VALUES rows and a BIND's or projection's target variable are no expressions.
      if (k === 'values' || k === 'variable') continue;
      const child = k === 'expression' || k === 'args' || k === 'having' || k === 'order' || k === 'group' ? true : expression;
      // A FILTER's expression is a truth only: a COALESCE of booleans there keeps its solutions (0/1 as false/true).
      n[k] = visit(v, child, seen, inFilter || n.type === 'filter', inGroup || k === 'group');
    }
    const args = (n.args ?? []) as unknown[];
    if (n.type === 'operation') {
      const op = String(n.operator).toLowerCase();
      if (op === 'datatype' && !GENERATED.has(n)) {
        // Virtuoso groups by the IF of datatypeOf wrongly (one group per language tag); a BIND of it in the pattern it groups right.
        if (inGroup && isNode(args[0]) && args[0].termType !== 'Literal' && args[0].termType !== 'NamedNode') refuse('DATATYPE of a variable or an expression in a GROUP BY key');
        return datatypeOf(args[0]);
      }
      if (op === 'encode_for_uri' && isNode(args[0]) && args[0].termType === 'Literal' && !args[0].language && isStringLiteral(args[0])) return simpleLiteral(encodeForUri(args[0].value as string));
      if (['md5', 'sha1', 'sha256', 'sha384', 'sha512', 'strlen', 'encode_for_uri'].includes(op) && (isLanguageLiteral(args[0]) || (isNode(args[0]) && args[0].termType === 'NamedNode')))
        refuse(`${op.toUpperCase()} of ${isLanguageLiteral(args[0]) ? 'a language-tagged literal' : 'an IRI'} constant`);
      const flags = op === 'regex' ? args[2] : op === 'replace' ? args[3] : undefined;
      if (isNode(flags) && flags.termType === 'Literal' && /[xq]/.test(flags.value as string)) refuse(`${op.toUpperCase()} with the flag x or q`);
      if (op === 'replace' && isNode(args[1]) && args[1].termType === 'Literal' && args[1].value === '') refuse('REPLACE with an empty pattern');
      if (op === '-' && args.some(isDateLiteral)) refuse('a subtraction of a date, a dateTime or a time');
      if (['<', '>', '<=', '>='].includes(op) && args.some((a) => isNode(a) && a.termType === 'NamedNode')) refuse(`an ordering comparison (${op}) with an IRI constant`);
      if ((op === 'in' || op === 'notin') && [args[0], ...((args[1] ?? []) as unknown[])].some(booleanOperand)) refuse(`${op === 'in' ? 'IN' : 'NOT IN'} with a boolean`);
      if (op === 'coalesce' && !inFilter && args.some((a) => isBooleanValued(a))) refuse('COALESCE of a boolean-valued expression outside a FILTER');
      if (op === 'if' && !GENERATED.has(n) && args.slice(1).some((a) => isBooleanValued(a))) refuse('IF with a boolean-valued branch');
    }
    if (n.type === 'aggregate' && String(n.aggregation).toLowerCase() === 'sample' && booleanOperand(n.expression)) refuse('SAMPLE of a boolean');
    if (n.type === 'functionCall' && (n.function as Node | undefined)?.value === `${XSD}string` && args.some(booleanOperand)) refuse('xsd:string of a boolean');
    return n;
  };
  visit(ast, false, new Set());
}

/** The `=`/`!=` chains written in place of a client's IN and NOT IN (`inAsComparisons`). */
const FROM_IN = new WeakSet<object>();

/**
 * Replaces, in place, each client's `x IN (a, b, …)` by `x = a || x = b || …` and `x NOT IN (a, b,
 * …)` by `x != a && x != b && …`, as SPARQL defines them (§17.4.1.9, §17.4.1.10), so that each
 * member is compared as a client's `=`/`!=` is sent (numeric type promotion, a boolean or a string
 * not equal to a number, an unbound operand an error). Virtuoso's own IN compares a decimal
 * constant with a double in decimal (`?le IN (74.4)` misses the double 74.4), an integer with a
 * decimal member as equal (`1000 IN (1000.5)`) and a boolean as the integer 0 or 1. An empty list
 * is left as is (false, true).
 * @param ast the parsed query (changed in place)
 */
function inAsComparisons(ast: unknown): void {
  // The replacements are marked (FROM_IN): a FILTER holding one is still sent as COALESCE(e, false), as one holding IN was.
  const client = (operator: string, args: unknown[]): Node => ({ type: 'operation', operator, args });
  const top = filterTopIns(ast);
  const replaced = (n: Node): Node => {
    const [x, members] = n.args as [unknown, unknown[]];
    const negated = n.operator === 'notin';
    const native = top.has(n) ? nativeIn(n) : undefined;
    if (native) {
      FROM_IN.add(native);
      return native;
    }
    const chain = members.map((m) => client(negated ? '!=' : '=', [copy(x), m]));
    const sent = chain.reduce((a, b) => client(negated ? '&&' : '||', [a, b]));
    FROM_IN.add(sent);
    return sent;
  };
  const stack: unknown[] = [ast];
  const seen = new Set<unknown>();
  while (stack.length > 0) {
    const n = stack.pop();
    if (!isNode(n) || seen.has(n)) continue;
    seen.add(n);
    const children = Array.isArray(n) ? (n as unknown[]) : undefined;
    for (const key of children ? children.keys() : Object.keys(n)) {
      if (key === 'values') continue;
      const container = (children ?? n) as Record<string | number, unknown>;
      let child = container[key];
      // Virtuoso's own IN (`nativeIn`, marked GENERATED) is sent as it is.
      while (isNode(child) && child.type === 'operation' && !GENERATED.has(child) && (child.operator === 'in' || child.operator === 'notin') && ((child.args as unknown[])[1] as unknown[]).length > 0)
        child = container[key] = replaced(child);
      stack.push(child);
    }
  }
}

/** The client's IN and NOT IN nodes at a FILTER's top (the FILTER's expression through `||` and `&&`), where an error and false drop the same solutions. */
function filterTopIns(ast: unknown): Set<object> {
  const out = new Set<object>();
  for (const n of astNodes(ast)) {
    if (n.type !== 'filter') continue;
    const top: unknown[] = [n.expression];
    while (top.length > 0) {
      const e = top.pop();
      if (!isNode(e) || e.type !== 'operation') continue;
      if (e.operator === '||' || e.operator === '&&') top.push(...(e.args as unknown[]));
      else if (e.operator === 'in' || e.operator === 'notin') out.add(e);
    }
  }
  return out;
}

/** True for an xsd:integer constant. */
const isIntegerLiteral = (x: unknown): boolean => isNode(x) && x.termType === 'Literal' && (x.datatype as { value?: string } | undefined)?.value === `${XSD}integer`;

/**
 * A client's `?x IN (…)` or `?x NOT IN (…)` at a FILTER's top sent as Virtuoso's own IN, where
 * Virtuoso's IN compares as SPARQL's `=` does: a variable and members all IRIs, all simple literals
 * (Virtuoso matches neither a language-tagged literal, a number nor INF stored as a double), or all
 * xsd:integer (compared with numbers only: Virtuoso takes the boolean true for 1). One test per
 * member (`inAsComparisons`) took 5.5 s for a list of 200 over world_1's cities, Virtuoso's IN 0.085 s.
 * `?x NOT IN` of an unbound ?x is an error (false at a FILTER's top): guarded by BOUND.
 * @param n the IN or NOT IN node (at a FILTER's top)
 * @returns the expression to send, or undefined where the members need SPARQL's comparisons one by one
 */
function nativeIn(n: Node): Node | undefined {
  const [x, members] = n.args as [unknown, unknown[]];
  if (!isNode(x) || x.termType !== 'Variable' || members.length === 0) return undefined;
  const iris = members.every((m) => isNode(m) && m.termType === 'NamedNode');
  const strings = members.every(isStringLiteral);
  const integers = members.every(isIntegerLiteral);
  if (!iris && !strings && !integers) return undefined;
  const sent = operation(n.operator as string, [x, members]);
  const number = () => isNumberTerm(x);
  if (n.operator === 'in') return integers ? operation('&&', [number(), sent]) : sent;
  return operation('&&', [operation('bound', [x]), integers ? operation('||', [operation('!', [number()]), sent]) : sent]);
}

/** Marks a FILTER's expression and its `||`/`&&`/`!` operands down from it as its top (FILTER_TOP). */
function markFilterTop(e: unknown): void {
  const stack = [e];
  while (stack.length > 0) {
    const n = stack.pop();
    if (isNode(n) && n.type === 'operation' && COMPARISONS.has(n.operator as string)) FILTER_TOP_COMPARISONS.add(n);
    if (!isNode(n) || n.type !== 'operation' || !['||', '&&', '!', 'in', 'notin'].includes(n.operator as string)) continue;
    FILTER_TOP.add(n);
    if (n.operator === '||' || n.operator === '&&') stack.push(...(n.args as unknown[]));
  }
}

/** Functions whose value is a number (or an error), in sparqljs's lower-case spelling. */
const NUMERIC_FUNCTIONS = new Set(['strlen', 'abs', 'ceil', 'floor', 'round', 'rand', 'year', 'month', 'day', 'hours', 'minutes', 'seconds']);
/** Functions whose value is a simple literal (or an error). */
const SIMPLE_LITERAL_FUNCTIONS = new Set(['str', 'lang', 'encode_for_uri', 'md5', 'sha1', 'sha256', 'sha384', 'sha512', 'struuid']);

/** True when an expression's value is a number whatever the data (or an error): a numeric constant, arithmetic, a numeric function. */
function isNumericValued(e: unknown): boolean {
  if (isNumericLiteral(e)) return true;
  return isNode(e) && e.type === 'operation' && (ARITHMETIC.has(e.operator as string) || NUMERIC_FUNCTIONS.has(String(e.operator).toLowerCase()));
}

/** True for an IN or NOT IN whose list holds a variable or an expression (an error member: Virtuoso takes it for a mismatch). */
function variableMembers(node: Node): boolean {
  return (
    node.type === 'operation' &&
    (node.operator === 'in' || node.operator === 'notin') &&
    ((node.args as unknown[])[1] as unknown[]).some((m) => !isNode(m) || (m.termType !== 'Literal' && m.termType !== 'NamedNode'))
  );
}

/**
 * True when a client's `||`, `&&`, IN or `!` needs the three-valued encoding (`truth`): every
 * `||` and `&&` outside a FILTER's top, an IN with a variable member there too, and a `!` of
 * `||`, `&&`, `!`, such an IN, or an expression that is no boolean, variable or constant
 * (`!STR(?x)`: its effective boolean value, §17.2.2).
 */
function needsThreeValued(node: Node, booleanVars: Set<string>): boolean {
  if (node.operator === '||' || node.operator === '&&' || (isNode(node) && variableMembers(node))) return !FILTER_TOP.has(node);
  if (node.operator !== '!') return false;
  const [a] = node.args as unknown[];
  if (!isNode(a) || a.termType !== undefined) return false;
  if (a.type === 'operation' && (['||', '&&', '!'].includes(a.operator as string) || variableMembers(a))) return true;
  return !isBooleanTyped(a, booleanVars);
}

/**
 * A test, two-valued in Virtuoso (never an error), that the client's expression `e` has the
 * effective boolean value `want` (SPARQL 1.1 §17.2: the tables of `||`, `&&`, `!`; §17.2.2 for
 * terms that are no booleans): `truth(a || b, true)` is `truth(a, true) || truth(b, true)`,
 * `truth(a || b, false)` is `truth(a, false) && truth(b, false)`, `truth(!a, w)` is `truth(a,
 * !w)`; an error is neither true nor false. A boolean-valued operand is defined when the variables
 * whose being unbound is its error are bound and Virtuoso's value of it is (`COALESCE(v * 0, 1) =
 * 0`); a variable, a number or a simple literal by its effective boolean value.
 * @param e the client's expression, not rewritten (its operands are rewritten here, each copy apart)
 * @throws StoreCannotAnswer for the effective boolean value of an expression whose kind of value the text does not tell (COALESCE, IF, a cast…)
 */
function truth(e: unknown, want: boolean, booleanVars: Set<string>): unknown {
  if (isNode(e) && e.type === 'operation' && (e.operator === '||' || e.operator === '&&')) {
    const joined = (e.operator === '||') === want ? '||' : '&&';
    return balanced(
      joined,
      chainOperands(e, e.operator as string).map((x) => truth(x, want, booleanVars)),
    );
  }
  if (isNode(e) && e.type === 'operation' && e.operator === '!') return truth((e.args as unknown[])[0], !want, booleanVars);
  if (isNode(e) && variableMembers(e)) {
    // `?x IN (a, b)` is `?x = a || ?x = b`, NOT IN `?x != a && ?x != b` (§17.4.1.9, §17.4.1.10): an error member is an error operand.
    const [x, members] = e.args as [unknown, unknown[]];
    const negated = e.operator === 'notin';
    if (members.length === 0) return boolean(negated !== want);
    const chain = members
      .map((m): unknown => ({ type: 'operation', operator: negated ? '!=' : '=', args: [copy(x), m] }))
      .reduce((a, b) => ({ type: 'operation', operator: negated ? '&&' : '||', args: [a, b] }));
    return truth(chain, want, booleanVars);
  }
  const value = (x: unknown) => operation('if', [x, boolean(want), boolean(!want)]);
  const rewritten = () => rewrite(copy(e), booleanVars, true);
  if (isNode(e) && e.termType === 'Literal') {
    const ebv = constantTruth(e);
    return boolean(ebv === want);
  }
  if (isNode(e) && e.termType === 'Variable') {
    const kind = balanced('&&', [
      operation('bound', [e]),
      operation('||', [
        operation('||', [isNumber(e), operation('&&', [operation('isliteral', [e]), operation('=', [operation('datatype', [e]), { termType: 'NamedNode', value: `${XSD}string` }])])]),
        isDataBoolean(e),
      ]),
    ]);
    return operation('if', [kind, value(e), boolean(false)]);
  }
  // An IRI or a blank node has no effective boolean value (an error).
  if (isNode(e) && (e.termType === 'NamedNode' || e.termType === 'BlankNode')) return boolean(false);
  if (!isNode(e) || e.type !== 'operation') throw new StoreCannotAnswer(cannotTell(e));
  const operator = String(e.operator).toLowerCase();
  const strict = ['bound', 'exists', 'notexists'].includes(operator) ? [] : strictVariables(['in', 'notin'].includes(operator) ? { args: [(e.args as unknown[])[0]] } : e);
  const bound = strict.map((v) => operation('bound', [v]));
  if (isBooleanValued(e)) {
    // Virtuoso takes a comparison with an unbound operand for true or false (`2 != ?unbound` is true in an IF): its variables bound first.
    if (want) return bound.length === 0 ? value(rewritten()) : operation('if', [balanced('&&', bound), value(rewritten()), boolean(false)]);
    const defined = operation('=', [operation('coalesce', [operation('*', [rewritten(), integer(0)]), integer(1)]), integer(0)]);
    return operation('if', [balanced('&&', [...bound, defined]), value(rewritten()), boolean(false)]);
  }
  const kind = isNumericValued(e) ? 'isnumeric' : SIMPLE_LITERAL_FUNCTIONS.has(operator) ? 'isliteral' : undefined;
  if (!kind) throw new StoreCannotAnswer(cannotTell(e));
  return operation('if', [balanced('&&', [...bound, operation(kind, [rewritten()])]), value(rewritten()), boolean(false)]);
}

/** An xsd:integer constant. */
const integer = (n: number): Node => ({ termType: 'Literal', value: String(n), language: '', datatype: { termType: 'NamedNode', value: `${XSD}integer` } });

/** The effective boolean value of a constant (§17.2.2), or undefined for its error (an IRI, a literal of another datatype, a language-tagged one). */
function constantTruth(lit: Node): boolean | undefined {
  const datatype = (lit.datatype as { value?: string } | undefined)?.value;
  const text = lit.value as string;
  if (datatype === `${XSD}boolean`) return text === 'true' || text === '1';
  if (isNumericLiteral(lit)) return !(Number(text) === 0 || Number.isNaN(Number(text)));
  if (isStringLiteral(lit)) return text.length > 0;
  return undefined;
}

/** The refusal's words for the effective boolean value of an expression whose kind of value is unknown (`truth`). */
function cannotTell(e: unknown): string {
  const what = isNode(e) && e.type === 'operation' ? `${String(e.operator).toUpperCase()}(…)` : isNode(e) && e.type === 'functionCall' ? 'a function call' : 'this expression';
  return `the effective boolean value of ${what} under ||, && or ! outside a FILTER's top, or as the condition of IF: Virtuoso takes an error there for false, and the text does not tell whether its value is a number, a string or a boolean; its answer could be wrong; this store does not answer it (an oxigraph-backed serve does)`;
}

/**
 * Rewrites one expression or pattern node in place where Virtuoso needs it (module comment), then
 * its children; returns the node to put in its place.
 */
function rewrite(node: unknown, booleanVars: Set<string>, inPattern = true): unknown {
  if (Array.isArray(node)) {
    for (let i = 0; i < node.length; i++) node[i] = rewrite(node[i], booleanVars, inPattern);
    return node;
  }
  if (!isNode(node) || typeof node.termType === 'string') return node;
  if (node.type === 'graph') {
    // No named graphs on a shard endpoint: GRAPH matches nothing.
    return { type: 'group', patterns: [{ type: 'filter', expression: { termType: 'Literal', value: 'false', language: '', datatype: { termType: 'NamedNode', value: `${XSD}boolean` } } }] };
  }
  if (inPattern && node.type === 'filter') markFilterTop(node.expression);
  if (inPattern && node.type === 'operation' && !GENERATED.has(node) && needsThreeValued(node, booleanVars)) {
    // Outside a FILTER's top, an error operand makes Virtuoso's `||`/`&&` (and `!` of them) an error where SPARQL has a value (§17.2): sent as two-valued tests of truth and falsity.
    if (FILTER_TOP.has(node)) return truth(node, true, booleanVars);
    return operation('if', [truth(node, true, booleanVars), boolean(true), operation('if', [truth(node, false, booleanVars), boolean(false), errorVariable()])]);
  }
  if (inPattern && node.type === 'operation' && node.operator === 'if' && !GENERATED.has(node)) {
    // IF(c, x, y) is an error where c is one (§17.4.1.2); Virtuoso's IF takes an error condition for false.
    const [c, x, y] = node.args as unknown[];
    return operation('if', [truth(c, true, booleanVars), rewrite(x, booleanVars, inPattern), operation('if', [truth(c, false, booleanVars), rewrite(y, booleanVars, inPattern), errorVariable()])]);
  }
  if (node.type === 'operation' && (node.operator === '||' || node.operator === '&&')) {
    const operands = chainOperands(node, node.operator).map((x) => rewrite(x, booleanVars, inPattern));
    return balanced(node.operator, operands);
  }
  if (node.type === 'filter' && mentions(node.expression, ['in', 'notin', '||']) && !shortChainOnSubSelect(node.expression)) {
    // FILTER(e) ≡ FILTER(COALESCE(e, false)) (an error is false either way); the wrapping keeps Virtuoso from evaluating the test as an index lookup.
    node.expression = operation('coalesce', [
      errorsAsFalse(rewrite(node.expression, booleanVars, inPattern)),
      { termType: 'Literal', value: 'false', language: '', datatype: { termType: 'NamedNode', value: `${XSD}boolean` } },
    ]);
    return node;
  }
  // A client's isNumeric: Virtuoso's takes a boolean and refuses INF and NaN (isNumber).
  if (inPattern && node.type === 'operation' && String(node.operator).toLowerCase() === 'isnumeric' && !GENERATED.has(node))
    return isNumber(rewrite((node.args as unknown[])[0], booleanVars, inPattern));
  if (inPattern && node.type === 'operation' && node.operator === '!') return rewriteNegation(node, booleanVars, inPattern);
  if (inPattern && node.type === 'operation' && ARITHMETIC.has(node.operator as string)) {
    // In a graph pattern only (as comparisons): arithmetic takes numbers only; Virtuoso adds booleans (0/1) and casts strings.
    const operands = node.args as unknown[];
    if (operands.some((a) => isBooleanTyped(a, booleanVars))) return errorVariable();
    // A variable or an expression that may be no number (STR(?o) + 1): an error (§17.4.2) where Virtuoso fails the whole query (SR087) or casts.
    node.args = operands.map((a) => (isNode(a) && (a.termType === 'Variable' || (a.type !== undefined && !isNumericValued(a))) ? operation('if', [isNumber(a), a, errorVariable()]) : a));
  }
  if (inPattern && node.type === 'operation' && COMPARISONS.has(node.operator as string)) return rewriteComparison(node, booleanVars, inPattern);
  if (node.type === 'values' && Array.isArray(node.values)) node.values = literalsBeforeIris(node.values as Record<string, unknown>[]);
  if (node.type === 'operation' && node.operator === '/') {
    const args = node.args as unknown[];
    node.args = [
      operation('*', [rewrite(args[0], booleanVars, inPattern), { termType: 'Literal', value: '1.0', language: '', datatype: { termType: 'NamedNode', value: `${XSD}decimal` } }]),
      rewrite(args[1], booleanVars, inPattern),
    ];
    return node;
  }
  if ((node.type === 'bind' || ('expression' in node && 'variable' in node)) && isBooleanValued(node.expression)) {
    booleanVars.add((node.variable as { value: string }).value);
  }
  // Inside a sub-SELECT, its FILTERs see the MIN and MAX columns of its own sub-SELECTs.
  const outer = visibleExtremes;
  if (node.type === 'query') visibleExtremes = extremeColumnsOf.get(node) ?? new Map<string, SubSelectExtreme>();
  for (const key of Object.keys(node)) {
    if (key === 'variable') continue;
    // A sub-SELECT's grouping and HAVING are not graph patterns; its projection and ORDER BY are rewritten as one when it has no grouping (projectsAsPattern).
    const outside = node.type === 'query' && (['group', 'having'].includes(key) || ((key === 'variables' || key === 'order') && !projectsAsPattern(node)));
    node[key] = rewrite(node[key], booleanVars, inPattern && !outside);
  }
  visibleExtremes = outer;
  return node;
}

/** A client's `!` in a graph pattern (`rewrite`): the node to put in its place, its operand rewritten (module comment). */
function rewriteNegation(node: Node, booleanVars: Set<string>, inPattern: boolean): unknown {
  const [a] = node.args as unknown[];
  // The variables whose error (unbound) is the equality's error, read before the operand is rewritten.
  const strict = isNode(a) && a.type === 'operation' && (a.operator === '=' || a.operator === '!=') ? strictVariables(a) : [];
  const booleanOperand = isBooleanTyped(a, booleanVars);
  const variable = isNode(a) && a.termType === 'Variable' && !booleanOperand;
  const [operand] = (node.args = [rewrite(a, booleanVars, inPattern)]) as unknown[];
  // `!error` is an error (§17.2): Virtuoso negates the false its IF makes of a comparison with an error operand.
  if (isErrorVariable(operand)) return operand;
  // `=` and `!=` with a number, a string or a boolean are sent as an IF whose fallback is false or true (module comment), which Virtuoso also gives for an unbound operand (its IF takes an error condition for false).
  // The same for a comparison of two variables: Virtuoso takes one unbound (OPTIONAL) for unequal, so that its negation is true.
  if (strict.length > 0)
    return operation('if', [
      balanced(
        '&&',
        strict.map((v) => operation('bound', [v])),
      ),
      node,
      errorVariable(),
    ]);
  if (!variable) return node;
  // `!?x` of a term that is no boolean: its effective boolean value negated (§17.2.2), an error for an IRI, a blank node or a literal of another datatype; Virtuoso negates 0.0 and "" as true values, and an IRI.
  const numberOrString = operation('||', [isNumber(a), operation('&&', [operation('isliteral', [a]), operation('=', [operation('datatype', [a]), { termType: 'NamedNode', value: `${XSD}string` }])])]);
  return operation('if', [numberOrString, operation('if', [a, boolean(false), boolean(true)]), operation('if', [isDataBoolean(a), node, errorVariable()])]);
}

/**
 * A client's comparison in a graph pattern (`rewrite`): the node to put in its place, its operands
 * rewritten (module comment). One at a FILTER's top with a sub-SELECT's MIN or MAX column is sent
 * against that column's companions (`subSelectExtremeComparison`).
 */
function rewriteComparison(node: Node, booleanVars: Set<string>, inPattern: boolean): unknown {
  // Read before the operands are rewritten (the branches take copies of them).
  const extreme = subSelectExtremeComparison(node);
  if (extreme) return extreme;
  const column = subSelectColumnWithConstant(node);
  // At a FILTER's top, a SUM or AVG column of a group holding a member that is no number is unbound in SPARQL (the comparison an error, false).
  const members =
    FILTER_TOP_COMPARISONS.has(node) && !GENERATED.has(node)
      ? (node.args as unknown[]).flatMap((a) => (isNode(a) && a.termType === 'Variable' ? [sumMembersCompanion(a.value as string)] : [])).filter((v): v is Node => v !== undefined)
      : [];
  const sent = comparisonAsSent(node, booleanVars, inPattern);
  const guards = [...new Set(members.map((v) => v.value as string))].map((v) => operation('=', [{ termType: 'Variable', value: v }, integer(0)]));
  if (!column) return guards.length > 0 ? balanced('&&', [...guards, sent]) : sent;
  return balanced('&&', [operation('bound', [column]), ...guards, testsAsLogic(sent)]);
}

/** Per sub-SELECT SUM or AVG column compared with a constant, the sub-SELECT and the aggregate's argument (`sumMembersCompanion`), set by `virtuosoQuery`. */
let sumColumns = new Map<string, { select: Node; expression: Node; used: boolean }>();

/** Prefix of the companion column counting a sub-SELECT SUM's or AVG's members that are no number; never a variable of a gold query. */
export const SUM_MEMBERS_PREFIX = 'fkgqa_sub_nn_';

/**
 * The companion column of a sub-SELECT's `SUM(e)` or `AVG(e)` column `?v` (`?fkgqa_sub_nn_v`): the
 * number of the group's solutions where `e` is no number (unbound, a string, a date…), or undefined
 * for another column. SPARQL's SUM and AVG of such a group are an error (unbound), so that a
 * comparison of them is false; Virtuoso skips unbound members and sums strings as 0. The comparison
 * is sent with `?fkgqa_sub_nn_v = 0` (`addSumMembersCompanions` adds the column to the sub-SELECT).
 * @param column the sub-SELECT's column `v`
 * @throws StoreCannotAnswer when `e` is no variable (`SUM(?v * 2)`)
 */
function sumMembersCompanion(column: string): Node | undefined {
  const sum = sumColumns.get(column);
  // A numeric constant (`SUM(1)`) has no member that is no number.
  if (!sum || isNumericLiteral(sum.expression)) return undefined;
  // Virtuoso computes an expression of a member that is no number (`true * 2`, `xsd:integer("5")` aside), where SPARQL has an
  // error: the members are counted only where the argument is the variable itself.
  if (sum.expression.termType !== 'Variable')
    throw new StoreCannotAnswer(
      `a sub-SELECT's SUM or AVG of an expression (?${column}) compared in a FILTER: Virtuoso evaluates it otherwise than SPARQL; this store does not answer it (an oxigraph-backed serve does)`,
    );
  sum.used = true;
  return { termType: 'Variable', value: `${SUM_MEMBERS_PREFIX}${column}` };
}

/**
 * The `SUM(e)` and `AVG(e)` columns projected by exactly one sub-SELECT of the query (not the query itself).
 * @param ast the parsed query
 */
function subSelectSums(ast: unknown): Map<string, { select: Node; expression: Node; used: boolean }> {
  const out = new Map<string, { select: Node; expression: Node; used: boolean }>();
  const seen = new Map<string, number>();
  for (const n of queryNodes(ast))
    if (n !== ast && Array.isArray(n.variables))
      for (const item of n.variables as Node[]) {
        if (item.termType === 'Variable' || !isNode(item.variable)) continue;
        const name = item.variable.value as string;
        seen.set(name, (seen.get(name) ?? 0) + 1);
        const e = item.expression;
        const aggregation = isNode(e) && e.type === 'aggregate' ? String(e.aggregation).toLowerCase() : '';
        if ((aggregation === 'sum' || aggregation === 'avg') && isNode((e as Node).expression)) out.set(name, { select: n, expression: (e as Node).expression as Node, used: false });
      }
  for (const name of [...out.keys()]) if (seen.get(name) !== 1) out.delete(name);
  return out;
}

/** Adds to each sub-SELECT the companion `SUM(IF(number, 0, 1)) AS ?fkgqa_sub_nn_v` of its SUM and AVG columns a comparison used (`sumMembersCompanion`). */
function addSumMembersCompanions(): void {
  for (const [column, sum] of sumColumns) {
    if (!sum.used) continue;
    const others = operation('if', [isNumberTerm(sum.expression), integer(0), integer(1)]);
    (sum.select.variables as Node[]).push({
      expression: { type: 'aggregate', aggregation: 'sum', distinct: false, expression: others },
      variable: { termType: 'Variable', value: `${SUM_MEMBERS_PREFIX}${column}` },
    });
  }
}

/**
 * The sub-SELECT column of a comparison at a FILTER's top of a sub-SELECT's projected expression
 * (`{ SELECT ?g (COUNT(*) AS ?c) … GROUP BY ?g } FILTER(?c != 10)`) with a constant, or undefined:
 * Virtuoso fails to compile an IF or a COALESCE over such a column (SQ156), where it compiles the
 * same tests joined by `&&`, `||` and `!` (`testsAsLogic`).
 */
function subSelectColumnWithConstant(node: Node): Node | undefined {
  if (!FILTER_TOP_COMPARISONS.has(node) || GENERATED.has(node)) return undefined;
  const args = node.args as unknown[];
  const at = args.findIndex((a) => isNode(a) && a.termType === 'Variable' && subSelectColumns.has(a.value as string));
  const other = args[1 - at];
  return at >= 0 && isNode(other) && (other.termType === 'Literal' || other.termType === 'NamedNode') ? (args[at] as Node) : undefined;
}

/**
 * A comparison as sent (`comparisonAsSent`) with its IFs and its `COALESCE(e, false)` written as
 * `&&`, `||` and `!` of the same tests, for a FILTER's top, where false and an error drop the same
 * rows: `IF(c, x, error)` and `IF(c, x, false)` as `c && x`, `IF(c, x, true)` as `!c || x`, other IFs
 * as `(c && x) || (!c && y)`. The tests are two-valued over a bound column (the caller adds `BOUND`).
 */
function testsAsLogic(e: unknown): unknown {
  if (!isNode(e) || e.type !== 'operation' || !GENERATED.has(e)) return e;
  const args = e.args as unknown[];
  const constant = (x: unknown, value: string) => isNode(x) && x.termType === 'Literal' && (x.datatype as Node | undefined)?.value === `${XSD}boolean` && x.value === value;
  if (e.operator === 'coalesce' && args.length === 2 && constant(args[1], 'false')) return testsAsLogic(args[0]);
  if (e.operator === '&&' || e.operator === '||') return operation(e.operator, args.map(testsAsLogic));
  if (e.operator !== 'if') return e;
  const [c, x, y] = args;
  if (isErrorVariable(y) || constant(y, 'false')) return operation('&&', [c, testsAsLogic(x)]);
  if (constant(y, 'true')) return operation('||', [operation('!', [c]), testsAsLogic(x)]);
  return operation('||', [operation('&&', [c, testsAsLogic(x)]), operation('&&', [operation('!', [copy(c)]), testsAsLogic(y)])]);
}

/** A client's comparison as `rewriteComparison` sends it but for a sub-SELECT's MIN or MAX column: its operands rewritten. */
function comparisonAsSent(node: Node, booleanVars: Set<string>, inPattern: boolean): unknown {
  // In a graph pattern only: Virtuoso refuses a variable it cannot group (?fkgqa_error) in projections, HAVING and ORDER BY.
  const booleans = (node.args as unknown[]).map((a) => isBooleanTyped(a, booleanVars));
  // The variables whose being unbound is the client's comparison's error, read before its operands are rewritten (none for this store's own tests).
  const strict = GENERATED.has(node) ? [] : strictVariables(node);
  const args = (node.args as unknown[]).map((a) => rewrite(a, booleanVars, inPattern));
  node.args = args;
  // An error operand (arithmetic on a boolean) makes the comparison an error, which Virtuoso's IF would take for false (and `!` of it for true).
  if (args.some(isErrorVariable)) return errorVariable();
  if (booleans.some(Boolean)) return booleanComparison(node, booleans);
  const numeric = args.findIndex(isNumericLiteral);
  const text = args.findIndex(isStringLiteral);
  const typed = args.findIndex(isOtherTypedLiteral);
  const constant = numeric >= 0 ? numeric : text >= 0 ? text : typed;
  const other = args[1 - constant];
  const ordering = !['=', '!='].includes(node.operator as string);
  if (constant < 0 && ordering && !args.some((a) => isNode(a) && a.termType === 'Literal')) {
    // Two terms of the data: a number cannot be ordered with anything else but a number (a type error, module comment).
    // A boolean of the data is numeric to Virtuoso; oxigraph orders a boolean only with an equal boolean.
    const sameKind = balanced('&&', [
      operation('=', [isNumber(args[0]), isNumber(args[1])]),
      operation('=', [isDataBoolean(args[0]), isDataBoolean(args[1])]),
      operation('||', [operation('!', [isDataBoolean(args[0])]), operation('=', [args[0], args[1]])]),
    ]);
    // A variable operand bound by the data is compared through COALESCE: Virtuoso compares a stored integer with a sub-SELECT's
    // decimal wrongly (an index range: `?p > ?m` over the 4,079 city populations, ?m their AVG, kept 417 of 875), not with an expression.
    // A sub-SELECT's column is left bare: Virtuoso fails to compile an expression of it in a FILTER (SQ156).
    // A stored xsd:float compares as equal to every number there (`?f > ?w` false, `?f >= ?w` true): such a pair is compared as
    // doubles, the other operand first promoted to a float as SPARQL does (§17.3) unless it is a double (`floatPromoted`).
    node.args = args.map((a, i) => (isNode(a) && a.termType === 'Variable' && !subSelectColumns.has(a.value as string) ? operation('coalesce', [floatPromoted(a, args[1 - i])]) : a));
    // INF, -INF and NaN (Virtuoso orders them as no numbers): compared by their kind (nonFiniteOrder).
    const [finite, trueCases, errorCases] = nonFiniteOrder(node.operator as string, args[0], args[1]);
    // At a FILTER's top, false removes the solution as the type error does; Virtuoso fails to compile the IF over a sub-SELECT's aggregate (SQ156), it compiles `&&`.
    if (FILTER_TOP_COMPARISONS.has(node)) return operation('&&', [sameKind, operation('||', [operation('&&', [finite, node]), trueCases])]);
    const special = operation('if', [trueCases, boolean(true), operation('if', [errorCases, errorVariable(), boolean(false)])]);
    return operation('if', [sameKind, operation('if', [finite, node, special]), { termType: 'Variable', value: ERROR_VARIABLE }]);
  }
  // A language-tagged constant (`?v > "apple"@en`): SPARQL orders it only with a literal of the same language tag (oxigraph),
  // Virtuoso with simple literals too.
  const tagged = args.findIndex(isLanguageLiteral);
  if (constant < 0 && ordering && tagged >= 0 && !(isNode(args[1 - tagged]) && (args[1 - tagged] as Node).termType === 'Literal')) {
    const language = simpleLiteral(String((args[tagged] as Node).language).toLowerCase());
    return operation('if', [operation('=', [operation('lcase', [operation('lang', [copy(args[1 - tagged])])]), language]), node, errorVariable()]);
  }
  // Two terms of the data (`?x != ?w`): Virtuoso takes an unbound one for unequal.
  if (constant < 0) return ordering ? node : unboundAsError(node, strict, FILTER_TOP_COMPARISONS.has(node), node.operator === '=');
  if (isNode(other) && other.termType === 'Literal') return node;
  if (ordering && numeric < 0) {
    // A string constant: compared with STR() of a simple literal; another datatype: only with a literal of that datatype (module comment).
    const datatype = text >= 0 ? { termType: 'NamedNode', value: `${XSD}string` } : (args[typed] as Node).datatype;
    const guard = operation('&&', [operation('isliteral', [other]), operation('=', [operation('datatype', [other]), datatype])]);
    const compared = text >= 0 ? operation(node.operator as string, constant === 0 ? [args[0], operation('str', [other])] : [operation('str', [other]), args[1]]) : node;
    return operation('if', [guard, compared, { termType: 'Variable', value: ERROR_VARIABLE }]);
  }
  if (typed >= 0 && numeric < 0 && text < 0) return node;
  // Virtuoso compares a string with a number by casting one to the other. SPARQL (and oxigraph): a
  // string is not equal to a number (= false, != true), and cannot be ordered with one (a type error).
  const otherwise = node.operator === '=' ? boolean(false) : node.operator === '!=' ? boolean(true) : { termType: 'Variable', value: ERROR_VARIABLE };
  const sent = numeric >= 0 ? numberComparison(node, numeric, otherwise) : operation('if', [isNumber(other), otherwise, node]);
  return ordering ? sent : unboundAsError(sent, strict, FILTER_TOP_COMPARISONS.has(node), node.operator === '=');
}

/**
 * A variable operand `a` of an ordering comparison with `b`, as Virtuoso orders it right: where
 * either is an xsd:float (Virtuoso compares a stored float as equal to every number of the data),
 * the double of the float SPARQL compares (`a` itself promoted to a float, §17.3, unless either is a
 * double: then `a` widened to a double); else `a`. Only numbers are cast (Virtuoso fails the query
 * on a cast of a string).
 */
function floatPromoted(a: unknown, b: unknown): Node {
  const typed = (x: unknown, local: string) => operation('=', [operation('datatype', [copy(x)]), XSD_TYPE(local)]);
  const cast = (local: string, x: unknown): Node => ({ type: 'functionCall', function: XSD_TYPE(local), args: [x], distinct: false });
  // Beside a sub-SELECT's column, which an expression here would keep Virtuoso from compiling (SQ156): a float widened alone.
  if (isNode(b) && b.termType === 'Variable' && subSelectColumns.has(b.value as string))
    return operation('if', [operation('&&', [operation('isnumeric', [copy(a)]), typed(a, 'float')]), cast('double', copy(a)), a]);
  const float = operation('||', [typed(a, 'float'), typed(b, 'float')]);
  const double = operation('||', [typed(a, 'double'), typed(b, 'double')]);
  const promoted = operation('if', [double, cast('double', copy(a)), cast('double', cast('float', copy(a)))]);
  return operation('if', [operation('&&', [operation('isnumeric', [copy(a)]), operation('&&', [operation('isnumeric', [copy(b)]), float])]), promoted, a as Node]);
}

/** The kinds of number `nonFiniteKind` tells apart: finite, INF, -INF and NaN. */
type NumberKind = 'finite' | 'inf' | '-inf' | 'nan';

/** The lexical forms of INF, -INF and NaN (XSD 1.1 §3.3.5: `+INF` too). */
const NON_FINITE_FORMS: Record<Exclude<NumberKind, 'finite'>, string[]> = { inf: ['INF', '+INF'], '-inf': ['-INF'], nan: ['NaN'] };

/** The kind of an xsd:double or xsd:float constant that is INF, -INF or NaN, else undefined. */
function nonFiniteKind(c: unknown): Exclude<NumberKind, 'finite'> | undefined {
  if (!isNode(c) || c.termType !== 'Literal') return undefined;
  const datatype = (c.datatype as { value?: string } | undefined)?.value;
  if (datatype !== `${XSD}double` && datatype !== `${XSD}float`) return undefined;
  return (Object.keys(NON_FINITE_FORMS) as Exclude<NumberKind, 'finite'>[]).find((k) => NON_FINITE_FORMS[k].includes(c.value as string));
}

/**
 * Virtuoso's test that a term is a number of kind `kind`. Virtuoso keeps INF, -INF and NaN of the
 * data as literals typed xsd:double or xsd:float that its isNumeric refuses and its comparisons order
 * as no numbers (`-INF > 0` and `NaN > 0` true); `STR()` gives their lexical form.
 */
function isKind(x: unknown, kind: NumberKind): Node {
  if (kind === 'finite') return isNumberTerm(x as Node);
  const forms = NON_FINITE_FORMS[kind].map((f) => operation('=', [operation('str', [copy(x)]), simpleLiteral(f)]));
  return balanced('&&', [
    operation('in', [operation('datatype', [copy(x)]), [XSD_TYPE('double'), XSD_TYPE('float')]]),
    operation('!', [operation('isnumeric', [copy(x)])]),
    balanced('||', forms),
  ]) as Node;
}

/** The mirror of an operator (`c < x` is `x > c`). */
const MIRROR: Record<string, string> = { '<': '>', '>': '<', '<=': '>=', '>=': '<=', '=': '=', '!=': '!=' };

/**
 * `a op b` for numbers of kinds `a` and `b`, not both finite, as oxigraph evaluates it (XPath
 * op:numeric-less-than and friends): -INF below every finite number, INF above; NaN equal to
 * nothing (`!=` true) and ordered with nothing (a type error: undefined), but with itself as the
 * same term (`sameTerm`: `<=` and `>=` true, `<` and `>` false; oxigraph compares one term with
 * itself as equal before it compares values).
 */
function kindRelation(op: string, a: NumberKind, b: NumberKind, sameTerm = false): boolean | undefined {
  if (a === 'nan' || b === 'nan') {
    if (op === '=' || op === '!=') return op === '!=';
    if (a === 'nan' && b === 'nan' && sameTerm) return op === '<=' || op === '>=';
    return undefined;
  }
  const rank = { '-inf': -1, finite: 0, inf: 1 };
  const d = rank[a] - rank[b];
  return { '=': d === 0, '!=': d !== 0, '<': d < 0, '>': d > 0, '<=': d <= 0, '>=': d >= 0 }[op];
}

/**
 * A comparison of a term with a numeric constant (its operands rewritten), INF, -INF and NaN
 * compared as oxigraph compares them (`kindRelation`): a finite number with a finite constant with
 * SPARQL's promotion (`promotedComparison`); a term that is INF, -INF or NaN (`isKind`), or a
 * constant that is one (which Virtuoso compares as no number: `?v = "NaN"^^xsd:double` matched every
 * number), by their kinds; any other term `otherwise` (false for `=`, true for `!=`, else the error).
 * @param node the comparison (its operands rewritten already)
 * @param numeric the index of the numeric constant among its operands
 * @param otherwise the value for a term that is no number
 * @returns the expression to send
 */
function numberComparison(node: Node, numeric: number, otherwise: Node): unknown {
  const args = node.args as Node[];
  const c = args[numeric];
  const x = args[1 - numeric];
  // `x op c`, whichever side the constant was written on.
  const op = numeric === 0 ? MIRROR[node.operator as string] : (node.operator as string);
  const constantKind = nonFiniteKind(c) ?? 'finite';
  // `=` and `!=` of a finite constant: Virtuoso's own (INF, -INF and NaN of the data, which it holds as no numbers, equal to no number).
  if (constantKind === 'finite' && (op === '=' || op === '!=')) return operation('if', [isNumber(x), promotedComparison(node, numeric), otherwise]);
  const value = (b: boolean | undefined): Node => (b === undefined ? errorVariable() : boolean(b));
  let sent: Node = otherwise;
  for (const kind of ['nan', '-inf', 'inf'] as const) {
    // A kind whose value is the error of a term that is no number is left to that fallback.
    if (kind !== constantKind && kindRelation(op, kind, constantKind) === undefined && isErrorVariable(otherwise)) continue;
    if (kind === 'nan' && constantKind === 'nan') {
      // NaN with itself: the same term only when of the constant's datatype.
      const same = operation('=', [operation('datatype', [copy(x)]), c.datatype]);
      sent = operation('if', [isKind(x, 'nan'), operation('if', [same, value(kindRelation(op, 'nan', 'nan', true)), value(kindRelation(op, 'nan', 'nan'))]), sent]);
    } else sent = operation('if', [isKind(x, kind), value(kindRelation(op, kind, constantKind)), sent]);
  }
  const finite = constantKind === 'finite' ? promotedComparison(node, numeric) : value(kindRelation(op, 'finite', constantKind));
  return operation('if', [isKind(x, 'finite'), finite, sent]);
}

/**
 * An ordering comparison `a op b` of two terms of the data whose kinds are numbers (`isNumber`),
 * INF, -INF and NaN among them, as oxigraph orders them (`kindRelation`).
 * @returns [the test that neither is INF, -INF or NaN (Virtuoso's comparison is right there), the
 *   test that the comparison is true for an INF, -INF or NaN operand, the test that it is a type error there]
 */
function nonFiniteOrder(op: string, a: unknown, b: unknown): [Node, Node, Node] {
  const kinds: NumberKind[] = ['finite', 'inf', '-inf', 'nan'];
  const special = (x: unknown) => operation('&&', [operation('in', [operation('datatype', [copy(x)]), [XSD_TYPE('double'), XSD_TYPE('float')]]), operation('!', [operation('isnumeric', [copy(x)])])]);
  const finite = operation('&&', [operation('!', [special(a)]), operation('!', [special(b)])]);
  const trueCases: Node[] = [];
  // NaN and a number of the same datatype: the same term (oxigraph: `<=` and `>=` true, `<` and `>` false).
  const sameNaN = balanced('&&', [isKind(a, 'nan'), isKind(b, 'nan'), operation('=', [operation('datatype', [copy(a)]), operation('datatype', [copy(b)])])]) as Node;
  for (const ka of kinds)
    for (const kb of kinds) {
      if ((ka === 'finite' && kb === 'finite') || ka === 'nan' || kb === 'nan') continue;
      if (kindRelation(op, ka, kb)) trueCases.push(operation('&&', [isKind(a, ka), isKind(b, kb)]));
    }
  if (kindRelation(op, 'nan', 'nan', true)) trueCases.push(sameNaN);
  // Any other comparison with NaN is a type error.
  const errorCases = operation('&&', [operation('||', [isKind(a, 'nan'), isKind(b, 'nan')]), operation('!', [sameNaN])]);
  return [finite, trueCases.length === 0 ? boolean(false) : (balanced('||', trueCases) as Node), errorCases];
}

/**
 * An `=` or `!=` sent as an IF whose fallback is false or true, made an error where one of its
 * strict variables is unbound (§17.3: an unbound operand is an error; Virtuoso's IF takes the
 * failed type test of an unbound variable for its fallback, so that `?o != 21` was true for an
 * OPTIONAL left unbound). At a FILTER's top `COALESCE(BOUND(?v) && e, false)` (false and the
 * error both drop the solution; Virtuoso compiles `&&` where it fails on IF over a sub-SELECT's
 * column; without COALESCE it evaluated the test as a lookup that kept an OPTIONAL's unbound row).
 * @param sent the comparison as sent
 * @param strict the variables whose being unbound is the comparison's error (`strictVariables`)
 * @param top true at a FILTER's top
 * @param equality true for `=` (false where it is unbound: at a FILTER's top left as is)
 * @returns the expression to send
 */
function unboundAsError(sent: unknown, strict: Node[], top: boolean, equality: boolean): unknown {
  if (strict.length === 0 || (top && equality)) return sent;
  const bound = balanced(
    '&&',
    strict.map((v) => operation('bound', [copy(v)])),
  );
  return top ? operation('coalesce', [operation('&&', [bound, sent]), boolean(false)]) : operation('if', [bound, sent, errorVariable()]);
}

/**
 * A comparison of a term with a numeric constant, with SPARQL's numeric type promotion (§17.3,
 * XPath op:numeric-equal and friends): a decimal promoted to the double or float it is compared
 * with. Virtuoso compares a double with a decimal in decimal (the double 74.4 as
 * 74.400000000000006: `?x = 74.4` false, `?x > 74.4` true). A decimal constant is sent as a double
 * (float) constant where the term is a double (float): `IF(DATATYPE(?x) = xsd:double, ?x = "74.4"^^xsd:double,
 * IF(DATATYPE(?x) = xsd:float, ?x = "74.4"^^xsd:float, ?x = 74.4))`; with a double or float
 * constant a decimal term is cast to the constant's type: `IF(DATATYPE(?x) = xsd:decimal, xsd:double(?x) = c, ?x = c)`.
 * Integers and other pairs are compared as written.
 * @param node the comparison (its operands rewritten already)
 * @param constant the index of the numeric constant among its operands
 * @returns the expression to send
 */
function promotedComparison(node: Node, constant: number): unknown {
  const args = node.args as Node[];
  const c = args[constant];
  const datatype = (c.datatype as { value?: string } | undefined)?.value;
  const compare = (term: unknown, value: unknown): Node => operation(node.operator as string, constant === 0 ? [value, term] : [term, value]);
  const other = args[1 - constant];
  const typed = (local: string): Node => operation('=', [operation('datatype', [copy(other)]), XSD_TYPE(local)]);
  if (datatype === `${XSD}decimal`) {
    const as = (local: string): Node => ({ termType: 'Literal', value: c.value, language: '', datatype: XSD_TYPE(local) });
    return operation('if', [typed('double'), compare(copy(other), as('double')), operation('if', [typed('float'), compare(copy(other), as('float')), node])]);
  }
  if (datatype === `${XSD}double` || datatype === `${XSD}float`) {
    const cast = { type: 'functionCall', function: XSD_TYPE(datatype.slice(XSD.length)), args: [copy(other)], distinct: false };
    return operation('if', [typed('decimal'), compare(cast, c), node]);
  }
  return node;
}

/**
 * True when a SELECT's projection takes the rewrites of a graph pattern: it has no GROUP BY and no
 * aggregate, so that Virtuoso takes the never-bound ERROR_VARIABLE in it (`(?o > 2 AS ?big)` is a
 * type error for a string or an IRI, as in a FILTER; Virtuoso alone casts and compares).
 */
function projectsAsPattern(select: Node): boolean {
  return select.group === undefined && !hasAggregate(select.variables) && !hasAggregate(select.having) && !hasAggregate(select.order);
}

/**
 * Why Virtuoso would answer a grouped query (GROUP BY or an aggregate) otherwise than SPARQL, or
 * undefined: in its projection and HAVING, where the rewrites of a graph pattern do not apply
 * (Virtuoso refuses the never-bound ERROR_VARIABLE there and fails on `isNumeric` of an aggregate),
 * Virtuoso compares and computes with booleans as the integers 0 and 1 (`COUNT(*) = true`, `MAX(?n
 * > 2) + 1`), and compares numbers with strings and other non-numeric constants by casting
 * (`MAX(?n) > "a"`), where SPARQL has false, true or a type error (§17.3). Comparisons of
 * aggregates with numbers (`HAVING(COUNT(*) > 1)`) and of two boolean-valued expressions with `=`
 * or `!=` are answered alike, and pass.
 * @param query the parsed query, its graph patterns rewritten (booleanVars filled), checked with its sub-queries
 * @returns the words of the refusal: the expression's operator and what Virtuoso does there
 */
function groupedDifference(query: unknown, booleanVars: Set<string>, seen = new Set<unknown>()): string | undefined {
  if (!isNode(query) || seen.has(query) || typeof query.termType === 'string') return undefined;
  seen.add(query);
  if (query.type === 'query' && query.queryType === 'SELECT' && !projectsAsPattern(query)) {
    const expressions = [...((query.variables as Node[] | undefined) ?? []).map((item) => item.expression), ...((query.having as unknown[] | undefined) ?? [])];
    for (const e of expressions) {
      const found = groupedExpressionDifference(e, booleanVars);
      if (found)
        return `in the projection or HAVING of a grouped query, ${found}, where SPARQL gives false, true or a type error: its answer would be wrong; this store does not answer it (an oxigraph-backed serve does)`;
    }
  }
  for (const value of Object.values(query)) {
    const found = groupedDifference(value, booleanVars, seen);
    if (found) return found;
  }
  return undefined;
}

/** The first comparison or arithmetic of a grouped projection or HAVING expression that Virtuoso evaluates otherwise than SPARQL (groupedDifference), described; or undefined. */
function groupedExpressionDifference(e: unknown, booleanVars: Set<string>): string | undefined {
  const stack = [e];
  while (stack.length > 0) {
    const n = stack.pop();
    if (!isNode(n) || typeof n.termType === 'string') continue;
    if (n.type === 'operation') {
      const operator = String(n.operator);
      const args = n.args as unknown[];
      const booleans = args.map((a) => isBooleanTyped(a, booleanVars));
      if (ARITHMETIC.has(operator) && booleans.some(Boolean)) return `arithmetic on a boolean (${operator}): Virtuoso takes booleans for the integers 0 and 1`;
      if (COMPARISONS.has(operator)) {
        const ordering = !['=', '!='].includes(operator);
        if (booleans.some(Boolean) && (ordering || !booleans.every(Boolean))) return `a comparison with a boolean (${operator}): Virtuoso takes booleans for the integers 0 and 1`;
        const constants = args.filter((a) => isNode(a) && a.termType === 'Literal');
        if (constants.length === 1 && (isStringLiteral(constants[0]) || isOtherTypedLiteral(constants[0])))
          return `a comparison with a string or another non-numeric constant (${operator}): Virtuoso casts one operand to the other's type`;
      }
      // The patterns of EXISTS are graph patterns (rewritten as such); their sub-queries are checked by groupedDifference.
      if (operator !== 'exists' && operator !== 'notexists') stack.push(...args);
    } else if (n.type === 'aggregate') {
      const aggregation = String(n.aggregation).toLowerCase();
      if ((aggregation === 'sum' || aggregation === 'avg') && isBooleanTyped(n.expression, booleanVars))
        return `arithmetic on a boolean (${aggregation.toUpperCase()}): Virtuoso takes booleans for the integers 0 and 1`;
      stack.push(n.expression);
    } else stack.push(...Object.values(n));
  }
  return undefined;
}

/**
 * The rows of a VALUES block in an order in which, in every column, the rows holding a simple
 * literal come before those holding an IRI (module comment), else in their own order: each time,
 * the first row in their order that no column holds back any more.
 * @param rows sparqljs's rows (variable → term, UNDEF absent)
 * @throws StoreCannotAnswer when no order serves every column
 */
export function literalsBeforeIris(rows: Record<string, unknown>[]): Record<string, unknown>[] {
  const literalsLeft = new Map<string, number>();
  for (const row of rows) for (const [k, t] of Object.entries(row)) if (isStringLiteral(t)) literalsLeft.set(k, (literalsLeft.get(k) ?? 0) + 1);
  const iriColumns = rows.map((row) =>
    Object.entries(row)
      .filter(([k, t]) => isNode(t) && t.termType === 'NamedNode' && literalsLeft.has(k))
      .map(([k]) => k),
  );
  if (iriColumns.every((c) => c.length === 0)) return rows;
  const out: Record<string, unknown>[] = [];
  const placed = new Array<boolean>(rows.length).fill(false);
  for (let progress = true; progress && out.length < rows.length;) {
    progress = false;
    for (let i = 0; i < rows.length; i++) {
      if (placed[i] || iriColumns[i].some((k) => literalsLeft.get(k)! > 0)) continue;
      placed[i] = progress = true;
      out.push(rows[i]);
      let freed = false;
      for (const [k, t] of Object.entries(rows[i])) {
        if (!isStringLiteral(t)) continue;
        literalsLeft.set(k, literalsLeft.get(k)! - 1);
        freed ||= literalsLeft.get(k) === 0;
      }
      // A column no longer holds back its IRI rows: they are taken in their order, from the first row on.
      if (freed) i = -1;
    }
  }
  if (out.length < rows.length)
    throw new StoreCannotAnswer(
      'a VALUES block whose columns need opposite row orders (a simple literal after an IRI in one column, an IRI after a simple literal in another): Virtuoso reads a simple literal after an IRI in a VALUES column as an IRI, so its answer would be wrong; this store does not answer it (an oxigraph-backed serve does)',
    );
  return out;
}

/**
 * A valid query the Virtuoso store does not answer because Virtuoso would answer it wrongly: the
 * store's limit, not the query's fault (answered 500 and counted as the store failing).
 */
export class StoreCannotAnswer extends Error {}

/** True when the expression uses one of the operators (iterative: chains may be long). */
function mentions(e: unknown, operators: string[]): boolean {
  const stack = [e];
  while (stack.length > 0) {
    const n = stack.pop();
    if (!isNode(n) || n.type !== 'operation') continue;
    if (operators.includes(String(n.operator).toLowerCase()) || (operators.includes('in') && FROM_IN.has(n))) return true;
    for (const a of n.args as unknown[]) stack.push(a);
  }
  return false;
}

/** True when an expression's value is an xsd:boolean (BOOLEAN_OPERATORS at its root). */
function isBooleanValued(e: unknown): boolean {
  if (isNode(e) && e.termType === 'Literal') return (e.datatype as { value?: string } | undefined)?.value === `${XSD}boolean`;
  // A test guarded by this store (`IF(BOUND(?y), isIRI(?y), ?fkgqa_error)`, virtuoso-shapes.ts) is boolean-valued or an error.
  if (isNode(e) && GENERATED.has(e) && e.operator === 'if') return isBooleanValued((e.args as unknown[])[1]);
  return isNode(e) && e.type === 'operation' && BOOLEAN_OPERATORS.has(String(e.operator).toLowerCase());
}

/**
 * Gives the query with OFFSET and no LIMIT the LIMIT that makes offset + limit VIRTUOSO_MAX_ROWS
 * (MaxSortedTopRows; at least 1) (module comment); the store refuses its answer where it reaches
 * that LIMIT. A sub-SELECT's rows cut there would not be seen (a COUNT outside it counted 999,995
 * of 4,013,731): one with OFFSET and no LIMIT is refused.
 * @returns the LIMIT given to `node` itself, if any
 * @throws StoreCannotAnswer for a sub-SELECT with OFFSET and no LIMIT
 */
function limitOffsets(node: unknown, seen = new Set<unknown>(), top = true): number | undefined {
  if (!isNode(node) || seen.has(node) || typeof node.termType === 'string') return undefined;
  seen.add(node);
  let given: number | undefined;
  if (node.type === 'query' && node.offset !== undefined && node.limit === undefined) {
    if (!top)
      throw new StoreCannotAnswer(
        `a sub-SELECT with OFFSET and no LIMIT: Virtuoso needs a LIMIT beside OFFSET (SR350) and sorts at most ${VIRTUOSO_MAX_ROWS} rows, and the rows a LIMIT cut there would not be seen outside the sub-SELECT; this store does not answer it (an oxigraph-backed serve does)`,
      );
    node.limit = given = Math.max(1, VIRTUOSO_MAX_ROWS - Number(node.offset));
  }
  for (const value of Object.values(node)) limitOffsets(value, seen, false);
  return given;
}

/** sparqljs's Wildcard (`*` in SELECT and COUNT(*)) is a class the Generator checks with instanceof: a plain copy (from the parser thread) is made one again. */
function restoreWildcards(node: unknown, Wildcard: new () => unknown, seen = new Set<unknown>()): void {
  if (!isNode(node) || seen.has(node)) return;
  seen.add(node);
  for (const [key, value] of Object.entries(node)) {
    if (isNode(value) && value.termType === 'Wildcard' && !(value instanceof Wildcard)) (node as Node)[key] = new Wildcard();
    else restoreWildcards(value, Wildcard, seen);
  }
  if (Array.isArray(node)) node.forEach((v, i) => isNode(v) && v.termType === 'Wildcard' && !(v instanceof Wildcard) && (node[i] = new Wildcard()));
}

/**
 * True for a FILTER's expression with `||` but no IN that names a sub-SELECT's projected expression
 * (`FILTER(?h = ?min || ?g = 3)`) and holds fewer than 20 comparisons: sent without the COALESCE of
 * long filters (`rewrite`), which Virtuoso fails to compile over such a column (SQ156); the lookup
 * that loses rows is taken for about 20 values or more.
 */
function shortChainOnSubSelect(e: unknown): boolean {
  if (mentions(e, ['in', 'notin'])) return false;
  let comparisons = 0;
  let column = false;
  const stack = [e];
  while (stack.length > 0) {
    const n = stack.pop();
    if (!isNode(n)) continue;
    if (n.termType === 'Variable' && (subSelectColumns.has(n.value as string) || visibleExtremes.has(n.value as string))) column = true;
    if (n.type !== 'operation') continue;
    if (COMPARISONS.has(n.operator as string)) comparisons++;
    stack.push(...(n.args as unknown[]));
  }
  return column && comparisons < 20;
}

/** The variables a sub-SELECT of the query being rewritten projects as an expression (`(AVG(?x) AS ?m)`), set by `virtuosoQuery`. */
let subSelectColumns = new Set<string>();

/** One `(MIN(e) AS ?v)` or `(MAX(e) AS ?v)` of a sub-SELECT (`subSelectExtremes`). */
interface SubSelectExtreme {
  aggregation: 'min' | 'max';
  /** The sub-SELECT projecting it, which gets its companion columns when a comparison uses them. */
  select: Node;
  /** `e`. */
  expression: Node;
  /** `?v`. */
  column: string;
  /** Projected by the query itself: the sub-SELECT also counts its other terms and NaNs (`projectedSubSelectExtremes`). */
  projected?: boolean;
  /** Compared by a FILTER (`subSelectExtremeComparison`): the sub-SELECT fails on terms of other kinds alone and on NaNs (`addSubSelectCompanions`). */
  compared?: boolean;
}

/** Per query node of the query being rewritten, the MIN and MAX columns of its direct sub-SELECTs (`subSelectExtremes`), set by `virtuosoQuery`. */
let extremeColumnsOf = new WeakMap<object, Map<string, SubSelectExtreme>>();
/** The MIN and MAX sub-SELECT columns a FILTER sees where `rewrite` is: those of the query node being rewritten. */
let visibleExtremes = new Map<string, SubSelectExtreme>();
/** The sub-SELECT MIN and MAX columns a comparison was sent against (their companions are added to the sub-SELECT). */
let usedExtremes = new Set<SubSelectExtreme>();

/** Prefix of the companion columns of a sub-SELECT's MIN or MAX (`subSelectExtremeComparison`); never a variable of a gold query. */
export const SUB_EXTREME_PREFIX = 'fkgqa_sub_';

/**
 * Per query node (the query and its sub-SELECTs), the `(MIN(e) AS ?v)` and `(MAX(e) AS ?v)` of the
 * sub-SELECTs directly in its WHERE clause (not inside another sub-SELECT), by `?v`: those its FILTERs
 * see together with their companions. A column another direct sub-SELECT projects too is left out
 * (rows of that one would have no companions).
 * @param ast the parsed query
 */
function subSelectExtremes(ast: unknown): WeakMap<object, Map<string, SubSelectExtreme>> {
  const out = new WeakMap<object, Map<string, SubSelectExtreme>>();
  for (const query of queryNodes(ast)) {
    const selects: Node[] = [];
    const stack: unknown[] = [query.where];
    while (stack.length > 0) {
      const n = stack.pop();
      if (Array.isArray(n)) stack.push(...(n as unknown[]));
      else if (isNode(n) && typeof n.termType !== 'string') {
        if (n.type === 'query') selects.push(n);
        else stack.push(...Object.values(n));
      }
    }
    const projected = new Map<string, number>();
    const columns = new Map<string, SubSelectExtreme>();
    for (const select of selects)
      for (const item of (select.variables ?? []) as Node[]) {
        const name = item.termType === 'Variable' ? (item.value as string) : isNode(item.variable) ? (item.variable.value as string) : undefined;
        if (name === undefined) continue;
        projected.set(name, (projected.get(name) ?? 0) + 1);
        const e = item.expression;
        const aggregation = isNode(e) && e.type === 'aggregate' ? String(e.aggregation).toLowerCase() : '';
        if ((aggregation === 'min' || aggregation === 'max') && isNode((e as Node).expression) && ((e as Node).expression as Node).termType !== 'Wildcard')
          columns.set(name, { aggregation, select, expression: (e as Node).expression as Node, column: name });
      }
    for (const name of [...columns.keys()]) if (projected.get(name) !== 1) columns.delete(name);
    if (columns.size > 0) out.set(query, columns);
  }
  return out;
}

/** The kind codes of a sub-SELECT's MIN or MAX companion `k`: the kind of the term SPARQL chooses (§15.1; oxigraph: numbers below simple literals). */
const KIND = { iri: 1, number: 2, simple: 3, otherMin: 4, otherMax: 0 } as const;

/**
 * A comparison at a FILTER's top of a sub-SELECT's `MIN(e)` or `MAX(e)` column `?v` with a variable of
 * the data or a number, string or IRI constant, sent against the column's companions (its operands
 * not rewritten yet). Virtuoso orders stored strings and IRIs in MIN and MAX by its own order of
 * stored terms, numbers above strings (and its MIN of stored strings can be unbound), and Virtuoso
 * fails to compile the term SPARQL chooses computed from them and then compared (SQ156). The
 * sub-SELECT gets (`addSubSelectCompanions`) the kind of term SPARQL chooses, `?fkgqa_sub_k_v`
 * (MIN: an IRI 1, else a number 2, else a simple literal 3, else 4; MAX: a simple literal 3, else a
 * number 2, else an IRI 1, else 0), and the aggregate over the numbers (`?fkgqa_sub_n_v`), over `STR()` of
 * the simple literals (`?fkgqa_sub_s_v`) and of the IRIs (`?fkgqa_sub_i_v`); the comparison is sent as one
 * branch per kind, `?fkgqa_sub_k_v = 2 && isNumber(?x) && COALESCE(?x) > ?fkgqa_sub_n_v`, `… = 3 &&
 * isSimple(?x) && STR(?x) > ?fkgqa_sub_s_v` (IRIs: ordering them is an error, oxigraph's `<=` and `>=` of
 * equal IRIs true), joined
 * by `||`; `!=` keeps the row where the kinds differ (`BOUND(?x) && (!isNumber(?x) || …)`). Terms of
 * other kinds (kind 4 or 0: dates, booleans, language-tagged literals…) are compared with Virtuoso's
 * aggregate over them alone (`?fkgqa_sub_o_v`), a variable of the data only when it is of another kind
 * too; a constant is unequal to them. At a FILTER's top false and an error drop the same rows; the
 * columns stay bare (an expression of one is SQ156) and the column `?v` itself is not read (Virtuoso's
 * MAX of stored strings is a value its isNumeric fails on, SR586).
 * @param node the client's comparison
 * @returns the comparison to send, or undefined where it is sent as other comparisons are
 */
function subSelectExtremeComparison(node: Node): unknown {
  if (!FILTER_TOP_COMPARISONS.has(node) || GENERATED.has(node)) return undefined;
  const args = node.args as unknown[];
  const isColumn = (a: unknown): boolean => isNode(a) && a.termType === 'Variable' && visibleExtremes.has(a.value as string);
  const at = args.findIndex(isColumn);
  if (at < 0) return undefined;
  const other = args[1 - at];
  if (!isNode(other)) return undefined;
  const variable = other.termType === 'Variable';
  if (variable && (isColumn(other) || subSelectColumns.has(other.value as string) || other.value === ERROR_VARIABLE)) return undefined;
  const constant = isNumericLiteral(other) ? KIND.number : isStringLiteral(other) ? KIND.simple : other.termType === 'NamedNode' ? KIND.iri : undefined;
  if (!variable && constant === undefined) return undefined;
  const extreme = visibleExtremes.get((args[at] as Node).value as string) as SubSelectExtreme;
  usedExtremes.add(extreme);
  extreme.compared = true;
  const column = (part: string): Node => ({ termType: 'Variable', value: `${SUB_EXTREME_PREFIX}${part}_${extreme.column}` });
  const operator = node.operator as string;
  const kindIs = (code: number): Node => operation('=', [column('k'), integer(code)]);
  const kinds = [
    { code: KIND.iri, test: (x: Node) => operation('isiri', [x]), value: (x: Node) => operation('str', [x]), part: 'i', ordered: false },
    // A variable of the data compared through COALESCE (module comment: Virtuoso compares a stored integer with a sub-SELECT's decimal wrongly through an index range).
    { code: KIND.number, test: (x: Node) => isNumber(x), value: (x: Node) => (variable ? operation('coalesce', [x]) : x), part: 'n', ordered: true },
    { code: KIND.simple, test: (x: Node) => isSimpleLiteral(x), value: (x: Node) => (variable ? operation('str', [x]) : x), part: 's', ordered: true },
  ];
  const branches: Node[] = [];
  for (const kind of kinds) {
    // IRIs are not ordered (an error); oxigraph's `<=` and `>=` of two equal IRIs are true.
    if (['<', '>'].includes(operator) && !kind.ordered) continue;
    const value = kind.value(copy(other) as Node);
    const compared = operation(kind.ordered ? operator : operator === '!=' ? '!=' : '=', at === 0 ? [column(kind.part), value] : [value, column(kind.part)]);
    if (!variable) {
      if (constant === kind.code) branches.push(operation('&&', [kindIs(kind.code), compared]));
      else if (operator === '!=') branches.push(kindIs(kind.code));
    } else if (operator === '!=')
      branches.push(balanced('&&', [kindIs(kind.code), operation('bound', [copy(other)]), operation('||', [operation('!', [kind.test(copy(other) as Node)]), compared])]) as Node);
    else branches.push(balanced('&&', [kindIs(kind.code), kind.test(copy(other) as Node), compared]) as Node);
  }
  const otherKinds = kindIs(extreme.aggregation === 'min' ? KIND.otherMin : KIND.otherMax);
  if (variable) {
    const value = operation('coalesce', [copy(other)]);
    const compared = operation(operator, at === 0 ? [column('o'), value] : [value, column('o')]);
    const ofKnownKind = balanced('||', [operation('isiri', [copy(other)]), isNumber(copy(other)), isSimpleLiteral(copy(other) as Node)]);
    branches.push(
      operator === '!='
        ? (balanced('&&', [otherKinds, operation('bound', [copy(other)]), operation('||', [ofKnownKind, compared])]) as Node)
        : (balanced('&&', [otherKinds, operation('bound', [copy(other)]), operation('!', [ofKnownKind]), compared]) as Node),
    );
  } else if (operator === '!=') branches.push(otherKinds);
  if (branches.length === 0) return boolean(false);
  // The sub-SELECT's division by 0 on terms of other kinds alone or a NaN (`addSubSelectCompanions`), read so that Virtuoso evaluates it (it drops columns no one reads).
  return balanced('&&', [operation('bound', [column('known')]), operation('bound', [column('nonan')]), balanced('||', branches)]);
}

/**
 * The MIN and MAX columns of the query's direct sub-SELECTs that a SELECT without grouping projects
 * as plain variables (`SELECT ?m { { SELECT (MIN(?x) AS ?m) … } }`), read back as SPARQL orders terms
 * (`extremeTerm`) from companions the sub-SELECT projects (`addSubSelectCompanions`) and the query
 * projects after them: the aggregate over the numbers, `STR()` of the simple literals and of the
 * IRIs, the count of NaNs and of other terms. The column itself is sent without its lexical companion
 * (Virtuoso's isNumeric fails on its MAX of stored strings, SR586).
 * @param select the parsed query (its projection rewritten), its projection extended in place
 * @returns per such column, its companions
 */
function projectedSubSelectExtremes(select: Node): Map<string, Extreme> {
  const out = new Map<string, Extreme>();
  const columns = extremeColumnsOf.get(select);
  if (!columns || !Array.isArray(select.variables) || !projectsAsPattern(select)) return out;
  const added: Node[] = [];
  for (const item of select.variables as Node[]) {
    const extreme = item.termType === 'Variable' ? columns.get(item.value as string) : undefined;
    if (!extreme || out.has(extreme.column)) continue;
    extreme.projected = true;
    usedExtremes.add(extreme);
    const name = (part: string): string => `${SUB_EXTREME_PREFIX}${part}_${extreme.column}`;
    for (const part of ['n', 's', 'i', 'nan', 'c']) added.push({ termType: 'Variable', value: name(part) });
    out.set(extreme.column, { aggregation: extreme.aggregation, numbers: name('n'), strings: name('s'), iris: name('i'), nans: name('nan'), others: name('c'), sub: true });
  }
  select.variables = [...(select.variables as Node[]), ...added];
  return out;
}

/**
 * Adds to each sub-SELECT the companion columns of its MIN and MAX columns that a comparison was sent
 * against (`subSelectExtremeComparison`): the kind of term SPARQL chooses and the aggregate over each kind.
 */
function addSubSelectCompanions(): void {
  const error = errorVariable();
  for (const extreme of usedExtremes) {
    const x = extreme.expression;
    const name = (part: string): Node => ({ termType: 'Variable', value: `${SUB_EXTREME_PREFIX}${part}_${extreme.column}` });
    const aggregate = (of: Node): Node => ({ type: 'aggregate', aggregation: extreme.aggregation, distinct: false, expression: of });
    const isIri = () => operation('isiri', [copy(x)]);
    const code = (n: number) => integer(n);
    const kind =
      extreme.aggregation === 'min'
        ? operation('if', [isIri(), code(KIND.iri), operation('if', [isNumberTerm(x), code(KIND.number), operation('if', [isSimpleLiteral(x), code(KIND.simple), code(KIND.otherMin)])])])
        : operation('if', [isSimpleLiteral(x), code(KIND.simple), operation('if', [isNumberTerm(x), code(KIND.number), operation('if', [isIri(), code(KIND.iri), code(KIND.otherMax)])])]);
    (extreme.select.variables as Node[]).push(
      { expression: aggregate(kind), variable: name('k') },
      { expression: aggregate(operation('if', [isNumberTerm(x), copy(x), error])), variable: name('n') },
      { expression: aggregate(operation('if', [isSimpleLiteral(x), operation('str', [copy(x)]), error])), variable: name('s') },
      { expression: aggregate(operation('if', [isIri(), operation('str', [copy(x)]), error])), variable: name('i') },
      { expression: aggregate(operation('if', [balanced('||', [isIri(), isNumberTerm(x), isSimpleLiteral(x)]), error, copy(x)])), variable: name('o') },
    );
    if (extreme.compared) {
      // Terms of other kinds alone (dates, booleans, language-tagged literals, custom datatypes) or a NaN among the terms: Virtuoso orders and compares them
      // otherwise than SPARQL (a date with a string, NaN as a number), and the rewrite cannot tell them from the query text: the sub-SELECT divides by 0
      // for such a column, so that Virtuoso fails the query (a 500 naming its data exception) rather than keep or drop rows SPARQL would not.
      const known = operation('if', [balanced('||', [isIri(), isNumberTerm(x), isSimpleLiteral(x)]), code(1), code(0)]);
      // Virtuoso's isNumeric is false for a NaN: a double or float whose STR() is "nan".
      const floating = operation('||', [operation('=', [operation('datatype', [copy(x)]), XSD_TYPE('double')]), operation('=', [operation('datatype', [copy(x)]), XSD_TYPE('float')])]);
      const nan = operation('if', [operation('&&', [floating, operation('contains', [operation('lcase', [operation('str', [copy(x)])]), simpleLiteral('nan')])]), code(0), code(1)]);
      const max = (of: Node): Node => ({ type: 'aggregate', aggregation: 'max', distinct: false, expression: of });
      const min = (of: Node): Node => ({ type: 'aggregate', aggregation: 'min', distinct: false, expression: of });
      (extreme.select.variables as Node[]).push(
        { expression: operation('/', [code(1), max(known)]), variable: name('known') },
        { expression: operation('/', [code(1), min(nan)]), variable: name('nonan') },
      );
    }
    if (!extreme.projected) continue;
    // As `extremeCompanions` counts them for the query's own MIN and MAX (read back by `extremeTerm`).
    const sum = (of: Node): Node => ({ type: 'aggregate', aggregation: 'sum', distinct: false, expression: of });
    // Virtuoso's isNumeric is false for a NaN: a double or float whose STR() is "nan" (and no other term).
    const floating = operation('||', [operation('=', [operation('datatype', [copy(x)]), XSD_TYPE('double')]), operation('=', [operation('datatype', [copy(x)]), XSD_TYPE('float')])]);
    const nan = operation('&&', [floating, operation('contains', [operation('lcase', [operation('str', [copy(x)])]), simpleLiteral('nan')])]);
    const others = operation('if', [isNumberTerm(x), code(0), operation('if', [isSimpleLiteral(x), code(0), operation('if', [isIri(), code(0), operation('if', [copy(nan), code(0), code(1)])])])]);
    (extreme.select.variables as Node[]).push({ expression: sum(operation('if', [nan, code(1), code(0)])), variable: name('nan') }, { expression: sum(others), variable: name('c') });
  }
}

/**
 * The variables that the sub-SELECTs of a query (not the query itself) project as an expression.
 * @param ast the parsed query
 */
function subSelectExpressions(ast: unknown): Set<string> {
  const out = new Set<string>();
  for (const n of queryNodes(ast))
    if (n !== ast && Array.isArray(n.variables)) for (const item of n.variables as Node[]) if (item.termType !== 'Variable' && isNode(item.variable)) out.add(item.variable.value as string);
  return out;
}

/**
 * The query nodes of a parsed query: the query itself and its sub-SELECTs at any depth, each once,
 * in the order of a depth-first walk.
 * @param ast the parsed query
 */
function queryNodes(ast: unknown): Node[] {
  return astNodes(ast).filter((n) => n.type === 'query');
}

/**
 * Every node of a parsed query but its terms (patterns, expressions, arrays of them, sub-SELECTs),
 * each once, in the order of a depth-first walk.
 * @param ast the parsed query
 */
function astNodes(ast: unknown): Node[] {
  const out: Node[] = [];
  const stack: unknown[] = [ast];
  const seen = new Set<unknown>();
  while (stack.length > 0) {
    const n = stack.pop();
    if (!isNode(n) || seen.has(n) || typeof n.termType === 'string') continue;
    seen.add(n);
    out.push(n);
    stack.push(...Object.values(n));
  }
  return out;
}

/**
 * The aggregate shapes Virtuoso fails on, in the query or a sub-SELECT: a HAVING without GROUP BY
 * inside a sub-SELECT (SP031; the query's own is sent as projected conditions, `havingColumns`), and
 * the same aggregate projected twice (`(MAX(?x) AS ?m) (MAX(?x) AS ?m2)`: SR066).
 * @param ast the parsed query
 * @returns the words naming the shape, or undefined
 */
function aggregateShapes(ast: unknown): string | undefined {
  for (const n of queryNodes(ast)) {
    if (n !== ast && n.group === undefined && Array.isArray(n.having) && n.having.length > 0)
      return 'a HAVING without GROUP BY inside a sub-SELECT: Virtuoso refuses it (SP031: HAVING clause should be preceded by a GROUP BY clause)';
    const written = new Set<string>();
    for (const item of (n.variables ?? []) as Node[]) {
      if (!isNode(item.expression) || item.expression.type !== 'aggregate') continue;
      const text = JSON.stringify(item.expression);
      if (written.has(text))
        return `the same aggregate projected twice (${String(item.expression.aggregation).toUpperCase()}(…) AS ?${(item.variable as Node).value as string}): Virtuoso fails to compile it (SR066)`;
      written.add(text);
    }
  }
  return undefined;
}

/**
 * The text to send to Virtuoso for a query of one shard endpoint (module comment).
 * @param text the query as the client sent it (already checked: a query, no FROM, no SERVICE)
 * @param graph the IRI of the shard's named graph in its Virtuoso instance
 * @param options the parse limits of the endpoint
 * @throws the parser's error (QueryTooComplex, or a syntax error) — the checks before have parsed it already
 */
export function virtuosoQuery(text: string, graph: string, options: SparqlParseOptions = {}): VirtuosoQuery {
  const lib = sparqljsLib();
  const ast = parseSparql(text, options) as sparqljs.SparqlQuery & Node;
  fixIris(ast);
  const called = calledFunction(ast);
  if (called) throw new UnsupportedFunction(called);
  restoreWildcards(ast, lib.Wildcard);
  const variables = (ast as { variables?: unknown[] }).variables;
  const wildcard = ast.queryType === 'SELECT' && variables?.length === 1 && isNode(variables[0]) && variables[0].termType === 'Wildcard';
  // `SELECT *` over plain patterns is sent with its variables named, so that they get their companions (federation engines ask `SELECT *` per triple pattern).
  const named = wildcard && !(ast as { group?: unknown }).group ? wildcardColumns(ast.where ?? []) : undefined;
  const booleanVars = new Set<string>();
  subSelectColumns = subSelectExpressions(ast);
  extremeColumnsOf = subSelectExtremes(ast);
  visibleExtremes = extremeColumnsOf.get(ast) ?? new Map<string, SubSelectExtreme>();
  usedExtremes = new Set<SubSelectExtreme>();
  sumColumns = subSelectSums(ast);
  const unanswered = aggregateShapes(ast);
  if (unanswered) throw new StoreCannotAnswer(`${unanswered}; this store does not answer it (an oxigraph-backed serve does)`);
  virtuosoShapes(ast, { booleanVars, refuse: (why) => new StoreCannotAnswer(why), errorVariable: ERROR_VARIABLE, operation });
  const valuesBooleans = valuesBooleanColumns(ast, booleanVars);
  constantShapes(ast, booleanVars);
  inAsComparisons(ast);
  ast.where = rewrite(ast.where ?? [], booleanVars) as sparqljs.Pattern[];
  const projection = ast.queryType === 'SELECT' && projectsAsPattern(ast as unknown as Node);
  // The ORDER BY of a query without grouping takes the rewrites of a graph pattern too: an error in a key orders the row as unbound (§15.1), where Virtuoso fails the query.
  for (const key of ['variables', 'group', 'having', 'order'] as const)
    if (ast[key] !== undefined) ast[key] = rewrite(ast[key], booleanVars, (key === 'variables' || key === 'order') && projection) as never;
  const projectedExtremes = ast.queryType === 'SELECT' && !wildcard ? projectedSubSelectExtremes(ast as unknown as Node) : new Map<string, Extreme>();
  addSubSelectCompanions();
  addSumMembersCompanions();
  const extremeInside = ast.queryType === 'SELECT' ? (extremeInExpression(ast as unknown as Node) ?? averageInExpression(ast as unknown as Node)) : undefined;
  const lexical = new Map<string, string>();
  const emptySums: string[] = [];
  if (named && named.length > 0) (ast as { variables: unknown[] }).variables = named.map((v) => ({ termType: 'Variable', value: v }));
  const { rows } =
    ast.queryType === 'SELECT' && (!wildcard || (named && named.length > 0)) && variables
      ? companions(ast as unknown as Node, lexical, emptySums, lib.Wildcard, new Set(projectedExtremes.keys()))
      : {};
  const extremes = new Map<string, Extreme>(projectedExtremes);
  if (ast.queryType === 'SELECT' && !wildcard) extremeCompanions(ast as unknown as Node, extremes, lexical);
  const averages = new Map<string, Average>();
  if (ast.queryType === 'SELECT' && !wildcard) averageKinds(ast as unknown as Node, averages);
  const having = ast.queryType === 'SELECT' ? havingColumns(ast as unknown as Node) : [];
  const grouped = groupedDifference(ast, new Set([...booleanVars, ...valuesBooleans]));
  if (grouped) throw new StoreCannotAnswer(grouped);
  if (extremeInside) throw new StoreCannotAnswer(extremeInside);
  if (ast.queryType === 'SELECT') extremeOrder(ast as unknown as Node);
  const rowCap = limitOffsets(ast);
  // The trailing VALUES block of the query.
  const trailing = (ast as { values?: Record<string, unknown>[] }).values;
  if (trailing) (ast as { values?: Record<string, unknown>[] }).values = literalsBeforeIris(trailing);
  ast.prefixes = {};
  delete ast.base;
  ast.from = { default: [{ termType: 'NamedNode', value: graph } as sparqljs.IriTerm], named: [] };
  let form: VirtuosoQuery['form'] = ast.queryType === 'SELECT' ? 'bindings' : ast.queryType === 'ASK' ? 'boolean' : 'graph';
  if (ast.queryType === 'ASK') {
    const select = ast as unknown as Node;
    select.queryType = 'SELECT';
    select.variables = [
      { expression: { termType: 'Literal', value: '1', language: '', datatype: { termType: 'NamedNode', value: `${XSD}integer` } }, variable: { termType: 'Variable', value: ASK_VARIABLE } },
    ];
    select.limit = 1;
    form = 'boolean';
  }
  return {
    text: new lib.Generator({ prefixes: {} }).stringify(ast),
    form,
    booleanVars,
    wildcard,
    lexical,
    emptySums,
    extremes,
    having,
    averages,
    ...(rows ? { rows } : {}),
    ...(rowCap ? { rowCap } : {}),
  };
}

/**
 * The columns of `SELECT *` (the in-scope variables of its WHERE clause, SPARQL 1.1 §18.2.1, `inScope`),
 * sorted, when the clause holds only triple patterns, groups, OPTIONAL, UNION, GRAPH, FILTER, BIND and
 * VALUES; undefined otherwise (sub-queries, MINUS, SERVICE…: the `*` is then sent as written).
 */
function wildcardColumns(where: unknown): string[] | undefined {
  const simple = (patterns: unknown): boolean =>
    (patterns as Node[]).every((p) => {
      if (p.type === 'group' || p.type === 'optional' || p.type === 'graph') return simple(p.patterns);
      if (p.type === 'union') return (p.patterns as Node[]).every((branch) => simple(branch.type === 'group' ? branch.patterns : [branch]));
      return ['bgp', 'bind', 'values', 'filter'].includes(p.type as string);
    });
  return simple(where) ? [...inScope(where)].sort() : undefined;
}

/** A deep copy of a parsed expression; instances of sparqljs's classes (`*`, terms) are shared, not copied (they are never changed). */
function copy(x: unknown): unknown {
  if (Array.isArray(x)) return x.map(copy);
  if (!isNode(x) || Object.getPrototypeOf(x) !== Object.prototype) return x;
  return Object.fromEntries(Object.entries(x).map(([k, v]) => [k, copy(v)]));
}

/**
 * Moves the HAVING of an aggregate SELECT without GROUP BY into its projection (module comment):
 * Virtuoso refuses HAVING without GROUP BY (SP031), and a GROUP BY of a constant makes no group of
 * no rows where SPARQL's one group is there (§18.2.4.1). Each condition becomes a column
 * `(cond AS ?fkgqa_having_i)`, evaluated as the HAVING would be over the one group (its rewrites
 * and refusals of a grouped projection are done already), and the reader keeps the row where each
 * is true (Virtuoso's 1; an error is unbound: the row is removed, as HAVING removes it).
 * @param select the parsed SELECT, changed in place
 * @returns the names of the columns added (none when the query has GROUP BY or no HAVING)
 */
function havingColumns(select: Node): string[] {
  const conditions = select.having as unknown[] | undefined;
  if (!conditions || conditions.length === 0 || select.group !== undefined) return [];
  // Outside an aggregate a HAVING without GROUP BY sees no variable (none is grouped; a projection's alias is bound after it): oxigraph takes it unbound, Virtuoso's column would read the alias.
  const named = variableOutsideAggregates(conditions);
  if (named)
    throw new StoreCannotAnswer(
      `a HAVING without GROUP BY naming a variable outside an aggregate (?${named}): it is unbound there, but Virtuoso would read a projection's alias; this store does not answer it (an oxigraph-backed serve does)`,
    );
  const names = conditions.map((_, i) => `${HAVING_PREFIX}${i}`);
  select.variables = [...(select.variables as Node[]), ...conditions.map((expression, i) => ({ expression, variable: { termType: 'Variable', value: names[i] } }))];
  delete select.having;
  return names;
}

/** The first variable of `e` (parsed expressions) outside an aggregate, or undefined. */
function variableOutsideAggregates(e: unknown, seen = new Set<unknown>()): string | undefined {
  if (!isNode(e) && !Array.isArray(e)) return undefined;
  if (seen.has(e)) return undefined;
  seen.add(e);
  if (isNode(e) && e.type === 'aggregate') return undefined;
  if (isNode(e) && e.termType === 'Variable') return e.value as string;
  for (const v of Array.isArray(e) ? e : Object.values(e)) {
    const found = variableOutsideAggregates(v, seen);
    if (found) return found;
  }
  return undefined;
}

const XSD_TYPE = (local: string): Node => ({ termType: 'NamedNode', value: `${XSD}${local}` });

/**
 * Adds the companions of each projected `MAX(e)`, `MIN(e)`, `SUM(e)` and `AVG(e)` (module comment,
 * `Extreme`): Virtuoso orders stored strings wrongly in MAX and MIN (its order of stored terms, with
 * or without GROUP BY) and IRIs (its order of IRI ids), orders numbers above strings, and sums
 * strings as 0. The aggregate over the numbers (`IF(isNumeric(e) && DATATYPE(e) != xsd:boolean, e,
 * ?fkgqa_error)`), over `STR()` of the simple literals (`IF(isLiteral(e) && DATATYPE(e) =
 * xsd:string, STR(e), ?fkgqa_error)`) and of the IRIs, and `SUM(IF(number, 0, IF(simple literal, 0,
 * IF(isIRI(e), 0, 1))))`, the count of other terms (nested IF: Virtuoso takes an error condition
 * for false), are read back in SPARQL's order of terms (§15.1: IRIs below literals; oxigraph:
 * numbers below simple literals).
 * @param select the parsed SELECT (its projection already rewritten), changed in place
 * @param extremes filled with column → its companions
 * @param lexical filled with the companion `STR()` of the numbers' column (a double's digits)
 */
function extremeCompanions(select: Node, extremes: Map<string, Extreme>, lexical: Map<string, string>): void {
  const projection = select.variables as Node[];
  const added: Node[] = [];
  const error = { termType: 'Variable', value: ERROR_VARIABLE };
  for (const item of projection) {
    const e = item.expression as Node | undefined;
    if (item.termType === 'Variable' || e?.type !== 'aggregate' || String((item.variable as Node).value).startsWith(EXTREME_PREFIX)) continue;
    const aggregation = String(e.aggregation).toLowerCase();
    if (aggregation !== 'max' && aggregation !== 'min' && aggregation !== 'sum' && aggregation !== 'avg') continue;
    const x = e.expression as Node;
    if (!isNode(x) || x.termType === 'Wildcard') continue;
    const variable = (item.variable as Node).value as string;
    const isNumber = () => isNumberTerm(x);
    const isSimple = () => isSimpleLiteral(x);
    const column = (kind: string, expression: Node): string => {
      const name = `${EXTREME_PREFIX}${kind}_${variable}`;
      added.push({ expression, variable: { termType: 'Variable', value: name } });
      return name;
    };
    // MAX and MIN are the same with or without DISTINCT; Virtuoso answers `MAX(DISTINCT IF(…))` with 0 under GROUP BY: sent without.
    const aggregate = (of: Node, name = aggregation): Node => ({ type: 'aggregate', aggregation: name, distinct: false, expression: of });
    const extreme: Extreme = { aggregation, others: '' };
    if (aggregation === 'max' || aggregation === 'min') {
      extreme.numbers = column('n', aggregate(operation('if', [isNumber(), copy(x), error])));
      lexical.set(extreme.numbers, column('lex', operation('str', [aggregate(operation('if', [isNumber(), copy(x), error]))])));
      extreme.strings = column('s', aggregate(operation('if', [isSimple(), operation('str', [copy(x)]), error])));
      extreme.iris = column('i', aggregate(operation('if', [operation('isiri', [copy(x)]), operation('str', [copy(x)]), error])));
      // Virtuoso's `NaN != NaN` is false; its STR() of a NaN is "nan" (CONTAINS: a comparison with a string would be refused in a grouped projection).
      const nan = operation('&&', [isNumber(), operation('contains', [operation('str', [copy(x)]), simpleLiteral('nan')])]);
      extreme.nans = column('nan', { type: 'aggregate', aggregation: 'sum', distinct: false, expression: operation('if', [nan, integer(1), integer(0)]) });
    }
    const others =
      extreme.numbers === undefined
        ? operation('if', [isNumber(), integer(0), integer(1)])
        : operation('if', [isNumber(), integer(0), operation('if', [isSimple(), integer(0), operation('if', [operation('isiri', [copy(x)]), integer(0), integer(1)])])]);
    extreme.others = column('o', { type: 'aggregate', aggregation: 'sum', distinct: false, expression: others });
    extremes.set(variable, extreme);
  }
  select.variables = [...projection, ...added];
}

/**
 * Adds the companion columns of each projected `AVG(e)` (`Average`): the widest type of its
 * operands, `MAX(IF(DATATYPE(e) = xsd:double, 2, IF(DATATYPE(e) = xsd:float, 1, 0)))`, and, for
 * an AVG without DISTINCT, the sum and count of its numbers, `S = SUM(IF(number, e, ?fkgqa_error))`
 * (as `STR(S)` and `STR(S - xsd:double(STR(S)))` joined by a space: a double's sum with all its
 * digits, `exactLexical`) and `COUNT(…)` of the same (written otherwise than a SUM or COUNT of the projection: Virtuoso
 * fails on the same aggregate projected twice, SR544; Virtuoso answers an aggregate of DISTINCT
 * IF(…) with 0 under GROUP BY). Virtuoso types every average xsd:decimal; SPARQL's average is
 * SUM/COUNT (§18.5.1.4) with the numeric type promotion of op:numeric-add and op:numeric-divide
 * (§17.3): an xsd:double if an operand is a double, else an xsd:float if one is a float, else an
 * xsd:decimal, as oxigraph types it. The reader (`averageTerm`) types the value by the kind, and
 * divides the sum by the count as oxigraph does (Virtuoso divides in decimal, keeping about 15
 * fractional digits).
 * @param select the parsed SELECT (its projection already rewritten), changed in place
 * @param averages filled with AVG column → its companion columns
 */
function averageKinds(select: Node, averages: Map<string, Average>): void {
  const projection = select.variables as Node[];
  const added: Node[] = [];
  for (const item of projection) {
    const e = item.expression as Node | undefined;
    if (item.termType === 'Variable' || e?.type !== 'aggregate' || String(e.aggregation).toLowerCase() !== 'avg') continue;
    const x = e.expression as Node;
    if (!isNode(x) || x.termType === 'Wildcard') continue;
    const variable = (item.variable as Node).value as string;
    const kind = operation('if', [
      operation('=', [operation('datatype', [copy(x)]), XSD_TYPE('double')]),
      integer(2),
      operation('if', [operation('=', [operation('datatype', [copy(x)]), XSD_TYPE('float')]), integer(1), integer(0)]),
    ]);
    const column = (part: string, expression: Node): string => {
      const name = `${AVERAGE_PREFIX}${part}_${variable}`;
      added.push({ expression, variable: { termType: 'Variable', value: name } });
      return name;
    };
    const aggregate = (aggregation: string, of: Node): Node => ({ type: 'aggregate', aggregation, distinct: false, expression: of });
    const numbers = () => operation('if', [isNumberTerm(x), copy(x), errorVariable()]);
    const average: Average = { kind: column('k', aggregate('max', kind)) };
    if (!e.distinct) {
      // The sum's digits and, for a double, the difference to the double they read as (`exactLexical`).
      const sum = () => aggregate('sum', numbers());
      const asDouble = { type: 'functionCall', function: XSD_TYPE('double'), args: [operation('str', [sum()])], distinct: false };
      average.sum = column('s', operation('concat', [operation('str', [sum()]), simpleLiteral(' '), operation('str', [operation('-', [sum(), asDouble])])]));
      average.count = column('c', aggregate('count', numbers()));
    }
    averages.set(variable, average);
  }
  select.variables = [...projection, ...added];
}

/**
 * An average read back from Virtuoso (an xsd:decimal) typed and written as oxigraph does (`averageKinds`):
 * an xsd:double or xsd:float as the sum companion divided by the count, written as oxigraph writes
 * that value (virtuoso-numbers.ts; the sum may differ from oxigraph's in the last binary digit,
 * added in another order); an xsd:decimal as that quotient truncated after 18 fractional digits
 * (`decimalQuotient`). Without the companions (AVG DISTINCT), from Virtuoso's decimal digits.
 * @param term the average as read back (readTerm)
 * @param b Virtuoso's row, holding the companions
 * @param average the companion columns
 */
function averageTerm(term: SparqlTerm, b: SparqlRow, average: Average): SparqlTerm {
  const value = Number(term.value);
  if (term.type !== 'literal' || term.datatype !== `${XSD}decimal` || !Number.isFinite(value)) return term;
  const kind = b[average.kind]?.value;
  const [digits, difference] = (average.sum === undefined ? '' : (b[average.sum]?.value ?? '')).split(' ');
  const count = average.count === undefined ? NaN : Number(b[average.count]?.value);
  // A double's or float's sum with all its digits, divided by the count as oxigraph divides (Virtuoso's decimal average as the fallback).
  const sum = Number(digits) + (difference === undefined || Number(difference) === 0 ? 0 : Number(difference));
  const quotient = digits !== '' && Number.isFinite(sum) && count > 0 ? sum / count : value;
  if (kind === '2') return { type: 'literal', value: doubleLexical(quotient), datatype: `${XSD}double` };
  if (kind === '1') return { type: 'literal', value: floatLexical(quotient), datatype: `${XSD}float` };
  const decimal = digits !== '' ? decimalQuotient(digits, count) : undefined;
  return decimal === undefined ? term : { type: 'literal', value: decimal, datatype: `${XSD}decimal` };
}

/**
 * Sends each ORDER BY key of a grouped SELECT that is a `MAX(e)` or `MIN(e)`, or the alias of a
 * projected one, as the keys of the term `extremeTerm` reads back (Virtuoso would order by its own
 * MAX or MIN, module comment): first the kind of term chosen, an aggregate of a rank per term (MAX:
 * simple literal 3, number 2, IRI 1, other 0; MIN: IRI 1, number 2, simple literal 3, other 4),
 * then the aggregate over that kind's terms (`STR()` of the simple literals and IRIs, the numbers),
 * in the order of choice, then the key as written (for other terms alone). Each key keeps the
 * direction written. Keys that are other expressions of a MAX or MIN are sent as written.
 * @param select the parsed SELECT (ORDER BY already rewritten), changed in place
 */
function extremeOrder(select: Node): void {
  const order = select.order as Node[] | undefined;
  if (!order || select.group === undefined) return;
  const aliases = new Map<string, Node>();
  for (const item of select.variables as Node[]) if (item.termType !== 'Variable' && isNode(item.expression)) aliases.set((item.variable as Node).value as string, item.expression);
  const error = { termType: 'Variable', value: ERROR_VARIABLE };
  select.order = order.flatMap((key) => {
    const e = key.expression as Node;
    const chosen = isNode(e) && e.termType === 'Variable' ? aliases.get(e.value as string) : e;
    if (!isNode(chosen) || chosen.type !== 'aggregate') return [key];
    const aggregation = String(chosen.aggregation).toLowerCase();
    const x = chosen.expression as Node;
    if ((aggregation !== 'max' && aggregation !== 'min') || !isNode(x) || x.termType === 'Wildcard') return [key];
    const aggregate = (of: Node): Node => ({ type: 'aggregate', aggregation, distinct: false, expression: of });
    const kinds: [Node, Node][] = [
      [isSimpleLiteral(x), operation('str', [copy(x)])],
      [isNumberTerm(x), copy(x) as Node],
      [operation('isiri', [copy(x)]), operation('str', [copy(x)])],
    ];
    if (aggregation === 'min') kinds.reverse();
    const ranks = aggregation === 'max' ? [3, 2, 1, 0] : [1, 2, 3, 4];
    const rank = kinds.reduceRight<Node>((otherwise, [is], i) => operation('if', [is, integer(ranks[i]), otherwise]), integer(ranks[3]));
    const keys = [aggregate(rank), ...kinds.map(([is, value]) => aggregate(operation('if', [is, value, error])))];
    return [...keys.map((expression) => ({ ...key, expression })), key];
  });
}

/**
 * The first `MAX(e)` or `MIN(e)` of a SELECT's own projection, HAVING and ORDER BY that is inside
 * another expression (`(MAX(?n) + 0 AS ?m)`, `HAVING(MAX(?n) > 5)`, `ORDER BY (MAX(?n) + 1)`), where
 * no companion column reads it back (`extremeCompanions`, `extremeOrder`): Virtuoso orders stored
 * strings and IRIs by its own order of stored terms, and numbers above strings, so such a query is
 * refused. The term SPARQL chooses cannot be computed in the query: Virtuoso fails to compile COALESCE
 * or IF of aggregates over a join (SQ156). The MAX or MIN of a sub-SELECT is sent as written (docs/serving.md).
 * @param select the parsed SELECT
 * @returns the words naming the shape, or undefined
 */
function extremeInExpression(select: Node): string | undefined {
  const find = (e: unknown): string | undefined => {
    if (Array.isArray(e)) return e.map(find).find(Boolean);
    if (!isNode(e) || typeof e.termType === 'string' || e.type === 'query') return undefined;
    const aggregation = e.type === 'aggregate' ? String(e.aggregation).toLowerCase() : '';
    if (aggregation === 'max' || aggregation === 'min') return aggregation.toUpperCase();
    return find(Object.values(e));
  };
  const where = (found: string | undefined, place: string) =>
    found &&
    `${found} inside another expression (${place}): Virtuoso orders stored strings and IRIs otherwise than SPARQL in MAX and MIN (its order of stored terms, numbers above strings), and only a projected ${found}(…) AS ?v or an ORDER BY key ${found}(…) is read back in SPARQL's order; this store does not answer it (an oxigraph-backed serve does)`;
  for (const item of select.variables as Node[])
    if (item.termType !== 'Variable' && isNode(item.expression) && item.expression.type !== 'aggregate') {
      const found = where(find(item.expression), `the projection of ?${(item.variable as Node).value as string}`);
      if (found) return found;
    }
  // A sub-SELECT's MIN or MAX column projected under another name or inside an expression (`(?m AS ?z)`): only the column projected as itself is read back (`projectedSubSelectExtremes`).
  const columns = extremeColumnsOf.get(select);
  const mentioned = (e: unknown): SubSelectExtreme | undefined => {
    if (Array.isArray(e)) return e.map(mentioned).find(Boolean);
    if (!isNode(e) || e.type === 'query') return undefined;
    if (e.termType === 'Variable') return columns?.get(e.value as string);
    return typeof e.termType === 'string' ? undefined : mentioned(Object.values(e));
  };
  for (const item of select.variables as Node[]) {
    const extreme = item.termType !== 'Variable' && isNode(item.expression) ? mentioned(item.expression) : undefined;
    if (extreme)
      return `a sub-SELECT's ${extreme.aggregation.toUpperCase()} (?${extreme.column}) projected inside an expression or under another name (?${(item.variable as Node).value as string}): Virtuoso orders stored strings and IRIs otherwise than SPARQL in MAX and MIN, and only the column projected as itself is read back in SPARQL's order; this store does not answer it (an oxigraph-backed serve does)`;
  }
  const having = where(find(select.having), 'HAVING');
  if (having) return having;
  for (const key of (select.order ?? []) as Node[])
    if (isNode(key.expression) && key.expression.type !== 'aggregate') {
      const found = where(find(key.expression), 'ORDER BY');
      if (found) return found;
    }
  return undefined;
}

/**
 * The first projection of a SELECT whose expression holds an `AVG(e)` inside another expression
 * (`(AVG(?le) * 2 AS ?y)`, `(ROUND(AVG(?le)) AS ?r)`): Virtuoso's AVG is an xsd:decimal with its
 * own digits whatever the numbers' type, and only a projected `AVG(…) AS ?v` is read back as
 * SPARQL types and divides it (`averageKinds`), so such a query is refused. In HAVING and ORDER BY
 * an AVG is compared, not written, and is sent as written.
 * @param select the parsed SELECT
 * @returns the words naming the shape, or undefined
 */
function averageInExpression(select: Node): string | undefined {
  const find = (e: unknown): boolean => {
    if (Array.isArray(e)) return e.some(find);
    if (!isNode(e) || typeof e.termType === 'string' || e.type === 'query') return false;
    if (e.type === 'aggregate' && String(e.aggregation).toLowerCase() === 'avg') return true;
    return find(Object.values(e));
  };
  // The columns of sub-SELECTs computed from an AVG (`{ SELECT (AVG(?x) AS ?a) … }`): Virtuoso's value, not read back.
  const fromAverage = new Set<string>();
  const stack: unknown[] = [select.where];
  while (stack.length > 0) {
    const n = stack.pop();
    if (!isNode(n) || typeof n.termType === 'string') continue;
    if (n.type === 'query' && Array.isArray(n.variables))
      for (const item of n.variables as Node[]) if (item.termType !== 'Variable' && find(item.expression)) fromAverage.add((item.variable as Node).value as string);
    stack.push(...Object.values(n));
  }
  const mentionsAverage = (e: unknown): boolean => {
    if (Array.isArray(e)) return e.some(mentionsAverage);
    if (!isNode(e) || e.type === 'query') return false;
    if (e.termType === 'Variable') return fromAverage.has(e.value as string);
    return typeof e.termType !== 'string' && mentionsAverage(Object.values(e));
  };
  for (const item of select.variables as Node[]) {
    const v = (item.termType === 'Variable' ? item : item.variable) as Node;
    if (isNode(v) && mentionsAverage(item.termType === 'Variable' ? item : item.expression))
      return `an AVG of a sub-SELECT projected (?${v.value as string}): Virtuoso's AVG is an xsd:decimal with its own digits whatever the type of the numbers, and only a projected AVG(…) AS ?v of the query itself is read back as SPARQL types it; this store does not answer it (an oxigraph-backed serve does)`;
  }
  for (const item of select.variables as Node[])
    if (item.termType !== 'Variable' && isNode(item.expression) && item.expression.type !== 'aggregate' && find(item.expression))
      return `AVG inside another expression (the projection of ?${(item.variable as Node).value as string}): Virtuoso's AVG is an xsd:decimal with its own digits whatever the type of the numbers, and only a projected AVG(…) AS ?v is read back as SPARQL types it; this store does not answer it (an oxigraph-backed serve does)`;
  return undefined;
}

/** Whether the term `x` is a number (not a boolean: Virtuoso's booleans are numeric), as an expression. */
function isNumberTerm(x: Node): Node {
  return operation('&&', [operation('isnumeric', [copy(x)]), operation('!=', [operation('datatype', [copy(x)]), XSD_TYPE('boolean')])]);
}

/** Whether the term `x` is a simple literal, as an expression (Virtuoso's DATATYPE of a language-tagged literal is xsd:string: the length of its LANG is tested too, a number, which a grouped projection takes). */
function isSimpleLiteral(x: Node): Node {
  return balanced('&&', [
    operation('isliteral', [copy(x)]),
    operation('=', [operation('datatype', [copy(x)]), XSD_TYPE('string')]),
    operation('=', [operation('strlen', [operation('lang', [copy(x)])]), integer(0)]),
  ]) as Node;
}

/**
 * The lexical companion of a projected expression without aggregate (module comment): for an
 * xsd:double, `STR(x)` and the difference of x and the double `STR(x)` reads as, `STR(x - xsd:double(STR(x)))`,
 * joined by a space (`6.69 -8.881784197001252e-16` for 6.6899999999999995): Virtuoso's STR() has 16
 * significant digits, which some doubles need 17 of; the difference is a few units of the last
 * binary digit, exact in 16 digits, and their sum is the double (`readTerm`). Else `STR(x)`.
 * Only in a query without grouping or aggregate (Virtuoso fails to compile an aggregate written
 * twice inside other expressions).
 * @param x the projected variable or expression (copied)
 */
function exactLexical(x: Node): Node {
  const str = () => operation('str', [copy(x)]);
  const asDouble = { type: 'functionCall', function: XSD_TYPE('double'), args: [str()], distinct: false };
  const difference = operation('str', [operation('-', [copy(x), asDouble])]);
  return operation('if', [operation('=', [operation('datatype', [copy(x)]), XSD_TYPE('double')]), operation('concat', [str(), simpleLiteral(' '), difference]), str()]);
}

/**
 * Adds the companion columns of a SELECT's projection (module comment): `STR()` of each projected
 * column that can hold a double, and `COUNT(*)` beside a SUM or AVG of an aggregate without GROUP
 * BY (unless the projection counts its rows already).
 * @returns the column holding that row count
 * @param select the parsed SELECT (its projection already rewritten), changed in place
 * @param lexical filled with variable → companion variable
 * @param emptySums filled with the SUM and AVG columns read back as 0 over no rows
 * @param Wildcard sparqljs's class of `*` (the Generator writes only its instances)
 * @param bare projected variables that get no companion (`projectedSubSelectExtremes`)
 */
function companions(select: Node, lexical: Map<string, string>, emptySums: string[], Wildcard: new () => unknown, bare = new Set<string>()): { rows?: string } {
  const projection = select.variables as Node[];
  const added: Node[] = [];
  let rows: string | undefined;
  // Virtuoso refuses a variable it cannot group (ERROR_VARIABLE) in the projection of a grouped or aggregate query.
  const grouped = select.group !== undefined || projection.some((item) => hasAggregate(item.expression));
  for (const item of projection) {
    const variable = (item.termType === 'Variable' ? item : (item.variable as Node)).value as string;
    const e = item.expression as Node | undefined;
    const aggregation = e?.type === 'aggregate' ? String(e.aggregation).toLowerCase() : undefined;
    if (aggregation === 'count' && !e!.distinct && isNode(e!.expression) && e!.expression.termType === 'Wildcard') rows ??= variable;
    if (!select.group && (aggregation === 'sum' || aggregation === 'avg')) emptySums.push(variable);
    // Virtuoso fails to compile an aggregate written twice inside other expressions, or COUNT(*) twice: only columns that can hold a double get a companion.
    if (item.termType !== 'Variable' && !(aggregation && ['sum', 'avg', 'min', 'max', 'sample'].includes(aggregation)) && hasAggregate(e)) continue;
    // A sub-SELECT's MIN or MAX read back from its companions (`projectedSubSelectExtremes`).
    if (bare.has(variable)) continue;
    const companion = `${COMPANION_PREFIX}${variable}`;
    lexical.set(variable, companion);
    // In a grouped query a projected double is a group key or computed from keys: its STR() only (Virtuoso refuses the arithmetic of `exactLexical` on a boolean there: groupedDifference).
    const lexicalForm = grouped ? operation('str', [item.termType === 'Variable' ? item : copy(e)]) : exactLexical((item.termType === 'Variable' ? item : e) as Node);
    // A plain variable outside grouping: its companion is bound for numbers only, which keeps Virtuoso's result writer (about 0.07 ms a term) from writing every IRI and string twice.
    const numbersOnly = item.termType === 'Variable' && !grouped;
    added.push({
      expression: numbersOnly ? operation('if', [operation('isnumeric', [item]), lexicalForm, { termType: 'Variable', value: ERROR_VARIABLE }]) : lexicalForm,
      variable: { termType: 'Variable', value: companion },
    });
  }
  if (emptySums.length > 0 && rows === undefined) {
    rows = ROWS_VARIABLE;
    added.push({ expression: { type: 'aggregate', aggregation: 'count', distinct: false, expression: new Wildcard() }, variable: { termType: 'Variable', value: ROWS_VARIABLE } });
  }
  select.variables = [...projection, ...added];
  return { rows };
}

/**
 * A call of a function IRI that is no XSD cast (`bif:…`, `sql:…`, any extension): oxigraph answers
 * none of them, and Virtuoso's built-ins read its whole instance (its IRI dictionary holds the IRIs
 * of every shard it serves) or change its state, so such a query is refused before it is sent.
 */
export class UnsupportedFunction extends Error {
  constructor(readonly iri: string) {
    super(`the function <${iri}> is not supported: only SPARQL 1.1 built-ins and XSD casts are evaluated`);
  }
}

/** The first function IRI of `node` (a parsed query) that is no XSD cast, or undefined. */
function calledFunction(node: unknown, seen = new Set<unknown>()): string | undefined {
  if (!node || typeof node !== 'object' || seen.has(node)) return undefined;
  seen.add(node);
  const o = node as { type?: string; function?: { termType?: string; value?: string } };
  if (o.type === 'functionCall' && o.function?.termType === 'NamedNode' && !o.function.value!.startsWith(XSD)) return o.function.value;
  for (const v of Object.values(node as object)) {
    const found = calledFunction(v, seen);
    if (found) return found;
  }
  return undefined;
}

/**
 * Reads Virtuoso's answer to the text of `virtuosoQuery` back as the client's, row by row: the
 * columns without the companions (in name order for `SELECT *`), and each row with booleans for
 * `booleanVars`, doubles with their companion's digits, `typed-literal` written as `literal` (SPARQL
 * 1.1 JSON results §3.2.2), and the SUM and AVG of no rows as 0; `kept` is false for a row the
 * HAVING of an aggregate without GROUP BY removes (a condition's column not true: false, or unbound for its error).
 * @param virtuosoVars the columns of Virtuoso's answer, in its order
 * @throws StoreCannotAnswer (from `row`) for MAX or MIN over terms whose order Virtuoso has otherwise (`extremeTerm`)
 */
export function virtuosoRowReader(virtuosoVars: readonly string[], q: VirtuosoQuery): { vars: string[]; row: (b: SparqlRow) => SparqlRow; kept: (b: SparqlRow) => boolean } {
  const companion = new Set([
    ...q.lexical.values(),
    ROWS_VARIABLE,
    ...q.having,
    ...[...q.extremes.values()].flatMap((x) => [x.numbers, x.strings, x.iris, x.nans, x.others]),
    ...[...(q.averages?.values() ?? [])].flatMap((x) => [x.kind, x.sum, x.count]),
  ]);
  const all = virtuosoVars.filter((k) => !companion.has(k));
  const vars = q.wildcard ? [...all].sort() : all;
  // Each row's terms in the order of the columns, as oxigraph writes them.
  const row = (b: SparqlRow): SparqlRow => {
    const out: SparqlRow = {};
    const empty = q.rows !== undefined && b[q.rows]?.value === '0';
    for (const k of vars) {
      const extreme = q.extremes.get(k);
      const [v, from] = extreme ? extremeTerm(b, k, extreme) : [b[k], k];
      if (v) out[k] = readTerm(v, q.booleanVars.has(k), b[q.lexical.get(from) ?? '']?.value);
      const average = q.averages?.get(k);
      if (average && out[k]) out[k] = averageTerm(out[k], b, average);
      else if (empty && q.emptySums.includes(k)) out[k] = { type: 'literal', value: '0', datatype: `${XSD}integer` };
    }
    return out;
  };
  const kept = (b: SparqlRow): boolean => q.having.every((k) => b[k] !== undefined && readTerm(b[k], true).value === 'true');
  return { vars, row, kept };
}

/**
 * The value of a projected MAX, MIN, SUM or AVG column read back from its companions (`Extreme`):
 * SUM and AVG over a term that is no number are an error (unbound; Virtuoso sums strings as 0);
 * MAX is the greatest simple literal, else the greatest number, else the greatest IRI; MIN the least
 * IRI, else number, else simple literal (SPARQL §15.1 orders IRIs below literals; oxigraph numbers
 * below simple literals); over other terms alone (dates, language-tagged literals) Virtuoso's own value.
 * @throws StoreCannotAnswer for MAX or MIN over other terms beside numbers, simple literals or IRIs (their order differs)
 */
function extremeTerm(b: SparqlRow, k: string, x: Extreme): [SparqlTerm | undefined, string] {
  const others = Number(b[x.others]?.value ?? 0) > 0;
  if (x.aggregation === 'sum' || x.aggregation === 'avg') return [others ? undefined : b[k], k];
  const number: [SparqlTerm | undefined, string] = [b[x.numbers!], x.numbers!];
  const string: [SparqlTerm | undefined, string] = [b[x.strings!] ? { type: 'literal', value: b[x.strings!].value } : undefined, x.strings!];
  const iri: [SparqlTerm | undefined, string] = [b[x.iris!] ? { type: 'uri', value: b[x.iris!].value } : undefined, x.iris!];
  // A sub-SELECT's MIN or MAX over other terms (a date beside a dateTime, language-tagged literals, Virtuoso's own order) or NaNs: refused.
  if (x.sub && (others || Number(b[x.nans!]?.value ?? 0) > 0))
    throw new StoreCannotAnswer(
      `a sub-SELECT's ${x.aggregation.toUpperCase()} projected over a NaN or terms that are no numbers, simple literals or IRIs (dates, booleans, language-tagged literals, custom datatypes): Virtuoso orders them otherwise than SPARQL; this store does not answer it (an oxigraph-backed serve does)`,
    );
  if (others && (number[0] || string[0] || iri[0]))
    throw new StoreCannotAnswer(
      `${x.aggregation.toUpperCase()} over numbers, simple literals or IRIs beside other terms (booleans, dates, language-tagged literals, blank nodes): Virtuoso orders them otherwise`,
    );
  // Virtuoso's MAX of language-tagged literals alone is unbound (its MIN is SPARQL's).
  if (others && !b[k])
    throw new StoreCannotAnswer(
      `${x.aggregation.toUpperCase()} over language-tagged literals or other terms that are no numbers, simple literals or IRIs: Virtuoso gives no value; this store does not answer it (an oxigraph-backed serve does)`,
    );
  // Over other terms alone Virtuoso's value is kept, but a simple literal there is one whose language tag Virtuoso dropped
  // (MAX of language-tagged literals without GROUP BY: "hello" for "hello"@en): refused.
  const v = b[k];
  if (others && v?.type === 'literal' && !v['xml:lang'] && (!v.datatype || v.datatype === `${XSD}string`))
    throw new StoreCannotAnswer(
      `${x.aggregation.toUpperCase()} over language-tagged literals: Virtuoso gives the literal without its language tag; this store does not answer it (an oxigraph-backed serve does)`,
    );
  if (others) return [b[k], k];
  // SPARQL orders NaN above every number (oxigraph: MAX over NaN and numbers is NaN; MIN the least number).
  if (Number(b[x.nans!]?.value ?? 0) > 0 && (x.aggregation === 'max' || !number[0])) number.splice(0, 2, { type: 'literal', value: 'NaN', datatype: `${XSD}double` }, x.nans!);
  const order = x.aggregation === 'max' ? [string, number, iri] : [iri, number, string];
  return order.find((t) => t[0]) ?? [undefined, k];
}

/**
 * Virtuoso's whole answer to the text of `virtuosoQuery` (SPARQL JSON results), read back as the
 * client's answer (`virtuosoRowReader`; the ASK boolean: whether a row came).
 * @param doc Virtuoso's parsed answer
 */
export function readVirtuosoResults(doc: SparqlResults, q: VirtuosoQuery): SparqlResults {
  const bindings = doc.results?.bindings ?? [];
  if (q.form === 'boolean') return { head: {}, boolean: bindings.length > 0 };
  const { vars, row, kept } = virtuosoRowReader(doc.head?.vars ?? [], q);
  return { head: { vars }, results: { bindings: bindings.filter(kept).map(row) } };
}

/** Integer lexical forms. */
const INTEGER = /^[+-]?\d+$/;

/**
 * One term of Virtuoso's answer as SPARQL JSON results write it.
 * @param boolean the column is bound to a boolean-valued expression (Virtuoso writes 0, 1 or a position)
 * @param lexical `STR()` of the same value (its companion column), for a double's or float's digits
 */
function readTerm(v: SparqlTerm, boolean: boolean, lexical?: string): SparqlTerm {
  if (v.type !== 'typed-literal' && !(v.type === 'literal' && v.datatype)) return v;
  if (boolean && v.datatype === `${XSD}integer` && INTEGER.test(v.value)) return { type: 'literal', value: Number(v.value) !== 0 ? 'true' : 'false', datatype: `${XSD}boolean` };
  if (v.datatype === `${XSD}boolean` && (v.value === '0' || v.value === '1')) return { type: 'literal', value: v.value === '1' ? 'true' : 'false', datatype: `${XSD}boolean` };
  // Virtuoso's STR() has 16 significant digits (a float's widened to a double), a double's maybe followed by the difference to its value (`exactLexical`): the value is written as oxigraph writes it (virtuoso-numbers.ts).
  const [digits, difference] = (lexical ?? '').split(' ');
  // Added only when not zero: -0 + 0 is 0.
  const value = difference === undefined || Number(difference) === 0 ? Number(digits) : Number(digits) + Number(difference);
  if ((v.datatype === `${XSD}double` || v.datatype === `${XSD}float`) && lexical !== undefined && Number.isFinite(value))
    return { type: 'literal', value: v.datatype === `${XSD}float` ? floatLexical(value) : doubleLexical(value), datatype: v.datatype };
  // A simple literal is written without a datatype (as oxigraph writes it).
  if (v.datatype === `${XSD}string` || v.datatype === undefined) return { type: 'literal', value: v.value };
  return { type: 'literal', value: v.value, datatype: v.datatype };
}
