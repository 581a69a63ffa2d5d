/**
 * Worker-thread entry of StoreWorker (see store-worker.ts): holds one oxigraph Store and answers
 * queries one at a time. oxigraph's queries are synchronous and cannot be cancelled (pitfall B10),
 * so a query that runs too long is stopped by terminating this thread.
 */
import fs from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import * as oxigraph from 'oxigraph';
import type { StoreRequest, StoreReply, StoreSource } from './store-worker.js';

const store = new oxigraph.Store();
const port = parentPort!;

function load(sources: StoreSource[]): void {
  for (const s of sources) {
    store.load(fs.readFileSync(s.file), {
      format: s.format,
      to_graph_name: s.graph ? oxigraph.namedNode(s.graph) : oxigraph.defaultGraph(),
      no_transaction: true,
    });
  }
}

try {
  load((workerData as { sources: StoreSource[] }).sources);
  port.postMessage({ type: 'ready', triples: store.size } satisfies StoreReply);
} catch (e) {
  port.postMessage({ type: 'failed', error: (e as Error).message ?? String(e) } satisfies StoreReply);
}

port.on('message', (req: StoreRequest) => {
  const started = performance.now();
  try {
    const result = store.query(req.query, {
      results_format: req.resultsFormat,
      use_default_graph_as_union: req.unionDefaultGraph,
      default_graph: req.defaultGraphs?.map((g) => oxigraph.namedNode(g)),
      named_graphs: req.namedGraphs?.map((g) => oxigraph.namedNode(g)),
    });
    port.postMessage({ type: 'result', id: req.id, body: result as string, ms: performance.now() - started } satisfies StoreReply);
  } catch (e) {
    port.postMessage({ type: 'error', id: req.id, error: (e as Error).message ?? String(e), ms: performance.now() - started } satisfies StoreReply);
  }
});
