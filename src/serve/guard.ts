/**
 * The cheap guard an endpoint applies to a query text before anything parses it: a length limit and
 * a nesting-depth limit. Deeply nested groups corrupt oxigraph's WebAssembly instance (about 700
 * nested `{}` give "memory access out of bounds" for every later query) and keep sparqljs busy for
 * minutes; counting brackets is linear in the text and needs no parser.
 */
import { ProtocolError } from './protocol.js';

/**
 * Deepest bracket nesting accepted by default: `{`, `(` and `[` together. The 542 distinct gold
 * queries of Spider4SPARQL reach depth 6 at most (tested); oxigraph 0.5.11 stays sound up to about
 * 500 nested groups and faults at 700.
 */
export const MAX_QUERY_DEPTH = 64;

/** IRIREF (SPARQL 1.1 Query grammar [139]): `<` … `>` without spaces, quotes, braces, `|`, `^`, backquote or backslash. */
const IRIREF = /<[^<>"{}|^`\\\u0000-\u0020]*>/y;

/**
 * The deepest bracket nesting of a SPARQL text: `{`, `(`, `[` open, `}`, `)`, `]` close. Brackets
 * inside string literals (all four quote forms, with backslash escapes), IRIs (`<…>`, told apart from
 * the `<` operator by the IRIREF grammar), comments (`#` to the end of the line) and after a backslash
 * (escaped local names such as `:singer\#name`, pitfall B1) do not count.
 * @returns the maximum depth reached (0 for a text without brackets); unbalanced closers never make it negative
 */
export function nestingDepth(text: string): number {
  let depth = 0;
  let max = 0;
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text[i];
    if (c === '{' || c === '(' || c === '[') {
      if (++depth > max) max = depth;
      i++;
    } else if (c === '}' || c === ')' || c === ']') {
      if (depth > 0) depth--;
      i++;
    } else if (c === '#') {
      const end = text.indexOf('\n', i);
      i = end < 0 ? n : end + 1;
    } else if (c === '\\') {
      i += 2;
    } else if (c === '<') {
      IRIREF.lastIndex = i;
      i = IRIREF.test(text) ? IRIREF.lastIndex : i + 1;
    } else if (c === '"' || c === "'") {
      const long = text.startsWith(c.repeat(3), i);
      const quote = long ? c.repeat(3) : c;
      i += quote.length;
      while (i < n) {
        if (text[i] === '\\') i += 2;
        else if (text.startsWith(quote, i)) {
          i += quote.length;
          break;
        } else if (!long && (text[i] === '\n' || text[i] === '\r')) break; // a short string ends at the line (a syntax error the parser reports)
        else i++;
      }
    } else i++;
  }
  return max;
}

/** Limits of `checkQueryText`. */
export interface QueryLimits {
  /** Longest query text, in UTF-16 code units (≈ characters). */
  maxLength: number;
  /** Deepest bracket nesting (see `nestingDepth`), default MAX_QUERY_DEPTH. */
  maxDepth: number;
}

/**
 * Refuses a query text that is too long or too deeply nested, before any parsing.
 * @throws ProtocolError 400 naming the limit and the value found
 */
export function checkQueryText(text: string, limits: QueryLimits): void {
  if (text.length > limits.maxLength) {
    throw new ProtocolError(400, `query too long: ${text.length} characters, the limit is ${limits.maxLength}`);
  }
  const depth = nestingDepth(text);
  if (depth > limits.maxDepth) {
    throw new ProtocolError(400, `query nested too deeply: brackets ({ ( [) nest ${depth} levels, the limit is ${limits.maxDepth}`);
  }
}
