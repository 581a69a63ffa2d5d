/**
 * Worker-thread entry of `ComunicaEngine` (engine.ts): one Comunica 4.5.0 engine built from a
 * compiled Components.js configuration (`workerData.enginePath`: federation/comunica/engine-service.cjs
 * for `comunica`, @comunica/query-sparql's engine-default.js for `comunica-default`), answering one
 * query at a time. A query past its time limit, or whose client went away, is cancelled here (`cancel`): its
 * requests in flight are aborted (their connections closed), no new one is sent, its answer stream is
 * destroyed, and once its evaluation has settled the thread says `cancelled` and takes the next query. A
 * thread that does not say so in time is terminated by the engine (engine.ts, `CANCEL_WAIT_MS`).
 *
 * Every HTTP request goes through `fetchVia` (src/common/http-client.ts): URLs outside the registry
 * are refused before sending, no redirect is followed (a 3xx fails the query, naming both URLs),
 * and each request is reported to the parent before it is sent, so counts survive a termination.
 * The registry and the answer limit come with each query (`ThreadQuery`), not with the thread: an idle
 * thread serves the next engine of the same configuration in its process (engine.ts, `park`),
 * which first empties Comunica's caches of endpoints (`ThreadQuery.engine`).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { parentPort, workerData } from 'node:worker_threads';
import type * as RDF from '@rdfjs/types';
import { DataFactory } from 'n3';
import type { Algebra } from 'sparqlalgebrajs';
import { comunicaAlgebra } from './algebra.js';
import { correctDataFactory, correctExtensionErrors, correctServiceFailures, correctSourceSelection, NO_VALUE, type ServiceCardinality, type ServiceScope } from './corrections.js';
import { type AnswerForm, CHECKED_RESULT_TYPES, queryForm, resultsProblem, unreadTypeWords } from '../answer-check.js';
import type { EndpointFault } from '../engine.js';
import { AnswerCut, AnswerUndecodable, codingsOf, endpointOf, errorBody, fetchVia, networkWords, RedirectRefused, RequestRefused, sameEndpoint } from '../../common/http-client.js';
import { readXmlResults } from '../xml-results.js';
import { SAID_MAX_CHARS, sentLimit, TIME_LIMIT_TEXT } from '../limit.js';
import { STOPPED_HEADER, TIME_LIMIT_HEADER } from '../../sparql/protocol.js';
import { AVG_FUNCTION, averageNumbers, canonicalNumber, DIVIDE_FUNCTION, divideNumbers, type NumberValue, STR_FUNCTION } from '../../sparql/builtins.js';
import { type EngineBundle, loadEngineModule } from './engine-module.js';

/** @internal workerData of the thread. */
export interface ThreadData {
  /** Absolute path of the compiled engine (a CommonJS module exporting `(variables) => actor`). */
  enginePath: string;
  /** Its bundle (engine-module.ts `bundleFor`), loaded instead when it was made from `enginePath`. */
  bundle?: EngineBundle;
  /** What a SERVICE clause's answer tells the join planner of its size (corrections.ts `ServiceCardinality`). */
  serviceCardinality: ServiceCardinality;
}

/** @internal A query for the thread. */
export interface ThreadQuery {
  type: 'query';
  id: number;
  /** The query text (full IRIs or its own prefixes). */
  query: string;
  /** Sources for a query without SERVICE (Comunica selects among them); empty for SERVICE-explicit queries. */
  sources: string[];
  /** Registered endpoint URLs (the engine's `EngineSetup.endpoints`): the only URLs the query may contact. */
  endpoints: string[];
  /** The answer limit of an encoded answer, decoded, in bytes (`fetchVia`; more is the endpoint's fault). */
  maxDecodedBytes: number;
  /**
   * The engine that sent the query (a number unique in the process). The first query of an engine that took this thread
   * over from another (engine.ts, parked threads) empties Comunica's caches of endpoints first (its SERVICE sources,
   * identified sources and their COUNT estimates): an engine sees only its own endpoints' answers, as in a thread of its own.
   */
  engine: number;
  mediaType: string;
  /** The time left of the query, in ms: what each request's `Fkgqa-Timeout` is counted from (`sentLimit`). */
  httpTimeoutMs: number;
  /** Added to Comunica's `httpTimeout` (ms): a request outlives the query's limit by the engine's wait for due answers (DUE_ANSWER_GRACE_MS). */
  graceMs: number;
}

/** @internal A message to the thread: a query, or the cancelling of query `id` (answered `cancelled` once it stopped). */
export type ThreadRequest = ThreadQuery | { type: 'cancel'; id: number };

/** @internal A message from the thread. */
export type ThreadReply =
  /** Started: the engine loaded from its bundle (engine-module.ts) or module by module; `problem`: why its bundle was not used (a warning for the user). */
  | { type: 'ready'; loadedFrom: 'bundle' | 'modules'; problem?: string }
  /** An error raised outside any query (a late failure of a response stream Comunica abandoned). */
  | { type: 'warning'; message: string }
  /** A request about to be sent for query `id` to `endpoint` (URL without query string). */
  | { type: 'request'; id: number; endpoint: string }
  /** That request has its answer's status line, or failed (`fault`: a `503` with `Fkgqa-Stopped`): for `DueAnswers` at the engine's time limit. */
  | { type: 'answered'; id: number; fault?: EndpointFault }
  | { type: 'result'; id: number; body: string }
  | { type: 'error'; id: number; error: string; httpStatus?: number; fault?: EndpointFault }
  /** Query `id` was cancelled and its evaluation has settled (or it had ended already): the thread is free. */
  | { type: 'cancelled'; id: number };

const data = workerData as ThreadData;
const port = parentPort!;
const loaded = loadEngineModule(data.enginePath, data.bundle?.of === data.enginePath ? data.bundle : undefined);
const engineActor = loaded.module.engine();
// Four defects of Comunica 4.5.0 (its source selection, ORDER BY, OPTIONAL with a condition), corrected before the first query (corrections.ts),
// and its data factory's reading of language tags in endpoints' answers.
correctSourceSelection(engineActor, loaded.module.asynciterator);
correctDataFactory(engineActor);
// Every SERVICE clause's answer read whole; its failure the query's unless SILENT, which gives one empty solution (serviceScope).
correctServiceFailures(engineActor, loaded.module.asynciterator, (clause, evaluate) => serviceScope(clause, evaluate), data.serviceCardinality);
correctExtensionErrors(engineActor);
const engine = new loaded.module.QueryEngineBase(engineActor as never);

/** The engine (`ThreadQuery.engine`) of the last query: Comunica's caches of endpoints are its. */
let lastEngine: number | undefined;

/** The HTTP status of the last refused redirect of the running query (reported with its error). */
let refusedStatus: number | undefined;

/** The first endpoint that failed the running query in its HTTP (reported with its error), and that query's id. */
let fault: EndpointFault | undefined;
let running = 0;
/** When the running query's time limit ends (Date.now() clock): each request carries what is left in `Fkgqa-Timeout`. */
let deadline = Infinity;
/**
 * The first failure of a SERVICE clause of the running query that is not SILENT: the query's, even where
 * Comunica's evaluation of an expression would pass over it (an EXISTS inside `||` or COALESCE).
 */
let serviceFailure: { error: unknown } | undefined;
/** The evaluations of SERVICE clauses of the running query not yet settled: the query ends after them (`run`). */
const servicesPending = new Set<Promise<unknown>>();
/**
 * The running query's stop: aborted by a `cancel`, it aborts the query's requests in flight, and no request is
 * sent for it after (a fresh one per query).
 */
let stopper = new AbortController();
/** The running query's answer stream, destroyed by a `cancel`. */
let answerStream: { destroy(error?: Error): unknown } | undefined;
/** The running query's evaluation, settled or not (`cancel` answers once it has). */
let evaluation: Promise<void> = Promise.resolve();
/** The query whose evaluation is running (its id): Comunica may go on with parts of a failed query while the next one runs. */
const queryContext = new AsyncLocalStorage<number>();
/** The SERVICE SILENT clause being evaluated (`serviceScope`): a fault of its endpoint inside it is not the query's. */
const silentContext = new AsyncLocalStorage<{ endpoint: string }>();

/**
 * Records the first fault of query `id` and returns an error naming the endpoint. A fault of a
 * request of an earlier query (a response stream Comunica abandoned, failing later) is not recorded.
 */
function faulted(id: number, f: EndpointFault, cause?: unknown): Error {
  // Inside a SERVICE SILENT clause a fault of its endpoint is that clause's, which gives one empty solution (serviceScope).
  const silent = silentContext.getStore();
  if (id === running && !(silent && sameEndpoint(endpointOf(silent.endpoint), f.endpoint))) fault ??= f;
  return new Error(`the endpoint ${f.endpoint} ${f.what}`, cause === undefined ? undefined : { cause });
}

/**
 * Evaluates one SERVICE clause of the running query (`ServiceScope` of corrections.ts): the failure
 * of a clause that is not SILENT becomes the query's (`serviceFailure`); a SILENT clause's failure and
 * the faults of its endpoint inside it are dropped (it gives one empty solution). The query's answer
 * waits for every evaluation it started (`servicesPending`). An evaluation of an earlier query (which
 * Comunica may go on with after it failed) is run untracked.
 */
const serviceScope: ServiceScope = (clause, evaluate) => {
  const id = queryContext.getStore();
  if (id === undefined || id !== running) return evaluate();
  const settled = (clause.silent ? silentContext.run({ endpoint: clause.endpoint }, evaluate) : evaluate()).catch((e: unknown) => {
    if (!clause.silent && id === running) serviceFailure ??= { error: e };
    throw e;
  });
  const tracked = settled.catch(() => undefined);
  servicesPending.add(tracked);
  void tracked.then(() => servicesPending.delete(tracked));
  return settled;
};

/**
 * The answer with its body checked as it is read: a connection that closes before the end of the
 * body, a content coding that does not decode (`fetchVia`), and (for SPARQL JSON and XML results) a
 * document that is incomplete or no results document once the body ended (answer-check.ts), error
 * the body with a message naming the endpoint, which fails the query (Comunica's streaming parsers
 * otherwise keep the rows read so far, or none). The text is kept until the end only for the
 * checked media types. SPARQL XML results are held back until the end and checked as the direct
 * route checks them (`readXmlResults`: the document's structure, each binding an RDF term, no entity
 * declarations): Comunica's parser is the same sparqlxml-parse, which drops what it does not know
 * (a binding without a term became an empty row, a `<result>` after `</results>` was dropped) and
 * fails on an entity with a message naming no endpoint.
 */
function checkedAnswer(id: number, res: Response, endpoint: string, form: AnswerForm | undefined): Response {
  const raw = (res.headers.get('content-type') ?? '').split(';')[0].trim();
  const type = raw.toLowerCase();
  // A 2xx answer to a SELECT or ASK of no SPARQL results type (an error page, application/json, none, an empty 200 or a
  // 204) is this endpoint's fault; to a CONSTRUCT (Comunica's form for a lone triple pattern), one that is surely no RDF.
  // CSV and TSV are SPARQL results types that Comunica does not read (it asks for JSON or XML): the endpoint's fault too.
  const wrongType = form === 'select' || form === 'ask' ? !CHECKED_RESULT_TYPES.has(type) : type === '' || type === 'text/html' || type === 'application/json';
  if (res.ok && wrongType) {
    void res.body?.cancel().catch(() => undefined);
    throw faulted(id, { endpoint, what: unreadTypeWords(res.status, type, 'Comunica'), httpStatus: res.status });
  }
  if (!res.body) return res;
  const check = res.ok && CHECKED_RESULT_TYPES.has(type);
  const xml = check && type === 'application/sparql-results+xml';
  // An encoded answer (none is asked for) is held back too, until it decoded completely within the limit: Comunica's
  // parser would otherwise fail first on a bomb's bytes, or end its read of a gzip stream without its trailer, naming no endpoint.
  const hold = xml || codingsOf(res.headers.get('content-encoding')).length > 0;
  const held: Uint8Array[] = [];
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let bytes = 0;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      // A held-back answer is read to its end within one pull (a pull that enqueues nothing is not called again).
      for (;;) {
        let r: ReadableStreamReadResult<Uint8Array>;
        try {
          r = await reader.read();
        } catch (e) {
          const what = e instanceof AnswerUndecodable ? e.words : `closed the connection before the answer was complete (HTTP ${res.status}, ${bytes} bytes received)`;
          controller.error(faulted(id, { endpoint, what, httpStatus: res.status }, e));
          return;
        }
        if (r.done) {
          text += decoder.decode();
          const problem = !check ? undefined : xml ? ((p) => ('problem' in p ? p.problem : undefined))(await readXmlResults(text, form)) : resultsProblem(text, type, form);
          if (problem) controller.error(faulted(id, { endpoint, what: `answered something that is not a SPARQL results document (${type}): ${problem}`, httpStatus: res.status }));
          else {
            for (const c of held.splice(0)) controller.enqueue(c);
            controller.close();
          }
          return;
        }
        bytes += r.value.byteLength;
        if (check) text += decoder.decode(r.value, { stream: true });
        if (!hold) return controller.enqueue(r.value);
        held.push(r.value);
      }
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
  // Media types are case-insensitive (RFC 9110 §8.3.1); Comunica's parsers look up the type as written.
  const headers = new Headers(res.headers);
  if (raw !== type) headers.set('content-type', (res.headers.get('content-type') ?? '').replace(raw, type));
  const checked = new Response(body, { status: res.status, statusText: res.statusText, headers });
  Object.defineProperty(checked, 'url', { value: res.url });
  return checked;
}

/**
 * `fetch` for Comunica: registry only, no redirect followed, every request reported before it is sent, answers checked
 * (`checkedAnswer`); `cancelled` (the query's `cancel`) aborts its requests in flight and refuses new ones.
 */
function guardedFetch(id: number, cancelled: AbortSignal, endpoints: readonly string[], maxDecodedBytes: number): typeof fetch {
  return async (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    let res: Response;
    let sent = false;
    // The limit this request carries, and when it was sent (this thread's monotonic clock): judgeStop reads a stop with them.
    let sentLimitMs: number | undefined;
    const t0 = performance.now();
    // Past the query's limit (the engine waits for answers due, DueAnswers) nothing new is sent: a shard gets no query
    // it could only stop at once, and no stop of such a request is a verdict.
    if (id === running && Date.now() >= deadline) throw new Error(`the query's time limit ended: no request sent to ${endpointOf(url)}`);
    // A cancelled query sends nothing more (Comunica may go on with parts of it for a while).
    if (cancelled.aborted) throw new Error(`the query was cancelled: no request sent to ${endpointOf(url)}`);
    try {
      // The time the query has left, less a margin (sentLimit): fkgqa serve's shard endpoint answers busy or its time limit by then.
      // A Request's own headers when Comunica passes one without init (Comunica 4.5 passes a URL and init).
      const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
      if (Number.isFinite(deadline)) headers.set(TIME_LIMIT_HEADER, String((sentLimitMs = sentLimit(deadline - Date.now()))));
      // node:http with strict decoding of content codings (`fetchVia`: one rule with the direct route and jena).
      res = await fetchVia(
        {
          allowed: (u) => endpoints.some((e) => sameEndpoint(e, endpointOf(u))),
          count: (endpoint) => {
            sent = true;
            port.postMessage({ type: 'request', id, endpoint } satisfies ThreadReply);
          },
        },
        maxDecodedBytes,
      )(input, { ...init, headers, signal: init?.signal ? AbortSignal.any([init.signal, cancelled]) : cancelled });
    } catch (e) {
      if (sent) port.postMessage({ type: 'answered', id } satisfies ThreadReply);
      if (e instanceof RedirectRefused) refusedStatus = e.status;
      // A network failure before any answer (refused, closed, reset): the endpoint is known here, not in Comunica's "fetch failed".
      else if (!(e instanceof RequestRefused) && !(init?.signal?.aborted ?? false) && (e as Error).name !== 'AbortError' && !(e instanceof AnswerCut)) {
        throw faulted(id, { endpoint: endpointOf(url), what: networkWords(e as Error) }, e);
      }
      throw e;
    }
    const stopped = res.status === 503 ? res.headers.get(STOPPED_HEADER) : null;
    const stop: EndpointFault | undefined = stopped
      ? {
          endpoint: endpointOf(url),
          what: `answered HTTP 503 (${STOPPED_HEADER}: ${stopped.slice(0, 200)})`,
          httpStatus: 503,
          stopped,
          ...(sentLimitMs !== undefined ? { sentLimitMs } : {}),
          elapsedMs: performance.now() - t0,
        }
      : undefined;
    if (stop) faulted(id, stop);
    const elapsedMs = performance.now() - t0;
    // Posted at once, before Comunica reads the answer: a 503 at the limit the endpoint was sent is the verdict even when
    // the engine's own limit ends before Comunica fails the query (DueAnswers).
    port.postMessage({ type: 'answered', id, ...(stop ? { fault: stop } : {}) } satisfies ThreadReply);
    if (res.status === 503 && !stop) res = await saidTimeLimit(id, res, endpointOf(url), sentLimitMs, elapsedMs);
    return checkedAnswer(id, res, endpointOf(url), sentForm(url, init?.body));
  };
}

/**
 * Another server's 503 without `Fkgqa-Stopped`: its text's start is read (at most `SAID_MAX_CHARS`), and
 * when it names a time limit (`TIME_LIMIT_TEXT`: "Query timed out") it is recorded as the fault with
 * `said`, which the bounded client reads as the direct route reads such an answer (`readStop`).
 * @returns the answer with the text read, for Comunica's own message
 */
async function saidTimeLimit(id: number, res: Response, endpoint: string, sentLimitMs: number | undefined, elapsedMs: number): Promise<Response> {
  if (!res.body) return res;
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  try {
    while (bytes < SAID_MAX_CHARS) {
      const r = await reader.read();
      if (r.done) break;
      chunks.push(r.value);
      bytes += r.value.byteLength;
    }
  } catch {
    // A body cut off: what was read is its text.
  }
  void reader.cancel().catch(() => undefined);
  const text = new TextDecoder().decode(Buffer.concat(chunks)).slice(0, SAID_MAX_CHARS);
  if (TIME_LIMIT_TEXT.test(text)) {
    const what = `answered HTTP 503 saying it stopped the query at a time limit (${errorBody(text, '', 503).slice(0, 200)})`;
    faulted(id, { endpoint, what, httpStatus: 503, said: text, ...(sentLimitMs !== undefined ? { sentLimitMs } : {}), elapsedMs });
  }
  const copy = new Response(text, { status: res.status, statusText: res.statusText, headers: res.headers });
  Object.defineProperty(copy, 'url', { value: res.url });
  return copy;
}

/** The form of the query a request carries (in its urlencoded body or its URL's `query`), to check the answer's form against. */
function sentForm(url: string, body: unknown): AnswerForm | undefined {
  let q: string | null = null;
  if (body instanceof URLSearchParams) q = body.get('query');
  else if (typeof body === 'string') q = /^[\w%.*+-]+=/.test(body) ? new URLSearchParams(body).get('query') : body;
  if (q === null) {
    try {
      q = new URL(url).searchParams.get('query');
    } catch {
      q = null;
    }
  }
  return q === null ? undefined : queryForm(q);
}

/**
 * The functions fkgqa's rewrite of built-ins calls (src/sparql/builtins.ts), as Comunica's
 * `extensionFunctions`: `STR_FUNCTION` is STR with oxigraph's canonical strings of numbers,
 * `DIVIDE_FUNCTION` and `AVG_FUNCTION` are `/` and AVG with oxigraph's xsd:decimal quotient (Jena has
 * the same in JenaFederationEngine.java). An argument STR has no string for (a blank node), and a
 * quotient that is an error (not numbers, a decimal division by 0), are expression errors.
 */
const EXTENSION_FUNCTIONS: Record<string, (args: RDF.Term[]) => Promise<RDF.Term>> = {
  [STR_FUNCTION]: async ([t]) => {
    if (t?.termType === 'NamedNode') return DataFactory.literal(t.value);
    if (t?.termType !== 'Literal') throw new Error(`${NO_VALUE}: STR of a ${t?.termType ?? 'missing argument'}`);
    return DataFactory.literal(canonicalNumber(t.value, t.datatype.value) ?? t.value);
  },
  [DIVIDE_FUNCTION]: async ([a, b]) => numberTerm(divideNumbers(a as RDF.Literal, b as RDF.Literal), 'division'),
  [AVG_FUNCTION]: async ([sum, count]) => numberTerm(averageNumbers(sum as RDF.Literal, count as RDF.Literal), 'AVG'),
};

/** A computed number as a literal, or the expression error of `what`. */
function numberTerm(v: NumberValue | undefined, what: string): RDF.Term {
  if (!v) throw new Error(`${NO_VALUE}: ${what} of values that are not numbers, or by 0`);
  return DataFactory.literal(v.value, DataFactory.namedNode(v.datatype));
}

async function run(req: ThreadQuery, stop: AbortSignal): Promise<string> {
  // A thread another engine used before (engine.ts, parked threads): nothing Comunica learnt of that engine's endpoints is kept.
  if (req.engine !== lastEngine) {
    await engine.invalidateHttpCache();
    lastEngine = req.engine;
  }
  // As algebra, not text (algebra.ts: EXISTS patterns Comunica's parser cannot translate, escaped
  // local names): given text and no sources, Comunica 4.5 would also keep the query string in its
  // context and its SPARQL source then send the whole query, SERVICE clauses included, to each
  // SERVICE endpoint; as algebra each SERVICE pattern is sent alone. With sources, Comunica selects
  // sources for each triple pattern of the algebra as it does for text.
  const query = comunicaAlgebra(req.query);
  const result = await engine.query<Algebra.Operation>(query, {
    sources: req.sources.map((value) => ({ type: 'sparql', value })),
    // No httpBodyTimeout: Comunica 4.5 never clears that timer, which later aborts a response body
    // the engine stopped reading (e.g. after LIMIT), and the stream's error then crashed the thread
    // during another query. Bodies are bounded by the query's time limit (thread termination).
    httpTimeout: req.httpTimeoutMs + req.graceMs,
    httpRetryCount: 0,
    // Unexpected HTTP errors must fail the query, never be skipped silently.
    lenient: false,
    fetch: guardedFetch(req.id, stop, req.endpoints, req.maxDecodedBytes),
    extensionFunctions: EXTENSION_FUNCTIONS,
  } as Parameters<typeof engine.query<Algebra.Operation>>[1]);
  if (stop.aborted) throw new Error('the query was cancelled');
  const { data: stream } = await engine.resultToString(result, req.mediaType);
  answerStream = stream as unknown as { destroy(error?: Error): unknown };
  let text = '';
  for await (const chunk of stream) {
    if (stop.aborted) throw new Error('the query was cancelled');
    text += chunk;
  }
  // Every SERVICE clause the query started is read to its end (an ASK or LIMIT may have its answer first): a
  // failure of one that is not SILENT is the query's, whatever Comunica's evaluation made of it (Jena's reads too).
  while (servicesPending.size > 0) await Promise.all([...servicesPending]);
  if (serviceFailure) throw serviceFailure.error;
  return text;
}

/**
 * Cancels query `id` (`ThreadRequest` cancel): aborts its requests and its answer stream, and says `cancelled`
 * once its evaluation has settled; at once when it is not running (it ended before the message came).
 */
function cancel(id: number): void {
  if (id !== running || stopper.signal.aborted) {
    void evaluation.then(() => port.postMessage({ type: 'cancelled', id } satisfies ThreadReply));
    return;
  }
  stopper.abort(new Error('the query was cancelled'));
  answerStream?.destroy(new Error('the query was cancelled'));
  void evaluation.then(() => port.postMessage({ type: 'cancelled', id } satisfies ThreadReply));
}

port.on('message', (req: ThreadRequest) => {
  if (req.type === 'cancel') return cancel(req.id);
  refusedStatus = undefined;
  fault = undefined;
  serviceFailure = undefined;
  servicesPending.clear();
  running = req.id;
  deadline = Date.now() + req.httpTimeoutMs;
  const stop = (stopper = new AbortController()).signal;
  answerStream = undefined;
  evaluation = queryContext
    .run(req.id, () => run(req, stop))
    .then(
      (body) => {
        if (!stop.aborted) port.postMessage({ type: 'result', id: req.id, body } satisfies ThreadReply);
      },
      (e: unknown) => {
        // A cancelled query's failure is its cancelling: the engine has its outcome already.
        if (stop.aborted) return;
        const full = (e as Error)?.message ?? String(e);
        // Comunica quotes an endpoint's whole error answer ("… (HTTP status 500):\n<!DOCTYPE html>…"): its first line of text is kept.
        const quoted = /^([^\n]*\(HTTP status (\d{3})\)):?\s*([\s\S]*)$/.exec(full);
        const error = quoted ? `${quoted[1]}${quoted[3].trim() ? `: ${errorBody(quoted[3], '', Number(quoted[2]))}` : ''}` : full.split('\n').slice(0, 3).join(' ');
        const status = refusedStatus ?? Number(/\(HTTP status (\d{3})\)/.exec(error)?.[1] ?? NaN);
        port.postMessage({ type: 'error', id: req.id, error, ...(Number.isFinite(status) ? { httpStatus: status } : {}), ...(fault ? { fault } : {}) } satisfies ThreadReply);
      },
    );
});
// A response stream Comunica abandoned (early end of a query) may still fail afterwards; its error
// belongs to no running query, so it is reported and must not end the thread.
process.on('uncaughtException', (e) => port.postMessage({ type: 'warning', message: `stray error after a query: ${(e as Error)?.message ?? String(e)}` } satisfies ThreadReply));
process.on('unhandledRejection', (e) => port.postMessage({ type: 'warning', message: `stray rejection after a query: ${(e as Error)?.message ?? String(e)}` } satisfies ThreadReply));
port.postMessage({ type: 'ready', loadedFrom: loaded.from, ...(loaded.problem ? { problem: loaded.problem } : {}) } satisfies ThreadReply);
