/**
 * The score report as text, CSV and a self-contained HTML page; every figure of a model's runs
 * beside the paper's (src/score/paper.ts). Scripted agents (oracle, trivial, single) are no model
 * of the paper and are compared with it only when asked (`paperWithScripted`).
 *
 * The HTML page is built so that it cannot mislead: every rate is a percentage
 * on one 0–100 scale (mean F1 too, ×100); a 0 % bar is drawn (a 2-pixel bar, outlined), distinct
 * from a missing value ("no runs", "not reported"); n is written under every bar; the runs that
 * were not correct are listed with their reasons, each linked into the run viewer (`fkgqa view`).
 */
import path from 'node:path';
import { stringify } from 'csv-stringify/sync';
import { PAPER_MODELS, PAPER_QWEN_FAILURES, paperFigure, type FigureName } from './paper.js';
import { conditionFields, END_REASONS, FAILED_END_REASONS } from '../eval/record.js';
import type { GroupScore, RunScore, ScoreReport } from './score.js';
import type { Share } from '../report/figures.js';
import type { Interval } from './intervals.js';
import { NOT_JUDGED, VALIDITY_CLASSES } from './validity.js';
import { counted, esc } from '../common/strings.js';

/** Options of the report formats. */
export interface ScoreFormatOptions {
  /** Also give the paper's figures beside scripted agents (oracle, trivial, single). Default: only beside models. */
  paperWithScripted?: boolean;
  /**
   * HTML: the run viewer page (`fkgqa view --out PAGE`), as the report should link to it (a path
   * relative to the report, or a URL); each listed run links to `PAGE#run=<encodeURIComponent(id)>`.
   */
  viewPage?: string;
}

/** One row of the figure table: a figure of a group with the paper's values for that setup. */
interface FigureRow {
  group: string;
  figure: FigureName | string;
  /** The figure, or null when it has no denominator (no runs to compute it over). */
  value: number | null;
  /** `count/of` where the figure is a share. */
  of?: string;
  /** The 95 % confidence interval `[low, high]` of the figure (accuracy figures and mean F1; GroupScore.ci95), null over no runs. */
  ci95?: Interval | null;
  paper: Record<string, number | null>;
  note?: string;
}

/** Whether the paper's figures are given beside a group. */
const comparable = (g: GroupScore, o: ScoreFormatOptions) => !g.scripted || o.paperWithScripted === true;

/** A share's percentage, or null over no runs. */
const rate = (s: Share) => (s.of === 0 ? null : s.percent);

/** The comparable figures of every group, each with the paper's value per model for its setup. */
export function figureRows(r: ScoreReport, o: ScoreFormatOptions = {}): FigureRow[] {
  const rows: FigureRow[] = [];
  for (const g of r.groups) {
    const add = (figure: FigureName | string, value: number | null, of?: string, ci95?: Interval | null) => {
      const paper: Record<string, number | null> = {};
      const notes: string[] = [];
      for (const m of PAPER_MODELS) {
        const p = comparable(g, o) ? paperFigure(figure as FigureName, m, g.setup) : undefined;
        paper[m] = p?.value ?? null;
        if (p?.note) notes.push(`${m}: ${p.note}`);
      }
      rows.push({ group: g.group, figure, value, of, ...(ci95 !== undefined ? { ci95 } : {}), paper, ...(notes.length ? { note: notes.join('; ') } : {}) });
    };
    const addShare = (figure: FigureName | string, s: Share, ci95?: Interval | null) => add(figure, rate(s), `${s.count}/${s.of}`, ci95);
    add('runs', g.runs);
    add('runs in accuracy (all but model and infrastructure errors)', g.scored);
    for (const e of END_REASONS) add(`ended: ${e}${FAILED_END_REASONS.includes(e) ? ' (not in accuracy)' : ''}`, g.endReasons[e]);
    addShare('accuracy %', g.accuracy, g.ci95.accuracy);
    addShare('accuracy of executable gold %', g.accuracyExecutableGold, g.ci95.accuracyExecutableGold);
    addShare('accuracy without necessarily empty answers %', g.accuracyWithoutNecessarilyEmpty, g.ci95.accuracyWithoutNecessarilyEmpty);
    addShare('accuracy on necessarily empty answers %', g.necessarilyEmpty);
    add('accepted as another order or choice of tied solutions', g.byTies + g.byAlternative);
    add('wrong where gold depends on ties not enumerated', g.tieUnresolved);
    add('mean F1 (GRASP) %', g.scored ? Math.round(g.graspF1 * 10_000) / 100 : null, `n=${g.scored}`, g.ci95.graspF1);
    add('mean F1 (Spinach, row-major) %', g.scored ? Math.round(g.spinachF1 * 10_000) / 100 : null, `n=${g.scored}`, g.ci95.spinachF1);
    addShare('syntactic validity %', g.validity.valid);
    addShare('consultation of submitted runs %', g.consultation.submitted);
    addShare('consultation of correct runs %', g.consultation.correct);
    addShare('trivial federation of submitted runs %', g.trivial.submitted);
    addShare('trivial federation of correct runs %', g.trivial.correct);
    addShare('all shards consulted %', g.allShards);
    add('tokens per run (median)', g.tokens.median);
    add('runtime per run (median, s)', g.seconds.median);
    add('runtime per run (max, s)', g.seconds.max);
    add('LLM calls per run', g.scripted || !g.model ? null : g.llmCallsPerRun); // a scripted agent has no model: its turns are no LLM calls
    add('SPARQL calls per run', g.sparqlCallsPerRun);
    add('VoID calls per run', g.voidCallsPerRun);
  }
  return rows;
}

/** A group's condition in one line: `name=value` for each field (src/eval/record.ts, RunCondition). */
const conditionText = (g: GroupScore) => [...conditionFields(g.condition)].map(([k, v]) => `${k}=${v}`).join(', ');

const num = (n: number | null) => (n === null || !Number.isFinite(n) ? '-' : String(n));
/** A 95 % interval as the reports write it: `[39.68, 89.22]`, `-` when there is none, '' for a figure that has no interval. */
const ciText = (ci: Interval | null | undefined) => (ci === undefined ? '' : ci === null ? '-' : `[${ci[0]}, ${ci[1]}]`);

/** Runs that are not correct: wrong (counted) or not counted (infrastructure errors). */
const notCorrect = (r: ScoreReport, group: string) => r.perRun.filter((s) => s.group === group && !s.correct);

/** The report as text: one block per group (figures beside the paper's), then the wrong runs' reasons in short. */
export function formatScoreText(r: ScoreReport, o: ScoreFormatOptions = {}): string {
  const lines: string[] = [`fkgqa score: ${counted(r.runs, 'run')} from ${r.files.join(', ')}; build ${r.shards} (output digest ${r.build.outputDigest})`];
  for (const w of r.warnings) lines.push(`warning: ${w}`);
  const rows = figureRows(r, o);
  for (const g of r.groups) {
    lines.push(
      '',
      `== ${g.group} (${counted(g.runs, 'run')}; ended: ${Object.entries(g.endReasons)
        .filter(([, v]) => v > 0)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')})`,
    );
    lines.push(`condition ${g.conditionDigest.slice(0, 8)}: ${conditionText(g)}; runs from ${g.sources.join(' ')}`);
    if (!comparable(g, o)) lines.push(`(a scripted agent: not compared with the paper's models; --paper-with-scripted to show their figures)`);
    const groupRows = rows.filter((x) => x.group === g.group);
    // The figure column as wide as its longest name, so that every value sits in its column.
    const width = Math.max('figure'.length, ...groupRows.map((x) => x.figure.length));
    lines.push(`${'figure'.padEnd(width)} ${'value'.padStart(10)} ${'of'.padStart(11)} ${'95 % CI'.padStart(16)} ${PAPER_MODELS.map((m) => `paper ${m}`.padStart(16)).join(' ')}`);
    for (const row of groupRows) {
      lines.push(
        `${row.figure.padEnd(width)} ${num(row.value).padStart(10)} ${(row.of ?? '').padStart(11)} ${ciText(row.ci95).padStart(16)} ${PAPER_MODELS.map((m) => num(row.paper[m]).padStart(16)).join(' ')}${row.note ? `   (${row.note})` : ''}`,
      );
    }
    lines.push(
      `trivial federation counts the scored runs whose gold answer needs fewer shards than the graph has and whose consulted shards are known: ` +
        `${g.trivial.submitted.of} of ${g.scored} scored runs, ${g.trivial.correct.of} of ${g.accuracy.count} correct runs`,
    );
    lines.push(`validity classes of ${counted(g.validity.queries, 'query', 'queries')}: ${VALIDITY_CLASSES.map((c) => `${c} ${g.validity.classes[c]}`).join(', ')}`);
    const failed = g.validity.queries - g.validity.classes.ok;
    const unjudged = NOT_JUDGED.reduce((n, c) => n + g.validity.notJudged[c], 0);
    if (unjudged > 0)
      lines.push(
        `  not judged (they parse; stopped at their time limit or by the infrastructure, in no class and not in syntactic validity): ${NOT_JUDGED.map((c) => `${c} ${g.validity.notJudged[c]}`).join(', ')}`,
      );
    if (failed > 0)
      lines.push(
        `  shares of the ${failed} failed: ${Object.entries(g.validity.failureShares)
          .map(([c, v]) => `${c} ${v} %`)
          .join(', ')} (paper, Qwen3-8B: ${Object.entries(PAPER_QWEN_FAILURES)
          .map(([c, v]) => `${c} ${v} %`)
          .join(', ')})`,
      );
    lines.push(
      `tokens: total ${g.tokens.total}, median ${num(g.tokens.median)}, min ${num(g.tokens.min)}, max ${num(g.tokens.max)}; accepted through ties: ${g.byTies} (top-level ORDER BY), ${g.byAlternative} (sub-SELECT)`,
    );
    if (g.infrastructure.runs > 0)
      lines.push(
        `infrastructure errors (not in accuracy): ${g.infrastructure.runs}: ${Object.entries(g.infrastructure.what)
          .map(([w, n]) => `${n} × ${w}`)
          .join('; ')}`,
      );
    if (g.modelErrors.runs > 0)
      lines.push(
        `model errors (not in accuracy): ${g.modelErrors.runs}: ${Object.entries(g.modelErrors.what)
          .map(([w, n]) => `${n} × ${w}`)
          .join('; ')}`,
      );
    const wrong = notCorrect(r, g.group).filter((s) => s.counted);
    if (wrong.length > 0) {
      lines.push(`wrong (${wrong.length}):`);
      for (const s of wrong.slice(0, 50)) lines.push(`  ${s.id} ${s.queryId}: ${s.reason}`);
      if (wrong.length > 50) lines.push(`  … ${wrong.length - 50} more (see --format json, csv or html)`);
    }
  }
  if (r.tieQuestions.length > 0) {
    lines.push('', `gold answers that depend on ties (${r.tieQuestions.length} of the questions scored; any admissible answer is correct):`);
    for (const t of r.tieQuestions) lines.push(`  ${t.queryId} (${t.dependence}): ${t.reason}`);
  }
  return lines.join('\n') + '\n';
}

/** The report as CSV: one row per group and figure, with the paper's values. */
export function formatScoreCsv(r: ScoreReport, o: ScoreFormatOptions = {}): string {
  return stringify([
    ['group', 'figure', 'value', 'of', 'ci95 low', 'ci95 high', ...PAPER_MODELS.map((m) => `paper ${m}`), 'paper note'],
    ...figureRows(r, o).map((x) => [x.group, x.figure, x.value ?? '', x.of ?? '', x.ci95?.[0] ?? '', x.ci95?.[1] ?? '', ...PAPER_MODELS.map((m) => x.paper[m] ?? ''), x.note ?? '']),
  ]);
}

/** One row per run as CSV (`--per-run`). */
export function formatPerRunCsv(r: ScoreReport): string {
  return stringify([
    [
      'id',
      'group',
      'kg',
      'query',
      'end',
      'counted',
      'gold',
      'gold kind',
      'gold ties',
      'correct',
      'by ties',
      'by alternative',
      'f1 grasp',
      'f1 spinach',
      'needed shards',
      'consulted shards',
      'consulted all needed',
      'trivial',
      'queries',
      'valid',
      'not judged',
      'tokens',
      'llm calls',
      'sparql calls',
      'void calls',
      'seconds',
      'reason',
    ],
    ...r.perRun.map((s) => [
      s.id,
      s.group,
      s.kg,
      s.queryId,
      s.endReason,
      s.counted,
      s.gold,
      s.goldKind,
      s.goldTies,
      s.correct,
      s.byTies,
      s.byAlternative,
      s.graspF1,
      s.spinachF1,
      s.neededShards?.join(' ') ?? '',
      s.consultedShards?.join(' ') ?? '',
      s.consultedAllNeeded ?? '',
      s.trivial ?? '',
      Object.values(s.validity).reduce((a, b) => a + b, 0),
      s.validity.ok,
      NOT_JUDGED.reduce((n, c) => n + (s.notJudged?.[c] ?? 0), 0),
      s.tokens,
      s.llmCalls,
      s.sparqlCalls,
      s.voidCalls,
      s.seconds,
      s.reason ?? '',
    ]),
  ]);
}

/** One bar of a chart: a percentage (null: no value), its n in words, and whether it is the paper's. */
interface Bar {
  label: string;
  value: number | null;
  /** Under the bar: `n = 42`, or why there is no n. */
  n: string;
  /** Why there is no value (`no runs`, `not reported`), when value is null. */
  missing?: string;
  paper: boolean;
  title?: string;
  /** The 95 % confidence interval of the value, drawn as an error bar (`g.ci` with `data-low`, `data-high`). */
  ci?: Interval | null;
}

const PALETTE = { run: '#4e79a7', paper: ['#f28e2b', '#76b7b2'] };

/**
 * Width of a text in CSS pixels, estimated from its length, for laying out SVG before any browser
 * measures it: DejaVu Sans (what system-ui falls back to on Linux) averages 0.62 em per character,
 * bold 0.7 em; a little more is allowed so that a wider font still fits. Checked in Chromium (tests/score.test.ts).
 * @param size font size in px
 */
const textWidth = (text: string, size: number, bold = false) => Math.ceil(text.length * size * (bold ? 0.72 : 0.65));

/**
 * A bar chart as SVG on a 0–100 % scale: one cluster of bars per group, each bar with its value
 * above, its label (the agent or model, or the paper's model) and its n below, the group's caption
 * under the cluster; a 0 % bar is 2 pixels high and outlined; a missing value has no bar but a
 * dashed box that says why, written upwards inside the box. Every bar's slot is as wide as its
 * widest text and every cluster as wide as its caption, so no text runs into another. Every bar is
 * a `rect.bar` with `data-value`, and its n a `text.n` (checked in Chromium, with every text's box).
 * The chart scales down to the width of its container (`max-width: 100%`).
 */
function svgBarChart(id: string, clusters: { label: string; bars: Bar[] }[]): string {
  const barW = 46;
  const gap = 10;
  const clusterGap = 30;
  const left = 48;
  const top = 22;
  const plotH = 220;
  const slot = (b: Bar) => Math.max(barW, textWidth(b.label, 11), textWidth(b.n, 10), textWidth(b.value === null ? '' : `${b.value} %`, 11));
  const slots = clusters.map((c) => c.bars.map(slot));
  const barsWidth = slots.map((ws) => ws.reduce((a, w) => a + w, 0) + (ws.length - 1) * gap);
  const widths = clusters.map((c, i) => Math.max(barsWidth[i], textWidth(c.label, 11, true)));
  const width = Math.max(420, left + widths.reduce((a, w) => a + w + clusterGap, 0) + 10);
  const height = top + plotH + 78;
  const y = (v: number) => top + plotH - (v / 100) * plotH;
  const parts: string[] = [];
  for (const t of [0, 25, 50, 75, 100]) {
    parts.push(`<line x1="${left}" x2="${width - 6}" y1="${y(t)}" y2="${y(t)}" stroke="${t === 0 ? '#333' : '#ddd'}"/>`);
    parts.push(`<text x="${left - 6}" y="${y(t) + 4}" text-anchor="end" class="axis">${t} %</text>`);
  }
  let x = left + clusterGap / 2;
  clusters.forEach((c, ci) => {
    // The bars centred under the caption when the caption is the wider.
    let sx = x + (widths[ci] - barsWidth[ci]) / 2;
    c.bars.forEach((b, bi) => {
      const cx = sx + slots[ci][bi] / 2;
      const bx = cx - barW / 2;
      sx += slots[ci][bi] + gap;
      const color = b.paper ? PALETTE.paper[(bi - 1) % 2] : PALETTE.run;
      if (b.value === null) {
        parts.push(`<rect class="missing" x="${bx}" y="${y(100)}" width="${barW}" height="${plotH}" fill="none" stroke="#bbb" stroke-dasharray="3 3"/>`);
        parts.push(`<text class="value missing" x="${cx}" y="${y(50)}" transform="rotate(-90 ${cx} ${y(50)})" text-anchor="middle" dominant-baseline="central">${esc(b.missing ?? 'no value')}</text>`);
      } else {
        const v = Math.max(0, Math.min(100, b.value));
        const h = Math.max(2, (v / 100) * plotH);
        parts.push(
          `<rect class="bar${v === 0 ? ' zero' : ''}" data-value="${b.value}" x="${bx}" y="${y(0) - h}" width="${barW}" height="${h}" fill="${color}" stroke="${v === 0 ? '#000' : 'none'}" stroke-width="1"><title>${esc(b.title ?? `${b.label}: ${b.value} %, ${b.n}`)}</title></rect>`,
        );
        let above = y(0) - h;
        if (b.ci) {
          // The error bar: a vertical line from the interval's low to its high end, capped at both; the value stays centred above it.
          const [lo, hi] = [Math.max(0, Math.min(100, b.ci[0])), Math.max(0, Math.min(100, b.ci[1]))];
          parts.push(
            `<g class="ci" data-low="${b.ci[0]}" data-high="${b.ci[1]}" stroke="#222" stroke-width="1.5"><title>${esc(`${b.label}: 95 % CI ${b.ci[0]}–${b.ci[1]} %`)}</title>` +
              `<line x1="${cx}" x2="${cx}" y1="${y(lo)}" y2="${y(hi)}"/><line x1="${cx - 6}" x2="${cx + 6}" y1="${y(lo)}" y2="${y(lo)}"/><line x1="${cx - 6}" x2="${cx + 6}" y1="${y(hi)}" y2="${y(hi)}"/></g>`,
          );
          above = Math.min(above, y(hi));
        }
        parts.push(`<text class="value" x="${cx}" y="${above - 4}" text-anchor="middle">${b.value} %</text>`);
      }
      parts.push(`<text class="label" x="${cx}" y="${y(0) + 13}" text-anchor="middle">${esc(b.label)}</text>`);
      parts.push(`<text class="n" x="${cx}" y="${y(0) + 25}" text-anchor="middle">${esc(b.n)}</text>`);
    });
    parts.push(`<text class="group" x="${x + widths[ci] / 2}" y="${y(0) + 44}" text-anchor="middle">${esc(c.label)}</text>`);
    x += widths[ci] + clusterGap;
  });
  return `<svg id="${id}" class="chart" data-scale-max="100" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" xmlns="http://www.w3.org/2000/svg" role="img">${parts.join('')}</svg>`;
}

/** The link of a run in the viewer page. */
function viewLink(viewPage: string, id: string): string {
  return `${viewPage}#run=${encodeURIComponent(id)}`;
}

/**
 * The view page as the report at `reportFile` links to it: a URL as given, a path relative to the
 * report's folder (both are opened from disk).
 */
export function viewHref(viewPage: string, reportFile?: string): string {
  if (/^[a-z][a-z0-9+.-]*:/i.test(viewPage)) return viewPage;
  if (!reportFile) return viewPage.split(path.sep).join('/');
  const rel = path.relative(path.dirname(path.resolve(reportFile)), path.resolve(viewPage));
  return rel.split(path.sep).join('/');
}

/** The in-page check run by headless browsers: every bar drawn (height ≥ 1.5 px) with its n below. */
const BARS_CHECK = `const bars = [...document.querySelectorAll('svg.chart rect.bar')];
let visible = 0, withN = 0;
for (const b of bars) {
  const r = b.getBoundingClientRect();
  if (r.height >= 1.5 && r.width >= 1) visible++;
  const ns = [...b.ownerSVGElement.querySelectorAll('text.n')].filter((t) => { const q = t.getBoundingClientRect(); return q.top >= r.bottom && Math.abs((q.left + q.right) / 2 - (r.left + r.right) / 2) < 2; });
  if (ns.length === 1) withN++;
}
document.body.dataset.bars = String(bars.length);
document.body.dataset.barsVisible = String(visible);
document.body.dataset.barsWithN = String(withN);
document.body.dataset.errorBars = String(document.querySelectorAll('svg.chart g.ci').length);
document.body.dataset.errorBarsVisible = String([...document.querySelectorAll('svg.chart g.ci')].filter((g) => g.getBoundingClientRect().width >= 1).length);
document.body.dataset.zeroBarsVisible = String(bars.filter((b) => b.classList.contains('zero') && b.getBoundingClientRect().height >= 1.5).length);`;

/**
 * The bar charts of the score page, as a function of one chart: a bar per group (its agent or model), beside the
 * paper's bars for the same setup when `figure` names one and the group is comparable (`comparable`), each with n
 * and, given `ci`, its 95 % interval; `pick` gives the group's value (a share, shown as a rate, or a value over n),
 * `unit` what n counts, in words of a missing bar ("no runs").
 */
function scoreChart(groups: GroupScore[], o: ScoreFormatOptions) {
  return (id: string, title: string, figure: FigureName | undefined, pick: (g: GroupScore) => Share | { value: number | null; n: number }, unit = 'runs', ci?: (g: GroupScore) => Interval | null) =>
    `<div class="figure"><h2>${esc(title)}</h2>\n` +
    svgBarChart(
      id,
      groups.map((g) => {
        const v = pick(g);
        const s = 'count' in v ? { value: rate(v), n: v.of } : v;
        // The group's own bar is named by its agent or model (the paper's bars by theirs).
        const bars: Bar[] = [
          { label: g.scripted || !g.model ? g.agent : g.model, value: s.value, n: `n = ${s.n}`, paper: false, ...(s.value === null ? { missing: `no ${unit}` } : {}), ...(ci ? { ci: ci(g) } : {}) },
        ];
        if (figure && comparable(g, o)) {
          for (const m of PAPER_MODELS) {
            const p = paperFigure(figure, m, g.setup);
            bars.push({ label: m, value: p?.value ?? null, n: 'n: not given', paper: true, missing: p?.note ? 'range only' : 'not reported', title: p?.note });
          }
        }
        return { label: g.group, bars };
      }),
    ) +
    '</div>';
}

/** The score page's six charts (`scoreChart`): accuracy with and without the necessarily empty answers, validity, consultation, trivial federation, mean F1. */
function scoreCharts(groups: GroupScore[], o: ScoreFormatOptions): string {
  const chart = scoreChart(groups, o);
  const f1 = (x: number, g: GroupScore) => ({ value: g.scored ? Math.round(x * 10_000) / 100 : null, n: g.scored });
  return `${chart(
    'accuracy',
    'Accuracy (% of runs; model and infrastructure errors excluded; error bar: 95 % Wilson interval)',
    'accuracy %',
    (g) => g.accuracy,
    'runs',
    (g) => g.ci95.accuracy,
  )}
${chart(
  'accuracy-federated',
  'Accuracy without the questions whose answer is necessarily empty (% of runs with executable gold; error bar: 95 % Wilson interval)',
  undefined,
  (g) => g.accuracyWithoutNecessarilyEmpty,
  'runs',
  (g) => g.ci95.accuracyWithoutNecessarilyEmpty,
)}
${chart('validity', 'Syntactic validity (% of queries judged; n: queries)', 'syntactic validity %', (g) => g.validity.valid, 'queries')}
${chart('consultation', 'Endpoint consultation (% of correct runs that named every needed shard)', 'consultation of correct runs %', (g) => g.consultation.correct, 'correct runs')}
${chart('trivial', 'Trivial federation (% of correct runs naming all shards when fewer suffice)', 'trivial federation of correct runs %', (g) => g.trivial.correct, 'correct runs')}
${chart(
  'f1',
  'Mean F1, GRASP (×100; error bar: 95 % bootstrap interval)',
  undefined,
  (g) => f1(g.graspF1, g),
  'runs',
  (g) => g.ci95.graspF1,
)}`;
}

/** The rows of the score page's tables: figures beside the paper, runs not correct, end reasons, failed runs, validity classes, conditions. */
function scoreRows(r: ScoreReport, o: ScoreFormatOptions) {
  const groups: GroupScore[] = r.groups;
  const rows = figureRows(r, o)
    .map(
      (x) =>
        `<tr><td>${esc(x.group)}</td><td>${esc(x.figure)}</td><td>${num(x.value)}</td><td>${esc(x.of ?? '')}</td><td>${ciText(x.ci95)}</td>${PAPER_MODELS.map((m) => `<td>${num(x.paper[m])}</td>`).join('')}<td>${esc(x.note ?? '')}</td></tr>`,
    )
    .join('\n');
  const link = (s: RunScore) => (o.viewPage ? `<a href="${esc(viewLink(o.viewPage, s.id))}">${esc(s.id)}</a>` : esc(s.id));
  const wrongRows = r.perRun
    .filter((s) => !s.correct)
    .map(
      (s) =>
        `<tr class="${s.counted ? 'wrong' : 'infrastructure'}"><td>${link(s)}</td><td>${esc(s.queryId)}</td><td>${esc(s.question)}</td><td>${esc(s.endReason)}</td><td>${esc(s.reason ?? '')}</td></tr>`,
    )
    .join('\n');
  const endRows = groups.map((g) => `<tr><td>${esc(g.group)}</td>${END_REASONS.map((e) => `<td>${g.endReasons[e]}</td>`).join('')}<td>${g.runs}</td></tr>`).join('\n');
  const failedRows = groups
    .flatMap((g) => [
      { g, end: 'infrastructure_error', f: g.infrastructure },
      { g, end: 'model_error', f: g.modelErrors },
    ])
    .filter((x) => x.f.runs > 0)
    .map(
      (x) =>
        `<tr><td>${esc(x.g.group)}</td><td>${x.end}</td><td>${x.f.runs}</td><td>${Object.entries(x.f.what)
          .map(([w, n]) => `${n} × ${esc(w)}`)
          .join('<br>')}</td></tr>`,
    )
    .join('');
  const classRows = groups
    .map(
      (g) =>
        `<tr><td>${esc(g.group)}</td>${VALIDITY_CLASSES.map((c) => `<td>${g.validity.classes[c]} (${g.validity.queries ? Math.round((1000 * g.validity.classes[c]) / g.validity.queries) / 10 : 0} %)</td>`).join('')}<td>${g.validity.queries}</td>${NOT_JUDGED.map((c) => `<td>${g.validity.notJudged[c]}</td>`).join('')}</tr>`,
    )
    .join('\n');
  const fieldNames = groups.length ? [...conditionFields(groups[0].condition).keys()] : [];
  const conditionRows = groups
    .map((g) => {
      const f = conditionFields(g.condition);
      return `<tr><td>${esc(g.group)}</td><td>${esc(g.conditionDigest.slice(0, 8))}</td>${fieldNames.map((k) => `<td>${esc(f.get(k) ?? '')}</td>`).join('')}<td>${g.runs}</td><td>${g.sources.map(esc).join('<br>')}</td></tr>`;
    })
    .join('\n');
  return { rows, wrongRows, endRows, failedRows, classRows, fieldNames, conditionRows };
}

/**
 * A self-contained HTML report (module comment): charts of accuracy, accuracy without the
 * necessarily empty answers, syntactic validity, consultation, trivial federation and mean F1 per
 * group, each on a 0–100 % scale with n under every bar and, for models (and scripted agents when
 * asked), the paper's bars for the same setup; the end reasons; the infrastructure errors; the
 * gold answers that depend on ties; the figure table; and every run that was not correct, with its
 * reason and a link into the run viewer when `viewPage` is given. The page needs no script to show
 * its figures; a small script writes `data-bars`, `data-bars-visible`, `data-bars-with-n` on
 * `<body>` for the rendering check.
 */
export function formatScoreHtml(r: ScoreReport, o: ScoreFormatOptions = {}): string {
  const groups: GroupScore[] = r.groups;
  const { rows, wrongRows, endRows, failedRows, classRows, fieldNames, conditionRows } = scoreRows(r, o);
  const scriptedNote =
    groups.some((g) => g.scripted) && !o.paperWithScripted
      ? `<p>Scripted agents (${[...new Set(groups.filter((g) => g.scripted).map((g) => g.agent))].join(', ')}) are no model of the paper: its figures are drawn beside models only (<code>--paper-with-scripted</code> draws them beside scripted agents too).</p>`
      : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>fkgqa score</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:2em auto;padding:0 1.5em;max-width:1200px;color:#222}
.wide{overflow-x:auto}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:2px 8px;text-align:right;vertical-align:top}td:first-child,th:first-child,td:nth-child(2){text-align:left}
table.runs td,table.runs th{text-align:left}tr.infrastructure{color:#666}
svg.chart{display:block;margin:0.5em 0 1.5em;max-width:100%;height:auto}.charts{display:flex;flex-wrap:wrap;column-gap:2em}.figure{flex:1 1 520px}.figure h2{font-size:1.05em}svg text{font:11px system-ui,sans-serif;fill:#222}svg text.n,svg text.axis{fill:#555;font-size:10px}svg text.group{font-weight:600}
.legend span{display:inline-block;width:12px;height:12px;margin:0 4px 0 12px;vertical-align:middle}
</style></head><body>
<h1>fkgqa score</h1>
<p>${counted(r.runs, 'run')}, ${counted(groups.length, 'group')} (one per condition: setup | agent or model, and what else differs); build ${esc(r.shards)} (output digest ${esc(r.build.outputDigest)}). Definitions: docs/evaluation.md. Paper: FKGQA, section 6.
Every rate is a percentage on the same 0–100 scale; n under each bar is the number of runs it is computed over (the paper does not give n per setup: 5,814 runs in all). A 0 % bar is a thin outlined bar; a dashed box is a value that does not exist (no runs, or not reported). An error bar on a run's bar is its 95 % confidence interval: Wilson's for accuracy, a percentile bootstrap (2,000 resamples, seed 0) for mean F1; the figure table gives them in numbers.</p>
${r.warnings.length ? `<ul class="warnings">${r.warnings.map((w) => `<li>${esc(w)}</li>`).join('')}</ul>` : ''}
${scriptedNote}
<p class="legend"><span style="background:${PALETTE.run}"></span>these runs<span style="background:${PALETTE.paper[0]}"></span>paper, ${PAPER_MODELS[0]}<span style="background:${PALETTE.paper[1]}"></span>paper, ${PAPER_MODELS[1]}</p>
<div class="charts">
${scoreCharts(groups, o)}
</div>
<h2>Conditions</h2>
<p>Each group is the runs of one condition: everything that defines what was measured (setup, agent, model and its sampling, limits, federation engine, build, prompt). Runs of two conditions are never merged; repeats of one condition are its runs. docs/evaluation.md, "Conditions".</p>
<div class="wide"><table class="conditions"><tr><th>group</th><th>condition</th>${fieldNames.map((k) => `<th>${esc(k)}</th>`).join('')}<th>runs</th><th>read from</th></tr>
${conditionRows}
</table></div>
<h2>How the runs ended</h2>
<div class="wide"><table><tr><th>group</th>${END_REASONS.map((e) => `<th>${esc(e)}</th>`).join('')}<th>runs</th></tr>
${endRows}
</table></div>
<p>Limits (turn, message, token, time) count as wrong answers: the agent did not answer within them. Infrastructure errors (an endpoint or the federation engine failed) and model errors (the LLM API failed) are not the agent's answers and are in no rate; <code>fkgqa eval --retry-errors</code> reruns them.</p>
${failedRows ? `<h2>Runs that failed (not in accuracy)</h2><div class="wide"><table><tr><th>group</th><th>end reason</th><th>runs</th><th>what failed</th></tr>${failedRows}</table></div>` : ''}
<h2>Validity classes (queries sent)</h2>
<div class="wide"><table><tr><th>group</th>${VALIDITY_CLASSES.map((c) => `<th>${c}</th>`).join('')}<th>queries</th>${NOT_JUDGED.map((c) => `<th>not judged: ${c}</th>`).join('')}</tr>
${classRows}
</table></div>
<p>Not judged: queries that parse but were stopped at their time limit (their answer is unknown; how long a query runs depends on the machine's load) or failed for the infrastructure. They are in no class and not in syntactic validity.</p>
${r.tieQuestions.length ? `<h2>Gold answers that depend on ties (${r.tieQuestions.length})</h2><p>Any admissible answer is scored correct: another order of tied rows, or another choice of the solutions a LIMIT keeps among ties.</p><div class="wide"><table class="runs"><tr><th>query</th><th>dependence</th><th>why</th></tr>${r.tieQuestions.map((t) => `<tr><td>${esc(t.queryId)}</td><td>${t.dependence}</td><td>${esc(t.reason)}</td></tr>`).join('')}</table></div>` : ''}
<h2>Figures beside the paper</h2>
<div class="wide"><table><tr><th>group</th><th>figure</th><th>value</th><th>of</th><th>95 % CI</th>${PAPER_MODELS.map((m) => `<th>paper ${m}</th>`).join('')}<th>paper note</th></tr>
${rows}
</table></div>
<h2 id="not-correct">Runs not correct (${r.perRun.filter((s) => !s.correct).length})</h2>
${o.viewPage ? `<p>Each run links to the run viewer (${esc(o.viewPage)}).</p>` : '<p>(<code>--view PAGE</code> links each run to the run viewer written by <code>fkgqa view</code>.)</p>'}
<div class="wide"><table class="runs"><tr><th>run</th><th>query</th><th>question</th><th>ended</th><th>reason</th></tr>
${wrongRows}
</table></div>
<script>
${BARS_CHECK}
</script>
</body></html>
`;
}
