/**
 * `--federation-engine comunica`: Comunica 4.5.0 (`@comunica/query-sparql`, default configuration)
 * behind the `FederationEngine` interface. Each query runs in a worker thread (`EngineWorker`), which
 * is terminated and restarted at the time limit; with `parallel` > 1 several threads answer queries
 * side by side, each query going to the least busy one. SERVICE-explicit queries are handed to
 * Comunica as algebra (as text, Comunica would send the whole query to each SERVICE endpoint); a
 * query with `sources` is handed over as text, Comunica selecting sources itself.
 */
import type { EngineOutcome, EngineQueryOptions, EngineSetup, FederationEngine } from '../engine.js';
import { EngineWorker } from './worker.js';

/** Comunica 4.5.0 in worker threads (module comment). Threads start at the first query or at `warm`. */
export class ComunicaEngine implements FederationEngine {
  readonly name = 'comunica';
  private workers: { worker: Promise<EngineWorker>; busy: number }[] | undefined;
  private closed = false;

  constructor(private readonly setup: EngineSetup) {}

  private pool(): { worker: Promise<EngineWorker>; busy: number }[] {
    this.workers ??= Array.from({ length: Math.max(1, this.setup.parallel ?? 1) }, () => ({ worker: EngineWorker.start(), busy: 0 }));
    return this.workers;
  }

  /** Starts the threads now (Comunica takes 1–3 s to start) instead of at the first query. */
  async warm(): Promise<void> {
    await Promise.all(this.pool().map((w) => w.worker));
  }

  /**
   * Runs one query on the least busy thread. `timeoutMs` counts from the start of the query in its
   * thread (a thread being started or restarted is waited for first); to bound the whole call, the
   * wait for a busy thread included, pass a `signal` and abort it at your deadline (the bounded
   * client does): a query aborted while waiting is dropped, one running is stopped.
   */
  async query(query: string, mediaType: string, options: EngineQueryOptions): Promise<EngineOutcome> {
    if (this.closed) return { status: 'error', error: 'the federation engine is closed', requests: {} };
    const slot = this.pool().reduce((a, b) => (b.busy < a.busy ? b : a));
    slot.busy++;
    const sources = options.sources ?? [];
    const o = await slot.worker
      .then((w) =>
        w.query({
          query,
          sources,
          asAlgebra: sources.length === 0,
          timeoutMs: options.timeoutMs,
          mediaType,
          allowedEndpoints: this.setup.endpoints,
          ...(options.signal ? { signal: options.signal } : {}),
        }),
      )
      .finally(() => slot.busy--);
    if (o.status === 'timeout') return { status: 'timeout', requests: o.requests };
    if (o.status === 'error') return { status: 'error', error: o.error, requests: o.requests };
    return { status: 'ok', body: o.body, contentType: mediaType, requests: o.requests };
  }

  async close(): Promise<void> {
    this.closed = true;
    const workers = this.workers ?? [];
    this.workers = undefined;
    await Promise.all(workers.map(async (w) => (await w.worker).close()));
  }
}
