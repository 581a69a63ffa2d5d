/**
 * Checks of the federation layer shared by federation.test.ts (`npm test`: comunica, the first gold
 * query of each graph) and federation.slow.test.ts (`npm run test:slow`: every gold query, every
 * engine): gold queries answered through routing and an engine over two `fkgqa serve` processes, and
 * an endpoint that answers no SPARQL result named with what it answered.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { compareResults } from '../src/answers/compare.js';
import { readGoldQueries } from '../src/build/benchmark.js';
import { goldResultsById, readGoldAnswers } from '../src/build/gold-answers.js';
import { openBuild } from '../src/build/open.js';
import { BoundedSparqlClient } from '../src/federation/client.js';
import type { FederationEngineName } from '../src/federation/engines.js';
import { openRegistry, registryFromUrls } from '../src/federation/registry.js';
import { planQuery } from '../src/federation/routing.js';
import { createMcpServer } from '../src/mcp/server.js';
import { serve, type ShardServer } from '../src/serve/server.js';
import type { SparqlResults } from '../src/sparql/results.js';
import { parseQuery } from '../src/sparql/parse.js';
import { trivialFederation } from '../src/sparql/trivial.js';

/** An HTTP listener that counts its requests; `answer` decides each answer. */
export async function listener(answer: (req: http.IncomingMessage, res: http.ServerResponse) => void): Promise<{ url: string; requests: string[]; close(): Promise<void> }> {
  const requests: string[] = [];
  const s = http.createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    req.resume();
    req.on('end', () => answer(req, res));
  });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  return { url: `http://127.0.0.1:${(s.address() as AddressInfo).port}`, requests, close: () => new Promise<void>((r) => (s.close(() => r()), s.closeAllConnections())) };
}

/**
 * Answers the gold queries of the demo build (`perGraph` first of each graph, all when undefined) in
 * trivial-federation form through routing and `engine`, over the endpoints files of the serves given,
 * and expects each identical to the stored gold answer; then one query over both hosts, counted per
 * endpoint. The build must hold gold answers for `digest` (demoBuild with `gold`).
 */
export async function goldThroughEngine(opts: { shards: string; digest: string; endpointsFiles: string[]; engine: FederationEngineName; perGraph?: number }): Promise<void> {
  const shards = opts.shards;
  const registry = openRegistry({ endpointsFiles: opts.endpointsFiles, build: shards });
  const client = new BoundedSparqlClient(registry, { engine: opts.engine });
  const { defaultPrefix, queries } = readGoldQueries(shards);
  const verdicts: string[] = [];
  try {
    for (const graph of ['library', 'observatory']) {
      const gold = goldResultsById(readGoldAnswers(shards, graph, opts.digest)!);
      const urls = registry.endpoints.filter((e) => e.graph === graph).map((e) => e.url);
      for (const q of queries.filter((x) => x.graph === graph).slice(0, opts.perGraph)) {
        const parsed = parseQuery(q.text, defaultPrefix);
        if (!parsed.ok) throw new Error(parsed.error);
        const plan = planQuery(trivialFederation(parsed.query.ast, urls).text, registry, { maxQueryChars: 1 << 20 });
        if (!plan.ok) throw new Error(`${q.id}: ${plan.message}`);
        const o =
          plan.route === 'direct'
            ? await client.direct(plan.targets[0].url, plan.query, 'application/sparql-results+json', 60_000)
            : await client.federated(plan.query, 'application/sparql-results+json', { ms: 60_000, from: 'call' });
        if (o.status !== 'ok') throw new Error(`${q.id}: ${o.status} ${o.status === 'error' ? o.error : ''}`);
        const c = compareResults(gold.get(q.id)!.results!, JSON.parse(o.body) as SparqlResults, !!(parsed.query.ast as { order?: unknown[] }).order?.length);
        verdicts.push(`${q.id} ${plan.route} ${c.identical ? 'identical' : c.reason}`);
      }
    }
    // The first distinct gold query of each graph (2), or all 14 (8 of library, 6 of observatory), each over the 4 endpoints of its graph.
    expect(verdicts).toHaveLength(opts.perGraph === 1 ? 2 : 14);
    expect(verdicts.filter((v) => !v.endsWith(' federation identical'))).toEqual([]);
    // One query over both hosts: every triple of one shard on each.
    const [l1, o1] = [registry.endpoints.find((e) => e.id === 'library-shard1')!, registry.endpoints.find((e) => e.id === 'observatory-shard1')!];
    const both = planQuery(`SELECT (COUNT(*) AS ?n) { { SERVICE <${l1.url}> { ?s ?p ?o } } UNION { SERVICE <${o1.url}> { ?s ?p ?o } } }`, registry, { maxQueryChars: 8000 });
    expect(both.ok && both.route).toBe('federation');
    const o = await client.federated((both as { query: string }).query, 'application/sparql-results+json', { ms: 60_000, from: 'call' });
    expect(o.status).toBe('ok');
    const triples = (id: string) =>
      openBuild(shards, { checkShards: false })
        .manifests.flatMap((m) => m.shards)
        .find((s) => s.endpoint === id)!.triples;
    expect(Number((JSON.parse((o as { body: string }).body) as SparqlResults).results!.bindings[0].n.value)).toBe(triples('library-shard1') + triples('observatory-shard1'));
    expect(Object.keys(o.requests).sort()).toEqual([l1.url, o1.url].sort());
    // The client counted every request, per endpoint, over all calls.
    expect(Object.keys(client.requests).length).toBe(8);
  } finally {
    await client.close();
  }
}

/** A serve of the demo's library graph, a login page and a 404 page (beforeAll/afterAll of the calling describe). */
export interface NonSparqlEndpoints {
  server(): ShardServer;
  page(): Awaited<ReturnType<typeof listener>>;
  gone(): Awaited<ReturnType<typeof listener>>;
}

/** Registers, in the calling describe, the serve and the two listeners that answer no SPARQL result; `shards` is read in beforeAll. */
export function nonSparqlEndpoints(shards: () => string): NonSparqlEndpoints {
  let server: ShardServer;
  let page: Awaited<ReturnType<typeof listener>>;
  let gone: Awaited<ReturnType<typeof listener>>;
  beforeAll(async () => {
    server = await serve({ shards: shards(), kgs: ['library'], writeFiles: false });
    // A login page where an endpoint was registered (a proxy in front of it), and a 404 page.
    page = await listener((_req, res) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<html><body>Please log in</body></html>'));
    gone = await listener((_req, res) => res.writeHead(404, { 'content-type': 'text/html' }).end('<html><body>Not Found</body></html>'));
  });
  afterAll(async () => {
    await server?.close();
    await page?.close();
    await gone?.close();
  });
  return { server: () => server, page: () => page, gone: () => gone };
}

/** The test that `engine` (when `runs`) names, through run_sparql_query, an endpoint that answered a page, not a SPARQL result. */
export function itNamesNonSparqlEndpoint(engine: FederationEngineName, f: NonSparqlEndpoints, runs = true): void {
  it.skipIf(!runs)(
    `${engine}: run_sparql_query says which endpoint answered what (status, content type); _meta class endpoint, infrastructure true`,
    async () => {
      const shard1 = f.server().endpoint('library-shard1')!.url;
      const [p, g] = [`${f.page().url}/p/sparql`, `${f.gone().url}/g/sparql`];
      const mcp = await createMcpServer({ registry: registryFromUrls([p, g, shard1]), setup: 'baseline', callLog: null, state: null, federationEngine: engine });
      const [x, y] = InMemoryTransport.createLinkedPair();
      await mcp.server.connect(x);
      const client = new Client({ name: 'test', version: '1' });
      await client.connect(y);
      try {
        for (const [bad, status, type] of [
          [p, 200, 'text/html'],
          [g, 404, 'text/html'],
        ] as const) {
          const r = (await client.callTool({
            name: 'run_sparql_query',
            arguments: { query: `SELECT * { SERVICE <${shard1}> { ?b ?p ?o } SERVICE <${bad}> { ?b ?q ?t . ?t ?r ?u } }`, timeout_ms: 60_000 },
          })) as { content: { text: string }[]; isError?: boolean; _meta?: Record<string, unknown> };
          expect(r.isError).toBe(true);
          expect(r.content[0].text).toMatch(/^Error \(endpoint\): the federation engine \(SERVICE </);
          expect(r.content[0].text).toContain(`the endpoint ${bad} answered HTTP ${status} with content type ${type}`);
          expect(r.content[0].text).toContain('which is no SPARQL result');
          expect(r.content[0].text).not.toMatch(/QuerySourceRdfJs/);
          expect(r._meta?.['fkgqa/error']).toEqual({ class: 'endpoint', infrastructure: true, endpoint: bad });
        }
      } finally {
        await client.close();
        await mcp.close();
      }
    },
    120_000,
  );
}
