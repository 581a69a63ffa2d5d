/**
 * `fkgqa eval --part k/n` and `fkgqa merge` over every question of the demo build (16 questions x 2
 * repeats, 66 oracle runs through the federation engine: 90 s of wall at load 13), in
 * `npm run test:slow`. tests/part-merge.test.ts runs the same checks on the first 3 questions.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inPart } from '../src/eval/eval.js';
import type { RunRecord } from '../src/eval/record.js';
import { serve, type ShardServer } from '../src/serve/server.js';
import { demoBuild, fkgqaInProcess, tmpDir } from './helpers.js';

const dir = tmpDir('fkgqa-part-');
let build: string;
let endpointsFile: string;
let server: ShardServer;
const lines = (file: string) => fs.readFileSync(file, 'utf8').split('\n').filter((l) => l.trim());
const ids = (file: string) => lines(file).map((l) => (JSON.parse(l) as RunRecord).id);
const evalArgs = (out: string, ...more: string[]) => ['eval', '--shards', build, '--endpoints', endpointsFile, '--agent', 'oracle', '--no-probe', '--tools', 'in-process', '--out', out, '-q', ...more];

beforeAll(async () => {
  build = await demoBuild(dir, { gold: true });
  server = await serve({ shards: build, writeFiles: false });
  endpointsFile = path.join(dir, 'endpoints.json');
  fs.writeFileSync(endpointsFile, JSON.stringify(server.endpointsFile()));
}, 300_000);

afterAll(async () => {
  await server?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('fkgqa eval --part k/n and fkgqa merge (slow: every question of the demo)', () => {
  it('n parts cover the selection exactly once; their merge holds the runs of a single eval; an overlap and another condition are refused, naming the id, files and lines', async () => {
    const all = path.join(dir, 'all.jsonl');
    expect((await fkgqaInProcess(evalArgs(all, '--repeats', '2'))).code).toBe(0);
    const single = ids(all);
    expect(single).toHaveLength(32);

    const parts = [1, 2, 3].map((k) => path.join(dir, `part${k}.jsonl`));
    for (const [i, file] of parts.entries()) {
      const r = await fkgqaInProcess(evalArgs(file, '--repeats', '2', '--part', `${i + 1}/3`));
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
    expect(m.stdout).toContain(`fkgqa merge: 32 runs written to ${merged}`);
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
  }, 600_000);
});
