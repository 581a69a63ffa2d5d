import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { InputError } from '../src/common/errors.js';
import { DEFAULT_PARTITION_OPTIONS, partition } from '../src/partition/index.js';
import { formatQuestionsText, questionViews } from '../src/report/questions.js';
import { computeStats } from '../src/report/stats.js';
import { demoBuild, fkgqaInProcess, HAS_SPIDER, SPIDER, tmpDir } from './helpers.js';

/** Runs the CLI in the test process (tests/helpers.ts): the child's exit code, stdout and stderr, without its start. */
const fkgqa = (...args: string[]) => fkgqaInProcess(args);

// Demo library shards (seed 0, 2 buckets): shard1 = author bucket 1 (authors 1, 2, 4, 5, 6),
// shard3 = author bucket 0 (author 3), shard2 = base (books), shard4 = book#title (see stats.test.ts).
describe('questions / demo dataset', async () => {
  const out = await demoBuild(tmpDir());
  const bench = JSON.parse(fs.readFileSync(path.join(out, 'benchmark.json'), 'utf8'));
  const entry = (id: string) => bench.entries.find((e: { queryId: string }) => e.queryId === id);

  it('puts the implied shards of every question into benchmark.json, and says what endpoints means', () => {
    // "Authors from Peru": the author patterns match both author buckets.
    expect(entry('library/q2').shardsImplied).toEqual(['library-shard1', 'library-shard3']);
    expect(entry('library/q4').shardsImplied).toEqual(['library-shard1', 'library-shard2', 'library-shard3', 'library-shard4']);
    // endpoints: every shard of the graph, whatever the query needs.
    expect(entry('library/q2').endpoints).toEqual(['library-shard1', 'library-shard2', 'library-shard3', 'library-shard4']);
    expect(entry('library/q2').status).toBe('covered');
    expect(bench.fields.endpoints).toMatch(/every shard endpoint of the question's graph/);
    expect(Object.keys(bench.fields)).toEqual(Object.keys(entry('library/q2')));
  });

  it('computes the shards a question needs and its gold answer when fkgqa stats has stored nothing', async () => {
    const lines: string[] = [];
    const [v] = await questionViews({ shards: out, queries: ['library/q4'], progress: (l) => lines.push(l) });
    // Books by Bruno Lindqvist (author 2, bucket 1): books (shard2), titles (shard4), his bucket (shard1); not author 3's bucket.
    expect(v.question).toBe('What are the titles of the books written by Bruno Lindqvist?');
    expect(v.shardsNeeded).toEqual(['library-shard1', 'library-shard2', 'library-shard4']);
    expect(v.shardsImplied).toHaveLength(4);
    expect(v.answer).toMatchObject({ status: 'ok', rows: 2, vars: ['t1_title'], source: 'computed' });
    expect(v.answer.preview.map((r) => r[0]).sort()).toEqual(['"The Quiet Harbour"', '"Winter Ledger"']);
    expect(lines[0]).toMatch(/library: computing 1 gold answer and needed shards/);
  });

  it('reads what fkgqa stats stored, and gives the same shards', async () => {
    await computeStats({ shards: out, timeoutMs: 10_000 });
    const views = await questionViews({ shards: out, kgs: ['library'] });
    expect(views.map((v) => v.index)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(views.every((v) => v.answer.source === 'stats')).toBe(true);
    const peru = views.find((v) => v.queryId === 'library/q2')!;
    // Both Peruvian authors (1 and 5) hash to bucket 1: one shard needed of the two implied.
    expect(peru.shardsNeeded).toEqual(['library-shard1']);
    expect(peru.answer.preview.map((r) => r[0]).sort()).toEqual(['"Ada Quispe"', '"Elena Mamani"']);
    expect(views.find((v) => v.queryId === 'library/q4')!.shardsNeeded).toEqual(['library-shard1', 'library-shard2', 'library-shard4']);
    const text = formatQuestionsText([peru]);
    expect(text).toContain('library/q2 — question 2: What are the names of the authors from Peru?');
    expect(text).toContain('shards: 4 in the graph; needed 1 (shard1); implied 2 (shard1, shard3); covered, federated (implied fan-out ≥ 2)');
    expect(text).toContain('answer: 2 rows');
  });

  it('finds what stats stored in the state folder beside the build (gold-answers/, realised-fan-out/)', async () => {
    // fkgqa stats (run above) stored them there, not in the build.
    const state = `${out}.state`;
    for (const dir of ['gold-answers', 'realised-fan-out']) expect(fs.existsSync(path.join(state, dir, 'observatory.json'))).toBe(true);
    expect(fs.existsSync(path.join(out, 'observatory', 'gold-answers.json'))).toBe(false);
    const views = await questionViews({ shards: out, kgs: ['observatory'] });
    expect(views.length).toBe(8);
    expect(views.every((v) => v.answer.source === 'stats' && v.shardsNeededStatus === 'ok')).toBe(true);
    // Elsewhere with --state: not found there, so computed.
    const [v] = await questionViews({ shards: out, kgs: ['observatory'], state: tmpDir() });
    expect(v.answer.source).toBe('computed');
    expect(v.shardsNeeded).toEqual(views[0].shardsNeeded);
  });

  it('limits the preview to --rows rows', async () => {
    const [v] = await questionViews({ shards: out, queries: ['library/q3'], previewRows: 2 });
    expect([v.answer.rows, v.answer.preview.length]).toEqual([5, 2]);
    expect(formatQuestionsText([v])).toContain('answer: 5 rows (first 2)');
  });

  it('refuses an unknown graph or query id with a clear message', async () => {
    await expect(questionViews({ shards: out, queries: ['library/q99'] })).rejects.toThrow(InputError);
    await expect(questionViews({ shards: out, queries: ['library/q99'] })).rejects.toThrow(/--query library\/q99: no such gold query/);
    await expect(questionViews({ shards: out, kgs: ['nope'] })).rejects.toThrow(/--kg nope: no such graph in this build \(graphs: library, observatory\)/);
  });

  it('fkgqa questions prints text, or JSON with --json and --format json alike', async () => {
    const t = await fkgqa('questions', '--shards', out, '--query', 'library/q2', '-q');
    expect(t.code).toBe(0);
    expect(t.stdout).toContain('needed 1 (shard1)');
    const a = await fkgqa('questions', '--shards', out, '--query', 'library/q2', '--json', '-q');
    const b = await fkgqa('questions', '--shards', out, '--query', 'library/q2', '--format', 'json', '-q');
    expect(a.code).toBe(0);
    expect(a.stdout).toBe(b.stdout);
    expect(JSON.parse(a.stdout)[0].shardsNeeded).toEqual(['library-shard1']);
    const bad = await fkgqa('questions', '--shards', out, '--json', '--format', 'text');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--json is --format json: it cannot be combined with --format text');
  });
});

// concert_singer, default options: shard1 = predicate shard (concert#year, singer#name,
// stadium#capacity, stadium#name), shard2 = class shard of concert, shard3 = base (stadiums and the
// rest), shard4/shard5 = singer buckets. Checked by hand against the shard files and kg/concert_singer.nt.
describe.skipIf(!HAS_SPIDER)('questions / Spider4SPARQL concert_singer', async () => {
  const out = path.join(tmpDir(), 'shards');
  if (HAS_SPIDER) await partition({ ...DEFAULT_PARTITION_OPTIONS, source: SPIDER, out, kgs: ['concert_singer'] });

  it('"How many concerts occurred in 2014 or 2015?" needs the concert class shard and the year shard', async () => {
    const m = JSON.parse(fs.readFileSync(path.join(out, 'concert_singer/manifest.json'), 'utf8'));
    expect(m.shards[0].role.predicates).toContain('http://valuenet/ontop/concert#year');
    expect(m.shards[1].role.classes).toEqual(['http://valuenet/ontop/concert']);
    const views = await questionViews({ shards: out, queries: ['concert_singer/q11'] });
    // Two questions ask the same gold query.
    expect(views.map((v) => v.question)).toEqual(['How many concerts are there in year 2014 or 2015?', 'How many concerts occurred in 2014 or 2015?']);
    for (const v of views) {
      expect(v.shardsNeeded).toEqual(['concert_singer-shard1', 'concert_singer-shard2']);
      // All 6 concerts of the graph are of 2014 or 2015.
      expect(v.answer.preview).toEqual([['6']]);
    }
  });

  it('a question with an empty answer needs no shard, though two may match', async () => {
    // No stadium has a capacity from 5000 to 10000 (capacities 2000 … 4125, 10104, 11998, 52500).
    const [v] = await questionViews({ shards: out, queries: ['concert_singer/q8'] });
    expect(v.shardsImplied).toEqual(['concert_singer-shard1', 'concert_singer-shard3']);
    expect(v.shardsNeeded).toEqual([]);
    expect(v.answer).toMatchObject({ status: 'ok', rows: 0, empty: true });
  });
});
