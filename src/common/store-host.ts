/**
 * The body of a StoreWorker thread (see store-worker.ts): loads the sources into one oxigraph Store
 * and answers requests one at a time — plain queries (`StoreQuery`), or tasks handed to a handler
 * the thread script supplies (the shard endpoints run their whole query handling this way, see
 * src/serve/endpoint-thread.ts). oxigraph's queries are synchronous and cannot be cancelled
 * (oxigraph's npm build blocks its thread), so a request that runs too long is stopped by terminating the thread; a request
 * that faults the engine (see `isEngineFault`) is reported with `fault: true`, and the owner
 * discards the thread and loads a fresh one.
 */
import fs from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import type * as oxigraph from 'oxigraph';
import { isEngineFault } from './engine-fault.js';
import { instantiateOxigraph } from './oxigraph-wasm.js';
import type { StoreReply, StoreRequest, StoreSource } from './store-worker.js';

/** Answers one task in the thread; what it returns is posted back as is (structured clone). */
type TaskHandler = (store: oxigraph.Store, task: unknown) => unknown;

/** Re-exported from engine-fault.ts (which worker threads load without oxigraph's node build). */
export { isEngineFault };

/**
 * Runs the thread: loads `workerData.sources`, posts `ready` (or `failed`), then answers requests.
 * @param handler answers requests that carry a `task` (none: such requests get an error)
 */
export function hostStore(handler?: TaskHandler): void {
  // oxigraph instantiated from the module the owner compiled once (oxigraph-wasm.ts), not compiled again in this thread.
  const ox = instantiateOxigraph((workerData as { module: WebAssembly.Module }).module);
  const store = new ox.Store() as unknown as oxigraph.Store;
  const port = parentPort!;
  try {
    for (const s of (workerData as { sources: StoreSource[] }).sources) {
      store.load(fs.readFileSync(s.file), {
        format: s.format,
        to_graph_name: s.graph ? ox.namedNode(s.graph) : ox.defaultGraph(),
        no_transaction: true,
      });
    }
    port.postMessage({ type: 'ready', triples: store.size } satisfies StoreReply);
  } catch (e) {
    port.postMessage({ type: 'failed', error: (e as Error).message ?? String(e) } satisfies StoreReply);
  }

  port.on('message', (req: StoreRequest) => {
    const started = performance.now();
    try {
      if (req.query === undefined) {
        if (!handler) throw new Error('this store thread answers no tasks');
        port.postMessage({ type: 'answer', id: req.id, value: handler(store, req.task), ms: performance.now() - started } satisfies StoreReply);
        return;
      }
      const result = store.query(req.query, {
        results_format: req.resultsFormat,
        use_default_graph_as_union: req.unionDefaultGraph,
        default_graph: req.defaultGraphs?.map((g) => ox.namedNode(g)),
        named_graphs: req.namedGraphs?.map((g) => ox.namedNode(g)),
      });
      port.postMessage({ type: 'result', id: req.id, body: result as string, ms: performance.now() - started } satisfies StoreReply);
    } catch (e) {
      const error = (e as Error)?.message ?? String(e);
      port.postMessage({ type: 'error', id: req.id, error, ms: performance.now() - started, ...(isEngineFault(e) ? { fault: true } : {}) } satisfies StoreReply);
    }
  });
}
