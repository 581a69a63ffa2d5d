/**
 * A worker's engine faulting on deep nesting, with serve's depth limit lifted (a
 * fault-injection sweep with an 8 s time limit to run out goes to `npm run test:slow`).
 * tests/serve-hardening.test.ts keeps one fault ("a worker whose engine faulted is replaced": 3,000
 * chained +1) and the parse stopped at the time limit (a 3,000-OPTIONAL query).
 */
import http from 'node:http';
import { beforeAll, describe, expect, it } from 'vitest';
import { serve } from '../src/serve/server.js';
import { MEDIA } from '../src/sparql/protocol.js';
import { demoBuild, tmpDir } from './helpers.js';

const COUNT = 'SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }';
const get = (query: string, accept: string | undefined, base: string) => fetch(`${base}?query=${encodeURIComponent(query)}`, { headers: accept ? { Accept: accept } : {} });
/**
 * POSTs a query with node:http, which waits for the answer's headers as long as it takes: Node's fetch gives up
 * after 300 s, less than sparqljs may take to parse 5,000 nested OPTIONAL on a loaded machine.
 */
const post = (url: string, body: string, headers: Record<string, string> = {}) =>
  new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = http.request(url, { method: 'POST', headers: { 'Content-Type': MEDIA.sparqlQuery, ...headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
const countOf = async (r: Response) => Number(((await r.json()) as { results: { bindings: { n: { value: string } }[] } }).results.bindings[0].n.value);

let shards: string;
beforeAll(async () => {
  shards = await demoBuild(tmpDir('fkgqa-hardening-'));
});

describe('serve: a worker whose engine faulted is replaced (deep nesting)', () => {
  it('recovers from 700 nested {} (a fault), refuses 5,000 nested OPTIONAL as too complex and stops their aggregate at the time limit, with the depth limits lifted, also with every endpoint in one worker', async () => {
    // serve's limit leaves sparqljs time to parse 5,000 nested OPTIONAL on a loaded machine (35 s when
    // quiet, 230 s at load 5 beside other tests); the aggregate, which sparqljs needs minutes to parse,
    // asks for 8 s itself (Fkgqa-Timeout).
    const s = await serve({ shards, kgs: ['library'], maxQueryDepth: 100_000, maxOperatorDepth: 100_000, workers: 1, timeoutMs: 1_200_000, writeFiles: false });
    try {
      const u = s.endpoint('library-shard4')!.url;
      const braces = await get('SELECT * WHERE ' + '{'.repeat(700) + '}'.repeat(700), undefined, u);
      expect([braces.status, braces.headers.get('fkgqa-query-error')]).toEqual([400, 'engine-fault']);
      expect(await countOf(await get(COUNT, undefined, u))).toBe(40);
      expect(await countOf(await get(COUNT, undefined, s.endpoint('library-shard2')!.url))).toBe(8);
      expect(s.restartsOf('library-shard4')).toEqual({ restarts: 1, faults: 1 });
      // Longer than a quick inspection reads, a query is parsed by sparqljs first: 5,000 nested OPTIONAL parse, but
      // their syntax tree is too deep to be taken over from the parser thread: too complex, never malformed, no fault.
      const optional = await post(u, 'SELECT * WHERE { ?s ?p ?o ' + 'OPTIONAL { ?s ?p ?o '.repeat(5000) + '}'.repeat(5000) + '}');
      expect([optional.status, optional.text.slice(0, 80)]).toEqual([400, 'query too complex: the parsed query nests too deep to be taken over from the par']);
      expect(await countOf(await get(COUNT, undefined, u))).toBe(40);
      expect(s.restartsOf('library-shard4')).toEqual({ restarts: 1, faults: 1 });
      // With an aggregate it is parsed by sparqljs first, which takes minutes: stopped at the time limit.
      const counted = await post(u, 'SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o ' + 'OPTIONAL { ?s ?p ?o '.repeat(5000) + '}'.repeat(5000) + '}', { 'Fkgqa-Timeout': '8000' });
      expect(counted.status).toBe(503);
      expect(await countOf(await get(COUNT, undefined, u))).toBe(40);
      expect(s.restartsOf('library-shard4')).toEqual({ restarts: 2, faults: 1 });
    } finally {
      await s.close();
    }
  }, 1_500_000);
});
