import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The test files that take longest (seconds on a quiet 2-core machine), started first so that none
 * of them starts last and makes the tail of the run. vitest orders by the durations of the previous
 * run where it has them (node_modules/.vite/vitest), and by file size otherwise (a clean clone, CI):
 * size says little here (describe.test.ts is large and takes 2 s, run.test.ts small and takes 20 s).
 */
const LONGEST_FIRST = ['verify', 'eval-runs', 'cli', 'mcp', 'partition', 'build-safety', 'preset', 'mcp-surface', 'eval', 'run', 'federation', 'eval-crash'];

class LongestFirst extends BaseSequencer {
  async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (f: TestSpecification) => {
      const i = LONGEST_FIRST.indexOf(f.moduleId.replace(/^.*\/tests\/|\.test\.ts$/g, ''));
      return i < 0 ? LONGEST_FIRST.length : i;
    };
    // A stable sort: the files not named keep vitest's order.
    return sorted.map((f, i) => ({ f, i })).sort((a, b) => rank(a.f) - rank(b.f) || a.i - b.i).map((x) => x.f);
  }
}

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
    // the MCP SDK and compiling the WebAssembly of clingo and oxigraph cost 77 s of the 383 s run
    // (issue 16 item 7). No test mocks modules or leaves global state changed (tests that set an
    // environment variable put it back).
    isolate: false,
    sequence: { sequencer: LongestFirst },
    reporters: ['default', './tests/progress-reporter.ts'],
  },
});
