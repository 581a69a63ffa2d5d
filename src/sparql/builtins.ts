/**
 * Built-in functions of a SERVICE-explicit query that the federation engine evaluates itself (outside
 * every SERVICE clause), where Comunica 4.5, Jena ARQ 4.5 and the unsharded graph (oxigraph) answer
 * differently. docs/federation.md ("Built-in functions outside SERVICE") lists each case with the
 * answers measured; this module is the one point both engines pass (service-check.ts):
 *
 * - refused before anything is sent, with what to write instead (`builtinProblem`): a function IRI
 *   that is not a SPARQL 1.1 built-in or cast (`fn:contains`, `bif:contains`, any other IRI: Jena
 *   evaluates some, Comunica none, oxigraph none); SUBSTR with a constant start below 1, a negative
 *   constant length or a constant position that is not an integer (XPath's `fn:substring` answers,
 *   Jena follows it but for a start of 0 without length, Comunica counts from the end, oxigraph
 *   leaves the value unbound); REGEX or REPLACE with the flag `x` (Jena 4.5 fails the query);
 * - rewritten (`rewriteBuiltins`): GROUP_CONCAT(e) into GROUP_CONCAT(CONCAT(e)) (a number is an
 *   error, as on the unsharded graph, where the engines wrote it, each in its form); STR and xsd:string casts become a call of `STR_FUNCTION`,
 *   which both engines implement alike (comunica/thread.ts, JenaFederationEngine.java): STR, but a
 *   number's string is oxigraph's canonical form of its value (`canonicalNumber`), where Comunica
 *   wrote `1.69E3` and Jena `1690.0e0` for a computed double the unsharded graph writes `1690`; an
 *   xsd:double is rounded to 15 significant digits first (`DOUBLE_DIGITS`), so the unsharded graph's
 *   string of an inexact double (`27.200000000000003`) is not met (`27.2` on both engines).
 */
import { DataFactory } from 'n3';
import type sparqljs from 'sparqljs';
import { visitOutsideServices } from './exists.js';
import { XSD, XSD_INTEGER_TYPES } from '../common/vocab.js';

type Node = Record<string, unknown>;

/** The casts of SPARQL 1.1 (section 17.5): the only function IRIs a federation engine is given outside SERVICE. */
const SPARQL_CASTS = ['boolean', 'double', 'float', 'decimal', 'integer', 'dateTime', 'string'].map((t) => `${XSD}${t}`);

/** The function both engines implement as STR with oxigraph's canonical strings of numbers (module comment). */
export const STR_FUNCTION = 'urn:fkgqa:function:str';
/** The function both engines implement as `/` with oxigraph's xsd:decimal quotient (`divideNumbers`). */
export const DIVIDE_FUNCTION = 'urn:fkgqa:function:divide';
/** The function both engines implement as AVG from SUM and COUNT of the same values (`averageNumbers`). */
export const AVG_FUNCTION = 'urn:fkgqa:function:avg';

const FN = 'http://www.w3.org/2005/xpath-functions#';
/** SPARQL 1.1 built-ins for the XPath functions agents name by IRI. */
const BUILTIN_FOR: Record<string, string> = {
  [`${FN}contains`]: 'CONTAINS(?text, "word")',
  'bif:contains': 'CONTAINS(?text, "word") or REGEX(?text, "word", "i")',
  [`${FN}starts-with`]: 'STRSTARTS(?text, "prefix")',
  [`${FN}ends-with`]: 'STRENDS(?text, "suffix")',
  [`${FN}upper-case`]: 'UCASE(?text)',
  [`${FN}lower-case`]: 'LCASE(?text)',
  [`${FN}string-length`]: 'STRLEN(?text)',
  [`${FN}substring`]: 'SUBSTR(?text, start, length)',
  [`${FN}concat`]: 'CONCAT(?a, ?b)',
  [`${FN}matches`]: 'REGEX(?text, "pattern")',
  [`${FN}replace`]: 'REPLACE(?text, "pattern", "replacement")',
  [`${FN}string`]: 'STR(?x)',
  [`${FN}abs`]: 'ABS(?x)',
  [`${FN}round`]: 'ROUND(?x)',
  [`${FN}ceiling`]: 'CEIL(?x)',
  [`${FN}floor`]: 'FLOOR(?x)',
  [`${FN}year-from-dateTime`]: 'YEAR(?date)',
  [`${FN}month-from-dateTime`]: 'MONTH(?date)',
  [`${FN}day-from-dateTime`]: 'DAY(?date)',
  [`${FN}year-from-date`]: 'YEAR(?date)',
  [`${FN}month-from-date`]: 'MONTH(?date)',
  [`${FN}day-from-date`]: 'DAY(?date)',
};

const SENT = 'nothing was sent';

/** A constant integer argument's value, NaN for another constant number, undefined for anything else (a variable, an expression). */
function constantNumber(arg: unknown): number | undefined {
  const t = arg as { termType?: string; value?: string; datatype?: { value: string } };
  if (t?.termType !== 'Literal' || !t.datatype) return undefined;
  const n = Number(t.value);
  if (t.datatype.value === `${XSD}integer`) return n;
  return [`${XSD}decimal`, `${XSD}double`, `${XSD}float`].includes(t.datatype.value) ? NaN : undefined;
}

/** Why a SUBSTR outside SERVICE is refused (module comment), or undefined. */
function substrProblem(args: unknown[]): string | undefined {
  const [start, length] = [constantNumber(args[1]), args.length > 2 ? constantNumber(args[2]) : undefined];
  const call = `SUBSTR(…, ${(args[1] as { value?: string }).value ?? '…'}${args.length > 2 ? `, ${(args[2] as { value?: string }).value ?? '…'}` : ''})`;
  if (Number.isNaN(start) || Number.isNaN(length)) {
    return `${call} is refused: SUBSTR takes integer positions (SPARQL 1.1, section 17.4.3.3) and the federation engines answer other numbers differently, so ${SENT}; write integers, e.g. SUBSTR(?text, 1, 3)`;
  }
  if (start !== undefined && start < 1) {
    return `${call} is refused: SPARQL counts characters from 1 (section 17.4.3.3) and the federation engines answer a start below 1 differently (an empty string, characters from the end, or no value), so ${SENT}; start at 1, e.g. SUBSTR(?text, 1, ${length !== undefined ? Math.max(0, length + start - 1) : 'length'}) for the first characters`;
  }
  if (length !== undefined && length < 0) {
    return `${call} is refused: a negative length is answered differently by the federation engines, so ${SENT}; write a length of 0 or more`;
  }
  return undefined;
}

/** Why a function call or built-in outside SERVICE is refused (module comment), or undefined. */
function callProblem(o: Node): string | undefined {
  if (o.type === 'functionCall') {
    const f = (o.function as { value: string }).value;
    if (SPARQL_CASTS.includes(f)) return undefined;
    const instead = BUILTIN_FOR[f];
    return (
      `the function <${f}> is refused outside SERVICE: it is not a SPARQL 1.1 built-in, and the federation engines do not all know it (the unsharded graph does not), so ${SENT}; ` +
      (instead
        ? `write the SPARQL 1.1 built-in ${instead} instead`
        : 'write it with SPARQL 1.1 built-ins (CONTAINS, REGEX, STRSTARTS, SUBSTR, UCASE, …) or the casts xsd:integer, xsd:decimal, xsd:double, xsd:string, xsd:dateTime, xsd:boolean')
    );
  }
  if (o.type !== 'operation') return undefined;
  const args = (o.args as unknown[]) ?? [];
  if (o.operator === 'substr') return substrProblem(args);
  if (o.operator === 'regex' || o.operator === 'replace') {
    const flags = args[o.operator === 'regex' ? 2 : 3] as { termType?: string; value?: string } | undefined;
    if (flags?.termType === 'Literal' && flags.value!.includes('x')) {
      return `${o.operator.toUpperCase()} with the flag "x" is refused: the federation engines do not all support it, so ${SENT}; remove the whitespace from the pattern and the "x" from the flags`;
    }
    const pattern = args[1] as { termType?: string; value?: string } | undefined;
    if (pattern?.termType === 'Literal' && !(flags?.termType === 'Literal' && flags.value!.includes('q'))) {
      const problem = unicodeClasses(pattern.value!).problem;
      if (problem) return `the pattern ${JSON.stringify(pattern.value)} of ${o.operator.toUpperCase()} is refused, ${SENT}: ${problem}`;
    }
  }
  return undefined;
}

/**
 * Why a query's built-in functions outside SERVICE are refused (module comment): the first refused
 * call, in words that name it, say that nothing was sent and what to write instead.
 * @param ast a parsed query (sparqljs 3.7, IRIs fixed)
 * @returns the message, or undefined when every call outside SERVICE is answered alike by every engine
 */
export function builtinProblem(ast: sparqljs.SparqlQuery): string | undefined {
  let problem: string | undefined;
  visitOutsideServices(ast, (o) => {
    if (problem) return false;
    problem = callProblem(o);
    return problem === undefined;
  });
  return problem;
}

/** The separator an empty GROUP_CONCAT separator is written as, then removed (a Unicode noncharacter, U+FDD0, which no text holds). */
const JOINER = '\ufdd0';
const lit = (value: string, type: string) => DataFactory.literal(value, DataFactory.namedNode(`${XSD}${type}`));
const op = (operator: string, ...args: unknown[]): Node => ({ type: 'operation', operator, args });
/** A variable or an RDF term. */
const isTerm = (x: unknown): boolean => typeof x === 'object' && x !== null && 'termType' in x;
/**
 * The built-ins whose value may change from one call to the next within a solution (RAND, NOW, UUID,
 * STRUUID, BNODE: SPARQL 1.1, 17.4.2.9 and 17.4.5), and EXISTS, whose group graph pattern written
 * twice would be evaluated twice: an operand holding one is not written twice (`repeatable`).
 */
const UNREPEATABLE = new Set(['rand', 'now', 'uuid', 'struuid', 'bnode', 'exists', 'notexists']);
/**
 * Whether an operand may be written twice in a rewrite with the same value each time: a term, or an
 * expression without an `UNREPEATABLE` built-in (aggregates included: one value per group).
 */
function repeatable(x: unknown): boolean {
  if (Array.isArray(x)) return x.every(repeatable);
  if (x === null || typeof x !== 'object' || isTerm(x)) return true;
  const o = x as Node;
  if (o.type === 'operation' && UNREPEATABLE.has((o.operator as string).toLowerCase())) return false;
  return Object.values(o).every(repeatable);
}
/** An expression that is an error on every engine (an invalid cast), for the branches that must give no value. */
const ERROR = (): Node => ({ type: 'functionCall', function: DataFactory.namedNode(`${XSD}integer`), args: [lit('-', 'string')], distinct: false });

/**
 * `a = b` (or `!=`) that is false (true) for two bound terms the engine cannot compare, where
 * Comunica answers a type error and oxigraph and Jena false (SPARQL 1.1, 17.4.1.7 allows both):
 * `COALESCE(a = b, IF(sameTerm(a, a) && sameTerm(b, b), false, false))`, still an error when an
 * operand is unbound or an error. Only for `repeatable` operands: a computed operand is evaluated
 * again when `a = b` is an error, to the same value.
 */
function guardedEquality(operator: '=' | '!=', a: unknown, b: unknown, made: WeakSet<object>): Node {
  const compared = op(operator, a, b);
  made.add(compared);
  const answer = lit(operator === '=' ? 'false' : 'true', 'boolean');
  return op('coalesce', compared, op('if', op('&&', op('sameterm', a, a), op('sameterm', b, b)), answer, answer));
}

/**
 * Rewrites, in place, outside SERVICE (module comment), so that every engine answers as oxigraph:
 * - STR(e) and xsd:string(e) into `<STR_FUNCTION>(e)`;
 * - GROUP_CONCAT(e) into GROUP_CONCAT(CONCAT(e)), so that a value that is not a string (a number, an
 *   IRI) is an error on every engine as on the unsharded graph (SPARQL 1.1 section 18.5.1.7 defines
 *   GROUP_CONCAT by CONCAT, which takes string literals only), where Comunica and Jena wrote the
 *   number, each in its own form (`8.0E-1`, `0.8e0`); and, when its values all have one language
 *   tag, into that tag on the result (oxigraph and Comunica keep it, Jena drops it):
 *   `IF(COUNT(DISTINCT LANG(e)) = 1 && SAMPLE(LANG(e)) != "", STRLANG(STR(g), SAMPLE(LANG(e))), g)`;
 *   an empty separator is written U+FDD0 and removed by REPLACE (Comunica joined with blanks);
 * - a / b into `<DIVIDE_FUNCTION>(a, b)` and AVG(e) into `<AVG_FUNCTION>(SUM(e), COUNT(e))`: an
 *   xsd:decimal quotient has 18 fractional digits, truncated, as oxigraph's (Comunica computes a
 *   binary double, Jena 24 digits rounded);
 * - `a = b`, `a != b`, `a IN (…)`, `a NOT IN (…)` of `repeatable` operands (terms or computed values,
 *   e.g. `?id + 0 != "x"`, `STR(?d) != ?id`) into `guardedEquality`, each operand rewritten first;
 * - SUBSTR(s, start, length) whose start or length is computed into `IF(positions are integers,
 *   start >= 1, length >= 0, SUBSTR(…), error)`: oxigraph gives no value there, Comunica `""`,
 *   Jena XPath's characters;
 * - a constant REGEX or REPLACE pattern's `\d`, `\w`, `\s` into the Unicode classes oxigraph reads
 *   (`unicodeClasses`), where Comunica and Jena read ASCII ones (Jena also for `\s`).
 * @param ast a parsed query that `builtinProblem` accepted
 * @returns how many calls were rewritten
 */
export function rewriteBuiltins(ast: sparqljs.SparqlQuery): number {
  let n = 0;
  const made = new WeakSet<object>();
  const visit = (o: Node): boolean | void => {
    if (made.has(o)) return;
    if (o.type === 'aggregate' && o.aggregation === 'group_concat') {
      const e = o.expression;
      o.expression = { type: 'operation', operator: 'concat', args: [e] };
      made.add(o);
      let g: Node = { ...o };
      made.add(g);
      if (o.separator === '') {
        // Comunica 4.5 joins with " " where the separator is "" (sparqlalgebrajs drops an empty separator when it copies the algebra).
        g.separator = JOINER;
        g = op('replace', g, DataFactory.literal(JOINER), DataFactory.literal(''));
        made.add(g);
      }
      const lang = (distinct: boolean): Node => ({ type: 'aggregate', aggregation: distinct ? 'count' : 'sample', distinct, expression: op('lang', e) });
      const tag = lang(false);
      const oneTag = op('&&', op('=', lang(true), lit('1', 'integer')), op('!=', tag, lit('', 'string')));
      for (const x of oneTag.args as Node[]) made.add(x);
      const tagged = op('strlang', { type: 'functionCall', function: DataFactory.namedNode(STR_FUNCTION), args: [g], distinct: false }, lang(false));
      for (const k of Object.keys(o)) delete o[k];
      Object.assign(o, op('if', oneTag, tagged, g));
      n++;
      return;
    }
    if (o.type === 'aggregate' && o.aggregation === 'avg') {
      const { expression, distinct } = o;
      const args = [
        { type: 'aggregate', aggregation: 'sum', distinct, expression },
        { type: 'aggregate', aggregation: 'count', distinct, expression },
      ];
      for (const k of Object.keys(o)) delete o[k];
      Object.assign(o, { type: 'functionCall', function: DataFactory.namedNode(AVG_FUNCTION), args, distinct: false });
      n++;
      return;
    }
    if (o.type === 'operation' && o.operator === '/') {
      delete o.operator;
      Object.assign(o, { type: 'functionCall', function: DataFactory.namedNode(DIVIDE_FUNCTION), distinct: false });
      n++;
      return;
    }
    if (o.type === 'operation' && (o.operator === '=' || o.operator === '!=') && repeatable(o.args)) {
      const [a, b] = o.args as unknown[];
      visitOutsideServices([a, b], visit);
      Object.assign(o, guardedEquality(o.operator, a, b, made));
      n++;
      return false;
    }
    if (o.type === 'operation' && (o.operator === 'in' || o.operator === 'notin')) {
      const [a, list] = o.args as [unknown, unknown[]];
      if (list.length === 0 || !repeatable(o.args)) return;
      visitOutsideServices([a, list], visit);
      const eq = o.operator === 'in' ? '=' : '!=';
      const parts = list.map((b) => guardedEquality(eq, a, b, made));
      Object.assign(
        o,
        parts.slice(1).reduce((acc, p) => op(eq === '=' ? '||' : '&&', acc, p), parts[0]),
      );
      n++;
      return false;
    }
    if (o.type === 'operation' && o.operator === 'substr') {
      const [, start, length] = o.args as unknown[];
      const positions = [start, ...(length === undefined ? [] : [length])];
      if (positions.every((x) => constantNumber(x) !== undefined)) return;
      const inner = op('substr', ...(o.args as unknown[]));
      made.add(inner);
      const integer = (x: unknown) =>
        op(
          'notin',
          op('datatype', x),
          [`${XSD}decimal`, `${XSD}double`, `${XSD}float`].map((t) => DataFactory.namedNode(t)),
        );
      const tests = [integer(start), op('>=', start, lit('1', 'integer'))];
      if (length !== undefined) tests.push(integer(length), op('>=', length, lit('0', 'integer')));
      for (const t of tests) made.add(t);
      Object.assign(
        o,
        op(
          'if',
          tests.slice(1).reduce((acc, t) => op('&&', acc, t), tests[0]),
          inner,
          ERROR(),
        ),
      );
      n++;
      return;
    }
    if (o.type === 'operation' && (o.operator === 'regex' || o.operator === 'replace')) {
      const args = o.args as { termType?: string; value?: string }[];
      const flags = args[o.operator === 'regex' ? 2 : 3];
      const pattern = args[1];
      if (pattern?.termType !== 'Literal' || (flags?.termType === 'Literal' && flags.value!.includes('q'))) return;
      const rewritten = unicodeClasses(pattern.value!).pattern;
      if (rewritten !== undefined && rewritten !== pattern.value) {
        (o.args as unknown[])[1] = DataFactory.literal(rewritten);
        n++;
      }
      return;
    }
    const cast = o.type === 'functionCall' && (o.function as { value: string }).value === `${XSD}string`;
    if (!cast && !(o.type === 'operation' && o.operator === 'str')) return;
    delete o.operator;
    Object.assign(o, { type: 'functionCall', function: DataFactory.namedNode(STR_FUNCTION), distinct: false });
    n++;
  };
  visitOutsideServices(ast, visit);
  return n;
}

/** What oxigraph's `\w` matches (Rust's regex crate: Unicode word characters), in XPath categories. */
const WORD = '\\p{L}\\p{Nl}\\p{M}\\p{Nd}\\p{Pc}';
/** What oxigraph's `\s` matches (Unicode White_Space): the separators, tab, line feed, carriage return, and U+000B, U+000C, U+0085. */
const SPACE = '\\p{Z}\\t\\n\\r\u000b\u000c\u0085';

/**
 * A regular expression's `\d`, `\w`, `\s` and complements written as the Unicode classes oxigraph
 * (Rust's regex crate) reads them, so that Comunica (JavaScript: ASCII `\d`, `\w`) and Jena (Java:
 * ASCII `\d`, `\w`, `\s`) match the same characters: `\d` as `\p{Nd}`, `\w` as
 * `[\p{L}\p{Nl}\p{M}\p{Nd}\p{Pc}]`, `\s` as `[\p{Z}\t\n\r` and U+000B, U+000C, U+0085`]`,
 * `\D` `\W` `\S` as their complements. In brackets `\W` and `\S` have no such form (a class
 * cannot hold the complement of a union): refused, with what to write instead.
 * @param pattern the pattern as the query gives it (a pattern builtinProblem's regex check accepts)
 * @returns the rewritten pattern, or why it is refused
 */
export function unicodeClasses(pattern: string): { pattern?: string; problem?: string } {
  let out = '';
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') {
      const e = pattern[i + 1] ?? '';
      i++;
      if (e === 'd') out += '\\p{Nd}';
      else if (e === 'D') out += '\\P{Nd}';
      else if (e === 'w') out += inClass ? WORD : `[${WORD}]`;
      else if (e === 's') out += inClass ? SPACE : `[${SPACE}]`;
      else if ((e === 'W' || e === 'S') && !inClass) out += `[^${e === 'W' ? WORD : SPACE}]`;
      else if (e === 'W' || e === 'S') {
        return {
          problem: `\\${e} inside brackets has no form that every federation engine reads as the unsharded graph does (Unicode ${e === 'W' ? 'word characters' : 'whitespace'}); write the complement outside brackets, e.g. (\\${e}|x) for [\\${e}x], or [^…] listing what must not match`,
        };
      } else out += c + e;
      continue;
    }
    if (c === '[' && !inClass) inClass = true;
    else if (c === ']' && inClass && !out.endsWith('[') && !out.endsWith('[^')) inClass = false;
    out += c;
  }
  return { pattern: out };
}

/** A number of a term: its kind (xsd:integer and derived types, xsd:decimal, xsd:float, xsd:double) and lexical form; undefined for anything else. */
function numberOf(t: { termType?: string; value?: string; datatype?: { value: string } } | undefined): { kind: 'integer' | 'decimal' | 'float' | 'double'; text: string } | undefined {
  if (t?.termType !== 'Literal' || !t.datatype?.value.startsWith(XSD)) return undefined;
  const local = t.datatype.value.slice(XSD.length);
  const text = t.value!.trim();
  if (XSD_INTEGER_TYPES.includes(local)) return /^[+-]?\d+$/.test(text) ? { kind: 'integer', text } : undefined;
  if (local === 'decimal') return /^[+-]?(\d+\.?\d*|\.\d+)$/.test(text) ? { kind: 'decimal', text } : undefined;
  if (local === 'float' || local === 'double') return { kind: local, text };
  return undefined;
}

/** Fractional digits of oxigraph's xsd:decimal (a 128-bit integer of 10^-18 units). */
const DECIMAL_DIGITS = 18;
const SCALE = 10n ** BigInt(DECIMAL_DIGITS);
const DECIMAL_MAX = 2n ** 127n - 1n;

/** An xsd:integer or xsd:decimal lexical form as a count of 10^-18 units. */
function scaled(text: string): bigint {
  const negative = text.startsWith('-');
  const [int, frac = ''] = text.replace(/^[+-]/, '').split('.');
  const v = BigInt(int || '0') * SCALE + BigInt((frac + '0'.repeat(DECIMAL_DIGITS)).slice(0, DECIMAL_DIGITS) || '0');
  return negative ? -v : v;
}

/** A count of 10^-18 units as an xsd:decimal's canonical lexical form. */
function unscaled(v: bigint): string {
  const negative = v < 0n;
  const a = negative ? -v : v;
  const frac = (a % SCALE).toString().padStart(DECIMAL_DIGITS, '0').replace(/0+$/, '');
  const body = frac ? `${a / SCALE}.${frac}` : `${a / SCALE}`;
  return negative ? `-${body}` : body;
}

/** A JavaScript number as an xsd:double or xsd:float lexical form (INF, -INF, NaN as XML Schema writes them). */
const floating = (v: number): string => (Number.isNaN(v) ? 'NaN' : v === Infinity ? 'INF' : v === -Infinity ? '-INF' : String(v));

/** A literal's value and datatype IRI, as `divideNumbers` and `averageNumbers` give them. */
export interface NumberValue {
  value: string;
  datatype: string;
}

/**
 * `a / b` as oxigraph 0.5 computes it (measured): of two xsd:integer or xsd:decimal values an
 * xsd:decimal truncated (toward zero) to 18 fractional digits (`1 / 3` is 0.333333333333333333,
 * `-5 / 3` is -1.666666666666666666), an error when b is 0 or the quotient is out of oxigraph's
 * decimal range; else a binary xsd:double (xsd:float when neither is a double), IEEE division
 * (`1e0 / 0` is INF).
 * @param a the dividend (an RDF/JS term)
 * @param b the divisor
 * @returns the quotient, or undefined for an error (an operand that is not a number, a division by 0 of decimals)
 */
export function divideNumbers(a: { termType?: string; value?: string; datatype?: { value: string } }, b: typeof a): NumberValue | undefined {
  const [x, y] = [numberOf(a), numberOf(b)];
  if (!x || !y) return undefined;
  if ((x.kind === 'integer' || x.kind === 'decimal') && (y.kind === 'integer' || y.kind === 'decimal')) {
    const d = scaled(y.text);
    if (d === 0n) return undefined;
    const q = (scaled(x.text) * SCALE) / d;
    return q > DECIMAL_MAX || q < -DECIMAL_MAX ? undefined : { value: unscaled(q), datatype: `${XSD}decimal` };
  }
  const num = (t: { text: string }) => (t.text === 'INF' || t.text === '+INF' ? Infinity : t.text === '-INF' ? -Infinity : Number(t.text));
  if (x.kind !== 'double' && y.kind !== 'double') return { value: floating(Math.fround(Math.fround(num(x)) / Math.fround(num(y)))), datatype: `${XSD}float` };
  return { value: floating(num(x) / num(y)), datatype: `${XSD}double` };
}

/**
 * AVG from SUM and COUNT of the same values (SPARQL 1.1, 18.5.1.4: Sum(M) / Count(M), 0 for no
 * value), the quotient as `divideNumbers` gives it.
 * @returns the average, or undefined for an error
 */
export function averageNumbers(sum: Parameters<typeof divideNumbers>[0], count: Parameters<typeof divideNumbers>[0]): NumberValue | undefined {
  if (numberOf(count)?.text === '0') return { value: '0', datatype: `${XSD}integer` };
  return divideNumbers(sum, count);
}

/**
 * The string of a number as oxigraph writes it (oxigraph 0.5, measured), which STR gives on the
 * unsharded graph: the shortest digits that read back as the same xsd:float, or as the
 * same xsd:double once rounded to DOUBLE_DIGITS significant digits (half up), without exponent
 * (`1690`, `0.0000001`, `-0`, `INF`, `-INF`, `NaN`); an xsd:decimal without trailing zeros (`12`, `0.5`); an integer without leading zeros or plus sign.
 * @param lexical the number's lexical form, as the engine holds it (any valid form: `1.69E3`, `1690.0e0`)
 * @param datatype the full datatype IRI
 * @returns the canonical string, or undefined for another datatype (xsd:double, xsd:float, xsd:decimal
 *   and xsd:integer with its derived types are numbers) or a lexical form that is no valid number
 */
export function canonicalNumber(lexical: string, datatype: string): string | undefined {
  const text = lexical.trim();
  if (datatype === `${XSD}double` || datatype === `${XSD}float`) {
    if (/^[+]?INF$/.test(text)) return 'INF';
    if (text === '-INF') return '-INF';
    if (text === 'NaN') return 'NaN';
    if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text)) return undefined;
    let v = Number(text);
    if (datatype === `${XSD}float`) v = Math.fround(v);
    if (v === 0) return Object.is(v, -0) ? '-0' : '0';
    const digits = datatype === `${XSD}float` ? shortestFloat(v) : String(Number(v.toPrecision(DOUBLE_DIGITS)));
    return plain(digits);
  }
  const integer = datatype.startsWith(XSD) && XSD_INTEGER_TYPES.includes(datatype.slice(XSD.length));
  if ((!integer && datatype !== `${XSD}decimal`) || !/^[+-]?(\d+\.?\d*|\.\d+)$/.test(text)) return undefined;
  const negative = text.startsWith('-');
  let [int, frac = ''] = text.replace(/^[+-]/, '').split('.');
  int = int.replace(/^0+(?=\d)/, '') || '0';
  frac = frac.replace(/0+$/, '');
  const body = frac ? `${int}.${frac}` : int;
  return negative && body !== '0' ? `-${body}` : body;
}

/**
 * Significant digits of an xsd:double's string: Comunica 4.5 computes with decimals where Jena and
 * oxigraph compute with binary doubles (`2.72e0 * 10`: 27.2, and 27.200000000000003 in Jena and
 * oxigraph), which differ only beyond the 15th digit; both engines round there.
 */
const DOUBLE_DIGITS = 15;

/** The shortest digits (as JavaScript writes a number) that read back as the same xsd:float. */
function shortestFloat(v: number): string {
  for (let p = 1; p < 17; p++) {
    const s = v.toPrecision(p);
    if (Math.fround(Number(s)) === v) return String(Number(s));
  }
  return String(v);
}

/** A JavaScript number's string without exponent (`1e+21` → `1000000000000000000000`, `1e-7` → `0.0000001`). */
function plain(s: string): string {
  const m = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(s);
  if (!m) return s;
  const [, sign, lead, rest = '', e] = m;
  const digits = lead + rest;
  const exp = Number(e);
  if (exp >= 0) return sign + (exp >= rest.length ? digits + '0'.repeat(exp - rest.length) : `${digits.slice(0, exp + 1)}.${digits.slice(exp + 1)}`);
  return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`;
}
