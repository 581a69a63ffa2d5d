/**
 * Two repairs of the lexer of sparqljs 3.7.4 (a Jison lexer, `lib/SparqlParser.js`) that let it read
 * long tokens and long runs of whitespace, applied once to the shared lexer when sparqljs is loaded
 * (src/sparql/parse.ts). Neither changes which texts are tokens:
 *
 * - **Long string literals and local names.** The rules of the four string literal forms and of
 *   prefixed names (`PNAME_LN`) repeat an alternation of one character or an escape; V8 keeps a
 *   backtracking entry per repetition, so a string literal or a local name of about 500,000
 *   characters overflows V8's backtracking stack ("Maximum call stack size exceeded", thrown as if
 *   the query were malformed). The replacements take a run of ordinary characters at once (as an
 *   atomic group, `(?=(run+))\k<run>`, so that a literal without its closing quote fails in linear
 *   time) and accept exactly the same tokens: tests/long-query.test.ts compares both rule sets on
 *   random texts.
 * - **Whitespace and comments.** `lex()` called itself once per skipped token (whitespace, comment),
 *   so some 300,000 comment lines overflowed the call stack; it loops instead.
 *
 * The patched `lex()` also records where the token it returns starts and ends in the text
 * (`lastLexedToken`): the position of a syntax error, which Jison's own `hash.loc` gives wrong (the
 * token before the offending one, or a stale line for a token that starts a line).
 */

/** The string literal rules replaced, by index in the lexer's `rules`, with the start of the source they replace (3.7.4). */
const REPLACED: Record<number, { was: string; rule: () => RegExp }> = {};

/** Characters of PN_CHARS_BASE that are one UTF-16 code unit (SPARQL 1.1 grammar [164]). */
const BASE = 'A-Za-z\\u00C0-\\u00D6\\u00D8-\\u00F6\\u00F8-\\u02FF\\u0370-\\u037D\\u037F-\\u1FFF\\u200C-\\u200D\\u2070-\\u218F\\u2C00-\\u2FEF\\u3001-\\uD7FF\\uF900-\\uFDCF\\uFDF0-\\uFFFD';
/** PN_CHARS_BASE beyond the BMP: a surrogate pair (as sparqljs writes it). */
const PAIR = '[\\uD800-\\uDB7F][\\uDC00-\\uDFFF]';
/** PLX ([169]): a percent-encoded byte or a backslash escape of a local name. */
const PLX = "%[0-9A-Fa-f][0-9A-Fa-f]|\\\\[_~.\\-!$&'()*+,;=/?#@%]";
/** The characters of PN_LOCAL after its first ([168]) that are one code unit, but for `.`: PN_CHARS and `:`. */
const LOCAL_NOT_DOT = `${BASE}_:0-9\\-\\u00B7\\u0300-\\u036F\\u203F-\\u2040`;
/** ECHAR and the \u/\U escapes, as sparqljs accepts them in string literals. */
const ESC = '\\\\[tbnrf\\\\"\']|\\\\u[0-9A-Fa-f]{4}|\\\\U[0-9A-Fa-f]{8}';

REPLACED[117] = { was: "^(?:('(?:(?:[^\\u0027\\u005C\\u000A\\u000D])|(", rule: () => new RegExp(`^(?:'(?:(?=(?<run>[^\\u0027\\u005C\\u000A\\u000D]+))\\k<run>|${ESC})*')`, 'i') };
REPLACED[118] = { was: '^(?:("(?:(?:[^\\u0022\\u005C\\u000A\\u000D])|(', rule: () => new RegExp(`^(?:"(?:(?=(?<run>[^\\u0022\\u005C\\u000A\\u000D]+))\\k<run>|${ESC})*")`, 'i') };
REPLACED[119] = { was: "^(?:('''(?:(?:'|'')?(?:[^'\\\\]|(", rule: () => new RegExp(`^(?:'''(?:(?:'|'')?(?:(?=(?<run>[^'\\\\]+))\\k<run>|${ESC}))*''')`, 'i') };
REPLACED[120] = { was: '^(?:("""(?:(?:"|"")?(?:[^\\"\\\\]|(', rule: () => new RegExp(`^(?:"""(?:(?:"|"")?(?:(?=(?<run>[^"\\\\]+))\\k<run>|${ESC}))*""")`, 'i') };

/** The PNAME_NS part of rule 103 (PNAME_LN), kept as sparqljs writes it; PN_LOCAL after it is replaced. */
function pnameLn(original: RegExp): RegExp {
  const src = original.source;
  const ns = src.slice('^(?:('.length, src.indexOf(':)') + 2);
  // PN_LOCAL = first ((PN_CHARS | '.' | ':' | PLX)* (PN_CHARS | ':' | PLX))?, i.e. first (dots, then one
  // character that is not a dot)*: the longest such text, as the greedy original matches.
  const local = `(?:[${BASE}_:0-9]|${PAIR}|${PLX})(?:\\.*(?:(?=(?<run>[${LOCAL_NOT_DOT}]+))\\k<run>|${PAIR}|${PLX}))*`;
  return new RegExp(`^(?:(${ns}${local}))`, 'i');
}

/** The shape of the Jison lexer that is patched. */
interface JisonLexer {
  rules: RegExp[];
  /** The text read so far (Jison), whitespace and comments included. */
  matched?: string;
  /** The text of the token just read (Jison). */
  match?: string;
  next(): unknown;
  lex(): unknown;
  /** Set by `patchSparqljsLexer`: the rules it replaced, index → [sparqljs's rule, the replacement]. */
  fkgqaReplaced?: Map<number, [RegExp, RegExp]>;
  /** Set by the patched `lex()`: the span of the token it returned last (`lastLexedToken`). */
  fkgqaLastToken?: { start: number; end: number };
}

/** The original and replacement rules (index → [original, replacement]) of a lexer as sparqljs built it. */
function lexerRuleReplacements(lexer: { rules: RegExp[] }): Map<number, [RegExp, RegExp]> {
  const out = new Map<number, [RegExp, RegExp]>();
  for (const [i, r] of Object.entries(REPLACED)) {
    const original = lexer.rules[Number(i)];
    if (original.source.startsWith(r.was)) out.set(Number(i), [original, r.rule()]);
  }
  const ln = lexer.rules[103];
  if (ln && ln.source.startsWith('^(?:(((([A-Za-z') && ln.source.includes(':)((?:')) out.set(103, [ln, pnameLn(ln)]);
  return out;
}

/**
 * Where the token that the patched lexer returned last starts and ends in the text being parsed:
 * after a parse error, the offending token (Jison stops at the lookahead token it cannot shift).
 * Kept on the shared lexer, so that every copy of this module reads it; one parse at a time per
 * thread (parsing is synchronous).
 * @param parserModule `require('sparqljs/lib/SparqlParser.js')`
 * @returns UTF-16 offsets, end exclusive (start = end = the text's length at its end); undefined when the lexer was not patched
 */
export function lastLexedToken(parserModule: { Parser: { prototype: { lexer: JisonLexer } } }): { start: number; end: number } | undefined {
  return parserModule.Parser.prototype.lexer.fkgqaLastToken;
}

/**
 * Applies both repairs (module comment) to the lexer of sparqljs's parser module, once. A rule
 * whose source is not the one of sparqljs 3.7.4 is left alone (another version of sparqljs).
 * @param parserModule `require('sparqljs/lib/SparqlParser.js')`
 * @returns the indexes of the rules replaced
 */
export function patchSparqljsLexer(parserModule: { Parser: { prototype: { lexer: JisonLexer } } }): number[] {
  const lexer = parserModule.Parser.prototype.lexer;
  if (lexer.fkgqaReplaced) return [];
  const replaced = lexerRuleReplacements(lexer);
  for (const [i, [, rule]] of replaced) lexer.rules[i] = rule;
  lexer.lex = function lex(this: JisonLexer) {
    let token: unknown;
    do token = this.next();
    while (!token);
    const end = this.matched?.length ?? 0;
    lexer.fkgqaLastToken = { start: end - (this.match?.length ?? 0), end };
    return token;
  };
  lexer.fkgqaReplaced = replaced;
  return [...replaced.keys()];
}

/**
 * The rules `patchSparqljsLexer` replaced in this lexer, for the test that compares them.
 * @returns index → [sparqljs's rule, the replacement]; empty when the lexer was not patched
 */
export function replacedLexerRules(parserModule: { Parser: { prototype: { lexer: JisonLexer } } }): ReadonlyMap<number, [RegExp, RegExp]> {
  return parserModule.Parser.prototype.lexer.fkgqaReplaced ?? new Map();
}
