import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { QueryAnalysis } from '../src/analyze/analyze.js';
import { InputError } from '../src/common/errors.js';
import { DEFAULT_PARTITION_OPTIONS, partition } from '../src/partition/index.js';
import { separateLayout, spreadLayout } from '../src/plan/layout.js';
import { candidateRules, type DataFacts, type ShardingRule } from '../src/plan/rules.js';
import { DEFAULT_METHOD_OPTIONS, resolveMethodOptions } from '../src/partition/presets.js';
import { DEMO, fkgqaInProcess, tmpDir } from './helpers.js';

const TYPE = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#type';
const rule = (kind: ShardingRule['kind'], elements: string[], covers: string[] = ['q1']): ShardingRule => ({
  key: `${kind} ${elements.map((e) => `<${e}>`).join(' ')}`,
  kind,
  elements,
  covers,
});
const analysis = (id: string, predicates: string[], classes: string[]): QueryAnalysis => ({
  id,
  kg: 'g',
  normalized: '',
  patterns: [],
  predicates,
  classes,
  subjectVariables: ['x'],
  applicable: { predicate: predicates.length >= 2, class: classes.length >= 2, horizontal: classes.length >= 1 },
});
const facts: DataFacts = {
  predicateTriples: new Map([
    [TYPE, 10],
    ['p', 5],
    ['q', 5],
  ]),
  classInstances: new Map([
    ['A', 4],
    ['B', 3],
  ]),
  classBucketSpread: new Map([
    ['A', 2],
    ['B', 2],
  ]),
};

/** Runs the CLI in the test process (tests/helpers.ts): the child's exit code, stdout and stderr, without its start. */
const fkgqa = (...args: string[]) => fkgqaInProcess(args);

describe('presets / resolution', () => {
  it('resolves --preset paper to its options, the rest default', async () => {
    expect(resolveMethodOptions('paper')).toEqual({
      preset: 'paper',
      options: {
        buckets: 4,
        layout: 'separate',
        expressionPatterns: false,
        classInference: false,
        horizontalCandidates: 'unless-class',
        predicateCandidates: 'all-pairs',
        horizontalPlacement: 'all-shards',
      },
    });
    expect(resolveMethodOptions(undefined)).toEqual({ preset: null, options: DEFAULT_METHOD_OPTIONS });
  });

  it('lets an explicit option override the preset, and ignores options not given', async () => {
    const r = resolveMethodOptions('paper', { buckets: 3, layout: undefined, classInference: true });
    expect(r.options.buckets).toBe(3);
    expect(r.options.classInference).toBe(true);
    expect(r.options.layout).toBe('separate');
    expect(r.options.horizontalPlacement).toBe('all-shards');
  });

  it('refuses an unknown preset', async () => {
    expect(() => resolveMethodOptions('papers')).toThrow(InputError);
    expect(() => resolveMethodOptions('papers')).toThrow(/--preset must be one of paper, got "papers"/);
  });
});

describe('presets / the readings they are made of', () => {
  it('every-query gives horizontal candidates also where class sharding applies', async () => {
    const qs = [analysis('q1', [TYPE, 'p'], ['A', 'B'])];
    expect(candidateRules(qs, facts).rules.map((r) => r.key)).toEqual(['class <A> <B>', `predicate <${TYPE}> <p>`]);
    expect(candidateRules(qs, facts, { horizontal: 'every-query' }).rules.map((r) => r.key)).toEqual(['class <A> <B>', 'horizontal <A>', 'horizontal <B>', `predicate <${TYPE}> <p>`]);
  });

  it('no-rdf-type leaves out the predicate pairs with rdf:type', async () => {
    const qs = [analysis('q1', [TYPE, 'p', 'q'], ['A'])];
    expect(candidateRules(qs, facts, { predicate: 'no-rdf-type' }).rules.map((r) => r.key)).toEqual(['horizontal <A>', 'predicate <p> <q>']);
  });

  it('all-shards hashes a horizontal class over the base and class shards, keeping class rules realised', async () => {
    // C and D are horizontal; class rules separate A from C and C from D.
    const rules = [rule('class', ['A', 'C']), rule('class', ['C', 'D']), rule('horizontal', ['C']), rule('horizontal', ['D']), rule('predicate', [TYPE, 'p'])];
    const l = spreadLayout(separateLayout(rules, 2), rules, 2);
    expect(l.slots).toEqual(['base', 'predicate-1', 'class-1', 'bucket-1-0', 'bucket-1-1']);
    // C: every subject shard but A's shard (class-1); the base alone is too few, so one extra slot.
    expect(l.spread!.get('C')).toEqual(['base', 'bucket-1-0']);
    // D: separated from C, so none of C's slots: two extra slots.
    expect(l.spread!.get('D')).toEqual(['class-1', 'bucket-1-1']);
    // With 3 as the fewest slots, C gets two extra slots and D must avoid them.
    const three = spreadLayout(separateLayout(rules, 3), rules, 3);
    expect(three.spread!.get('C')).toEqual(['base', 'bucket-1-0', 'bucket-1-1']);
    expect(three.spread!.get('D')).toEqual(['class-1', 'bucket-1-2', 'bucket-1-3']);
  });

  it('every-shard hashes every horizontal class over every shard, predicate shards included', async () => {
    const rules = [rule('class', ['A', 'C']), rule('horizontal', ['C']), rule('horizontal', ['D']), rule('predicate', [TYPE, 'p'])];
    const l = spreadLayout(separateLayout(rules, 2), rules, 2, true);
    expect(l.slots).toEqual(['base', 'predicate-1', 'class-1']);
    expect(l.spread!.get('C')).toEqual(['base', 'predicate-1', 'class-1']);
    expect(l.spread!.get('D')).toEqual(['base', 'predicate-1', 'class-1']);
  });
});

describe('presets / the CLI records the preset and the resolved options', () => {
  it('writes preset and options (explicit --buckets over the preset) to build.json and the manifests', async () => {
    const out = path.join(tmpDir(), 'shards');
    const r = await fkgqa('partition', '--out', out, '--preset', 'paper', '--buckets', '5', '--no-void', '-q');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('preset paper: --buckets 5 --layout separate --no-expression-patterns --no-class-inference');
    const build = JSON.parse(fs.readFileSync(path.join(out, 'build.json'), 'utf8'));
    expect(build.preset).toBe('paper');
    expect(build.options).toMatchObject({ buckets: 5, layout: 'separate', expressionPatterns: false, classInference: false, horizontalPlacement: 'all-shards', seed: 0 });
    const m = JSON.parse(fs.readFileSync(path.join(out, 'library', 'manifest.json'), 'utf8'));
    expect(m.options).toMatchObject({ buckets: 5, layout: 'separate', horizontalPlacement: 'all-shards', preset: 'paper' });
    expect(m.options.horizontalCandidates).toBeUndefined(); // default readings stay out of the manifest
  });

  it('lets --class-inference switch back on what the preset turns off', async () => {
    const out = path.join(tmpDir(), 'shards');
    const r = await fkgqa('partition', '--out', out, '--preset', 'paper', '--class-inference', '--no-void', '-q');
    expect(r.code).toBe(0);
    const build = JSON.parse(fs.readFileSync(path.join(out, 'build.json'), 'utf8'));
    expect(build.options).toMatchObject({ buckets: 4, classInference: true, expressionPatterns: false });
  });

  it('refuses an unknown preset with exit code 2', async () => {
    const r = await fkgqa('partition', '--out', path.join(tmpDir(), 'shards'), '--preset', 'nope');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("argument 'nope' is invalid");
  });

  it('leaves the default build of the demo without preset options in its manifests', async () => {
    const r = await partition({ ...DEFAULT_PARTITION_OPTIONS, source: DEMO, out: path.join(tmpDir(), 'shards'), void: false });
    expect(r.method.preset).toBeNull();
    expect(Object.keys(r.graphs[0].manifest.options)).toEqual(['buckets', 'seed', 'hash', 'defaultPrefix', 'solverTimeoutMs', 'layout', 'expressionPatterns', 'classInference']);
  });
});
