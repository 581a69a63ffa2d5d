/** `fkgqa partition`: flags → `partition` (src/index.ts); prints the summary (text or JSON). */
import path from 'node:path';
import type { Command } from 'commander';
import { partition } from '../../index.js';
import type { MethodOptions } from '../../partition/presets.js';
import { formatPartitionSummary, summarizePartition } from '../../report/partition-summary.js';
import { outputFormat, voidEngine } from '../options.js';
import { stderrProgress } from '../progress.js';
import { counted } from '../../common/strings.js';

export async function run(o: Record<string, any>, cmd: Command): Promise<void> {
  const format = outputFormat(o);
  // An option given on the command line overrides the preset; a default does not.
  const explicit = (key: keyof MethodOptions) => (cmd.getOptionValueSource(key) === 'cli' ? o[key] : undefined);
  const result = await partition({
    preset: o.preset,
    buckets: explicit('buckets'),
    layout: explicit('layout'),
    expressionPatterns: explicit('expressionPatterns'),
    classInference: explicit('classInference'),
    horizontalCandidates: explicit('horizontalCandidates'),
    horizontalPlacement: explicit('horizontalPlacement'),
    predicateCandidates: explicit('predicateCandidates'),
    source: o.source,
    out: o.out,
    questions: o.questions,
    kgs: o.kg,
    seed: o.seed,
    defaultPrefix: o.defaultPrefix,
    solverTimeoutMs: o.solverTimeout,
    void: o.void,
    voidEngine: voidEngine(o),
    endpointBase: o.endpointBase,
    progress: stderrProgress(o.quiet),
  });
  for (const w of result.warnings) if (!o.quiet) process.stderr.write(`warning: ${w}\n`);
  const summary = summarizePartition(result);
  if (format === 'json') process.stdout.write(JSON.stringify({ out: path.resolve(result.out), summary, warnings: result.warnings }, null, 2) + '\n');
  else {
    const described = result.graphs.flatMap((g) => g.descriptions);
    const what = described.length
      ? `Shards, their VoID (${counted(described.length * 2, 'file')}, ${counted(
          described.reduce((n, d) => n + d.linksets.length, 0),
          'linkset',
        )}) and the catalogue`
      : 'Shards';
    process.stdout.write(formatPartitionSummary(summary, { verbose: !!o.verbose, out: result.out }) + `\n${what} written to ${result.out}/ in ${(result.timings.totalMs / 1000).toFixed(1)} s\n`);
  }
  if (summary.guarantees.determinism.status === 'DIFFERENT') process.exitCode = 1;
}
