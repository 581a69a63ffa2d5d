// @module-tag split-tiers (tests/tiers.ts: the tests tagged slow run in npm run test:slow)
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { serve, type ShardServer } from '../src/serve/server.js';
import { demoBuild, tmpDir } from './helpers.js';

const BOOK = 'http://valuenet/ontop/book';
const COUNT_BOOKS = `SELECT (COUNT(*) AS ?n) WHERE { ?b a <${BOOK}> }`;
const JSON_RESULTS = 'application/sparql-results+json';

let shards: string;
let server: ShardServer;
let url: string; // library-shard1's endpoint

/** A raw HTTP request (fetch cannot send some malformed requests, e.g. a POST without Content-Type). */
function raw(target: string, method: string, headers: Record<string, string | number>, body?: Buffer | string): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(target, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const get = (query: string, accept?: string, base = url) => fetch(`${base}?query=${encodeURIComponent(query)}`, { headers: accept ? { Accept: accept } : {} });
const rowsOf = async (r: Response) => ((await r.json()) as { results: { bindings: unknown[] } }).results.bindings.length;
const countOf = async (r: Response) => Number(((await r.json()) as { results: { bindings: { n: { value: string } }[] } }).results.bindings[0].n.value);

beforeAll(async () => {
  // A copy of the shared demo build (tests/global-setup.ts: default options, as partition made it here).
  shards = await demoBuild(tmpDir('fkgqa-serve-'));
  server = await serve({ shards, timeoutMs: 5_000, withOriginals: true, maxBodyBytes: 4096 });
  url = server.endpoint('library-shard1')!.url;
});

afterAll(async () => {
  await server?.close();
});

describe('fkgqa serve: endpoints', () => {
  it('serves every shard at <kg>-shard<N>/sparql on one loopback port, plus the unsharded graphs', () => {
    expect(server.endpoints.map((e) => e.id)).toEqual([
      'library-shard1',
      'library-shard2',
      'library-shard3',
      'library-shard4',
      'library',
      'observatory-shard1',
      'observatory-shard2',
      'observatory-shard3',
      'observatory-shard4',
      'observatory',
    ]);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/library-shard1\/sparql$/);
    expect(server.endpoint('library')!.triples).toBe(97);
    expect(server.endpoint('library-shard2')!.triples).toBe(8);
  });

  it('writes endpoints.json with id, graph, URL and profile into the state folder, and serves VoID and catalogue with the live URLs', async () => {
    expect(fs.existsSync(path.join(shards, 'endpoints.json'))).toBe(false);
    const file = JSON.parse(fs.readFileSync(path.join(`${shards}.state`, 'endpoints.json'), 'utf8'));
    expect(file.endpoints).toHaveLength(10);
    expect(file.pid).toBe(process.pid);
    expect(file.endpoints[0]).toMatchObject({ id: 'library-shard1', graph: 'library', role: 'shard', shard: 'shard1', url, profile: null });
    expect(file.endpoints[0].void).toBe(url.replace(/sparql$/, '.well-known/void'));
    expect(file.endpoints[4]).toMatchObject({ id: 'library', role: 'original', void: null });
    const base = new URL(url).origin;
    const cat = (await (await fetch(`${base}/catalogue.json`)).json()) as { shards: { endpoint: string; url: string | null }[] };
    const entry = (id: string) => cat.shards.find((e) => e.endpoint === id)!;
    expect(entry('library-shard1').url).toBe(url);
    expect(entry('observatory-shard4').url).toBe(server.endpoint('observatory-shard4')!.url);
    expect(await (await fetch(`${base}/.well-known/void`)).text()).toContain(`void:sparqlEndpoint <${url}>`);
    expect(await (await fetch(url.replace(/sparql$/, '.well-known/void'))).text()).toContain(`void:sparqlEndpoint <${url}>`);
    // The build's own files keep no URL.
    expect(fs.readFileSync(path.join(shards, 'library', 'shard1_void.ttl'), 'utf8')).not.toContain('void:sparqlEndpoint');
    expect(JSON.parse(fs.readFileSync(path.join(shards, 'catalogue.json'), 'utf8')).shards[0].url).toBeNull();
  });

  it('answers each shard from its own data: counts of books add up to the unsharded graph', async () => {
    const counts = await Promise.all(['library-shard1', 'library-shard2', 'library-shard3', 'library-shard4'].map(async (id) => countOf(await get(COUNT_BOOKS, undefined, server.endpoint(id)!.url))));
    const total = await countOf(await get(COUNT_BOOKS, undefined, server.endpoint('library')!.url));
    expect(total).toBe(8);
    expect(counts.reduce((a, b) => a + b, 0)).toBe(8);
  });
});

describe('fkgqa serve: SPARQL 1.1 Protocol query operation (W3C protocol tests, query part)', () => {
  const select = 'SELECT ?s ?p ?o WHERE { ?s ?p ?o } LIMIT 3';
  it('query_get: GET ?query= answers 200 with JSON results by default', async () => {
    const r = await get(select);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe(JSON_RESULTS);
    expect(await rowsOf(r)).toBe(3);
  });
  it('query_post_form: POST application/x-www-form-urlencoded', async () => {
    const r = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ query: select }).toString() });
    expect(r.status).toBe(200);
    expect(await rowsOf(r)).toBe(3);
  });
  it('query_post_direct: POST application/sparql-query', async () => {
    const r = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/sparql-query; charset=UTF-8' }, body: select });
    expect(r.status).toBe(200);
    expect(await rowsOf(r)).toBe(3);
  });
  it('query_content_type_select: XML, JSON, CSV and TSV by Accept', async () => {
    const xml = await get(select, 'application/sparql-results+xml');
    expect(xml.headers.get('content-type')).toBe('application/sparql-results+xml');
    expect((await xml.text()).match(/<result>/g)).toHaveLength(3);
    const csv = await get(select, 'text/csv');
    expect(csv.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect((await csv.text()).trim().split('\r\n')).toHaveLength(4);
    const tsv = await get(select, 'text/tab-separated-values');
    expect(tsv.headers.get('content-type')).toBe('text/tab-separated-values; charset=utf-8');
    expect((await tsv.text()).split('\n')[0]).toBe('?s\t?p\t?o');
    const q = await get(select, 'text/csv;q=0.5, application/sparql-results+xml;q=0.9');
    expect(q.headers.get('content-type')).toBe('application/sparql-results+xml');
  });
  it('query_content_type_ask: JSON or XML; ASK as CSV or TSV is 406', async () => {
    const ask = 'ASK { ?s ?p ?o }';
    const json = await get(ask);
    expect(json.headers.get('content-type')).toBe(JSON_RESULTS);
    expect(((await json.json()) as { boolean: boolean }).boolean).toBe(true);
    const xml = await get(ask, 'application/sparql-results+xml');
    expect(await xml.text()).toContain('<boolean>true</boolean>');
    expect((await get(ask, 'text/csv')).status).toBe(406);
    const tsv = await get(ask, 'text/tab-separated-values');
    expect(tsv.status).toBe(406);
    expect(await tsv.text()).toContain('application/sparql-results+json');
  });
  it('query_content_type_construct / describe: Turtle and N-Triples', async () => {
    const construct = 'CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }';
    const ttl = await get(construct, 'text/turtle');
    expect(ttl.headers.get('content-type')).toBe('text/turtle; charset=utf-8');
    const nt = await get(construct, 'application/n-triples');
    expect(nt.headers.get('content-type')).toBe('application/n-triples');
    expect((await nt.text()).trim().split('\n')).toHaveLength(35);
    const describe = await get('DESCRIBE <http://valuenet/ontop/author/author_id=1>', 'application/n-triples');
    expect(describe.status).toBe(200);
    expect((await describe.text()).trim().split('\n').length).toBeGreaterThanOrEqual(3);
    expect((await get(construct)).headers.get('content-type')).toBe('text/turtle; charset=utf-8');
    expect((await get(construct, 'application/sparql-results+json')).status).toBe(406);
  });
  it('bad_query_method: PUT is 405 with Allow', async () => {
    const r = await fetch(url, { method: 'PUT', body: select });
    expect(r.status).toBe(405);
    expect(r.headers.get('allow')).toBe('GET, POST, OPTIONS');
  });
  it('bad_multiple_queries: two query parameters are 400', async () => {
    const r = await fetch(`${url}?query=${encodeURIComponent(select)}&query=${encodeURIComponent('ASK {}')}`);
    expect(r.status).toBe(400);
    expect(await r.text()).toContain('2 query parameters');
  });
  it('bad_query_wrong_media_type: a form body sent as text/plain is 415', async () => {
    const r = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'text/plain' }, body: new URLSearchParams({ query: select }).toString() });
    expect(r.status).toBe(415);
  });
  it('bad_query_missing_form_type and bad_query_missing_direct_type: POST without Content-Type is 400', async () => {
    const form = await raw(url, 'POST', {}, new URLSearchParams({ query: select }).toString());
    expect(form.status).toBe(400);
    expect(form.body).toContain('Content-Type');
    const direct = await raw(url, 'POST', {}, select);
    expect(direct.status).toBe(400);
  });
  it('bad_query_non_utf8: a UTF-16 body is refused (415 for its charset, 400 for its bytes)', async () => {
    const utf16 = Buffer.from(`\ufeff${select}`, 'utf16le');
    expect((await raw(url, 'POST', { 'Content-Type': 'application/sparql-query; charset=UTF-16' }, utf16)).status).toBe(415);
    expect((await raw(url, 'POST', { 'Content-Type': 'application/sparql-query' }, Buffer.from([0x53, 0xff, 0xfe, 0x45]))).status).toBe(400);
  });
  it('bad_query_syntax: a malformed query is 400 with the parser message', async () => {
    // A plain query is parsed by oxigraph only (quickInspect); when oxigraph refuses it, sparqljs
    // words the error (token and line, an undeclared prefix named); one with an aggregate goes to sparqljs first.
    const r = await get('SELECT * WHERE { ?s ?p }');
    expect(r.status).toBe(400);
    expect(await r.text()).toMatch(/^malformed query: Parse error on line 1/);
    const prefix = await get('SELECT * WHERE { ?s foo:bar ?o }');
    expect(prefix.status).toBe(400);
    expect(await prefix.text()).toBe('malformed query: undeclared prefix "foo:": declare it in the query: PREFIX foo: <iri>\n');
    const agg = await get('SELECT (COUNT(*) AS ?n) WHERE { ?s ?p }');
    expect(agg.status).toBe(400);
    expect(await agg.text()).toContain('Parse error on line 1');
  });
  it('blank nodes in VALUES are 400 (a blank node cannot name a node of another endpoint)', async () => {
    expect((await get('SELECT * WHERE { VALUES ?s { _:b } ?s ?p ?o }')).status).toBe(400);
  });
  it('read-only: an update is 403 whichever way it is sent', async () => {
    const direct = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/sparql-update' }, body: 'INSERT DATA { <urn:a> <urn:b> <urn:c> }' });
    expect(direct.status).toBe(403);
    expect(await direct.text()).toContain('read-only');
    const form = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: 'update=INSERT+DATA+%7B%7D' });
    expect(form.status).toBe(403);
    const asQuery = await get('INSERT DATA { <urn:a> <urn:b> <urn:c> }');
    expect(asQuery.status).toBe(403);
    expect(await countOf(await get('SELECT (COUNT(*) AS ?n) { ?s ?p ?o }'))).toBe(35);
  });
  it('protocol datasets and FROM are refused clearly (one default graph per endpoint)', async () => {
    const r = await fetch(`${url}?query=${encodeURIComponent(select)}&default-graph-uri=${encodeURIComponent('urn:g')}`);
    expect(r.status).toBe(400);
    expect(await r.text()).toContain('default-graph-uri');
    expect((await get('SELECT * FROM <urn:g> WHERE { ?s ?p ?o }')).status).toBe(400);
  });
  it('a body over --max-body is 413, and the endpoint still answers', async () => {
    const r = await raw(url, 'POST', { 'Content-Type': 'application/sparql-query' }, `${select} # ${'x'.repeat(5000)}`);
    expect(r.status).toBe(413);
    expect((await get(select)).status).toBe(200);
  });
  it('SERVICE is 501: the endpoints do not federate (oxigraph has no SERVICE)', async () => {
    const r = await get('SELECT * WHERE { SERVICE SILENT <http://127.0.0.1:1/sparql> { ?s ?p ?o } }');
    expect(r.status).toBe(501);
  });
  it('CORS: no origin is allowed by default (--cors-origin names them); OPTIONS is 204 with Allow', async () => {
    expect((await get(select)).headers.get('access-control-allow-origin')).toBeNull();
    const pre = await fetch(url, { method: 'OPTIONS', headers: { Origin: 'http://example.org', 'Access-Control-Request-Method': 'POST' } });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('allow')).toBe('GET, POST, OPTIONS');
    expect(pre.headers.get('access-control-allow-methods')).toBeNull();
  });
});

describe('fkgqa serve: service description and VoID', () => {
  it('GET without query is a Turtle service description linking the VoID', async () => {
    const r = await fetch(url, { headers: { Accept: 'text/turtle' } });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('text/turtle; charset=utf-8');
    const voidUrl = url.replace(/sparql$/, '.well-known/void');
    expect(r.headers.get('link')).toBe(`<${voidUrl}>; rel="describedby"`);
    const ttl = await r.text();
    expect(ttl).toContain(`<${url}> a sd:Service`);
    expect(ttl).toContain(`sd:endpoint <${url}>`);
    expect(ttl).toContain('sd:supportedLanguage sd:SPARQL11Query');
    expect(ttl).toContain('formats:SPARQL_Results_JSON');
    expect(ttl).toContain(`rdfs:seeAlso <${voidUrl}>`);
    expect(ttl).toMatch(/void:triples 35/);
  });
  it('serves N-Triples service descriptions on request', async () => {
    const r = await fetch(url, { headers: { Accept: 'application/n-triples' } });
    expect(r.headers.get('content-type')).toBe('application/n-triples; charset=utf-8');
    expect((await r.text()).split('\n').filter((l) => l.includes(' <http://www.w3.org/ns/sparql-service-description#endpoint> ')).length).toBe(1);
  });
  it('serves the shard VoID file at /.well-known/void', async () => {
    const ok = await fetch(url.replace(/sparql$/, '.well-known/void'));
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-type')).toBe('text/turtle; charset=utf-8');
    const ttl = await ok.text();
    expect(ttl).toMatch(/dcterms:title "library-shard1"/);
    expect(ttl).toMatch(/void:triples 35/);
  });
  it('answers 404 naming the file when a shard has no VoID, and picks up one written after the start', async () => {
    const ep = server.endpoint('library-shard3')!.url;
    const file = path.join(shards, 'library', 'shard3_void.ttl');
    const kept = fs.readFileSync(file);
    fs.rmSync(file);
    const missing = await fetch(ep.replace(/sparql$/, '.well-known/void'));
    expect(missing.status).toBe(404);
    expect(await missing.text()).toContain('library/shard3_void.ttl');
    fs.writeFileSync(file, kept);
    expect((await fetch(ep.replace(/sparql$/, '.well-known/void'))).status).toBe(200);
    expect((await fetch(ep)).headers.get('link')).toBe(`<${ep.replace(/sparql$/, '.well-known/void')}>; rel="describedby"`);
  });
  it('unknown paths are 404; / lists the endpoints', async () => {
    const base = new URL(url).origin;
    expect((await fetch(`${base}/nope-shard9/sparql`)).status).toBe(404);
    // Whatever the method: a POST to an unknown path was 405 "use GET".
    for (const path of ['/nope-shard9/sparql', '/../../etc/passwd', '/x']) {
      const r = await fetch(`${base}${path}`, { method: 'POST', headers: { 'Content-Type': 'application/sparql-query' }, body: 'ASK {}' });
      expect(r.status).toBe(404);
      expect(await r.text()).toContain('not found: endpoints are at');
    }
    const index = (await (await fetch(`${base}/`)).json()) as { endpoints: { id: string }[] };
    expect(index.endpoints).toHaveLength(10);
  });
});

describe('fkgqa serve: request log', () => {
  it('counts requests per endpoint and kind: service-description probe, count, ask, data, invalid', async () => {
    const ep = server.endpoint('observatory-shard2')!.url;
    await fetch(ep);
    await get('SELECT (COUNT(*) AS ?count) WHERE { ?s ?p ?o }', undefined, ep);
    await get('ASK { ?s ?p ?o }', undefined, ep);
    await get('SELECT ?s WHERE { ?s ?p ?o } LIMIT 1', undefined, ep);
    await get('SELECT ?s WHERE { ?s ?p ?o } GROUP BY ?s', undefined, ep);
    await get('SELECT WHERE', undefined, ep);
    // Answers are logged when their responses close: wait for the sixth, not for a fixed time.
    await vi.waitFor(() => expect(server.log.counts()['observatory-shard2']?.total).toBe(6), { timeout: 60_000, interval: 10 });
    expect(server.log.counts()['observatory-shard2']).toEqual({ total: 6, errors: 1, 'service-description': 1, count: 1, ask: 1, data: 2, invalid: 1 });
  });
});

describe('fkgqa serve: time limit', () => {
  // Five seconds of oxigraph's CPU.
  it('stops a query over --timeout with 503 and keeps answering, on that endpoint and others', { tags: ['slow'] }, async () => {
    // The limit leaves another endpoint's first COUNT time to answer on a loaded machine.
    const s = await serve({ shards, kgs: ['library'], timeoutMs: 5_000, writeFiles: false });
    try {
      const slow = s.endpoint('library-shard4')!.url;
      const other = s.endpoint('library-shard1')!.url;
      // A six-way cross product of the shard's 40 triples: 4·10^9 solutions, minutes of work for oxigraph.
      let heavyDone = false;
      const heavy = fetch(`${slow}?query=${encodeURIComponent('SELECT (COUNT(*) AS ?n) { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l . ?m ?n2 ?o . ?p ?q ?r }')}`).finally(() => (heavyDone = true));
      const meanwhile = await get(COUNT_BOOKS, undefined, other);
      expect(meanwhile.status).toBe(200);
      expect(heavyDone).toBe(false);
      const r = await heavy;
      expect(r.status).toBe(503);
      expect(await r.text()).toContain('time limit of 5000 ms');
      expect(await countOf(await get('SELECT (COUNT(*) AS ?n) { ?s ?p ?o }', undefined, slow))).toBe(40);
    } finally {
      await s.close();
    }
  });
});
