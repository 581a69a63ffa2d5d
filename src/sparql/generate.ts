/**
 * SPARQL text from a parsed query, as fkgqa hands an agent's query on (routing, the engines' check):
 * sparqljs 3.7.4's Generator, except that an expression gets only the brackets its operators'
 * precedence needs. sparqljs brackets every operand that is not a term (`((?id + 1) + 1) > 0`), so a
 * chain of n operators the agent wrote without brackets became n nested brackets, and a query within
 * every limit on the agent's text was refused for its bracket depth (MAX_QUERY_DEPTH) on text fkgqa
 * generated. With these brackets the generated text nests no deeper than any text of the same query.
 */
import type sparqljs from 'sparqljs';
import { sparqljsLib } from './parse.js';

/**
 * Precedence of the binary operators of the SPARQL 1.1 grammar ([111]–[118]): `||` < `&&` <
 * relational (`=`, `!=`, `<`, `>`, `<=`, `>=`, IN, NOT IN: not associative) < additive < multiplicative.
 */
const PRECEDENCE: Record<string, number> = {
  '||': 1, '&&': 2,
  '=': 3, '!=': 3, '<': 3, '>': 3, '<=': 3, '>=': 3, in: 3, notin: 3,
  '+': 4, '-': 4, '*': 5, '/': 5,
};
const RELATIONAL = 3;
const BINARY = new Set(['||', '&&', '=', '!=', '<', '>', '<=', '>=', '+', '-', '*', '/']);
const UNARY: Record<string, string> = { '!': '!', uplus: '+', uminus: '-' };

type Expr = sparqljs.Expression & { type?: string; operator?: string; args?: unknown[] };
type Gen = { toExpression(e: unknown): string; toEntity(e: unknown): string };

/** The precedence of an expression as an operand: that of its binary operator, else above every binary one (a term, a call, a unary operator, a bracketed expression). */
const precedenceOf = (e: Expr): number => (e.type === 'operation' && e.operator && e.operator in PRECEDENCE ? PRECEDENCE[e.operator] : 9);

/**
 * An operand of an operator of precedence `p`, bracketed only when the grammar needs it: a left
 * operand of lower precedence, or of the same when the operator is relational (not associative); a
 * right operand of lower or the same precedence (the binary operators associate to the left).
 */
function operand(g: Gen, e: Expr, p: number, side: 'left' | 'right'): string {
  const q = precedenceOf(e);
  const bare = side === 'left' ? q > p || (q === p && p !== RELATIONAL) : q > p;
  const text = g.toExpression(e);
  return bare ? text : `(${text})`;
}

/**
 * A sparqljs Generator (no prefix declarations, full IRIs) whose expressions carry only the brackets
 * precedence needs (module comment); everything else is sparqljs's own output.
 */
function generator(): { toQuery(q: unknown): string } {
  const g = new (sparqljsLib().Generator)({ allPrefixes: false }).createGenerator() as unknown as Gen & { toQuery(q: unknown): string };
  const own = g.toExpression.bind(g);
  g.toExpression = (e: unknown): string => {
    const x = e as Expr;
    if (!x || typeof x !== 'object' || x.type !== 'operation' || !x.operator) return own(e);
    const op = x.operator.toLowerCase();
    const args = (x.args ?? []) as Expr[];
    if (BINARY.has(op)) {
      const p = PRECEDENCE[op];
      return `${operand(g, args[0], p, 'left')} ${op.toUpperCase()} ${operand(g, args[1], p, 'right')}`;
    }
    if (op in UNARY) {
      // A unary operator takes a primary expression (grammar [119]): a term, a call or a built-in; another operator is bracketed.
      const inner = args[0];
      const io = inner.type === 'operation' ? (inner.operator ?? '').toLowerCase() : '';
      return io in PRECEDENCE || io in UNARY ? `${UNARY[op]}(${g.toExpression(inner)})` : `${UNARY[op]} ${g.toExpression(inner)}`;
    }
    if (op === 'in' || op === 'notin') {
      // sparqljs writes the left operand bare, which misreads `(?a = ?b) IN (…)`: bracketed below the additive operators.
      const list = Array.isArray(args[1]) ? (args[1] as unknown[]).map((a) => g.toExpression(a)).join(', ') : String(args[1]);
      return `${operand(g, args[0], RELATIONAL, 'right')} ${op === 'in' ? 'IN' : 'NOT IN'} (${list})`;
    }
    return own(e);
  };
  return g;
}

/**
 * The text of a parsed query: its prefixes left out (full IRIs), expressions bracketed only where
 * precedence needs it (module comment).
 * @param ast a sparqljs query (IRIs fixed by the caller where needed)
 * @returns SPARQL 1.1 text that parses to the same query
 */
export function generateQuery(ast: sparqljs.SparqlQuery): string {
  return generator().toQuery({ ...ast, prefixes: {} });
}
