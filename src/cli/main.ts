import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command, InvalidArgumentError, Option } from 'commander';
import { InputError } from '../common/errors.js';
import { DEFAULT_PARTITION_OPTIONS, partition } from '../partition.js';
import { formatPartitionSummary, summarizePartition } from '../report/partition-summary.js';
import { registerServeCommands } from './serve.js';
import { TOOL } from '../version.js';

/** The demo dataset shipped with the package (authored for fkgqa, not copied from Spider). */
export const DEMO_SOURCE = fileURLToPath(new URL('../../datasets/demo', import.meta.url));

const integer = (name: string, min: number, max = Number.MAX_SAFE_INTEGER) => (v: string) => {
  const n = Number(v);
  if (!/^\d+$/.test(v.trim()) || !Number.isSafeInteger(n) || n < min || n > max) {
    throw new InvalidArgumentError(`${name} must be an integer from ${min} to ${max}`);
  }
  return n;
};

/** Builds the `fkgqa` command line (a thin layer over the library API). */
export function program(): Command {
  const cli = new Command('fkgqa')
    .description('Build and serve the federated knowledge-graph question-answering benchmark (FKGQA).')
    .version(TOOL.version)
    .showHelpAfterError();

  cli
    .command('partition')
    .description(
      'Split every knowledge graph into shards so that each gold query needs at least two SPARQL endpoints ' +
        '(section 4 of the FKGQA paper). With no options, builds the demo dataset into ./shards.',
    )
    .option('--source <dir>', 'benchmark source directory: dev.json (or a kg_name,question,query CSV), kg/<name>.nt|.ttl|.rdf, ontologies/<name>.owl|.ttl', DEMO_SOURCE)
    .option('--out <dir>', 'output directory; replaced only when the whole build succeeds', 'shards')
    .option('--questions <file>', 'questions file (JSON or CSV) if not dev.json/questions.json/dev.csv/questions.csv in the source')
    .option('--kg <name...>', 'build only these knowledge graphs')
    .addOption(new Option('--buckets <n>', 'buckets per horizontal (subject-hash) sharding').argParser(integer('--buckets', 2, 1024)).default(DEFAULT_PARTITION_OPTIONS.buckets))
    .addOption(new Option('--seed <n>', 'seed of the xxh64 subject hash and of the shard numbering').argParser(integer('--seed', 0)).default(DEFAULT_PARTITION_OPTIONS.seed))
    .option('--default-prefix <iri>', 'IRI of the undeclared ":" prefix in the gold queries', DEFAULT_PARTITION_OPTIONS.defaultPrefix)
    .addOption(
      new Option('--solver-timeout <ms>', 'time limit of each ASP solve; on timeout the best rule set found is used and marked not optimal')
        .argParser(integer('--solver-timeout', 1))
        .default(DEFAULT_PARTITION_OPTIONS.solverTimeoutMs),
    )
    .option('--json', 'print the summary as JSON on stdout')
    .option('-q, --quiet', 'no progress on stderr')
    .action(async (o) => {
      const result = await partition({
        source: o.source,
        out: o.out,
        questions: o.questions,
        kgs: o.kg,
        buckets: o.buckets,
        seed: o.seed,
        defaultPrefix: o.defaultPrefix,
        solverTimeoutMs: o.solverTimeout,
        progress: o.quiet ? undefined : (line) => process.stderr.write(`${line}\n`),
      });
      for (const w of result.warnings) if (!o.quiet) process.stderr.write(`warning: ${w}\n`);
      const summary = summarizePartition(result);
      if (o.json) process.stdout.write(JSON.stringify({ out: path.resolve(result.out), summary, warnings: result.warnings }, null, 2) + '\n');
      else process.stdout.write(formatPartitionSummary(summary) + `\nShards written to ${result.out}/ in ${(result.timings.totalMs / 1000).toFixed(1)} s\n`);
      if (summary.guarantees.determinism.status === 'DIFFERENT') process.exitCode = 1;
    });

  registerServeCommands(cli, integer);
  return cli;
}

/** Runs the CLI; bad input exits with code 2 and a message naming the file, line or option. */
export async function main(argv: string[]): Promise<void> {
  try {
    await program().parseAsync(argv);
  } catch (e) {
    if (e instanceof InputError) {
      process.stderr.write(`fkgqa: error: ${e.message}\n`);
      process.exitCode = 2;
    } else {
      process.stderr.write(`fkgqa: internal error: ${process.env.FKGQA_DEBUG ? (e as Error).stack : (e as Error).message}\n`);
      process.exitCode = 1;
    }
  }
}
