import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countsSummary } from '../src/serve/request-log.js';
import { serve, type ShardServer } from '../src/serve/server.js';
import { MEDIA } from '../src/sparql/protocol.js';
import { demoBuild, tmpDir } from './helpers.js';

/** serve's summary at Ctrl-C says what its counts are (not a bare "errors 1"). */

/** A cross product of 8 triple patterns: hours in oxigraph on library-shard1. */
const HEAVY = `SELECT (COUNT(*) AS ?n) WHERE { ${Array.from({ length: 8 }, (_, i) => `?s${i} ?p${i} ?o${i} .`).join(' ')} }`;

let s: ShardServer;
beforeAll(async () => {
  s = await serve({ shards: await demoBuild(tmpDir('fkgqa-summary-')), kgs: ['library'], writeFiles: false });
}, 120_000);
afterAll(async () => {
  await s?.close();
});

describe('serve: the summary of its requests', () => {
  it('names the kinds of requests and each error by cause (time limit, refused), not a bare "errors N"', async () => {
    const u = s.endpoint('library-shard1')!.url;
    const post = (query: string, headers: Record<string, string> = {}) => fetch(u, { method: 'POST', headers: { 'Content-Type': MEDIA.sparqlQuery, Accept: MEDIA.json, ...headers }, body: query });
    expect((await post('SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }')).status).toBe(200);
    expect((await post('SELECT * WHERE { ?s ?p }')).status).toBe(400);
    const stopped = await post(HEAVY, { 'Fkgqa-Timeout': '1000' });
    expect([stopped.status, stopped.headers.get('fkgqa-stopped')]).toEqual([503, 'time-limit; by=request; ms=1000']);
    expect(s.log.counts()['library-shard1']).toEqual({ total: 3, count: 1, data: 1, invalid: 1, errors: 2, timeout: 1 });
    // Every served shard has its line, those nobody asked too, in the order served.
    expect(s.endpoints.map((e) => e.id)).toEqual(['library-shard1', 'library-shard2', 'library-shard3', 'library-shard4']);
    expect(
      countsSummary(
        s.log.counts(),
        s.endpoints.map((e) => e.id),
      ),
    ).toEqual([
      'fkgqa serve: 3 requests, 2 answered with an error status (HTTP 4xx/5xx); 4 endpoints, 3 without requests; per endpoint, requests by kind, then errors by cause:',
      '  library-shard1: 3 requests (count 1, invalid 1, data 1); errors 2: 1 stopped at a time limit (503), 1 refused or failed (400 bad request or syntax, 5xx)',
      '  library-shard2: 0 requests',
      '  library-shard3: 0 requests',
      '  library-shard4: 0 requests',
    ]);
  }, 60_000);
});
