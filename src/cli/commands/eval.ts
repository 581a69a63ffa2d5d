/**
 * `fkgqa eval`: flags → `evaluate` (src/index.ts); prints the summary (text or JSON) and exits 2
 * when runs ran and none succeeded (every one a model or infrastructure error).
 */
import type { EvalSummary } from '../../eval/eval.js';
import { evaluate } from '../../index.js';
import { agentRunValues, outputFormat } from '../options.js';
import { stderrProgress } from '../progress.js';
import { counted } from '../../common/strings.js';

/** The text summary: runs by end reason, and the failed ones by reason with their first error. */
function formatEvalSummary(s: EvalSummary): string {
  const lines = [`fkgqa eval: ${s.ran} run${s.ran === 1 ? '' : 's'} in ${(s.ms / 1000).toFixed(1)} s, appended to ${s.out}${s.skipped ? ` (${s.skipped} already there: skipped)` : ''}`];
  if (s.repaired) lines.push(`  repaired: ${s.repaired}`);
  if (s.lost?.length) lines.push(`  lost: ${counted(s.lost.length, 'run')} no worker could make (not in the file; the same command queues them again)`);
  if (s.ran)
    lines.push(
      `  ended: ${Object.entries(s.endReasons)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')}`,
    );
  const failed = s.failed.reduce((n, f) => n + f.runs, 0);
  if (failed) {
    lines.push(`  failed: ${failed} of ${s.ran} (not the agent's outcome: never scored; rerun them with --retry-errors)`);
    for (const f of s.failed) lines.push(`    ${f.endReason} ${f.runs}, first ${f.first.id}: ${f.first.error.slice(0, 300)}`);
  }
  return lines.join('\n') + '\n';
}

export async function run(o: Record<string, any>): Promise<void> {
  const format = outputFormat(o);
  const shared = agentRunValues(o);
  const summary = await evaluate({
    ...shared,
    shards: o.shards,
    endpoints: o.endpoints,
    state: o.state,
    out: o.out,
    agent: o.agent,
    temperature: o.agent === 'llm' ? shared.temperature : undefined,
    tools: o.tools,
    part: o.part,
    queue: o.queue,
    progress: stderrProgress(o.quiet),
    warn: (line) => process.stderr.write(`${line}\n`),
  });
  process.stdout.write(format === 'json' ? JSON.stringify(summary, null, 2) + '\n' : formatEvalSummary(summary));
  if (summary.lost?.length) {
    process.stderr.write(
      `fkgqa: error: ${summary.lost.length} run${summary.lost.length === 1 ? '' : 's'} no worker could make (first ${summary.lost[0].id}: ${summary.lost[0].error.slice(0, 300)}): not in ${summary.out}; the same command queues them again\n`,
    );
    process.exitCode = 3;
  } else if (summary.ran > 0 && summary.succeeded === 0) {
    const why = summary.failed.map((f) => `${f.endReason} ${f.runs} (first ${f.first.id}: ${f.first.error.slice(0, 300)})`).join('; ');
    process.stderr.write(`fkgqa: error: no run succeeded: ${why}\n`);
    process.exitCode = 2;
  }
}
