/**
 * `fkgqa worker`: flags → `worker` (src/index.ts). Stops taking runs on SIGINT/SIGTERM (the runs in
 * progress finish and are sent; a second signal exits at once, the runs in progress are then taken
 * over by other workers) and exits 2 when it refused a run.
 */
import { worker } from '../../index.js';
import { stderrProgress } from '../progress.js';

export async function run(o: Record<string, any>): Promise<void> {
  const stop = new AbortController();
  let signals = 0;
  const onSignal = (sig: NodeJS.Signals) => {
    signals++;
    if (signals > 1) {
      process.stderr.write(`fkgqa worker: ${sig} again: exiting now; the runs in progress go back to the queue when their locks expire\n`);
      process.exit(sig === 'SIGINT' ? 130 : 143);
    }
    process.stderr.write(`fkgqa worker: ${sig}: taking no more runs; the runs in progress finish first (send it again to exit now)\n`);
    stop.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    const summary = await worker({
      queue: o.queue,
      shards: o.shards,
      endpoints: o.endpoints,
      state: o.state,
      promptsDir: o.prompts,
      baseUrl: o.baseUrl,
      apiKey: process.env[o.apiKeyEnv],
      concurrency: o.concurrency,
      rate: o.rate,
      lockDurationMs: o.lockDuration,
      signal: stop.signal,
      progress: stderrProgress(o.quiet),
      warn: (line) => process.stderr.write(`${line}\n`),
    });
    process.stderr.write(`fkgqa worker: ${summary.runs} run${summary.runs === 1 ? '' : 's'} made and sent in ${(summary.ms / 1000).toFixed(1)} s\n`);
    if (summary.refused) {
      process.stderr.write(`fkgqa: error: this worker refused a run: ${summary.refused}\n`);
      process.exitCode = 2;
    }
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
