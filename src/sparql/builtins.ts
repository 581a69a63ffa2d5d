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

type Node = Record<string, unknown>;

const XSD = 'http://www.w3.org/2001/XMLSchema#';
/** The casts of SPARQL 1.1 (section 17.5): the only function IRIs a federation engine is given outside SERVICE. */
export const SPARQL_CASTS = ['boolean', 'double', 'float', 'decimal', 'integer', 'dateTime', 'string'].map((t) => `${XSD}${t}`);

/** The function both engines implement as STR with oxigraph's canonical strings of numbers (module comment). */
export const STR_FUNCTION = 'urn:fkgqa:function:str';

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

/**
 * Rewrites, in place, outside SERVICE (module comment): every STR(e) and xsd:string(e) into
 * `<STR_FUNCTION>(e)`, and every GROUP_CONCAT(e) into GROUP_CONCAT(CONCAT(e)), so that a value that is
 * not a string (a number, an IRI) is an error on every engine as on the unsharded graph (SPARQL 1.1
 * section 18.5.1.7 defines GROUP_CONCAT by CONCAT, which takes string literals only), where Comunica
 * and Jena wrote the number, each in its own form (`8.0E-1`, `0.8e0`).
 * @param ast a parsed query that `builtinProblem` accepted
 * @returns how many calls were rewritten
 */
export function rewriteBuiltins(ast: sparqljs.SparqlQuery): number {
  let n = 0;
  visitOutsideServices(ast, (o) => {
    if (o.type === 'aggregate' && o.aggregation === 'group_concat') {
      o.expression = { type: 'operation', operator: 'concat', args: [o.expression] };
      n++;
      return;
    }
    const cast = o.type === 'functionCall' && (o.function as { value: string }).value === `${XSD}string`;
    if (!cast && !(o.type === 'operation' && o.operator === 'str')) return;
    delete o.operator;
    Object.assign(o, { type: 'functionCall', function: DataFactory.namedNode(STR_FUNCTION), distinct: false });
    n++;
  });
  return n;
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
  const integer = datatype.startsWith(XSD) && INTEGER_TYPES.includes(datatype.slice(XSD.length));
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
export const DOUBLE_DIGITS = 15;

/** xsd:integer and the types derived from it (XML Schema 1.1 part 2, section 3.4). */
const INTEGER_TYPES = [
  'integer',
  'int',
  'long',
  'short',
  'byte',
  'nonNegativeInteger',
  'positiveInteger',
  'negativeInteger',
  'nonPositiveInteger',
  'unsignedInt',
  'unsignedLong',
  'unsignedShort',
  'unsignedByte',
];

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
