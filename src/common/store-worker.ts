import { Worker } from 'node:worker_threads';
import { compiledScript } from './thread-script.js';
import { compileOxigraphSync } from './oxigraph-wasm.js';

/** An RDF file to load into a StoreWorker, optionally into a named graph. */
export interface StoreSource {
  file: string;
  /** Media type: `application/n-triples`, `text/turtle`, `application/rdf+xml`. */
  format: string;
  /** IRI of the named graph to load into (default graph if absent). */
  graph?: string;
  /**
   * The file's sha256 (hex) as the build's manifest gives it: serve's pool threads refuse a file
   * whose bytes differ, before loading them (src/serve/pool-thread.ts). Not checked when absent.
   */
  sha256?: string;
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

/** @internal Messages to and from the worker thread: a query, or a task for the thread's handler. */
export type StoreRequest = (Omit<StoreQuery, 'timeoutMs'> & { id: number; task?: undefined }) | { id: number; task: unknown; query?: undefined };
/** @internal `fault`: the engine trapped (see isEngineFault in store-host.ts); the thread must be replaced. */
export type StoreReply =
  | { type: 'ready'; triples: number }
  | { type: 'failed'; error: string }
  | { type: 'result'; id: number; body: string; ms: number }
  | { type: 'answer'; id: number; value: unknown; ms: number }
  | { type: 'error'; id: number; error: string; ms: number; fault?: true };

/**
 * The outcome of a query: the serialised result, a query error (message), or a timeout. `fault`
 * marks an error that faulted the engine; the worker was then replaced by a fresh one.
 */
type StoreOutcome = { status: 'ok'; body: string; ms: number } | { status: 'error'; error: string; ms: number; fault?: true } | { status: 'timeout'; ms: number };

/** The outcome of a task (StoreWorker.run): the handler's value, an error, or a timeout. */
type TaskOutcome<T> = { status: 'ok'; value: T; ms: number } | { status: 'error'; error: string; ms: number; fault?: true } | { status: 'timeout'; ms: number };

/** Options of StoreWorker.start. */
interface StoreWorkerOptions {
  /**
   * The thread script, as a path relative to the compiled `dist/` folder (default
   * `common/store-thread.js`, which answers plain queries). A script that calls `hostStore(handler)`
   * (store-host.ts) also answers tasks (`run`).
   */
  script?: string;
}

interface Pending {
  req: StoreRequest;
  timeoutMs: number;
  resolve: (o: StoreReply | { type: 'timeout'; ms: number } | { type: 'closed'; error: string }) => void;
}

/**
 * An oxigraph store in its own worker thread, so that a long query blocks neither the caller's
 * event loop nor other stores, and a query over its time limit is really stopped: the thread is
 * terminated and a new one loads the same files (an oxigraph query cannot be cancelled). Queries run one at a time, in
 * order; the time limit counts from the moment a query starts running. A query that faults the
 * engine (a WebAssembly trap, panic or stack overflow, which leaves oxigraph's instance corrupted
 * for every later query) gets an error marked `fault`, and the thread is discarded and a fresh one
 * loads the same files; queries queued meanwhile wait for it. Each worker has its own WebAssembly
 * heap (up to 4 GiB; oxigraph needs about 1 KB per triple).
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
  /** Times the worker was restarted after a timeout, a fault or a crash. */
  restarts = 0;
  /** Times the engine faulted (see StoreOutcome `fault`). */
  faults = 0;
  private readonly script: string;

  private constructor(
    private readonly sources: StoreSource[],
    options: StoreWorkerOptions = {},
  ) {
    this.script = compiledScript(options.script ?? 'common/store-thread.js');
  }

  /**
   * Starts a worker and loads the files.
   * @throws Error with oxigraph's message if a file does not load
   */
  static async start(sources: StoreSource[], options: StoreWorkerOptions = {}): Promise<StoreWorker> {
    const w = new StoreWorker(sources, options);
    w.spawn();
    await w.ready;
    return w;
  }

  private spawn(): void {
    // The thread instantiates oxigraph from the module compiled once per process (oxigraph-wasm.ts).
    this.worker = new Worker(this.script, { workerData: { sources: this.sources, module: compileOxigraphSync() } });
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
    // A reload after a timeout or fault may fail with no request waiting: not an unhandled rejection
    // (the next request still sees the failure through pump).
    this.ready.catch(() => {});
  }

  /**
   * Waits until the current thread has loaded its files or failed to (the reload after a timeout or a
   * fault included). Never rejects.
   * @returns true when the files are loaded, false when the thread could not load them (every later
   * query then gets an error)
   */
  settled(): Promise<boolean> {
    return this.ready.then(
      () => true,
      () => false,
    );
  }

  /** Runs a query; resolves with its serialised result, its error message, or a timeout. */
  async query(q: StoreQuery): Promise<StoreOutcome> {
    const { timeoutMs, ...rest } = q;
    const r = await this.send({ ...rest, id: this.nextId++ }, timeoutMs);
    if (r.type === 'result') return { status: 'ok', body: r.body, ms: r.ms };
    if (r.type === 'timeout') return { status: 'timeout', ms: r.ms };
    if (r.type === 'error') return { status: 'error', error: r.error, ms: r.ms, ...(r.fault ? { fault: true as const } : {}) };
    return { status: 'error', error: r.type === 'closed' ? r.error : 'unexpected reply of the store thread', ms: 0 };
  }

  /**
   * Runs a task with the thread script's handler (see StoreWorkerOptions.script), under the same
   * time limit, queue and fault handling as queries.
   * @param timeoutMs time limit in ms, counted from the moment the task starts running
   */
  async run<T>(task: unknown, timeoutMs: number): Promise<TaskOutcome<T>> {
    const r = await this.send({ task, id: this.nextId++ }, timeoutMs);
    if (r.type === 'answer') return { status: 'ok', value: r.value as T, ms: r.ms };
    if (r.type === 'timeout') return { status: 'timeout', ms: r.ms };
    if (r.type === 'error') return { status: 'error', error: r.error, ms: r.ms, ...(r.fault ? { fault: true as const } : {}) };
    return { status: 'error', error: r.type === 'closed' ? r.error : 'unexpected reply of the store thread', ms: 0 };
  }

  private send(req: StoreRequest, timeoutMs: number): Promise<Parameters<Pending['resolve']>[0]> {
    if (this.closed) return Promise.resolve({ type: 'closed', error: 'store is closed' });
    return new Promise((resolve) => {
      this.queue.push({ req, timeoutMs, resolve });
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
        if (this.closed) return p.resolve({ type: 'closed', error: 'store is closed' });
        run.started = performance.now();
        run.timer = setTimeout(() => this.onTimeout(), p.timeoutMs);
        this.worker.postMessage(p.req);
      },
      (e: Error) => {
        // The worker could not (re)load its files, e.g. a file removed since the start.
        if (this.running === run) this.running = undefined;
        p.resolve({ type: 'closed', error: `store worker could not load its data: ${e.message}` });
        this.pump();
      },
    );
  }

  private onReply(r: StoreReply): void {
    const run = this.running;
    if (!run || (r.type !== 'result' && r.type !== 'error' && r.type !== 'answer') || r.id !== run.req.id) return;
    clearTimeout(run.timer);
    this.running = undefined;
    if (r.type === 'error' && r.fault) {
      // The instance is corrupted for good: replace it before the next request runs.
      this.faults++;
      this.replace();
    }
    run.resolve(r);
    this.pump();
  }

  /** Terminates the thread and starts a fresh one loading the same files (not after close). */
  private replace(): void {
    this.restarts++;
    void this.worker.terminate();
    if (!this.closed) this.spawn();
  }

  private onTimeout(): void {
    const run = this.running;
    if (!run) return;
    this.running = undefined;
    this.replace();
    run.resolve({ type: 'timeout', ms: performance.now() - run.started });
    this.pump();
  }

  private onCrash(e: Error): void {
    const run = this.running;
    if (run) {
      clearTimeout(run.timer);
      this.running = undefined;
      run.resolve({ type: 'error', id: run.req.id, error: `store worker crashed: ${e.message}`, ms: performance.now() - run.started, fault: true });
    }
    if (!this.closed) {
      this.restarts++;
      this.spawn();
      this.pump();
    }
  }

  /** Stops the worker; queued queries resolve with an error. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.running) clearTimeout(this.running.timer);
    for (const p of [this.running, ...this.queue]) p?.resolve({ type: 'closed', error: 'store is closed' });
    this.running = undefined;
    this.queue = [];
    await this.worker.terminate();
  }
}
