import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * A vitest sequencer that starts the named test files first (names without `tests/` and
 * `.test.ts`, longest first), so that none of them starts last and makes the tail of the run.
 * vitest orders by the durations of the previous run where it has them (node_modules/.vite/vitest),
 * and by file size otherwise (a clean clone, CI): size says little here (describe.test.ts is large
 * and takes 2 s, run.test.ts small and takes 20 s). Files not named keep vitest's order.
 */
export function longestFirst(names: readonly string[]): typeof BaseSequencer {
  return class LongestFirst extends BaseSequencer {
    async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
      const sorted = await super.sort(files);
      const rank = (f: TestSpecification) => {
        const i = names.indexOf(f.moduleId.replace(/^.*\/tests\/|\.test\.ts$/g, ''));
        return i < 0 ? names.length : i;
      };
      // A stable sort: the files not named keep vitest's order.
      return sorted
        .map((f, i) => ({ f, i }))
        .sort((a, b) => rank(a.f) - rank(b.f) || a.i - b.i)
        .map((x) => x.f);
    }
  };
}
