/**
 * `fkgqa run`: flags → `runLoop` (src/index.ts); the score report on stdout, the files written on
 * stderr. SIGINT/SIGTERM (Ctrl-C) stop the loop: the serve it started is stopped (endpoints file
 * and lock removed) before the process exits (130/143); the run file keeps the finished runs.
 */
import type { Command } from 'commander';
import { agentRunValues } from '../options.js';
import { runLoop } from '../../index.js';
import { formatScoreText } from '../../score/format.js';
import { stderrProgress } from '../progress.js';
import { counted } from '../../common/strings.js';

/**
 * The agent when `--agent` is not given: a model when `--model` is given or `--base-url` is given on
 * the command line; the oracle otherwise (a base URL from OPENAI_BASE_URL alone picks no model).
 */
function defaultAgent(o: Record<string, any>, cmd: Command | undefined): string {
  if (o.agent) return o.agent;
  const urlGiven = o.baseUrl !== undefined && cmd?.getOptionValueSource('baseUrl') === 'cli';
  return o.model || urlGiven ? 'llm' : 'oracle';
}

export async function run(o: Record<string, any>, cmd?: Command): Promise<void> {
  const progress = stderrProgress(o.quiet);
  const shared = agentRunValues(o);
  const stop = new AbortController();
  const codes: Record<string, number> = { SIGINT: 130, SIGTERM: 143 };
  const on = (sig: NodeJS.Signals) => {
    if (!stop.signal.aborted) stop.abort(sig);
  };
  process.on('SIGINT', on);
  process.on('SIGTERM', on);
  try {
    const r = await runLoop({
      ...shared,
      shards: o.shards,
      state: o.state,
      out: o.out,
      port: o.port,
      agent: defaultAgent(o, cmd) as 'llm',
      tools: o.tools,
      signal: stop.signal,
      progress,
    });
    process.stdout.write(formatScoreText(r.report));
    progress?.(`fkgqa run: ${counted(r.eval.ran, 'run')} now, ${r.eval.skipped} already in ${r.runFile}; wrote ${Object.values(r.files).join(', ')}`);
    progress?.(`fkgqa run: open ${r.files.view} (runs) and ${r.files.reportHtml} (figures) in a browser`);
  } catch (e) {
    if (stop.signal.aborted) {
      const sig = String(stop.signal.reason);
      process.stderr.write(
        `fkgqa run: interrupted (${sig}); a serve it started is stopped (a serve that was already running keeps running); finished runs are kept in the run file (run again to resume)\n`,
      );
      process.exit(codes[sig] ?? 130);
    }
    throw e;
  } finally {
    process.off('SIGINT', on);
    process.off('SIGTERM', on);
  }
}
