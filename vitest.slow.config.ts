import { defineConfig } from 'vitest/config';

/**
 * `npm run test:slow`: the slow fault-injection sweeps and long federation runs
 * (`tests/**\/*.slow.test.ts`), with the settings of vitest.config.ts.
 */
export default defineConfig({
  test: {
    include: ['tests/**/*.slow.test.ts'],
    // Limits for hangs, as in vitest.config.ts: at load 17 a real-corpus build took 105-121 s.
    testTimeout: 300_000,
    hookTimeout: 300_000,
    pool: 'forks',
    // Two test files at a time on a 2-core machine (vitest's default is one fewer than the cores):
    // most of a test's time is spent waiting for child processes, worker threads and endpoints.
    maxWorkers: 2,
    reporters: ['default', './tests/progress-reporter.ts'],
  },
});
