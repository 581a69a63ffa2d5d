// @module-tag split-tiers (tests/tiers.ts: the tests tagged slow run in npm run test:slow)
/**
 * `fkgqa score`: reading and validating run records (fkgqa-run/2, built here by hand from
 * the run-record contract), build identity, end reasons (infrastructure errors apart, limits as
 * wrong), the HTML report in headless Chromium, and on Spider4SPARQL graphs the gold answers that
 * depend on ties and the questions whose answer is necessarily empty.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { InputError } from '../src/common/errors.js';
import { admittedBySegments, tieSegments } from '../src/answers/ties.js';
import { goldAnswerDigest, type GoldAnswers } from '../src/build/gold-answers.js';
import { parseQuery } from '../src/sparql/parse.js';
import { computeStats } from '../src/report/stats.js';
import type { SparqlResults, SparqlTerm } from '../src/sparql/results.js';
import { formatScoreCsv, formatScoreHtml, formatScoreText } from '../src/score/format.js';
import { bootstrapMeanInterval, wilsonInterval } from '../src/score/intervals.js';
import { readRunFiles } from '../src/eval/run-reader.js';
import { RunFile } from '../src/eval/run-file.js';
import { score } from '../src/score/score.js';
import { runIdentity, type RunConditionSource } from '../src/eval/record.js';
import { classifyQuery, notJudged } from '../src/score/validity.js';
import { demoBuild, fkgqaInProcess, HAS_SPIDER, ROOT, tiesBuild, tmpDir } from './helpers.js';
import { checkTextLayout } from './text-layout.js';

interface Entry {
  index: number;
  kg: string;
  question: string;
  queryId: string;
  endpoints: string[];
}

/** A build with what a test needs to write run records for it by hand. */
class TestBuild {
  readonly entries: Entry[];
  readonly outputDigest: string;
  constructor(readonly dir: string) {
    this.entries = JSON.parse(fs.readFileSync(path.join(dir, 'benchmark.json'), 'utf8')).entries;
    this.outputDigest = JSON.parse(fs.readFileSync(path.join(dir, 'build.json'), 'utf8')).outputDigest;
  }
  entry(queryId: string): Entry {
    return this.entries.find((e) => e.queryId === queryId)!;
  }
  goldEntry(queryId: string) {
    const kg = queryId.split('/')[0];
    const doc = JSON.parse(fs.readFileSync(path.join(`${this.dir}.state`, 'gold-answers', `${kg}.json`), 'utf8')) as GoldAnswers;
    return doc.answers.find((a) => a.query === queryId)!;
  }
  gold(queryId: string): SparqlResults {
    return this.goldEntry(queryId).results as SparqlResults;
  }
  /** The digest eval records for the question's gold answer. */
  goldDigest(queryId: string): string | null {
    return goldAnswerDigest(this.goldEntry(queryId));
  }
  /** A run record as fkgqa eval writes it (format fkgqa-run/2), answering `results`. */
  record(
    queryId: string,
    o: { results?: SparqlResults | null; model?: string; agent?: string; endReason?: string; build?: object | null; extra?: object; repeat?: number } = {},
  ): Record<string, unknown> {
    const e = this.entry(queryId);
    const endpoints = e.endpoints.map((id) => ({ id, url: `http://127.0.0.1:9/${id}/sparql`, shard: id.slice(e.kg.length + 1) }));
    const agent = o.agent ?? 'llm';
    const model = agent === 'llm' ? (o.model ?? 'fake-model') : null;
    const submitted = o.results !== undefined && o.results !== null;
    return {
      format: 'fkgqa-run/2',
      id: `baseline|${model ?? agent}|${e.index}|r${o.repeat ?? 0}`,
      question: { index: e.index, kg: e.kg, text: e.question, queryId },
      setup: 'baseline',
      agent,
      model,
      baseUrl: null,
      temperature: 0,
      seed: null,
      repeat: o.repeat ?? 0,
      maxTurns: 10,
      prompt: { name: 'baseline.md', sha256: '0'.repeat(64), text: '' },
      tools: { source: 'in-process', names: ['run_sparql_query', 'submit_final_query', 'cancel'] },
      endpoints,
      startedAt: '2026-01-01T00:00:00.000Z',
      ms: 1500,
      endReason: o.endReason ?? (submitted ? 'submitted' : 'turn_limit'),
      messages: [],
      steps: [
        {
          type: 'tool',
          turn: 1,
          callId: 'c1',
          name: 'run_sparql_query',
          arguments: JSON.stringify({ query: 'SELECT * WHERE { SERVICE <http://127.0.0.1:9/x/sparql> { ?s ?p ?o } }' }),
          ms: 5,
          isError: false,
          result: '1 row',
        },
      ],
      finalQuery: submitted ? `SELECT * WHERE { ${endpoints.map((p) => `SERVICE <${p.url}> { ?s ?p ?o }`).join(' UNION ')} }` : null,
      ...(submitted ? { final: { status: 'ok', ms: 10, rows: o.results!.results?.bindings.length ?? 1, results: o.results, route: 'federation', endpoints: endpoints.map((p) => p.url) } } : {}),
      usage: { promptTokens: 100, completionTokens: 10, totalTokens: 110 },
      counts: { llmCalls: 1, toolCalls: 1, sparqlCalls: 1, voidCalls: 0, retries: 0 },
      build: o.build === undefined ? { outputDigest: this.outputDigest, goldDigest: this.goldDigest(queryId) } : o.build,
      toolSurface: { digest: '0123456789abcdef', tools: 3 },
      ...(o.extra ?? {}),
    };
  }
}

const lines = (...records: object[]) => records.map((r) => JSON.stringify(r) + '\n').join('');
const literal = (value: string, datatype?: string): SparqlTerm => ({ type: 'literal', value, ...(datatype ? { datatype } : {}) });
const XSD = 'http://www.w3.org/2001/XMLSchema#';
const count = (n: number): SparqlResults => ({ head: { vars: ['n'] }, results: { bindings: [{ n: literal(String(n), `${XSD}integer`) }] } });

let demo: TestBuild;
const dir = tmpDir('fkgqa-score-');
beforeAll(async () => {
  demo = new TestBuild(await demoBuild(dir, { gold: true }));
}, 120_000);

describe('score / reading run records', () => {
  it('a record without question, or whose final.results is no object, is bad input naming file and line (exit 2, not 3)', async () => {
    const noQuestion = path.join(dir, 'no-question.jsonl');
    const { question: _q, ...rest } = demo.record('library/q1', { results: count(6) });
    fs.writeFileSync(noQuestion, lines(demo.record('library/q2', { results: demo.gold('library/q2') }), rest));
    let r = await fkgqaInProcess(['score', noQuestion, '--shards', demo.dir, '-q']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${noQuestion}, line 2: "question" is missing or not an object`);
    const badResults = path.join(dir, 'bad-results.jsonl');
    const rec = demo.record('library/q1', { results: count(6) });
    (rec.final as { results: unknown }).results = 'six';
    fs.writeFileSync(badResults, lines(rec));
    r = await fkgqaInProcess(['score', badResults, '--shards', demo.dir, '-q']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${badResults}, line 1: "final.results" is not an object (SPARQL JSON results)`);
    // A row that is no RDF term, and an end reason that does not exist, are named too.
    (rec.final as { results: unknown }).results = { head: { vars: ['n'] }, results: { bindings: [{ n: 6 }] } };
    fs.writeFileSync(badResults, lines(rec));
    expect(() => readRunFiles([badResults])).toThrow('line 1: "final.results": row 1 of "results.bindings" binds ?n to no RDF term (6)');
    fs.writeFileSync(badResults, lines(demo.record('library/q1', { results: count(6), endReason: 'gave_up' })));
    expect(() => readRunFiles([badResults])).toThrow(/line 1: "endReason" "gave_up" is none of submitted, cancelled/);
  });

  it('skips a torn last line with a warning, names any other malformed line, reads a last line without newline that is whole', async () => {
    const f = path.join(dir, 'torn.jsonl');
    const a = JSON.stringify(demo.record('library/q1', { results: count(6) }));
    const b = JSON.stringify(demo.record('library/q2', { results: demo.gold('library/q2') }));
    fs.writeFileSync(f, `${a}\n${b}\n${b.slice(0, 200)}`);
    const read = readRunFiles([f]);
    expect(read.runs.map((l) => l.line)).toEqual([1, 2]);
    expect(read.warnings).toEqual([`${f}, line 3: skipped a torn last line (200 bytes without newline, not JSON: a run being written when its writer stopped)`]);
    const cli = await fkgqaInProcess(['score', f, '--shards', demo.dir]);
    expect(cli.code).toBe(0);
    expect(cli.stderr).toContain('fkgqa score: warning: ');
    expect(cli.stdout).toContain('warning: ');
    expect(cli.stdout).toMatch(/accuracy %\s+100\s+2\/2/);
    // The same torn text followed by a newline and another run is no torn last line: it is named.
    fs.writeFileSync(f, `${a}\n${b.slice(0, 200)}\n${b}\n`);
    expect(() => readRunFiles([f])).toThrow(InputError);
    expect(() => readRunFiles([f])).toThrow(/torn\.jsonl, line 2: not JSON/);
    // A whole last record without its newline is read.
    fs.writeFileSync(f, `${a}\n${b}`);
    expect(readRunFiles([f]).runs).toHaveLength(2);
    expect(readRunFiles([f]).warnings).toEqual([]);
  });
});

describe('score / conditions: runs that differ in what was measured are never merged', () => {
  /** The limits eval records, with `federationEngine` and any other limit changed. */
  const limits = (federationEngine: string, other: object = {}) => ({
    limits: { messages: null, tokens: null, timeMs: null, queryTimeoutMs: 30_000, maxQueryChars: 8000, requestTimeoutMs: 300_000, maxRetries: 5, federationEngine, ...other },
  });
  const q2Wrong = count(1);

  it('two run files of the same questions that differ only in the federation engine: two conditions of 2 runs each (2 and 1 correct), named with what differs and where their runs are; the text and HTML reports show both', async () => {
    const a = path.join(dir, 'engine-comunica.jsonl');
    const b = path.join(dir, 'engine-jena.jsonl');
    fs.writeFileSync(a, lines(demo.record('library/q1', { results: count(6), extra: limits('comunica') }), demo.record('library/q2', { results: demo.gold('library/q2'), extra: limits('comunica') })));
    fs.writeFileSync(b, lines(demo.record('library/q1', { results: count(6), extra: limits('jena') }), demo.record('library/q2', { results: q2Wrong, extra: limits('jena') })));
    const r = await score({ runs: [a, b], shards: demo.dir });
    expect(r.runs).toBe(4);
    expect(r.groups.map((g) => [g.group, g.runs, g.accuracy.count, g.condition.federationEngine, g.sources])).toEqual([
      ['baseline|fake-model (federationEngine="comunica")', 2, 2, 'comunica', [`${a}:1-2`]],
      ['baseline|fake-model (federationEngine="jena")', 2, 1, 'jena', [`${b}:1-2`]],
    ]);
    expect(new Set(r.perRun.map((s) => s.id)).size).toBe(4);
    expect(r.warnings).toContain(
      `baseline|fake-model: 2 conditions, reported apart (they differ in federationEngine): baseline|fake-model (federationEngine="comunica"): 2 runs from ${a}:1-2; baseline|fake-model (federationEngine="jena"): 2 runs from ${b}:1-2`,
    );
    const text = formatScoreText(r);
    expect(text).toContain('\n== baseline|fake-model (federationEngine="comunica") (2 runs; ended: submitted 2)\n');
    expect(text).toContain('\n== baseline|fake-model (federationEngine="jena") (2 runs; ended: submitted 2)\n');
    expect(text).toMatch(/\ncondition [0-9a-f]{8}: setup="baseline", agent="llm", model="fake-model", .*federationEngine="jena", .*; runs from \S+engine-jena\.jsonl:1-2\n/);
    // Every row of each figures table has its value in the header's value column, the longest figure name included.
    const textLines = text.split('\n');
    const headers = textLines.flatMap((l, i) => (l.startsWith('figure ') ? [i] : []));
    expect(headers).toHaveLength(2);
    for (const h of headers) {
      const valueEnd = textLines[h].indexOf('value') + 'value'.length;
      const body = textLines.slice(
        h + 1,
        textLines.findIndex((l, i) => i > h && l.startsWith('trivial federation counts')),
      );
      expect(body.length).toBeGreaterThan(20);
      expect(body.map((l) => l.slice(0, valueEnd - 11).trimEnd())).toContain('runs in accuracy (all but model and infrastructure errors)');
      expect(body.map((l) => [l[valueEnd - 1] !== ' ', l[valueEnd] === ' '])).toEqual(body.map(() => [true, true]));
    }
    const table = /<table class="conditions">([\s\S]*?)<\/table>/.exec(formatScoreHtml(r))![1];
    expect(table.match(/<tr><td>/g)).toHaveLength(2);
    expect(table).toContain('<td>&quot;jena&quot;</td>');
  });

  it('files that differ only in a limit (the run time limit), or only in the model, are two conditions each', async () => {
    const a = path.join(dir, 'limit-none.jsonl');
    const b = path.join(dir, 'limit-60s.jsonl');
    fs.writeFileSync(a, lines(demo.record('library/q1', { results: count(6), extra: limits('comunica') }), demo.record('library/q2', { results: q2Wrong, extra: limits('comunica') })));
    fs.writeFileSync(
      b,
      lines(
        demo.record('library/q1', { results: count(6), extra: limits('comunica', { timeMs: 60_000 }) }),
        demo.record('library/q2', { results: demo.gold('library/q2'), extra: limits('comunica', { timeMs: 60_000 }) }),
      ),
    );
    const byLimit = await score({ runs: [a, b], shards: demo.dir });
    expect(byLimit.groups.map((g) => [g.group, g.runs, g.accuracy.count])).toEqual([
      ['baseline|fake-model (limits.timeMs=60000)', 2, 2],
      ['baseline|fake-model (limits.timeMs=null)', 2, 1],
    ]);
    const m = path.join(dir, 'model-other.jsonl');
    fs.writeFileSync(
      m,
      lines(
        demo.record('library/q1', { results: count(5), model: 'other-model', extra: limits('comunica') }),
        demo.record('library/q2', { results: demo.gold('library/q2'), model: 'other-model', extra: limits('comunica') }),
      ),
    );
    const byModel = await score({ runs: [a, m], shards: demo.dir });
    expect(byModel.groups.map((g) => [g.group, g.runs, g.accuracy.count])).toEqual([
      ['baseline|fake-model', 2, 1],
      ['baseline|other-model', 2, 1],
    ]);
  });

  it('the same run in two files is refused, naming both (a copy, or two evals that made it); a file given twice too; the next repeat of a condition in another file is a repeat', async () => {
    const a = path.join(dir, 'twice-a.jsonl');
    const copy = path.join(dir, 'twice-copy.jsonl');
    const q1 = demo.record('library/q1', { results: count(6), extra: limits('comunica') });
    fs.writeFileSync(a, lines(q1, demo.record('library/q2', { results: demo.gold('library/q2'), extra: limits('comunica') })));
    fs.copyFileSync(a, copy);
    const id = runIdentity(q1 as unknown as RunConditionSource & { question: { index: number }; repeat: number }).id;
    await expect(score({ runs: [a, copy], shards: demo.dir })).rejects.toThrow(
      `${copy}, line 1: run ${id} is in ${a} (line 1) and in ${copy} (line 1): the same condition, question and repeat, the same run (same start time): a copy of a run file, or a file given twice; each run is counted once`,
    );
    await expect(score({ runs: [a, a], shards: demo.dir })).rejects.toThrow(`${a}: the run file is given twice (${a} and ${a}): each run is counted once; give it once`);
    const other = path.join(dir, 'twice-other.jsonl');
    fs.writeFileSync(other, lines({ ...q1, startedAt: '2026-02-01T00:00:00.000Z' }));
    await expect(score({ runs: [a, other], shards: demo.dir })).rejects.toThrow(
      'two runs (started 2026-01-01T00:00:00.000Z and 2026-02-01T00:00:00.000Z) that two fkgqa eval commands wrote into two files',
    );
    const cli = await fkgqaInProcess(['score', a, copy, '--shards', demo.dir, '-q']);
    expect([cli.code, cli.stdout]).toEqual([2, '']);
    // Repeat 1 of the same condition in another file: kept as a repeat, one group of 3 runs.
    const next = path.join(dir, 'twice-next.jsonl');
    fs.writeFileSync(next, lines(demo.record('library/q1', { results: count(5), repeat: 1, extra: limits('comunica') })));
    const r = await score({ runs: [a, next], shards: demo.dir });
    expect(r.groups.map((g) => [g.group, g.runs, g.accuracy.count, g.sources])).toEqual([['baseline|fake-model', 3, 2, [`${a}:1-2`, `${next}:1`]]]);
  });
});

describe('score / build identity', () => {
  it('refuses runs of another build or other gold answers naming both digests, unless --allow-other-build', async () => {
    const f = path.join(dir, 'identity.jsonl');
    const digest = demo.outputDigest;
    const gold = demo.goldDigest('library/q1')!;
    expect(gold).toMatch(/^[0-9a-f]{16}$/);
    expect(demo.goldDigest('library/q2')).not.toBe(gold);
    // Same build, same gold answers: scored.
    fs.writeFileSync(f, lines(demo.record('library/q1', { results: count(6) })));
    expect((await score({ runs: [f], shards: demo.dir })).groups[0].accuracy).toEqual({ count: 1, of: 1, percent: 100 });
    // Another build (a run made with --seed 7).
    const other = demo.record('library/q1', { results: count(6), build: { outputDigest: 'feedfacefeedface', goldDigest: '0123456789abcdef' } });
    fs.writeFileSync(f, lines(demo.record('library/q2', { results: demo.gold('library/q2') }), other));
    await expect(score({ runs: [f], shards: demo.dir })).rejects.toThrow(
      `${f}, line 2: run ${runIdentity(other as unknown as RunConditionSource & { question: { index: number }; repeat: number }).id} was made on build feedfacefeedface with gold answer 0123456789abcdef (library/q1); --shards ${demo.dir} is build ${digest} with gold answer ${gold}: score runs against the build and gold answers they were made on, or pass --allow-other-build`,
    );
    const allowed = await score({ runs: [f], shards: demo.dir, allowOtherBuild: true });
    expect(allowed.runs).toBe(2);
    expect(allowed.warnings[0]).toContain('scored against this build because of --allow-other-build');
    // Same build, another gold answer (e.g. recomputed with another time limit).
    fs.writeFileSync(f, lines(demo.record('library/q1', { results: count(6), build: { outputDigest: digest, goldDigest: 'aaaaaaaaaaaaaaaa' } })));
    await expect(score({ runs: [f], shards: demo.dir })).rejects.toThrow(`with gold answer aaaaaaaaaaaaaaaa (library/q1); --shards ${demo.dir} is build ${digest} with gold answer ${gold}`);
  });

  it('refuses a fkgqa-run/1 record (fkgqa 0.1: no build, limits, tool surface), naming the file and line: score (also with --allow-other-build), view and eval resuming the file', async () => {
    const f = path.join(dir, 'run-1.jsonl');
    const { build: _build, toolSurface: _surface, ...v1 } = { ...demo.record('library/q1', { results: count(6) }), format: 'fkgqa-run/1' };
    fs.writeFileSync(f, lines(demo.record('library/q2', { results: demo.gold('library/q2') }), v1));
    const refusal = `${f}, line 2: format fkgqa-run/1 is no longer read; rerun with this version (fkgqa eval writes fkgqa-run/2)`;
    const cli = await fkgqaInProcess(['score', f, '--shards', demo.dir, '--allow-other-build', '-q']);
    expect([cli.code, cli.stdout]).toEqual([2, '']);
    expect(cli.stderr).toContain(refusal);
    expect(() => readRunFiles([f])).toThrow(refusal);
    const page = await fkgqaInProcess(['view', f, '--out', path.join(dir, 'run-1.html')]);
    expect([page.code, fs.existsSync(path.join(dir, 'run-1.html'))]).toEqual([2, false]);
    expect(page.stderr).toContain(refusal);
    const before = fs.readFileSync(f, 'utf8');
    expect(() => RunFile.open(f)).toThrow(`${refusal}; choose another --out`);
    expect(fs.readFileSync(f, 'utf8')).toBe(before);
  });
});

describe('score / how runs ended', () => {
  it('reports infrastructure and model errors apart (never in accuracy) and counts limits as wrong, each its own row', async () => {
    const f = path.join(dir, 'ends.jsonl');
    fs.writeFileSync(
      f,
      lines(
        demo.record('library/q1', { results: count(6) }),
        demo.record('library/q2', { results: count(6) }),
        demo.record('library/q3', {
          endReason: 'infrastructure_error',
          extra: { infrastructure: { what: 'endpoint library-shard2 refused the connection', endpoint: 'http://127.0.0.1:9/library-shard2/sparql', step: 2 } },
        }),
        ...['time_limit', 'message_limit', 'token_limit'].map((endReason, i) => demo.record(['library/q4', 'library/q5', 'library/q6'][i], { endReason })),
        demo.record('library/q7', { endReason: 'model_error', extra: { error: 'gave up after 6 tries: HTTP 503' } }),
      ),
    );
    const r = await score({ runs: [f], shards: demo.dir });
    const g = r.groups[0];
    expect(g).toMatchObject({
      runs: 7,
      scored: 5,
      infrastructure: { runs: 1, what: { 'endpoint library-shard2 refused the connection': 1 } },
      modelErrors: { runs: 1, what: { 'gave up after 6 tries: HTTP 503': 1 } },
    });
    expect(g.endReasons).toEqual({ submitted: 2, cancelled: 0, turn_limit: 0, message_limit: 1, token_limit: 1, time_limit: 1, model_error: 1, infrastructure_error: 1 });
    expect(g.accuracy).toEqual({ count: 1, of: 5, percent: 20 });
    expect(g.tokens.total).toBe(7 * 110); // the cost counts every run
    expect(r.warnings).toEqual(['baseline|fake-model: 2 of 7 runs failed (model_error 1, infrastructure_error 1) and are in no rate: rerun them with fkgqa eval --retry-errors']);
    const byQuery = Object.fromEntries(r.perRun.map((s) => [s.queryId, s]));
    expect(byQuery['library/q3']).toMatchObject({ counted: false, correct: false, infrastructure: 'endpoint library-shard2 refused the connection' });
    expect(byQuery['library/q4'].reason).toBe('hit the time limit before answering');
    expect(byQuery['library/q2'].reason).toBe('1 row where gold has 2');
    const text = formatScoreText(r);
    expect(text).toContain('infrastructure errors (not in accuracy): 1: 1 × endpoint library-shard2 refused the connection');
    expect(text).toMatch(/ended: time_limit\s+1/);
    expect(text).toMatch(/accuracy %\s+20\s+1\/5/);
  });
});

describe('score / the HTML report', () => {
  const chromium = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((c) => fs.existsSync(c));
  let html: string;
  let htmlScripted: string;
  beforeAll(async () => {
    const f = path.join(dir, 'html.jsonl');
    fs.writeFileSync(
      f,
      lines(
        demo.record('library/q1', { results: count(6) }),
        demo.record('library/q2', { results: count(1) }),
        demo.record('library/q2', { results: count(2), model: 'zero-model' }),
        demo.record('library/q1', { results: count(6), agent: 'oracle' }),
      ),
    );
    const r = await score({ runs: [f], shards: demo.dir });
    html = formatScoreHtml(r, { viewPage: 'runs view.html' });
    htmlScripted = formatScoreHtml(r, { paperWithScripted: true });
  });

  it('draws scripted agents without the paper bars unless asked, links every run not correct into the viewer, n under every bar', () => {
    const accuracy = /<svg id="accuracy"[\s\S]*?<\/svg>/.exec(html)![0];
    // fake-model and zero-model: their bar and the two models of the paper; oracle: its bar alone.
    expect(accuracy.match(/<rect class="(bar|bar zero|missing)"/g)).toHaveLength(7);
    expect(/<svg id="accuracy"[\s\S]*?<\/svg>/.exec(htmlScripted)![0].match(/<rect class="(bar|bar zero|missing)"/g)).toHaveLength(9);
    expect(accuracy).toContain('data-value="0"'); // zero-model
    expect(accuracy).toContain('data-value="50"'); // fake-model: 1 of 2
    expect(accuracy).toContain('data-value="42.1"'); // GPT-5.2, baseline
    expect(accuracy.match(/class="n"/g)).toHaveLength(7);
    expect(html.match(/data-scale-max="100"/g)).toHaveLength(6);
    expect(html).toMatch(/<a href="runs view\.html#run=baseline%7Cfake-model%7C2%7Cr0%7C[0-9a-f]{8}">baseline\|fake-model\|2\|r0\|[0-9a-f]{8}<\/a>/);
    expect(html).toMatch(/<a href="runs view\.html#run=baseline%7Czero-model%7C2%7Cr0%7C[0-9a-f]{8}">/);
    expect(html).toContain('<h2 id="not-correct">Runs not correct (2)</h2>');
  });

  it.skipIf(!chromium)('in headless Chromium every bar is visible, a 0 % bar too, each with its n below it', () => {
    const file = path.join(tmpDir(), 'score.html');
    fs.writeFileSync(file, html);
    const r = spawnSync(
      chromium!,
      [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        `--user-data-dir=${tmpDir('fkgqa-chromium-')}`,
        '--virtual-time-budget=5000',
        '--dump-dom',
        `file://${file}`,
      ],
      { encoding: 'utf8', timeout: 60_000 },
    );
    const body = /<body([^>]*)>/.exec(r.stdout)?.[1] ?? '';
    const bars = Number(/data-bars="(\d+)"/.exec(body)?.[1]);
    expect(bars).toBeGreaterThan(10);
    expect(body).toContain(`data-bars-visible="${bars}"`);
    expect(body).toContain(`data-bars-with-n="${bars}"`);
    // Every error bar (the 95 % intervals of the runs' accuracy and F1) is drawn.
    const errorBars = Number(/data-error-bars="(\d+)"/.exec(body)?.[1]);
    expect(errorBars).toBeGreaterThanOrEqual(6);
    expect(body).toContain(`data-error-bars-visible="${errorBars}"`);
    // zero-model's accuracy, accuracy without necessarily empty answers and F1 are 0 %.
    expect(Number(/data-zero-bars-visible="(\d+)"/.exec(body)?.[1])).toBeGreaterThanOrEqual(3);
  });

  it.skipIf(!chromium)(
    "in headless Chromium at 1400 and 800 px: no two texts of a chart overlap (captions, labels, n, the dashed boxes' words), none cut, each bar named by its model or agent, a margin and no horizontal scrolling",
    { tags: ['slow'], timeout: 180_000 },
    async () => {
      const file = path.join(tmpDir(), 'score.html');
      fs.writeFileSync(file, html);
      const layout = await checkTextLayout(file, {
        widths: [1400, 800],
        ready: 'document.body.dataset.bars',
        screenshots: process.env.FKGQA_SCREENSHOTS,
        evaluate: {
          labels: `[...document.querySelectorAll('#accuracy text.label')].map((t) => t.textContent)`,
          groups: `[...document.querySelectorAll('#accuracy text.group')].map((t) => t.textContent)`,
          missing: `[...document.querySelectorAll('#validity text.missing')].map((t) => t.textContent)`,
          // Each error bar with its bar's value written above its top cap (same centre, nothing crossing the text).
          errorBars: `[...document.querySelectorAll('svg.chart g.ci')].map((g) => {
          const r = g.getBoundingClientRect();
          const cx = (r.left + r.right) / 2;
          const v = [...g.ownerSVGElement.querySelectorAll('text.value')].find((t) => { const q = t.getBoundingClientRect(); return Math.abs((q.left + q.right) / 2 - cx) < 2; });
          return v ? v.getBoundingClientRect().bottom <= r.top + 0.5 : false;
        })`,
        },
      });
      for (const width of [1400, 800]) {
        const l = layout[width];
        expect({ width, overlaps: l.overlaps, cut: l.cut, overflowX: l.overflowX }).toEqual({ width, overlaps: [], cut: [], overflowX: 0 });
        expect(l.margin).toBeGreaterThanOrEqual(16);
        // Six charts, each with its axis, bars, labels, n and captions.
        expect(Object.keys(l.texts)).toEqual(['accuracy', 'accuracy-federated', 'validity', 'consultation', 'trivial', 'f1']);
        expect(l.values.groups).toEqual(['baseline|fake-model', 'baseline|oracle', 'baseline|zero-model']);
        // A model's bar is named by the model, a scripted agent's by the agent, the paper's by its model.
        expect(l.values.labels).toEqual(['fake-model', 'GPT-5.2', 'Qwen3-8B', 'oracle', 'zero-model', 'GPT-5.2', 'Qwen3-8B']);
        // The paper gives syntactic validity as a range only: both dashed boxes say so.
        expect(l.values.missing).toEqual(['range only', 'range only', 'range only', 'range only']);
        // The runs' bars of accuracy, accuracy without necessarily empty answers and mean F1 (3 groups × 3 charts) carry their 95 % interval.
        expect(l.values.errorBars).toEqual(Array.from({ length: 9 }, () => true));
      }
    },
  );
});

describe('score / 95 % confidence intervals beside accuracy and F1, with n', () => {
  it('Wilson intervals of shares, and a seeded percentile bootstrap of a mean (the same values and seed, the same interval)', () => {
    const r3 = (i: [number, number] | null) => i && i.map((x) => Math.round(x * 1000) / 1000);
    expect([r3(wilsonInterval(7, 10)), r3(wilsonInterval(0, 10)), r3(wilsonInterval(10, 10)), wilsonInterval(0, 0)]).toEqual([[0.397, 0.892], [0, 0.278], [0.722, 1], null]);
    expect(() => wilsonInterval(11, 10)).toThrow(RangeError);
    const f1s = [0.5, 0.25, 1, 0, 0.75, 0.9, 0.1, 0.6, 0.3, 0.8];
    expect(r3(bootstrapMeanInterval(f1s))).toEqual([0.315, 0.72]);
    expect(bootstrapMeanInterval(f1s)).toEqual(bootstrapMeanInterval([...f1s]));
    expect(r3(bootstrapMeanInterval(f1s, { seed: 1 }))).toEqual([0.31, 0.715]);
    expect(bootstrapMeanInterval([])).toBeNull();
  });

  it('score reports them for 7 correct of 10 runs: accuracy 70 % [39.68, 89.22], F1 with its interval, in text, CSV, JSON and as error bars in the HTML', async () => {
    const f = path.join(dir, 'intervals.jsonl');
    const gold = demo.gold('library/q1');
    fs.writeFileSync(f, lines(...Array.from({ length: 10 }, (_, i) => demo.record('library/q1', { results: i < 7 ? gold : count(99), repeat: i }))));
    const r = await score({ runs: [f], shards: demo.dir });
    const g = r.groups[0];
    expect([g.accuracy, g.ci95.accuracy, g.graspF1, g.ci95.graspF1]).toEqual([{ count: 7, of: 10, percent: 70 }, [39.68, 89.22], 0.7, [40, 100]]);
    // Deterministic: the same runs give the same intervals.
    expect((await score({ runs: [f], shards: demo.dir })).groups[0].ci95).toEqual(g.ci95);
    const text = formatScoreText(r);
    expect(text).toMatch(/accuracy %\s+70\s+7\/10\s+\[39\.68, 89\.22\]/);
    expect(text).toMatch(/mean F1 \(GRASP\) %\s+70\s+n=10\s+\[40, 100\]/);
    expect(formatScoreCsv(r)).toContain('baseline|fake-model,accuracy %,70,7/10,39.68,89.22,');
    const accuracyChart = /<svg id="accuracy"[\s\S]*?<\/svg>/.exec(formatScoreHtml(r))![0];
    expect(accuracyChart).toContain('<g class="ci" data-low="39.68" data-high="89.22"');
  });
});

describe('score / gold answers stored without the tie analysis', () => {
  it('score refuses them naming the file and asks for fkgqa stats again; stats computes them anew', async () => {
    const copy = path.join(tmpDir('fkgqa-score-old-'), 'shards');
    fs.cpSync(demo.dir, copy, { recursive: true });
    fs.cpSync(`${demo.dir}.state`, `${copy}.state`, { recursive: true });
    const file = path.join(`${copy}.state`, 'gold-answers', 'library.json');
    const doc = JSON.parse(fs.readFileSync(file, 'utf8')) as GoldAnswers;
    delete doc.tieAnalysis;
    fs.writeFileSync(file, JSON.stringify(doc));
    const f = path.join(dir, 'old-gold.jsonl');
    fs.writeFileSync(f, lines({ ...demo.record('library/q1', { results: count(6) }), build: { outputDigest: demo.outputDigest, goldDigest: null } }));
    await expect(score({ runs: [f], shards: copy })).rejects.toThrow(
      /the gold answers of library were stored without the tie analysis version 1 that scoring needs: run fkgqa stats --shards .* again/,
    );
    const lines2: string[] = [];
    await computeStats({ shards: copy, timeoutMs: 20_000, kgs: ['library'], progress: (l) => lines2.push(l) });
    expect(lines2.some((l) => l.startsWith('library: 7 queries, gold answers computed, realised fan-out reused'))).toBe(true);
    const after = JSON.parse(fs.readFileSync(file, 'utf8')) as GoldAnswers;
    expect(after.tieAnalysis).toBe(1);
    expect(after.answers.map((a) => a.results)).toEqual(doc.answers.map((a) => a.results));
    const r = await score({ runs: [f], shards: copy });
    expect(r.perRun[0].correct).toBe(true);
    expect(r.warnings).toEqual(['1 run with no gold-answers digest (fkgqa stats had not run when they were made): scored against the gold answers stored now']);
  });
});

describe.skipIf(!HAS_SPIDER)('score / Spider4SPARQL car_1, dog_kennels, network_1: ties and necessarily empty answers', () => {
  let real: TestBuild;
  beforeAll(async () => {
    // The build of these graphs with the gold answers of fkgqa stats (60 s per query), made once per run (tests/global-setup.ts).
    real = new TestBuild(await tiesBuild(tmpDir('fkgqa-score-spider-'), { gold: true }));
  }, 240_000);
  const ties = (kg: string) => (JSON.parse(fs.readFileSync(path.join(`${real.dir}.state`, 'gold-answers', `${kg}.json`), 'utf8')) as GoldAnswers).answers.filter((a) => a.ties);
  const values = (r: SparqlResults) =>
    r.results!.bindings.map((b) =>
      Object.values(b)
        .map((t) => t.value)
        .join(' '),
    );

  it('stats finds the tie-dependent gold answers: car_1/q37 and dog_kennels/q19 in a sub-SELECT, others at the top level', () => {
    expect(ties('car_1').map((a) => `${a.query}:${a.ties!.dependence}`)).toEqual(['car_1/q5:choice', 'car_1/q37:choice', 'car_1/q40:choice']);
    expect(ties('dog_kennels').map((a) => `${a.query}:${a.ties!.dependence}`)).toEqual(['dog_kennels/q19:choice']);
    const q37 = ties('car_1').find((a) => a.query === 'car_1/q37')!;
    expect(q37.ties!.reason).toBe('sub-SELECT ORDER BY DESC (?t22_horsepower) LIMIT 1: 6 solutions tie (ORDER BY key "null") for 1 place: 6 choices; 6 admissible answers (gold and 5 others)');
    expect(values(q37.results as SparqlResults)).toEqual(['103']);
    expect(q37.ties!.alternatives!.map((a) => values(a.results as SparqlResults)[0]).sort()).toEqual(['17', '174', '277', '39', '95']);
    const q19 = ties('dog_kennels')[0];
    // No ORDER BY at the top level: the rows are stored sorted.
    expect(values(q19.results as SparqlResults)).toEqual([
      'Holden 2018-03-23T13:52:10',
      'Jesus 2018-03-16T10:27:36',
      'Troy 2018-02-28T17:09:43',
      'Troy 2018-03-04T20:33:43',
      'Troy 2018-03-11T04:23:15',
    ]);
    expect(q19.ties!.alternatives!.map((a) => values(a.results as SparqlResults).sort())).toEqual([
      ['Houston 2018-03-15T20:25:34', 'Kacey 2018-03-15T19:10:02', 'Lyric 2018-03-08T05:26:23', 'Lyric 2018-03-14T19:10:40', 'Lyric 2018-03-19T04:39:54'],
    ]);
    const q5 = ties('car_1').find((a) => a.query === 'car_1/q5')!;
    expect(q5.ties!.segments).toHaveLength(1);
    expect(q5.ties!.segments![0]).toMatchObject({ start: 0, take: 1, tied: 17, key: '"100"' });
  });

  it('scores an admissible non-gold answer correct and an inadmissible one wrong', async () => {
    const f = path.join(tmpDir(), 'ties.jsonl');
    const alt19 = ties('dog_kennels')[0].ties!.alternatives![0].results as SparqlResults;
    // The alternative with its columns renamed and swapped, its rows reversed (no ORDER BY at the top).
    const renamed: SparqlResults = { head: { vars: ['when', 'dog'] }, results: { bindings: [...alt19.results!.bindings].reverse().map((b) => ({ when: b.t2_date_of_treatment, dog: b.t1_name })) } };
    const mixed: SparqlResults = { head: alt19.head, results: { bindings: [real.gold('dog_kennels/q19').results!.bindings[0], ...alt19.results!.bindings.slice(1)] } };
    const model = (name: string): SparqlResults => ({ head: { vars: ['t1_model'] }, results: { bindings: [{ t1_model: literal(name) }] } });
    fs.writeFileSync(
      f,
      lines(
        real.record('car_1/q37', { results: count(39) }),
        real.record('car_1/q37', { results: count(104), model: 'm2' }),
        real.record('dog_kennels/q19', { results: renamed }),
        real.record('dog_kennels/q19', { results: mixed, model: 'm2' }),
        real.record('car_1/q5', { results: model('datsun') }),
        real.record('car_1/q5', { results: model('ford'), model: 'm2' }),
      ),
    );
    const r = await score({ runs: [f], shards: real.dir });
    const v = Object.fromEntries(r.perRun.map((s) => [`${s.model}:${s.queryId}`, s]));
    expect(v['fake-model:car_1/q37']).toMatchObject({ correct: true, byAlternative: true, goldTies: 'choice', graspF1: 1, spinachF1: 1 });
    expect(v['m2:car_1/q37']).toMatchObject({ correct: false, reason: 'no column matching gives the gold rows (nor any of the 5 other admissible answers)' });
    expect(v['fake-model:dog_kennels/q19']).toMatchObject({ correct: true, byAlternative: true });
    expect(v['m2:dog_kennels/q19']).toMatchObject({ correct: false });
    expect(v['fake-model:car_1/q5']).toMatchObject({ correct: true, byTies: true });
    expect(v['m2:car_1/q5'].correct).toBe(false);
    expect(r.tieQuestions.map((t) => t.queryId)).toEqual(['car_1/q37', 'car_1/q5', 'dog_kennels/q19']);
    expect(r.groups.find((g) => g.model === 'fake-model')).toMatchObject({ byTies: 1, byAlternative: 2, accuracy: { count: 3, of: 3 } });
  });

  it('reports the questions whose answer is necessarily empty apart: accuracy with and without them', async () => {
    const f = path.join(tmpDir(), 'empty.jsonl');
    expect(real.entry('network_1/q13')).toMatchObject({ status: 'covered', federated: false });
    fs.writeFileSync(f, lines(real.record('network_1/q13', { results: real.gold('network_1/q13') }), real.record('network_1/q1', { results: count(15) })));
    const r = await score({ runs: [f], shards: real.dir });
    expect(r.perRun.map((s) => `${s.queryId}:${s.goldKind}:${s.correct}`)).toEqual(['network_1/q1:federated:false', 'network_1/q13:necessarily-empty:true']);
    expect(r.groups[0]).toMatchObject({
      accuracy: { count: 1, of: 2, percent: 50 },
      accuracyWithoutNecessarilyEmpty: { count: 0, of: 1, percent: 0 },
      necessarilyEmpty: { count: 1, of: 1, percent: 100 },
    });
    expect(formatScoreText(r)).toMatch(/accuracy without necessarily empty answers %\s+0\s+0\/1/);
  });
});

describe('answers / tie segments of an ordered answer', () => {
  // SELECT ?name ORDER BY ?age LIMIT 3 over ages 20, 30, 30, 30, 40: rank 2–4 tie, the LIMIT keeps two of them.
  const parse = (q: string) => {
    const p = parseQuery(q, 'http://x/');
    if (!p.ok) throw new Error(p.error);
    return p.query.ast as import('sparqljs').SelectQuery;
  };
  const row = (name: string, age?: number) => ({ name: literal(name), ...(age === undefined ? {} : { age: literal(String(age), `${XSD}integer`) }) });
  const keyed: SparqlResults = { head: { vars: ['name', 'age'] }, results: { bindings: [row('ann', 20), row('bob', 30), row('cy', 30), row('dan', 30), row('eve', 40)] } };
  const answer = (...names: string[]): SparqlResults => ({ head: { vars: ['name'] }, results: { bindings: names.map((n) => row(n)) } });

  it('keeps all tied rows where the LIMIT cuts a run, only the place where it keeps a run whole', () => {
    const limited = parse('SELECT ?name WHERE { ?p :name ?name ; :age ?age } ORDER BY ?age LIMIT 3');
    const segs = tieSegments(limited, { ...keyed, head: { vars: ['name', '__fkgqa_order0'] }, results: { bindings: keyed.results!.bindings.map((b) => ({ name: b.name, __fkgqa_order0: b.age })) } }, [
      'name',
    ]);
    expect(segs).toEqual([{ start: 1, take: 2, tied: 3, key: '#30', rows: [row('bob'), row('cy'), row('dan')] }]);
    const gold = answer('ann', 'bob', 'cy');
    expect(admittedBySegments(gold, segs, answer('ann', 'dan', 'bob'))).toEqual({ admitted: true });
    expect(admittedBySegments(gold, segs, answer('ann', 'dan', 'dan'))).toEqual({ admitted: false, why: 'row 3 (?name="dan") is none of the 3 solutions tied at ORDER BY key #30' });
    expect(admittedBySegments(gold, segs, answer('bob', 'ann', 'cy'))).toEqual({ admitted: false, why: 'row 2 (?name="ann") is none of the 3 solutions tied at ORDER BY key #30' });
    const whole = parse('SELECT ?name ?age WHERE { ?p :name ?name ; :age ?age } ORDER BY ?age');
    const open = tieSegments(whole, keyed, ['name', 'age']);
    expect(open).toEqual([{ start: 1, take: 3, tied: 3, key: '#30' }]);
    const all = { head: { vars: ['name', 'age'] }, results: { bindings: keyed.results!.bindings } };
    const swapped = { ...all, results: { bindings: [row('ann', 20), row('dan', 30), row('bob', 30), row('cy', 30), row('eve', 40)] } };
    expect(admittedBySegments(all, open, swapped)).toEqual({ admitted: true });
    expect(admittedBySegments(all, open, { ...all, results: { bindings: [row('ann', 20), row('dan', 30), row('bob', 30), row('eve', 40), row('cy', 30)] } }).admitted).toBe(false);
  });
});

describe('score / syntactic validity does not judge queries the infrastructure or the clock stopped', () => {
  it('a probe that timed out under load or failed busy is not judged; a real syntax error is, whatever the tool answered', async () => {
    const url = (n: number) => `http://127.0.0.1:9/library-shard${n}/sparql`;
    const q = (body: string) => JSON.stringify({ query: `SELECT * WHERE { ${body} }` });
    const tool = (args: string, o: { result?: string; error?: object } = {}) => ({
      type: 'tool',
      turn: 1,
      callId: 'c1',
      name: 'run_sparql_query',
      arguments: args,
      ms: 30_832,
      isError: o.result !== undefined,
      result: o.result ?? '1 row',
      ...(o.error ? { error: o.error } : {}),
    });
    // An oracle probe (pets_1/q9 at load ~10), as eval recorded it.
    const timedOut = `Error (timeout): timeout: the federation engine (SERVICE <${url(1)}>, <${url(2)}>) did not answer within 30000 ms — this is not an empty result, the answer is unknown. Make the query more selective (fewer endpoints per triple pattern, FILTER, LIMIT); timeout_ms may be raised up to 100000.`;
    const busy = `Error (endpoint): the endpoint ${url(2)} is busy: 503 busy; waited=2900`;
    const f = path.join(dir, 'validity.jsonl');
    fs.writeFileSync(
      f,
      lines(
        demo.record('library/q1', {
          results: count(6),
          extra: { steps: [tool(q(`SERVICE <${url(1)}> { ?s ?p ?o } SERVICE <${url(2)}> { ?s ?p ?o }`), { result: timedOut, error: { class: 'timeout', infrastructure: false } })] },
        }),
        demo.record('library/q2', {
          results: demo.gold('library/q2'),
          extra: {
            steps: [tool(q(`SERVICE <${url(2)}> { ?s ?p ?o }`), { result: busy, error: { class: 'endpoint', infrastructure: true, endpoint: url(2) } }), tool(q(`SERVICE <${url(1)}> { ?s ?p ?o }`))],
          },
        }),
        // Real syntax errors: an undeclared prefix (the tool's syntax error), and unbalanced braces the tool happened to time out on: judged.
        demo.record('library/q3', {
          results: count(1),
          extra: {
            steps: [
              tool(q(`SERVICE <${url(1)}> { ?s foo:name ?o }`), { result: 'Error (syntax): undeclared prefix "foo:"', error: { class: 'syntax', infrastructure: false } }),
              tool(JSON.stringify({ query: `SELECT * WHERE { SERVICE <${url(1)}> { ?s ?p ?o }` }), { result: timedOut, error: { class: 'timeout', infrastructure: false } }),
            ],
          },
        }),
      ),
    );
    const r = await score({ runs: [f], shards: demo.dir });
    const g = r.groups[0];
    expect(g.validity.classes).toEqual({ ok: 1, prefix: 1, braces: 1, service: 0, parse: 0, execution: 0 });
    expect(g.validity.valid).toEqual({ count: 1, of: 3, percent: 33.33 });
    expect(g.validity.notJudged).toEqual({ timeout: 1, infrastructure: 1 });
    expect(r.perRun.find((s) => s.queryId === 'library/q1')).toMatchObject({ validity: { ok: 0, execution: 0 }, notJudged: { timeout: 1, infrastructure: 0 } });
    const text = formatScoreText(r);
    expect(text).toMatch(/syntactic validity %\s+33\.33\s+1\/3/);
    expect(text).toContain('validity classes of 3 queries: ok 1, prefix 1, braces 1, service 0, parse 0, execution 0');
    expect(text).toContain('not judged (they parse; stopped at their time limit or by the infrastructure, in no class and not in syntactic validity): timeout 1, infrastructure 1');
    expect(formatScoreHtml(r)).toContain('<th>not judged: timeout</th>');
    // The class decides, not the text: a timeout's text without its recorded class is judged; an endpoint's own refusal stays `execution`.
    const parses = 'SELECT * WHERE { SERVICE <http://a/sparql> { ?s ?p ?o } }';
    expect(notJudged(classifyQuery(parses, timedOut), { class: 'timeout', infrastructure: false })).toBe('timeout');
    expect(notJudged(classifyQuery(parses, timedOut), undefined)).toBeUndefined();
    expect(notJudged(classifyQuery(parses, 'Error (endpoint): 400 bad request'), { class: 'endpoint', infrastructure: false })).toBeUndefined();
  });
});

describe('score / a run file fkgqa eval is still writing (its runs so far are not all its runs)', () => {
  it('is refused naming the file and the eval (exit 2); --partial scores it saying PARTIAL (report.partial); a lock left by a killed eval is a warning', async () => {
    const f = path.join(dir, 'being-written.jsonl');
    fs.writeFileSync(f, lines(demo.record('library/q1', { results: count(6) }), demo.record('library/q2', { results: demo.gold('library/q2') })));
    // A process that holds the run file open for appending, as fkgqa eval does (RunFile.open takes its lock).
    const { spawn } = await import('node:child_process');
    const writer = spawn(
      process.execPath,
      ['-e', `import(${JSON.stringify(path.join(ROOT, 'dist/eval/run-file.js'))}).then((m) => { m.RunFile.open(${JSON.stringify(f)}); console.log('open'); setInterval(() => {}, 1000); })`],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    try {
      await new Promise<void>((resolve, reject) => {
        writer.stdout!.on('data', (c: Buffer) => (String(c).includes('open') ? resolve() : undefined));
        writer.on('exit', (code) => reject(new Error(`the writer exited (${code})`)));
      });
      const refused = await fkgqaInProcess(['score', f, '--shards', demo.dir, '-q']);
      expect(refused.code).toBe(2);
      expect(refused.stdout).toBe('');
      expect(refused.stderr).toContain(
        `${f}: fkgqa eval (pid ${writer.pid}) is still writing this run file: it has written 2 runs so far, not all its runs; wait until eval ends, or pass --partial to score them`,
      );
      const partial = await score({ runs: [f], shards: demo.dir, partial: true });
      expect(partial.partial).toEqual([f]);
      expect(partial.runs).toBe(2);
      const cli = await fkgqaInProcess(['score', f, '--shards', demo.dir, '--partial', '-q']);
      expect(cli.code).toBe(0);
      expect(cli.stdout).toContain(`warning: PARTIAL: ${f} was still being written by fkgqa eval (pid ${writer.pid}): 2 runs read so far, not all the runs it will hold`);
      // fkgqa view --shards scores the runs: refused the same way, and its --partial (which the refusal names) exists.
      const page = path.join(dir, 'being-written.html');
      const viewRefused = await fkgqaInProcess(['view', f, '--shards', demo.dir, '--out', page, '-q']);
      expect(viewRefused.code).toBe(2);
      expect(viewRefused.stderr).toContain('or pass --partial to score them');
      expect(fs.existsSync(page)).toBe(false);
      const viewed = await fkgqaInProcess(['view', f, '--shards', demo.dir, '--out', page, '--partial', '-q']);
      expect(viewed.code).toBe(0);
      expect(fs.existsSync(page)).toBe(true);
      // Through a symbolic link (in another folder) to the same file: the same lock, refused the same way (not scored silently).
      const other = tmpDir();
      const link = path.join(other, 'link.jsonl');
      fs.symlinkSync(f, link);
      await expect(score({ runs: [link], shards: demo.dir })).rejects.toThrow(`fkgqa eval (pid ${writer.pid}) is still writing this run file`);
      // And a second eval given the link cannot take the file (it would write every run a second time).
      const { RunFile } = await import('../src/eval/run-file.js');
      expect(() => RunFile.open(link)).toThrow(`another fkgqa process (pid ${writer.pid}) is writing to this run file`);
    } finally {
      writer.kill('SIGKILL');
      await new Promise((r) => (writer.exitCode !== null || writer.signalCode !== null ? r(undefined) : writer.once('exit', r)));
    }
    // Killed without releasing its lock: scored, with a warning that runs may be missing.
    const left = await score({ runs: [f], shards: demo.dir });
    expect(left.partial).toEqual([]);
    expect(left.warnings).toContain(
      `${f}: the fkgqa eval that wrote it (pid ${writer.pid}) stopped without finishing (its lock is left: killed?): the runs it had not reached are missing; the same fkgqa eval command completes the file`,
    );
    // A file no eval holds: no word about it.
    fs.rmSync(path.join(dir, '.being-written.jsonl.fkgqa-lock'));
    expect((await score({ runs: [f], shards: demo.dir })).warnings).toEqual([]);
  });
});
