/**
 * A worker thread of the endpoint pool (pool.ts): one oxigraph instance, instantiated from the
 * module the main thread compiled once (src/common/oxigraph-wasm.ts), holding one `Store` per
 * endpoint it serves. It does one thing at a time, as the pool tells it: load an endpoint's files,
 * or answer one query of an endpoint (answer.ts: inspection, evaluation, serialisation). Several
 * queries may be posted at once (pool.ts, PIPELINE), several in one message; each is answered as
 * soon as it is done (its own message); before running one it swaps its flag in the ring
 * shared with the pool from pending to started, and skips it when the pool withdrew it. An answer's
 * body travels back as text (one copy, as encoding it to transferred bytes was). oxigraph's queries are
 * synchronous and cannot be cancelled (pitfall B10): the pool stops a query by terminating the thread.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import type * as oxigraph from 'oxigraph';
import { isEngineFault } from '../common/engine-fault.js';
import { instantiateOxigraph } from '../common/oxigraph-wasm.js';
import type { StoreSource } from '../common/store-worker.js';
import { answerQuery, type EndpointAnswer, type EndpointTask } from './answer.js';

/** @internal What the pool sends a thread. */
export type PoolRequest = { type: 'load'; endpoint: string; sources: StoreSource[] } | { type: 'queries'; queries: { id: number; seq: number; task: EndpointTask }[] };

/** @internal What a thread sends the pool. `fault`: the engine trapped; the thread must be replaced. */
export type PoolReply =
  | { type: 'ready' }
  | { type: 'loaded'; endpoint: string; triples: number; ms: number }
  | { type: 'load-failed'; endpoint: string; error: string; fault?: true }
  | { type: 'answer'; id: number; seq: number; answer: EndpointAnswer; ms: number }
  | { type: 'error'; id: number; seq: number; error: string; fault?: true; ms: number }
  | { type: 'skipped'; id: number; seq: number };

const port = parentPort!;
const data = workerData as { module: WebAssembly.Module; flags: Int32Array };
const ox = instantiateOxigraph(data.module);
/** The ring of flags shared with the pool: 0 pending, 1 started, 2 withdrawn (pool.ts). */
const flags = data.flags;
const stores = new Map<string, oxigraph.Store>();
const message = (e: unknown) => (e as Error)?.message ?? String(e);

port.on('message', (req: PoolRequest) => {
  const started = performance.now();
  if (req.type === 'load') {
    try {
      const store = new ox.Store();
      for (const s of req.sources) {
        const bytes = fs.readFileSync(s.file);
        if (s.sha256 !== undefined) {
          // The check openBuild makes for other commands, on the bytes read anyway, in parallel threads.
          const sha = createHash('sha256').update(bytes).digest('hex');
          if (sha !== s.sha256) throw new Error(`${s.file}: shard file differs from the one the build wrote (sha256 ${sha.slice(0, 12)}…, manifest ${s.sha256.slice(0, 12)}…): rebuild with fkgqa partition`);
        }
        store.load(bytes, { format: s.format, to_graph_name: ox.defaultGraph(), no_transaction: true });
      }
      stores.set(req.endpoint, store);
      port.postMessage({ type: 'loaded', endpoint: req.endpoint, triples: store.size, ms: performance.now() - started } satisfies PoolReply);
    } catch (e) {
      port.postMessage({ type: 'load-failed', endpoint: req.endpoint, error: message(e), ...(isEngineFault(e) ? { fault: true as const } : {}) } satisfies PoolReply);
    }
    return;
  }
  // The queries posted in one turn of the pool's event loop, in order; each answered as soon as it is done.
  for (const q of req.queries) answer(q);
});

/** Runs one posted query unless the pool withdrew it (its flag: pending → started), and posts the outcome. */
function answer(q: { id: number; seq: number; task: EndpointTask }): void {
  const started = performance.now();
  if (Atomics.compareExchange(flags, q.seq % flags.length, 0, 1) !== 0) {
    port.postMessage({ type: 'skipped', id: q.id, seq: q.seq } satisfies PoolReply);
    return;
  }
  try {
    const store = stores.get(q.task.endpoint);
    if (!store) throw new Error(`${q.task.endpoint} is not loaded in this worker`);
    // The body as text: cloning a string is one copy, as encoding it to transferred bytes was, and
    // the main thread writes a text body with the headers in one write (a Buffer went as a second chunk).
    port.postMessage({ type: 'answer', id: q.id, seq: q.seq, answer: answerQuery(ox, store, q.task), ms: performance.now() - started } satisfies PoolReply);
  } catch (e) {
    port.postMessage({ type: 'error', id: q.id, seq: q.seq, error: message(e), ms: performance.now() - started, ...(isEngineFault(e) ? { fault: true as const } : {}) } satisfies PoolReply);
  }
}
port.postMessage({ type: 'ready' } satisfies PoolReply);
