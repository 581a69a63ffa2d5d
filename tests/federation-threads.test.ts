/**
 * A closed Comunica engine's idle thread serves the next engine of the same configuration in the process
 * (src/federation/comunica/engine.ts, `park`): the next engine starts no thread, sends the requests a fresh
 * thread sends (Comunica's caches of endpoints emptied: the service-description GET again), and its thread
 * contacts only that engine's endpoints. Assertions are counts and outcomes, no wall-clock bound.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { closeParkedThreads, ComunicaEngine, parkedThreads } from '../src/federation/comunica/engine.js';
import { MEDIA } from '../src/sparql/protocol.js';

describe('Comunica engine threads: parked by a closed engine, taken by the next', () => {
  it('the next engine takes the parked thread, sends the same requests as the first (service-description GETs included), and its thread keeps to its own endpoints', async () => {
    // Each endpoint: a GET without query (Comunica's service-description probe) is 404, a query one row.
    const seen: string[] = [];
    const shard = http.createServer((req, res) => {
      const probe = req.method === 'GET' && !new URL(req.url!, 'http://x').searchParams.has('query');
      seen.push(`${probe ? 'probe' : 'query'} ${new URL(req.url!, 'http://x').pathname}`);
      req.resume();
      if (probe) return void res.writeHead(404).end();
      res.writeHead(200, { 'content-type': MEDIA.json }).end(JSON.stringify({ head: { vars: ['s'] }, results: { bindings: [{ s: { type: 'uri', value: 'urn:x:1' } }] } }));
    });
    await new Promise<void>((r) => shard.listen(0, '127.0.0.1', () => r()));
    const ep = (name: string) => `http://127.0.0.1:${(shard.address() as AddressInfo).port}/${name}/sparql`;
    const query = `SELECT * WHERE { SERVICE <${ep('a1')}> { ?s ?p ?o } SERVICE <${ep('a2')}> { ?s ?q ?r } }`;
    const run = async (engine: ComunicaEngine, q: string, sources?: string[]) => {
      seen.length = 0;
      const o = await engine.query(q, MEDIA.json, { deadline: { ms: 120_000, from: 'start' }, ...(sources ? { sources } : {}) });
      return { o, seen: [...seen].sort() };
    };
    await closeParkedThreads();
    try {
      const first = new ComunicaEngine({ endpoints: [ep('a1'), ep('a2')] });
      const a = await run(first, query);
      const again = await run(first, query);
      await first.close();
      expect(parkedThreads()).toBe(1);

      const second = new ComunicaEngine({ endpoints: [ep('a1'), ep('a2')] });
      const b = await run(second, query);
      // Taken off the shelf: no thread of its own started, and its first query is a fresh thread's.
      expect(parkedThreads()).toBe(0);
      expect(a.o).toMatchObject({ status: 'ok', requests: { [ep('a1')]: 2, [ep('a2')]: 2 } });
      expect(a.seen).toEqual(['probe /a1/sparql', 'probe /a2/sparql', 'query /a1/sparql', 'query /a2/sparql']);
      // The thread's second query for the same engine: the probes are cached (Comunica's service sources).
      expect(again.seen).toEqual(['query /a1/sparql', 'query /a2/sparql']);
      expect(b.o).toEqual(a.o);
      expect(b.seen).toEqual(a.seen);
      expect([second.loadedFrom, second.restarts]).toEqual([first.loadedFrom, 0]);
      await second.close();

      // An engine of other endpoints takes the same thread: a source outside its registry is refused unsent.
      const third = new ComunicaEngine({ endpoints: [ep('b1')] });
      const c = await run(third, 'SELECT * WHERE { ?s ?p ?o }', [ep('a1')]);
      expect(parkedThreads()).toBe(0);
      expect(c.o.status).toBe('error');
      expect(c.o.status === 'error' && c.o.error).toContain(ep('a1'));
      expect(c.seen).toEqual([]);
      await third.close();
      expect(parkedThreads()).toBe(1);
    } finally {
      await closeParkedThreads();
      expect(parkedThreads()).toBe(0);
      await new Promise<void>((r) => shard.close(() => r()));
    }
  }, 180_000);
});
