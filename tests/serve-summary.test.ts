import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { countsSummary } from '../src/serve/request-log.js';
import { closeParkedThreads } from '../src/federation/comunica/engine.js';
import { serve, type ShardServer } from '../src/serve/server.js';
import { MEDIA } from '../src/sparql/protocol.js';
import { BUSY_STOPPED } from '../src/federation/limit.js';
import { FEDERATION_PATH } from '../src/serve/defaults.js';
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
      '  library-shard1: 3 requests (count 1, invalid 1, data 1); errors 2: 1 stopped at a time limit (503), 1 refused (400 bad request or syntax, other 4xx and 5xx)',
      '  library-shard2: 0 requests',
      '  library-shard3: 0 requests',
      '  library-shard4: 0 requests',
    ]);
    // The query stopped at its time limit had its engine (the pool worker of its group) replaced: the summary counts it.
    // The endpoints grouped with it on that worker (the groups follow the machine's cores) give the same count.
    expect(s.restartsOf('library-shard1')!.restarts).toBe(1);
    const also = (id: string) => (s.restartsOf(id)!.restarts === 1 ? '; its engine restarted 1 time' : '');
    expect(
      countsSummary(
        s.log.counts(),
        s.endpoints.map((e) => e.id),
        (id) => s.restartsOf(id)?.restarts,
      ).slice(1),
    ).toEqual([
      '  library-shard1: 3 requests (count 1, invalid 1, data 1); errors 2: 1 stopped at a time limit (503), 1 refused (400 bad request or syntax, other 4xx and 5xx); its engine restarted 1 time',
      `  library-shard2: 0 requests${also('library-shard2')}`,
      `  library-shard3: 0 requests${also('library-shard3')}`,
      `  library-shard4: 0 requests${also('library-shard4')}`,
    ]);
    expect(s.endpoints.map((e) => s.restartsOf(e.id)!.restarts).every((n) => n === 0 || n === 1)).toBe(true);
  }, 60_000);

  it('gives the federation endpoint its own line, apart from the other server paths, and counts its 503 busy as busy, not as refused', async () => {
    s.log.reset();
    // No thread parked by a closed engine of an earlier test in this process: the first federated query starts one.
    await closeParkedThreads();
    const origin = new URL(s.endpoint('library-shard1')!.url).origin;
    const federated = (query: string, headers: Record<string, string> = {}) =>
      fetch(`${origin}${FEDERATION_PATH}`, { method: 'POST', headers: { 'Content-Type': MEDIA.sparqlQuery, Accept: MEDIA.json, ...headers }, body: query });
    const join = `SELECT * WHERE { SERVICE <${s.endpoint('library-shard1')!.url}> { ?s ?p ?o } SERVICE <${s.endpoint('library-shard2')!.url}> { ?o ?q ?r } }`;
    // The federation engine's thread starts at this first federated query (1–3 s): the request's 100 ms end while it starts, busy.
    const limitMs = 100;
    const busy = await federated(join, { 'Fkgqa-Timeout': String(limitMs) });
    const stopped = BUSY_STOPPED.exec(busy.headers.get('fkgqa-stopped') ?? '');
    expect([busy.status, stopped?.[1], Number(stopped?.[3])]).toEqual([503, 'request', limitMs]);
    // The wait it reports is at most the client's limit, however late the answer came on a loaded machine.
    expect(Number(stopped![2])).toBeLessThanOrEqual(limitMs);
    // A query refused before it runs (a triple pattern outside every SERVICE), and a server path.
    expect((await federated('SELECT * WHERE { ?s ?p ?o }')).status).toBe(400);
    expect((await fetch(`${origin}/_stats`)).status).toBe(200);
    await vi.waitFor(() => expect(s.log.counts()['-']?.total).toBe(1), { timeout: 60_000, interval: 10 });
    expect(s.log.counts()[FEDERATION_PATH]).toEqual({ total: 2, data: 1, invalid: 1, errors: 2, busy: 1 });
    expect(
      countsSummary(
        s.log.counts(),
        s.endpoints.map((e) => e.id),
      ),
    ).toEqual([
      'fkgqa serve: 3 requests, 2 answered with an error status (HTTP 4xx/5xx); 4 endpoints, 4 without requests; per endpoint, requests by kind, then errors by cause:',
      '  library-shard1: 0 requests',
      '  library-shard2: 0 requests',
      '  library-shard3: 0 requests',
      '  library-shard4: 0 requests',
      `  ${FEDERATION_PATH} (the federation endpoint: federated queries): 2 requests (data 1, invalid 1); errors 2: 1 busy: kept waiting for a free thread or engine, not the query's fault (503), 1 refused (400 bad request or syntax, other 4xx and 5xx)`,
      '  other paths (/, /_stats, /endpoints.json, the catalogue, unknown paths): 1 requests (other 1); no errors',
    ]);
  }, 120_000);
});
