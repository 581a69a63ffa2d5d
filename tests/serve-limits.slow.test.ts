import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QueryExecutor } from '../src/eval/execute.js';
import { BoundedSparqlClient, readStop, sentLimit } from '../src/federation/client.js';
import { registryFromEndpointsValue } from '../src/federation/registry.js';
import { runSparqlQuery } from '../src/mcp/run-query.js';
import { createMcpContext } from '../src/mcp/server.js';
import { EndpointPool } from '../src/serve/pool.js';
import type { PoolEndpoint } from '../src/serve/pool-groups.js';
import type { PoolOutcome } from '../src/serve/pool-limits.js';
import { serve, type ShardServer } from '../src/serve/server.js';
import { MEDIA } from '../src/sparql/protocol.js';
import { ComunicaEngine } from '../src/federation/comunica/engine.js';
import { BUSY_WAIT_SHARE, DueAnswers, judgeStop, STOP_CLOCK_TOLERANCE_MS, stoppedOutcome, stoppedParses, waitLimit, waitOutcome } from '../src/federation/limit.js';
import { silentTargets } from '../src/sparql/services.js';
import { infrastructureMessage } from '../src/mcp/tool-error.js';
import { behindHeavy, HEAVY, until } from './busy-helpers.js';
import { demoBuild, tmpDir } from './helpers.js';
import fs from 'node:fs';
import path from 'node:path';

/**
 * serve's time limits never blame an agent for the infrastructure: a query kept waiting
 * behind another agent's slow query is answered 503 busy (the endpoint's fault), not "stopped at the
 * time limit" (the query's); the bounded client, run_sparql_query and eval class it as
 * infrastructure, naming the endpoint.
 */

const COUNT = 'SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }';
/** A cross product of 8 triple patterns: hours in oxigraph on library-shard1. */

let shards: string;
beforeAll(async () => {
  shards = await demoBuild(tmpDir('fkgqa-limits-'));
});

const post = (url: string, query: string, headers: Record<string, string> = {}, signal?: AbortSignal) =>
  fetch(url, { method: 'POST', headers: { 'Content-Type': MEDIA.sparqlQuery, Accept: MEDIA.json, ...headers }, body: query, signal });

describe('serve: a query kept waiting behind another is answered busy, not stopped at its time limit', () => {
  let s: ShardServer;
  beforeAll(async () => {
    // One worker holds every library endpoint and no takeover happens (slowMs 10 min): the COUNTs must wait.
    s = await serve({ shards, kgs: ['library'], timeoutMs: 120_000, workers: 1, slowMs: 600_000, writeFiles: false });
  });
  afterAll(async () => {
    await s?.close();
  });

  it('5 COUNTs with Fkgqa-Timeout 1500 behind a slow query: 503 busy with Retry-After, the wait named; a slow query alone is still its own time limit', async () => {
    await behindHeavy(s, 'library-shard1', async () => {
      const t0 = performance.now();
      const rs = await Promise.all(
        Array.from({ length: 5 }, async () => {
          const r = await post(s.endpoint('library-shard2')!.url, COUNT, { 'Fkgqa-Timeout': '1500' });
          return Object.assign(r, { elapsedMs: performance.now() - t0 });
        }),
      );
      for (const r of rs) {
        expect(r.status).toBe(503);
        expect(r.headers.get('retry-after')).toBe('1');
        // At least the whole limit, even when the Node timer fires 1 ms early (waited=1499 otherwise: the pool counts the wait to the deadline).
        expect(r.headers.get('fkgqa-stopped')).toMatch(/^busy; by=request; waited=(1[5-9]\d\d|[2-9]\d\d\d|\d{5,}); ms=1500$/);
        const body = await r.text();
        expect(body).toMatch(
          /^library-shard2 was busy: the query waited \d+ ms behind other queries and had not started when the request's limit of 1500 ms ended; the wait is the endpoint's, not the query's: retry later\n$/,
        );
        // Believed busy by the bounded client's reading (judgeStop: the limit sent, the clock), not a time limit of the query.
        const stop = readStop(503, r.headers.get('fkgqa-stopped'), body, { limitMs: 1500, elapsedMs: r.elapsedMs });
        expect(stop && 'stop' in stop && stop.stop).toMatchObject({ kind: 'busy', by: 'request', limitMs: 1500 });
        expect(stop && 'stop' in stop && stop.stop.kind === 'busy' && stop.stop.waitedMs).toBeGreaterThanOrEqual(1500);
      }
    });
    // The same limit on a slow query that ran at once: the query's own time limit (the agent's). The
    // stop replaced the worker: the fresh one loads each endpoint first (a wait of the endpoint's, which would be busy).
    for (const n of [1, 2, 3, 4]) expect((await post(s.endpoint(`library-shard${n}`)!.url, COUNT)).status).toBe(200);
    const alone = await post(s.endpoint('library-shard1')!.url, HEAVY, { 'Fkgqa-Timeout': '1500' });
    expect(alone.status).toBe(503);
    expect(alone.headers.get('fkgqa-stopped')).toBe('time-limit; by=request; ms=1500');
    expect(alone.headers.get('retry-after')).toBeNull();
    // The request log marks the busy answers.
    expect(s.log.counts()['library-shard2']).toMatchObject({ errors: 5 });
  });

  it('the bounded client, run_sparql_query and eval: an endpoint error (class endpoint, infrastructure true, the endpoint named), not a timeout', async () => {
    const registry = registryFromEndpointsValue(s.endpointsFile(), 'test');
    const u = s.endpoint('library-shard2')!.url;
    const client = new BoundedSparqlClient(registry);
    const ctx = createMcpContext({ registry, build: null, state: null, callLog: null });
    const executor = new QueryExecutor(registry, 3000);
    try {
      await behindHeavy(s, 'library-shard1', async () => {
        // The three wait side by side behind the slow query (each its own 3000 ms): one wait, not three in a row.
        const t0 = performance.now();
        const timed = async <T>(p: Promise<T>): Promise<[T, number]> => [await p, performance.now() - t0];
        const [[o, ms], r, e] = await Promise.all([
          timed(client.direct(u, COUNT, MEDIA.json, 3000)),
          runSparqlQuery(ctx, { query: `SELECT (COUNT(*) AS ?n) WHERE { SERVICE <${u}> { ?s ?p ?o } }`, timeout_ms: 3000 }),
          executor.run(`SELECT (COUNT(*) AS ?n) WHERE { SERVICE <${u}> { ?s ?p ?o } }`),
        ]);
        // What ended the client's call is serve's answer at the limit it was sent (3000 less the margin), not the client's own timer.
        expect(ms).toBeGreaterThanOrEqual(sentLimit(3000) - 5);
        expect(o.status).toBe('error');
        expect(o.status === 'error' && o.busy).toMatchObject({ endpoint: u });
        expect(o.status === 'error' && o.busy && o.busy.waitedMs).toBeGreaterThanOrEqual(sentLimit(3000) - 5);
        expect(o.status === 'error' && o.httpStatus).toBe(503);

        expect(r.isError).toBe(true);
        expect(r.errorClass).toBe('endpoint');
        expect(r.text).toMatch(
          new RegExp(`^Error \\(endpoint\\): the endpoint ${u.replace(/[.?]/g, '\\$&')} was busy \\(HTTP 503\\): library-shard2 was busy: the query waited \\d+ ms behind other queries`),
        );
        expect(r.text).toContain('not a fault of the query, and not an empty result (the answer is unknown). Retry it.');
        expect(r.error).toEqual({ class: 'endpoint', infrastructure: true, endpoint: u });

        expect(e).toMatchObject({ status: 'error', errorClass: 'endpoint', infrastructure: true, failedEndpoint: u });
      });
      // The endpoint answers again once the slow query is gone.
      const ok = await client.direct(u, COUNT, MEDIA.json, 30_000);
      expect(ok.status).toBe('ok');
    } finally {
      await executor.close();
      await ctx.close();
      await client.close();
    }
  });

  it('the federation endpoint passes a busy shard endpoint on as 503 busy (a lone SERVICE)', async () => {
    const u = s.endpoint('library-shard2')!.url;
    const fed = `${new URL(u).origin}/federation/sparql`;
    await behindHeavy(s, 'library-shard1', async () => {
      const r = await fetch(`${fed}?query=${encodeURIComponent(`SELECT (COUNT(*) AS ?n) WHERE { SERVICE <${u}> { ?s ?p ?o } }`)}&timeout=2000ms`);
      expect(r.status).toBe(503);
      expect(r.headers.get('retry-after')).toBe('1');
      expect(r.headers.get('fkgqa-stopped')).toMatch(/^busy; by=request; waited=\d+; ms=2000$/);
      expect(await r.text()).toContain(`the endpoint ${u} was busy (HTTP 503): library-shard2 was busy`);
    });
  });
});

describe('the endpoint pool: whose fault a stop is (BUSY_WAIT_SHARE), and the queue limit', () => {
  const endpointsOf = (): PoolEndpoint[] => {
    const manifest = JSON.parse(fs.readFileSync(path.join(shards, 'library', 'manifest.json'), 'utf8')) as { shards: { endpoint: string; file: string; triples: number }[] };
    return manifest.shards.map((sh) => ({ id: sh.endpoint, sources: [{ file: path.join(shards, 'library', sh.file), format: MEDIA.ntriples }], triples: sh.triples }));
  };
  const task = (endpoint: string, query: string) => ({ endpoint, query, accept: MEDIA.json, protocolDataset: false });

  it('a query that waited more than a tenth of its limit and was then stopped at the deadline is busy (ranMs said); one that ran at once is its own time limit', async () => {
    expect(BUSY_WAIT_SHARE).toBe(0.1);
    const pool = await EndpointPool.start(endpointsOf(), { workers: 1, slowMs: 600_000 });
    try {
      // The first HEAVY runs 1000 ms (the endpoint's limit); the second waits behind it (1000 ms, over a tenth of 2500), then runs until its request's limit.
      const first = pool.run('library-shard1', task('library-shard1', HEAVY), { limitMs: 1000 });
      const second = pool.run('library-shard1', task('library-shard1', HEAVY), { limitMs: 600_000, requestLimitMs: 2500 });
      expect(await first).toMatchObject({ status: 'timeout', by: 'endpoint', limitMs: 1000 });
      const o = (await second) as Extract<PoolOutcome, { status: 'busy' }>;
      expect(o).toMatchObject({ status: 'busy', by: 'request', limitMs: 2500 });
      expect(o.waitedMs).toBeGreaterThanOrEqual(1000);
      expect(o.ranMs! + o.waitedMs).toBeGreaterThanOrEqual(2490);
      // Alone, once the fresh worker has loaded every endpoint (the wait for a load is the endpoint's): the query's own time limit.
      for (const n of [1, 2, 3, 4]) expect(await pool.run(`library-shard${n}`, task(`library-shard${n}`, COUNT), { limitMs: 600_000 })).toMatchObject({ status: 'ok' });
      expect(await pool.run('library-shard1', task('library-shard1', HEAVY), { limitMs: 600_000, requestLimitMs: 1000 })).toMatchObject({ status: 'timeout', by: 'request', limitMs: 1000 });
    } finally {
      await pool.close();
    }
  });

  it('a query without a request limit still waiting at queueLimitMs is answered busy by the queue; the others answer', async () => {
    const pool = await EndpointPool.start(endpointsOf(), { workers: 1, slowMs: 600_000, queueLimitMs: 800 });
    try {
      const heavy = pool.run('library-shard1', task('library-shard1', HEAVY), { limitMs: 600_000 });
      const waiting = await pool.run('library-shard2', task('library-shard2', COUNT), { limitMs: 600_000 });
      expect(waiting).toMatchObject({ status: 'busy', by: 'queue', limitMs: 800 });
      expect((waiting as Extract<PoolOutcome, { status: 'busy' }>).waitedMs).toBeGreaterThanOrEqual(799);
      expect((waiting as Extract<PoolOutcome, { status: 'busy' }>).ranMs).toBeUndefined();
      await pool.close();
      expect(await heavy).toMatchObject({ status: 'error', error: 'the server is stopping' });
    } finally {
      await pool.close();
    }
  });
});

describe("/federation/sparql: the federation engine's start-up and the wait for it are not the query's time limit", () => {
  let s: ShardServer;
  const ep = (n: number) => s.endpoint(`library-shard${n}`)!.url;
  /** 5 SERVICE clauses joined locally: 35^3 × 8^2 rows, far longer than any limit here. */
  const slow = () =>
    `SELECT (COUNT(*) AS ?n) WHERE { SERVICE <${ep(1)}> { ?a ?b ?c } SERVICE <${ep(2)}> { ?d ?e ?f } SERVICE <${ep(1)}> { ?g ?h ?i } SERVICE <${ep(2)}> { ?j ?k ?l } SERVICE <${ep(1)}> { ?m ?n2 ?o } }`;
  /** 35 × 8 = 280 rows. */
  const good = () => `SELECT (COUNT(*) AS ?n) WHERE { SERVICE <${ep(1)}> { ?s ?p ?o } SERVICE <${ep(2)}> { ?x ?y ?z } }`;
  beforeAll(async () => {
    s = await serve({ shards, kgs: ['library'], timeoutMs: 60_000, writeFiles: false, engines: 1 }); // one engine thread: the queries below wait behind each other
  });
  afterAll(async () => {
    await s?.close();
  });

  it("a request's own limit at /federation/sparql: the wait behind another federated query is busy, never the query's time limit; a query that ran at once is its own", async () => {
    const fed = `${new URL(ep(1)).origin}/federation/sparql`;
    // The engine's thread is up: the slow query starts at once.
    expect((await post(fed, good())).status).toBe(200);
    s.log.reset();
    const a = post(fed, slow(), { 'Fkgqa-Timeout': '3000' });
    // It has the only engine thread once a shard endpoint answered one of its SERVICE clauses (an event, not a sleep).
    await until(() => Object.keys(s.log.counts()).some((id) => id.startsWith('library-shard')));
    // Sent behind it: they wait for the only engine thread (and for its replacement's start).
    const [b, c] = await Promise.all([post(fed, slow(), { 'Fkgqa-Timeout': '5000' }), post(fed, good(), { 'Fkgqa-Timeout': '2000' })]);
    const ra = await a;
    expect(ra.status).toBe(503);
    expect(ra.headers.get('fkgqa-stopped')).toBe('time-limit; by=request; ms=3000');
    for (const [r, ms] of [
      [b, 5000],
      [c, 2000],
    ] as const) {
      expect(r.status).toBe(503);
      const stopped = r.headers.get('fkgqa-stopped')!;
      expect(stopped).toMatch(new RegExp(`^busy; by=request; waited=\\d+; ms=${ms}$`));
      expect(Number(/waited=(\d+)/.exec(stopped)![1])).toBeGreaterThan(ms / 10);
      expect(r.headers.get('retry-after')).toBe('1');
      expect(await r.text()).toMatch(/^the federation engine (comunica )?(was busy: the query waited \d+ ms|did not take the query within \d+ ms)/);
    }
  });

  it("run_sparql_query: a federated query behind the agent's own slow one (one engine thread) is not charged the wait: it answers after the slow one stops", async () => {
    const registry = registryFromEndpointsValue(s.endpointsFile(), 'test');
    const ctx = createMcpContext({ registry, build: null, state: null, callLog: null });
    try {
      // The good query's own limit (4000 ms) is what a 280-row join needs at load 20 (1000 ms was not); the slow one's is longer.
      const slowCall = runSparqlQuery(ctx, { query: slow(), timeout_ms: 5000 });
      // The slow query takes the only thread first (the engine starts for it); the good one waits behind it.
      await new Promise((r) => setTimeout(r, 50));
      const t0 = performance.now();
      const goodCall = await runSparqlQuery(ctx, { query: good(), timeout_ms: 4000 });
      const slowDone = await slowCall;
      expect(slowDone.errorClass).toBe('timeout');
      // It waited longer than its own 4000 ms limit (the slow query ran its 5000 ms), and still answered 280.
      expect(performance.now() - t0).toBeGreaterThan(4000);
      expect(goodCall.isError).toBeFalsy();
      expect(goodCall.text).toBe('1 row\n?n\n280');
    } finally {
      await ctx.close();
    }
  });

  it('an engine thread that cannot start is an error naming the start-up failure (infrastructure), not a wait until the time limit', async () => {
    const broken = path.join(tmpDir('fkgqa-broken-engine-'), 'engine.cjs');
    fs.writeFileSync(broken, 'throw new Error("no actors here");\n');
    const engine = new ComunicaEngine({ endpoints: [1, 2].map(ep) });
    (engine as unknown as { data: { enginePath: string } }).data.enginePath = broken;
    try {
      const o = await engine.query(good(), MEDIA.json, { deadline: { ms: 600_000, from: 'start' } });
      expect(o.status).toBe('error');
      const error = o.status === 'error' ? o.error : '';
      expect(error).toMatch(/^the federation engine comunica failed to start: no actors here/);
      expect(infrastructureMessage(error)).toBe(true);
    } finally {
      await engine.close();
    }
  });

  it('warmFederation starts the engine with serve; after 6 clients hung up mid-query the next federated query is answered, never stopped at a time limit', async () => {
    const w = await serve({ shards, kgs: ['library'], timeoutMs: 20_000, writeFiles: false, warmFederation: true });
    try {
      expect(w.federationWarm).toBeDefined();
      await w.federationWarm;
      const fed = `${new URL(w.endpoint('library-shard1')!.url).origin}/federation/sparql`;
      const wep = (n: number) => w.endpoint(`library-shard${n}`)!.url;
      const q = `SELECT (COUNT(*) AS ?n) WHERE { SERVICE <${wep(1)}> { ?s ?p ?o } SERVICE <${wep(2)}> { ?x ?y ?z } }`;
      const slowQ = `SELECT (COUNT(*) AS ?n) WHERE { SERVICE <${wep(1)}> { ?a ?b ?c } SERVICE <${wep(2)}> { ?d ?e ?f } SERVICE <${wep(1)}> { ?g ?h ?i } SERVICE <${wep(2)}> { ?j ?k ?l } }`;
      const postFed = (query: string, signal?: AbortSignal) => fetch(fed, { method: 'POST', headers: { 'Content-Type': MEDIA.sparqlQuery, Accept: MEDIA.json }, body: query, signal });
      const first = await postFed(q);
      expect(first.status).toBe(200);
      expect(((await first.json()) as { results: { bindings: { n: { value: string } }[] } }).results.bindings[0].n.value).toBe('280');
      for (let i = 0; i < 6; i++) {
        const ac = new AbortController();
        const r = postFed(slowQ, ac.signal).catch((e: Error) => e.name);
        await new Promise((resolve) => setTimeout(resolve, 300));
        ac.abort();
        expect(await r).toBe('AbortError');
      }
      // The replacement thread starts at once; the query's limit counts from when it takes the query. At a load
      // where the start takes over --timeout, the answer is 503 busy (the engine's), never the query's time limit.
      const after = await postFed(q);
      if (after.status === 503) expect(after.headers.get('fkgqa-stopped')).toMatch(/^busy; by=queue; waited=\d+; ms=20000$/);
      else {
        expect(after.status).toBe(200);
        expect(((await after.json()) as { results: { bindings: { n: { value: string } }[] } }).results.bindings[0].n.value).toBe('280');
      }
    } finally {
      await w.close();
    }
  });
});

describe("the federation engine's wait: counted to its limit", () => {
  it('a query the engine did not take within waitMs reports waited at least waitMs, even when the timer fired a millisecond early (never waited=99; ms=100)', () => {
    const options = { deadline: { ms: 60_000, from: 'start' as const, waitMs: 100 } };
    // A wait whose timer fired 1 ms before its limit (Node timers may).
    const wait = { ...waitLimit(options), since: Date.now() - 99 };
    const o = waitOutcome(options, 'comunica', wait, 'timeout', {});
    wait.dispose();
    expect(o).toMatchObject({
      status: 'error',
      busy: true,
      httpStatus: 503,
      error: 'the federation engine comunica did not take the query within 100 ms (it was starting, or busy with other queries)',
    });
    expect(o.status === 'error' && o.waitedMs).toBe(100);
  });
});

describe('judgeStop: a stop is believed only when it agrees with the limit sent and with the clock (docs/serving.md)', () => {
  const sent = (limitMs: number | undefined, elapsedMs: number) => ({ ...(limitMs !== undefined ? { limitMs } : {}), elapsedMs });
  it('believes every stop fkgqa serve and its /federation/sparql write, at their limit or later (load only delays an answer)', () => {
    expect(STOP_CLOCK_TOLERANCE_MS).toBe(50);
    const believed = [
      judgeStop('busy; by=request; waited=1500; ms=1500', sent(1500, 1503)),
      judgeStop('busy; by=request; waited=1000; ms=2500', sent(2500, 7000)), // waited 1000, then ran; answered late (a loaded machine)
      judgeStop('busy; by=queue; waited=30001; ms=30000', sent(59_750, 30_020)),
      judgeStop('time-limit; by=request; ms=9750', sent(9750, 9751)),
      judgeStop('time-limit; by=endpoint; ms=1000', sent(9750, 1200)),
      // /federation/sparql relays a shard's answer at the limit it passed on (sentLimit of the request's, 250 ms less).
      judgeStop('time-limit; by=request; ms=3000', sent(3000, 2760)),
      judgeStop('busy; by=request; waited=275; ms=3000', sent(3000, 2760)),
      // A timer that fired a millisecond early, the wait rounded.
      judgeStop('busy; by=request; waited=1499; ms=1500', sent(1500, 1499)),
    ];
    expect(believed.map((j) => j.believed)).toEqual(believed.map(() => true));
    expect(believed[0]).toEqual({ believed: true, stop: { kind: 'busy', by: 'request', waitedMs: 1500, limitMs: 1500 } });
    expect(believed[4]).toEqual({ believed: true, stop: { kind: 'time-limit', by: 'endpoint', limitMs: 1000 } });
  });
  it('disbelieves a stop that names another limit than the one sent, came before its limit, waited longer than the request existed, or ran most of its limit and says busy', () => {
    const why = (stopped: string, limitMs: number | undefined, elapsedMs: number) => {
      const j = judgeStop(stopped, sent(limitMs, elapsedMs));
      return j.believed ? 'believed' : j.why;
    };
    expect([
      why('busy; by=request; waited=900; ms=1000', 9749, 1005),
      why('time-limit; by=request; ms=9750', 9750, 1900),
      why('time-limit; by=request; ms=9750', 9750, 9400),
      why('busy; by=request; waited=9000; ms=9750', 9750, 9760),
      why('busy; by=request; waited=5000; ms=1500', 1500, 1600),
      why('busy; by=request; waited=5; ms=9750', 9750, 9760),
      why('time-limit; by=endpoint; ms=30000', 9750, 30_010),
      why('time-limit; by=request; ms=900', undefined, 1000),
      why('busy; by=queue; waited=200; ms=30000', 59_750, 30_010),
      why('garbage', 1000, 1000),
    ]).toEqual([
      "names the request's limit as 1000 ms, but the request was sent 9749 ms",
      'names a limit of 9750 ms but came 1900 ms after the request was sent',
      'names a limit of 9750 ms but came 9400 ms after the request was sent',
      'believed',
      'says the query waited 5000 ms but came 1600 ms after the request was sent',
      "says the query waited only 5 ms of its limit of 9750 ms: it ran the rest, a time limit by fkgqa serve's rule, not busy",
      'names a limit of its own of 30000 ms, above the 9750 ms the request was sent, which would have ended first',
      "names the request's limit, but none was sent",
      'says the query waited only 200 ms of the queue limit of 30000 ms, which ends only when the whole of it was waited',
      'is no Fkgqa-Stopped value fkgqa serve writes',
    ]);
  });
  it("another server's 503 that names a time limit is checked against the clock only (it never saw Fkgqa-Timeout)", () => {
    expect(readStop(503, null, 'the endpoint stopped the query at its time limit of 1000 ms', { limitMs: 59_750, elapsedMs: 4 })).toEqual({
      unbelieved: 'names a limit of 1000 ms but came 4 ms after the request was sent',
    });
    expect(readStop(503, null, 'the endpoint stopped the query at its time limit of 1000 ms', { limitMs: 59_750, elapsedMs: 1001 })).toEqual({
      stop: { kind: 'time-limit', by: 'endpoint', limitMs: 1000 },
    });
    expect(readStop(503, null, 'overloaded', { limitMs: 59_750, elapsedMs: 4 })).toBeUndefined();
    expect(readStop(500, 'busy; by=request; waited=900; ms=900', '', { limitMs: 900, elapsedMs: 901 })).toBeUndefined();
  });
});

describe("answers due at the engine's limit (DueAnswers)", () => {
  const busy = {
    endpoint: 'http://127.0.0.1:1/a/sparql',
    what: 'answered HTTP 503 (Fkgqa-Stopped: busy; by=request; waited=900; ms=900)',
    httpStatus: 503,
    stopped: 'busy; by=request; waited=900; ms=900',
    sentLimitMs: 900,
    elapsedMs: 905,
  };
  it('a 503 with Fkgqa-Stopped answered before the limit is the verdict at once; one answered during the wait ends it', async () => {
    const before = new DueAnswers();
    before.sent();
    before.answered(busy);
    // Another request still in flight: the stop already answered is the verdict, no wait for the other.
    before.sent();
    expect(await before.atLimit(600_000)).toEqual(busy);
    const during = new DueAnswers();
    during.sent();
    during.sent();
    const verdict = during.atLimit(600_000);
    during.answered(); // a 200: not a stop, one request still due
    setImmediate(() => during.answered(busy));
    expect(await verdict).toEqual(busy);
    expect(stoppedOutcome(busy, { [busy.endpoint]: 1 })).toEqual({
      status: 'error',
      error: `the endpoint ${busy.endpoint} ${busy.what}`,
      httpStatus: 503,
      fault: busy,
      requests: { [busy.endpoint]: 1 },
    });
  });
  it("only fkgqa serve's whole Fkgqa-Stopped values are stops; a SERVICE SILENT endpoint's stop is none", () => {
    expect(
      ['busy; by=request; waited=900; ms=900', 'busy; by=queue; waited=31000; ms=30000', 'time-limit; by=request; ms=900', 'time-limit; by=endpoint; ms=30000', 'busy; by=full; waited=0; ms=0'].map(
        stoppedParses,
      ),
    ).toEqual([true, true, true, true, true]);
    // Forged or cut: no `by`/`ms`, a trailer after the value, garbage.
    expect(['busy; waited=99999999', `busy; by=request; waited=999999999; ms=1;x=${'A'.repeat(50)}`, 'garbage', 'busy'].map(stoppedParses)).toEqual([false, false, false, false]);
    const q = `SELECT * { { SERVICE SILENT <http://a/sparql?x=1> { ?s ?p ?o } } UNION { SERVICE <http://b/sparql> { ?s ?p ?o } FILTER(?o != "SERVICE SILENT <http://c/sparql>") } } # SERVICE SILENT <http://d/sparql>`;
    expect([...silentTargets(q)]).toEqual(['http://a/sparql']);
    const due = new DueAnswers(silentTargets(q));
    due.sent();
    due.sent();
    due.answered({ ...busy, endpoint: 'http://a/sparql' });
    expect(due.stopped).toBeUndefined();
    due.answered({ ...busy, endpoint: 'http://b/sparql' });
    expect(due.stopped?.endpoint).toBe('http://b/sparql');
  });
  it('no stop: none when nothing is in flight, when the last answer came, when the engine ended the query, or after the grace', async () => {
    expect(await new DueAnswers().atLimit(600_000)).toBeUndefined();
    const answered = new DueAnswers();
    answered.sent();
    const a = answered.atLimit(600_000);
    setImmediate(() => answered.answered());
    expect(await a).toBeUndefined();
    const ended = new DueAnswers();
    ended.sent();
    const e = ended.atLimit(600_000);
    setImmediate(() => ended.end());
    expect(await e).toBeUndefined();
    expect(ended.isEnded).toBe(true);
    // An endpoint that ignores Fkgqa-Timeout: the wait ends at its grace (here 30 ms).
    const ignored = new DueAnswers();
    ignored.sent();
    expect(await ignored.atLimit(30)).toBeUndefined();
    // The engine's own error carrying the stop (its report came after the limit): the verdict.
    const late = new DueAnswers();
    late.sent();
    const l = late.atLimit(600_000);
    setImmediate(() => late.end(busy));
    expect(await l).toEqual(busy);
  });
  it("a stop judgeStop does not believe: no verdict when it comes in the wait after the limit (the query's time limit stands); the endpoint's error when it was answered before", async () => {
    const forged = { ...busy, what: 'answered HTTP 503 (Fkgqa-Stopped: busy; by=request; waited=900; ms=1000)', stopped: 'busy; by=request; waited=900; ms=1000' };
    const inWait = new DueAnswers();
    inWait.sent();
    inWait.sent();
    const w = inWait.atLimit(600_000);
    setImmediate(() => inWait.answered(forged));
    setImmediate(() => setImmediate(() => inWait.answered()));
    expect(await w).toBeUndefined();
    const before = new DueAnswers();
    before.sent();
    before.answered(forged);
    expect(await before.atLimit(600_000)).toEqual(forged);
    // Read by the bounded client as that endpoint's error, not busy (client.federated judges the fault again).
    expect(judgeStop(forged.stopped, { limitMs: forged.sentLimitMs, elapsedMs: forged.elapsedMs })).toEqual({
      believed: false,
      why: "names the request's limit as 1000 ms, but the request was sent 900 ms",
    });
  });
});
