/**
 * An evaluation spread without infrastructure: `fkgqa eval --part k/n` (a stable split of the
 * selected runs) and `fkgqa merge` (src/eval/merge.ts), with the oracle on the demo build.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inPart } from '../src/eval/eval.js';
import { conditionMismatch, type RunRecord } from '../src/eval/record.js';
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

describe('fkgqa eval --part k/n and fkgqa merge', () => {
  // Every question of the demo (32 runs, 66 oracle runs in all): tests/part-merge.slow.test.ts.
  it('n parts cover the selection (the first 3 questions, 2 repeats) exactly once; their merge holds the runs of a single eval; an overlap and another condition are refused, naming the id, files and lines', async () => {
    const all = path.join(dir, 'all.jsonl');
    expect((await fkgqaInProcess(evalArgs(all, '--limit', '3', '--repeats', '2'))).code).toBe(0);
    const single = ids(all);
    expect(single).toHaveLength(6);

    const parts = [1, 2, 3].map((k) => path.join(dir, `part${k}.jsonl`));
    for (const [i, file] of parts.entries()) {
      const r = await fkgqaInProcess(evalArgs(file, '--limit', '3', '--repeats', '2', '--part', `${i + 1}/3`));
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
    expect(m.stdout).toContain(`fkgqa merge: 6 runs written to ${merged}`);
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
  });

  it('--part must be k/n with 1 ≤ k ≤ n', async () => {
    for (const bad of ['0/3', '4/3', '2', 'a/b']) {
      const r = await fkgqaInProcess(evalArgs(path.join(dir, 'bad.jsonl'), '--part', bad));
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('--part must be k/n with 1 ≤ k ≤ n ≤ 10000');
    }
    expect(fs.existsSync(path.join(dir, 'bad.jsonl'))).toBe(false);
  });

  it('conditionMismatch names every field of the condition (RunCondition) that differs, and nothing for runs of one condition', () => {
    const base = {
      format: 'fkgqa-run/2',
      build: { outputDigest: 'a', goldDigest: null },
      setup: 'baseline',
      agent: 'llm',
      model: 'm',
      temperature: 0,
      seed: null,
      maxTurns: 10,
      limits: { messages: null, tokens: null, timeMs: null, queryTimeoutMs: 30000, maxQueryChars: 8000, requestTimeoutMs: 300000, maxRetries: 5, federationEngine: 'comunica' },
      prompt: { sha256: 'p' },
    } as unknown as RunRecord;
    // Where the model was reached and the LLM request's time limit and retries are not the condition.
    expect(conditionMismatch(base, { ...base, id: 'other', baseUrl: 'http://elsewhere/v1', limits: { ...base.limits!, requestTimeoutMs: 60000, maxRetries: 0 } } as RunRecord)).toBeUndefined();
    expect(conditionMismatch(base, { ...base, model: 'n', temperature: 0.7, limits: { ...base.limits!, timeMs: 60000, federationEngine: 'jena' }, tools: { source: 'mcp', names: [], mcpArgs: ['--x'] } } as RunRecord)).toBe(
      'model "m" ≠ "n", temperature 0 ≠ 0.7, limits.timeMs null ≠ 60000, federationEngine "comunica" ≠ "jena", mcpArgs [] ≠ ["--x"]',
    );
  });
});

describe('fkgqa worker --rate', () => {
  it('is N runs per second, minute or hour; anything else is refused', async () => {
    const { parseRate } = await import('../src/cli/program.js');
    expect(parseRate('60/min')).toEqual({ max: 60, durationMs: 60_000 });
    expect(parseRate('2/s')).toEqual({ max: 2, durationMs: 1000 });
    expect(parseRate('1000/h')).toEqual({ max: 1000, durationMs: 3_600_000 });
    for (const bad of ['0/min', '60', '60/day', '-1/s']) expect(() => parseRate(bad)).toThrow('--rate must be N/s, N/min or N/h with N ≥ 1, e.g. 60/min');
  });
});
