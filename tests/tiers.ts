/**
 * The two test tiers' shared settings (vitest.config.ts: `npm test`; vitest.slow.config.ts:
 * `npm run test:slow`). A test that takes seconds but shares its file's setup (a served build, an
 * engine, a fake server) stays in its file with the tag `slow`: `npm test` leaves it out, and
 * `npm run test:slow` runs it (with the hooks it needs, in its file) beside the `*.slow.test.ts` files.
 * A file holding such tests says so with a `// @module-tag split-tiers` line and is named in SPLIT_FILES.
 */

/** The tags of both tiers' configs (vitest test tags: `it(name, { tags: ['slow'] }, fn)`). */
export const TIER_TAGS = [
  { name: 'slow', description: 'takes seconds; runs in npm run test:slow, not in npm test' },
  { name: 'split-tiers', description: 'a file of npm test whose tests tagged slow run in npm run test:slow' },
];

/** The files of `npm test` that hold tests tagged `slow` (each with a `// @module-tag split-tiers` line). */
export const SPLIT_FILES = [
  'tests/mcp-surface.test.ts',
  'tests/query.test.ts',
  'tests/eval.test.ts',
  'tests/eval-runs.test.ts',
  'tests/verify.test.ts',
  'tests/verify-running-serve.test.ts',
  'tests/cli.test.ts',
  'tests/stats.test.ts',
  'tests/score.test.ts',
  'tests/part-merge.test.ts',
  'tests/federation.test.ts',
  'tests/mcp.test.ts',
  'tests/build-safety.test.ts',
  'tests/store-worker.test.ts',
  'tests/plan.test.ts',
  'tests/serve.test.ts',
  'tests/federation-capacity.test.ts',
];
