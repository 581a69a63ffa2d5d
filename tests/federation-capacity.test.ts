// @module-tag split-tiers (tests/tiers.ts: the tests tagged slow run in npm run test:slow)
/**
 * The federation engine's capacity under load: a query that waited so long for the engine that it
 * cannot finish is not started (`lateStart`: busy at once, nothing sent), and a Comunica thread whose
 * query was stopped at its time limit is kept for the next query (the query cancelled in the thread)
 * rather than torn down and replaced (a thread's start costs 0.5–0.9 s of CPU, and its first queries
 * run before the JIT warmed up). No wall-clock bound: the assertions are counts, outcomes and orderings.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ComunicaEngine } from '../src/federation/comunica/engine.js';
import { lateStart, START_FLOOR_MS, startFloor, waitLimit } from '../src/federation/limit.js';
import type { Deadline } from '../src/federation/engine.js';
import { MEDIA } from '../src/sparql/protocol.js';

describe("the start floor: a query is not started with less of its client's limit left than startFloor (lateStart), on a fake clock", () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 1_000_000 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });
  /** lateStart for a query that waited `waited` ms of its client's limit `clientMs` (or serve's own limit, counted from its start). */
  const late = (deadline: Deadline, waited: number) => {
    const options = { deadline: { ...deadline, since: 1_000_000 - waited } as Deadline };
    const wait = waitLimit(options);
    try {
      return lateStart(options, 'comunica', wait, {});
    } finally {
      wait.dispose();
    }
  };

  it('the floor is START_FLOOR_MS, or a tenth of a smaller limit', () => {
    expect([START_FLOOR_MS, startFloor(1000), startFloor(60_000), startFloor(400), startFloor(200)]).toEqual([100, 100, 100, 40, 20]);
  });

  it("a client's limit of 1000 ms: a query that waited 901 ms (99 ms left) is busy at once, its wait reported; one that waited 900 ms starts", () => {
    expect(late({ ms: 30_000, from: 'start', clientMs: 1000 }, 901)).toEqual({
      status: 'error',
      error:
        'the federation engine comunica was busy: the query waited 901 ms for it behind other queries, which left 99 ms of its limit of 1000 ms, less than the 100 ms a federated query is started with at the least: it was not started, not a fault of the query: retry later',
      httpStatus: 503,
      busy: true,
      waitedMs: 901,
      requests: {},
    });
    expect(late({ ms: 30_000, from: 'start', clientMs: 1000 }, 900)).toBeUndefined();
  });

  it("a small limit: the floor is a tenth of it; under BUSY_MIN_WAIT_MS of wait, or without a client's limit, the query always starts (its limit is its own)", () => {
    expect(late({ ms: 30_000, from: 'start', clientMs: 200 }, 181)).toMatchObject({ busy: true, waitedMs: 181 });
    expect(late({ ms: 30_000, from: 'start', clientMs: 200 }, 180)).toBeUndefined();
    // 59 of 60 ms waited: a limit under BUSY_MIN_WAIT_MS (100 ms) is the query's own to miss, never busy.
    expect(late({ ms: 30_000, from: 'start', clientMs: 60 }, 59)).toBeUndefined();
    // serve's own limit counts from the start: the query has all of it whatever it waited.
    expect(late({ ms: 1000, from: 'start', waitMs: 1000 }, 999)).toBeUndefined();
    expect(late({ ms: 1000, from: 'call' }, 999)).toBeUndefined();
  });
});

/** A shard endpoint that holds every request whose query names `hold` until the client goes away, and answers others with no rows at once; `closed` counts the requests closed before their answer. */
async function holdingShard(): Promise<{ url: (n: number) => string; received: string[]; closed: () => number; onClosed: Promise<void>; close: () => Promise<void> }> {
  const received: string[] = [];
  let closed = 0;
  let firstClosed!: () => void;
  const onClosed = new Promise<void>((r) => (firstClosed = r));
  const held = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    // Closed before its answer: a held request, or one its client stopped before its body arrived (a busy machine).
    res.on('close', () => {
      held.delete(res);
      if (res.writableFinished) return;
      closed++;
      firstClosed();
    });
    let body = '';
    req.on('data', (c: Buffer) => (body += c));
    req.on('end', () => {
      const query = new URLSearchParams(body).get('query') ?? new URL(req.url!, 'http://x').searchParams.get('query') ?? body;
      received.push(query);
      if (query.includes('hold')) {
        held.add(res);
        return;
      }
      res.writeHead(200, { 'content-type': MEDIA.json }).end(JSON.stringify({ head: { vars: ['s'] }, results: { bindings: [] } }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  return {
    url: (n) => `http://127.0.0.1:${port}/a-shard${n}/sparql`,
    received,
    closed: () => closed,
    onClosed,
    close: async () => {
      for (const res of held) res.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

describe('the Comunica engine keeps its capacity: stopped queries are cancelled in their thread, late ones not started', () => {
  // Waits out a 3 s limit after the thread's start.
  it(
    "a query stopped at its client's deadline is cancelled in its thread (its request to the shard closed); the thread is kept and answers the next query",
    { tags: ['slow'], timeout: 180_000 },
    async () => {
      const shard = await holdingShard();
      const [a, b] = [shard.url(1), shard.url(2)];
      const engine = new ComunicaEngine({ endpoints: [a, b], parallel: 1 });
      try {
        await engine.warm();
        // The shard holds this query's request: only its limit ends it (3 s: long enough for a warm thread to send it on a busy machine).
        const held = await engine.query(`SELECT * WHERE { SERVICE <${a}> { ?s <urn:hold> ?o } SERVICE <${b}> { ?o ?p ?t } }`, MEDIA.json, {
          deadline: { ms: 30_000, from: 'start', clientMs: 3000 },
        });
        expect(held.status).toBe('timeout');
        expect(held.requests[a]).toBeGreaterThanOrEqual(1);
        // The engine stopped the query's requests: the shard sees its request closed (nothing else closes it).
        await shard.onClosed;
        // The next query waits for the one thread (until it confirmed the stop) and runs on it.
        const next = await engine.query(`SELECT * WHERE { SERVICE <${a}> { ?s ?p ?o } SERVICE <${b}> { ?o ?q ?t } }`, MEDIA.json, { deadline: { ms: 120_000, from: 'start' } });
        expect(next).toMatchObject({ status: 'ok', requests: { [a]: expect.any(Number) } });
        // No thread was replaced: the engine cancelled the query in it (kept 1), or, on a loaded machine whose event loop read
        // the thread's own end of the query at the same limit first, the thread ended it itself and was idle again (kept 0).
        expect([engine.restarts, shard.closed()]).toEqual([0, 1]);
        expect(engine.kept).toBeLessThanOrEqual(1);
      } finally {
        await engine.close();
        await shard.close();
      }
    },
  );

  it('a query that waited until less than the start floor of its limit was left is answered busy at once: nothing is sent, no thread is lost', async () => {
    const shard = await holdingShard();
    const [a, b] = [shard.url(1), shard.url(2)];
    const engine = new ComunicaEngine({ endpoints: [a, b], parallel: 1 });
    try {
      await engine.warm();
      // Its client's limit of 1000 ms counts from 950 ms ago (a wait in front of the engine: serve's fair queue).
      const o = await engine.query(`SELECT * WHERE { SERVICE <${a}> { ?s <urn:hold> ?o } SERVICE <${b}> { ?o ?p ?t } }`, MEDIA.json, {
        deadline: { ms: 30_000, from: 'start', clientMs: 1000, since: Date.now() - 950 },
      });
      expect(o).toMatchObject({ status: 'error', busy: true, httpStatus: 503, requests: {} });
      // The start floor refuses it when the engine is free at once (lateStart, on a fake clock above); on a loaded machine
      // the 50 ms left can run out before the thread takes it (waitOutcome): busy either way, never started.
      expect(o.status === 'error' && o.error).toMatch(/it was not started|did not take the query within 1000 ms/);
      expect(o.status === 'error' && o.waitedMs).toBeGreaterThanOrEqual(950);
      expect([shard.received.length, engine.restarts]).toEqual([0, 0]);
    } finally {
      await engine.close();
      await shard.close();
    }
  }, 180_000);
});
