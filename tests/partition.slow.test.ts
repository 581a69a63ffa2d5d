/**
 * The real corpus built twice (a second whole build, 10 s, goes to `npm run
 * test:slow`): byte-identical, and the digest recorded in tests/helpers.ts (DEV_OUTPUT_DIGEST).
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_PARTITION_OPTIONS, partition } from '../src/partition/index.js';
import { DEV_OUTPUT_DIGEST, HAS_SPIDER, SPIDER, tmpDir } from './helpers.js';

describe.skipIf(!HAS_SPIDER)('partition / Spider4SPARQL dev set, built twice', () => {
  it('rebuilds byte-identically', async () => {
    const first = await partition({ ...DEFAULT_PARTITION_OPTIONS, source: SPIDER, out: path.join(tmpDir(), 'shards') });
    const again = await partition({ ...DEFAULT_PARTITION_OPTIONS, source: SPIDER, out: path.join(tmpDir(), 'shards') });
    expect(again.outputDigest).toBe(first.outputDigest);
    expect(first.outputDigest).toBe(DEV_OUTPUT_DIGEST);
    // Two whole builds: 2 min on a quiet machine, over 5 min at load 20–30.
  }, 1_800_000);
});
