/**
 * `fkgqa score RUNS...`: flags → `score` (src/index.ts); writes the report (text, JSON, CSV or HTML)
 * to stdout or `--out`, the per-run CSV, and with `--html FILE` (stats's spelling) also the HTML report;
 * says on stderr which files it wrote (not with --quiet).
 */
import { checkReportOutputs, writeFileAtomic } from '../../common/output.js';
import { score } from '../../index.js';
import { formatPerRunCsv, formatScoreCsv, formatScoreHtml, formatScoreText, viewHref, type ScoreFormatOptions } from '../../score/format.js';
import { stderrProgress, wroteLine } from '../progress.js';

export async function run(runs: string[], o: Record<string, any>): Promise<void> {
  const format = o.json ? 'json' : o.format;
  checkReportOutputs(
    [
      { file: o.html, option: '--html' },
      { file: o.perRun, option: '--per-run' },
      { file: o.out, option: '--out' },
    ],
    { files: runs, folders: [o.shards, o.state] },
  );
  const progress = stderrProgress(o.quiet);
  const r = await score({ runs, shards: o.shards, state: o.state, timeoutMs: o.timeout, allowOtherBuild: o.allowOtherBuild === true, partial: o.partial === true, progress });
  const fo: ScoreFormatOptions = { paperWithScripted: o.paperWithScripted === true, ...(o.view ? { viewPage: viewHref(o.view, o.out) } : {}) };
  const text = format === 'json' ? JSON.stringify(r, null, 2) + '\n' : format === 'csv' ? formatScoreCsv(r, fo) : format === 'html' ? formatScoreHtml(r, fo) : formatScoreText(r, fo);
  if (o.perRun) writeFileAtomic(o.perRun, formatPerRunCsv(r));
  if (o.html) writeFileAtomic(o.html, format === 'html' ? text : formatScoreHtml(r));
  if (o.out) writeFileAtomic(o.out, text);
  else process.stdout.write(text);
  const written: string[] = [o.html, o.perRun, o.out].filter((f): f is string => typeof f === 'string');
  if (written.length > 0) progress?.(wroteLine('score', written));
}
