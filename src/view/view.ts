/**
 * `fkgqa view RUNS… [--shards DIR] --out page.html`: a static, self-contained HTML page of agent
 * runs (run files of `fkgqa eval`, format fkgqa-run/2) that opens from disk: the runs in a
 * list with filters (setup, model or agent, graph, verdict, end reason), and per run the question,
 * every message and tool call (queries re-indented with their SERVICE targets highlighted, results
 * as tables), the final query, its answer beside the gold answer with the differing rows marked,
 * and the verdict with its reason.
 *
 * The verdict is `fkgqa score`'s (src/score: the same function on the same run files, so the page
 * and the score report never disagree); without `shards` the runs are shown unscored. Deep link:
 * `<page>.html#run=<encodeURIComponent(run id)>` opens that run.
 */
import path from 'node:path';
import { InputError } from '../common/errors.js';
import { openBuild } from '../build/open.js';
import { readGoldQueries } from '../build/benchmark.js';
import { goldResultsById, readGoldAnswers, type GoldResult } from '../build/gold-answers.js';
import { parseQuery } from '../sparql/parse.js';
import type { SparqlResults } from '../sparql/results.js';
import { conditionLabels, score, type RunScore, type ScoreReport } from '../score/score.js';
import { readRunFiles } from '../eval/run-reader.js';
import { answerTable, runView, SharedTexts, type GoldView, type RunDetail, type RunSummary, type ViewData, type ViewLimits } from './model.js';
import { formatViewHtml } from './html.js';
import { counted } from '../common/strings.js';

/** Options of `viewRuns`. */
export interface ViewOptions {
  /** Run files (JSON lines of `fkgqa eval`). */
  runs: string[];
  /** The build the runs were made on: with it, every run gets `fkgqa score`'s verdict and the gold answer. */
  shards?: string;
  /** State folder of the build (default `<build>.state`), where `fkgqa stats` stored the gold answers. */
  state?: string;
  /** `fkgqa score`'s report of these very run files and build, when the caller has it (fkgqa run): used instead of scoring again. */
  report?: ScoreReport;
  /** Time limit of a key query for ties under ORDER BY, in ms (as `fkgqa score --timeout`; default 60,000). */
  timeoutMs?: number;
  /** Rows of an answer table shown in the page (default 100; the marks count every row). */
  maxRows?: number;
  /** Characters of a message or tool result kept (default 20,000). */
  maxChars?: number;
  /** With `shards`: score a run file fkgqa eval is still writing (as `fkgqa score --partial`); refused by default (InputError). */
  partial?: boolean;
  progress?: (line: string) => void;
}

/** What `viewRuns` made. */
export interface ViewResult {
  html: string;
  data: ViewData;
  /** Runs in the page. */
  runs: number;
  /** Runs by verdict. */
  verdicts: Record<RunSummary['verdict'], number>;
}

/** Default bounds of what the page embeds. */
const DEFAULT_VIEW_LIMITS: ViewLimits = { maxRows: 100, maxChars: 20_000 };

/**
 * Builds the page (module comment).
 * @throws InputError for a missing or unreadable run file (naming file and line), and, with
 *   `shards`, whatever `fkgqa score` refuses (a missing build, no gold answers: run fkgqa stats)
 */
export async function viewRuns(o: ViewOptions): Promise<ViewResult> {
  const progress = o.progress ?? (() => {});
  if (o.runs.length === 0) throw new InputError('no run files given');
  const limits: ViewLimits = { maxRows: o.maxRows ?? DEFAULT_VIEW_LIMITS.maxRows, maxChars: o.maxChars ?? DEFAULT_VIEW_LIMITS.maxChars };
  // Without a build nothing is scored: a run file fkgqa eval is still writing is shown as it is,
  // with a warning. With one, fkgqa score reads the files too and gives the warnings.
  const read = readRunFiles(o.runs, { partial: o.partial === true || !o.shards });
  if (!o.shards) for (const w of read.warnings) progress(`fkgqa view: warning: ${w}`);
  const located = read.runs;
  const verdicts = new Map<string, RunScore>();
  const golds = new Map<string, GoldResult>();
  const goldViews: Record<string, GoldView> = {};
  const ordered = new Map<string, boolean>();
  if (o.shards) {
    const report = o.report ?? (await score({ runs: o.runs, shards: o.shards, state: o.state, timeoutMs: o.timeoutMs, partial: o.partial === true, progress }));
    for (const s of report.perRun) verdicts.set(s.id, s);
    const digest = openBuild(o.shards, { checkShards: false }).build.outputDigest;
    const { defaultPrefix, queries } = readGoldQueries(o.shards);
    const textOf = new Map(queries.map((q) => [q.id, q.text]));
    for (const kg of new Set(located.map((l) => l.record.question.kg))) {
      const stored = readGoldAnswers(o.shards, kg, digest, { state: o.state });
      if (stored) for (const [id, g] of goldResultsById(stored)) golds.set(id, g);
    }
    for (const queryId of new Set(located.map((l) => l.record.question.queryId))) {
      const text = textOf.get(queryId) ?? '';
      const parsed = parseQuery(text, defaultPrefix);
      const isOrdered = parsed.ok && parsed.query.ast.type === 'query' && !!(parsed.query.ast as { order?: unknown[] }).order?.length;
      ordered.set(queryId, isOrdered);
      const g = golds.get(queryId);
      const results = g?.status === 'ok' && g.results && typeof g.results === 'object' ? g.results : undefined;
      goldViews[queryId] = {
        query: text,
        status: g?.status ?? 'missing',
        ordered: isOrdered,
        ...(results ? { answer: answerTable(results, limits.maxRows) } : {}),
        ...(g?.error ? { error: g.error } : {}),
      };
    }
  }
  // Each run's condition as fkgqa score labels its group; the list in a stable order: condition, question, repeat.
  const { labels } = conditionLabels(new Map(located.map((l) => [l.conditionDigest, l.condition])));
  const labelOf = (l: (typeof located)[number]) => labels.get(l.conditionDigest)!;
  located.sort((a, b) => {
    const [la, lb] = [labelOf(a), labelOf(b)];
    return la < lb ? -1 : la > lb ? 1 : a.record.question.index - b.record.question.index || a.record.repeat - b.record.repeat || (a.record.id < b.record.id ? -1 : a.record.id > b.record.id ? 1 : 0);
  });
  const shared = new SharedTexts();
  const runs: RunSummary[] = [];
  const details: string[] = [];
  for (const l of located) {
    const g = golds.get(l.record.question.queryId);
    const goldResults = g?.status === 'ok' && g.results && typeof g.results === 'object' ? (g.results as SparqlResults) : undefined;
    const { summary, detail } = runView(l, verdicts.get(l.record.id), goldResults, ordered.get(l.record.question.queryId) ?? false, shared, limits, labelOf(l));
    runs.push(summary);
    details.push(JSON.stringify(detail satisfies RunDetail));
  }
  const data: ViewData = { files: o.runs, build: o.shards ? path.resolve(o.shards) : null, runs, details, shared: shared.texts, gold: goldViews };
  const counts = { correct: 0, wrong: 0, unscored: 0 };
  for (const r of runs) counts[r.verdict]++;
  progress(`fkgqa view: ${counted(runs.length, 'run')} (${counts.correct} correct, ${counts.wrong} wrong, ${counts.unscored} unscored)`);
  return { html: formatViewHtml(data), data, runs: runs.length, verdicts: counts };
}
