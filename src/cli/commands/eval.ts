/** `fkgqa eval`: flags → `evaluate` (src/index.ts); prints the summary (text or JSON). */
import { InputError } from '../../common/errors.js';
import type { Setup } from '../../eval/record.js';
import { evaluate } from '../../index.js';
import { stderrProgress } from '../progress.js';

export async function run(o: Record<string, any>): Promise<void> {
  let extraBody: Record<string, unknown> | undefined;
  if (o.extraBody) {
    try {
      extraBody = JSON.parse(o.extraBody) as Record<string, unknown>;
    } catch (e) {
      throw new InputError(`--extra-body is not JSON: ${(e as Error).message}`);
    }
  }
  const questions = (o.question as string[] | undefined)?.map((q) => {
    if (!/^\d+$/.test(q)) throw new InputError(`--question ${q}: not a question index`);
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
    maxRetries: o.maxRetries,
    backoffMs: o.backoff,
    out: o.out,
    kgs: o.kg,
    questions,
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
  });
  if (o.json) process.stdout.write(JSON.stringify(summary, null, 2) + '\n');
  else process.stdout.write(`fkgqa eval: ${summary.ran} runs (${Object.entries(summary.endReasons).map(([k, v]) => `${k} ${v}`).join(', ') || 'none'}), ${summary.skipped} skipped, appended to ${summary.out} in ${(summary.ms / 1000).toFixed(1)} s\n`);
}
