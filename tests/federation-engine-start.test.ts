/**
 * The federation engine's wait for a thread that is still starting (Comunica's start takes 1–3 s,
 * more at load) ends at the query's deadline: the verdict (busy, HTTP 503) comes then, not when the
 * thread is ready, and reports at most the client's limit as its wait. No wall-clock bound: the
 * assertions are orderings (the verdict before the thread's start) and relations (waited ≤ limit).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { closeParkedThreads, ComunicaEngine } from '../src/federation/comunica/engine.js';
import { BUSY_MIN_WAIT_MS } from '../src/federation/limit.js';
import { registryFromUrls } from '../src/federation/registry.js';
import { FederationEndpoint } from '../src/serve/federation-endpoint.js';
import { MEDIA } from '../src/sparql/protocol.js';

describe('the federation engine: a thread still starting is waited for within the deadline only', () => {
  it("a client's deadline that ends while the engine's thread starts is answered busy then, before the thread is ready; the thread serves the next query", async () => {
    // Nothing listens on port 9: a query that reaches the endpoint fails at once with the connection refused.
    const endpoint = 'http://127.0.0.1:9/library-shard1/sparql';
    // No thread parked by an engine of an earlier test: this engine's first query starts one.
    await closeParkedThreads();
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

  it("/federation/sparql counts a request's own limit from the request's arrival: a request handled 5 s after it arrived, with a limit of 1 s, is busy, its wait the whole limit; nothing is sent", async () => {
    let sent = 0;
    const shard = http.createServer((req, res) => {
      sent++;
      req.resume();
      res.writeHead(200, { 'content-type': MEDIA.json }).end(JSON.stringify({ head: { vars: ['s'] }, results: { bindings: [] } }));
    });
    await new Promise<void>((r) => shard.listen(0, '127.0.0.1', () => r()));
    const [ep1, ep2] = [1, 2].map((n) => `http://127.0.0.1:${(shard.address() as AddressInfo).port}/a-shard${n}/sparql`);
    const fed = new FederationEndpoint(
      () => registryFromUrls([ep1, ep2]),
      () => 'http://127.0.0.1/federation/sparql',
      { timeoutMs: 30_000, maxBodyBytes: 1 << 20 },
    );
    // The engine's thread is ready: nothing but the request's own arrival can end its limit.
    await fed.warm();
    // Reading and parsing the request took 5 s (a loaded machine): the limit counts from its arrival.
    const front = http.createServer((req, res) => {
      void fed.handle(req, new URL(req.url!, 'http://127.0.0.1'), undefined, Date.now() - 5000).then((a) => res.writeHead(a.status, { 'content-type': a.type, ...(a.headers ?? {}) }).end(a.body));
    });
    await new Promise<void>((r) => front.listen(0, '127.0.0.1', () => r()));
    try {
      const query = `SELECT * WHERE { SERVICE <${ep1}> { ?s ?p ?o } SERVICE <${ep2}> { ?o ?q ?r } }`;
      const r = await fetch(`http://127.0.0.1:${(front.address() as AddressInfo).port}/federation/sparql?query=${encodeURIComponent(query)}`, { headers: { 'Fkgqa-Timeout': '1000' } });
      expect([r.status, r.headers.get('fkgqa-stopped'), r.headers.get('retry-after'), sent]).toEqual([503, 'busy; by=request; waited=1000; ms=1000', '1', 0]);
    } finally {
      await fed.close();
      await new Promise<void>((r) => front.close(() => r()));
      await new Promise<void>((r) => shard.close(() => r()));
    }
  }, 180_000);
});
