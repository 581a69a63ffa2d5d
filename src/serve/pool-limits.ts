/**
 * The time limits of a query in `fkgqa serve`'s endpoint pool (pool.ts) and whose fault a stop at
 * them is: the endpoint's own limit counts from the query's start, the request's limit from its
 * arrival (the client gives up then). A query stopped at the request's limit after a wait of at least
 * BUSY_WAIT_SHARE of it (and BUSY_MIN_WAIT_MS), or that never started, was kept waiting by other
 * queries: `busy`, the endpoint's fault, not the query's (`waitedTooLong`, src/federation/limit.ts).
 * The functions here are pure: they take the clock's reading (`performance.now()`, ms) as `now`.
 */
import { waitedTooLong } from '../federation/limit.js';
import type { EndpointAnswer } from './answer.js';

/**
 * What the pool needs of a client's signal: an AbortSignal, or the lighter ClientGone that the
 * server makes per request (an AbortController per request was a measurable part of the main
 * thread's work per point query).
 */
export type GoneSignal = Pick<AbortSignal, 'aborted'> & {
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
};

/**
 * Aborted once, when a request's client went away (`abort`): the listeners run once, in order.
 * Satisfies GoneSignal; `signal()` gives a real AbortSignal that follows it, for code that needs one.
 */
export class ClientGone implements GoneSignal {
  aborted = false;
  private listeners: (() => void)[] | undefined;
  private controller: AbortController | undefined;

  addEventListener(_type: 'abort', listener: () => void): void {
    (this.listeners ??= []).push(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const i = this.listeners?.indexOf(listener) ?? -1;
    if (i >= 0) this.listeners!.splice(i, 1);
  }

  /** An AbortSignal aborted with this one (made at the first call). */
  signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort();
    }
    return this.controller.signal;
  }

  /** The client went away: runs the listeners (once). */
  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    const listeners = this.listeners ?? [];
    this.listeners = undefined;
    this.controller?.abort();
    for (const l of listeners) l();
  }
}

/** The time limits of one query and the client's signal. */
export interface RunLimits {
  /** The endpoint's own time limit, in ms, counted from the moment the query starts running. */
  limitMs: number;
  /** The request's time limit, in ms, counted from `arrived` (the client gives up then). */
  requestLimitMs?: number;
  /** When the request arrived (`performance.now()`); default now. */
  arrived?: number;
  /** Aborted when the client went away: the query is dropped or stopped. */
  signal?: GoneSignal;
}

/**
 * The outcome of a query: the answer; an error (`fault`: it faulted the engine, whose worker was
 * replaced; with `crashed` the worker thread itself died during it, e.g. out of memory); the time limit (`by` whose limit: the endpoint's own or the request's, `limitMs` that
 * limit); busy (the endpoint kept it waiting behind other queries: see BUSY_WAIT_SHARE; `by`: the
 * request's limit ended, or the pool's `queueLimitMs`; `waitedMs` from arrival to start or to the
 * end, `ranMs` when it had started); or cancelled (the client went away).
 */
export type PoolOutcome =
  | { status: 'ok'; answer: EndpointAnswer; ms: number }
  | { status: 'error'; error: string; fault?: true; crashed?: true; ms: number }
  | { status: 'timeout'; by: 'endpoint' | 'request'; limitMs: number; ms: number }
  | { status: 'busy'; by: 'request' | 'queue'; limitMs: number; waitedMs: number; ranMs?: number; ms: number }
  | { status: 'cancelled'; ms: number };

/** The time limits of one query as the pool follows them (`performance.now()` clock, ms). */
export interface QueryLimits {
  /** The endpoint's own limit, in ms, from the query's start. */
  limitMs: number;
  /** The request's limit, in ms, from `arrived`. */
  requestLimitMs: number | undefined;
  /** Absolute deadline of the request, Infinity without one. */
  deadline: number;
  /** While waiting (not started), answered `busy` at this time: the deadline, or arrival + queueLimitMs if sooner. */
  waitUntil: number;
  arrived: number;
}

/** What a query's limits are once it started (`startedLimits`). */
export interface StartedLimits {
  started: number;
  /** When its time limit ends, and whose limit that is. */
  limitAt: number;
  limitBy: 'endpoint' | 'request';
  /** How long it waited before it started (ms), and whether a stop at its limit is the endpoint's (busy) rather than its own. */
  waitedMs: number;
  busyAtLimit: boolean;
}

/**
 * The limits of a query that arrives now.
 * @param queueLimitMs the pool's longest wait before a query starts (Infinity: none)
 */
export function queryLimits(limits: RunLimits, queueLimitMs: number, now: number): QueryLimits {
  const arrived = limits.arrived ?? now;
  const deadline = limits.requestLimitMs !== undefined ? arrived + limits.requestLimitMs : Infinity;
  return { limitMs: limits.limitMs, requestLimitMs: limits.requestLimitMs, deadline, waitUntil: Math.min(deadline, arrived + queueLimitMs), arrived };
}

/**
 * The outcome of a query still waiting (not started) at its `waitUntil`: `busy` (by the queue limit,
 * or by the request's limit after a wait that `waitedTooLong` calls the endpoint's), else the
 * request's `timeout` (a request limit under BUSY_MIN_WAIT_MS is the query's own to miss).
 * A Node timer may fire up to 1 ms before `waitUntil`: the wait is at least `waitUntil - arrived`.
 */
export function waitingOutcome(q: QueryLimits, queueLimitMs: number, now: number): PoolOutcome {
  const waited = Math.max(now, q.waitUntil) - q.arrived;
  const byQueue = q.waitUntil < q.deadline;
  return !byQueue && !waitedTooLong(waited, q.requestLimitMs!)
    ? { status: 'timeout', by: 'request', limitMs: q.requestLimitMs!, ms: waited }
    : { status: 'busy', by: byQueue ? 'queue' : 'request', limitMs: byQueue ? queueLimitMs : q.requestLimitMs!, waitedMs: waited, ms: waited };
}

/** The limits of a query that starts `now`: the sooner of the endpoint's limit and the request's deadline. */
export function startedLimits(q: QueryLimits, now: number): StartedLimits {
  const remaining = q.deadline - now;
  const byEndpoint = q.limitMs <= remaining;
  const waitedMs = now - q.arrived;
  return {
    started: now,
    limitBy: byEndpoint ? 'endpoint' : 'request',
    waitedMs,
    // Stopped at the request's deadline after a wait of at least BUSY_WAIT_SHARE of its limit (waitedTooLong): the endpoint was busy.
    busyAtLimit: !byEndpoint && waitedTooLong(waitedMs, q.requestLimitMs!),
    limitAt: now + Math.max(0, byEndpoint ? q.limitMs : remaining),
  };
}

/** The outcome of a running query stopped at its limit (`now` at or after `limitAt`): `busy` or `timeout` (`startedLimits`). */
export function stoppedAtLimit(q: QueryLimits, s: StartedLimits, now: number): PoolOutcome {
  return s.busyAtLimit
    ? { status: 'busy', by: 'request', limitMs: q.requestLimitMs!, waitedMs: s.waitedMs, ranMs: now - s.started, ms: now - q.arrived }
    : { status: 'timeout', by: s.limitBy, limitMs: s.limitBy === 'endpoint' ? q.limitMs : q.requestLimitMs!, ms: now - s.started };
}
