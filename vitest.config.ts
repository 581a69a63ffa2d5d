import { defineConfig } from 'vitest/config';
import { longestFirst } from './tests/longest-first.js';
import { TIER_TAGS } from './tests/tiers.js';

/** The test files of `npm test` that take longest, started first (tests/longest-first.ts). */
const LONGEST_FIRST = [
  'mcp',
  'verify',
  'serve-hardening',
  'service-shapes',
  'eval-runs',
  'cli',
  'cli-in-process',
  'build-safety',
  'query',
  'package',
  'kgvoyager',
  'long-query',
  'analyze',
  'architecture',
  'eval-crash',
  'score',
  'mcp-transport',
  'hostile-answers',
];

/**
 * `npm test`: unit tests and one integration case per concern (713 tests: 170 s of wall and 147 s of
 * CPU, user and system, the tests' times summing to 268 s, at load 6-7 on a 2-core machine shared
 * with other test runs, the demo and ties templates kept from a previous run; 157 s and 164 s of CPU
 * at load 8-12 with them made anew; not measured on a quiet one). Builds of the whole real corpus,
 * fault-injection sweeps, waits behind heavy queries,
 * every engine's cases over served shards, the queue's kill-and-resume runs, the whole loop of
 * `fkgqa run` and long federation runs are `*.slow.test.ts`; the tests of these files tagged `slow`
 * (tests/tiers.ts) take seconds each beside their file's setup. `npm run test:slow` runs both
 * (vitest.slow.config.ts; CI runs both tiers).
 * Progress per test file goes to stderr (tests/progress-reporter.ts).
 */
export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts'],
    exclude: ['tests/**/*.slow.test.ts', '**/node_modules/**'],
    // Tests tagged slow (tests/tiers.ts) run in npm run test:slow, with their file's setup.
    tags: TIER_TAGS,
    tagsFilter: ['!slow'],
    // Builds of two graphs of the real corpus take seconds; clingo-wasm runs in worker threads, so tests
    // run in forks. The limits are for hangs, not for timing: every wait inside a test is on an event.
    // At load 17 on 2 cores a real-corpus build took 105-121 s, over the 120 s these limits were; a
    // hang still shows in the [progress] lines every 30 s.
    testTimeout: 300_000,
    hookTimeout: 300_000,
    // The demo build (and its gold answers) that many files read, made once per run, or copied from
    // node_modules/.cache/fkgqa-tests when its inputs are unchanged since a previous run: each file copies it.
    globalSetup: ['tests/global-setup.ts'],
    pool: 'forks',
    // The TypeScript of src/ and tests/ transformed once and kept on disk between runs (node_modules/.experimental-vitest-cache,
    // keyed by each file's content): a run transforms only what changed.
    experimental: { fsModuleCache: true },
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
