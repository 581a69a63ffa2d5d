/**
 * The federation engines (src/federation/engines.ts) on the demo build served by
 * `fkgqa serve` (`npm run test:slow`; the engine names and the SERVICE check are unit-tested in
 * tests/engines.test.ts): answers of SERVICE joins across shards, the registry allow-list, refused redirects,
 * time limits that stop a query without blocking others, and per-endpoint request counts. Every
 * engine of FEDERATION_ENGINES runs the same cases. The Jena cases are skipped, with the reason
 * printed, where Java or Debian's Jena is missing, and fail in CI (`.ci/run` installs them).
 */
import { execFile, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import path from 'node:path';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EngineOutcome, FederationEngine } from '../src/federation/engine.js';
import { createEngine, FEDERATION_ENGINES } from '../src/federation/engines.js';
import { findJena } from '../src/federation/jena/engine.js';
import { COMUNICA_SERVICE_ENGINE, ComunicaEngine, comunicaEngineFile } from '../src/federation/comunica/engine.js';
import { BUNDLES_FILE, bundleFor, loadEngineModule } from '../src/federation/comunica/engine-module.js';
import { MEDIA } from '../src/sparql/protocol.js';
import { serve, type ShardServer } from '../src/serve/server.js';
import { registryFromEndpointsValue } from '../src/federation/registry.js';
import { createMcpServer } from '../src/mcp/server.js';
import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { demoBuild, engineTestsRun, ROOT, tmpDir } from './helpers.js';

const P = 'http://valuenet/ontop/';
/** Per engine: whether its tests run here (Jena needs Java and Debian's Jena; see engineTestsRun). */
const ENGINE_TESTS_RUN = Object.fromEntries(await Promise.all(FEDERATION_ENGINES.map(async (e) => [e, await engineTestsRun(e)] as const)));
const JSON_RESULTS = 'application/sparql-results+json';

let server: ShardServer;
let shardsDir: string;
const url = (shard: number) => server.endpoint(`library-shard${shard}`)!.url;

/** A loopback HTTP listener that counts requests and keeps its open sockets. */
interface Listener {
  url: string;
  hits: number;
  sockets: Set<Socket>;
  close(): Promise<void>;
}
async function listen(handler: (req: http.IncomingMessage, res: http.ServerResponse) => void, pathName: string): Promise<Listener> {
  const sockets = new Set<Socket>();
  const l = { hits: 0, sockets } as Listener;
  const s = http.createServer((req, res) => {
    l.hits++;
    handler(req, res);
  });
  s.on('connection', (sock) => {
    sockets.add(sock);
    sock.on('close', () => sockets.delete(sock));
  });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  l.url = `http://127.0.0.1:${(s.address() as AddressInfo).port}${pathName}`;
  l.close = () => {
    for (const sock of sockets) sock.destroy();
    return new Promise((r) => s.close(() => r()));
  };
  return l;
}

let outside: Listener; // unregistered: must never be reached
let redirector: Listener; // registered, answers 307 to `outside`
let stall: Listener; // registered, never answers
/** The Fkgqa-Timeout of stall's last request (ms). */
let stallLimitMs = NaN;
let lateBusy: Listener; // registered, answers 503 busy (Fkgqa-Stopped) 600 ms after the limit it was sent, past the engine's own
let lateLimit: Listener; // the same with 503 time-limit; by=request
let lateGarbage: Listener; // the same with a Fkgqa-Stopped that says nothing fkgqa serve says
let earlyBusy: Listener; // answers 503 busy at once
let many: Listener; // 400 rows at once
let slow: Listener; // an empty 200 after 400 ms, each request (a bind join's)
/** When each request reached `slow` (Date.now()), and `many`'s last request with its Fkgqa-Timeout. */
const slowAt: number[] = [];
let manyAt = { t: 0, ms: 0 };
/** Requests to `slow` whose query holds a row of `many` (`<urn:x…>`): a bind join's. */
let slowBound = 0;

beforeAll(async () => {
  // The shared demo build (tests/global-setup.ts); these tests serve its library graph only.
  shardsDir = await demoBuild(tmpDir('fkgqa-engines-'));
  server = await serve({ shards: shardsDir, kgs: ['library'], writeFiles: false });
  outside = await listen(
    (_q, res) => res.writeHead(200, { 'content-type': JSON_RESULTS }).end('{"head":{"vars":["s"]},"results":{"bindings":[{"s":{"type":"uri","value":"urn:outside"}}]}}'),
    '/outside/sparql',
  );
  redirector = await listen((_q, res) => res.writeHead(307, { location: outside.url }).end(), '/redirect/sparql');
  stall = await listen((req) => (stallLimitMs = Number(req.headers['fkgqa-timeout'])), '/stall/sparql');
  // fkgqa serve answers at the limit it was sent, sentLimit's margin (≤ 250 ms) before the engine's own; these answer
  // 600 ms after it, as a shard on a loaded machine may: the engine's limit has then ended first.
  const late = (stopped: (ms: number) => string) => (req: http.IncomingMessage, res: http.ServerResponse) => {
    const ms = Number(req.headers['fkgqa-timeout']);
    setTimeout(() => res.writeHead(503, { 'content-type': 'text/plain', 'fkgqa-stopped': stopped(ms), 'retry-after': '1' }).end('stopped'), (Number.isFinite(ms) ? ms : 0) + 600);
  };
  lateBusy = await listen(
    late((ms) => `busy; by=request; waited=${ms}; ms=${ms}`),
    '/late-busy/sparql',
  );
  lateLimit = await listen(
    late((ms) => `time-limit; by=request; ms=${ms}`),
    '/late-limit/sparql',
  );
  lateGarbage = await listen(
    late(() => 'garbage'),
    '/late-garbage/sparql',
  );
  earlyBusy = await listen((_q, res) => res.writeHead(503, { 'content-type': 'text/plain', 'fkgqa-stopped': 'busy; by=request; waited=900; ms=900' }).end('busy'), '/early-busy/sparql');
  const rowsDoc = JSON.stringify({ head: { vars: ['s'] }, results: { bindings: Array.from({ length: 400 }, (_, i) => ({ s: { type: 'uri', value: `urn:x${i}` } })) } });
  many = await listen((req, res) => {
    manyAt = { t: Date.now(), ms: Number(req.headers['fkgqa-timeout']) };
    req.resume();
    res.writeHead(200, { 'content-type': JSON_RESULTS }).end(rowsDoc);
  }, '/many/sparql');
  slow = await listen((req, res) => {
    slowAt.push(Date.now());
    let text = decodeURIComponent(req.url ?? '');
    req.on('data', (d: Buffer) => (text += decodeURIComponent(String(d).replace(/\+/g, ' '))));
    req.on('end', () => {
      if (text.includes('<urn:x')) slowBound++;
    });
    setTimeout(() => res.writeHead(200, { 'content-type': JSON_RESULTS }).end('{"head":{"vars":["s","v"]},"results":{"bindings":[]}}'), 400);
  }, '/slow/sparql');
});

afterAll(async () => {
  await server?.close();
  await outside?.close();
  await redirector?.close();
  await stall?.close();
  await lateBusy?.close();
  await lateLimit?.close();
  for (const l of [lateGarbage, earlyBusy, many, slow]) await l?.close();
});

const registry = () => [1, 2, 3, 4].map(url).concat(redirector.url, stall.url, lateBusy.url, lateLimit.url, lateGarbage.url, earlyBusy.url, many.url, slow.url);
const total = (o: EngineOutcome) => Object.values(o.requests).reduce((a, b) => a + b, 0);
const rows = (o: EngineOutcome) => {
  expect(o.status, o.status === 'error' ? o.error : o.status).toBe('ok');
  const r = JSON.parse((o as { body: string }).body) as { results: { bindings: Record<string, { value: string }>[] } };
  return r.results.bindings.map((b) => Object.fromEntries(Object.entries(b).map(([k, v]) => [k, v.value])));
};

/** Books (shard 2: titles) joined with their years (shard 4), before 2010. */
const JOIN = () => `SELECT ?title ?year WHERE {
  SERVICE <${url(2)}> { ?b <${P}book#title> ?title }
  SERVICE <${url(4)}> { ?b <${P}book#year> ?year FILTER(?year < 2010) }
} ORDER BY ?year`;
const JOIN_ROWS = [
  { title: 'Salt Roads', year: '1998' },
  { title: 'The Quiet Harbour', year: '2004' },
  { title: 'Cedar and Stone', year: '2007' },
];
/** Books never loaned: loans sit in shards 1 and 3. */
const NOT_LOANED = () => `SELECT ?title WHERE {
  SERVICE <${url(2)}> { ?b <${P}book#title> ?title }
  FILTER NOT EXISTS { { SERVICE <${url(1)}> { ?l <${P}loan#ref-book_id> ?b } } UNION { SERVICE <${url(3)}> { ?l <${P}loan#ref-book_id> ?b } } }
} ORDER BY ?title`;

/** What differs between engines in these cases. */
const TRAITS: Record<string, { oneRequestPerService: boolean; selectsSources: boolean }> = {
  comunica: { oneRequestPerService: true, selectsSources: true },
  jena: { oneRequestPerService: true, selectsSources: false },
  'comunica-default': { oneRequestPerService: false, selectsSources: true },
};

for (const name of FEDERATION_ENGINES) {
  describe.runIf(ENGINE_TESTS_RUN[name])(`engines / ${name}`, () => {
    let engine: FederationEngine;
    beforeAll(async () => {
      engine = await createEngine(name, { endpoints: registry(), parallel: 2 });
      await engine.warm?.();
    });
    afterAll(async () => engine?.close());

    it('joins two shards: the 3 books before 2010 with their years; one request per SERVICE clause once the endpoints are known', async () => {
      expect([engine.name, engine.selectsSources]).toEqual([name, TRAITS[name].selectsSources]);
      const first = await engine.query(JOIN(), JSON_RESULTS, { deadline: { ms: 60_000, from: 'call' } });
      expect(rows(first)).toEqual(JOIN_ROWS);
      expect(Object.keys(first.requests).sort()).toEqual([url(2), url(4)].sort());
      const again = await engine.query(JOIN(), JSON_RESULTS, { deadline: { ms: 60_000, from: 'call' } });
      expect(rows(again)).toEqual(JOIN_ROWS);
      if (TRAITS[name].oneRequestPerService) expect(again.requests).toEqual({ [url(2)]: 1, [url(4)]: 1 });
      // Comunica fetches each SERVICE target's service description at a thread's first contact.
      if (name === 'comunica') expect(total(first)).toBeLessThanOrEqual(4);
      if (name === 'jena') expect(total(first)).toBe(2);
    });

    it('FILTER NOT EXISTS across shards: the 4 books never loaned', async () => {
      const o = await engine.query(NOT_LOANED(), JSON_RESULTS, { deadline: { ms: 60_000, from: 'call' } });
      expect(rows(o).map((r) => r.title)).toEqual(['Cedar and Stone', 'Highland Songs', 'Salt Roads', 'Winter Ledger']);
    });

    it('a correlated FILTER NOT EXISTS with a sub-SELECT and IN (the shape of dog_kennels/q33) counts the 4 books never loaned', async () => {
      // Jena 4.5's implicit-join rewrite turned this into (table empty) and counted all 8 books.
      const q = `SELECT (COUNT(*) AS ?n) WHERE {
        SERVICE <${url(2)}> { ?b <${P}book#title> ?t }
        FILTER NOT EXISTS {
          { SELECT ?lb WHERE { { SERVICE <${url(1)}> { ?l <${P}loan#ref-book_id> ?lb } } UNION { SERVICE <${url(3)}> { ?l <${P}loan#ref-book_id> ?lb } } } }
          FILTER(?b IN (?lb))
        }
      }`;
      expect(rows(await engine.query(q, JSON_RESULTS, { deadline: { ms: 60_000, from: 'call' } }))).toEqual([{ n: '4' }]);
    });

    it('COUNT over a UNION of two whole shards, and over a pattern no endpoint matches (one row, 0)', async () => {
      const o = await engine.query(`SELECT (COUNT(*) AS ?n) { { SERVICE <${url(1)}> { ?s ?p ?o } } UNION { SERVICE <${url(2)}> { ?s ?p ?o } } }`, JSON_RESULTS, {
        deadline: { ms: 60_000, from: 'call' },
      });
      expect(rows(o)).toEqual([{ n: String(server.endpoint('library-shard1')!.triples + server.endpoint('library-shard2')!.triples) }]);
      const none = await engine.query(`SELECT (COUNT(*) AS ?n) WHERE { SERVICE <${url(2)}> { ?s <${P}nothing> ?o } }`, JSON_RESULTS, { deadline: { ms: 60_000, from: 'call' } });
      expect(rows(none)).toEqual([{ n: '0' }]);
    });

    it('answers CSV for SELECT and a boolean for ASK', async () => {
      const csv = await engine.query(JOIN(), 'text/csv', { deadline: { ms: 60_000, from: 'call' } });
      expect(csv.status === 'ok' && csv.body.replace(/\r/g, '')).toBe('title,year\nSalt Roads,1998\nThe Quiet Harbour,2004\nCedar and Stone,2007\n');
      const ask = await engine.query(`ASK { SERVICE <${url(4)}> { ?b <${P}book#year> 2023 } }`, JSON_RESULTS, { deadline: { ms: 60_000, from: 'call' } });
      expect(ask.status === 'ok' && JSON.parse(ask.body).boolean).toBe(true);
    });

    it('a query without SERVICE over sources: answered by an engine that selects sources, refused by one that does not', async () => {
      const o = await engine.query(`SELECT (COUNT(*) AS ?n) { ?b <${P}book#title> ?t }`, JSON_RESULTS, { deadline: { ms: 60_000, from: 'call' }, sources: [1, 2, 3, 4].map(url) });
      if (TRAITS[name].selectsSources) expect(rows(o)).toEqual([{ n: '8' }]);
      else expect(o).toEqual({ status: 'error', httpStatus: 400, requests: {}, error: 'jena has no source selection: it evaluates SERVICE clauses only (name each endpoint in SERVICE <url> { … })' });
    });

    it('a 990,000-character query (a string literal filling it) answers the 3 books before 2010; operators nested over the limit are refused as too complex, not malformed, before any request', async () => {
      const join = JOIN();
      const head = join.replace(/\} ORDER BY \?year$/, 'FILTER(?title != "');
      const tail = '") } ORDER BY ?year';
      const long = head + 'a'.repeat(990_000 - head.length - tail.length) + tail;
      expect(long.length).toBe(990_000);
      expect(rows(await engine.query(long, JSON_RESULTS, { deadline: { ms: 120_000, from: 'call' } }))).toEqual(JOIN_ROWS);
      // 200 chained && (operator depth 2 + 201 + … = 206): within the limit of 256, the same rows.
      const chain = (n: number) => join.replace(/\} ORDER BY \?year$/, `FILTER(?year > 0 ${'&& ?year > 0 '.repeat(n)}) } ORDER BY ?year`);
      expect(rows(await engine.query(chain(200), JSON_RESULTS, { deadline: { ms: 60_000, from: 'call' } }))).toEqual(JOIN_ROWS);
      const deep = await engine.query(chain(300), JSON_RESULTS, { deadline: { ms: 60_000, from: 'call' } });
      expect(deep).toEqual({
        status: 'error',
        httpStatus: 400,
        requests: {},
        error: expect.stringMatching(/^the query is too complex: the query's operators nest 30\d levels deep, more than the limit of 256: /),
      });
    });

    it('refuses a pattern outside SERVICE and an unregistered SERVICE before any request', async () => {
      const o = await engine.query(`SELECT * { ?b <${P}book#title> ?t }`, JSON_RESULTS, { deadline: { ms: 60_000, from: 'call' } });
      expect(o).toEqual({ status: 'error', httpStatus: 400, requests: {}, error: expect.stringContaining('is outside every SERVICE clause') });
      const u = await engine.query(`SELECT * { SERVICE <${outside.url}> { ?s ?p ?o } SERVICE <${url(1)}> { ?s ?p ?o } }`, JSON_RESULTS, { deadline: { ms: 60_000, from: 'call' } });
      expect(u).toMatchObject({ status: 'error', httpStatus: 400, requests: {}, error: `refused to contact ${outside.url}: not a registered endpoint (SERVICE <${outside.url}>); nothing was sent` });
      expect(outside.hits).toBe(0);
    });

    it('never follows a 307 from a registered endpoint to an unregistered listener (0 requests there)', async () => {
      const before = redirector.hits;
      const o = await engine.query(`SELECT * { SERVICE <${redirector.url}> { ?s ?p ?o } SERVICE <${url(1)}> { ?s ?p ?o } }`, JSON_RESULTS, { deadline: { ms: 60_000, from: 'call' } });
      expect(o.status).toBe('error');
      const shown = (u: string) => `${u.replace(/[?#].*$/, '')}(\\?…)?`;
      expect(o.status === 'error' && o.error).toMatch(
        new RegExp(`^${shown(redirector.url)} answered HTTP 307 with a redirect to ${shown(outside.url)}: not followed, ${shown(outside.url)} is not a registered endpoint; nothing was sent there$`),
      );
      // The message is the redirect's alone: no request line quoting the query percent-encoded (Jena's "Unexpected error making the query: GET …?query=SELECT%20…").
      expect(o.status === 'error' && o.error).not.toMatch(/query=|%[0-9A-F]{2}/);
      expect(o.status === 'error' && o.httpStatus).toBe(307);
      expect(outside.hits).toBe(0);
      expect(o.requests[redirector.url]).toBeGreaterThanOrEqual(1);
      expect(redirector.hits - before).toBe(o.requests[redirector.url]);
    });

    it('stops a query at its time limit with the requests sent so far, closes its connection, and answers the next one after', async () => {
      const hits = stall.hits;
      // The limit counts from when a thread takes the query (a deadline from: 'start'): a thread's start at load 20 is not part of it.
      const o = await engine.query(`SELECT * { SERVICE <${stall.url}> { ?s ?p ?o } SERVICE <${url(1)}> { ?s ?p ?o } }`, JSON_RESULTS, { deadline: { ms: 2000, from: 'start' } });
      expect(stall.hits).toBeGreaterThan(hits);
      expect(o.status).toBe('timeout');
      // At least one request reached the stalled endpoint (Jena's query, or Comunica's service-description probe).
      expect(o.requests[stall.url]).toBeGreaterThanOrEqual(1);
      // The engine dropped the stalled connection (waits for the socket to close; no time budget).
      while (stall.sockets.size > 0) await new Promise((r) => setTimeout(r, 50));
      expect(rows(await engine.query(JOIN(), JSON_RESULTS, { deadline: { ms: 60_000, from: 'call' } }))).toEqual(JOIN_ROWS);
    });

    it("reports an endpoint's 503 at the limit it was sent (Fkgqa-Stopped) that arrives after the engine's own limit ended: busy or that limit, not the engine's timeout", async () => {
      // A started engine (a cold JVM's first query can take 2 s at load 24 before it sends anything).
      expect(rows(await engine.query(JOIN(), JSON_RESULTS, { deadline: { ms: 60_000, from: 'call' } }))).toEqual(JOIN_ROWS);
      for (const [l, stopped] of [
        [lateBusy, /^busy; by=request; waited=\d+; ms=\d+$/],
        [lateLimit, /^time-limit; by=request; ms=\d+$/],
      ] as const) {
        const o = await engine.query(`SELECT * { SERVICE <${l.url}> { ?s ?p ?o } SERVICE <${url(1)}> { ?s ?p ?o } }`, JSON_RESULTS, { deadline: { ms: 3000, from: 'start' } });
        // Without the wait for due answers (DueAnswers): { status: 'timeout' }, a busy shard charged to the query.
        expect(o.status === 'error' ? [o.httpStatus, o.fault?.endpoint] : o.status).toEqual([503, l.url]);
        expect(o.status === 'error' && o.fault?.stopped).toMatch(stopped);
      }
      // Beside a SERVICE SILENT (whose 503 is no verdict: the engine may swallow it), and with the words in a comment: still busy.
      // (4 s: at load 24 Jena's first UNION with SERVICE SILENT sent nothing within 2 s.)
      const o = await engine.query(
        `SELECT * { { SERVICE SILENT <${earlyBusy.url}> { ?s ?p ?o } } UNION { SERVICE <${lateBusy.url}> { ?s ?p ?o } SERVICE <${url(1)}> { ?s ?p ?o } } } # SERVICE SILENT`,
        JSON_RESULTS,
        { deadline: { ms: 4000, from: 'start' } },
      );
      expect(o.status === 'error' ? [o.httpStatus, o.fault?.endpoint] : o.status).toEqual([503, lateBusy.url]);
    });

    it("no wait for due answers, or no stop taken, where it would be wrong: an abort ends it; a client's deadline (within) and the whole call's keep theirs; a SERVICE SILENT's 503 and a Fkgqa-Stopped that does not parse are no verdict", async () => {
      const ac = new AbortController();
      // Aborted 600 ms after the limit (stall's request carries what was left of it, less at most 250 ms) while stall's
      // answer is due: the wait for it ends there, aborted (it would wait 2 s and say timeout).
      expect(rows(await engine.query(JOIN(), JSON_RESULTS, { deadline: { ms: 60_000, from: 'call' } }))).toEqual(JOIN_ROWS);
      const onStall = stall.hits;
      const aborted = engine.query(`SELECT * { SERVICE <${stall.url}> { ?s ?p ?o } SERVICE <${url(1)}> { ?s ?q ?r } }`, JSON_RESULTS, { deadline: { ms: 1500, from: 'start' }, signal: ac.signal });
      while (stall.hits === onStall) await new Promise((r) => setTimeout(r, 20));
      setTimeout(() => ac.abort(), stallLimitMs + 250 + 600);
      expect(await aborted).toMatchObject({ status: 'error', error: 'aborted' });
      // A client's deadline (/federation/sparql's request limit): answered at it, without the late busy.
      // (Or, at load, the engine's own busy: the wait for the thread to be free after the aborted query took over a tenth of it.)
      const within = await engine.query(`SELECT * { SERVICE <${lateBusy.url}> { ?s ?p ?o } SERVICE <${url(1)}> { ?s ?p ?o } }`, JSON_RESULTS, {
        deadline: { ms: 1500, from: 'start', clientMs: 1500 },
      });
      expect(within.status === 'error' ? { busy: within.busy, fault: within.fault } : within.status).toEqual(within.status === 'error' ? { busy: true, fault: undefined } : 'timeout');
      // The whole call's limit (a deadline from: 'call').
      expect((await engine.query(`SELECT * { SERVICE <${lateBusy.url}> { ?s ?p ?o } SERVICE <${url(1)}> { ?s ?p ?o } }`, JSON_RESULTS, { deadline: { ms: 4000, from: 'call' } })).status).toBe(
        'timeout',
      );
      // A 503 the query's SERVICE SILENT swallowed, while another SERVICE stalls: the query's own time limit. (Jena sends the
      // stalled request after the SILENT one's answer; on a loaded machine that came past the limit, the JVM refused to send
      // and said so at once, and its error was read before the limit's due timer fired: QueryLimit.passed.)
      const silent = await engine.query(`SELECT * { { SERVICE SILENT <${earlyBusy.url}> { ?s ?p ?o } } UNION { SERVICE <${stall.url}> { ?s ?p ?o } } }`, JSON_RESULTS, {
        deadline: { ms: 1500, from: 'start' },
      });
      expect(silent.status === 'error' ? silent.error : silent.status).toBe('timeout');
      // A late 503 whose Fkgqa-Stopped is no stop of fkgqa serve.
      expect((await engine.query(`SELECT * { SERVICE <${lateGarbage.url}> { ?s ?p ?o } SERVICE <${url(1)}> { ?s ?p ?o } }`, JSON_RESULTS, { deadline: { ms: 1500, from: 'start' } })).status).toBe(
        'timeout',
      );
      expect(rows(await engine.query(JOIN(), JSON_RESULTS, { deadline: { ms: 60_000, from: 'call' } }))).toEqual(JOIN_ROWS);
    });

    it("sends nothing past the query's limit while it waits for due answers (a bind join's requests stop)", async () => {
      const before = slowAt.length;
      const boundBefore = slowBound;
      const o = await engine.query(`SELECT * { SERVICE <${many.url}> { ?s ?p ?o } SERVICE <${slow.url}> { ?s ?q ?v } }`, JSON_RESULTS, { deadline: { ms: 8000, from: 'start' } });
      // The endpoints answer Comunica's COUNT queries with their rows, which hold no count: as shipped, Comunica takes
      // both sizes as unknown and its planner binds the 400 rows of `many` into requests to `slow` (400 ms each: about
      // 20 s on a quiet machine), so comunica-default runs to the limit; comunica and jena send one request to each
      // endpoint and answer well within it at any load.
      if (engine.name === 'comunica-default') {
        expect(o.status).toBe('timeout');
        expect(slowBound - boundBefore).toBeGreaterThan(0);
      } else {
        expect(o.status).toBe('ok');
        expect(slowBound - boundBefore).toBe(0);
      }
      // The engine's limit, from many's request: its Fkgqa-Timeout plus sentLimit's margin (at most 250 ms).
      const limitAt = manyAt.t + manyAt.ms + 250;
      expect(slowAt.slice(before).filter((t) => t > limitAt + 1000)).toEqual([]);
      expect(o.requests[slow.url] ?? 0).toBe(slowAt.length - before);
    });

    it('answers another query while one waits on a stalled endpoint; stops that one when its signal aborts, and answers the next one', async () => {
      const ac = new AbortController();
      const hits = stall.hits;
      let stalled = false;
      const pending = engine
        .query(`SELECT * { SERVICE <${stall.url}> { ?s ?p ?o } SERVICE <${url(1)}> { ?s ?p ?o } }`, JSON_RESULTS, { deadline: { ms: 120_000, from: 'call' }, signal: ac.signal })
        .finally(() => (stalled = true));
      while (stall.hits === hits) await new Promise((r) => setTimeout(r, 50));
      // Another query is answered while the stalled one still waits (2 threads or JVM query threads): an event, not a time budget.
      const meanwhile = await engine.query(JOIN(), JSON_RESULTS, { deadline: { ms: 60_000, from: 'call' } });
      expect(rows(meanwhile)).toEqual(JOIN_ROWS);
      expect(stalled).toBe(false);
      ac.abort();
      expect(await pending).toMatchObject({ status: 'error', error: 'aborted' });
      expect(rows(await engine.query(JOIN(), JSON_RESULTS, { deadline: { ms: 60_000, from: 'call' } }))).toEqual(JOIN_ROWS);
    });
  });
}

describe.runIf(ENGINE_TESTS_RUN.jena)('engines / jena: the JVM', () => {
  it('is installed where CI runs (the Debian packages of .ci/run)', () => {
    const jena = findJena();
    expect(jena.ok ? 'ok' : jena.reason).toBe('ok');
  });

  it('exits when the Node process that started it exits without closing it', async () => {
    const script = `
      import { createEngine } from ${JSON.stringify(path.join(ROOT, 'dist/federation/engines.js'))};
      const e = await createEngine('jena', { endpoints: [${JSON.stringify(url(1))}] });
      const o = await e.query('ASK { SERVICE <${url(1)}> { ?s ?p ?o } }', 'application/sparql-results+json', { deadline: { ms: 60000, from: "call" } });
      console.log(JSON.stringify({ pid: e.pid, body: o.body }));`;
    // Asynchronously: the endpoints are served by this process.
    const out = await new Promise<string>((resolve, reject) =>
      execFile(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }, (e, stdout) => (e ? reject(e) : resolve(stdout))),
    );
    const { pid, body } = JSON.parse(out.trim().split('\n').pop()!) as { pid: number; body: string };
    expect(JSON.parse(body).boolean).toBe(true);
    // Node has exited; the JVM reads end of input and exits: wait for it.
    while (fs.existsSync(`/proc/${pid}`) && !/^State:\s+Z/m.test(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))) await new Promise((r) => setTimeout(r, 100));
    expect(fs.existsSync(`/proc/${pid}/cmdline`) ? fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8') : '').not.toContain('JenaFederationEngine');
  });
});

/**
 * `--federation-engine` reaches every consumer: serve's `/federation/sparql` and mcp's
 * run_sparql_query (and, through them, eval, which spawns `fkgqa mcp --federation-engine` and
 * executes the final query with the same client). Which engine answered shows in the requests the
 * shard endpoints see: Comunica first fetches each SERVICE target's service description, Jena sends
 * exactly one query per SERVICE clause.
 */
describe('engines / the choice reaches serve and mcp', () => {
  for (const name of ['comunica', 'jena'] as const) {
    it.runIf(ENGINE_TESTS_RUN[name])(`${name}: /federation/sparql and run_sparql_query evaluate the join with it`, { timeout: 300_000 }, async () => {
      // The first federated query starts the engine (a Comunica thread, the JVM) within its time
      // limit: at load 45 that took over serve's default 30 s (503), so the limit here is 120 s.
      const s = await serve({ shards: shardsDir, kgs: ['library'], writeFiles: false, federationEngine: name, timeoutMs: 120_000 });
      const u = (n: number) => s.endpoint(`library-shard${n}`)!.url;
      const join = JOIN().replaceAll(url(2), u(2)).replaceAll(url(4), u(4));
      try {
        const r = await fetch(`${new URL(u(1)).origin}/federation/sparql`, { method: 'POST', headers: { 'content-type': 'application/sparql-query', accept: JSON_RESULTS }, body: join });
        expect(r.status).toBe(200);
        expect((await r.json()).results.bindings.map((b: Record<string, { value: string }>) => b.title.value)).toEqual(JOIN_ROWS.map((x) => x.title));
        const counts = s.log.counts();
        expect([counts['library-shard2'].data, counts['library-shard4'].data]).toEqual([1, 1]);
        expect(counts['library-shard2']['service-description'] ?? 0).toBe(name === 'comunica' ? 1 : 0);
        const mcp = await createMcpServer({ registry: registryFromEndpointsValue(s.endpointsFile(), 'test'), callLog: null, state: null, federationEngine: name });
        const [a, b] = InMemoryTransport.createLinkedPair();
        await mcp.server.connect(a);
        const client = new Client({ name: 'test', version: '1' });
        await client.connect(b);
        try {
          const t = (await client.callTool({ name: 'run_sparql_query', arguments: { query: join } })) as { isError?: boolean; content: { text: string }[] };
          expect(t.isError, t.content[0].text).toBeFalsy();
          expect(mcp.callLog.entries.at(-1)!.requests).toEqual(name === 'comunica' ? { [u(2)]: 2, [u(4)]: 2 } : { [u(2)]: 1, [u(4)]: 1 });
        } finally {
          await client.close();
          await mcp.close();
        }
      } finally {
        await s.close();
      }
    });
  }
});

describe('engines / Comunica loaded from its bundle (npm run build, engine-module.ts)', () => {
  let s: ShardServer;
  const ep = (n: number) => s.endpoint(`library-shard${n}`)!.url;
  beforeAll(async () => {
    s = await serve({ shards: await demoBuild(tmpDir('fkgqa-bundle-')), kgs: ['library'], writeFiles: false });
  });
  afterAll(async () => {
    await s?.close();
  });

  it('each configuration has a bundle of its engine file as it is; a copy elsewhere or a changed file has none', () => {
    for (const config of ['comunica', 'comunica-default'] as const) {
      const b = bundleFor(comunicaEngineFile(config));
      expect(b, config).toBeDefined();
      expect(b!.sha256).toBe(
        crypto
          .createHash('sha256')
          .update(fs.readFileSync(comunicaEngineFile(config)))
          .digest('hex'),
      );
      expect(fs.statSync(b!.cache).size).toBeGreaterThan(1_000_000);
    }
    const dir = tmpDir('fkgqa-bundle-index-');
    const copy = path.join(dir, 'engine-service.cjs');
    fs.copyFileSync(COMUNICA_SERVICE_ENGINE, copy);
    expect(bundleFor(copy)).toBeUndefined();
    // An index naming the copy (as bundle.js writes it, relative to the package root three folders up): used while the copy is unchanged.
    const folder = path.join(dir, 'dist', 'federation', 'comunica');
    fs.mkdirSync(folder, { recursive: true });
    const real = bundleFor(COMUNICA_SERVICE_ENGINE)!;
    fs.copyFileSync(real.bundle, path.join(folder, 'comunica.bundle.cjs'));
    const sha256 = crypto.createHash('sha256').update(fs.readFileSync(copy)).digest('hex');
    const entry = { of: 'engine-service.cjs', sha256, bundle: 'comunica.bundle.cjs', bundleSha256: real.bundleSha256, cache: 'comunica.bundle.cache', cacheSha256: real.cacheSha256 };
    fs.writeFileSync(path.join(folder, BUNDLES_FILE), JSON.stringify([entry]));
    expect(bundleFor(copy, folder)).toMatchObject({ of: copy, bundle: path.join(folder, 'comunica.bundle.cjs') });
    // An index of another shape, or naming files outside its folder: no bundle (the engine is required), never an error.
    for (const index of [
      '{}',
      'null',
      '[null]',
      '[{"of":5}]',
      JSON.stringify([{ ...entry, bundle: '../comunica.bundle.cjs' }]),
      JSON.stringify([{ ...entry, bundle: real.bundle }]),
      JSON.stringify([{ ...entry, bundleSha256: 'x' }]),
    ]) {
      fs.writeFileSync(path.join(folder, BUNDLES_FILE), index);
      expect(bundleFor(copy, folder), index).toBeUndefined();
    }
    fs.writeFileSync(path.join(folder, BUNDLES_FILE), JSON.stringify([entry]));
    fs.appendFileSync(copy, '\n// changed\n');
    expect(bundleFor(copy, folder)).toBeUndefined();
  });

  it('a cut bundle is loaded module by module, saying why; a code cache with other bytes of the same size is not given to V8 (it crashed the process)', () => {
    const real = bundleFor(COMUNICA_SERVICE_ENGINE)!;
    const dir = tmpDir('fkgqa-bundle-bad-');
    const cut = path.join(dir, 'comunica.bundle.cjs');
    fs.writeFileSync(cut, fs.readFileSync(real.bundle).subarray(0, 3_000_000));
    const loaded = loadEngineModule(COMUNICA_SERVICE_ENGINE, { ...real, bundle: cut });
    expect(loaded.from).toBe('modules');
    expect(loaded.problem).toBe(`${cut} is not the bundle bundles.json recorded (changed or cut since npm run build): Comunica is loaded module by module; run npm run build`);
    expect(typeof loaded.module.engine).toBe('function');
    // In a child process: 4 bytes changed in the middle of the cache made V8 abort (SIGTRAP) or crash (SIGSEGV).
    const cache = path.join(dir, 'comunica.bundle.cache');
    const bytes = fs.readFileSync(real.cache);
    bytes.writeUInt32LE(0xffffffff, 2_000_000);
    fs.writeFileSync(cache, bytes);
    const loader = path.join(ROOT, 'dist/federation/comunica/engine-module.js');
    const script = `import { loadEngineModule } from ${JSON.stringify(loader)}; const l = loadEngineModule(${JSON.stringify(COMUNICA_SERVICE_ENGINE)}, ${JSON.stringify({ ...real, cache })}); new l.module.QueryEngineBase(l.module.engine()); console.log(l.from);`;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    expect([r.status, r.signal, r.stdout.trim()]).toEqual([0, null, 'bundle']);
  });

  it('hands Comunica the rows of each SERVICE answer read whole as an iterator of its own asynciterator: 300 BIND queries answer, from the bundle and module by module', async () => {
    // asynciterator is a dual package: `import` gives its ES module, Comunica (bundled, or required) another copy.
    const esm = await import('asynciterator');
    const fromBundle = loadEngineModule(COMUNICA_SERVICE_ENGINE, bundleFor(COMUNICA_SERVICE_ENGINE));
    const fromModules = loadEngineModule(COMUNICA_SERVICE_ENGINE);
    expect([fromBundle.from, fromModules.from]).toEqual(['bundle', 'modules']);
    expect(fromBundle.module.asynciterator.ArrayIterator).not.toBe(esm.ArrayIterator);
    expect(fromModules.module.asynciterator.ArrayIterator).toBe(createRequire(path.join(ROOT, 'package.json'))('asynciterator').ArrayIterator);
    // A BIND over one SERVICE answer (4 rows): an iterator of another copy left BIND's reader waiting now and then (about 1 query in 300).
    const query = `SELECT ?b ?v WHERE { SERVICE <${ep(4)}> { ?b <${P}book#year> ?y } BIND(?y - 1 AS ?v) }`;
    for (const from of ['bundle', 'modules'] as const) {
      const engine = new ComunicaEngine({ endpoints: [ep(4)] });
      try {
        if (from === 'modules') (engine as unknown as { data: { bundle?: unknown } }).data.bundle = undefined;
        const answered: string[] = [];
        for (let i = 0; i < 300; i++) {
          const o = await engine.query(query, MEDIA.json, { deadline: { ms: 60_000, from: 'call' } });
          answered.push(o.status === 'ok' ? `ok ${JSON.parse(o.body).results.bindings.length}` : `${o.status} ${'error' in o ? o.error : ''}`);
        }
        expect(engine.loadedFrom).toBe(from);
        expect(new Set(answered), from).toEqual(new Set([answered[0]]));
        expect(answered[0]).toMatch(/^ok [1-9]/);
      } finally {
        await engine.close();
      }
    }
  }, 1_200_000);

  it('a thread loads the bundle and answers as one that loads Comunica module by module (the same bytes)', async () => {
    const query = `SELECT ?s ?o WHERE { SERVICE <${ep(1)}> { ?s ?p ?o } SERVICE <${ep(2)}> { ?o ?q ?r } } ORDER BY ?s ?o`;
    const answers: Record<string, string> = {};
    for (const from of ['bundle', 'modules'] as const) {
      const engine = new ComunicaEngine({ endpoints: [1, 2].map(ep) });
      try {
        // Module by module: the same engine file, without its bundle (what a build without esbuild, or a changed file, gives).
        if (from === 'modules') (engine as unknown as { data: { bundle?: unknown } }).data.bundle = undefined;
        const o = await engine.query(query, MEDIA.json, { deadline: { ms: 120_000, from: 'call' } });
        expect(o.status, JSON.stringify(o)).toBe('ok');
        expect(engine.loadedFrom).toBe(from);
        // What fkgqa serve's progress line says once the engine started.
        expect(engine.startedHow()).toBe(from === 'bundle' ? 'loaded from its bundle' : 'loaded module by module: no usable bundle (run npm run build)');
        answers[from] = o.status === 'ok' ? o.body : '';
      } finally {
        await engine.close();
      }
    }
    expect(JSON.parse(answers.bundle).results.bindings.length).toBeGreaterThan(0);
    expect(answers.bundle).toBe(answers.modules);
  });
});
