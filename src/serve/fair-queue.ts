/**
 * Fair share of the federation engine's threads between the clients of `/federation/sparql`: one
 * queue per client, a free thread taking the next query of the client with the fewest turns since
 * it last became active (round robin whatever the backlogs; idle time earns no credit and carries
 * no debt), ties to fewer running, then fewer waiting, then the earliest arrival; at most
 * `maxWaiting` queries waiting per client. docs/serving.md ("The federation endpoint: a fair share
 * per client") gives the rules and their reasons.
 *
 * A pure scheduler: no timers, no I/O. Its caller bounds each wait (the query's limit) and gives the
 * turn back (`Turn.release`) when the query ends or stops waiting.
 */

/** A query's place in the fair queue (`FairQueue.join`). */
export interface Turn {
  /** Resolves when the query may run (a thread is its own until `release`). */
  readonly started: Promise<void>;
  /** Whether it was started. */
  readonly isStarted: boolean;
  /** Ends the turn: frees its thread when it was started, else leaves the queue. Idempotent. */
  release(): void;
}

/** What the fair queue says happened to a client's query, in order (`FairQueue.onEvent`): for logs and tests. */
export interface FairQueueEvent {
  type: 'join' | 'start' | 'end' | 'leave';
  client: string;
  /** Its number, in order of arrival (1, 2, …). */
  seq: number;
  /** `Date.now()` of the event, ms. */
  at: number;
}

interface Waiting {
  seq: number;
  at: number;
  resolve: () => void;
  turn: TurnState;
}

interface TurnState {
  started: boolean;
  released: boolean;
}

interface ClientState {
  waiting: Waiting[];
  running: number;
  turns: number;
}

/** Whether client `a` goes before client `b` (both with queries waiting): fewer turns, then fewer running, then fewer waiting, then the first next query. */
function before(a: ClientState, b: ClientState): boolean {
  if (a.turns !== b.turns) return a.turns < b.turns;
  if (a.running !== b.running) return a.running < b.running;
  if (a.waiting.length !== b.waiting.length) return a.waiting.length < b.waiting.length;
  return a.waiting[0].seq < b.waiting[0].seq;
}

/** The fair queue (module comment). */
export class FairQueue {
  private readonly clients = new Map<string, ClientState>();
  private running = 0;
  private seq = 0;
  /** Called on every join, start, end and leave (in that order for one query), when set. */
  onEvent: ((e: FairQueueEvent) => void) | undefined;

  /**
   * @param threads queries that run at once (the engine's threads)
   * @param maxWaiting most queries one client may have waiting (not counting its running ones)
   */
  constructor(
    readonly threads: number,
    readonly maxWaiting: number,
  ) {
    if (!(threads >= 1) || !(maxWaiting >= 0)) throw new Error(`FairQueue needs threads >= 1 and maxWaiting >= 0 (got ${threads}, ${maxWaiting})`);
  }

  /** Queries waiting, per client (clients with none are left out). */
  waiting(): Record<string, number> {
    return Object.fromEntries([...this.clients].filter(([, c]) => c.waiting.length > 0).map(([id, c]) => [id, c.waiting.length]));
  }

  /** Queries running now (at most `threads`). */
  get runningNow(): number {
    return this.running;
  }

  /**
   * Queues a query of `client`.
   * @returns its turn (started at once when a thread is free and nobody waits before it), or
   *   undefined when the client has `maxWaiting` queries waiting already (nothing is queued)
   */
  join(client: string): Turn | undefined {
    let c = this.clients.get(client);
    // While a thread is free nobody waits (dispatch): the query starts at once, whatever the bound.
    if ((c?.waiting.length ?? 0) >= this.maxWaiting && this.running >= this.threads) return undefined;
    if (!c) {
      // Becoming active: the fewest turns of the active clients (0 when none is).
      const active = [...this.clients.values()];
      c = { waiting: [], running: 0, turns: active.length ? Math.min(...active.map((a) => a.turns)) : 0 };
      this.clients.set(client, c);
    }
    const seq = ++this.seq;
    const state: TurnState = { started: false, released: false };
    let resolve!: () => void;
    const started = new Promise<void>((r) => (resolve = r));
    c.waiting.push({ seq, at: Date.now(), resolve, turn: state });
    this.emit('join', client, seq);
    this.dispatch();
    return {
      started,
      get isStarted() {
        return state.started;
      },
      release: () => {
        if (state.released) return;
        state.released = true;
        const cs = this.clients.get(client);
        if (state.started) {
          this.running--;
          if (cs) cs.running--;
          this.emit('end', client, seq);
        } else if (cs) {
          cs.waiting = cs.waiting.filter((w) => w.seq !== seq);
          this.emit('leave', client, seq);
        }
        if (cs && cs.waiting.length === 0 && cs.running === 0) this.clients.delete(client);
        this.dispatch();
      },
    };
  }

  /** Starts waiting queries while threads are free (module comment: fewest turns, then fewest waiting, then first arrived). */
  private dispatch(): void {
    while (this.running < this.threads) {
      let best: [string, ClientState] | undefined;
      for (const entry of this.clients) {
        const c = entry[1];
        if (c.waiting.length === 0) continue;
        if (!best) {
          best = entry;
          continue;
        }
        const b = best[1];
        if (before(c, b)) best = entry;
      }
      if (!best) return;
      const [id, c] = best;
      const w = c.waiting.shift()!;
      c.turns++;
      c.running++;
      this.running++;
      w.turn.started = true;
      this.emit('start', id, w.seq);
      w.resolve();
    }
  }

  private emit(type: FairQueueEvent['type'], client: string, seq: number): void {
    this.onEvent?.({ type, client, seq, at: Date.now() });
  }
}
