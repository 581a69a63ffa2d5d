/**
 * `run_sparql_query {query, format?, timeout_ms?, offset?, max_chars?}` (the reference's names and
 * bounds, field notes §0; FKGQA paper section 3): route the query (`routeQuery` of
 * src/federation/routing.ts, with the quick recognition of a lone SERVICE clause), send it directly or through the
 * federation engine (src/federation/: routing, bounded client, engine), bound its time and answer,
 * and answer the agent with one page of rows ("rows 1–100 of 2345; pass offset=100 to continue",
 * src/mcp/paging.ts). A timeout is an error, never an empty result. With several knowledge graphs
 * in the registry a query may name endpoints of one graph only (they reuse IRIs), unless the
 * server mixes graphs. Every call is logged; every error carries `_meta["fkgqa/error"]`
 * (tool-error.ts).
 */
import { Parser as N3Parser, Writer as N3Writer } from 'n3';
import { jsonTerm, sparqlTerm, tableHeader, tableRow, type SparqlResults } from '../sparql/results.js';
import { prologuePrefixes } from '../sparql/parse.js';
import { voidNotes } from './void-check.js';
import type { McpToolContext } from './context.js';
import { federationDeadline } from '../federation/limit.js';
import { routeQuery, type Routed } from '../federation/routing.js';
import type { EndpointRegistry } from '../federation/registry.js';
import { tooLargeAdvice, type SparqlOutcome } from '../federation/client.js';
import { pageArgs, pageNote, pickPage } from './paging.js';
import { connectionFailure, endpointNamed, firstUnreachable, infrastructureMessage, infrastructureStatus, type ToolErrorMeta } from './tool-error.js';

/**
 * The result formats an agent may ask for: `table` (the default), then the reference server's list.
 * `table` is one header line of `?variables` and one line per row, tab-separated, each term written
 * as a SPARQL query writes it, IRIs as prefixed names of the query's own PREFIX declarations
 * (`sparqlTerm` of src/sparql/results.ts; the SPARQL 1.1 TSV results format with prefixed names),
 * and a graph answer one triple per line in the same syntax; `application/sparql-results+json` is the
 * full SPARQL JSON results of the reference server.
 */
export const RESULT_FORMATS = ['table', 'application/sparql-results+json', 'text/turtle', 'application/ld+json', 'text/n3'] as const;
export type ResultFormat = (typeof RESULT_FORMATS)[number];
/** The format of an answer when the agent names none: the compact table (about a third of SPARQL JSON's characters). */
const DEFAULT_RESULT_FORMAT: ResultFormat = 'table';

/** Arguments of run_sparql_query. */
interface RunQueryArgs {
  query: string;
  /** Default `table` (DEFAULT_RESULT_FORMAT); the RDF formats apply to CONSTRUCT and DESCRIBE. */
  format?: ResultFormat;
  /** Time limit in ms, within the limits' min..max (default `limits.defaultTimeoutMs`). */
  timeout_ms?: number;
  /** Rows (triples) of the answer skipped before the page shown (default 0). */
  offset?: number;
  /** Characters of the answer shown, within the limits' bounds (default `limits.defaultMaxChars`). */
  max_chars?: number;
}

/** What run_sparql_query answered. */
interface RunQueryResult {
  /** The text shown to the agent. */
  text: string;
  isError: boolean;
  route: 'direct' | 'federation' | 'error';
  /** Why it failed (see CallLogEntry.errorClass). */
  errorClass?: string;
  /** The error's `_meta["fkgqa/error"]` (class, infrastructure, endpoint). */
  error?: ToolErrorMeta;
  /** Rows (triples for graphs, 1 for ASK) of the full answer. */
  rows?: number;
  truncated?: boolean;
  /** The full answer as SPARQL JSON results (SELECT/ASK), for the harness; absent for graphs and errors. */
  results?: SparqlResults;
  /** The full answer as N-Triples (CONSTRUCT/DESCRIBE). */
  ntriples?: string;
  /** The query sent (full IRIs; the SERVICE body for `direct`). */
  sent?: string;
  ms: number;
}

const secs = (ms: number) => `${Math.round(ms)} ms`;

/** Turns N-Triples into expanded JSON-LD (one node object per subject, JSON-LD 1.1 §4.1 expanded form). */
function toJsonLd(nt: string): unknown[] {
  const nodes = new Map<string, Record<string, unknown[] | string>>();
  const ref = (t: { termType: string; value: string }) => (t.termType === 'BlankNode' ? `_:${t.value}` : t.value);
  for (const q of new N3Parser({ format: 'application/n-triples' }).parse(nt)) {
    const id = ref(q.subject);
    if (!nodes.has(id)) nodes.set(id, { '@id': id });
    const node = nodes.get(id)!;
    const o = q.object;
    const value =
      o.termType === 'Literal'
        ? { '@value': o.value, ...(o.language ? { '@language': o.language } : o.datatype.value !== 'http://www.w3.org/2001/XMLSchema#string' ? { '@type': o.datatype.value } : {}) }
        : { '@id': ref(o) };
    const p = q.predicate.value === 'http://www.w3.org/1999/02/22-rdf-syntax-ns#type' && o.termType !== 'Literal' ? '@type' : q.predicate.value;
    const list = (node[p] ??= []) as unknown[];
    list.push(p === '@type' ? ref(o) : value);
  }
  return [...nodes.values()];
}

/** What a graph answer is asked for in from one endpoint: N-Triples (one triple per line, countable), else Turtle. */
const GRAPH_ACCEPT = 'application/n-triples, text/turtle;q=0.9';

/** Re-serialises a Turtle (or other n3-readable) graph answer as N-Triples. @throws Error when it does not parse */
function toNTriples(text: string, contentType: string): string {
  const format = /n3/.test(contentType) ? 'text/n3' : 'text/turtle';
  const w = new N3Writer({ format: 'N-Triples' });
  w.addQuads(new N3Parser({ format }).parse(text));
  let out = '';
  w.end((_e, r) => (out = r));
  return out;
}

/**
 * Error text for an outcome that is not an answer, and its class: a time limit (`timeout`: the
 * caller's `timeoutMs`, or — `endpointLimitMs` of the outcome — the endpoint's own, said so), too
 * large, a redirect, an unregistered endpoint, an endpoint busy with other queries (`busy`: class
 * `endpoint`), an HTTP status, or another failure of the endpoint or the federation engine.
 */
export function failure(o: Exclude<SparqlOutcome, { status: 'ok' }>, plan: Routed, timeoutMs: number, maxTimeoutMs: number): { errorClass: string; message: string } {
  const where = plan.route === 'direct' ? `the endpoint ${plan.targets[0].url}` : `the federation engine (SERVICE ${plan.targets.map((t) => `<${t.url}>`).join(', ')})`;
  if (o.status === 'timeout' && o.endpointLimitMs !== undefined) {
    return {
      errorClass: 'timeout',
      message: `timeout: ${where} stopped the query at its time limit of ${o.endpointLimitMs} ms — this is not an empty result, the answer is unknown. Make the query more selective (fewer endpoints per triple pattern, FILTER, LIMIT); a larger timeout_ms does not help, the endpoint's own limit is lower.`,
    };
  }
  if (o.status === 'timeout') {
    const more = timeoutMs < maxTimeoutMs ? `; timeout_ms may be raised up to ${maxTimeoutMs}` : '';
    return {
      errorClass: 'timeout',
      message: `timeout: ${where} did not answer within ${timeoutMs} ms — this is not an empty result, the answer is unknown. Make the query more selective (fewer endpoints per triple pattern, FILTER, LIMIT)${more}.`,
    };
  }
  if (o.busy) {
    return {
      errorClass: 'endpoint',
      message: `${o.error} — the query waited ${o.busy.waitedMs} ms behind other queries at ${o.busy.endpoint} and was not given its time limit to run: not a fault of the query, and not an empty result (the answer is unknown). Retry it.`,
    };
  }
  if (o.tooLarge) return { errorClass: 'too-large', message: `${o.error}: ${tooLargeAdvice(plan.query)}` };
  if (o.badAnswer && !o.redirect) return { errorClass: 'endpoint', message: `${where} failed: ${o.error}` };
  if (o.redirect)
    return { errorClass: 'redirect', message: `${where} failed: ${o.error}. fkgqa follows no redirect out of the registry: name the endpoint's final URL in SERVICE if it is registered` };
  if (/refused to contact/.test(o.error)) return { errorClass: 'unknown-endpoint', message: o.error };
  // An error the query caused (an unsupported function, a query that faults the engine): the endpoint rejected it, the agent's to fix.
  if (o.queryCaused)
    return {
      errorClass: 'endpoint-rejected',
      message: `${where} answered HTTP ${o.httpStatus}: ${o.error} — the endpoint cannot evaluate the query as written: an error of the query, not of the endpoint`,
    };
  if (o.httpStatus) return { errorClass: o.httpStatus >= 500 ? 'endpoint' : 'endpoint-rejected', message: `${where} answered HTTP ${o.httpStatus}: ${o.error}` };
  return { errorClass: plan.route === 'federation' ? 'federation' : 'endpoint', message: `${where} failed: ${o.error}` };
}

/**
 * Whether a failure is the infrastructure's (tool-error.ts): a registered endpoint that cannot be
 * reached, answers 5xx/404/429 or a redirect, kept the query waiting behind others (`busy`), or a federation engine that failed for such a
 * reason or faulted; not a timeout (the query's own time limit), a too large answer, an endpoint
 * that rejected the query (4xx) or could not evaluate it as written (`queryCaused`: fkgqa serve's
 * `Fkgqa-Query-Error`, another server's 500 in words of a query error), or a query the engine could not evaluate.
 * @returns the flag and the endpoint concerned (the target of a direct query, or the registered
 *   endpoint named in the engine's message)
 */
export function failureCause(o: Exclude<SparqlOutcome, { status: 'ok' }>, plan: Routed, registry: EndpointRegistry): { infrastructure: boolean; endpoint?: string } {
  const direct = plan.route === 'direct' ? plan.targets[0].url : undefined;
  if (o.status === 'timeout' || o.tooLarge || /refused to contact/.test(o.error)) return { infrastructure: false, ...(direct ? { endpoint: direct } : {}) };
  const urls = registry.endpoints.map((e) => e.url);
  const named = direct ?? endpointNamed(o.error, urls);
  const at = named ? { endpoint: named } : {};
  if (o.queryCaused) return { infrastructure: false, ...at };
  if (o.badAnswer) return { infrastructure: true, endpoint: o.badAnswer.endpoint };
  if (o.busy) return { infrastructure: true, endpoint: o.busy.endpoint };
  const infrastructure = o.redirect ? true : o.httpStatus ? infrastructureStatus(o.httpStatus) : plan.route === 'direct' ? true : infrastructureMessage(o.error);
  return { infrastructure, ...at };
}

/** A full answer kept for the next pages of the same query. */
interface KeptAnswer {
  results?: SparqlResults;
  ntriples?: string;
  how: string;
  route: 'direct' | 'federation';
  targets: string[];
  sent: string;
  at: number;
}

/** Answers kept per server for paging (the last few answers with more rows than one page). */
const kept = new WeakMap<McpToolContext, Map<string, KeptAnswer>>();
/** Answers kept per server, and the largest kept (characters of its text), so paging needs no new query. */
const KEEP = { answers: 8, maxChars: 8 << 20, ms: 15 * 60_000 };

function keepAnswer(ctx: McpToolContext, key: string, a: KeptAnswer, size: number): void {
  if (size > KEEP.maxChars) return;
  let m = kept.get(ctx);
  if (!m) kept.set(ctx, (m = new Map()));
  m.delete(key);
  m.set(key, a);
  while (m.size > KEEP.answers) m.delete(m.keys().next().value!);
}

function keptAnswer(ctx: McpToolContext, key: string): KeptAnswer | undefined {
  const a = kept.get(ctx)?.get(key);
  return a && Date.now() - a.at <= KEEP.ms ? a : undefined;
}

/**
 * Runs one run_sparql_query call (see the module comment) and records it in the call log. With
 * `offset` > 0 the page comes from the answer kept from the last call of the same query and
 * format when there is one (so that pages of an unordered answer fit together), else the query
 * runs again.
 * @returns the agent's text and the full answer; never throws for a bad query or a failing endpoint
 */
export async function runSparqlQuery(ctx: McpToolContext, args: RunQueryArgs): Promise<RunQueryResult> {
  const t0 = performance.now();
  const time = new Date().toISOString();
  const { limits } = ctx;
  const timeoutMs = Math.min(Math.max(args.timeout_ms ?? limits.defaultTimeoutMs, limits.minTimeoutMs), limits.maxTimeoutMs);
  const format = args.format ?? DEFAULT_RESULT_FORMAT;
  const page = pageArgs(args, limits);
  const hints = { maxQueryChars: limits.maxQueryChars, prefixes: ctx.prefixes, listEndpoints: 16, endpointsElsewhere: 'the description of run_sparql_query (and the resource fkgqa://endpoints)' };
  const route = (quick: boolean) => routeQuery(args.query, ctx.registry, hints, { quick, mixGraphs: ctx.mixGraphs });
  const plan = route(true);
  const targetsOf = () => (plan.ok ? plan.targets.map((t) => t.url) : []);
  const finish = (r: Omit<RunQueryResult, 'ms'>, requests: Record<string, number> | null, extra: Record<string, unknown> = {}): RunQueryResult => {
    const ms = performance.now() - t0;
    ctx.callLog.record({
      time,
      tool: 'run_sparql_query',
      setup: ctx.setup,
      query: args.query,
      route: r.route,
      endpoints: targetsOf(),
      requests,
      ...(r.rows !== undefined ? { rows: r.rows } : {}),
      ...(r.truncated ? { truncated: true } : {}),
      ms: Math.round(ms * 10) / 10,
      ...(r.errorClass ? { errorClass: r.errorClass, error: r.text.slice(0, 1000), ...(r.error?.infrastructure ? { infrastructure: true } : {}) } : {}),
      details: { format, timeoutMs, ...(r.sent ? { sent: r.sent } : {}), ...(page.offset ? { offset: page.offset } : {}), ...extra },
    });
    return { ...r, ms };
  };
  const refuse = (errorClass: string, message: string, meta: Partial<ToolErrorMeta> = {}, requests: Record<string, number> = {}, sent?: string) =>
    finish({ text: `Error (${errorClass}): ${message}`, isError: true, route: 'error', errorClass, error: { class: errorClass, infrastructure: false, ...meta }, ...(sent ? { sent } : {}) }, requests);
  if (!plan.ok) return refuse(plan.errorClass, plan.message);
  let routed: Routed = plan;

  const key = `${format}\u0000${args.query}`;
  const keptOne = page.offset > 0 ? keptAnswer(ctx, key) : undefined;
  if (keptOne) {
    const age = Math.round((Date.now() - keptOne.at) / 1000);
    const how = `a page of the answer kept from the same query ${age} s ago; ${keptOne.how}`;
    return finish(withVoidNotes(ctx, args.query, render(ctx, keptOne, how, format, page, prologuePrefixes(args.query))), {}, { kept: true });
  }

  const graph = routed.form === 'graph';
  const media = graph ? (routed.route === 'direct' ? GRAPH_ACCEPT : 'application/n-triples') : 'application/sparql-results+json';
  // A federated query's limit counts from when the federation engine takes it (federationDeadline): the wait
  // behind the agent's other federated query and the start of a thread that replaced a stopped one are
  // the engine's, not the query's (a correct query right after a timeout was charged a timeout). The
  // wait is bounded (FEDERATION_WAIT_MS; over it: busy, the infrastructure's fault).
  const send = (r: Routed) => (r.route === 'direct' ? ctx.sparql.direct(r.targets[0].url, r.query, media, timeoutMs) : ctx.sparql.federated(r.query, media, federationDeadline(timeoutMs)));
  let o = await send(routed);
  if (plan.quick && o.status === 'error' && o.httpStatus === 400 && !o.queryCaused) {
    // The endpoint rejected the text as written: the parsed route's message says what is wrong, or its form of the query is sent
    // (not for a query the endpoint parsed and could not evaluate: the same query again would fail the same way).
    const p = route(false);
    if (!p.ok) return refuse(p.errorClass, p.message, {}, o.requests);
    routed = p;
    const again = await send(routed);
    for (const [u, c] of Object.entries(o.requests)) again.requests[u] = (again.requests[u] ?? 0) + c;
    o = again;
  }
  const how =
    routed.route === 'direct'
      ? `direct: the SERVICE wrapper was removed and the query sent to ${routed.targets[0].url}`
      : `federation engine over ${routed.targets.length} endpoint${routed.targets.length === 1 ? '' : 's'}`;
  if (o.status !== 'ok') {
    const f = failure(o, routed, timeoutMs, limits.maxTimeoutMs);
    const cause = failureCause(o, routed, ctx.registry);
    // A federation engine's "fetch failed" names no endpoint: find the one that refuses connections.
    if (o.status === 'error' && routed.route === 'federation' && cause.infrastructure && !cause.endpoint && connectionFailure(o.error)) {
      const down = await firstUnreachable(routed.targets.map((t) => t.url));
      if (down) return refuse(f.errorClass, `${f.message} (${down} cannot be reached)`, { ...cause, endpoint: down }, o.requests, routed.query);
    }
    return refuse(f.errorClass, f.message, cause, o.requests, routed.query);
  }
  const targets = routed.targets.map((t) => t.url);
  const answer = (a: Omit<KeptAnswer, 'how' | 'route' | 'targets' | 'sent' | 'at'>, size: number) => {
    const k: KeptAnswer = { ...a, how, route: routed.route, targets, sent: routed.query, at: Date.now() };
    const r = withVoidNotes(ctx, args.query, render(ctx, k, `${how}; ${secs(performance.now() - t0)}`, format, page, prologuePrefixes(args.query)));
    if (r.truncated || page.offset > 0) keepAnswer(ctx, key, k, size);
    return finish(r, o.requests);
  };
  const bad = (message: string) => refuse('endpoint', message, { infrastructure: true, ...(routed.route === 'direct' ? { endpoint: targets[0] } : {}) }, o.requests, routed.query);
  if (graph) {
    let nt = o.body;
    if (o.contentType !== 'application/n-triples') {
      try {
        nt = toNTriples(o.body, o.contentType);
      } catch (e) {
        return bad(`the answer (${o.contentType}) does not parse as RDF: ${(e as Error).message}`);
      }
    }
    return answer({ ntriples: nt }, nt.length);
  }
  let results: SparqlResults;
  try {
    results = JSON.parse(o.body) as SparqlResults;
  } catch {
    if (/^(application\/sparql-results\+xml|text\/csv|text\/tab-separated-values)$/.test(o.contentType)) {
      return bad(
        `${routed.route === 'direct' ? `the endpoint ${targets[0]}` : 'the federation engine'} answered ${o.contentType} although SPARQL JSON results (${media}) were asked for; its answer is not read`,
      );
    }
    return bad(`the answer is not SPARQL JSON results: ${o.body.slice(0, 300)}`);
  }
  return answer({ results }, o.body.length);
}

/** An answer with the VoID's notes on patterns that cannot match (void-check.ts; only in the setups with VoID) on lines after it. */
function withVoidNotes(ctx: McpToolContext, query: string, r: Omit<RunQueryResult, 'ms'>): Omit<RunQueryResult, 'ms'> {
  const notes = voidNotes(ctx, query);
  return notes.length ? { ...r, text: `${r.text}\n${notes.join('\n')}` } : r;
}

/**
 * One page of an answer as a table (`table` of RESULT_FORMATS): the page's note on the first line
 * (`3 rows`, `rows 1–100 of 2345; pass offset=100 to continue`), then for rows the header line and
 * one line per row, for a graph one triple per line (`s p o .`), for ASK `ASK answer: true`.
 * @param prefixes the query's own prefix declarations (`prologuePrefixes`), used for IRIs
 */
function renderTable(ctx: McpToolContext, a: KeptAnswer, page: { offset: number; maxChars: number }, prefixes: Record<string, string>): Omit<RunQueryResult, 'ms'> {
  const n = ctx.limits.previewRows;
  const base = { isError: false, route: a.route, sent: a.sent } as const;
  if (a.ntriples !== undefined) {
    const quads = new N3Parser({ format: 'application/n-triples' }).parse(a.ntriples);
    const line = (i: number) => `${[quads[i].subject, quads[i].predicate, quads[i].object].map((t) => sparqlTerm(jsonTerm(t), prefixes)).join(' ')} .`;
    const lineTexts = new Map<number, string>();
    const p = pickPage(
      quads.map((_, i) => i),
      page.offset,
      n,
      page.maxChars - 300,
      (i) => {
        const t = line(i);
        lineTexts.set(i, t);
        return t.length;
      },
    );
    const lines = p.items.map((i) => lineTexts.get(i)!);
    const note = pageNote({ offset: page.offset, shown: p.items.length, total: quads.length, unit: 'triples', cutByChars: p.cutByChars, maxChars: page.maxChars });
    return { ...base, text: [note, ...lines].join('\n'), rows: quads.length, truncated: page.offset > 0 || p.items.length < quads.length, ntriples: a.ntriples };
  }
  const results = a.results!;
  if (results.boolean !== undefined) return { ...base, text: `ASK answer: ${results.boolean}`, rows: 1, results };
  const vars = results.head.vars ?? [];
  const bindings = results.results?.bindings ?? [];
  const header = tableHeader(vars);
  const p = pageOfRows(bindings.length, page, n, header.length, (i) => tableRow(bindings[i], vars, prefixes));
  return { ...base, text: [p.note, header, ...p.texts].join('\n'), rows: bindings.length, truncated: p.truncated, results };
}

/**
 * One page of an answer's rows: the texts of the rows shown (at most `n`, within `page.maxChars`
 * less `reserved` characters and 300 for the note), the page's note (`rows 1–100 of 2345; pass
 * offset=100 to continue; or add LIMIT, …`), and whether rows are left out.
 * @param count rows of the answer
 * @param textOf the text of row i
 */
function pageOfRows(count: number, page: { offset: number; maxChars: number }, n: number, reserved: number, textOf: (i: number) => string): { texts: string[]; note: string; truncated: boolean } {
  const rowTexts = new Map<number, string>();
  const p = pickPage(
    Array.from({ length: count }, (_, i) => i),
    page.offset,
    n,
    page.maxChars - reserved - 300,
    (i) => {
      const t = textOf(i);
      rowTexts.set(i, t);
      return t.length;
    },
  );
  const more = page.offset + p.items.length < count;
  const note =
    pageNote({ offset: page.offset, shown: p.items.length, total: count, cutByChars: p.cutByChars, maxChars: page.maxChars }) + (more ? '; or add LIMIT, or aggregate with COUNT/GROUP BY' : '');
  return { texts: p.items.map((i) => rowTexts.get(i)!), note, truncated: page.offset > 0 || p.items.length < count };
}

/**
 * The agent's text for one page of an answer (rows, triples, or an ASK boolean): the table (the
 * default), or the reference server's formats as before (`(how)` on the note line, then SPARQL JSON
 * results, N-Triples or JSON-LD).
 * @param prefixes the query's own prefix declarations, for the table's IRIs
 */
function render(ctx: McpToolContext, a: KeptAnswer, how: string, format: ResultFormat, page: { offset: number; maxChars: number }, prefixes: Record<string, string>): Omit<RunQueryResult, 'ms'> {
  if (format === 'table') return renderTable(ctx, a, page, prefixes);
  const n = ctx.limits.previewRows;
  const base = { isError: false, route: a.route, sent: a.sent } as const;
  if (a.ntriples !== undefined) {
    const lines = a.ntriples.split('\n').filter((l) => l.trim().length > 0);
    const formatNote = format === 'application/sparql-results+json' ? '; as N-Triples, which is Turtle (format applies to SELECT/ASK only)' : '';
    const p = pickPage(lines, page.offset, n, page.maxChars - 300, (l) => l.length);
    const note = pageNote({ offset: page.offset, shown: p.items.length, total: lines.length, unit: 'triples', cutByChars: p.cutByChars, maxChars: page.maxChars });
    const nt = p.items.length ? p.items.join('\n') + '\n' : '';
    const shown = format === 'application/ld+json' ? JSON.stringify(toJsonLd(nt)) : nt;
    const truncated = page.offset > 0 || p.items.length < lines.length;
    return { ...base, text: `${note} (${how}${formatNote})\n${shown}`, rows: lines.length, truncated, ntriples: a.ntriples };
  }
  const results = a.results!;
  const formatNote = format !== 'application/sparql-results+json' ? `; format ${format} applies to CONSTRUCT/DESCRIBE only, so the answer is SPARQL JSON results` : '';
  if (results.boolean !== undefined) return { ...base, text: `ASK answer: ${results.boolean} (${how}${formatNote})\n${JSON.stringify(results)}`, rows: 1, results };
  const bindings = results.results?.bindings ?? [];
  const head = `{"head":{"vars":${JSON.stringify(results.head.vars ?? [])}},"results":{"bindings":[`;
  const p = pageOfRows(bindings.length, page, n, head.length, (i) => JSON.stringify(bindings[i]));
  return { ...base, text: `${p.note} (${how}${formatNote})\n${head}${p.texts.join(',')}]}}`, rows: bindings.length, truncated: p.truncated, results };
}
