/**
 * `fkgqa query`: one federated SPARQL query from the shell, as `comunica-sparql` offers, through
 * the same routing as `run_sparql_query` of `fkgqa mcp` (src/federation): the endpoint registry
 * (a running serve's endpoints file, read by `readEndpointsFile`; or plain endpoint URLs),
 * `routeQuery` (SERVICE targets checked against the registry, a lone SERVICE sent directly, several
 * to the federation engine), and the bounded client (time and size limits, no request outside the
 * registry). The answer is SPARQL JSON results; `formatAnswer` writes it as an aligned table, JSON,
 * CSV or TSV (SPARQL 1.1 Query Results formats, the project's one serialiser in src/sparql/results.ts).
 */
import { Parser as N3Parser, type Quad } from 'n3';
import { InputError } from '../common/errors.js';
import { MEDIA } from '../sparql/protocol.js';
import { jsonTerm, serializeResults, type SparqlResults, type SparqlTerm } from '../sparql/results.js';
import { BoundedSparqlClient, tooLargeAdvice, type SparqlOutcome } from '../federation/client.js';
import { findEndpoint, openRegistry, placementMismatches, placementRefusal, unreachableEndpoints, type EndpointRegistry, type RegisteredEndpoint } from '../federation/registry.js';
import { federationDeadline } from '../federation/limit.js';
import { listEndpoints, MIX_GRAPHS_OPTION, planSourceQuery, registrySource, routeQuery } from '../federation/routing.js';
import { buildPrefixes } from '../build/benchmark.js';

/** Output formats of `fkgqa query`. */
export const QUERY_FORMATS = ['table', 'json', 'csv', 'tsv'] as const;
export type QueryFormat = (typeof QUERY_FORMATS)[number];

/** Options of `runQuery`. */
export interface QueryOptions {
  /** The query text. */
  query: string;
  /** A build: the endpoints of its running serve (`<state>/endpoints.json`) unless `endpointsFiles` or `urls` are given; its default prefix for error hints. */
  shards?: string;
  /** State folder of the build (default `<build>.state`). */
  state?: string;
  /** Endpoints files of running `fkgqa serve`s. */
  endpointsFiles?: string[];
  /** Plain SPARQL endpoint URLs. */
  urls?: string[];
  /** Time limit of the query, in ms (default 30,000). */
  timeoutMs?: number;
  /** The federation engine by `--federation-engine` name (default comunica). */
  federationEngine?: string;
  /** Longest query accepted, in characters (default 1,000,000: no agent's limit here). */
  maxQueryChars?: number;
  /** Largest answer read, in bytes (default 256 MiB). */
  maxResultBytes?: number;
  /** Let one query join endpoints of several graphs (`--mix-graphs`); default false: refused (`mixedGraphs`, as run_sparql_query and /federation/sparql). */
  mixGraphs?: boolean;
  /**
   * Run a query without SERVICE clauses over these registered endpoints, the federation engine
   * selecting the sources of each triple pattern (`--sources`, as comunica-sparql takes its
   * sources): `all`, graph names (their endpoints), endpoint ids or URLs (`selectSources`). Engines
   * with `selectsSources` only (comunica, comunica-default; jena is refused).
   */
  sources?: string[];
}

/** The answer of `runQuery`. */
export interface QueryAnswer {
  /**
   * `direct` (one SERVICE wrapping the whole WHERE: sent to that endpoint), `federation` (the
   * federation engine evaluates the SERVICE clauses) or `sources` (no SERVICE: the federation engine
   * selects sources among `targets`, `--sources`).
   */
  route: 'direct' | 'federation' | 'sources';
  /** The federation engine that answered (`--federation-engine` name), with route `federation`. */
  engine?: string;
  /** The SERVICE targets, in order of first appearance; with route `sources`, the endpoints given as sources. */
  targets: { id: string; url: string; /** `host:port` holding it, when its endpoints file lists a placement (registry.ts `Placement`). */ host?: string }[];
  /** `bindings` (SELECT), `boolean` (ASK) or `graph` (CONSTRUCT/DESCRIBE: triples as rows of ?subject ?predicate ?object). */
  form: 'bindings' | 'boolean' | 'graph';
  results: SparqlResults;
  /** Wall time of the query, in ms. */
  ms: number;
  /** HTTP requests sent per endpoint URL. */
  requests: Record<string, number>;
  /** Where the registry came from (e.g. `serve:/abs/shards.state/endpoints.json`). */
  registry: string;
}

/** Triples (N-Triples or Turtle text) as SPARQL JSON rows of ?subject ?predicate ?object. */
function graphAsBindings(text: string, contentType: string): SparqlResults {
  const quads: Quad[] = new N3Parser({ format: contentType.includes('turtle') ? 'text/turtle' : 'application/n-triples' }).parse(text);
  return {
    head: { vars: ['subject', 'predicate', 'object'] },
    results: { bindings: quads.map((q) => ({ subject: jsonTerm(q.subject), predicate: jsonTerm(q.predicate), object: jsonTerm(q.object) })) },
  };
}

/** The registry of `QueryOptions` (a running serve of `shards`, endpoints files, URLs). @throws InputError as `openRegistry` */
function queryRegistry(o: Pick<QueryOptions, 'shards' | 'state' | 'endpointsFiles' | 'urls'>): EndpointRegistry {
  return openRegistry({
    endpointsFiles: o.endpointsFiles,
    urls: o.urls,
    build: o.shards,
    state: o.state,
    hint: o.shards ? `start fkgqa serve --shards ${o.shards}${o.state ? ` --state ${o.state}` : ''}, or give --endpoints FILE or --endpoint URL` : undefined,
  });
}

/**
 * The registered endpoints `--sources` names, in the registry's order: `all` (every endpoint), a
 * graph name (its endpoints), an endpoint id or URL.
 * @throws InputError for a name that is none of these (naming where the registry comes from, its
 *   graphs and endpoints), or for endpoints of several graphs without `mixGraphs`
 */
function selectSources(registry: EndpointRegistry, names: string[], mixGraphs = false): RegisteredEndpoint[] {
  const chosen = new Set<RegisteredEndpoint>();
  const graphs = [...new Set(registry.endpoints.map((e) => e.graph).filter((g): g is string => g !== null))];
  for (const n of names) {
    const byGraph = n === 'all' ? registry.endpoints : registry.endpoints.filter((e) => e.graph === n);
    const one = byGraph.length ? undefined : (registry.endpoints.find((e) => e.id === n) ?? findEndpoint(registry, n));
    if (!byGraph.length && !one) {
      throw new InputError(
        `--sources ${n}: neither all, a graph (${graphs.join(', ') || 'none'}) nor an endpoint of the registry, which comes from ${registrySource(registry)}:\n${listEndpoints(registry.endpoints, 10, registrySource(registry))}`,
      );
    }
    for (const e of one ? [one] : byGraph) chosen.add(e);
  }
  const selected = registry.endpoints.filter((e) => chosen.has(e));
  const of = [...new Set(selected.map((e) => e.graph).filter((g): g is string => g !== null))];
  if (of.length > 1 && !mixGraphs) {
    throw new InputError(
      `the query is refused (mixed-graphs): --sources ${names.join(' ')} selects endpoints of ${of.length} knowledge graphs (${of.join(', ')}); nothing was sent. ` +
        `The graphs reuse IRIs (the same class or property IRI names different data in each), so a query runs over one graph's endpoints: give --sources ${of[0]} (or another graph), or ${MIX_GRAPHS_OPTION}`,
    );
  }
  return selected;
}

/**
 * What an endpoint or the federation engine did with a query that got no answer, in words: a 4xx
 * is a refusal of the query, a 5xx a failure on it, both with the status and the endpoint's message.
 */
function queryFailure(where: string, o: Extract<SparqlOutcome, { status: 'error' }>, query: string): string {
  // RedirectRefused's message names the URL, the status and the target already ("<url> answered HTTP 302 with a redirect to …: not followed").
  if (o.redirect && o.error.includes('with a redirect to')) return where.startsWith('the endpoint ') ? `the endpoint ${o.error}` : `${where} could not answer: ${o.error}`;
  if (o.redirect) return `${where} answered with a redirect, not followed: ${o.error}`;
  // Over the answer limit: not an error the endpoint answered ("the answer of <url> is larger than N bytes").
  if (o.tooLarge) return `${o.error.startsWith('the answer of ') ? o.error : `${where}: ${o.error}`} (fkgqa query's answer limit): ${tooLargeAdvice(query)}`;
  // An endpoint found answering no SPARQL result (the probe after a federation engine's error): its message names it and its status.
  if (o.badAnswer) return where.startsWith('the endpoint ') ? o.error : `${where} could not answer: ${o.error}`;
  if (o.httpStatus && o.httpStatus >= 400 && o.httpStatus < 500) return `${where} refused the query: it answered HTTP ${o.httpStatus}: ${o.error}`;
  if (o.httpStatus && o.httpStatus >= 500) return `${where} failed on the query: it answered HTTP ${o.httpStatus}: ${o.error}`;
  return `${where} answered with an error${o.httpStatus ? ` (HTTP ${o.httpStatus})` : ''}: ${o.error}`;
}

/**
 * Runs one query (module comment).
 * @throws InputError (exit 2) when the query is refused before anything is sent (the routing's
 *   message: syntax, undeclared prefix, no SERVICE, an endpoint not in the registry, a triple
 *   pattern outside every SERVICE, an update), when no registry can be opened (no running serve:
 *   named file), when an endpoint it names cannot be reached (named, with why), refuses the
 *   query or answers with an error, or when no answer comes within the time limit; with `sources`,
 *   a query with SERVICE clauses, a source that is no graph or endpoint of the registry, sources of
 *   several graphs without `mixGraphs`, an engine without source selection (jena)
 */
export async function runQuery(o: QueryOptions): Promise<QueryAnswer> {
  const timeoutMs = o.timeoutMs ?? 30_000;
  const registry = queryRegistry(o);
  // In a shell, a refusal lists at most 10 endpoints (the dev build has 92); `fkgqa questions` and
  // the endpoints file list them all.
  const hints = {
    maxQueryChars: o.maxQueryChars ?? 1_000_000,
    prefixes: buildPrefixes(o.shards ?? registry.build ?? undefined),
    listEndpoints: 10,
    // Where the whole list is: the endpoints file, or the --endpoint URLs the user gave.
    endpointsElsewhere: registrySource(registry),
    // The user at the shell is told which endpoints file or build the registry was read from.
    registrySource: true,
  };
  let plan: { route: QueryAnswer['route']; query: string; targets: RegisteredEndpoint[]; form: QueryAnswer['form'] };
  if (o.sources?.length) {
    const p = planSourceQuery(o.query, hints);
    if (!p.ok) throw new InputError(`the query is refused (${p.errorClass}); nothing was sent: ${p.message}`);
    plan = { route: 'sources', query: p.query, targets: selectSources(registry, o.sources, o.mixGraphs === true), form: p.form };
  } else {
    const p = routeQuery(o.query, registry, hints, { mixGraphs: o.mixGraphs });
    if (!p.ok) {
      const alternative =
        p.errorClass === 'no-service'
          ? '\nOr let the federation engine select the sources of each triple pattern: --sources all (or --sources <graph>).'
          : p.errorClass === 'mixed-graphs'
            ? ` (or run it with ${MIX_GRAPHS_OPTION})`
            : '';
      throw new InputError(`the query is refused (${p.errorClass})${p.message.includes('nothing was sent') ? '' : '; nothing was sent'}: ${p.message}${alternative}`);
    }
    plan = p;
  }
  // The targets must still serve the VoID their endpoints file lists (a stale endpoints file, or a serve restarted on another build): checked before anything is sent,
  // each read within VOID_READ_MS whatever --timeout. A VoID URL that answers another status or none, or an entry without the VoID's URL or digest, is refused too.
  // The VoIDs of the whole registry are read: a target listed under another endpoint's url (two urls swapped) is refused too.
  const targets = new Set(plan.targets.map((t) => t.id));
  const moved = await placementMismatches(registry, { checked: (e) => targets.has(e.id) });
  if (moved.length > 0) throw new InputError(placementRefusal(moved, true));
  const client = new BoundedSparqlClient(registry, { engine: o.federationEngine, maxResultBytes: o.maxResultBytes ?? 256 << 20 });
  const graph = plan.form === 'graph';
  const media = graph ? MEDIA.ntriples : MEDIA.json;
  const t0 = performance.now();
  let outcome: SparqlOutcome;
  try {
    if (plan.route === 'sources') {
      let selects: boolean;
      try {
        selects = await client.selectsSources();
      } catch (e) {
        throw new InputError(`the federation engine ${client.engineName} cannot run here: ${(e as Error).message}`);
      }
      if (!selects)
        throw new InputError(
          `the federation engine ${client.engineName} has no source selection (it evaluates SERVICE clauses only), so --sources cannot run on it; nothing was sent: use --federation-engine comunica, or name the endpoints with SERVICE`,
        );
    }
    outcome =
      plan.route === 'direct'
        ? await client.direct(plan.targets[0].url, plan.query, graph ? `${MEDIA.ntriples}, ${MEDIA.turtle};q=0.9` : media, timeoutMs) // The limit counts from when the engine takes the query: its start (1–3 s) is not the query's (as run_sparql_query).
        : await client.federated(plan.query, media, federationDeadline(timeoutMs), undefined, plan.route === 'sources' ? plan.targets.map((t) => t.url) : undefined);
  } finally {
    await client.close();
  }
  const ms = performance.now() - t0;
  const where =
    plan.route === 'direct'
      ? `the endpoint ${plan.targets[0].url}`
      : plan.route === 'sources'
        ? `the federation engine ${client.engineName} (sources ${plan.targets.map((t) => t.id).join(', ')})`
        : `the federation engine ${client.engineName} (SERVICE ${plan.targets.map((t) => `<${t.url}>`).join(', ')})`;
  if (outcome.status === 'timeout') throw new InputError(`no answer from ${where} within ${timeoutMs} ms: the answer is unknown, not empty (raise --timeout, or make the query more selective)`);
  if (outcome.status === 'error') {
    // Unreachable: no answer at all (connection refused, no answer in time). An endpoint that
    // answered an HTTP status (to the query, or to the ASK {} probe) is reachable: it refused.
    // An endpoint whose answer was incomplete or no SPARQL results (badAnswer) answered: it is named with what it did.
    const badAnswer = plan.route === 'direct' ? outcome.error : `${where} could not answer: ${outcome.error}`;
    if (outcome.badAnswer?.problem && outcome.badAnswer.httpStatus !== undefined) throw new InputError(badAnswer);
    const probed = await unreachableEndpoints(plan.targets.map((t) => t.url));
    // It answered the probe, but its answer to ASK {} did not end within the probe's time or size limit: a faulty endpoint, reachable.
    const endless = probed.filter((d) => d.status !== undefined && /^answered HTTP/.test(d.why));
    if (endless.length > 0) throw new InputError(`${endless.map((d) => `the endpoint ${d.url} ${d.why}`).join('; ')} (the query: ${queryFailure(where, outcome, plan.query)})`);
    const down = probed.filter((d) => d.status === undefined);
    // A connection closed before any answer is not "unreachable": the endpoint accepted it.
    const closed = down.filter((d) => /^(closed|reset) the connection/.test(d.why));
    if (closed.length > 0) throw new InputError(closed.map((d) => `the endpoint ${d.url} ${d.why}`).join('; '));
    if (down.length > 0) throw new InputError(`unreachable endpoint${down.length === 1 ? '' : 's'}: ${down.map((d) => `${d.url} (${d.why})`).join('; ')}`);
    if (outcome.badAnswer?.problem) throw new InputError(badAnswer);
    throw new InputError(queryFailure(where, outcome, plan.query));
  }
  let results: SparqlResults;
  try {
    results = graph ? graphAsBindings(outcome.body, outcome.contentType) : (JSON.parse(outcome.body) as SparqlResults);
  } catch (e) {
    // A SPARQL XML, CSV or TSV answer is no fault of its content but is not what was asked for: said plainly.
    if (!graph && /^(application\/sparql-results\+xml|text\/csv|text\/tab-separated-values)$/.test(outcome.contentType)) {
      throw new InputError(`${where} answered ${outcome.contentType} although SPARQL JSON results (${media}) were asked for; its answer is not read`);
    }
    throw new InputError(`${where} sent an answer that does not parse as ${graph ? 'RDF' : 'SPARQL JSON results'} (${outcome.contentType}): ${(e as Error).message}`);
  }
  // Only what SPARQL JSON results define (Comunica adds "metadata"), head first.
  results =
    results.boolean !== undefined ? { head: results.head ?? {}, boolean: results.boolean } : { head: { vars: results.head?.vars ?? [] }, results: { bindings: results.results?.bindings ?? [] } };
  return {
    route: plan.route,
    ...(plan.route !== 'direct' ? { engine: client.engineName } : {}),
    targets: plan.targets.map((t) => ({ id: t.id, url: t.url, ...(t.placement ? { host: t.placement.host } : {}) })),
    form: plan.form,
    results,
    ms,
    requests: outcome.requests,
    registry: registry.source,
  };
}

/** A term as the table shows it: `<iri>`, a literal's lexical form (`@lang` appended), `_:label`. */
function cellText(t: SparqlTerm | undefined): string {
  if (!t) return '';
  if (t.type === 'uri') return `<${t.value}>`;
  if (t.type === 'bnode') return `_:${t.value}`;
  const v = t.value.replace(/\r?\n/g, '\\n').replace(/\t/g, '\\t');
  return t['xml:lang'] ? `${v}@${t['xml:lang']}` : v;
}

/** An ASK answer as one row of ?boolean (for CSV and TSV, which SPARQL defines for SELECT only). */
const booleanRows = (b: boolean): SparqlResults => ({
  head: { vars: ['boolean'] },
  results: { bindings: [{ boolean: { type: 'literal', value: String(b), datatype: 'http://www.w3.org/2001/XMLSchema#boolean' } }] },
});

/**
 * Writes an answer: `table` (aligned columns, a header and a rule; ASK as `true`/`false`), `json`
 * (SPARQL 1.1 Query Results JSON), `csv` (SPARQL 1.1 Query Results CSV, CRLF line ends), `tsv`
 * (SPARQL 1.1 Query Results TSV: terms in Turtle syntax). An ASK answer in CSV/TSV is one row of ?boolean.
 */
export function formatAnswer(r: SparqlResults, format: QueryFormat): string {
  if (format === 'json') return serializeResults(r, MEDIA.json) + '\n';
  if (format === 'csv' || format === 'tsv') return serializeResults(r.boolean !== undefined ? booleanRows(r.boolean) : r, format === 'csv' ? MEDIA.csv : MEDIA.tsv);
  if (r.boolean !== undefined) return `${r.boolean}\n`;
  const vars = [...(r.head.vars ?? [])];
  const rows = (r.results?.bindings ?? []).map((b) => vars.map((v) => cellText(b[v])));
  const head = vars.map((v) => `?${v}`);
  const width = vars.map((_, i) => Math.max(head[i].length, ...rows.map((row) => row[i].length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(width[i])))
      .join('  ')
      .trimEnd();
  return [line(head), width.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n') + '\n';
}
