/**
 * vitest globalSetup: the demo build that many test files read, made once per run instead of once
 * per file. The build (default options, VoID included) goes to a temporary folder
 * and its gold answers (`fkgqa stats`, 20 s per query) to its state folder beside it; both are
 * read-only templates: a test file takes its own copy (`demoBuild` in tests/helpers.ts), so that
 * what it writes (a serve's endpoints file and lock, stored answers) stays its own.
 * Where the real corpus is present, the same for a build of its graphs car_1, dog_kennels and
 * network_1 (default options) with gold answers (`fkgqa stats`, 60 s per query): the ties and
 * necessarily empty answers of score.test.ts and verify.slow.test.ts (`tiesBuild`), made while the
 * first test files run (`tiesBuild` waits until it is there).
 * Every temporary folder of the run's tests is made in one folder (`tmpRoot`), removed when the run
 * ends, so that repeated runs do not fill the system's temporary folder.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { DEFAULT_PARTITION_OPTIONS, partition } from '../src/partition/index.js';
import { computeStats } from '../src/report/stats.js';
import { DEMO, DEMO_GOLD_TIMEOUT_MS, HAS_SPIDER, SPIDER, TIES_GOLD_TIMEOUT_MS, TIES_GRAPHS } from './helpers.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The demo build made by tests/global-setup.ts; its gold answers are in `<demoBuild>.state`. */
    demoBuild: string;
    /** The build of TIES_GRAPHS of the real corpus ('' without the corpus); gold answers in `<tiesBuild>.state`. */
    tiesBuild: string;
    /** The run's temporary folder: `tmpDir` (tests/helpers.ts) makes every test's folders in it; removed at the run's end. */
    tmpRoot: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fkgqa-demo-template-'));
  const build = path.join(dir, 'shards');
  const ties = path.join(dir, 'ties', 'shards');
  // The build of TIES_GRAPHS (seconds of CPU) is made while the first test files run: it is written
  // to a staging folder and renamed to `ties` once its gold answers are stored; `tiesBuild` waits for it.
  const tiesMade = HAS_SPIDER
    ? (async () => {
        const staging = path.join(dir, 'ties-staging');
        await partition({ ...DEFAULT_PARTITION_OPTIONS, source: SPIDER, out: path.join(staging, 'shards'), kgs: TIES_GRAPHS });
        await computeStats({ shards: path.join(staging, 'shards'), timeoutMs: TIES_GOLD_TIMEOUT_MS });
        fs.renameSync(staging, path.dirname(ties));
      })().catch((e: unknown) => {
        fs.mkdirSync(path.dirname(ties), { recursive: true });
        fs.writeFileSync(`${ties}.failed`, e instanceof Error ? (e.stack ?? e.message) : String(e));
      })
    : Promise.resolve();
  await partition({ ...DEFAULT_PARTITION_OPTIONS, source: DEMO, out: build });
  await computeStats({ shards: build, timeoutMs: DEMO_GOLD_TIMEOUT_MS });
  project.provide('demoBuild', build);
  project.provide('tiesBuild', HAS_SPIDER ? ties : '');
  const tmpRoot = path.join(dir, 'tests');
  fs.mkdirSync(tmpRoot);
  project.provide('tmpRoot', tmpRoot);
  return async () => {
    await tiesMade;
    fs.rmSync(dir, { recursive: true, force: true });
  };
}
