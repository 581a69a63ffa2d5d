/**
 * Constant regular expressions of a query (REGEX and REPLACE with a literal pattern), checked before
 * the query runs. An invalid pattern is an error of the query, but where it surfaces depends on the
 * engine: oxigraph (a shard endpoint, the lone-SERVICE route) treats it as an expression error, so a
 * FILTER is false and the answer is 0 rows; Comunica and Jena fail the query. Refused before
 * anything is sent, the outcome is the same on every route: the agent's error naming the pattern.
 */
import type sparqljs from 'sparqljs';

type Node = { type?: string; operator?: string; args?: unknown[]; termType?: string; value?: string };

/**
 * Whether a pattern is no regular expression: one that JavaScript's RegExp (without the `u` flag, the
 * most lenient reading) rejects — an unbalanced bracket, a quantifier with nothing to repeat — is
 * also no XPath regular expression (XQuery 1.0 and XPath 2.0 Functions and Operators §7.6.1, which
 * REGEX and REPLACE use). Flag `q` (the pattern is a plain string) takes any pattern; with flag `x`
 * whitespace is removed first.
 * @returns why it is invalid (the parser's words), or undefined when it may be valid
 */
export function patternProblem(pattern: string, flags = ''): string | undefined {
  if (flags.includes('q')) return undefined;
  const source = flags.includes('x') ? pattern.replace(/[\t\n\r ]/g, '') : pattern;
  try {
    new RegExp(source);
    return undefined;
  } catch (e) {
    const m = (e as Error).message;
    return m.slice(m.lastIndexOf(': ') + 2) || m;
  }
}

/**
 * The first REGEX or REPLACE of a query whose pattern is a constant that is no regular expression
 * (`patternProblem`), anywhere in it (FILTER, BIND, projections, EXISTS, sub-queries, SERVICE bodies).
 * @param ast a parsed query
 * @returns a message naming the function, the pattern and why, or undefined
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
      const args = (o.args ?? []) as Node[];
      const pattern = args[1];
      const flags = args[op === 'regex' ? 2 : 3];
      if (pattern?.termType === 'Literal' && (flags === undefined || flags.termType === 'Literal')) {
        const problem = patternProblem(pattern.value ?? '', flags?.value ?? '');
        if (problem) {
          return `the pattern ${JSON.stringify(pattern.value)} of ${op.toUpperCase()} is not a regular expression (${problem}); nothing was sent: fix the pattern (escape a literal bracket as \\\\( or use the flag "q")`;
        }
      }
    }
    for (const v of Object.values(o)) if (v && typeof v === 'object') stack.push(v);
  }
  return undefined;
}
