import { describe, expect, it } from 'vitest';
import { termKey } from '../src/answers/compare.js';
import type { SparqlResults } from '../src/sparql/results.js';
import { assignmentF1, exactF1, graspF1, matchAnswer, spinachF1 } from '../src/score/metrics.js';
import { bracesBalance, classifyQuery } from '../src/score/validity.js';
import { serviceTargets } from '../src/sparql/services.js';
import fs from 'node:fs';
import path from 'node:path';
import { InputError } from '../src/common/errors.js';
import { readRuns } from '../src/score/score.js';
import { tmpDir } from './helpers.js';

const XSD = 'http://www.w3.org/2001/XMLSchema#';
type T = { type: 'uri' | 'literal'; value: string; datatype?: string; 'xml:lang'?: string };
const uri = (value: string): T => ({ type: 'uri', value });
const lit = (value: string, datatype?: string): T => ({ type: 'literal', value, ...(datatype ? { datatype } : {}) });
const sel = (rows: Record<string, T>[], vars?: string[]): SparqlResults => ({
  head: { vars: vars ?? [...new Set(rows.flatMap((r) => Object.keys(r)))] },
  results: { bindings: rows },
});
/** Spinach's test vectors use one column `item` of URIs. */
const items = (...vs: string[]) => sel(vs.map((v) => ({ item: uri(v) })));

describe('score / F1 as GRASP computes it (published vectors of grasp/sparql/metrics.py)', () => {
  it('exact F1', () => {
    expect(
      exactF1(
        [
          ['a', 'b'],
          ['c', 'd'],
        ],
        [
          ['a', 'b'],
          ['c', 'd'],
        ],
      ),
    ).toBe(1);
    expect(
      exactF1(
        [
          ['a', 'b'],
          ['c', 'd'],
        ],
        [
          ['e', 'f'],
          ['g', 'h'],
        ],
      ),
    ).toBe(0);
    expect(
      exactF1(
        [
          ['a', 'b'],
          ['c', 'd'],
          ['e', 'f'],
        ],
        [
          ['a', 'b'],
          ['g', 'h'],
          ['i', 'j'],
        ],
      ),
    ).toBeCloseTo(1 / 3, 12);
    expect(
      exactF1(
        [
          ['a', 'b'],
          ['a', 'b'],
          ['c', 'd'],
        ],
        [
          ['a', 'b'],
          ['c', 'd'],
          ['c', 'd'],
        ],
      ),
    ).toBeCloseTo(0.6666666666666666, 12);
  });
  it('assignment F1', () => {
    expect(
      assignmentF1(
        [
          ['a', 'b'],
          ['c', 'd'],
        ],
        [
          ['a', 'b'],
          ['c', 'd'],
        ],
      ),
    ).toBe(1);
    expect(
      assignmentF1(
        [
          ['a', 'b'],
          ['c', 'd'],
        ],
        [
          ['e', 'f'],
          ['g', 'h'],
        ],
      ),
    ).toBe(0);
    expect(
      assignmentF1(
        [
          ['a', 'b', 'c'],
          ['d', 'e'],
        ],
        [
          ['a', 'b'],
          ['d', 'e', 'f'],
        ],
      ),
    ).toBeCloseTo(0.9090909090909091, 6);
    expect(
      assignmentF1(
        [
          ['a', 'b'],
          ['c', 'd'],
          ['e', 'f'],
        ],
        [
          ['a', 'b'],
          ['g', 'h'],
        ],
      ),
    ).toBeCloseTo(0.5, 12);
    expect(
      assignmentF1(
        [
          ['c', 'extra1', 'a', 'b'],
          ['f', 'e', 'd', 'extra2'],
        ],
        [
          ['a', 'b', 'c'],
          ['d', 'e', 'f'],
        ],
      ),
    ).toBe(1);
  });
  it('ASK and empty answers', () => {
    const ask = (b: boolean): SparqlResults => ({ head: {}, boolean: b });
    expect(graspF1(ask(true), ask(true))).toBe(1);
    expect(graspF1(ask(false), ask(false))).toBe(1);
    expect(graspF1(ask(true), ask(false))).toBe(0);
    expect(graspF1(ask(true), items('Q1', 'Q2'))).toBe(0);
    expect(graspF1(sel([]), sel([]))).toBe(1);
    expect(graspF1(sel([]), items('x'))).toBe(0);
    expect(graspF1(items('x'), sel([]))).toBe(0);
    expect(graspF1(undefined, items('x'))).toBe(0);
  });
});

describe('score / row-major F1 as Spinach computes it (published vectors of spinach tests/test_eval.py)', () => {
  it('matches every vector', () => {
    const label = (v: string) => ({ item: uri(v), itemLabel: { type: 'literal' as const, value: 'Northern Tsou', 'xml:lang': 'en' } });
    expect(spinachF1(sel([label('a')]), sel([label('a')]))).toBeCloseTo(1, 10);
    expect(spinachF1(items('a'), sel([label('a')]))).toBeCloseTo(1, 10); // gold …Label columns are ignored
    expect(spinachF1(items('a', 'a'), items('a', 'a'))).toBeCloseTo(1, 10);
    expect(spinachF1(items('a', 'b'), items('b', 'a'))).toBeCloseTo(1, 10);
    expect(spinachF1(items('a', 'a', 'c', 'd', 'f'), items('a'))).toBeCloseTo(2 / (2 + 0 + 4), 10);
    expect(spinachF1(items('a'), items('a', 'a', 'c', 'd', 'f'))).toBeCloseTo(2 / (2 + 0 + 4), 10);
    expect(spinachF1(items('a', 'c'), items('a', 'a', 'c', 'd', 'f'))).toBeCloseTo((2 * 2) / (2 * 2 + 3), 10);
    expect(spinachF1(items('a', 'c', 'surprise'), items('a', 'a', 'c', 'd', 'f'))).toBeCloseTo((2 * 2) / (2 * 2 + 1 + 3), 10);
    const wide = (v: string, extra: Record<string, string>) => ({ item: uri(v), ...Object.fromEntries(Object.entries(extra).map(([k, x]) => [k, uri(x)])) });
    const goldHalf = sel([wide('b', { surprise: 'c' }), wide('a', { surprise: 'c' })]);
    expect(spinachF1(items('a', 'b'), goldHalf)).toBeCloseTo(2 / (2 + 1), 10);
    expect(spinachF1(items('a', 'b', 'surprise', 'surprise_2'), goldHalf)).toBeCloseTo(2 / (2 + 1 + 2), 10);
    const goldThird = sel([wide('b', { surprise: 'c', surprise_2: 'c' }), wide('a', { surprise: 'c', surprise_2: 'c' })]);
    expect(spinachF1(items('a', 'b', 'surprise', 'surprise_2'), goldThird)).toBeCloseTo(((1 / 3) * 2 * 2) / ((1 / 3) * 2 * 2 + (2 / 3) * 2 + 2), 10);
    const predTwo = sel(['b', 'a', 'surprise', 'surprise_2'].map((v) => wide(v, { surprise: 'c' })));
    const goldTwoThirds = sel([wide('b', { surprise: 'c', surprise_2: 'abc' }), wide('a', { surprise: 'c', surprise_2: 'abc' })]);
    expect(spinachF1(predTwo, goldTwoThirds)).toBeCloseTo(((2 / 3) * 2 * 2) / ((2 / 3) * 2 * 2 + (1 / 3) * 2 + 2), 10);
  });
  it('differs from GRASP on a paired row without overlap: rows {a, x} against {a, y}', () => {
    expect(graspF1(items('a', 'x'), items('a', 'y'))).toBeCloseTo(2 / 3, 10);
    expect(spinachF1(items('a', 'x'), items('a', 'y'))).toBeCloseTo(0.5, 10);
  });
});

describe('score / accuracy', () => {
  const n = (v: string, t = 'integer') => lit(v, `${XSD}${t}`);
  it('ignores variable names and column order, matching columns by a bijection', () => {
    const gold = sel(
      [
        { name: lit('ann'), age: n('20') },
        { name: lit('bob'), age: n('30') },
      ],
      ['name', 'age'],
    );
    const pred = sel(
      [
        { a: n('30'), b: lit('bob') },
        { a: n('20.0', 'decimal'), b: lit('ann', `${XSD}string`) },
      ],
      ['a', 'b'],
    );
    const m = matchAnswer(gold, pred, false);
    expect(m.correct).toBe(true);
    expect(m.mapping).toEqual({ name: 'b', age: 'a' });
    // The same rows with the columns swapped in one row only: no single bijection fits.
    const mixed = sel(
      [
        { a: lit('ann'), b: n('20') },
        { a: n('30'), b: lit('bob') },
      ],
      ['a', 'b'],
    );
    expect(matchAnswer(gold, mixed, false).correct).toBe(false);
  });
  it('counts duplicates, refuses extra columns, respects order only when the gold query orders', () => {
    expect(matchAnswer(items('a', 'a', 'b'), items('a', 'b', 'b'), false).correct).toBe(false);
    expect(
      matchAnswer(
        items('a', 'b'),
        sel([
          { x: uri('a'), y: uri('1') },
          { x: uri('b'), y: uri('2') },
        ]),
        false,
      ).reason,
    ).toBe('2 columns where gold has 1');
    expect(matchAnswer(items('a', 'b'), items('b', 'a'), false).correct).toBe(true);
    expect(matchAnswer(items('a', 'b'), items('b', 'a'), true).correct).toBe(false);
    expect(matchAnswer(items('a', 'b'), items('b', 'a'), true, () => true).correct).toBe(true);
  });
  it('compares numbers by value to 12 significant digits (float sums that change with triple order)', () => {
    const gold = sel([{ s: n('0.30000000000000004', 'double') }]);
    expect(matchAnswer(gold, sel([{ t: n('0.3', 'double') }]), false).correct).toBe(true);
    expect(matchAnswer(gold, sel([{ t: n('0.3001', 'double') }]), false).correct).toBe(false);
    expect(matchAnswer(sel([], ['a']), sel([], ['x', 'y']), false).correct).toBe(true);
  });
  it('compares whole numbers exactly, whatever their size, and an ill-typed number as its literal', () => {
    const one = (v: string, t = 'integer') => sel([{ c: n(v, t) }]);
    expect(matchAnswer(one('1000000000001'), one('1000000000000'), false).correct).toBe(false);
    expect(matchAnswer(one('9007199254740993'), one('9007199254740992'), false).correct).toBe(false);
    // A number with a fraction is compared to 12 significant digits (engines' quotients differ in the last digits).
    expect(matchAnswer(one('123456789012.4', 'decimal'), one('123456789012'), false).correct).toBe(true);
    expect(matchAnswer(one('12345678901.4', 'decimal'), one('12345678901.2', 'decimal'), false).correct).toBe(false);
    expect(matchAnswer(one('1000000000001'), one('1000000000001.0', 'decimal'), false).correct).toBe(true);
    expect(matchAnswer(one('1000'), one('1.0E3', 'double'), false).correct).toBe(true);
    expect(matchAnswer(one('+12'), one('12.0', 'decimal'), false).correct).toBe(true);
    expect(matchAnswer(one('0'), one(''), false).correct).toBe(false);
    expect(matchAnswer(one('16'), one('0x10'), false).correct).toBe(false);
    expect(termKey({ type: 'literal', value: '0x10', datatype: 'http://www.w3.org/2001/XMLSchema#integer' })).toBe('"0x10"^^<http://www.w3.org/2001/XMLSchema#integer>');
  });
});

describe('score / syntactic validity classes', () => {
  const ok = 'PREFIX : <http://valuenet/ontop/> SELECT ?n WHERE { SERVICE <http://127.0.0.1:1/singer-shard1/sparql> { ?s :singer\\#name ?n } }';
  it('classifies each failure', () => {
    expect(classifyQuery(ok).class).toBe('ok');
    expect(classifyQuery(ok, 'endpoint error 503').class).toBe('execution');
    expect(classifyQuery('SELECT ?n WHERE { ?s foo:name ?n }')).toMatchObject({ class: 'prefix', detail: expect.stringContaining('undeclared prefix "foo:"') });
    expect(classifyQuery('SELECT ?n WHERE { SERVICE <http://a/sparql> { ?s ?p ?n }').class).toBe('braces');
    expect(classifyQuery('SELECT ?n WHERE { SERVICE { ?s ?p ?n } }').class).toBe('service');
    expect(classifyQuery('SELECT ?n WHERE { SERVICE <http://a/sparql> ?s ?p ?n }').class).toBe('service');
    expect(classifyQuery('SELECT ?n WHERE { SERVICE ?e { ?s ?p ?n } }').class).toBe('service');
    expect(classifyQuery('SELEC ?n WHERE { ?s ?p ?n }').class).toBe('parse');
    expect(classifyQuery('INSERT DATA { <a:a> <a:b> <a:c> }').class).toBe('parse');
  });
  it('balances braces outside strings and IRIs', () => {
    expect(bracesBalance('SELECT * WHERE { ?s ?p "}" }')).toBe(true);
    expect(bracesBalance('SELECT * WHERE { ?s ?p ?o } }')).toBe(false);
  });
  it('reads SERVICE targets from the parsed query (SILENT too, each once)', () => {
    const q = 'SELECT * WHERE { SERVICE SILENT <http://a/sparql> { ?s ?p ?o } SERVICE <http://b/sparql> { ?o ?q ?r } SERVICE <http://a/sparql> { ?r ?x ?y } }';
    expect(serviceTargets(q)).toEqual(['http://a/sparql', 'http://b/sparql']);
    expect(serviceTargets('SELECT')).toBeUndefined();
  });
});

describe('score / reading run files', () => {
  it('names the file and line of a line that is no run record; a later line of the same run (condition, question, repeat) wins; ids are computed', () => {
    const dir = tmpDir();
    const f = path.join(dir, 'runs.jsonl');
    const run = (index: number, endReason: string, extra: Record<string, unknown> = {}) =>
      JSON.stringify({
        format: 'fkgqa-run/2',
        id: `written-${index}`,
        endReason,
        question: { index, kg: 'library', text: 'q', queryId: 'library/q1' },
        setup: 'baseline',
        agent: 'oracle',
        model: null,
        repeat: 0,
        maxTurns: 10,
        prompt: { name: 'baseline.md', sha256: 'abc' },
        build: { outputDigest: 'feedfacefeedface', goldDigest: null },
        endpoints: [],
        messages: [],
        steps: [],
        finalQuery: null,
        usage: { totalTokens: 0 },
        counts: { llmCalls: 0, sparqlCalls: 0, voidCalls: 0 },
        ms: 1,
        ...extra,
      });
    fs.writeFileSync(f, `${run(0, 'model_error')}\n${run(1, 'submitted')}\n${run(0, 'submitted')}\n`);
    const runs = readRuns([f]);
    expect(runs.map((r) => `${r.question.index}:${r.endReason}`)).toEqual(['0:submitted', '1:submitted']);
    expect(runs[0].id).toMatch(/^baseline\|oracle\|0\|r0\|[0-9a-f]{8}$/);
    // Another maxTurns is another condition: its own run, not a rerun of question 0.
    fs.appendFileSync(f, `${run(0, 'cancelled', { maxTurns: 5 })}\n`);
    expect(readRuns([f]).map((r) => `${r.question.index}:${r.maxTurns}:${r.endReason}`)).toEqual(['0:10:submitted', '1:10:submitted', '0:5:cancelled']);
    fs.appendFileSync(f, '{"id": "c"}\n');
    expect(() => readRuns([f])).toThrow(InputError);
    expect(() => readRuns([f])).toThrow(/runs\.jsonl, line 5: not a run record of fkgqa eval/);
    expect(() => readRuns([path.join(dir, 'none.jsonl')])).toThrow(/run file not found/);
  });
});

describe('eval / the oracle: negated patterns over the shards they match', () => {
  it('trivialFederation sends BGPs under FILTER NOT EXISTS and MINUS to the negated endpoints', async () => {
    const { parseQuery } = await import('../src/sparql/parse.js');
    const { trivialFederation } = await import('../src/sparql/trivial.js');
    const { negatedTriples } = await import('../src/sparql/negation.js');
    const p = parseQuery('SELECT ?t WHERE { ?b a :book . ?b :title ?t . FILTER NOT EXISTS { ?l :book ?b } MINUS { ?b :lost true } }', 'http://e/');
    if (!p.ok) throw new Error(p.error);
    expect(negatedTriples(p.query.ast).map((t) => (t.predicate as { value: string }).value)).toEqual(['http://e/book', 'http://e/lost']);
    const t = trivialFederation(p.query.ast, ['http://a/sparql'], ['http://b/sparql', 'http://c/sparql']);
    expect(serviceTargets(t.text)).toEqual(['http://a/sparql', 'http://b/sparql', 'http://c/sparql']);
    expect(t.text.match(/SERVICE <http:\/\/a\/sparql>/g)).toHaveLength(2);
    expect(t.text.match(/SERVICE <http:\/\/b\/sparql>/g)).toHaveLength(2);
    expect(t.triplePatterns).toBe(4);
  });
});
