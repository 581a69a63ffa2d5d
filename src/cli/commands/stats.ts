/**
 * `fkgqa stats`: flags → `stats` (src/index.ts); prints the figures (or writes them to `--out`, in
 * the `--format` given, html included), writes the per-query CSV, and says on stderr which files it
 * wrote (not with --quiet). Queries that hit the time limit are named on stderr with how to raise
 * it (`formatTimeLimitNotice`).
 */
import { checkReportOutputs, writeReportFiles } from '../../common/output.js';
import { stats } from '../../index.js';
import { formatStatsHtml } from '../../report/html.js';
import { comparePaper, formatPerQueryCsv, formatStatsCsv, formatStatsMarkdown, formatStatsText, formatTimeLimitNotice } from '../../report/stats-format.js';
import { outputFormat } from '../options.js';
import { stderrProgress, wroteLine } from '../progress.js';
import { readFolders } from '../report-files.js';

export async function run(o: Record<string, any>): Promise<void> {
  const format = outputFormat(o);
  checkReportOutputs(
    [
      { file: o.perQuery, option: '--per-query' },
      { file: o.out, option: '--out' },
    ],
    { folders: readFolders(o) },
  );
  const progress = stderrProgress(o.quiet);
  const s = await stats({
    shards: o.shards,
    kgs: o.kg,
    timeoutMs: o.timeout,
    recompute: o.recompute,
    state: o.state,
    progress,
  });
  const paper = Boolean(o.comparePaper);
  let text: string;
  if (format === 'json') text = JSON.stringify(paper ? { ...s, comparison: comparePaper(s.figures) } : s, null, 2) + '\n';
  else if (format === 'csv') text = formatStatsCsv(s, paper);
  else if (format === 'markdown') text = formatStatsMarkdown(s, paper);
  else if (format === 'html') text = formatStatsHtml(s);
  else text = formatStatsText(s, paper);
  // All or none: the per-query CSV and the report.
  writeReportFiles([...(o.perQuery ? [{ file: o.perQuery as string, text: formatPerQueryCsv(s) }] : []), ...(o.out ? [{ file: o.out as string, text }] : [])]);
  if (!o.out) process.stdout.write(text);
  const written: string[] = [o.perQuery, o.out].filter((f): f is string => typeof f === 'string');
  if (written.length > 0) progress?.(wroteLine('stats', written));
  // Said even with --quiet: a figure computed without these queries is not a progress detail.
  process.stderr.write(formatTimeLimitNotice(s, o.timeout));
}
