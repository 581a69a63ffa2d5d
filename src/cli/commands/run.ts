/**
 * `fkgqa run`: flags → `runLoop` (src/index.ts); the score report on stdout, the files written on
 * stderr. SIGINT/SIGTERM (Ctrl-C) stop the loop: the serve it started is stopped (endpoints file
 * and lock removed) before the process exits (130/143); the run file keeps the finished runs.
 */
import { extraBodyOption } from '../options.js';
import { InputError } from '../../common/errors.js';
import { runLoop } from '../../index.js';
import { formatScoreText } from '../../score/format.js';
import { stderrProgress } from '../progress.js';

export async function run(o: Record<string, any>): Promise<void> {
  const progress = stderrProgress(o.quiet);
  const extraBody = extraBodyOption(o.extraBody as string | undefined);
  const questions = (o.question as string[] | undefined)?.map((q) => {
    if (!/^\d+$/.test(q)) throw new InputError(`--question ${q}: not a question index`);
    return Number(q);
  });
  const stop = new AbortController();
  const codes: Record<string, number> = { SIGINT: 130, SIGTERM: 143 };
  const on = (sig: NodeJS.Signals) => {
    if (!stop.signal.aborted) stop.abort(sig);
  };
  process.on('SIGINT', on);
  process.on('SIGTERM', on);
  try {
    const r = await runLoop({
      shards: o.shards,
      state: o.state,
      out: o.out,
      setup: o.setup,
      agent: o.agent ?? (o.baseUrl || o.model ? 'llm' : 'oracle'),
      baseUrl: o.baseUrl,
      model: o.model,
      apiKey: process.env[o.apiKeyEnv],
      temperature: o.temperature,
      seed: o.seed,
      extraBody,
      maxTurns: o.maxTurns,
      kgs: o.kg,
      questions,
      perGraph: o.perGraph,
      sampleSeed: o.sampleSeed,
      distinctQueries: !!o.distinctQueries,
      repeats: o.repeats,
      concurrency: o.concurrency,
      probe: o.probe,
      tools: o.tools,
      timeoutMs: o.timeout,
      federationEngine: o.federationEngine,
      maxQueryChars: o.maxQueryChars,
      signal: stop.signal,
      progress,
    });
    process.stdout.write(formatScoreText(r.report));
    progress?.(`fkgqa run: ${r.eval.ran} runs now, ${r.eval.skipped} already in ${r.runFile}; wrote ${Object.values(r.files).join(', ')}`);
    progress?.(`fkgqa run: open ${r.files.view} (runs) and ${r.files.reportHtml} (figures) in a browser`);
  } catch (e) {
    if (stop.signal.aborted) {
      const sig = String(stop.signal.reason);
      process.stderr.write(`fkgqa run: interrupted (${sig}); a serve it started is stopped (a serve that was already running keeps running); finished runs are kept in the run file (run again to resume)\n`);
      process.exit(codes[sig] ?? 130);
    }
    throw e;
  } finally {
    process.off('SIGINT', on);
    process.off('SIGTERM', on);
  }
}
