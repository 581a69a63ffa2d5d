/**
 * fkgqa as a library: `import { partition, stats, serve, verify, … } from 'fkgqa'`.
 *
 * One function per command, each taking a typed option object (the CLI's flags map one to one onto
 * it, see docs/cli.md) and resolving with the command's result. This module is also the composition
 * root: it gives `verify` and the MCP gold check `fkgqa serve`'s library function to start endpoints
 * in-process, so that verify, mcp and serve never import one another.
 *
 * Every function loads its implementation when first called (dynamic import): importing this
 * module is cheap, and `partition` never loads the MCP SDK, zod or Comunica.
 * Each function is named after its command (`evaluate`: `fkgqa eval`, `runLoop`: `fkgqa run`).
 */
import type { PartitionOptions } from './partition/options.js';
import type { MethodOptions } from './partition/presets.js';
import type { PartitionResult } from './partition/manifest.js';
import type { BuildStats, StatsOptions } from './report/stats.js';
import type { QuestionsOptions, QuestionView } from './report/questions.js';
import type { DescribeBuildOptions, DescribeBuildResult } from './describe/describe.js';
import type { SynthOptions, SynthResult } from './synth/replicate.js';
import type { ServeOptions, ShardServer } from './serve/server.js';
import type { VerifyOptions, VerifyReport } from './verify/verify.js';
import type { FkgqaMcpServer, McpServerOptions } from './mcp/server.js';
import type { EndpointRegistry, RegistryOptions } from './federation/registry.js';
import type { EvalOptions, EvalSummary } from './eval/eval.js';
import type { WorkerOptions, WorkerSummary } from './eval/queue.js';
import type { MergeOptions, MergeSummary } from './eval/merge.js';
import type { ScoreOptions, ScoreReport } from './score/score.js';
import type { GoldCheckOptions, GoldCheckReport } from './checks/mcp-gold.js';
import type { ViewOptions, ViewResult } from './view/view.js';
import type { QueryAnswer, QueryOptions } from './query/query.js';
import type { LoopOptions, LoopResult } from './workflow/run.js';

export type { PartitionOptions, PartitionResult, MethodOptions };
export type { GraphBuild, GraphManifest, ManifestQuery, ManifestShard } from './partition/manifest.js';
export type { BenchmarkEntry } from './partition/benchmark.js';
export type { BuildStats, StatsOptions, QuestionsOptions, QuestionView, DescribeBuildOptions, DescribeBuildResult, SynthOptions, SynthResult };
export type { ServeOptions, ShardServer, VerifyOptions, VerifyReport, FkgqaMcpServer, McpServerOptions, EvalOptions, EvalSummary, ScoreOptions, ScoreReport };
export type { GoldCheckOptions, GoldCheckReport, ViewOptions, ViewResult, QueryOptions, QueryAnswer, LoopOptions, LoopResult };
export type { EndpointRegistry, RegisteredEndpoint, RegistryOptions, EndpointLauncher, RunningEndpoints } from './federation/registry.js';
export type { EngineOutcome, EngineQueryOptions, EngineSetup, FederationEngine } from './federation/engine.js';
export type { FederationEngineName } from './federation/engines.js';
export { createEngine, DEFAULT_FEDERATION_ENGINE, FEDERATION_ENGINES } from './federation/engines.js';
export type { McpLimits, McpToolContext, Setup, ToolRegistrar } from './mcp/context.js';
export type { RunRecord } from './eval/record.js';
export { InputError } from './common/errors.js';

/**
 * Options of `partition`: `source` and `out`, every other option of PartitionOptions optional
 * (defaults: DEFAULT_PARTITION_OPTIONS); `preset` names a set of method options (`--preset`), which
 * the method options given here override.
 */
export type PartitionInput = Pick<PartitionOptions, 'source' | 'out'> & Partial<Omit<PartitionOptions, 'source' | 'out'>>;

/**
 * `fkgqa partition`: splits every graph of a source into shards (section 4 of the FKGQA paper) and
 * writes the build into `out` (only when every graph has been built).
 * @throws InputError for bad input (nothing is written then)
 */
export async function partition(options: PartitionInput): Promise<PartitionResult> {
  const [{ partition: run }, { DEFAULT_PARTITION_OPTIONS }, { resolveMethodOptions }] = await Promise.all([
    import('./partition/partition.js'),
    import('./partition/options.js'),
    import('./partition/presets.js'),
  ]);
  const method = resolveMethodOptions(options.preset, {
    buckets: options.buckets,
    layout: options.layout,
    expressionPatterns: options.expressionPatterns,
    classInference: options.classInference,
    horizontalCandidates: options.horizontalCandidates,
    horizontalPlacement: options.horizontalPlacement,
    predicateCandidates: options.predicateCandidates,
  });
  const given = Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) as PartitionInput;
  return run({ ...DEFAULT_PARTITION_OPTIONS, ...given, ...method.options, ...(method.preset ? { preset: method.preset } : {}) });
}

/** `fkgqa stats`: gold answers, implied and realised fan-out and the figures of a build (section 4.2). */
export async function stats(options: StatsOptions): Promise<BuildStats> {
  return (await import('./report/stats.js')).computeStats(options);
}

/** `fkgqa questions`: each question with its gold query, needed and implied shards, and gold answer. */
export async function questions(options: QuestionsOptions): Promise<QuestionView[]> {
  return (await import('./report/questions.js')).questionViews(options);
}

/** `fkgqa describe`: (re)computes the VoID of every shard and the catalogue of a build. */
export async function describe(options: DescribeBuildOptions): Promise<DescribeBuildResult> {
  return (await import('./describe/describe.js')).describeBuild(options);
}

/** `fkgqa synth`: a Spider-like source of a given size, by replicating one graph. */
export async function synth(options: SynthOptions): Promise<SynthResult> {
  return (await import('./synth/replicate.js')).synthesize(options);
}

/** `fkgqa serve`: every shard of a build as its own SPARQL endpoint; resolves once all listen. */
export async function serve(options: ServeOptions): Promise<ShardServer> {
  return (await import('./serve/server.js')).serve(options);
}

/**
 * `fkgqa verify`: every gold query federated and in trivial-federation form, compared with the
 * answer on the unsharded graph. Without `endpoints`, the endpoints are started in this process.
 */
export async function verify(options: VerifyOptions): Promise<VerifyReport> {
  const [{ verify: run }, { launchEndpoints }, { analyseGoldTies }] = await Promise.all([import('./verify/verify.js'), import('./serve/server.js'), import('./report/answers.js')]);
  return run({ launch: launchEndpoints, analyseTies: analyseGoldTies, ...options });
}

/** Options of `mcp`: the server's options, with the endpoints as a registry or where to read one (`openRegistry`). */
type McpOptions = Omit<McpServerOptions, 'registry'> & { registry: EndpointRegistry | RegistryOptions };

/**
 * `fkgqa mcp`: the SPARQL-MCP server of the FKGQA paper (section 3), not yet connected:
 * `await (await mcp(o)).server.connect(transport)`; `close()` stops it and its federation engine.
 */
export async function mcp(options: McpOptions): Promise<FkgqaMcpServer> {
  const [{ createMcpServer }, { openRegistry }] = await Promise.all([import('./mcp/server.js'), import('./federation/registry.js')]);
  const r = options.registry;
  const registry = 'source' in r && Array.isArray((r as EndpointRegistry).endpoints) ? (r as EndpointRegistry) : openRegistry(r as RegistryOptions);
  return createMcpServer({ ...options, registry });
}

/** `fkgqa eval`: runs an agent (a model or a scripted agent) on the benchmark's questions; appends run lines to `out`. */
export async function evaluate(options: EvalOptions): Promise<EvalSummary> {
  return (await import('./eval/eval.js')).runEval(options);
}

/** `fkgqa worker`: makes the runs a `fkgqa eval --queue` coordinator queued, until `signal` aborts or it refuses a run (src/eval/queue.ts). */
export async function worker(options: WorkerOptions): Promise<WorkerSummary> {
  return (await import('./eval/queue.js')).runWorker(options);
}

/** `fkgqa merge`: joins the run files of the parts of one evaluation into one (src/eval/merge.ts). */
export async function merge(options: MergeOptions): Promise<MergeSummary> {
  return (await import('./eval/merge.js')).mergeRunFiles(options);
}

/** `fkgqa score`: scores run files against the build's gold answers (section 6). */
export async function score(options: ScoreOptions): Promise<ScoreReport> {
  return (await import('./score/score.js')).score(options);
}

/**
 * `fkgqa view`: a self-contained HTML page of agent runs, each with `fkgqa score`'s verdict when
 * `shards` is given (src/view/view.ts).
 */
export async function view(options: ViewOptions): Promise<ViewResult> {
  return (await import('./view/view.js')).viewRuns(options);
}

/**
 * `fkgqa query`: one federated query through the routing of run_sparql_query (registry,
 * `routeQuery`, bounded client, federation engine), answered as SPARQL JSON results (src/query/query.ts).
 */
export async function query(options: QueryOptions): Promise<QueryAnswer> {
  return (await import('./query/query.js')).runQuery(options);
}

/**
 * `fkgqa run`: the whole loop from a build to a scored report and a run viewer: gold answers if
 * missing, the endpoints (a serve started in this process and stopped at the end, or the running
 * one), eval, score, view (src/workflow/run.ts).
 */
export async function runLoop(options: LoopOptions): Promise<LoopResult> {
  return (await import('./workflow/run.js')).runLoop(options);
}

/**
 * The end-to-end check of `fkgqa mcp` on a build (`npm run check:mcp-gold`): every gold query's
 * trivial federation through run_sparql_query must give the gold answer.
 */
export async function checkMcpGold(options: GoldCheckOptions): Promise<GoldCheckReport> {
  return (await import('./checks/mcp-gold.js')).checkGoldThroughMcp(options);
}
