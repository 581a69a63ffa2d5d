/**
 * `run_sparql_query {query, format?, timeout_ms?}` (the reference's names and bounds, field notes
 * §0; FKGQA paper section 3): plan the query (query.ts), send it directly or through the
 * federation engine (src/federation/: routing, bounded client, engine), bound its time and
 * answer, and answer the agent with a preview plus
 * "showing N of M rows". A timeout is an error, never an empty result. Every call is logged.
 */
import { Parser as N3Parser, Writer as N3Writer } from 'n3';
import { truncateBindings, truncateNTriples, type JsonResults } from '../sparql/results.js';
import type { McpToolContext } from './context.js';
import { planQuery, type QueryPlan } from '../federation/routing.js';
import type { SparqlOutcome } from '../federation/client.js';

/** The result formats an agent may ask for (the reference server's list). */
export const RESULT_FORMATS = ['application/sparql-results+json', 'text/turtle', 'application/ld+json', 'text/n3'] as const;
export type ResultFormat = (typeof RESULT_FORMATS)[number];

/** Arguments of run_sparql_query. */
export interface RunQueryArgs {
  query: string;
  /** Default `application/sparql-results+json`; the RDF formats apply to CONSTRUCT and DESCRIBE. */
  format?: ResultFormat;
  /** Time limit in ms, within the limits' min..max (default `limits.defaultTimeoutMs`). */
  timeout_ms?: number;
}

/** What run_sparql_query answered. */
export interface RunQueryResult {
  /** The text shown to the agent. */
  text: string;
  isError: boolean;
  route: 'direct' | 'federation' | 'error';
  /** Why it failed (see CallLogEntry.errorClass). */
  errorClass?: string;
  /** Rows (triples for graphs, 1 for ASK) of the full answer. */
  rows?: number;
  truncated?: boolean;
  /** The full answer as SPARQL JSON results (SELECT/ASK), for the harness; absent for graphs and errors. */
  results?: JsonResults;
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

/** Error text for an outcome that is not an answer. */
function failure(o: Exclude<SparqlOutcome, { status: 'ok' }>, plan: Extract<QueryPlan, { ok: true }>, timeoutMs: number, maxTimeoutMs: number): { errorClass: string; message: string } {
  const where = plan.route === 'direct' ? `the endpoint ${plan.targets[0].url}` : `the federation engine (SERVICE ${plan.targets.map((t) => `<${t.url}>`).join(', ')})`;
  if (o.status === 'timeout' && o.endpointLimitMs !== undefined) {
    return { errorClass: 'timeout', message: `timeout: ${where} stopped the query at its time limit of ${o.endpointLimitMs} ms — this is not an empty result, the answer is unknown. Make the query more selective (fewer endpoints per triple pattern, FILTER, LIMIT); a larger timeout_ms does not help, the endpoint's own limit is lower.` };
  }
  if (o.status === 'timeout') {
    const more = timeoutMs < maxTimeoutMs ? `; timeout_ms may be raised up to ${maxTimeoutMs}` : '';
    return { errorClass: 'timeout', message: `timeout: ${where} did not answer within ${timeoutMs} ms — this is not an empty result, the answer is unknown. Make the query more selective (fewer endpoints per triple pattern, FILTER, LIMIT)${more}.` };
  }
  if (o.tooLarge) return { errorClass: 'too-large', message: `${o.error}: add LIMIT, select fewer variables, or aggregate (COUNT, GROUP BY)` };
  if (o.redirect) return { errorClass: 'redirect', message: `${where} failed: ${o.error}. fkgqa follows no redirect out of the registry: name the endpoint's final URL in SERVICE if it is registered` };
  if (/refused to contact/.test(o.error)) return { errorClass: 'unknown-endpoint', message: o.error };
  if (o.httpStatus) return { errorClass: o.httpStatus >= 500 ? 'endpoint' : 'endpoint-rejected', message: `${where} answered HTTP ${o.httpStatus}: ${o.error}` };
  return { errorClass: plan.route === 'federation' ? 'federation' : 'endpoint', message: `${where} failed: ${o.error}` };
}

/**
 * Runs one run_sparql_query call (see the module comment) and records it in the call log.
 * @returns the agent's text and the full answer; never throws for a bad query or a failing endpoint
 */
export async function runSparqlQuery(ctx: McpToolContext, args: RunQueryArgs): Promise<RunQueryResult> {
  const t0 = performance.now();
  const time = new Date().toISOString();
  const { limits } = ctx;
  const timeoutMs = Math.min(Math.max(args.timeout_ms ?? limits.defaultTimeoutMs, limits.minTimeoutMs), limits.maxTimeoutMs);
  const format = args.format ?? 'application/sparql-results+json';
  const plan = planQuery(args.query, ctx.registry, { maxQueryChars: limits.maxQueryChars, prefixes: ctx.prefixes });
  const finish = (r: Omit<RunQueryResult, 'ms'>, requests: Record<string, number> | null): RunQueryResult => {
    const ms = performance.now() - t0;
    ctx.callLog.record({
      time,
      tool: 'run_sparql_query',
      setup: ctx.setup,
      query: args.query,
      route: r.route,
      endpoints: plan.ok ? plan.targets.map((t) => t.url) : [],
      requests,
      ...(r.rows !== undefined ? { rows: r.rows } : {}),
      ...(r.truncated ? { truncated: true } : {}),
      ms: Math.round(ms * 10) / 10,
      ...(r.errorClass ? { errorClass: r.errorClass, error: r.text.slice(0, 1000) } : {}),
      details: { format, timeoutMs, ...(r.sent ? { sent: r.sent } : {}) },
    });
    return { ...r, ms };
  };
  if (!plan.ok) return finish({ text: `Error (${plan.errorClass}): ${plan.message}`, isError: true, route: 'error', errorClass: plan.errorClass }, {});

  const graph = plan.form === 'graph';
  const media = graph ? (plan.route === 'direct' ? GRAPH_ACCEPT : 'application/n-triples') : 'application/sparql-results+json';
  const o = plan.route === 'direct' ? await ctx.sparql.direct(plan.targets[0].url, plan.query, media, timeoutMs) : await ctx.sparql.federated(plan.query, media, timeoutMs);
  const how =
    plan.route === 'direct'
      ? `direct: the SERVICE wrapper was removed and the query sent to ${plan.targets[0].url}`
      : `federation engine over ${plan.targets.length} endpoint${plan.targets.length === 1 ? '' : 's'}`;
  if (o.status !== 'ok') {
    const f = failure(o, plan, timeoutMs, limits.maxTimeoutMs);
    return finish({ text: `Error (${f.errorClass}): ${f.message}`, isError: true, route: 'error', errorClass: f.errorClass, sent: plan.query }, o.requests);
  }
  const n = limits.previewRows;
  if (graph) {
    let nt = o.body;
    if (o.contentType !== 'application/n-triples') {
      try {
        nt = toNTriples(o.body, o.contentType);
      } catch (e) {
        return finish({ text: `Error (endpoint): the answer (${o.contentType}) does not parse as RDF: ${(e as Error).message}`, isError: true, route: 'error', errorClass: 'endpoint', sent: plan.query }, o.requests);
      }
    }
    const cut = truncateNTriples(nt, n);
    const note = cut.truncated ? `showing ${n} of ${cut.triples} triples (the rest were left out: add LIMIT or make the pattern more selective)` : `${cut.triples} triples`;
    const shown = format === 'application/ld+json' ? JSON.stringify(toJsonLd(cut.text)) : cut.text;
    const formatNote = format === 'application/sparql-results+json' ? '; as N-Triples, which is Turtle (format applies to SELECT/ASK only)' : '';
    return finish(
      { text: `${note} (${how}; ${secs(performance.now() - t0)}${formatNote})\n${shown}`, isError: false, route: plan.route, rows: cut.triples, truncated: cut.truncated, ntriples: nt, sent: plan.query },
      o.requests,
    );
  }
  let results: JsonResults;
  try {
    results = JSON.parse(o.body) as JsonResults;
  } catch {
    return finish({ text: `Error (endpoint): the answer is not SPARQL JSON results: ${o.body.slice(0, 300)}`, isError: true, route: 'error', errorClass: 'endpoint', sent: plan.query }, o.requests);
  }
  const formatNote = format !== 'application/sparql-results+json' ? `; format ${format} applies to CONSTRUCT/DESCRIBE only, so the answer is SPARQL JSON results` : '';
  if (results.boolean !== undefined) {
    return finish({ text: `ASK answer: ${results.boolean} (${how}; ${secs(performance.now() - t0)}${formatNote})\n${JSON.stringify(results)}`, isError: false, route: plan.route, rows: 1, results, sent: plan.query }, o.requests);
  }
  const cut = truncateBindings(results, n);
  const rows = cut.rows;
  const note = cut.truncated
    ? `showing ${n} of ${rows} rows (the other ${rows - n} were left out: add LIMIT/OFFSET, or aggregate with COUNT/GROUP BY)`
    : `${rows} row${rows === 1 ? '' : 's'}`;
  const preview = { head: { vars: results.head.vars ?? [] }, results: { bindings: cut.results.results?.bindings ?? [] } };
  return finish(
    { text: `${note} (${how}; ${secs(performance.now() - t0)}${formatNote})\n${JSON.stringify(preview)}`, isError: false, route: plan.route, rows, truncated: cut.truncated, results, sent: plan.query },
    o.requests,
  );
}
