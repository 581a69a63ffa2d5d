/**
 * The score report as text, CSV and a self-contained HTML page with charts (Chart.js inlined, as
 * `fkgqa stats --html` does); every figure beside the paper's (src/score/paper.ts).
 */
import { stringify } from 'csv-stringify/sync';
import { chartJs, esc, PAINTED_CHECK } from '../report/html.js';
import { PAPER_MODELS, PAPER_QWEN_FAILURES, paperFigure, type FigureName } from './paper.js';
import type { GroupScore, ScoreReport } from './score.js';
import { VALIDITY_CLASSES } from './validity.js';

/** One row of the figure table: a figure of a group with the paper's values for that setup. */
export interface FigureRow {
  group: string;
  figure: FigureName | string;
  value: number;
  /** `count/of` where the figure is a share. */
  of?: string;
  paper: Record<string, number | null>;
  note?: string;
}

/** The comparable figures of every group, each with the paper's value per model for its setup. */
export function figureRows(r: ScoreReport): FigureRow[] {
  const rows: FigureRow[] = [];
  for (const g of r.groups) {
    const add = (figure: FigureName | string, value: number, of?: string) => {
      const paper: Record<string, number | null> = {};
      const notes: string[] = [];
      for (const m of PAPER_MODELS) {
        const p = paperFigure(figure as FigureName, m, g.setup);
        paper[m] = p?.value ?? null;
        if (p?.note) notes.push(`${m}: ${p.note}`);
      }
      rows.push({ group: g.group, figure, value, of, paper, ...(notes.length ? { note: notes.join('; ') } : {}) });
    };
    add('accuracy %', g.accuracy.percent, `${g.accuracy.count}/${g.accuracy.of}`);
    add('accuracy of executable gold %', g.accuracyExecutableGold.percent, `${g.accuracyExecutableGold.count}/${g.accuracyExecutableGold.of}`);
    add('F1 (GRASP)', g.graspF1);
    add('F1 (Spinach, row-major)', g.spinachF1);
    add('syntactic validity %', g.validity.valid.percent, `${g.validity.valid.count}/${g.validity.valid.of}`);
    add('consultation of submitted runs %', g.consultation.submitted.percent, `${g.consultation.submitted.count}/${g.consultation.submitted.of}`);
    add('consultation of correct runs %', g.consultation.correct.percent, `${g.consultation.correct.count}/${g.consultation.correct.of}`);
    add('trivial federation of submitted runs %', g.trivial.submitted.percent, `${g.trivial.submitted.count}/${g.trivial.submitted.of}`);
    add('trivial federation of correct runs %', g.trivial.correct.percent, `${g.trivial.correct.count}/${g.trivial.correct.of}`);
    add('all shards consulted %', g.allShards.percent, `${g.allShards.count}/${g.allShards.of}`);
    add('tokens per run (median)', g.tokens.median);
    add('runtime per run (median, s)', g.seconds.median);
    add('runtime per run (max, s)', g.seconds.max);
    add('LLM calls per run', g.llmCallsPerRun);
    add('SPARQL calls per run', g.sparqlCallsPerRun);
    add('VoID calls per run', g.voidCallsPerRun);
  }
  return rows;
}

const pct = (n: number) => (Number.isFinite(n) ? String(n) : '-');

/** The report as text: one block per group (figures beside the paper's), then the wrong runs' reasons in short. */
export function formatScoreText(r: ScoreReport): string {
  const lines: string[] = [`fkgqa score: ${r.runs} runs from ${r.files.join(', ')}; build ${r.shards}`];
  const rows = figureRows(r);
  for (const g of r.groups) {
    lines.push('', `== ${g.group} (${g.runs} runs; ended: ${Object.entries(g.endReasons).map(([k, v]) => `${k} ${v}`).join(', ')})`);
    lines.push(`${'figure'.padEnd(40)} ${'value'.padStart(10)} ${'of'.padStart(11)} ${PAPER_MODELS.map((m) => `paper ${m}`.padStart(16)).join(' ')}`);
    for (const row of rows.filter((x) => x.group === g.group)) {
      lines.push(`${row.figure.padEnd(40)} ${pct(row.value).padStart(10)} ${(row.of ?? '').padStart(11)} ${PAPER_MODELS.map((m) => (row.paper[m] === null ? '-' : String(row.paper[m])).padStart(16)).join(' ')}${row.note ? `   (${row.note})` : ''}`);
    }
    lines.push(`validity classes of ${g.validity.queries} queries: ${VALIDITY_CLASSES.map((c) => `${c} ${g.validity.classes[c]}`).join(', ')}`);
    const failed = g.validity.queries - g.validity.classes.ok;
    if (failed > 0) lines.push(`  shares of the ${failed} failed: ${Object.entries(g.validity.failureShares).map(([c, v]) => `${c} ${v} %`).join(', ')} (paper, Qwen3-8B: ${Object.entries(PAPER_QWEN_FAILURES).map(([c, v]) => `${c} ${v} %`).join(', ')})`);
    lines.push(`tokens: total ${g.tokens.total}, median ${pct(g.tokens.median)}, min ${pct(g.tokens.min)}, max ${pct(g.tokens.max)}; accepted through ties under ORDER BY: ${g.byTies}`);
    const wrong = r.perRun.filter((s) => s.group === g.group && !s.correct);
    if (wrong.length > 0) {
      lines.push(`wrong (${wrong.length}):`);
      for (const s of wrong.slice(0, 50)) lines.push(`  ${s.id} ${s.queryId}: ${s.reason}`);
      if (wrong.length > 50) lines.push(`  … ${wrong.length - 50} more (see --format json or csv)`);
    }
  }
  return lines.join('\n') + '\n';
}

/** The report as CSV: one row per group and figure, with the paper's values. */
export function formatScoreCsv(r: ScoreReport): string {
  return stringify([
    ['group', 'figure', 'value', 'of', ...PAPER_MODELS.map((m) => `paper ${m}`), 'paper note'],
    ...figureRows(r).map((x) => [x.group, x.figure, x.value, x.of ?? '', ...PAPER_MODELS.map((m) => x.paper[m] ?? ''), x.note ?? '']),
  ]);
}

/** One row per run as CSV (`--per-run`). */
export function formatPerRunCsv(r: ScoreReport): string {
  return stringify([
    ['id', 'group', 'kg', 'query', 'end', 'gold', 'correct', 'by ties', 'f1 grasp', 'f1 spinach', 'needed shards', 'consulted shards', 'consulted all needed', 'trivial', 'queries', 'valid', 'tokens', 'llm calls', 'sparql calls', 'void calls', 'seconds', 'reason'],
    ...r.perRun.map((s) => [
      s.id, s.group, s.kg, s.queryId, s.endReason, s.gold, s.correct, s.byTies, s.graspF1, s.spinachF1,
      s.neededShards?.join(' ') ?? '', s.consultedShards?.join(' ') ?? '', s.consultedAllNeeded ?? '', s.trivial ?? '',
      Object.values(s.validity).reduce((a, b) => a + b, 0), s.validity.ok, s.tokens, s.llmCalls, s.sparqlCalls, s.voidCalls, s.seconds, s.reason ?? '',
    ]),
  ]);
}

/**
 * A self-contained HTML report: the figure table beside the paper, and charts of accuracy, syntactic
 * validity, consultation and trivial-federation rates per group (each with the paper's bars for
 * the same setup), and validity classes. `<body data-painted-charts=N>` counts painted canvases.
 */
export function formatScoreHtml(r: ScoreReport): string {
  const groups: GroupScore[] = r.groups;
  const pick = (figure: FigureName) => PAPER_MODELS.map((m) => ({ label: `paper ${m}`, data: groups.map((g) => paperFigure(figure, m, g.setup)?.value ?? null) }));
  const data = {
    labels: groups.map((g) => g.group),
    accuracy: [{ label: 'this run set', data: groups.map((g) => g.accuracy.percent) }, ...pick('accuracy %')],
    validity: [{ label: 'this run set', data: groups.map((g) => g.validity.valid.percent) }, ...pick('syntactic validity %')],
    consultation: [{ label: 'this run set (correct runs)', data: groups.map((g) => g.consultation.correct.percent) }, ...pick('consultation of correct runs %')],
    trivial: [{ label: 'this run set (correct runs)', data: groups.map((g) => g.trivial.correct.percent) }, ...pick('trivial federation of correct runs %')],
    classes: VALIDITY_CLASSES.map((c) => ({ label: c, data: groups.map((g) => g.validity.classes[c]) })),
  };
  const rows = figureRows(r)
    .map((x) => `<tr><td>${esc(x.group)}</td><td>${esc(x.figure)}</td><td>${pct(x.value)}</td><td>${esc(x.of ?? '')}</td>${PAPER_MODELS.map((m) => `<td>${x.paper[m] ?? '-'}</td>`).join('')}<td>${esc(x.note ?? '')}</td></tr>`)
    .join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>fkgqa score</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:2em auto;max-width:1100px;color:#222}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}td:first-child,th:first-child,td:nth-child(2){text-align:left}
.chart{position:relative;height:320px;margin:1em 0 2em}
</style></head><body>
<h1>fkgqa score</h1>
<p>${r.runs} runs, ${groups.length} groups (setup | agent or model); build ${esc(r.shards)}. Definitions: docs/evaluation.md. Paper: FKGQA, section 6.</p>
<h2>Accuracy (%)</h2><div class="chart"><canvas id="accuracy"></canvas></div>
<h2>Syntactic validity (% of queries sent)</h2><div class="chart"><canvas id="validity"></canvas></div>
<h2>Endpoint consultation (% of correct runs that named every needed shard)</h2><div class="chart"><canvas id="consultation"></canvas></div>
<h2>Trivial federation (% of correct runs naming all shards when fewer suffice)</h2><div class="chart"><canvas id="trivial"></canvas></div>
<h2>Validity classes (queries)</h2><div class="chart"><canvas id="classes"></canvas></div>
<h2>Figures beside the paper</h2>
<table><tr><th>group</th><th>figure</th><th>value</th><th>of</th>${PAPER_MODELS.map((m) => `<th>paper ${m}</th>`).join('')}<th>paper note</th></tr>
${rows}
</table>
<script>${chartJs()}</script>
<script>
const data = ${JSON.stringify(data)};
const palette = ['#4e79a7','#f28e2b','#e15759','#76b7b2','#59a14f','#edc948','#b07aa1'];
const common = { responsive: true, maintainAspectRatio: false, animation: false };
const bars = (id, sets, extra) => new Chart(document.getElementById(id), { type: 'bar', options: { ...common, ...(extra || {}) },
  data: { labels: data.labels, datasets: sets.map((s, i) => ({ ...s, backgroundColor: palette[i % palette.length] })) } });
bars('accuracy', data.accuracy); bars('validity', data.validity); bars('consultation', data.consultation); bars('trivial', data.trivial);
bars('classes', data.classes, { scales: { x: { stacked: true }, y: { stacked: true } } });
${PAINTED_CHECK}
</script>
</body></html>
`;
}
