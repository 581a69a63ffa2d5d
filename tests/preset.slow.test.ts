/**
 * `--preset paper` over the real corpus (Spider4SPARQL dev set): two whole builds, with the figures
 * measured in docs/preset-paper.md. The presets' resolution and readings, on the demo dataset and
 * small inputs, are in preset.test.ts (`npm test`).
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_PARTITION_OPTIONS, partition } from '../src/partition/index.js';
import { resolveMethodOptions } from '../src/partition/presets.js';
import { summarizePartition } from '../src/report/partition-summary.js';
import { fkgqaInProcess, HAS_SPIDER, SPIDER, tmpDir } from './helpers.js';

describe.skipIf(!HAS_SPIDER)('presets / Spider4SPARQL dev set', () => {
  it('builds --preset paper with the figures measured in docs/preset-paper.md', async () => {
    const method = resolveMethodOptions('paper');
    const r = await partition({ ...DEFAULT_PARTITION_OPTIONS, ...method.options, preset: 'paper', source: SPIDER, out: path.join(tmpDir(), 'shards'), void: false });
    const s = summarizePartition(r);
    expect(s.shards.total).toBe(153);
    expect(s.shards.perGraph).toEqual({ mean: 7.65, median: 8, min: 4, max: 14 });
    expect(s.rulesPerGraph).toMatchObject({ mean: 5.4, median: 5, min: 2, max: 14 });
    expect(s.ruleComposition).toMatchObject({ predicate: { count: 36, share: 33.33 }, class: { count: 22, share: 20.37 }, horizontal: { count: 50, share: 46.3 } });
    expect(s.impliedFanOut).toEqual({ mean: 4.76, median: 4, min: 2, max: 9 });
    expect(s.applicability.overQuestions.class).toEqual({ count: 415, share: 40.14 });
    expect(s.shardBalanceCv).toBe(0.81);
    expect(s.guarantees.federation).toMatchObject({ federated: 510, necessarilyEmpty: 29, covered: 539 });
    expect(s.guarantees.rules.realised).toBe(s.guarantees.rules.total);
  });

  it('lets --buckets 3 override the preset on the command line: 124 shards', async () => {
    const out = path.join(tmpDir(), 'shards');
    const r = await fkgqaInProcess(['partition', '--source', SPIDER, '--out', out, '--preset', 'paper', '--buckets', '3', '--no-void', '--json', '-q']);
    expect(r.code).toBe(0);
    const s = JSON.parse(r.stdout).summary;
    expect(s.method).toEqual({ preset: 'paper', options: { ...resolveMethodOptions('paper').options, buckets: 3 } });
    expect(s.shards.total).toBe(124);
    expect(s.shards.perGraph).toEqual({ mean: 6.2, median: 6, min: 3, max: 12 });
    expect(s.impliedFanOut).toEqual({ mean: 3.82, median: 3, min: 2, max: 7 });
  });
});
