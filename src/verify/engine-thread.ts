/**
 * Worker-thread entry of EngineWorker (see engine-worker.ts): one Comunica 4.5.0 engine answering
 * federated queries one at a time, results as SPARQL JSON. A query over its time limit is stopped
 * by terminating this thread.
 */
import { parentPort } from 'node:worker_threads';
import { QueryEngine } from '@comunica/query-sparql';
import { translate } from 'sparqlalgebrajs';
import sparqljs from 'sparqljs';
import type { EngineReply, EngineRequest } from './engine-worker.js';

const engine = new QueryEngine();
const port = parentPort!;

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
  } as Parameters<QueryEngine['query']>[1]);
  const { data } = await engine.resultToString(result, 'application/sparql-results+json');
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
