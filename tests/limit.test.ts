/**
 * The arithmetic of time limits and stops (src/federation/limit.ts), as pure functions on fixed
 * numbers: when a wait makes a stop busy (the endpoint's fault) rather than the query's time limit
 * (`waitedTooLong`), the limit sent to an endpoint (`sentLimit`), the `Fkgqa-Stopped` values read
 * (`parseStopped`), and when a stop is believed (`judgeStop`: it agrees with the limit sent and the
 * clock). Every route (the bounded client, both engines, serve's pool) decides by these.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  dueGraceMs,
  earliestStop,
  federationDeadline,
  judgeStop,
  MIN_OWN_LIMIT_MS,
  parseStopped,
  runLimit,
  sentLimit,
  STOP_CLOCK_TOLERANCE_MS,
  waitedTooLong,
  waitLimit,
  waitOutcome,
} from '../src/federation/limit.js';
import type { Deadline } from '../src/federation/engine.js';

describe("limit / busy or the query's time limit (waitedTooLong)", () => {
  it('busy from a tenth of the limit and at least 100 ms of wait', () => {
    expect([waitedTooLong(100, 1000), waitedTooLong(99, 1000)]).toEqual([true, false]);
    expect([waitedTooLong(999, 10_000), waitedTooLong(1000, 10_000)]).toEqual([false, true]);
    // A limit under BUSY_MIN_WAIT_MS is the query's own to miss, even after waiting all of it.
    expect([waitedTooLong(50, 50), waitedTooLong(60, 60)]).toEqual([false, false]);
  });
});

describe('limit / one deadline read by the engines (waitLimit, waitOutcome, runLimit, dueGraceMs), on a fake clock', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 1_000_000 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });
  const at = (deadline: Deadline) => ({ deadline });

  it("from: 'call' counts from since, the wait included; the engine's run keeps that limit and reads no due answers", () => {
    const options = at({ ms: 1000, from: 'call', since: 1_000_000 - 300 });
    const wait = waitLimit(options);
    expect([wait.since, wait.left(), runLimit(options, wait) === wait, dueGraceMs(options.deadline)]).toEqual([999_700, 700, true, 0]);
    wait.dispose();
  });

  it("from: 'start' with waitMs: a wait to waitMs is busy (503) and reports the whole waitMs", async () => {
    const options = at({ ms: 60_000, from: 'start', waitMs: 500 });
    const wait = waitLimit(options);
    expect(wait.left()).toBe(500);
    await vi.advanceTimersByTimeAsync(500);
    expect(await wait.stopped).toBe('timeout');
    expect(waitOutcome(options, 'comunica', wait, 'timeout', {})).toEqual({
      status: 'error',
      error: 'the federation engine comunica did not take the query within 500 ms (it was starting, or busy with other queries)',
      httpStatus: 503,
      busy: true,
      waitedMs: 500,
      requests: {},
    });
    expect(dueGraceMs(options.deadline)).toBe(2000);
  });

  it("from: 'start': the query's own limit starts when the engine takes it, whatever the wait", async () => {
    const options = at({ ms: 800, from: 'start' });
    const wait = waitLimit(options);
    await vi.advanceTimersByTimeAsync(5000);
    const run = runLimit(options, wait);
    expect([run.since, run.left()]).toEqual([1_005_000, 800]);
    expect(run.outcome('timeout', {})).toEqual({ status: 'timeout', requests: {} });
    run.dispose();
  });

  it("from: 'start' with clientMs: the run gets what the wait left; stopped there after a wait waitedTooLong calls long, busy", async () => {
    const options = at({ ms: 5000, from: 'start', clientMs: 2000 });
    const long = waitLimit(options);
    await vi.advanceTimersByTimeAsync(300);
    const afterLong = runLimit(options, long);
    expect([afterLong.left(), waitedTooLong(300, 2000)]).toEqual([1700, true]);
    expect(afterLong.outcome('timeout', {})).toMatchObject({ status: 'error', httpStatus: 503, busy: true, waitedMs: 300 });
    expect(afterLong.outcome('aborted', {})).toEqual({ status: 'error', error: 'aborted', requests: {} });
    afterLong.dispose();
    const short = waitLimit(options);
    await vi.advanceTimersByTimeAsync(150);
    const afterShort = runLimit(options, short);
    expect([afterShort.left(), afterShort.outcome('timeout', {})]).toEqual([1850, { status: 'timeout', requests: {} }]);
    afterShort.dispose();
    expect(dueGraceMs(options.deadline)).toBe(0);
  });

  it("a client's deadline under BUSY_MIN_WAIT_MS that ends the wait is the query's own time limit, not busy", async () => {
    const options = at({ ms: 5000, from: 'start', clientMs: 50 });
    const wait = waitLimit(options);
    await vi.advanceTimersByTimeAsync(50);
    expect(waitOutcome(options, 'jena', wait, await wait.stopped, {})).toEqual({ status: 'timeout', requests: {} });
  });

  it("since: a wait begun before the call (a caller's own queue) counts towards waitMs", async () => {
    const options = at({ ms: 60_000, from: 'start', waitMs: 1000, since: 1_000_000 - 400 });
    const wait = waitLimit(options);
    expect(wait.left()).toBe(600);
    await vi.advanceTimersByTimeAsync(600);
    expect(waitOutcome(options, 'comunica', wait, await wait.stopped, {})).toMatchObject({ busy: true, waitedMs: 1000 });
  });

  it("a wait whose timer fires late (a loaded machine) reports the limit as its wait, never more: busy's waited is at most the client's ms", async () => {
    for (const deadline of [{ ms: 5000, from: 'start', clientMs: 2000 } as const, { ms: 2000, from: 'start', waitMs: 2000 } as const]) {
      const options = at(deadline);
      const wait = waitLimit(options);
      await vi.advanceTimersByTimeAsync(2000);
      expect(await wait.stopped).toBe('timeout');
      // The event loop was blocked: the clock is 2.5 s past the limit when the stop is read.
      vi.setSystemTime(Date.now() + 2500);
      expect([Date.now() - wait.since, waitOutcome(options, 'comunica', wait, 'timeout', {})]).toEqual([4500, expect.objectContaining({ busy: true, httpStatus: 503, waitedMs: 2000 })]);
    }
    // A query the engine took only after its client's limit (its wait's stop read late): busy, its wait reported as that limit.
    const options = at({ ms: 5000, from: 'start', clientMs: 2000 });
    const wait = waitLimit(options);
    vi.setSystemTime(Date.now() + 3000);
    const run = runLimit(options, wait);
    expect([run.left(), run.passed(), run.outcome('timeout', {})]).toEqual([1, false, expect.objectContaining({ busy: true, httpStatus: 503, waitedMs: 2000 })]);
    run.dispose();
  });

  it('federationDeadline: the limit from when the engine takes the query, the wait bounded by the larger of 60 s and the limit', () => {
    expect([federationDeadline(10_000), federationDeadline(90_000)]).toEqual([
      { ms: 10_000, from: 'start', waitMs: 60_000 },
      { ms: 90_000, from: 'start', waitMs: 90_000 },
    ]);
  });
});

describe('limit / the limit sent to an endpoint (sentLimit)', () => {
  it('a tenth less, at most 250 ms less, at least 1 ms', () => {
    expect([10_000, 2500, 1000, 100, 1, 0].map(sentLimit)).toEqual([9750, 2250, 900, 90, 1, 1]);
  });
});

describe('limit / Fkgqa-Stopped values (parseStopped)', () => {
  it('reads busy and time-limit in any case and spacing; anything else is none', () => {
    expect(parseStopped('busy; by=request; waited=900; ms=9000')).toEqual({ kind: 'busy', by: 'request', waitedMs: 900, limitMs: 9000 });
    expect(parseStopped(' Time-Limit;by=Endpoint;ms=5000 ')).toEqual({ kind: 'time-limit', by: 'endpoint', limitMs: 5000 });
    expect(parseStopped('busy; by=full; waited=0; ms=0')).toEqual({ kind: 'busy', by: 'full', waitedMs: 0, limitMs: 0 });
    expect([parseStopped('garbage'), parseStopped('busy; by=request; waited=-1; ms=9000'), parseStopped('time-limit; by=agent; ms=1')]).toEqual([undefined, undefined, undefined]);
  });
});

describe('limit / a stop believed only when it agrees with the limit sent and the clock (judgeStop)', () => {
  const no = (why: string) => ({ believed: false, why });
  it('believes the stops fkgqa serve writes', () => {
    expect(judgeStop('time-limit; by=request; ms=9750', { limitMs: 9750, elapsedMs: 9760 })).toMatchObject({ believed: true, stop: { kind: 'time-limit', limitMs: 9750 } });
    expect(judgeStop('busy; by=request; waited=475; ms=5000', { limitMs: 5000, elapsedMs: 5010 }).believed).toBe(true);
    expect(judgeStop('busy; by=full; waited=0; ms=0', { limitMs: 5000, elapsedMs: 3 }).believed).toBe(true);
  });
  it('refuses a stop that names another limit than the one sent', () => {
    expect(judgeStop('busy; by=request; waited=1000; ms=1000', { limitMs: 9749, elapsedMs: 1900 })).toEqual(no("names the request's limit as 1000 ms, but the request was sent 9749 ms"));
    expect(judgeStop('time-limit; by=request; ms=5000', { elapsedMs: 6000 })).toEqual(no("names the request's limit, but none was sent"));
    expect(judgeStop('time-limit; by=endpoint; ms=30000', { limitMs: 5000, elapsedMs: 31_000 })).toEqual(
      no('names a limit of its own of 30000 ms, above the 5000 ms the request was sent, which would have ended first'),
    );
  });
  it('refuses a stop the clock contradicts: a time limit that came early, a wait longer than the request took', () => {
    // sentLimit(9750) = 9500: 250 ms of margin and 50 ms of tolerance, so 9450 ms is the earliest answer believed.
    expect(judgeStop('time-limit; by=request; ms=9750', { limitMs: 9750, elapsedMs: 1900 })).toEqual(no('names a limit of 9750 ms but came 1900 ms after the request was sent'));
    expect(judgeStop('time-limit; by=request; ms=9750', { limitMs: 9750, elapsedMs: 9449 }).believed).toBe(false);
    expect(judgeStop('time-limit; by=request; ms=9750', { limitMs: 9750, elapsedMs: 9450 }).believed).toBe(true);
    expect(judgeStop('busy; by=request; waited=6000; ms=5000', { limitMs: 5000, elapsedMs: 5100 })).toEqual(no('says the query waited 6000 ms but came 5100 ms after the request was sent'));
  });
  it("refuses a time limit of the endpoint's own too small for the clock to check (an answer at once passes it); the limit sent is believed as sent", () => {
    // 57 ms is the first own limit whose clock check asks for more than 0 ms: sentLimit(57) = 51, above the 50 ms tolerance.
    expect([MIN_OWN_LIMIT_MS, sentLimit(MIN_OWN_LIMIT_MS) > STOP_CLOCK_TOLERANCE_MS, sentLimit(MIN_OWN_LIMIT_MS - 1) > STOP_CLOCK_TOLERANCE_MS]).toEqual([57, true, false]);
    const below = (ms: number) => no(`names a limit of its own of ${ms} ms, below the 57 ms from which the clock can tell a time limit from an answer at once`);
    expect(judgeStop('time-limit; by=endpoint; ms=0', { limitMs: 29_750, elapsedMs: 0 })).toEqual(below(0));
    expect(judgeStop('time-limit; by=endpoint; ms=50', { limitMs: 29_750, elapsedMs: 2 })).toEqual(below(50));
    expect(judgeStop('time-limit; by=endpoint; ms=56', { limitMs: 29_750, elapsedMs: 56 })).toEqual(below(56));
    // Another server's 503 naming its own limit in its text (no limit sent): the same rule.
    expect(judgeStop({ kind: 'time-limit', by: 'endpoint', limitMs: 10 }, { elapsedMs: 0 })).toEqual(below(10));
    // From 57 ms the clock decides: at once is refused, and so is 45 ms (under 51 − 5.7 = 45.3); 46 ms is believed.
    expect(judgeStop('time-limit; by=endpoint; ms=57', { limitMs: 29_750, elapsedMs: 0 })).toEqual(no('names a limit of 57 ms but came 0 ms after the request was sent'));
    expect(judgeStop('time-limit; by=endpoint; ms=57', { limitMs: 29_750, elapsedMs: 1 })).toEqual(no('names a limit of 57 ms but came 1 ms after the request was sent'));
    expect(judgeStop('time-limit; by=endpoint; ms=57', { limitMs: 29_750, elapsedMs: 45 }).believed).toBe(false);
    expect(judgeStop('time-limit; by=endpoint; ms=57', { limitMs: 29_750, elapsedMs: 46 }).believed).toBe(true);
    // The limit fkgqa sent itself (a query with 20 ms left) is the query's, however small, once the clock shows it ran (16 − 1.8 = 14.2 ms).
    expect(judgeStop('time-limit; by=request; ms=18', { limitMs: 18, elapsedMs: 0 })).toEqual(no('names a limit of 18 ms but came 0 ms after the request was sent'));
    expect(judgeStop('time-limit; by=request; ms=18', { limitMs: 18, elapsedMs: 14 }).believed).toBe(false);
    expect(judgeStop('time-limit; by=request; ms=18', { limitMs: 18, elapsedMs: 15 })).toMatchObject({ believed: true, stop: { kind: 'time-limit', by: 'request', limitMs: 18 } });
    // Busy and a full queue are the endpoint's either way (never the query's): not affected.
    expect(judgeStop('busy; by=full; waited=0; ms=0', { limitMs: 29_750, elapsedMs: 0 }).believed).toBe(true);
  });
  it("the clock asks a tenth of the limit (at most 50 ms) besides sentLimit's margin: never an answer at once, at least four fifths of any limit", () => {
    expect([0, 1, 18, 57, 100, 500, 2500, 9750, 29_750].map(earliestStop)).toEqual([1, 0.9, 14.2, 45.3, 80, 400, 2200, 9450, 29_450]);
    for (const ms of [1, 2, 5, 10, 57, 99, 100, 499, 500, 1000, 2500, 9750, 60_000]) expect([ms, earliestStop(ms) > 0 && earliestStop(ms) >= 0.8 * ms - 1]).toEqual([ms, true]);
    // A relayed stop at sentLimit's margin early is still believed (a proxy answers at the limit it passed on): 500 → 450 sent.
    expect([judgeStop('time-limit; by=request; ms=500', { limitMs: 500, elapsedMs: 400 }).believed, judgeStop('time-limit; by=request; ms=500', { limitMs: 500, elapsedMs: 399 }).believed]).toEqual([
      true,
      false,
    ]);
    // A shard whose own --timeout (1000 ms) is below the limit sent, stopping a query that ran that long: believed.
    expect(judgeStop('time-limit; by=endpoint; ms=1000', { limitMs: 29_750, elapsedMs: 1003 })).toMatchObject({ believed: true, stop: { kind: 'time-limit', by: 'endpoint', limitMs: 1000 } });
    expect(judgeStop('time-limit; by=endpoint; ms=1000', { limitMs: 29_750, elapsedMs: 40 })).toEqual(no('names a limit of 1000 ms but came 40 ms after the request was sent'));
  });
  it('a time limit that names no length (another server\'s 503 "timed out") is believed only when the clock shows the query ran the limit sent', () => {
    const noLength = { kind: 'time-limit', by: 'endpoint' } as const;
    // Answered at once to a request sent 57 ms, or 29,750 ms: the endpoint's error (under earliestStop: 45.3 ms, 29,450 ms).
    expect(judgeStop(noLength, { limitMs: 57, elapsedMs: 3 })).toEqual(no('names no limit, and came 3 ms after the request was sent with a limit of 57 ms'));
    expect(judgeStop(noLength, { limitMs: 57, elapsedMs: 45 }).believed).toBe(false);
    expect(judgeStop(noLength, { limitMs: 29_750, elapsedMs: 46 })).toEqual(no('names no limit, and came 46 ms after the request was sent with a limit of 29750 ms'));
    expect(judgeStop(noLength, { limitMs: 29_750, elapsedMs: 29_449 })).toEqual(no('names no limit, and came 29449 ms after the request was sent with a limit of 29750 ms'));
    expect(judgeStop(noLength, { limitMs: 29_750, elapsedMs: 29_450 })).toEqual({ believed: true, stop: noLength });
    expect(judgeStop(noLength, { elapsedMs: 60_000 })).toEqual(no('names no limit, and none was sent: the clock cannot check it'));
  });
  it('refuses a busy whose wait serve would not call busy: a short wait of the request limit, part of the queue limit', () => {
    expect(judgeStop('busy; by=request; waited=200; ms=5000', { limitMs: 5000, elapsedMs: 5010 })).toEqual(
      no("says the query waited only 200 ms of its limit of 5000 ms: it ran the rest, a time limit by fkgqa serve's rule, not busy"),
    );
    expect(judgeStop('busy; by=queue; waited=2000; ms=3000', { limitMs: 5000, elapsedMs: 3100 })).toEqual(
      no('says the query waited only 2000 ms of the queue limit of 3000 ms, which ends only when the whole of it was waited'),
    );
    expect(judgeStop('garbage', { limitMs: 5000, elapsedMs: 5000 })).toEqual(no('is no Fkgqa-Stopped value fkgqa serve writes'));
  });
});
