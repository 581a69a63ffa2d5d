/**
 * Quick form inspection: what an endpoint needs to know about an incoming query before it runs it:
 * its result form (for content negotiation), its kind (ask, count or data: for the request log) and
 * the SPARQL features it uses (for the behaviour profiles). Queries are parsed with sparqljs; the text sent to oxigraph is the client's
 * own, unchanged (oxigraph parses escaped local names correctly; sparqljs keeps their backslash),
 * except for a query with an arithmetic chain (generate.ts `leftGroupedQuery`).
 */
import type sparqljs from 'sparqljs';
import { explainParseError, parseSparql, QueryTooComplex, type SparqlParseOptions } from './parse.js';
import { MAX_OPERATOR_DEPTH } from './guard.js';
import { NOT_SPARQL11_PUNCT, NOT_SPARQL11_WORDS, signOfNumber, sparqlTokens } from './lexer.js';
import { ProtocolError, type ResultForm } from './protocol.js';

/** SPARQL features a behaviour profile can refuse (challenge C2 of the FKGQA paper). */
export const FEATURES = ['service', 'values', 'aggregates', 'subqueries'] as const;
/** One of FEATURES. */
export type Feature = (typeof FEATURES)[number];

/** The facts about a query an endpoint acts on. */
export interface QueryInfo {
  /** SELECT → bindings, ASK → boolean, CONSTRUCT/DESCRIBE → graph. */
  form: ResultForm;
  kind: 'ask' | 'count' | 'data';
  /** Features used anywhere in the query (SERVICE, VALUES, aggregates, sub-SELECTs). */
  features: Set<Feature>;
  /** The query has FROM or FROM NAMED clauses. */
  hasFrom: boolean;
}

function walk(node: unknown, visit: (o: Record<string, unknown>) => void, seen = new Set<unknown>()): void {
  if (node === null || typeof node !== 'object' || seen.has(node)) return;
  seen.add(node);
  if (Array.isArray(node)) {
    for (const x of node) walk(x, visit, seen);
    return;
  }
  const o = node as Record<string, unknown>;
  visit(o);
  for (const k of Object.keys(o)) walk(o[k], visit, seen);
}

/** True for a SELECT whose projection is only COUNT aggregates and that has no GROUP BY. */
function isCountQuery(ast: sparqljs.SelectQuery): boolean {
  if (ast.group || !Array.isArray(ast.variables) || ast.variables.length === 0) return false;
  return ast.variables.every((v) => {
    const e = (v as { expression?: { type?: string; aggregation?: string } }).expression;
    return e?.type === 'aggregate' && e.aggregation === 'count';
  });
}

/** Query-form keywords (SPARQL 1.1 Query §16) and the form of their answer. */
const FORMS: Record<string, ResultForm> = { select: 'bindings', ask: 'boolean', construct: 'graph', describe: 'graph' };

/**
 * Words that send a query to the full parse (`inspectQuery`): anything a feature, FROM, a count,
 * or an update would show in — SERVICE, VALUES, the aggregates, GROUP BY, FROM, and the SPARQL
 * Update operations.
 */
const NEEDS_PARSE = new Set([
  'service',
  'values',
  'count',
  'sum',
  'min',
  'max',
  'avg',
  'sample',
  'group_concat',
  'group',
  'from',
  'insert',
  'delete',
  'load',
  'clear',
  'create',
  'drop',
  'copy',
  'move',
  'add',
  'with',
]);

/**
 * The facts about a plain query read from its keywords alone, without parsing: its words and the
 * words of its prefixed names and blank node labels (lexer.ts, `sparqlTokens`). Answers only when
 * the query has exactly one query-form keyword (no sub-SELECT), none of NEEDS_PARSE and no
 * possible SPARQL 1.2 syntax (refused by the full parse at any length) — then it
 * uses no feature, no FROM, no COUNT and is no update, and its form is that keyword's — and only
 * for texts of at most 2 × MAX_OPERATOR_DEPTH characters (longer ones may be too complex; with a
 * lower `maxOperatorDepth`, 2 × it) without a chain of signs (`!!?x`: a sign is the one operator
 * written in one character; a chain is refused by the full parse, `signChain` of lexer.ts, at any
 * length, and nests as deep as its bracketed spelling in the guard's limit, guard.ts). Unsure
 * (a prefixed name such as `:count` or `ask:` counts as a keyword) means undefined, never a wrong
 * answer: such queries go to `inspectQuery`. Oxigraph still parses every query it runs, so syntax
 * errors are reported either way. The point query of `bench:serve` takes 0.6–0.8 ms in sparqljs,
 * more than oxigraph needs to answer it.
 * @returns the query's facts (`kind` ask or data, no features, no FROM), or undefined
 */
export function quickInspect(text: string, maxOperatorDepth = MAX_OPERATOR_DEPTH): QueryInfo | undefined {
  // Every level of operator depth takes 2 characters at least (`+1`, `{}`, `,1` of an IN list, `/a`; a chain of signs is left to the parse, below):
  // a shorter text is within the limit; a longer one is parsed, and refused when too complex
  // (oxigraph overflows its stack on long chains, and some overflows corrupt its instance).
  if (text.length > 2 * Math.min(maxOperatorDepth, MAX_OPERATOR_DEPTH)) return undefined;
  let form: ResultForm | undefined;
  let forms = 0;
  let sign = false;
  for (const t of sparqlTokens(text)) {
    // A sign after a sign (`!!?x`): one character per operator level, and no SPARQL 1.1 (signChain, lexer.ts).
    const isSign = t.role === 'sign' && !signOfNumber(text, t.end);
    if (isSign && sign) return undefined;
    sign = isSign;
    // Possible SPARQL 1.2 syntax: the full parse refuses it (parse.ts, lexer.ts `notSparql11`), at any length.
    if (t.kind === 'punct' ? NOT_SPARQL11_PUNCT.has(t.text) : t.kind === 'literal' ? /--[a-zA-Z]+$/.test(t.text) : t.kind === 'word' && NOT_SPARQL11_WORDS.has(t.text.toLowerCase())) return undefined;
    if (t.kind !== 'word' && t.kind !== 'pname' && t.kind !== 'bnode') continue;
    // The words of a prefixed name count too (`ask:`, `:count`): unsure means the full parse.
    for (const word of t.text.toLowerCase().match(/[a-z_][a-z0-9_]*/g) ?? []) {
      if (NEEDS_PARSE.has(word)) return undefined;
      if (word in FORMS) {
        forms++;
        form = FORMS[word];
      }
    }
  }
  if (forms !== 1 || !form) return undefined;
  return { form, kind: form === 'boolean' ? 'ask' : 'data', features: new Set(), hasFrom: false };
}

/**
 * The facts about a query: `quickInspect` when its keywords settle them, else `inspectQuery`.
 * @throws ProtocolError as inspectQuery
 */
export function queryInfo(text: string, limits?: QueryParseLimits): QueryInfo {
  return quickInspect(text, limits?.maxOperatorDepth) ?? inspectQuery(text, limits);
}

/** The limits of the parse of `inspectQuery` (parse.ts, SparqlParseOptions; defaults MAX_QUERY_DEPTH and MAX_OPERATOR_DEPTH). */
export type QueryParseLimits = Pick<SparqlParseOptions, 'maxQueryDepth' | 'maxOperatorDepth'>;

/**
 * Parses a query and reports its form, kind and features.
 * @throws ProtocolError 400 with sparqljs's message when the text does not parse, or naming the
 *   limit when the query is too complex (QueryTooComplex); 403 when it is a SPARQL Update (the
 *   endpoints are read-only)
 */
export function inspectQuery(text: string, limits: QueryParseLimits = {}): QueryInfo {
  let ast: sparqljs.SparqlQuery | sparqljs.Update;
  try {
    ast = parseSparql(text, limits);
  } catch (e) {
    if (e instanceof QueryTooComplex) throw new ProtocolError(400, `query too complex: ${e.message}`);
    const message = explainParseError(((e as Error).message ?? String(e)).trim(), ' (the gold queries in benchmark.json declare theirs)');
    throw new ProtocolError(400, `malformed query: ${message}`);
  }
  if (ast.type === 'update') throw new ProtocolError(403, 'this endpoint is read-only: SPARQL Update is not accepted');
  const features = new Set<Feature>();
  walk(ast, (o) => {
    if (o.type === 'service') features.add('service');
    if (o.type === 'values') features.add('values');
    if (o.type === 'aggregate') features.add('aggregates');
    if (o.type === 'query' && o !== (ast as unknown)) features.add('subqueries');
  });
  if (ast.values) features.add('values');
  const form: ResultForm = ast.queryType === 'SELECT' ? 'bindings' : ast.queryType === 'ASK' ? 'boolean' : 'graph';
  const kind = ast.queryType === 'ASK' ? 'ask' : ast.queryType === 'SELECT' && isCountQuery(ast) ? 'count' : 'data';
  const hasFrom = !!ast.from && (ast.from.default.length > 0 || ast.from.named.length > 0);
  return { form, kind, features, hasFrom };
}

/**
 * The GROUP_CONCAT variables of a query's projection, `(GROUP_CONCAT(… ; SEPARATOR="s") AS ?v)` at
 * the top level, with their separators (`" "` when the query names none): what
 * `compareResults` (src/answers/compare.ts) compares as multisets of parts.
 * @param ast a parsed query (sparqljs 3.7), or undefined
 * @returns variable name (without `?`) to separator; empty for another query form or none
 */
export function groupConcatSeparators(ast: sparqljs.SparqlQuery | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  const q = ast as { queryType?: string; variables?: unknown[] } | undefined;
  if (q?.queryType !== 'SELECT') return out;
  for (const v of q.variables ?? []) {
    const e = (v as { expression?: { type?: string; aggregation?: string; separator?: string }; variable?: { value: string } }).expression;
    if (e?.type === 'aggregate' && e.aggregation === 'group_concat') out[(v as { variable: { value: string } }).variable.value] = e.separator ?? ' ';
  }
  return out;
}

/**
 * Whether an expression (a sparqljs 3.7 AST node, or an array of them) holds an aggregate (COUNT,
 * SUM, … — SPARQL 1.1 Query §18.5) of its own query: an aggregate inside a nested sub-SELECT (as
 * in `EXISTS { SELECT (COUNT(*) AS ?n) … }`) belongs to that query and does not count.
 */
export function hasAggregate(node: unknown): boolean {
  if (!node || typeof node !== 'object') return false;
  if (Array.isArray(node)) return node.some(hasAggregate);
  const o = node as { type?: string; termType?: string };
  if (o.type === 'aggregate') return true;
  if (o.type === 'query' || typeof o.termType === 'string') return false;
  return Object.values(node).some(hasAggregate);
}
