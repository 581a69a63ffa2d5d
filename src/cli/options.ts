/**
 * Option conventions shared by every command (docs/cli.md):
 * - machine-readable output is chosen with `--format <format>`; `--json` is a shorthand for
 *   `--format json` on every command that has a JSON form;
 * - the same thing has the same option name on every command (`--void-engine` on partition and
 *   describe);
 * - a report goes to stdout, or to a file with `--out FILE` (stats, score), in the format of
 *   `--format` (`html` included: `--format html --out FILE` writes the HTML report);
 * - questions are selected by benchmark index with `--question <index...>` and by gold query id
 *   with `--query <kg/qN...>` on every command that selects them (eval, questions, verify); given
 *   together, both must hold.
 */
import path from 'node:path';
import { Option } from 'commander';
import { InputError } from '../common/errors.js';
import { readJsonFile } from '../build/open.js';
import type { EvalOptions } from '../eval/eval.js';

/** `--format <format>` with these choices (`json` among them); read it with `outputFormat`. */
export const formatOption = (choices: string[], help = 'output format (default: text)') => new Option('--format <format>', help).choices(choices);

/** `--json`, the shorthand for `--format json`. */
export const jsonOption = () => new Option('--json', 'shorthand for --format json');

/**
 * The value of `--extra-body` (eval, run): extra fields of every chat-completions request.
 * @param text the option's text, a JSON object
 * @returns the object, or undefined without the option
 * @throws InputError when the text is not JSON or not a JSON object (an array or a number would be
 *   spread into the request as fields "0", "1", …)
 */
function extraBodyOption(text: string | undefined): Record<string, unknown> | undefined {
  if (text === undefined) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new InputError(`--extra-body is not JSON: ${(e as Error).message}`);
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v))
    throw new InputError(`--extra-body must be a JSON object of request fields, e.g. '{"reasoning_effort":"low"}', not ${Array.isArray(v) ? 'an array' : v === null ? 'null' : `a ${typeof v}`}`);
  return v as Record<string, unknown>;
}

/**
 * The output format chosen on a command with `addFormatOptions` (`fallback` when neither option is given).
 * @throws InputError when `--json` is given with another `--format`
 */
export function outputFormat(o: { format?: string; json?: boolean }, fallback = 'text'): string {
  if (o.json && o.format !== undefined && o.format !== 'json') throw new InputError(`--json is --format json: it cannot be combined with --format ${o.format}`);
  return o.json ? 'json' : (o.format ?? fallback);
}

/** `--void-engine <engine>`: auto, sparql or stream; read it with `voidEngine`. */
export const voidEngineOption = (help: string) => new Option('--void-engine <engine>', `${help} (default: auto)`).choices(['auto', 'sparql', 'stream']);

/** The VoID engine chosen with `--void-engine` (`auto` if none). */
export function voidEngine(o: { voidEngine?: string }): 'auto' | 'sparql' | 'stream' {
  return (o.voidEngine ?? 'auto') as 'auto' | 'sparql' | 'stream';
}

/**
 * The gold query ids to select for `--question <index...>` (and `--query`) on a command that
 * selects by gold query (questions, verify): the queries the indexed questions ask, intersected
 * with `--query` when both are given. Undefined when neither is given.
 * @param shards the build (its benchmark.json is read)
 * @throws InputError for an index that is not a whole number or that the build does not have, or
 *   when the two options select nothing together
 */
export function selectedQueries(shards: string, question: string[] | undefined, query: string[] | undefined): { queries?: string[]; indexes?: number[] } {
  if (!question?.length) return { queries: query };
  const file = path.join(shards, 'benchmark.json');
  const bench = readJsonFile<{ entries?: { index: number; queryId: string }[] }>(file, 'benchmark.json');
  const entries = Array.isArray(bench.entries) ? bench.entries : [];
  const indexes = question.map((q) => {
    if (!/^\d+$/.test(q)) throw new InputError(`--question ${q}: not a question index (a whole number; for a gold query id such as library/q3 use --query)`);
    const n = Number(q);
    if (!entries.some((e) => e.index === n)) throw new InputError(`--question ${q}: no question with this index in the build`, { file });
    return n;
  });
  const asked = [...new Set(entries.filter((e) => indexes.includes(e.index)).map((e) => e.queryId))];
  const queries = query?.length ? asked.filter((id) => query.includes(id)) : asked;
  if (queries.length === 0) throw new InputError(`--question ${question.join(' ')} and --query ${query!.join(' ')} select no question together`, { file });
  return { queries, indexes };
}

/**
 * The values of the options `fkgqa eval` and `fkgqa run` share (`agentRunOptions` of program.ts)
 * as the library's options (`EvalOptions`, which `LoopOptions` reuses): one mapping for both commands.
 * @param o the parsed options of either command
 * @throws InputError for a `--question` that is not a whole number or an `--extra-body` that is no JSON object
 */
export function agentRunValues(o: Record<string, any>): Omit<EvalOptions, 'shards' | 'endpoints' | 'state' | 'out' | 'agent' | 'tools' | 'progress' | 'warn'> {
  const questions = (o.question as string[] | undefined)?.map((q) => {
    if (!/^\d+$/.test(q)) throw new InputError(`--question ${q}: not a question index (a whole number; for a gold query id such as library/q3 use --query)`);
    return Number(q);
  });
  return {
    setup: o.setup,
    baseUrl: o.baseUrl,
    model: o.model,
    apiKey: process.env[o.apiKeyEnv],
    temperature: o.temperature,
    seed: o.seed,
    extraBody: extraBodyOption(o.extraBody as string | undefined),
    promptsDir: o.prompts,
    mcpArgs: o.mcpArg,
    kgs: o.kg,
    questions,
    queries: o.query,
    distinctQueries: !!o.distinctQueries,
    perGraph: o.perGraph,
    sampleSeed: o.sampleSeed,
    limit: o.limit,
    repeats: o.repeats,
    retryErrors: !!o.retryErrors,
    maxTurns: o.maxTurns,
    messageLimit: o.messageLimit,
    tokenLimit: o.tokenLimit,
    timeLimitMs: o.timeLimit,
    maxRetries: o.maxRetries,
    backoffMs: o.backoff,
    requestTimeoutMs: o.requestTimeout,
    timeoutMs: o.timeout,
    maxQueryChars: o.maxQueryChars,
    concurrency: o.concurrency,
    probe: o.probe,
    federationEngine: o.federationEngine,
  };
}
