/**
 * Syntactic validity of the queries an agent sends (FKGQA paper, section 6, "Syntactic Analysis":
 * a query is valid when it executed). Every query is parsed with sparqljs 3.7.4 (no prefix
 * predeclared: an agent must declare what it uses) and put in exactly one class, tested in this
 * order: `prefix`, `braces`, `service`, `parse`, `execution`, `ok`; a query that parses and whose
 * tool error says nothing about the agent's SPARQL (an infrastructure failure, the query's time
 * limit) is not judged. docs/evaluation.md ("Syntactic validity") defines each class. A query beyond
 * the parser's documented limits (`QueryTooComplex` of src/sparql/parse.ts) is `execution`, as a
 * query over the length limit: it was refused before it ran, whether or not it is valid SPARQL.
 */
import { parseQuery, parseSparql, QueryTooComplex } from '../sparql/parse.js';

/** The validity classes, in the order they are tested. */
export const VALIDITY_CLASSES = ['ok', 'prefix', 'braces', 'service', 'parse', 'execution'] as const;
export type ValidityClass = (typeof VALIDITY_CLASSES)[number];

/** Why a query sent is not judged for syntactic validity (module comment). */
export const NOT_JUDGED = ['timeout', 'infrastructure'] as const;
export type NotJudged = (typeof NOT_JUDGED)[number];

/** The class of one query, with the parser's message or the tool's error. */
export interface Validity {
  class: ValidityClass;
  detail?: string;
}

/** Removes strings, IRIs and comments (replaced by spaces, so offsets stay). */
function blankLexemes(text: string): string {
  return text.replace(/"""[\s\S]*?"""|'''[\s\S]*?'''|"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|<[^<>"{}|^`\\\s]*>|#[^\n]*/g, (m) => ' '.repeat(m.length));
}

/** Whether `{` and `}` balance (never more `}` than `{` so far, equal at the end). */
export function bracesBalance(text: string): boolean {
  let depth = 0;
  for (const c of blankLexemes(text)) {
    if (c === '{') depth++;
    else if (c === '}' && --depth < 0) return false;
  }
  return depth === 0;
}

/** Offset of sparqljs's error location (`hash.loc`, 1-based lines, 0-based columns), if any. */
function errorOffset(text: string, e: unknown): number | undefined {
  const loc = (e as { hash?: { loc?: { first_line: number; last_column: number } } }).hash?.loc;
  if (!loc) return undefined;
  const lines = text.split('\n');
  let off = 0;
  for (let i = 0; i < loc.first_line - 1 && i < lines.length; i++) off += lines[i].length + 1;
  return off + loc.last_column;
}

const SERVICE_HEAD = /\bSERVICE\b(?!\s+(?:SILENT\s+)?(?:<[^>\s]*>|[A-Za-z][\w.-]*:[^\s{]*|:[^\s{]*|[?$]\w+)\s*\{)/i;

function serviceMalformed(text: string, e: unknown): boolean {
  const blank = text.replace(/"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|#[^\n]*/g, (m) => ' '.repeat(m.length));
  if (SERVICE_HEAD.test(blank)) return true;
  const at = errorOffset(text, e);
  if (at === undefined) return false;
  const before = blank.slice(0, at);
  const i = before.search(/\bSERVICE\b(?![\s\S]*\bSERVICE\b)/i);
  return i >= 0 && /^SERVICE\s+(?:SILENT\s+)?\S*\s*$/i.test(before.slice(i));
}

function hasVariableService(node: unknown): boolean {
  if (!node || typeof node !== 'object') return false;
  const o = node as { type?: string; name?: { termType?: string } };
  if (o.type === 'service' && o.name?.termType === 'Variable') return true;
  return Object.values(node as object).some(hasVariableService);
}

/**
 * Classifies one query sent to `run_sparql_query` (module comment).
 * @param query the query text as the agent sent it
 * @param toolError the tool's error text when it answered with an error (MCP `isError`), else undefined
 */
export function classifyQuery(query: string, toolError?: string): Validity {
  let error: unknown;
  try {
    const ast = parseSparql(query);
    if (ast.type !== 'query') return { class: 'parse', detail: 'a SPARQL Update, not a query' };
    if (hasVariableService(ast)) return { class: 'service', detail: 'SERVICE names its endpoint by a variable' };
  } catch (e) {
    // Valid SPARQL or not, the query is beyond a documented limit (too deep, too complex): refused
    // before it ran, as a query that is too long.
    if (e instanceof QueryTooComplex) return { class: 'execution', detail: e.message.slice(0, 300) };
    error = e;
  }
  if (error !== undefined) {
    const parsed = parseQuery(query, undefined);
    const message = parsed.ok ? String(error) : parsed.error;
    if (/Unknown prefix|undeclared prefix/i.test(message)) return { class: 'prefix', detail: message };
    if (!bracesBalance(query)) return { class: 'braces', detail: message };
    if (serviceMalformed(query, error)) return { class: 'service', detail: message };
    return { class: 'parse', detail: message };
  }
  if (toolError !== undefined) return { class: 'execution', detail: toolError.slice(0, 300) };
  return { class: 'ok' };
}

/**
 * Whether a query sent is left out of syntactic validity, and why (module comment): only a query of
 * class `execution` (it parses) can be, when its tool error is an infrastructure failure or its time
 * limit. The error's class comes from `_meta["fkgqa/error"]` as eval recorded it (`ToolStep.error`).
 * @param v the query's class from `classifyQuery`
 * @param error the step's recorded error class, if any
 * @returns the reason, or undefined when the query is judged
 */
export function notJudged(v: Validity, error: { class: string; infrastructure: boolean } | undefined): NotJudged | undefined {
  if (v.class !== 'execution') return undefined;
  if (error?.infrastructure) return 'infrastructure';
  if (error?.class === 'timeout') return 'timeout';
  return undefined;
}
