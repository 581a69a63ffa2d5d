/**
 * The long federation run of the federation layer (long federation runs go to
 * `npm run test:slow`): every distinct gold query of the demo (14) through routing and each
 * federation engine (comunica, jena where its tests run, comunica-default) over two `fkgqa serve`
 * processes, compared with the gold answers. At load 15 on 2 cores each engine took 30-45 s of wall.
 * tests/federation.test.ts keeps the same test on the first gold query of each graph.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compareResults } from '../src/answers/compare.js';
import { readGoldQueries } from '../src/build/benchmark.js';
import { goldResultsById, readGoldAnswers } from '../src/build/gold-answers.js';
import { openBuild } from '../src/build/open.js';
import { BoundedSparqlClient } from '../src/federation/client.js';
import { FEDERATION_ENGINES } from '../src/federation/engines.js';
import { openRegistry } from '../src/federation/registry.js';
import { planQuery } from '../src/federation/routing.js';
import type { SparqlResults } from '../src/sparql/results.js';
import { parseQuery } from '../src/sparql/parse.js';
import { trivialFederation } from '../src/sparql/trivial.js';
import { demoBuild, engineTestsRun, serveProcess, tmpDir } from './helpers.js';

let shards: string;
let digest: string;
/** Per engine: whether its tests run here (Jena needs Java and Debian's Jena; see engineTestsRun). */
const ENGINE_TESTS_RUN = Object.fromEntries(await Promise.all(FEDERATION_ENGINES.map(async (e) => [e, await engineTestsRun(e)] as const)));

beforeAll(async () => {
  // The demo build with the gold answers of fkgqa stats (made here: test:slow has no global setup).
  shards = await demoBuild(tmpDir('fkgqa-fed-'), { gold: true });
  digest = openBuild(shards, { checkShards: false }).build.outputDigest;
}, 300_000);

describe('federation / one registry over two fkgqa serve processes (slow: every gold query through every engine)', () => {
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

  for (const engineName of FEDERATION_ENGINES) {
    it.runIf(ENGINE_TESTS_RUN[engineName])(`answers every gold query of both graphs through routing and the ${engineName} engine as gold does`, async () => {
      const registry = openRegistry({ endpointsFiles: [path.join(stateA, 'endpoints.json'), path.join(stateB, 'endpoints.json')], build: shards });
      const client = new BoundedSparqlClient(registry, { engine: engineName });
      const { defaultPrefix, queries } = readGoldQueries(shards);
      const verdicts: string[] = [];
      try {
        for (const graph of ['library', 'observatory']) {
          const gold = goldResultsById(readGoldAnswers(shards, graph, digest)!);
          const urls = registry.endpoints.filter((e) => e.graph === graph).map((e) => e.url);
          for (const q of queries.filter((x) => x.graph === graph)) {
            const parsed = parseQuery(q.text, defaultPrefix);
            if (!parsed.ok) throw new Error(parsed.error);
            const plan = planQuery(trivialFederation(parsed.query.ast, urls).text, registry, { maxQueryChars: 1 << 20 });
            if (!plan.ok) throw new Error(`${q.id}: ${plan.message}`);
            const o =
              plan.route === 'direct'
                ? await client.direct(plan.targets[0].url, plan.query, 'application/sparql-results+json', 60_000)
                : await client.federated(plan.query, 'application/sparql-results+json', 60_000);
            if (o.status !== 'ok') throw new Error(`${q.id}: ${o.status} ${o.status === 'error' ? o.error : ''}`);
            const c = compareResults(gold.get(q.id)!.results!, JSON.parse(o.body) as SparqlResults, !!(parsed.query.ast as { order?: unknown[] }).order?.length);
            verdicts.push(`${q.id} ${plan.route} ${c.identical ? 'identical' : c.reason}`);
          }
        }
        // 14 distinct gold queries: 8 of library, 6 of observatory, each over several endpoints.
        expect(verdicts).toHaveLength(14);
        expect(verdicts.filter((v) => !v.endsWith(' federation identical'))).toEqual([]);
        // One query over both hosts: every triple of one shard on each.
        const [l1, o1] = [registry.endpoints.find((e) => e.id === 'library-shard1')!, registry.endpoints.find((e) => e.id === 'observatory-shard1')!];
        const both = planQuery(`SELECT (COUNT(*) AS ?n) { { SERVICE <${l1.url}> { ?s ?p ?o } } UNION { SERVICE <${o1.url}> { ?s ?p ?o } } }`, registry, { maxQueryChars: 8000 });
        expect(both.ok && both.route).toBe('federation');
        const o = await client.federated((both as { query: string }).query, 'application/sparql-results+json', 60_000);
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
    });
  }
});
