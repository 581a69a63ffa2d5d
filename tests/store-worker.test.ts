// @module-tag split-tiers (tests/tiers.ts: the tests tagged slow run in npm run test:slow)
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseQuery } from '../src/sparql/parse.js';
import { StoreWorker } from '../src/common/store-worker.js';
import { DEMO, HAS_SPIDER, SPIDER, tmpDir } from './helpers.js';

const JSON_RESULTS = 'application/sparql-results+json';
const count = (body: string) => Number(JSON.parse(body).results.bindings[0].n.value);

describe('store worker', () => {
  it('loads files and answers queries off the main thread', async () => {
    const w = await StoreWorker.start([{ file: path.join(DEMO, 'kg/library.nt'), format: 'application/n-triples' }]);
    expect(w.triples).toBe(97);
    const r = await w.query({ query: 'SELECT (COUNT(*) AS ?n) WHERE { ?s a <http://valuenet/ontop/book> }', resultsFormat: JSON_RESULTS, timeoutMs: 10_000 });
    expect(r.status).toBe('ok');
    if (r.status === 'ok') expect(count(r.body)).toBe(8);
    const bad = await w.query({ query: 'SELECT ?x WHERE { ?x ?y }', resultsFormat: JSON_RESULTS, timeoutMs: 10_000 });
    expect(bad.status).toBe('error');
    await w.close();
  });

  it('replaces a worker whose engine faulted: the next query gets the right answer (not "memory access out of bounds")', async () => {
    const w = await StoreWorker.start([{ file: path.join(DEMO, 'kg/library.nt'), format: 'application/n-triples' }]);
    try {
      // 3,000 chained additions overflow oxigraph 0.5.11's parser stack and trap its WebAssembly instance.
      const bad = await w.query({ query: `SELECT * WHERE { ?s ?p ?o FILTER(1${'+1'.repeat(3000)} > 0) }`, resultsFormat: JSON_RESULTS, timeoutMs: 10_000 });
      expect(bad).toMatchObject({ status: 'error', fault: true });
      expect(w.faults).toBe(1);
      const r = await w.query({ query: 'SELECT (COUNT(*) AS ?n) WHERE { ?s a <http://valuenet/ontop/book> }', resultsFormat: JSON_RESULTS, timeoutMs: 10_000 });
      expect(r.status).toBe('ok');
      if (r.status === 'ok') expect(count(r.body)).toBe(8);
      // A plain syntax error is not a fault: no restart.
      expect(await w.query({ query: 'SELECT ?x WHERE { ?x ?y }', resultsFormat: JSON_RESULTS, timeoutMs: 10_000 })).toMatchObject({ status: 'error' });
      expect(w.restarts).toBe(1);
    } finally {
      await w.close();
    }
  });

  it('survives a fault whose reload fails (its file is gone): later queries get an error, nothing is left unhandled', async () => {
    const file = path.join(tmpDir('fkgqa-sw-'), 'library.nt');
    fs.copyFileSync(path.join(DEMO, 'kg/library.nt'), file);
    const w = await StoreWorker.start([{ file, format: 'application/n-triples' }]);
    try {
      fs.rmSync(file);
      const bad = await w.query({ query: `SELECT * WHERE { ?s ?p ?o FILTER(1${'+1'.repeat(3000)} > 0) }`, resultsFormat: JSON_RESULTS, timeoutMs: 10_000 });
      expect(bad).toMatchObject({ status: 'error', fault: true });
      // The reload of the faulted thread fails with no request waiting (its file is gone).
      expect(await w.settled()).toBe(false);
      const next = await w.query({ query: 'ASK {}', resultsFormat: JSON_RESULTS, timeoutMs: 10_000 });
      expect(next.status).toBe('error');
      if (next.status === 'error') expect(next.error).toContain('could not load its data');
    } finally {
      await w.close();
    }
  });

  it("reports a load error with oxigraph's message", async () => {
    await expect(StoreWorker.start([{ file: path.join(DEMO, 'dev.json'), format: 'application/n-triples' }])).rejects.toThrow(/line 1/);
  });

  it('stops a query over its time limit and keeps answering (an oxigraph query cannot be cancelled: the thread is replaced)', async () => {
    // 3,000 triples joined three ways: ~10^7 solutions, seconds of work for oxigraph.
    const file = path.join(tmpDir('fkgqa-sw-'), 'big.nt');
    fs.writeFileSync(file, Array.from({ length: 3000 }, (_, i) => `<http://e/s${i}> <http://e/p> <http://e/o${i % 50}> .`).join('\n'));
    const w = await StoreWorker.start([{ file, format: 'application/n-triples' }]);
    let ticks = 0;
    const timer = setInterval(() => ticks++, 10);
    const slow = w.query({
      query: 'SELECT (COUNT(*) AS ?n) { ?a <http://e/p> ?x . ?b <http://e/p> ?x . ?c <http://e/p> ?x }',
      resultsFormat: JSON_RESULTS,
      timeoutMs: 300,
    });
    const next = w.query({ query: 'SELECT (COUNT(*) AS ?n) { ?a ?p ?o }', resultsFormat: JSON_RESULTS, timeoutMs: 10_000 });
    const r = await slow;
    clearInterval(timer);
    expect(r.status).toBe('timeout');
    expect(ticks).toBeGreaterThan(3); // the caller's event loop kept running (≈30 ticks unloaded)
    const after = await next;
    expect(after.status).toBe('ok');
    if (after.status === 'ok') expect(count(after.body)).toBe(3000);
    expect(w.restarts).toBe(1);
    await w.close();
  });
});

describe.skipIf(!HAS_SPIDER)('store worker / Spider4SPARQL world_1', () => {
  // Loads 38,148 triples and runs to its 2 s limit: seconds of CPU.
  it('times out one of the gold queries oxigraph cannot finish (corpus README: dev entries 764–767, 784, 785)', { tags: ['slow'] }, async () => {
    const dev = JSON.parse(fs.readFileSync(path.join(SPIDER, 'dev.json'), 'utf8'));
    const parsed = parseQuery(dev[764].query, 'http://valuenet/ontop/');
    if (!parsed.ok) throw new Error(parsed.error);
    const w = await StoreWorker.start([{ file: path.join(SPIDER, 'kg/world_1.nt'), format: 'application/n-triples' }]);
    expect(w.triples).toBe(38_148);
    const r = await w.query({ query: parsed.query.normalized, resultsFormat: JSON_RESULTS, timeoutMs: 2_000 });
    expect(r.status).toBe('timeout');
    await w.close();
  });
});

describe('store worker / restart', () => {
  it('answers with an error, not a crash, when its data is gone at a restart', async () => {
    const dir = tmpDir('fkgqa-sw-');
    const file = path.join(dir, 'big.nt');
    fs.writeFileSync(file, Array.from({ length: 3000 }, (_, i) => `<http://e/s${i}> <http://e/p> <http://e/o${i % 50}> .`).join('\n'));
    const w = await StoreWorker.start([{ file, format: 'application/n-triples' }]);
    fs.rmSync(file);
    const slow = await w.query({ query: 'SELECT (COUNT(*) AS ?n) { ?a <http://e/p> ?x . ?b <http://e/p> ?x . ?c <http://e/p> ?x }', resultsFormat: JSON_RESULTS, timeoutMs: 200 });
    expect(slow.status).toBe('timeout');
    const next = await w.query({ query: 'ASK { ?s ?p ?o }', resultsFormat: JSON_RESULTS, timeoutMs: 5_000 });
    expect(next.status).toBe('error');
    if (next.status === 'error') expect(next.error).toMatch(/^store worker could not load its data: .*big\.nt/);
    await w.close();
  });
});
