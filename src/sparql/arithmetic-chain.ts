/**
 * Arithmetic chains found in SPARQL text without a parser: what a shard endpoint needs for a query
 * that sparqljs cannot parse but oxigraph can (SPARQL 1.2 syntax such as `"a"@en--ltr`,
 * `<<( … )>>`, annotations, `VERSION`, or `LATERAL`). oxigraph 0.5 groups a chain of `+ -` or
 * `* /` from the right, SPARQL 1.1 from the left (grammar [116]–[117]); such a query cannot be
 * bracketed by generation (generate.ts), so the endpoint refuses it when it holds a chain and
 * evaluates it as sent when it holds none.
 *
 * Also the codepoint escapes of IRIs (`<urn:\u0061>`), which oxigraph reads (as SPARQL 1.2 does,
 * in IRIs and strings only) and sparqljs does not.
 */

import { commentEnd } from './guard.js';

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
  /** 1-based line and column (UTF-16 code units) of the chain's first operand in the text. */
  line: number;
  column: number;
}

const PN_CHARS_BASE =
  'A-Za-z\\u00C0-\\u00D6\\u00D8-\\u00F6\\u00F8-\\u02FF\\u0370-\\u037D\\u037F-\\u1FFF\\u200C-\\u200D\\u2070-\\u218F\\u2C00-\\u2FEF\\u3001-\\uD7FF\\uF900-\\uFDCF\\uFDF0-\\uFFFD\\u{10000}-\\u{EFFFF}';
const PN_CHARS_U = `${PN_CHARS_BASE}_`;
const PN_CHARS = `${PN_CHARS_U}\\-0-9\\u00B7\\u0300-\\u036F\\u203F-\\u2040`;
const PLX = "%[0-9A-Fa-f]{2}|\\\\[_~.\\-!$&'()*+,;=/?#@%]";
/** PNAME_LN or PNAME_NS (SPARQL 1.1 grammar [137]–[138], [168]–[169]). Its classes hold combining marks (U+0300–U+036F, PN_CHARS [167]), matched one character at a time. */
// eslint-disable-next-line no-misleading-character-class
const PNAME = new RegExp(`(?:[${PN_CHARS_BASE}](?:[${PN_CHARS}.]*[${PN_CHARS}])?)?:(?:(?:[${PN_CHARS_U}:0-9]|${PLX})(?:(?:[${PN_CHARS}.:]|${PLX})*(?:[${PN_CHARS}:]|${PLX}))?)?`, 'uy');
/** BLANK_NODE_LABEL ([142]). */
// eslint-disable-next-line no-misleading-character-class
const BNODE = new RegExp(`_:[${PN_CHARS_U}0-9](?:[${PN_CHARS}.]*[${PN_CHARS}])?`, 'uy');
/** VAR1, VAR2 ([143]–[144], [166]). */
// eslint-disable-next-line no-misleading-character-class
const VAR = new RegExp(`[?$][${PN_CHARS_U}0-9][${PN_CHARS_U}0-9\\u00B7\\u0300-\\u036F\\u203F-\\u2040]*`, 'uy');
/** A keyword or a built-in function's name. */
const WORD = /[A-Za-z][A-Za-z0-9_]*/y;
/** INTEGER, DECIMAL, DOUBLE ([146]–[148]), without sign: a sign is an operator here (see findArithmeticChain). */
const NUMBER = /[0-9]+\.[0-9]*[eE][+-]?[0-9]+|\.?[0-9]+[eE][+-]?[0-9]+|[0-9]*\.[0-9]+|[0-9]+/y;
/** IRIREF ([139]) with the codepoint escapes oxigraph reads in IRIs. */
const IRI = /<(?:[^<>"{}|^`\\\u0000-\u0020]|\\u[0-9A-Fa-f]{4}|\\U[0-9A-Fa-f]{8})*>/y;
/** LANGTAG ([145]) with SPARQL 1.2's base direction (`@en--ltr`). */
const LANGTAG = /@[a-zA-Z]+(?:-[a-zA-Z0-9]+)*(?:--[a-zA-Z]+)?/y;
/** Punctuation and operators, longest first. */
const PUNCT = ['<<(', '^^', '||', '&&', '!=', '<=', '>=', '<<', '{|', '(', ')', '{', '}', '[', ']', ',', ';', '.', '=', '<', '>', '!', '+', '-', '*', '/', '^', '|', '~', '?'];

type TokenKind = 'operand' | 'word' | 'punct';
interface Token {
  kind: TokenKind;
  text: string;
  start: number;
  end: number;
}

function sticky(re: RegExp, text: string, i: number): number {
  re.lastIndex = i;
  return re.test(text) ? re.lastIndex : i;
}

/** The end of the string literal starting at `i` (all four quote forms, backslash escapes). */
function stringEnd(text: string, i: number): number {
  const c = text[i];
  const long = text.startsWith(c.repeat(3), i);
  const quote = long ? c.repeat(3) : c;
  let j = i + quote.length;
  while (j < text.length) {
    if (text[j] === '\\') j += 2;
    else if (text.startsWith(quote, j)) return j + quote.length;
    else j++;
  }
  return text.length;
}

/**
 * The tokens of a SPARQL text that matter for expressions: operands (numbers, variables, literals
 * with their language tag or datatype, IRIs, prefixed names, blank node labels), words (keywords,
 * function names) and punctuation; whitespace and comments are left out. `closer(i)` says whether
 * a `)` or `>` at `i` closes a SPARQL 1.2 triple term (`)>>`) or reified triple (`>>`), or an
 * annotation (`|}`); `lessThan()` whether a `<` at the current token is the less-than operator
 * (after an operand in an expression: `?a<?b-2-1&&?b>0` compares, as oxigraph reads it), else an
 * IRI starts there when IRIREF matches.
 */
function* tokens(text: string, closer: () => string | undefined, lessThan: () => boolean = () => false): Generator<Token> {
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text[i];
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      i++;
      continue;
    }
    if (c === '#') {
      i = commentEnd(text, i);
      continue;
    }
    const start = i;
    let end = i;
    let kind: TokenKind = 'operand';
    if (c === '"' || c === "'") {
      end = stringEnd(text, i);
      const tag = sticky(LANGTAG, text, end);
      if (tag > end) end = tag;
      else if (text.startsWith('^^', end)) {
        let k = end + 2;
        while (k < n && /\s/.test(text[k])) k++;
        const dt = text[k] === '<' ? sticky(IRI, text, k) : sticky(PNAME, text, k);
        end = dt > k ? dt : end;
      }
    } else if (c === '<' && !text.startsWith('<<', i) && !lessThan() && sticky(IRI, text, i) > i) end = IRI.lastIndex;
    else if (c === '?' || c === '$') end = sticky(VAR, text, i);
    else if (c === '_' && text[i + 1] === ':') end = sticky(BNODE, text, i);
    else if ((c >= '0' && c <= '9') || (c === '.' && /[0-9]/.test(text[i + 1] ?? ''))) end = sticky(NUMBER, text, i);
    if (end === start) end = sticky(PNAME, text, i);
    if (end === start && sticky(WORD, text, i) > i) {
      end = WORD.lastIndex;
      kind = 'word';
    }
    if (end === start) {
      kind = 'punct';
      const close = closer();
      if (close && text.startsWith(close, i)) end = i + close.length;
      else {
        const p = PUNCT.find((x) => text.startsWith(x, i));
        end = i + (p ? p.length : 1);
      }
    }
    i = end;
    yield { kind, text: text.slice(start, end), start, end };
  }
}

/** What a `(` opens, by where it stands: an expression, a group graph pattern, or data (a collection, a path, VALUES rows, a triple term). */
type FrameKind = 'group' | 'expr' | 'data';
/** The clause a group graph pattern (or the query's top level) is in: it decides what its `(` opens. */
type Clause = 'prologue' | 'select' | 'pattern' | 'filter' | 'bind' | 'values' | 'modifier';
const CLAUSES: Record<string, Clause> = {
  select: 'select',
  where: 'pattern',
  construct: 'pattern',
  describe: 'pattern',
  ask: 'pattern',
  optional: 'pattern',
  minus: 'pattern',
  graph: 'pattern',
  service: 'pattern',
  union: 'pattern',
  lateral: 'pattern',
  filter: 'filter',
  bind: 'bind',
  values: 'values',
  group: 'modifier',
  order: 'modifier',
  having: 'modifier',
  limit: 'modifier',
  offset: 'modifier',
};
/** Words that separate operands inside an expression (`?x IN (…)`, `(… AS ?v)`, `COUNT(DISTINCT …)`, `; SEPARATOR = …`). */
const SEPARATORS = new Set(['as', 'in', 'not', 'distinct', 'separator']);
const CLOSER: Record<string, string> = { '(': ')', '{': '}', '[': ']', '<<(': ')>>', '<<': '>>', '{|': '|}' };

interface Frame {
  kind: FrameKind;
  closer: string;
  /** group: the clause it is in. */
  clause: Clause;
  /** The parent's clause becomes `pattern` when this frame closes (FILTER's and BIND's brackets, a group, VALUES rows). */
  endsClause: boolean;
  // expr: the expression being read
  expect: boolean;
  unaryStart?: number;
  chainStart: number;
  factorStart: number;
  add: number;
  addOp: number;
  mul: number;
  mulOp: number;
}

const frame = (kind: FrameKind, closer: string, endsClause = false): Frame => ({
  kind,
  closer,
  clause: 'pattern',
  endsClause,
  expect: true,
  chainStart: -1,
  factorStart: -1,
  add: 0,
  addOp: -1,
  mul: 0,
  mulOp: -1,
});

const fresh = (f: Frame) => Object.assign(f, { expect: true, unaryStart: undefined, chainStart: -1, factorStart: -1, add: 0, mul: 0 });

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
  const top = frame('group', '');
  top.clause = 'prologue';
  const stack: Frame[] = [top];
  let prev: Token | undefined;
  const found = (f: Frame, kind: 'add' | 'mul', op2: Token): ArithmeticChain => {
    const start = kind === 'add' ? f.chainStart : f.factorStart;
    const op = kind === 'add' ? f.addOp : f.mulOp;
    // Lines end at CR, LF or CRLF, as the grammar's EOL.
    const lines = text.slice(0, start).split(/\r\n|\r|\n/);
    return { first: text.slice(start, op).trim(), op1: text[op], second: text.slice(op + 1, op2.start).trim(), op2: op2.text, line: lines.length, column: lines[lines.length - 1].length + 1 };
  };
  /** An operand starts at `t` in expression `f` (after an operator, or juxtaposed: a new expression). */
  const operand = (f: Frame, t: Token) => {
    if (!f.expect) fresh(f);
    const start = f.unaryStart ?? t.start;
    if (f.chainStart < 0) f.chainStart = f.factorStart = start;
    else if (f.factorStart < 0) f.factorStart = start;
    f.expect = false;
    f.unaryStart = undefined;
  };
  for (const t of tokens(
    text,
    () => {
      const c = stack[stack.length - 1].closer;
      return c.length > 1 ? c : undefined;
    },
    () => {
      // In an expression, a `<` after an operand is the less-than operator (grammar [114]); elsewhere (a triple pattern's `?s <p>`) an IRI.
      const f = stack[stack.length - 1];
      return f.kind === 'expr' && !f.expect;
    },
  )) {
    const f = stack[stack.length - 1];
    const p = prev;
    prev = t;
    if (t.kind === 'punct' && t.text in CLOSER) {
      let kind: FrameKind;
      let endsClause = false;
      if (f.kind === 'data' || t.text === '[' || t.text === '<<(' || t.text === '<<' || t.text === '{|') kind = 'data';
      else if (f.kind === 'expr') kind = t.text === '{' ? 'group' : 'expr';
      else if (t.text === '{') {
        kind = f.clause === 'values' ? 'data' : 'group';
        endsClause = true;
      } else if (f.clause === 'filter' || f.clause === 'bind') {
        kind = 'expr';
        endsClause = true;
      } else kind = f.clause === 'pattern' || f.clause === 'values' ? 'data' : 'expr';
      if (f.kind === 'expr') {
        // A call's or EXISTS's bracket continues the operand its name started; any other starts one.
        const call = p && !f.expect && (p.kind === 'word' || (p.kind === 'operand' && /^[^?$"'0-9.]/.test(p.text)));
        if (!call) operand(f, t);
      }
      stack.push(frame(kind, CLOSER[t.text], endsClause));
      continue;
    }
    if (t.kind === 'punct' && t.text === f.closer && stack.length > 1) {
      stack.pop();
      const parent = stack[stack.length - 1];
      if (f.endsClause && parent.kind === 'group') parent.clause = 'pattern';
      continue;
    }
    if (f.kind === 'data') continue;
    if (f.kind === 'group') {
      const clause = t.kind === 'word' ? CLAUSES[t.text.toLowerCase()] : t.text === '.' ? 'pattern' : undefined;
      if (clause) f.clause = clause;
      continue;
    }
    // An expression.
    const op = t.kind === 'punct' ? t.text : '';
    if (t.kind === 'operand' || (t.kind === 'word' && !SEPARATORS.has(t.text.toLowerCase())) || (op === '*' && f.expect)) {
      operand(f, t);
    } else if ((op === '+' || op === '-' || op === '!') && f.expect) {
      f.unaryStart ??= t.start;
    } else if (op === '+' || op === '-') {
      if (++f.add === 2) return found(f, 'add', t);
      f.addOp = t.start;
      f.mul = 0;
      f.factorStart = -1;
      f.expect = true;
    } else if (op === '*' || op === '/') {
      if (++f.mul === 2) return found(f, 'mul', t);
      f.mulOp = t.start;
      f.expect = true;
    } else {
      fresh(f);
    }
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
  for (const t of tokens(text, () => undefined)) {
    if (t.kind !== 'operand' || t.text[0] !== '<' || !t.text.includes('\\')) continue;
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
