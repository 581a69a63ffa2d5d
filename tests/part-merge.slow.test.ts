/**
 * `fkgqa eval --part k/n` and `fkgqa merge` over every question of the demo build (16 questions x 2
 * repeats, 66 oracle runs through the federation engine: 90 s of wall at load 13), in
 * `npm run test:slow`. tests/part-merge.test.ts runs the same checks on the first 3 questions.
 */
import { describe, it } from 'vitest';
import { checkPartsAndMerge, usePartMergeFixture } from './part-merge-check.js';

const fx = usePartMergeFixture();

describe('fkgqa eval --part k/n and fkgqa merge (slow: every question of the demo)', () => {
  it('n parts cover the selection exactly once; their merge holds the runs of a single eval; an overlap and another condition are refused, naming the id, files and lines', async () => {
    await checkPartsAndMerge(fx, [], 32);
  }, 600_000);
});
