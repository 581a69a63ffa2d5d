/**
 * `EngineWorker`: one Comunica 4.5.0 query engine in its own worker thread (thread.ts), the
 * building block of `ComunicaEngine` (engine.ts). The thread reports every HTTP request it sends
 * before sending it, so request counts are known even when a query is stopped at its time limit.
 */
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';

/** @internal A message to the engine thread. */
export interface EngineRequest {
  id: number;
  query: string;
  /** SPARQL endpoint URLs, each a Comunica source `{type: 'sparql', value: url}`. */
  sources: string[];
  /** Hand Comunica the query as algebra rather than text (see thread.ts). */
  asAlgebra: boolean;
  /** Comunica's `httpTimeout` in ms. */
  httpTimeoutMs: number;
  /** Media type of the result (default SPARQL JSON results). */
  mediaType?: string;
  /** When given, the engine may send HTTP requests only to these endpoint URLs (compared without the query string); any other request fails the query. */
  allowedEndpoints?: string[];
}

/** @internal A message from the engine thread. */
export type EngineReply =
  | { type: 'ready' }
  /** A request about to be sent for query `id` to `endpoint` (URL without query string). */
  | { type: 'request'; id: number; endpoint: string }
  | { type: 'result'; id: number; body: string; ms: number }
  | { type: 'error'; id: number; error: string; ms: number };

/**
 * The outcome of a query in one worker: the results (SPARQL JSON unless another media type was
 * asked for), Comunica's error message, or a timeout. `requests` counts the HTTP requests the
 * engine sent, by endpoint URL without query string (also after a timeout: the thread reports each
 * request before sending it). `ms` is the time from the query's start in the thread.
 */
export type WorkerOutcome =
  | { status: 'ok'; body: string; ms: number; requests: Record<string, number> }
  | { status: 'error'; error: string; ms: number; requests: Record<string, number> }
  | { status: 'timeout'; ms: number; requests: Record<string, number> };

/** A federated query for EngineWorker.query. */
export interface EngineQuery {
  /** The query text (full IRIs). */
  query: string;
  /** The SPARQL endpoints to federate over (may be empty when the query names them in SERVICE). */
  sources: string[];
  /** Hand Comunica the parsed algebra instead of the text (needed for SERVICE without sources). */
  asAlgebra?: boolean;
  /** Time limit in ms; the thread is terminated and restarted when it is exceeded. */
  timeoutMs: number;
  /** Media type of the result (default `application/sparql-results+json`; e.g. `application/n-triples` for CONSTRUCT). */
  mediaType?: string;
  /** Restrict the engine's HTTP requests to these endpoint URLs (see EngineRequest.allowedEndpoints). */
  allowedEndpoints?: string[];
  /** Stops the query (outcome `error` "aborted"; the thread is restarted). */
  signal?: AbortSignal;
}

function threadScript(): string {
  const here = fileURLToPath(import.meta.url);
  const script = here.endsWith('.ts')
    ? fileURLToPath(new URL('../../../dist/federation/comunica/thread.js', import.meta.url))
    : fileURLToPath(new URL('./thread.js', import.meta.url));
  if (!fs.existsSync(script)) throw new Error(`worker script ${script} is missing: run npm run build`);
  return script;
}

/**
 * A Comunica 4.5.0 query engine in its own worker thread, so that a federated query can be stopped
 * at its time limit (the thread is terminated, which also drops its HTTP connections, and a new
 * one started) and so that Comunica's work does not slow the endpoints when they run in the same
 * process. Queries run one at a time, in order; the time limit counts from the start of a query.
 */
export class EngineWorker {
  private worker!: Worker;
  private ready!: Promise<void>;
  private tail: Promise<unknown> = Promise.resolve();
  private nextId = 1;
  private closed = false;
  /** Times the thread was restarted after a timeout or crash. */
  restarts = 0;

  /** Starts the thread (Comunica's engine is built in it). */
  static async start(): Promise<EngineWorker> {
    const w = new EngineWorker();
    w.spawn();
    await w.ready;
    return w;
  }

  private spawn(): void {
    this.worker = new Worker(threadScript());
    this.worker.unref();
    this.ready = new Promise((resolve, reject) => {
      this.worker.once('message', (m: EngineReply) => (m.type === 'ready' ? resolve() : reject(new Error('engine thread failed to start'))));
      this.worker.once('error', reject);
    });
  }

  /**
   * Runs one federated query after those already given; never rejects. Aborting `q.signal` while
   * the query waits answers it at once (`error` "aborted") and it never runs.
   */
  query(q: EngineQuery): Promise<WorkerOutcome> {
    const run = this.tail.then(() => this.runOne(q));
    this.tail = run;
    const signal = q.signal;
    if (!signal) return run;
    return new Promise<WorkerOutcome>((resolve) => {
      const onAbort = () => {
        if (!this.running.has(q)) resolve({ status: 'error', error: 'aborted', ms: 0, requests: {} });
      };
      signal.addEventListener('abort', onAbort, { once: true });
      void run.then((o) => {
        signal.removeEventListener('abort', onAbort);
        resolve(o);
      });
    });
  }

  /** Queries whose evaluation has started (an abort then stops the thread instead of dropping them). */
  private readonly running = new Set<EngineQuery>();

  private async runOne(q: EngineQuery): Promise<WorkerOutcome> {
    if (this.closed) return { status: 'error', error: 'engine is closed', ms: 0, requests: {} };
    await this.ready;
    const left = q.timeoutMs;
    if (q.signal?.aborted) return { status: 'error', error: 'aborted', ms: 0, requests: {} };
    this.running.add(q);
    const id = this.nextId++;
    const started = performance.now();
    const worker = this.worker;
    const requests: Record<string, number> = {};
    return new Promise<WorkerOutcome>((resolve) => {
      const done = (o: WorkerOutcome) => {
        clearTimeout(timer);
        worker.off('message', onMessage);
        worker.off('error', onError);
        q.signal?.removeEventListener('abort', onAbort);
        this.running.delete(q);
        resolve(o);
      };
      const restart = () => {
        this.restarts++;
        void worker.terminate();
        if (!this.closed) this.spawn();
      };
      const onMessage = (r: EngineReply) => {
        if (r.type === 'request' && r.id === id) requests[r.endpoint] = (requests[r.endpoint] ?? 0) + 1;
        else if (r.type === 'result' && r.id === id) done({ status: 'ok', body: r.body, ms: r.ms, requests });
        else if (r.type === 'error' && r.id === id) done({ status: 'error', error: r.error, ms: r.ms, requests });
      };
      const onError = (e: Error) => {
        done({ status: 'error', error: `engine thread crashed: ${e.message}`, ms: performance.now() - started, requests });
        restart();
      };
      const onAbort = () => {
        done({ status: 'error', error: 'aborted', ms: performance.now() - started, requests });
        restart();
      };
      const timer = setTimeout(() => {
        done({ status: 'timeout', ms: performance.now() - started, requests });
        restart();
      }, left);
      worker.on('message', onMessage);
      worker.on('error', onError);
      q.signal?.addEventListener('abort', onAbort, { once: true });
      worker.postMessage({
        id,
        query: q.query,
        sources: q.sources,
        asAlgebra: !!q.asAlgebra,
        httpTimeoutMs: q.timeoutMs,
        mediaType: q.mediaType,
        allowedEndpoints: q.allowedEndpoints,
      } satisfies EngineRequest);
    });
  }

  /** Stops the thread. */
  async close(): Promise<void> {
    this.closed = true;
    await this.worker.terminate();
  }
}
