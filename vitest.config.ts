import { defineConfig } from 'vitest/config';
import { longestFirst } from './tests/longest-first.js';

/** The test files of `npm test` that take longest, started first (tests/longest-first.ts). */
const LONGEST_FIRST = ['verify', 'mcp', 'long-query', 'eval-runs', 'hostile-answers', 'partition', 'cli', 'build-safety', 'preset', 'mcp-surface', 'eval', 'run', 'federation', 'eval-crash'];

/**
 * `npm test`: unit tests and the integration tests that take a second or two (about 90 s on a quiet
 * 2-core machine). Fault-injection sweeps, waits behind heavy queries, every engine's cases over
 * served shards, the queue's kill-and-resume runs and long federation runs are `*.slow.test.ts`,
 * run by `npm run test:slow` (vitest.slow.config.ts; CI runs both).
 * Progress per test file goes to stderr (tests/progress-reporter.ts).
 */
export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts'],
    exclude: ['tests/**/*.slow.test.ts', '**/node_modules/**'],
    // Builds of the real corpus take seconds; clingo-wasm runs in worker threads, so tests run in forks.
    // The limits are for hangs, not for timing: every wait inside a test is on an event. At load 17
    // on 2 cores a real-corpus build took 105-121 s (partition's rebuild, preset's default build,
    // mcp-surface's setup), over the 120 s these limits were; a hang still shows in the [progress]
    // lines every 30 s.
    testTimeout: 300_000,
    hookTimeout: 300_000,
    // The demo build (and its gold answers) that many files read, made once per run: each file copies it.
    globalSetup: ['tests/global-setup.ts'],
    pool: 'forks',
    // Two test files at a time on a 2-core machine (vitest's default is one fewer than the cores):
    // most of a test's time is spent waiting for child processes, worker threads and endpoints.
    maxWorkers: 2,
    // The test files of a worker share its modules: each file re-importing Comunica, oxigraph,
    // the MCP SDK and compiling the WebAssembly of clingo and oxigraph cost 77 s of a 383 s run.
    // No test mocks modules or leaves global state changed (tests that set an
    // environment variable put it back).
    isolate: false,
    sequence: { sequencer: longestFirst(LONGEST_FIRST) },
    reporters: ['default', './tests/progress-reporter.ts'],
  },
});
