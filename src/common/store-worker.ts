import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';

/** An RDF file to load into a StoreWorker, optionally into a named graph. */
export interface StoreSource {
  file: string;
  /** Media type: `application/n-triples`, `text/turtle`, `application/rdf+xml`. */
  format: string;
  /** IRI of the named graph to load into (default graph if absent). */
  graph?: string;
}

/** A query for StoreWorker.query. */
export interface StoreQuery {
  query: string;
  /**
   * Serialisation of the result (oxigraph `results_format`): for SELECT/ASK a SPARQL results media
   * type (`application/sparql-results+json`, `+xml`, `text/csv`, `text/tab-separated-values`), for
   * CONSTRUCT/DESCRIBE an RDF one (`text/turtle`, `application/n-triples`).
   */
  resultsFormat: string;
  /** Time limit in ms; the worker is terminated and reloaded when it is exceeded. */
  timeoutMs: number;
  /** Query the union of all named graphs as the default graph. */
  unionDefaultGraph?: boolean;
  /** SPARQL protocol `default-graph-uri` / `named-graph-uri`. */
  defaultGraphs?: string[];
  namedGraphs?: string[];
}

/** @internal Messages to and from the worker thread. */
export type StoreRequest = Omit<StoreQuery, 'timeoutMs'> & { id: number };
/** @internal */
export type StoreReply =
  | { type: 'ready'; triples: number }
  | { type: 'failed'; error: string }
  | { type: 'result'; id: number; body: string; ms: number }
  | { type: 'error'; id: number; error: string; ms: number };

/** The outcome of a query: the serialised result, a query error (message), or a timeout. */
export type StoreOutcome =
  | { status: 'ok'; body: string; ms: number }
  | { status: 'error'; error: string; ms: number }
  | { status: 'timeout'; ms: number };

/** Path of the compiled worker script (tests run from `src/`, the worker always from `dist/`). */
function threadScript(): string {
  const here = fileURLToPath(import.meta.url);
  const script = here.endsWith('.ts')
    ? fileURLToPath(new URL('../../dist/common/store-thread.js', import.meta.url))
    : fileURLToPath(new URL('./store-thread.js', import.meta.url));
  if (!fs.existsSync(script)) throw new Error(`worker script ${script} is missing: run npm run build`);
  return script;
}

interface Pending {
  req: StoreRequest;
  timeoutMs: number;
  resolve: (o: StoreOutcome) => void;
}

/**
 * An oxigraph store in its own worker thread, so that a long query blocks neither the caller's
 * event loop nor other stores, and a query over its time limit is really stopped: the thread is
 * terminated and a new one loads the same files (pitfall B10). Queries run one at a time, in
 * order; the time limit counts from the moment a query starts running. Each worker has its own
 * WebAssembly heap (up to 4 GiB; oxigraph needs about 1 KB per triple, pitfall B12).
 */
export class StoreWorker {
  private worker!: Worker;
  private queue: Pending[] = [];
  private running: (Pending & { timer: NodeJS.Timeout | undefined; started: number }) | undefined;
  private nextId = 1;
  private closed = false;
  private ready!: Promise<void>;
  /** Triples in the store after loading. */
  triples = 0;
  /** Times the worker was restarted after a timeout. */
  restarts = 0;

  private constructor(private readonly sources: StoreSource[]) {}

  /**
   * Starts a worker and loads the files.
   * @throws Error with oxigraph's message if a file does not load
   */
  static async start(sources: StoreSource[]): Promise<StoreWorker> {
    const w = new StoreWorker(sources);
    w.spawn();
    await w.ready;
    return w;
  }

  private spawn(): void {
    this.worker = new Worker(threadScript(), { workerData: { sources: this.sources } });
    this.worker.unref();
    this.ready = new Promise((resolve, reject) => {
      const onMessage = (m: StoreReply) => {
        if (m.type === 'ready') {
          this.triples = m.triples;
          this.worker.off('error', onError);
          this.worker.on('message', (r: StoreReply) => this.onReply(r));
          this.worker.on('error', (e) => this.onCrash(e));
          resolve();
        } else if (m.type === 'failed') {
          void this.worker.terminate();
          reject(new Error(m.error));
        }
      };
      const onError = (e: Error) => reject(e);
      this.worker.once('message', onMessage);
      this.worker.once('error', onError);
    });
  }

  /** Runs a query; resolves with its serialised result, its error message, or a timeout. */
  query(q: StoreQuery): Promise<StoreOutcome> {
    if (this.closed) return Promise.resolve({ status: 'error', error: 'store is closed', ms: 0 });
    const { timeoutMs, ...rest } = q;
    return new Promise((resolve) => {
      this.queue.push({ req: { ...rest, id: this.nextId++ }, timeoutMs, resolve });
      this.pump();
    });
  }

  private pump(): void {
    if (this.running || this.queue.length === 0 || this.closed) return;
    const p = this.queue.shift()!;
    // Claimed synchronously, so that no second query starts before this one is sent.
    const run = { ...p, timer: undefined as NodeJS.Timeout | undefined, started: 0 };
    this.running = run;
    this.ready.then(
      () => {
        if (this.running !== run) return;
        if (this.closed) return p.resolve({ status: 'error', error: 'store is closed', ms: 0 });
        run.started = performance.now();
        run.timer = setTimeout(() => this.onTimeout(), p.timeoutMs);
        this.worker.postMessage(p.req);
      },
      (e: Error) => {
        // The worker could not (re)load its files, e.g. a file removed since the start.
        if (this.running === run) this.running = undefined;
        p.resolve({ status: 'error', error: `store worker could not load its data: ${e.message}`, ms: 0 });
        this.pump();
      },
    );
  }

  private onReply(r: StoreReply): void {
    const run = this.running;
    if (!run || (r.type !== 'result' && r.type !== 'error') || r.id !== run.req.id) return;
    clearTimeout(run.timer);
    this.running = undefined;
    run.resolve(r.type === 'result' ? { status: 'ok', body: r.body, ms: r.ms } : { status: 'error', error: r.error, ms: r.ms });
    this.pump();
  }

  private onTimeout(): void {
    const run = this.running;
    if (!run) return;
    this.running = undefined;
    this.restarts++;
    void this.worker.terminate();
    run.resolve({ status: 'timeout', ms: performance.now() - run.started });
    if (!this.closed) {
      this.spawn();
      this.pump();
    }
  }

  private onCrash(e: Error): void {
    const run = this.running;
    if (run) {
      clearTimeout(run.timer);
      this.running = undefined;
      run.resolve({ status: 'error', error: `store worker crashed: ${e.message}`, ms: performance.now() - run.started });
    }
    if (!this.closed) {
      this.spawn();
      this.pump();
    }
  }

  /** Stops the worker; queued queries resolve with an error. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.running) clearTimeout(this.running.timer);
    for (const p of [this.running, ...this.queue]) p?.resolve({ status: 'error', error: 'store is closed', ms: 0 });
    this.running = undefined;
    this.queue = [];
    await this.worker.terminate();
  }
}
