import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkGoldThroughMcp } from '../src/checks/mcp-gold.js';
import { verify } from '../src/index.js';
import { DEFAULT_PARTITION_OPTIONS, partition } from '../src/partition/index.js';
import { HAS_SPIDER, SPIDER, tmpDir } from './helpers.js';

/**
 * Long federation runs on the real corpus (`npm run test:slow`): every gold query of a graph through
 * the federation engine, by `fkgqa verify` and through run_sparql_query. Moved from
 * tests/verify.test.ts and tests/mcp.test.ts with their assertions unchanged.
 */
describe.skipIf(!HAS_SPIDER)('verify / Spider4SPARQL battle_death', () => {
  it('all 16 distinct queries identical or (q10, a tie under ORDER BY … LIMIT 1) equivalent in both forms', async () => {
    const shards = path.join(tmpDir('fkgqa-verify-spider-'), 'shards');
    await partition({ ...DEFAULT_PARTITION_OPTIONS, source: SPIDER, out: shards, kgs: ['battle_death'] });
    const r = await verify({ shards, timeoutMs: 30_000, forms: ['federated', 'trivial'] });
    expect(r.queries).toHaveLength(16);
    for (const f of ['federated', 'trivial'] as const) {
      const t = r.totals.comunica[f]!;
      // q10 ("the ship that caused most injuries") ties two ships at 3: either may be answered.
      expect(t.identical + t.equivalent).toBe(16);
      expect(t).toMatchObject({ different: 0, failed: 0 });
      expect(r.queries.filter((q) => q.engines.comunica[f]!.status !== 'identical').map((q) => q.id)).toEqual(t.equivalent ? ['battle_death/q10'] : []);
    }
  });
});

describe.skipIf(!HAS_SPIDER)('fkgqa mcp / Spider4SPARQL gold queries through run_sparql_query', () => {
  it('every distinct gold query of a graph (concert_singer), as its trivial federation, gives the gold answer', async () => {
    const out = path.join(tmpDir('fkgqa-mcp-spider-'), 'shards');
    await partition({ ...DEFAULT_PARTITION_OPTIONS, source: SPIDER, out, kgs: ['concert_singer'] });
    const r = await checkGoldThroughMcp({ shards: out, timeoutMs: 30_000 });
    const expected = new Set(JSON.parse(fs.readFileSync(path.join(out, 'benchmark.json'), 'utf8')).entries.map((e: { queryId: string }) => e.queryId)).size;
    expect(r.verdicts).toHaveLength(expected);
    expect(r.verdicts.filter((v) => v.status !== 'identical' && v.status !== 'equivalent').map((v) => `${v.id}: ${v.status} ${v.reason}`)).toEqual([]);
    expect(r.totals.identical).toBeGreaterThan(expected - 5);
    expect(Math.min(...r.verdicts.map((v) => v.services))).toBeGreaterThanOrEqual(2);
  });
});
