/**
 * The deadline and abort signal of one engine query (`Deadline`, EngineQueryOptions), as one promise:
 * what every engine races its work against. A deadline `from: 'call'` counts the wait for a free
 * engine thread or process too; `from: 'start'` counts from when the engine takes the query (with
 * `clientMs`, a client's deadline from the call bounds both).
 */
import type { Deadline, EndpointFault, EngineOutcome, EngineQueryOptions } from './engine.js';

/** Why a query was stopped. */
export type StopReason = 'timeout' | 'aborted';

/** The limit of one query (queryLimit). */
export interface QueryLimit {
  /** Settles when the time limit passes or the caller aborts, whichever comes first. */
  stopped: Promise<StopReason>;
  /** Time left, in ms (at least 1): for the engine's own per-request timeouts. */
  left(): number;
  /**
   * Whether the limit has passed by the clock (`Date.now()`), its timer fired or not: an engine's reply
   * read then is a report, not the query's outcome (`stopped` may settle later than the engine's reply
   * is read on a loaded machine, the timer being due).
   */
  passed(): boolean;
  /** The outcome of a stopped query: `timeout`, or `error` "aborted"; `requests` as sent so far. */
  outcome(why: StopReason, requests: Record<string, number>): EngineOutcome;
  /** Clears the timer and the abort listener (call when the query has ended). */
  dispose(): void;
  /** When the limit started (Date.now() clock, ms). */
  since: number;
}

/**
 * The share of a query's time limit it must have waited (for a worker of fkgqa serve, or for a
 * federation engine with a deadline's `clientMs`) for a stop at that limit to be busy (HTTP 503, the
 * endpoint's or engine's) rather than the query's own: a tenth, erring towards the agent (why not a
 * half: docs/serving.md, serve's time limits).
 */
export const BUSY_WAIT_SHARE = 0.1;

/**
 * The longest wait (ms) of a federated query for the federation engine to take it (a free thread, a
 * replacement's start), beyond its own limit: run_sparql_query and `fkgqa query` pass
 * a deadline `from: 'start'` with `waitMs` the larger of this and the query's limit (`federationDeadline`).
 */
export const FEDERATION_WAIT_MS = 60_000;

/** The shortest wait that can make a stop busy, in ms: below it the wait is the cost of any query, not other queries (docs/serving.md, serve's time limits). */
export const BUSY_MIN_WAIT_MS = 100;

/**
 * Whether a query stopped at its request's limit (or not started by then) was kept waiting: it
 * waited at least `BUSY_WAIT_SHARE` of the limit and at least `BUSY_MIN_WAIT_MS`.
 * @param waitedMs how long it waited before it started (the whole limit when it never started)
 * @param limitMs the request's limit, in ms
 */
export function waitedTooLong(waitedMs: number, limitMs: number): boolean {
  return waitedMs >= BUSY_WAIT_SHARE * limitMs && waitedMs >= BUSY_MIN_WAIT_MS;
}

/**
 * The time limit sent to an endpoint (`Fkgqa-Timeout`) for `leftMs` left of the caller's own: less
 * by a margin (a tenth, at most 250 ms), so that `fkgqa serve`'s answer at that limit — a time limit
 * or busy — arrives before the caller gives up and can be told apart.
 */
export function sentLimit(leftMs: number): number {
  return Math.max(1, Math.floor(leftMs - Math.min(250, leftMs / 10)));
}

/**
 * The deadline of a federated query whose limit counts from when the engine takes it, its wait for the
 * engine bounded by the larger of `FEDERATION_WAIT_MS` and the limit: run_sparql_query and `fkgqa query`.
 * @param ms the query's time limit, in ms
 */
export function federationDeadline(ms: number): Deadline {
  return { ms, from: 'start', waitMs: Math.max(ms, FEDERATION_WAIT_MS) };
}

/**
 * The limit of the wait before an engine takes a query: the deadline itself (`from: 'call'`), or
 * (`from: 'start'`) the deadline's `waitMs` and `clientMs`, whichever ends first, or only `signal`
 * without either (the query's own limit starts when the engine takes it: `runLimit`).
 */
export function waitLimit(options: EngineQueryOptions): QueryLimit {
  const d = options.deadline;
  return queryLimit(d.from === 'start' ? Math.min(d.waitMs ?? Infinity, d.clientMs ?? Infinity, 2 ** 31 - 1) : d.ms, options.signal, d.since);
}

/**
 * The outcome of a query whose wait for the engine ended (`waitLimit`): with a deadline `from: 'start'`,
 * a wait over its `waitMs` or `clientMs` is `busy` (HTTP 503, the engine's fault; its `waitedMs` that limit, never
 * more) unless `waitedTooLong` says a client's deadline was too short to be kept waiting; otherwise the query's time limit.
 */
export function waitOutcome(options: EngineQueryOptions, engine: string, wait: QueryLimit, why: StopReason, requests: Record<string, number>): EngineOutcome {
  const d = options.deadline;
  if (d.from === 'start' && why === 'timeout') {
    // A client's deadline under BUSY_MIN_WAIT_MS that ended the wait: the query's own to miss, as in serve's pool.
    if (d.clientMs !== undefined && d.clientMs <= (d.waitMs ?? Infinity) && !waitedTooLong(d.clientMs, d.clientMs)) return wait.outcome(why, requests);
    const limit = Math.min(d.waitMs ?? Infinity, d.clientMs ?? Infinity);
    // The wait ran to its limit, and reports that limit: a timer firing a millisecond early does not make it shorter (as
    // serve's pool counts it), nor one firing late on a loaded machine longer than the limit the client set.
    const waitedMs = Number.isFinite(limit) ? limit : Date.now() - wait.since;
    return busyOutcome(`the federation engine ${engine} did not take the query within ${limit} ms (it was starting, or busy with other queries)`, waitedMs, requests);
  }
  return wait.outcome(why, requests);
}

/**
 * The least time (ms) a query must have left of its client's deadline (`clientMs`) to be started once
 * it waited long enough for a stop to be busy; a query with less is answered busy at once
 * (`lateStart`), leaving the thread to the next query. 100 ms: the quickest benchmark queries took
 * about 100 ms on a warm Comunica thread at load 15; a floor of 250 ms refused queries that would have
 * finished (docs/serving.md, serve's time limits).
 */
export const START_FLOOR_MS = 100;

/** The start floor of a client's limit of `clientMs` ms: `START_FLOOR_MS`, or a tenth of a smaller limit (a client that sets 200 ms expects answers in less). */
export function startFloor(clientMs: number): number {
  return Math.min(START_FLOOR_MS, clientMs / 10);
}

/**
 * The outcome of a query the engine would take now that cannot finish: with a client's deadline (`from: 'start'`
 * with `clientMs`), after a wait `waitedTooLong` calls too long, with less than `startFloor` of it left — busy
 * (HTTP 503, the engine's fault; its `waitedMs` the wait, at most the limit), the query not started. Undefined when
 * the query is to start: no client's deadline (its limit counts from the start), a wait that is no reason for busy
 * (a limit under `BUSY_MIN_WAIT_MS` is the query's own to miss), or enough time left.
 * @param wait the query's wait for the engine (`waitLimit`), read on the `Date.now()` clock
 */
export function lateStart(options: EngineQueryOptions, engine: string, wait: QueryLimit, requests: Record<string, number>): EngineOutcome | undefined {
  const d = options.deadline;
  if (d.from !== 'start' || d.clientMs === undefined) return undefined;
  const waited = Date.now() - wait.since;
  const left = d.clientMs - waited;
  if (left >= startFloor(d.clientMs) || !waitedTooLong(waited, d.clientMs)) return undefined;
  return busyOutcome(
    `the federation engine ${engine} was busy: the query waited ${waited} ms for it behind other queries, which left ${Math.max(0, left)} ms of its limit of ${d.clientMs} ms, less than the ${startFloor(d.clientMs)} ms a federated query is started with at the least: it was not started, not a fault of the query: retry later`,
    Math.min(waited, d.clientMs),
    requests,
  );
}

/** The outcome of a query the engine kept waiting (`waitedMs`, ms) past its deadline: busy, HTTP 503, the engine's fault. */
function busyOutcome(error: string, waitedMs: number, requests: Record<string, number>): EngineOutcome {
  return { status: 'error', error, httpStatus: 503, busy: true, waitedMs, requests };
}

/**
 * The limit of a query the engine takes now: `wait` itself (`from: 'call'`), or (`from: 'start'`) a fresh
 * `queryLimit` of the deadline's `ms`, at most what the wait left of its `clientMs` (the wait's is disposed).
 */
export function runLimit(options: EngineQueryOptions, wait: QueryLimit): QueryLimit {
  const d = options.deadline;
  if (d.from === 'call') return wait;
  wait.dispose();
  if (d.clientMs === undefined) return queryLimit(d.ms, options.signal);
  // A client's deadline: the query runs for what the wait left of it; stopped then after a long wait, the engine was busy.
  const clientMs = d.clientMs;
  const waited = Date.now() - wait.since;
  const run = queryLimit(Math.max(1, Math.min(d.ms, clientMs - waited)), options.signal);
  if (!waitedTooLong(waited, clientMs)) return run;
  return {
    ...run,
    outcome: (why, requests) =>
      why === 'timeout'
        ? busyOutcome(
            `the federation engine was busy: the query waited ${waited} ms for it behind other queries, and the limit of ${clientMs} ms ended ${Date.now() - run.since} ms after it started; the wait is the engine's, not the query's: retry later`,
            // A wait reported as at most the limit: what the client's limit let it wait (a loaded machine may start it later still).
            Math.min(waited, clientMs),
            requests,
          )
        : run.outcome(why, requests),
  };
}

/**
 * Starts a limit of `ms` counted from `since`, ended early by `signal`.
 * @param ms the limit, in ms
 * @param signal the caller's abort signal (the limit then stops with `aborted`)
 * @param since when the limit starts (`Date.now()` clock, ms; default now)
 */
function queryLimit(ms: number, signal: AbortSignal | undefined, since = Date.now()): QueryLimit {
  const deadline = since + ms;
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const stopped = new Promise<StopReason>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), Math.max(0, deadline - Date.now()));
    if (signal?.aborted) resolve('aborted');
    onAbort = () => resolve('aborted');
    signal?.addEventListener('abort', onAbort, { once: true });
  });
  return {
    stopped,
    since,
    left: () => Math.max(1, deadline - Date.now()),
    passed: () => Date.now() >= deadline,
    outcome: (why, requests) => (why === 'timeout' ? { status: 'timeout', requests } : { status: 'error', error: 'aborted', requests }),
    dispose: () => {
      clearTimeout(timer);
      if (onAbort) signal?.removeEventListener('abort', onAbort);
    },
  };
}

/**
 * How long (ms) an engine whose own time limit ended waits, at most, for answers still due from
 * endpoints it sent a limit (`sentLimit`): on a loaded machine serve's stop at that limit can arrive
 * after the engine's timer fired, and a shard's `503 busy` was then charged to the query as its time
 * limit. The wait ends at the first answer that stopped the query, when no request is in flight, when
 * the engine ended the query, or on abort. Not with a hard deadline (`dueGraceMs`).
 */
export const DUE_ANSWER_GRACE_MS = 2000;

/**
 * The wait for due answers of one query (ms): none when its deadline is hard — a client's
 * (`clientMs`: /federation/sparql with a request's own limit, which must be answered by then) or the
 * whole call's (`from: 'call'`: BoundedSparqlClient.federated's time limit bounds the call);
 * else `DUE_ANSWER_GRACE_MS`. Reports already posted are read either way (`DueAnswers.atLimit` with 0).
 */
export function dueGraceMs(deadline: Deadline): number {
  return deadline.from === 'start' && deadline.clientMs === undefined ? DUE_ANSWER_GRACE_MS : 0;
}

/**
 * Whether a `Fkgqa-Stopped` value says how fkgqa serve stopped a query, whole: `busy; by=request|queue;
 * waited=W; ms=N` or `time-limit; by=endpoint|request; ms=N` (docs/serving.md). Only such a value can be a
 * verdict, and only when `judgeStop` believes it.
 */
export function stoppedParses(stopped: string): boolean {
  return parseStopped(stopped) !== undefined;
}
/**
 * Words of another server's `503` (without `Fkgqa-Stopped`) saying it stopped the query at a time limit
 * ("Query timed out", "time limit of 1000 ms"): such an answer is a stop, read by `readStop` of client.ts
 * with the limit sent and the clock, on the direct route as inside a federated query (the engines
 * report it as a fault with `said`, EndpointFault).
 */
export const TIME_LIMIT_TEXT = /time limit|timeout|timed out/i;

/** How much of such a 503's text an engine reports (`EndpointFault.said`), in characters. */
export const SAID_MAX_CHARS = 4096;

/** `Fkgqa-Stopped` of a query that waited behind others (busy), as fkgqa serve writes it; groups: by whom, the wait in ms, the limit. */
export const BUSY_STOPPED = /^\s*busy\s*;\s*by=(request|queue|full)\s*;\s*waited=(\d+)\s*;\s*ms=(\d+)\s*$/i;
/** `Fkgqa-Stopped` of a query stopped at a time limit; groups: by whom, the limit in ms. */
const TIME_LIMIT_STOPPED = /^\s*time-limit\s*;\s*by=(endpoint|request)\s*;\s*ms=(\d+)\s*$/i;

/**
 * How an endpoint says it stopped a query (a `503`): busy (the query waited behind others: the
 * endpoint's fault) or a time limit — the request's (`by: 'request'`, the limit sent in `Fkgqa-Timeout`)
 * or the endpoint's own (`by: 'endpoint'`); `limitMs` is absent only for another server's 503 whose
 * text names a time limit without its length.
 */
export type Stop = { kind: 'busy'; by: 'request' | 'queue' | 'full'; waitedMs: number; limitMs: number } | { kind: 'time-limit'; by: 'request' | 'endpoint'; limitMs?: number };

/** A `Fkgqa-Stopped` value read whole (`BUSY_STOPPED`, `TIME_LIMIT_STOPPED`); undefined when it is none fkgqa serve writes. */
export function parseStopped(stopped: string): Stop | undefined {
  const b = BUSY_STOPPED.exec(stopped);
  if (b) return { kind: 'busy', by: b[1].toLowerCase() as 'request' | 'queue' | 'full', waitedMs: Number(b[2]), limitMs: Number(b[3]) };
  const t = TIME_LIMIT_STOPPED.exec(stopped);
  return t ? { kind: 'time-limit', by: t[1].toLowerCase() as 'request' | 'endpoint', limitMs: Number(t[2]) } : undefined;
}

/**
 * The largest allowance of `judgeStop`'s clock checks, in ms, beyond `sentLimit`'s margin: timers
 * firing early, waits rounded to whole ms, two hosts' clocks ticking apart (docs/serving.md, "A stop
 * is believed only when it agrees with the limit sent and the clock").
 */
export const STOP_CLOCK_TOLERANCE_MS = 50;

/**
 * The share of a stop's limit `judgeStop`'s clock check allows besides `sentLimit`'s margin: a tenth,
 * at most `STOP_CLOCK_TOLERANCE_MS`, so that the check asks at least four fifths of every limit
 * (`earliestStop`).
 */
const STOP_CLOCK_TOLERANCE_SHARE = 0.1;

/**
 * The earliest a stop at a limit of `limitMs` can have come, in ms after its request was sent:
 * `sentLimit(limitMs)` less the tolerance (a tenth of the limit, at most `STOP_CLOCK_TOLERANCE_MS`);
 * always more than 0 and at least 0.8 × `limitMs` − 1, e.g. 9,450 ms for 9,750 (docs/serving.md, "A
 * stop is believed only when it agrees with the limit sent and the clock").
 * @param limitMs the limit the stop names (or, for a stop that names none, the limit sent), ms ≥ 0
 */
export function earliestStop(limitMs: number): number {
  return sentLimit(limitMs) - Math.min(STOP_CLOCK_TOLERANCE_MS, STOP_CLOCK_TOLERANCE_SHARE * limitMs);
}

/**
 * The smallest limit of an endpoint's own (`time-limit; by=endpoint; ms=N`) that `judgeStop` believes,
 * in ms: below it the clock cannot tell such a limit from an answer sent at once (docs/serving.md, "A
 * stop is believed only when it agrees with the limit sent and the clock").
 */
export const MIN_OWN_LIMIT_MS = 57;

/** What the request that an endpoint answered with a stop was sent with, and what the clock says. */
export interface SentRequest {
  /** The time limit sent with it (`Fkgqa-Timeout`, ms); undefined when none was sent (or the endpoint is not told, e.g. a stop read from another server's text). */
  limitMs?: number;
  /** From just before the request was sent to its answer's status line, in ms, on one monotonic clock (where the request was sent). */
  elapsedMs: number;
}

/** `judgeStop`'s verdict on a stop: believed, or why not. */
type StopJudgement = { believed: true; stop: Stop } | { believed: false; why: string };

/**
 * Whether a stop an endpoint answered (its `Fkgqa-Stopped`, or a `Stop` read otherwise) agrees with
 * what was sent and with the clock: the one rule every route reads a stop by (the bounded client's
 * direct route and its reading of an engine's fault, both engines' `DueAnswers`, hence
 * /federation/sparql). A stop that does not agree is no verdict but the endpoint's fault. The rules
 * are those of docs/serving.md, "A stop is believed only when it agrees with the limit sent and the
 * clock"; a consistent lie cannot be told from the truth.
 * @param stopped the `Fkgqa-Stopped` value, or a stop read otherwise
 * @returns believed with the stop, or not with why (words that follow "a stop that …")
 */
export function judgeStop(stopped: string | Stop, sent: SentRequest): StopJudgement {
  const stop = typeof stopped === 'string' ? parseStopped(stopped) : stopped;
  if (!stop) return { believed: false, why: 'is no Fkgqa-Stopped value fkgqa serve writes' };
  const no = (why: string): StopJudgement => ({ believed: false, why });
  const limit = stop.limitMs;
  const elapsed = Math.round(sent.elapsedMs);
  if (stop.by === 'request') {
    if (sent.limitMs === undefined) return no(`names the request's limit, but none was sent`);
    if (Math.abs(limit! - sent.limitMs) > 1) return no(`names the request's limit as ${limit} ms, but the request was sent ${sent.limitMs} ms`);
  } else if (sent.limitMs !== undefined && limit !== undefined && limit > sent.limitMs + 1) {
    return no(`names a limit of its own of ${limit} ms, above the ${sent.limitMs} ms the request was sent, which would have ended first`);
  }
  // A limit of its own so small that an answer sent at once may take that long (MIN_OWN_LIMIT_MS) is not one fkgqa serve
  // holds to: it would charge the query a time limit for nothing. The limit sent (by=request) is fkgqa's own, checked by the clock alone.
  if (stop.kind === 'time-limit' && stop.by === 'endpoint' && limit !== undefined && limit < MIN_OWN_LIMIT_MS) {
    return no(`names a limit of its own of ${limit} ms, below the ${MIN_OWN_LIMIT_MS} ms from which the clock can tell a time limit from an answer at once`);
  }
  // A full queue (by=full, ms=0) names no limit the query had: refused at once, which the clock cannot contradict.
  const full = stop.kind === 'busy' && stop.by === 'full';
  if (limit !== undefined && !full && elapsed < earliestStop(limit)) return no(`names a limit of ${limit} ms but came ${elapsed} ms after the request was sent`);
  if (stop.kind === 'time-limit' && limit === undefined) {
    if (sent.limitMs === undefined) return no('names no limit, and none was sent: the clock cannot check it');
    if (elapsed < earliestStop(sent.limitMs)) return no(`names no limit, and came ${elapsed} ms after the request was sent with a limit of ${sent.limitMs} ms`);
  }
  if (stop.kind === 'busy') {
    const waited = stop.waitedMs;
    if (waited > elapsed + STOP_CLOCK_TOLERANCE_MS) return no(`says the query waited ${waited} ms but came ${elapsed} ms after the request was sent`);
    if (stop.by === 'queue' && waited + 1 < stop.limitMs)
      return no(`says the query waited only ${waited} ms of the queue limit of ${stop.limitMs} ms, which ends only when the whole of it was waited`);
    if (stop.by === 'request' && waited + 1 < Math.max(BUSY_MIN_WAIT_MS, BUSY_WAIT_SHARE * sentLimit(stop.limitMs))) {
      return no(`says the query waited only ${waited} ms of its limit of ${stop.limitMs} ms: it ran the rest, a time limit by fkgqa serve's rule, not busy`);
    }
  }
  return { believed: true, stop };
}

/**
 * The requests of one engine query still awaiting their answer, and the first answer that stopped
 * the query (a `503` with `Fkgqa-Stopped`) that is a verdict: a stop `judgeStop` believes — fkgqa
 * serve's busy, or the limit it was sent — or one it does not believe that was answered before the
 * engine's limit ended (that endpoint's error, which would have failed the query). A stop not believed
 * that comes in the wait after the limit is none: the query's own time limit stands, as for an
 * endpoint that did not answer. Fed by the engine's reports (`sent`, `answered`, `ended`); read at the
 * engine's time limit (`atLimit`).
 */
export class DueAnswers {
  /** @param silent endpoints of the query's `SERVICE SILENT` clauses (`silentTargets`): their stops are no verdict (the engine may have swallowed them) */
  constructor(private readonly silent: ReadonlySet<string> = new Set()) {}
  private inFlight = 0;
  private ended = false;
  /** Set by `atLimit` once the reports posted before the limit are read. */
  private pastLimit = false;
  private wake: (() => void) | undefined;
  /** The first `503` with `Fkgqa-Stopped` answered to this query that is a verdict (class comment; EndpointFault.stopped set). */
  stopped: EndpointFault | undefined;

  /** A request was sent. */
  sent(): void {
    this.inFlight++;
  }

  /** A request has its answer's status line (or failed); `fault` when that answer was a `503` with `Fkgqa-Stopped` (a verdict as the class comment says). */
  answered(fault?: EndpointFault): void {
    this.inFlight = Math.max(0, this.inFlight - 1);
    this.note(fault);
    this.wake?.();
  }

  /** The engine ended the query itself (a result or an error; `fault` the error's). */
  end(fault?: EndpointFault): void {
    this.note(fault);
    this.ended = true;
    this.wake?.();
  }

  private note(fault: EndpointFault | undefined): void {
    if (!fault?.stopped || this.silent.has(fault.endpoint)) return;
    if (!this.pastLimit || judgeStop(fault.stopped, stopSent(fault)).believed) this.stopped ??= fault;
  }

  /** Whether the engine ended the query itself. */
  get isEnded(): boolean {
    return this.ended;
  }

  /**
   * At the engine's time limit: the answer that stopped the query (class comment), waiting for one
   * (at most `graceMs`; with 0 only reports already posted are read) while requests are in flight, the
   * engine has not ended the query and `signal` is not aborted; undefined when there is none (the
   * query's own time limit).
   */
  async atLimit(graceMs = DUE_ANSWER_GRACE_MS, signal?: AbortSignal): Promise<EndpointFault | undefined> {
    const until = Date.now() + graceMs;
    // Reports already posted to this thread are read first (a port's messages are read after the timers of a loop turn).
    await new Promise<void>((r) => setImmediate(r));
    this.pastLimit = true;
    const onAbort = () => this.wake?.();
    signal?.addEventListener('abort', onAbort);
    try {
      while (!this.stopped && this.inFlight > 0 && !this.ended && !signal?.aborted && Date.now() < until) {
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, until - Date.now());
          this.wake = () => {
            clearTimeout(t);
            resolve();
          };
        });
        this.wake = undefined;
      }
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
    return signal?.aborted ? undefined : this.stopped;
  }
}

/**
 * The outcome of a query whose engine limit ended (both engines): the stop an endpoint answered
 * (`stoppedOutcome`) after `due.atLimit(graceMs, signal)`, else the limit's `aborted` (the caller
 * aborted meanwhile) or `timeout`.
 */
export async function outcomeAtLimit(due: DueAnswers, limit: QueryLimit, graceMs: number, signal: AbortSignal | undefined, requests: Record<string, number>): Promise<EngineOutcome> {
  const stopped = await due.atLimit(graceMs, signal);
  return stopped ? stoppedOutcome(stopped, requests) : limit.outcome(signal?.aborted ? 'aborted' : 'timeout', requests);
}

/** What a fault's request was sent with, for `judgeStop` (no elapsed time reported: 0, which believes no stop of a positive limit). */
export function stopSent(fault: EndpointFault): SentRequest {
  return { ...(fault.sentLimitMs !== undefined ? { limitMs: fault.sentLimitMs } : {}), elapsedMs: fault.elapsedMs ?? 0 };
}

/** The outcome of a query stopped at an endpoint's limit (`DueAnswers.stopped`): its `503`, told apart by `BoundedSparqlClient.federated` (busy, or the query's time limit). */
export function stoppedOutcome(fault: EndpointFault, requests: Record<string, number>): EngineOutcome {
  return { status: 'error', error: `the endpoint ${fault.endpoint} ${fault.what}`, httpStatus: 503, fault, requests };
}
