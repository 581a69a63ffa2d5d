/**
 * The `fkgqa` command line: every command with its options (the one place options are defined:
 * docs/cli.md's option tables are generated from here, `npm run docs:cli`). Each command's action
 * lives in src/cli/commands/<verb>.ts and is loaded when the command runs, so that `partition`
 * never loads the MCP SDK, zod or Comunica. This module imports only light constants.
 */
import { fileURLToPath } from 'node:url';
import { Command, InvalidArgumentError, Option } from 'commander';
import { TOOL } from '../common/version.js';
import { FORMS } from '../verify/forms.js';
import { DEFAULT_PARTITION_OPTIONS } from '../partition/options.js';
import { PRESETS } from '../partition/presets.js';
import { GOLD_QUERY_TIMEOUT_MS } from '../build/gold-answers.js';
import { MAX_OPERATOR_DEPTH, MAX_SERVED_QUERY_DEPTH } from '../sparql/guard.js';
import { DEFAULT_FEDERATION_THREADS, DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_QUEUED, DEFAULT_PORT } from '../serve/defaults.js';
import { REQUEST_LOG_MAX_BYTES } from '../serve/request-log.js';
import { STORE_KINDS } from '../serve/store.js';
import { SCRIPTED_AGENTS } from '../eval/record.js';
import { SETUPS } from '../mcp/context.js';
import { CROSS_CHECKED_ENGINES, DEFAULT_FEDERATION_ENGINE, FEDERATION_ENGINES, parseEngineList } from '../federation/engines.js';
import { formatOption, jsonOption, voidEngineOption } from './options.js';

/** The demo dataset shipped with the package (authored for fkgqa, not copied from Spider). */
export const DEMO_SOURCE = fileURLToPath(new URL('../../datasets/demo', import.meta.url));

/** An option parser for an integer from `min` to `max`. */
const integer =
  (name: string, min: number, max = Number.MAX_SAFE_INTEGER) =>
  (v: string) => {
    const n = Number(v);
    if (!/^\d+$/.test(v.trim()) || !Number.isSafeInteger(n) || n < min || n > max) {
      throw new InvalidArgumentError(`${name} must be an integer from ${min} to ${max}`);
    }
    return n;
  };

/**
 * An option taking an integer from `min` to `max`, e.g. `integerOption('--rows <n>', 'rows shown', 0)`;
 * a value outside names the option by its long flag (the first word of `flags`).
 */
const integerOption = (flags: string, help: string, min: number, max?: number) =>
  new Option(flags, help).argParser(integer(flags.split(' ')[0], min, max ?? (flags.includes('<ms>') ? TIMER_MAX_MS : undefined)));

/** The longest time in ms an option takes: Node's timers hold at most 2^31 − 1 ms (about 24.8 days); a longer one fires at once. */
const TIMER_MAX_MS = 2_147_483_647;

/** Help text of `--endpoint-base`, shared by partition and describe. */
const ENDPOINT_BASE_HELP = 'base URL of the shard endpoints: VoID and catalogue get <url>/<kg>-shard<N>/sparql';

/** Help text of `--void-engine`, shared by partition and describe. */
const VOID_ENGINE_HELP =
  'VoID statistics from SPARQL queries on an in-process store (sparql), from streaming the shard files (stream), or sparql up to 500,000 triples per graph and stream above (auto)';

/** An option parser for a finite number. */
const number = (name: string) => (v: string) => {
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n)) throw new InvalidArgumentError(`${name} must be a number`);
  return n;
};

/** `--part k/n`: part k (1 … n) of n, n from 1 to 10,000. */
function parsePart(v: string): { k: number; n: number } {
  const m = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(v);
  const k = m ? Number(m[1]) : NaN;
  const n = m ? Number(m[2]) : NaN;
  if (!m || n < 1 || n > 10_000 || k < 1 || k > n) throw new InvalidArgumentError('--part must be k/n with 1 ≤ k ≤ n ≤ 10000, e.g. 2/4');
  return { k, n };
}

/** `--rate N/unit` (unit s, min or h): at most N runs started per unit. */
export function parseRate(v: string): { max: number; durationMs: number } {
  const m = /^\s*(\d+)\s*\/\s*(s|sec|min|h)\s*$/.exec(v);
  const max = m ? Number(m[1]) : NaN;
  if (!m || max < 1 || !Number.isSafeInteger(max)) throw new InvalidArgumentError('--rate must be N/s, N/min or N/h with N ≥ 1, e.g. 60/min');
  return { max, durationMs: { s: 1000, sec: 1000, min: 60_000, h: 3_600_000 }[m[2] as 's']! };
}

/** Help text of `--queue`, shared by eval and worker. */
const QUEUE_HELP = 'Redis of the queue (redis://host:port[/db]; BullMQ): eval becomes the coordinator of fkgqa workers, the only writer of --out';

/** `--federation-engine <name>`: the engine that evaluates queries with several SERVICE clauses (src/federation/engine.ts). */
const federationEngineOption = (what: string) =>
  new Option('--federation-engine <name>', `${what} (src/federation/engine.ts; docs/federation.md)`).choices([...FEDERATION_ENGINES]).default(DEFAULT_FEDERATION_ENGINE);

/** verify's `--federation-engine <names>`: one engine, several separated by commas, or `all` (parseEngineList). */
const federationEnginesOption = (what: string) =>
  new Option(
    '--federation-engine <names>',
    `${what}: one of ${FEDERATION_ENGINES.map((e) => `\`${e}\``).join(', ')}, several separated by commas, or \`all\` (${CROSS_CHECKED_ENGINES.join(', ')}) (docs/federation.md)`,
  )
    .argParser((v: string) => {
      try {
        parseEngineList(v);
      } catch (e) {
        throw new InvalidArgumentError((e as Error).message);
      }
      return v;
    })
    .default(DEFAULT_FEDERATION_ENGINE);

/** An action that loads src/cli/commands/<verb>.js when the command runs and calls its `run`. */
function lazy(verb: string): (...args: unknown[]) => Promise<void> {
  return async (...args: unknown[]) => {
    const m = (await import(`./commands/${verb}.js`)) as { run: (...a: unknown[]) => Promise<void> };
    await m.run(...args);
  };
}

/** The exit codes of each command, shown at the end of its help. */
const EXIT_CODES: Record<string, string> = {
  partition:
    '0 built, 1 built but a rebuild with the same inputs gave other bytes (determinism check), 2 bad input (named file, line or option; the previous build is left as it was), 3 internal error.',
  stats: '0 reported, 2 bad input (a build that does not check: named file and what is wrong), 3 internal error.',
  synth: '0 written, 2 bad input, 3 internal error.',
  describe: '0 written, 2 bad input (a build that does not check: named file and what is wrong), 3 internal error.',
  serve: '0 stopped by SIGINT/SIGTERM, 2 bad input (a build that does not check, bad profiles or options), 3 internal error.',
  run: '0 report written, 2 bad input (the build, options, a model without --base-url/--model: named), 3 internal error, 130/143 interrupted by SIGINT/SIGTERM (the serve it started is stopped).',
  mcp: '0 the client closed stdin (stdio) or stopped by SIGINT/SIGTERM (--http), 2 bad input (options, a port in use, a prompts folder or call log that cannot be used: named), 3 internal error; on stdio 130/143 interrupted by SIGINT/SIGTERM (stdin still open: the federation engine is stopped first, within 3 s).',
  query:
    '0 answered, 2 bad input: the query refused before anything was sent (the reason named), a bad option, no running serve, an unreachable endpoint (named), an endpoint error or the time limit; 3 internal error.',
  verify:
    "0 every answer identical or equivalent (failures to answer are reported, not counted), 1 an engine's answer differs from gold beyond ties, 2 bad input (build, endpoints file, options), unreachable endpoints or an engine that cannot run here.",
  eval: '0 at least one run succeeded (or none was left to run), 2 bad input, unreachable endpoints or queue, or no run succeeded (every run ended as model_error or infrastructure_error), 3 internal error (with --queue also: a run no worker could make).',
  worker: '0 stopped by SIGINT/SIGTERM, 2 bad input, an unreachable queue, or a run refused (another fkgqa, build, prompt or gold answer: named), 3 internal error.',
  merge: '0 written, 2 bad input (an overlap, a condition mismatch, a line that is no run record, a run file still being written: named), 3 internal error.',
  score: '0 reported, 2 bad input (a run file or line that is no run record, a build without gold answers or with gold answers of another build: named file and line), 3 internal error.',
  questions: '0 listed, 2 bad input (a build that does not check, an unknown graph or query: named), 3 internal error.',
  view: '0 written (stderr names the page), 2 bad input (a run file or line that is no run record, a build without gold answers: named file and line), 3 internal error.',
};

/**
 * The options `fkgqa eval` and `fkgqa run` share, defined once here and added to both: the setup,
 * the model and its API, which questions (selection), the limits of a run and of a query, and the
 * federation engine. `--agent`, `--tools` and `--out` differ between the two (defaults, a file or
 * a folder) and are each command's own.
 * @returns the command, for chaining
 */
export function agentRunOptions(c: Command): Command {
  return (
    c
      // setup and model
      .addOption(new Option('--setup <setup>', 'tools and endpoint information given to the agent').choices([...SETUPS]).default('baseline'))
      .addOption(new Option('--base-url <url>', 'OpenAI-compatible API base URL, e.g. http://127.0.0.1:8080/v1 (default: the environment variable OPENAI_BASE_URL)').env('OPENAI_BASE_URL'))
      .option('--model <name>', 'model name sent to the API')
      .option('--api-key-env <name>', 'environment variable holding the API key (none needed for local servers)', 'OPENAI_API_KEY')
      .addOption(new Option('--temperature <t>', 'sampling temperature (recorded)').argParser(number('--temperature')).default(0))
      .addOption(integerOption('--seed <n>', 'sampling seed sent to the API (recorded)', 0))
      .option('--extra-body <json>', 'extra JSON fields for every API request, e.g. \'{"reasoning_effort":"low"}\'')
      .option('--prompts <dir>', 'folder of <setup>.md prompt files (default: the shipped prompts/)')
      .option('--mcp-arg <arg...>', 'with --tools mcp: extra arguments for fkgqa mcp')
      // selection
      .option('--kg <name...>', 'only questions of these graphs')
      .option('--question <index...>', 'only these questions (benchmark.json index)')
      .option('--query <id...>', 'only the questions asking these gold queries (<kg>/q<N>)')
      .option('--distinct-queries', 'one question per distinct gold query (the first asking it)')
      .addOption(integerOption('--per-graph <n>', 'at most N questions per graph, sampled with --sample-seed', 1))
      .addOption(integerOption('--sample-seed <n>', 'seed of the per-graph sample', 0).default(0))
      .addOption(integerOption('--limit <n>', 'only the first N questions of the selection (after --per-graph)', 1))
      .addOption(integerOption('--repeats <n>', 'runs per question', 1, 100).default(1))
      .option('--retry-errors', 'rerun runs that ended with a model error or an infrastructure error')
      // limits
      .addOption(integerOption('--max-turns <n>', 'LLM calls per run; then the run ends as turn_limit', 1, 100).default(10))
      .addOption(integerOption('--message-limit <n>', 'messages per run (system prompt, question, replies, tool results); then the run ends as message_limit (default: none)', 3))
      .addOption(integerOption('--token-limit <n>', "tokens per run (the API's usage); then the run ends as token_limit (default: none)", 1))
      .addOption(integerOption('--time-limit <ms>', "time per run (the agent's work, not the final execution); then the run ends as time_limit (default: none)", 1))
      .addOption(integerOption('--max-retries <n>', 'retries of an LLM call on 429/5xx/network errors and request time limits', 0, 20).default(5))
      .addOption(integerOption('--backoff <ms>', 'first retry wait, doubled per retry (a Retry-After header wins)', 0).default(1000))
      .addOption(integerOption('--request-timeout <ms>', 'time limit of one LLM request; over it the request is retried (stderr says which run waits, every 10 s)', 1).default(300_000))
      .addOption(integerOption('--timeout <ms>', 'time limit of one query (tools and the final answer)', 1).default(30_000))
      .addOption(
        integerOption(
          '--max-query-chars <n>',
          "longest query accepted by run_sparql_query and the final execution (default: 1000000 for a scripted agent, whose trivial or oracle form may exceed the reference server's 8000; 8000 for a model)",
          1,
        ),
      )
      // how
      .addOption(integerOption('--concurrency <n>', 'runs at once', 1, 64).default(1))
      .option('--no-probe', 'scripted agents submit at once instead of running their query first')
      .addOption(federationEngineOption('the federation engine of the tools and of the final execution'))
  );
}

/** `fkgqa partition`: the source, the method options (buckets, seed, solver, layout, candidates, placement, preset), VoID and the summary. */
function partitionCommand(cli: Command): Command {
  return cli
    .command('partition')
    .description(
      'Split every knowledge graph into shards so that the triple patterns of each covered gold query match triples in at least two ' +
        'shards, each its own SPARQL endpoint (implied fan-out >= 2, section 4 of the FKGQA paper). With no options, builds the demo dataset into ./shards.',
    )
    .addOption(
      new Option('--source <dir>', 'benchmark source directory: dev.json (or a kg_name,question,query CSV), kg/<name>.nt|.ttl|.rdf|.owl, ontologies/<name>.owl|.ttl').default(
        DEMO_SOURCE,
        'the demo, datasets/demo',
      ),
    )
    .option('--out <dir>', 'output directory; replaced only when the whole build succeeds', 'shards')
    .option('--questions <file>', 'questions file (JSON or CSV) if not dev.json/questions.json/dev.csv/questions.csv in the source')
    .option('--kg <name...>', 'build only these knowledge graphs')
    .addOption(integerOption('--buckets <n>', 'buckets per horizontal (subject-hash) sharding, 2–1024', 2, 1024).default(DEFAULT_PARTITION_OPTIONS.buckets))
    .addOption(
      integerOption(
        '--seed <n>',
        'seed of the xxh64 subject hash (the bucket of every subject; a class whose instances all fall into one bucket cannot be split horizontally, so the seed can change the chosen rules) and of the shard numbering',
        0,
      ).default(DEFAULT_PARTITION_OPTIONS.seed),
    )
    .option('--default-prefix <iri>', 'IRI of the undeclared ":" prefix in the gold queries', DEFAULT_PARTITION_OPTIONS.defaultPrefix)
    .addOption(
      integerOption('--solver-timeout <ms>', 'time limit of each ASP solve; on timeout the best rule set found is used and marked not optimal', 1).default(DEFAULT_PARTITION_OPTIONS.solverTimeoutMs),
    )
    .addOption(
      new Option('--layout <layout>', "compact: the fewest shards that realise every rule; separate: a shard per predicate, class and horizontal class of the rules (the paper's literal reading)")
        .choices(['compact', 'separate'])
        .default(DEFAULT_PARTITION_OPTIONS.layout),
    )
    .option('--expression-patterns', 'T(q) includes triple patterns inside FILTER/BIND/HAVING expressions (the default; overrides a preset)')
    .option('--class-inference', 'C(q) also from rdfs:domain/rdfs:range (the default; overrides a preset)')
    .option('--no-expression-patterns', "T(q) leaves out triple patterns inside FILTER/BIND/HAVING expressions (with --no-class-inference: the paper's published applicability figures)")
    .option('--no-class-inference', 'C(q) from explicit rdf:type patterns only, not from rdfs:domain/rdfs:range')
    .addOption(
      new Option(
        '--horizontal-candidates <which>',
        'unless-class: horizontal candidates only for queries to which class sharding does not apply (section 4.1 as written); every-query: for every query to which horizontal sharding applies',
      )
        .choices(['unless-class', 'every-query'])
        .default(DEFAULT_PARTITION_OPTIONS.horizontalCandidates),
    )
    .addOption(
      new Option('--predicate-candidates <which>', 'all-pairs: every pair of P(q), rdf:type included; no-rdf-type: only pairs of two predicates other than rdf:type')
        .choices(['all-pairs', 'no-rdf-type'])
        .default(DEFAULT_PARTITION_OPTIONS.predicateCandidates),
    )
    .addOption(
      new Option(
        '--horizontal-placement <where>',
        'own-buckets: each horizontal class (group) gets --buckets shards of its own; all-shards: its instances are hashed over every shard holding whole subjects (base and class shards, but those of classes a class rule separates from it), at least --buckets; every-shard: over every shard, predicate shards included, with no exclusions (rules can then fail)',
      )
        .choices(['own-buckets', 'all-shards', 'every-shard'])
        .default(DEFAULT_PARTITION_OPTIONS.horizontalPlacement),
    )
    .addOption(
      new Option(
        '--preset <name>',
        `a named set of the method options above (${Object.entries(PRESETS)
          .map(([k, p]) => `${k}: ${p.description}`)
          .join('; ')}); options given explicitly override it`,
      ).choices(Object.keys(PRESETS)),
    )
    .option('--no-void', 'do not write the VoID of the shards nor the catalogue')
    .addOption(voidEngineOption(VOID_ENGINE_HELP))
    .option('--endpoint-base <url>', ENDPOINT_BASE_HELP)
    .addOption(formatOption(['text', 'json'], 'the summary on stdout as text or JSON (default: text)'))
    .addOption(jsonOption())
    .option('--verbose', "list every not coverable and necessarily empty query with its reason (default: counts per graph; the reasons are in each graph's manifest.json)");
}

/** `fkgqa describe`: the build, the VoID engine, a remote SPARQL endpoint, the summary. */
function describeCommand(cli: Command): Command {
  return cli
    .command('describe')
    .description(
      'Compute the VoID of every shard of an existing build (standard and extended, with linksets) and the catalogue ' +
        '(catalogue.json, catalogue.ttl) with SPARQL 1.1 aggregate queries, and write them into the build.',
    )
    .option('--shards <dir>', 'the build directory written by fkgqa partition', 'shards')
    .option('--endpoint-base <url>', ENDPOINT_BASE_HELP)
    .addOption(voidEngineOption(`without --sparql: ${VOID_ENGINE_HELP}`))
    .option('--sparql <url>', 'compute through this SPARQL endpoint, which holds every shard as the named graph urn:fkgqa:void:<kg>:shard<N>, instead of an in-process store')
    .addOption(formatOption(['text', 'json'], 'the summary on stdout as text or JSON (default: text)'))
    .addOption(jsonOption());
}

/** `fkgqa stats`: the build and its state folder, the graphs, the report format and files, the query time limit. */
function statsCommand(cli: Command): Command {
  return cli
    .command('stats')
    .description(
      'Report a build: gold answers on the unsharded graphs, implied and realised fan-out, shards, rules and ' +
        'applicability (section 4.2 of the FKGQA paper). Gold answers and realised fan-out are stored in the state folder ' +
        '(<state>/gold-answers/<kg>.json, <state>/realised-fan-out/<kg>.json); the build is not written.',
    )
    .option('--shards <dir>', 'build directory written by fkgqa partition', 'shards')
    .option('--state <dir>', 'state folder for stored gold answers and realised fan-out (default: <shards>.state beside the build)')
    .option('--kg <name...>', 'only these knowledge graphs')
    .addOption(formatOption(['text', 'json', 'csv', 'markdown', 'html'], 'output format: text, json, csv, markdown or html (a self-contained report with charts; default: text)'))
    .addOption(jsonOption())
    .option('--out <file>', 'write the report to FILE instead of stdout')
    .option('--compare-paper', "a table with one row per figure: the paper's value, this build's, the difference")
    .option('--per-query <file>', 'write one CSV row per distinct query to FILE')
    .addOption(integerOption('--timeout <ms>', 'time limit per query (gold answers and provenance); a timed-out query is reported as such', 1).default(GOLD_QUERY_TIMEOUT_MS))
    .option('--recompute', 'recompute gold answers even if stored ones match the build');
}

/** `fkgqa questions`: the build, the selection (graphs, questions, gold queries), the format, rows shown and the query time limit. */
function questionsCommand(cli: Command): Command {
  return cli
    .command('questions')
    .description(
      'Show each question of a build: the question, its gold query, the shards its answer needs (realised: shards whose triples a ' +
        'solution uses) and the shards that may match (implied: shards with a triple matching some triple pattern), and its gold ' +
        'answer (rows and a preview). Needed shards and answers come from what fkgqa stats stored for the build, or are computed now.',
    )
    .option('--shards <dir>', 'build directory written by fkgqa partition', 'shards')
    .option('--kg <name...>', 'only the questions of these knowledge graphs')
    .option('--question <index...>', 'only these questions (benchmark.json index)')
    .option('--query <id...>', 'only the questions asking these gold queries (<kg>/q<N>)')
    .addOption(formatOption(['text', 'json'], 'text (one block per question) or json (the benchmark.json entries with shardsNeeded and answer; default: text)'))
    .addOption(jsonOption())
    .option('--state <dir>', 'state folder where fkgqa stats stored gold answers and realised fan-out (default: <shards>.state beside the build)')
    .addOption(integerOption('--rows <n>', 'rows of each gold answer to show', 0).default(5))
    .addOption(integerOption('--timeout <ms>', 'time limit per query when answers and needed shards are computed here', 1).default(GOLD_QUERY_TIMEOUT_MS));
}

/** `fkgqa synth`: the source graph, the size and seed of the synthetic graph, the output folder. */
function synthCommand(cli: Command): Command {
  return cli
    .command('synth')
    .description(
      'Make a Spider-like benchmark source of a given size by replicating one graph with renamed instances ' +
        "(for scale tests): writes dev.json with the graph's questions, kg/<kg>.nt and its ontology.",
    )
    .requiredOption('--source <dir>', 'benchmark source directory holding the graph')
    .requiredOption('--kg <name>', 'graph to replicate')
    .addOption(integerOption('--triples <n>', 'triples of the synthetic graph', 1).makeOptionMandatory())
    .addOption(integerOption('--seed <n>', 'seed of the perturbation of numeric literals in the copies', 0).default(0))
    .requiredOption('--out <dir>', 'output source directory');
}

/** `fkgqa serve`: the build, where to listen, the request limits, the stores' worker threads, the request log, `/federation/sparql` and CORS. */
function serveCommand(cli: Command): Command {
  return cli
    .command('serve')
    .description(
      'Serve every shard of a build as its own SPARQL endpoint (SPARQL 1.1 Protocol; oxigraph stores in worker threads). ' +
        'Writes nothing into the build: endpoints.json (and the request log) go to the state folder (default <shards>.state/), ' +
        'removed at stop; a second serve with the same state folder exits 2. Prints "id<TAB>url" per endpoint on stdout; stops on SIGINT/SIGTERM. ' +
        'Limits (4xx): --max-body (413; also the longest query, 400), --max-query-depth (400), --max-operator-depth (400), --timeout (503; a request may ask for less: timeout parameter, Fkgqa-Timeout header). See docs/serving.md.',
    )
    .option('--shards <dir>', 'directory of a fkgqa partition build', 'shards')
    .option('--host <host>', 'interface to bind (loopback unless told otherwise)', '127.0.0.1')
    .addOption(
      integerOption(
        '--port <n>',
        'port (0: any free port); with --port-per-endpoint the first of consecutive ports. Bound before any shard is loaded: a port in use exits 2 at once',
        0,
        65535,
      ).default(DEFAULT_PORT),
    )
    .option('--port-per-endpoint', 'one port per endpoint (http://host:port/sparql) instead of one path per endpoint (http://host:port/<kg>-shard<N>/sparql)')
    .option('--kg <name...>', 'serve only these graphs')
    .option('--with-originals', 'also serve each unsharded graph (the union of its shards, which the build guarantees equals the input) as endpoint <kg>')
    .addOption(integerOption('--timeout <ms>', 'time limit of one query; over it the query is stopped and answered 503', 1).default(30_000))
    .addOption(integerOption('--max-body <bytes>', 'largest request body; larger ones are answered 413', 1).default(DEFAULT_MAX_BODY_BYTES))
    .addOption(
      integerOption(
        '--max-query-depth <n>',
        'deepest nesting of a query: brackets ({ ( [) and chained signs (each sign of !!?x after the first) (the text a federation engine generates for a SERVICE clause brackets every operator); deeper ones are answered 400 before parsing',
        1,
      ).default(MAX_SERVED_QUERY_DEPTH),
    )
    .addOption(
      integerOption(
        '--max-operator-depth <n>',
        'deepest operator nesting of a query (chained operators, UNION branches, group elements, path steps: docs/mcp.md); deeper ones are answered 400 (oxigraph overflows its stack from about 1,000)',
        1,
      ).default(MAX_OPERATOR_DEPTH),
    )
    .option('--state <dir>', 'state folder for endpoints.json and the request log (default: <shards>.state beside the build)')
    .option('--profiles <file>', 'behaviour profiles (JSON: default / graphs / endpoints; see docs/serving-reference.md)')
    .addOption(
      new Option(
        '--store <kind>',
        'what holds the shards: oxigraph (worker threads of this process) or virtuoso (Virtuoso instances started by serve, virtuoso-opensource-7-bin; one per --store-host), behind the same endpoints, limits, VoID and verdicts',
      )
        .choices(STORE_KINDS)
        .default('oxigraph'),
    )
    .option(
      '--store-host <host...>',
      'with --store virtuoso: the hosts (interfaces) of the Virtuoso instances, one instance each, the shards split over them by triples (default: --host); each instance is addressed by host:port, every port distinct',
    )
    .addOption(
      integerOption(
        '--workers <n>',
        'worker threads holding the oxigraph stores (default: the CPU cores, at least 2); the endpoints are split among them by triples. A query whose client went away, or over its time limit, is stopped by replacing its worker; a slow query (1 s) with others waiting behind it is left to its worker while a fresh one takes over',
        1,
      ),
    )
    .option('--request-log [file]', 'append every request (endpoint, kind, status, ms, bytes, query text) as a JSON line to this file (no file: requests.jsonl in the state folder)')
    .addOption(integerOption('--request-log-max <bytes>', 'size cap of the request log; over it the file is rotated to <name>.1<ext>', 1024).default(REQUEST_LOG_MAX_BYTES))
    .addOption(federationEngineOption('the federation engine of /federation/sparql'))
    .option('--mix-graphs', 'let one query to /federation/sparql join endpoints of several graphs (graphs reuse IRIs: by default such a query is answered 400 mixed-graphs, as fkgqa mcp refuses it)')
    .addOption(
      integerOption(
        '--engines <n>',
        'federated queries /federation/sparql evaluates at once (federation engine threads), shared fairly between its clients (a client: its remote address, or the Fkgqa-Client header it sends)',
        1,
        16,
      ).default(DEFAULT_FEDERATION_THREADS),
    )
    .addOption(
      integerOption('--max-queued <n>', "federated queries one client may have waiting for /federation/sparql's engine; more are answered 503 busy with Retry-After", 1, 1000).default(
        DEFAULT_MAX_QUEUED,
      ),
    )
    .option(
      '--cors-origin <origin...>',
      'let web pages of these origins (http(s)://host[:port]) read the answers (CORS Access-Control-Allow-Origin); * for any. Default: none, no CORS headers (a page in the browser cannot query the endpoints)',
    );
}

/** `fkgqa verify`: the build, the endpoints, the selection, the forms, the federation engines and the report format. */
function verifyCommand(cli: Command): Command {
  return cli
    .command('verify')
    .description(
      "Check that the federation loses no answer and that the federation engines agree: run every distinct gold query federated over its graph's shard endpoints " +
        '(the engine selects sources), in trivial-federation form (UNION of SERVICE per triple pattern) and in oracle form (trivial federation over the shards the answer needs) ' +
        "on each federation engine, compare each answer with the answer on the unsharded graph and the engines' answers with each other, and report every disagreement. " +
        'The build is checked first (build.json, benchmark.json, manifests, shard sha256).',
    )
    .option('--shards <dir>', 'directory of a fkgqa partition build', 'shards')
    .option(
      '--endpoints [file...]',
      'use running endpoints (fkgqa serve) listed in these endpoints files (several: shards served by several hosts); without a file: <state>/endpoints.json. Every endpoint must answer, else exit 2. Without --endpoints: the fkgqa serve running on this build (<state>/endpoints.json) when it serves every graph without behaviour profiles, else the endpoints started in this process; a line on stderr says which',
    )
    .option('--state <dir>', 'state folder of the build: stored gold answers, default endpoints file (default: <shards>.state beside the build)')
    .option('--kg <name...>', 'verify only these graphs')
    .option('--query <id...>', 'verify only these queries (<kg>/q<N>; without --kg, their graphs)')
    .option('--question <index...>', 'verify only the queries these questions ask (benchmark.json index)')
    .addOption(integerOption('--timeout <ms>', 'time limit per query, form and engine, and of the unsharded graph', 1).default(20_000))
    .addOption(
      new Option('--form <form...>', 'forms to run (default: all three; oracle needs the realised fan-out of fkgqa stats: without it, skipped by default and refused when named)').choices(FORMS),
    )
    .addOption(formatOption(['text', 'json'], 'the report on stdout as text or JSON (default: text)'))
    .addOption(jsonOption())
    .addOption(federationEnginesOption('the federation engines that run every form'));
}

/** `fkgqa mcp`: the endpoints, the setup and prompts, the transport (stdio or HTTP), the tool limits, KGVoyager's retrieval and the federation engine. */
function mcpCommand(cli: Command): Command {
  return cli
    .command('mcp')
    .description(
      'Run the SPARQL-MCP server of the FKGQA paper (section 3): run_sparql_query (SERVICE clauses; one is sent directly, several go to the ' +
        'federation engine), in the void_tool setup get_void_descriptions, in the kgvoyager setup (or with --kgvoyager) the KGVoyager exploration tools, over the endpoints of a running fkgqa serve, a build, or any SPARQL endpoints. ' +
        'Speaks MCP on stdio (default) or Streamable HTTP (--http). See docs/mcp.md.',
    )
    .option('--endpoints <file...>', 'endpoints files of running fkgqa serves (several: one federation over all their endpoints)')
    .option(
      '--shards <dir>',
      'a fkgqa build: its running serve (<build>.state/endpoints.json, then <build>/endpoints.json), or with --endpoint-base its shards under that URL; gives descriptions and VoID files',
    )
    .option('--state <dir>', 'state folder of the build (default <build>.state): call log and VoID cache under mcp/')
    .option('--endpoint-base <url>', 'with --shards: the shards are at <url>/<kg>-shard<N>/sparql')
    .option('--endpoint <url...>', 'plain SPARQL endpoint URLs (any endpoints)')
    .option('--kg <name...>', 'only the endpoints of these graphs (fkgqa eval gives each run the graph of its question)')
    .option('--mix-graphs', 'let one query join endpoints of several graphs, and KGVoyager merge them by IRI (graphs reuse IRIs: by default they are kept apart)')
    .addOption(new Option('--setup <setup>', 'evaluation setup (paper, section 5)').choices([...SETUPS]).default('baseline'))
    .option('--prompts <dir>', 'folder of <setup>.md prompt files served as the MCP prompt answer_question (default: the shipped prompts/, as fkgqa eval)')
    .option('--http', 'serve Streamable HTTP at http://<host>:<port>/mcp instead of stdio')
    .option('--host <host>', 'with --http: interface to bind (loopback unless told otherwise)', '127.0.0.1')
    .addOption(integerOption('--port <n>', 'with --http: port (0: any free port)', 0, 65535).default(0))
    .option('--call-log <file>', 'append every tool call as a JSON line to FILE (default <state>/mcp/calls.jsonl when there is a build)')
    .addOption(integerOption('--timeout <ms>', 'default time limit of run_sparql_query (agents may ask for 1000..100000)', 1000, 100_000).default(30_000))
    .addOption(integerOption('--preview-rows <n>', 'rows shown to the agent; the rest are counted', 0).default(100))
    .addOption(integerOption('--max-query-chars <n>', 'longest query accepted', 1).default(8000))
    .addOption(integerOption('--engines <n>', 'federated queries evaluated at once (federation engine threads), for clients that send several at the same time', 1, 16).default(1))
    .addOption(integerOption('--void-step-timeout <ms>', 'time limit of each step of the VoID chain', 1).default(10_000))
    .option('--kgvoyager', 'add the KGVoyager exploration tools to the setup (setup kgvoyager always has them); see docs/kgvoyager.md')
    .addOption(new Option('--retrieval <mode>', 'KGVoyager search ranking').choices(['hybrid', 'bm25', 'dense']).default('hybrid'))
    .addOption(integerOption('--rrf-k <k>', 'KGVoyager: constant k of reciprocal rank fusion', 0).default(2))
    .addOption(
      new Option('--embedder <kind>', 'KGVoyager dense side: built-in character 3-grams, an OpenAI-compatible /v1/embeddings service, or a local model folder')
        .choices(['ngram', 'openai', 'local'])
        .default('ngram'),
    )
    .option('--embedding-url <url>', 'with --embedder openai: base URL of the service (e.g. http://127.0.0.1:8080)')
    .option('--embedding-model <name>', 'with --embedder openai: the model name')
    .option('--embedding-key-env <var>', 'with --embedder openai: environment variable holding the API key', 'OPENAI_API_KEY')
    .option('--embedding-model-path <dir>', 'with --embedder local: folder of a feature-extraction model (needs the optional package @huggingface/transformers)')
    .addOption(integerOption('--explore-timeout <ms>', 'KGVoyager: time limit of one exploration tool call', 1, 100_000).default(10_000))
    .addOption(new Option('--format <format>', 'with --http: how the startup line on stdout is written').choices(['text', 'json']).default('text'))
    .option('--json', 'shorthand for --format json')
    .addOption(federationEngineOption('the federation engine of run_sparql_query (several SERVICE clauses) and of the VoID linksets'));
}

/** `fkgqa eval`: the options it shares with `fkgqa run` (`agentRunOptions`), then its own: the build and endpoints, the run file, the agent, the tools, the part and the queue. */
function evalCommand(cli: Command): Command {
  return agentRunOptions(
    cli
      .command('eval')
      .description(
        'Run agents on the benchmark (section 5 of the FKGQA paper): a model behind an OpenAI-compatible chat-completions API ' +
          'with tool calling, or a scripted agent, with the tools of fkgqa mcp (stdio) plus submit_final_query and cancel; ' +
          'at most 10 turns per run; one JSON line per run appended to --out (runs already there are skipped). ' +
          'Runs whose endpoints or API failed end as infrastructure_error or model_error (rerun them with --retry-errors).',
      )
      .option('--shards <dir>', 'the build served by fkgqa serve', 'shards')
      .option('--endpoints <file...>', "endpoints files of running fkgqa serves (several: shards served by several hosts; default: the state folder's, else the build's)")
      .option('--state <dir>', 'state folder of the build (default <build>.state)')
      .requiredOption('--out <file>', 'run file (JSON lines), appended to; a torn last line left by a crash is cut away first')
      .addOption(new Option('--agent <agent>', 'llm (needs --base-url and --model) or a scripted agent').choices(['llm', ...SCRIPTED_AGENTS]).default('llm'))
      .addOption(
        new Option('--tools <source>', 'mcp: spawn fkgqa mcp over stdio per run (what a user runs); in-process: the same server built in this process').choices(['mcp', 'in-process']).default('mcp'),
      )
      .addOption(
        new Option(
          '--part <k/n>',
          'only part k of n of the selected runs (a stable hash of the run id): n evals with their own --out cover the selection exactly once; join them with fkgqa merge',
        ).argParser(parsePart),
      )
      .option('--queue <url>', `${QUEUE_HELP}: it queues the runs not yet in --out and appends the runs the workers send back (docs/evaluation.md)`),
  )
    .addOption(formatOption(['text', 'json'], 'the summary on stdout as text or JSON (default: text)'))
    .addOption(jsonOption());
}

/** `fkgqa worker`: the queue, this host's copy of the build and endpoints, the model API, the runs at once and their rate. */
function workerCommand(cli: Command): Command {
  return cli
    .command('worker')
    .description(
      'Make the runs that fkgqa eval --queue queued, on this host: each run with its own tools and endpoints exactly as fkgqa eval makes it, ' +
        'its record sent back to the coordinator, which writes the run file. Runs until SIGINT/SIGTERM (the runs in progress finish first). ' +
        'A run of another fkgqa, build, prompt or gold answer is refused: put back for another worker, and this worker stops (exit 2).',
    )
    .requiredOption('--queue <url>', 'Redis of the queue (redis://host:port[/db]), as given to fkgqa eval --queue')
    .option('--shards <dir>', "this host's copy of the build the runs are made on", 'shards')
    .option('--endpoints <file...>', "endpoints files of the fkgqa serves this host uses (default: the state folder's, else the build's)")
    .option('--state <dir>', 'state folder of the build (default <build>.state): gold answers and realised fan-out')
    .option('--prompts <dir>', "folder of <setup>.md prompt files (default: the shipped prompts/); each must be the coordinator's")
    .option('--base-url <url>', "where this host reaches the model API (default: the run's --base-url); recorded in each run")
    .option('--api-key-env <name>', 'environment variable holding the API key (never sent through the queue)', 'OPENAI_API_KEY')
    .addOption(integerOption('--concurrency <n>', 'runs at once in this worker', 1, 64).default(1))
    .addOption(
      new Option(
        '--rate <n/unit>',
        "at most N runs started per second (s), minute (min) or hour (h) over all workers of the queue (BullMQ's limiter; give every worker the same), e.g. 60/min",
      ).argParser(parseRate),
    )
    .addOption(integerOption('--lock-duration <ms>', "a run's lock without renewal: a killed worker's run is taken over by another worker after about this long", 1000).default(30_000));
}

/** `fkgqa merge`: the run files of the parts and the merged run file. */
function mergeCommand(cli: Command): Command {
  return cli
    .command('merge')
    .description(
      'Join the run files of the parts of one evaluation (fkgqa eval --part k/n) into one run file. Refuses a run id in two files and runs of ' +
        'another condition (build, setup, model, limits, prompt), naming the files and lines; writes --out whole or not at all.',
    )
    .argument('<runs...>', 'run files (JSON lines), joined in this order')
    .requiredOption('--out <file>', 'the merged run file (replaced)')
    .option('-q, --quiet', 'no warnings on stderr (a torn last line left out)');
}

/** `fkgqa score`: the run files, the build, the report format and files, and what is refused by default. */
function scoreCommand(cli: Command): Command {
  return cli
    .command('score')
    .description(
      "Score run files of fkgqa eval against the build's gold answers (section 6 of the FKGQA paper): accuracy, F1 (GRASP and " +
        "Spinach), syntactic validity, endpoint consultation, trivial federation, tokens, calls and runtime, beside the paper's figures.",
    )
    .argument('<runs...>', 'run files (JSON lines)')
    .option('--shards <dir>', 'the build the runs were made on', 'shards')
    .option('--state <dir>', 'state folder of the build (default <build>.state)')
    .addOption(new Option('--format <format>', 'output format').choices(['text', 'json', 'csv', 'html']).default('text'))
    .option('--json', 'shorthand for --format json')
    .option('--out <file>', 'write the report to FILE instead of stdout')
    .option('--per-run <file>', 'also write one CSV row per run to FILE')
    .addOption(integerOption('--timeout <ms>', 'time limit of each query that finds the shards where a pattern under MINUS or FILTER NOT EXISTS matches', 1).default(GOLD_QUERY_TIMEOUT_MS))
    .option('--allow-other-build', 'score runs made on another build or against other gold answers against this one; refused by default')
    .option('--partial', 'score a run file that fkgqa eval is still writing (its runs so far; the report says PARTIAL); refused by default (exit 2)')
    .option('--paper-with-scripted', "also give the paper's figures beside scripted agents (oracle, trivial, single); by default only beside models")
    .option('--view <page>', 'HTML: the run viewer page written by fkgqa view; each run not correct links to PAGE#run=<id>');
}

/** `fkgqa run`: its own options (the build, the output folder, the port, the agent and the tools), then those it shares with `fkgqa eval` (`agentRunOptions`). */
function runCommand(cli: Command): Command {
  return agentRunOptions(
    cli
      .command('run')
      .description(
        'The whole loop in one command: gold answers (fkgqa stats, if the state folder lacks them) → the shard endpoints (a fkgqa serve started in ' +
          'this process and stopped at the end, also on Ctrl-C; or the serve already running on the build) → the agent on the questions (fkgqa eval) → ' +
          'fkgqa score → fkgqa view. Writes <out>/<setup>-<model or agent>.jsonl (runs already there are skipped: an interrupted loop resumes) and, over every ' +
          'run file in <out>, report.txt, report.html, per-run.csv and view.html; prints the score report. Takes every agent, selection and limit option of fkgqa eval.',
      )
      .option('--shards <dir>', 'the build', 'shards')
      .option('--state <dir>', 'state folder of the build (default <build>.state)')
      .option('--out <dir>', 'output folder', 'runs')
      .addOption(integerOption('--port <n>', 'port of the fkgqa serve started here when none is running on the build (0: any free port)', 0, 65535).default(0))
      .addOption(new Option('--agent <agent>', 'a scripted agent, or llm (needs --base-url and --model; the default when --model or --base-url is given)').choices(['llm', ...SCRIPTED_AGENTS]))
      .addOption(
        new Option('--tools <source>', 'in-process: the MCP server of fkgqa mcp built in this process (fast); mcp: spawn fkgqa mcp over stdio per run')
          .choices(['mcp', 'in-process'])
          .default('in-process'),
      ),
  );
}

/** `fkgqa query`: the query, the endpoints SERVICE may name (or the sources of a query without SERVICE), the format and the limits. */
function queryCommand(cli: Command): Command {
  return cli
    .command('query')
    .description(
      'Run one federated SPARQL query from the shell (as comunica-sparql does), through the routing of run_sparql_query: SERVICE targets ' +
        'must be registered endpoints (a running fkgqa serve of --shards, --endpoints files, or --endpoint URLs); a lone SERVICE wrapping the ' +
        'whole WHERE goes directly to its endpoint, several go to the federation engine. With --sources, a query without SERVICE goes to the ' +
        'federation engine, which selects the endpoints of each triple pattern itself. CONSTRUCT/DESCRIBE answers are rows of ?subject ?predicate ?object.',
    )
    .argument('[query]', "the query text, e.g. 'SELECT * WHERE { SERVICE <http://…/library-shard1/sparql> { ?s ?p ?o } } LIMIT 5'")
    .option('--file <file>', 'read the query from FILE (- for stdin)')
    .option('--shards <dir>', 'a build: the endpoints of its running fkgqa serve (<state>/endpoints.json); the default when no endpoints are given is ./shards')
    .option('--state <dir>', 'state folder of the build (default <build>.state)')
    .option('--endpoints <file...>', 'endpoints files of running fkgqa serves')
    .option('--endpoint <url...>', 'plain SPARQL endpoint URLs SERVICE may name')
    .option(
      '--sources <which...>',
      'run a query without SERVICE clauses, the federation engine selecting the sources of each triple pattern among these registered endpoints (as comunica-sparql takes its sources): all, graph names (their endpoints), endpoint ids or URLs; engines with source selection only (comunica, comunica-default; not jena)',
    )
    .addOption(formatOption(['table', 'json', 'csv', 'tsv'], 'table (aligned text), json (SPARQL JSON results), csv or tsv (SPARQL 1.1 CSV/TSV); default: table'))
    .addOption(jsonOption())
    .addOption(integerOption('--timeout <ms>', 'time limit of the query; over it the query is stopped (exit 2: the answer is unknown, not empty)', 1).default(30_000))
    .addOption(integerOption('--max-query-chars <n>', 'longest query accepted', 1).default(1_000_000))
    .addOption(federationEngineOption('the federation engine of queries with several SERVICE clauses'))
    .option('--mix-graphs', 'let one query join endpoints of several graphs (graphs reuse IRIs: by default such a query is refused, exit 2, as fkgqa mcp and serve refuse it)')
    .option('-q, --quiet', 'no summary line on stderr');
}

/** `fkgqa view`: the run files, the page, the build for verdicts and gold answers, and what the page keeps. */
function viewCommand(cli: Command): Command {
  return cli
    .command('view')
    .description(
      'Write a static, self-contained HTML page of agent runs (run files of fkgqa eval) that opens from disk: the runs in a list with filters ' +
        '(setup, model or agent, graph, verdict, end reason), and per run the question, every message and tool call (queries with their SERVICE ' +
        'targets highlighted, results as tables), the final query, its answer beside the gold answer with the differing rows marked, and ' +
        "fkgqa score's verdict and reason (with --shards). PAGE#run=<run id, URI-encoded> opens a run.",
    )
    .argument('<runs...>', 'run files (JSON lines, fkgqa-run/2)')
    .option('--out <file>', 'the HTML page to write (default: view.html in the folder of the first run file, where fkgqa run writes it)')
    .option('--shards <dir>', 'the build the runs were made on: verdicts (as fkgqa score gives them) and gold answers; without it the runs are shown unscored')
    .option('--state <dir>', 'state folder of the build, where fkgqa stats stored the gold answers (default <build>.state)')
    .addOption(integerOption('--timeout <ms>', 'time limit of the key query that decides ties under ORDER BY (as fkgqa score)', 1).default(GOLD_QUERY_TIMEOUT_MS))
    .addOption(integerOption('--max-rows <n>', 'rows of each answer table shown in the page (the marks count every row)', 1).default(100))
    .addOption(integerOption('--max-chars <n>', 'characters of a message or tool result kept in the page (the run file keeps all)', 100).default(20_000))
    .option('--partial', 'with --shards: score a run file that fkgqa eval is still writing (as fkgqa score --partial); refused by default (exit 2)');
}

/**
 * Every command's definition, in the order `fkgqa --help` lists them: building the benchmark,
 * serving it, evaluating agents on it, then one query from the shell and the run viewer. Each returns
 * its command; `program` adds `-q`, the exit codes and the action (`lazy`).
 */
const COMMANDS: ((cli: Command) => Command)[] = [
  // building
  partitionCommand,
  describeCommand,
  statsCommand,
  questionsCommand,
  synthCommand,
  // serving
  serveCommand,
  verifyCommand,
  mcpCommand,
  // evaluating
  evalCommand,
  workerCommand,
  mergeCommand,
  scoreCommand,
  runCommand,
  // tools
  queryCommand,
  viewCommand,
];

/** The options made mandatory by `optionChecksAfterUnknown`, still mandatory (docs.ts lists them as required). */
export const REQUIRED_OPTIONS = new WeakSet<Option>();

/** The parts of a commander 14 Command that its option parsing calls (lib/command.js; not in its typings). */
interface ParsingCommand {
  /** Reports an option given as the last word without its argument (commander: an error, and exit). */
  optionMissingArgument(option: Option): void;
  /** EventEmitter's emit: `option:<name>` hands an option its value. */
  emit(event: string, ...args: unknown[]): boolean;
}

/**
 * Checks a command's mandatory options and the argument of its last option after its unknown
 * options and arguments, not before as commander 14 does: `fkgqa eval --bogus` names the unknown
 * option `--bogus`, not a missing `--out`, and `fkgqa stats --bogus --shards` names `--bogus`, not
 * the missing argument of `--shards`. The messages are commander's (`error: required option '--out <file>'
 * not specified`, `error: option '--shards <dir>' argument missing`).
 */
function optionChecksAfterUnknown(c: Command): void {
  const required = c.options.filter((o) => o.mandatory);
  for (const o of required) {
    REQUIRED_OPTIONS.add(o);
    o.makeOptionMandatory(false);
  }
  // commander finds an option without its argument only at the end of the command line (the option is the
  // last word) and stops there, before it looks at the unknown options: the option is noted and left unset
  // (commander hands it the value undefined right after this call; that one event is dropped), and named below.
  let missingArgument: Option | undefined;
  const parsing = c as unknown as ParsingCommand;
  parsing.optionMissingArgument = function (this: ParsingCommand, option: Option): void {
    missingArgument = option;
    const emit = this.emit;
    this.emit = function (this: ParsingCommand, event: string, ...args: unknown[]): boolean {
      this.emit = emit;
      return event === `option:${option.name()}` ? false : emit.call(this, event, ...args);
    };
  };
  c.hook('preAction', (cmd) => {
    const option = missingArgument;
    missingArgument = undefined;
    if (option) (Command.prototype as unknown as ParsingCommand).optionMissingArgument.call(cmd as unknown as ParsingCommand, option);
    const missing = required.find((o) => cmd.getOptionValue(o.attributeName()) === undefined);
    if (missing) cmd.error(`error: required option '${missing.flags}' not specified`, { code: 'commander.missingMandatoryOptionValue' });
  });
}

/** Builds the `fkgqa` command line (a thin layer over the library API, src/index.ts). */
export function program(): Command {
  const cli = new Command('fkgqa')
    .description('Build and serve the federated knowledge-graph question-answering benchmark (FKGQA).')
    .version(TOOL.version)
    .showHelpAfterError('(add --help for the options)')
    // commander's usage errors carry the same `fkgqa: ` prefix as every other error
    .configureOutput({ outputError: (text, write) => write(`fkgqa: ${text}`) })
    .exitOverride();

  for (const define of COMMANDS) {
    const c = define(cli);
    // -q on every command; merge and query say themselves what it leaves out.
    if (!c.options.some((o) => o.long === '--quiet')) c.option('-q, --quiet', 'no progress on stderr');
    if (EXIT_CODES[c.name()]) c.addHelpText('after', `\nExit codes: ${EXIT_CODES[c.name()]}`);
    optionChecksAfterUnknown(c);
    c.action(lazy(c.name()));
  }
  cli.addHelpText(
    'after',
    `\nExit codes of every command: 0 success, 1 a real difference found (verify, partition's determinism check), 2 bad input (named file, line, query or option) or unreachable endpoints, 3 internal error (a bug: please report it). See docs/robustness.md.`,
  );
  return cli;
}
