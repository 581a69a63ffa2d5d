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
export type BracketContext = 'group' | 'expr' | 'data';
/**
 * What a token is to the expression it stands in: an operand (a term, a function name, a bracket
 * that starts an operand, `*` of `COUNT(*)`), the bracket of a call (`STR(`), a sign (`+ - !`
 * where an operand is expected), an additive or multiplicative operator, a datatype (`^^` and its
 * IRI), or anything else (a comparison, `&&`, `,`, `AS`): the end of an arithmetic expression.
 */
export type ExprRole = 'operand' | 'call' | 'sign' | 'add' | 'mul' | 'datatype' | 'other';

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

interface Frame {
  kind: BracketContext;
  closer: string;
  /** group: the clause it is in. */
  clause: Clause;
  /** The parent's clause becomes `pattern` when this frame closes (FILTER's and BIND's brackets, a group, VALUES rows). */
  endsClause: boolean;
  /** expr: an operand is expected next. */
  expect: boolean;
}

function sticky(re: RegExp, text: string, i: number): number {
  re.lastIndex = i;
  return re.test(text) ? re.lastIndex : i;
}

/**
 * The index after the comment starting at `i` (a `#`): after the first line end, CR or LF (SPARQL
 * 1.1 Query grammar: a comment runs to EOL, [#xA#xD]), or the text's length.
 */
export function commentEnd(text: string, i: number): number {
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
  let kind: BracketContext;
  let endsClause = false;
  if (f.kind === 'data' || bracket === '[' || bracket === '<<(' || bracket === '<<' || bracket === '{|') kind = 'data';
  else if (f.kind === 'expr') kind = bracket === '{' ? 'group' : 'expr';
  else if (bracket === '{') {
    kind = f.clause === 'values' ? 'data' : 'group';
    endsClause = true;
  } else if (f.clause === 'filter' || f.clause === 'bind') {
    kind = 'expr';
    endsClause = true;
  } else kind = f.clause === 'pattern' || f.clause === 'values' ? 'data' : 'expr';
  return { kind, closer: CLOSER[bracket], clause: 'pattern', endsClause, expect: true };
}

/**
 * The tokens of a SPARQL text, in order; whitespace and comments are left out. Each says what the
 * innermost bracket around it opened and, in an expression, what it is to the expression (ExprRole).
 * Expressions are those of FILTER, BIND, the projection, GROUP BY, ORDER BY and HAVING, their
 * sub-expressions and function arguments; a `(` in a triple pattern, VALUES or a property path opens data.
 * @param text any text (a malformed query gives some tokens; a character no token starts with is one `punct`)
 */
export function* sparqlTokens(text: string): Generator<Token> {
  const stack: Frame[] = [{ kind: 'group', closer: '', clause: 'prologue', endsClause: false, expect: true }];
  const n = text.length;
  let prev: Token | undefined;
  let datatype = false;
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
    const f = stack[stack.length - 1];
    const start = i;
    let end = i;
    let kind: TokenKind = 'punct';
    if (c === '"' || c === "'") {
      end = stringEnd(text, i);
      end = sticky(LANGTAG, text, end);
      kind = 'literal';
    } else if (c === '<' && text[i + 1] !== '<' && (datatype || f.kind !== 'expr' || f.expect) && sticky(IRI, text, i) > i) {
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
    if (end === start) {
      end = sticky(PNAME, text, i);
      kind = 'pname';
    }
    if (end === start) {
      end = sticky(WORD, text, i);
      kind = 'word';
    }
    if (end === start) {
      kind = 'punct';
      if (f.closer.length > 1 && text.startsWith(f.closer, i)) end = i + f.closer.length;
      else {
        const p = PUNCT.find((x) => text.startsWith(x, i));
        end = i + (p ? p.length : 1);
      }
    }
    i = end;
    const t: Token = { kind, text: text.slice(start, end), start, end, context: f.kind, expect: f.expect };
    const p = prev;
    prev = t;
    const afterDatatype = datatype;
    datatype = t.text === '^^';
    if (kind === 'punct' && t.text in CLOSER) {
      if (f.kind === 'expr') {
        // A call's or EXISTS's bracket continues the operand its name started; any other starts one.
        const call = p !== undefined && !f.expect && (p.kind === 'word' || p.kind === 'iri' || p.kind === 'pname' || p.kind === 'bnode');
        t.role = call ? 'call' : 'operand';
        f.expect = false;
      }
      const g = opened(f, t.text);
      t.opens = g.kind;
      stack.push(g);
    } else if (kind === 'punct' && t.text === f.closer && stack.length > 1) {
      stack.pop();
      t.closes = true;
      const parent = stack[stack.length - 1];
      if (f.endsClause && parent.kind === 'group') parent.clause = 'pattern';
    } else if (f.kind === 'group') {
      const clause = kind === 'word' ? CLAUSES[t.text.toLowerCase()] : t.text === '.' ? 'pattern' : undefined;
      if (clause) f.clause = clause;
    } else if (f.kind === 'expr') {
      const op = kind === 'punct' ? t.text : '';
      if (datatype || (afterDatatype && (kind === 'iri' || kind === 'pname'))) t.role = 'datatype';
      else if (kind !== 'punct' && (kind !== 'word' || !SEPARATORS.has(t.text.toLowerCase()))) t.role = 'operand';
      else if (op === '*' && f.expect) t.role = 'operand';
      else if ((op === '+' || op === '-' || op === '!') && f.expect) t.role = 'sign';
      else if (op === '+' || op === '-') t.role = 'add';
      else if (op === '*' || op === '/') t.role = 'mul';
      else t.role = 'other';
      if (t.role === 'operand') f.expect = false;
      else if (t.role !== 'datatype' && t.role !== 'sign') f.expect = true;
    }
    yield t;
  }
}
