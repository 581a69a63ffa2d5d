/**
 * The check of `fkgqa eval --part k/n` and `fkgqa merge` (src/eval/merge.ts) with the oracle on the
 * demo build, shared by tests/part-merge.test.ts (the first 3 questions) and
 * tests/part-merge.slow.test.ts (every question): n parts cover the selection exactly once, their
 * merge holds the runs of a single eval, an overlap and another condition are refused, naming the
 * id, files and lines.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { inPart } from '../src/eval/eval.js';
import type { RunRecord } from '../src/eval/record.js';
import { serve, type ShardServer } from '../src/serve/server.js';
import { demoBuild, fkgqaInProcess, tmpDir } from './helpers.js';

/** The demo build with gold answers, served in this process for the file's tests (beforeAll/afterAll). */
export interface PartMergeFixture {
  /** A temporary folder for the run files. */
  dir: string;
  /** `fkgqa eval` arguments with the oracle over the served build, writing `out`. */
  evalArgs: (out: string, ...more: string[]) => string[];
}

const lines = (file: string) =>
  fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim());
const ids = (file: string) => lines(file).map((l) => (JSON.parse(l) as RunRecord).id);

/** Registers the fixture's beforeAll/afterAll; its fields are set once beforeAll has run. */
export function usePartMergeFixture(): PartMergeFixture {
  const fx: PartMergeFixture = { dir: tmpDir('fkgqa-part-'), evalArgs: () => [] };
  let server: ShardServer;
  beforeAll(async () => {
    const build = await demoBuild(fx.dir, { gold: true });
    server = await serve({ shards: build, writeFiles: false });
    const endpointsFile = path.join(fx.dir, 'endpoints.json');
    fs.writeFileSync(endpointsFile, JSON.stringify(server.endpointsFile()));
    fx.evalArgs = (out, ...more) => ['eval', '--shards', build, '--endpoints', endpointsFile, '--agent', 'oracle', '--no-probe', '--tools', 'in-process', '--out', out, '-q', ...more];
  }, 300_000);
  afterAll(async () => {
    await server?.close();
    fs.rmSync(fx.dir, { recursive: true, force: true });
  });
  return fx;
}

/**
 * Runs the whole check (module comment) on `selection` (eval's selection options, e.g.
 * `['--limit', '3']`), 2 repeats, 3 parts.
 * @param runs the runs of the selection (questions × 2)
 */
export async function checkPartsAndMerge(fx: PartMergeFixture, selection: string[], runs: number): Promise<void> {
  const { dir, evalArgs } = fx;
  const all = path.join(dir, 'all.jsonl');
  expect((await fkgqaInProcess(evalArgs(all, ...selection, '--repeats', '2'))).code).toBe(0);
  const single = ids(all);
  expect(single).toHaveLength(runs);

  const parts = [1, 2, 3].map((k) => path.join(dir, `part${k}.jsonl`));
  for (const [i, file] of parts.entries()) {
    const r = await fkgqaInProcess(evalArgs(file, ...selection, '--repeats', '2', '--part', `${i + 1}/3`));
    expect(r.code, r.stderr).toBe(0);
  }
  const partIds = parts.map(ids);
  // Each part holds exactly the runs its hash gives it; together, every run once.
  partIds.forEach((p, i) => expect(p.sort()).toEqual(single.filter((id) => inPart(id, { k: i + 1, n: 3 })).sort()));
  expect(partIds.every((p) => p.length > 0)).toBe(true);
  expect(partIds.flat().sort()).toEqual([...single].sort());

  const merged = path.join(dir, 'merged.jsonl');
  const m = await fkgqaInProcess(['merge', ...parts, '--out', merged]);
  expect(m.code, m.stderr).toBe(0);
  expect(m.stdout).toContain(`fkgqa merge: ${runs} runs written to ${merged}`);
  expect(ids(merged).sort()).toEqual([...single].sort());
  // The lines are the parts' own bytes.
  expect(lines(merged).sort()).toEqual(parts.flatMap(lines).sort());

  // An overlap: part 1 again beside the merge. Refused, naming the run and both places; the old --out stays as it was.
  const before = fs.readFileSync(merged, 'utf8');
  const overlap = await fkgqaInProcess(['merge', merged, parts[0], '--out', merged]);
  expect(overlap.code).toBe(2);
  const firstOfPart1 = ids(parts[0])[0];
  const lineInMerged = ids(merged).indexOf(firstOfPart1) + 1;
  expect(overlap.stderr).toContain(`run ${firstOfPart1} is in two files: ${merged}, line ${lineInMerged} and ${parts[0]}, line 1: the parts overlap`);
  expect(fs.readFileSync(merged, 'utf8')).toBe(before);
  expect(fs.readdirSync(dir).filter((f) => f.includes('fkgqa-tmp'))).toEqual([]);

  // Another condition: runs made with another turn limit have other ids (no overlap) and cannot join these.
  const other = path.join(dir, 'other.jsonl');
  expect((await fkgqaInProcess(evalArgs(other, '--limit', '1', '--repeats', '2', '--max-turns', '5'))).code).toBe(0);
  const otherIds = ids(other);
  expect(otherIds.map((id) => id.split('|').slice(0, 4).join('|'))).toEqual(single.slice(0, 2).map((id) => id.split('|').slice(0, 4).join('|')));
  expect(otherIds.filter((id) => single.includes(id))).toEqual([]);
  const refused = await fkgqaInProcess(['merge', ...parts, other, '--out', path.join(dir, 'mixed.jsonl')]);
  expect(refused.code).toBe(2);
  expect(refused.stderr).toContain(`run ${otherIds[0]} (${other}, line 1) was made under another condition than run ${ids(parts[0])[0]} (${parts[0]}, line 1): maxTurns 10 ≠ 5`);
  expect(fs.existsSync(path.join(dir, 'mixed.jsonl'))).toBe(false);
}
