/**
 * The one forward lexer of SPARQL text that an endpoint's scanners share before any parser reads
 * the text: the nesting limit (guard.ts), the quick inspection of plain queries (inspect.ts), the
 * arithmetic chain detector (arithmetic-chain.ts, generate.ts) and the recognition of a lone
 * SERVICE (federation/routing.ts). It reads strings (all four quote forms), comments (to CR or LF),
 * IRIs, prefixed names, variables, numbers, words and punctuation, and tells an IRI from the `<`
 * operator as oxigraph does: in an expression, a `<` after an operand is less-than
 * (`?a<((1))&&?b>0` compares), elsewhere an IRI starts there when IRIREF matches. For that it tracks
 * what each bracket opens: a group graph pattern, an expression, or data (collections, paths,
 * VALUES rows, triple terms). Reads any text, linear in its length; meant for texts oxigraph
 * parses, a malformed one giving some tokens.
 */

/** What a token is. `literal`: a string with its language tag (`"a"@en-GB`); a datatype (`^^xsd:int`) follows as `^^` and an `iri` or `pname`. */
export type TokenKind = 'iri' | 'literal' | 'var' | 'bnode' | 'number' | 'pname' | 'word' | 'punct';
/** What a bracket opens, by where it stands: a group graph pattern (the query's top level too), an expression, or data. */
type BracketContext = 'group' | 'expr' | 'data';
/**
 * What a token is to the expression it stands in: an operand (a term, a function name, a bracket
 * that starts an operand, `*` of `COUNT(*)`), the bracket of a call (`STR(`), a sign (`+ - !`
 * where an operand is expected), an additive or multiplicative operator, a datatype (`^^` and its
 * IRI), or anything else (a comparison, `&&`, `,`, `AS`): the end of an arithmetic expression.
 */
type ExprRole = 'operand' | 'call' | 'sign' | 'add' | 'mul' | 'datatype' | 'other';

/** A token of `sparqlTokens`. */
export interface Token {
  kind: TokenKind;
  text: string;
  /** Its span in the text: UTF-16 code units, end exclusive. */
  start: number;
  end: number;
  /** What the innermost open bracket around the token opened. */
  context: BracketContext;
  /** A bracket that opens (`( { [ <<( << {|`): what it opens. */
  opens?: BracketContext;
  /** The bracket that closes the innermost open one. */
  closes?: true;
  /** In an expression (context `expr`, not a closing bracket): what the token is to it. */
  role?: ExprRole;
  /** In an expression: an operand was expected before this token (false right after one). */
  expect: boolean;
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
/** INTEGER, DECIMAL, DOUBLE ([146]–[148]), without sign: a sign is an operator (role `sign` or `add`). */
const NUMBER = /[0-9]+\.[0-9]*[eE][+-]?[0-9]+|\.?[0-9]+[eE][+-]?[0-9]+|[0-9]*\.[0-9]+|[0-9]+/y;
/** IRIREF ([139]) with the codepoint escapes oxigraph reads in IRIs. */
const IRI = /<(?:[^<>"{}|^`\\\u0000-\u0020]|\\u[0-9A-Fa-f]{4}|\\U[0-9A-Fa-f]{8})*>/y;
/** LANGTAG ([145]) with SPARQL 1.2's base direction (`@en--ltr`). */
const LANGTAG = /@[a-zA-Z]+(?:-[a-zA-Z0-9]+)*(?:--[a-zA-Z]+)?/y;
/** Punctuation and operators, longest first. */
const PUNCT = ['<<(', '^^', '||', '&&', '!=', '<=', '>=', '<<', '{|', '(', ')', '{', '}', '[', ']', ',', ';', '.', '=', '<', '>', '!', '+', '-', '*', '/', '^', '|', '~', '?'];
/** The closing bracket of each opening one (SPARQL 1.2: `<<( … )>>` triple terms, `<< … >>` reified triples, `{| … |}` annotations). */
const CLOSER: Record<string, string> = { '(': ')', '{': '}', '[': ']', '<<(': ')>>', '<<': '>>', '{|': '|}' };

/** The clause a group graph pattern (or the query's top level) is in: it decides what its `(` opens. */
type Clause = 'prologue' | 'select' | 'pattern' | 'filter' | 'bind' | 'values' | 'modifier';
/** The words that start a clause, by clause. */
const CLAUSE_WORDS: Partial<Record<Clause, string>> = {
  select: 'select',
  pattern: 'where construct describe ask optional minus graph service union lateral',
  filter: 'filter',
  bind: 'bind',
  values: 'values',
  modifier: 'group order having limit offset',
};
/** Words that separate operands inside an expression (`?x IN (…)`, `(… AS ?v)`, `COUNT(DISTINCT …)`, `; SEPARATOR = …`). */
const SEPARATORS = new Set(['as', 'in', 'not', 'distinct', 'separator']);

const KINDS: BracketContext[] = ['group', 'expr', 'data'];
const CLAUSE_CODES: Clause[] = ['prologue', 'select', 'pattern', 'filter', 'bind', 'values', 'modifier'];
const CLOSERS = ['', ')', '}', ']', ')>>', '>>', '|}'];
/**
 * An open bracket, packed in one small integer so that a text of millions of brackets costs one
 * number each: bits 0–1 what it opens (KINDS), 2–4 the clause of a group (CLAUSE_CODES), 5 whether
 * its closing ends the parent's clause (FILTER's and BIND's brackets, a group, VALUES rows), 6
 * whether an operand is expected next (expr), 7–9 its closing bracket (CLOSERS).
 */
type Frame = number;
const frameOf = (kind: number, clause: number, endsClause: boolean, closer: number): Frame => kind | (clause << 2) | (endsClause ? 32 : 0) | 64 | (closer << 7);
const kindOf = (f: Frame) => f & 3;
const clauseOf = (f: Frame) => (f >> 2) & 7;
const withClause = (f: Frame, clause: number) => (f & ~28) | (clause << 2);
const expects = (f: Frame) => (f & 64) !== 0;
const withExpect = (f: Frame, expect: boolean) => (expect ? f | 64 : f & ~64);
const closerOf = (f: Frame) => CLOSERS[(f >> 7) & 7];
const [GROUP, EXPR, DATA] = [0, 1, 2];
const PATTERN = CLAUSE_CODES.indexOf('pattern');
const CLAUSE_OF_WORD = new Map(Object.entries(CLAUSE_WORDS).flatMap(([c, words]) => words.split(' ').map((w) => [w, CLAUSE_CODES.indexOf(c as Clause)] as const)));

function sticky(re: RegExp, text: string, i: number): number {
  re.lastIndex = i;
  return re.test(text) ? re.lastIndex : i;
}

/** The index after the comment starting at `i` (a `#`): after the first line end, CR or LF (a comment runs to EOL, [#xA#xD]), or the text's length. */
function commentEnd(text: string, i: number): number {
  const n = text.length;
  let j = i + 1;
  while (j < n && text[j] !== '\n' && text[j] !== '\r') j++;
  return j < n ? j + 1 : n;
}

/** The end of the string literal starting at `i` (all four quote forms, backslash escapes); a short one ends at the line end (a syntax error the parser reports). */
function stringEnd(text: string, i: number): number {
  const c = text[i];
  const n = text.length;
  const long = text.startsWith(c.repeat(3), i);
  const quote = long ? c.repeat(3) : c;
  let j = i + quote.length;
  while (j < n) {
    if (text[j] === '\\') j += 2;
    else if (text.startsWith(quote, j)) return j + quote.length;
    else if (!long && (text[j] === '\n' || text[j] === '\r')) return j;
    else j++;
  }
  return n;
}

/** The frame a bracket opens in frame `f`, by the bracket and the clause it stands in. */
function opened(f: Frame, bracket: string): Frame {
  const closer = CLOSERS.indexOf(CLOSER[bracket]);
  const kind = kindOf(f);
  const clause = CLAUSE_CODES[clauseOf(f)];
  if (kind === DATA || bracket === '[' || bracket === '<<(' || bracket === '<<' || bracket === '{|') return frameOf(DATA, PATTERN, false, closer);
  if (kind === EXPR) return frameOf(bracket === '{' ? GROUP : EXPR, PATTERN, false, closer);
  if (bracket === '{') return frameOf(clause === 'values' ? DATA : GROUP, PATTERN, true, closer);
  if (clause === 'filter' || clause === 'bind') return frameOf(EXPR, PATTERN, true, closer);
  return frameOf(clause === 'pattern' || clause === 'values' ? DATA : EXPR, PATTERN, false, closer);
}

/** The punctuation longer than one character, by its first character, shortest first (the longest that matches is read). */
const PUNCT_STARTING: Record<string, string[]> = {};
for (const p of [...PUNCT].reverse()) if (p.length > 1) (PUNCT_STARTING[p[0]] ??= []).push(p);

/** Characters that start punctuation only (never a term or a word), by code. */
const PUNCT_ONLY = new Uint8Array(128);
for (const ch of '(){}[],;=!+-*/^|~&>') PUNCT_ONLY[ch.charCodeAt(0)] = 1;

/**
 * The lexer behind `sparqlTokens`, one token at a time without allocating one (for scanners of
 * long texts: `nestingDepth`). After `next()` returns true, its fields describe the token as
 * `Token` does (`closes`: false for none); `tokenText()` is its text.
 */
export class SparqlLexer {
  kind: TokenKind = 'punct';
  start = 0;
  end = 0;
  context: BracketContext = 'group';
  opens: BracketContext | undefined;
  closes = false;
  role: ExprRole | undefined;
  expect = true;
  /** The punctuation just read (its text without a slice), or ''. */
  punct = '';
  private i = 0;
  /** The open brackets, innermost at `top` (the query's top level at 0). */
  private stack = new Int32Array(64).fill(frameOf(GROUP, CLAUSE_CODES.indexOf('prologue'), false, 0), 0, 1);
  private top = 0;
  private prevKind: TokenKind | undefined;
  private datatype = false;

  constructor(readonly text: string) {}

  /** The current token's text. */
  tokenText(): string {
    return this.punct || this.text.slice(this.start, this.end);
  }

  /** Reads the next token; false at the end of the text. */
  next(): boolean {
    const text = this.text;
    const n = text.length;
    let i = this.i;
    for (;;) {
      if (i >= n) return false;
      const c = text[i];
      if (c === ' ' || c === '\t' || c === '\n' || c === '\r') i++;
      else if (c === '#') i = commentEnd(text, i);
      else break;
    }
    const stack = this.stack;
    let f = stack[this.top];
    const c = text[i];
    const punctOnly = PUNCT_ONLY[text.charCodeAt(i)] === 1;
    const start = i;
    let end = i;
    let kind: TokenKind = 'punct';
    let punct = '';
    if (punctOnly) {
      // punctuation, below
    } else if (c === '"' || c === "'") {
      end = sticky(LANGTAG, text, stringEnd(text, i));
      kind = 'literal';
    } else if (c === '<' && text[i + 1] !== '<' && (this.datatype || kindOf(f) !== EXPR || expects(f)) && sticky(IRI, text, i) > i) {
      end = IRI.lastIndex;
      kind = 'iri';
    } else if (c === '?' || c === '$') {
      end = sticky(VAR, text, i);
      kind = 'var';
    } else if (c === '_' && text[i + 1] === ':') {
      end = sticky(BNODE, text, i);
      kind = 'bnode';
    } else if ((c >= '0' && c <= '9') || (c === '.' && text[i + 1] >= '0' && text[i + 1] <= '9')) {
      end = sticky(NUMBER, text, i);
      kind = 'number';
    }
    if (end === start && !punctOnly) {
      end = sticky(PNAME, text, i);
      kind = 'pname';
      if (end === start) {
        end = sticky(WORD, text, i);
        kind = 'word';
      }
    }
    if (end === start) {
      kind = 'punct';
      const closer = closerOf(f);
      if (closer.length > 1 && text.startsWith(closer, i)) punct = closer;
      else {
        punct = c;
        const longer = PUNCT_STARTING[c];
        if (longer !== undefined) for (let k = 0; k < longer.length; k++) if (text.startsWith(longer[k], i)) punct = longer[k];
        // After an operand of an expression, `<<` followed by an IRI is less-than and the IRI (`?o<<urn:x>`), as oxigraph reads it: SPARQL 1.2 has no `<< … >>` in expressions.
        if (punct === '<<' && kindOf(f) === EXPR && !expects(f) && !this.datatype && sticky(IRI, text, i + 1) > i + 1) punct = '<';
      }
      end = i + punct.length;
    }
    this.i = end;
    this.kind = kind;
    this.start = start;
    this.end = end;
    this.punct = punct;
    this.context = KINDS[kindOf(f)];
    this.expect = expects(f);
    this.opens = undefined;
    this.closes = false;
    this.role = undefined;
    const prevKind = this.prevKind;
    this.prevKind = kind;
    const afterDatatype = this.datatype;
    this.datatype = punct === '^^';
    const top = this.top;
    if (punct.length > 0 && CLOSER[punct] !== undefined) {
      if (kindOf(f) === EXPR) {
        // A call's or EXISTS's bracket continues the operand its name started; any other starts one.
        const call = !expects(f) && (prevKind === 'word' || prevKind === 'iri' || prevKind === 'pname' || prevKind === 'bnode');
        this.role = call ? 'call' : 'operand';
        stack[top] = f = withExpect(f, false);
      }
      const g = opened(f, punct);
      this.opens = KINDS[kindOf(g)];
      if (top + 1 === stack.length) {
        this.stack = new Int32Array(stack.length * 2);
        this.stack.set(stack);
      }
      this.stack[++this.top] = g;
    } else if (punct !== '' && punct === closerOf(f) && top > 0) {
      this.top--;
      this.closes = true;
      if (f & 32 && kindOf(stack[top - 1]) === GROUP) stack[top - 1] = withClause(stack[top - 1], PATTERN);
    } else if (kindOf(f) === GROUP) {
      const clause = kind === 'word' ? CLAUSE_OF_WORD.get(this.tokenText().toLowerCase()) : punct === '.' ? PATTERN : undefined;
      if (clause !== undefined) stack[top] = withClause(f, clause);
    } else if (kindOf(f) === EXPR) {
      const expect = expects(f);
      let role: ExprRole;
      if (this.datatype || (afterDatatype && (kind === 'iri' || kind === 'pname'))) role = 'datatype';
      else if (kind !== 'punct' && (kind !== 'word' || !SEPARATORS.has(this.tokenText().toLowerCase()))) role = 'operand';
      else if (punct === '*' && expect) role = 'operand';
      else if ((punct === '+' || punct === '-' || punct === '!') && expect) role = 'sign';
      else if (punct === '+' || punct === '-') role = 'add';
      else if (punct === '*' || punct === '/') role = 'mul';
      else role = 'other';
      this.role = role;
      if (role === 'operand') stack[top] = withExpect(f, false);
      else if (role !== 'datatype' && role !== 'sign') stack[top] = withExpect(f, true);
    }
    return true;
  }
}

/**
 * The 1-based line and column of a character offset in a query text, and the offset its line starts
 * at. Lines end at CR, LF or CRLF (the grammar's EOL, SPARQL 1.1 section 19.6); columns count code
 * points (a character outside the BMP, `😀`, is one column), as a SPARQL text is a sequence of code
 * points (SPARQL 1.1 section 19.1).
 * @param offset UTF-16 code units from the text's start
 * @returns `lineStart` in UTF-16 code units
 */
export function lineColumn(text: string, offset: number): { line: number; column: number; lineStart: number } {
  const before = text.slice(0, offset);
  const breaks = before.match(/\r\n|\r|\n/g);
  const lineStart = before.length - (/[^\r\n]*$/.exec(before)?.[0].length ?? 0);
  let column = 1;
  for (let i = lineStart; i < before.length; i++) {
    const c = before.charCodeAt(i);
    // A high surrogate followed by a low one is one code point.
    if (!(c >= 0xd800 && c <= 0xdbff && i + 1 < before.length && before.charCodeAt(i + 1) >= 0xdc00 && before.charCodeAt(i + 1) <= 0xdfff)) column++;
  }
  return { line: (breaks?.length ?? 0) + 1, column, lineStart };
}

/**
 * True when the `+` or `-` that ends at `end` is glued to a number (`-1`, `+.5`): the sign of a
 * numeric literal (INTEGER_NEGATIVE and its kin, grammar [149]–[154]), not an operator of its own.
 * @param end the index after the sign
 */
export function signOfNumber(text: string, end: number): boolean {
  const sign = text[end - 1];
  if (sign !== '+' && sign !== '-') return false;
  const digit = (i: number) => text.charCodeAt(i) >= 48 && text.charCodeAt(i) <= 57;
  return digit(end) || (text[end] === '.' && digit(end + 1));
}

/** A sign that follows another sign (`signChain`). */
export interface SignChain {
  /** The offset of the second sign (UTF-16 code units). */
  offset: number;
  /** 1-based line (lines end at CR, LF or CRLF) and column (code points) of the second sign. */
  line: number;
  column: number;
  /** The two signs, as written (`!!`, `- -`). */
  signs: string;
}

/**
 * The first sign operator (`!`, `+`, `-` where an operand is expected) that follows another: a chain
 * such as `!!?x` or `- - 1`. SPARQL 1.1 allows one sign before a primary expression (grammar [118]
 * UnaryExpression) and sparqljs reads no more; oxigraph reads some chains (`!!`). The sign of a
 * numeric literal (`--1` is `-` applied to `-1`, `signOfNumber`) is no operator.
 * @returns the chain, or undefined
 */
export function signChain(text: string): SignChain | undefined {
  const lexer = new SparqlLexer(text);
  let previous = -1;
  while (lexer.next()) {
    const sign = lexer.role === 'sign' && !signOfNumber(text, lexer.end);
    if (sign && previous >= 0) {
      const { line, column } = lineColumn(text, lexer.start);
      return { offset: lexer.start, line, column, signs: text.slice(previous, lexer.end) };
    }
    previous = sign ? lexer.start : -1;
  }
  return undefined;
}

/**
 * The tokens of a SPARQL text, in order; whitespace and comments are left out. Each says what the
 * innermost bracket around it opened and, in an expression, what it is to the expression (ExprRole).
 * Expressions are those of FILTER, BIND, the projection, GROUP BY, ORDER BY and HAVING, their
 * sub-expressions and function arguments; a `(` in a triple pattern, VALUES or a property path opens data.
 * @param text any text (a malformed query gives some tokens; a character no token starts with is one `punct`)
 */
export function* sparqlTokens(text: string): Generator<Token> {
  const lexer = new SparqlLexer(text);
  while (lexer.next()) {
    const { kind, start, end, context, opens, closes, role, expect } = lexer;
    const t: Token = { kind, text: lexer.tokenText(), start, end, context, expect };
    if (opens) t.opens = opens;
    if (closes) t.closes = true;
    if (role) t.role = role;
    yield t;
  }
}

/**
 * The offsets of the less-than operators written directly before an IRI (`?o<<urn:x>`: `<`, then
 * `<urn:x>`), which SPARQL 1.1 reads as a comparison with the IRI (after an operand of an
 * expression, `<` is less-than and an IRIREF may follow without a space) and sparqljs's tokenizer
 * reads as `<<`, SPARQL 1.2's reified-triple opener. Strings, IRIs and comments hold none.
 * @returns the offsets of those `<` (UTF-16 code units), in order; empty for a text without `<<`
 */
export function lessThanBeforeIri(text: string): number[] {
  const out: number[] = [];
  if (!text.includes('<<')) return out;
  const lexer = new SparqlLexer(text);
  // The lexer reads a `<` glued to another `<` only as this operator (`<<` elsewhere).
  while (lexer.next()) if (lexer.punct === '<' && text[lexer.end] === '<') out.push(lexer.start);
  return out;
}

/**
 * The text with a space after each less-than operator written directly before an IRI
 * (`lessThanBeforeIri`): `?o<<urn:x>` becomes `?o< <urn:x>`, which sparqljs reads as SPARQL 1.1
 * does. Nothing else changes; the text grows by one character per such operator.
 * @returns the text (the same string when it holds no such operator)
 */
export function spaceLessThanBeforeIri(text: string): string {
  const at = lessThanBeforeIri(text);
  if (at.length === 0) return text;
  let out = '';
  let done = 0;
  for (const i of at) {
    out += `${text.slice(done, i + 1)} `;
    done = i + 1;
  }
  return out + text.slice(done);
}

/** SPARQL syntax that is not SPARQL 1.1 (`notSparql11`): what it is, where. */
export interface NotSparql11 {
  /** The construct as the message names it (`LATERAL`, `<<( … )>>`, `"a"@en--ltr`). */
  construct: string;
  /** What the construct is (`SPARQL 1.2 syntax (a lateral join)`). */
  what: string;
  /** Its offset (UTF-16 code units), 1-based line (lines end at CR, LF or CRLF) and column (code points, `lineColumn`). */
  offset: number;
  line: number;
  column: number;
}

/** Function names of SPARQL 1.2 (Query §17.4: triple terms, base directions) and oxigraph's ADJUST, lower-cased: a call of one is no SPARQL 1.1. */
const NOT_SPARQL11_FUNCTIONS: Record<string, string> = {
  triple: 'SPARQL 1.2 syntax (a function of triple terms)',
  istriple: 'SPARQL 1.2 syntax (a function of triple terms)',
  subject: 'SPARQL 1.2 syntax (a function of triple terms)',
  predicate: 'SPARQL 1.2 syntax (a function of triple terms)',
  object: 'SPARQL 1.2 syntax (a function of triple terms)',
  langdir: 'SPARQL 1.2 syntax (a function of base directions)',
  haslang: 'SPARQL 1.2 syntax (a function of base directions)',
  haslangdir: 'SPARQL 1.2 syntax (a function of base directions)',
  strlangdir: 'SPARQL 1.2 syntax (a function of base directions)',
  adjust: 'a function oxigraph adds (from the SPARQL 1.2 drafts)',
};

/** The punctuation of SPARQL 1.2 syntax (`notSparql11`; the `<` of `?a<<urn:x>`, less-than before an IRI, is read as `<`, not `<<`). */
export const NOT_SPARQL11_PUNCT: ReadonlySet<string> = new Set(['<<(', '<<', '{|', '~']);
/** The words that start SPARQL 1.2 syntax (`notSparql11`), lower-cased: LATERAL, VERSION and the functions' names. */
export const NOT_SPARQL11_WORDS: ReadonlySet<string> = new Set(['lateral', 'version', ...Object.keys(NOT_SPARQL11_FUNCTIONS)]);

/**
 * The first piece of SPARQL 1.2 syntax in a text (oxigraph reads it, sparqljs and the SPARQL 1.1
 * grammar do not): a language tag with a base direction (`"a"@en--ltr`), a triple term
 * (`<<( … )>>`), a reified triple (`<< … >>`, not the `<` of `?a<<urn:x>`), an annotation
 * (`{| … |}`), a reifier (`~`), `LATERAL {`, `VERSION "…"`, or a call of a function of
 * NOT_SPARQL11_FUNCTIONS (`TRIPLE(`). Strings, IRIs, comments and prefixed names (`ex:lateral`)
 * hold none.
 * @returns the construct, or undefined when the text holds none
 */
export function notSparql11(text: string): NotSparql11 | undefined {
  const lexer = new SparqlLexer(text);
  let previous: { word: string; text: string; start: number } | undefined;
  const found = (construct: string, what: string, offset: number): NotSparql11 => {
    const { line, column } = lineColumn(text, offset);
    return { construct, what, offset, line, column };
  };
  while (lexer.next()) {
    const { kind, punct, start } = lexer;
    if (kind === 'literal') {
      const literal = lexer.tokenText();
      const tag = literal.slice(Math.max(literal.lastIndexOf('"'), literal.lastIndexOf("'")) + 1);
      if (tag.includes('--')) return found(`"…"${tag}`, 'SPARQL 1.2 syntax (a language tag with a base direction)', start + literal.length - tag.length);
    }
    if (punct === '<<(') return found('<<( … )>>', 'SPARQL 1.2 syntax (a triple term)', start);
    if (punct === '<<' && !(lexer.context === 'expr' && !lexer.expect)) return found('<< … >>', 'SPARQL 1.2 syntax (a reified triple)', start);
    if (punct === '{|') return found('{| … |}', 'SPARQL 1.2 syntax (an annotation)', start);
    if (punct === '~') return found('~', 'SPARQL 1.2 syntax (a reifier)', start);
    if (previous) {
      if (punct === '{' && previous.word === 'lateral') return found('LATERAL', 'SPARQL 1.2 syntax (a lateral join)', previous.start);
      if (kind === 'literal' && previous.word === 'version') return found('VERSION', 'SPARQL 1.2 syntax (a version declaration)', previous.start);
      const fn = NOT_SPARQL11_FUNCTIONS[previous.word];
      if (punct === '(' && fn !== undefined) return found(`${previous.text}(…)`, fn, previous.start);
    }
    previous = kind === 'word' ? { word: lexer.tokenText().toLowerCase(), text: lexer.tokenText(), start } : undefined;
  }
  return undefined;
}
