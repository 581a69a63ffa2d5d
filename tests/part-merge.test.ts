// @module-tag split-tiers (tests/tiers.ts: the tests tagged slow run in npm run test:slow)
/**
 * An evaluation spread without infrastructure: `fkgqa eval --part k/n` (a stable split of the
 * selected runs) and `fkgqa merge` (src/eval/merge.ts), with the oracle on the demo build.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { conditionMismatch, type RunRecord } from '../src/eval/record.js';
import { fkgqaInProcess } from './helpers.js';
import { checkPartsAndMerge, usePartMergeFixture } from './part-merge-check.js';

const fx = usePartMergeFixture();
const evalArgs = (out: string, ...more: string[]) => fx.evalArgs(out, ...more);

describe('fkgqa eval --part k/n and fkgqa merge', () => {
  // Every question of the demo (32 runs, 66 oracle runs in all): tests/part-merge.slow.test.ts.
  it(
    'n parts cover the selection (the first 3 questions, 2 repeats) exactly once; their merge holds the runs of a single eval; an overlap and another condition are refused, naming the id, files and lines',
    { tags: ['slow'] },
    async () => {
      await checkPartsAndMerge(fx, ['--limit', '3'], 6);
    },
  );
  it('--part must be k/n with 1 ≤ k ≤ n', async () => {
    for (const bad of ['0/3', '4/3', '2', 'a/b']) {
      const r = await fkgqaInProcess(evalArgs(path.join(fx.dir, 'bad.jsonl'), '--part', bad));
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('--part must be k/n with 1 ≤ k ≤ n ≤ 10000');
    }
    expect(fs.existsSync(path.join(fx.dir, 'bad.jsonl'))).toBe(false);
  });

  it('conditionMismatch names every field of the condition (RunCondition) that differs, and nothing for runs of one condition', () => {
    const base = {
      format: 'fkgqa-run/2',
      build: { outputDigest: 'a', goldDigest: null },
      setup: 'baseline',
      agent: 'llm',
      model: 'm',
      temperature: 0,
      seed: null,
      maxTurns: 10,
      limits: { messages: null, tokens: null, timeMs: null, queryTimeoutMs: 30000, maxQueryChars: 8000, requestTimeoutMs: 300000, maxRetries: 5, federationEngine: 'comunica' },
      prompt: { sha256: 'p' },
    } as unknown as RunRecord;
    // Where the model was reached and the LLM request's time limit and retries are not the condition.
    expect(conditionMismatch(base, { ...base, id: 'other', baseUrl: 'http://elsewhere/v1', limits: { ...base.limits!, requestTimeoutMs: 60000, maxRetries: 0 } } as RunRecord)).toBeUndefined();
    expect(
      conditionMismatch(base, {
        ...base,
        model: 'n',
        temperature: 0.7,
        limits: { ...base.limits!, timeMs: 60000, federationEngine: 'jena' },
        tools: { source: 'mcp', names: [], mcpArgs: ['--x'] },
      } as RunRecord),
    ).toBe('model "m" ≠ "n", temperature 0 ≠ 0.7, limits.timeMs null ≠ 60000, federationEngine "comunica" ≠ "jena", mcpArgs [] ≠ ["--x"]');
  });
});

describe('fkgqa worker --rate', () => {
  it('is N runs per second, minute or hour; anything else is refused', async () => {
    const { parseRate } = await import('../src/cli/program.js');
    expect(parseRate('60/min')).toEqual({ max: 60, durationMs: 60_000 });
    expect(parseRate('2/s')).toEqual({ max: 2, durationMs: 1000 });
    expect(parseRate('1000/h')).toEqual({ max: 1000, durationMs: 3_600_000 });
    for (const bad of ['0/min', '60', '60/day', '-1/s']) expect(() => parseRate(bad)).toThrow('--rate must be N/s, N/min or N/h with N ≥ 1, e.g. 60/min');
  });
});
