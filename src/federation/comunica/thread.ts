/**
 * Worker-thread entry of EngineWorker (see engine-worker.ts): one Comunica 4.5.0 engine answering
 * federated queries one at a time, results as SPARQL JSON. A query over its time limit is stopped
 * by terminating this thread.
 */
import { parentPort } from 'node:worker_threads';
import { QueryEngine } from '@comunica/query-sparql';
import { translate } from 'sparqlalgebrajs';
import sparqljs from 'sparqljs';
import type { EngineReply, EngineRequest } from './worker.js';

const engine = new QueryEngine();
const port = parentPort!;

/** The endpoint URL of a request: the URL without query string and fragment. */
const endpointOf = (url: string) => url.replace(/[?#].*$/, '');

/** `fetch` that counts requests per endpoint and, when `allowed` is given, refuses any other URL. */
function guardedFetch(requests: Record<string, number>, allowed?: string[]): typeof fetch {
  const ok = allowed ? new Set(allowed.map((u) => u.replace(/\/+$/, ''))) : undefined;
  return (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const ep = endpointOf(url);
    if (ok && !ok.has(ep.replace(/\/+$/, ''))) return Promise.reject(new Error(`refused to contact ${ep}: not a registered endpoint`));
    requests[ep] = (requests[ep] ?? 0) + 1;
    return fetch(input, init);
  };
}

async function run(req: EngineRequest, requests: Record<string, number>): Promise<string> {
  // As text, Comunica keeps the query string in its context when there are no sources and then
  // sends the whole query (SERVICE clauses included) to each SERVICE endpoint; as algebra it sends
  // each SERVICE pattern alone. See README, "Verifying the federation".
  const query = req.asAlgebra ? translate(new sparqljs.Parser().parse(req.query), { quads: true, blankToVariable: true }) : req.query;
  const result = await engine.query(query, {
    sources: req.sources.map((value) => ({ type: 'sparql', value })),
    httpTimeout: req.httpTimeoutMs,
    // Unexpected HTTP errors must fail the query, never be skipped silently.
    lenient: false,
    fetch: guardedFetch(requests, req.allowedEndpoints),
  } as Parameters<QueryEngine['query']>[1]);
  const { data } = await engine.resultToString(result, req.mediaType ?? 'application/sparql-results+json');
  let text = '';
  for await (const chunk of data) text += chunk;
  return text;
}

port.on('message', (req: EngineRequest) => {
  const started = performance.now();
  const requests: Record<string, number> = {};
  run(req, requests).then(
    (body) => port.postMessage({ type: 'result', id: req.id, body, ms: performance.now() - started, requests } satisfies EngineReply),
    (e) =>
      port.postMessage({ type: 'error', id: req.id, error: ((e as Error).message ?? String(e)).split('\n').slice(0, 3).join(' '), ms: performance.now() - started, requests } satisfies EngineReply),
  );
});
port.postMessage({ type: 'ready' } satisfies EngineReply);
