import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { comparePaper } from './stats-format.js';
import type { BuildFigures, BuildStats } from './stats.js';
import { counted, esc } from '../common/strings.js';

/** Chart.js 4 (UMD build) as script text, inlined so that a page is self-contained (`</script` escaped). */
function chartJs(): string {
  const require = createRequire(import.meta.url);
  // chart.js's exports map hides dist/; its main entry lives in dist/ beside the UMD build.
  const file = path.join(path.dirname(require.resolve('chart.js')), 'chart.umd.min.js');
  return fs.readFileSync(file, 'utf8').replace(/<\/script/gi, '<\\/script');
}

/** Readable words for the keys of BuildFigures (the JSON keys are camelCase). */
const WORDS: Record<string, string> = {
  graphs: 'graphs',
  questions: 'questions',
  distinctQueries: 'distinct queries',
  graphQueryPairs: 'graph/query pairs',
  shards: 'shards',
  total: 'in total',
  perGraph: 'per graph',
  rulesPerGraph: 'rules per graph',
  ruleComposition: 'rules by kind',
  predicate: 'vertical (predicate)',
  class: 'semantic (class)',
  horizontal: 'horizontal',
  shardBalanceCv: 'shard balance (mean coefficient of variation of shard sizes per graph)',
  applicability: 'sharding applies',
  overQuestions: 'over questions',
  overDistinctQueries: 'over distinct queries',
  overGraphQueryPairs: 'over graph/query pairs',
  impliedFanOut: 'implied fan-out f(Q)',
  tpwss: 'triple-pattern-wise sources (TPWSS, Σ over triple patterns of the shards matching each)',
  realisedFanOut: 'realised fan-out',
  computed: 'computed for (graph/query pairs)',
  noMatch: 'no match',
  oneShard: 'exactly one shard',
  goldAnswers: 'gold answers',
  executed: 'executed',
  failed: 'failed',
  timedOut: 'timed out',
  empty: 'empty',
  tiesChoice: 'depend on which tied solutions a LIMIT keeps',
  tiesOrder: 'depend on the order of tied rows only',
  tiesUnknown: 'dependence on ties undecided',
};

/** A figure's path as words: `applicability.overQuestions.class` → "sharding applies, over questions, semantic (class)". */
function figureLabel(path: string[]): string {
  return path.map((k) => WORDS[k] ?? k).join(', ');
}

/**
 * The build figures as readable rows: a share as "30.84 % (33 of 107)", a distribution as
 * "mean 4.6, median 4, min 3, max 7", a count as itself.
 */
function readableFigures(f: BuildFigures): [string, string][] {
  const out: [string, string][] = [];
  const walk = (path: string[], v: unknown) => {
    if (typeof v === 'number') out.push([figureLabel(path), String(v)]);
    else if (v && typeof v === 'object' && !Array.isArray(v)) {
      const o = v as Record<string, number>;
      if ('percent' in o && 'count' in o && 'of' in o) out.push([figureLabel(path), `${o.percent} % (${o.count} of ${o.of})`]);
      else if ('mean' in o && 'median' in o) out.push([figureLabel(path), `mean ${o.mean}, median ${o.median}, min ${o.min}, max ${o.max}`]);
      else for (const [k, x] of Object.entries(o)) walk([...path, k], x);
    }
  };
  walk([], { ...f, gapExamples: undefined });
  return out;
}

/**
 * Bounds of a log axis that hold every value between two labelled powers of ten: from the power of
 * ten at or below the smallest positive value (at least 1) to the one above the largest.
 * @param values triple counts (zeros and negatives are not drawn on a log axis and are ignored)
 */
function logBounds(values: number[]): { min: number; max: number } {
  const positive = values.filter((v) => v > 0);
  if (positive.length === 0) return { min: 1, max: 10 };
  const min = 10 ** Math.floor(Math.log10(Math.min(...positive)));
  const max = 10 ** (Math.floor(Math.log10(Math.max(...positive))) + 1);
  return { min: Math.max(1, min), max };
}

const mean = (xs: number[]) => (xs.length ? Math.round((100 * xs.reduce((a, b) => a + b, 0)) / xs.length) / 100 : null);

/**
 * Page script run after the charts are drawn: `<body data-painted-charts=N>` counts the canvases
 * with painted pixels and `window.fkgqaChartsReady` is set (a rendering check for tests in
 * headless browsers).
 */
const PAINTED_CHECK = `const painted = [...document.querySelectorAll('canvas')].filter((c) => {
  const px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
  for (let i = 3; i < px.length; i += 4) if (px[i] !== 0) return true;
  return false;
}).length;
document.body.dataset.paintedCharts = String(painted);
window.fkgqaChartsReady = true;`;

/** The data the stats page's charts draw (`STATS_CHARTS`): fan-out histograms, shard sizes and rule kinds per graph. */
function statsChartData(s: BuildStats) {
  const maxFan = Math.max(1, ...s.queries.map((q) => Math.max(q.impliedFanOut ?? 0, q.realisedFanOut ?? 0)));
  const hist = (pick: (q: BuildStats['queries'][number]) => number | null) => Array.from({ length: maxFan + 1 }, (_, k) => s.queries.filter((q) => pick(q) === k).reduce((n, q) => n + q.questions, 0));
  const maxShards = Math.max(...s.graphs.map((g) => g.shards));
  return {
    fanOut: { labels: Array.from({ length: maxFan + 1 }, (_, k) => (k === 0 ? ['0', '(no match)'] : String(k))), implied: hist((q) => q.impliedFanOut), realised: hist((q) => q.realisedFanOut) },
    graphs: s.graphs.map((g) => g.graph),
    shardSizes: Array.from({ length: maxShards }, (_, i) => s.graphs.map((g) => g.shardSizes[i] ?? 0)),
    rules: { predicate: s.graphs.map((g) => g.ruleKinds.predicate), class: s.graphs.map((g) => g.ruleKinds.class), horizontal: s.graphs.map((g) => g.ruleKinds.horizontal) },
    // The log axis of shard sizes from a power of ten below the smallest shard to one above the largest, so every dot lies between two labelled ticks.
    sizesAxis: logBounds(s.graphs.flatMap((g) => g.shardSizes)),
  };
}

/** The stats page's table rows, one per graph: questions, queries, shards and their sizes, rules, fan-out means, time-outs. */
function statsGraphRows(s: BuildStats): string {
  return s.graphs
    .map((g) => {
      const qs = s.queries.filter((q) => q.graph === g.graph);
      const implied = mean(qs.filter((q) => q.impliedFanOut !== null).map((q) => q.impliedFanOut!));
      const realised = mean(qs.filter((q) => q.realisedFanOut !== null).map((q) => q.realisedFanOut!));
      const timedOut = qs.filter((q) => q.answerStatus === 'timeout' || q.realisedStatus === 'timeout').length;
      const cells = [
        esc(g.graph),
        qs.reduce((n, q) => n + q.questions, 0),
        g.queries,
        g.shards,
        g.shardSizes.join(', '),
        g.shardBalanceCv,
        `${g.rules} (${g.ruleKinds.predicate} / ${g.ruleKinds.class} / ${g.ruleKinds.horizontal})`,
        qs.filter((q) => q.status === 'uncoverable').length,
        implied ?? '–',
        realised ?? '–',
        timedOut,
      ];
      return `<tr>${cells.map((c, i) => (i === 4 ? `<td class="sizes">${c}</td>` : `<td>${c}</td>`)).join('')}</tr>`;
    })
    .join('\n');
}

/**
 * The script that draws the stats page's three charts with Chart.js from `data` (`statsChartData`), followed on
 * the page by `PAINTED_CHECK`.
 */
const STATS_CHARTS = `const palette = ['#4e79a7','#f28e2b','#e15759','#76b7b2','#59a14f','#edc948','#b07aa1','#ff9da7','#9c755f','#bab0ac'];
const common = { responsive: true, maintainAspectRatio: false, animation: false, layout: { padding: { top: 6, right: 12 } } };
const axis = (text) => ({ title: { display: true, text, font: { weight: 'bold' } } });
const legend = (title) => ({ legend: { display: true, position: 'top', title: { display: true, text: title } } });
new Chart(document.getElementById('fanout'), { type: 'bar', data: { labels: data.fanOut.labels, datasets: [
  { label: 'implied f(Q)', data: data.fanOut.implied, backgroundColor: palette[0] },
  { label: 'realised', data: data.fanOut.realised, backgroundColor: palette[1] } ] },
  options: { ...common, plugins: legend('fan-out'), scales: { x: { ...axis('shards (fan-out)'), ticks: { autoSkip: false, maxRotation: 0 } }, y: { ...axis('questions'), beginAtZero: true, grace: '5%' } } } });
// Each graph a row; shard<N>'s dot a little below the row's line for higher N, so shards of equal size stay apart.
const shardsPerGraph = data.shardSizes.length;
const rowOf = (j, i) => j + (i - (shardsPerGraph - 1) / 2) * Math.min(0.09, 0.6 / Math.max(1, shardsPerGraph - 1));
new Chart(document.getElementById('sizes'), { type: 'scatter', data: { datasets: data.shardSizes.map((d, i) => ({ label: 'shard' + (i + 1),
    data: data.graphs.map((g, j) => (d[j] > 0 ? { x: d[j], y: rowOf(j, i), graph: g } : null)).filter(Boolean), backgroundColor: palette[i % palette.length], borderColor: palette[i % palette.length], pointRadius: 4, pointHoverRadius: 6 })) },
  options: { ...common, plugins: { ...legend('shard (shard<N> of each graph)'), tooltip: { callbacks: { label: (c) => c.raw.graph + ' ' + c.dataset.label + ': ' + c.raw.x.toLocaleString('en') + ' triples' } } }, scales: {
    x: { ...axis('triples (log scale)'), type: 'logarithmic', min: data.sizesAxis.min, max: data.sizesAxis.max, ticks: { maxRotation: 0, callback: (v) => (/^10*$/.test(String(v)) ? Number(v).toLocaleString('en') : '') } },
    y: { ...axis('graph'), type: 'linear', reverse: true, min: -0.5, max: data.graphs.length - 0.5, afterBuildTicks: (a) => { a.ticks = data.graphs.map((_, j) => ({ value: j })); }, ticks: { autoSkip: false, callback: (v) => data.graphs[v] ?? '' } } } } });
new Chart(document.getElementById('rules'), { type: 'bar', data: { labels: data.graphs, datasets: [
  { label: 'vertical (predicate)', data: data.rules.predicate, backgroundColor: palette[0] },
  { label: 'semantic (class)', data: data.rules.class, backgroundColor: palette[1] },
  { label: 'horizontal', data: data.rules.horizontal, backgroundColor: palette[2] } ] },
  options: { ...common, indexAxis: 'y', plugins: legend('kind of sharding rule'), scales: { y: { ...axis('graph'), stacked: true, ticks: { autoSkip: false } }, x: { ...axis('chosen sharding rules'), stacked: true, beginAtZero: true, grace: '5%', ticks: { precision: 0, maxRotation: 0 } } } } });`;

/**
 * A self-contained HTML report of a build: the figures in words, the paper comparison, a table
 * per graph, the queries that timed out and those no sharding rule can cover, and three charts
 * drawn with Chart.js (fan-out histogram, shard sizes per graph, rule composition per graph), each
 * with a legend and axis titles. The page loads nothing from the network; once the charts are
 * drawn, `<body data-painted-charts=N>` counts the canvases with painted pixels (a rendering check
 * for headless browsers).
 */
export function formatStatsHtml(s: BuildStats): string {
  const f = s.figures;
  // Graph names on the vertical axis, one row each (horizontal text, never cut or overlapping): the height grows with the graphs.
  const byGraphHeight = 120 + 26 * s.graphs.length;
  const figureRows = readableFigures(f)
    .map(([k, v]) => `<tr><td>${esc(k)}</td><td>${esc(v)}</td></tr>`)
    .join('\n');
  const paperRows = comparePaper(f)
    .map((r) => `<tr><td>${esc(r.figure)}</td><td>${r.paper}</td><td>${r.build}</td><td>${r.difference > 0 ? '+' : ''}${r.difference}</td></tr>`)
    .join('\n');
  const queryList = (qs: BuildStats['queries'], why: (q: BuildStats['queries'][number]) => string) =>
    qs.length
      ? `<table class="list"><tr><th>query</th><th>questions</th><th>first question</th><th>why</th></tr>\n${qs
          .map((q) => `<tr><td>${esc(q.query)}</td><td>${q.questions}</td><td>${esc(q.question ?? '')}</td><td>${esc(why(q))}</td></tr>`)
          .join('\n')}\n</table>`
      : '<p>None.</p>';
  const timedOut = s.queries.filter((q) => q.answerStatus === 'timeout' || q.realisedStatus === 'timeout');
  const uncoverable = s.queries.filter((q) => q.status === 'uncoverable' || q.status === 'unparsable');
  const timeoutWhy = (q: BuildStats['queries'][number]) =>
    [q.answerStatus === 'timeout' ? 'gold answer' : '', q.realisedStatus === 'timeout' ? 'realised fan-out' : ''].filter(Boolean).join(' and ') + ' timed out';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>fkgqa stats</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:2em auto;padding:0 1.5em;max-width:1100px;color:#222}
.wide{overflow-x:auto}
table{border-collapse:collapse;margin:1em 0;font-size:13px}td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}td:first-child,th:first-child{text-align:left}
table.list{width:100%;table-layout:fixed}table.list td,table.list th{text-align:left;overflow-wrap:anywhere}
table.list th:nth-child(1){width:14em}table.list th:nth-child(2){width:6em}
td.sizes{text-align:left;min-width:9em}
.chart{position:relative;height:380px;margin:1em 0 2em}
.note{color:#555}
</style></head><body>
<h1>fkgqa stats</h1>
<p>${counted(f.graphs, 'graph')}, ${counted(f.questions, 'question')}, ${counted(f.distinctQueries, 'distinct query', 'distinct queries')} (${counted(f.graphQueryPairs, 'graph/query pair')}), ${counted(f.shards.total, 'shard')}.
Gold answers: ${f.goldAnswers.executed} of ${f.goldAnswers.graphQueryPairs} executed, ${f.goldAnswers.failed} failed, ${f.goldAnswers.timedOut} timed out.</p>
<h2>Fan-out</h2>
<p class="note">Implied fan-out f(Q): shards holding a triple that matches some triple pattern of the query. Realised: shards whose triples a solution of the query actually uses.
Realised fan-out 0 (no match): no solution of the query's pattern uses a triple of any shard, so its answer is empty or an aggregate over no solutions (e.g. a count of 0): ${f.realisedFanOut.noMatch.overQuestions.count} of the ${counted(f.realisedFanOut.noMatch.overQuestions.of, 'question')} with a realised fan-out.</p>
<div class="chart"><canvas id="fanout"></canvas></div>
<h2>Shard sizes per graph</h2>
<p class="note">One dot per shard (shard&lt;N&gt; of each graph), on a log scale.</p>
<div class="chart" style="height:${byGraphHeight}px"><canvas id="sizes"></canvas></div>
<h2>Sharding rules per graph</h2><div class="chart" style="height:${byGraphHeight}px"><canvas id="rules"></canvas></div>
<h2>Per graph</h2>
<div class="wide"><table><tr><th>graph</th><th>questions</th><th>distinct queries</th><th>shards</th><th>triples per shard</th><th>balance (CV)</th><th>rules (vertical / semantic / horizontal)</th><th>uncoverable queries</th><th>implied fan-out, mean</th><th>realised fan-out, mean</th><th>timed out</th></tr>
${statsGraphRows(s)}
</table></div>
<h2>Queries that timed out (${timedOut.length})</h2>
${queryList(timedOut, timeoutWhy)}
<h2>Queries no sharding rule can cover, or that do not parse (${uncoverable.length})</h2>
${queryList(uncoverable, (q) => `${q.status}${q.reason ? `: ${q.reason}` : ''}`)}
<h2>This build and the paper</h2>
<table><tr><th>figure</th><th>paper</th><th>this build</th><th>difference</th></tr>
${paperRows}
</table>
<h2>All figures</h2>
<table><tr><th>figure</th><th>value</th></tr>
${figureRows}
</table>
<script>${chartJs()}</script>
<script>
const data = ${JSON.stringify(statsChartData(s))};
${STATS_CHARTS}
${PAINTED_CHECK}
</script>
</body></html>
`;
}
