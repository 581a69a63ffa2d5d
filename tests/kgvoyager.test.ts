import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { InMemoryTransport, McpServer } from '@modelcontextprotocol/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registryFromEndpointsValue, type EndpointRegistry } from '../src/federation/registry.js';
import { createMcpServer } from '../src/mcp/server.js';
import { cosine, LocalModelEmbedder, NgramEmbedder, OpenAiEmbedder } from '../src/mcp/kgvoyager/embedder.js';
import { registerKgVoyagerToolsOn } from '../src/mcp/kgvoyager/register.js';
import { adaptiveFilter, HybridIndex, rrf } from '../src/mcp/kgvoyager/retrieval.js';
import { httpSelect, termText } from '../src/mcp/kgvoyager/sparql.js';
import { contentWords, iriText, localPart, sStem } from '../src/mcp/kgvoyager/text.js';
import { KgVoyager } from '../src/mcp/kgvoyager/tools.js';
import { serve, type ShardServer } from '../src/serve/server.js';
import { termCode } from '../src/view/model.js';
import { demoBuild, fkgqaInProcess, tmpDir } from './helpers.js';

const O = 'http://valuenet/ontop/';

describe('kgvoyager: text of IRIs', () => {
  it('reads the local name split on / # _ - and camel case', () => {
    expect(localPart(`${O}singer#song_name`)).toBe('singer#song_name');
    expect(iriText(`${O}singer#song_name`)).toBe('singer song name');
    expect(iriText(`${O}singer_in_concert#ref-concert_ID`)).toBe('singer in concert ref concert id');
    expect(iriText('http://dbpedia.org/ontology/birthPlace')).toBe('birth place');
    expect(iriText('http://xmlns.com/foaf/0.1/name')).toBe('name');
  });
  it("Harman's S-stemmer removes plurals only", () => {
    expect(['singers', 'countries', 'matches', 'status', 'class', 'shoes', 'series'].map(sStem)).toEqual(['singer', 'country', 'matche', 'status', 'class', 'shoe', 'sery']);
  });
  it('keeps the content words of a question', () => {
    expect(contentWords('How many singers do we have from France in 2014?')).toEqual(['singers', 'france']);
  });
  it('writes a term of a result row for the model as the view page does, with xsd: datatypes and long literals cut', () => {
    const XSD = 'http://www.w3.org/2001/XMLSchema#';
    const five = { type: 'literal' as const, value: '5', datatype: `${XSD}integer` };
    expect(termText(five)).toBe('"5"^^xsd:integer');
    expect(termCode(five)).toBe(`"5"^^<${XSD}integer>`);
    const odd = { type: 'literal' as const, value: 'x', datatype: 'http://e/dt' };
    expect([termText(odd), termCode(odd)]).toEqual(['"x"^^<http://e/dt>', '"x"^^<http://e/dt>']);
    expect(termText({ type: 'literal', value: 'a "b"\nc', 'xml:lang': 'en' })).toBe('"a \\"b\\"\\nc"@en');
    expect(termText({ type: 'literal', value: 'abcdef', datatype: `${XSD}string` }, 3)).toBe('"abc…"');
    expect([termText({ type: 'uri', value: 'http://e/a' }), termText({ type: 'bnode', value: 'b0' }), termText(undefined), termCode(undefined)]).toEqual(['<http://e/a>', '_:b0', '(unbound)', '']);
  });
});

describe('kgvoyager: fkgqa mcp options', () => {
  it('an embedder without its settings is a clear error with exit code 2', async () => {
    // The CLI in this process (tests/helpers.ts): mcp refuses before it serves.
    const r = await fkgqaInProcess(['mcp', '--endpoint', 'http://127.0.0.1:9/sparql', '--setup', 'kgvoyager', '--embedder', 'openai'], { refusal: true });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--embedder openai needs --embedding-url and --embedding-model');
    const l = await fkgqaInProcess(['mcp', '--endpoint', 'http://127.0.0.1:9/sparql', '--kgvoyager', '--embedder', 'local'], { refusal: true });
    expect(l.code).toBe(2);
    expect(l.stderr).toContain('--embedder local needs --embedding-model-path');
  });
});

describe('kgvoyager: fusion and filtering', () => {
  it('reciprocal rank fusion gives the hand-computed scores', () => {
    // x: 1/(60+1); y: 1/(60+2) + 1/(60+1); z: 1/(60+3); w: 1/(60+2)
    const fused = rrf(
      [
        ['x', 'y', 'z'],
        ['y', 'w'],
      ],
      60,
    );
    expect(fused.map((h) => h.id)).toEqual(['y', 'x', 'w', 'z']);
    expect(fused[0].score).toBeCloseTo(1 / 62 + 1 / 61, 12);
    expect(fused[1].score).toBeCloseTo(1 / 61, 12);
    expect(fused[2].score).toBeCloseTo(1 / 62, 12);
    expect(fused[3].score).toBeCloseTo(1 / 63, 12);
    // k = 2: y = 1/4 + 1/3, x = 1/3, w = 1/4, z = 1/5
    expect(
      rrf(
        [
          ['x', 'y', 'z'],
          ['y', 'w'],
        ],
        2,
      ).map((h) => +h.score.toFixed(4)),
    ).toEqual([0.5833, 0.3333, 0.25, 0.2]);
  });

  it('the adaptive filter keeps exactly the top 3 when scores fall fast, and every hit above δ × top otherwise', () => {
    const fast = [1, 0.1, 0.05, 0.01, 0.005].map((score, i) => ({ id: `h${i}`, score }));
    expect(adaptiveFilter(fast, 0.125, 3).map((h) => h.id)).toEqual(['h0', 'h1', 'h2']);
    const slow = [1, 0.9, 0.5, 0.2, 0.13, 0.12, 0.01].map((score, i) => ({ id: `h${i}`, score }));
    expect(adaptiveFilter(slow, 0.125, 3)).toHaveLength(5); // 0.13 ≥ 0.125, 0.12 < 0.125
    expect(adaptiveFilter(fast.slice(0, 2), 0.125, 3)).toHaveLength(2);
  });

  it('with k = 60 the filter prunes nothing of two 150-hit lists; with k = 2 it keeps ranks 1..22 of each', () => {
    const a = Array.from({ length: 150 }, (_, i) => `a${i}`);
    const b = Array.from({ length: 150 }, (_, i) => `b${i}`);
    // Top score 1/(k+1); a hit at rank r survives iff 1/(k+r) ≥ 0.125/(k+1), i.e. r ≤ 7k + 8.
    expect(adaptiveFilter(rrf([a, b], 60))).toHaveLength(300); // r ≤ 428
    const kept2 = adaptiveFilter(rrf([a, b], 2));
    expect(kept2).toHaveLength(44); // r ≤ 22 in each list
    expect(kept2.map((h) => h.id)).toContain('a21');
    expect(kept2.map((h) => h.id)).not.toContain('a22');
  });
});

describe('kgvoyager: embedders', () => {
  it('the n-gram embedder is deterministic, L2-normalised, and gives the hand-computed cosines', async () => {
    const e = new NgramEmbedder();
    expect(e.grams('Singer')).toEqual(['<si', 'sin', 'ing', 'nge', 'ger', 'er>']);
    const [a, b, c, a2] = await e.embed(['singer', 'singers', 'album', 'singer']);
    expect(a.length).toBe(2048);
    expect(Array.from(a2)).toEqual(Array.from(a));
    expect(Math.hypot(...a)).toBeCloseTo(1, 6);
    expect(cosine(a, b)).toBeCloseTo(5 / Math.sqrt(42), 6); // 5 shared 3-grams of 6 and 7
    expect(cosine(a, c)).toBe(0);
    expect(e.id).toBe('ngram3-2048');
  });

  it('the OpenAI-compatible client posts {model, input} to /v1/embeddings and normalises the answer', async () => {
    const seen: { url?: string; auth?: string; body?: { model: string; input: string[] } }[] = [];
    const fake = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        const parsed = JSON.parse(body) as { model: string; input: string[] };
        seen.push({ url: req.url, auth: req.headers.authorization, body: parsed });
        if (parsed.input.includes('fail')) {
          res.writeHead(500).end('boom');
          return;
        }
        // Out of order on purpose: the client must place vectors by index.
        const data = parsed.input.map((t, index) => ({ index, embedding: [t.length, 0, 0, 3] })).reverse();
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data }));
      });
    });
    await new Promise<void>((r) => fake.listen(0, '127.0.0.1', r));
    const port = (fake.address() as AddressInfo).port;
    try {
      const e = new OpenAiEmbedder({ url: `http://127.0.0.1:${port}`, model: 'm1', apiKey: 'k', batchSize: 2 });
      const [v1, v2, v3] = await e.embed(['abcd', 'x', 'abc']);
      expect(seen.map((s) => s.url)).toEqual(['/v1/embeddings', '/v1/embeddings']);
      expect(seen[0].body).toEqual({ model: 'm1', input: ['abcd', 'x'] });
      expect(seen[1].body).toEqual({ model: 'm1', input: ['abc'] });
      expect(seen[0].auth).toBe('Bearer k');
      expect(Array.from(v1).map((x) => +x.toFixed(4))).toEqual([0.8, 0, 0, 0.6]); // (4,0,0,3)/5
      expect(Array.from(v2).map((x) => +x.toFixed(4))).toEqual([0.3162, 0, 0, 0.9487]); // (1,0,0,3)/√10
      expect(v3[0]).toBeCloseTo(3 / Math.sqrt(18), 6);
      await expect(e.embed(['fail'])).rejects.toThrow(/HTTP 500: boom/);
    } finally {
      await new Promise((r) => fake.close(r));
    }
  });

  it('a local model path without the optional runtime is a clear error naming the missing package', async () => {
    const dir = tmpDir('fkgqa-model-');
    await expect(new LocalModelEmbedder(dir).embed(['x'])).rejects.toThrow(/needs the package @huggingface\/transformers/);
    await expect(new LocalModelEmbedder(path.join(dir, 'missing')).embed(['x'])).rejects.toThrow(/model folder does not exist/);
  });

  it('BM25 without stemming misses a plural that the dense side finds; the S-stemmer finds it', async () => {
    const docs = ['book', 'author', 'loan'].map((w) => ({ id: `${O}${w}`, name: w, label: '' }));
    const plain = await HybridIndex.build(docs, new NgramEmbedder(), false);
    expect(plain.bm25('books')).toEqual([]);
    expect((await plain.dense('books'))[0].id).toBe(`${O}book`);
    expect((await plain.search('books')).kept[0].id).toBe(`${O}book`);
    const stemmed = await HybridIndex.build(docs, new NgramEmbedder());
    expect(stemmed.bm25('books').map((h) => h.id)).toEqual([`${O}book`]);
  });
});

describe('kgvoyager tools on the demo federation', () => {
  let server: ShardServer;
  let registry: EndpointRegistry;
  let kgv: KgVoyager;
  let url: (id: string) => string;

  beforeAll(async () => {
    const shards = await demoBuild(tmpDir('fkgqa-kgv-'));
    server = await serve({ shards, timeoutMs: 5_000 });
    registry = registryFromEndpointsValue(server.endpointsFile(), 'test');
    expect(registry.endpoints).toHaveLength(8);
    expect(fs.existsSync(registry.endpoints[0].voidFile!)).toBe(true);
    url = (id) => server.endpoint(id)!.url;
    kgv = new KgVoyager({ registry, select: httpSelect });
  });

  afterAll(async () => {
    await server?.close();
  });

  it('the class index has the demo classes with instance counts per endpoint (one query per endpoint)', async () => {
    const { index, byIri } = await kgv.classIndex();
    expect(index.failures).toEqual([]);
    expect(index.entries.map((e) => e.iri.slice(O.length))).toEqual(['author', 'book', 'loan', 'observation', 'star', 'telescope']);
    // author is split horizontally: 5 authors in shard1, 1 in shard3 — both endpoints are listed.
    expect(byIri.get(`${O}author`)!.endpoints).toEqual([
      { endpoint: 'library-shard1', url: url('library-shard1'), count: 5 },
      { endpoint: 'library-shard3', url: url('library-shard3'), count: 1 },
    ]);
    expect(byIri.get(`${O}author`)!.total).toBe(6);
    expect(byIri.get(`${O}book`)!.endpoints.map((c) => [c.endpoint, c.count])).toEqual([['library-shard4', 8]]);
  });

  it('search_all_classes: the top class for a term, with all its shards', async () => {
    const r = await kgv.rankClasses('telescopes');
    expect(r.kept[0].id).toBe(`${O}telescope`);
    const text = (await kgv.searchAllClasses('author')).text;
    expect(text.split('\n')[1]).toBe(`1. <${O}author>; 6 instances: <${url('library-shard1')}> 5, <${url('library-shard3')}> 1`);
  });

  it('search_all_properties: usage counts across shards and the VoID domain/range', async () => {
    const { byIri } = await kgv.propertyIndex();
    const name = byIri.get(`${O}author#name`)!;
    expect(name.endpoints.map((c) => [c.endpoint, c.count])).toEqual([
      ['library-shard1', 5],
      ['library-shard3', 1],
    ]);
    expect(name.domains).toEqual([{ iri: `${O}author`, source: 'void', triples: 6 }]);
    // Authors are typed in the buckets, not in the books' shard: read from its remote object classes.
    expect(byIri.get(`${O}book#ref-author_id`)!.ranges).toEqual([{ iri: `${O}author`, source: 'void', triples: 8 }]);
    // The titles shard holds no types: the domain :book comes from its remote class partition.
    expect(byIri.get(`${O}book#title`)!.domains).toEqual([{ iri: `${O}book`, source: 'void', triples: 8 }]);
    const top = (await kgv.rankProperties('title of the book')).kept[0];
    expect(top.id).toBe(`${O}book#title`);
  });

  it('explore_property_usage: a property used at two shards, and subjects typed at another shard', async () => {
    const name = (await kgv.explorePropertyUsage({ property: `${O}author#name` })).text;
    expect(name).toContain(`- <${O}author>: 6 triples (library-shard1 5, library-shard3 1)`);
    expect(name).toContain('- literal xsd:string: 6 triples (library-shard1 5, library-shard3 1)');
    // book#title sits in shard2 without type triples; the type of its subjects is in shard4.
    const title = (await kgv.explorePropertyUsage({ property: `${O}book#title` })).text;
    expect(title).toContain('- (no type at this endpoint): 8 triples (library-shard2 8)');
    expect(title).toContain(`subjects without a type at library-shard2: 8; typed at other endpoints of the graph: <${O}book> 8 of 8 (type at library-shard4)`);
  });

  it('lookup_class_instances: all instances, an attribute held at another shard, and the fallback ranking', async () => {
    const all = (await kgv.lookupClassInstances({ class: `${O}author` })).text;
    expect(all).toContain('Instances (6 instances):');
    expect(all).toContain(`- <${O}author/author_id=3> [library-shard3]`);
    const byLabel = (await kgv.lookupClassInstances({ class: `${O}book`, exact_term: 'harbour' })).text;
    expect(byLabel).toContain('contains "harbour" (case-insensitive): 0 instances:');
    const byValue = (await kgv.lookupClassInstances({ class: `${O}book`, exact_term: 'Harbour', all_attributes: true })).text;
    expect(byValue).toContain(`- <${O}book/book_id=2> <${O}book#title> = "The Quiet Harbour" [library-shard2, library-shard4]`);
    expect(byValue).toContain('contains "Harbour" (case-insensitive): 1 instance:');
    const fb = (await kgv.lookupClassInstances({ class: `${O}author`, exact_term: 'Quispe Ada', fallback_term: 'a', all_attributes: true })).text;
    expect(fb).toMatch(/No instance's IRI or any literal value contains "Quispe Ada"\. \d+ instances match the fallback "a"/);
    expect(fb.split('\n')[2]).toContain(`<${O}author/author_id=1>`); // "Ada Quispe" is the most similar
  });

  it('explore_entity_relations: in/out properties across shards, and a literal', async () => {
    const e = (await kgv.exploreEntityRelations({ entity: `${O}author/author_id=1` })).text;
    expect(e).toContain('found at 2 endpoints (library-shard1, library-shard4)');
    expect(e).toContain(`- <${O}author#name>: 1 triple (library-shard1 1), e.g. "Ada Quispe"`);
    expect(e).toContain(`- <${O}book#ref-author_id>: 2 triples (library-shard4 2)`);
    const lit = (await kgv.exploreEntityRelations({ literal: 'peru' })).text;
    expect(lit).toContain('2 triples with this value');
    expect(lit).toContain(`- <${O}author/author_id=5> <${O}author#country> "Peru" [library-shard1]; class <${O}author>`);
    expect((await kgv.exploreEntityRelations({})).isError).toBe(true);
  });

  it('the tools bound their time: an endpoint that never answers makes the answer incomplete, not empty', async () => {
    // A SPARQL endpoint that accepts the request and never answers.
    const hang = http.createServer(() => {});
    await new Promise<void>((r) => hang.listen(0, '127.0.0.1', r));
    const hangUrl = `http://127.0.0.1:${(hang.address() as AddressInfo).port}/sparql`;
    try {
      const withHang: EndpointRegistry = {
        ...registry,
        endpoints: [...registry.endpoints, { id: 'hang', url: hangUrl, graph: null, shard: null, description: null, voidFile: null, voidExtendedFile: null }],
      };
      // The limit must leave the shards time to answer on a loaded machine; the hanging endpoint never answers.
      const slow = new KgVoyager({ registry: withHang, select: httpSelect, options: { timeoutMs: 3000, indexTimeoutMs: 3000 } });
      // The class search and an entity look-up side by side: each waits out the limit once.
      const t0 = Date.now();
      let waited = 0;
      const [classes, e] = await Promise.all([
        slow.searchAllClasses('author').then((r) => ((waited = Date.now() - t0), r.text)),
        slow.exploreEntityRelations({ entity: `${O}author/author_id=3` }).then((r) => r.text),
      ]);
      // It waited for the limit; the hanging endpoint is named with that limit below.
      expect(waited).toBeGreaterThanOrEqual(2900);
      expect(classes.split('\n')[1]).toContain(`<${O}author>; 6 instances: `);
      expect(classes).toContain('Incomplete: 1 endpoint did not answer (results from them are missing, not empty):');
      expect(classes).toContain(`- <${hangUrl}>: ${hangUrl}: the SPARQL endpoint cannot be reached: no answer within 3000 ms`);
      // An entity look-up asks every endpoint: the shards answer, the hanging one is named.
      expect(e).toContain('found at 2 endpoints (library-shard3, library-shard4)');
      expect(e).toContain(`- <${hangUrl}>:`);
    } finally {
      hang.closeAllConnections();
      await new Promise((r) => hang.close(r));
    }
  });

  it('registers on an McpServer; an MCP client lists and calls the tools', async () => {
    const mcp = new McpServer({ name: 'fkgqa-test', version: '0' });
    const calls: string[] = [];
    registerKgVoyagerToolsOn(mcp, kgv, {
      log: (c) => calls.push(`${c.tool}:${Object.keys(c.requests).length}`),
      executeQuery: async ({ query }) => ({ text: `ran ${query.length} chars`, isError: false }),
    });
    const [ct, st] = InMemoryTransport.createLinkedPair();
    await mcp.connect(st);
    const client = new Client({ name: 'test', version: '0' });
    await client.connect(ct);
    try {
      const tools = (await client.listTools()).tools.map((t) => t.name).sort();
      expect(tools).toEqual(['execute_query', 'explore_entity_relations', 'explore_property_usage', 'lookup_class_instances', 'search_all_classes', 'search_all_properties']);
      const r = (await client.callTool({ name: 'search_all_classes', arguments: { term: 'star' } })) as { content: { type: string; text: string }[]; isError?: boolean };
      expect(r.isError).toBeFalsy();
      expect(r.content[0].text.split('\n')[1]).toBe(`1. <${O}star>; 6 instances: <${url('observatory-shard1')}> 3, <${url('observatory-shard4')}> 3`);
      const x = (await client.callTool({ name: 'explore_property_usage', arguments: { property: `<${O}author#name>` } })) as { content: { text: string }[] };
      expect(x.content[0].text).toContain('6 triples at 2 endpoints');
      const q = (await client.callTool({ name: 'execute_query', arguments: { query: 'ASK {}' } })) as { content: { text: string }[] };
      expect(q.content[0].text).toBe('ran 6 chars');
      // kgv's indexes were built by earlier tests: no index query now; explore asked shard1 and shard3.
      expect(calls).toEqual(['search_all_classes:0', 'explore_property_usage:2', 'execute_query:0']);
    } finally {
      await client.close();
      await mcp.close();
    }
  });

  it('fkgqa mcp setup kgvoyager: run_sparql_query plus the KGVoyager tools; execute_query is run_sparql_query; calls are logged', async () => {
    const mcp = await createMcpServer({ registry, setup: 'kgvoyager', state: null, callLog: null });
    const [ct, st] = InMemoryTransport.createLinkedPair();
    await mcp.server.connect(st);
    const client = new Client({ name: 'test', version: '0' });
    await client.connect(ct);
    try {
      const listed = (await client.listTools()).tools;
      const tools = listed.map((t) => t.name).sort();
      expect(tools).toEqual(['execute_query', 'explore_entity_relations', 'explore_property_usage', 'lookup_class_instances', 'run_sparql_query', 'search_all_classes', 'search_all_properties']);
      // execute_query takes run_sparql_query's arguments with the same bounds.
      const schema = (name: string) => listed.find((t) => t.name === name)!.inputSchema as { properties: Record<string, { enum?: string[]; minimum?: number; maximum?: number }> };
      expect(schema('execute_query').properties.format.enum).toEqual(schema('run_sparql_query').properties.format.enum);
      expect([schema('execute_query').properties.timeout_ms.minimum, schema('execute_query').properties.timeout_ms.maximum]).toEqual([1000, 100000]);
      const s = (await client.callTool({ name: 'search_all_classes', arguments: { term: 'authors' } })) as { content: { text: string }[] };
      // Two graphs (library, observatory): each hit names its graph.
      expect(s.content[0].text.split('\n')[1]).toContain(`:author in graph library; 6 instances: `);
      const q = `SELECT (COUNT(*) AS ?n) WHERE { SERVICE <${url('library-shard1')}> { ?a a <${O}author> } }`;
      const r = (await client.callTool({ name: 'execute_query', arguments: { query: q } })) as { content: { text: string }[]; isError?: boolean };
      expect(r.isError).toBeFalsy();
      expect(r.content[0].text).toBe('1 row\n?n\n5');
      const log = mcp.callLog.entries;
      expect(log.map((e) => `${e.tool}/${e.route}`)).toEqual(['search_all_classes/kgvoyager', 'run_sparql_query/direct']);
      // The first search built the class index: one query to each of the 8 shard endpoints.
      expect(Object.values(log[0].requests ?? {})).toEqual([1, 1, 1, 1, 1, 1, 1, 1]);
      expect(log[0].endpoints).toHaveLength(8);
    } finally {
      await client.close();
      await mcp.close();
    }
  });

  it('the KGVoyager tools can be added to another setup (void_tool)', async () => {
    const mcp = await createMcpServer({ registry, setup: 'void_tool', kgvoyager: true, state: null, callLog: null });
    const [ct, st] = InMemoryTransport.createLinkedPair();
    await mcp.server.connect(st);
    const client = new Client({ name: 'test', version: '0' });
    await client.connect(ct);
    try {
      const tools = (await client.listTools()).tools.map((t) => t.name);
      expect(tools).toContain('get_void_descriptions');
      expect(tools).toContain('explore_property_usage');
      const plain = await createMcpServer({ registry, setup: 'void_tool', state: null, callLog: null });
      const [c2, s2] = InMemoryTransport.createLinkedPair();
      await plain.server.connect(s2);
      const client2 = new Client({ name: 'test2', version: '0' });
      await client2.connect(c2);
      expect((await client2.listTools()).tools.map((t) => t.name)).not.toContain('search_all_classes');
      await client2.close();
      await plain.close();
    } finally {
      await client.close();
      await mcp.close();
    }
  });
});
