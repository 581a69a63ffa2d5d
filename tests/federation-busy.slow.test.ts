import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FEDERATION_ENGINES } from '../src/federation/engines.js';
import type { ShardServer } from '../src/serve/server.js';
import { MEDIA } from '../src/sparql/protocol.js';
import { behindHeavy, BUSY_INSIDE_FEDERATED_QUERY, busyInsideFederatedQuery, serveOneWorker } from './busy-helpers.js';
import { engineTestsRun } from './helpers.js';

/**
 * A busy shard endpoint inside a federated query is the endpoint's fault, not the agent's query's
 * time limit: each engine sends every request the time its query
 * has left in `Fkgqa-Timeout`, so that fkgqa serve answers 503 busy (the query waited there behind
 * another) before the engine's own limit ends, and the engine reports that answer's
 * `Fkgqa-Stopped` (EndpointFault.stopped). A shard that stopped the query at that limit after it
 * ran at once is still the query's time limit. Seconds of waiting behind a heavy query each, and a
 * JVM's start for jena: `npm run test:slow`.
 */

const COUNT = 'SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }';
const ENGINE_TESTS_RUN = Object.fromEntries(await Promise.all(FEDERATION_ENGINES.map(async (e) => [e, await engineTestsRun(e)] as const)));

let s: ShardServer;
beforeAll(async () => {
  s = await serveOneWorker();
}, 120_000);
afterAll(async () => {
  await s?.close();
});

describe('a busy shard endpoint inside a federated query (run_sparql_query)', () => {
  for (const engine of ['comunica', 'jena'] as const) {
    it.skipIf(!ENGINE_TESTS_RUN[engine])(`${engine}: ${BUSY_INSIDE_FEDERATED_QUERY}`, () => busyInsideFederatedQuery(s, engine), 180_000);
  }
});

describe('a busy shard endpoint inside a federated query (/federation/sparql)', () => {
  it.skipIf(!ENGINE_TESTS_RUN.comunica)(
    'a request with its own limit whose shards wait behind another query: 503 busy naming the shard, Retry-After, not the time limit',
    async () => {
      const ep = (n: number) => s.endpoint(`library-shard${n}`)!.url;
      const fed = `${new URL(ep(1)).origin}/federation/sparql`;
      const query = `SELECT * WHERE { SERVICE <${ep(2)}> { ?s ?p ?o } SERVICE <${ep(3)}> { ?s ?q ?t } }`;
      // The engine is up and every endpoint loaded.
      expect((await fetch(`${fed}?query=${encodeURIComponent(`${query} LIMIT 1`)}`)).status).toBe(200);
      for (const n of [1, 2, 3, 4]) expect((await fetch(ep(n), { method: 'POST', headers: { 'Content-Type': MEDIA.sparqlQuery, Accept: MEDIA.json }, body: COUNT })).status).toBe(200);
      await behindHeavy(s, 'library-shard1', async () => {
        const r = await fetch(`${fed}?query=${encodeURIComponent(query)}&timeout=3000ms`);
        expect(r.status).toBe(503);
        expect(r.headers.get('retry-after')).toBe('1');
        expect(r.headers.get('fkgqa-stopped')).toMatch(/^busy; by=request; waited=\d+; ms=3000$/);
        expect(await r.text()).toMatch(
          new RegExp(
            `^the endpoint (${ep(2)}|${ep(3)}) was busy \\(HTTP 503, busy; by=request; waited=\\d+; ms=\\d+\\): the query waited \\d+ ms there behind other queries`.replace(/[.?]/g, (c) =>
              c === '.' ? '\\.' : c,
            ),
          ),
        );
      });
    },
    120_000,
  );
});
