import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunRecord } from '../src/eval/record.js';
import { PAPER_MODELS } from '../src/score/paper.js';
import { formatScoreText } from '../src/score/format.js';
import { score } from '../src/score/score.js';
import type { ShardServer } from '../src/serve/server.js';
import type { SparqlResults } from '../src/sparql/results.js';
import { diffAnswers } from '../src/view/diff.js';
import type { RunDetail } from '../src/view/model.js';
import { readRunFiles } from '../src/eval/run-reader.js';
import { viewRuns } from '../src/view/view.js';
import { fkgqaInProcess, tmpDir } from './helpers.js';
import { viewFixture } from './view-fixture.js';

/**
 * Runs of the oracle on the demo build (real eval runs), plus runs made wrong from them the ways
 * agents go wrong (tests/view-fixture.ts). The viewer's verdicts must be `fkgqa score`'s.
 */
const dir = tmpDir('fkgqa-view-');
let build: string;
let server: ShardServer;
let oracleFile: string;
let wrongFile: string;
let oracle: RunRecord[];

beforeAll(async () => {
  ({ build, server, oracleFile, wrongFile, oracle } = await viewFixture(dir));
}, 300_000);

afterAll(async () => {
  await server?.close();
});

describe("view / verdicts are fkgqa score's", () => {
  it('gives every run the verdict and reason of score, and marks the differing rows', async () => {
    const files = [oracleFile, wrongFile];
    const [page, report] = await Promise.all([viewRuns({ runs: files, shards: build }), score({ runs: files, shards: build })]);
    const distinct = new Set(oracle.map((r) => r.question.queryId)).size;
    expect(oracle).toHaveLength(8); // the demo's library graph has 8 questions
    expect(distinct).toBe(7);
    expect(page.runs).toBe(14);
    expect(page.verdicts).toEqual({ correct: 8, wrong: 6, unscored: 0 });
    const scored = new Map(report.perRun.map((s) => [s.id, s]));
    expect(scored.size).toBe(14);
    page.data.runs.forEach((summary, i) => {
      const s = scored.get(summary.id)!;
      const detail = JSON.parse(page.data.details[i]) as RunDetail;
      expect(summary.verdict).toBe(s.correct ? 'correct' : 'wrong');
      expect(detail.score?.reason).toBe(s.reason);
      expect(detail.score?.graspF1).toBe(s.graspF1);
    });
    const detail = (agent: string) => JSON.parse(page.data.details[page.data.runs.findIndex((r) => r.who === agent)]) as RunDetail;
    // The oracle's probe answers (run_sparql_query's table, its default) are shown as tables: the note, the variables, every row, as many as the final answer has.
    const probes = page.data.runs.flatMap((summary, i) => {
      if (summary.who !== 'oracle') return [];
      const d = JSON.parse(page.data.details[i]) as RunDetail;
      const probe = d.messages.find((m) => m.r === 'tool' && m.name === 'run_sparql_query') as Extract<RunDetail['messages'][number], { r: 'tool' }>;
      const run = oracle.find((r) => r.id === summary.id)!;
      return [[probe.note?.replace(/^(\d+) rows?$/, '$1'), probe.table?.vars, probe.table?.n, probe.t] as const].map(([n, vars, shown, t]) => [
        Number(n) === run.final!.rows,
        vars?.join(' ') === run.final!.results!.head.vars!.join(' '),
        shown === run.final!.rows,
        t,
      ]);
    });
    expect(probes).toEqual(Array.from({ length: 8 }, () => [true, true, true, '']));
    // The lost row: 1 gold row missing, marked where it stands in the stored gold answer (rows of a
    // query without ORDER BY are stored sorted: the agent's lost row comes first there).
    const lost = detail('lost-row');
    expect(lost.score?.reason).toBe('1 row where gold has 2');
    expect([lost.final?.missing, lost.final?.extra]).toEqual([1, 0]);
    expect(lost.goldMarks).toEqual(['m', '']);
    // A changed value: one missing, one extra, both marked.
    const changed = detail('changed-value');
    expect([changed.final?.missing, changed.final?.extra]).toEqual([1, 1]);
    expect(changed.final?.answer?.marks?.[0]).toBe('x');
    expect(changed.final?.answer?.rows[0]).toEqual(['"Not A Title"']);
    // Reversed rows of an ordered answer: nothing missing, rows at other positions marked `o`.
    const reversed = detail('reversed');
    expect(reversed.score?.reason).toBe('no column matching gives the gold rows in the gold order');
    expect([reversed.final?.missing, reversed.final?.extra]).toEqual([0, 0]);
    expect(reversed.final?.answer?.marks?.filter((m) => m === 'o').length).toBeGreaterThanOrEqual(2);
    expect(page.data.gold['library/q3'].ordered).toBe(true);
    // Other columns: every row differs.
    const wide = detail('extra-column');
    expect(wide.score?.reason).toBe('2 columns where gold has 1');
    expect(wide.final?.extra).toBe(wide.final?.rows);
    expect(detail('cancelled').score?.reason).toBe('nothing submitted (cancelled)');
    expect(detail('failed').score?.reason).toMatch(/^the submitted query failed \(timeout: /);
    // The page embeds the run detail as JSON strings and the data is escaped for a <script>.
    expect(page.html).not.toMatch(/<\/script>[\s\S]*<\/script>[\s\S]*<\/script>[\s\S]*<\/script>/);
    expect(page.html.match(/<script/g)).toHaveLength(2);
  }, 120_000);

  it('diffs columns by the pairing that matches most rows, whatever the names', () => {
    const t = (v: string) => ({ type: 'literal' as const, value: v });
    const gold: SparqlResults = {
      head: { vars: ['a', 'b'] },
      results: {
        bindings: [
          { a: t('1'), b: t('x') },
          { a: t('2'), b: t('y') },
        ],
      },
    };
    const swapped: SparqlResults = {
      head: { vars: ['q', 'p'] },
      results: {
        bindings: [
          { p: t('1'), q: t('x') },
          { p: t('3'), q: t('y') },
        ],
      },
    };
    const d = diffAnswers(gold, swapped, false);
    expect(d.mapping).toEqual({ a: 'p', b: 'q' });
    expect(d.gold).toEqual(['', 'm']);
    expect(d.answer).toEqual(['', 'x']);
  });
});

describe('view and score / a scripted agent (no model) shows no LLM calls; the trivial-federation line says what it counts', () => {
  it('view: the run list has llm null for scripted runs; score text: LLM calls per run "-" and the counted runs in words', async () => {
    const files = [oracleFile, wrongFile];
    const [page, report] = await Promise.all([viewRuns({ runs: files, shards: build }), score({ runs: files, shards: build })]);
    expect(page.data.runs.map((r) => r.llm)).toEqual(page.data.runs.map(() => null));
    const text = formatScoreText(report);
    const oracleBlock = text.split('\n== ').find((b) => b.startsWith('baseline|oracle ('))!;
    // The figure column is as wide as the group's longest figure name (the header's `value` ends the value column).
    const width =
      oracleBlock
        .split('\n')
        .find((l) => l.startsWith('figure '))!
        .indexOf(' value') - 5;
    expect(width).toBeGreaterThan('LLM calls per run'.length);
    expect(oracleBlock).toContain(`\n${'LLM calls per run'.padEnd(width)} ${'-'.padStart(10)} ${''.padStart(11)} ${''.padStart(16)} ${PAPER_MODELS.map(() => '-'.padStart(16)).join(' ')}\n`);
    expect(text).not.toMatch(/^LLM calls per run +2/m);
    // library (4 shards): 8 oracle runs, all correct; library/q6 (books never borrowed) needs all 4 shards, so 7 runs count.
    expect(oracleBlock).toContain(
      '\ntrivial federation counts the scored runs whose gold answer needs fewer shards than the graph has and whose consulted shards are known: 7 of 8 scored runs, 7 of 8 correct runs\n',
    );
  }, 60_000);
});

describe('view / run files', () => {
  it('reads fkgqa-run/2 records (infrastructure errors, build, tool surface) and shows them unscored without --shards', async () => {
    const base = structuredClone(oracle[0]) as unknown as Record<string, unknown>;
    const v2 = {
      ...base,
      format: 'fkgqa-run/2',
      id: 'baseline|llm|0|r0',
      agent: 'llm',
      model: 'qwen3-8b',
      endReason: 'infrastructure_error',
      infrastructure: { what: 'the endpoint refused the connection (ECONNREFUSED)', endpoint: oracle[0].endpoints[1].url, step: 2 },
      build: { outputDigest: 'a'.repeat(64), goldDigest: null },
      toolSurface: { digest: '0123456789abcdef', tools: 3 },
      finalQuery: null,
      final: undefined,
    };
    // Another question (the same one again would be the same run: same condition, question and repeat).
    const limit = { ...v2, id: 'baseline|llm|1|r0', question: { ...(v2.question as object), index: 1 }, endReason: 'token_limit', infrastructure: undefined };
    const file = path.join(dir, 'v2.jsonl');
    fs.writeFileSync(file, [v2, limit].map((r) => JSON.stringify(r)).join('\n') + '\n');
    const page = await viewRuns({ runs: [oracleFile, file] });
    expect(page.runs).toBe(10);
    expect(page.verdicts).toEqual({ correct: 0, wrong: 0, unscored: 10 });
    const i = page.data.runs.findIndex((r) => r.end === 'infrastructure_error');
    expect(page.data.runs[i].id).toMatch(new RegExp(`^baseline\\|qwen3-8b\\|${oracle[0].question.index}\\|r0\\|[0-9a-f]{8}$`));
    expect(page.data.runs[i]).toMatchObject({ who: 'qwen3-8b', end: 'infrastructure_error', verdict: 'unscored' });
    const d = JSON.parse(page.data.details[i]) as RunDetail;
    expect(d.format).toBe('fkgqa-run/2');
    expect(d.infrastructure?.step).toBe(2);
    expect(d.toolSurface).toEqual({ digest: '0123456789abcdef', tools: 3 });
    expect(page.data.runs.map((r) => r.end).filter((e) => e === 'token_limit')).toHaveLength(1);
  });

  it('shows the conditions apart: the same runs on another federation engine are other runs, labelled as score labels them (list, filter, detail); the same run in two files is refused', async () => {
    const jena = path.join(dir, 'oracle-jena.jsonl');
    fs.writeFileSync(jena, oracle.map((r) => JSON.stringify({ ...r, limits: { ...r.limits, federationEngine: 'jena' } })).join('\n') + '\n');
    const page = await viewRuns({ runs: [oracleFile, jena] });
    expect(page.runs).toBe(16);
    const byCond = new Map<string, number>();
    for (const r of page.data.runs) byCond.set(r.cond, (byCond.get(r.cond) ?? 0) + 1);
    expect([...byCond]).toEqual([
      ['baseline|oracle (federationEngine="comunica")', 8],
      ['baseline|oracle (federationEngine="jena")', 8],
    ]);
    expect(new Set(page.data.runs.map((r) => r.id)).size).toBe(16);
    const d = JSON.parse(page.data.details[page.data.runs.findIndex((r) => r.cond.endsWith('"jena")'))]) as RunDetail;
    expect(d.condition).toMatchObject({ label: 'baseline|oracle (federationEngine="jena")', digest: expect.stringMatching(/^[0-9a-f]{16}$/) });
    expect(d.condition!.fields).toContainEqual(['federationEngine', '"jena"']);
    expect(page.html).toContain("['cond', 'condition']");
    const copy = path.join(dir, 'oracle-copy.jsonl');
    fs.copyFileSync(oracleFile, copy);
    expect(() => readRunFiles([oracleFile, copy])).toThrow(
      `${copy}, line 1: run ${oracle[0].id} is in ${oracleFile} (line 1) and in ${copy} (line 1): the same condition, question and repeat, the same run (same start time)`,
    );
  });

  it('names the file and line of a line that is no run record, and a later line replaces an earlier one', () => {
    const file = path.join(dir, 'bad.jsonl');
    fs.writeFileSync(file, `${JSON.stringify(oracle[0])}\n{"format":"fkgqa-run/3","id":"x"}\n`);
    expect(() => readRunFiles([file])).toThrow(`${file}, line 2: not a run record of fkgqa eval (format "fkgqa-run/3", expected fkgqa-run/2)`);
    fs.writeFileSync(file, `${JSON.stringify(oracle[0])}\n${JSON.stringify({ ...oracle[0], endReason: 'cancelled' })}\n`);
    const { runs } = readRunFiles([file]);
    expect(runs).toHaveLength(1);
    expect([runs[0].record.endReason, runs[0].line]).toEqual(['cancelled', 2]);
  });

  it('fkgqa view writes the page, and exits 2 naming the file when the build has no gold answers', async () => {
    const out = path.join(dir, 'cli.html');
    const r = await fkgqaInProcess(['view', oracleFile, '--shards', build, '--out', out]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('fkgqa view: 8 runs (8 correct, 0 wrong, 0 unscored)');
    expect(fs.readFileSync(out, 'utf8')).toContain('<title>fkgqa view: 8 runs</title>');
    const noGold = await fkgqaInProcess(['view', oracleFile, '--shards', build, '--state', tmpDir(), '--out', path.join(dir, 'no.html')]);
    expect(noGold.code).toBe(2);
    expect(noGold.stderr).toMatch(/no gold answers of library for this build: run fkgqa stats --shards \S+ --state \S+ first/);
    expect(fs.existsSync(path.join(dir, 'no.html'))).toBe(false);
    // A folder as the page or as a run file is bad input (exit 2, named), not an internal error; no temporary file is left.
    const asDir = await fkgqaInProcess(['view', oracleFile, '--out', dir]);
    expect([asDir.code, asDir.stderr.split('\n').at(-2)]).toEqual([2, `fkgqa: error: ${dir}: is a directory: give the name of the file to write`]);
    expect(fs.readdirSync(path.dirname(dir)).filter((n) => n.startsWith(`${path.basename(dir)}.fkgqa-tmp-`))).toEqual([]);
    const runDir = await fkgqaInProcess(['view', dir, '--out', path.join(dir, 'x.html')]);
    expect([runDir.code, runDir.stderr]).toEqual([2, `fkgqa: error: ${dir}: run file is a directory: give the file itself\n`]);
  }, 60_000);

  it('stats and score refuse, before any work, a report file that is one of their inputs, inside the build, named twice, a folder, below a file, or no regular file; nothing changes; both create a missing folder', async () => {
    const runs = path.join(tmpDir('fkgqa-report-outputs-'), 'runs.jsonl');
    fs.copyFileSync(oracleFile, runs);
    const before = fs.readFileSync(runs, 'utf8');
    const buildJson = path.join(build, 'build.json');
    const buildBefore = fs.readFileSync(buildJson, 'utf8');
    const last = (r: { stderr: string }) => r.stderr.trim().split('\n').at(-1);
    const own = await fkgqaInProcess(['score', runs, '--shards', build, '--format', 'html', '--out', runs, '-q']);
    expect([own.code, last(own)]).toEqual([2, `fkgqa: error: ${runs}: is a file this command reads, named by --out: the report would replace it; give another file`]);
    expect(fs.readFileSync(runs, 'utf8')).toBe(before);
    const inBuild = await fkgqaInProcess(['stats', '--shards', build, '--format', 'html', '--out', buildJson, '-q']);
    expect([inBuild.code, last(inBuild)]).toEqual([2, `fkgqa: error: ${buildJson}: is inside ${fs.realpathSync(build)}, which this command reads (--out): write reports elsewhere`]);
    expect(fs.readFileSync(buildJson, 'utf8')).toBe(buildBefore);
    const twice = path.join(path.dirname(runs), 'd.html');
    const both = await fkgqaInProcess(['stats', '--shards', build, '--per-query', twice, '--out', path.join(path.dirname(runs), '.', 'd.html'), '-q']);
    expect([both.code, last(both)]).toEqual([2, `fkgqa: error: ${path.join(path.dirname(runs), '.', 'd.html')}: is named by both --per-query and --out: give each report its own file`]);
    expect(fs.existsSync(twice)).toBe(false);
    const link = path.join(path.dirname(runs), 'link.html');
    fs.symlinkSync(runs, link);
    const linked = await fkgqaInProcess(['score', oracleFile, '--shards', build, '--format', 'html', '--out', link, '-q']);
    expect([linked.code, last(linked)]).toEqual([2, `fkgqa: error: ${link}: is not a regular file (a symbolic link, FIFO or device), named by --out: give the name of a file to write`]);
    expect(fs.readFileSync(runs, 'utf8')).toBe(before);
    const folder = await fkgqaInProcess(['stats', '--shards', build, '--out', path.dirname(runs), '-q']);
    expect([folder.code, last(folder)]).toEqual([2, `fkgqa: error: ${path.dirname(runs)}: is a directory, named by --out: give the name of the file to write`]);
    const belowFile = path.join(runs, 'report.txt');
    const below = await fkgqaInProcess(['score', oracleFile, '--shards', build, '--out', belowFile, '-q']);
    expect([below.code, last(below)]).toEqual([2, `fkgqa: error: ${belowFile}: lies below ${runs}, which is a file, not a folder (--out)`]);
    // A missing folder is created, by both commands alike.
    const statsOut = path.join(path.dirname(runs), 'new', 'deeper', 'stats.csv');
    const scoreOut = path.join(path.dirname(runs), 'other', 'score.csv');
    expect((await fkgqaInProcess(['stats', '--shards', build, '--per-query', statsOut, '-q'])).code).toBe(0);
    expect((await fkgqaInProcess(['score', oracleFile, '--shards', build, '--per-run', scoreOut, '-q'])).code).toBe(0);
    expect([fs.readFileSync(statsOut, 'utf8').split('\n')[0].split(',')[0], fs.readFileSync(scoreOut, 'utf8').split('\n').length - 2]).toEqual(['graph', 8]);
  }, 120_000);

  it('stats and score refuse, before any work, a report file in the state folder they read by default or through a symbolic link, a name too long or empty, and a folder that cannot be created; several reports are written all or none', async () => {
    const work = tmpDir('fkgqa-report-paths-');
    const runs = path.join(work, 'runs.jsonl');
    fs.copyFileSync(oracleFile, runs);
    const state = `${build}.state`;
    const gold = path.join(state, 'gold-answers', 'library.json');
    const goldBefore = fs.readFileSync(gold, 'utf8');
    const last = (r: { stderr: string }) => r.stderr.trim().split('\n').at(-1);
    const realState = fs.realpathSync(state);
    const realBuild = fs.realpathSync(build);
    // The default state folder (no --state) is what score reads: the stored gold answers stay.
    const byDefault = await fkgqaInProcess(['score', runs, '--shards', build, '--out', gold, '-q']);
    expect([byDefault.code, last(byDefault)]).toEqual([2, `fkgqa: error: ${gold}: is inside ${realState}, which this command reads (--out): write reports elsewhere`]);
    expect(fs.readFileSync(gold, 'utf8')).toBe(goldBefore);
    // A build or state folder named through a symbolic link is the folder it points to.
    const buildLink = path.join(work, 'build-link');
    const stateLink = path.join(work, 'state-link');
    fs.symlinkSync(build, buildLink);
    fs.symlinkSync(state, stateLink);
    const intoBuild = path.join(build, 'y.txt');
    for (const args of [
      ['score', runs, '--shards', buildLink, '--out', intoBuild],
      ['stats', '--shards', buildLink, '--out', intoBuild],
    ]) {
      const r = await fkgqaInProcess([...args, '-q']);
      expect([r.code, last(r)]).toEqual([2, `fkgqa: error: ${intoBuild}: is inside ${realBuild}, which this command reads (--out): write reports elsewhere`]);
    }
    const intoState = path.join(state, 'y.txt');
    const viaStateLink = await fkgqaInProcess(['score', runs, '--shards', build, '--state', stateLink, '--out', intoState, '-q']);
    expect([viaStateLink.code, last(viaStateLink)]).toEqual([2, `fkgqa: error: ${intoState}: is inside ${realState}, which this command reads (--out): write reports elsewhere`]);
    // The state folder of the build a linked --shards points to holds its gold answers too.
    const besideReal = await fkgqaInProcess(['score', runs, '--shards', buildLink, '--out', intoState, '-q']);
    expect([besideReal.code, last(besideReal)]).toEqual([2, `fkgqa: error: ${intoState}: is inside ${realState}, which this command reads (--out): write reports elsewhere`]);
    expect(fs.existsSync(intoBuild) || fs.existsSync(intoState)).toBe(false);
    // Names the system refuses: exit 2 naming the option, not an internal error.
    const longName = path.join(work, `${'a'.repeat(300)}.txt`);
    const tooLong = await fkgqaInProcess(['score', runs, '--shards', build, '--out', longName, '-q']);
    expect([tooLong.code, last(tooLong)]).toEqual([2, `fkgqa: error: ${longName}: has a name longer than 255 bytes (304), named by --out: give a shorter name`]);
    const longPath = path.join(work, ...Array.from({ length: 500 }, () => 'abcdefgh'), 'x.txt');
    const pathTooLong = await fkgqaInProcess(['stats', '--shards', build, '--per-query', longPath, '-q']);
    expect([pathTooLong.code, last(pathTooLong)]).toEqual([
      2,
      `fkgqa: error: ${longPath}: is a path longer than 4095 bytes (${Buffer.byteLength(longPath)}), named by --per-query: give a shorter path`,
    ]);
    const empty = await fkgqaInProcess(['score', runs, '--shards', build, '--out', '']);
    expect([empty.code, empty.stdout, last(empty)]).toEqual([2, '', 'fkgqa: error: --out names no file (an empty name): give the name of the file to write']);
    // A folder that cannot be created: refused before any work (under /proc, without looping forever).
    for (const [file, up, code] of [
      ['/sys/nonexistent/x.txt', '/sys', 'EPERM'],
      ['/proc/nonexistent/x.txt', '/proc', 'ENOENT'],
    ]) {
      const r = await fkgqaInProcess(['stats', '--shards', build, '--out', file]);
      expect([r.code, r.stderr]).toEqual([2, `fkgqa: error: ${file}: cannot be written, named by --out: ${up} refuses new files and folders (${code})\n`]);
    }
    // One report that cannot be written: none is.
    const ok = path.join(work, 'ok.csv');
    const oneBad = await fkgqaInProcess(['score', runs, '--shards', build, '--per-run', ok, '--out', '/sys/x.txt', '-q']);
    expect([oneBad.code, last(oneBad), fs.existsSync(ok)]).toEqual([2, 'fkgqa: error: /sys/x.txt: cannot be written, named by --out: /sys refuses new files and folders (EPERM)', false]);
  }, 120_000);

  it('fkgqa view without --out writes view.html beside the first run file and says so, even with --quiet', async () => {
    const runs = path.join(tmpDir('fkgqa-view-default-'), 'runs');
    fs.mkdirSync(runs);
    const file = path.join(runs, 'baseline-oracle.jsonl');
    fs.copyFileSync(oracleFile, file);
    const r = await fkgqaInProcess(['view', file, '--shards', build, '-q']);
    const page = path.join(runs, 'view.html');
    expect([r.code, r.stderr]).toEqual([0, expect.stringMatching(new RegExp(`^fkgqa view: wrote ${page.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(\\d+ KiB\\); open it in a browser`))]);
    expect(fs.readFileSync(page, 'utf8')).toContain('<title>fkgqa view: 8 runs</title>');
  }, 60_000);
});
