// @module-tag split-tiers (tests/tiers.ts: the tests tagged slow run in npm run test:slow)
import { getEventListeners } from 'node:events';
import fs from 'node:fs';
import http from 'node:http';
import zlib from 'node:zlib';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openBuild } from '../src/build/open.js';
import { BoundedSparqlClient } from '../src/federation/client.js';
import { fetchVia, RedirectRefused, send } from '../src/common/http-client.js';
import { openRegistry, readEndpointsFile, registryFromUrls, type EndpointRegistry } from '../src/federation/registry.js';
import { planQuery } from '../src/federation/routing.js';
import { createMcpServer } from '../src/mcp/server.js';
import { serve, type ShardServer } from '../src/serve/server.js';
import { demoBuild, serveProcess, tmpDir } from './helpers.js';
import { goldThroughEngine, itNamesNonSparqlEndpoint, listener, nonSparqlEndpoints } from './federation-fixture.js';

/**
 * The federation layer (src/federation/): one registry over the endpoints files of several serves,
 * routing, the engines behind one interface (each engine's own cases: tests/engines.slow.test.ts), and
 * the bounded client that never leaves the registry.
 */
let shards: string;
let digest: string;

beforeAll(async () => {
  // With the gold answers fkgqa stats stored for the shared demo build (tests/global-setup.ts).
  shards = await demoBuild(tmpDir('fkgqa-fed-'), { gold: true });
  digest = openBuild(shards, { checkShards: false }).build.outputDigest;
});

describe('federation / one registry over two fkgqa serve processes', () => {
  let a: Awaited<ReturnType<typeof serveProcess>>;
  let b: Awaited<ReturnType<typeof serveProcess>>;
  let stateA: string;
  let stateB: string;
  beforeAll(async () => {
    stateA = tmpDir('fkgqa-fed-a-');
    stateB = tmpDir('fkgqa-fed-b-');
    [a, b] = await Promise.all([
      serveProcess(['--shards', shards, '--kg', 'library', '--state', stateA, '--port', '0']),
      serveProcess(['--shards', shards, '--kg', 'observatory', '--state', stateB, '--port', '0']),
    ]);
  });
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
  });

  it('reads both endpoints files into one registry, each file checked (shape, build, serve alive)', () => {
    const files = [path.join(stateA, 'endpoints.json'), path.join(stateB, 'endpoints.json')];
    const r = openRegistry({ endpointsFiles: files, build: shards });
    expect(r.endpoints.map((e) => e.id)).toEqual([
      'library-shard1',
      'library-shard2',
      'library-shard3',
      'library-shard4',
      'observatory-shard1',
      'observatory-shard2',
      'observatory-shard3',
      'observatory-shard4',
    ]);
    expect(r.source).toBe(`serve:${files[0]} + serve:${files[1]}`);
    expect(r.endpointsFiles).toEqual(files);
    // Two hosts: the library endpoints are on one port, the observatory endpoints on another.
    expect(new Set(r.endpoints.map((e) => new URL(e.url).port)).size).toBe(2);
    expect(a.endpoints.map((l) => l.split('\t')[0])).toEqual(r.endpoints.filter((e) => e.graph === 'library').map((e) => e.id));
    const file = readEndpointsFile(files[0], { build: shards });
    expect(file.outputDigest).toBe(digest);
    expect(file.hostname).toBeTypeOf('string');
    // The same build elsewhere (a copy) is the same build: its digest matches.
    const copy = path.join(tmpDir(), 'copy');
    fs.cpSync(shards, copy, { recursive: true });
    expect(openRegistry({ endpointsFiles: files, build: copy }).endpoints).toHaveLength(8);
  });

  it('refuses an endpoints file of another build, a stale one, and two names for one endpoint', () => {
    const other = path.join(tmpDir('fkgqa-fed-other-'), 'endpoints.json');
    const f = JSON.parse(fs.readFileSync(path.join(stateA, 'endpoints.json'), 'utf8'));
    fs.writeFileSync(other, JSON.stringify({ ...f, outputDigest: '0'.repeat(64) }));
    // Its serve's build folder is this one, built again since: both digests named, and what to do.
    expect(() => openRegistry({ endpointsFiles: [other], build: shards })).toThrow(
      `${other}: the endpoints serve another build (output digest 0000000000000000), not the build asked for (output digest ${digest.slice(0, 16)}) (${path.resolve(shards)} was built again since serve started: restart serve)`,
    );
    fs.writeFileSync(other, JSON.stringify({ ...f, pid: 2 ** 22 + 7, procStart: 1 }));
    expect(() => openRegistry({ endpointsFiles: [other] })).toThrow(`stale: the fkgqa serve that wrote it (pid ${2 ** 22 + 7}) is no longer running`);
    // A file from another host: its pid cannot be checked here, so it is not called stale.
    fs.writeFileSync(other, JSON.stringify({ ...f, pid: 2 ** 22 + 7, procStart: 1, hostname: 'elsewhere.example' }));
    expect(openRegistry({ endpointsFiles: [other] }).endpoints).toHaveLength(4);
    fs.writeFileSync(other, JSON.stringify({ ...f, endpoints: f.endpoints.map((e: { url: string }) => ({ ...e, url: e.url.replace('/sparql', '/x/sparql') })) }));
    expect(() => openRegistry({ endpointsFiles: [path.join(stateA, 'endpoints.json'), other] })).toThrow(/two endpoints are named library-shard1/);
  });

  // The first gold query of each graph through comunica; every gold query through every engine (a long
  // federation run: 14 queries x 3 engines, 40 s of wall per engine at load 15), and the first through
  // the other engines, are in tests/federation.slow.test.ts (`npm run test:slow`).
  it('answers the first gold query of each graph through routing and the comunica engine as gold does, and one query over both hosts', { tags: ['slow'] }, async () => {
    await goldThroughEngine({ shards, digest, endpointsFiles: [path.join(stateA, 'endpoints.json'), path.join(stateB, 'endpoints.json')], engine: 'comunica', perGraph: 1 });
  });
});

describe('federation / no redirect leaves the registry', () => {
  let server: ShardServer;
  let trap: Awaited<ReturnType<typeof listener>>;
  let redirector: Awaited<ReturnType<typeof listener>>;
  let registry: EndpointRegistry;
  beforeAll(async () => {
    server = await serve({ shards, kgs: ['library'], writeFiles: false });
    trap = await listener((_req, res) =>
      res.writeHead(200, { 'content-type': 'application/sparql-results+json' }).end('{"head":{"vars":["x"]},"results":{"bindings":[{"x":{"type":"literal","value":"from the trap"}}]}}'),
    );
    // A registered endpoint that answers every request (queries, its service description, its VoID) with a redirect to the trap.
    redirector = await listener((req, res) => res.writeHead(req.method === 'POST' ? 307 : 302, { location: `${trap.url}${req.url}` }).end());
    registry = registryFromUrls([`${redirector.url}/r/sparql`, server.endpoint('library-shard1')!.url]);
  });
  afterAll(async () => {
    await server?.close();
    await trap?.close();
    await redirector?.close();
  });

  it('run_sparql_query (direct and through the engine) and get_void_descriptions: the unregistered listener gets 0 requests, the agent a clear error', async () => {
    const mcp = await createMcpServer({ registry, setup: 'void_tool', callLog: null, state: null, limits: { voidStepTimeoutMs: 20_000 } });
    const [x, y] = InMemoryTransport.createLinkedPair();
    await mcp.server.connect(x);
    const client = new Client({ name: 'test', version: '1' });
    await client.connect(y);
    const call = async (name: string, args: Record<string, unknown>) => {
      const r = (await client.callTool({ name, arguments: args })) as { content: { text: string }[]; isError?: boolean };
      return { text: r.content[0].text, isError: !!r.isError };
    };
    try {
      const r = `${redirector.url}/r/sparql`;
      const direct = await call('run_sparql_query', { query: `SELECT * { SERVICE <${r}> { ?s ?p ?o } }` });
      expect(direct.isError).toBe(true);
      expect(direct.text).toBe(
        `Error (redirect): the endpoint ${r} failed: ${r} answered HTTP 307 with a redirect to ${trap.url}/r/sparql: not followed, ${trap.url}/r/sparql is not a registered endpoint; nothing was sent there. fkgqa follows no redirect out of the registry: name the endpoint's final URL in SERVICE if it is registered`,
      );
      const fed = await call('run_sparql_query', { query: `SELECT * { SERVICE <${r}> { ?s ?p ?o } SERVICE <${server.endpoint('library-shard1')!.url}> { ?s ?p ?o } }`, timeout_ms: 60_000 });
      expect(fed.isError).toBe(true);
      expect(fed.text).toContain(
        `failed: ${r}?… answered HTTP 302 with a redirect to ${trap.url}/r/sparql?…: not followed, ${trap.url}/r/sparql?… is not a registered endpoint; nothing was sent there`,
      );
      expect(fed.text).toMatch(/^Error \(redirect\): the federation engine \(SERVICE </);
      const v = await call('get_void_descriptions', { endpoint: r });
      expect(v.isError).toBe(true);
      expect(v.text).toContain(`# VoID of <${r}>: not found`);
      expect(v.text).toContain(
        `well-known: ${redirector.url}/r/.well-known/void answered HTTP 302 with a redirect to ${trap.url}/r/.well-known/void: not followed, ${trap.url}/r/.well-known/void is not a registered endpoint`,
      );
      expect(mcp.callLog.entries.map((e) => e.errorClass)).toEqual(['redirect', 'redirect', 'no-void']);
      expect(trap.requests).toEqual([]);
      expect(redirector.requests.length).toBeGreaterThanOrEqual(3);
    } finally {
      await client.close();
      await mcp.close();
    }
  });

  it('send follows a document redirect only to an allowed host, and never re-sends a query', async () => {
    const onRedirector = (u: string) => u.startsWith(redirector.url) || u.startsWith(`${server.endpoint('library-shard1')!.url.replace(/\/[^/]*\/sparql$/, '')}`);
    await expect(send({ url: `${redirector.url}/doc` }, { allowed: onRedirector, followRedirects: true })).rejects.toBeInstanceOf(RedirectRefused);
    await expect(send({ url: `${redirector.url}/q`, method: 'POST', body: 'query=ASK{}' }, { allowed: () => true, followRedirects: true })).rejects.toThrow(
      /answered HTTP 307 .*not followed, a query goes only to the endpoint named in its SERVICE clause/,
    );
    await expect(send({ url: `${trap.url}/x` }, { allowed: onRedirector })).rejects.toThrow(`refused to contact ${trap.url}/x: not a registered endpoint`);
    expect(trap.requests).toEqual([]);
  });
});

describe('federation / an endpoint that answers no SPARQL result inside a multi-SERVICE query is named, with what it answered', () => {
  const f = nonSparqlEndpoints(() => shards);
  // The same case through the other engines: tests/federation.slow.test.ts.
  itNamesNonSparqlEndpoint('comunica', f);

  it('a time limit that is no whole number of ms, or leaves less than the 5 s probe wait, still names the endpoint (no internal error "delay out of range" from the timers)', async () => {
    const shard1 = f.server().endpoint('library-shard1')!.url;
    const p = `${f.page().url}/p/sparql`;
    const client = new BoundedSparqlClient(registryFromUrls([p, shard1]));
    try {
      // The lone-endpoint path with a fractional limit.
      const ask = await client.direct(shard1, 'ASK {}', 'application/sparql-results+json', 1994.3197);
      expect([ask.status, ask.status === 'ok' && ask.body.includes('true')]).toEqual(['ok', true]);
      // The engine path: the probe after the engine's error gets the time left (fractional, < 5,000 ms).
      // 4,500 ms leaves the probe less than its 5 s; at load 20 the engine may take all of it (timeout), never an internal error.
      const o = await client.federated(`SELECT * { SERVICE <${shard1}> { ?b ?p ?o } SERVICE <${p}> { ?b ?q ?t } }`, 'application/sparql-results+json', { ms: 4_500.5, from: 'call' });
      expect(o.status === 'ok').toBe(false);
      if (o.status === 'error') expect(o.error).toContain(`the endpoint ${p} answered HTTP 200 with content type text/html`);
      else expect(o.status).toBe('timeout');
    } finally {
      await client.close();
    }
  }, 120_000);
});

describe('federation / send: the query to one endpoint (node:http, keep-alive)', () => {
  let ep: { url: string; connections: number; requests: string[]; close(): Promise<void> };
  beforeAll(async () => {
    const requests: string[] = [];
    // Requests so far on each connection (of one path: the client's agent keeps connections per host).
    const perSocket = new Map<string, WeakMap<object, number>>();
    const s = http.createServer((req, res) => {
      const m = perSocket.get(req.url!) ?? new WeakMap<object, number>();
      perSocket.set(req.url!, m);
      const n = (m.get(req.socket) ?? 0) + 1;
      m.set(req.socket, n);
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        requests.push(`${req.url} ${body}`);
        // /drop: the second request on a connection finds it closed (as when an endpoint closes an idle connection while it is reused).
        if (req.url === '/drop/sparql' && n === 2) return void req.socket.destroy();
        if (req.url === '/silent/sparql') return; // never answers
        if (req.url === '/big/sparql') return void res.writeHead(200, { 'content-type': 'text/plain' }).end('x'.repeat(100_000));
        res
          .writeHead(200, { 'content-type': 'application/sparql-results+json; charset=utf-8', 'fkgqa-stopped': 'no' })
          .end(`{"head":{},"boolean":true,"n":${n},"body":${JSON.stringify(body)},"ct":${JSON.stringify(req.headers['content-length'])}}`);
      });
    });
    let connections = 0;
    s.on('connection', () => connections++);
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
    ep = {
      url: `http://127.0.0.1:${(s.address() as AddressInfo).port}`,
      get connections() {
        return connections;
      },
      requests,
      close: () => new Promise<void>((r) => (s.close(() => r()), s.closeAllConnections())),
    };
  });
  afterAll(() => ep?.close());
  const all = { allowed: () => true };

  it('reuses one connection for successive queries of the bounded client, and answers as fetch did (status, headers, UTF-8 body)', async () => {
    const before = ep.connections;
    const client = new BoundedSparqlClient(registryFromUrls([`${ep.url}/a/sparql`]));
    const outs = [];
    for (let i = 0; i < 3; i++) outs.push(await client.direct(`${ep.url}/a/sparql`, `ASK { <urn:é${i}> ?p ?o }`, 'application/sparql-results+json', 30_000));
    expect(outs.map((o) => o.status === 'ok' && [o.contentType, JSON.parse(o.body).n])).toEqual([
      ['application/sparql-results+json', 1],
      ['application/sparql-results+json', 2],
      ['application/sparql-results+json', 3],
    ]);
    const first = outs[0].status === 'ok' ? JSON.parse(outs[0].body) : null;
    expect(first.body).toBe(new URLSearchParams({ query: 'ASK { <urn:é0> ?p ?o }' }).toString());
    expect(first.ct).toBe(String(Buffer.byteLength(first.body)));
    expect(ep.connections - before).toBe(1);
    expect(client.requests).toEqual({ [`${ep.url}/a/sparql`]: 3 });
  });

  it('sends a query to another spelling of a registered url to the registered url, counted under it', async () => {
    const registered = `${ep.url}/spelled/sparql`;
    const client = new BoundedSparqlClient(registryFromUrls([registered]));
    const spelled = `${ep.url.replace('127.0.0.1', 'localhost')}/./spelled/x/../sparql/`;
    const o = await client.direct(spelled, 'ASK {}', 'application/sparql-results+json', 30_000);
    expect([o.status, client.requests, o.requests]).toEqual(['ok', { [registered]: 1 }, { [registered]: 1 }]);
    expect(ep.requests.filter((r) => r.startsWith('/spelled/'))).toEqual([`/spelled/sparql ${new URLSearchParams({ query: 'ASK {}' }).toString()}`]);
  });

  it('sends a query again on a new connection when the reused one was closed before any answer, counting it once', async () => {
    const counted: string[] = [];
    const bounds = { allowed: () => true, count: (e: string) => counted.push(e) };
    const a = await send({ url: `${ep.url}/drop/sparql`, method: 'POST', body: 'query=1', signal: AbortSignal.timeout(60_000) }, { ...bounds, maxBytes: 1 << 20 });
    const b = await send({ url: `${ep.url}/drop/sparql`, method: 'POST', body: 'query=2', signal: AbortSignal.timeout(60_000) }, { ...bounds, maxBytes: 1 << 20 });
    expect([a.status, JSON.parse(a.text!).n, b.status, JSON.parse(b.text!).n]).toEqual([200, 1, 200, 1]);
    expect(ep.requests.filter((r) => r.startsWith('/drop/'))).toEqual(['/drop/sparql query=1', '/drop/sparql query=2', '/drop/sparql query=2']);
    expect(counted).toEqual([`${ep.url}/drop/sparql`, `${ep.url}/drop/sparql`]);
  });

  it('reads at most maxBytes of an answer, stops at the signal, words a refused connection as fetch did, and refuses a URL outside the registry unsent', async () => {
    const big = await send({ url: `${ep.url}/big/sparql`, method: 'POST', body: 'query=x', signal: AbortSignal.timeout(60_000) }, { ...all, maxBytes: 1000 });
    expect([big.status, big.text]).toEqual([200, undefined]);
    const ok = await send({ url: `${ep.url}/big/sparql`, method: 'POST', body: 'query=x', signal: AbortSignal.timeout(60_000) }, { ...all, maxBytes: 100_000 });
    expect(ok.text!.length).toBe(100_000);
    const stop = new AbortController();
    const silent = send({ url: `${ep.url}/silent/sparql`, method: 'POST', body: 'query=x', signal: stop.signal }, { ...all, maxBytes: 1000 });
    // Aborted once the endpoint has the request (an event, not a time budget).
    await expect.poll(() => ep.requests.includes('/silent/sparql query=x'), { timeout: 60_000 }).toBe(true);
    stop.abort();
    await expect(silent).rejects.toMatchObject({ name: 'AbortError' });
    const dead = await listener(() => {});
    await dead.close();
    const e = await send({ url: `${dead.url}/x/sparql`, method: 'POST', body: 'query=x', signal: AbortSignal.timeout(60_000) }, { ...all, maxBytes: 1000 }).catch((err: Error) => err);
    expect([(e as Error).name, (e as Error).message, ((e as Error).cause as Error).message]).toEqual(['TypeError', 'fetch failed', `connect ECONNREFUSED ${dead.url.slice('http://'.length)}`]);
    // A port fetch refuses (a "bad port" of the Fetch standard) is refused alike, so both routes reach the same endpoints.
    const bad = await send({ url: 'http://127.0.0.1:6000/x/sparql', method: 'POST', body: 'query=x', signal: AbortSignal.timeout(60_000) }, { ...all, maxBytes: 1000 }).catch((err: Error) => err);
    expect([(bad as Error).message, ((bad as Error).cause as Error).message]).toEqual(['fetch failed', 'bad port']);
    await expect(send({ url: `${ep.url}/a/sparql`, method: 'POST', body: 'query=x', signal: AbortSignal.timeout(60_000) }, { allowed: () => false, maxBytes: 1000 })).rejects.toThrow(
      `refused to contact ${ep.url}/a/sparql: not a registered endpoint`,
    );
  });

  it("send and fetchVia follow a document redirect to an allowed URL, count each hop, and decode a gzip answer; an unknown coding is the endpoint's fault", async () => {
    const to = await listener((req, res) => {
      if (req.url === '/br') return void res.writeHead(200, { 'content-encoding': 'br' }).end(zlib.brotliCompressSync('<a> <b> <c> .'));
      res.writeHead(200, { 'content-type': 'text/turtle', 'content-encoding': 'gzip' }).end(zlib.gzipSync(`<a> <b> "${req.headers['accept-encoding']}" .`));
    });
    const from = await listener((req, res) => res.writeHead(302, { location: `${to.url}${req.url}` }).end());
    try {
      const counted: string[] = [];
      const bounds = { allowed: () => true, count: (e: string) => counted.push(e), followRedirects: true };
      const a = await send({ url: `${from.url}/void` }, { ...bounds, maxBytes: 1000 });
      expect([a.status, a.url, a.header('content-type'), a.text, a.encodingProblem]).toEqual([200, `${to.url}/void`, 'text/turtle', '<a> <b> "identity" .', undefined]);
      expect(counted).toEqual([`${from.url}/void`, `${to.url}/void`]);
      const f = await fetchVia(bounds, 1000)(`${from.url}/void`);
      expect([f.status, f.url, await f.text()]).toEqual([200, `${to.url}/void`, '<a> <b> "identity" .']);
      const br = await send({ url: `${to.url}/br` }, { allowed: () => true, maxBytes: 1000 });
      expect([br.text, br.encodingProblem]).toEqual(['', 'sent an answer with Content-Encoding br, which is not decoded (br is none of gzip, x-gzip, deflate)']);
      // A redirect not allowed is refused before the target is contacted.
      const before = to.requests.length;
      await expect(send({ url: `${from.url}/void` }, { allowed: (u) => u.startsWith(from.url), followRedirects: true })).rejects.toBeInstanceOf(RedirectRefused);
      expect(to.requests.length).toBe(before);
    } finally {
      await from.close();
      await to.close();
    }
  });

  it('leaves no abort listener on a signal shared by many requests once each has settled; an aborted signal sends nothing', async () => {
    // send wires the abort itself (not through request's signal option, which costs CPU per request): each request removes its listener when it settles.
    const shared = new AbortController();
    const results: unknown[] = [];
    for (const p of ['/a/sparql', '/big/sparql', '/drop/sparql', '/drop/sparql', '/a/sparql']) {
      const r = await send({ url: `${ep.url}${p}`, method: 'POST', body: 'query=shared', signal: shared.signal }, { ...all, maxBytes: 1000 });
      results.push([r.status, r.text === undefined ? 'too large' : JSON.parse(r.text).boolean]);
    }
    const dead = await listener(() => {});
    await dead.close();
    results.push(await send({ url: `${dead.url}/x/sparql`, method: 'POST', body: 'query=shared', signal: shared.signal }, { ...all, maxBytes: 1000 }).catch((e: Error) => e.message));
    expect(results).toEqual([[200, true], [200, 'too large'], [200, true], [200, true], [200, true], 'fetch failed']);
    expect(getEventListeners(shared.signal, 'abort')).toHaveLength(0);
    const sent = ep.requests.length;
    const stop = new AbortController();
    stop.abort(new Error('the caller gave up'));
    const e = await send({ url: `${ep.url}/a/sparql`, method: 'POST', body: 'query=never', signal: stop.signal }, { ...all, maxBytes: 1000 }).catch((err: Error) => err);
    expect([(e as Error).name, ((e as Error).cause as Error).message]).toEqual(['AbortError', 'the caller gave up']);
    expect(ep.requests.length).toBe(sent);
  });
});

describe('federation / routing', () => {
  const reg = registryFromUrls(['http://127.0.0.1:9/library-shard1/sparql', 'http://127.0.0.1:9/library-shard2/sparql']);
  const hints = { maxQueryChars: 8000 };

  it('a lone SERVICE goes direct, several SERVICE clauses go to the engine', () => {
    const one = planQuery('SELECT * { SERVICE <http://127.0.0.1:9/library-shard1/sparql> { ?s ?p ?o } }', reg, hints);
    expect(one.ok && [one.route, one.query.replace(/\s+/g, ' ')]).toEqual(['direct', 'SELECT * WHERE { ?s ?p ?o. }']);
    const two = planQuery('SELECT * { SERVICE <http://127.0.0.1:9/library-shard1/sparql> { ?s ?p ?o } SERVICE <http://127.0.0.1:9/library-shard2/sparql> { ?o ?q ?x } }', reg, hints);
    expect(two.ok && [two.route, two.targets.map((t) => t.id)]).toEqual(['federation', ['library-shard1', 'library-shard2']]);
  });

  it("a SERVICE inside a SERVICE is refused before sending (the agent's query, not an endpoint failure: the shard would answer 501)", () => {
    const s1 = 'http://127.0.0.1:9/library-shard1/sparql';
    const s2 = 'http://127.0.0.1:9/library-shard2/sparql';
    for (const q of [`SELECT * { SERVICE <${s1}> { SELECT * { SERVICE <${s2}> { ?s ?p ?o } } } }`, `SELECT * { SERVICE <${s1}> { ?s ?p ?o FILTER EXISTS { SERVICE <${s2}> { ?s ?q ?x } } } }`]) {
      const p = planQuery(q, reg, hints);
      expect(!p.ok && [p.errorClass, p.message]).toEqual([
        'nested-service',
        `SERVICE <${s2}> is inside SERVICE <${s1}>: an endpoint does not evaluate SERVICE, so nothing was sent; put the SERVICE clauses side by side, SERVICE <A> { … } SERVICE <B> { … }, and the federation engine joins them`,
      ]);
    }
    // Side by side, and inside FILTER EXISTS outside the SERVICE clauses, they are routed as before.
    const side = planQuery(`SELECT * { SERVICE <${s1}> { ?s ?p ?o } FILTER EXISTS { SERVICE <${s2}> { ?s ?q ?x } } }`, reg, hints);
    expect(side.ok && side.route).toBe('federation');
  });

  it('a triple pattern outside every SERVICE is refused, naming the pattern and the fix', () => {
    const p = planQuery('SELECT * { SERVICE <http://127.0.0.1:9/library-shard1/sparql> { ?s ?p ?o } ?o <http://valuenet/ontop/book#title> ?t }', reg, hints);
    expect(p.ok).toBe(false);
    if (p.ok) return;
    expect(p.errorClass).toBe('outside-service');
    expect(p.message).toBe(
      'this triple pattern is outside every SERVICE clause, so no endpoint is named for it:\n  ?o <http://valuenet/ontop/book#title> ?t\n' +
        'wrap it in SERVICE <endpoint URL> { … } (the endpoint that holds its data; nothing was sent). Registered endpoints:\n' +
        '  http://127.0.0.1:9/library-shard1/sparql  (library-shard1)\n  http://127.0.0.1:9/library-shard2/sparql  (library-shard2)',
    );
    const inFilter = planQuery('SELECT * { SERVICE <http://127.0.0.1:9/library-shard1/sparql> { ?s ?p ?o } FILTER NOT EXISTS { ?s a ?c } OPTIONAL { ?s ?q ?x . ?x ?r ?y } }', reg, hints);
    expect(!inFilter.ok && inFilter.message.split('\n').slice(0, 4)).toEqual([
      'these 3 triple patterns are outside every SERVICE clause, so no endpoint is named for them:',
      '  ?s <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> ?c',
      '  ?s ?q ?x',
      '  ?x ?r ?y',
    ]);
  });
});
