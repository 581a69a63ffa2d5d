import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts'],
    // Builds of the real corpus take seconds; clingo-wasm runs in worker threads, so tests run in forks.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: 'forks',
  },
});
