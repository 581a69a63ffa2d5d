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
 * Both builds are kept between runs in node_modules/.cache/fkgqa-tests/<key>, the key a SHA-256 of
 * everything they are made from (`templateKey`): a run whose inputs are unchanged copies them
 * (a fraction of a second) instead of making them (8 s of CPU). A build made at a time limit
 * (a solver's or a gold query's) is not kept. FKGQA_TEST_CACHE=0 makes both anew and keeps nothing.
 * Every temporary folder of the run's tests is made in one folder (`tmpRoot`), removed when the run
 * ends (by a detached process: the run does not wait for it), so that repeated runs do not fill the
 * system's temporary folder.
 */
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import type { BuildStats } from '../src/report/stats.js';
import { DEMO, DEMO_GOLD_TIMEOUT_MS, HAS_SPIDER, ROOT, SPIDER, TIES_GOLD_TIMEOUT_MS, TIES_GRAPHS } from './helpers.js';

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

/** The folder of the kept templates, one subfolder per key. */
const CACHE = path.join(ROOT, 'node_modules', '.cache', 'fkgqa-tests');

/** Every file under `dir`, as paths relative to it, sorted; none when it does not exist. */
function filesUnder(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return (fs.readdirSync(dir, { recursive: true, withFileTypes: true }) as fs.Dirent[])
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)))
    .sort();
}

/**
 * The key of the kept templates: SHA-256 (hex, 16 characters) of the content of src/, of this file
 * and tests/helpers.ts, of package-lock.json (the versions of oxigraph, Comunica…), of the demo
 * graph, of Node's version and the time limits and graphs below, and of the path, size and modification time of
 * every file of the real corpus (27 MB: read by the build only where a file changed).
 */
function templateKey(): string {
  const h = crypto.createHash('sha256');
  const add = (label: string, data: string | Buffer) => h.update(`${label}\0${data.length}\0`).update(data);
  for (const dir of ['src', 'datasets/demo']) for (const f of filesUnder(path.join(ROOT, dir))) add(`${dir}/${f}`, fs.readFileSync(path.join(ROOT, dir, f)));
  for (const f of ['package-lock.json', 'tests/global-setup.ts', 'tests/helpers.ts']) add(f, fs.readFileSync(path.join(ROOT, f)));
  add('options', JSON.stringify({ node: process.version, DEMO_GOLD_TIMEOUT_MS, TIES_GOLD_TIMEOUT_MS, TIES_GRAPHS, HAS_SPIDER }));
  if (HAS_SPIDER)
    for (const f of filesUnder(SPIDER)) {
      const s = fs.statSync(path.join(SPIDER, f));
      add(`spider/${f}`, `${s.size} ${s.mtimeMs}`);
    }
  return h.digest('hex').slice(0, 16);
}

/**
 * Makes the template `<dir>/shards` (with `<dir>/shards.state`) by `make`, or copies it from the kept
 * one of `name` under `kept`; a template made anew is kept (through a staging folder renamed into
 * place) unless `make` returns false (`loadFree`). `dir` is filled at once or not at all
 * (staging folder renamed into place).
 */
async function template(dir: string, kept: string | undefined, name: string, make: (shards: string) => Promise<boolean>): Promise<void> {
  const staging = `${dir}-staging`;
  const from = kept && path.join(kept, name);
  if (from && fs.existsSync(from)) {
    fs.cpSync(from, staging, { recursive: true });
    fs.renameSync(staging, dir);
    return;
  }
  const keep = await make(path.join(staging, 'shards'));
  if (from && keep) {
    const copy = `${from}.${process.pid}-staging`;
    fs.cpSync(staging, copy, { recursive: true });
    try {
      fs.renameSync(copy, from);
    } catch {
      // Another run kept the same template first.
      fs.rmSync(copy, { recursive: true, force: true });
    }
  }
  fs.renameSync(staging, dir);
}

/**
 * Whether the build `shards` does not depend on the machine's load, so that it may be kept: every
 * solver run of its manifests ended optimal (not at its time limit) and no gold query timed out.
 */
function loadFree(shards: string, stats: BuildStats): boolean {
  const manifests = filesUnder(shards).filter((f) => path.basename(f) === 'manifest.json');
  const optimal = manifests.every((f) => !/"optimal":\s*false/.test(fs.readFileSync(path.join(shards, f), 'utf8')));
  return optimal && stats.figures.goldAnswers.timedOut === 0 && stats.queries.every((q) => q.realisedStatus !== 'timeout');
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fkgqa-demo-template-'));
  const build = path.join(dir, 'demo', 'shards');
  const ties = path.join(dir, 'ties', 'shards');
  let kept: string | undefined;
  // The builder's modules (oxigraph's WebAssembly among them) are loaded only when a template is made.
  const builder = async () => {
    const [{ DEFAULT_PARTITION_OPTIONS, partition }, { computeStats }] = await Promise.all([import('../src/partition/index.js'), import('../src/report/stats.js')]);
    return { DEFAULT_PARTITION_OPTIONS, partition, computeStats };
  };
  if (process.env.FKGQA_TEST_CACHE !== '0') {
    const key = templateKey();
    kept = path.join(CACHE, key);
    fs.mkdirSync(kept, { recursive: true });
    // Templates of other keys (an older tree) are removed once an hour old (another run may be copying them).
    for (const other of fs.readdirSync(CACHE))
      if (other !== key && Date.now() - fs.statSync(path.join(CACHE, other)).mtimeMs > 3_600_000) fs.rmSync(path.join(CACHE, other), { recursive: true, force: true });
  }
  // The build of TIES_GRAPHS (seconds of CPU) is made while the first test files run: it is written
  // to a staging folder and renamed to `ties` once its gold answers are stored; `tiesBuild` waits for it.
  const tiesMade = HAS_SPIDER
    ? template(path.dirname(ties), kept, 'ties', async (shards) => {
        const { DEFAULT_PARTITION_OPTIONS, partition, computeStats } = await builder();
        await partition({ ...DEFAULT_PARTITION_OPTIONS, source: SPIDER, out: shards, kgs: TIES_GRAPHS });
        return loadFree(shards, await computeStats({ shards, timeoutMs: TIES_GOLD_TIMEOUT_MS }));
      }).catch((e: unknown) => {
        fs.mkdirSync(path.dirname(ties), { recursive: true });
        fs.writeFileSync(`${ties}.failed`, e instanceof Error ? (e.stack ?? e.message) : String(e));
      })
    : Promise.resolve();
  await template(path.dirname(build), kept, 'demo', async (shards) => {
    const { DEFAULT_PARTITION_OPTIONS, partition, computeStats } = await builder();
    await partition({ ...DEFAULT_PARTITION_OPTIONS, source: DEMO, out: shards });
    return loadFree(shards, await computeStats({ shards, timeoutMs: DEMO_GOLD_TIMEOUT_MS }));
  });
  project.provide('demoBuild', build);
  project.provide('tiesBuild', HAS_SPIDER ? ties : '');
  const tmpRoot = path.join(dir, 'tests');
  fs.mkdirSync(tmpRoot);
  project.provide('tmpRoot', tmpRoot);
  return async () => {
    await tiesMade;
    // The run's temporary folders (5 s to remove at load 16) are removed by a
    // detached process, so that the run ends with its last test file rather than after the removal.
    spawn(process.execPath, ['-e', `require('node:fs').rmSync(${JSON.stringify(dir)}, { recursive: true, force: true })`], { detached: true, stdio: 'ignore' }).unref();
  };
}
