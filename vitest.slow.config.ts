import { defineConfig } from 'vitest/config';

/**
 * `npm run test:slow`: the slow fault-injection sweeps and long federation runs
 * (`tests/**\/*.slow.test.ts`), with the settings of vitest.config.ts.
 */
export default defineConfig({
  test: {
    include: ['tests/**/*.slow.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Two test files at a time on a 2-core machine (vitest's default is one fewer than the cores):
    // most of a test's time is spent waiting for child processes, worker threads and endpoints.
    maxWorkers: 2,
    reporters: ['default', './tests/progress-reporter.ts'],
  },
});
