import { stringify } from 'csv-stringify/sync';
import type { ShardingKind } from '../analyze/analyze.js';
import type { Distribution } from './figures.js';
import { PAPER } from './paper.js';
import type { BuildFigures, BuildStats } from './stats.js';
import { counted } from '../common/strings.js';

/** One row of the paper comparison: the paper's value, this build's value, and the difference. */
interface PaperComparisonRow {
  figure: string;
  paper: number;
  build: number;
  difference: number;
}

const r2 = (x: number) => Math.round(x * 100) / 100;

/**
 * The figures of section 4 of the FKGQA paper beside this build's. Shares are percentages over
 * questions (the paper's denominator, see PAPER); implied fan-out over questions.
 */
export function comparePaper(f: BuildFigures): PaperComparisonRow[] {
  const rows: [string, number, number][] = [
    ['graphs', PAPER.graphs, f.graphs],
    ['shards in total', PAPER.shards.total, f.shards.total],
    ['shards per graph, mean', PAPER.shards.mean, f.shards.perGraph.mean],
    ['shards per graph, median', PAPER.shards.median, f.shards.perGraph.median],
    ['shards per graph, min', PAPER.shards.min, f.shards.perGraph.min],
    ['shards per graph, max', PAPER.shards.max, f.shards.perGraph.max],
    ['rules per graph, mean', PAPER.rulesPerGraph.mean, f.rulesPerGraph.mean],
    ['rules per graph, median', PAPER.rulesPerGraph.median, f.rulesPerGraph.median],
    ['rules per graph, min', PAPER.rulesPerGraph.min, f.rulesPerGraph.min],
    ['rules per graph, max', PAPER.rulesPerGraph.max, f.rulesPerGraph.max],
    ['vertical (predicate) rules, %', PAPER.ruleComposition.predicate, f.ruleComposition.predicate.percent],
    ['semantic (class) rules, %', PAPER.ruleComposition.class, f.ruleComposition.class.percent],
    ['horizontal rules, %', PAPER.ruleComposition.horizontal, f.ruleComposition.horizontal.percent],
    ['shard balance (mean CV of shard sizes)', PAPER.shardBalanceCv, f.shardBalanceCv],
    ['class sharding applies, % of questions', PAPER.applicability.class, f.applicability.overQuestions.class.percent],
    ['predicate sharding applies, % of questions', PAPER.applicability.predicate, f.applicability.overQuestions.predicate.percent],
    ['horizontal sharding applies, % of questions', PAPER.applicability.horizontal, f.applicability.overQuestions.horizontal.percent],
    ['implied fan-out, mean', PAPER.impliedFanOut.mean, f.impliedFanOut.overQuestions.mean],
    ['implied fan-out, median', PAPER.impliedFanOut.median, f.impliedFanOut.overQuestions.median],
    ['implied fan-out, min', PAPER.impliedFanOut.min, f.impliedFanOut.overQuestions.min],
    ['implied fan-out, max', PAPER.impliedFanOut.max, f.impliedFanOut.overQuestions.max],
    ['realised: no match, % of questions with a realised fan-out', PAPER.realisedFanOut.noMatchShare, f.realisedFanOut.noMatch.overQuestions.percent],
    ['realised: exactly one shard, % of those questions', PAPER.realisedFanOut.oneShardShare, f.realisedFanOut.oneShard.overQuestions.percent],
  ];
  return rows.map(([figure, paper, build]) => ({ figure, paper, build, difference: r2(build - paper) }));
}

/**
 * The figures flattened to `name → number` (dotted paths, e.g. `shards.total`,
 * `applicability.overQuestions.class.percent`), the content of `--format csv`.
 */
export function flattenFigures(f: BuildFigures): [string, number][] {
  const out: [string, number][] = [];
  const walk = (prefix: string, v: unknown) => {
    if (typeof v === 'number') out.push([prefix, v]);
    else if (v && typeof v === 'object' && !Array.isArray(v)) for (const [k, x] of Object.entries(v)) walk(prefix ? `${prefix}.${k}` : k, x);
  };
  walk('', { ...f, gapExamples: undefined });
  return out;
}

const dist = (d: Distribution) => `${d.mean} / ${d.median} / ${d.min} / ${d.max}`;
const kinds: [ShardingKind, string][] = [
  ['predicate', 'vertical (predicate)'],
  ['class', 'semantic (class)'],
  ['horizontal', 'horizontal'],
];

/** The readable terminal report. */
export function formatStatsText(s: BuildStats, withPaper: boolean): string {
  const f = s.figures;
  const L: string[] = [];
  L.push(`fkgqa stats: ${s.shards}`);
  L.push(
    `  ${counted(f.graphs, 'graph')}, ${counted(f.questions, 'question')}, ${counted(f.distinctQueries, 'distinct query', 'distinct queries')} (${counted(f.graphQueryPairs, 'distinct graph/query pair')}: the unit below)`,
  );
  L.push(`  shards: ${f.shards.total} in total; per graph mean/median/min/max ${dist(f.shards.perGraph)}`);
  L.push(`  rules per graph mean/median/min/max ${dist(f.rulesPerGraph)}`);
  L.push(`  rules: ${kinds.map(([k, n]) => `${n} ${f.ruleComposition[k].percent}% (${f.ruleComposition[k].count})`).join(', ')}`);
  L.push(`  shard balance: mean coefficient of variation of shard sizes per graph ${f.shardBalanceCv}`);
  L.push('Applicability (share of questions / of distinct queries)');
  for (const [k, n] of kinds) {
    L.push(`  ${n.padEnd(22)} ${f.applicability.overQuestions[k].percent}% / ${f.applicability.overDistinctQueries[k].percent}%`);
  }
  L.push('Fan-out (section 4.2)');
  L.push(`  implied f(Q), covered queries, mean/median/min/max: over questions ${dist(f.impliedFanOut.overQuestions)}; over graph/query pairs ${dist(f.impliedFanOut.overGraphQueryPairs)}`);
  const belowTwo = s.queries.filter((q) => q.impliedFanOut !== null && q.impliedFanOut < 2);
  if (belowTwo.length > 0) {
    const ids = belowTwo.map((q) => q.query);
    L.push(
      `  f(Q) below 2 (not federated: partition's guarantee excepts them, \`partition --verbose\` says why): ${counted(belowTwo.length, 'graph/query pair')} (${counted(
        belowTwo.reduce((n, q) => n + q.questions, 0),
        'question',
      )}): ${ids.slice(0, 5).join(', ')}${ids.length > 5 ? ', …' : ''}`,
    );
  }
  L.push(`  triple-pattern-wise sources (TPWSS, Σ_t |E_t|), over questions: ${dist(f.tpwss.overQuestions)}`);
  const rf = f.realisedFanOut;
  L.push(`  realised, computed for ${counted(rf.computed, 'graph/query pair')} (not for those whose provenance query timed out): mean/median/min/max ${dist(rf.overGraphQueryPairs)}`);
  L.push(
    `  no match: ${rf.noMatch.overQuestions.percent}% of questions (${rf.noMatch.overQuestions.count}/${rf.noMatch.overQuestions.of}), ${rf.noMatch.overGraphQueryPairs.percent}% of graph/query pairs`,
  );
  L.push(
    `  exactly one shard: ${rf.oneShard.overQuestions.percent}% of questions (${rf.oneShard.overQuestions.count}/${rf.oneShard.overQuestions.of}), ${rf.oneShard.overGraphQueryPairs.percent}% of graph/query pairs`,
  );
  if (f.gapExamples.length) {
    L.push('  realised below implied, largest gap first (Example 2 of the paper):');
    for (const g of f.gapExamples) L.push(`    ${g.query}: implied ${g.implied}, realised ${g.realised}`);
  }
  const ga = f.goldAnswers;
  L.push(`Gold answers on the unsharded graphs: ${ga.executed} of ${counted(ga.graphQueryPairs, 'graph/query pair')} executed (${ga.empty} empty), ${ga.failed} failed, ${ga.timedOut} timed out`);
  for (const q of s.queries.filter((x) => x.answerStatus === 'timeout' || x.answerStatus === 'error')) {
    L.push(`  ${q.query}: ${q.answerStatus}${q.answerError ? `: ${q.answerError}` : ''}`);
  }
  L.push(
    `  depend on ties under ORDER BY: ${ga.tiesChoice} on which tied solutions a LIMIT keeps, ${ga.tiesOrder} on the order of tied rows only, ${ga.tiesUnknown} undecided (fkgqa score accepts every admissible answer)`,
  );
  for (const q of s.queries.filter((x) => x.answerTies === 'choice' || x.answerTies === 'unknown')) L.push(`  ${q.query} (${q.answerTies}): ${q.answerTiesReason}`);
  L.push('Per graph: shards (sizes in triples), rules (vertical/semantic/horizontal), CV');
  for (const g of s.graphs) {
    L.push(
      `  ${g.graph.padEnd(30)} ${String(g.shards).padStart(2)} [${g.shardSizes.join(', ')}]  ${g.rules} (${g.ruleKinds.predicate}/${g.ruleKinds.class}/${g.ruleKinds.horizontal})  ${g.shardBalanceCv}`,
    );
  }
  if (withPaper) L.push('', formatComparison(comparePaper(f), 'text'));
  return L.join('\n') + '\n';
}

/** The paper comparison as a text or Markdown table. */
function formatComparison(rows: PaperComparisonRow[], style: 'text' | 'markdown'): string {
  if (style === 'markdown') {
    return (
      ['| figure | paper | this build | difference |', '|---|---:|---:|---:|', ...rows.map((r) => `| ${r.figure} | ${r.paper} | ${r.build} | ${r.difference > 0 ? '+' : ''}${r.difference} |`)].join(
        '\n',
      ) + '\n'
    );
  }
  const w = Math.max(...rows.map((r) => r.figure.length));
  return (
    [
      `${'figure'.padEnd(w)}  ${'paper'.padStart(8)}  ${'build'.padStart(8)}  ${'diff'.padStart(8)}`,
      ...rows.map((r) => `${r.figure.padEnd(w)}  ${String(r.paper).padStart(8)}  ${String(r.build).padStart(8)}  ${((r.difference > 0 ? '+' : '') + r.difference).padStart(8)}`),
    ].join('\n') + '\n'
  );
}

/** The figures as Markdown (figure table, per-graph table, paper comparison if asked). */
export function formatStatsMarkdown(s: BuildStats, withPaper: boolean): string {
  const L = ['| figure | value |', '|---|---:|', ...flattenFigures(s.figures).map(([k, v]) => `| ${k} | ${v} |`), ''];
  L.push('| graph | shards | shard sizes (triples) | rules (vertical/semantic/horizontal) | CV |', '|---|---:|---|---|---:|');
  for (const g of s.graphs)
    L.push(`| ${g.graph} | ${g.shards} | ${g.shardSizes.join(', ')} | ${g.rules} (${g.ruleKinds.predicate}/${g.ruleKinds.class}/${g.ruleKinds.horizontal}) | ${g.shardBalanceCv} |`);
  if (withPaper) L.push('', formatComparison(comparePaper(s.figures), 'markdown'));
  return L.join('\n') + '\n';
}

/** `--format csv`: one row per figure (`figure,value`), or the paper comparison table. */
export function formatStatsCsv(s: BuildStats, withPaper: boolean): string {
  if (withPaper) return stringify(comparePaper(s.figures), { header: true, columns: ['figure', 'paper', 'build', 'difference'] });
  return stringify(flattenFigures(s.figures), { header: true, columns: ['figure', 'value'] });
}

/**
 * `--per-query FILE.csv`: one row per distinct (graph, query) pair: its figures, then the first
 * question asking it, the gold query on one line, and the implied and realised shards (space-separated `shard<N>`).
 */
export function formatPerQueryCsv(s: BuildStats): string {
  return stringify(
    s.queries.map((q) => ({
      graph: q.graph,
      query: q.query,
      questions: q.questions,
      predicates: q.predicates,
      classes: q.classes,
      subject_variables: q.subjectVariables,
      applicable: q.applicable.join(' '),
      status: q.status,
      covering_rules: q.coveringRules.join(' '),
      implied_fan_out: q.impliedFanOut,
      tpwss: q.tpwss,
      realised_fan_out: q.realisedFanOut,
      realised_status: q.realisedStatus,
      answer_status: q.answerStatus,
      answer_rows: q.answerRows,
      question: q.question,
      gold_query: q.text.replace(/\s+/g, ' ').trim(),
      implied_shards: q.impliedShards.join(' '),
      realised_shards: q.realisedShards.join(' '),
    })),
    {
      header: true,
      columns: [
        'graph',
        'query',
        'questions',
        'predicates',
        'classes',
        'subject_variables',
        'applicable',
        'status',
        'covering_rules',
        'implied_fan_out',
        'tpwss',
        'realised_fan_out',
        'realised_status',
        'answer_status',
        'answer_rows',
        'question',
        'gold_query',
        'implied_shards',
        'realised_shards',
      ],
    },
  );
}

/**
 * The stderr notice of `fkgqa stats` when queries hit the time limit: each one named with what
 * timed out (its gold answer, its realised fan-out or both), and how to raise the limit
 * (`--timeout <ms>`). Not part of the report (whose bytes it leaves alone).
 * @param s the computed stats
 * @param timeoutMs the time limit per query the stats ran with, in ms
 * @returns the lines to print (each ending in a newline), or '' when no query timed out
 */
export function formatTimeLimitNotice(s: BuildStats, timeoutMs: number): string {
  const hit = s.queries
    .map((q) => ({ id: q.query, what: [q.answerStatus === 'timeout' ? 'gold answer' : '', q.realisedStatus === 'timeout' ? 'realised fan-out' : ''].filter(Boolean) }))
    .filter((q) => q.what.length);
  if (!hit.length) return '';
  const L = [`fkgqa stats: ${hit.length} ${hit.length === 1 ? 'query' : 'queries'} hit the time limit of ${timeoutMs} ms per query; what timed out is reported as timed out, not computed:`];
  for (const q of hit) L.push(`  ${q.id} (${q.what.join(', ')})`);
  L.push(`Raise the limit with --timeout <ms> (e.g. --timeout ${timeoutMs * 2}) and run fkgqa stats again (answers stored under another limit are recomputed).`);
  return L.join('\n') + '\n';
}
