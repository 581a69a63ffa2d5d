/**
 * `fkgqa serve --store virtuoso` on the real corpus's world_1: a federation engine's exclusive
 * group that is a cross product of two groups of triple patterns (world_1 q24: 238 official
 * languages × 984 languages of countries) is answered in full, and the gold queries whose federated
 * forms send such groups (q23, q24, q30) are answered as on the unsharded graph. Needs the corpus
 * and Virtuoso (skipped where the corpus is missing; without Virtuoso it fails:
 * `virtuosoTestsRun`). The time limits are long: the comparison is of answers, not of speed. The
 * verify of q23, q24 and q30 takes minutes (a 968,256-row join in the federation engine): it runs
 * with `FKGQA_LONG_CHECKS=1`, as the Virtuoso verify of the whole dev set does.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verify } from '../src/index.js';
import { DEFAULT_PARTITION_OPTIONS, partition } from '../src/partition/index.js';
import { serve, type ShardServer } from '../src/serve/server.js';
import { HAS_SPIDER, SPIDER, tmpDir, virtuosoTestsRun } from './helpers.js';

const run = HAS_SPIDER && virtuosoTestsRun();
const LONG_MS = 1_200_000;
const CL = 'http://valuenet/ontop/countrylanguage';

/** The exclusive group comunica sends to the shard holding both groups for q24. */
const EXCLUSIVE_GROUP = `SELECT ?t2 ?t1 ?t4 ?t3 WHERE { ?t2 <${CL}#isofficial> "T" . ?t2 <${CL}#ref-countrycode> ?t1 . ?t2 a <${CL}> . ?t4 <${CL}#ref-countrycode> ?t3 . ?t4 a <${CL}> . }`;

/** The rows of one query's answer from an endpoint, as SPARQL JSON bindings. */
async function rows(url: string, query: string): Promise<Record<string, { type: string; value: string }>[]> {
  const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/sparql-query', accept: 'application/sparql-results+json' }, body: query });
  expect(r.status).toBe(200);
  return ((await r.json()) as { results: { bindings: Record<string, { type: string; value: string }>[] } }).results.bindings;
}

describe.runIf(run)('serve --store virtuoso: cross products of the world_1 shards', () => {
  let shards: string;
  let server: ShardServer;

  beforeAll(async () => {
    shards = path.join(tmpDir('fkgqa-virtuoso-product-'), 'shards');
    await partition({ ...DEFAULT_PARTITION_OPTIONS, source: SPIDER, out: shards, kgs: ['world_1'] });
    server = await serve({ shards, store: 'virtuoso', storeHosts: ['127.0.0.2', '127.0.0.3'], timeoutMs: LONG_MS });
  }, LONG_MS);

  afterAll(async () => {
    await server?.close();
  });

  it(
    'answers an exclusive group of two unconnected groups with every combination of their rows',
    async () => {
      // The shard holding both groups: the one with official-language triples.
      const officialCount = `SELECT (COUNT(*) AS ?n) WHERE { ?t2 <${CL}#isofficial> "T" . ?t2 <${CL}#ref-countrycode> ?t1 . ?t2 a <${CL}> }`;
      const counts = await Promise.all(server.endpoints.map(async (e) => Number((await rows(e.url, officialCount))[0].n.value)));
      expect(counts.filter((n) => n > 0).length).toBe(1);
      const endpoint = server.endpoints[counts.findIndex((n) => n > 0)];
      const count = async (q: string) => Number((await rows(endpoint.url, q))[0].n.value);
      const official = await count(officialCount);
      const languages = await count(`SELECT (COUNT(*) AS ?n) WHERE { ?t4 <${CL}#ref-countrycode> ?t3 . ?t4 a <${CL}> }`);
      expect([official, languages]).toEqual([238, 984]);
      const answer = await rows(endpoint.url, EXCLUSIVE_GROUP);
      expect(answer.length).toBe(official * languages);
      // Every combination exactly once.
      expect(new Set(answer.map((b) => `${b.t2.value} ${b.t4.value}`)).size).toBe(official * languages);
      expect(answer.every((b) => b.t1.type === 'uri' && b.t3.type === 'uri' && b.t4.value.startsWith(`${CL}/`))).toBe(true);
    },
    LONG_MS,
  );

  it.runIf(process.env.FKGQA_LONG_CHECKS === '1')(
    'answers world_1 q23, q24 and q30 federated as on the unsharded graph (comunica, exclusive groups sent)',
    async () => {
      const report = await verify({ shards, endpoints: true, queries: ['world_1/q23', 'world_1/q24', 'world_1/q30'], timeoutMs: LONG_MS, forms: ['federated'], federationEngine: ['comunica'] });
      const got = Object.fromEntries(report.queries.map((q) => [q.id, [q.gold.rows, q.engines.comunica?.federated?.status, q.engines.comunica?.federated?.rows]]));
      expect(got).toEqual({ 'world_1/q23': [6, 'identical', 6], 'world_1/q24': [3, 'identical', 3], 'world_1/q30': [1, 'identical', 1] });
    },
    LONG_MS,
  );
});
