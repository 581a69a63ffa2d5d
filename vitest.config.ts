import { defineConfig } from 'vitest/config';

/**
 * `npm test`: every test but the slow fault-injection sweeps and long federation runs
 * (`*.slow.test.ts`, run by `npm run test:slow` with vitest.slow.config.ts; CI runs both).
 * Progress per test file goes to stderr (tests/progress-reporter.ts).
 */
export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts'],
    exclude: ['tests/**/*.slow.test.ts', '**/node_modules/**'],
    // Builds of the real corpus take seconds; clingo-wasm runs in worker threads, so tests run in forks.
    // The limits are for hangs, not for timing: every wait inside a test is on an event.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // The demo build (and its gold answers) that many files read, made once per run: each file copies it.
    globalSetup: ['tests/global-setup.ts'],
    pool: 'forks',
    // Two test files at a time on a 2-core machine (vitest's default is one fewer than the cores):
    // most of a test's time is spent waiting for child processes, worker threads and endpoints.
    maxWorkers: 2,
    reporters: ['default', './tests/progress-reporter.ts'],
  },
});
