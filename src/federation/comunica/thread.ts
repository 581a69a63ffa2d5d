/**
 * Worker-thread entry of EngineWorker (see worker.ts): one Comunica 4.5.0 engine answering
 * federated queries one at a time, results as SPARQL JSON. A query over its time limit is stopped
 * by terminating this thread. Every HTTP request goes through `fetchWithin` (src/federation/http.ts):
 * only the allowed endpoints, no redirect followed, each request reported before it is sent.
 */
import { parentPort } from 'node:worker_threads';
import { QueryEngine } from '@comunica/query-sparql';
import { translate } from 'sparqlalgebrajs';
import sparqljs from 'sparqljs';
import { fetchWithin, sameEndpoint } from '../http.js';
import type { EngineReply, EngineRequest } from './worker.js';

const engine = new QueryEngine();
const port = parentPort!;

/**
 * `fetch` for Comunica: within the allowed endpoints (when given), no redirect followed, every
 * request reported to the main thread before it is sent.
 */
function guardedFetch(id: number, allowed?: string[]): typeof fetch {
  return (input, init) =>
    fetchWithin(input, init, {
      allowed: (url) => !allowed || allowed.some((a) => sameEndpoint(a, url.replace(/[?#].*$/, ''))),
      count: (endpoint) => port.postMessage({ type: 'request', id, endpoint } satisfies EngineReply),
    });
}

async function run(req: EngineRequest): Promise<string> {
  // As text, Comunica keeps the query string in its context when there are no sources and then
  // sends the whole query (SERVICE clauses included) to each SERVICE endpoint; as algebra it sends
  // each SERVICE pattern alone. See README, "Verifying the federation".
  const query = req.asAlgebra ? translate(new sparqljs.Parser().parse(req.query), { quads: true, blankToVariable: true }) : req.query;
  const result = await engine.query(query, {
    sources: req.sources.map((value) => ({ type: 'sparql', value })),
    httpTimeout: req.httpTimeoutMs,
    // Unexpected HTTP errors must fail the query, never be skipped silently.
    lenient: false,
    fetch: guardedFetch(req.id, req.allowedEndpoints),
  } as Parameters<QueryEngine['query']>[1]);
  const { data } = await engine.resultToString(result, req.mediaType ?? 'application/sparql-results+json');
  let text = '';
  for await (const chunk of data) text += chunk;
  return text;
}

port.on('message', (req: EngineRequest) => {
  const started = performance.now();
  run(req).then(
    (body) => port.postMessage({ type: 'result', id: req.id, body, ms: performance.now() - started } satisfies EngineReply),
    (e) => port.postMessage({ type: 'error', id: req.id, error: ((e as Error).message ?? String(e)).split('\n').slice(0, 3).join(' '), ms: performance.now() - started } satisfies EngineReply),
  );
});
port.postMessage({ type: 'ready' } satisfies EngineReply);
