/**
 * The long kill sweep of `fkgqa eval`'s run file (the short one is in
 * tests/eval-crash.test.ts): SIGKILL at 60 seeded random instants, 15 of them fault injections in
 * the middle of an append, eval resumed after each; no finished run may be lost or duplicated and
 * every line must parse. The figures are printed on stderr. Also the short sweep (6 instants) that
 * was in npm test: a sweep of kills and resumes, each a new eval child, takes over a minute at load
 * 15, so fault-injection sweeps go to test:slow; npm test keeps one fault
 * injection and its resume (tests/eval-crash.test.ts).
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readRuns } from '../src/score/score.js';
import { tmpDir } from './helpers.js';
import { serveDemo, type ServedBuild } from './eval-fixture.js';
import { killSweep } from './eval-sweep.js';

describe('eval / kill sweep (slow)', () => {
  const dir = tmpDir('fkgqa-eval-sweep-');
  let served: ServedBuild;
  beforeAll(async () => {
    served = await serveDemo(dir);
  }, 120_000);
  afterAll(async () => {
    await served?.server.close();
  });

  // 1,600 runs (both demo graphs, 100 repeats: eval's maximum), kills within 0.4 s of the plan, so
  // that runs remain at nearly every one of the 60 instants (with 320 runs and 2 s, a quiet machine
  // finished them all by the 10th instant; with 1,600 and 1 s, once eval got faster, by the 60th; a
  // quiet machine now makes about 90 runs a second). Every fault
  // injection made while enough runs remained must kill (faultsArmed), and at least 10 of the 15 must
  // be armed, or the sweep tests too little.
  it('60 instants (15 during an append), seed 7: runs lost 0, duplicated 0, every line parses, every run made once', async () => {
    const out = path.join(dir, 'sweep.jsonl');
    const r = await killSweep({
      build: served.build,
      endpointsFile: served.endpointsFile,
      out,
      seed: 7,
      instants: 60,
      faultEvery: 4,
      maxDelayMs: 400,
      repeats: 100,
      kgs: ['library', 'observatory'],
      log: (l) => process.stderr.write(`[eval sweep] ${l}\n`),
    });
    process.stderr.write(`[eval sweep] result ${JSON.stringify(r)}\n`);
    expect(r).toMatchObject({ instants: 60, faults: 15, faultKills: r.faultsArmed, runsLost: 0, duplicates: 0, unparsable: 0, finalCode: 0, planned: 1600, finalRuns: 1600, finalLines: 1600 });
    expect(r.faultsArmed).toBeGreaterThanOrEqual(10);
    expect(r.tornSeen).toBeGreaterThanOrEqual(r.faultKills);
    expect(r.repairsSaid).toBe(r.tornSeen);
    expect(readRuns([out])).toHaveLength(1600);
  }, 1_800_000);
});

describe('eval / kill -9 at any instant loses no finished run', () => {
  // Slow: 7 eval children (6 kills, then the resume that finishes), 800 runs over the demo's library graph.
  const dir = tmpDir('fkgqa-eval-crash-');
  let build: string;
  let endpointsFile: string;
  let served: ServedBuild;
  beforeAll(async () => {
    served = await serveDemo(dir, ['library']);
    ({ build, endpointsFile } = served);
  }, 120_000);
  afterAll(async () => {
    await served?.server.close();
  });

  it('sweep: SIGKILL at 6 seeded instants (2 of them in the middle of an append), resumed each time: runs lost 0, duplicated 0, every line parses', async () => {
    const out = path.join(dir, 'sweep.jsonl');
    // 800 runs, so that runs remain at each fault injection however fast the machine: with 160, a
    // quiet machine made 127 runs before the first kill (1.4 s) and all 160 before the first fault,
    // which then had nothing to kill. Every fault injection made while runs remained must kill.
    const r = await killSweep({ build, endpointsFile, out, seed: 1, instants: 6, faultEvery: 3, maxDelayMs: 1500, repeats: 100, log: (l) => process.stderr.write(`[eval sweep 6] ${l}\n`) });
    expect(r).toMatchObject({ instants: 6, faults: 2, faultKills: r.faultsArmed, runsLost: 0, duplicates: 0, unparsable: 0, finalCode: 0, planned: 800, finalRuns: 800, finalLines: 800 });
    expect(r.faultsArmed).toBeGreaterThanOrEqual(1);
    expect(r.tornSeen).toBeGreaterThanOrEqual(r.faultKills); // every fault injection that killed left a torn line
    expect(r.repairsSaid).toBe(r.tornSeen); // every torn line was cut away by the next resume, which said so
    expect(readRuns([out])).toHaveLength(800);
  }, 300_000);
});
