import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { SaxesParser } from 'saxes';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import { program } from '../src/cli/program.js';
import { BoundedSparqlClient } from '../src/federation/client.js';
import { registryFromEndpointsValue, registryFromUrls } from '../src/federation/registry.js';
import { runSparqlQuery } from '../src/mcp/run-query.js';
import { createMcpContext } from '../src/mcp/server.js';
import { DEFAULT_PARTITION_OPTIONS, partition } from '../src/partition/index.js';
import { DEFAULT_PORT } from '../src/serve/defaults.js';
import { EndpointPool } from '../src/serve/pool.js';
import { splitIntoGroups, type PoolEndpoint } from '../src/serve/pool-groups.js';
import { ClientGone, type PoolOutcome } from '../src/serve/pool-limits.js';
import { poolWorkers, serve, type ShardServer } from '../src/serve/server.js';
import { MEDIA, parseTimeLimit } from '../src/sparql/protocol.js';
import { xmlIllegalChar } from '../src/sparql/xml-chars.js';
import { DEMO, ROOT, tmpDir } from './helpers.js';

/**
 * The endpoint pool of serve (src/serve/pool.ts): a query whose client gave up, or that reached the
 * request's own time limit, frees its endpoint; a slow query does
 * not block the endpoints of its worker; the port is checked before loading and the default is
 * fixed; XML answers are always XML 1.0.
 */

const COUNT = 'SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }';
/** A cross product of 8 triple patterns: 35^8 rows to count on library-shard1, hours in oxigraph. */
const HEAVY = `SELECT (COUNT(*) AS ?n) WHERE { ${Array.from({ length: 8 }, (_, i) => `?s${i} ?p${i} ?o${i} .`).join(' ')} }`;

let shards: string;
beforeAll(async () => {
  shards = path.join(tmpDir('fkgqa-pool-'), 'shards');
  await partition({ ...DEFAULT_PARTITION_OPTIONS, source: DEMO, out: shards, kgs: ['library'] });
});

const get = (url: string, query: string, accept?: string) => fetch(`${url}?query=${encodeURIComponent(query)}`, { headers: accept ? { Accept: accept } : {} });
const countOf = async (r: Response) => Number(((await r.json()) as { results: { bindings: { n: { value: string } }[] } }).results.bindings[0].n.value);

/** Waits (on the server's own state, checked every 20 ms) until `cond` holds. */
async function until(cond: () => boolean): Promise<void> {
  while (!cond()) await new Promise((r) => setTimeout(r, 20));
}

/** HEAVY sent to an endpoint: its AbortController, how the request ended, and whether it has. */
interface Heavy {
  ac: AbortController;
  ended: Promise<string>;
  settled: string | undefined;
}

/** Sends HEAVY to `url` with an AbortController. */
function heavy(url: string): Heavy {
  const ac = new AbortController();
  const h: Heavy = { ac, ended: Promise.resolve(''), settled: undefined };
  h.ended = fetch(url, { method: 'POST', headers: { 'Content-Type': MEDIA.sparqlQuery }, body: HEAVY, signal: ac.signal }).then(
    async (r) => (h.settled = `answered ${r.status}: ${await r.text()}`),
    (e: Error) => (h.settled = e.name),
  );
  return h;
}

/** Waits until the server runs HEAVY on `id`; fails at once if the request ended instead. */
async function untilRunning(s: ShardServer, id: string, h: Heavy): Promise<void> {
  await until(() => s.queriesRunning().includes(id) || h.settled !== undefined);
  expect(h.settled, 'the heavy query ended before it ran').toBeUndefined();
}

describe('serve: a query the client gave up on does not keep its endpoint busy', () => {
  let s: ShardServer;
  let log: string;
  beforeAll(async () => {
    log = path.join(tmpDir('fkgqa-pool-log-'), 'requests.jsonl');
    // Serve's own limit is 120 s and one worker holds every endpoint: only stopping the query can free it.
    s = await serve({ shards, timeoutMs: 120_000, workers: 1, slowMs: 600_000, writeFiles: false, requestLog: log });
  });
  afterAll(async () => {
    await s?.close();
  });

  it('stops the running query when its client disconnects: ASK {} to the same endpoint answers from a fresh worker', async () => {
    const u = s.endpoint('library-shard1')!.url;
    const before = s.restartsOf('library-shard1')!.restarts;
    const h = heavy(u);
    await untilRunning(s, 'library-shard1', h);
    const gaveUp = performance.now();
    h.ac.abort();
    expect(await h.ended).toBe('AbortError');
    const ask = await get(u, 'ASK {}');
    const answered = performance.now();
    expect(ask.status).toBe(200);
    expect(await ask.json()).toEqual({ head: {}, boolean: true });
    // The worker running the query was replaced (it would have run for hours), and the other endpoints it held answer too.
    expect(s.restartsOf('library-shard1')!.restarts).toBe(before + 1);
    expect(s.queriesRunning()).toEqual([]);
    expect(await countOf(await get(s.endpoint('library-shard4')!.url, COUNT))).toBe(40);
    process.stderr.write(`[serve-pool] ASK {} answered ${(answered - gaveUp).toFixed(0)} ms after the client gave up\n`);
    // The request log records the heavy query as cancelled (499), not as an answer.
    await until(() => fs.existsSync(log) && fs.readFileSync(log, 'utf8').includes('"status":499'));
    const entry = fs
      .readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .find((e) => e.status === 499);
    expect(entry).toMatchObject({ endpoint: 'library-shard1', cancelled: true, method: 'POST' });
  });

  it('/federation/sparql: a client that disconnects from a lone SERVICE running on its shard is logged as 499 under /federation/sparql, not as a time limit', async () => {
    const u = s.endpoint('library-shard1')!.url;
    const ac = new AbortController();
    let settled: string | undefined;
    const body = `SELECT (COUNT(*) AS ?n) WHERE { SERVICE <${u}> { ${Array.from({ length: 8 }, (_, i) => `?s${i} ?p${i} ?o${i} .`).join(' ')} } }`;
    const ended = fetch(`${new URL(u).origin}/federation/sparql`, { method: 'POST', headers: { 'Content-Type': MEDIA.sparqlQuery }, body, signal: ac.signal }).then(
      (r) => (settled = `answered ${r.status}`),
      (e: Error) => (settled = e.name),
    );
    await until(() => s.queriesRunning().includes('library-shard1') || settled !== undefined);
    expect(settled, 'the federated query ended before it ran').toBeUndefined();
    ac.abort();
    expect(await ended).toBe('AbortError');
    const federated = () =>
      fs.existsSync(log)
        ? fs
            .readFileSync(log, 'utf8')
            .trim()
            .split('\n')
            .filter((l) => l !== '')
            .map((l) => JSON.parse(l) as { endpoint: string; status: number; cancelled?: boolean; timeout?: boolean })
            .filter((e) => e.endpoint === '/federation/sparql')
        : [];
    await until(() => federated().length > 0);
    expect(federated()).toEqual([expect.objectContaining({ endpoint: '/federation/sparql', status: 499, cancelled: true, method: 'POST' })]);
    expect(federated()[0].timeout).toBeUndefined();
  });

  it('a client gone while sending its request body is logged as 499 (cancelled), not as a bad request, on a shard endpoint and /federation/sparql', async () => {
    const u = new URL(s.endpoint('library-shard2')!.url);
    for (const pathname of [u.pathname, '/federation/sparql']) {
      const socket = net.connect(Number(u.port), u.hostname);
      await new Promise((r) => socket.once('connect', r));
      // Node answers `Expect: 100-continue` as it hands the request to serve: then 40 of the 1000 bytes its Content-Length promises, and the connection is cut.
      const continued = new Promise((r) => socket.on('data', (d: Buffer) => d.toString('latin1').includes('100 Continue') && r(undefined)));
      socket.write(`POST ${pathname} HTTP/1.1\r\nHost: ${u.host}\r\nContent-Type: ${MEDIA.sparqlQuery}\r\nContent-Length: 1000\r\nExpect: 100-continue\r\n\r\n`);
      await continued;
      await new Promise((r) => socket.write('SELECT * WHERE { ?s ?p ?o } LIMIT 1 # ..', r));
      socket.destroy();
    }
    const entries = () =>
      fs
        .readFileSync(log, 'utf8')
        .trim()
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as { endpoint: string; status: number; cancelled?: boolean; kind: string })
        .filter((e) => (e.endpoint === 'library-shard2' || e.endpoint === '/federation/sparql') && e.kind === 'invalid');
    await until(() => fs.existsSync(log) && entries().length === 2);
    expect(entries().map((e) => [e.endpoint, e.status, e.cancelled])).toEqual(
      expect.arrayContaining([
        ['library-shard2', 499, true],
        ['/federation/sparql', 499, true],
      ]),
    );
  });

  it('drops a waiting query whose client disconnects without running it', async () => {
    const u = s.endpoint('library-shard1')!.url;
    const first = heavy(u);
    await untilRunning(s, 'library-shard1', first);
    const second = heavy(s.endpoint('library-shard2')!.url);
    const before = s.restartsOf('library-shard2')!.restarts;
    second.ac.abort();
    expect(await second.ended).toBe('AbortError');
    // Only the first is running; dropping the second replaced no worker.
    expect(s.queriesRunning()).toEqual(['library-shard1']);
    expect(s.restartsOf('library-shard2')!.restarts).toBe(before);
    first.ac.abort();
    expect(await first.ended).toBe('AbortError');
    expect(await countOf(await get(u, COUNT))).toBe(35);
  });

  it('answers the queries posted behind a stopped one from the fresh worker, each with its own answer', async () => {
    // Three queries wait behind HEAVY in the one worker (PIPELINE posts them to it); stopping HEAVY
    // terminates that worker, so they must go back to the queue and run on its replacement.
    const u = s.endpoint('library-shard1')!.url;
    const before = s.restartsOf('library-shard1')!.restarts;
    const h = heavy(u);
    await untilRunning(s, 'library-shard1', h);
    const waiting = [get(s.endpoint('library-shard4')!.url, COUNT), get(u, COUNT), get(s.endpoint('library-shard4')!.url, 'ASK { ?s ?p ?o }')];
    await new Promise((r) => setTimeout(r, 200));
    h.ac.abort();
    expect(await h.ended).toBe('AbortError');
    const [a, b, c] = await Promise.all(waiting);
    expect([a.status, b.status, c.status]).toEqual([200, 200, 200]);
    expect([await countOf(a), await countOf(b), await c.json()]).toEqual([40, 35, { head: {}, boolean: true }]);
    expect(s.restartsOf('library-shard1')!.restarts).toBe(before + 1);
  });

  it('answers 40 concurrent queries of two endpoints held by one worker, each with the answer of its own endpoint', async () => {
    const urls = ['library-shard1', 'library-shard4'].map((id) => s.endpoint(id)!.url);
    const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => get(urls[i % 2], COUNT).then(countOf)));
    expect(answers).toEqual(Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? 35 : 40)));
  });
});

describe('serve: the time limit a request sends (timeout parameter, Fkgqa-Timeout header)', () => {
  let s: ShardServer;
  beforeAll(async () => {
    s = await serve({ shards, timeoutMs: 1_500, workers: 1, writeFiles: false });
  });
  afterAll(async () => {
    await s?.close();
  });

  it('parses seconds (Fuseki), values with a unit (QLever) and the header in ms; the smaller applies; bad values are 400', () => {
    expect(parseTimeLimit('1.5', undefined)).toBe(1500);
    expect(parseTimeLimit('250ms', undefined)).toBe(250);
    expect(parseTimeLimit('2s', '800')).toBe(800);
    expect(parseTimeLimit(undefined, undefined)).toBeUndefined();
    for (const bad of ['0', '-1', 'abc', '1h', '']) expect(() => parseTimeLimit(bad, undefined)).toThrow(/parameter timeout/);
    expect(() => parseTimeLimit(undefined, '-5')).toThrow(/header Fkgqa-Timeout/);
  });

  it("stops at the smaller of its own limit and the request's, and says whose limit it was", async () => {
    const u = s.endpoint('library-shard1')!.url;
    const cases: { init: RequestInit & { url?: string }; by: string; ms: number }[] = [
      { init: { url: `${u}?query=${encodeURIComponent(HEAVY)}&timeout=1` }, by: 'request', ms: 1000 },
      { init: { method: 'POST', headers: { 'Content-Type': MEDIA.sparqlQuery, 'Fkgqa-Timeout': '800' }, body: HEAVY }, by: 'request', ms: 800 },
      { init: { method: 'POST', headers: { 'Content-Type': MEDIA.form }, body: `query=${encodeURIComponent(HEAVY)}&timeout=900ms` }, by: 'request', ms: 900 },
      { init: { method: 'POST', headers: { 'Content-Type': MEDIA.sparqlQuery, 'Fkgqa-Timeout': '60000' }, body: HEAVY }, by: 'endpoint', ms: 1500 },
    ];
    // Each stop replaces the worker, and the fresh one loads the endpoints again: a query waiting for
    // that (over a tenth of its limit) is answered busy, the endpoint's fault (serve-limits.slow.test.ts).
    // So each case starts once every endpoint is loaded: a COUNT to each loads it first.
    const loadAll = async () => {
      for (const n of [1, 2, 3, 4]) expect((await get(s.endpoint(`library-shard${n}`)!.url, COUNT)).status).toBe(200);
    };
    for (const c of cases) {
      await loadAll();
      const t0 = performance.now();
      const r = await fetch(c.init.url ?? u, c.init);
      expect(r.status).toBe(503);
      expect(r.headers.get('fkgqa-stopped')).toBe(`time-limit; by=${c.by}; ms=${c.ms}`);
      expect(await r.text()).toContain(`query stopped at the ${c.by === 'request' ? "request's" : "endpoint's"} time limit of ${c.ms} ms`);
      expect(performance.now() - t0).toBeGreaterThanOrEqual(c.ms - 5);
    }
    // The federation endpoint too: a lone SERVICE goes to the shard with the request's limit.
    const patterns = Array.from({ length: 8 }, (_, i) => `?s${i} ?p${i} ?o${i} .`).join(' ');
    const fed = `${new URL(u).origin}/federation/sparql`;
    await loadAll();
    const f = await fetch(`${fed}?query=${encodeURIComponent(`SELECT (COUNT(*) AS ?n) WHERE { SERVICE <${u}> { ${patterns} } }`)}&timeout=700ms`);
    expect(f.status).toBe(503);
    expect(f.headers.get('fkgqa-stopped')).toBe('time-limit; by=request; ms=700');
    expect((await fetch(`${fed}?query=${encodeURIComponent(COUNT)}&timeout=-1`)).status).toBe(400);
    expect((await fetch(`${u}?query=${encodeURIComponent(COUNT)}&timeout=soon`)).status).toBe(400);
    expect((await fetch(`${u}?query=${encodeURIComponent(COUNT)}&timeout=1&timeout=2`)).status).toBe(400);
    expect((await fetch(`${u}?query=${encodeURIComponent(COUNT)}`, { headers: { 'Fkgqa-Timeout': 'x' } })).status).toBe(400);
    expect(await countOf(await get(u, COUNT))).toBe(35);
    // A limit longer than Node's timers hold (2^31 - 1 ms) is capped, so it does not fire at once (503).
    const long = await fetch(u, { method: 'POST', headers: { 'Content-Type': MEDIA.sparqlQuery, Accept: MEDIA.json, 'Fkgqa-Timeout': '99999999999999999999' }, body: COUNT });
    expect(long.status).toBe(200);
    expect(await countOf(long)).toBe(35);
  });
});

describe("the bounded client sends its time limit with every request; the endpoint's own limit is told apart", () => {
  it('sends Fkgqa-Timeout (ms) with queries and documents', async () => {
    const seen: string[] = [];
    const listener = http.createServer((req, res) => {
      seen.push(String(req.headers['fkgqa-timeout']));
      req.resume();
      res.writeHead(200, { 'Content-Type': MEDIA.json }).end('{"head":{},"boolean":true}');
    });
    await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(listener.address() as net.AddressInfo).port}/x/sparql`;
      const client = new BoundedSparqlClient(registryFromUrls([url]));
      expect((await client.direct(url, 'ASK {}', MEDIA.json, 4000)).status).toBe('ok');
      expect((await client.document(url.replace(/sparql$/, '.well-known/void'), 'text/turtle', 2500)).ok).toBe(true);
      // 4000 ms less a margin of 250 ms (sentLimit), so that serve's answer at that limit arrives before the client gives up.
      expect(Number(seen[0])).toBeGreaterThan(3650);
      expect(Number(seen[0])).toBeLessThanOrEqual(3750);
      expect(seen[1]).toBe('2500');
    } finally {
      listener.close();
    }
  });

  it("the client's time limit reaches fkgqa serve, which stops the query: the next query on that endpoint answers", async () => {
    const s = await serve({ shards, timeoutMs: 120_000, workers: 1, slowMs: 600_000, writeFiles: false });
    try {
      const client = new BoundedSparqlClient(registryFromEndpointsValue(s.endpointsFile(), 'test'));
      const u = s.endpoint('library-shard1')!.url;
      const before = s.restartsOf('library-shard1')!.restarts;
      const o = await client.direct(u, HEAVY, MEDIA.json, 1500);
      expect(o.status).toBe('timeout');
      expect(o.status === 'timeout' && o.endpointLimitMs).toBeUndefined();
      const ask = await client.direct(u, 'ASK {}', MEDIA.json, 60_000);
      expect(ask.status === 'ok' && JSON.parse(ask.body)).toEqual({ head: {}, boolean: true });
      expect(s.restartsOf('library-shard1')!.restarts).toBe(before + 1);
    } finally {
      await s.close();
    }
  });

  it('run_sparql_query says the endpoint stopped the query at its own limit (not "raise timeout_ms")', async () => {
    const s = await serve({ shards, timeoutMs: 1000, workers: 1, writeFiles: false });
    const ctx = createMcpContext({ registry: registryFromEndpointsValue(s.endpointsFile(), 'test'), build: null, state: null, callLog: null });
    try {
      const u = s.endpoint('library-shard1')!.url;
      const o = await ctx.sparql.direct(u, HEAVY, MEDIA.json, 30_000);
      expect(o.status === 'timeout' && o.endpointLimitMs).toBe(1000);
      const patterns = Array.from({ length: 8 }, (_, i) => `?s${i} ?p${i} ?o${i} .`).join(' ');
      const r = await runSparqlQuery(ctx, { query: `SELECT (COUNT(*) AS ?n) WHERE { SERVICE <${u}> { ${patterns} } }`, timeout_ms: 30_000 });
      expect(r.isError).toBe(true);
      expect(r.text).toContain(`Error (timeout): timeout: the endpoint ${u} stopped the query at its time limit of 1000 ms`);
      expect(r.text).toContain('a larger timeout_ms does not help');
      expect(r.text).not.toContain('may be raised');
    } finally {
      await ctx.close();
      await s.close();
    }
  });
});

describe('serve: a slow query does not block the endpoints of its worker', () => {
  it("after slowMs with others waiting, a fresh worker takes the group; the slow query's worker stops when its client goes", async () => {
    const s = await serve({ shards, timeoutMs: 120_000, workers: 1, slowMs: 300, writeFiles: false });
    try {
      const h = heavy(s.endpoint('library-shard1')!.url);
      await untilRunning(s, 'library-shard1', h);
      // Same worker, another endpoint, and the same endpoint: both answer while the heavy query runs on.
      expect(await countOf(await get(s.endpoint('library-shard2')!.url, COUNT))).toBe(8);
      expect(await countOf(await get(s.endpoint('library-shard1')!.url, COUNT))).toBe(35);
      expect(h.settled).toBeUndefined();
      expect(s.workers.retired).toBe(1);
      expect(s.queriesRunning()).toEqual(['library-shard1']);
      h.ac.abort();
      expect(await h.ended).toBe('AbortError');
      await until(() => s.workers.retired === 0);
      expect(s.queriesRunning()).toEqual([]);
    } finally {
      await s.close();
    }
  });

  it('splits endpoints into groups of about equal triples, largest first, deterministically', () => {
    const eps = [10, 50, 40, 30, 20, 5].map((t, i) => ({ id: `e${i}`, sources: [], triples: t }));
    expect(splitIntoGroups(eps, 2).map((g) => g.map((e) => e.id))).toEqual([
      ['e1', 'e4', 'e0'],
      ['e2', 'e3', 'e5'],
    ]);
    expect(splitIntoGroups(eps, 10)).toHaveLength(6);
    expect(splitIntoGroups(eps, 1)[0]).toHaveLength(6);
    // As many workers as asked, more when a worker would hold over 2M triples (4 GiB oxigraph heap), never more than endpoints.
    expect(poolWorkers(2, 210_557, 92)).toBe(2);
    expect(poolWorkers(2, 10_000_000, 3)).toBe(3);
    expect(poolWorkers(2, 10_000_000, 92)).toBe(5);
    expect(poolWorkers(8, 100, 4)).toBe(4);
  });
});

describe('serve: every XML answer is an XML 1.0 document', () => {
  let s: ShardServer;
  beforeAll(async () => {
    s = await serve({ shards, writeFiles: false, profiles: { endpoints: { 'library-shard2': { maxRows: 1 } } } });
  });
  afterAll(async () => {
    await s?.close();
  });

  /** Parses an XML document strictly (saxes: XML 1.0 well-formedness, characters included); returns its text nodes. */
  function parseXml(xml: string): string[] {
    const texts: string[] = [];
    const p = new SaxesParser();
    p.on('text', (t) => texts.push(t));
    p.write(xml).close();
    return texts;
  }

  const literal = (v: string) => `SELECT ?x WHERE { BIND("${v}" AS ?x) }`;
  const triple = (v: string) => `CONSTRUCT { <http://e/s> <http://e/p> "${v}" } WHERE {}`;
  const queries = [
    ...['a\\u0001b', '\\uFFFE', 'a\\r\\nb', 'x\\u0008y', '<&]]>\\"\'', 'tab\\there', 'é ∑ 😀'].flatMap((v) => [literal(v), triple(v)]),
    'SELECT * WHERE { ?s ?p ?o }',
    'CONSTRUCT WHERE { ?s ?p ?o }',
    'DESCRIBE ?s WHERE { ?s ?p ?o }',
    'ASK { ?s ?p ?o }',
  ];
  const accepts = [MEDIA.xml, 'application/xml', 'text/xml', MEDIA.rdfxml, `${MEDIA.xml}, ${MEDIA.json};q=0.5`, `${MEDIA.rdfxml}, ${MEDIA.turtle};q=0.1`, '*/*'];

  it('parses every XML answer strictly, cut by a profile or not, and never sends a character XML cannot carry', async () => {
    let xmlAnswers = 0;
    for (const id of ['library-shard1', 'library-shard2']) {
      for (const q of queries) {
        for (const a of accepts) {
          const r = await get(s.endpoint(id)!.url, q, a);
          const body = await r.text();
          if (!/xml/.test(r.headers.get('content-type') ?? '')) continue;
          expect(r.status, `${id} ${q} ${a}`).toBe(200);
          expect(() => parseXml(body), `${id} ${q} as ${a}: ${body.slice(0, 300)}`).not.toThrow();
          xmlAnswers++;
        }
      }
    }
    // Per endpoint: 5 SELECTs whose answer XML can carry × 4 XML ranges, ASK × 4, 6 CONSTRUCT/DESCRIBE × 2 RDF/XML ranges.
    expect(xmlAnswers).toBe(2 * (5 * 4 + 4 + 6 * 2));
  });

  it('answers a literal with U+0001 in the next acceptable format, or 406 naming the character; keeps carriage returns', async () => {
    const u = s.endpoint('library-shard1')!.url;
    const only = await get(u, literal('a\\u0001b'), MEDIA.xml);
    expect(only.status).toBe(406);
    expect(await only.text()).toMatch(/the character U\+0001, which XML 1\.0 cannot carry.*application\/sparql-results\+json/);
    const fallback = await get(u, literal('a\\u0001b'), `${MEDIA.xml}, ${MEDIA.json};q=0.5`);
    expect(fallback.status).toBe(200);
    expect(fallback.headers.get('content-type')).toBe(MEDIA.json);
    expect(((await fallback.json()) as { results: { bindings: { x: { value: string } }[] } }).results.bindings[0].x.value).toBe('a\u0001b');
    const rdf = await get(u, triple('\\uFFFE'), `${MEDIA.rdfxml}, ${MEDIA.turtle};q=0.1`);
    expect(rdf.headers.get('content-type')).toBe(`${MEDIA.turtle}; charset=utf-8`);
    expect((await get(u, triple('\\uFFFE'), MEDIA.rdfxml)).status).toBe(406);
    // A carriage return survives XML parsing (written &#13;), in results XML and RDF/XML.
    expect(parseXml(await (await get(u, literal('a\\r\\nb'), MEDIA.xml)).text())).toContain('a\r\nb');
    expect(parseXml(await (await get(u, triple('a\\r\\nb'), MEDIA.rdfxml)).text())).toContain('a\r\nb');
    expect(xmlIllegalChar('ok\u0009\n\r')).toBeUndefined();
    expect(xmlIllegalChar('x\uD800y')).toBe('U+D800');
  });
});

describe('serve: the port', () => {
  it('finds a port in use before loading any shard: an input error naming the port (exit 2 from the CLI), no lock left', async () => {
    const blocker = net.createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const port = (blocker.address() as net.AddressInfo).port;
    try {
      const lines: string[] = [];
      await expect(serve({ shards, port, writeFiles: false, progress: (l) => lines.push(l) })).rejects.toThrow(`port ${port} on 127.0.0.1 is in use`);
      expect(lines.filter((l) => /loaded/.test(l))).toEqual([]);
      const state = tmpDir('fkgqa-pool-state-');
      const cli = spawnSync(process.execPath, [path.join(ROOT, 'bin/fkgqa.js'), 'serve', '--shards', shards, '--port', String(port), '--state', state], { encoding: 'utf8', timeout: 60_000 });
      expect(cli.status).toBe(2);
      expect(cli.stderr).toContain(`port ${port} on 127.0.0.1 is in use`);
      expect(cli.stderr).toContain('--port 0');
      expect(cli.stderr).not.toMatch(/loaded library-shard/);
      expect(fs.readdirSync(state)).toEqual([]);
    } finally {
      blocker.close();
    }
  });

  it('refuses a folder as --request-log before binding (exit 2, named, no lock left), not at its first request', async () => {
    const folder = tmpDir('fkgqa-pool-log-');
    await expect(serve({ shards, port: 0, writeFiles: false, requestLog: folder })).rejects.toThrow(`${folder}: --request-log: the request log is a folder: give the name of a JSON-lines file`);
    const state = tmpDir('fkgqa-pool-state-');
    const cli = spawnSync(process.execPath, [path.join(ROOT, 'bin/fkgqa.js'), 'serve', '--shards', shards, '--port', '0', '--state', state, '--request-log', folder], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect([cli.status, cli.stderr]).toEqual([2, `fkgqa: error: ${folder}: --request-log: the request log is a folder: give the name of a JSON-lines file\n`]);
    expect(fs.readdirSync(state)).toEqual([]);
  });

  it("has a fixed default port, 7373, which the README's describe --endpoint-base example names", () => {
    const opt = program()
      .commands.find((c) => c.name() === 'serve')!
      .options.find((o) => o.long === '--port')!;
    expect(opt.defaultValue).toBe(DEFAULT_PORT);
    expect(DEFAULT_PORT).toBe(7373);
    const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    expect(readme).toMatch(new RegExp(`--endpoint-base http://127\\.0\\.0\\.1:${DEFAULT_PORT}\\b`));
    expect(readme).not.toMatch(/--endpoint-base http:\/\/127\.0\.0\.1:(?!7373\b)\d+/);
  });

  it("the README's query examples name no port: they read the endpoint URLs from the endpoints file, so they work on any port", () => {
    const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    const queries = readme.split('\n').filter((l) => /^fkgqa query\b/.test(l));
    expect(queries.length).toBeGreaterThanOrEqual(1);
    for (const q of queries) expect(q).not.toMatch(/:\d{2,5}\//);
    expect(readme).toContain('BASE=$(node -p "new URL(require(\'./shards.state/endpoints.json\').endpoints[0].url).origin")');
  });
});

describe('serve: the shard files are checked against their manifest as the pool loads them', () => {
  it('refuses a build whose shard changed after the build (InputError naming the file), and serves the same build intact', async () => {
    const copy = path.join(tmpDir('fkgqa-pool-sha-'), 'shards');
    fs.cpSync(shards, copy, { recursive: true });
    const shard = path.join(copy, 'library', 'shard2.nt');
    fs.appendFileSync(shard, '<http://x/a> <http://x/b> <http://x/c> .\n');
    await expect(serve({ shards: copy, workers: 2, writeFiles: false })).rejects.toThrow(
      /library\/shard2\.nt: shard file differs from the one the build wrote \(sha256 [0-9a-f]{12}…, manifest [0-9a-f]{12}…\)/,
    );
    fs.writeFileSync(shard, fs.readFileSync(path.join(shards, 'library', 'shard2.nt')));
    const s = await serve({ shards: copy, workers: 2, writeFiles: false });
    try {
      expect(await countOf(await get(s.endpoint('library-shard4')!.url, COUNT))).toBe(40);
    } finally {
      await s.close();
    }
  });
  it('refuses a shard that is a FIFO or a folder before any loading (a loading thread reading a FIFO blocked serve for good, deaf to SIGTERM)', async () => {
    const copy = path.join(tmpDir('fkgqa-pool-fifo-'), 'shards');
    fs.cpSync(shards, copy, { recursive: true });
    const shard = path.join(copy, 'library', 'shard3.nt');
    fs.rmSync(shard);
    expect(spawnSync('mkfifo', [shard]).status).toBe(0);
    await expect(serve({ shards: copy, workers: 2, writeFiles: false })).rejects.toThrow(
      `${shard}: shard file listed in the manifest is not a regular file (a folder, FIFO or device): rebuild with fkgqa partition`,
    );
    fs.rmSync(shard);
    fs.mkdirSync(shard);
    const state = tmpDir('fkgqa-pool-fifo-state-');
    const cli = spawnSync(process.execPath, [path.join(ROOT, 'bin/fkgqa.js'), 'serve', '--shards', copy, '--port', '0', '--state', state], { encoding: 'utf8', timeout: 120_000 });
    expect([cli.status, cli.stderr]).toEqual([2, `fkgqa: error: ${shard}: shard file listed in the manifest is not a regular file (a folder, FIFO or device): rebuild with fkgqa partition\n`]);
    expect(fs.readdirSync(state)).toEqual([]);
  });

  it('stops on SIGTERM sent as it starts loading: exit 0 as its help says, lock removed (not 143 with serve.lock left behind)', async () => {
    const state = tmpDir('fkgqa-pool-sig-state-');
    const child = spawn(process.execPath, [path.join(ROOT, 'bin/fkgqa.js'), 'serve', '--shards', shards, '--port', '0', '--state', state, '--workers', '1'], { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    await new Promise<void>((resolve) => {
      child.stderr!.on('data', (d) => {
        err += String(d);
        if (/loading them into/.test(err)) resolve();
      });
    });
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(fs.readdirSync(state)).toEqual([]);
  });
});

describe("serve: the pool sends the queries of one turn in one message (the point query's path)", () => {
  /** The library shards of the demo build as pool endpoints. */
  const endpointsOf = (): PoolEndpoint[] => {
    const manifest = JSON.parse(fs.readFileSync(path.join(shards, 'library', 'manifest.json'), 'utf8')) as { shards: { endpoint: string; file: string; triples: number }[] };
    return manifest.shards.map((sh) => ({ id: sh.endpoint, sources: [{ file: path.join(shards, 'library', sh.file), format: MEDIA.ntriples }], triples: sh.triples }));
  };
  const task = (endpoint: string, query: string) => ({ endpoint, query, accept: MEDIA.json, protocolDataset: false });
  const count = (o: PoolOutcome) => {
    if (o.status !== 'ok') throw new Error(`expected an answer, got ${JSON.stringify(o)}`);
    return Number((JSON.parse(String(o.answer.body)) as { results: { bindings: { n: { value: string } }[] } }).results.bindings[0].n.value);
  };

  it("answers four queries posted in one turn from one message, each with its own endpoint's count, as text", async () => {
    // No slow-query takeover (slowMs 10 min): at load ~20 a fresh worker's first COUNT can take over 1 s, and the takeover re-sent the three behind it.
    const pool = await EndpointPool.start(endpointsOf(), { workers: 1, slowMs: 600_000 });
    try {
      const before = { ...pool.sent };
      const ids = ['library-shard1', 'library-shard4', 'library-shard1', 'library-shard4'];
      const outcomes = await Promise.all(ids.map((id) => pool.run(id, task(id, COUNT), { limitMs: 60_000 })));
      expect(outcomes.map(count)).toEqual([35, 40, 35, 40]);
      expect(outcomes.every((o) => o.status === 'ok' && typeof o.answer.body === 'string')).toBe(true);
      // PIPELINE (4) queries posted in one turn: one message, not four.
      expect({ queries: pool.sent.queries - before.queries, messages: pool.sent.messages - before.messages }).toEqual({ queries: 4, messages: 1 });
      // One turn later, a fifth query is a message of its own.
      expect(count(await pool.run('library-shard1', task('library-shard1', COUNT), { limitMs: 60_000 }))).toBe(35);
      expect(pool.sent.messages - before.messages).toBe(2);
    } finally {
      await pool.close();
    }
  });

  it('skips a query withdrawn in the turn it was posted (its client went away before the message left): cancelled, no worker replaced, the others answered', async () => {
    const pool = await EndpointPool.start(endpointsOf(), { workers: 1 });
    try {
      const gone = new ClientGone();
      const runs = [
        pool.run('library-shard1', task('library-shard1', COUNT), { limitMs: 60_000 }),
        pool.run('library-shard4', task('library-shard4', COUNT), { limitMs: 60_000, signal: gone }),
        pool.run('library-shard4', task('library-shard4', COUNT), { limitMs: 60_000 }),
      ];
      gone.abort();
      const [a, b, c] = await Promise.all(runs);
      expect(b.status).toBe('cancelled');
      expect([count(a), count(c)]).toEqual([35, 40]);
      expect(pool.restartsOf('library-shard4')).toEqual({ restarts: 0, faults: 0 });
    } finally {
      await pool.close();
    }
  });

  it('arms one timer per worker for a stream of queries (not two per query), and re-arms it for a shorter limit', async () => {
    const pool = await EndpointPool.start(endpointsOf(), { workers: 1, slowMs: 60_000 });
    try {
      const before = pool.timersArmed;
      for (let i = 0; i < 50; i++) expect(count(await pool.run('library-shard1', task('library-shard1', COUNT), { limitMs: 120_000 }))).toBe(35);
      // The first query set the worker's timer (due at its start + slowMs); the 49 after it end earlier.
      expect(pool.timersArmed - before).toBe(1);
      // A request limit of 500 ms, due long before that timer: it is set anew and stops the query at 500 ms, not at 60 s.
      const o = await pool.run('library-shard1', task('library-shard1', HEAVY), { limitMs: 120_000, requestLimitMs: 500 });
      expect(o).toMatchObject({ status: 'timeout', by: 'request', limitMs: 500 });
      expect(o.ms).toBeGreaterThanOrEqual(499);
      expect(pool.restartsOf('library-shard1')).toEqual({ restarts: 1, faults: 0 });
      // The fresh worker answers, under the endpoint's own limit again.
      expect(count(await pool.run('library-shard1', task('library-shard1', COUNT), { limitMs: 120_000 }))).toBe(35);
    } finally {
      await pool.close();
    }
  });

  it('ClientGone runs its listeners once, not a removed one, and its AbortSignal follows it', () => {
    const gone = new ClientGone();
    const calls: string[] = [];
    const removed = () => calls.push('removed');
    gone.addEventListener('abort', () => calls.push('a'));
    gone.addEventListener('abort', removed);
    gone.removeEventListener('abort', removed);
    const signal = gone.signal();
    expect([gone.aborted, signal.aborted]).toEqual([false, false]);
    gone.abort();
    gone.abort();
    expect(calls).toEqual(['a']);
    expect([gone.aborted, signal.aborted]).toEqual([true, true]);
    expect(new ClientGone().signal().aborted).toBe(false);
  });
});

describe('serve: the slow-query takeover survives a slow timer that fires early (Node timers may, under load)', () => {
  const endpointsOf = (): PoolEndpoint[] => {
    const manifest = JSON.parse(fs.readFileSync(path.join(shards, 'library', 'manifest.json'), 'utf8')) as { shards: { endpoint: string; file: string; triples: number }[] };
    return manifest.shards.map((sh) => ({ id: sh.endpoint, sources: [{ file: path.join(shards, 'library', sh.file), format: MEDIA.ntriples }], triples: sh.triples }));
  };
  const task = (endpoint: string, query: string) => ({ endpoint, query, accept: MEDIA.json, protocolDataset: false });

  it('a slow timer that fires before performance.now() says slowMs passed is armed again: the COUNT behind the heavy query answers from a fresh worker', async () => {
    // Node's timers count whole milliseconds, so the pool's slow timer can fire up to 1 ms before
    // performance.now() says slowMs have passed; checkSlow then found the query not slow yet and
    // returned, leaving no timer: the COUNT waited for the heavy query's time limit (120 s in CI).
    // Here the worker's timer armed for the slow check (slowMs 1234 after the start: a delay in
    // (1229, 1234] ms, which nothing else uses) fires 600 ms early, every time.
    const slowMs = 1234;
    const real = globalThis.setTimeout;
    const early = ((fn: () => void, ms?: number, ...rest: unknown[]) => real(fn, ms !== undefined && ms > slowMs - 5 && ms <= slowMs ? ms - 600 : ms, ...rest)) as typeof setTimeout;
    const pool = await EndpointPool.start(endpointsOf(), { workers: 1, slowMs });
    globalThis.setTimeout = early;
    try {
      let heavyOutcome: PoolOutcome | undefined;
      const heavyRun = pool.run('library-shard1', task('library-shard1', HEAVY), { limitMs: 30_000 }).then((o) => (heavyOutcome = o));
      const count = await pool.run('library-shard2', task('library-shard2', COUNT), { limitMs: 30_000 });
      expect(count.status === 'ok' && JSON.parse(String(count.answer.body)).results.bindings[0].n.value).toBe('8');
      // The heavy query runs on in its retired worker; it was not stopped at its limit first.
      expect(heavyOutcome).toBeUndefined();
      expect(pool.workers.retired).toBe(1);
      expect(pool.running()).toEqual(['library-shard1']);
      globalThis.setTimeout = real;
      await pool.close();
      expect(await heavyRun).toMatchObject({ status: 'error', error: 'the server is stopping' });
    } finally {
      globalThis.setTimeout = real;
      await pool.close();
    }
  });
});
