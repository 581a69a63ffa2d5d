/**
 * SPARQL text from a parsed query, as fkgqa hands an agent's query on (routing, the engines' check):
 * sparqljs 3.7.4's Generator, except for expressions and HAVING:
 * - An expression gets the brackets its operators' precedence needs, and a chain of `+ -` or `* /`
 *   is bracketed from the left in full (`(?a - ?b) - ?c`): oxigraph 0.5 groups such chains from the
 *   right (`10 - 4 - 3` is 9 there, 3 in SPARQL 1.1), and the text is sent to oxigraph shards. `||`
 *   and `&&` chains stay bare (either grouping gives the same value, errors included), as does every
 *   operand of higher precedence. sparqljs brackets every operand that is not a term, so a `||` chain
 *   of n operators became n nested brackets, and a query within every limit on the agent's text was
 *   refused for its bracket depth on text fkgqa generated; an arithmetic chain still nests one
 *   bracket per operator, which the served bracket limit (MAX_SERVED_QUERY_DEPTH) allows for every
 *   chain within the operator depth limit.
 * - Several HAVING conditions are written as one `&&` of them (the same filter: a group is kept
 *   when every condition is true); sparqljs writes them in one pair of brackets, which does not parse.
 */
import type sparqljs from 'sparqljs';
import { fixIris, parseSparql, sparqljsLib, type SparqlParseOptions } from './parse.js';
import { type ArithmeticChain, findArithmeticChain, unescapeIriCodepoints } from './arithmetic-chain.js';
import { sparqlTokens } from './lexer.js';

/**
 * Precedence of the binary operators of the SPARQL 1.1 grammar ([111]–[118]): `||` < `&&` <
 * relational (`=`, `!=`, `<`, `>`, `<=`, `>=`, IN, NOT IN: not associative) < additive < multiplicative.
 */
const PRECEDENCE: Record<string, number> = {
  '||': 1,
  '&&': 2,
  '=': 3,
  '!=': 3,
  '<': 3,
  '>': 3,
  '<=': 3,
  '>=': 3,
  in: 3,
  notin: 3,
  '+': 4,
  '-': 4,
  '*': 5,
  '/': 5,
};
const OR = 1;
const AND = 2;
const RELATIONAL = 3;
const BINARY = new Set(['||', '&&', '=', '!=', '<', '>', '<=', '>=', '+', '-', '*', '/']);
const UNARY: Record<string, string> = { '!': '!', uplus: '+', uminus: '-' };

type Expr = sparqljs.Expression & { type?: string; operator?: string; args?: unknown[] };
type Gen = { toExpression(e: unknown): string; toEntity(e: unknown): string };

/** The precedence of an expression as an operand: that of its binary operator, else above every binary one (a term, a call, a unary operator, a bracketed expression). */
const precedenceOf = (e: Expr): number => (e.type === 'operation' && e.operator && e.operator in PRECEDENCE ? PRECEDENCE[e.operator] : 9);

/**
 * An operand of an operator of precedence `p`: bare when of higher precedence, or when the left
 * operand of the same `||` or `&&`; bracketed otherwise — a lower precedence, the right operand of
 * the same (the binary operators associate to the left), a relational operand of a relational
 * operator (not associative), and the left operand of the same additive or multiplicative operator
 * (module comment: oxigraph groups those chains from the right).
 */
function operand(g: Gen, e: Expr, p: number, side: 'left' | 'right'): string {
  const q = precedenceOf(e);
  const bare = q > p || (side === 'left' && q === p && (p === OR || p === AND));
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
  joinHavings(ast);
  return generator().toQuery({ ...ast, prefixes: {} });
}

/** Every query and sub-SELECT of `node` with several HAVING conditions gets them as one `&&` (module comment); in place. */
function joinHavings(node: unknown): void {
  if (!node || typeof node !== 'object') return;
  if (Array.isArray(node)) {
    for (const x of node) joinHavings(x);
    return;
  }
  const q = node as { type?: string; having?: Expr[]; termType?: string };
  if (q.termType) return; // an RDF term
  if (q.type === 'query' && Array.isArray(q.having) && q.having.length > 1) {
    q.having = [q.having.reduce((a, b) => ({ type: 'operation', operator: '&&', args: [a, b] }) as Expr)];
  }
  for (const v of Object.values(q)) joinHavings(v);
}

/** The additive and the multiplicative operators: a chain of either is what oxigraph 0.5 groups from the right. */
const CHAINED: Record<string, number> = { '+': 4, '-': 4, '*': 5, '/': 5 };

/** True when some `+ -` (or `* /`) operation of `node` has another of the same precedence as its left operand: `a - b - c`, `a / b * c`. */
function hasArithmeticChain(node: unknown, seen = new Set<unknown>()): boolean {
  if (node === null || typeof node !== 'object' || seen.has(node)) return false;
  seen.add(node);
  if (Array.isArray(node)) return node.some((x) => hasArithmeticChain(x, seen));
  const o = node as Expr;
  if ((o as { termType?: string }).termType) return false; // an RDF term
  if (o.type === 'operation' && o.operator && o.operator in CHAINED && Array.isArray(o.args)) {
    const left = o.args[0] as Expr | undefined;
    if (left && left.type === 'operation' && left.operator && CHAINED[left.operator] === CHAINED[o.operator]) return true;
  }
  return Object.values(o).some((v) => hasArithmeticChain(v, seen));
}

/**
 * True when a span that IRIREF matches (`<…>`) may instead be the less-than operator and an
 * expression after it (`?a<?b-2-1&&?b>0`: IRIREF allows `? & - ( )`, and oxigraph reads a `<`
 * after an operand as less-than): it holds an arithmetic operator and something no plain IRI of
 * a query holds — a `?` or `$`, a bracket, `&`, `|`, `,`, `=`, `!` — or no scheme. Such a text
 * is parsed (mayHoldArithmetic errs towards parsing).
 */
function mayBeLessThan(span: string): boolean {
  const body = span.slice(1, -1);
  return /[-+*/]/.test(body) && (/[?$()&|,=!]/.test(body) || !/^[A-Za-z][A-Za-z0-9+.-]*:/.test(body));
}

/** True when `text` has a `+ - * /` outside strings, IRIs and comments: only such a text can hold an arithmetic chain. */
function mayHoldArithmetic(text: string): boolean {
  for (const t of sparqlTokens(text)) if (t.kind === 'iri' ? mayBeLessThan(t.text) : t.kind !== 'literal' && /[-+*/]/.test(t.text)) return true;
  return false;
}

/** What a shard endpoint evaluates for a query (`leftGroupedQuery`). */
type LeftGrouping =
  /** The query has no arithmetic chain (or is no query): evaluated as the client sent it. */
  | { kind: 'as-sent' }
  /** The query generated with every chain bracketed from the left. */
  | { kind: 'rewritten'; text: string }
  /** The query has a chain and cannot be generated (sparqljs does not parse it): refused, `message` saying what to write instead. */
  | { kind: 'refused'; message: string };

/**
 * What a shard endpoint hands to oxigraph for a query, so that every arithmetic chain is grouped
 * from the left, as SPARQL 1.1 groups them (grammar [116]–[117]) and as both federation engines
 * evaluate them; oxigraph 0.5 groups such chains from the right, so that `8 - 2 - 1` is 7 and
 * `10 / 4 * 2` is 1.25 on the bare text (5 and 5 in SPARQL 1.1).
 * - No `+ - * /` outside strings, IRIs and comments, or no chain in the parsed query (no `+ -` or
 *   `* /` operation whose left operand is one of the same precedence), or an update: as sent.
 * - A chain in a query sparqljs parses (its IRIs' codepoint escapes read first, as oxigraph reads
 *   them: `unescapeIriCodepoints`): the query generated (`generateQuery`, IRIs fixed) with every
 *   chain bracketed from the left; the same text a federation engine's SERVICE clause sends the
 *   shard (routing.ts hands on generated text).
 * - A text sparqljs does not parse (the endpoint's checks refuse SPARQL 1.2 syntax before, answer.ts
 *   `checkTask`; this is for any other text oxigraph reads): refused when `findArithmeticChain`
 *   finds a chain in it — the message names the chain, where it starts, and the bracketed form to
 *   write — else as sent.
 * The endpoint checks that oxigraph parses the client's text before it evaluates a rewritten
 * text or refuses (answer.ts): a malformed query is reported as oxigraph reads what was sent.
 * @param text the query text as the client sent it
 * @param limits the parse limits of the endpoint (bracket nesting, operator depth)
 */
export function leftGroupedQuery(text: string, limits: Pick<SparqlParseOptions, 'maxQueryDepth' | 'maxOperatorDepth'> = {}): LeftGrouping {
  if (!mayHoldArithmetic(text)) return { kind: 'as-sent' };
  let ast: sparqljs.SparqlQuery | sparqljs.Update;
  try {
    ast = parseSparql(unescapeIriCodepoints(text), limits);
  } catch {
    const chain = findArithmeticChain(text);
    return chain ? { kind: 'refused', message: chainRefusal(chain) } : { kind: 'as-sent' };
  }
  if (ast.type !== 'query' || !hasArithmeticChain(ast)) return { kind: 'as-sent' };
  fixIris(ast);
  return { kind: 'rewritten', text: generateQuery(ast) };
}

/** The message refusing a query with an arithmetic chain that the endpoint cannot bracket: the chain, where it starts, why, and the bracketed form to write. */
function chainRefusal(chain: ArithmeticChain): string {
  const { first, op1, second, op2, line, column } = chain;
  return (
    `the arithmetic chain ${first} ${op1} ${second} ${op2} … (line ${line}, column ${column}) is grouped from the left in SPARQL 1.1, but this endpoint's engine (oxigraph) groups it from the right, ` +
    `and the endpoint brackets chains for it only in queries sparqljs parses: ` +
    `bracket the chain, as (${first} ${op1} ${second}) ${op2} …, and send the query again`
  );
}
