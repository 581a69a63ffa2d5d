import { createRequire } from 'node:module';
import type sparqljs from 'sparqljs';

// sparqljs (CommonJS) is loaded at its first use, not on import: a serve worker answers plain
// queries without it (quickInspect), and compiling it took 70+ ms of every thread's start-up.
let loaded: typeof sparqljs | undefined;
const lib = (): typeof sparqljs => (loaded ??= createRequire(import.meta.url)('sparqljs') as typeof sparqljs);

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
  return name === ''
    ? `undeclared prefix ":" (the empty prefix): ${fix}${emptyPrefixHint ?? ''}`
    : `undeclared prefix "${name}:": ${fix}`;
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
export type ParseOutcome = { ok: true; query: ParsedQuery } | { ok: false; error: string };

/**
 * Parses a SPARQL query with `defaultPrefix` bound to `:` unless the query declares `:` itself.
 * Updates are refused (a gold query must be a query).
 * @param text the query text as in the benchmark
 * @param defaultPrefix IRI of the undeclared `:` prefix (Spider4SPARQL: `http://valuenet/ontop/`);
 *   undefined for a query that must declare every prefix it uses (an agent's query)
 * @returns `{ok:false, error}` with sparqljs's message when the text does not parse
 */
export function parseQuery(text: string, defaultPrefix: string | undefined): ParseOutcome {
  let ast: sparqljs.SparqlQuery;
  try {
    ast = new (lib().Parser)({ prefixes: defaultPrefix === undefined ? {} : { '': defaultPrefix } }).parse(text);
  } catch (e) {
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
