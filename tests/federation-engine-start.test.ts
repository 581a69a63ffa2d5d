/**
 * The federation engine's wait for a thread that is still starting (Comunica's start takes 1–3 s,
 * more at load) ends at the query's deadline: the verdict (busy, HTTP 503) comes then, not when the
 * thread is ready, and reports at most the client's limit as its wait. No wall-clock bound: the
 * assertions are orderings (the verdict before the thread's start) and relations (waited ≤ limit).
 */
import { describe, expect, it } from 'vitest';
import { ComunicaEngine } from '../src/federation/comunica/engine.js';
import { BUSY_MIN_WAIT_MS } from '../src/federation/limit.js';
import { MEDIA } from '../src/sparql/protocol.js';

describe('the federation engine: a thread still starting is waited for within the deadline only', () => {
  it("a client's deadline that ends while the engine's thread starts is answered busy then, before the thread is ready; the thread serves the next query", async () => {
    // Nothing listens on port 9: a query that reaches the endpoint fails at once with the connection refused.
    const endpoint = 'http://127.0.0.1:9/library-shard1/sparql';
    const engine = new ComunicaEngine({ endpoints: [endpoint] });
    const query = `SELECT * WHERE { SERVICE <${endpoint}> { ?s ?p ?o } }`;
    try {
      // The limit a client sends at the least that can be busy: the thread (spawned by this query) cannot be ready by then.
      const clientMs = BUSY_MIN_WAIT_MS;
      const o = await engine.query(query, MEDIA.json, { deadline: { ms: 30_000, from: 'start', clientMs } });
      const readyAtVerdict = engine.loadedFrom !== undefined;
      expect(o).toMatchObject({
        status: 'error',
        busy: true,
        httpStatus: 503,
        error: `the federation engine comunica did not take the query within ${clientMs} ms (it was starting, or busy with other queries)`,
      });
      expect(o.status === 'error' && o.waitedMs).toBeLessThanOrEqual(clientMs);
      // The verdict came before the thread had started: it did not wait for it.
      expect(readyAtVerdict).toBe(false);
      // The thread goes on starting and is free: the next query runs on it (and fails at the endpoint, not at the engine).
      const next = await engine.query(query, MEDIA.json, { deadline: { ms: 120_000, from: 'start' } });
      expect(next.status).toBe('error');
      expect(next.status === 'error' && next.busy).toBeFalsy();
      expect(next.requests).toEqual({ [endpoint]: expect.any(Number) });
      expect(engine.loadedFrom).toBeDefined();
      expect(engine.restarts).toBe(0);
    } finally {
      await engine.close();
    }
  }, 180_000);
});
