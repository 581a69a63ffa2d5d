import { defineConfig } from 'vitest/config';
import { longestFirst } from './tests/longest-first.js';
import { SPLIT_FILES, TIER_TAGS } from './tests/tiers.js';

/** The slow test files that take longest, started first (tests/longest-first.ts). */
const LONGEST_FIRST = [
  'long-query.slow',
  'engines.slow',
  'verify.slow',
  'part-merge.slow',
  'eval-crash.slow',
  'service-shapes.slow',
  'serve-limits.slow',
  'queue.slow',
  'partition.slow',
  'run.slow',
  'preset.slow',
  'serve-pool.slow',
  'federation-inputs.slow',
];

/**
 * `npm run test:slow`: the tests that take seconds each (`tests/**\/*.slow.test.ts`: fault-injection
 * sweeps, waits behind heavy queries, every engine's cases over served shards, the queue's
 * kill-and-resume runs, long federation runs), with the settings of vitest.config.ts.
 */
export default defineConfig({
  test: {
    // The slow files whole, and the tests tagged slow of the files of npm test that hold some (tests/tiers.ts).
    include: ['tests/**/*.slow.test.ts', ...SPLIT_FILES],
    tags: TIER_TAGS,
    tagsFilter: ['slow || !split-tiers'],
    // Limits for hangs, as in vitest.config.ts: at load 17 a real-corpus build took 105-121 s.
    testTimeout: 300_000,
    hookTimeout: 300_000,
    // The demo build that many files read, made once per run: each file copies it.
    globalSetup: ['tests/global-setup.ts'],
    pool: 'forks',
    // The TypeScript of src/ and tests/ transformed once and kept on disk between runs (node_modules/.experimental-vitest-cache,
    // keyed by each file's content): a run transforms only what changed.
    experimental: { fsModuleCache: true },
    // Two test files at a time on a 2-core machine (vitest's default is one fewer than the cores):
    // most of a test's time is spent waiting for child processes, worker threads and endpoints.
    maxWorkers: 2,
    sequence: { sequencer: longestFirst(LONGEST_FIRST) },
    reporters: ['default', './tests/progress-reporter.ts'],
  },
});
