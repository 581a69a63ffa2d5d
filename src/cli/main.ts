import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { InputError } from '../common/errors.js';
import { discardAllStaged, hasStaged } from '../common/output.js';
import { describeBuild } from '../describe/index.js';
import { DEFAULT_PARTITION_OPTIONS, partition } from '../partition/index.js';
import { PRESETS, resolveMethodOptions, type MethodOptions } from '../partition/presets.js';
import { formatStatsHtml } from '../report/html.js';
import { formatPartitionSummary, summarizePartition } from '../report/partition-summary.js';
import { computeStats } from '../report/stats.js';
import { formatQuestionsText, questionViews } from '../report/questions.js';
import { comparePaper, formatPerQueryCsv, formatStatsCsv, formatStatsMarkdown, formatStatsText } from '../report/stats-format.js';
import { synthesize } from '../synth/replicate.js';
import { registerMcpCommand } from './mcp.js';
import { registerServeCommands } from './serve.js';
import { registerEvalCommands } from './eval.js';
import { TOOL } from '../common/version.js';
import { stderrProgress } from './progress.js';
import { engineAliasOption, formatOption, jsonOption, outputFormat, voidEngine, voidEngineOption } from './options.js';

/** The demo dataset shipped with the package (authored for fkgqa, not copied from Spider). */
export const DEMO_SOURCE = fileURLToPath(new URL('../../datasets/demo', import.meta.url));

const integer = (name: string, min: number, max = Number.MAX_SAFE_INTEGER) => (v: string) => {
  const n = Number(v);
  if (!/^\d+$/.test(v.trim()) || !Number.isSafeInteger(n) || n < min || n > max) {
    throw new InvalidArgumentError(`${name} must be an integer from ${min} to ${max}`);
  }
  return n;
};

/** Help text of `--endpoint-base`, shared by partition and describe. */
const ENDPOINT_BASE_HELP = 'base URL of the shard endpoints: VoID and catalogue get <url>/<kg>-shard<N>/sparql';

/** Help text of `--void-engine`, shared by partition and describe. */
const VOID_ENGINE_HELP =
  'VoID statistics from SPARQL queries on an in-process store (sparql), from streaming the shard files (stream), or sparql up to 500,000 triples per graph and stream above (auto)';

/** Checks, before any work, that a report file can be written: its folder exists and it is not a folder. */
function checkOutputFile(file: string): void {
  const dir = path.dirname(path.resolve(file));
  if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) throw new InputError('the folder of this output file does not exist', { file });
  if (fs.existsSync(file) && fs.statSync(file).isDirectory()) throw new InputError('is a directory, not a file', { file });
}

/** The exit codes of each command, shown at the end of its help (verify documents its own in src/cli/serve.ts). */
const EXIT_CODES: Record<string, string> = {
  partition: '0 built, 1 built but a rebuild with the same inputs gave other bytes (determinism check), 2 bad input (named file, line or option; the previous build is left as it was), 3 internal error.',
  stats: '0 reported, 2 bad input (a build that does not check: named file and what is wrong), 3 internal error.',
  synth: '0 written, 2 bad input, 3 internal error.',
  describe: '0 written, 2 bad input (a build that does not check: named file and what is wrong), 3 internal error.',
  serve: '0 stopped by SIGINT/SIGTERM, 2 bad input (a build that does not check, bad profiles or options), 3 internal error.',
};

/** Builds the `fkgqa` command line (a thin layer over the library API). */
export function program(): Command {
  const cli = new Command('fkgqa')
    .description('Build and serve the federated knowledge-graph question-answering benchmark (FKGQA).')
    .version(TOOL.version)
    .showHelpAfterError('(add --help for the options)')
    .exitOverride();

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
    .addOption(
      new Option('--seed <n>', 'seed of the xxh64 subject hash (the bucket of every subject; a class whose instances all fall into one bucket cannot be split horizontally, so the seed can change the chosen rules) and of the shard numbering')
        .argParser(integer('--seed', 0))
        .default(DEFAULT_PARTITION_OPTIONS.seed),
    )
    .option('--default-prefix <iri>', 'IRI of the undeclared ":" prefix in the gold queries', DEFAULT_PARTITION_OPTIONS.defaultPrefix)
    .addOption(
      new Option('--solver-timeout <ms>', 'time limit of each ASP solve; on timeout the best rule set found is used and marked not optimal')
        .argParser(integer('--solver-timeout', 1))
        .default(DEFAULT_PARTITION_OPTIONS.solverTimeoutMs),
    )
    .addOption(
      new Option('--layout <layout>', 'compact: the fewest shards that realise every rule; separate: a shard per predicate, class and horizontal class of the rules (the paper\'s literal reading)')
        .choices(['compact', 'separate'])
        .default(DEFAULT_PARTITION_OPTIONS.layout),
    )
    .option('--expression-patterns', 'T(q) includes triple patterns inside FILTER/BIND/HAVING expressions (the default; overrides a preset)')
    .option('--class-inference', 'C(q) also from rdfs:domain/rdfs:range (the default; overrides a preset)')
    .option('--no-expression-patterns', "T(q) leaves out triple patterns inside FILTER/BIND/HAVING expressions (with --no-class-inference: the paper's published applicability figures)")
    .option('--no-class-inference', 'C(q) from explicit rdf:type patterns only, not from rdfs:domain/rdfs:range')
    .addOption(
      new Option('--horizontal-candidates <which>', 'unless-class: horizontal candidates only for queries to which class sharding does not apply (section 4.1 as written); every-query: for every query to which horizontal sharding applies')
        .choices(['unless-class', 'every-query'])
        .default(DEFAULT_PARTITION_OPTIONS.horizontalCandidates),
    )
    .addOption(
      new Option('--predicate-candidates <which>', 'all-pairs: every pair of P(q), rdf:type included; no-rdf-type: only pairs of two predicates other than rdf:type')
        .choices(['all-pairs', 'no-rdf-type'])
        .default(DEFAULT_PARTITION_OPTIONS.predicateCandidates),
    )
    .addOption(
      new Option('--horizontal-placement <where>', 'own-buckets: each horizontal class (group) gets --buckets shards of its own; all-shards: its instances are hashed over every shard holding whole subjects (base and class shards, but those of classes a class rule separates from it), at least --buckets; every-shard: over every shard, predicate shards included, with no exclusions (rules can then fail)')
        .choices(['own-buckets', 'all-shards', 'every-shard'])
        .default(DEFAULT_PARTITION_OPTIONS.horizontalPlacement),
    )
    .addOption(
      new Option('--preset <name>', `a named set of the method options above (${Object.entries(PRESETS).map(([k, p]) => `${k}: ${p.description}`).join('; ')}); options given explicitly override it`).choices(
        Object.keys(PRESETS),
      ),
    )
    .option('--no-void', 'do not write the VoID of the shards nor the catalogue')
    .addOption(voidEngineOption(VOID_ENGINE_HELP))
    .option('--endpoint-base <url>', ENDPOINT_BASE_HELP)
    .addOption(formatOption(['text', 'json'], 'the summary on stdout as text or JSON (default: text)'))
    .addOption(jsonOption())
    .option('-q, --quiet', 'no progress on stderr')
    .action(async (o, cmd: Command) => {
      const format = outputFormat(o);
      // An option given on the command line overrides the preset; a default does not.
      const explicit = (key: keyof MethodOptions) => (cmd.getOptionValueSource(key) === 'cli' ? o[key] : undefined);
      const method = resolveMethodOptions(o.preset, {
        buckets: explicit('buckets'),
        layout: explicit('layout'),
        expressionPatterns: explicit('expressionPatterns'),
        classInference: explicit('classInference'),
        horizontalCandidates: explicit('horizontalCandidates'),
        horizontalPlacement: explicit('horizontalPlacement'),
        predicateCandidates: explicit('predicateCandidates'),
      });
      const result = await partition({
        ...method.options,
        ...(method.preset ? { preset: method.preset } : {}),
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
          ? `Shards, their VoID (${described.length * 2} files, ${described.reduce((n, d) => n + d.linksets.length, 0)} linksets) and the catalogue`
          : 'Shards';
        process.stdout.write(formatPartitionSummary(summary) + `\n${what} written to ${result.out}/ in ${(result.timings.totalMs / 1000).toFixed(1)} s\n`);
      }
      if (summary.guarantees.determinism.status === 'DIFFERENT') process.exitCode = 1;
    });

  cli
    .command('stats')
    .description(
      'Report a build: gold answers on the unsharded graphs, implied and realised fan-out, shards, rules and ' +
        'applicability (section 4.2 of the FKGQA paper). Gold answers and realised fan-out are stored in the state folder ' +
        '(<state>/gold-answers/<kg>.json, <state>/realised-fan-out/<kg>.json); the build is not written.',
    )
    .option('--shards <dir>', 'build directory written by fkgqa partition', 'shards')
    .option('--state <dir>', 'state folder for stored gold answers and realised fan-out (default: <shards>.state beside the build)')
    .option('--kg <name...>', 'only these knowledge graphs')
    .addOption(formatOption(['text', 'json', 'csv', 'markdown'], 'output format: text, json, csv or markdown (default: text)'))
    .addOption(jsonOption())
    .option('--compare-paper', "a table with one row per figure: the paper's value, this build's, the difference")
    .option('--per-query <file>', 'write one CSV row per distinct query to FILE')
    .option('--html <file>', 'write a self-contained HTML report with charts to FILE')
    .addOption(new Option('--timeout <ms>', 'time limit per query (gold answers and provenance); a timed-out query is reported as such').argParser(integer('--timeout', 1)).default(60_000))
    .option('--recompute', 'recompute gold answers even if stored ones match the build')
    .option('-q, --quiet', 'no progress on stderr')
    .action(async (o) => {
      const format = outputFormat(o);
      for (const f of [o.perQuery, o.html]) if (f) checkOutputFile(f);
      const stats = await computeStats({
        shards: o.shards,
        kgs: o.kg,
        timeoutMs: o.timeout,
        recompute: o.recompute,
        state: o.state,
        progress: stderrProgress(o.quiet),
      });
      if (o.perQuery) fs.writeFileSync(o.perQuery, formatPerQueryCsv(stats));
      if (o.html) fs.writeFileSync(o.html, formatStatsHtml(stats));
      const paper = Boolean(o.comparePaper);
      let text: string;
      if (format === 'json') text = JSON.stringify(paper ? { ...stats, comparison: comparePaper(stats.figures) } : stats, null, 2) + '\n';
      else if (format === 'csv') text = formatStatsCsv(stats, paper);
      else if (format === 'markdown') text = formatStatsMarkdown(stats, paper);
      else text = formatStatsText(stats, paper);
      process.stdout.write(text);
    });

  cli
    .command('questions')
    .description(
      'Show each question of a build: the question, its gold query, the shards its answer needs (realised: shards whose triples a ' +
        'solution uses) and the shards that may match (implied: shards with a triple matching some triple pattern), and its gold ' +
        'answer (rows and a preview). Needed shards and answers come from what fkgqa stats stored for the build, or are computed now.',
    )
    .option('--shards <dir>', 'build directory written by fkgqa partition', 'shards')
    .option('--kg <name...>', 'only the questions of these knowledge graphs')
    .option('--query <id...>', 'only the questions asking these gold queries (<kg>/q<N>)')
    .addOption(formatOption(['text', 'json'], 'text (one block per question) or json (the benchmark.json entries with shardsNeeded and answer; default: text)'))
    .addOption(jsonOption())
    .option('--state <dir>', 'state folder where fkgqa stats stored gold answers and realised fan-out (default: <shards>.state beside the build)')
    .addOption(new Option('--rows <n>', 'rows of each gold answer to show').argParser(integer('--rows', 0)).default(5))
    .addOption(new Option('--timeout <ms>', 'time limit per query when answers and needed shards are computed here').argParser(integer('--timeout', 1)).default(60_000))
    .option('-q, --quiet', 'no progress on stderr')
    .action(async (o) => {
      const format = outputFormat(o);
      const views = await questionViews({ shards: o.shards, state: o.state, kgs: o.kg, queries: o.query, timeoutMs: o.timeout, previewRows: o.rows, progress: stderrProgress(o.quiet) });
      process.stdout.write(format === 'json' ? JSON.stringify(views, null, 2) + '\n' : formatQuestionsText(views));
    });

  cli
    .command('synth')
    .description(
      'Make a Spider-like benchmark source of a given size by replicating one graph with renamed instances ' +
        '(for scale tests): writes dev.json with the graph\'s questions, kg/<kg>.nt and its ontology.',
    )
    .requiredOption('--source <dir>', 'benchmark source directory holding the graph')
    .requiredOption('--kg <name>', 'graph to replicate')
    .addOption(new Option('--triples <n>', 'triples of the synthetic graph').argParser(integer('--triples', 1)).makeOptionMandatory())
    .addOption(new Option('--seed <n>', 'seed of the perturbation of numeric literals in the copies').argParser(integer('--seed', 0)).default(0))
    .requiredOption('--out <dir>', 'output source directory')
    .option('-q, --quiet', 'no progress on stderr')
    .action(async (o) => {
      const r = await synthesize({
        source: o.source,
        kg: o.kg,
        triples: o.triples,
        seed: o.seed,
        out: o.out,
        progress: stderrProgress(o.quiet),
      });
      process.stdout.write(`${r.file}: ${r.triples} triples (${r.copies} copies of ${r.baseTriples}), ${r.questions} questions\n`);
    });

  cli
    .command('describe')
    .description(
      'Compute the VoID of every shard of an existing build (standard and extended, with linksets) and the catalogue ' +
        '(catalogue.json, catalogue.ttl) with SPARQL 1.1 aggregate queries, and write them into the build.',
    )
    .option('--shards <dir>', 'the build directory written by fkgqa partition', 'shards')
    .option('--endpoint-base <url>', ENDPOINT_BASE_HELP)
    .addOption(voidEngineOption(`without --sparql: ${VOID_ENGINE_HELP}`))
    .addOption(engineAliasOption())
    .option('--sparql <url>', 'compute through this SPARQL endpoint, which holds every shard as the named graph urn:fkgqa:void:<kg>:shard<N>, instead of an in-process store')
    .addOption(formatOption(['text', 'json'], 'the summary on stdout as text or JSON (default: text)'))
    .addOption(jsonOption())
    .option('-q, --quiet', 'no progress on stderr')
    .action(async (o) => {
      const format = outputFormat(o);
      const r = await describeBuild({
        dir: o.shards,
        endpointBase: o.endpointBase,
        sparql: o.sparql,
        engine: voidEngine(o),
        progress: stderrProgress(o.quiet),
      });
      const summary = { dir: path.resolve(o.shards), graphs: r.graphs, shards: r.shards, linksets: r.linksets, voidBytes: r.voidBytes, files: r.files.length, ms: r.timings.totalMs };
      if (format === 'json') process.stdout.write(JSON.stringify(summary, null, 2) + '\n');
      else {
        process.stdout.write(
          `fkgqa describe: ${r.graphs} graphs, ${r.shards} shards, ${r.linksets} linksets; ` +
            `${r.shards * 2} VoID files (${(r.voidBytes / 1024).toFixed(0)} KiB) and the catalogue written to ${o.shards}/ in ${(r.timings.totalMs / 1000).toFixed(1)} s\n`,
        );
      }
    });

  registerServeCommands(cli, integer);
  registerEvalCommands(cli, integer);
  registerMcpCommand(cli, integer);
  for (const c of cli.commands) {
    const codes = EXIT_CODES[c.name()];
    if (codes) c.addHelpText('after', `\nExit codes: ${codes}`);
  }
  cli.addHelpText('after', `\nExit codes of every command: 0 success, 1 a real difference found (verify, partition's determinism check), 2 bad input (named file, line, query or option) or unreachable endpoints, 3 internal error (a bug: please report it). See docs/robustness.md.`);
  return cli;
}

/** Runs the CLI; bad input exits with code 2 and a message naming the file, line or option; a bug exits with 3. */
export async function main(argv: string[]): Promise<void> {
  // Interrupted: remove staging directories (nothing half-written stays), then exit as signalled.
  let interrupted = false;
  for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143]] as const) {
    process.on(signal, () => {
      if (interrupted) return; // a repeated signal while cleaning up
      // A command with its own handler (fkgqa serve closes its endpoints) and nothing staged: leave it to that.
      if (!hasStaged() && process.listenerCount(signal) > 1) return;
      interrupted = true;
      discardAllStaged();
      process.stderr.write(`fkgqa: interrupted (${signal}); nothing was written\n`);
      process.exit(code);
    });
  }
  try {
    await program().parseAsync(argv);
  } catch (e) {
    if (e instanceof CommanderError) {
      // Commander has printed its message; usage errors are bad input (2), --help and --version are not errors.
      process.exitCode = e.code === 'commander.helpDisplayed' || e.code === 'commander.version' || e.code === 'commander.help' ? 0 : 2;
    } else if (e instanceof InputError) {
      process.stderr.write(`fkgqa: error: ${e.message}\n`);
      process.exitCode = 2;
    } else {
      process.stderr.write(`fkgqa: internal error: ${process.env.FKGQA_DEBUG ? (e as Error).stack : (e as Error).message}\n`);
      process.exitCode = 3; // not 1, which means "a real difference found"
    }
  }
}
