import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PARTITION_OPTIONS, partition } from '../src/partition/index.js';
import type { EndpointAnswer, EndpointTask } from '../src/serve/answer.js';
import { answerOf, answerTuple, decodeQuery, encodeQuery, QUERY_FIELDS } from '../src/serve/pool-messages.js';
import { EndpointPool, type PoolEndpoint } from '../src/serve/pool.js';
import { MEDIA } from '../src/sparql/protocol.js';
import { DEMO, tmpDir } from './helpers.js';

/**
 * The messages between serve's endpoint pool and its threads (src/serve/pool-messages.ts):
 * a batch of queries and an answer travel as flat arrays; every field of a task and an answer, the
 * behaviour profile's included, arrives as it was sent (through the structured clone postMessage makes).
 */
describe('pool messages: flat arrays that carry every field', () => {
  const plainTask: EndpointTask = { endpoint: 'library-shard1', query: 'SELECT * WHERE { ?s ?p ?o }', protocolDataset: false };
  const fullTask: EndpointTask = { endpoint: 'library-shard2', query: 'ASK {}', accept: MEDIA.xml, protocolDataset: true, refuse: ['service', 'values'], maxRows: 3, failStatus: 502 };

  it('a batch of two queries decodes to the same two tasks after a structured clone, six entries per query', () => {
    const batch: unknown[] = [];
    encodeQuery(batch, 7, plainTask);
    encodeQuery(batch, 8, fullTask);
    expect(batch.length).toBe(2 * QUERY_FIELDS);
    const cloned = structuredClone(batch);
    expect(cloned[0]).toBe(7);
    expect(cloned[QUERY_FIELDS]).toBe(8);
    expect(decodeQuery(cloned, 0)).toStrictEqual(plainTask);
    expect('accept' in decodeQuery(cloned, 0)).toBe(false);
    expect(decodeQuery(cloned, QUERY_FIELDS)).toStrictEqual(fullTask);
  });

  it('an answer decodes to the same answer after a structured clone, with its headers and profile or without', () => {
    const cut: EndpointAnswer = { status: 200, body: '{"head":{}}', type: `${MEDIA.json}`, kind: 'data', profile: 'truncated', headers: { 'Fkgqa-Truncated': 'rows=1; of=5' } };
    const plain: EndpointAnswer = { status: 406, body: 'no format\n', type: 'text/plain; charset=utf-8', kind: 'invalid' };
    const t = structuredClone(answerTuple(12, cut, 3.5));
    expect(t[0]).toBe(12);
    expect(t[5]).toBe(3.5);
    expect(answerOf(t)).toStrictEqual(cut);
    expect(answerOf(structuredClone(answerTuple(13, plain, 1)))).toStrictEqual(plain);
    expect(Object.keys(answerOf(answerTuple(13, plain, 1))).sort()).toStrictEqual(['body', 'kind', 'status', 'type']);
  });
});

describe('pool messages through a running pool', () => {
  let shards: string;
  let pool: EndpointPool;
  beforeAll(async () => {
    shards = path.join(tmpDir('fkgqa-pool-messages-'), 'shards');
    await partition({ ...DEFAULT_PARTITION_OPTIONS, source: DEMO, out: shards, kgs: ['library'] });
    const manifest = JSON.parse(fs.readFileSync(path.join(shards, 'library', 'manifest.json'), 'utf8')) as { shards: { endpoint: string; file: string; triples: number }[] };
    const endpoints: PoolEndpoint[] = manifest.shards.map((sh) => ({ id: sh.endpoint, sources: [{ file: path.join(shards, 'library', sh.file), format: MEDIA.ntriples }], triples: sh.triples }));
    pool = await EndpointPool.start(endpoints, { workers: 1 });
  });
  afterAll(async () => {
    await pool?.close();
  });

  it("a profile's row limit, refusal and simulated failure reach the worker, and the cut's header comes back", async () => {
    const run = (task: Partial<EndpointTask>) =>
      pool.run('library-shard1', { endpoint: 'library-shard1', query: 'SELECT ?s WHERE { ?s ?p ?o }', accept: MEDIA.json, protocolDataset: false, ...task }, { limitMs: 60_000 });
    const whole = await run({});
    const cut = await run({ maxRows: 2 });
    const refused = await run({ query: 'SELECT ?s WHERE { VALUES ?s { 1 } }', refuse: ['values'] });
    const failed = await run({ failStatus: 502 });
    if (whole.status !== 'ok' || cut.status !== 'ok' || refused.status !== 'ok' || failed.status !== 'ok') throw new Error('expected answers');
    const rows = (a: EndpointAnswer) => (JSON.parse(String(a.body)) as { results: { bindings: unknown[] } }).results.bindings.length;
    const all = rows(whole.answer);
    expect(all).toBeGreaterThan(2);
    expect(rows(cut.answer)).toBe(2);
    expect(cut.answer.profile).toBe('truncated');
    expect(cut.answer.headers).toStrictEqual({ 'Fkgqa-Truncated': `rows=2; of=${all}` });
    expect(whole.answer.headers).toBeUndefined();
    expect([refused.answer.status, refused.answer.profile]).toStrictEqual([403, 'refused']);
    expect([failed.answer.status, failed.answer.profile]).toStrictEqual([502, 'failure']);
  });

  it('ten queries sent in one turn travel in fewer messages than queries, each answered with its own body', async () => {
    const before = { ...pool.sent };
    const ids = Array.from({ length: 10 }, (_, i) => i);
    const outcomes = await Promise.all(
      ids.map((i) => pool.run('library-shard1', { endpoint: 'library-shard1', query: `SELECT (${i} AS ?i) WHERE {}`, accept: MEDIA.json, protocolDataset: false }, { limitMs: 60_000 })),
    );
    const values = outcomes.map((o) => (o.status === 'ok' ? (JSON.parse(String(o.answer.body)) as { results: { bindings: { i: { value: string } }[] } }).results.bindings[0].i.value : o.status));
    expect(values).toStrictEqual(ids.map(String));
    expect(pool.sent.queries - before.queries).toBe(10);
    expect(pool.sent.messages - before.messages).toBeLessThan(10);
  });
});
