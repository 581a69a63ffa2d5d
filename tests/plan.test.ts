// @module-tag split-tiers (tests/tiers.ts: the tests tagged slow run in npm run test:slow)
import { describe, expect, it } from 'vitest';
import type { QueryAnalysis } from '../src/analyze/analyze.js';
import { coverFacts, selectRules, undominatedRules } from '../src/plan/cover.js';
import { planLayout, separateLayout } from '../src/plan/layout.js';
import { candidateRules, type DataFacts, type ShardingRule } from '../src/plan/rules.js';
import { solve } from '../src/plan/solver.js';

const TYPE = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#type';
const rule = (kind: ShardingRule['kind'], elements: string[], covers: string[]): ShardingRule => ({
  key: `${kind} ${elements.map((e) => `<${e}>`).join(' ')}`,
  kind,
  elements,
  covers,
});
const analysis = (id: string, predicates: string[], classes: string[], subjects = ['x']): QueryAnalysis => ({
  id,
  kg: 'g',
  normalized: '',
  patterns: [],
  predicates,
  classes,
  subjectVariables: subjects,
  applicable: { predicate: predicates.length >= 2, class: classes.length >= 2, horizontal: subjects.length >= 1 && classes.length >= 1 },
});
const facts = (over: Partial<DataFacts> = {}): DataFacts => ({
  predicateTriples: new Map([
    [TYPE, 10],
    ['p', 5],
    ['q', 5],
    ['r', 5],
  ]),
  classInstances: new Map([
    ['A', 4],
    ['B', 3],
    ['C', 1],
  ]),
  classBucketSpread: new Map([
    ['A', 2],
    ['B', 2],
    ['C', 1],
  ]),
  ...over,
});

describe('plan / candidate rules (section 4.1)', () => {
  it('generates predicate pairs, class pairs, and horizontal rules only where class sharding does not apply', () => {
    const c = candidateRules([analysis('q1', [TYPE, 'p', 'q'], ['A', 'B']), analysis('q2', [TYPE, 'p'], ['A'])], facts());
    expect(c.rules.map((r) => `${r.key} ${r.covers.join(',')}`)).toEqual([
      'class <A> <B> q1',
      'horizontal <A> q2',
      `predicate <${TYPE}> <p> q1,q2`,
      `predicate <${TYPE}> <q> q1`,
      'predicate <p> <q> q1',
    ]);
    expect(c.coverable).toEqual(['q1', 'q2']);
  });

  it('drops what the data cannot realise and says why a query is then uncoverable', () => {
    const c = candidateRules([analysis('q1', [TYPE], ['C']), analysis('q2', [TYPE, 'absent'], ['Z'])], facts());
    expect(c.rules).toEqual([]);
    expect(c.dropped.map((d) => d.key)).toEqual(['horizontal <C>', 'horizontal <Z>', `predicate <${TYPE}> <absent>`]);
    expect(c.uncoverable).toEqual([
      { id: 'q1', reason: 'no candidate rule can be realised in the data: all instances of <C> hash to one bucket' },
      { id: 'q2', reason: 'no candidate rule can be realised in the data: no instances of <Z>; no triples with <absent>' },
    ]);
  });
});

describe('plan / rule selection as set cover (asp/cover.lp)', () => {
  it('finds the minimum cover, proven optimal', async () => {
    // r4 alone covers all three queries; any other cover needs two rules.
    const rules = [rule('class', ['a', 'b'], ['q1', 'q2']), rule('class', ['b', 'c'], ['q2', 'q3']), rule('class', ['a', 'c'], ['q1', 'q3']), rule('predicate', ['p', 'q'], ['q1', 'q2', 'q3'])];
    const s = await selectRules(rules, ['q1', 'q2', 'q3'], 10_000);
    expect(s.rules.map((r) => r.key)).toEqual(['predicate <p> <q>']);
    expect(s.statistics.optimal).toBe(true);
    expect(s.statistics.result).toBe('OPTIMUM FOUND');
    expect(s.statistics.costs[0]).toBe(1);
  });

  it('breaks ties by coverage pairs first, then by canonical order', async () => {
    // Both {r1} and {r2} cover q1 and q2; r2 also covers q3 (more coverage pairs): r2 wins although r1 sorts first.
    const byCoverage = await selectRules([rule('class', ['a', 'b'], ['q1', 'q2']), rule('class', ['c', 'd'], ['q1', 'q2', 'q3'])], ['q1', 'q2'], 10_000);
    expect(byCoverage.rules.map((r) => r.key)).toEqual(['class <c> <d>']);
    // Equal coverage: the rule that comes first in canonical (key) order wins.
    const byOrder = await selectRules([rule('class', ['a', 'b'], ['q1']), rule('class', ['c', 'd'], ['q1'])], ['q1'], 10_000);
    expect(byOrder.rules.map((r) => r.key)).toEqual(['class <a> <b>']);
  });

  it('leaves out dominated rules before solving', () => {
    const kept = undominatedRules([
      rule('class', ['a', 'b'], ['q1']), // dominated by the last (strict subset)
      rule('class', ['c', 'd'], ['q1', 'q2']),
      rule('class', ['e', 'f'], ['q1', 'q2']), // equal coverage, later in order: dominated
      rule('predicate', ['p', 'q'], ['q3']),
    ]);
    expect(kept.map((r) => r.key)).toEqual(['class <c> <d>', 'predicate <p> <q>']);
  });

  it('writes integer facts, not IRIs', () => {
    expect(coverFacts([rule('class', ['http://e/a', 'http://e/b'], ['g/q1'])], ['g/q1'])).toBe('nrules(1).\nquery(1).\nrule(1). rank(1,1).\ncovers(1,1).\n');
  });

  // Five seconds of the solver's CPU.
  it('returns the best model found, marked not optimal, when the time limit stops the solver', { tags: ['slow'] }, async () => {
    // Minimise the number of pigeons left out: 16 pigeons, 15 holes. Clingo finds models at once (the
    // first by propagation alone) but proving the optimum (one pigeon out) is a pigeonhole proof that
    // takes far longer than 5 s; 5 s leaves room for clingo-wasm's worker to start at load 20.
    const program = `p(1..16). h(1..15). { at(P,H) : h(H) } 1 :- p(P). :- at(P1,H), at(P2,H), P1 < P2.
      out(P) :- p(P), not at(P,_). #minimize { 1,P : out(P) }. #show out/1.`;
    const r = await solve(program, 5_000);
    expect(r.statistics.result).toBe('TIMEOUT');
    expect(r.statistics.optimal).toBe(false);
    expect(r.statistics.models).toBeGreaterThan(0);
    expect(r.atoms.length).toBe(r.statistics.costs[0]);
    // The solver is usable again afterwards.
    const again = await solve('a. #show a/0.', 5_000);
    expect(again.atoms).toEqual(['a']);
  });

  it('refuses a program over the size limit of clingo-wasm (it crashes on programs over ~1 MB)', async () => {
    await expect(solve('a.\n'.repeat(400_000), 1000)).rejects.toThrow(/exceeds the 900000-byte limit/);
  });
});

describe('plan / shard layout (asp/layout.lp)', () => {
  const weights = {
    predicateTriples: new Map([
      [TYPE, 100],
      ['p', 10],
      ['q', 20],
      ['r', 30],
    ]),
    classTriples: new Map([
      ['A', 50],
      ['B', 40],
      ['C', 30],
      ['D', 20],
    ]),
  };

  it('never moves rdf:type; predicates split from it share one predicate shard', async () => {
    const l = await planLayout([rule('predicate', ['p', TYPE], ['q1']), rule('predicate', ['q', TYPE], ['q2'])], 2, weights, 10_000);
    expect([...l.predicateShard]).toEqual([
      ['p', 1],
      ['q', 1],
    ]);
    expect(l.slots).toEqual(['base', 'predicate-1']);
    expect(l.statistics.optimal).toBe(true);
  });

  it('moves the lighter side of a split, and uses two shards for a triangle of splits', async () => {
    const one = await planLayout([rule('predicate', ['p', 'r'], ['q1'])], 2, weights, 10_000);
    expect([...one.predicateShard]).toEqual([['p', 1]]); // p has 10 triples, r 30
    const tri = await planLayout([rule('predicate', ['p', 'q'], ['q1']), rule('predicate', ['q', 'r'], ['q1']), rule('predicate', ['p', 'r'], ['q1'])], 2, weights, 10_000);
    // A triangle needs three colours; one colour class stays home: two predicate shards, r (heaviest) stays.
    expect([...tri.predicateShard]).toEqual([
      ['p', 1],
      ['q', 2],
    ]);
  });

  it('gives every element its own shard in the separate layout (rdf:type still stays)', () => {
    const l = separateLayout([rule('predicate', ['p', TYPE], ['q1']), rule('predicate', ['q', 'r'], ['q2']), rule('class', ['A', 'B'], ['q3']), rule('horizontal', ['B'], ['q4'])], 2);
    expect([...l.predicateShard]).toEqual([
      ['p', 1],
      ['q', 2],
      ['r', 3],
    ]);
    expect([...l.classShard]).toEqual([['A', 1]]); // B is horizontal: its buckets separate it from A
    expect([...l.horizontalGroup]).toEqual([['B', 1]]);
    expect(l.slots.length).toBe(1 + 3 + 1 + 2);
  });

  it('gives horizontal classes a bucket group, separates split classes, and shares groups where allowed', async () => {
    const l = await planLayout(
      [rule('horizontal', ['A'], ['q1']), rule('horizontal', ['B'], ['q2']), rule('class', ['A', 'B'], ['q3']), rule('horizontal', ['C'], ['q4']), rule('class', ['C', 'D'], ['q5'])],
      2,
      weights,
      10_000,
    );
    // A and B are split, so they need two groups; C joins one of them; D stays in the base shard.
    expect(l.horizontalGroup.get('A')).not.toBe(l.horizontalGroup.get('B'));
    expect(new Set(l.horizontalGroup.values()).size).toBe(2);
    expect(l.classShard.size).toBe(0);
    expect(l.slots).toEqual(['base', 'bucket-1-0', 'bucket-1-1', 'bucket-2-0', 'bucket-2-1']);
  });
});
