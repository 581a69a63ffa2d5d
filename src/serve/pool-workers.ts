/**
 * The worker threads of `fkgqa serve`'s endpoint pool (pool.ts) as the pool sees them: a worker
 * (`Slot`) with the stores it loaded and the queries posted to it, the ring of flags it shares with
 * the pool (a posted query that has not started can be withdrawn: pending, started, withdrawn, set
 * with compare-and-swap on both sides), and the outbox that sends the queries posted to it in one
 * turn of the event loop in one message (`Outbox`).
 */
import { Worker } from 'node:worker_threads';
import type { EndpointTask } from './answer.js';
import type { QueryParseLimits } from '../sparql/inspect.js';
import type { PoolEndpoint } from './pool-groups.js';
import type { GoneSignal, PoolOutcome, QueryLimits, StartedLimits } from './pool-limits.js';
import { encodeQuery, type PoolReply, type PoolRequest, type QueryBatch } from './pool-messages.js';

/** One query in the pool: its task, its limits (and, once started, `StartedLimits`), where it is posted. */
export interface Job extends QueryLimits, Partial<StartedLimits> {
  id: number;
  task: EndpointTask;
  /** Once started: its slow check (`slowMs` after its start) has been made. */
  slowChecked?: boolean;
  slot?: Slot;
  /** While waiting, with a request limit or a queue limit: the timer of `waitUntil` (EndpointPool.armDeadline). */
  timer?: NodeJS.Timeout;
  signal?: GoneSignal;
  onAbort?: () => void;
  done: boolean;
  resolve: (o: PoolOutcome) => void;
}

export interface Slot {
  worker: Worker;
  /** The group this worker serves; undefined once retired, and for the spare. */
  group: Group | undefined;
  /** The group it served last (undefined for the spare). */
  home: Group | undefined;
  ready: boolean;
  dead: boolean;
  loaded: Set<string>;
  /** Endpoints whose files did not load in this worker, with the error. */
  failed: Map<string, string>;
  /** A load, or the query running now (`posted[0]`, counted as started). */
  busy: { kind: 'load'; endpoint: string } | { kind: 'query'; job: Job } | undefined;
  /** Queries posted to the worker, in its order; the first is running (or skipped when gone). */
  posted: Posted[];
  /** The flags shared with the worker, one per posted query (`seq % RING`). */
  flags: Int32Array;
  /** The next query's sequence number in this worker. */
  seq: number;
  /** Queries posted (in `posted`) but not yet sent: sent together, in one message, at the end of this turn of the event loop. */
  outbox: QueryBatch;
  /** Queries in `outbox`. */
  outboxCount: number;
  /**
   * The worker's one timer for the running query's time limit and slow check (onSlotTimer), and
   * when it fires (Infinity: not armed). Armed at most once per `slowMs` in a steady stream of
   * queries, not twice per query (setTimeout and clearTimeout per query were main-thread work).
   */
  timer: NodeJS.Timeout | undefined;
  timerAt: number;
}

/** A group of endpoints (pool-groups.ts) and its current worker, queue and counts. */
export interface Group {
  index: number;
  endpoints: PoolEndpoint[];
  slot: Slot;
  queue: Job[];
  restarts: number;
  faults: number;
}

/** Queries posted to one worker at once (the running one included). */
export const PIPELINE = 4;
/** Flags in a worker's ring (more than PIPELINE, so a flag is reused only after its query is answered). */
const RING = 16;
/** States of a posted query's flag (pool-thread.ts sets STARTED, the pool WITHDRAWN; whoever swaps first wins). */
const PENDING = 0;
const WITHDRAWN = 2;

/** A query posted to a worker: `gone` once it was withdrawn (the worker skips it) or answered elsewhere. */
export interface Posted {
  seq: number;
  job: Job;
  gone: boolean;
}

/**
 * Starts a worker thread (pool-thread.ts) that instantiates oxigraph from `module`.
 * @param group the group it serves (undefined: the spare)
 * @param on its messages, and its crash or exit
 */
export function startWorker(
  script: string,
  module: WebAssembly.Module,
  parseLimits: QueryParseLimits | undefined,
  group: Group | undefined,
  on: { reply(slot: Slot, m: PoolReply): void; crash(slot: Slot, e: Error): void },
): Slot {
  const flags = new Int32Array(new SharedArrayBuffer(RING * Int32Array.BYTES_PER_ELEMENT));
  const worker = new Worker(script, { workerData: { module, flags, ...(parseLimits ? { limits: parseLimits } : {}) } });
  worker.unref();
  const slot: Slot = {
    worker,
    group,
    home: group,
    ready: false,
    dead: false,
    loaded: new Set(),
    failed: new Map(),
    busy: undefined,
    posted: [],
    flags,
    seq: 0,
    outbox: [],
    outboxCount: 0,
    timer: undefined,
    timerAt: Infinity,
  };
  worker.on('message', (m: PoolReply) => on.reply(slot, m));
  worker.on('error', (e) => on.crash(slot, e));
  worker.on('exit', (code) => on.crash(slot, new Error(`the worker thread exited (code ${code})`)));
  return slot;
}

/** Withdraws a posted query that has not started. @returns false when the worker has started it (it answers there) */
export function withdraw(s: Slot, p: Posted): boolean {
  if (Atomics.compareExchange(s.flags, p.seq % RING, PENDING, WITHDRAWN) !== PENDING) return false;
  p.gone = true;
  return true;
}

/**
 * The queries posted to workers and not yet sent: sent together, one message per worker, by one
 * `setImmediate` per turn of the event loop (after every request read in this turn's poll phase; a
 * message per query woke an idle worker once per query).
 */
export class Outbox {
  /** Queries sent to workers so far, and the messages that carried them (queries posted in one turn share one). */
  readonly sent = { queries: 0, messages: 0 };
  private readonly sending = new Set<Slot>();
  private scheduled = false;
  private readonly sendAll = (): void => {
    this.scheduled = false;
    for (const s of this.sending) this.flush(s);
    this.sending.clear();
  };

  /** Posts a query to a worker (sent at the end of this turn). @returns its entry in the worker's `posted` */
  post(s: Slot, job: Job): Posted {
    const seq = s.seq++;
    Atomics.store(s.flags, seq % RING, PENDING);
    const p = { seq, job, gone: false };
    s.posted.push(p);
    encodeQuery(s.outbox, seq, job.task);
    s.outboxCount++;
    this.sending.add(s);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.sendAll);
    }
    return p;
  }

  /** Sends a message to a worker, after the queries posted to it before (their order is kept). */
  message(s: Slot, m: PoolRequest): void {
    this.flush(s);
    s.worker.postMessage(m);
  }

  /** Sends a worker the queries posted to it this turn, in one message. */
  flush(s: Slot): void {
    if (s.outbox.length === 0) return;
    const batch = s.outbox;
    const count = s.outboxCount;
    s.outbox = [];
    s.outboxCount = 0;
    if (s.dead) return;
    s.worker.postMessage(batch satisfies PoolRequest);
    this.sent.messages++;
    this.sent.queries += count;
  }
}

/** Clears a worker's timer (it is stopping, or has nothing running). */
export function disarm(s: Slot): void {
  if (s.timer !== undefined) clearTimeout(s.timer);
  s.timer = undefined;
  s.timerAt = Infinity;
}
