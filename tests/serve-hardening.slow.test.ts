/**
 * A worker's engine faulting on deep nesting, with serve's depth limit lifted (a
 * fault-injection sweep with an 8 s time limit to run out goes to `npm run test:slow`).
 * tests/serve-hardening.test.ts keeps one fault ("a worker whose engine faulted is replaced": 3,000
 * chained +1) and the parse stopped at the time limit (a 3,000-OPTIONAL query).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { serve } from '../src/serve/server.js';
import { PARSE_HERE_MAX_CHARS } from '../src/sparql/parse.js';
import { MEDIA } from '../src/sparql/protocol.js';
import { demoBuild, tmpDir } from './helpers.js';

const COUNT = 'SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }';
const get = (query: string, accept: string | undefined, base: string) => fetch(`${base}?query=${encodeURIComponent(query)}`, { headers: accept ? { Accept: accept } : {} });
/** POSTs a query; its status and text. */
const post = async (url: string, body: string, headers: Record<string, string> = {}) => {
  const r = await fetch(url, { method: 'POST', headers: { 'Content-Type': MEDIA.sparqlQuery, ...headers }, body });
  return { status: r.status, text: await r.text() };
};
const countOf = async (r: Response) => Number(((await r.json()) as { results: { bindings: { n: { value: string } }[] } }).results.bindings[0].n.value);

let shards: string;
beforeAll(async () => {
  shards = await demoBuild(tmpDir('fkgqa-hardening-'));
});

describe('serve: a worker whose engine faulted is replaced (deep nesting)', () => {
  it('recovers from 700 nested {} (a fault), refuses an operator chain nesting 30,000 deep as too complex (the parser thread parses it, its syntax tree cannot be taken over) and stops the aggregate of 5,000 nested OPTIONAL at the time limit, with the depth limits lifted, also with every endpoint in one worker', async () => {
    // The limit is for hangs (the chain parses in seconds); the aggregate, which sparqljs needs minutes
    // to parse, asks for 8 s itself (Fkgqa-Timeout).
    const s = await serve({ shards, kgs: ['library'], maxQueryDepth: 100_000, maxOperatorDepth: 100_000, workers: 1, timeoutMs: 300_000, writeFiles: false });
    try {
      const u = s.endpoint('library-shard4')!.url;
      const braces = await get('SELECT * WHERE ' + '{'.repeat(700) + '}'.repeat(700), undefined, u);
      expect([braces.status, braces.headers.get('fkgqa-query-error')]).toEqual([400, 'engine-fault']);
      expect(await countOf(await get(COUNT, undefined, u))).toBe(40);
      expect(await countOf(await get(COUNT, undefined, s.endpoint('library-shard2')!.url))).toBe(8);
      expect(s.restartsOf('library-shard4')).toEqual({ restarts: 1, faults: 1 });
      // Longer than the caller's thread parses itself (PARSE_HERE_MAX_CHARS), a query goes to the parser thread:
      // sparqljs parses 30,000 chained +1 there in seconds, but their syntax tree, 30,000 operations deep, is too
      // deep to be taken over by the endpoint's worker (it overflows from about 6,000): too complex, never
      // malformed, and no fault (oxigraph, given the chain, would fault as on 3,000 chained +1).
      const chain = `SELECT * WHERE { ?s ?p ?o FILTER(1${'+1'.repeat(30_000)} > 0) }`;
      expect(chain.length).toBeGreaterThan(PARSE_HERE_MAX_CHARS);
      const chained = await post(u, chain);
      expect([chained.status, chained.text.slice(0, 80)]).toEqual([400, 'query too complex: the parsed query nests too deep to be taken over from the par']);
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
  });
});
