/**
 * The cheap guard an endpoint applies to a query text before anything parses it: a length limit and
 * a nesting-depth limit. Deeply nested groups corrupt oxigraph's WebAssembly instance (about 700
 * nested `{}` give "memory access out of bounds" for every later query) and keep sparqljs busy for
 * minutes; counting brackets is linear in the text and needs no parser.
 */
import { SparqlLexer, signOfNumber } from './lexer.js';
import { ProtocolError } from './protocol.js';

/**
 * Deepest bracket nesting accepted by default: `{`, `(` and `[` together. The 542 distinct gold
 * queries of Spider4SPARQL reach depth 6 at most (tested); oxigraph 0.5.11 stays sound up to about
 * 500 nested groups and faults at 700.
 */
export const MAX_QUERY_DEPTH = 64;

/**
 * Deepest nesting of operators accepted (`operatorDepth` of parse.ts: measured on the parsed query,
 * not on the text). The 542 distinct gold queries of Spider4SPARQL reach 11 at most, their trivial
 * federation forms over 8 endpoints 30 (tests/long-query.slow.test.ts); oxigraph 0.5.11 overflows its
 * stack from about 1,000 (a chain of `+`, UNION branches, OPTIONALs, BINDs, property path steps, an
 * IN list of 10,000), and corrupts its WebAssembly instance on some of them.
 */
export const MAX_OPERATOR_DEPTH = 256;

/**
 * Deepest bracket nesting that a shard endpoint (`fkgqa serve`'s default `--max-query-depth`) and a
 * federation engine's own check (`checkServiceQuery`) accept: the text they get is generated — by a
 * federation engine for each SERVICE clause (Comunica through sparqljs, Jena's serializer), which
 * brackets every operator of an expression — so a query within MAX_QUERY_DEPTH and
 * MAX_OPERATOR_DEPTH as the agent wrote it nests up to about their sum there. Within it, no query
 * fkgqa accepts from an agent is refused for text fkgqa or an engine generated; the agent's own text
 * is held to MAX_QUERY_DEPTH (routing.ts). Oxigraph stays sound to about 500 nested groups.
 */
export const MAX_SERVED_QUERY_DEPTH = MAX_QUERY_DEPTH + MAX_OPERATOR_DEPTH;

/** The nesting of a SPARQL text (`measureNesting`). */
interface Nesting {
  /** The deepest level reached. */
  depth: number;
  /** Chained signs count in that level (then the limit's message names them). */
  signs: boolean;
}

/**
 * The deepest nesting of a SPARQL text: `{`, `(`, `[` open a level, `}`, `)`, `]` close it, and each
 * sign operator (`!`, `+`, `-` where an operand is expected) after the first of a chain nests one
 * level more until the operand: `!!?x` nests as deep as `!(!?x)` does, so that a chain of one-character
 * operators is held to the same limit as its bracketed spelling, whatever the text's length.
 * Brackets and signs inside string literals, IRIs, comments and escaped local names (`:a\(`) do
 * not count, nor does the sign of a numeric literal (`-1`); a `<` that is less-than hides none
 * (lexer.ts, `SparqlLexer`).
 * @returns the maximum depth reached (0 for a text without brackets); unbalanced closers never make it negative
 */
export function measureNesting(text: string): Nesting {
  let depth = 0;
  let max = 0;
  let signs = false;
  let run = 0;
  const lexer = new SparqlLexer(text);
  while (lexer.next()) {
    if (lexer.role === 'sign' && !signOfNumber(text, lexer.end)) {
      if (++run > 1 && depth + run - 1 > max) {
        max = depth + run - 1;
        signs = true;
      }
      continue;
    }
    run = 0;
    const p = lexer.punct;
    for (let k = 0; k < p.length; k++) {
      const c = p[k];
      if (c === '{' || c === '(' || c === '[') {
        if (++depth > max) {
          max = depth;
          signs = false;
        }
      } else if ((c === '}' || c === ')' || c === ']') && depth > 0) depth--;
    }
  }
  return { depth: max, signs };
}

/** The deepest nesting of a SPARQL text: `measureNesting`'s depth. */
export function nestingDepth(text: string): number {
  return measureNesting(text).depth;
}

/**
 * What nests too deeply, for a message: the brackets, or the brackets and chained signs.
 * @param nesting the text's nesting (`measureNesting`)
 */
export function nestingWhat(nesting: Nesting): string {
  return nesting.signs ? 'brackets ({ ( [) and chained signs (! + -)' : 'brackets ({ ( [)';
}

/**
 * The number of opening brackets (`{`, `(`, `[`) and signs (`!`, `+`, `-`) anywhere in a text, read
 * as characters: an upper bound of `nestingDepth` that costs a tenth of the lexer's time, so a text
 * with few of them is cleared without being lexed.
 */
function openingBrackets(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x28 || c === 0x5b || c === 0x7b || c === 0x21 || c === 0x2b || c === 0x2d) n++;
  }
  return n;
}

/** Limits of `checkQueryText`. */
export interface QueryLimits {
  /** Longest query text, in UTF-16 code units (≈ characters). */
  maxLength: number;
  /** Deepest nesting of brackets and chained signs (see `measureNesting`), default MAX_QUERY_DEPTH. */
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
  if (openingBrackets(text) <= limits.maxDepth) return;
  const nesting = measureNesting(text);
  if (nesting.depth > limits.maxDepth) {
    throw new ProtocolError(400, `query nested too deeply: ${nestingWhat(nesting)} nest ${nesting.depth} levels, the limit is ${limits.maxDepth}`);
  }
}
