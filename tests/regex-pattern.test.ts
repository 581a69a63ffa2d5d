import { describe, expect, it } from 'vitest';
import { Parser } from 'sparqljs';
import { flagsProblem, invalidRegex, patternProblem, replacementProblem } from '../src/sparql/regex.js';

/**
 * A constant pattern of REGEX or REPLACE is accepted only in the subset of XPath regular expressions
 * that oxigraph (Rust's regex), Comunica (JavaScript's RegExp with `u`) and Jena (java.util.regex)
 * read alike; each refusal names the construct and what to write instead.
 */

/** The first words of each refusal (up to the `;` before what to write), undefined for an accepted pattern. */
const why = (p: string, flags = '', fn: 'regex' | 'replace' = 'regex') => patternProblem(p, flags, fn)?.replace(/;.*/, '');

describe('regex pattern / the portable subset', () => {
  it('accepts plain XPath patterns every engine reads alike', () => {
    const ok = ['^a(b|c)*$', '\\p{L}+', '\\P{Nd}', '[A-Za-z0-9_-]', '[-a]', '[a^]', '[\\-\\]]', 'a{2}', 'a{2,}', 'a{0,3}?', '(?:ab)+', '\\d\\s\\w', '\\$\\.\\{\\}', 'é+', '😀{2}'];
    expect(ok.map((p) => [p, patternProblem(p)])).toEqual(ok.map((p) => [p, undefined]));
    expect([patternProblem('(', 'q'), patternProblem('[]a]', 'sq'), patternProblem('a.b', 'smi')]).toEqual([undefined, undefined, undefined]);
  });

  it('refuses valid XPath that Comunica (RegExp with u) fails: \\- } ] []a] \\A \\Z [A-Z-[AEIOU]] [[:alpha:]]', () => {
    expect(['\\-', '}', ']', '[]a]', '\\A', '\\Z', '[A-Z-[AEIOU]]', '[[:alpha:]]'].map((p) => why(p))).toEqual([
      '\\- outside brackets is no escape on every engine',
      'a lone } is read differently by every engine',
      'a lone ] is read differently by every engine',
      'a ] first in brackets (or the empty brackets []) is read differently by every engine',
      '\\A is no XPath anchor and the engines read it differently',
      '\\Z is no XPath anchor and the engines read it differently',
      'the class subtraction -[…] is read differently by every engine',
      'the POSIX class [[:…:]] is no XPath',
    ]);
  });

  it('refuses patterns the routes read differently: \\i \\c \\p{IsBasicLatin} a{,3} { a{ [a-\\d], and \\b \\z \\x41 \\pL [a&&b]', () => {
    expect(['\\i', '\\c', '\\p{IsBasicLatin}', 'a{,3}', '{', 'a{', '[a-\\d]', '\\b', '\\z', '\\x41', '\\pL', '[a&&b]', 'a*+', 'a{3,2}', '*a'].map((p) => why(p))).toEqual([
      '\\i (XML name characters) is read differently by every engine',
      '\\c (XML name characters) is read differently by every engine',
      'the Unicode block \\p{IsBasicLatin} is read differently by every engine',
      'a { that is not a quantifier {n}, {n,} or {n,m} is read differently by every engine',
      'a { that is not a quantifier {n}, {n,} or {n,m} is read differently by every engine',
      'a { that is not a quantifier {n}, {n,} or {n,m} is read differently by every engine',
      'a range up to \\d (several characters) is read differently by every engine',
      '\\b is no XPath escape (XPath regular expressions have no word boundary)',
      '\\z is no XPath anchor and the engines read it differently',
      'the escape \\x is no XPath escape (the engines refuse it or read it each their own way)',
      '\\p needs a category in braces',
      '&& in brackets is a set operation on some engines and two characters on others',
      'the possessive quantifier *+ is read by one engine only',
      'the quantifier {3,2} counts down',
      'the quantifier * has nothing to repeat',
    ]);
  });

  it('refuses lookaround, back-references, named groups and inline flags', () => {
    expect(['(?=A)', '(?!A)^.', '(?<=a)b', '(?<!a)b', '(a)\\1', '(?<n>a)\\k<n>', '(?i)a'].map((p) => why(p))).toEqual([
      'the lookahead (?= is no XPath regular expression and the engines read it differently',
      'the lookahead (?! is no XPath regular expression and the engines read it differently',
      'the lookbehind (?<= is no XPath regular expression and the engines read it differently',
      'the lookbehind (?<! is no XPath regular expression and the engines read it differently',
      "the back-reference \\1 is not read by every engine (oxigraph's has none)",
      'a named group (?<name> is no XPath regular expression and the engines read it differently',
      'the inline flags (?i is no XPath regular expression and the engines read it differently',
    ]);
  });

  it('takes only the flags s m i q', () => {
    expect(['u', 'g', 'y', 'd', 'I', 'iu', 'x', 'smiq', ''].map((f) => flagsProblem(f)?.replace(/;.*/, ''))).toEqual([
      'the flag "u" is no XPath flag that every engine reads',
      'the flag "g" is no XPath flag that every engine reads',
      'the flag "y" is no XPath flag that every engine reads',
      'the flag "d" is no XPath flag that every engine reads',
      'the flag "I" is no XPath flag that every engine reads',
      'the flag "u" is no XPath flag that every engine reads',
      'the flag "x" is not read by every engine',
      undefined,
      undefined,
    ]);
    expect(patternProblem('a', 'g')).toBe('the flag "g" is no XPath flag that every engine reads; use only "s", "m", "i" and "q"');
  });

  it('REPLACE: refuses a pattern matching the empty string and a replacement with \\, a $ without a group, $0, $n beyond the groups, $1 before a name character', () => {
    const empty = 'it matches the empty string, which XPath forbids in REPLACE (err:FORX0003) and the engines answer differently';
    expect(['', 'x?', '|', '()', '^', 'a*'].map((p) => why(p, '', 'replace'))).toEqual(Array(6).fill(empty));
    expect([why('', 'q', 'replace'), why('x?', '', 'regex'), why('a+', '', 'replace'), why('x?', 'q', 'replace')]).toEqual([empty, undefined, undefined, undefined]);
    expect(['$', '$2', '\\$', '\\\\', '$0', '$1a', 'a$', '$1-$1', '$1$2'].map((r) => replacementProblem(r, '(a)')?.replace(/;.*/, ''))).toEqual([
      'the replacement\'s "$" is no group reference $1…$9 (XPath err:FORX0004 for a $ without a digit)',
      "the replacement's $2 refers to group 2, but the pattern has only 1",
      'a \\ in the replacement is read differently by every engine',
      'a \\ in the replacement is read differently by every engine',
      'the replacement\'s "$0" is no group reference $1…$9 (XPath err:FORX0004 for a $ without a digit)',
      'the replacement\'s "$1a" is read as group 1 by some engines and as the group named "1a" by others',
      'the replacement\'s "$" is no group reference $1…$9 (XPath err:FORX0004 for a $ without a digit)',
      undefined,
      "the replacement's $2 refers to group 2, but the pattern has only 1",
    ]);
    expect([replacementProblem('$1', '(?:a)b'), replacementProblem('$1', '(a)', 'q'), replacementProblem('[$1]', '(a)(b)')]).toEqual([
      "the replacement's $1 refers to group 1, but the pattern has no group; put the text in a group (…) and write $1",
      'the replacement\'s $1 refers to group 1, but the pattern has no group (flag "q"); put the text in a group (…) and write $1',
      undefined,
    ]);
  });

  it('invalidRegex: names the call, the pattern, flags or replacement, and what to write; refuses flags that are not a constant', () => {
    const q = (f: string) => invalidRegex(new Parser().parse(`SELECT * { ?s ?p ?o ${f} }`) as never);
    expect(q('FILTER(REGEX(?o, "(?=A)"))')).toBe(
      'the pattern "(?=A)" of REGEX is refused, nothing was sent: the lookahead (?= is no XPath regular expression and the engines read it differently; write the condition as a second REGEX (with ! for a negative one) joined by &&',
    );
    expect(q('FILTER(REGEX(?o, "a", "u"))')).toBe(
      'the pattern "a" with the flags "u" of REGEX is refused, nothing was sent: the flag "u" is no XPath flag that every engine reads; use only "s", "m", "i" and "q"',
    );
    expect(q('FILTER(REGEX(?o, "a", CONCAT("i", ?fl)))')).toBe(
      'the flags of REGEX are not a constant string, and the engines read computed flags differently; nothing was sent: write the flags as a string, e.g. "i", or two REGEX calls joined with || or IF',
    );
    expect(q('BIND(REPLACE(?o, "(a)", "$2") AS ?r)')).toBe(
      'the replacement "$2" of REPLACE is refused, nothing was sent: the replacement\'s $2 refers to group 2, but the pattern has only 1; write one of $1…$1, or put the text in a group (…)',
    );
    expect(q('BIND(REPLACE(?o, "x?", "y") AS ?r)')?.startsWith('the pattern "x?" of REPLACE is refused, nothing was sent: it matches the empty string')).toBe(true);
    // The flag "x" is left to builtinProblem (refused outside SERVICE); the pattern is read without its whitespace.
    expect([q('FILTER(REGEX(?o, "a r", "x"))'), q('FILTER(REGEX(?o, "( a", "x"))')?.replace(/;.*/, '')]).toEqual([
      undefined,
      'the pattern "( a" with the flags "x" of REGEX is refused, nothing was sent: it is not a regular expression (Unterminated group)',
    ]);
    expect([q('FILTER(REGEX(?o, "^a[b-d]+$", "i"))'), q('FILTER(REGEX(?o, ?pat))'), q('BIND(REPLACE(?o, "(a)(b)", "$2$1") AS ?r)')]).toEqual([undefined, undefined, undefined]);
  });
});
