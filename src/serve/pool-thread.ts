/**
 * A worker thread of the endpoint pool (pool.ts): one oxigraph instance, instantiated from the
 * module the main thread compiled once (src/common/oxigraph-wasm.ts), holding one `Store` per
 * endpoint it serves. It does one thing at a time, as the pool tells it: load an endpoint's files,
 * or answer one query of an endpoint (answer.ts: inspection, evaluation, serialisation). Several
 * queries may be posted at once (pool.ts, PIPELINE), several in one message; each is answered as
 * soon as it is done (its own message); before running one it swaps its flag in the ring
 * shared with the pool from pending to started, and skips it when the pool withdrew it. An answer's
 * body travels back as text (one copy, as encoding it to transferred bytes was). The queries and
 * their answers travel as flat arrays (QueryBatch, AnswerTuple), not nested objects: less to clone
 * and less garbage on both threads per query. oxigraph's queries are
 * synchronous and cannot be cancelled (oxigraph's npm build blocks its thread): the pool stops a query by terminating the thread.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import type * as oxigraph from 'oxigraph';
import { isEngineFault } from '../common/engine-fault.js';
import { instantiateOxigraph } from '../common/oxigraph-wasm.js';
import { answerQuery } from './answer.js';
import type { QueryParseLimits } from '../sparql/inspect.js';
import { answerTuple, decodeQuery, QUERY_FIELDS, type PoolReply, type PoolRequest, type QueryBatch } from './pool-messages.js';

const port = parentPort!;
const data = workerData as { module: WebAssembly.Module; flags: Int32Array; limits?: QueryParseLimits };
const ox = instantiateOxigraph(data.module);
/** The ring of flags shared with the pool: 0 pending, 1 started, 2 withdrawn (pool.ts). */
const flags = data.flags;
const stores = new Map<string, oxigraph.Store>();
const message = (e: unknown) => (e as Error)?.message ?? String(e);

port.on('message', (req: PoolRequest) => {
  if (Array.isArray(req)) {
    // The queries posted in one turn of the pool's event loop, in order; each answered as soon as it is done.
    for (let i = 0; i < req.length; i += QUERY_FIELDS) answer(req[i] as number, req, i);
    return;
  }
  const started = performance.now();
  if (req.type === 'load') {
    try {
      const store = new ox.Store();
      for (const s of req.sources) {
        const bytes = fs.readFileSync(s.file);
        if (s.sha256 !== undefined) {
          // The check openBuild makes for other commands, on the bytes read anyway, in parallel threads.
          const sha = createHash('sha256').update(bytes).digest('hex');
          if (sha !== s.sha256)
            throw new Error(`${s.file}: shard file differs from the one the build wrote (sha256 ${sha.slice(0, 12)}…, manifest ${s.sha256.slice(0, 12)}…): rebuild with fkgqa partition`);
        }
        store.load(bytes, { format: s.format, to_graph_name: ox.defaultGraph(), no_transaction: true });
      }
      stores.set(req.endpoint, store);
      port.postMessage({ type: 'loaded', endpoint: req.endpoint, triples: store.size, ms: performance.now() - started } satisfies PoolReply);
    } catch (e) {
      port.postMessage({ type: 'load-failed', endpoint: req.endpoint, error: message(e), ...(isEngineFault(e) ? { fault: true as const } : {}) } satisfies PoolReply);
    }
  }
});

/** Runs the query at entry `i` of a batch unless the pool withdrew it (its flag: pending → started), and posts the outcome. */
function answer(seq: number, batch: QueryBatch, i: number): void {
  const started = performance.now();
  if (Atomics.compareExchange(flags, seq % flags.length, 0, 1) !== 0) {
    port.postMessage({ type: 'skipped', seq } satisfies PoolReply);
    return;
  }
  try {
    const task = decodeQuery(batch, i);
    const store = stores.get(task.endpoint);
    if (!store) throw new Error(`${task.endpoint} is not loaded in this worker`);
    // The body as text: cloning a string is one copy, as encoding it to transferred bytes was, and
    // the main thread writes a text body with the headers in one write (a Buffer went as a second chunk).
    port.postMessage(answerTuple(seq, answerQuery(ox, store, task, data.limits), performance.now() - started) satisfies PoolReply);
  } catch (e) {
    port.postMessage({ type: 'error', seq, error: message(e), ms: performance.now() - started, ...(isEngineFault(e) ? { fault: true as const } : {}) } satisfies PoolReply);
  }
}
port.postMessage({ type: 'ready' } satisfies PoolReply);
