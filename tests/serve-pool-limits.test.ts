/**
 * The endpoint pool's time limits and whose fault a stop at them is (src/serve/pool-limits.ts), on a
 * fake clock: every `now` below is a reading of `performance.now()` in ms.
 */
import { describe, expect, it } from 'vitest';
import { queryLimits, startedLimits, stoppedAtLimit, waitingOutcome } from '../src/serve/pool-limits.js';

describe('serve pool limits (fake clock)', () => {
  it('a query waits until the sooner of its request deadline and the queue limit', () => {
    expect(queryLimits({ limitMs: 5000, requestLimitMs: 2000, arrived: 100 }, Infinity, 999)).toEqual({ limitMs: 5000, requestLimitMs: 2000, deadline: 2100, waitUntil: 2100, arrived: 100 });
    expect(queryLimits({ limitMs: 5000, requestLimitMs: 2000, arrived: 100 }, 500, 999)).toMatchObject({ deadline: 2100, waitUntil: 600 });
    // No request limit, no queue limit: it waits as long as it takes; arrival defaults to now.
    expect(queryLimits({ limitMs: 5000 }, Infinity, 42)).toEqual({ limitMs: 5000, requestLimitMs: undefined, deadline: Infinity, waitUntil: Infinity, arrived: 42 });
  });

  it('a query that never started is busy at the request deadline, unless the limit is under the busy minimum; at the queue limit it is busy by the queue', () => {
    const q = queryLimits({ limitMs: 5000, requestLimitMs: 2000, arrived: 0 }, Infinity, 0);
    // The timer fired a millisecond early: the wait counts as the whole limit.
    expect(waitingOutcome(q, Infinity, 1999)).toEqual({ status: 'busy', by: 'request', limitMs: 2000, waitedMs: 2000, ms: 2000 });
    const tiny = queryLimits({ limitMs: 5000, requestLimitMs: 50, arrived: 0 }, Infinity, 0);
    expect(waitingOutcome(tiny, Infinity, 50)).toEqual({ status: 'timeout', by: 'request', limitMs: 50, ms: 50 });
    const queued = queryLimits({ limitMs: 5000, requestLimitMs: 2000, arrived: 0 }, 300, 0);
    expect(waitingOutcome(queued, 300, 301)).toEqual({ status: 'busy', by: 'queue', limitMs: 300, waitedMs: 301, ms: 301 });
  });

  it("a started query stops at the sooner limit: the endpoint's own, or the request's, busy when it waited a tenth of it", () => {
    const q = queryLimits({ limitMs: 1000, requestLimitMs: 10_000, arrived: 0 }, Infinity, 0);
    const own = startedLimits(q, 500);
    expect(own).toEqual({ started: 500, limitBy: 'endpoint', waitedMs: 500, busyAtLimit: false, limitAt: 1500 });
    expect(stoppedAtLimit(q, own, 1500)).toEqual({ status: 'timeout', by: 'endpoint', limitMs: 1000, ms: 1000 });
    // Started after 9,500 ms of a 10,000 ms request limit: stopped at 10,000, the wait was the endpoint's.
    const late = startedLimits(q, 9500);
    expect(late).toEqual({ started: 9500, limitBy: 'request', waitedMs: 9500, busyAtLimit: true, limitAt: 10_000 });
    expect(stoppedAtLimit(q, late, 10_000)).toEqual({ status: 'busy', by: 'request', limitMs: 10_000, waitedMs: 9500, ranMs: 500, ms: 10_000 });
    // Waited 900 ms (under a tenth) and ran past the request's limit: its own time limit.
    const r = queryLimits({ limitMs: 60_000, requestLimitMs: 10_000, arrived: 0 }, Infinity, 0);
    const ran = startedLimits(r, 900);
    expect([ran.limitBy, ran.busyAtLimit, ran.limitAt]).toEqual(['request', false, 10_000]);
    expect(stoppedAtLimit(r, ran, 10_000)).toEqual({ status: 'timeout', by: 'request', limitMs: 10_000, ms: 9100 });
  });
});
