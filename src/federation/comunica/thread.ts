/**
 * Worker-thread entry of `ComunicaEngine` (engine.ts): one Comunica 4.5.0 engine built from a
 * compiled Components.js configuration (`workerData.enginePath`: federation/comunica/engine-service.cjs
 * for `comunica`, @comunica/query-sparql's engine-default.js for `comunica-default`), answering one
 * query at a time. A query past its time limit is stopped by terminating this thread.
 *
 * Every HTTP request goes through `fetchWithin` (src/federation/http.ts): URLs outside the registry
 * are refused before sending, no redirect is followed (a 3xx fails the query, naming both URLs),
 * and each request is reported to the parent before it is sent, so counts survive a termination.
 */
import { createRequire } from 'node:module';
import { parentPort, workerData } from 'node:worker_threads';
import { QueryEngineBase } from '@comunica/actor-init-query';
import { translate } from 'sparqlalgebrajs';
import sparqljs from 'sparqljs';
import { fixIris } from '../../sparql/parse.js';
import { endpointOf, fetchWithin, RedirectRefused, sameEndpoint } from '../http.js';

/** @internal workerData of the thread. */
export interface ThreadData {
  /** Absolute path of the compiled engine (a CommonJS module exporting `(variables) => actor`). */
  enginePath: string;
  /** Registered endpoint URLs: the only URLs the thread may contact. */
  endpoints: string[];
}

/** @internal A query for the thread. */
export interface ThreadRequest {
  id: number;
  /** The query text (full IRIs or its own prefixes). */
  query: string;
  /** Sources for a query without SERVICE (Comunica selects among them); empty for SERVICE-explicit queries. */
  sources: string[];
  mediaType: string;
  /** Comunica's `httpTimeout` for each request, in ms (the time left of the query). */
  httpTimeoutMs: number;
}

/** @internal A message from the thread. */
export type ThreadReply =
  | { type: 'ready' }
  /** An error raised outside any query (a late failure of a response stream Comunica abandoned). */
  | { type: 'warning'; message: string }
  /** A request about to be sent for query `id` to `endpoint` (URL without query string). */
  | { type: 'request'; id: number; endpoint: string }
  | { type: 'result'; id: number; body: string }
  | { type: 'error'; id: number; error: string; httpStatus?: number };

const data = workerData as ThreadData;
const port = parentPort!;
const require = createRequire(import.meta.url);
const engine = new QueryEngineBase(require(data.enginePath)());

/** The HTTP status of the last refused redirect of the running query (reported with its error). */
let refusedStatus: number | undefined;

/** `fetch` for Comunica: registry only, no redirect followed, every request reported before it is sent. */
function guardedFetch(id: number): typeof fetch {
  return async (input, init) => {
    try {
      return await fetchWithin(input, init, {
        allowed: (url) => data.endpoints.some((e) => sameEndpoint(e, endpointOf(url))),
        count: (endpoint) => port.postMessage({ type: 'request', id, endpoint } satisfies ThreadReply),
      });
    } catch (e) {
      if (e instanceof RedirectRefused) refusedStatus = e.status;
      throw e;
    }
  };
}

async function run(req: ThreadRequest): Promise<string> {
  let query: unknown = req.query;
  if (req.sources.length === 0) {
    // As algebra, not text: given text and no sources, Comunica 4.5 keeps the query string in its
    // context and its SPARQL source then sends the whole query, SERVICE clauses included, to each
    // SERVICE endpoint; as algebra each SERVICE pattern is sent alone.
    const ast = new sparqljs.Parser().parse(req.query);
    fixIris(ast); // pitfall B1: sparqljs keeps `\#` of prefixed names in IRIs
    query = translate(ast as sparqljs.SparqlQuery, { quads: true, blankToVariable: true });
  }
  const result = await engine.query(query as string, {
    sources: req.sources.map((value) => ({ type: 'sparql', value })),
    // No httpBodyTimeout: Comunica 4.5 never clears that timer, which later aborts a response body
    // the engine stopped reading (e.g. after LIMIT), and the stream's error then crashed the thread
    // during another query. Bodies are bounded by the query's time limit (thread termination).
    httpTimeout: req.httpTimeoutMs,
    httpRetryCount: 0,
    // Unexpected HTTP errors must fail the query, never be skipped silently.
    lenient: false,
    fetch: guardedFetch(req.id),
  } as Parameters<QueryEngineBase['query']>[1]);
  const { data: stream } = await engine.resultToString(result, req.mediaType);
  let text = '';
  for await (const chunk of stream) text += chunk;
  return text;
}

port.on('message', (req: ThreadRequest) => {
  refusedStatus = undefined;
  run(req).then(
    (body) => port.postMessage({ type: 'result', id: req.id, body } satisfies ThreadReply),
    (e: unknown) => {
      const error = ((e as Error)?.message ?? String(e)).split('\n').slice(0, 3).join(' ');
      const status = refusedStatus ?? Number(/\(HTTP status (\d{3})\)/.exec(error)?.[1] ?? NaN);
      port.postMessage({ type: 'error', id: req.id, error, ...(Number.isFinite(status) ? { httpStatus: status } : {}) } satisfies ThreadReply);
    },
  );
});
// A response stream Comunica abandoned (early end of a query) may still fail afterwards; its error
// belongs to no running query, so it is reported and must not end the thread.
process.on('uncaughtException', (e) => port.postMessage({ type: 'warning', message: `stray error after a query: ${(e as Error)?.message ?? String(e)}` } satisfies ThreadReply));
process.on('unhandledRejection', (e) => port.postMessage({ type: 'warning', message: `stray rejection after a query: ${(e as Error)?.message ?? String(e)}` } satisfies ThreadReply));
port.postMessage({ type: 'ready' } satisfies ThreadReply);
