import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { InputError } from '../src/common/errors.js';
import { DEFAULT_PARTITION_OPTIONS, partition } from '../src/partition/index.js';
import { checkProfileConfig, profileFor } from '../src/serve/profile.js';
import { seededRandom } from '../src/common/random.js';
import { serve, type ShardServer } from '../src/serve/server.js';
import { DEMO, tmpDir } from './helpers.js';

let shards: string;
let server: ShardServer;
const ALL = 'SELECT ?s ?p ?o WHERE { ?s ?p ?o }';
const get = (url: string, query: string, accept?: string) => fetch(`${url}?query=${encodeURIComponent(query)}`, { headers: accept ? { Accept: accept } : {} });

beforeAll(async () => {
  shards = path.join(tmpDir('fkgqa-profiles-'), 'shards');
  await partition({ ...DEFAULT_PARTITION_OPTIONS, source: DEMO, out: shards, kgs: ['library'] });
  const profiles = path.join(shards, '..', 'profiles.json');
  fs.writeFileSync(
    profiles,
    JSON.stringify({
      default: { latencyMs: 0 },
      endpoints: {
        'library-shard1': { name: 'capped', maxRows: 2 },
        'library-shard2': { latencyMs: 150 },
        'library-shard3': { failureRate: 0.5, seed: 1 },
        'library-shard4': { refuse: ['service', 'aggregates'] },
      },
    }),
  );
  server = await serve({ shards, profiles });
});
afterAll(async () => {
  await server?.close();
});

describe('behaviour profiles (paper challenges C2 and C4)', () => {
  it('are resolved default < graph < endpoint and recorded in endpoints.json', () => {
    expect(profileFor({ default: { latencyMs: 5 }, graphs: { g: { maxRows: 9 } }, endpoints: { 'g-shard1': { latencyMs: 7 } } }, 'g-shard1', 'g')).toEqual({ latencyMs: 7, maxRows: 9 });
    expect(profileFor({ default: {} }, 'g-shard1', 'g')).toBeUndefined();
    const file = JSON.parse(fs.readFileSync(path.join(`${shards}.state`, 'endpoints.json'), 'utf8'));
    expect(file.endpoints[0].profile).toEqual({ latencyMs: 0, maxRows: 2, name: 'capped' });
    expect(file.profileFile).toMatch(/profiles\.json$/);
  });

  it('rejects unknown fields and values out of range, naming them', () => {
    expect(() => checkProfileConfig({ endpoints: { x: { maxrows: 3 } } })).toThrow(InputError);
    expect(() => checkProfileConfig({ endpoints: { x: { maxrows: 3 } } })).toThrow(/endpoints\.x: unknown field "maxrows"/);
    expect(() => checkProfileConfig({ default: { failureRate: 2 } })).toThrow(/failureRate/);
    expect(() => checkProfileConfig({ default: { refuse: ['optional'] } })).toThrow(/refuse/);
  });

  it('maxRows cuts SELECT answers and marks the cut in a header and in the JSON/XML head', async () => {
    const url = server.endpoint('library-shard1')!.url;
    const r = await get(url, ALL);
    expect(r.status).toBe(200);
    expect(r.headers.get('fkgqa-truncated')).toBe('rows=2; of=35');
    const body = (await r.json()) as { head: { vars: string[]; link: string[] }; results: { bindings: unknown[] } };
    expect(body.results.bindings).toHaveLength(2);
    expect(body.head.link).toEqual(['urn:fkgqa:truncated:max-rows=2']);
    expect(body.head.vars).toEqual(['s', 'p', 'o']);
    const xml = await (await get(url, ALL, 'application/sparql-results+xml')).text();
    expect(xml.match(/<result>/g)).toHaveLength(2);
    expect(xml).toContain('<link href="urn:fkgqa:truncated:max-rows=2"/>');
    const csv = await get(url, ALL, 'text/csv');
    const lines = (await csv.text()).trim().split('\r\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toBe('s,p,o');
    const tsv = await (await get(url, ALL, 'text/tab-separated-values')).text();
    expect(tsv.trim().split('\n')).toHaveLength(3);
    const construct = await get(url, 'CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }', 'application/n-triples');
    expect(construct.headers.get('fkgqa-truncated')).toBe('triples=2; of=35');
    expect((await construct.text()).trim().split('\n')).toHaveLength(2);
    const small = await get(url, 'SELECT ?s WHERE { ?s ?p ?o } LIMIT 1');
    expect(small.headers.get('fkgqa-truncated')).toBeNull();
  });

  it('without a profile nothing is cut', async () => {
    const plain = await serve({ shards, kgs: ['library'], writeFiles: false });
    try {
      const r = await get(plain.endpoint('library-shard1')!.url, ALL);
      expect(r.headers.get('fkgqa-truncated')).toBeNull();
      expect(((await r.json()) as { results: { bindings: unknown[] } }).results.bindings).toHaveLength(35);
    } finally {
      await plain.close();
    }
  });

  it('latencyMs delays every answer of the endpoint', async () => {
    const t = performance.now();
    const r = await get(server.endpoint('library-shard2')!.url, 'ASK {}');
    expect(r.status).toBe(200);
    expect(performance.now() - t).toBeGreaterThanOrEqual(145);
  });

  it('failureRate fails a seeded, reproducible share of queries with 503', async () => {
    const statuses = async (s: ShardServer) => {
      const out: number[] = [];
      for (let i = 0; i < 12; i++) out.push((await get(s.endpoint('library-shard3')!.url, 'ASK {}')).status);
      return out;
    };
    const first = await statuses(server);
    const again = await serve({ shards, profiles: { endpoints: { 'library-shard3': { failureRate: 0.5, seed: 1 } } }, writeFiles: false });
    try {
      expect(await statuses(again)).toEqual(first);
    } finally {
      await again.close();
    }
    // The generator's draws decide: 503 exactly where a draw is below 0.5.
    const rnd = seededRandom(1, 'library-shard3');
    expect(first).toEqual(Array.from({ length: 12 }, () => (rnd() < 0.5 ? 503 : 200)));
    expect(first).toContain(503);
    expect(first).toContain(200);
  });

  it('refuse answers 403 to queries using a refused feature, others run', async () => {
    const url = server.endpoint('library-shard4')!.url;
    const service = await get(url, 'SELECT * WHERE { SERVICE <http://127.0.0.1:1/sparql> { ?s ?p ?o } }');
    expect(service.status).toBe(403);
    expect(await service.text()).toContain('refuses queries using service');
    expect((await get(url, 'SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }')).status).toBe(403);
    expect((await get(url, 'SELECT ?s WHERE { ?s ?p ?o } LIMIT 1')).status).toBe(200);
  });

  it('logs what a profile did', async () => {
    // Answers are logged when their responses close: wait for the three, not for a fixed time.
    await vi.waitFor(() => expect(server.log.counts()['library-shard4'].total).toBe(3), { timeout: 60_000, interval: 10 });
    const c = server.log.counts();
    expect(c['library-shard4'].errors).toBe(2);
    expect(c['library-shard4'].total).toBe(3);
  });
});

describe('serve options: one port per endpoint, every store in one worker', () => {
  it('serves http://host:port/sparql per endpoint, each shard seeing only its own triples', async () => {
    const s = await serve({ shards, portPerEndpoint: true, workers: 1, withOriginals: true, writeFiles: false });
    try {
      const ports = new Set(s.endpoints.map((e) => new URL(e.url).port));
      expect(ports.size).toBe(5);
      expect(s.endpoints.every((e) => new URL(e.url).pathname === '/sparql')).toBe(true);
      const counts = await Promise.all(
        s.endpoints.map(async (e) =>
          Number(((await (await get(e.url, 'SELECT (COUNT(*) AS ?n) { ?s ?p ?o }')).json()) as { results: { bindings: { n: { value: string } }[] } }).results.bindings[0].n.value),
        ),
      );
      expect(counts).toEqual([35, 8, 14, 40, 97]);
      expect((await fetch(s.endpoints[0].url.replace(/sparql$/, '.well-known/void'))).status).toBe(200);
    } finally {
      await s.close();
    }
  });
});
