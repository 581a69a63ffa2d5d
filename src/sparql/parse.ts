/**
 * Parsing SPARQL text: the one way fkgqa parses a query, a gold query or an agent's (`parseSparql`;
 * `parseQuery` for gold queries), with sparqljs 3.7.4 and three repairs so that no query within the
 * length limits is reported as malformed because of the parser's own limits:
 *
 * - the lexer reads long string literals, long local names and long runs of whitespace and comments
 *   (src/sparql/sparqljs-lexer.ts);
 * - a text longer than `PARSE_HERE_MAX_CHARS`, or one whose parse overflows the call stack here, is
 *   parsed on a parser thread with a stack of `PARSER_THREAD_STACK_MB` (sparqljs spreads long lists,
 *   e.g. the objects of one triple pattern, onto the stack), the caller waiting for it;
 * - a query whose operators nest deeper than `MAX_OPERATOR_DEPTH` (`operatorDepth`) is refused as
 *   too complex (`QueryTooComplex`), not as malformed: the engines evaluate such chains by recursion
 *   and overflow (oxigraph 0.5.11 from about 1,000 chained `+`, UNION branches or OPTIONALs).
 */
import { createRequire } from 'node:module';
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';
import type sparqljs from 'sparqljs';
import { compiledScript } from '../common/thread-script.js';
import { iriCharacterProblem, unescapeIriCodepoints } from './arithmetic-chain.js';
import { MAX_OPERATOR_DEPTH, MAX_QUERY_DEPTH, measureNesting, nestingWhat } from './guard.js';
import { lineColumn, type NotSparql11, notSparql11, type SignChain, signChain, spaceLessThanBeforeIri, sparqlTokens, SparqlLexer, type TokenKind } from './lexer.js';
import { lastLexedToken, patchSparqljsLexer } from './sparqljs-lexer.js';

// sparqljs (CommonJS) is loaded at its first use, not on import: a serve worker answers plain
// queries without it (quickInspect), and compiling it took 70+ ms of every thread's start-up.
let loaded: typeof sparqljs | undefined;
let parserModule: Parameters<typeof patchSparqljsLexer>[0] | undefined;

/** sparqljs, loaded at the first use, its lexer repaired (src/sparql/sparqljs-lexer.ts). */
export function sparqljsLib(): typeof sparqljs {
  if (!loaded) {
    const require = createRequire(import.meta.url);
    parserModule = require('sparqljs/lib/SparqlParser.js') as Parameters<typeof patchSparqljsLexer>[0];
    patchSparqljsLexer(parserModule);
    loaded = require('sparqljs') as typeof sparqljs;
  }
  return loaded;
}
const lib = sparqljsLib;

/**
 * How deep the operators of a parsed query nest, as engines evaluate them (each as a binary
 * operator over the ones before it): every element of a group graph pattern (a triple block, a
 * `{ }` group, OPTIONAL, MINUS, FILTER, BIND, VALUES, SERVICE, GRAPH), every branch of a UNION, every
 * operator of an expression (`&&`, `||`, `=`, `+`, a function call; each element of an IN list) and
 * every step of a property path is one level, added along the way from the query to the deepest
 * term. The triple patterns of one block and the rows of VALUES do not count (they are one list).
 * Iterative: any AST that sparqljs builds is measured.
 * @param ast a sparqljs AST (a query or an update)
 * @returns the depth (a query `SELECT * { ?s ?p ?o }` is 1)
 */
export function operatorDepth(ast: unknown): number {
  let max = 0;
  const stack: [unknown, number][] = [[ast, 0]];
  while (stack.length > 0) {
    const [node, d] = stack.pop()!;
    if (d > max) max = d;
    if (Array.isArray(node)) {
      for (const x of node) if (x && typeof x === 'object') stack.push([x, d]);
      continue;
    }
    if (!node || typeof node !== 'object') continue;
    const o = node as Record<string, unknown>;
    if ('termType' in o) continue;
    let w = 0;
    if (o.type === 'operation') w = 1 + ((o.operator === 'in' || o.operator === 'notin') && Array.isArray((o.args as unknown[])?.[1]) ? (o.args as unknown[][])[1].length : 0);
    else if (o.type === 'functionCall' || o.type === 'aggregate') w = 1;
    else if (o.type === 'path') w = Array.isArray(o.items) ? o.items.length : 1;
    else if (Array.isArray(o.patterns)) w = o.patterns.length;
    else if (o.type === 'query' && Array.isArray(o.where)) w = o.where.length;
    if (d + w > max) max = d + w;
    for (const v of Object.values(o)) if (v && typeof v === 'object') stack.push([v, d + w]);
  }
  return max;
}

/** A query refused because the parser or the engines cannot handle it (not a syntax error: the query may be valid SPARQL). */
export class QueryTooComplex extends Error {
  /**
   * @param message what is too complex, naming the limit
   * @param depth the query's operator depth, when that is what exceeds the limit
   */
  constructor(
    message: string,
    readonly depth?: number,
  ) {
    super(message);
    this.name = 'QueryTooComplex';
  }
}

/** Texts up to this many characters are parsed on the caller's thread first (lists of 50,000 elements fit its stack). */
export const PARSE_HERE_MAX_CHARS = 50_000;
/** Stack of the parser thread, in MB: sparqljs needs 16 for a triple pattern with 495,000 objects (`?s ?p 1,1,…`, 990,000 characters). */
export const PARSER_THREAD_STACK_MB = 64;

/** Options of `parseSparql`. */
export interface SparqlParseOptions {
  /** Prefixes known without declaration, by name (e.g. `{ '': 'http://valuenet/ontop/' }`). */
  prefixes?: Record<string, string>;
  /** Deepest bracket nesting accepted (default MAX_QUERY_DEPTH, guard.ts). */
  maxQueryDepth?: number;
  /** Deepest operator nesting accepted (default MAX_OPERATOR_DEPTH). */
  maxOperatorDepth?: number;
}

/** What the parser thread answers (src/sparql/parser-thread.ts). */
export type ParseReply =
  | { ok: true; ast: sparqljs.SparqlQuery | sparqljs.Update }
  | { ok: false; kind: 'syntax'; message: string; hash?: unknown; /** A parse error's offending token: its offset in the text parsed. */ offset?: number }
  | { ok: false; kind: 'too-complex'; message: string; depth?: number };

const isStackOverflow = (e: unknown) => e instanceof RangeError && /call stack/i.test(e.message);

const depthMessage = (depth: number, limit: number) =>
  `the query's operators nest ${depth} levels deep, more than the limit of ${limit}: every element of a group ({ }, OPTIONAL, MINUS, FILTER, BIND, VALUES, SERVICE), ` +
  'every branch of a UNION, every operator of an expression (each element of an IN list) and every step of a property path is one level; ' +
  'split the query or shorten its chains (VALUES rows and the triple patterns of one block do not count)';

/**
 * Parses and measures on this thread (the parser thread's work; `parseSparql` for everyone else).
 * @returns the AST, sparqljs's error, or why the query is too complex (its operator depth, or a stack overflow of the parser)
 */
export function parseHere(text: string, options: SparqlParseOptions = {}): ParseReply {
  let ast: sparqljs.SparqlQuery | sparqljs.Update;
  try {
    ast = new (lib().Parser)({ prefixes: options.prefixes ?? {} }).parse(text);
  } catch (e) {
    if (isStackOverflow(e)) return { ok: false, kind: 'too-complex', message: `the SPARQL parser ran out of stack on this query` };
    const hash = (e as { hash?: JisonErrorHash }).hash;
    const message = (e as Error)?.message ?? String(e);
    // A parse error (not one of sparqljs's checks, such as an unknown prefix): at the token the lexer read last.
    const offset = parserModule && lastLexedToken(parserModule)?.start;
    if (hash?.token !== undefined && offset !== undefined && /^Parse error on line/.test(message)) return { ok: false, kind: 'syntax', message, hash, offset };
    return { ok: false, kind: 'syntax', message, hash };
  }
  const depth = operatorDepth(ast);
  const limit = options.maxOperatorDepth ?? MAX_OPERATOR_DEPTH;
  if (depth > limit) return { ok: false, kind: 'too-complex', message: depthMessage(depth, limit), depth };
  return { ok: true, ast };
}

/** What Jison attaches to a parse error (`hash`): the offending token, what was expected, and a position. */
interface JisonErrorHash {
  token?: string;
  text?: string;
  expected?: string[];
  loc?: { first_line: number; first_column: number; last_line: number; last_column: number };
  [key: string]: unknown;
}

/**
 * sparqljs's parse error with the true position of the offending token: Jison reports the line of
 * the token before it when the token starts a line, and shows the text with its line ends removed.
 * The message keeps sparqljs's form (`Parse error on line L, column C:`, the line, a caret under the
 * token, `Expecting …`); `hash.loc` is the token's span (Jison's convention: 1-based lines, 0-based
 * columns, in code points: lexer.ts `lineColumn`) and `hash.offset` its offset in the text (UTF-16 code units).
 * @param start the token's offset in the text
 */
function locatedParseError(text: string, message: string, hash: JisonErrorHash, start: number): { message: string; hash: JisonErrorHash } {
  const { line, column, lineStart } = lineColumn(text, start);
  const lineEnd = text.slice(lineStart).search(/[\r\n]/);
  const lineText = text.slice(lineStart, lineEnd < 0 ? text.length : lineStart + lineEnd);
  // At most 60 characters of the line before the token and 20 after it, as sparqljs shows (the line as code points: a surrogate pair is never split).
  const points = [...lineText];
  const from = Math.max(0, column - 1 - 60);
  const shown = `${from > 0 ? '...' : ''}${points.slice(from, column - 1 + 20).join('')}${column - 1 + 20 < points.length ? '...' : ''}`;
  const caret = `${'-'.repeat((from > 0 ? 3 : 0) + column - 1 - from)}^`;
  const rest = message.split('\n').slice(3).join('\n');
  const end = start + (hash.token === 'EOF' ? 0 : Math.max(1, (hash.text ?? '').length));
  const last = lineColumn(text, end);
  return {
    message: `Parse error on line ${line}, column ${column}:\n${shown}\n${caret}${rest ? `\n${rest}` : ''}`,
    hash: { ...hash, offset: start, loc: { first_line: line, first_column: column - 1, last_line: last.line, last_column: last.column - 1 } },
  };
}

/** The parser thread: started at the first long query, kept (unreferenced: it does not keep the process alive). */
let thread: { worker: Worker; port: MessagePort; flag: Int32Array } | undefined;

/** How long the caller waits for the parser thread, in ms: a parse of 990,000 characters took 46 s at load 40. */
const PARSER_THREAD_WAIT_MS = 600_000;

/**
 * Parses on the parser thread, waiting for it (Atomics.wait: the caller's thread blocks as it would
 * while parsing itself).
 * @throws Error when the thread does not answer within PARSER_THREAD_WAIT_MS (it is then stopped)
 */
function parseOnThread(text: string, options: SparqlParseOptions): ParseReply {
  if (!thread) {
    const { port1, port2 } = new MessageChannel();
    const flag = new Int32Array(new SharedArrayBuffer(4));
    const worker = new Worker(compiledScript('sparql/parser-thread.js'), {
      workerData: { port: port2, flag },
      transferList: [port2],
      resourceLimits: { stackSizeMb: PARSER_THREAD_STACK_MB },
    });
    worker.unref();
    port1.unref();
    thread = { worker, port: port1, flag };
  }
  const t = thread;
  Atomics.store(t.flag, 0, 0);
  t.port.postMessage({ text, options });
  if (Atomics.wait(t.flag, 0, 0, PARSER_THREAD_WAIT_MS) === 'timed-out') {
    thread = undefined;
    void t.worker.terminate();
    throw new Error(`the SPARQL parser thread did not answer within ${PARSER_THREAD_WAIT_MS / 1000} s (a query of ${text.length} characters)`);
  }
  let reply: ParseReply | undefined;
  try {
    reply = receiveMessageOnPort(t.port)?.message as ParseReply | undefined;
    if (reply?.ok) reply.ast = rehydrate(reply.ast) as sparqljs.SparqlQuery | sparqljs.Update;
  } catch (e) {
    // With the depth limits lifted, an AST deeper than this thread's stack cannot be taken over: too complex, not malformed.
    if (isStackOverflow(e)) return { ok: false, kind: 'too-complex', message: `the parsed query nests too deep to be taken over from the parser thread` };
    throw e;
  }
  if (!reply) throw new Error('the SPARQL parser thread answered nothing');
  return reply;
}

/**
 * The AST as sparqljs builds it, from its copy that crossed threads (structured clone keeps the
 * fields of RDF terms but not their classes): terms made again by sparqljs's data factory, `*` by
 * its Wildcard. Within the depth limits (MAX_OPERATOR_DEPTH, MAX_QUERY_DEPTH) recursion is safe; with
 * them lifted, an overflow here is caught by parseOnThread (too complex).
 */
function rehydrate(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(rehydrate);
  if (!node || typeof node !== 'object') return node;
  const o = node as Record<string, unknown>;
  const f = factory();
  switch (o.termType) {
    case 'NamedNode':
      return f.namedNode(o.value as string);
    case 'BlankNode':
      return f.blankNode(o.value as string);
    case 'Variable':
      return f.variable(o.value as string);
    case 'DefaultGraph':
      return f.defaultGraph();
    case 'Literal':
      return f.literal(o.value as string, (o.language as string) || (rehydrate(o.datatype) as ReturnType<typeof f.namedNode>));
    case 'Quad':
      return f.quad(rehydrate(o.subject) as never, rehydrate(o.predicate) as never, rehydrate(o.object) as never, rehydrate(o.graph) as never);
    case 'Wildcard':
      return new (lib().Wildcard)();
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) out[k] = rehydrate(v);
  return out;
}

type TermFactory = {
  namedNode(v: string): unknown;
  blankNode(v: string): unknown;
  variable(v: string): unknown;
  defaultGraph(): unknown;
  literal(v: string, languageOrDatatype: unknown): unknown;
  quad(s: never, p: never, o: never, g: never): unknown;
};
let termFactory: TermFactory | undefined;
/** sparqljs's own data factory (rdf-data-factory, as sparqljs resolves it). */
function factory(): TermFactory {
  if (!termFactory) {
    const fromSparqljs = createRequire(createRequire(import.meta.url).resolve('sparqljs'));
    const { DataFactory } = fromSparqljs('rdf-data-factory') as { DataFactory: new () => TermFactory };
    termFactory = new DataFactory();
  }
  return termFactory;
}

/** A NamedNode made by sparqljs's own data factory, as the parser makes them (for a term put into an AST). */
export function namedNodeTerm(iri: string): sparqljs.IriTerm {
  return factory().namedNode(iri) as sparqljs.IriTerm;
}

/**
 * Parses SPARQL text with sparqljs (module comment: long tokens, long lists and deep operator
 * chains are handled). IRIs are not fixed (see fixIris).
 * @param text the query (or update) text
 * @returns the AST
 * @throws QueryTooComplex when its brackets nest deeper than `maxQueryDepth` (MAX_QUERY_DEPTH,
 *   guard.ts), its operators deeper than `maxOperatorDepth` (MAX_OPERATOR_DEPTH), or the parser overflows even the parser thread's stack; sparqljs's Error (with its `hash`, the
 *   position) when the text does not parse; an Error naming the IRI for a character, escaped or not, that an IRI may not hold
 *   (`iriCharacterProblem`, arithmetic-chain.ts), and naming the construct for SPARQL 1.2 syntax (`notSparql11`, lexer.ts)
 */
export function parseSparql(text: string, options: SparqlParseOptions = {}): sparqljs.SparqlQuery | sparqljs.Update {
  // Thousands of nested groups keep sparqljs busy for minutes: refused on the text, before parsing.
  const nesting = measureNesting(text);
  const maxNesting = options.maxQueryDepth ?? MAX_QUERY_DEPTH;
  if (nesting.depth > maxNesting) throw new QueryTooComplex(`${nestingWhat(nesting)} nest ${nesting.depth} levels, more than the limit of ${maxNesting}: flatten the query`);
  // A character an IRI may not hold, escaped or written as it is: named, at any length (oxigraph refuses the IRI, sparqljs reads it).
  const badChar = iriCharacterProblem(text);
  if (badChar) {
    const { line, column, iri, written, escaped, why } = badChar;
    throw new Error(`Parse error on line ${line}, column ${column}: the IRI ${iri} holds ${escaped ? `the escape ${written}` : written}, which ${why}`);
  }
  // sparqljs reads no codepoint escape in an IRI (`<urn:\u0061>`), which SPARQL 1.1 reads before its grammar (§19.2) and oxigraph reads too,
  // and reads `?o<<urn:x>` (less-than, then an IRI) as SPARQL 1.2's `<<`: it is given `?o< <urn:x>`.
  const parsed = spaceLessThanBeforeIri(unescapeIriCodepoints(text));
  let reply = parsed.length <= PARSE_HERE_MAX_CHARS ? parseHere(parsed, options) : undefined;
  if (!reply || (!reply.ok && reply.kind === 'too-complex' && reply.depth === undefined)) reply = parseOnThread(parsed, options);
  if (reply.ok) return reply.ast;
  if (reply.kind === 'too-complex') {
    throw new QueryTooComplex(reply.depth === undefined ? `${reply.message} (a stack of ${PARSER_THREAD_STACK_MB} MB): the query is too complex for it; split it` : reply.message, reply.depth);
  }
  // SPARQL 1.2 syntax (oxigraph reads it, sparqljs does not): named as such, wherever sparqljs stopped.
  const unread = notSparql11(text);
  if (unread) throw new Error(notSparql11Message(unread));
  let { message, hash } = reply as { message: string; hash?: JisonErrorHash };
  if (reply.offset !== undefined && hash) {
    const offset = parsed === text ? reply.offset : originalOffset(text, reply.offset);
    const chain = signChain(text);
    // A chain of signs: the message says what to write instead, and carries no Jison position (readers show the message).
    ({ message, hash } = chain?.offset === offset ? { message: chainedSignsMessage(chain), hash: undefined } : locatedParseError(text, message, hash, offset));
  }
  throw Object.assign(new Error(message), hash === undefined ? {} : { hash });
}

/**
 * The offset in `text` of an offset in the text sparqljs parsed (`spaceLessThanBeforeIri(unescapeIriCodepoints(text))`):
 * each IRI whose escapes were read is shorter there by the escapes' length, each less-than written
 * directly before an IRI is followed by one more character (a space).
 */
function originalOffset(text: string, offset: number): number {
  let shift = 0;
  for (const t of sparqlTokens(text)) {
    if (t.start - shift >= offset) break;
    // A `<` glued to another is less-than before an IRI (lexer.ts `lessThanBeforeIri`): a space follows it in the parsed text.
    if (t.kind === 'punct' && t.text === '<' && text[t.end] === '<') shift--;
    if (t.kind !== 'iri' || !t.text.includes('\\')) continue;
    const read = unescapeIriCodepoints(t.text).length;
    // An offset inside an IRI maps to its start.
    if (t.start - shift + read > offset) return t.start;
    shift += t.text.length - read;
  }
  return offset + shift;
}

/**
 * The message refusing a text that holds syntax other than SPARQL 1.1 (lexer.ts `notSparql11`):
 * where it is, what it is, and that the endpoints and the federation read SPARQL 1.1.
 */
function notSparql11Message(found: NotSparql11): string {
  return (
    `Parse error on line ${found.line}, column ${found.column}: ${found.construct} is ${found.what}, not SPARQL 1.1; ` +
    `the benchmark's endpoints and federation engines read SPARQL 1.1 queries (fkgqa parses them with sparqljs): write it in SPARQL 1.1`
  );
}

/** The message refusing a chain of sign operators (lexer.ts `signChain`): where it is, why, and what to write instead. */
function chainedSignsMessage(chain: SignChain): string {
  return (
    `Parse error on line ${chain.line}, column ${chain.column}: the signs ${chain.signs} are chained; ` +
    `fkgqa's SPARQL parser (sparqljs) reads one sign (! + -) before an operand, as the SPARQL 1.1 grammar does ([118] UnaryExpression); ` +
    `bracket the operand of each further sign: !(!?x), -(-?x)`
  );
}

/**
 * Reverses the PN_LOCAL_ESC escapes that sparqljs 3.7.4 leaves in IRIs built from prefixed names
 * (`:singer\#name` → `http://valuenet/ontop/singer#name`; RubenVerborgh/SPARQL.js#168).
 * An IRIREF cannot contain a backslash, so every `\x` with x one of `_~.-!$&'()*+,;=/?#@%` in an
 * IRI value can only come from such an escape.
 */
export function unescapeLocalName(iri: string): string {
  return iri.indexOf('\\') < 0 ? iri : iri.replace(/\\([_~.\-!$&'()*+,;=/?#@%])/g, '$1');
}

/** Walks any sparqljs AST value and fixes every NamedNode's IRI in place (see unescapeLocalName). */
export function fixIris(node: unknown, seen = new Set<unknown>()): void {
  if (node === null || typeof node !== 'object' || seen.has(node)) return;
  seen.add(node);
  if (Array.isArray(node)) {
    for (const x of node) fixIris(x, seen);
    return;
  }
  const o = node as Record<string, unknown>;
  if (o.termType === 'NamedNode' && typeof o.value === 'string') {
    o.value = unescapeLocalName(o.value);
    return;
  }
  for (const key of Object.keys(o)) fixIris(o[key], seen);
}

/**
 * Rewrites sparqljs's "Unknown prefix: X" (which names nothing for the empty prefix `:`) into a
 * message that names the prefix and says how to fix it; other messages are returned unchanged.
 * @param message a sparqljs parse error message
 * @param emptyPrefixHint text appended for the empty prefix: where else its IRI can be given (e.g. an option)
 */
export function explainParseError(message: string, emptyPrefixHint?: string): string {
  const m = /Unknown prefix: ?([^\s]*)/.exec(message);
  if (!m) return message;
  const name = m[1].replace(/:$/, '');
  const fix = `declare it in the query: PREFIX ${name}: <iri>`;
  return name === '' ? `undeclared prefix ":" (the empty prefix): ${fix}${emptyPrefixHint ?? ''}` : `undeclared prefix "${name}:": ${fix}`;
}

/** A gold query parsed with sparqljs, IRIs fixed. */
export interface ParsedQuery {
  ast: sparqljs.SparqlQuery;
  /**
   * The query regenerated from the fixed AST with full IRIs and no prefix declarations: what fkgqa
   * hands to engines and endpoints (never the raw text, whose escaped local names sparqljs misreads).
   */
  normalized: string;
}

/** Result of parsing: the parsed query, or the parser's message. */
type ParseOutcome = { ok: true; query: ParsedQuery } | { ok: false; error: string; /** The query may be valid SPARQL, too complex to handle (QueryTooComplex). */ tooComplex?: true };

/**
 * Parses a SPARQL query with `defaultPrefix` bound to `:` unless the query declares `:` itself.
 * Updates are refused (a gold query must be a query).
 * @param text the query text as in the benchmark
 * @param defaultPrefix IRI of the undeclared `:` prefix (Spider4SPARQL: `http://valuenet/ontop/`);
 *   undefined for a query that must declare every prefix it uses (an agent's query)
 * @returns `{ok:false, error}` with sparqljs's message when the text does not parse
 */
export function parseQuery(text: string, defaultPrefix: string | undefined): ParseOutcome {
  let ast: sparqljs.SparqlQuery | sparqljs.Update;
  try {
    ast = parseSparql(text, { prefixes: defaultPrefix === undefined ? {} : { '': defaultPrefix } });
  } catch (e) {
    if (e instanceof QueryTooComplex) return { ok: false, error: e.message, tooComplex: true };
    // sparqljs: "Parse error on line 1:", the text, a caret line, "Expecting …, got '…'".
    const lines = ((e as Error).message ?? String(e)).split('\n').filter((l) => l.trim() && !/^-*\^$/.test(l.trim()));
    const expecting = lines.find((l) => /^Expecting|^Unexpected|^Unknown|^Lexical/.test(l));
    return { ok: false, error: explainParseError(expecting && expecting !== lines[0] ? `${lines[0]} ${expecting}` : lines.join(' '), ', or give its IRI with fkgqa partition --default-prefix <iri>') };
  }
  if (ast.type !== 'query') return { ok: false, error: 'not a query (SPARQL Update is not a gold query)' };
  fixIris(ast);
  const generated = { ...ast, prefixes: {} } as sparqljs.SparqlQuery;
  const normalized = new (lib().Generator)({ allPrefixes: false }).stringify(generated);
  return { ok: true, query: { ast, normalized } };
}

/**
 * The gold query text with its default prefix declared, so that it runs on any SPARQL 1.1 engine
 * (the benchmark file stores this form). A query that already declares `:` is returned unchanged.
 */
export function withPrefixDeclared(text: string, defaultPrefix: string): string {
  if (/^\s*PREFIX\s+:/im.test(text)) return text;
  return `PREFIX : <${defaultPrefix}>\n${text}`;
}

/**
 * The prefixes a query declares in its prologue (SPARQL 1.1 Query grammar [4]–[6]: `PREFIX p: <iri>`
 * and `BASE <iri>` before the query form), read from its tokens (lexer.ts) without a parser: the scan stops at the first other token, so nothing inside the query's
 * body (strings, comments, IRIs) is read. A relative namespace IRI is resolved against the BASE
 * declared before it; one that cannot be resolved is left out.
 * @returns namespace IRI by prefix label (`''` for the empty prefix `:`), a later declaration of a
 *   label replacing an earlier one, as in SPARQL
 */
export function prologuePrefixes(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  let base: string | undefined;
  const lexer = new SparqlLexer(text);
  const next = (kind: TokenKind) => lexer.next() && lexer.kind === kind;
  // The next token's IRI, resolved when relative (null: relative without a BASE to resolve it), or undefined when it is no IRI.
  const iri = (): string | null | undefined => {
    const raw = next('iri') ? lexer.tokenText().slice(1, -1) : '\\';
    if (raw.includes('\\')) return undefined;
    if (/^[A-Za-z][A-Za-z0-9+.-]*:/.test(raw)) return raw;
    try {
      return base ? new URL(raw, base).href : null;
    } catch {
      return null;
    }
  };
  while (next('word')) {
    const word = lexer.tokenText().toLowerCase();
    const label = word === 'prefix' && next('pname') && lexer.tokenText().endsWith(':') ? lexer.tokenText().slice(0, -1) : undefined;
    if (word !== 'base' && label === undefined) return out;
    const resolved = iri();
    if (resolved === undefined) return out;
    if (resolved !== null && label === undefined) base = resolved;
    else if (resolved !== null) out[label!] = resolved;
  }
  return out;
}
