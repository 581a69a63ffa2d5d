// @module-tag split-tiers (tests/tiers.ts: the tests tagged slow run in npm run test:slow)
import fs from 'node:fs';
import path from 'node:path';
import { parse as parseCsv } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { parseQuery } from '../src/sparql/parse.js';
import { DEFAULT_PARTITION_OPTIONS, partition } from '../src/partition/index.js';
import { formatStatsHtml } from '../src/report/html.js';
import { provenanceQueries } from '../src/report/provenance.js';
import { executeGoldQueries } from '../src/report/answers.js';
import type { StoreWorker } from '../src/common/store-worker.js';
import type { SparqlResults } from '../src/sparql/results.js';
import { ProgressTicker } from '../src/common/progress.js';
import { STATS_PROGRESS_UNIT } from '../src/report/stats.js';
import { computeStats, type BuildStats } from '../src/report/stats.js';
import { comparePaper, flattenFigures, formatPerQueryCsv, formatStatsCsv, formatStatsText } from '../src/report/stats-format.js';
import { CHROMIUM } from '../scripts/chromium.js';
import { DEMO, demoBuild, fkgqaInProcess, tmpDir } from './helpers.js';
import { checkTextLayout } from './text-layout.js';

const NS = 'http://valuenet/ontop/';

/**
 * The shape of the Spider4SPARQL dev build (fkgqa partition on the corpus, default options): per
 * graph its shard sizes (triples) and its rules by kind (vertical, semantic, horizontal). The charts
 * of the stats page are laid out on it: 20 graphs, names up to 28 characters, shards from 5 to
 * 65,966 triples.
 */
const DEV_GRAPHS: [string, number[], [number, number, number]][] = [
  ['battle_death', [27, 36, 84, 63], [0, 2, 3]],
  ['car_1', [1766, 132, 442, 35, 40, 2002, 2065], [2, 4, 3]],
  ['concert_singer', [30, 36, 104, 21, 21], [4, 1, 1]],
  ['course_teach', [16, 76, 12, 7], [1, 0, 1]],
  ['cre_Doc_Template_Mgt', [88, 72, 90, 15, 60, 15], [1, 2, 3]],
  ['dog_kennels', [72, 45, 183, 177, 63, 249], [3, 4, 4]],
  ['employee_hire_evaluation', [25, 75, 68, 24], [3, 0, 3]],
  ['flight_2', [3618, 327, 3582, 333], [0, 2, 3]],
  ['museum_visit', [5, 60, 22, 25], [3, 1, 1]],
  ['network_1', [46, 15, 33, 120], [3, 1, 1]],
  ['orchestra', [48, 75, 12, 48, 114], [1, 1, 4]],
  ['pets_1', [5, 10, 15, 306], [0, 1, 1]],
  ['poker_player', [16, 24, 24, 18], [0, 1, 2]],
  ['real_estate_properties', [118, 110, 111], [0, 1, 2]],
  ['singer', [20, 20, 8, 56], [1, 0, 1]],
  ['student_transcripts_tracking', [209, 106, 241, 104, 60, 255, 60], [4, 3, 7]],
  ['tvshow', [15, 96, 90, 144, 45], [1, 1, 3]],
  ['voter_1', [24, 15, 426, 22, 489], [2, 1, 1]],
  ['world_1', [25315, 1832, 1859, 9142], [3, 1, 1]],
  ['wta_1', [65708, 20654, 65966], [1, 0, 2]],
];
/** Questions per realised fan-out 0–6 on the dev build. */
const DEV_REALISED = [111, 62, 475, 151, 158, 27, 6];

/** A report of the demo build given the dev build's graphs and realised fan-out histogram (DEV_GRAPHS, DEV_REALISED). */
function devShaped(s: BuildStats): BuildStats {
  const template = s.queries[0];
  return {
    ...s,
    graphs: DEV_GRAPHS.map(([graph, sizes, [predicate, cls, horizontal]]) => ({
      graph,
      shards: sizes.length,
      shardSizes: sizes,
      shardBalanceCv: 0,
      rules: predicate + cls + horizontal,
      ruleKinds: { predicate, class: cls, horizontal },
      queries: 1,
    })),
    queries: DEV_REALISED.map((questions, k) => ({ ...template, graph: DEV_GRAPHS[k][0], query: `${DEV_GRAPHS[k][0]}/q1`, questions, impliedFanOut: Math.max(2, k), realisedFanOut: k })),
  };
}

describe('stats / demo dataset, fan-out worked out by hand', async () => {
  // A copy of the shared demo build (default options, tests/global-setup.ts), without its gold answers.
  const out = await demoBuild(tmpDir());
  const lines: string[] = [];
  const stats = await computeStats({ shards: out, timeoutMs: 10_000, progress: (l) => lines.push(l) });
  const q = (id: string) => stats.queries.find((x) => x.query === id)!;

  // library shards (seed 0, 2 buckets): authors 1, 2, 4, 5, 6 and loans a1, a4, a5 hash to bucket 1;
  // author 3 and loans a2, a3 to bucket 0; books stay in the base shard, book#title has its own shard.
  it('gives the realised fan-out of single-class queries whose answers sit in one bucket (Example 2)', () => {
    // "Authors from Peru": authors 1 and 5, both in bucket 1; authors as a whole span both buckets.
    expect([q('library/q2').impliedFanOut, q('library/q2').realisedFanOut]).toEqual([2, 1]);
    // "Loans over 14 days": a1 (21 days) and a4 (30 days), both in bucket 1.
    expect([q('library/q5').impliedFanOut, q('library/q5').realisedFanOut]).toEqual([2, 1]);
    // "How many authors": every author is used: both buckets.
    expect([q('library/q1').impliedFanOut, q('library/q1').realisedFanOut]).toEqual([2, 2]);
    // The report's "realised below implied" examples: only queries with a gap (library/q1's 2 = 2 is none).
    expect(stats.figures.gapExamples.some((g) => g.query === 'library/q1')).toBe(false);
    expect(stats.figures.gapExamples.every((g) => g.realised < g.implied)).toBe(true);
    expect(stats.figures.gapExamples[0]).toEqual({ query: 'library/q6', implied: 4, realised: 2 });
  });

  it('counts joins across shards, and not the patterns under FILTER NOT EXISTS', () => {
    // Books by Bruno Lindqvist (author 2, bucket 1): base (books), title shard, bucket 1 — not bucket 0.
    expect([q('library/q4').impliedFanOut, q('library/q4').realisedFanOut]).toEqual([4, 3]);
    // Books never borrowed: the loan patterns (both buckets) count for f(Q) but are not used by a solution.
    expect([q('library/q6').impliedFanOut, q('library/q6').realisedFanOut]).toEqual([4, 2]);
    // Loans per author country: loans in both buckets, books in base, authors 1, 2, 5 (bucket 1) and 3 (bucket 0).
    expect([q('library/q7').impliedFanOut, q('library/q7').realisedFanOut]).toEqual([3, 3]);
  });

  it('stores the gold answers in the state folder beside the build and reuses them while the build is unchanged', async () => {
    const file = path.join(`${out}.state`, 'gold-answers', 'library.json');
    expect(fs.existsSync(path.join(out, 'library', 'gold-answers.json'))).toBe(false);
    const doc = JSON.parse(fs.readFileSync(file, 'utf8'));
    const peru = doc.answers.find((a: { query: string }) => a.query === 'library/q2');
    expect(peru.status).toBe('ok');
    expect(peru.results.results.bindings.map((b: Record<string, { value: string }>) => b.t1_name.value).sort()).toEqual(['Ada Quispe', 'Elena Mamani']);
    expect(q('library/q5').answerRows).toBe(2); // Kim and Lena
    expect(stats.figures.goldAnswers).toEqual({ graphQueryPairs: 14, executed: 14, failed: 0, timedOut: 0, empty: 0, tiesChoice: 0, tiesOrder: 0, tiesUnknown: 0 });
    // A byte-identical rebuild into the same directory keeps the stored answers.
    await partition({ ...DEFAULT_PARTITION_OPTIONS, source: DEMO, out });
    const again: string[] = [];
    await computeStats({ shards: out, timeoutMs: 10_000, progress: (l) => again.push(l) });
    expect(lines.every((l) => /gold answers computed, realised fan-out computed/.test(l))).toBe(true);
    expect(again.every((l) => /gold answers reused, realised fan-out reused/.test(l))).toBe(true);
  });

  it('writes figures as CSV that parse back to the same numbers', () => {
    const rows = parseCsv(formatStatsCsv(stats, false), { columns: true }) as { figure: string; value: string }[];
    expect(rows.map((r) => [r.figure, Number(r.value)])).toEqual(flattenFigures(stats.figures));
    expect(rows.find((r) => r.figure === 'shards.total')!.value).toBe('8');
    const paper = parseCsv(formatStatsCsv(stats, true), { columns: true }) as { figure: string; paper: string; build: string; difference: string }[];
    expect(paper.length).toBe(comparePaper(stats.figures).length);
    const applies = paper.find((r) => r.figure === 'predicate sharding applies, % of questions')!;
    expect([Number(applies.paper), Number(applies.build), Number(applies.difference)]).toEqual([95.94, 81.25, -14.69]);
  });

  it('names the covered queries with f(Q) below 2 under the fan-out figures, and says nothing when there are none', () => {
    expect(formatStatsText(stats, false)).not.toContain('f(Q) below 2');
    const one = { ...stats, queries: stats.queries.map((q) => (q.query === 'library/q4' ? { ...q, impliedFanOut: 1 } : q)) };
    expect(formatStatsText(one, false)).toContain("f(Q) below 2 (not federated: partition's guarantee excepts them, `partition --verbose` says why): 1 graph/query pair (1 question): library/q4");
  });

  it('writes one per-query CSV row per distinct query', () => {
    const rows = parseCsv(formatPerQueryCsv(stats), { columns: true }) as Record<string, string>[];
    expect(rows.length).toBe(14);
    expect(rows.find((r) => r.query === 'library/q4')).toMatchObject({
      graph: 'library',
      questions: '1',
      predicates: '4',
      classes: '2',
      subject_variables: '2',
      applicable: 'predicate class horizontal',
      covering_rules: 'r1:class r4:predicate',
      implied_fan_out: '4',
      realised_fan_out: '3',
      answer_rows: '2',
      question: 'What are the titles of the books written by Bruno Lindqvist?',
      implied_shards: 'shard1 shard2 shard3 shard4',
      realised_shards: 'shard1 shard2 shard4',
    });
    // The gold query on one line, as benchmark.json has it (prefix declared).
    expect(rows.find((r) => r.query === 'library/q2')!.gold_query).toBe(
      "PREFIX : <http://valuenet/ontop/> select ?t1_name where { ?t1 a :author . ?t1 :author\\#name ?t1_name . ?t1 :author\\#country ?t1_country . FILTER(?t1_country = 'Peru') . }",
    );
  });

  it('makes a self-contained HTML page with three charts', () => {
    const html = formatStatsHtml(stats);
    for (const id of ['fanout', 'sizes', 'rules']) expect(html).toContain(`<canvas id="${id}">`);
    expect(html).toContain('Chart.js v4');
    expect(html).not.toMatch(/(src|href)="https?:/);
  });

  it('gives every chart a legend and axis titles, a table per graph, and figures in words', () => {
    const html = formatStatsHtml(stats);
    for (const t of ["axis('shards (fan-out)')", "axis('questions')", "axis('triples (log scale)')", "axis('chosen sharding rules')"]) expect(html).toContain(t);
    expect(html.match(/legend\('/g)).toHaveLength(3);
    // One row per graph: library has 8 questions, 7 distinct queries, 4 shards.
    const lib = stats.graphs.find((g) => g.graph === 'library')!;
    expect(html).toContain(`<tr><td>library</td><td>8</td><td>7</td><td>4</td><td class="sizes">${lib.shardSizes.join(', ')}</td>`);
    expect(html).toContain('<h2>Queries that timed out (0)</h2>\n<p>None.</p>');
    // Figures in words, no camelCase JSON keys.
    expect(html).toContain('<tr><td>realised fan-out, exactly one shard, over questions</td><td>12.5 % (2 of 16)</td></tr>');
    expect(html).toContain('<tr><td>shards, per graph</td><td>mean 4, median 4, min 4, max 4</td></tr>');
    expect(html).not.toMatch(/<td>[a-z]+[A-Z][a-zA-Z.]*<\/td>/);
  });

  it('lists the timed-out and uncoverable queries with their first question', () => {
    const withTimeout: BuildStats = {
      ...stats,
      queries: stats.queries.map((x) =>
        x.query === 'library/q4' ? { ...x, answerStatus: 'timeout', realisedStatus: 'timeout' } : x.query === 'library/q6' ? { ...x, status: 'uncoverable', reason: 'no candidate rule' } : x,
      ),
    };
    const html = formatStatsHtml(withTimeout);
    expect(html).toContain('<h2>Queries that timed out (1)</h2>');
    expect(html).toContain('<tr><td>library/q4</td><td>1</td><td>What are the titles of the books written by Bruno Lindqvist?</td><td>gold answer and realised fan-out timed out</td></tr>');
    expect(html).toMatch(/<h2>Queries no sharding rule can cover, or that do not parse \(1\)<\/h2>\n<table class="list">.*\n<tr><td>library\/q6<\/td>.*<td>uncoverable: no candidate rule<\/td><\/tr>/);
  });

  it.skipIf(!CHROMIUM)(
    "in headless Chromium at 1400 and 800 px, with the dev build's 20 graphs: all three charts drawn, no two texts of a chart overlap, none cut, every shard below the top labelled tick, a margin and no horizontal scrolling",
    { tags: ['slow'], timeout: 180_000 },
    async () => {
      const file = path.join(tmpDir(), 'report.html');
      fs.writeFileSync(file, formatStatsHtml(devShaped(stats)));
      const largest = Math.max(...DEV_GRAPHS.flatMap(([, sizes]) => sizes));
      const layout = await checkTextLayout(file, {
        widths: [1400, 800],
        ready: 'window.fkgqaChartsReady',
        screenshots: process.env.FKGQA_SCREENSHOTS,
        evaluate: {
          painted: 'document.body.dataset.paintedCharts',
          // The texts each canvas drew (the hook of tests/text-layout.ts).
          drawn: `Object.fromEntries([...document.querySelectorAll('canvas')].map((c) => [c.id, (window.__canvasText.get(c) ?? []).map((b) => b.text)]))`,
          // The largest tick of the shard sizes' log axis that carries a label.
          topLabelled: `Math.max(...Chart.getChart('sizes').scales.x.ticks.filter((t) => t.label).map((t) => t.value))`,
          zeroLabel: `Chart.getChart('fanout').data.labels[0]`,
          note: `document.querySelector('p.note').textContent`,
        },
      });
      for (const width of [1400, 800]) {
        const l = layout[width];
        expect({ width, overlaps: l.overlaps, cut: l.cut, overflowX: l.overflowX }).toEqual({ width, overlaps: [], cut: [], overflowX: 0 });
        expect(l.margin).toBeGreaterThanOrEqual(16);
        expect(l.values.painted).toBe('3');
        const drawn = l.values.drawn as Record<string, string[]>;
        // Every graph is named on both per-graph charts, each name whole.
        for (const id of ['sizes', 'rules']) expect(DEV_GRAPHS.map(([g]) => g).filter((g) => !drawn[id].includes(g))).toEqual([]);
        expect(l.values.topLabelled).toBe(100_000);
        expect(l.values.topLabelled as number).toBeGreaterThanOrEqual(largest);
        // The realised fan-out 0 is named and explained.
        expect(l.values.zeroLabel).toEqual(['0', '(no match)']);
        expect(drawn.fanout).toContain('(no match)');
        expect(l.values.note).toContain("Realised fan-out 0 (no match): no solution of the query's pattern uses a triple of any shard");
      }
    },
  );
});

describe('stats / queries that hit the time limit are named on stderr with how to raise it', () => {
  it(
    'demo with --timeout 1: each timed-out query named with what timed out, the --timeout hint; the report on stdout is the JSON of those statuses',
    { tags: ['slow'], timeout: 120_000 },
    async () => {
      const dir = tmpDir('fkgqa-stats-limit-');
      // A copy of the shared demo build (default options, tests/global-setup.ts), without its gold answers.
      const shards = await demoBuild(dir);
      const r = await fkgqaInProcess(['stats', '--shards', shards, '--state', path.join(dir, 'state'), '--timeout', '1', '--format', 'json', '-q']);
      expect(r.code).toBe(0);
      const s = JSON.parse(r.stdout) as BuildStats;
      const what = (q: BuildStats['queries'][number]) => [q.answerStatus === 'timeout' ? 'gold answer' : '', q.realisedStatus === 'timeout' ? 'realised fan-out' : ''].filter(Boolean).join(', ');
      const hit = s.queries.filter((q) => what(q));
      // At 1 ms the demo's queries do not finish (library/q1, a COUNT over the authors, among them).
      expect(hit.map((q) => q.query)).toContain('library/q1');
      expect(r.stderr).toBe(
        `fkgqa stats: ${hit.length} queries hit the time limit of 1 ms per query; what timed out is reported as timed out, not computed:\n` +
          hit.map((q) => `  ${q.query} (${what(q)})\n`).join('') +
          'Raise the limit with --timeout <ms> (e.g. --timeout 2) and run fkgqa stats again (answers stored under another limit are recomputed).\n',
      );
      // No query timed out, nothing said: the whole demo's stats in a child, in stats.slow.test.ts.
    },
  );
});

describe('stats / progress', () => {
  it('reports done/total, elapsed time and the items running long', () => {
    let now = 0;
    const lines: string[] = [];
    const t = new ProgressTicker((l) => lines.push(l), 'fkgqa stats', 4, { everyMs: 0, longMs: 5_000, now: () => now });
    t.start('world_1/q32');
    t.start('world_1/q1');
    t.done('world_1/q1');
    now = 3_000;
    t.tick();
    now = 41_000;
    t.start('world_1/q33');
    t.tick();
    t.stop();
    expect(lines).toEqual(['fkgqa stats: 1/4 done, 3 s', 'fkgqa stats: 1/4 done, 41 s; running long: world_1/q32 (41 s)']);
  });
});

describe("stats / stored gold answers do not depend on the engine's row order", () => {
  // Two stores giving the same rows in opposite orders, as two fresh oxigraph workers did for a
  // DISTINCT over a UNION without ORDER BY (dog_kennels/q3 of the dev set).
  const lit = (value: string) => ({ type: 'literal', value });
  const rows = [{ n: lit('Mia') }, { n: lit('Abe'), x: lit('1') }, { n: lit('Zoe') }];
  const triples = ['<http://e/b> <http://e/p> "2" .', '<http://e/a> <http://e/p> "1" .'];
  const storeGiving = (order: 'as-is' | 'reversed') =>
    ({
      query: async (q: { query: string }) => {
        const pick = <T>(xs: T[]) => (order === 'as-is' ? [...xs] : [...xs].reverse());
        const body = q.query.startsWith('CONSTRUCT') ? pick(triples).join('\n') + '\n' : JSON.stringify({ head: { vars: ['n', 'x'] }, results: { bindings: pick(rows) } });
        return { status: 'ok', body, ms: 1 };
      },
    }) as unknown as StoreWorker;
  const queries = [
    { id: 'g/q1', normalized: 'SELECT DISTINCT ?n ?x WHERE { { ?s <http://e/a> ?n } UNION { ?s <http://e/b> ?n } }', queryType: 'SELECT', ordered: false },
    { id: 'g/q2', normalized: 'SELECT ?n ?x WHERE { ?s <http://e/a> ?n } ORDER BY ?x', queryType: 'SELECT', ordered: true },
    { id: 'g/q3', normalized: 'CONSTRUCT WHERE { ?s <http://e/p> ?o }', queryType: 'CONSTRUCT', ordered: false },
  ];

  it("stores the rows of a query without ORDER BY sorted, and an ORDER BY query's rows in the engine's order", async () => {
    const a = await executeGoldQueries(storeGiving('as-is'), queries, 1000);
    const b = await executeGoldQueries(storeGiving('reversed'), queries, 1000);
    const names = (x: typeof a, i: number) => (x[i].results as SparqlResults).results!.bindings.map((r) => r.n.value);
    // Unordered: one order whatever the engine gave, the canonical JSON of each row in code-unit order.
    expect(names(a, 0)).toEqual(['Abe', 'Mia', 'Zoe']);
    expect(JSON.stringify(a[0])).toBe(JSON.stringify(b[0]));
    expect(a[2].results).toBe('<http://e/a> <http://e/p> "1" .\n<http://e/b> <http://e/p> "2" .\n');
    expect(JSON.stringify(a[2])).toBe(JSON.stringify(b[2]));
    // Ordered: the engine's order is the answer's.
    expect(names(a, 1)).toEqual(['Mia', 'Abe', 'Zoe']);
    expect(names(b, 1)).toEqual(['Zoe', 'Abe', 'Mia']);
    expect(a.map((x) => x.rows)).toEqual([3, 3, 2]);
  });
});

describe('stats / provenance queries', () => {
  const prov = (text: string) => {
    const p = parseQuery(text, NS);
    if (!p.ok) throw new Error(p.error);
    return provenanceQueries(p.query.ast);
  };

  it('wraps each triple pattern in GRAPH and leaves MINUS and FILTER EXISTS alone', () => {
    const r = prov('select ?x where { ?x a :a . ?x :a\\#p ?v . MINUS { ?x :a\\#m ?m } FILTER NOT EXISTS { ?x :a\\#n ?n } } order by ?v limit 1');
    expect(r.graphVariables).toBe(2);
    expect(r.main).toContain(`GRAPH ?fkgqa_g1 { ?x <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <${NS}a>. }`);
    expect(r.main).toContain(`MINUS { ?x <${NS}a#m> ?m. }`);
    expect(r.main).not.toMatch(/LIMIT|ORDER/);
    expect(r.aggregates).toEqual([]);
  });

  it('answers an aggregating subquery by a separate query over its own pattern', () => {
    const r = prov('select ?n where { ?s a :singer . ?s :singer\\#age ?a . FILTER(?a > ?avg) { select (avg(?x) as ?avg) where { ?t a :singer . ?t :singer\\#age ?x } } }');
    expect(r.graphVariables).toBe(2);
    expect(r.aggregates.length).toBe(1);
    expect(r.aggregates[0]).toContain('GRAPH ?fkgqa_g3');
    expect(r.aggregates[0]).toContain('GRAPH ?fkgqa_g4');
  });
});

describe('stats / progress says what it counts', () => {
  it("fkgqa stats counts steps, two per query ('48/90' is steps, not queries)", () => {
    const lines: string[] = [];
    let now = 0;
    const t = new ProgressTicker((l) => lines.push(l), 'fkgqa stats', 90, { everyMs: 0, now: () => now, unit: STATS_PROGRESS_UNIT });
    for (let i = 0; i < 48; i++) t.done(`q${i}`);
    now = 95_000;
    t.tick();
    expect(lines).toEqual(['fkgqa stats: 48/90 steps (a gold answer and a realised fan-out per query) done, 95 s']);
  });
});
