import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { comparePaper, flattenFigures } from './stats-format.js';
import type { BuildStats } from './stats.js';

/** Escapes text for HTML content and attribute values. */
export const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** Chart.js 4 (UMD build) as script text, inlined so that a page is self-contained (`</script` escaped). */
export function chartJs(): string {
  const require = createRequire(import.meta.url);
  // chart.js's exports map hides dist/; its main entry lives in dist/ beside the UMD build.
  const file = path.join(path.dirname(require.resolve('chart.js')), 'chart.umd.min.js');
  return fs.readFileSync(file, 'utf8').replace(/<\/script/gi, '<\\/script');
}

/**
 * Page script run after the charts are drawn: `<body data-painted-charts=N>` counts the canvases
 * with painted pixels and `window.fkgqaChartsReady` is set (a rendering check for tests in
 * headless browsers).
 */
export const PAINTED_CHECK = `const painted = [...document.querySelectorAll('canvas')].filter((c) => {
  const px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
  for (let i = 3; i < px.length; i += 4) if (px[i] !== 0) return true;
  return false;
}).length;
document.body.dataset.paintedCharts = String(painted);
window.fkgqaChartsReady = true;`;

/**
 * A self-contained HTML report of a build: figures, the paper comparison, and three charts drawn
 * with Chart.js (fan-out histogram, shard sizes per graph, rule composition per graph). The page
 * loads nothing from the network; once the charts are drawn, `<body data-painted-charts=N>` counts
 * the canvases with painted pixels (a rendering check for headless browsers).
 */
export function formatStatsHtml(s: BuildStats): string {
  const f = s.figures;
  const maxFan = Math.max(1, ...s.queries.map((q) => Math.max(q.impliedFanOut ?? 0, q.realisedFanOut ?? 0)));
  const hist = (pick: (q: BuildStats['queries'][number]) => number | null) =>
    Array.from({ length: maxFan + 1 }, (_, k) => s.queries.filter((q) => pick(q) === k).reduce((n, q) => n + q.questions, 0));
  const maxShards = Math.max(...s.graphs.map((g) => g.shards));
  const data = {
    fanOut: { labels: Array.from({ length: maxFan + 1 }, (_, k) => String(k)), implied: hist((q) => q.impliedFanOut), realised: hist((q) => q.realisedFanOut) },
    graphs: s.graphs.map((g) => g.graph),
    shardSizes: Array.from({ length: maxShards }, (_, i) => s.graphs.map((g) => g.shardSizes[i] ?? 0)),
    rules: { predicate: s.graphs.map((g) => g.ruleKinds.predicate), class: s.graphs.map((g) => g.ruleKinds.class), horizontal: s.graphs.map((g) => g.ruleKinds.horizontal) },
  };
  const figureRows = flattenFigures(f).map(([k, v]) => `<tr><td>${esc(k)}</td><td>${v}</td></tr>`).join('\n');
  const paperRows = comparePaper(f)
    .map((r) => `<tr><td>${esc(r.figure)}</td><td>${r.paper}</td><td>${r.build}</td><td>${r.difference > 0 ? '+' : ''}${r.difference}</td></tr>`)
    .join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>fkgqa stats</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:2em auto;max-width:1100px;color:#222}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}td:first-child,th:first-child{text-align:left}
.chart{position:relative;height:360px;margin:1em 0 2em}
</style></head><body>
<h1>fkgqa stats</h1>
<p>${f.graphs} graphs, ${f.questions} questions, ${f.distinctQueries} distinct queries (${f.graphQueryPairs} graph/query pairs), ${f.shards.total} shards.
Gold answers: ${f.goldAnswers.executed} of ${f.goldAnswers.graphQueryPairs} executed, ${f.goldAnswers.failed} failed, ${f.goldAnswers.timedOut} timed out.</p>
<h2>Fan-out (questions per number of shards)</h2><div class="chart"><canvas id="fanout"></canvas></div>
<h2>Shard sizes per graph (triples)</h2><div class="chart"><canvas id="sizes"></canvas></div>
<h2>Rule composition per graph</h2><div class="chart"><canvas id="rules"></canvas></div>
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
const data = ${JSON.stringify(data)};
const palette = ['#4e79a7','#f28e2b','#e15759','#76b7b2','#59a14f','#edc948','#b07aa1','#ff9da7','#9c755f','#bab0ac'];
const common = { responsive: true, maintainAspectRatio: false, animation: false };
new Chart(document.getElementById('fanout'), { type: 'bar', options: common, data: { labels: data.fanOut.labels, datasets: [
  { label: 'implied f(Q)', data: data.fanOut.implied, backgroundColor: palette[0] },
  { label: 'realised', data: data.fanOut.realised, backgroundColor: palette[1] } ] } });
new Chart(document.getElementById('sizes'), { type: 'bar', data: { labels: data.graphs, datasets: data.shardSizes.map((d, i) => ({ label: 'shard ' + (i + 1), data: d, backgroundColor: palette[i % palette.length] })) },
  options: { ...common, plugins: { legend: { display: false } }, scales: { y: { type: 'logarithmic' } } } });
new Chart(document.getElementById('rules'), { type: 'bar', data: { labels: data.graphs, datasets: [
  { label: 'vertical (predicate)', data: data.rules.predicate, backgroundColor: palette[0] },
  { label: 'semantic (class)', data: data.rules.class, backgroundColor: palette[1] },
  { label: 'horizontal', data: data.rules.horizontal, backgroundColor: palette[2] } ] },
  options: { ...common, scales: { x: { stacked: true }, y: { stacked: true } } } });
${PAINTED_CHECK}
</script>
</body></html>
`;
}
