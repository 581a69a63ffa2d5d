/**
 * How a SERVICE query is routed, decided once by `routeQuery` for `run_sparql_query` (fkgqa mcp),
 * the harness's final execution (fkgqa eval), `fkgqa query` and `/federation/sparql` (fkgqa serve)
 * (FKGQA paper, section 3 "Query Execution"): the query is parsed (sparqljs, with the project's
 * PN_LOCAL_ESC fix), its SERVICE targets are collected from the AST and checked against the
 * registry, and the route chosen: `direct` for one target whose SERVICE group is the whole WHERE
 * (the wrapper stripped), `federation` for the others, or a refusal (no SERVICE, a pattern outside
 * every SERVICE, a variable or nested SERVICE, `unsupported-shape`, `mixed-graphs`). The rules and
 * their reasons are those of docs/mcp.md (`run_sparql_query`). `run_sparql_query` first tries the
 * quick recognition of a lone SERVICE from its tokens without a parse (`loneService`). Nothing is
 * sent anywhere here.
 */
import sparqljs from 'sparqljs';
import { generateQuery } from '../sparql/generate.js';
import { invalidRegex } from '../sparql/regex.js';
import { MAX_QUERY_DEPTH, measureNesting, nestingDepth, nestingWhat } from '../sparql/guard.js';
import { lineColumn, sparqlTokens } from '../sparql/lexer.js';
import { fixIris, namedNodeTerm, parseSparql, QueryTooComplex } from '../sparql/parse.js';
import { serviceClauses, triplesOutsideServices } from '../sparql/services.js';
import { endpointKey } from '../common/http-client.js';
import { findEndpoint, type EndpointRegistry, type RegisteredEndpoint } from './registry.js';
import { refusedShape } from './service-check.js';

/** Why a query was refused before anything was sent; recorded as the call log's error class. */
type QueryErrorClass =
  | 'too-long'
  | 'too-deep'
  | 'too-complex'
  | 'syntax'
  | 'unknown-prefix'
  | 'update'
  | 'no-service'
  | 'variable-service'
  | 'unknown-endpoint'
  | 'outside-service'
  | 'nested-service'
  | 'unsupported-shape'
  | 'service-with-sources'
  | 'mixed-graphs';

/** The route of a query that may be run. */
type QueryPlan =
  | {
      ok: true;
      route: 'direct' | 'federation';
      /** The query to send (full IRIs, no prefix declarations): the SERVICE body for `direct`. */
      query: string;
      /** The distinct SERVICE targets, in order of first appearance. */
      targets: RegisteredEndpoint[];
      /** SELECT/ASK answer in bindings or a boolean; CONSTRUCT/DESCRIBE in a graph. */
      form: 'bindings' | 'boolean' | 'graph';
      /** The parsed query (IRIs fixed), for tools that inspect it further. */
      ast: sparqljs.SparqlQuery;
    }
  | { ok: false; errorClass: QueryErrorClass; message: string };

/** A query that may be sent: its route, the text to send, its SERVICE targets and result form (a `QueryPlan` that is ok, without the syntax tree). */
export type Routed = Pick<Extract<QueryPlan, { ok: true }>, 'route' | 'query' | 'targets' | 'form'>;

/**
 * How `routeQuery` routes a query: sent (`quick`: recognised as a lone SERVICE from its tokens, the
 * text sent as written; else parsed by `planQuery`), or refused before anything is sent.
 */
type Route = (Routed & { ok: true; quick: boolean }) | Extract<QueryPlan, { ok: false }>;

/** Hints for error messages. */
interface PlanHints {
  /** Prefixes to suggest for an undeclared prefix, by name (e.g. `'' → http://valuenet/ontop/` from the build). */
  prefixes?: Record<string, string>;
  /** Largest query accepted, in characters (the reference's MAX_QUERY_CHARS, 8000). */
  maxQueryChars: number;
  /** Endpoints listed in an error message at most; over it, the message names `endpointsElsewhere` instead. */
  listEndpoints?: number;
  /** Where the full endpoint list is (default "the resource fkgqa://endpoints"). */
  endpointsElsewhere?: string;
  /**
   * Name where the registry comes from in the unknown-endpoint message (`registrySource`: an
   * endpoints file's or a build's absolute path on the server). For the operator at the shell
   * (`fkgqa query`) and serve's own endpoints; never for an agent (`fkgqa mcp`), which must not see
   * the server's file paths. Default false: the message says "the registered endpoints".
   */
  registrySource?: boolean;
  /**
   * Deepest bracket nesting accepted (`{ ( [`, default MAX_QUERY_DEPTH = 64, as the shard
   * endpoints): checked on the text before sparqljs, which needs seconds and overflows its stack
   * on thousands of nested groups, and runs on the caller's thread.
   */
  maxQueryDepth?: number;
}

/** Well-known prefixes suggested when a query uses one undeclared. */
const COMMON_PREFIXES: Record<string, string> = {
  rdf: 'http://www.w3.org/1999/02/22-rdf-syntax-ns#',
  rdfs: 'http://www.w3.org/2000/01/rdf-schema#',
  xsd: 'http://www.w3.org/2001/XMLSchema#',
  owl: 'http://www.w3.org/2002/07/owl#',
  void: 'http://rdfs.org/ns/void#',
};

const UPDATE_KEYWORDS = /^\s*(?:(?:PREFIX\s+[^\s:]*:\s*<[^>]*>|BASE\s+<[^>]*>)\s*)*(INSERT|DELETE|LOAD|CLEAR|CREATE|DROP|COPY|MOVE|ADD|WITH)\b/i;

/**
 * The endpoints for an error message: `  <url>  (<id>)` per line — URLs and names only, never a
 * catalogue description (which only the high_level setup gives, section 5 of the FKGQA paper). Over
 * `max` endpoints, the first few (at most 5) and a line saying how many more there are and where
 * they are all listed.
 * @param elsewhere where the full list is, e.g. "the description of run_sparql_query"
 */
export function listEndpoints(endpoints: RegisteredEndpoint[], max = 100, elsewhere = 'the resource fkgqa://endpoints'): string {
  const line = (e: RegisteredEndpoint) => `  ${e.url}  (${e.id})`;
  if (endpoints.length <= max) return endpoints.map(line).join('\n');
  const few = endpoints.slice(0, Math.min(5, max));
  return [...few.map(line), `  … and ${endpoints.length - few.length} more (${endpoints.length} endpoints, listed in ${elsewhere})`].join('\n');
}

/**
 * Where a registry's endpoints came from, in words for an error message (`EndpointRegistry.source`):
 * `the endpoints file <path>` (a serve's endpoints file, `--endpoints` or the build's running serve),
 * `--endpoint-base over the build <path>`, `the --endpoint URLs`, a serve's own endpoints (its
 * `/federation/sparql`); several joined by "and".
 */
export function registrySource(r: Pick<EndpointRegistry, 'source'>): string {
  return r.source
    .split(' + ')
    .map((part) => {
      if (part.startsWith('serve:')) return `the endpoints file ${part.slice('serve:'.length)}`;
      if (part.startsWith('build:')) return `--endpoint-base over the build ${part.slice('build:'.length)}`;
      if (part === 'urls') return 'the --endpoint URLs';
      if (part === 'serve') return "this fkgqa serve's endpoints (GET / lists them)";
      return part;
    })
    .join(' and ');
}

/**
 * For an unregistered SERVICE URL, the registered endpoint with the same path (in the normal form
 * of `endpointKey`: the same shard on another host or port), and how its url differs, in words
 * (`on another host or port`, `by another scheme`, `with a user name or password …`, `with another query string`); undefined when
 * none has its path. When several have it (endpoints told apart by port alone), the one on the same
 * port (on another host or by another scheme), else none: a guess among them would name a random shard.
 */
function samePath(url: string, registry: EndpointRegistry): { endpoint: RegisteredEndpoint; differs: string } | undefined {
  const parts = (u: string) => {
    try {
      const x = new URL(endpointKey(u));
      return { scheme: x.protocol, auth: x.username + x.password, host: x.hostname, port: x.port, path: x.pathname.replace(/\/+$/, ''), search: x.search };
    } catch {
      return undefined;
    }
  };
  const p = parts(url);
  if (!p) return undefined;
  const same = registry.endpoints.flatMap((endpoint) => {
    const q = parts(endpoint.url);
    return q && q.path === p.path ? [{ endpoint, q }] : [];
  });
  // Endpoints told apart by their port alone (serve --port-per-endpoint: every path is /sparql): the one on this port, if any, else no guess.
  const pick = same.length === 1 ? same[0] : same.find(({ q }) => q.port === p.port);
  if (!pick) return undefined;
  const { endpoint, q } = pick;
  const differs =
    q.host !== p.host || q.port !== p.port
      ? 'on another host or port'
      : q.scheme !== p.scheme
        ? 'by another scheme'
        : q.auth !== p.auth
          ? 'with a user name or password, which no registered endpoint has'
          : 'with another query string';
  return { endpoint, differs };
}

/**
 * The position of a sparqljs (Jison) parse error, as every parse error names it (lexer.ts
 * `lineColumn`: lines end at CR, LF or CRLF, columns count code points). parseSparql gives the
 * offending token's offset (`hash.offset`); otherwise Jison's `hash.loc` is the token before the
 * offending one, so the offending token's text is looked for from there on.
 * @returns 1-based line and column
 */
function errorPosition(text: string, hash: { loc: { first_line: number; first_column: number }; offset?: number; token?: string; text?: string }): { line: number; column: number } {
  if (typeof hash.offset === 'number') return lineColumn(text, hash.offset);
  if (hash.token === 'EOF') return lineColumn(text, text.length);
  // The offset of Jison's line and column (Jison too ends lines at CR, LF or CRLF and counts UTF-16 code units).
  const ends = /\r\n|\r|\n/g;
  let lineStart = 0;
  for (let l = 1; l < hash.loc.first_line && ends.exec(text); l++) lineStart = ends.lastIndex;
  const from = Math.min(text.length, lineStart + hash.loc.first_column);
  const i = hash.text ? text.indexOf(hash.text, from) : -1;
  return lineColumn(text, i >= 0 ? i : from);
}

/** The parser's message, shortened for an agent: position, what was found, what was expected (first few), and the caret snippet. */
function syntaxMessage(text: string, e: Error & { hash?: { loc?: { first_line: number; first_column: number }; offset?: number; expected?: string[]; token?: string; text?: string } }): string {
  const lines = e.message.split('\n');
  const h = e.hash;
  if (!h?.loc) return `SPARQL syntax error: ${lines.join(' ')}`;
  const expected = (h.expected ?? []).map((x) => x.replace(/^'|'$/g, ''));
  const shown = expected.slice(0, 8).join(', ') + (expected.length > 8 ? `, … (${expected.length - 8} more)` : '');
  const snippet = lines.slice(1, 3).join('\n');
  const at = errorPosition(text, { ...h, loc: h.loc });
  return (
    `SPARQL syntax error at line ${at.line}, column ${at.column}: found ${h.token === 'EOF' ? 'the end of the query' : `'${h.text ?? h.token}'`}` +
    (shown ? `, expected one of: ${shown}` : '') +
    (snippet ? `\n${snippet}` : '')
  );
}

/** A message for an undeclared prefix: where it is used, and the declaration to add when the prefix is known. */
function prefixMessage(text: string, prefix: string, hints: PlanHints): string {
  const re = new RegExp(`(^|[\\s(;,.{}\\[\\]/^|!])${prefix.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:`, 'm');
  const m = re.exec(text);
  const at = m ? lineColumn(text, m.index + m[1].length) : undefined;
  const where = at ? ` (first used at line ${at.line}, column ${at.column})` : '';
  const known = hints.prefixes?.[prefix] ?? COMMON_PREFIXES[prefix];
  const name = prefix === '' ? 'the empty prefix ":"' : `the prefix "${prefix}:"`;
  const fix = known ? `declare it at the top of the query: PREFIX ${prefix}: <${known}>` : `declare it at the top of the query (PREFIX ${prefix}: <namespace IRI>) or write full IRIs in <…>`;
  return `${name} is not declared${where}: ${fix}`;
}

/** One triple pattern as SPARQL text (full IRIs), e.g. `?s <http://x/p> ?o`. */
function tripleText(t: sparqljs.Triple): string {
  const q = new sparqljs.Generator({ allPrefixes: false }).stringify({ type: 'query', queryType: 'ASK', prefixes: {}, where: [{ type: 'bgp', triples: [t] }] } as unknown as sparqljs.SparqlQuery);
  const m = /\{\s*([\s\S]*?)\s*\.?\s*\}\s*$/.exec(q);
  return (m ? m[1] : q).replace(/\s+/g, ' ').trim();
}

/** The text handed on (full IRIs, no prefix declarations; expressions bracketed only where precedence needs it: generate.ts). */
const generate = (ast: sparqljs.SparqlQuery) => generateQuery(ast);

/**
 * The checks every routed query passes first (length, nesting, update, syntax, prefixes), and its
 * parse with IRIs fixed. Pure.
 */
function parseChecked(text: string, hints: PlanHints): { ok: true; ast: sparqljs.Query } | { ok: false; errorClass: QueryErrorClass; message: string } {
  if (text.length > hints.maxQueryChars) {
    return { ok: false, errorClass: 'too-long', message: `the query has ${text.length} characters, more than the limit of ${hints.maxQueryChars}: shorten it` };
  }
  const maxDepth = hints.maxQueryDepth ?? MAX_QUERY_DEPTH;
  const nesting = measureNesting(text);
  if (nesting.depth > maxDepth) {
    return { ok: false, errorClass: 'too-deep', message: `${nestingWhat(nesting)} nest ${nesting.depth} levels, more than the limit of ${maxDepth}: flatten the query (a gold query nests at most 5)` };
  }
  if (UPDATE_KEYWORDS.test(text)) {
    return {
      ok: false,
      errorClass: 'update',
      message: 'SPARQL Update (INSERT, DELETE, LOAD, CLEAR, DROP, …) is refused: the endpoints are read-only; send a SELECT, ASK, CONSTRUCT or DESCRIBE query',
    };
  }
  let parsed: sparqljs.SparqlQuery | sparqljs.Update;
  try {
    parsed = parseSparql(text);
  } catch (e) {
    if (e instanceof QueryTooComplex) return { ok: false, errorClass: 'too-complex', message: e.message };
    const err = e as Error;
    const prefix = /^Unknown prefix: (.*)$/.exec(err.message);
    if (prefix) return { ok: false, errorClass: 'unknown-prefix', message: prefixMessage(text, prefix[1], hints) };
    return { ok: false, errorClass: 'syntax', message: syntaxMessage(text, err) };
  }
  if (parsed.type !== 'query') {
    return { ok: false, errorClass: 'update', message: 'SPARQL Update is refused: the endpoints are read-only; send a SELECT, ASK, CONSTRUCT or DESCRIBE query' };
  }
  fixIris(parsed);
  // An invalid constant pattern: 0 rows on a shard (oxigraph), an error on the engines; refused here on every route.
  const regex = invalidRegex(parsed);
  if (regex) return { ok: false, errorClass: 'syntax', message: regex };
  return { ok: true, ast: parsed };
}

/** The answer form of a query: bindings (SELECT), a boolean (ASK) or a graph (CONSTRUCT, DESCRIBE). */
const formOf = (ast: sparqljs.Query): 'bindings' | 'boolean' | 'graph' => (ast.queryType === 'ASK' ? 'boolean' : ast.queryType === 'SELECT' ? 'bindings' : 'graph');

/**
 * Plans a query without SERVICE clauses for a federation engine that selects the sources of each
 * triple pattern itself among the endpoints it is given (`fkgqa query --sources`, as
 * comunica-sparql takes its sources; `fkgqa verify`'s federated form): the checks of `planQuery`,
 * then a query naming endpoints with SERVICE is refused (it names its sources itself). Pure.
 * @returns the query to send (full IRIs, no prefix declarations) and its form, or an error
 */
export function planSourceQuery(
  text: string,
  hints: PlanHints,
): { ok: true; query: string; form: 'bindings' | 'boolean' | 'graph'; ast: sparqljs.Query } | { ok: false; errorClass: QueryErrorClass; message: string } {
  const checked = parseChecked(text, hints);
  if (!checked.ok) return checked;
  const found = serviceClauses(checked.ast.where ?? []);
  if (found.length > 0) {
    const named = found.map((s) => (s.name.termType === 'NamedNode' ? `<${s.name.value}>` : `?${s.name.value}`));
    return {
      ok: false,
      errorClass: 'service-with-sources',
      message: `the query names its endpoints with SERVICE (${[...new Set(named)].join(', ')}): run it without --sources, or leave out the SERVICE clauses and let the federation engine select the sources`,
    };
  }
  return { ok: true, query: generate(checked.ast), form: formOf(checked.ast), ast: checked.ast };
}

/**
 * Parses and routes an agent's query (see the module comment). Pure: sends nothing.
 * @param text the query as the agent wrote it
 * @param registry the endpoints SERVICE may name
 * @returns the plan, or an error whose message tells the agent what to change
 */
export function planQuery(text: string, registry: EndpointRegistry, hints: PlanHints): QueryPlan {
  const max = hints.listEndpoints ?? 100;
  const checked = parseChecked(text, hints);
  if (!checked.ok) return checked;
  const ast = checked.ast;
  const found = serviceClauses(ast.where ?? []);
  if (found.length === 0) {
    return {
      ok: false,
      errorClass: 'no-service',
      message: `the query names no endpoint: wrap its patterns in SERVICE <endpoint URL> { … } (one SERVICE per endpoint; several SERVICE clauses are joined by the federation engine). Registered endpoints:\n${listEndpoints(registry.endpoints, max, hints.endpointsElsewhere)}`,
    };
  }
  const variable = found.find((s) => s.name.termType !== 'NamedNode');
  if (variable) {
    return { ok: false, errorClass: 'variable-service', message: `SERVICE ?${variable.name.value}: a variable SERVICE target is refused; name each endpoint by its URL, SERVICE <URL> { … }` };
  }
  const targets: RegisteredEndpoint[] = [];
  const unknown: string[] = [];
  for (const s of found) {
    const e = findEndpoint(registry, s.name.value);
    if (!e) {
      if (!unknown.includes(s.name.value)) unknown.push(s.name.value);
      continue;
    }
    if (!targets.includes(e)) targets.push(e);
    // Another spelling of a registered url is that endpoint: from here on it is named by its registered url (sent to, counted and blamed under it).
    if (s.name.value !== e.url) s.name = namedNodeTerm(e.url);
  }
  if (unknown.length > 0) {
    return {
      ok: false,
      errorClass: 'unknown-endpoint',
      message:
        `${unknown.map((u) => `<${u}>`).join(', ')} ${unknown.length === 1 ? 'is not a registered endpoint' : 'are not registered endpoints'}; nothing was sent. ` +
        unknown
          .map((u) => samePath(u, registry))
          .filter((x) => x !== undefined)
          .map(({ endpoint: e, differs }) => `Did you mean <${e.url}> (${e.id}, the same path ${differs})? `)
          .join('') +
        (hints.registrySource ? `The registry comes from ${registrySource(registry)}; SERVICE may name only its endpoints:` : 'SERVICE may name only the registered endpoints:') +
        `\n${listEndpoints(registry.endpoints, max, hints.endpointsElsewhere)}`,
    };
  }
  const outside = triplesOutsideServices(ast.where ?? []);
  if (outside.length > 0) {
    const shown = outside.slice(0, 3).map((t) => `  ${tripleText(t)}`);
    if (outside.length > 3) shown.push(`  … and ${outside.length - 3} more`);
    return {
      ok: false,
      errorClass: 'outside-service',
      message:
        `${outside.length === 1 ? 'this triple pattern is' : `these ${outside.length} triple patterns are`} outside every SERVICE clause, so no endpoint is named for ${outside.length === 1 ? 'it' : 'them'}:\n${shown.join('\n')}\n` +
        `wrap ${outside.length === 1 ? 'it' : 'each'} in SERVICE <endpoint URL> { … } (the endpoint that holds its data; nothing was sent). Registered endpoints:\n${listEndpoints(registry.endpoints, max, hints.endpointsElsewhere)}`,
    };
  }
  // A SERVICE inside a SERVICE (a shard endpoint answers 501), and the shapes around SERVICE no
  // federation engine answers as the unsharded graph does: the agent's query, refused before anything
  // is sent, in the words every engine's own check uses (service-check.ts).
  const refused = refusedShape(ast);
  if (refused) return { ok: false, errorClass: refused.errorClass, message: refused.message };
  const form = formOf(ast);
  let where = ast.where ?? [];
  // Groups that only wrap one group (`{ { SERVICE … } }`) change nothing.
  while (where.length === 1 && where[0].type === 'group') where = (where[0] as sparqljs.GroupPattern).patterns;
  // One target and its SERVICE group is the whole WHERE: strip the wrapper (paper, section 3);
  // not for SERVICE SILENT, whose failed request the federation engine answers with one empty solution.
  if (targets.length === 1 && found.length === 1 && where.length === 1 && where[0].type === 'service' && !(where[0] as sparqljs.ServicePattern).silent) {
    const body = { ...ast, where: (where[0] as sparqljs.ServicePattern).patterns } as sparqljs.SparqlQuery;
    return { ok: true, route: 'direct', query: generate(body), targets, form, ast };
  }
  return { ok: true, route: 'federation', query: generate(ast), targets, form, ast };
}

/** Query-form keywords of the queries `loneService` takes, and their answer's form. */
const LONE_FORMS: Record<string, Routed['form']> = { select: 'bindings', ask: 'boolean' };

/**
 * The quick route of the most common agent query — one `SERVICE <endpoint> { … }` clause that is
 * the whole WHERE of a SELECT or ASK — read from the query's tokens (lexer.ts, `sparqlTokens`), without sparqljs: the wrapper is cut out of the text and the rest
 * (prologue, projection, modifiers) sent as written. Anything else — another form, FROM, a nested
 * SERVICE, braces in the projection or after the WHERE (EXISTS, VALUES), a prefixed or relative
 * SERVICE IRI, an unregistered one, a query over the limits, REGEX or REPLACE (whose patterns
 * `planQuery` checks), an arithmetic operator (whose chains `planQuery` brackets for oxigraph) —
 * gives undefined and goes to
 * `planQuery`, as does a query the endpoint then rejects (for `planQuery`'s messages). The answer
 * is the same as through `planQuery`, which sends the same query with its prefixes expanded.
 * @returns the route `direct`, or undefined
 */
function loneService(text: string, registry: EndpointRegistry, maxQueryChars: number): Routed | undefined {
  if (text.length > maxQueryChars || nestingDepth(text) > MAX_QUERY_DEPTH) return undefined;
  type Tok = { kind: 'word' | 'iri' | 'char'; text: string; start: number; end: number };
  const toks: Tok[] = [];
  // Prefixes declared and used: an undeclared one goes to planQuery, which refuses it naming the declaration to add.
  const declared = new Set<string>();
  const used = new Set<string>();
  for (const t of sparqlTokens(text)) {
    const { start, end } = t;
    if (t.kind === 'pname' || t.kind === 'bnode') {
      const prefix = t.kind === 'bnode' ? '_' : t.text.slice(0, t.text.indexOf(':'));
      const before = toks[toks.length - 1];
      if (before?.kind === 'word' && before.text === 'prefix') declared.add(prefix);
      else used.add(prefix);
    }
    if (t.kind === 'iri') toks.push({ kind: 'iri', text: t.text.slice(1, -1), start, end });
    else if (t.kind === 'word') toks.push({ kind: 'word', text: t.text.toLowerCase(), start, end });
    else toks.push({ kind: 'char', text: t.kind === 'literal' ? t.text[0] : t.text, start, end }); // a literal is opaque
  }
  for (const p of used) if (!declared.has(p)) return undefined;
  // REGEX and REPLACE: planQuery checks their patterns (regex.ts), which needs the parse.
  if (toks.some((t) => t.kind === 'word' && (t.text === 'regex' || t.text === 'replace'))) return undefined;
  const word = (t: Tok | undefined, w: string) => t?.kind === 'word' && t.text === w;
  const ch = (t: Tok | undefined, c: string) => t?.kind === 'char' && t.text === c;
  // Arithmetic: oxigraph groups `+ -` and `* /` chains from the right, so a query with such an
  // operator (or a `-` or `/` anywhere outside IRIs and strings) goes to planQuery, whose text
  // brackets every chain from the left (generate.ts). A `*` that is the projection or COUNT's argument is no operator.
  const projectionStar = (x: number) => ['select', 'distinct', 'reduced'].some((w) => word(toks[x - 1], w)) || (ch(toks[x - 1], '(') && ch(toks[x + 1], ')'));
  if (toks.some((t, x) => t.kind !== 'iri' && (/[+\-/]/.test(t.text) || (t.text === '*' && !projectionStar(x))))) return undefined;
  // The form keyword, then the first brace (the WHERE group), outside parentheses.
  let k = 0;
  let form: Routed['form'] | undefined;
  for (; k < toks.length; k++) {
    const t = toks[k];
    if (t.kind !== 'word') continue;
    if (t.text === 'prefix' || t.text === 'base') continue;
    form = LONE_FORMS[t.text];
    break;
  }
  if (!form) return undefined;
  let parens = 0;
  for (k++; k < toks.length; k++) {
    const t = toks[k];
    if (word(t, 'from') || word(t, 'service')) return undefined;
    if (ch(t, '(')) parens++;
    else if (ch(t, ')')) parens--;
    else if (ch(t, '{')) break;
  }
  if (k >= toks.length || parens !== 0) return undefined;
  const whereOpen = toks[k];
  if (!word(toks[k + 1], 'service')) return undefined;
  const m = k + 2;
  // SERVICE SILENT turns a failed request into one solution without bindings: the federation engine's work, never the endpoint's.
  if (word(toks[m], 'silent')) return undefined;
  const iri = toks[m];
  if (iri?.kind !== 'iri' || !ch(toks[m + 1], '{')) return undefined;
  const target = findEndpoint(registry, iri.text);
  if (!target) return undefined;
  const bodyOpen = toks[m + 1];
  let depth = 0;
  let close = -1;
  for (let x = m + 1; x < toks.length; x++) {
    const t = toks[x];
    if (word(t, 'service')) return undefined;
    if (ch(t, '{')) depth++;
    else if (ch(t, '}') && --depth === 0) {
      close = x;
      break;
    }
  }
  if (close < 0 || !ch(toks[close + 1], '}')) return undefined;
  const whereClose = toks[close + 1];
  for (let x = close + 2; x < toks.length; x++) if (ch(toks[x], '{') || ch(toks[x], '}') || word(toks[x], 'service')) return undefined;
  const query = `${text.slice(0, whereOpen.end)} ${text.slice(bodyOpen.end, toks[close].start).trim()} ${text.slice(whereClose.start)}`;
  return { route: 'direct', query, targets: [target], form };
}

/**
 * The one decision of how a SERVICE query is routed (module comment), for `run_sparql_query`
 * (fkgqa mcp, and fkgqa eval's execution of the submitted query), `fkgqa query` (without
 * `--sources`) and serve's `/federation/sparql`: refused (the reasons of `planQuery`, then
 * `mixed-graphs`: `mixedGraphs`), sent directly to the endpoint of a lone SERVICE, or through the
 * federation engine. Pure: sends nothing.
 * @param text the query as written
 * @param registry the endpoints SERVICE may name
 * @param o `quick`: first try the recognition of a lone SERVICE from the query's tokens (no parse;
 *   the text sent as written), for a caller that routes again without `quick` when the endpoint
 *   rejects the text as written (HTTP 400); `mixGraphs`: let one query join endpoints of several
 *   graphs (`--mix-graphs`)
 */
export function routeQuery(text: string, registry: EndpointRegistry, hints: PlanHints, o: { quick?: boolean; mixGraphs?: boolean } = {}): Route {
  const lone = o.quick ? loneService(text, registry, hints.maxQueryChars) : undefined;
  const plan = lone ? { ok: true as const, ...lone } : planQuery(text, registry, hints);
  if (!plan.ok) return plan;
  const mixed = o.mixGraphs ? undefined : mixedGraphs(plan.targets);
  if (mixed) return { ok: false, errorClass: 'mixed-graphs', message: mixed };
  return { ok: true, route: plan.route, query: plan.query, targets: plan.targets, form: plan.form, quick: lone !== undefined };
}

/** The option that lets one query join endpoints of several graphs (`fkgqa mcp` and `fkgqa serve`). */
export const MIX_GRAPHS_OPTION = '--mix-graphs';

/**
 * Why a query may not run because its SERVICE targets are endpoints of several knowledge graphs,
 * or undefined when it may: the graphs reuse IRIs (the same class or property
 * IRI names different data in each), so a join over them mixes unrelated data. The one rule of
 * `run_sparql_query` (fkgqa mcp: error class `mixed-graphs`) and `/federation/sparql` (fkgqa
 * serve: 400); both lift it with `--mix-graphs`. Endpoints of no graph (graph null) do not count.
 * @param targets the query's SERVICE targets (QueryPlan.targets)
 * @returns the explanation (which graphs, which endpoints, what to do), naming `nothing was sent`
 */
export function mixedGraphs(targets: readonly RegisteredEndpoint[]): string | undefined {
  const byGraph = new Map<string, string[]>();
  for (const t of targets) if (t.graph !== null) byGraph.set(t.graph, [...(byGraph.get(t.graph) ?? []), t.url]);
  if (byGraph.size < 2) return undefined;
  const parts = [...byGraph].map(([g, urls]) => `${g}: ${urls.map((u) => `<${u}>`).join(', ')}`);
  return (
    `the query names endpoints of ${byGraph.size} knowledge graphs (${parts.join('; ')}); nothing was sent. ` +
    'The graphs reuse IRIs (the same class or property IRI names different data in each), so a query may name endpoints of one graph only: keep the SERVICE clauses of the graph the question is about'
  );
}
