/**
 * The endpoint pool of `fkgqa serve`: a few worker threads (pool-thread.ts) hold the stores of all
 * endpoints, and no query can keep an endpoint busy for a client that is gone or for longer than
 * its time limit. oxigraph's queries are synchronous and cannot be cancelled, so a query is stopped
 * by terminating its worker; a fresh worker (a spare is kept started) takes over the group, and a
 * query that has run `slowMs` with others waiting is left to its worker ("retired"). Groups,
 * pipelining (the ring of flags that withdraws a posted query), stopping and retiring are described
 * in docs/serving.md ("The endpoint pool"). Module layout: the split into groups in pool-groups.ts,
 * the time limits and whose fault a stop is in pool-limits.ts, the workers, their ring of flags and
 * their outbox in pool-workers.ts. `start` resolves when every endpoint is loaded; the spare is
 * started then (not while the groups load, which it would slow down).
 */
import { compiledScript } from '../common/thread-script.js';
import { compileOxigraph } from '../common/oxigraph-wasm.js';
import type { QueryParseLimits } from '../sparql/inspect.js';
import type { EndpointTask } from './answer.js';
import { answerOf, type PoolReply } from './pool-messages.js';
import { splitIntoGroups, type PoolEndpoint } from './pool-groups.js';
import { queryLimits, startedLimits, stoppedAtLimit, waitingOutcome, type PoolOutcome, type RunLimits, type StartedLimits } from './pool-limits.js';
import { disarm, Outbox, PIPELINE, startWorker, withdraw, type Group, type Job, type Slot } from './pool-workers.js';

/** Options of the pool. */
interface PoolOptions {
  /** Groups, hence worker threads at rest (at least 1; at most one per endpoint). */
  workers: number;
  /** A query that ran this long (ms) with others waiting behind it gets its worker retired (default 1000). */
  slowMs?: number;
  /**
   * A query still waiting this long (ms) after it arrived, not started, is answered `busy` (default:
   * it waits until it starts or the request's own limit ends). See BUSY_WAIT_SHARE for the rule.
   */
  queueLimitMs?: number;
  /** A line per loaded endpoint while starting. */
  progress?: (line: string) => void;
  /** The bracket nesting and operator depth of a query the workers parse (default 64 and 256): deeper ones are answered 400. */
  limits?: QueryParseLimits;
}

/**
 * The pool (see the module comment), the oxigraph `EndpointStore` of store.ts (it has that shape;
 * store.ts imports this module's types, so this one does not name it). Create with
 * `EndpointPool.start`; `run` answers a query of one endpoint; `close` stops every worker.
 */
export class EndpointPool {
  readonly kind = 'oxigraph' as const;
  private readonly groups: Group[] = [];
  private readonly groupOf = new Map<string, Group>();
  private readonly retired = new Set<Slot>();
  /** A started worker with oxigraph instantiated and nothing loaded, which the next replacement takes. */
  private spare: Slot | undefined;
  private readonly script = compiledScript('serve/pool-thread.js');
  private readonly slowMs: number;
  private readonly queueLimitMs: number;
  private nextId = 1;
  private closed = false;
  private module!: WebAssembly.Module;
  private starting: { pending: Set<string>; resolve: () => void; reject: (e: Error) => void; loaded: number } | undefined;
  /** Triples per endpoint, as loaded. */
  readonly triples = new Map<string, number>();
  private readonly outbox = new Outbox();
  /** Queries sent to workers so far, and the messages that carried them (queries posted in one turn share one). */
  readonly sent = this.outbox.sent;
  /** Times a worker's timer was set so far (onSlotTimer): about one per `slowMs` in a steady stream of queries, not two per query. */
  timersArmed = 0;

  private constructor(
    private readonly endpoints: PoolEndpoint[],
    private readonly options: PoolOptions,
  ) {
    this.slowMs = options.slowMs ?? 1000;
    this.queueLimitMs = options.queueLimitMs ?? Infinity;
  }

  /**
   * Compiles oxigraph once, starts the workers and loads every endpoint.
   * @throws Error naming the endpoint and file when a store does not load (the pool is closed then)
   */
  static async start(endpoints: PoolEndpoint[], options: PoolOptions): Promise<EndpointPool> {
    const pool = new EndpointPool(endpoints, options);
    try {
      await pool.load();
    } catch (e) {
      await pool.close();
      throw e;
    }
    return pool;
  }

  private async load(): Promise<void> {
    this.module = await compileOxigraph();
    const done = new Promise<void>((resolve, reject) => {
      this.starting = { pending: new Set(this.endpoints.map((e) => e.id)), resolve, reject, loaded: 0 };
    });
    if (this.endpoints.length === 0) this.starting!.resolve();
    splitIntoGroups(this.endpoints, this.options.workers).forEach((endpoints, index) => {
      const g = { index, endpoints, queue: [], restarts: 0, faults: 0 } as unknown as Group;
      for (const e of endpoints) this.groupOf.set(e.id, g);
      this.groups.push(g);
      g.slot = this.spawn(g);
    });
    await done;
    this.starting = undefined;
    // The spare boots once the groups are loaded: booting a thread (Node's bootstrap, the modules,
    // instantiating oxigraph) while they load took a core from them on a 2-core machine.
    if (!this.closed && !this.spare) this.spare = this.spawn(undefined);
  }

  /** The endpoints are held in this process: no placement of their own. */
  placement(_endpoint: string): string | undefined {
    return undefined;
  }

  /** Worker threads running now: one per group, retired ones finishing a slow query, and the spare. */
  get workers(): { current: number; retired: number; spare: number } {
    return { current: this.groups.length, retired: this.retired.size, spare: this.spare && !this.spare.dead ? 1 : 0 };
  }

  /** The endpoints whose query is running now (one per busy worker, retired ones included), in no particular order. */
  running(): string[] {
    return [...this.groups.map((g) => g.slot), ...this.retired].flatMap((s) => (s.busy?.kind === 'query' && !s.dead ? [s.busy.job.task.endpoint] : []));
  }

  /** Replacements of the worker of the endpoint's group so far (after time limits, cancellations, slow queries, faults), and faults. */
  restartsOf(endpoint: string): { restarts: number; faults: number } | undefined {
    const g = this.groupOf.get(endpoint);
    return g ? { restarts: g.restarts, faults: g.faults } : undefined;
  }

  /**
   * Answers one query of an endpoint (answer.ts runs in the worker), within the limits.
   * @returns never rejects: the answer, an error, the time limit, or cancelled
   */
  run(endpoint: string, task: EndpointTask, limits: RunLimits): Promise<PoolOutcome> {
    const group = this.groupOf.get(endpoint);
    const arrived = limits.arrived ?? performance.now();
    if (!group || this.closed) return Promise.resolve({ status: 'error', error: this.closed ? 'the server is stopping' : `no endpoint ${endpoint}`, ms: 0 });
    if (limits.signal?.aborted) return Promise.resolve({ status: 'cancelled', ms: 0 });
    return new Promise((resolve) => {
      const job: Job = { id: this.nextId++, task, ...queryLimits(limits, this.queueLimitMs, arrived), done: false, resolve, signal: limits.signal };
      if (job.signal) {
        job.onAbort = () => this.cancel(job, group);
        job.signal.addEventListener('abort', job.onAbort, { once: true });
      }
      if (Number.isFinite(job.deadline)) {
        // Still waiting at the request's deadline: the client is giving up now.
        this.armDeadline(job, group);
      }
      group.queue.push(job);
      this.pump(group);
      // Without a request limit, the queue limit is armed only for a query that did not start at once.
      if (job.started === undefined && !Number.isFinite(job.deadline) && Number.isFinite(job.waitUntil)) this.armDeadline(job, group);
      this.checkSlow(group);
    });
  }

  /**
   * Still waiting at the request's deadline (the client is giving up now) or at the queue limit: the
   * endpoint was busy (BUSY_WAIT_SHARE); a query found running then (the main thread had not heard) is stopped.
   */
  private armDeadline(job: Job, group: Group): void {
    job.timer = setTimeout(
      () => {
        if (job.started !== undefined || job.done) return;
        const busy = waitingOutcome(job, this.queueLimitMs, performance.now());
        if (this.dropWaiting(job, group)) this.finish(job, busy);
        else this.stop(job, busy);
      },
      Math.max(0, job.waitUntil - performance.now()),
    );
  }

  /**
   * Takes a query that has not started out of the group's queue, or withdraws it from its worker.
   * @returns false when the worker has started it (the main thread has not heard yet)
   */
  private dropWaiting(job: Job, group: Group): boolean {
    const s = job.slot;
    const p = s?.posted.find((x) => x.job === job && !x.gone);
    if (!s || !p) {
      this.unqueue(job, group);
      return true;
    }
    if (s.dead) {
      p.gone = true;
      return true;
    }
    return withdraw(s, p);
  }

  /** A new worker for a group (undefined: the spare). */
  private spawn(group: Group | undefined): Slot {
    return startWorker(this.script, this.module, this.options.limits, group, { reply: (s, m) => this.onReply(s, m), crash: (s, e) => this.onCrash(s, e) });
  }

  /** A fresh worker takes over a group: the spare when there is one (then a new spare starts), else a new worker. */
  private takeOver(group: Group): Slot {
    group.restarts++;
    const spare = this.spare;
    if (!spare || spare.dead || this.closed) return this.spawn(group);
    spare.group = group;
    spare.home = group;
    this.spare = this.spawn(undefined);
    return spare;
  }

  /** Gives the group's worker its next thing to do: the first waiting query (loading its endpoint first), else a background load. */
  private pump(group: Group): void {
    const s = group.slot;
    if (this.closed || !s.ready || s.busy?.kind === 'load' || s.dead) return;
    while (group.queue.length > 0 && s.posted.length < PIPELINE) {
      const job = group.queue[0];
      const failed = s.failed.get(job.task.endpoint);
      if (failed !== undefined) {
        group.queue.shift();
        s.failed.delete(job.task.endpoint); // a later query tries again
        this.finish(job, { status: 'error', error: `the store of ${job.task.endpoint} could not be loaded: ${failed}`, ms: performance.now() - job.arrived });
        continue;
      }
      if (!s.loaded.has(job.task.endpoint)) {
        // Loads only in an idle worker; the posted queries answer first.
        if (s.posted.length === 0) this.loadInto(s, job.task.endpoint);
        return;
      }
      group.queue.shift();
      this.postJob(s, group, job);
    }
    if (s.posted.length > 0 || group.queue.length > 0) return;
    const next = group.endpoints.find((e) => !s.loaded.has(e.id) && !s.failed.has(e.id));
    if (next) this.loadInto(s, next.id);
  }

  private loadInto(s: Slot, endpoint: string): void {
    s.busy = { kind: 'load', endpoint };
    this.outbox.message(s, { type: 'load', endpoint, sources: this.groupOf.get(endpoint)!.endpoints.find((e) => e.id === endpoint)!.sources });
  }

  /** Posts a query to the worker; it starts at once when the worker has nothing else posted. */
  private postJob(s: Slot, group: Group, job: Job): void {
    job.slot = s;
    this.outbox.post(s, job);
    if (s.posted.length === 1) this.began(s, group, job);
  }

  /**
   * The worker's first posted query is running now (as far as the main thread knows): its time
   * limits start. The worker's timer (onSlotTimer) stops it at its limit and makes its slow check.
   */
  private began(s: Slot, _group: Group, job: Job): void {
    if (job.timer !== undefined) clearTimeout(job.timer);
    const now = performance.now();
    job.slot = s;
    s.busy = { kind: 'query', job };
    Object.assign(job, startedLimits(job, now));
    this.armSlot(s, Math.min(job.limitAt!, now + this.slowMs));
  }

  /**
   * Makes the worker's timer fire by `at` (performance.now() clock): kept when it fires earlier
   * already (it then re-arms itself for the query running at that moment), else set anew.
   */
  private armSlot(s: Slot, at: number): void {
    if (s.timer !== undefined && s.timerAt <= at) return;
    if (s.timer !== undefined) clearTimeout(s.timer);
    s.timerAt = at;
    this.timersArmed++;
    s.timer = setTimeout(() => this.onSlotTimer(s), Math.max(0, at - performance.now()));
  }

  /**
   * The worker's timer: stops the running query at its time limit; once it has run `slowMs`, makes
   * the slow check of its group (checkSlow; it also runs when a query arrives); re-arms for the
   * query's next moment. With no query running it stays unarmed until the next one starts.
   */
  private onSlotTimer(s: Slot): void {
    s.timer = undefined;
    s.timerAt = Infinity;
    const job = s.busy?.kind === 'query' ? s.busy.job : undefined;
    if (s.dead || this.closed || !job || job.done || job.started === undefined) return;
    const now = performance.now();
    if (now >= job.limitAt!) {
      this.stop(job, stoppedAtLimit(job, job as StartedLimits, now));
      return;
    }
    if (!job.slowChecked && now >= job.started + this.slowMs) {
      job.slowChecked = true;
      if (s.group) this.checkSlow(s.group);
    }
    if (s.dead || job.done) return;
    this.armSlot(s, job.slowChecked ? job.limitAt! : Math.min(job.limitAt!, job.started + this.slowMs));
  }

  /** Puts the queries posted to a worker that will not answer them back at the front of their group's queue, in order. */
  private requeue(s: Slot, group: Group): void {
    const back = s.posted.filter((p) => !p.gone && !p.job.done).map((p) => p.job);
    s.posted = [];
    for (const job of back) {
      clearTimeout(job.timer);
      job.slot = undefined;
      job.started = undefined;
      job.slowChecked = undefined;
      if (Number.isFinite(job.waitUntil)) this.armDeadline(job, group);
    }
    group.queue.unshift(...back);
  }

  /** Retires the group's worker when its query has run `slowMs` and others wait (module comment). */
  private checkSlow(group: Group): void {
    const s = group.slot;
    if (this.closed || s.busy?.kind !== 'query') return;
    if (group.queue.length === 0 && s.posted.length < 2) return;
    if (performance.now() - s.busy.job.started! < this.slowMs || this.retired.size >= this.options.workers) return;
    s.group = undefined;
    this.retired.add(s);
    // The queries posted behind the slow one are withdrawn and wait for the fresh worker.
    const back: Job[] = [];
    for (const p of s.posted.slice(1)) {
      if (p.gone || p.job.done) continue;
      if (!withdraw(s, p)) continue; // started: it answers here
      p.job.slot = undefined;
      back.push(p.job);
    }
    group.queue.unshift(...back);
    group.slot = this.takeOver(group);
    this.pump(group);
  }

  private unqueue(job: Job, group: Group): void {
    const i = group.queue.indexOf(job);
    if (i >= 0) group.queue.splice(i, 1);
  }

  /** The client went away: drop the query, or stop it by terminating its worker. */
  private cancel(job: Job, group: Group): void {
    if (job.done) return;
    if (job.started === undefined) {
      if (this.dropWaiting(job, group)) {
        this.finish(job, { status: 'cancelled', ms: performance.now() - job.arrived });
        return;
      }
    }
    this.stop(job, { status: 'cancelled', ms: performance.now() - (job.started ?? job.arrived) });
  }

  /** Stops a running query: its worker is terminated; a group's current worker is replaced at once. */
  private stop(job: Job, outcome: PoolOutcome): void {
    if (job.done) return;
    const s = job.slot!;
    this.finish(job, outcome);
    this.discard(s);
  }

  /** Terminates a worker; the current worker of a group is replaced by a fresh one, which the queue then waits for. */
  private discard(s: Slot): void {
    if (s.dead) return;
    s.dead = true;
    s.busy = undefined;
    disarm(s);
    void s.worker.terminate();
    // The queries posted behind the stopped one run on the group's next worker.
    if (s.home && s.posted.length > 0) this.requeue(s, s.home);
    if (this.retired.delete(s)) {
      // Room for another retired worker: a group may be waiting behind a slow query.
      for (const g of this.groups) this.checkSlow(g);
      if (s.home && s.home.queue.length > 0) this.pump(s.home);
      return;
    }
    const group = s.group;
    if (!this.closed && group && group.slot === s) {
      group.slot = this.takeOver(group);
      this.pump(group);
    }
  }

  private finish(job: Job, outcome: PoolOutcome): void {
    if (job.done) return;
    job.done = true;
    if (job.timer !== undefined) clearTimeout(job.timer);
    if (job.onAbort) job.signal!.removeEventListener('abort', job.onAbort);
    job.resolve(outcome);
  }

  private onReply(s: Slot, m: PoolReply): void {
    if (s.dead) return;
    if (Array.isArray(m)) {
      this.onAnswer(s, m[0], m);
      return;
    }
    if (m.type === 'ready') {
      s.ready = true;
      if (s.group) this.pump(s.group);
      return;
    }
    if (m.type === 'loaded' || m.type === 'load-failed') {
      s.busy = undefined;
      if (m.type === 'loaded') {
        s.loaded.add(m.endpoint);
        this.triples.set(m.endpoint, m.triples);
        if (this.starting?.pending.delete(m.endpoint)) {
          this.starting.loaded++;
          this.options.progress?.(`  loaded ${m.endpoint} (${m.triples} triples, ${(m.ms / 1000).toFixed(2)} s) [${this.starting.loaded}/${this.endpoints.length}]`);
          if (this.starting.pending.size === 0) this.starting.resolve();
        }
      } else {
        s.failed.set(m.endpoint, m.error);
        if (this.starting?.pending.has(m.endpoint)) {
          const file = this.groupOf.get(m.endpoint)!.endpoints.find((e) => e.id === m.endpoint)!.sources[0]?.file;
          this.starting.reject(Object.assign(new Error(`could not load store ${m.endpoint}${file ? ` (${file})` : ''}: ${m.error}`), { file }));
        }
        if (m.fault) {
          s.home!.faults++;
          if (s.group) this.discard(s);
          return;
        }
      }
      if (s.group) this.pump(s.group);
      return;
    }
    this.onAnswer(s, m.seq, m);
  }

  /** The outcome of the worker's first posted query (`seq`): an answer (a tuple), an error, or skipped. */
  private onAnswer(s: Slot, seq: number, m: Exclude<PoolReply, { type: 'ready' | 'loaded' | 'load-failed' }>): void {
    const head = s.posted[0];
    if (!head || head.seq !== seq) return;
    s.posted.shift();
    s.busy = undefined;
    const group = s.home!;
    const job = head.job;
    const error = Array.isArray(m) || m.type !== 'error' ? undefined : m;
    if (!head.gone) {
      if (Array.isArray(m)) this.finish(job, { status: 'ok', answer: answerOf(m), ms: m[5] });
      else if (error) this.finish(job, { status: 'error', error: error.error, ms: error.ms, ...(error.fault ? { fault: true as const } : {}) });
    }
    if (error?.fault) {
      // The instance is corrupted for good: replace it before the next query runs.
      group.faults++;
      this.discard(s);
      this.pump(group);
      return;
    }
    // The next posted query runs now (a withdrawn one is being skipped).
    const next = s.posted[0];
    if (next && !next.gone && !next.job.done) this.began(s, group, next.job);
    if (!s.group) {
      if (s.posted.length === 0) this.retiredDone(s, group);
    } else this.pump(group);
  }

  /**
   * A retired worker finished its query: it takes its group back when the group's new worker is
   * still loading and idle (it holds every store), else it stops.
   */
  private retiredDone(s: Slot, group: Group): void {
    const current = group.slot;
    const behind = current.posted.length === 0 && current.busy?.kind !== 'query' && group.endpoints.some((e) => !current.loaded.has(e.id));
    if (!this.closed && behind && s.failed.size === 0) {
      this.retired.delete(s);
      s.group = group;
      group.slot = s;
      current.group = undefined;
      current.dead = true;
      disarm(current);
      void current.worker.terminate();
      this.pump(group);
      return;
    }
    this.discard(s);
    this.pump(group);
  }

  private onCrash(s: Slot, e: Error): void {
    if (s.dead) return;
    const group = s.home;
    if (!group) {
      // The spare: start another.
      s.dead = true;
      void s.worker.terminate();
      if (!this.closed) this.spare = this.spawn(undefined);
      return;
    }
    const job = s.busy?.kind === 'query' ? s.busy.job : undefined;
    group.faults++;
    if (this.starting && !s.ready) this.starting.reject(new Error(`a worker thread of the endpoint pool failed to start: ${e.message}`));
    if (job) this.finish(job, { status: 'error', error: `the worker thread crashed: ${e.message}`, fault: true, crashed: true, ms: performance.now() - (job.started ?? job.arrived) });
    this.discard(s);
    this.pump(group);
  }

  /** Stops every worker; waiting and running queries resolve with an error. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const all = [...this.groups.map((g) => g.slot), ...this.retired, this.spare].filter((s): s is Slot => !!s && !s.dead);
    for (const g of this.groups) for (const job of g.queue.splice(0)) this.finish(job, { status: 'error', error: 'the server is stopping', ms: 0 });
    for (const s of all) {
      for (const p of s.posted) this.finish(p.job, { status: 'error', error: 'the server is stopping', ms: 0 });
      s.dead = true;
      disarm(s);
    }
    this.retired.clear();
    await Promise.all(all.map((s) => s.worker.terminate()));
  }
}
