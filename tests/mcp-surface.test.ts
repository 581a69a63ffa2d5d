// @module-tag split-tiers (tests/tiers.ts: the tests tagged slow run in npm run test:slow)
// The information surface of each setup, graphs kept apart, the
// `_meta["fkgqa/error"]` of every error class, paging of the exploration tools and the prompts
// on two graphs of the real corpus that reuse IRIs: concert_singer and singer
// (both have the class :singer, with 6 and 8 instances).
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { InMemoryTransport } from '@modelcontextprotocol/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { filterGraphs, registryFromEndpointsValue, type EndpointRegistry, type RegisteredEndpoint } from '../src/federation/registry.js';
import type { McpLimits, Setup } from '../src/mcp/context.js';
import { createMcpServer, type McpServerOptions } from '../src/mcp/server.js';
import { toolSurfaceDigest } from '../src/eval/record.js';
import { McpToolProvider } from '../src/eval/tools.js';
import { ERROR_META_KEY, infrastructureMessage, type ToolErrorMeta } from '../src/mcp/tool-error.js';
import { DEFAULT_PARTITION_OPTIONS, partition } from '../src/partition/index.js';
import { serve, type ShardServer } from '../src/serve/server.js';
import { HAS_SPIDER, ROOT, SPIDER, tmpDir } from './helpers.js';

const O = 'http://valuenet/ontop/';

/**
 * SPARQL endpoints that fail in every way an endpoint can (node http), at `/<name>/sparql`:
 * `slow` never answers a query about `?slow` (and answers others with no rows), `e500` answers 500, `e400` 400, `limit` 503 saying it stopped the query at
 * its time limit of 100 ms once 100 ms have passed, `early` the same of 30000 ms at once, `moved` redirects (307), `big` answers 2 KB of results,
 * `bad` answers 200 with a body that is not SPARQL JSON results.
 */
async function failingEndpoints(): Promise<{ base: string; close(): Promise<void> }> {
  const s = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => answer(req, res, Buffer.concat(chunks).toString()));
  });
  const answer = (req: http.IncomingMessage, res: http.ServerResponse, body: string) => {
    const name = /^\/(\w+)\/sparql/.exec(req.url ?? '')?.[1];
    // `slow` never answers a query about ?slow; other queries (the exploration tools' index queries) get no rows at once.
    if (name === 'slow')
      return void (body.includes('slow') ? undefined : res.writeHead(200, { 'content-type': 'application/sparql-results+json' }).end('{"head":{"vars":[]},"results":{"bindings":[]}}'));
    if (name === 'e500') return void res.writeHead(500, { 'content-type': 'text/plain' }).end('internal failure of the store');
    if (name === 'e400') return void res.writeHead(400, { 'content-type': 'text/plain' }).end('this endpoint cannot parse the query');
    // `limit` answers when its limit has passed, as a server stopping a query does; `early` names a limit that has not (the clock denies it: docs/serving.md).
    if (name === 'limit') return void setTimeout(() => res.writeHead(503, { 'content-type': 'text/plain' }).end('the query reached the time limit of 100 ms'), 100);
    if (name === 'early') return void res.writeHead(503, { 'content-type': 'text/plain' }).end('the query reached the time limit of 30000 ms');
    if (name === 'moved') return void res.writeHead(307, { location: 'http://example.org/sparql' }).end();
    if (name === 'big')
      return void res
        .writeHead(200, { 'content-type': 'application/sparql-results+json' })
        .end(JSON.stringify({ head: { vars: ['x'] }, results: { bindings: Array.from({ length: 40 }, (_, i) => ({ x: { type: 'literal', value: `value ${i}` } })) } }));
    if (name === 'bad') return void res.writeHead(200, { 'content-type': 'application/sparql-results+json' }).end('<html>not results</html>');
    res.writeHead(404).end();
  };
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  return { base: `http://127.0.0.1:${(s.address() as AddressInfo).port}`, close: () => new Promise<void>((r) => (s.close(() => r()), s.closeAllConnections())) };
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const s = http.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

const foreignEndpoint = (url: string): RegisteredEndpoint => ({ id: new URL(url).pathname.split('/')[1], url, graph: null, shard: null, description: null, voidFile: null, voidExtendedFile: null });

interface Result {
  text: string;
  isError: boolean;
  meta?: ToolErrorMeta;
}

/** An in-process client of a new server. */
async function connect(options: McpServerOptions) {
  const mcp = await createMcpServer({ callLog: null, state: null, ...options });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await mcp.server.connect(a);
  const client = new Client({ name: 'test', version: '1' });
  await client.connect(b);
  const call = async (name: string, args: Record<string, unknown>): Promise<Result> => {
    const r = (await client.callTool({ name, arguments: args })) as { content: { text: string }[]; isError?: boolean; _meta?: Record<string, ToolErrorMeta> };
    return { text: r.content.map((c) => c.text).join('\n'), isError: !!r.isError, ...(r._meta?.[ERROR_META_KEY] ? { meta: r._meta[ERROR_META_KEY] } : {}) };
  };
  return { mcp, client, call, close: async () => (await client.close(), await mcp.close()) };
}

/**
 * Every text a connected server shows besides tool answers, with where it was found: instructions,
 * each tool (name, title, description, input schema), each resource listed and its contents, each
 * prompt listed and its text (got with `promptArgs`).
 */
async function informationSurface(client: Client, promptArgs: Record<string, string> = {}): Promise<{ where: string; text: string }[]> {
  const out = [{ where: 'instructions', text: client.getInstructions() ?? '' }];
  for (const t of (await client.listTools()).tools)
    out.push({ where: `tool ${t.name}`, text: JSON.stringify({ name: t.name, title: t.title, description: t.description, inputSchema: t.inputSchema }) });
  const caps = client.getServerCapabilities() ?? {};
  if (caps.resources) {
    for (const r of (await client.listResources()).resources) {
      out.push({ where: `resource ${r.uri} (listed)`, text: JSON.stringify(r) });
      for (const c of (await client.readResource({ uri: r.uri })).contents) out.push({ where: `resource ${r.uri}`, text: 'text' in c ? c.text : '' });
    }
  }
  if (caps.prompts) {
    for (const p of (await client.listPrompts()).prompts) {
      out.push({ where: `prompt ${p.name} (listed)`, text: JSON.stringify(p) });
      const g = await client.getPrompt({ name: p.name, arguments: promptArgs });
      out.push({ where: `prompt ${p.name}`, text: [g.description ?? '', ...g.messages.map((m) => (m.content.type === 'text' ? m.content.text : ''))].join('\n') });
    }
  }
  return out;
}

describe.skipIf(!HAS_SPIDER)('fkgqa mcp / two graphs that reuse IRIs (concert_singer, singer)', () => {
  let server: ShardServer;
  let failing: { base: string; close(): Promise<void> };
  let shards: string;
  let registry: EndpointRegistry; // both graphs
  let withFailing: EndpointRegistry; // both graphs and the failing endpoints
  let down: string;
  const url = (id: string) => server.endpoint(id)!.url;
  let descriptions: string[];

  beforeAll(async () => {
    shards = path.join(tmpDir('fkgqa-mcp-surface-'), 'shards');
    await partition({ ...DEFAULT_PARTITION_OPTIONS, source: SPIDER, kgs: ['concert_singer', 'singer'], out: shards });
    server = await serve({ shards, writeFiles: false });
    failing = await failingEndpoints();
    down = `http://127.0.0.1:${await closedPort()}/down/sparql`;
    registry = registryFromEndpointsValue(server.endpointsFile(), 'test');
    withFailing = {
      ...registry,
      endpoints: [...registry.endpoints, ...['slow', 'e500', 'e400', 'limit', 'early', 'moved', 'big', 'bad'].map((n) => foreignEndpoint(`${failing.base}/${n}/sparql`)), foreignEndpoint(down)],
    };
    descriptions = registry.endpoints.map((e) => e.description!);
  });

  afterAll(async () => {
    await server?.close();
    await failing?.close();
  });

  it('the build is what the tests assume: 9 endpoints, each with a catalogue description', () => {
    expect(registry.endpoints.map((e) => e.id)).toEqual([
      'concert_singer-shard1',
      'concert_singer-shard2',
      'concert_singer-shard3',
      'concert_singer-shard4',
      'concert_singer-shard5',
      'singer-shard1',
      'singer-shard2',
      'singer-shard3',
      'singer-shard4',
    ]);
    expect(descriptions.every((d) => d.startsWith('Data about '))).toBe(true);
  });

  /**
   * Every text a server of `setup` can produce: its surface (instructions, tools, resources,
   * prompts) and the answer of a call of each error class of every tool, plus some answers.
   */
  /** The texts of `everyText` per setup and scope, computed once (the leak test, then the error classes). */
  const cache = new Map<string, Awaited<ReturnType<typeof everyText>>>();
  async function everyTextOnce(setup: Setup, scope: string, reg: EndpointRegistry) {
    if (!cache.has(`${setup} ${scope}`)) cache.set(`${setup} ${scope}`, await everyText(setup, reg));
    return cache.get(`${setup} ${scope}`)!;
  }

  async function everyText(setup: Setup, reg: EndpointRegistry, limits: Partial<McpLimits> = {}) {
    // The exploration tools' index queries wait for the endpoint that never answers: short limits.
    // minTimeoutMs 250: the `timeout` call below waits its whole limit on an endpoint that never answers, in each of the 8 setups and scopes.
    const c = await connect({
      registry: reg,
      setup,
      limits: { maxResultBytes: 1000, minTimeoutMs: 250, ...limits },
      kgvoyager: setup === 'kgvoyager' ? { options: { indexTimeoutMs: 1500, timeoutMs: 2500 } } : false,
    });
    const texts: { where: string; text: string; meta?: ToolErrorMeta; isError?: boolean }[] = (await informationSurface(c.client, { question: 'How many singers are there?' })).map((t) => ({ ...t }));
    const multi = new Set(reg.endpoints.map((e) => e.graph).filter((g) => g !== null)).size > 1;
    if (multi)
      for (const t of await informationSurface(c.client, { question: 'How many singers?', graph: 'singer' }))
        if (t.where.startsWith('prompt')) texts.push({ ...t, where: `${t.where} (graph singer)` });
    const q = (name: string, query: string, extra: Record<string, unknown> = {}) => ({ name, tool: 'run_sparql_query', args: { query, ...extra } });
    const s1 = url('singer-shard1');
    const s3 = url('singer-shard3');
    const f = (n: string) => `${failing.base}/${n}/sparql`;
    const calls: { name: string; tool: string; args: Record<string, unknown> }[] = [
      q('too-long', 'x'.repeat(9000)),
      q('too-deep', `SELECT * { SERVICE <${s1}> { ${'{'.repeat(70)} ?s ?p ?o ${'}'.repeat(70)} } }`),
      q('update', 'INSERT DATA { <urn:a> <urn:b> <urn:c> }'),
      q('syntax', `SELECT * WHERE { SERVICE <${s1}> { ?s ?p ?o } FILTER(?o > ) }`),
      q('syntax (found by the endpoint)', `SELECT * WHERE { SERVICE <${s1}> { ?s ?p } }`),
      q('unknown-prefix', `SELECT * WHERE { SERVICE <${s1}> { ?s a :singer } }`),
      q('no-service', 'SELECT * WHERE { ?s ?p ?o }'),
      q('variable-service', 'SELECT * WHERE { SERVICE ?e { ?s ?p ?o } }'),
      q('unknown-endpoint', 'SELECT * WHERE { SERVICE <http://example.org/sparql> { ?s ?p ?o } }'),
      q('outside-service', `SELECT * WHERE { SERVICE <${s1}> { ?s ?p ?o } ?o ?q ?r }`),
      q('nested-service', `SELECT * WHERE { SERVICE <${s1}> { SELECT * { SERVICE <${s3}> { ?s ?p ?o } } } }`),
      ...(multi ? [q('mixed-graphs', `SELECT * WHERE { SERVICE <${s1}> { ?s a <${O}singer> } SERVICE <${url('concert_singer-shard4')}> { ?s ?p ?o } }`)] : []),
      q('timeout', `SELECT * WHERE { SERVICE <${f('slow')}> { ?slow ?p ?o } }`, { timeout_ms: 250 }),
      q("timeout (the endpoint's own limit)", `SELECT * WHERE { SERVICE <${f('limit')}> { ?s ?p ?o } }`),
      q('endpoint (a time limit the clock denies)', `SELECT * WHERE { SERVICE <${f('early')}> { ?s ?p ?o } }`),
      q('endpoint 5xx', `SELECT * WHERE { SERVICE <${f('e500')}> { ?s ?p ?o } }`),
      q('endpoint-rejected', `SELECT * WHERE { SERVICE <${f('e400')}> { ?s ?p ?o } }`),
      q('redirect', `SELECT * WHERE { SERVICE <${f('moved')}> { ?s ?p ?o } }`),
      q('too-large', `SELECT * WHERE { SERVICE <${f('big')}> { ?s ?p ?o } }`),
      q('not results', `SELECT * WHERE { SERVICE <${f('bad')}> { ?s ?p ?o } }`),
      q('unreachable', `SELECT * WHERE { SERVICE <${down}> { ?s ?p ?o } }`),
      // The same text in every setup; a federation engine takes seconds to start: asked with two graphs only.
      ...(multi ? [q('federation, an endpoint down', `SELECT * WHERE { SERVICE <${down}> { ?s ?p ?o } SERVICE <${s3}> { ?s ?p ?o } }`, { timeout_ms: 60_000 })] : []),
      q('invalid-arguments', `SELECT * WHERE { SERVICE <${s1}> { ?s ?p ?o } }`, { timeout_ms: 5 }),
      q('an answer', `SELECT (COUNT(*) AS ?n) WHERE { SERVICE <${s1}> { ?s a <${O}singer> } }`),
    ];
    if (setup === 'void_tool') {
      calls.push(
        { name: 'no-endpoint', tool: 'get_void_descriptions', args: {} },
        { name: 'too-many', tool: 'get_void_descriptions', args: { endpoints: Array.from({ length: 26 }, (_, i) => `http://127.0.0.1:9/x${i}/sparql`) } },
        { name: 'unknown-endpoint (void)', tool: 'get_void_descriptions', args: { endpoint: 'http://example.org/sparql' } },
        { name: 'no-void', tool: 'get_void_descriptions', args: { endpoint: down } },
        { name: 'a VoID description', tool: 'get_void_descriptions', args: { endpoint: s3, variant: 'extended' } },
      );
    }
    if (setup === 'kgvoyager') {
      const k = (name: string, tool: string, args: Record<string, unknown>) => ({ name, tool, args });
      calls.push(
        k('search: no term', 'search_all_classes', { term: ' ' }),
        k('search: no term (properties)', 'search_all_properties', { term: '' }),
        k('lookup: no class', 'lookup_class_instances', { class: ' ' }),
        k('property usage: no property', 'explore_property_usage', { property: ' ' }),
        k('entity relations: neither', 'explore_entity_relations', {}),
        k('execute_query: invalid-arguments', 'execute_query', { query: 'ASK {}', timeout_ms: 5 }),
        k('execute_query: no-service', 'execute_query', { query: 'ASK { ?s ?p ?o }' }),
        k('search', 'search_all_classes', { term: 'singer' }),
        k('search properties', 'search_all_properties', { term: 'name' }),
        k('lookup', 'lookup_class_instances', { class: `${O}singer` }),
        k('property usage', 'explore_property_usage', { property: `${O}singer#name` }),
        k('entity', 'explore_entity_relations', { entity: `${O}singer/singer_id=1` }),
        k('literal', 'explore_entity_relations', { literal: 'France' }),
      );
    }
    for (const x of calls) {
      const t0 = Date.now();
      const r = await c.call(x.tool, x.args);
      if (process.env.FKGQA_TIMES) console.log(setup, x.name, Date.now() - t0);
      texts.push({ where: `${x.tool}: ${x.name}`, text: r.text, isError: r.isError, ...(r.meta ? { meta: r.meta } : {}) });
    }
    await c.close();
    return texts;
  }

  /** The texts without the natural-language description inside a VoID document (`dcterms:description`, which VoID has, paper section 2; the last item of a summary's dataset line). */
  const outsideVoid = (t: { where: string; text: string; isError?: boolean }) =>
    t.where.startsWith('get_void_descriptions') && !t.isError ? t.text.replace(/^(dataset <[^>]+>.*); "[^"]*"$/gm, '$1') : t.text;

  it('each setup shows exactly what the paper gives it: no description outside high_level, short errors, its own tools only (leak test)', { tags: ['slow'] }, async () => {
    const counts: Record<string, number> = {};
    const tools: Record<string, string[]> = {};
    for (const setup of ['baseline', 'high_level', 'void_tool', 'kgvoyager'] as const) {
      for (const [scope, reg] of [
        ['two graphs', withFailing],
        ['one graph', { ...filterGraphs(registry, ['singer']), endpoints: [...filterGraphs(registry, ['singer']).endpoints, ...withFailing.endpoints.filter((e) => e.graph === null)] }],
      ] as const) {
        const texts = await everyTextOnce(setup, scope, reg);
        counts[`${setup}, ${scope}`] = texts.length;
        const all = texts.map((t) => `${t.where}\n${outsideVoid(t)}`).join('\n\n');
        const descriptionsShown = descriptions.filter((d) => all.includes(d));
        if (setup === 'high_level') {
          // Every description of the scope's endpoints, in the tool description (which every client shows).
          const runTool = texts.find((t) => t.where === 'tool run_sparql_query')!.text;
          for (const e of reg.endpoints.filter((x) => x.description)) expect(runTool).toContain(`${e.url} — ${e.description}`);
        } else {
          expect(descriptionsShown, `${setup}, ${scope}`).toEqual([]);
          expect(all, `${setup}, ${scope}`).not.toContain('Data about');
        }
        // Errors are short and name no description in any setup.
        for (const t of texts.filter((x) => x.isError)) {
          expect(t.text.length, t.where).toBeLessThan(2500);
          expect(t.text, t.where).not.toContain('Data about');
        }
        // The endpoint list reaches every client: in run_sparql_query's description, each URL of the scope.
        const runTool = texts.find((t) => t.where === 'tool run_sparql_query')!.text;
        for (const e of reg.endpoints) expect(runTool).toContain(e.url);
        // Only the setup's tools, and no text names another setup's tools.
        tools[setup] = texts
          .filter((t) => t.where.startsWith('tool '))
          .map((t) => t.where.slice(5))
          .sort();
        if (setup !== 'void_tool') expect(all).not.toContain('get_void_descriptions');
        if (setup !== 'kgvoyager') expect(all).not.toMatch(/search_all_classes|explore_entity_relations/);
        // One graph (what fkgqa eval gives a run): nothing of the other graph.
        if (scope === 'one graph') {
          expect(all).not.toContain('concert_singer');
          expect(all).not.toContain('reuse IRIs');
        }
      }
    }
    expect(tools).toEqual({
      baseline: ['run_sparql_query'],
      high_level: ['run_sparql_query'],
      void_tool: ['get_void_descriptions', 'run_sparql_query'],
      kgvoyager: ['execute_query', 'explore_entity_relations', 'explore_property_usage', 'lookup_class_instances', 'run_sparql_query', 'search_all_classes', 'search_all_properties'],
    });
    // Surface (instructions, 1–7 tools, resource listed and read, prompt listed and got) plus 22 calls of run_sparql_query
    // (24 with two graphs: mixed-graphs, a federated one); void_tool 5 more, kgvoyager 13 more; two graphs: the prompt once more for one graph.
    expect(counts).toEqual({
      'baseline, two graphs': 32,
      'baseline, one graph': 28,
      'high_level, two graphs': 32,
      'high_level, one graph': 28,
      'void_tool, two graphs': 38,
      'void_tool, one graph': 34,
      'kgvoyager, two graphs': 51,
      'kgvoyager, one graph': 47,
    });
    if (process.env.FKGQA_SURFACE_COUNTS) fs.writeFileSync(process.env.FKGQA_SURFACE_COUNTS, JSON.stringify(counts, null, 2));
  });

  it('every tool error carries _meta["fkgqa/error"]: its class, and infrastructure only for endpoints and engines that fail', { tags: ['slow'] }, async () => {
    const texts = [
      ...(await everyTextOnce('void_tool', 'two graphs', withFailing)),
      ...(await everyTextOnce('kgvoyager', 'two graphs', withFailing)).filter((t) => !t.where.startsWith('run_sparql_query')),
    ];
    const errors = texts.filter((t) => t.isError);
    // Every error has the meta, and its class is the one in the text.
    for (const t of errors) {
      expect(t.meta, t.where).toBeDefined();
      expect(t.text.startsWith(`Error (${t.meta!.class})`), `${t.where}: ${t.text.slice(0, 80)}`).toBe(true);
    }
    const table = Object.fromEntries(errors.map((t) => [t.where.replace(/^[a-z_]+: /, ''), [t.meta!.class, t.meta!.infrastructure, t.meta!.endpoint ?? null]]));
    const f = (n: string) => `${failing.base}/${n}/sparql`;
    expect(table).toEqual({
      'too-long': ['too-long', false, null],
      'too-deep': ['too-deep', false, null],
      update: ['update', false, null],
      syntax: ['syntax', false, null],
      'syntax (found by the endpoint)': ['syntax', false, null],
      'unknown-prefix': ['unknown-prefix', false, null],
      'no-service': ['no-service', false, null],
      'variable-service': ['variable-service', false, null],
      'unknown-endpoint': ['unknown-endpoint', false, null],
      'outside-service': ['outside-service', false, null],
      'nested-service': ['nested-service', false, null],
      'mixed-graphs': ['mixed-graphs', false, null],
      timeout: ['timeout', false, f('slow')],
      "timeout (the endpoint's own limit)": ['timeout', false, f('limit')],
      'endpoint (a time limit the clock denies)': ['endpoint', true, f('early')],
      'endpoint 5xx': ['endpoint', true, f('e500')],
      'endpoint-rejected': ['endpoint-rejected', false, f('e400')],
      redirect: ['redirect', true, f('moved')],
      'too-large': ['too-large', false, f('big')],
      'not results': ['endpoint', true, f('bad')],
      unreachable: ['endpoint', true, down],
      'federation, an endpoint down': ['endpoint', true, down],
      'invalid-arguments': ['invalid-arguments', false, null],
      'no-endpoint': ['no-endpoint', false, null],
      'too-many': ['too-many', false, null],
      'unknown-endpoint (void)': ['unknown-endpoint', false, null],
      'no-void': ['no-void', true, down],
      'search: no term': ['invalid-arguments', false, null],
      'search: no term (properties)': ['invalid-arguments', false, null],
      'lookup: no class': ['invalid-arguments', false, null],
      'property usage: no property': ['invalid-arguments', false, null],
      'entity relations: neither': ['invalid-arguments', false, null],
      'execute_query: invalid-arguments': ['invalid-arguments', false, null],
      'execute_query: no-service': ['no-service', false, null],
    });
    // The engine's "fetch failed" names no endpoint: the engine's HTTP names the one that refuses connections, in words.
    const fedDown = errors.find((t) => t.where === 'run_sparql_query: federation, an endpoint down')!.text;
    expect(fedDown).toBe(
      `Error (endpoint): the federation engine (SERVICE <${down}>, <${url('singer-shard3')}>) failed: the endpoint ${down} refused the connection: nothing listens there (ECONNREFUSED)`,
    );
    // A handler that throws is the server's fault; exploration over endpoints that are all down is the infrastructure's.
    const c = await connect({
      registry: { ...registry, endpoints: [foreignEndpoint(down)] },
      setup: 'kgvoyager',
      tools: [(server) => void server.registerTool('broken', { description: 'throws' }, async () => Promise.reject(new Error('a bug')))],
    });
    expect(await c.call('broken', {})).toMatchObject({ isError: true, meta: { class: 'internal', infrastructure: true } });
    const s = await c.call('search_all_classes', { term: 'singer' });
    expect(s).toMatchObject({ isError: true, meta: { class: 'endpoint', infrastructure: true, endpoint: down } });
    expect(s.text).toMatch(/^Error \(endpoint\): no endpoint answered, so nothing could be looked up/);
    await c.close();
    // A faulted engine thread and 5xx inside an engine's message are the infrastructure's; a query the engine cannot evaluate is not.
    expect([
      infrastructureMessage('engine thread crashed: out of memory'),
      infrastructureMessage('Invalid SPARQL endpoint response from http://x/sparql (HTTP status 502)'),
      infrastructureMessage('Unsupported operation: service with a variable'),
    ]).toEqual([true, true, false]);
  });

  it("keeps the graphs apart: each search hit names its graph with that graph's counts; a query may not join two graphs", async () => {
    const c = await connect({ registry, setup: 'kgvoyager' });
    expect(c.client.getInstructions()).toContain('2 knowledge graphs (concert_singer, singer)');
    expect(c.client.getInstructions()).toContain('so they are kept apart: a query may name endpoints of one graph only, and the exploration tools answer per graph');
    const hits = (await c.call('search_all_classes', { term: 'singer' })).text.split('\n');
    expect(hits[0]).toMatch(/^search_all_classes "singer" over 2 knowledge graphs, each hit naming its graph: /);
    const singerHits = hits.filter((l) => l.includes(`. :singer in graph`));
    expect(singerHits.map((l) => l.replace(/^\d+\. /, '').replace(/: <.*$/, ''))).toEqual(
      expect.arrayContaining([`:singer in graph concert_singer; 6 instances`, `:singer in graph singer; 8 instances`]),
    );
    expect(hits.join('\n')).not.toContain('14 instances');
    // Without graph: one section per graph that has the class; with graph: that graph alone.
    const both = (await c.call('lookup_class_instances', { class: `${O}singer` })).text;
    expect(both.split('\n')[0]).toBe(
      `lookup_class_instances <${O}singer>: found in 2 knowledge graphs (concert_singer, singer). The graphs reuse IRIs, so each is shown apart; pass graph to ask one.`,
    );
    expect(both).toContain(`[knowledge graph concert_singer]\n<${O}singer> in the knowledge graph concert_singer: 6 instances at 2 endpoints`);
    expect(both).toContain(`[knowledge graph singer]\n<${O}singer> in the knowledge graph singer: 8 instances at 2 endpoints`);
    const one = (await c.call('lookup_class_instances', { class: `${O}singer`, graph: 'singer' })).text;
    expect(one.split('\n')[0]).toMatch(new RegExp(`^<${O}singer> in the knowledge graph singer: 8 instances at 2 endpoints \\(<${url('singer-shard1')}> 4, <${url('singer-shard2')}> 4\\)\\.$`));
    expect(one).not.toContain('concert_singer');
    // The tools take graph, one of the two.
    const schema = (await c.client.listTools()).tools.find((t) => t.name === 'search_all_classes')!.inputSchema as { properties: Record<string, { enum?: string[] }> };
    expect(schema.properties.graph.enum).toEqual(['concert_singer', 'singer']);
    // A query over endpoints of both graphs is refused before anything is sent.
    const before = JSON.stringify(server.log.counts());
    const count = (urls: string[]) => `SELECT (COUNT(*) AS ?n) WHERE { ${urls.map((u) => `{ SERVICE <${u}> { ?s a <${O}singer> } }`).join(' UNION ')} }`;
    const singerUrls = [url('concert_singer-shard4'), url('concert_singer-shard5'), url('singer-shard1'), url('singer-shard2')];
    const mixed = await c.call('run_sparql_query', { query: count(singerUrls) });
    expect(mixed.text).toBe(
      `Error (mixed-graphs): the query names endpoints of 2 knowledge graphs (concert_singer: <${singerUrls[0]}>, <${singerUrls[1]}>; singer: <${singerUrls[2]}>, <${singerUrls[3]}>); nothing was sent. ` +
        'The graphs reuse IRIs (the same class or property IRI names different data in each), so a query may name endpoints of one graph only: keep the SERVICE clauses of the graph the question is about',
    );
    expect(JSON.stringify(server.log.counts())).toBe(before);
    // Per graph: 6 and 8 singers.
    const n = async (cl: typeof c, urls: string[]) =>
      JSON.parse((await cl.call('run_sparql_query', { query: count(urls), timeout_ms: 60_000, format: 'application/sparql-results+json' })).text.split('\n')[1]).results.bindings[0].n.value;
    expect([await n(c, singerUrls.slice(0, 2)), await n(c, singerUrls.slice(2))]).toEqual(['6', '8']);
    await c.close();
    // --mix-graphs: the query over both graphs runs and counts both graphs' singers as one class (what happened before),
    // and even the entity IRIs collide: <…/singer/singer_id=1> is a singer of each graph, so a join mixes two people.
    const mix = await connect({ registry, setup: 'baseline', mixGraphs: true });
    expect(mix.client.getInstructions()).toContain('this server lets one query join endpoints of several graphs');
    expect(await n(mix, singerUrls)).toBe('14');
    const joined = await mix.call('run_sparql_query', {
      query: `SELECT ?name ?citizenship WHERE { SERVICE <${url('concert_singer-shard1')}> { <${O}singer/singer_id=1> <${O}singer#name> ?name } SERVICE <${url('singer-shard2')}> { <${O}singer/singer_id=1> <${O}singer#citizenship> ?citizenship } }`,
      timeout_ms: 60_000,
    });
    // The table (the default): the two terms of the one row.
    // "Joe Sharp" (concert_singer, from the Netherlands) gets the citizenship of singer's singer 1: a fact of neither graph.
    expect(joined.text).toBe('1 row\n?name\t?citizenship\n"Joe Sharp"\t"France"');
    await mix.close();
    // --kg singer (what fkgqa eval gives a run on a singer question): concert_singer's endpoints are out of reach, by every tool.
    const only = await connect({ registry: filterGraphs(registry, ['singer']), setup: 'void_tool' });
    const cs4 = url('concert_singer-shard4');
    const sent = JSON.stringify(server.log.counts());
    const r = await only.call('run_sparql_query', { query: `SELECT * WHERE { SERVICE <${cs4}> { ?s a <${O}singer> } }` });
    expect(r).toMatchObject({ isError: true, meta: { class: 'unknown-endpoint', infrastructure: false } });
    expect(r.text).toMatch(new RegExp(`^Error \\(unknown-endpoint\\): .*<${cs4}>`));
    expect(r.text).not.toMatch(/concert_singer-shard[1235]/);
    const v = await only.call('get_void_descriptions', { endpoint: cs4 });
    expect(v).toMatchObject({ isError: true, meta: { class: 'unknown-endpoint', infrastructure: false } });
    expect(JSON.stringify(server.log.counts())).toBe(sent);
    await only.close();
  });

  it('pages the exploration tools: "… 1–N of M; pass offset=N to continue" and a character budget', async () => {
    const c = await connect({ registry: filterGraphs(registry, ['concert_singer']), setup: 'kgvoyager', kgvoyager: { options: { maxRows: 4 } } });
    const first = (await c.call('lookup_class_instances', { class: `${O}stadium` })).text.split('\n');
    expect(first[1]).toBe('Instances (instances 1–4 of 9; pass offset=4 to continue):');
    const rest = (await c.call('lookup_class_instances', { class: `${O}stadium`, offset: 4 })).text.split('\n');
    expect(rest[1]).toBe('Instances (instances 5–8 of 9; pass offset=8 to continue):');
    const last = (await c.call('lookup_class_instances', { class: `${O}stadium`, offset: 8 })).text.split('\n');
    expect(last[1]).toBe('Instances (instances 9–9 of 9):');
    const ids = [...first, ...rest, ...last].filter((l) => l.startsWith('- <')).map((l) => /<([^>]+)>/.exec(l)![1]);
    expect(ids).toHaveLength(9);
    expect(new Set(ids).size).toBe(9);
    expect(ids).toEqual([...ids].sort());
    // Example triples come 5 per page.
    const usage = (await c.call('explore_property_usage', { property: `${O}stadium#name`, offset: 5 })).text;
    expect(usage).toContain('Example triples (triples 6–9 of 9):');
    // A budget of 1,000 characters holds fewer hits than the row limit.
    const s = (await c.call('search_all_properties', { term: 'singer concert stadium name', max_chars: 1000 })).text;
    expect(s.length).toBeLessThanOrEqual(1000);
    expect(s.split('\n')[0]).toMatch(/Showing hits 1–\d of \d+; pass offset=\d to continue \(max_chars=1000 reached/);
    await c.close();
  });

  it('serves the eval prompt of each setup as the MCP prompt answer_question, read from the prompt files', async () => {
    for (const setup of ['baseline', 'high_level', 'void_tool', 'kgvoyager'] as const) {
      const c = await connect({ registry: filterGraphs(registry, ['singer']), setup });
      const listed = (await c.client.listPrompts()).prompts;
      expect(listed.map((p) => p.name)).toEqual(['answer_question']);
      const got = await c.client.getPrompt({ name: 'answer_question', arguments: { question: 'How many singers are there?' } });
      const text = (got.messages[0].content as { text: string }).text;
      const file = fs.readFileSync(path.join(ROOT, 'prompts', `${setup}.md`), 'utf8').trimEnd();
      const lines = filterGraphs(registry, ['singer'])
        .endpoints.map((e) => `- ${e.url}${setup === 'high_level' ? ` — ${e.description}` : ''}`)
        .join('\n');
      expect(text.startsWith(file.replace('{{endpoints}}', lines)), setup).toBe(true);
      expect(text).toContain('\n\nQuestion: How many singers are there?');
      // The prompt names exactly the tools this server lists (the harness's own tools are eval's to name).
      const named = [...new Set(text.replace(/https?:\/\/\S+/g, '').match(/\b[a-z]+(?:_[a-z]+)+\b|\bcancel\b/g))].sort();
      expect(named, setup).toEqual((await c.client.listTools()).tools.map((t) => t.name).sort());
      await c.close();
    }
    // Another prompts folder (fkgqa eval --prompts): its text, read when the prompt is got.
    const dir = tmpDir('fkgqa-prompts-');
    fs.writeFileSync(path.join(dir, 'baseline.md'), 'Endpoints you may use:\n{{endpoints}}\nQ: {{question}}\n');
    const c = await connect({ registry: filterGraphs(registry, ['singer']), setup: 'baseline', promptsDir: dir });
    const get = async () => ((await c.client.getPrompt({ name: 'answer_question', arguments: { question: 'Who?' } })).messages[0].content as { text: string }).text;
    expect(await get()).toBe(
      `Endpoints you may use:\n${filterGraphs(registry, ['singer'])
        .endpoints.map((e) => `- ${e.url}`)
        .join('\n')}\nQ: Who?`,
    );
    fs.writeFileSync(path.join(dir, 'baseline.md'), 'Changed: {{question}}');
    expect(await get()).toBe('Changed: Who?');
    await c.close();
    // Two graphs: the prompt takes graph, and lists only its endpoints.
    const two = await connect({ registry, setup: 'baseline' });
    const g = ((await two.client.getPrompt({ name: 'answer_question', arguments: { graph: 'concert_singer' } })).messages[0].content as { text: string }).text;
    expect(g).toContain(url('concert_singer-shard5'));
    expect(g).not.toContain(url('singer-shard1'));
    await two.close();
  });

  it("the tool surface digest (run records' toolSurface) differs between setups and between graphs, and is stable", async () => {
    const digest = async (setup: Setup, reg: EndpointRegistry) => {
      const p = await McpToolProvider.inProcess({ registry: reg, setup, callLog: null, state: null });
      const d = toolSurfaceDigest({ ...p.surface(), tools: p.tools() });
      await p.close();
      return d;
    };
    const a = await digest('baseline', filterGraphs(registry, ['singer']));
    expect(a.digest).toMatch(/^[0-9a-f]{16}$/);
    expect(a.tools).toBe(1);
    expect(await digest('baseline', filterGraphs(registry, ['singer']))).toEqual(a);
    expect((await digest('high_level', filterGraphs(registry, ['singer']))).digest).not.toBe(a.digest);
    expect((await digest('baseline', filterGraphs(registry, ['concert_singer']))).digest).not.toBe(a.digest);
    expect(await digest('void_tool', filterGraphs(registry, ['singer']))).toMatchObject({ tools: 2 });
  });
});
