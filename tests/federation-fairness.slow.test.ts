import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { judgeStop } from '../src/federation/limit.js';
import { FairQueue, type FairQueueEvent } from '../src/serve/fair-queue.js';
import { clientOf } from '../src/serve/federation-endpoint.js';
import { corsHeaders, corsOrigins } from '../src/serve/routing.js';
import { serve, type ShardServer } from '../src/serve/server.js';
import { MEDIA } from '../src/sparql/protocol.js';
import { demoBuild, tmpDir } from './helpers.js';

/**
 * `/federation/sparql` shares its federation engine fairly between clients: a client's one query
 * does not wait behind another client's backlog (in one queue, the request of a 0.06 s query would wait
 * for six heavy clients' queries, and get 503). And no CORS header unless `--cors-origin` allows the origin.
 */

/** An answer as a client saw it: when it was sent and when it arrived, in the order of this process's clock (for ordering only). */
interface Seen {
  status: number;
  body: string;
  headers: http.IncomingHttpHeaders;
  sentAt: number;
  doneAt: number;
}

/** POSTs a query from a given local address (each 127.0.0.x is another client to serve: its remote address). */
function post(url: string, query: string, localAddress: string, headers: Record<string, string> = {}): Promise<Seen> {
  const u = new URL(url);
  const sentAt = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: u.hostname, port: u.port, path: u.pathname, method: 'POST', localAddress, agent: false, headers: { 'Content-Type': MEDIA.sparqlQuery, Accept: MEDIA.json, ...headers } },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers, sentAt, doneAt: performance.now() }));
      },
    );
    req.on('error', reject);
    req.end(query);
  });
}

/** Waits (checking every 20 ms) until `cond` holds. */
async function until(cond: () => boolean): Promise<void> {
  while (!cond()) await new Promise((r) => setTimeout(r, 20));
}

const count = (s: Seen): string => (JSON.parse(s.body) as { results: { bindings: { n: { value: string } }[] } }).results.bindings[0].n.value;

let shards: string;
beforeAll(async () => {
  shards = await demoBuild(tmpDir('fkgqa-fairness-'));
});

describe('/federation/sparql: a fair share of the federation engine per client', () => {
  let s: ShardServer;
  const events: FairQueueEvent[] = [];
  const ep = (n: number) => s.endpoint(`library-shard${n}`)!.url;
  const fed = () => `${new URL(ep(1)).origin}/federation/sparql`;
  /** 3 SERVICE clauses joined locally, counted: 9,800 rows, 0.7–2 s in Comunica at load 30 (ten times and more the light query). */
  const heavy = () => `SELECT (COUNT(*) AS ?n) WHERE { SERVICE <${ep(1)}> { ?a ?b ?c } SERVICE <${ep(2)}> { ?d ?e ?f } SERVICE <${ep(1)}> { ?g ?h ?i } }`;
  /** 35 × 8 = 280 rows: about 0.06 s. */
  const light = () => `SELECT (COUNT(*) AS ?n) WHERE { SERVICE <${ep(1)}> { ?s ?p ?o } SERVICE <${ep(2)}> { ?x ?y ?z } }`;
  beforeAll(async () => {
    // A time limit far above the heavy backlog (24 queries on 2 threads): every query waits its turn, none is answered busy.
    s = await serve({ shards, kgs: ['library'], timeoutMs: 300_000, writeFiles: false, warmFederation: true, engines: 2, onFederationQueue: (e) => events.push(e) });
    await s.federationWarm;
  }, 120_000);
  afterAll(async () => {
    await s?.close();
  });

  it('six heavy clients with 4 queries each and one light client: the light query starts at the next free thread, before any other heavy query, and waits less than a heavy query runs', async () => {
    const heavyClients = ['127.0.0.2', '127.0.0.3', '127.0.0.4', '127.0.0.5', '127.0.0.6', '127.0.0.7'];
    const lightClient = '127.0.0.8';
    // Both engine threads warm, and the shards loaded.
    expect((await Promise.all([post(fed(), light(), lightClient), post(fed(), light(), lightClient)])).map(count)).toEqual(['280', '280']);
    events.length = 0;
    const heavyAnswers = heavyClients.flatMap((a) => Array.from({ length: 4 }, () => post(fed(), heavy(), a)));
    // Send the light query once the backlog is there: one heavy query has answered (the 24 were sent at once before).
    let answered = 0;
    for (const h of heavyAnswers) void h.then(() => answered++);
    await until(() => answered >= 1);
    const lightAnswer = await post(fed(), light(), lightClient);
    const heavySeen = await Promise.all(heavyAnswers);
    expect(lightAnswer.status).toBe(200);
    expect(count(lightAnswer)).toBe('280');
    expect(heavySeen.map((h) => h.status)).toEqual(Array(24).fill(200));
    expect(new Set(heavySeen.map(count))).toEqual(new Set(['9800']));

    // As the fair queue saw it, in the order of its events (no clock compared: load stretches times, never reorders these).
    const lightJoin = events.findIndex((e) => e.type === 'join' && e.client === lightClient);
    expect(events.slice(0, lightJoin).filter((e) => e.type === 'join').length).toBe(24);
    const lightSeq = events[lightJoin].seq;
    const at = (type: FairQueueEvent['type'], seq: number) => events.findIndex((e) => e.type === type && e.seq === seq);
    const lightStart = at('start', lightSeq);
    const lightEnd = at('end', lightSeq);
    expect(lightStart).toBeGreaterThan(lightJoin);
    // Both threads ran a heavy query when it joined (started before its join, ended after it).
    const heavySeqs = [...new Set(events.filter((e) => e.client !== lightClient).map((e) => e.seq))];
    const runningThen = heavySeqs.filter((seq) => at('start', seq) < lightJoin && at('end', seq) > lightJoin);
    expect(runningThen.length).toBe(2);
    // It started at the next free thread: the first event after its join that freed a thread is the end of one of those two,
    // and its start follows it with no other start between (no heavy query went first). So its wait ended when that heavy
    // query ended, which had started before it joined: it waited less than a heavy query runs.
    const firstEnd = events.findIndex((e, i) => i > lightJoin && e.type === 'end');
    expect(runningThen).toContain(events[firstEnd].seq);
    expect(events.slice(lightJoin + 1, lightStart).filter((e) => e.type === 'start')).toEqual([]);
    expect(lightStart).toBeGreaterThan(firstEnd);
    // The heavy queries queued before it ran after it (FIFO on one thread would have run them first): of the 24, all but
    // the one answered before it was sent, the two running when it joined and at most two started while it ran end after it.
    expect(events.slice(lightEnd + 1).filter((e) => e.type === 'end' && e.client !== lightClient).length).toBeGreaterThanOrEqual(24 - 1 - 2 - 2);
    const heavyRuns = runningThen.map((seq) => events[at('end', seq)].at - events[at('start', seq)].at);
    const waited = events[lightStart].at - events[lightJoin].at;
    // The request log records the client and the wait of each federated query.
    process.stderr.write(
      `fairness: light query waited ${waited} ms; heavy runs then ${heavyRuns.join(', ')} ms; light answered in ${Math.round(lightAnswer.doneAt - lightAnswer.sentAt)} ms, the 24 heavy in ${Math.round(Math.max(...heavySeen.map((h) => h.doneAt)) - Math.min(...heavySeen.map((h) => h.sentAt)))} ms\n`,
    );
  }, 600_000);

  it("a client over --max-queued is answered 503 busy at once (by=full, waited=0, Retry-After), a query the bounded client reads as busy; another client's query still runs", async () => {
    const q = await serve({ shards, kgs: ['library'], timeoutMs: 300_000, writeFiles: false, warmFederation: true, engines: 1, maxQueued: 1 });
    try {
      await q.federationWarm;
      const url = `${new URL(q.endpoint('library-shard1')!.url).origin}/federation/sparql`;
      const e = (n: number) => q.endpoint(`library-shard${n}`)!.url;
      const h = `SELECT (COUNT(*) AS ?n) WHERE { SERVICE <${e(1)}> { ?a ?b ?c } SERVICE <${e(2)}> { ?d ?e ?f } SERVICE <${e(1)}> { ?g ?h ?i } }`;
      // One client by name (Fkgqa-Client), from one address: the first runs, the second waits, the third is refused.
      const first = post(url, h, '127.0.0.1', { 'Fkgqa-Client': 'agent-a' });
      await until(() => q.log.counts()['library-shard1'] !== undefined);
      const second = post(url, h, '127.0.0.1', { 'Fkgqa-Client': 'agent-a' });
      await new Promise((r) => setTimeout(r, 50));
      const third = await post(url, h, '127.0.0.1', { 'Fkgqa-Client': 'agent-a' });
      expect(third.status).toBe(503);
      expect(third.headers['fkgqa-stopped']).toBe('busy; by=full; waited=0; ms=0');
      expect(third.headers['retry-after']).toBe('1');
      expect(third.body).toMatch(/^the federation engine comunica is busy: this client \(127\.0\.0\.1#agent-a\) has 1 federated queries waiting already/);
      expect(judgeStop(third.headers['fkgqa-stopped'] as string, { elapsedMs: 5 })).toEqual({ believed: true, stop: { kind: 'busy', by: 'full', waitedMs: 0, limitMs: 0 } });
      // Another name at the same address is another client: queued, answered.
      const other = post(url, h, '127.0.0.1', { 'Fkgqa-Client': 'agent-b' });
      expect((await Promise.all([first, second, other])).map((r) => [r.status, count(r)])).toEqual([
        [200, '9800'],
        [200, '9800'],
        [200, '9800'],
      ]);
      // A name of control characters or too long is a bad request.
      expect((await post(url, h, '127.0.0.1', { 'Fkgqa-Client': 'x'.repeat(101) })).status).toBe(400);
    } finally {
      await q.close();
    }
  }, 300_000);
});

describe('the fair queue: turns between clients', () => {
  it('round robin between backlogged clients; a newly active client goes before backlogs; a client over its bound is refused', async () => {
    const q = new FairQueue(1, 3);
    const started: string[] = [];
    q.onEvent = (e) => e.type === 'start' && started.push(`${e.client}${e.seq}`);
    const a = [q.join('a')!, q.join('a')!, q.join('a')!, q.join('a')!];
    expect(q.join('a')).toBeUndefined();
    const b = [q.join('b')!, q.join('b')!];
    const next = async (t: { release(): void }) => {
      t.release();
      await Promise.resolve();
    };
    await next(a[0]);
    const c = q.join('c')!;
    await next(b[0]);
    await next(c);
    await next(a[1]);
    await next(b[1]);
    await next(a[2]);
    await next(a[3]);
    expect(started).toEqual(['a1', 'b5', 'c7', 'a2', 'b6', 'a3', 'a4']);
    expect(q.runningNow).toBe(0);
    expect(q.waiting()).toEqual({});
  });

  it('the client of a request: its remote address, with Fkgqa-Client its name at that address', () => {
    const req = (headers: http.IncomingHttpHeaders) => ({ socket: { remoteAddress: '127.0.0.5' }, headers }) as unknown as http.IncomingMessage;
    expect(clientOf(req({}))).toBe('127.0.0.5');
    expect(clientOf(req({ 'fkgqa-client': ' agent 7 ' }))).toBe('127.0.0.5#agent 7');
    expect(() => clientOf(req({ 'fkgqa-client': 'a\u0001' }))).toThrow(/at most 100 printable characters/);
  });
});

describe('fkgqa serve: no CORS unless an origin is allowed', () => {
  it('corsHeaders: none by default; the allowed origin (Vary: Origin), never another; * for any; origins checked', () => {
    expect(corsHeaders('http://example.org', [])).toEqual({});
    expect(corsHeaders('http://example.org', ['http://example.org'])).toMatchObject({ 'Access-Control-Allow-Origin': 'http://example.org', Vary: 'Origin' });
    expect(corsHeaders('http://evil.example', ['http://example.org'])).toEqual({ Vary: 'Origin' });
    expect(corsHeaders('http://evil.example', ['*'])['Access-Control-Allow-Origin']).toBe('*');
    expect(corsOrigins(['http://example.org/', 'https://a.b:8443', '*'])).toEqual(['http://example.org', 'https://a.b:8443', '*']);
    expect(() => corsOrigins(['http://example.org/page'])).toThrow('--cors-origin "http://example.org/page": not an origin');
    expect(() => corsOrigins(['file:///x'])).toThrow(/not an origin/);
  });

  it('shard endpoints and /federation/sparql send no Access-Control-Allow-Origin by default, and the allowed origin with --cors-origin', async () => {
    for (const allowed of [undefined, ['http://example.org']]) {
      const s = await serve({ shards, kgs: ['library'], writeFiles: false, ...(allowed ? { corsOrigins: allowed } : {}) });
      try {
        const shard = s.endpoint('library-shard1')!.url;
        const fed = `${new URL(shard).origin}/federation/sparql`;
        for (const url of [shard, fed]) {
          const q = url === fed ? `ASK { SERVICE <${shard}> { ?s ?p ?o } }` : 'ASK { ?s ?p ?o }';
          const r = await fetch(url, { method: 'POST', headers: { 'Content-Type': MEDIA.sparqlQuery, Accept: MEDIA.json, Origin: 'http://example.org' }, body: q });
          expect(r.status).toBe(200);
          expect(r.headers.get('access-control-allow-origin')).toBe(allowed ? 'http://example.org' : null);
          const other = await fetch(url, { method: 'POST', headers: { 'Content-Type': MEDIA.sparqlQuery, Accept: MEDIA.json, Origin: 'http://evil.example' }, body: q });
          expect(other.headers.get('access-control-allow-origin')).toBeNull();
          const pre = await fetch(url, { method: 'OPTIONS', headers: { Origin: 'http://example.org', 'Access-Control-Request-Method': 'POST' } });
          expect(pre.status).toBe(204);
          expect(pre.headers.get('access-control-allow-methods')).toBe(allowed ? 'GET, POST, OPTIONS' : null);
        }
      } finally {
        await s.close();
      }
    }
    await expect(serve({ shards, kgs: ['library'], writeFiles: false, corsOrigins: ['example.org'] })).rejects.toThrow(/--cors-origin "example.org": not an origin/);
  }, 120_000);
});
