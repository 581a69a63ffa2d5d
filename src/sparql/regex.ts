/**
 * Constant regular expressions of a query (REGEX and REPLACE with a literal pattern), checked before
 * the query runs. Three engines read them: oxigraph (a shard endpoint, the lone-SERVICE route; Rust's
 * regex crate), Comunica (JavaScript's RegExp with the `u` flag) and Jena (java.util.regex). Each
 * reads a syntax of its own, and where a pattern is not in all three an engine either fails (Comunica,
 * Jena: an error), reads it as an expression error (oxigraph: a FILTER is false, 0 rows) or reads it
 * another way (`\-`, `a{,3}`, `[a-\d]`, `[[:alpha:]]`, `\p{IsBasicLatin}`, a lookahead). So a constant
 * pattern is accepted only in the subset of XPath regular expressions (XQuery 1.0 and XPath 2.0
 * Functions and Operators §7.6.1, which REGEX and REPLACE use) that all three read alike, with the
 * flags `s`, `m`, `i`, `q` given as a constant string; REPLACE also needs a pattern that does not
 * match the empty string (§7.6.3, err:FORX0003) and a replacement whose only `$` are group references
 * the pattern has and which has no `\` (§7.6.3, err:FORX0004; the engines read `\$`, `\\` and `$`
 * before no digit each their own way). Anything else is refused before anything is sent, on every
 * route, with words naming it and what to write instead.
 */
import type sparqljs from 'sparqljs';

type Node = { type?: string; operator?: string; args?: unknown[]; termType?: string; value?: string };

/** The Unicode general categories of XPath's `\p{…}` (§7.6.1, "Character class escapes"). */
const CATEGORIES = new Set('L Lu Ll Lt Lm Lo M Mn Mc Me N Nd Nl No P Pc Pd Ps Pe Pi Pf Po S Sm Sc Sk So Z Zs Zl Zp C Cc Cf Co Cn'.split(' '));
/** Characters that, after `\`, stand for themselves on every engine (in brackets also `-`). */
const SINGLE_ESCAPES = 'nrt\\|.?*+(){}[]^$';
/** Multi-character escapes every engine reads: digits, whitespace, word characters and their complements. */
const MULTI_ESCAPES = 'dDsSwW';
const ESCAPES_WORDS = 'escape only one of \\n \\r \\t \\\\ \\| \\. \\? \\* \\+ \\( \\) \\{ \\} \\[ \\] \\^ \\$ (and \\- in brackets), or use \\d \\s \\w \\p{L}';

/** One escape read: where it ends, whether it stands for one character, or why it is refused. */
type Escape = { end: number; single: boolean; problem?: string };

/** Reads the escape at `p[i]` (a `\`), in brackets or not. */
function escapeAt(p: string, i: number, inClass: boolean): Escape {
  const n = p[i + 1];
  const end = i + 2;
  if (n === undefined) return { end, single: true, problem: 'it ends with a lone \\; write \\\\ for a backslash' };
  if (SINGLE_ESCAPES.includes(n) || (inClass && n === '-')) return { end, single: true };
  if (MULTI_ESCAPES.includes(n)) return { end, single: false };
  if (n === '-') return { end, single: true, problem: '\\- outside brackets is no escape on every engine; write - without the backslash' };
  if (/[1-9]/.test(n) || n === 'k') {
    return { end, single: true, problem: `the back-reference \\${n} is not read by every engine (oxigraph's has none); match the repeated text with a second REGEX, or spell it out` };
  }
  if ('AZz'.includes(n)) return { end, single: true, problem: `\\${n} is no XPath anchor and the engines read it differently; write ${n === 'A' ? '^' : '$'} (and no flag "m")` };
  if ('bBG'.includes(n)) {
    return {
      end,
      single: true,
      problem: `\\${n} is no XPath escape (XPath regular expressions have no word boundary); write the neighbouring characters, e.g. (^|[^A-Za-z0-9_])word([^A-Za-z0-9_]|$)`,
    };
  }
  if ('iIcC'.includes(n)) {
    return { end, single: false, problem: `\\${n} (XML name characters) is read differently by every engine; list the characters in brackets, e.g. [A-Za-z_:] for \\i or [A-Za-z0-9._:-] for \\c` };
  }
  if (n === 'p' || n === 'P') {
    const close = p.indexOf('}', i);
    const name = p[i + 2] === '{' && close > 0 ? p.slice(i + 3, close) : undefined;
    if (name === undefined) return { end, single: false, problem: `\\${n} needs a category in braces; write e.g. \\${n}{L} (letters) or \\${n}{Nd} (digits)` };
    if (name.startsWith('Is')) {
      return {
        end: close + 1,
        single: false,
        problem: `the Unicode block \\${n}{${name}} is read differently by every engine; list the characters as a range in brackets, e.g. [ -~] for the printable characters of Basic Latin`,
      };
    }
    if (!CATEGORIES.has(name)) return { end: close + 1, single: false, problem: `\\${n}{${name}} is no Unicode general category that every engine reads; use one of ${[...CATEGORIES].join(' ')}` };
    return { end: close + 1, single: false };
  }
  return { end, single: true, problem: `the escape \\${n} is no XPath escape (the engines refuse it or read it each their own way); write the character itself, or ${ESCAPES_WORDS}` };
}

const SUBTRACTION = 'the class subtraction -[…] is read differently by every engine; list the characters that remain, e.g. [B-DF-HJ-NP-TV-Z] for [A-Z-[AEIOU]]';

/** Reads the bracketed class at `p[i]` (a `[`): where it ends, or why it is refused. */
function classAt(p: string, i: number): { end: number; problem?: string } {
  let j = p[i + 1] === '^' ? i + 2 : i + 1;
  if (p[j] === ']') return { end: j, problem: 'a ] first in brackets (or the empty brackets []) is read differently by every engine; escape it as \\]' };
  const first = j;
  const item = (): { single: boolean; problem?: string; end: number } => {
    if (p[j] === '\\') return escapeAt(p, j, true);
    if (p[j] === '[') {
      const problem =
        p[j + 1] === ':'
          ? 'the POSIX class [[:…:]] is no XPath; write \\p{L} for letters, \\p{Nd} for digits, or list the characters, e.g. [A-Za-z]'
          : 'a [ inside brackets (a nested class) is read differently by every engine; escape it as \\[';
      return { end: j + 1, single: true, problem };
    }
    return { end: j + (p.codePointAt(j)! > 0xffff ? 2 : 1), single: true };
  };
  while (j < p.length && p[j] !== ']') {
    const two = p.slice(j, j + 2);
    if (two === '&&' || two === '~~' || (two === '--' && j > first)) {
      return { end: j, problem: `${two} in brackets is a set operation on some engines and two characters on others; list the characters once, or escape them as \\-` };
    }
    if (two === '-[') return { end: j, problem: SUBTRACTION };
    const a = item();
    if (a.problem) return a;
    const from = p.slice(j, a.end);
    j = a.end;
    if (p[j] !== '-' || p[j + 1] === ']' || j + 1 >= p.length) continue;
    if (p[j + 1] === '[') return { end: j, problem: SUBTRACTION };
    if (!a.single) return { end: j, problem: `a range from ${from} (several characters) is read differently by every engine; write - first or last in the brackets, or escape it as \\-` };
    j += 1;
    const b = item();
    if (b.problem) return b;
    if (!b.single)
      return { end: j, problem: `a range up to ${p.slice(j, b.end)} (several characters) is read differently by every engine; write - first or last in the brackets, or escape it as \\-` };
    j = b.end;
    if (p[j] === '-' && p[j + 1] === '[') return { end: j, problem: SUBTRACTION };
    if (p[j] === '-' && p[j + 1] !== ']') return { end: j, problem: 'a - right after a range is read differently by every engine; write - first or last in the brackets, or escape it as \\-' };
  }
  if (j >= p.length) return { end: j, problem: 'a [ is not closed; close it with ], or escape a bracket as \\[' };
  return { end: j + 1 };
}

/** Reads a group opening `(` at `p[i]`: where its content starts, whether it counts as a group, or why it is refused. */
function groupAt(p: string, i: number): { end: number; capturing: boolean; problem?: string } {
  if (p[i + 1] !== '?') return { end: i + 1, capturing: true };
  if (p[i + 2] === ':') return { end: i + 3, capturing: false };
  const head = p.slice(i, i + 4);
  const kind =
    head.startsWith('(?=') || head.startsWith('(?!')
      ? `the lookahead ${head.slice(0, 3)}`
      : head === '(?<=' || head === '(?<!'
        ? `the lookbehind ${head}`
        : head.startsWith('(?<') || head.startsWith('(?P')
          ? 'a named group (?<name>'
          : `the inline flags ${head.slice(0, 3)}`;
  const instead = kind.startsWith('the inline')
    ? 'give the flags as the last argument, e.g. REGEX(?x, "a", "i")'
    : kind.startsWith('a named')
      ? 'write a plain group (…)'
      : 'write the condition as a second REGEX (with ! for a negative one) joined by &&';
  return { end: i + 3, capturing: false, problem: `${kind} is no XPath regular expression and the engines read it differently; ${instead}` };
}

/**
 * Reads a pattern (not with flag `q`) as the portable subset of XPath regular expressions (module
 * comment): atoms, escapes, brackets, groups, quantifiers `* + ? {n} {n,} {n,m}` (lazy too).
 * @returns why it is refused (with what to write instead), else the number of capturing groups
 */
function scanPattern(p: string): { problem?: string; groups: number } {
  let groups = 0;
  let atom = false;
  let i = 0;
  while (i < p.length) {
    const c = p[i];
    let r: { end: number; problem?: string };
    if (c === '\\') r = escapeAt(p, i, false);
    else if (c === '[') r = classAt(p, i);
    else if (c === '(') {
      const g = groupAt(p, i);
      if (g.capturing) groups += 1;
      r = g;
    } else if (c === '{' || c === '*' || c === '+' || c === '?') {
      const q = c === '{' ? /^\{(\d+)(,(\d*))?\}/.exec(p.slice(i)) : [c];
      if (!q) return { groups, problem: 'a { that is not a quantifier {n}, {n,} or {n,m} is read differently by every engine; escape it as \\{, or write the count, e.g. a{0,3}' };
      if (!atom) return { groups, problem: `the quantifier ${q[0]} has nothing to repeat; escape it with \\ for the character itself` };
      if (q[3] && Number(q[3]) < Number(q[1])) return { groups, problem: `the quantifier ${q[0]} counts down; write the smaller number first` };
      let end = i + q[0].length;
      if (p[end] === '?') end += 1;
      if (p[end] === '+') return { groups, problem: `the possessive quantifier ${p.slice(i, end + 1)} is read by one engine only; write ${p.slice(i, end)}` };
      i = end;
      atom = false;
      continue;
    } else if (c === '}' || c === ']') {
      return { groups, problem: `a lone ${c} is read differently by every engine; escape it as \\${c}` };
    } else r = { end: i + 1 };
    if (r.problem) return { groups, problem: r.problem };
    atom = c !== '(' && c !== '|' && c !== '^' && c !== '$';
    i = r.end;
  }
  return { groups };
}

/**
 * Why a constant flags string of REGEX or REPLACE is refused: only `s`, `m`, `i` and `q` are read
 * alike by every engine (`x` too is refused; `invalidRegex` leaves it to builtins.ts, which refuses it
 * outside SERVICE with its own error class).
 * @returns the reason with what to write instead, or undefined
 */
export function flagsProblem(flags: string): string | undefined {
  const bad = [...new Set(flags.replace(/[smiq]/g, ''))];
  if (bad.length === 0) return undefined;
  if (bad.join('') === 'x') return 'the flag "x" is not read by every engine; remove the whitespace from the pattern and the "x" from the flags';
  return `the flag${bad.length > 1 ? 's' : ''} ${bad.map((f) => JSON.stringify(f)).join(', ')} ${bad.length > 1 ? 'are' : 'is'} no XPath flag${bad.length > 1 ? 's' : ''} that every engine reads; use only "s", "m", "i" and "q"`;
}

/**
 * Why a constant pattern of REGEX or REPLACE is refused (module comment): flags other than `s m i q`;
 * without flag `q`, a construct outside the subset all three engines read alike (lookaround,
 * back-references, `\A \Z \b \i \c \p{Is…}`, POSIX classes, class subtraction, set operations in
 * brackets, `{,n}`, a lone `{ } ]`, an escape XPath does not have), or what JavaScript's RegExp with
 * the `u` flag (Comunica) rejects; for REPLACE, a pattern that matches the empty string.
 * @param pattern the pattern's lexical form
 * @param flags the flags' lexical form ('' when absent)
 * @param fn the function (REPLACE refuses empty matches)
 * @returns the reason with what to write instead, or undefined when every engine reads it alike
 */
export function patternProblem(pattern: string, flags = '', fn: 'regex' | 'replace' = 'regex'): string | undefined {
  const f = flagsProblem(flags);
  if (f) return f;
  const emptyMatch =
    'it matches the empty string, which XPath forbids in REPLACE (err:FORX0003) and the engines answer differently; write a pattern that matches at least one character, e.g. a+ instead of a*';
  if (flags.includes('q')) return fn === 'replace' && pattern === '' ? emptyMatch : undefined;
  const scanned = scanPattern(pattern);
  if (scanned.problem) return scanned.problem;
  let re: RegExp;
  try {
    re = new RegExp(pattern, `u${flags.replace(/[^smi]/g, '')}`);
  } catch (e) {
    const m = (e as Error).message;
    return `it is not a regular expression (${m.slice(m.lastIndexOf(': ') + 2) || m}); fix the pattern, escape a special character with \\ (e.g. \\( for a bracket), or use the flag "q" for a plain string`;
  }
  return fn === 'replace' && re.test('') ? emptyMatch : undefined;
}

/**
 * Why a constant replacement of REPLACE is refused: a `\` (the engines read `\$` and `\\` each their
 * own way), a `$` not followed by a digit (XPath err:FORX0004), `$0`, a `$n` the pattern has no group
 * for, or one followed by a letter, digit or `_` (one engine reads `$1a` as the group named `1a`).
 * @param replacement the replacement's lexical form
 * @param pattern the pattern's lexical form (accepted by `patternProblem`)
 * @param flags the flags' lexical form
 * @returns the reason with what to write instead, or undefined
 */
export function replacementProblem(replacement: string, pattern: string, flags = ''): string | undefined {
  const groups = flags.includes('q') ? 0 : scanPattern(pattern).groups;
  const join = 'join such text to the result with CONCAT instead, e.g. CONCAT(REPLACE(?s, "a", "b"), "$")';
  if (replacement.includes('\\')) return `a \\ in the replacement is read differently by every engine; ${join}`;
  for (const m of replacement.matchAll(/\$(.?)(?=(.?))/gu)) {
    const [ref, digit, next] = m;
    if (!/[1-9]/.test(digit))
      return `the replacement's ${JSON.stringify(ref.slice(0, 2))} is no group reference $1…$9 (XPath err:FORX0004 for a $ without a digit); ${digit === '0' ? 'put the whole pattern in a group (…) and write $1' : join}`;
    if (Number(digit) > groups)
      return `the replacement's $${digit} refers to group ${digit}, but the pattern has ${groups === 0 ? 'no group' : `only ${groups}`}${flags.includes('q') ? ' (flag "q")' : ''}; ${groups === 0 ? 'put the text in a group (…) and write $1' : `write one of $1…$${groups}, or put the text in a group (…)`}`;
    if (/[0-9A-Za-z_]/.test(next))
      return `the replacement's ${JSON.stringify(ref + next)} is read as group ${digit} by some engines and as the group named ${JSON.stringify(ref.slice(1) + next)} by others; ${join.replace('"$"', `"${next}…"`).replace('"b"', `"$${digit}"`)}`;
  }
  return undefined;
}

/** Why one REGEX or REPLACE call is refused, or undefined: its constant pattern, flags and replacement. */
function callProblem(op: 'regex' | 'replace', args: Node[]): string | undefined {
  const [pattern, replacement] = [args[1], op === 'replace' ? args[2] : undefined];
  const flags = args[op === 'regex' ? 2 : 3];
  const name = op.toUpperCase();
  if (flags !== undefined && flags.termType !== 'Literal') {
    return `the flags of ${name} are not a constant string, and the engines read computed flags differently; nothing was sent: write the flags as a string, e.g. "i", or two ${name} calls joined with || or IF`;
  }
  if (pattern?.termType !== 'Literal') return undefined;
  // The flag "x" is refused outside SERVICE by builtinProblem (builtins.ts, its own error class); inside
  // a SERVICE the endpoint reads it on every route, so here the pattern is read without its whitespace.
  const x = flags?.value?.includes('x') ?? false;
  const problem = patternProblem(x ? (pattern.value ?? '').replace(/[\t\n\r ]/g, '') : (pattern.value ?? ''), (flags?.value ?? '').replace(/x/g, ''), op);
  if (problem) return `the pattern ${JSON.stringify(pattern.value)}${flags ? ` with the flags ${JSON.stringify(flags.value)}` : ''} of ${name} is refused, nothing was sent: ${problem}`;
  if (replacement?.termType === 'Literal') {
    const r = replacementProblem(replacement.value ?? '', pattern.value ?? '', flags?.value ?? '');
    if (r) return `the replacement ${JSON.stringify(replacement.value)} of REPLACE is refused, nothing was sent: ${r}`;
  }
  return undefined;
}

/**
 * The first REGEX or REPLACE of a query that is refused (module comment: a constant pattern outside
 * the portable subset, flags that are not a constant `s m i q` string, a REPLACE pattern matching
 * the empty string or a replacement the engines read differently), anywhere in it (FILTER, BIND,
 * projections, EXISTS, sub-queries, SERVICE bodies).
 * @param ast a parsed query
 * @returns a message naming the function, the pattern, flags or replacement, why, and what to write
 *   instead; or undefined
 */
export function invalidRegex(ast: sparqljs.SparqlQuery): string | undefined {
  const stack: unknown[] = [ast];
  const seen = new Set<unknown>();
  while (stack.length > 0) {
    const node = stack.pop();
    if (!node || typeof node !== 'object' || seen.has(node)) continue;
    seen.add(node);
    if (Array.isArray(node)) {
      for (const x of node) stack.push(x);
      continue;
    }
    const o = node as Node;
    if (o.termType) continue;
    const op = o.type === 'operation' ? (o.operator ?? '').toLowerCase() : '';
    if (op === 'regex' || op === 'replace') {
      const problem = callProblem(op, (o.args ?? []) as Node[]);
      if (problem) return problem;
    }
    for (const v of Object.values(o)) if (v && typeof v === 'object') stack.push(v);
  }
  return undefined;
}
