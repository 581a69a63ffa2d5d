// @module-tag split-tiers (tests/tiers.ts: the tests tagged slow run in npm run test:slow)
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import path from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { InMemoryTransport } from '@modelcontextprotocol/server';
import * as oxigraph from 'oxigraph';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readVoid } from '../src/describe/void-turtle.js';
import type { McpLimits, Setup } from '../src/mcp/context.js';
import { planQuery, routeQuery } from '../src/federation/routing.js';
import { openRegistry, registryFromEndpointsValue, registryFromUrls, type EndpointRegistry } from '../src/federation/registry.js';
import { CallLog } from '../src/mcp/call-log.js';
import { datasetIriOf, voidSummary } from '../src/mcp/void-text.js';
import { sparqlIri } from '../src/sparql/results.js';
import { failure, failureCause, runSparqlQuery } from '../src/mcp/run-query.js';
import { createMcpServer, serveMcpHttp, type FkgqaMcpServer } from '../src/mcp/server.js';
import type { SparqlResults } from '../src/sparql/results.js';
import { serve, type ShardServer } from '../src/serve/server.js';
import { openBuild } from '../src/build/open.js';
import { compareResults } from '../src/answers/compare.js';
import { demoBuild, ROOT, tmpDir } from './helpers.js';
import { INIT, stdioChild } from './mcp-child.js';

const P = 'http://valuenet/ontop/';
const VOID = 'http://rdfs.org/ns/void#';

let shards: string; // the demo build
let bare: string; // a copy without VoID files and catalogue
let server: ShardServer; // serves the demo build
let bareServer: ShardServer; // serves the copy
let foreign: Awaited<ReturnType<typeof foreignEndpoints>>;
let registry: EndpointRegistry;
const url = (id: string) => server.endpoint(id)!.url;

/**
 * A small SPARQL endpoint that is not fkgqa's (node http + oxigraph), at `/<name>/sparql`:
 * `sd` answers GET without query with a service description linking (rdfs:seeAlso) to a VoID
 * document at `/docs/void.ttl`; `dg` holds VoID triples in its default graph, `ng` in a named
 * graph; `ttl` (the same data as `dg`) answers CONSTRUCT in Turtle only; `slow` answers after 8 s, or when
 * `releaseSlow` is called (what it holds then). Everything else is 404 (no /.well-known/void anywhere).
 */
async function foreignEndpoints(): Promise<{ url: string; close(): Promise<void>; releaseSlow(): void }> {
  const voidOf = (endpoint: string, title: string) =>
    `@prefix void: <${VOID}> . @prefix dcterms: <http://purl.org/dc/terms/> .
<urn:x:${title}> a void:Dataset ; dcterms:title "${title}" ; void:sparqlEndpoint <${endpoint}> ; void:triples 42 ;
  void:classPartition [ void:class <http://example.org/Thing> ; void:entities 7 ] .`;
  const stores = new Map<string, oxigraph.Store>();
  /** The answers `slow` holds: each sends its answer once (at 8 s or when released). */
  const held = new Set<() => void>();
  let base = '';
  const s = http.createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const m = /^\/(\w+)\/sparql$/.exec(u.pathname);
      if (u.pathname === '/docs/void.ttl') return void res.writeHead(200, { 'content-type': 'text/turtle' }).end(voidOf(`${base}/sd/sparql`, 'sd'));
      if (!m) return void res.writeHead(404).end('not found');
      const query = req.method === 'POST' ? new URLSearchParams(Buffer.concat(chunks).toString()).get('query') : u.searchParams.get('query');
      if (!query) {
        if (m[1] !== 'sd') return void res.writeHead(404).end('no service description');
        return void res
          .writeHead(200, { 'content-type': 'text/turtle' })
          .end(`<${base}/sd/sparql> a <http://www.w3.org/ns/sparql-service-description#Service> ; <http://www.w3.org/2000/01/rdf-schema#seeAlso> <${base}/docs/void.ttl> .`);
      }
      if (m[1] === 'slow') {
        const answer = () => {
          if (!held.delete(answer)) return;
          clearTimeout(timer);
          if (!res.destroyed) res.writeHead(200, { 'content-type': 'application/sparql-results+json' }).end('{"head":{"vars":[]},"results":{"bindings":[{}]}}');
        };
        const timer = setTimeout(answer, 8000);
        held.add(answer);
        return;
      }
      const store = stores.get(m[1]);
      if (!store) return void res.writeHead(404).end('no such endpoint');
      const construct = /^\s*CONSTRUCT/i.test(query);
      // `ttl` answers graphs in Turtle only.
      const type = construct ? (m[1] === 'ttl' ? 'text/turtle' : 'application/n-triples') : 'application/sparql-results+json';
      try {
        res.writeHead(200, { 'content-type': type }).end(store.query(query, { results_format: type }) as string);
      } catch (e) {
        res.writeHead(400).end(String(e));
      }
    });
  });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  base = `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
  const dg = new oxigraph.Store();
  dg.load(voidOf(`${base}/dg/sparql`, 'dg'), { format: 'text/turtle' });
  dg.load('<http://example.org/a> a <http://example.org/Thing> .', { format: 'text/turtle' });
  stores.set('dg', dg);
  stores.set('ttl', dg);
  const ng = new oxigraph.Store();
  ng.load(voidOf(`${base}/ng/sparql`, 'ng'), { format: 'text/turtle', to_graph_name: oxigraph.namedNode('urn:x:void-graph') });
  stores.set('ng', ng);
  return {
    url: base,
    close: () => new Promise<void>((r) => (s.close(() => r()), s.closeAllConnections())),
    releaseSlow: () => [...held].forEach((answer) => answer()),
  };
}

/** An in-process client connected to a new server. */
async function connect(reg: EndpointRegistry, setup: Setup = 'baseline', limits: Partial<McpLimits> = {}, state: string | null = null, warm = false) {
  const mcp = await createMcpServer({ registry: reg, setup, limits, callLog: null, state });
  // The federation engine's thread takes seconds to start on a busy machine: start it before the timed calls.
  if (warm) await mcp.context.sparql.warm();
  const [a, b] = InMemoryTransport.createLinkedPair();
  await mcp.server.connect(a);
  const client = new Client({ name: 'test', version: '1' });
  await client.connect(b);
  const call = async (name: string, args: Record<string, unknown>) => {
    const r = (await client.callTool({ name, arguments: args })) as { content: { type: string; text: string }[]; isError?: boolean };
    return { text: r.content[0].text, isError: !!r.isError };
  };
  return { mcp, client, call, close: async () => (await client.close(), await mcp.close()) };
}

const previewOf = (text: string) => JSON.parse(text.slice(text.indexOf('\n') + 1)) as SparqlResults;
/** The heading line of get_void_descriptions' first description (`# VoID of <url> … from step …`). */
const headingOf = (text: string) => text.split('\n').find((l) => l.startsWith('# VoID of '));
/**
 * A get_void_descriptions answer in Turtle as the build writes it: from its first `@prefix` on, with
 * each registered endpoint's URL (the name of its dataset in the answer) back to its dataset IRI.
 */
function asBuildVoid(text: string, reg: EndpointRegistry): string {
  let t = text.slice(text.indexOf('@prefix'));
  for (const e of reg.endpoints) t = t.split(`<${e.url}>`).join(`<${datasetIriOf(e)}>`);
  return t;
}
/** run_sparql_query's format argument for SPARQL JSON results (the reference server's default; fkgqa's default is the table). */
const JSON_RESULTS = 'application/sparql-results+json';

beforeAll(async () => {
  const dir = tmpDir('fkgqa-mcp-');
  shards = await demoBuild(dir);
  bare = path.join(dir, 'bare');
  fs.cpSync(shards, bare, { recursive: true });
  for (const g of ['library', 'observatory']) for (const f of fs.readdirSync(path.join(bare, g))) if (f.includes('_void')) fs.rmSync(path.join(bare, g, f));
  for (const f of ['catalogue.json', 'catalogue.ttl']) fs.rmSync(path.join(bare, f));
  // The two serves and the foreign endpoints start side by side (each serve's threads load their shards).
  // Each is assigned as it starts, so that afterAll closes those that started should another fail.
  await Promise.all([
    serve({ shards, writeFiles: false }).then((s) => (server = s)),
    serve({ shards: bare, kgs: ['library'], writeFiles: false }).then((s) => (bareServer = s)),
    foreignEndpoints().then((f) => (foreign = f)),
  ]);
  registry = registryFromEndpointsValue(server.endpointsFile(), 'test');
});

afterAll(async () => {
  await httpMcp?.server.close();
  await server?.close();
  await bareServer?.close();
  await foreign?.close();
});

describe('fkgqa mcp / registry', () => {
  it('reads a serve endpoints value: shard endpoints only, descriptions and VoID files from the build', () => {
    expect(registry.endpoints.map((e) => e.id)).toEqual([
      'library-shard1',
      'library-shard2',
      'library-shard3',
      'library-shard4',
      'observatory-shard1',
      'observatory-shard2',
      'observatory-shard3',
      'observatory-shard4',
    ]);
    const cat = JSON.parse(fs.readFileSync(path.join(shards, 'catalogue.json'), 'utf8')).shards[1];
    expect(registry.endpoints[1]).toMatchObject({ id: 'library-shard2', url: url('library-shard2'), graph: 'library', shard: 'shard2', description: cat.description });
    expect(registry.endpoints[1].voidFile).toBe(path.join(shards, 'library', 'shard2_void.ttl'));
    expect(registry.build).toBe(path.resolve(shards));
  });

  it('loads from the state folder only, and names plain URLs', () => {
    const copy = path.join(tmpDir('fkgqa-mcp-reg-'), 'b');
    fs.cpSync(shards, copy, { recursive: true });
    const file = { ...server.endpointsFile(), shards: copy };
    fs.writeFileSync(path.join(copy, 'endpoints.json'), JSON.stringify(file));
    expect(() => openRegistry({ build: copy })).toThrow(`no endpoints file of a running fkgqa serve (looked for ${path.join(`${copy}.state`, 'endpoints.json')})`);
    fs.mkdirSync(`${copy}.state`);
    fs.writeFileSync(path.join(`${copy}.state`, 'endpoints.json'), JSON.stringify({ ...file, endpoints: file.endpoints.slice(0, 2) }));
    const r = openRegistry({ build: copy, kgs: ['library'] });
    expect(r.source).toBe(`serve:${path.join(`${copy}.state`, 'endpoints.json')}`);
    expect(r.endpoints).toHaveLength(2);
    const byBase = openRegistry({ build: copy, endpointBase: 'http://127.0.0.1:7001', kgs: ['observatory'] });
    expect(byBase.endpoints[2].url).toBe('http://127.0.0.1:7001/observatory-shard3/sparql');
    const urls = registryFromUrls(['http://127.0.0.1:9/ds/sparql', 'http://127.0.0.1:9/library-shard2/sparql']);
    expect(urls.endpoints.map((e) => [e.id, e.graph, e.shard])).toEqual([
      ['library-shard2', 'library', 'shard2'],
      ['127.0.0.1-9-ds-sparql', null, null],
    ]);
    expect(() => openRegistry({})).toThrow(/no endpoints/);
  });
});

describe('fkgqa mcp / call log', () => {
  it('each entry is in the file when record returns (one descriptor kept open); after close the next entry opens it again', () => {
    const file = path.join(tmpDir('fkgqa-mcp-log-'), 'sub', 'calls.jsonl');
    const log = new CallLog(file);
    const entry = (i: number) => ({
      time: `2026-01-01T00:00:0${i}.000Z`,
      tool: 'run_sparql_query',
      setup: 'baseline',
      query: `ASK { ?s ?p "é${i}" }`,
      route: 'direct',
      endpoints: [],
      requests: {},
      ms: i,
    });
    expect(fs.existsSync(file)).toBe(false);
    log.record(entry(1));
    expect(fs.readFileSync(file, 'utf8')).toBe(JSON.stringify(entry(1)) + '\n');
    log.record(entry(2));
    expect(
      fs
        .readFileSync(file, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).query),
    ).toEqual(['ASK { ?s ?p "é1" }', 'ASK { ?s ?p "é2" }']);
    log.close();
    log.record(entry(3));
    log.close();
    expect(
      fs
        .readFileSync(file, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).ms),
    ).toEqual([1, 2, 3]);
    expect(log.entries).toHaveLength(3);
  });
});

describe('fkgqa mcp / planning', () => {
  const a = 'http://127.0.0.1:1/library-shard1/sparql';
  const b = 'http://127.0.0.1:1/library-shard2/sparql';
  const reg = registryFromUrls([a, b]);
  const hints = { maxQueryChars: 8000, prefixes: { '': P } };
  it('counts distinct SERVICE targets from the AST: SILENT counts, the same IRI twice counts once', () => {
    // A lone SERVICE SILENT goes through the federation engine: a failed request is one empty solution there, an error direct.
    const silent = planQuery(`SELECT * { SERVICE SILENT <${a}> { ?s ?p ?o } }`, reg, hints);
    expect(silent.ok && [silent.route, silent.targets.map((t) => t.url)]).toEqual(['federation', [a]]);
    expect(routeQuery(`SELECT * { SERVICE SILENT <${a}> { ?s ?p ?o } }`, reg, hints, { quick: true })).toMatchObject({ ok: true, route: 'federation', quick: false });
    expect(routeQuery(`SELECT * { SERVICE <${a}> { ?s ?p ?o } }`, reg, hints, { quick: true })).toMatchObject({ ok: true, route: 'direct', quick: true });
    expect(planQuery(`SELECT ?s { { SERVICE <${a}> { ?s a ?c } } }`, reg, hints)).toMatchObject({
      ok: true,
      route: 'direct',
      query: 'SELECT ?s WHERE { ?s ?c. }'.replace('?s ?c', '?s <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> ?c'),
    });
    expect(planQuery(`SELECT ?s { SERVICE <${a}> { ?s a ?c } FILTER(?c != <urn:x>) }`, reg, hints)).toMatchObject({ ok: true, route: 'federation' });
    const twice = planQuery(`SELECT * { SERVICE <${a}> { ?s a ?c } SERVICE <${a}/> { ?s ?p ?o } }`, reg, hints);
    expect(twice.ok && [twice.route, twice.targets.length]).toEqual(['federation', 1]);
    const nested = planQuery(`SELECT * { SERVICE <${a}> { ?s ?p ?o } FILTER NOT EXISTS { SERVICE SILENT <${b}> { ?s a ?c } } }`, reg, hints);
    expect(nested.ok && nested.targets.map((t) => t.url)).toEqual([a, b]);
  });
  it('fixes escaped local names (sparqljs keeps their backslash) in what it sends', () => {
    const p = planQuery(`PREFIX : <${P}> SELECT ?n { SERVICE <${a}> { ?t :author\\#name ?n } }`, reg, hints);
    expect(p.ok && p.query).toBe(`SELECT ?n WHERE { ?t <${P}author#name> ?n. }`);
  });
  it('refuses a variable SERVICE target, and SPARQL Update', () => {
    expect(planQuery('SELECT * { SERVICE ?e { ?s ?p ?o } }', reg, hints)).toMatchObject({ ok: false, errorClass: 'variable-service' });
    expect(planQuery('PREFIX x: <urn:x:> DELETE WHERE { ?s ?p ?o }', reg, hints)).toMatchObject({ ok: false, errorClass: 'update' });
    expect(planQuery('x'.repeat(8001), reg, hints)).toMatchObject({ ok: false, errorClass: 'too-long' });
  });
  it('refuses deep nesting before sparqljs sees it (3,800 nested groups inside one SERVICE, 7.6 KB: 10 s and a stack overflow in sparqljs)', () => {
    const deep = `SELECT * { SERVICE <${a}> { ${'{'.repeat(3800)} ?s ?p ?o ${'}'.repeat(3800)} } }`;
    const t0 = performance.now();
    const plan = planQuery(deep, reg, hints);
    expect(performance.now() - t0).toBeLessThan(500);
    expect(plan).toMatchObject({ ok: false, errorClass: 'too-deep', message: expect.stringContaining('nest 3802 levels, more than the limit of 64') });
    // 64 levels are fine.
    expect(planQuery(`SELECT * { SERVICE <${a}> { ${'{ '.repeat(62)}?s ?p ?o ${'} '.repeat(62)}} }`, reg, hints)).toMatchObject({ ok: true });
  });
});

describe('fkgqa mcp / tools over an in-process client', () => {
  it('lists the tools of each setup; the endpoint resource carries descriptions only in high_level', async () => {
    const names: Record<string, string[]> = {};
    for (const setup of ['baseline', 'high_level', 'void_tool'] as const) {
      const c = await connect(registry, setup);
      names[setup] = (await c.client.listTools()).tools.map((t) => t.name).sort();
      const res = (await c.client.readResource({ uri: 'fkgqa://endpoints' })) as { contents: { text: string }[] };
      const list = JSON.parse(res.contents[0].text);
      expect(list.setup).toBe(setup);
      expect(list.endpoints).toHaveLength(8);
      expect(list.endpoints[1].url).toBe(url('library-shard2'));
      expect(list.endpoints[1].description).toBe(setup === 'high_level' ? registry.endpoints[1].description : undefined);
      expect(c.client.getInstructions()).toContain(`setup: ${setup}`);
      await c.close();
    }
    expect(names).toEqual({ baseline: ['run_sparql_query'], high_level: ['run_sparql_query'], void_tool: ['get_void_descriptions', 'run_sparql_query'] });
  });

  it('a 2-SERVICE query (library q3) returns the gold answer through the federation engine', async () => {
    const c = await connect(registry, 'baseline', {}, null, true);
    const q = `PREFIX : <${P}>
SELECT ?t1_title WHERE {
  SERVICE <${url('library-shard4')}> { ?t1 a :book . ?t1 :book\\#year ?t1_year . FILTER(?t1_year > 2010) }
  SERVICE <${url('library-shard2')}> { ?t1 :book\\#title ?t1_title }
} ORDER BY DESC(?t1_year)`;
    const r = await c.call('run_sparql_query', { query: q, format: JSON_RESULTS });
    expect(r.isError).toBe(false);
    expect(r.text.split('\n')[0]).toMatch(/^5 rows \(federation engine over 2 endpoints; \d+ ms\)$/);
    const titles = previewOf(r.text).results!.bindings.map((b) => b.t1_title.value);
    expect(titles).toEqual(['Andean Notebook', 'River of Glass', 'Highland Songs', 'Winter Ledger', 'Lanterns']);
    // The gold answer: the benchmark's query on the unsharded graph.
    const store = new oxigraph.Store();
    for (const i of [1, 2, 3, 4]) store.load(fs.readFileSync(path.join(shards, 'library', `shard${i}.nt`), 'utf8'), { format: 'application/n-triples' });
    const entry = JSON.parse(fs.readFileSync(path.join(shards, 'benchmark.json'), 'utf8')).entries.find((e: { queryId: string }) => e.queryId === 'library/q3');
    const gold = JSON.parse(store.query(entry.query, { results_format: 'application/sparql-results+json' }) as string) as SparqlResults;
    expect(compareResults(gold, previewOf(r.text), true).identical).toBe(true);
    const log = c.mcp.callLog.entries[0];
    expect(log).toMatchObject({ tool: 'run_sparql_query', route: 'federation', rows: 5, endpoints: [url('library-shard4'), url('library-shard2')] });
    expect(Object.keys(log.requests!).sort()).toEqual([url('library-shard2'), url('library-shard4')].sort());
    await c.close();
  });

  it('strips a lone SERVICE and sends its body to that endpoint: one request to one endpoint', async () => {
    const c = await connect(registry);
    const before = server.log.counts();
    const r = await c.call('run_sparql_query', { query: `SELECT (COUNT(*) AS ?n) WHERE { SERVICE <${url('library-shard2')}> { ?s ?p ?o } }`, format: JSON_RESULTS });
    const after = server.log.counts();
    expect(previewOf(r.text).results!.bindings[0].n.value).toBe('8');
    expect(r.text).toContain(`direct: the SERVICE wrapper was removed and the query sent to ${url('library-shard2')}`);
    const delta = Object.fromEntries(
      Object.keys(after)
        .map((id) => [id, after[id].total - (before[id]?.total ?? 0)])
        .filter(([, n]) => n !== 0),
    );
    expect(delta).toEqual({ 'library-shard2': 1 });
    // The quick route (routeQuery's lone-SERVICE recognition): the wrapper cut out of the text, the rest sent as written.
    expect(c.mcp.callLog.entries[0]).toMatchObject({ route: 'direct', requests: { [url('library-shard2')]: 1 }, rows: 1, details: { sent: 'SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }' } });
    // A syntax error inside the clause is found by the endpoint; the agent gets the parser's message (one request was sent).
    const bad = await c.call('run_sparql_query', { query: `SELECT * WHERE { SERVICE <${url('library-shard2')}> { ?s ?p } }` });
    expect(bad.text).toMatch(/^Error \(syntax\): SPARQL syntax error at line 1, column \d+: found '}'/);
    expect(c.mcp.callLog.entries[1]).toMatchObject({ errorClass: 'syntax', requests: { [url('library-shard2')]: 1 } });
    await c.close();
  });

  it('pages an answer: "rows X–Y of M; pass offset=Y to continue", later pages from the kept answer, a character budget', async () => {
    const c = await connect(registry, 'baseline', { previewRows: 3 });
    const q = `SELECT * WHERE { SERVICE <${url('library-shard1')}> { ?s ?p ?o } } ORDER BY ?s ?p ?o`;
    const r = await c.call('run_sparql_query', { query: q, format: JSON_RESULTS });
    expect(r.text.split('\n')[0]).toMatch(/^rows 1–3 of 35; pass offset=3 to continue; or add LIMIT, or aggregate with COUNT\/GROUP BY \(direct: /);
    const first = previewOf(r.text).results!.bindings;
    expect(first).toHaveLength(3);
    expect(c.mcp.callLog.entries[0]).toMatchObject({ rows: 35, truncated: true });
    // The next page comes from the answer kept from that call: no new request.
    const before = JSON.stringify(server.log.counts());
    const p2 = await c.call('run_sparql_query', { query: q, offset: 3, format: JSON_RESULTS });
    expect(p2.text.split('\n')[0]).toMatch(/^rows 4–6 of 35; pass offset=6 to continue.* \(a page of the answer kept from the same query \d+ s ago; direct: /);
    expect(JSON.stringify(server.log.counts())).toBe(before);
    expect(c.mcp.callLog.entries[1]).toMatchObject({ requests: {}, rows: 35, details: { offset: 3, kept: true } });
    // The pages together are the whole answer, in order.
    const all = [...first, ...previewOf(p2.text).results!.bindings];
    for (let o = 6; o < 35; o += 3) all.push(...previewOf((await c.call('run_sparql_query', { query: q, offset: o, format: JSON_RESULTS })).text).results!.bindings);
    const direct = await fetch(url('library-shard1'), {
      method: 'POST',
      headers: { 'content-type': 'application/sparql-query', accept: 'application/sparql-results+json' },
      body: 'SELECT * WHERE { ?s ?p ?o } ORDER BY ?s ?p ?o',
    });
    const whole = (await direct.json()) as SparqlResults;
    expect(all).toEqual(whole.results!.bindings);
    const last = await c.call('run_sparql_query', { query: q, offset: 33, format: JSON_RESULTS });
    expect(last.text.split('\n')[0]).toMatch(/^rows 34–35 of 35 \(/);
    const past = await c.call('run_sparql_query', { query: q, offset: 40, format: JSON_RESULTS });
    expect(past.text.split('\n')[0]).toMatch(/^no rows at offset=40: there are 35 \(/);
    // A character budget: fewer rows than previewRows fit in 1,000 characters.
    const wide = await connect(registry, 'baseline', { previewRows: 100 });
    const b = await wide.call('run_sparql_query', { query: q, max_chars: 1000, format: JSON_RESULTS });
    expect(b.text.length).toBeLessThanOrEqual(1000);
    const shown = previewOf(b.text).results!.bindings.length;
    expect(shown).toBeGreaterThan(0);
    expect(b.text.split('\n')[0]).toContain(`rows 1–${shown} of 35; pass offset=${shown} to continue (max_chars=1000 reached`);
    await wide.close();
    const g = await c.call('run_sparql_query', { query: `CONSTRUCT { ?s ?p ?o } WHERE { SERVICE <${url('library-shard2')}> { ?s ?p ?o } }`, format: 'text/turtle' });
    expect(g.text.split('\n')[0]).toMatch(/^triples 1–3 of 8; pass offset=3 to continue/);
    expect(g.text.trim().split('\n')).toHaveLength(4);
    await c.close();
  });

  it('counts and previews a Turtle graph answer as N-Triples', async () => {
    const c = await connect(registryFromUrls([`${foreign.url}/ttl/sparql`]), 'baseline', { previewRows: 2 });
    const r = await c.call('run_sparql_query', { query: `CONSTRUCT { ?s ?p ?o } WHERE { SERVICE <${foreign.url}/ttl/sparql> { ?s ?p ?o } }` });
    expect(r.text.split('\n')[0]).toMatch(/^triples 1–2 of 8; pass offset=2 to continue/);
    expect(
      r.text
        .trim()
        .split('\n')
        .slice(1)
        .every((l) => /^(<[^>]+>|_:\S+) <[^>]+> .+ \.$/.test(l)),
    ).toBe(true);
    await c.close();
  });

  it('gives errors an agent can act on, and sends nothing for a refused query', async () => {
    const c = await connect(registry);
    const before = JSON.stringify(server.log.counts());
    const none = await c.call('run_sparql_query', { query: `SELECT * { ?s ?p ?o }` });
    expect(none.isError).toBe(true);
    expect(none.text).toMatch(/^Error \(no-service\): the query names no endpoint: wrap its patterns in SERVICE <endpoint URL>/);
    expect(none.text).toContain(url('observatory-shard4'));
    const unknown = await c.call('run_sparql_query', { query: `SELECT * { SERVICE <http://example.org/sparql> { ?s ?p ?o } SERVICE <${url('library-shard1')}> { ?s ?p ?o } }` });
    expect(unknown.text).toMatch(/^Error \(unknown-endpoint\): <http:\/\/example\.org\/sparql> is not a registered endpoint; nothing was sent/);
    expect(unknown.text).toContain(url('library-shard3'));
    const update = await c.call('run_sparql_query', { query: `INSERT DATA { <urn:a> <urn:b> <urn:c> }` });
    expect(update.text).toMatch(/^Error \(update\): SPARQL Update .* is refused/);
    const malformed = await c.call('run_sparql_query', { query: `SELECT * WHERE {\n  SERVICE <${url('library-shard1')}> { ?s ?p ?o }\n  FILTER(?o > ) }` });
    expect(malformed.text).toMatch(/^Error \(syntax\): SPARQL syntax error at line 3, column 15: found '\)'/);
    const prefix = await c.call('run_sparql_query', { query: `SELECT * WHERE { SERVICE <${url('library-shard1')}> { ?s a :author } }` });
    expect(prefix.text).toBe(
      `Error (unknown-prefix): the empty prefix ":" is not declared (first used at line 1, column ${`SELECT * WHERE { SERVICE <${url('library-shard1')}> { ?s a `.length + 1}): declare it at the top of the query: PREFIX : <${P}>`,
    );
    const rdfs = await c.call('run_sparql_query', { query: `SELECT * WHERE { SERVICE <${url('library-shard1')}> { ?s rdfs:label ?l } }` });
    expect(rdfs.text).toContain('PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>');
    expect(JSON.stringify(server.log.counts())).toBe(before);
    expect(c.mcp.callLog.entries.map((e) => e.errorClass)).toEqual(['no-service', 'unknown-endpoint', 'update', 'syntax', 'unknown-prefix', 'unknown-prefix']);
    await c.close();
  });

  it('reports the time limit as a timeout, never as an empty result (direct and federated)', async () => {
    const reg = registryFromUrls([`${foreign.url}/slow/sparql`, url('library-shard1')]);
    const c = await connect(reg, 'baseline', {}, null, true);
    const direct = await c.call('run_sparql_query', { query: `SELECT * { SERVICE <${foreign.url}/slow/sparql> { ?s ?p ?o } }`, timeout_ms: 1000 });
    expect(direct.isError).toBe(true);
    expect(direct.text).toMatch(new RegExp(`^Error \\(timeout\\): timeout: the endpoint ${foreign.url}/slow/sparql did not answer within 1000 ms — this is not an empty result`));
    // The engine's thread is started first (a federated query answered): at load 16 starting it took
    // over the 1000 ms limit below, which then ended before any request was sent.
    const warm = await c.call('run_sparql_query', { query: `SELECT (COUNT(*) AS ?n) { SERVICE <${url('library-shard1')}> { ?s a <${P}author> } FILTER(true) }`, format: JSON_RESULTS });
    expect(previewOf(warm.text).results!.bindings[0].n.value).toBe('5');
    const fed = await c.call('run_sparql_query', { query: `SELECT * { SERVICE <${foreign.url}/slow/sparql> { ?s ?p ?o } SERVICE <${url('library-shard1')}> { ?s ?p ?o } }`, timeout_ms: 1000 });
    expect(fed.text).toMatch(/^Error \(timeout\): timeout: the federation engine .* did not answer within 1000 ms/);
    // Requests are counted also when the engine is stopped at the time limit (its thread reports
    // each request before sending it; before the federation layer they were unknown, null).
    expect(c.mcp.callLog.entries.map((e) => [e.route, e.errorClass, e.requests === null])).toEqual([
      ['error', 'timeout', false],
      ['federation', undefined, false],
      ['error', 'timeout', false],
    ]);
    expect(c.mcp.callLog.entries[2].requests![`${foreign.url}/slow/sparql`]).toBeGreaterThanOrEqual(1);
    // The engine was restarted: the next federated query is answered.
    const again = await c.call('run_sparql_query', { query: `SELECT (COUNT(*) AS ?n) { SERVICE <${url('library-shard1')}> { ?s a <${P}author> } FILTER(true) }`, format: JSON_RESULTS });
    expect(previewOf(again.text).results!.bindings[0].n.value).toBe('5');
    await c.close();
  });

  it("says when the endpoint stopped the query at its own time limit, apart from the caller's timeout_ms (contracts: MCP tool results)", () => {
    const routed = { route: 'direct' as const, query: 'ASK {}', targets: [registry.endpoints[0]], form: 'boolean' as const };
    // The client's outcome for fkgqa serve's 503 `Fkgqa-Stopped: time-limit; by=endpoint; ms=30000` carries endpointLimitMs.
    const own = failure({ status: 'timeout', ms: 30_002, requests: {}, endpointLimitMs: 30_000 } as Parameters<typeof failure>[0], routed, 60_000, 100_000);
    expect(own).toEqual({
      errorClass: 'timeout',
      message: `timeout: the endpoint ${registry.endpoints[0].url} stopped the query at its time limit of 30000 ms — this is not an empty result, the answer is unknown. Make the query more selective (fewer endpoints per triple pattern, FILTER, LIMIT); a larger timeout_ms does not help, the endpoint's own limit is lower.`,
    });
    const caller = failure({ status: 'timeout', ms: 5_001, requests: {} }, routed, 5_000, 100_000);
    expect(caller.message).toBe(
      `timeout: the endpoint ${registry.endpoints[0].url} did not answer within 5000 ms — this is not an empty result, the answer is unknown. Make the query more selective (fewer endpoints per triple pattern, FILTER, LIMIT); timeout_ms may be raised up to 100000.`,
    );
    // Neither is the infrastructure's fault.
    expect([failureCause({ status: 'timeout', ms: 1, requests: {} }, routed, registry).infrastructure]).toEqual([false]);
  });
  it('an answer over the size limit: "add LIMIT" only for a query without one; with LIMIT, what else makes it large', () => {
    const big = `the answer of ${registry.endpoints[0].url} is larger than 1048576 bytes`;
    const outcome = { status: 'error' as const, error: big, tooLarge: true as const, ms: 10, requests: {} };
    const routed = (query: string) => ({ route: 'direct' as const, query, targets: [registry.endpoints[0]], form: 'bindings' as const });
    expect(failure(outcome, routed('SELECT * WHERE { ?s ?p ?o }'), 60_000, 100_000)).toEqual({
      errorClass: 'too-large',
      message: `${big}: add LIMIT, select fewer variables, or aggregate (COUNT, GROUP BY)`,
    });
    // A LIMIT in a sub-SELECT only: the outer query has none.
    expect(failure(outcome, routed('SELECT * WHERE { { SELECT * { ?s ?p ?o } LIMIT 5 } ?s ?q ?r }'), 60_000, 100_000).message).toBe(
      `${big}: add LIMIT, select fewer variables, or aggregate (COUNT, GROUP BY)`,
    );
    expect(failure(outcome, routed('SELECT * WHERE { ?s ?p ?o } LIMIT 10'), 60_000, 100_000)).toEqual({
      errorClass: 'too-large',
      message: `${big}: the query has LIMIT 10 already, so its rows hold very long values or the endpoint sent more than 10 rows (or an answer that does not end): select fewer variables, or aggregate (COUNT, GROUP BY)`,
    });
  });
});

describe('fkgqa mcp / several federation engines', () => {
  it('runs federated queries side by side: a quick one is not held up by a slow one', { tags: ['slow'] }, async () => {
    const slowUrl = `${foreign.url}/slow/sparql`;
    const reg = registryFromUrls([slowUrl, url('library-shard1')]);
    const mcp = await createMcpServer({ registry: reg, callLog: null, state: null, engines: 2 });
    try {
      await mcp.context.sparql.warm();
      const done: string[] = [];
      const slow = runSparqlQuery(mcp.context, { query: `SELECT * { SERVICE <${slowUrl}> { ?s ?p ?o } SERVICE <${url('library-shard1')}> { ?s ?p ?o } }`, timeout_ms: 30_000 }).then(() =>
        done.push('slow'),
      );
      // The slow endpoint holds its answer until the quick query is done (or for 8 s): a quick query held up by
      // the slow one would finish after it (at 8 s), a wait on an event rather than on a time budget.
      const quick = runSparqlQuery(mcp.context, { query: `SELECT (COUNT(*) AS ?n) { SERVICE <${url('library-shard1')}> { ?s a <${P}author> } FILTER(true) }` }).then((r) => {
        done.push('quick');
        foreign.releaseSlow();
        return r;
      });
      const [, q] = await Promise.all([slow, quick]);
      expect(q.route).toBe('federation');
      expect(q.results!.results!.bindings[0].n.value).toBe('5');
      expect(done).toEqual(['quick', 'slow']);
    } finally {
      await mcp.close();
    }
  });
});

describe('fkgqa mcp / what an agent reads: the table, VoID pages, VoID notes', () => {
  const OBS = `PREFIX : <${P}>\nPREFIX xsd: <http://www.w3.org/2001/XMLSchema#>\n`;
  it("answers in the table by default: a header line, a line per row, terms as SPARQL writes them with the query's prefixes; SPARQL JSON on request", async () => {
    const c = await connect(registry);
    const q = `${OBS}SELECT ?o ?night ?seeing ?star ?none WHERE { SERVICE <${url('observatory-shard2')}> { ?o :observation\\#night ?night ; :observation\\#seeing ?seeing ; :observation\\#ref-star_id ?star OPTIONAL { ?o :observation\\#nothing ?none } } } ORDER BY ?o LIMIT 2`;
    const r = await c.call('run_sparql_query', { query: q });
    // IRIs as prefixed names of the query's PREFIXes (escaped as PN_LOCAL needs), a date with its datatype, a decimal bare, an unbound cell empty.
    expect(r.text).toBe(
      '2 rows\n' +
        '?o\t?night\t?seeing\t?star\t?none\n' +
        ':observation\\/observation_id\\=1\t"2026-03-02"^^xsd:date\t0.8\t:star\\/star_id\\=1\t\n' +
        ':observation\\/observation_id\\=2\t"2026-03-02"^^xsd:date\t0.9\t:star\\/star_id\\=2\t',
    );
    // Without PREFIX declarations: full IRIs; doubles "0.77" as the SPARQL double 0.77e0, strings quoted.
    const mags = await c.call('run_sparql_query', {
      query: `SELECT ?s ?m ?c WHERE { SERVICE <${url('observatory-shard1')}> { ?s <${P}star#magnitude> ?m ; <${P}star#constellation> ?c } } ORDER BY ?m LIMIT 2`,
    });
    expect(mags.text).toBe(`2 rows\n?s\t?m\t?c\n<${P}star/star_id=1>\t0.77e0\t"Aquila"\n<${P}star/star_id=5>\t2.23e0\t"Cygnus"`);
    // A cell pasted into a query means the same term: the row comes back.
    const cell = r.text.split('\n')[2].split('\t')[0];
    const back = await c.call('run_sparql_query', {
      query: `${OBS}SELECT ?night ?seeing WHERE { SERVICE <${url('observatory-shard2')}> { VALUES ?o { ${cell} } ?o :observation\\#night ?night ; :observation\\#seeing ?seeing FILTER(?seeing = 0.8 && ?night = "2026-03-02"^^xsd:date) } }`,
    });
    expect(back.text).toBe('1 row\n?night\t?seeing\n"2026-03-02"^^xsd:date\t0.8');
    // SPARQL JSON results on request, as before: the note with the route, then the JSON, the same rows.
    const json = await c.call('run_sparql_query', { query: q, format: JSON_RESULTS });
    expect(json.text.split('\n')[0]).toMatch(/^2 rows \(direct: the SERVICE wrapper was removed/);
    expect(previewOf(json.text).results!.bindings.map((b) => b.o.value)).toEqual([`${P}observation/observation_id=1`, `${P}observation/observation_id=2`]);
    expect([r.text.length, json.text.length]).toEqual([192, expect.any(Number)]);
    expect(r.text.length * 4).toBeLessThan(json.text.length);
    // A graph answer: one triple per line, in the same syntax.
    const g = await c.call('run_sparql_query', { query: `${OBS}CONSTRUCT { ?s :star\\#name ?n } WHERE { SERVICE <${url('observatory-shard3')}> { ?s :star\\#name ?n } } ORDER BY ?s LIMIT 1` });
    expect(g.text).toMatch(/^1 triple\n:star\\\/star_id\\=\d+ :star\\#name "[^"]+" \.$/);
    // ASK: the boolean alone.
    expect((await c.call('run_sparql_query', { query: `ASK { SERVICE <${url('observatory-shard3')}> { ?s ?p ?o } }` })).text).toBe('ASK answer: true');
    await c.close();
  });

  it('pages get_void_descriptions: every statement of the VoID on some page, datasets named by endpoint URL, no server path', async () => {
    const c = await connect(registry, 'void_tool');
    const library = registry.endpoints.filter((e) => e.graph === 'library');
    const urls = library.map((e) => e.url);
    const whole = (await c.call('get_void_descriptions', { endpoints: urls })).text;
    const body = (t: string) =>
      t
        .split('\n')
        .slice(1)
        .filter((l) => !l.startsWith('PREFIX ') && !l.startsWith('# '));
    expect(whole.split('\n')[0]).toBe('32 lines');
    expect(body(whole)).toHaveLength(32);
    const pages: string[] = [];
    for (let offset = 0; pages.length < 50;) {
      const p = (await c.call('get_void_descriptions', { endpoints: urls, max_chars: 1000, offset })).text;
      pages.push(p);
      const next = /pass offset=(\d+) to continue/.exec(p.split('\n')[0]);
      if (!next) break;
      offset = Number(next[1]);
    }
    const notes = pages.map((p) => p.split('\n')[0]);
    expect([notes.length, notes[0], notes[10]]).toEqual([11, 'lines 1–2 of 32; pass offset=2 to continue (max_chars=1000 reached: pass a larger max_chars for more per page)', 'lines 31–32 of 32']);
    for (const p of pages) expect(p.length).toBeLessThanOrEqual(1000);
    // The pages together are the whole answer, in order: nothing cut, nothing twice.
    expect(pages.flatMap(body)).toEqual(body(whole));
    // Every property of every shard's VoID file is named on some page, as a query writes it.
    for (const e of library) {
      const file = readVoid(fs.readFileSync(e.voidFile!, 'utf8'), e.id);
      for (const pp of file.propertyPartitions) expect(whole).toContain(`property ${sparqlIri(pp.property, { '': P, rdf: 'http://www.w3.org/1999/02/22-rdf-syntax-ns#' })}: ${pp.triples} triple`);
    }
    // Datasets are named by their endpoint URL (the shard typing the books is the one to query for `?b a :book`); no build path, no dataset URN.
    expect(whole).toContain(`subjects of class :book typed at <${url('library-shard4')}>: 8 entities here; :book\\#title 8 xsd:string`);
    expect(whole).toContain(`# VoID of <${url('library-shard2')}> (standard) from step build-file: the build's VoID file; 26 triples`);
    for (const t of [whole, ...pages]) expect([t.includes('urn:fkgqa'), t.includes(shards)]).toEqual([false, false]);
    await c.close();
  });

  it('summarises every VoID file of the build without a statement left over as Turtle, in fewer characters than the file', () => {
    const kinds = /^(dataset <|class |subjects of class |property |linkset <)/;
    let fileChars = 0;
    let summaryChars = 0;
    for (const e of registry.endpoints) {
      for (const file of [e.voidFile!, e.voidExtendedFile!]) {
        const turtle = fs.readFileSync(file, 'utf8');
        const lines = voidSummary(turtle, e, registry.endpoints, P).statements;
        // Every line is one of the summary's kinds: nothing of an fkgqa VoID file is left to the Turtle fallback.
        expect(
          lines.filter((l) => !kinds.test(l)),
          `${e.id} ${path.basename(file)}`,
        ).toEqual([]);
        // Each property partition of the file has its line, with its triple count.
        for (const pp of readVoid(turtle, e.id).propertyPartitions) {
          const line = `property ${sparqlIri(pp.property, { '': P, rdf: 'http://www.w3.org/1999/02/22-rdf-syntax-ns#' })}: ${pp.triples} triple`;
          expect(
            lines.some((l) => l.startsWith(line)),
            line,
          ).toBe(true);
        }
        fileChars += turtle.length;
        summaryChars += lines.join('\n').length;
      }
    }
    expect(summaryChars * 2).toBeLessThan(fileChars);
  });

  it('notes a pattern the VoID says cannot match beside the answer in void_tool and kgvoyager, never in baseline or high_level', async () => {
    // library-shard2 holds the books' titles without their rdf:type (typed at shard4) and no years.
    const q = `PREFIX : <${P}>\nSELECT ?t WHERE { SERVICE <${url('library-shard2')}> { ?b a :book ; :book\\#title ?t ; :book\\#year ?y } }`;
    const note = `VoID note: <${url('library-shard2')}> holds no :book\\#year triples and no instances of :book.`;
    const seen: Record<string, [string, number | undefined]> = {};
    for (const setup of ['baseline', 'high_level', 'void_tool', 'kgvoyager'] as const) {
      const c = await connect(registry, setup);
      const r = await c.call('run_sparql_query', { query: q });
      seen[setup] = [r.text, c.mcp.callLog.entries[0].rows];
      await c.close();
    }
    // The answer is the same everywhere (0 rows); only the setups with VoID get the note.
    expect(seen).toEqual({ baseline: ['0 rows\n?t', 0], high_level: ['0 rows\n?t', 0], void_tool: [`0 rows\n?t\n${note}`, 0], kgvoyager: [`0 rows\n?t\n${note}`, 0] });
    // A pattern that matches gets no note; one sent to the right shard neither (the oracle's way).
    const c = await connect(registry, 'void_tool');
    const ok = await c.call('run_sparql_query', {
      query: `PREFIX : <${P}>\nSELECT (COUNT(*) AS ?n) WHERE { SERVICE <${url('library-shard4')}> { ?b a :book ; :book\\#year ?y } SERVICE <${url('library-shard2')}> { ?b :book\\#title ?t } }`,
    });
    expect(ok.text).toBe('1 row\n?n\n8');
    await c.close();
  });
});

describe('fkgqa mcp / get_void_descriptions', () => {
  it('takes the build file first (no server path shown), and the extended variant with linksets', async () => {
    const c = await connect(registry, 'void_tool');
    const r = await c.call('get_void_descriptions', { endpoint: url('library-shard1') });
    expect(headingOf(r.text)).toBe(`# VoID of <${url('library-shard1')}> (standard) from step build-file: the build's VoID file; 106 triples`);
    expect(r.text).not.toContain(shards);
    const ext = await c.call('get_void_descriptions', { endpoints: [url('library-shard1')], variant: 'extended', format: 'text/turtle' });
    const linksets = readVoid(fs.readFileSync(path.join(shards, 'library', 'shard1_void_extended.ttl'), 'utf8'), 'x').linksets.length;
    expect(linksets).toBeGreaterThan(0);
    expect(headingOf(ext.text)).toMatch(new RegExp(`from step build-file: the build's VoID file; \\d+ triples, ${linksets} linksets$`));
    expect(ext.text).not.toContain(shards);
    // The extended VoID, datasets named by endpoint URL, is the build's file statement for statement once the URLs are named back.
    expect(readVoid(asBuildVoid(ext.text, registry), 'answer')).toEqual(readVoid(fs.readFileSync(path.join(shards, 'library', 'shard1_void_extended.ttl'), 'utf8'), 'build'));
    const unknown = await c.call('get_void_descriptions', { endpoint: 'http://example.org/sparql' });
    expect(unknown.text).toMatch(/^Error \(unknown-endpoint\): <http:\/\/example.org\/sparql> not registered/);
    await c.close();
  });

  it('walks the chain: well-known, service description, default graph, named graph, computed, then cache', async () => {
    const f = (n: string) => `${foreign.url}/${n}/sparql`;
    const bareUrl = bareServer.endpoint('library-shard1')!.url;
    const reg = registryFromUrls([url('library-shard2'), f('sd'), f('dg'), f('ng'), bareUrl]);
    const state = tmpDir('fkgqa-mcp-state-');
    const c = await connect(reg, 'void_tool', {}, state);
    const step = async (endpoint: string) => headingOf((await c.call('get_void_descriptions', { endpoint })).text);
    expect(await step(url('library-shard2'))).toMatch(new RegExp(`from step well-known: ${url('library-shard2').replace(/sparql$/, '.well-known/void')}; \\d+ triples`));
    expect(await step(f('sd'))).toMatch(new RegExp(`from step service-description: ${foreign.url}/docs/void.ttl; \\d+ triples`));
    expect(await step(f('dg'))).toMatch(/from step default-graph: .*\/dg\/sparql \(CONSTRUCT\); 7 triples$/);
    expect(await step(f('ng'))).toMatch(/from step named-graph: .*\/ng\/sparql \(CONSTRUCT in GRAPH \?g\); 7 triples$/);
    const computed = await c.call('get_void_descriptions', { endpoint: bareUrl, format: 'text/turtle' });
    const lines = computed.text.split('\n');
    const at = lines.findIndex((l) => l.startsWith('# VoID of'));
    expect(lines[at]).toMatch(/from step computed: .* \(SPARQL 1\.1 aggregate queries\); \d+ triples$/);
    expect(lines[at + 1]).toMatch(
      /^# earlier steps: cache: not cached \| build-file: no VoID file in the build \| well-known: HTTP 404 .* \| service-description: no VoID in the service description and no link to one \| default-graph: no VoID triples .* \| named-graph: no VoID triples/,
    );
    // The computed VoID equals the build's VoID of the same shard in every dataset-level count and property partition.
    const got = readVoid(asBuildVoid(computed.text, reg), 'computed');
    const want = readVoid(fs.readFileSync(path.join(shards, 'library', 'shard1_void.ttl'), 'utf8'), 'build');
    for (const k of ['triples', 'entities', 'classes', 'properties', 'distinctSubjects', 'distinctObjects'] as const) expect([k, got[k]]).toEqual([k, want[k]]);
    expect(got.triples).toBe(35);
    expect(got.propertyPartitions).toEqual(want.propertyPartitions);
    expect(got.classPartitions.map((p) => [p.class, p.entities])).toEqual([
      [`${P}author`, 5],
      [`${P}loan`, 3],
    ]);
    expect(await step(bareUrl)).toMatch(/from step cache \(produced by computed\)/);
    // The cache is on disk in the state folder: a new server finds it.
    const c2 = await connect(reg, 'void_tool', {}, state);
    expect(headingOf((await c2.call('get_void_descriptions', { endpoint: f('dg') })).text)).toMatch(/from step cache \(produced by default-graph\)/);
    expect(fs.readdirSync(path.join(state, 'mcp', 'void'))).toHaveLength(5);
    await c2.close();
    await c.close();
  });

  it('computes remote class partitions and linksets through the federation engine: the same VoID as the build file, statement for statement', { tags: ['slow'] }, async () => {
    const reg = registryFromEndpointsValue(bareServer.endpointsFile(), 'bare');
    // A generous step limit: the first federated query also starts the engine's thread.
    const c = await connect(reg, 'void_tool', { voidStepTimeoutMs: 60_000 }, null, true);
    let remote = 0;
    for (const e of reg.endpoints) {
      for (const variant of ['standard', 'extended'] as const) {
        const r = await c.call('get_void_descriptions', { endpoint: e.url, variant, format: 'text/turtle' });
        expect(headingOf(r.text)).toMatch(/from step computed/);
        expect(r.text).not.toContain('not counted');
        const got = readVoid(asBuildVoid(r.text, reg), 'computed');
        const want = readVoid(fs.readFileSync(path.join(shards, 'library', `${e.shard}_void${variant === 'extended' ? '_extended' : ''}.ttl`), 'utf8'), 'build');
        // Every count, partition (class, remote class, property, nested), linkset and the sentence; only the endpoint URL differs.
        expect({ ...got, endpoint: undefined }, `${e.id} ${variant}`).toEqual({ ...want, endpoint: undefined });
        remote += got.remoteClassPartitions.length;
      }
    }
    // The titles shard's :book partition, typed in the base shard (in both variants).
    expect(remote).toBe(2);
    await c.close();
  });
});

describe('fkgqa serve / federation endpoint', () => {
  const fed = () => new URL(url('library-shard1')).origin + '/federation/sparql';
  const post = (query: string, accept = 'application/sparql-results+json') =>
    fetch(fed(), { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', accept }, body: new URLSearchParams({ query }).toString() });
  it('answers SERVICE queries over the shard endpoints (SPARQL 1.1 Protocol), in the negotiated format', async () => {
    const q = `PREFIX : <${P}> SELECT ?title WHERE { SERVICE <${url('library-shard4')}> { ?b :book\\#year 2023 } SERVICE <${url('library-shard2')}> { ?b :book\\#title ?title } }`;
    const r = await post(q);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/sparql-results+json');
    expect(((await r.json()) as SparqlResults).results!.bindings.map((b) => b.title.value)).toEqual(['Andean Notebook']);
    const csv = await post(q, 'text/csv');
    expect(csv.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect((await csv.text()).trim().split(/\r?\n/)).toEqual(['title', 'Andean Notebook']);
    const sd = await fetch(fed(), { headers: { accept: 'text/turtle' } });
    expect(sd.status).toBe(200);
    expect(await sd.text()).toContain('fkgqa federation endpoint: SERVICE queries over 8 shard endpoints');
  });
  it('refuses unregistered SERVICE targets (403), queries without SERVICE (400) and updates (403)', async () => {
    const unknown = await post('SELECT * { SERVICE <http://example.org/sparql> { ?s ?p ?o } }');
    expect(unknown.status).toBe(403);
    expect(await unknown.text()).toMatch(/^unknown-endpoint: <http:\/\/example\.org\/sparql> is not a registered endpoint; nothing was sent/);
    const none = await post('SELECT * { ?s ?p ?o }');
    expect(none.status).toBe(400);
    const update = await fetch(fed(), { method: 'POST', headers: { 'content-type': 'application/sparql-update' }, body: 'INSERT DATA { <urn:a> <urn:b> <urn:c> }' });
    expect(update.status).toBe(403);
  });
  it('refuses a query joining two graphs (400 mixed-graphs) with the explanation run_sparql_query gives; serve --mix-graphs runs it', async () => {
    const [l1, o1] = [url('library-shard1'), url('observatory-shard1')];
    const q = `SELECT (COUNT(*) AS ?n) { { SERVICE <${l1}> { ?s ?p ?o } } UNION { SERVICE <${o1}> { ?s ?p ?o } } }`;
    const why = `the query names endpoints of 2 knowledge graphs (library: <${l1}>; observatory: <${o1}>); nothing was sent. The graphs reuse IRIs (the same class or property IRI names different data in each), so a query may name endpoints of one graph only: keep the SERVICE clauses of the graph the question is about`;
    const r = await post(q);
    expect(r.status).toBe(400);
    expect(await r.text()).toBe(`mixed-graphs: ${why} (fkgqa serve --mix-graphs lets such a query run)\n`);
    const c = await connect(registry);
    try {
      expect(await c.call('run_sparql_query', { query: q })).toEqual({ isError: true, text: `Error (mixed-graphs): ${why}` });
    } finally {
      await c.close();
    }
    const mixing = await serve({ shards, writeFiles: false, mixGraphs: true });
    try {
      const m = await fetch(new URL(mixing.endpoint('library-shard1')!.url).origin + '/federation/sparql', {
        method: 'POST',
        headers: { 'content-type': 'application/sparql-query', accept: 'application/sparql-results+json' },
        body: q.replaceAll(l1, mixing.endpoint('library-shard1')!.url).replaceAll(o1, mixing.endpoint('observatory-shard1')!.url),
      });
      expect(m.status).toBe(200);
      const triples = (id: string) =>
        openBuild(shards, { checkShards: false })
          .manifests.flatMap((x) => x.shards)
          .find((s) => s.endpoint === id)!.triples;
      expect(Number(((await m.json()) as SparqlResults).results!.bindings[0].n.value)).toBe(triples('library-shard1') + triples('observatory-shard1'));
    } finally {
      await mixing.close();
    }
  }, 120_000);
});

/**
 * The MCP server over Streamable HTTP (setup void_tool) of the transport and malformed-message tests, started
 * once per file (it starts its federation engine's thread as it listens), with the messages it refused.
 */
let httpMcp: { server: Awaited<ReturnType<typeof serveMcpHttp>>; refused: string[] } | undefined;
async function mcpOverHttp(): Promise<{ server: Awaited<ReturnType<typeof serveMcpHttp>>; refused: string[] }> {
  if (!httpMcp) {
    const refused: string[] = [];
    httpMcp = { server: await serveMcpHttp({ registry, setup: 'void_tool', callLog: null, state: null, onRefused: (why) => refused.push(why) }), refused };
  }
  return httpMcp;
}

describe('fkgqa mcp / transports', () => {
  it('serves Streamable HTTP on loopback', async () => {
    const { server: h } = await mcpOverHttp();
    expect(h.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    const client = new Client({ name: 'test', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(h.url)));
    expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(['get_void_descriptions', 'run_sparql_query']);
    const logged = h.context.callLog.entries.length;
    const r = (await client.callTool({ name: 'run_sparql_query', arguments: { query: `ASK { SERVICE <${url('observatory-shard1')}> { ?s ?p ?o } }` } })) as { content: { text: string }[] };
    expect(r.content[0].text.split('\n')[0]).toMatch(/^ASK answer: true/);
    expect(h.context.callLog.entries.length - logged).toBe(1);
    await client.close();
    const notFound = await fetch(h.url.replace(/\/mcp$/, '/other'));
    expect(notFound.status).toBe(404);
  });

  it('runs as `node bin/fkgqa.js mcp` over stdio, logging calls to --call-log', async () => {
    const dir = tmpDir('fkgqa-mcp-stdio-');
    const endpoints = path.join(dir, 'endpoints.json');
    fs.writeFileSync(endpoints, JSON.stringify(server.endpointsFile()));
    const log = path.join(dir, 'calls.jsonl');
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [path.join(ROOT, 'bin/fkgqa.js'), 'mcp', '--endpoints', endpoints, '--setup', 'high_level', '--call-log', log, '-q'],
      stderr: 'pipe',
    });
    const client = new Client({ name: 'test', version: '1' });
    await client.connect(transport);
    try {
      const tools = (await client.listTools()).tools;
      expect(tools.map((t) => t.name)).toEqual(['run_sparql_query']);
      // high_level: the descriptions are in the tool description, which every client shows its model.
      expect(tools[0].description).toContain(`- ${url('library-shard1')} — ${registry.endpoints[0].description!}`);
      const r = (await client.callTool({
        name: 'run_sparql_query',
        arguments: { query: `SELECT (COUNT(*) AS ?n) { SERVICE <${url('library-shard4')}> { ?b a <${P}book> } }`, format: JSON_RESULTS },
      })) as { content: { text: string }[] };
      expect(previewOf(r.content[0].text).results!.bindings[0].n.value).toBe('8');
      // A SERVICE URL from elsewhere (another port): the refusal names the URL with that path and the registered endpoints,
      // but not the endpoints file the registry was read from: an agent sees no file path of the server (fkgqa query does).
      const other = (await client.callTool({ name: 'run_sparql_query', arguments: { query: `SELECT * { SERVICE <http://localhost:1/library-shard1/sparql> { ?s ?p ?o } }` } })) as {
        content: { text: string }[];
      };
      expect(other.content[0].text).toBe(
        `Error (unknown-endpoint): <http://localhost:1/library-shard1/sparql> is not a registered endpoint; nothing was sent. Did you mean <${url('library-shard1')}> (library-shard1, the same path on another host or port)? ` +
          `SERVICE may name only the registered endpoints:\n${registry.endpoints.map((e) => `  ${e.url}  (${e.id})`).join('\n')}`,
      );
      expect([other.content[0].text.includes(dir), other.content[0].text.includes('endpoints.json')]).toEqual([false, false]);
    } finally {
      await client.close();
    }
    const lines = fs
      .readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({ tool: 'run_sparql_query', setup: 'high_level', route: 'direct', rows: 1, endpoints: [url('library-shard4')] });
  });
});

/**
 * Malformed JSON-RPC messages and what each must get (transport.ts), the same on stdio and
 * HTTP; after them a tools/list still answers (the server stayed up). The 20 MB message carries
 * id 10 before its params, so its reply names that id.
 */
const HOSTILE: { name: string; body: string; code: number; id: number | null }[] = [
  { name: 'not JSON', body: '{"jsonrpc":"2.0","id":1,"method":', code: -32700, id: null },
  { name: 'no jsonrpc member', body: '{"id":5,"method":"tools/list"}', code: -32600, id: 5 },
  { name: 'method not a string', body: '{"jsonrpc":"2.0","id":6,"method":7}', code: -32600, id: 6 },
  { name: 'params a string', body: '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":"x"}', code: -32602, id: 2 },
  { name: 'params an array', body: '{"jsonrpc":"2.0","id":3,"method":"tools/list","params":[1]}', code: -32602, id: 3 },
  // The SDK dropped this one without an answer (the client waited forever) ...
  { name: '_meta a string', body: '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"run_sparql_query","arguments":{"query":"ASK {}"},"_meta":"x"}}', code: -32602, id: 7 },
  // ... and answered this one -32603 Internal error.
  { name: 'cursor a number', body: '{"jsonrpc":"2.0","id":8,"method":"tools/list","params":{"cursor":5}}', code: -32602, id: 8 },
];
const BIG = `{"jsonrpc":"2.0","id":10,"method":"tools/list","params":{"x":"${'a'.repeat(20_000_000)}"}}`;

describe('fkgqa mcp / bad options are input errors at start (exit 2), not failures later', () => {
  it("a port in use or a foreign --host, a prompts folder without the setup's file, a folder as call log", async () => {
    const blocker = http.createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const port = (blocker.address() as AddressInfo).port;
    try {
      await expect(serveMcpHttp({ registry, setup: 'baseline', callLog: null, state: null, port })).rejects.toThrow(`port ${port} on 127.0.0.1 is in use (another fkgqa serve, or another server)`);
    } finally {
      blocker.close();
    }
    await expect(serveMcpHttp({ registry, setup: 'baseline', callLog: null, state: null, host: '192.0.2.1' })).rejects.toThrow('--host 192.0.2.1 is not an address of this machine');
    const dir = tmpDir('fkgqa-mcp-opts-');
    // Before: the server started, prompts/get answered "Method not found", every tool call failed as an infrastructure error.
    await expect(createMcpServer({ registry, setup: 'void_tool', callLog: null, state: null, promptsDir: path.join(dir, 'none') })).rejects.toThrow(
      `${path.join(dir, 'none')}: --prompts: no such folder`,
    );
    await expect(createMcpServer({ registry, setup: 'void_tool', callLog: null, state: null, promptsDir: dir })).rejects.toThrow(
      `${dir}: --prompts: the folder has no void_tool.md (the prompt of setup void_tool)`,
    );
    await expect(createMcpServer({ registry, setup: 'baseline', state: null, callLog: dir })).rejects.toThrow(`${dir}: the call log is a folder: give the name of a JSON-lines file (--call-log FILE)`);
  });
});

describe('fkgqa mcp / malformed JSON-RPC messages', () => {
  it('stdio: parse error -32700, invalid request -32600, invalid params -32602, a 20 MB line refused; the server keeps serving', { tags: ['slow'] }, async () => {
    const dir = tmpDir('fkgqa-mcp-rpc-');
    const endpoints = path.join(dir, 'endpoints.json');
    fs.writeFileSync(endpoints, JSON.stringify(server.endpointsFile()));
    const child = spawn(process.execPath, [path.join(ROOT, 'bin/fkgqa.js'), 'mcp', '--endpoints', endpoints, '--call-log', path.join(dir, 'calls.jsonl')], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    const exited = new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
    // Replies by id (null: the replies without an id, in order), each waited for as an event.
    const replies: { id: unknown; error?: { code: number; message: string }; result?: { tools?: { name: string }[] } }[] = [];
    const waiters: (() => void)[] = [];
    let buf = '';
    child.stdout.on('data', (d: Buffer) => {
      buf += d.toString();
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (line.trim()) replies.push(JSON.parse(line));
        for (const w of waiters.splice(0)) w();
      }
    });
    const until = async (n: number) => {
      while (replies.length < n) await new Promise<void>((r) => waiters.push(r));
    };
    const send = (s: string) => new Promise<void>((r) => child.stdin.write(s + '\n', () => r()));
    try {
      await send(JSON.stringify(INIT));
      await until(1);
      expect(replies[0]).toMatchObject({ id: 0, result: { serverInfo: { name: 'fkgqa' } } });
      await send('{"jsonrpc":"2.0","method":"notifications/initialized"}');
      for (const h of HOSTILE) await send(h.body);
      await send(BIG);
      await send('{"jsonrpc":"2.0","id":11,"method":"tools/list"}');
      await until(1 + HOSTILE.length + 2);
      expect(replies.slice(1, 1 + HOSTILE.length).map((r) => [r.id, r.error?.code])).toEqual(HOSTILE.map((h) => [h.id, h.code]));
      expect(replies[1].error!.message).toMatch(/^Parse error: /);
      expect(replies[4].error!.message).toBe('Invalid params: the params of tools/call must be an object, not a string');
      expect(replies[6].error!.message).toBe('Invalid params: params._meta: Invalid input: expected object, received string');
      expect(replies[7].error!.message).toBe('Invalid params: params.cursor: Invalid input: expected string, received number');
      const big = replies[1 + HOSTILE.length];
      expect(big).toMatchObject({ id: 10, error: { code: -32600 } });
      expect(big.error!.message).toBe(`Invalid Request: the message has ${BIG.length} bytes, more than the limit of ${4 << 20}; it was dropped`);
      const list = replies[2 + HOSTILE.length];
      expect(list.id).toBe(11);
      expect(list.result!.tools!.map((t) => t.name)).toEqual(['run_sparql_query']);
      expect(child.exitCode).toBe(null);
    } finally {
      child.stdin.end();
    }
    // Closing stdin ends the session: a clean exit, and each refusal named on stderr.
    expect(await exited).toBe(0);
    expect(stderr).toContain(`refused a message: a message of ${BIG.length} bytes (limit ${4 << 20})`);
    expect(stderr).toContain('refused a message: not JSON');
  });

  it('HTTP: the same errors with 400 (413 for the 20 MB body); the server keeps serving', async () => {
    const { server: h, refused: all } = await mcpOverHttp();
    const before = all.length;
    const H: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' };
    const init = await fetch(h.url, { method: 'POST', headers: H, body: JSON.stringify(INIT) });
    expect(init.status).toBe(200);
    await init.text();
    const sid = init.headers.get('mcp-session-id');
    const S = { ...H, ...(sid ? { 'mcp-session-id': sid } : {}) };
    for (const x of HOSTILE) {
      const r = await fetch(h.url, { method: 'POST', headers: S, body: x.body });
      expect([x.name, r.status]).toEqual([x.name, 400]);
      expect(await r.json()).toMatchObject({ jsonrpc: '2.0', id: x.id, error: { code: x.code } });
    }
    // Sent whole before anything is read (see postWhole): the server reads and drops the rest of the body before it
    // closes, so the 413 is there to read: closing at once on unread bytes makes the kernel reset the connection,
    // and a client still sending, or slow to read (fetch at load 20), would lose the answer to ECONNRESET.
    const big = await postWhole(h.url, S, BIG);
    expect([big.sent, big.read, big.status]).toEqual(['sent', 'end', 'HTTP/1.1 413 Payload Too Large']);
    expect(JSON.parse(big.body)).toEqual({
      jsonrpc: '2.0',
      id: 10,
      error: { code: -32600, message: `Invalid Request: the message has ${BIG.length} bytes, more than the limit of ${4 << 20}; it was dropped` },
    });
    const list = await fetch(h.url, { method: 'POST', headers: S, body: '{"jsonrpc":"2.0","id":11,"method":"tools/list"}' });
    expect(list.status).toBe(200);
    const text = await list.text();
    // JSON or one SSE event, holding the answer to id 11.
    const msg = JSON.parse(text.trim().startsWith('{') ? text : /^data: (.*)$/m.exec(text)![1]) as { id: number; result: { tools: { name: string }[] } };
    expect([msg.id, msg.result.tools.map((t) => t.name).sort()]).toEqual([11, ['get_void_descriptions', 'run_sparql_query']]);
    expect(all.slice(before)).toEqual([
      'not JSON',
      '"jsonrpc" is not "2.0"',
      '"method" is not a string',
      'params of tools/call are a string',
      'params of tools/list are an array',
      'params of tools/call: params._meta: Invalid input: expected object, received string',
      'params of tools/list: params.cursor: Invalid input: expected string, received number',
    ]);
  });
});

export type { FkgqaMcpServer };

/**
 * POSTs `body` over a raw connection, reading nothing until all of it was written (as a client busy
 * sending, or slow to read, does): what the write ended with ('sent' or the error code), how the
 * answer ended ('end', or the error code of a reset, which empties the unread answer), and the
 * answer's status line and body.
 */
async function postWhole(url: string, headers: Record<string, string>, body: string): Promise<{ sent: string; read: string; status: string; body: string }> {
  const u = new URL(url);
  const socket = net.connect(Number(u.port), u.hostname);
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  socket.pause();
  const head = [`POST ${u.pathname} HTTP/1.1`, `Host: ${u.host}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`), `Content-Length: ${Buffer.byteLength(body)}`, '', ''].join('\r\n');
  const sent = await new Promise<string>((resolve) => {
    socket.once('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
    socket.write(head);
    socket.write(body, (e) => resolve(e ? ((e as NodeJS.ErrnoException).code ?? e.message) : 'sent'));
  });
  let answer = '';
  const read = await new Promise<string>((resolve) => {
    if (socket.destroyed) return resolve('destroyed');
    socket.on('data', (c: Buffer) => (answer += c.toString('utf8')));
    socket.once('end', () => resolve('end'));
    socket.once('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
    socket.once('close', () => resolve('closed'));
    socket.resume();
  });
  socket.destroy();
  return { sent, read, status: answer.split('\r\n')[0], body: answer.slice(answer.indexOf('\r\n\r\n') + 4) };
}

describe('fkgqa mcp / signals end the stdio server with stdin still open (130/143), releasing the federation engine', () => {
  it('idle after the engine warmed up and a call was answered: SIGTERM exits 143', async () => {
    const dir = tmpDir('fkgqa-mcp-sig-');
    const endpoints = path.join(dir, 'endpoints.json');
    fs.writeFileSync(endpoints, JSON.stringify(server.endpointsFile()));
    const c = stdioChild(['--endpoints', endpoints, '--call-log', path.join(dir, 'calls.jsonl')]);
    try {
      await c.start();
      await c.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'run_sparql_query', arguments: { query: `ASK { SERVICE <${url('library-shard1')}> { ?s ?p ?o } }` } } });
      await c.until(() => c.replies.has(1) && c.stderr().includes('fkgqa mcp: federation engine comunica ready'));
      expect(c.replies.get(1)!.result!.content![0].text).toMatch(/^ASK answer: true/);
      c.child.kill('SIGTERM');
      expect(await c.exited).toEqual({ code: 143, signal: null });
      expect(c.stderr()).toContain('fkgqa mcp: interrupted (SIGTERM) after 1 tool calls; stopping the federation engine');
      expect(fs.readFileSync(path.join(dir, 'calls.jsonl'), 'utf8').trim().split('\n')).toHaveLength(1);
    } finally {
      c.child.kill('SIGKILL');
    }
  });
  // During a call (SIGINT 130 on a direct query, SIGTERM 143 on a federated one) and jena as the engine
  // (a JVM's start): tests/mcp-signals.slow.test.ts.
});
