/**
 * Arithmetic chains found in SPARQL text without a parser: what a shard endpoint needs for a query
 * that sparqljs cannot parse but oxigraph can (SPARQL 1.2 syntax is refused before, at any length:
 * lexer.ts `notSparql11`). oxigraph 0.5 groups a chain of `+ -` or
 * `* /` from the right, SPARQL 1.1 from the left (grammar [116]–[117]); such a query cannot be
 * bracketed by generation (generate.ts), so the endpoint refuses it when it holds a chain and
 * evaluates it as sent when it holds none.
 *
 * Also the codepoint escapes of IRIs (`<urn:\u0061>`), which oxigraph reads (as SPARQL 1.2 does,
 * in IRIs and strings only) and sparqljs does not, and the characters an IRI may not hold, escaped
 * or not, which oxigraph refuses and sparqljs reads.
 */

import { lineColumn, sparqlTokens, type Token } from './lexer.js';

/** A chain of two operators of the same precedence in one expression, as `findArithmeticChain` reports it. */
export interface ArithmeticChain {
  /** The text of the chain's first operand (`8`, or `1 - 2 * 3`'s `1`). */
  first: string;
  /** The first operator: `+`, `-`, `*` or `/`. */
  op1: string;
  /** The text of the second operand, between the two operators. */
  second: string;
  /** The second operator. */
  op2: string;
  /** 1-based line and column (code points, lexer.ts `lineColumn`) of the chain's first operand in the text. */
  line: number;
  column: number;
}

/** The arithmetic read so far of one expression (one bracket's, or the operand after a comparison). */
interface Arithmetic {
  /** Where a sign before the next operand starts (`-?x`). */
  unaryStart?: number;
  /** Where the expression's first operand starts, and its current factor's (-1: none yet). */
  chainStart: number;
  factorStart: number;
  /** `+ -` operators read (and where the last starts), `* /` operators read since the last `+ -`. */
  add: number;
  addOp: number;
  mul: number;
  mulOp: number;
}

const arithmetic = (): Arithmetic => ({ chainStart: -1, factorStart: -1, add: 0, addOp: -1, mul: 0, mulOp: -1 });
const fresh = (a: Arithmetic) => Object.assign(a, { unaryStart: undefined, chainStart: -1, factorStart: -1, add: 0, mul: 0 });

/**
 * The first arithmetic chain of a query text: two `+ -` (or two `* /`) operators in one expression
 * with no bracket around the first (`8 - 2 - 1`, `1 - 2 * 3 - 4`, `10 / 4 * 2`), where oxigraph's
 * grouping (from the right) differs from SPARQL's (from the left). Expressions are those of
 * FILTER, BIND, the projection, GROUP BY, ORDER BY and HAVING (and their sub-expressions, function
 * arguments, sub-SELECTs); a `-` or `+` after an operand is the binary operator (as the grammar
 * reads `8 -2 -1`), one after an operator, `(` or `,` is a sign. Strings, IRIs, comments, numbers
 * (`1e-3`), language tags (`@en-GB`), prefixed names and blank node labels (`ex:a-b`), property
 * paths (`ex:a/ex:b/ex:c`), collections and VALUES rows (`(1 -2 -3)`) and triple terms are no
 * expressions. Reads any text (a malformed one may give a chain or none): meant for texts oxigraph
 * parses.
 * @param text a SPARQL query
 * @returns the first chain, or undefined when the text has none
 */
export function findArithmeticChain(text: string): ArithmeticChain | undefined {
  // One entry per open bracket, as sparqlTokens opens and closes them.
  const stack: Arithmetic[] = [arithmetic()];
  const found = (a: Arithmetic, kind: 'add' | 'mul', op2: Token): ArithmeticChain => {
    const start = kind === 'add' ? a.chainStart : a.factorStart;
    const op = kind === 'add' ? a.addOp : a.mulOp;
    const { line, column } = lineColumn(text, start);
    return { first: text.slice(start, op).trim(), op1: text[op], second: text.slice(op + 1, op2.start).trim(), op2: op2.text, line, column };
  };
  for (const t of sparqlTokens(text)) {
    if (t.closes) {
      stack.pop();
      continue;
    }
    const a = stack[stack.length - 1];
    if (t.role === 'operand') {
      // After an operand, another starts a new expression (juxtaposed: `(1 2)`, `SELECT ?a ?b`).
      if (!t.expect) fresh(a);
      const start = a.unaryStart ?? t.start;
      if (a.chainStart < 0) a.chainStart = a.factorStart = start;
      else if (a.factorStart < 0) a.factorStart = start;
      a.unaryStart = undefined;
    } else if (t.role === 'sign') {
      a.unaryStart ??= t.start;
    } else if (t.role === 'add') {
      if (++a.add === 2) return found(a, 'add', t);
      a.addOp = t.start;
      a.mul = 0;
      a.factorStart = -1;
    } else if (t.role === 'mul') {
      if (++a.mul === 2) return found(a, 'mul', t);
      a.mulOp = t.start;
    } else if (t.role === 'other') fresh(a);
    if (t.opens) stack.push(arithmetic());
  }
  return undefined;
}

/** Characters an IRIREF may hold as they are (grammar [139]): not `<>"{}|^` backquote, backslash, or U+0000–U+0020. */
const IRI_CHAR = /^[^<>"{}|^`\\\u0000-\u0020]$/u;

/**
 * The text with the codepoint escapes of its IRIs (`<urn:\u0061>`, `\U0001F600`) replaced by the
 * characters they stand for, as oxigraph reads them (SPARQL 1.1 §19.2 processes `\u` and `\U`
 * before the grammar; SPARQL 1.2, and oxigraph, only inside IRIs and strings); strings keep theirs
 * (sparqljs reads them) and so does everything else. An escape of a character that an IRI cannot
 * hold as it is (a space, `>`, a backslash, a surrogate) is kept: oxigraph refuses it.
 * @param text a SPARQL text
 * @returns the text, its IRIs unescaped (the same string when it has no escape in an IRI)
 */
export function unescapeIriCodepoints(text: string): string {
  if (!/\\[uU]/.test(text)) return text;
  let out = '';
  let done = 0;
  for (const t of sparqlTokens(text)) {
    if (t.kind !== 'iri' || !t.text.includes('\\')) continue;
    const iri = t.text.replace(/\\u([0-9A-Fa-f]{4})|\\U([0-9A-Fa-f]{8})/g, (m, u: string | undefined, U: string | undefined) => {
      const cp = parseInt(u ?? U ?? '', 16);
      if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return m;
      const ch = String.fromCodePoint(cp);
      return IRI_CHAR.test(ch) ? ch : m;
    });
    out += text.slice(done, t.start) + iri;
    done = t.end;
  }
  return out + text.slice(done);
}

/** A character of an IRI, escaped or written as it is, that the IRI may not hold (`iriCharacterProblem`). */
interface IriCharacterProblem {
  /** The IRI as written, with its `<` `>` (`<urn:\U0010FFFF>`). */
  iri: string;
  /** The character as written: its codepoint escape (`\U0010FFFF`), or `the character U+E000` for one written as it is. */
  written: string;
  /** Whether it is written as a codepoint escape. */
  escaped: boolean;
  /** Why the character is refused, as a relative clause (`is a noncharacter, …`). */
  why: string;
  /** The IRI's offset (UTF-16 code units), 1-based line and column (code points, lexer.ts `lineColumn`). */
  offset: number;
  line: number;
  column: number;
}

/** Why a code point cannot stand in an IRI, or undefined; `inQuery`: it is in the IRI's query part (after `?`, before `#`). */
function iriCharProblem(cp: number, inQuery: boolean): string | undefined {
  if (cp > 0x10ffff) return 'names no character (code points end at U+10FFFF)';
  if (cp >= 0xd800 && cp <= 0xdfff) return 'is a surrogate code point, no character';
  if (!IRI_CHAR.test(String.fromCodePoint(cp))) return 'is a character an IRI reference cannot hold (IRIREF, SPARQL 1.1 grammar [139])';
  if (cp < 0xa0 && cp >= 0x7f) return 'is a control character, no IRI character (RFC 3987)';
  if ((cp & 0xfffe) === 0xfffe || (cp >= 0xfdd0 && cp <= 0xfdef)) return 'is a noncharacter, no IRI character (RFC 3987)';
  if (cp >= 0xe0000 && cp <= 0xe0fff) return 'is a tag or variation selector, no IRI character (RFC 3987 ucschar)';
  const privateUse = (cp >= 0xe000 && cp <= 0xf8ff) || cp >= 0xf0000;
  if (privateUse && !inQuery) return 'is a private-use character, which an IRI holds only in its query part (RFC 3987 iprivate)';
  return undefined;
}

/** Characters that may make an IRI refused (`iriCharProblem`) and the backslash of an escape: a text without any has no such IRI. */
const MAYBE_REFUSED = /[\\\u007F-\u009F\uD800-\uDFFF\uE000-\uF8FF\uFDD0-\uFDEF\uFFFE\uFFFF]/;
/** A codepoint escape (`\u0061`, `\U0001F600`) or one code point (a lone surrogate too). */
const IRI_UNIT = /\\u([0-9A-Fa-f]{4})|\\U([0-9A-Fa-f]{8})|[\s\S]/gu;

/**
 * The first character of an IRI that the IRI may not hold, as a codepoint escape (`<urn:\U0010FFFF>`)
 * or written as it is (`<urn:\uE000>` with the character itself): beyond U+10FFFF, a surrogate, a
 * character IRIREF excludes (a space, `>`; escaped only, else the text holds no IRI there), a
 * control character (U+007F–U+009F) or a noncharacter, a tag, or a private-use character outside
 * the query part (RFC 3987, as oxigraph checks the IRI it reads). sparqljs reads all of them, so
 * without this a store that parses the query itself (oxigraph) would refuse it while one that is
 * sent sparqljs's reading (Virtuoso) would not. Escapes and characters in strings are not IRIs'
 * and are left alone.
 * @returns the IRI, the character and why, or undefined
 */
export function iriCharacterProblem(text: string): IriCharacterProblem | undefined {
  if (!MAYBE_REFUSED.test(text)) return undefined;
  for (const t of sparqlTokens(text)) {
    if (t.kind !== 'iri' || !MAYBE_REFUSED.test(t.text)) continue;
    for (const m of t.text.matchAll(IRI_UNIT)) {
      const escaped = m[1] !== undefined || m[2] !== undefined;
      const cp = escaped ? parseInt(m[1] ?? m[2], 16) : m[0].codePointAt(0)!;
      if (!escaped && cp < 0x7f) continue;
      const before = t.text.slice(0, m.index);
      const query = before.lastIndexOf('?');
      const why = iriCharProblem(cp, query >= 0 && !before.slice(query).includes('#'));
      if (why === undefined) continue;
      const { line, column } = lineColumn(text, t.start);
      const written = escaped ? m[0] : `the character U+${cp.toString(16).toUpperCase().padStart(4, '0')}`;
      return { iri: t.text, written, escaped, why, offset: t.start, line, column };
    }
  }
  return undefined;
}
