/**
 * `fkgqa eval`: flags → `evaluate` (src/index.ts); prints the summary (text or JSON) and exits 2
 * when runs ran and none succeeded (every one a model or infrastructure error).
 */
import { InputError } from '../../common/errors.js';
import type { EvalSummary } from '../../eval/eval.js';
import type { Setup } from '../../eval/record.js';
import { evaluate } from '../../index.js';
import { outputFormat, extraBodyOption } from '../options.js';
import { stderrProgress } from '../progress.js';

/** The text summary: runs by end reason, and the failed ones by reason with their first error. */
export function formatEvalSummary(s: EvalSummary): string {
  const lines = [`fkgqa eval: ${s.ran} run${s.ran === 1 ? '' : 's'} in ${(s.ms / 1000).toFixed(1)} s, appended to ${s.out}${s.skipped ? ` (${s.skipped} already there: skipped)` : ''}`];
  if (s.repaired) lines.push(`  repaired: ${s.repaired}`);
  if (s.ran) lines.push(`  ended: ${Object.entries(s.endReasons).map(([k, v]) => `${k} ${v}`).join(', ')}`);
  const failed = s.failed.reduce((n, f) => n + f.runs, 0);
  if (failed) {
    lines.push(`  failed: ${failed} of ${s.ran} (not the agent's outcome: never scored; rerun them with --retry-errors)`);
    for (const f of s.failed) lines.push(`    ${f.endReason} ${f.runs}, first ${f.first.id}: ${f.first.error.slice(0, 300)}`);
  }
  return lines.join('\n') + '\n';
}

export async function run(o: Record<string, any>): Promise<void> {
  const format = outputFormat(o);
  const extraBody = extraBodyOption(o.extraBody as string | undefined);
  const questions = (o.question as string[] | undefined)?.map((q) => {
    if (!/^\d+$/.test(q)) throw new InputError(`--question ${q}: not a question index (a whole number; for a gold query id such as library/q3 use --query)`);
    return Number(q);
  });
  const summary = await evaluate({
    shards: o.shards,
    endpoints: o.endpoints,
    state: o.state,
    setup: o.setup as Setup,
    agent: o.agent,
    baseUrl: o.baseUrl,
    model: o.model,
    apiKey: process.env[o.apiKeyEnv],
    temperature: o.agent === 'llm' ? o.temperature : undefined,
    seed: o.seed,
    extraBody,
    maxTurns: o.maxTurns,
    messageLimit: o.messageLimit,
    tokenLimit: o.tokenLimit,
    timeLimitMs: o.timeLimit,
    maxRetries: o.maxRetries,
    backoffMs: o.backoff,
    requestTimeoutMs: o.requestTimeout,
    out: o.out,
    kgs: o.kg,
    questions,
    queries: o.query,
    limit: o.limit,
    perGraph: o.perGraph,
    distinctQueries: !!o.distinctQueries,
    probe: o.probe,
    sampleSeed: o.sampleSeed,
    repeats: o.repeats,
    concurrency: o.concurrency,
    tools: o.tools,
    mcpArgs: o.mcpArg,
    promptsDir: o.prompts,
    timeoutMs: o.timeout,
    maxQueryChars: o.maxQueryChars,
    retryErrors: !!o.retryErrors,
    federationEngine: o.federationEngine,
    progress: stderrProgress(o.quiet),
    warn: (line) => process.stderr.write(`${line}\n`),
  });
  process.stdout.write(format === 'json' ? JSON.stringify(summary, null, 2) + '\n' : formatEvalSummary(summary));
  if (summary.ran > 0 && summary.succeeded === 0) {
    const why = summary.failed.map((f) => `${f.endReason} ${f.runs} (first ${f.first.id}: ${f.first.error.slice(0, 300)})`).join('; ');
    process.stderr.write(`fkgqa: error: no run succeeded: ${why}\n`);
    process.exitCode = 2;
  }
}
