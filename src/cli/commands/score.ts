/**
 * `fkgqa score RUNS...`: flags → `score` (src/index.ts); writes the report (text, JSON, CSV or HTML)
 * to stdout or `--out`, and the per-run CSV; says on stderr which files it wrote (not with --quiet).
 */
import { checkReportOutputs, writeReportFiles } from '../../common/output.js';
import { score } from '../../index.js';
import { formatPerRunCsv, formatScoreCsv, formatScoreHtml, formatScoreText, viewHref, type ScoreFormatOptions } from '../../score/format.js';
import { stderrProgress, wroteLine } from '../progress.js';
import { readFolders } from '../report-files.js';

export async function run(runs: string[], o: Record<string, any>): Promise<void> {
  const format = o.json ? 'json' : o.format;
  checkReportOutputs(
    [
      { file: o.perRun, option: '--per-run' },
      { file: o.out, option: '--out' },
    ],
    { files: runs, folders: readFolders(o) },
  );
  const progress = stderrProgress(o.quiet);
  const r = await score({ runs, shards: o.shards, state: o.state, timeoutMs: o.timeout, allowOtherBuild: o.allowOtherBuild === true, partial: o.partial === true, progress });
  const fo: ScoreFormatOptions = { paperWithScripted: o.paperWithScripted === true, ...(o.view ? { viewPage: viewHref(o.view, o.out) } : {}) };
  const text = format === 'json' ? JSON.stringify(r, null, 2) + '\n' : format === 'csv' ? formatScoreCsv(r, fo) : format === 'html' ? formatScoreHtml(r, fo) : formatScoreText(r, fo);
  // All or none: the per-run CSV and the report.
  writeReportFiles([...(o.perRun ? [{ file: o.perRun as string, text: formatPerRunCsv(r) }] : []), ...(o.out ? [{ file: o.out as string, text }] : [])]);
  if (!o.out) process.stdout.write(text);
  const written: string[] = [o.perRun, o.out].filter((f): f is string => typeof f === 'string');
  if (written.length > 0) progress?.(wroteLine('score', written));
}
