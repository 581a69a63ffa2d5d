/**
 * The one bounded SPARQL client of fkgqa's agent-facing side (FKGQA paper, section 3): every request
 * of `run_sparql_query`, of the VoID chain of `get_void_descriptions`, of the KGVoyager tools and of
 * serve's `/federation/sparql` goes through one instance, so that
 *
 * - nothing reaches a host outside the registry: a query goes only to a registered endpoint URL,
 *   a document (VoID, service description) only to the host of a registered endpoint; no redirect
 *   leaves the registry (`send` of src/common/http-client.ts, the one HTTP client: a query is never
 *   re-sent to a redirect target, a document follows a redirect only to a registered host);
 * - every request is bounded in time (`timeoutMs`, the outcome `timeout` is never an empty answer)
 *   and in size (`maxResultBytes`, the outcome `error` with `tooLarge`);
 * - requests are counted per endpoint, per call (`requests` of each outcome) and in total (`requests`);
 * - queries with several SERVICE clauses go to the federation engine chosen by name
 *   (src/federation/engine.ts; `--federation-engine`), created at the first federated query or at `warm`.
 *
 * Queries to one endpoint use the SPARQL 1.1 Protocol, POST form (§2.1.2), on node:http with a
 * keep-alive agent (`send`: connections are reused across calls). Every request carries the
 * caller's time limit in the `Fkgqa-Timeout` header (milliseconds; `fkgqa serve` stops the query
 * there, see docs/serving.md; other servers ignore the header), and an answer `503` with
 * `Fkgqa-Stopped: time-limit; by=endpoint` (the endpoint's own, smaller limit) is told apart from
 * the caller's time limit (`endpointLimitMs` of the `timeout` outcome). A stop is read only when
 * `judgeStop` (limit.ts) believes it: it agrees with the limit sent and with the clock.
 *
 * Whose fault an endpoint's error is (`queryCaused`, docs/evaluation.md): fkgqa serve says it — a
 * query it cannot evaluate as written is answered 400 with `Fkgqa-Query-Error` (`causedByQuery`);
 * another server's 4xx is the query's by its status, a 500 when its text is a SPARQL engine's words
 * for a query error (`QUERY_ERROR_TEXT`), any other 5xx the endpoint's.
 */
import { parseSparqlJson, type SparqlRow } from '../sparql/results.js';
import { type Deadline, type FederationEngine } from './engine.js';
import { createEngine, DEFAULT_FEDERATION_ENGINE } from './engines.js';
import { type AnswerForm, CHECKED_RESULT_TYPES, queryForm, resultsProblem, SPARQL_RESULT_TYPES, unreadTypeWords } from './answer-check.js';
import { inspectQuery, quickInspect } from '../sparql/inspect.js';
import { parseSparql } from '../sparql/parse.js';
import { AnswerCut, endpointOf, errorBody, networkWords, RedirectRefused, RequestRefused, send } from '../common/http-client.js';
import { findEndpoint, type EndpointRegistry } from './registry.js';
import { judgeStop, sentLimit, stopSent, TIME_LIMIT_TEXT, type SentRequest, type Stop } from './limit.js';
import { QUERY_ERROR_HEADER, STOPPED_HEADER, TIME_LIMIT_HEADER } from '../sparql/protocol.js';

export { sentLimit } from './limit.js';

/**
 * The outcome of one query: the answer's text and media type, an error (with the HTTP status of
 * the endpoint when it answered; `tooLarge` over the size limit; `redirect` when an endpoint
 * answered with a redirect that was not followed; `queryCaused` when the endpoint's error is the
 * query's, not the endpoint's: `causedByQuery`), or the time limit — the caller's, or, with
 * `endpointLimitMs`, the endpoint's own limit (ms), which stopped the query before the caller's
 * (a longer `timeoutMs` does not help then). `requests` counts the HTTP requests sent per endpoint
 * URL (without query string).
 */
export type SparqlOutcome =
  | { status: 'ok'; body: string; contentType: string; ms: number; requests: Record<string, number> }
  | {
      status: 'error';
      error: string;
      httpStatus?: number;
      contentType?: string;
      tooLarge?: true;
      redirect?: true;
      badAnswer?: BadAnswer;
      busy?: Busy;
      queryCaused?: true;
      ms: number;
      requests: Record<string, number>;
    }
  | { status: 'timeout'; ms: number; requests: Record<string, number>; endpointLimitMs?: number };

/**
 * An endpoint that answered something other than a SPARQL result (an HTML page, another media
 * type, an HTTP error), or an incomplete one (the connection closed before the end of the answer,
 * a SPARQL results document cut off or without `results.bindings`: answer-check.ts): found on the
 * direct route, by the federation engine's HTTP (the engine's `fault`), or by
 * `BoundedSparqlClient.federated`'s probe when the engine's own message names no endpoint. An
 * endpoint misbehaving (infrastructure), never an answer with fewer rows.
 */
interface BadAnswer {
  /** The endpoint URL (registered). */
  endpoint: string;
  /** The HTTP status it answered (absent when it closed the connection before answering). */
  httpStatus?: number;
  /** The media type of its answer ('' when it sent none). */
  contentType?: string;
  /** The start of its answer's text, or the redirect it answered (for an HTTP error). */
  detail?: string;
  /** What it did, in words, after its URL (e.g. "closed the connection before the answer was complete (HTTP 200, 87 bytes received)"); set for incomplete answers. */
  problem?: string;
}

/** An endpoint that kept the query waiting behind other queries (`fkgqa serve`'s 503 busy): infrastructure, never the query's time limit. */
export interface Busy {
  /** The endpoint URL (registered). */
  endpoint: string;
  /** How long the query waited there before it started (or until it was answered), in ms. */
  waitedMs: number;
}

/**
 * How an endpoint's answer stopped the query, read by `judgeStop` (limit.ts): a `503` with `Fkgqa-Stopped`
 * (fkgqa serve), or another server's `503` whose text names a time limit (its own: the length is read
 * from "time limit of N ms" when it says so, and checked against the clock only, as such a server
 * ignores `Fkgqa-Timeout`; one that names no length, e.g. "Query timed out", is believed only when the
 * clock shows the query ran the limit sent, `judgeStop`). @returns the stop believed, or why it is not (`unbelieved`: words after "a
 * stop that"); undefined when the answer is no stop at all
 */
export function readStop(status: number, stopped: string | null, body: string, sent: SentRequest): { stop: Stop } | { unbelieved: string } | undefined {
  if (status !== 503) return undefined;
  let claim: string | Stop;
  let as = sent;
  if (stopped !== null) claim = stopped;
  else {
    if (!TIME_LIMIT_TEXT.test(body)) return undefined;
    const ms = /time limit of (\d+) ?ms/i.exec(body);
    claim = { kind: 'time-limit', by: 'endpoint', ...(ms ? { limitMs: Number(ms[1]) } : {}) };
    // A length it names is its own, not bounded by the limit sent (which it ignores); without one, the limit sent is what the clock checks.
    if (ms) as = { elapsedMs: sent.elapsedMs };
  }
  const j = judgeStop(claim, as);
  return j.believed ? { stop: j.stop } : { unbelieved: j.why };
}

/** Words for an answer whose stop `judgeStop` does not believe (after the endpoint's URL): the endpoint's error, no verdict on the query. */
function unbelievedStop(what: string, why: string): string {
  return `${what}, a stop that ${why}: neither busy nor the query's time limit, an error of the endpoint`;
}

/**
 * The text of a `500` that is a SPARQL engine's error about the query, not a failure of the endpoint
 * (the rule for servers other than fkgqa serve, docs/evaluation.md): oxigraph's "The custom function
 * <…> is not supported", an unknown or undefined function, a parse or syntax error (Jena's
 * QueryParseException, RDF4J's and Blazegraph's MalformedQueryException), Virtuoso's SPARQL compiler
 * errors (SQL state 37000, codes SP0xx). Other 5xx (502, 503, 504: a gateway, an overloaded or
 * stopped server) are never read as the query's.
 */
const QUERY_ERROR_TEXT =
  /custom function <[^>]*> is not supported|\b(?:unknown|undefined|unsupported) function\b|\bfunction <[^>]*> is (?:not (?:supported|defined|known)|unknown)|\bMalformedQueryException\b|\bQueryParseException\b|\b(?:syntax|parse) error\b|Virtuoso 37000 Error SP0\d\d/i;

/**
 * Whether an endpoint's error answer is the query's fault rather than the endpoint's: fkgqa serve
 * says so with `Fkgqa-Query-Error` (a query it cannot evaluate as written, answered 400: an unsupported
 * function, a query that faults its engine; docs/serving.md); for another server a `500` whose text
 * is a query error (`QUERY_ERROR_TEXT`). A 4xx is the query's by its status alone (tool-error.ts
 * `infrastructureStatus`), with or without this.
 */
export function causedByQuery(status: number, queryError: string | null | undefined, text: string): boolean {
  if (status < 400) return false;
  return !!queryError || (status === 500 && QUERY_ERROR_TEXT.test(text));
}

/**
 * Whether a federation engine's error may come from an endpoint's answer, so that
 * `BoundedSparqlClient.federated` probes the endpoints (`findBadAnswer`): not a syntax error (the
 * engine's parser, or an endpoint's parse error of the query: it answered, as SPARQL expects), nor
 * a time limit (the query's own, or an endpoint's own: `readStop`), nor a query the engine refused
 * before sending anything (no requests: `findBadAnswer` has nothing to probe then).
 */
function fromEndpoint(error: string): boolean {
  return !/time limit|timed out|does not parse|parse error|syntax error|lexical error/i.test(error);
}

const XML = 'application/sparql-results+xml';

/** Whether an `Accept` header names SPARQL XML results (with a q above 0). */
const acceptsXml = (accept: string): boolean => accept.split(',').some((a) => a.split(';')[0].trim().toLowerCase() === XML && !/;\s*q\s*=\s*0(?:\.0*)?\s*(?:;|$)/.test(a));

/**
 * The longest query whose form `formOf` asks the parsers for, in characters: sparqljs took 7.7 s on
 * 50,000 PREFIX declarations without a form; a model's query is at most 8,000.
 */
export const MAX_FORM_PARSE_CHARS = 20_000;

/**
 * The form of a query whose answer the direct route checks: `queryForm` (its first keyword after the
 * prologue, no parse), else — for a query of at most `MAX_FORM_PARSE_CHARS` — the quick keyword
 * inspection of src/sparql, else sparqljs; undefined when none can tell. A `graph` form seen only by
 * the fallbacks is undefined too: `queryForm` reads every prologue SPARQL allows before CONSTRUCT or
 * DESCRIBE, so such a reading is not SPARQL's (e.g. `#c\u2028ASK {}`, a comment that SPARQL does not
 * end at U+2028), and `graph` would leave the answer unchecked. The direct route checks an answer of
 * an undefined form that has a SPARQL results type as a results document of either form.
 */
export function formOf(query: string): AnswerForm | undefined {
  const quick = queryForm(query);
  if (quick) return quick;
  if (query.length > MAX_FORM_PARSE_CHARS) return undefined;
  try {
    const f = (quickInspect(query) ?? inspectQuery(query)).form;
    return f === 'bindings' ? 'select' : f === 'boolean' ? 'ask' : undefined;
  } catch {
    return undefined;
  }
}

/** An error of `BoundedSparqlClient.select`: the outcome that was not an answer. */
class SparqlQueryError extends Error {
  constructor(
    message: string,
    readonly outcome: Exclude<SparqlOutcome, { status: 'ok' }>,
  ) {
    super(message);
    this.name = 'SparqlQueryError';
  }
}

/** A document fetched with `BoundedSparqlClient.document`, or why not. */
type DocumentOutcome = { ok: true; text: string; type: string; link: string | null; url: string } | { ok: false; why: string };

/** Options of `BoundedSparqlClient`. */
interface SparqlClientOptions {
  /** Largest answer read from an endpoint or the engine, in bytes (default 32 MiB). */
  maxResultBytes?: number;
  /** The federation engine, by `--federation-engine` name (default `comunica`). */
  engine?: string;
  /** Federated queries evaluated at once (engine threads; default 1): for clients that send several at the same time. */
  parallel?: number;
}

/**
 * Sends queries to registered endpoints, directly or federated, within time and size bounds
 * (module comment). Create one per server; `close` stops the federation engine.
 */
export class BoundedSparqlClient {
  /** HTTP requests sent so far per endpoint URL, by this client and its engine. */
  readonly requests: Record<string, number> = {};
  readonly maxResultBytes: number;
  /** The name of the federation engine. */
  readonly engineName: string;
  private engine: Promise<FederationEngine> | undefined;

  /**
   * @param registry the endpoints queries may go to
   */
  constructor(
    readonly registry: EndpointRegistry,
    private readonly options: SparqlClientOptions = {},
  ) {
    this.maxResultBytes = options.maxResultBytes ?? 32 << 20;
    this.engineName = options.engine ?? DEFAULT_FEDERATION_ENGINE;
  }

  private count(into: Record<string, number>) {
    return (endpoint: string) => {
      into[endpoint] = (into[endpoint] ?? 0) + 1;
      this.requests[endpoint] = (this.requests[endpoint] ?? 0) + 1;
    };
  }

  private federation(): Promise<FederationEngine> {
    this.engine ??= createEngine(this.engineName, { endpoints: this.registry.endpoints.map((e) => e.url), parallel: this.options.parallel ?? 1, maxDecodedBytes: this.maxResultBytes });
    return this.engine;
  }

  /**
   * Sends a query to one registered endpoint.
   * @param url the endpoint URL (must be registered; another spelling of a registered url, `findEndpoint`, is sent to that url)
   * @param accept the `Accept` header
   * @param timeoutMs time limit of the request, in ms; a request over it is aborted (`timeout`), and
   *   the endpoint is told (`Fkgqa-Timeout`), so that it stops the query too
   * @returns never rejects; an unregistered URL is an `error` outcome without any request, a
   *   redirect an `error` outcome (`redirect`) without following it; a `timeout` with
   *   `endpointLimitMs` when the endpoint stopped the query at its own, smaller limit
   * @param cancel aborted when the caller no longer wants the answer (e.g. its own client went
   *   away): the request is aborted and the outcome is a `timeout`
   */
  async direct(url: string, query: string, accept: string, timeoutMs: number, cancel?: AbortSignal): Promise<SparqlOutcome> {
    const t0 = performance.now();
    const ms = () => performance.now() - t0;
    const requests: Record<string, number> = {};
    const registered = findEndpoint(this.registry, url);
    if (!registered) return { status: 'error', error: `refused to contact ${url}: not a registered endpoint`, ms: 0, requests };
    // Another spelling of a registered url is that endpoint: sent to, counted and named by its registered url.
    url = registered.url;
    // A timer cleared when the answer is in (AbortSignal.timeout leaves one pending for timeoutMs after every call).
    const limit = new AbortController();
    const timer = setTimeout(() => limit.abort(new DOMException(`no answer within ${timeoutMs} ms`, 'TimeoutError')), timeoutMs);
    const signal = cancel ? AbortSignal.any([limit.signal, cancel]) : limit.signal;
    try {
      const sent = sentLimit(timeoutMs - ms());
      const res = await send(
        {
          url,
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', accept, [TIME_LIMIT_HEADER]: String(sent) },
          body: new URLSearchParams({ query }).toString(),
          signal,
        },
        { allowed: (u) => findEndpoint(this.registry, endpointOf(u)) !== undefined, count: this.count(requests), maxBytes: this.maxResultBytes },
      );
      const body = res.text;
      if (res.encodingProblem)
        return { status: 'error', error: `the endpoint ${url} ${res.encodingProblem}`, badAnswer: { endpoint: url, httpStatus: res.status, problem: res.encodingProblem }, ms: ms(), requests };
      if (body === undefined) return { status: 'error', error: `the answer of ${url} is larger than ${this.maxResultBytes} bytes`, tooLarge: true, ms: ms(), requests };
      // fkgqa serve answers 503 when it stopped the query: busy (it waited behind others: the endpoint's fault) or at a
      // time limit, its own (by=endpoint) or the one sent here (the query's); believed only when it agrees with that limit and the clock.
      const stoppedHeader = res.header(STOPPED_HEADER.toLowerCase());
      const stop = readStop(res.status, stoppedHeader, body, { limitMs: sent, elapsedMs: ms() });
      if (stop && 'unbelieved' in stop) {
        const problem = unbelievedStop(
          stoppedHeader !== null
            ? `answered HTTP 503 (${STOPPED_HEADER}: ${stoppedHeader.trim().slice(0, 200)})`
            : `answered HTTP 503 saying it stopped the query at a time limit (${errorBody(body, '', 503).slice(0, 200)})`,
          stop.unbelieved,
        );
        return { status: 'error', error: `the endpoint ${url} ${problem}`, httpStatus: 503, badAnswer: { endpoint: url, httpStatus: 503, problem }, ms: ms(), requests };
      }
      if (stop?.stop.kind === 'busy') {
        return {
          status: 'error',
          error: `the endpoint ${url} was busy (HTTP 503): ${body.trim().slice(0, 500)}`,
          httpStatus: 503,
          busy: { endpoint: url, waitedMs: stop.stop.waitedMs },
          ms: ms(),
          requests,
        };
      }
      if (stop)
        return {
          status: 'timeout',
          ms: ms(),
          requests,
          ...(stop.stop.by === 'endpoint' && stop.stop.limitMs !== undefined && stop.stop.limitMs < timeoutMs ? { endpointLimitMs: stop.stop.limitMs } : {}),
        };
      const contentType = (res.header('content-type') ?? '').split(';')[0].trim().toLowerCase();
      if (res.status < 200 || res.status > 299) {
        const error = errorBody(body, contentType, res.status) || res.statusText;
        return {
          status: 'error',
          error,
          httpStatus: res.status,
          contentType,
          ...(causedByQuery(res.status, res.header(QUERY_ERROR_HEADER.toLowerCase()), body) ? { queryCaused: true as const } : {}),
          ms: ms(),
          requests,
        };
      }
      // An answer to a SELECT or ASK that is no complete SPARQL results document of that form — cut off, garbage, without
      // results.bindings, rows that are no RDF terms, a boolean for a SELECT — is the endpoint's fault, never "0 rows".
      // Only SPARQL JSON and XML results are read, as both federation engines read them (unreadTypeWords).
      const form = formOf(query);
      const problemWords = (problem: string) => {
        const words = `answered something that is not a SPARQL results document (${contentType || 'no content type'}): ${problem}`;
        return { status: 'error' as const, error: `the endpoint ${url} ${words}`, badAnswer: { endpoint: url, httpStatus: res.status, contentType, problem: words }, ms: ms(), requests };
      };
      // A CONSTRUCT or DESCRIBE answers RDF (not checked here); a query of a form no reader can tell is checked when it has a results type, or none.
      if (form === 'graph' || (form === undefined && contentType !== '' && !SPARQL_RESULT_TYPES.has(contentType))) return { status: 'ok', body, contentType, ms: ms(), requests };
      if (!CHECKED_RESULT_TYPES.has(contentType)) {
        const words = unreadTypeWords(res.status, contentType, 'fkgqa');
        return { status: 'error', error: `the endpoint ${url} ${words}`, badAnswer: { endpoint: url, httpStatus: res.status, contentType, problem: words }, ms: ms(), requests };
      }
      if (contentType === XML) {
        // SPARQL XML results are read whole (sparqlxml-parse) and checked as JSON is; where JSON was asked for,
        // the caller gets them as SPARQL JSON results (every reader of an answer reads JSON).
        const xml = await (await import('./xml-results.js')).readXmlResults(body, form); // loaded at the first XML answer only
        if ('problem' in xml) return problemWords(xml.problem);
        if (!acceptsXml(accept)) return { status: 'ok', body: JSON.stringify(xml.results), contentType: 'application/sparql-results+json', ms: ms(), requests };
        return { status: 'ok', body, contentType, ms: ms(), requests };
      }
      const problem = resultsProblem(body, contentType, form);
      if (problem) return problemWords(problem);
      return { status: 'ok', body, contentType, ms: ms(), requests };
    } catch (e) {
      const err = e as Error;
      if (err instanceof RedirectRefused) return { status: 'error', error: err.message, redirect: true, httpStatus: err.status, ms: ms(), requests };
      if (err instanceof RequestRefused) return { status: 'error', error: err.message, ms: ms(), requests };
      if (signal.aborted || err.name === 'TimeoutError' || err.name === 'AbortError') return { status: 'timeout', ms: ms(), requests };
      if (err instanceof AnswerCut) {
        const words = networkWords(err);
        return { status: 'error', error: `the endpoint ${url} ${words}`, badAnswer: { endpoint: url, httpStatus: err.status, problem: words }, ms: ms(), requests };
      }
      const words = networkWords(err);
      // It accepted the connection, then closed it without an answer: a faulty endpoint, not an unreachable one.
      if (/^closed the connection/.test(words)) return { status: 'error', error: `the endpoint ${url} ${words}`, badAnswer: { endpoint: url, problem: words }, ms: ms(), requests };
      // "cannot reach" is kept first: the error's classification (connectionFailure in src/mcp/tool-error.ts) reads it.
      return { status: 'error', error: `cannot reach ${url}: it ${words}`, ms: ms(), requests };
    } finally {
      clearTimeout(timer);
    }
  }

  /** True when `url` is on the host (origin) of a registered endpoint: documents are fetched from there only. */
  onRegisteredHost(url: string): boolean {
    try {
      const o = new URL(url).origin;
      return this.registry.endpoints.some((e) => new URL(e.url).origin === o);
    } catch {
      return false;
    }
  }

  /**
   * GETs a document (VoID, a service description) from the host of a registered endpoint,
   * following redirects only to such hosts.
   * @param accept the `Accept` header
   * @param timeoutMs time limit of the whole fetch, in ms
   * @returns the text, media type and `Link` header, or why not (never rejects)
   */
  async document(url: string, accept: string, timeoutMs: number): Promise<DocumentOutcome> {
    if (!this.onRegisteredHost(url)) return { ok: false, why: `${url} is not on the host of a registered endpoint (not fetched)` };
    const signal = AbortSignal.timeout(timeoutMs);
    try {
      const res = await send(
        { url, headers: { accept, [TIME_LIMIT_HEADER]: String(timeoutMs) }, signal },
        { allowed: (u) => this.onRegisteredHost(u), count: this.count({}), followRedirects: true, maxBytes: this.maxResultBytes },
      );
      if (res.text === undefined) return { ok: false, why: `${url}: the document is larger than ${this.maxResultBytes} bytes` };
      if (res.encodingProblem) return { ok: false, why: `${url} ${res.encodingProblem}` };
      if (res.status < 200 || res.status > 299) return { ok: false, why: `HTTP ${res.status} from ${url}` };
      return { ok: true, text: res.text, type: res.header('content-type') ?? 'text/turtle', link: res.header('link'), url: res.url };
    } catch (e) {
      const err = e as Error;
      if (err instanceof RedirectRefused) return { ok: false, why: err.message };
      return { ok: false, why: signal.aborted ? `no answer from ${url} within ${timeoutMs} ms` : `${url}: ${err.message}` };
    }
  }

  /**
   * Starts the federation engine now (Comunica takes 1–3 s to start) instead of at the first federated query.
   * @returns how it started, in words (FederationEngine.startedHow), when the engine says
   */
  async warm(): Promise<string | undefined> {
    const engine = await this.federation();
    await engine.warm?.();
    return engine.startedHow?.();
  }

  /**
   * Runs a query with SERVICE clauses on the federation engine, which may contact only the
   * registered endpoints, within `deadline`, passed to the engine as it is.
   * @param mediaType of the answer (`application/sparql-results+json`, `application/n-triples`, …)
   * @param deadline the query's time limit (`Deadline` of engine.ts; `from: 'call'` without `since` counts from
   *   this call, the engine's start-up and the wait for a busy engine included); the engine's work on the query
   *   is stopped when it is reached (`timeout`), or over a `from: 'start'` deadline's wait an `error` with
   *   `busy` (HTTP 503); an engine that fails to start is an `error`
   * @param cancel aborted when the caller no longer wants the answer: the engine's work is stopped as at the time limit
   * @param sources registered endpoint URLs the engine selects sources among, for a query without SERVICE clauses
   *   (engines with `selectsSources` only: `selectsSources()`)
   * @returns never rejects
   */
  async federated(query: string, mediaType: string, deadline: Deadline, cancel?: AbortSignal, sources?: string[]): Promise<SparqlOutcome> {
    const d: Deadline = deadline.from === 'call' && deadline.since === undefined ? { ...deadline, since: Date.now() } : deadline;
    const t0 = performance.now();
    const ms = () => performance.now() - t0;
    const limit = new AbortController();
    // The engine's own limit (the time left after its start) ends the query, reading the answers its endpoints already
    // reported (DueAnswers of limit.ts, no wait: the limit bounds the whole call); this timer is the backstop.
    const timer = d.from === 'start' ? undefined : setTimeout(() => limit.abort(), d.ms + 250);
    const onCancel = () => limit.abort();
    if (cancel?.aborted) limit.abort();
    else cancel?.addEventListener('abort', onCancel, { once: true });
    let o;
    try {
      const engine = await this.federation();
      o = await engine.query(query, mediaType, { deadline: d, signal: limit.signal, ...(sources?.length ? { sources } : {}) });
    } catch (e) {
      o = { status: 'error' as const, error: `the federation engine ${this.engineName} failed to start: ${(e as Error).message}`, requests: {} };
    } finally {
      clearTimeout(timer);
      cancel?.removeEventListener('abort', onCancel);
    }
    for (const [endpoint, n] of Object.entries(o.requests)) this.requests[endpoint] = (this.requests[endpoint] ?? 0) + n;
    if (o.status === 'timeout' || (o.status === 'error' && limit.signal.aborted)) return { status: 'timeout', ms: ms(), requests: o.requests };
    if (o.status === 'error' && o.busy)
      return {
        status: 'error',
        error: o.error,
        httpStatus: 503,
        busy: { endpoint: 'federation engine', waitedMs: o.waitedMs ?? (d.from === 'start' ? d.waitMs : undefined) ?? 0 },
        ms: ms(),
        requests: o.requests,
      };
    if (o.status === 'error') {
      const redirect = /with a redirect to .*: not followed/.test(o.error);
      let what = o.fault?.what;
      if (o.fault?.stopped) {
        // A shard endpoint of fkgqa serve stopped the query at the limit the engine sent it (the time the query had left) or
        // at its own: the query's time limit; or the query waited there behind others until that limit: busy, the endpoint's.
        // Believed only when it agrees with that limit and the clock (judgeStop); otherwise that endpoint's error.
        const j = judgeStop(o.fault.stopped, stopSent(o.fault));
        if (j.believed && j.stop.kind === 'busy') {
          return {
            status: 'error',
            error: `the endpoint ${o.fault.endpoint} was busy (HTTP 503, ${o.fault.stopped}): the query waited ${j.stop.waitedMs} ms there behind other queries (the federation engine ${this.engineName} said: ${o.error})`,
            httpStatus: 503,
            busy: { endpoint: o.fault.endpoint, waitedMs: j.stop.waitedMs },
            ms: ms(),
            requests: o.requests,
          };
        }
        if (j.believed) return { status: 'timeout', ms: ms(), requests: o.requests, ...(j.stop.by === 'endpoint' && j.stop.limitMs !== undefined ? { endpointLimitMs: j.stop.limitMs } : {}) };
        what = unbelievedStop(o.fault.what, j.why);
      } else if (o.fault?.said !== undefined) {
        // Another server's 503 that names a time limit in its text ("Query timed out"): read as the direct route reads it
        // (readStop): the query's time limit when it ran the limit sent, else that endpoint's error.
        const stop = readStop(503, null, o.fault.said, stopSent(o.fault));
        if (stop && 'stop' in stop)
          return {
            status: 'timeout',
            ms: ms(),
            requests: o.requests,
            ...(stop.stop.by === 'endpoint' && stop.stop.limitMs !== undefined && stop.stop.limitMs < d.ms ? { endpointLimitMs: stop.stop.limitMs } : {}),
          };
        if (stop) what = unbelievedStop(`answered HTTP 503 saying it stopped the query at a time limit (${errorBody(o.fault.said, '', 503).slice(0, 200)})`, stop.unbelieved);
      }
      if (o.fault) {
        // The engine's HTTP saw the endpoint fail (an incomplete answer, a closed connection, a stop not believed): no probe needed.
        return {
          status: 'error',
          error: `the endpoint ${o.fault.endpoint} ${what}`,
          badAnswer: { endpoint: o.fault.endpoint, ...(o.fault.httpStatus ? { httpStatus: o.fault.httpStatus } : {}), problem: what! },
          ms: ms(),
          requests: o.requests,
        };
      }
      // An endpoint's 500 in words of a query error (another server's; fkgqa serve answers such a query 400): the query's, no probe.
      if (o.httpStatus !== undefined && causedByQuery(o.httpStatus, undefined, o.error)) {
        return { status: 'error', error: o.error, httpStatus: o.httpStatus, queryCaused: true, ms: ms(), requests: o.requests };
      }
      const bad = redirect || !fromEndpoint(o.error) ? undefined : await this.findBadAnswer(o.requests, d.ms - ms());
      if (bad) {
        const what = bad.problem
          ? `the endpoint ${bad.endpoint} ${bad.problem}`
          : `the endpoint ${bad.endpoint} answered HTTP ${bad.httpStatus}${bad.contentType ? ` with content type ${bad.contentType}` : ' without a content type'}${bad.detail ? ` (${bad.detail})` : ''}, which is no SPARQL result`;
        return {
          status: 'error',
          error: `${what} (a probe with ASK {} answered so; the federation engine ${this.engineName} said: ${o.error})`,
          badAnswer: bad,
          ...(bad.httpStatus && bad.httpStatus >= 300 ? { httpStatus: bad.httpStatus } : {}),
          ...(bad.httpStatus && bad.httpStatus >= 300 && bad.httpStatus < 400 ? { redirect: true as const } : {}),
          ms: ms(),
          requests: o.requests,
        };
      }
      return { status: 'error', error: o.error, ...(o.httpStatus ? { httpStatus: o.httpStatus } : {}), ...(redirect ? { redirect: true as const } : {}), ms: ms(), requests: o.requests };
    }
    if (Buffer.byteLength(o.body) > this.maxResultBytes) return { status: 'error', error: `the answer is larger than ${this.maxResultBytes} bytes`, tooLarge: true, ms: ms(), requests: o.requests };
    return { status: 'ok', body: o.body, contentType: o.contentType || mediaType, ms: ms(), requests: o.requests };
  }

  /**
   * After a federation engine's error (whose message often names no endpoint or not what it
   * answered: Comunica's "Unknown SPARQL results content type: text/html" or "Attempted to pass
   * non-pattern operation 'join' to QuerySourceRdfJs", Jena's "Endpoint returned Content-Type:
   * text/html …"), asks each endpoint the engine contacted `ASK {}` and returns the first whose
   * answer is no SPARQL result (an HTTP status other than 2xx, or another media type). An error of
   * the query itself (every endpoint answers ASK {}) keeps the engine's message. The probes are
   * counted in `requests`.
   * @param waitMs time left for the probes, in ms (at most 5,000 are used; none below 100)
   * @returns the endpoint and what it answered, or undefined when every one answered a SPARQL result
   */
  private async findBadAnswer(requests: Record<string, number>, waitMs: number): Promise<BadAnswer | undefined> {
    const contacted = Object.keys(requests).filter((u) => findEndpoint(this.registry, u));
    if (contacted.length === 0 || waitMs < 100) return undefined;
    const probes = await Promise.all(contacted.map((u) => this.direct(u, 'ASK {}', 'application/sparql-results+json', Math.min(5_000, Math.floor(waitMs)))));
    for (const [i, p] of probes.entries()) {
      for (const [u, n] of Object.entries(p.requests)) requests[u] = (requests[u] ?? 0) + n;
      if (p.status === 'ok' && !SPARQL_RESULT_TYPES.has(p.contentType)) return { endpoint: contacted[i], httpStatus: 200, contentType: p.contentType };
      if (p.status === 'error' && p.badAnswer) return p.badAnswer;
      if (p.status === 'error' && p.httpStatus) return { endpoint: contacted[i], httpStatus: p.httpStatus, contentType: p.contentType ?? '', detail: p.error.slice(0, 200) };
    }
    return undefined;
  }

  /**
   * A SELECT query on one registered endpoint, answered as rows (for tools that compute from
   * answers, e.g. VoID statistics or class/property indexes).
   * @throws SparqlQueryError on an error, a non-JSON answer or the time limit
   */
  async select(url: string, query: string, timeoutMs: number): Promise<SparqlRow[]> {
    const o = await this.direct(url, query, 'application/sparql-results+json', timeoutMs);
    if (o.status === 'timeout') {
      throw new SparqlQueryError(
        o.endpointLimitMs !== undefined ? `${url}: the endpoint stopped the query at its time limit of ${o.endpointLimitMs} ms` : `${url}: no answer within ${timeoutMs} ms`,
        o,
      );
    }
    if (o.status === 'error') throw new SparqlQueryError(`${url}: ${o.httpStatus ? `HTTP ${o.httpStatus}: ` : ''}${o.error}`, o);
    return parseSparqlJson(o.body, url);
  }

  /**
   * Whether the federation engine selects sources itself among endpoints it is given, for queries
   * without SERVICE clauses (`FederationEngine.selectsSources`: comunica yes, jena no). Creates the
   * engine (its threads or process start at the first query).
   * @throws Error when the engine cannot run here (as `createEngine`)
   */
  async selectsSources(): Promise<boolean> {
    return (await this.federation()).selectsSources;
  }

  /** Stops the federation engine (if it was started). */
  async close(): Promise<void> {
    const e = this.engine;
    this.engine = undefined;
    if (e) await (await e.catch(() => undefined))?.close();
  }
}

/** The LIMIT of a query's outermost SELECT, CONSTRUCT or DESCRIBE, or undefined (none, or a text that does not parse). */
function outerLimit(query: string): number | undefined {
  try {
    const ast = parseSparql(query) as { type?: string; limit?: number };
    return ast.type === 'query' && typeof ast.limit === 'number' ? ast.limit : undefined;
  } catch {
    return undefined;
  }
}

/**
 * What to do about an answer over the size limit (an outcome with `tooLarge`): add LIMIT, select
 * fewer variables, or aggregate; for a query that has a LIMIT already, that the endpoint sent more
 * than those rows should take (rows with very long values, or an endpoint that sends more rows
 * than the LIMIT, or an answer that never ends), and to select fewer variables or aggregate.
 * @param query the query as sent (the outermost LIMIT is read from its parse)
 * @returns advice in words, without a leading capital or a final full stop
 */
export function tooLargeAdvice(query: string): string {
  const limit = outerLimit(query);
  if (limit === undefined) return 'add LIMIT, select fewer variables, or aggregate (COUNT, GROUP BY)';
  return `the query has LIMIT ${limit} already, so its rows hold very long values or the endpoint sent more than ${limit} rows (or an answer that does not end): select fewer variables, or aggregate (COUNT, GROUP BY)`;
}
