/**
 * A long wait behind the federation engine's only thread (a long time-limit run goes
 * to `npm run test:slow`): the engine's deadline `from: 'start'` counted on ComunicaEngine itself, with a
 * query that runs its 10 s limit ahead of another (16 s of wall, two busy threads).
 * tests/serve-limits.slow.test.ts keeps the same promise through run_sparql_query ("a federated query
 * behind the agent's own slow one ... is not charged the wait").
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ComunicaEngine } from '../src/federation/comunica/engine.js';
import { serve, type ShardServer } from '../src/serve/server.js';
import { MEDIA } from '../src/sparql/protocol.js';
import { demoBuild, tmpDir } from './helpers.js';

describe("the federation engine: a deadline from: 'start' does not count the wait for its thread", () => {
  let s: ShardServer;
  const ep = (n: number) => s.endpoint(`library-shard${n}`)!.url;
  /** 5 SERVICE clauses joined locally: 35^3 × 8^2 rows, far longer than any limit here. */
  const slow = () =>
    `SELECT (COUNT(*) AS ?n) WHERE { SERVICE <${ep(1)}> { ?a ?b ?c } SERVICE <${ep(2)}> { ?d ?e ?f } SERVICE <${ep(1)}> { ?g ?h ?i } SERVICE <${ep(2)}> { ?j ?k ?l } SERVICE <${ep(1)}> { ?m ?n2 ?o } }`;
  /** 35 × 8 = 280 rows. */
  const good = () => `SELECT (COUNT(*) AS ?n) WHERE { SERVICE <${ep(1)}> { ?s ?p ?o } SERVICE <${ep(2)}> { ?x ?y ?z } }`;
  beforeAll(async () => {
    const shards = await demoBuild(tmpDir('fkgqa-limits-'));
    s = await serve({ shards, kgs: ['library'], timeoutMs: 60_000, writeFiles: false });
  });
  afterAll(async () => {
    await s?.close();
  });

  it("from: 'start': a query waiting 10 s behind a busy engine thread, then for the stopped query's cancelling, still answers within its 8 s limit", async () => {
    const engine = new ComunicaEngine({ endpoints: [1, 2, 3, 4].map(ep) });
    const slots = () => (engine as unknown as { slots: unknown[] }).slots.length;
    try {
      await engine.warm();
      const t0 = performance.now();
      const first = engine.query(slow(), MEDIA.json, { deadline: { ms: 10_000, from: 'start' } });
      const second = engine.query(good(), MEDIA.json, { deadline: { ms: 8000, from: 'start' } });
      expect(await first).toMatchObject({ status: 'timeout' });
      const o = await second;
      // The first ran its 10 s on the thread and was stopped: cancelled in its thread, which the second then took (or, had the
      // thread not said it stopped within CANCEL_WAIT_MS, its replacement, started at once: the engine is warm).
      process.stderr.write(`engine thread after the stopped query: kept ${engine.kept}, replaced ${engine.restarts}\n`);
      expect(engine.kept + engine.restarts).toBe(1);
      expect(slots()).toBe(1);
      // It waited for the first (10 s) and for the thread to be free again: longer than its own limit.
      expect(performance.now() - t0).toBeGreaterThan(10_000);
      expect(o.status === 'ok' && JSON.parse(o.body).results.bindings[0].n.value).toBe('280');
      // With a deadline from: 'call' the same wait is counted: the limit ends while it waits. With a wait limit
      // (waitMs, what serve's /federation/sparql sets), a longer wait is busy: HTTP 503, the engine's fault.
      const busy = engine.query(slow(), MEDIA.json, { deadline: { ms: 3000, from: 'start' } });
      const [counted, waited] = await Promise.all([
        engine.query(good(), MEDIA.json, { deadline: { ms: 1500, from: 'call' } }),
        engine.query(good(), MEDIA.json, { deadline: { ms: 60_000, from: 'start', waitMs: 1000 } }),
      ]);
      expect(counted).toMatchObject({ status: 'timeout' });
      expect(waited).toMatchObject({
        status: 'error',
        busy: true,
        httpStatus: 503,
        error: 'the federation engine comunica did not take the query within 1000 ms (it was starting, or busy with other queries)',
      });
      expect(await busy).toMatchObject({ status: 'timeout' });
    } finally {
      await engine.close();
    }
  });
});
