/**
 * The `eval` and `score` commands: a thin layer over `runEval` (src/eval/eval.ts) and `score`
 * (src/score/score.ts).
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import { InputError } from '../common/errors.js';
import { SCRIPTED_AGENTS } from '../eval/agents.js';
import { runEval } from '../eval/eval.js';
import { SETUPS, type Setup } from '../eval/record.js';
import { formatPerRunCsv, formatScoreCsv, formatScoreHtml, formatScoreText } from '../score/format.js';
import { score } from '../score/score.js';
import { stderrProgress } from './progress.js';
import { writeFileAtomic } from '../common/output.js';

type IntegerParser = (name: string, min: number, max?: number) => (v: string) => number;

const number = (name: string) => (v: string) => {
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n)) throw new InvalidArgumentError(`${name} must be a number`);
  return n;
};

/** Registers `fkgqa eval` and `fkgqa score`. */
export function registerEvalCommands(cli: Command, integer: IntegerParser): void {
  cli
    .command('eval')
    .description(
      'Run agents on the benchmark (section 5 of the FKGQA paper): a model behind an OpenAI-compatible chat-completions API ' +
        'with tool calling, or a scripted agent, with the tools of fkgqa mcp (stdio) plus submit_final_query and cancel; ' +
        'at most 10 turns per run; one JSON line per run appended to --out (runs already there are skipped).',
    )
    .option('--shards <dir>', 'the build served by fkgqa serve', 'shards')
    .option('--endpoints <file>', 'endpoints.json of the running fkgqa serve (default: the state folder\'s, else the build\'s)')
    .option('--state <dir>', 'state folder of the build (default <build>.state)')
    .addOption(new Option('--setup <setup>', 'tools and endpoint information given to the agent').choices([...SETUPS]).default('baseline'))
    .addOption(new Option('--agent <agent>', 'llm (needs --base-url and --model) or a scripted agent').choices(['llm', ...SCRIPTED_AGENTS]).default('llm'))
    .option('--base-url <url>', 'OpenAI-compatible API base URL, e.g. http://127.0.0.1:8080/v1')
    .option('--model <name>', 'model name sent to the API')
    .option('--api-key-env <name>', 'environment variable holding the API key (none needed for local servers)', 'OPENAI_API_KEY')
    .addOption(new Option('--temperature <t>', 'sampling temperature (recorded)').argParser(number('--temperature')).default(0))
    .addOption(new Option('--seed <n>', 'sampling seed sent to the API (recorded)').argParser(integer('--seed', 0)))
    .option('--extra-body <json>', 'extra JSON fields for every API request, e.g. \'{"reasoning_effort":"low"}\'')
    .addOption(new Option('--max-turns <n>', 'LLM calls per run').argParser(integer('--max-turns', 1, 100)).default(10))
    .addOption(new Option('--max-retries <n>', 'retries of an LLM call on 429/5xx/network errors').argParser(integer('--max-retries', 0, 20)).default(5))
    .addOption(new Option('--backoff <ms>', 'first retry wait, doubled per retry (Retry-After wins)').argParser(integer('--backoff', 0)).default(1000))
    .requiredOption('--out <file>', 'run file (JSON lines), appended to')
    .option('--kg <name...>', 'only questions of these graphs')
    .option('--question <index...>', 'only these questions (benchmark.json index)')
    .option('--distinct-queries', 'one question per distinct gold query (the first asking it)')
    .option('--no-probe', 'scripted agents submit at once instead of running their query first')
    .addOption(new Option('--per-graph <n>', 'at most N questions per graph, sampled with --sample-seed').argParser(integer('--per-graph', 1)))
    .addOption(new Option('--sample-seed <n>', 'seed of the per-graph sample').argParser(integer('--sample-seed', 0)).default(0))
    .addOption(new Option('--repeats <n>', 'runs per question').argParser(integer('--repeats', 1, 100)).default(1))
    .addOption(new Option('--concurrency <n>', 'runs at once').argParser(integer('--concurrency', 1, 64)).default(1))
    .addOption(new Option('--tools <source>', 'mcp: spawn fkgqa mcp over stdio per run (what a user runs); in-process: the same server built in this process').choices(['mcp', 'in-process']).default('mcp'))
    .option('--mcp-arg <arg...>', 'extra arguments for fkgqa mcp')
    .option('--prompts <dir>', 'folder of <setup>.md prompt files (default: the shipped prompts/)')
    .addOption(new Option('--timeout <ms>', 'time limit of one query (tools and the final answer)').argParser(integer('--timeout', 1)).default(30_000))
    .addOption(new Option('--max-query-chars <n>', 'longest query accepted by run_sparql_query and the final execution (the reference server: 8000)').argParser(integer('--max-query-chars', 1)).default(8000))
    .option('--retry-errors', 'rerun runs that ended with a model error')
    .option('--json', 'print the summary as JSON')
    .option('-q, --quiet', 'no progress on stderr')
    .action(async (o) => {
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
      const summary = await runEval({
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
        progress: stderrProgress(o.quiet),
      });
      if (o.json) process.stdout.write(JSON.stringify(summary, null, 2) + '\n');
      else process.stdout.write(`fkgqa eval: ${summary.ran} runs (${Object.entries(summary.endReasons).map(([k, v]) => `${k} ${v}`).join(', ') || 'none'}), ${summary.skipped} skipped, appended to ${summary.out} in ${(summary.ms / 1000).toFixed(1)} s\n`);
    });

  cli
    .command('score')
    .description(
      'Score run files of fkgqa eval against the build\'s gold answers (section 6 of the FKGQA paper): accuracy, F1 (GRASP and ' +
        'Spinach), syntactic validity, endpoint consultation, trivial federation, tokens, calls and runtime, beside the paper\'s figures.',
    )
    .argument('<runs...>', 'run files (JSON lines)')
    .option('--shards <dir>', 'the build the runs were made on', 'shards')
    .option('--state <dir>', 'state folder of the build (default <build>.state)')
    .addOption(new Option('--format <format>', 'output format').choices(['text', 'json', 'csv', 'html']).default('text'))
    .option('--json', 'shorthand for --format json')
    .option('--out <file>', 'write the report to FILE instead of stdout')
    .option('--per-run <file>', 'also write one CSV row per run to FILE')
    .addOption(new Option('--timeout <ms>', 'time limit of the key query that decides ties under ORDER BY').argParser(integer('--timeout', 1)).default(60_000))
    .option('-q, --quiet', 'no progress on stderr')
    .action(async (runs: string[], o) => {
      const format = o.json ? 'json' : o.format;
      const r = await score({ runs, shards: o.shards, state: o.state, timeoutMs: o.timeout, progress: stderrProgress(o.quiet) });
      const text = format === 'json' ? JSON.stringify(r, null, 2) + '\n' : format === 'csv' ? formatScoreCsv(r) : format === 'html' ? formatScoreHtml(r) : formatScoreText(r);
      if (o.perRun) writeFileAtomic(o.perRun, formatPerRunCsv(r));
      if (o.out) writeFileAtomic(o.out, text);
      else process.stdout.write(text);
    });
}
