/**
 * What `fkgqa eval` and `fkgqa worker` share to make runs: the options (`EvalOptions`), their check
 * and the selection (`prepareEval`, `selectQuestions`, `plannedRuns`, `--part` as `inPart`), the
 * making of one run (`RunMaker`: its tools from `fkgqa mcp` over stdio or the in-process provider,
 * scoped to the question's graph; its agent, a model behind an OpenAI-compatible API or a scripted
 * agent; the loop; the run record with the build it was made on, the gold answer it will be scored
 * against and the digest of the tool surface it saw), and the tally of finished runs (`RunTally`).
 * `runEval` (src/eval/eval.ts) drives them here, `coordinate` and `runWorker` (src/eval/queue.ts)
 * over a queue.
 */
import { DEFAULT_FEDERATION_ENGINE } from '../federation/engines.js';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { InputError } from '../common/errors.js';
import { openBuild, type BenchmarkEntry } from '../build/open.js';
import { seededRandom } from '../common/random.js';
import { readNeededShards } from '../build/fan-out.js';
import { goldAnswerDigest, readGoldAnswers, type GoldAnswer } from '../build/gold-answers.js';
import { negatedShards, ScriptedModel, scriptedQuery } from './agents.js';
import { DEFAULT_MAX_RETRIES, DEFAULT_REQUEST_TIMEOUT_MS, OpenAiChat, unreachableApi, type ChatModel, type OpenAiChatOptions, type WaitNotice } from './chat.js';
import { QueryExecutor } from './execute.js';
import { runLoop, type LoopResult } from './loop.js';
import {
  conditionDigest,
  digest16,
  FAILED_END_REASONS,
  runCondition,
  runId,
  RUN_FORMAT,
  toolSurfaceDigest,
  type EndReason,
  type RunCondition,
  type RunEndpoint,
  type RunRecord,
  type ScriptedAgent,
} from './record.js';
import type { Setup } from '../mcp/context.js';
import { HARNESS_TOOLS, harnessPromptWords, McpToolProvider, type ToolProvider } from './tools.js';
import { filterGraphs, openRegistry, placementMismatches, placementRefusal } from '../federation/registry.js';
import { unknownGraphError } from '../build/names.js';
import { counted, seconds } from '../common/strings.js';

/** The prompts shipped with fkgqa (`prompts/<setup>.md`). */
export const PROMPTS_DIR = fileURLToPath(new URL('../../prompts', import.meta.url));
/** The CLI entry point, for spawning `fkgqa mcp`. */
const BIN = fileURLToPath(new URL('../../bin/fkgqa.js', import.meta.url));

/** Options of `runEval`; the model API's (`baseUrl`, `model`, `apiKey`, sampling, retries, `extraBody`) are `OpenAiChatOptions`'. */
export interface EvalOptions extends Partial<
  Pick<OpenAiChatOptions, 'baseUrl' | 'model' | 'apiKey' | 'temperature' | 'seed' | 'extraBody' | 'maxRetries' | 'backoffMs' | 'requestTimeoutMs' | 'noticeMs'>
> {
  /** The build (benchmark.json, manifests, realised fan-out, catalogue). */
  shards: string;
  /**
   * Endpoints files of running `fkgqa serve`s (several: shards served by several hosts; default: the
   * state folder's, else the build's). Read and checked by the endpoint registry (src/federation/registry.ts).
   */
  endpoints?: string | string[];
  /** The federation engine, by `--federation-engine` name (default `comunica`), for the tools and the final execution. */
  federationEngine?: string;
  /** State folder (default `<build>.state`). */
  state?: string;
  setup: Setup;
  /** `llm` (a model behind `baseUrl`) or a scripted agent. */
  agent: 'llm' | ScriptedAgent;
  /** LLM calls per run (default 10, the paper's limit). */
  maxTurns?: number;
  /** Messages per run (conversation length; none by default): over it the run ends as `message_limit`. */
  messageLimit?: number;
  /** Tokens per run (`usage.totalTokens`; none by default): over it the run ends as `token_limit`. */
  tokenLimit?: number;
  /** Time per run, in ms (the agent's work; none by default): over it the run ends as `time_limit`. */
  timeLimitMs?: number;
  /** The run file (JSON lines), appended to. */
  out: string;
  /** Only these graphs. */
  kgs?: string[];
  /** Only these question indexes (benchmark.json `index`). @throws InputError in runEval for an index the build does not have */
  questions?: number[];
  /** Only the questions asking these gold queries (`<kg>/q<N>`). @throws InputError in runEval for an id the build does not have */
  queries?: string[];
  /** Only the first N questions of the selection (after sampling), as Inspect's `--limit`. */
  limit?: number;
  /** One question per distinct gold query of a graph (the first asking it), before sampling. */
  distinctQueries?: boolean;
  /** Scripted agents run their query once before submitting it (default true). */
  probe?: boolean;
  /** At most this many questions per graph, chosen with `sampleSeed` (default all). */
  perGraph?: number;
  sampleSeed?: number;
  /** Runs per question (default 1). */
  repeats?: number;
  /** Runs at once (default 1). */
  concurrency?: number;
  /** Tools from `fkgqa mcp` over stdio (default) or from the same server built in-process. */
  tools?: 'mcp' | 'in-process';
  /** Extra arguments for `fkgqa mcp`. */
  mcpArgs?: string[];
  /** Folder of the prompt files (default the shipped ones). */
  promptsDir?: string;
  /** Time limit of one query (tools and the final answer), in ms (default 30,000). */
  timeoutMs?: number;
  /**
   * Longest query accepted by the tools and the final execution, in characters (default 8,000, the
   * reference server's, for a model; `SCRIPTED_MAX_QUERY_CHARS` for a scripted agent, whose trivial or
   * oracle form may be longer).
   */
  maxQueryChars?: number;
  /** Rerun runs that ended as a failure (`model_error`, `infrastructure_error`). */
  retryErrors?: boolean;
  /**
   * Only the runs of part k of n (`inPart`; `--part k/n`): n evals, each with its own run file, cover
   * the selection exactly once; `fkgqa merge` joins their files.
   */
  part?: { k: number; n: number };
  /**
   * A Redis URL (`redis://host:port[/db]`): this process becomes the coordinator of `fkgqa worker`s
   * (src/eval/queue.ts) — it queues the runs not yet in the run file and appends the records the
   * workers send back — instead of running them here.
   */
  queue?: string;
  progress?: (line: string) => void;
  /** Told what needs saying even with --quiet (a torn last line cut away from the run file). */
  warn?: (line: string) => void;
}

/** What `runEval` did. */
export interface EvalSummary {
  out: string;
  planned: number;
  /** Runs already in the run file (not run again). */
  skipped: number;
  ran: number;
  /** Runs of this call by end reason. */
  endReasons: Partial<Record<EndReason, number>>;
  /** Runs of this call that did not fail (every end reason but `model_error` and `infrastructure_error`). */
  succeeded: number;
  /** Runs of this call that failed, by end reason, with the first run's id and error. */
  failed: { endReason: EndReason; runs: number; first: { id: string; error: string } }[];
  /** What opening the run file repaired (a torn last line), if anything. */
  repaired?: string;
  /**
   * With a queue: runs that no worker could make (an internal error on every try, or killed more
   * often than the queue allows): not in the run file; the same command queues them again.
   */
  lost?: { id: string; error: string }[];
  ms: number;
}

/** The prompt of a setup: file name, SHA-256 of its text, the text. */
export function readPrompt(setup: Setup, dir = PROMPTS_DIR): { name: string; sha256: string; text: string } {
  const file = path.join(dir, `${setup}.md`);
  if (!fs.existsSync(file)) throw new InputError(`no prompt for setup ${setup}`, { file });
  const text = fs.readFileSync(file, 'utf8');
  return { name: `${setup}.md`, sha256: createHash('sha256').update(text).digest('hex'), text };
}

/**
 * The questions to run, in benchmark order: filtered by graph, index and gold query, one per
 * distinct gold query if asked, sampled per graph, then the first `limit`.
 */
export function selectQuestions(entries: BenchmarkEntry[], o: Pick<EvalOptions, 'kgs' | 'questions' | 'queries' | 'perGraph' | 'sampleSeed' | 'distinctQueries' | 'limit'>): BenchmarkEntry[] {
  let xs = entries.filter((e) => (!o.kgs?.length || o.kgs.includes(e.kg)) && (!o.questions?.length || o.questions.includes(e.index)) && (!o.queries?.length || o.queries.includes(e.queryId)));
  if (o.distinctQueries) {
    const seen = new Set<string>();
    xs = xs.filter((e) => !seen.has(e.queryId) && !!seen.add(e.queryId));
  }
  if (o.perGraph !== undefined) {
    const keep = new Set<number>();
    for (const kg of [...new Set(xs.map((e) => e.kg))]) {
      const rand = seededRandom(o.sampleSeed ?? 0, kg);
      const pool = xs.filter((e) => e.kg === kg).map((e) => ({ e, r: rand() }));
      pool.sort((a, b) => a.r - b.r);
      for (const p of pool.slice(0, o.perGraph)) keep.add(p.e.index);
    }
    xs = xs.filter((e) => keep.has(e.index));
  }
  return o.limit !== undefined ? xs.slice(0, o.limit) : xs;
}

/** The longest query a scripted agent may send unless `maxQueryChars` says otherwise (characters): its trivial or oracle form may exceed the reference server's 8,000. */
export const SCRIPTED_MAX_QUERY_CHARS = 1_000_000;

/** The endpoint list shown to the agent: URLs, with the catalogue's descriptions in high_level. */
function endpointList(endpoints: Pick<RunEndpoint, 'id' | 'url'>[], descriptions: Map<string, string> | undefined): string {
  return endpoints.map((e) => (descriptions ? `- ${e.url} — ${descriptions.get(e.id) ?? '(no description)'}` : `- ${e.url}`)).join('\n');
}

/**
 * The system prompt of a run: the setup's prompt file (which names only the tools of the setup's
 * MCP server) with `{{endpoints}}` filled, then the harness's own words on submit_final_query and
 * cancel and the turn limit (`harnessPromptWords`).
 * @param promptText the text of prompts/<setup>.md (or `--prompts`)
 * @param descriptions the catalogue's description per endpoint id (high_level only)
 * @param maxTurns LLM calls per run
 */
export function systemPrompt(promptText: string, endpoints: Pick<RunEndpoint, 'id' | 'url'>[], descriptions: Map<string, string> | undefined, maxTurns: number): string {
  return `${promptText.trimEnd().replace('{{endpoints}}', endpointList(endpoints, descriptions))}\n\n${harnessPromptWords(maxTurns)}\n`;
}

/** Seconds with one decimal, for progress lines. */

/** A run that ended before its loop started: the tools or the scripted agent's preparation failed (an endpoint or the MCP server). */
function setupFailure(system: string, user: string, e: unknown, t0: number): LoopResult {
  return {
    endReason: 'infrastructure_error',
    infrastructure: { what: `the run's tools could not be set up: ${(e as Error).message}` },
    messages: [
      { role: 'system', content: system },
      { role: 'user', content: user },
    ],
    steps: [],
    finalQuery: null,
    usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
    counts: { llmCalls: 0, toolCalls: 0, sparqlCalls: 0, voidCalls: 0, retries: 0 },
    ms: performance.now() - t0,
  };
}

/** One run to make: a question of the build and a repeat, with its run id (`runIdOf`: `runId` of record.ts). */
export interface PlannedRun {
  q: BenchmarkEntry;
  repeat: number;
  id: string;
}

/**
 * What `prepareEval` checked and read for one set of options: the build, the selection, the
 * endpoints, the prompt. Shared by the runs of those options, here or in a `fkgqa worker`.
 */
export interface EvalContext {
  options: EvalOptions;
  /** The build's output digest (build.json `outputDigest`). */
  digest: string;
  defaultPrefix: string;
  /** Every question of the build, by benchmark.json index. */
  byIndex: Map<number, BenchmarkEntry>;
  /** The selected questions (`selectQuestions`), in benchmark order. */
  questions: BenchmarkEntry[];
  /** `llm` or the scripted agent. */
  agentName: string;
  /** The model, or the scripted agent: the second part of a run id. */
  who: string;
  prompt: { name: string; sha256: string; text: string };
  /**
   * The condition every run of these options measures (`runCondition` of record.ts, read from the
   * fields each record will carry), and its digest (`conditionDigest`): the last part of a run id.
   */
  condition: RunCondition;
  conditionDigest: string;
  /** The gold answer a run of this question will be scored against (fkgqa stats), if stored. */
  goldOf(q: BenchmarkEntry): GoldAnswer | undefined;
}

/** The fields of a run record that are the same for every run of one `EvalContext` and that the condition is read from (`runCondition`), but for the build and the tools. */
type MeasuredFields = Pick<RunRecord, 'setup' | 'agent' | 'model' | 'temperature' | 'seed' | 'extraBody' | 'probe' | 'maxTurns' | 'prompt'> & { limits: NonNullable<RunRecord['limits']> };

/** Internals of an `EvalContext` used by `RunMaker`. */
interface ContextParts {
  allEndpoints: ReturnType<typeof openRegistry>;
  endpointsFiles: string[];
  descriptions: Map<string, string> | undefined;
  needed: Map<string, Map<string, string[] | null> | undefined>;
  measured: MeasuredFields;
  /** `tools.mcpArgs` of each record (`--mcp-arg`), when given. */
  mcpArgs: { mcpArgs?: string[] };
}
const parts = new WeakMap<EvalContext, ContextParts>();

/**
 * Checks the options and reads what every run needs (module comment): the build, the selection, the
 * endpoints (registry), the prompt, the catalogue for high_level, the realised fan-out for the
 * oracle; for a model, that its API answers at all. Nothing is written.
 * @throws InputError for a missing build or endpoints file, an unknown graph, question index or gold
 *   query id, a selection without questions, a missing base URL or model for `llm`, a model API that
 *   cannot be reached, a missing prompt or catalogue, an oracle without realised fan-out
 */
export async function prepareEval(o: EvalOptions): Promise<EvalContext> {
  const benchFile = path.join(o.shards, 'benchmark.json');
  const opened = openBuild(o.shards);
  const bench = opened.benchmark;
  const digest = opened.build.outputDigest;
  for (const k of o.kgs ?? [])
    if (!bench.entries.some((e) => e.kg === k))
      throw unknownGraphError(
        k,
        bench.entries.map((e) => e.kg),
        'the build',
        benchFile,
      );
  const indexes = bench.entries.map((e) => e.index);
  const badIndexes = (o.questions ?? []).filter((i) => !indexes.includes(i));
  if (badIndexes.length) {
    throw new InputError(
      `--question ${badIndexes.join(' ')}: no question with ${badIndexes.length === 1 ? 'this index' : 'these indexes'} in the build (its indexes: ${Math.min(...indexes)}–${Math.max(...indexes)})`,
      { file: benchFile },
    );
  }
  const badQueries = (o.queries ?? []).filter((id) => !bench.entries.some((e) => e.queryId === id));
  if (badQueries.length)
    throw new InputError(`--query ${badQueries.join(' ')}: no such gold query in the build (ids are <kg>/q<N>, e.g. ${bench.entries[0]?.queryId ?? 'library/q0'})`, { file: benchFile });
  if (o.agent === 'llm' && (!o.baseUrl || !o.model)) throw new InputError('an LLM agent needs --base-url (or OPENAI_BASE_URL) and --model (or use --agent oracle|trivial|single)');
  const files = typeof o.endpoints === 'string' ? [o.endpoints] : o.endpoints;
  const allEndpoints = openRegistry({ endpointsFiles: files, build: o.shards, state: o.state, hint: `start fkgqa serve --shards ${o.shards} first, or pass --endpoints` });
  const endpointsFiles = allEndpoints.endpointsFiles ?? [];
  const prompt = readPrompt(o.setup, o.promptsDir);
  let descriptions: Map<string, string> | undefined;
  if (o.setup === 'high_level') {
    const cat = path.join(o.shards, 'catalogue.json');
    if (!fs.existsSync(cat)) throw new InputError('the high_level setup needs the catalogue (catalogue.json) of the build', { file: cat });
    const c = JSON.parse(fs.readFileSync(cat, 'utf8')) as { shards: { endpoint: string; description: string }[] };
    descriptions = new Map(c.shards.map((s) => [s.endpoint, s.description]));
  }
  const questions = selectQuestions(bench.entries, o);
  if (questions.length === 0 && (o.kgs?.length || o.questions?.length || o.queries?.length)) {
    throw new InputError(
      `no question matches the selection (${[o.kgs?.length ? `--kg ${o.kgs.join(' ')}` : '', o.questions?.length ? `--question ${o.questions.join(' ')}` : '', o.queries?.length ? `--query ${o.queries.join(' ')}` : ''].filter(Boolean).join(', ')})`,
      { file: benchFile },
    );
  }
  // The endpoints of the graphs asked must still serve the VoID their endpoints file lists (a stale file, a serve restarted on
  // another build): checked before any run, each VoID read within VOID_READ_MS.
  const asked = new Set(questions.map((q) => q.kg));
  const moved = await placementMismatches(allEndpoints, { checked: (e) => e.graph !== null && asked.has(e.graph) });
  if (moved.length > 0) throw new InputError(`${placementRefusal(moved)}; nothing was run`);
  const agentName = o.agent === 'llm' ? 'llm' : o.agent;
  const needed = new Map<string, Map<string, string[] | null> | undefined>();
  // The oracle needs the shards each answer needs (realised fan-out, stored by fkgqa stats):
  // without them it would silently name every shard, i.e. become the trivial agent.
  if (o.agent === 'oracle') for (const kg of new Set(questions.map((q) => q.kg))) oracleFanOut(o, needed, kg, digest);
  // The gold answer each run will be scored against (fkgqa stats), for the run's build identity.
  const golds = new Map<string, Map<string, GoldAnswer> | undefined>();
  const goldOf = (q: BenchmarkEntry): GoldAnswer | undefined => {
    if (!golds.has(q.kg)) golds.set(q.kg, ((a) => a && new Map(a.answers.map((x) => [x.query, x])))(readGoldAnswers(o.shards, q.kg, digest, { state: o.state })));
    return golds.get(q.kg)?.get(q.queryId);
  };

  // A model server that is not running is bad input, said at once (nothing is run or written),
  // not 6 tries per question (16 questions would take 8 minutes to say so).
  if (o.agent === 'llm') {
    let url: URL | undefined;
    try {
      url = new URL(o.baseUrl!);
    } catch {
      // reported below
    }
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) throw new InputError(`--base-url ${o.baseUrl}: not an http(s) URL (e.g. http://127.0.0.1:8080/v1)`);
    const why = await unreachableApi(o.baseUrl!, o.apiKey);
    if (why) throw new InputError(`the model API at ${o.baseUrl} cannot be reached (${why}): start the model server or check --base-url (OPENAI_BASE_URL); nothing was run`);
  }
  const measured: MeasuredFields = {
    setup: o.setup,
    agent: agentName,
    model: o.agent === 'llm' ? o.model! : null,
    temperature: o.agent === 'llm' ? (o.temperature ?? null) : null,
    seed: o.agent === 'llm' ? (o.seed ?? null) : null,
    ...(o.agent === 'llm' && o.extraBody && Object.keys(o.extraBody).length > 0 ? { extraBody: o.extraBody } : {}),
    ...(o.agent !== 'llm' && o.probe === false ? { probe: false } : {}),
    maxTurns: o.maxTurns ?? 10,
    limits: {
      messages: o.messageLimit ?? null,
      tokens: o.tokenLimit ?? null,
      timeMs: o.timeLimitMs ?? null,
      queryTimeoutMs: o.timeoutMs ?? 30_000,
      maxQueryChars: o.maxQueryChars ?? (o.agent === 'llm' ? 8000 : SCRIPTED_MAX_QUERY_CHARS),
      requestTimeoutMs: o.agent === 'llm' ? (o.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS) : null,
      maxRetries: o.agent === 'llm' ? (o.maxRetries ?? DEFAULT_MAX_RETRIES) : null,
      federationEngine: o.federationEngine ?? DEFAULT_FEDERATION_ENGINE,
    },
    prompt,
  };
  const mcpArgs = o.mcpArgs?.length ? { mcpArgs: o.mcpArgs } : {};
  const condition = runCondition({ ...measured, build: { outputDigest: digest, goldDigest: null }, tools: mcpArgs });
  const ctx: EvalContext = {
    options: o,
    digest,
    defaultPrefix: bench.defaultPrefix,
    byIndex: new Map(bench.entries.map((e) => [e.index, e])),
    questions,
    agentName,
    who: o.agent === 'llm' ? o.model! : agentName,
    prompt,
    condition,
    conditionDigest: conditionDigest(condition),
    goldOf,
  };
  parts.set(ctx, { allEndpoints, endpointsFiles, descriptions, needed, measured, mcpArgs });
  return ctx;
}

/** Reads the realised fan-out of a graph for the oracle. @throws InputError when fkgqa stats has not stored it */
function oracleFanOut(o: EvalOptions, needed: ContextParts['needed'], kg: string, digest: string): void {
  if (needed.has(kg) && needed.get(kg)) return;
  needed.set(kg, readNeededShards(o.shards, kg, digest, o.state));
  if (!needed.get(kg))
    throw new InputError(`--agent oracle needs the shards each answer needs (realised fan-out) of graph ${kg}: run fkgqa stats --shards ${o.shards} --kg ${kg} first`, { file: o.shards });
}

/**
 * Whether a run belongs to part `k` of `n` (`--part k/n`): the first 8 hex digits of its id's
 * sha256 (`digest16` of record.ts) modulo n equal k − 1. Stable: a run is in the same part
 * whatever else is selected, and the n parts of a selection cover it exactly once.
 */
export function inPart(id: string, part: { k: number; n: number }): boolean {
  return parseInt(digest16(id).slice(0, 8), 16) % part.n === part.k - 1;
}

/** The id of a run of these options (`runId` of record.ts: setup, model or agent, question, repeat and the condition's digest). */
export function runIdOf(ctx: EvalContext, q: BenchmarkEntry, repeat: number): string {
  return runId(ctx.condition, q.index, repeat, ctx.conditionDigest);
}

/** The runs of the selection (questions × repeats, in that order), restricted to `--part` when given. */
export function plannedRuns(ctx: EvalContext): PlannedRun[] {
  const o = ctx.options;
  const runs = ctx.questions.flatMap((q) => Array.from({ length: o.repeats ?? 1 }, (_, repeat) => ({ q, repeat, id: runIdOf(ctx, q, repeat) })));
  return o.part ? runs.filter((r) => inPart(r.id, o.part!)) : runs;
}

/**
 * Makes runs of one `EvalContext`: builds each run's tools (a spawned `fkgqa mcp`, or one in-process
 * server per graph and concurrency slot), its agent and its executor, runs the loop and returns the
 * run record. `close` stops what it started.
 */
export class RunMaker {
  // One executor (one federation engine thread: Comunica takes seconds to start) and, in-process,
  // one MCP server per graph and concurrency slot, shared by the runs of that graph in that slot;
  // a stdio server is spawned per run.
  private readonly executors = new Map<string, QueryExecutor>();
  private readonly servers = new Map<string, Promise<ToolProvider>>();

  constructor(readonly ctx: EvalContext) {}

  /**
   * Makes one run. `slot` (0 … concurrency − 1) says which in-process servers it may use: runs in
   * different slots at the same time never share one. Failures of the run's tools, model or
   * endpoints are recorded in the run (its end reason), not thrown.
   * @throws InputError when the options cannot make this run (an oracle without the realised fan-out of its graph)
   */
  async run(q: BenchmarkEntry, r: number, slot: number): Promise<RunRecord> {
    const ctx = this.ctx;
    const o = ctx.options;
    const { allEndpoints, endpointsFiles, descriptions, needed, measured, mcpArgs } = parts.get(ctx)!;
    const progress = o.progress ?? (() => {});
    const id = runIdOf(ctx, q, r);
    const timeoutMs = measured.limits.queryTimeoutMs!;
    const spawned = (o.tools ?? 'mcp') === 'mcp';
    const maxQueryChars = measured.limits.maxQueryChars!;
    const limits = { messages: o.messageLimit, tokens: o.tokenLimit, timeMs: o.timeLimitMs };
    if (o.agent === 'oracle') oracleFanOut(o, needed, q.kg, ctx.digest);
    const r0 = performance.now();
    // The run sees only its question's graph: its registry, and `--kg` for a spawned fkgqa mcp.
    const registry = filterGraphs(allEndpoints, [q.kg]);
    const endpoints: RunEndpoint[] = registry.endpoints.map((e) => ({ id: e.id, url: e.url, shard: e.shard ?? e.id }));
    const system = systemPrompt(ctx.prompt.text, endpoints, descriptions, o.maxTurns ?? 10);
    const key = `${slot}|${q.kg}`;
    const engine = o.federationEngine ? { federationEngine: o.federationEngine } : {};
    if (!spawned && !this.servers.has(key)) {
      this.servers.set(key, McpToolProvider.inProcess({ registry, setup: o.setup as 'baseline', callLog: null, state: null, limits: { defaultTimeoutMs: timeoutMs, maxQueryChars }, ...engine }));
    }
    if (!this.executors.has(key)) this.executors.set(key, new QueryExecutor(registry, timeoutMs, maxQueryChars, o.federationEngine));
    const executor = this.executors.get(key)!;
    const startedAt = new Date().toISOString();
    let tools: ToolProvider | undefined;
    let loop: LoopResult;
    try {
      let model: ChatModel;
      if (o.agent === 'llm') {
        model = new OpenAiChat({
          baseUrl: o.baseUrl!,
          model: o.model!,
          apiKey: o.apiKey,
          temperature: o.temperature,
          seed: o.seed,
          maxRetries: o.maxRetries,
          backoffMs: o.backoffMs,
          requestTimeoutMs: o.requestTimeoutMs,
          noticeMs: o.noticeMs,
          extraBody: o.extraBody,
        });
      } else {
        if (!needed.has(q.kg)) needed.set(q.kg, readNeededShards(o.shards, q.kg, ctx.digest, o.state));
        const n = needed.get(q.kg)?.get(q.queryId) ?? null;
        const negated = o.agent === 'oracle' ? await negatedShards(q.query, ctx.defaultPrefix, endpoints) : [];
        model = new ScriptedModel(scriptedQuery(o.agent, q.query, ctx.defaultPrefix, endpoints, n, negated), o.probe ?? true);
      }
      tools = spawned
        ? await McpToolProvider.spawn([
            process.execPath,
            BIN,
            'mcp',
            '--endpoints',
            ...endpointsFiles,
            '--kg',
            q.kg,
            '--setup',
            o.setup,
            '--timeout',
            String(timeoutMs),
            '--max-query-chars',
            String(maxQueryChars),
            ...(o.federationEngine ? ['--federation-engine', o.federationEngine] : []),
            '--quiet',
            ...(o.mcpArgs ?? []),
          ])
        : await this.servers.get(key)!;
      const onWait = (n: WaitNotice & { turn: number }) =>
        progress(
          n.kind === 'waiting'
            ? `  ${id} turn ${n.turn}: waiting for the API for ${seconds(n.waitedMs)} (try ${n.attempt} of ${n.tries}, request time limit ${seconds(n.requestTimeoutMs)})`
            : `  ${id} turn ${n.turn}: try ${n.attempt} of ${n.tries} failed after ${seconds(n.waitedMs)} (${(n.error ?? '').slice(0, 200)}); next try in ${seconds(n.retryInMs ?? 0)}`,
        );
      loop = await runLoop({ system, user: q.question, model, tools, executor, maxTurns: measured.maxTurns, limits, onWait });
    } catch (e) {
      if (e instanceof InputError) throw e; // bad options: every run would fail alike
      loop = setupFailure(system, q.question, e, r0);
    } finally {
      if (spawned) await tools?.close().catch(() => {});
    }
    const offered = [...(tools?.tools() ?? []), ...HARNESS_TOOLS];
    const surface = tools?.surface() ?? { instructions: null, resources: [], resourceTemplates: [], prompts: [] };
    return {
      format: RUN_FORMAT,
      id,
      question: { index: q.index, kg: q.kg, text: q.question, queryId: q.queryId },
      ...measured,
      baseUrl: o.agent === 'llm' ? o.baseUrl! : null,
      repeat: r,
      build: { outputDigest: ctx.digest, goldDigest: goldAnswerDigest(ctx.goldOf(q)) },
      tools: { source: spawned ? 'mcp' : 'in-process', names: offered.map((t) => t.name), ...(tools?.command ? { command: tools.command } : {}), ...mcpArgs },
      toolSurface: toolSurfaceDigest({ ...surface, tools: offered }),
      endpoints,
      startedAt,
      ...loop,
    };
  }

  /** Stops the executors and in-process servers it started. */
  async close(): Promise<void> {
    for (const e of this.executors.values()) await e.close();
    for (const s of this.servers.values())
      await s.then(
        (x) => x.close(),
        () => {},
      );
    this.executors.clear();
    this.servers.clear();
  }
}

/**
 * The runs of one call by end reason, the failed ones with the first error, and the progress line
 * of each (`[k/N] <id> <query>: <end reason> …`). Used by the local loop and by the queue's
 * coordinator alike.
 */
export class RunTally {
  readonly endReasons: Partial<Record<EndReason, number>> = {};
  private readonly failedBy = new Map<EndReason, { runs: number; first: { id: string; error: string } }>();
  finished = 0;

  constructor(
    private readonly total: number,
    private readonly progress: (line: string) => void,
  ) {}

  /** Counts a run appended to the run file and tells its progress line (`by`: who made it, e.g. a worker). */
  note(record: RunRecord, by?: string): void {
    const loop = record;
    this.endReasons[loop.endReason] = (this.endReasons[loop.endReason] ?? 0) + 1;
    if (FAILED_END_REASONS.includes(loop.endReason)) {
      const f = this.failedBy.get(loop.endReason) ?? { runs: 0, first: { id: record.id, error: loop.infrastructure?.what ?? loop.error ?? '' } };
      f.runs++;
      this.failedBy.set(loop.endReason, f);
    }
    this.finished++;
    const detail = loop.endReason === 'infrastructure_error' ? ` (${loop.infrastructure?.what.slice(0, 200)})` : loop.endReason === 'model_error' ? ` (${(loop.error ?? '').slice(0, 200)})` : '';
    const final = loop.final ? ` (final ${loop.final.status}${loop.final.rows !== undefined ? `, ${counted(loop.final.rows, 'row')}` : ''})` : '';
    this.progress(`  [${this.finished}/${this.total}] ${record.id} ${record.question.queryId}: ${loop.endReason}${final}${detail} in ${seconds(loop.ms)}${by ? ` by ${by}` : ''}`);
  }

  /** The failed runs by end reason. */
  get failed(): EvalSummary['failed'] {
    return [...this.failedBy.entries()].map(([endReason, f]) => ({ endReason, ...f }));
  }
}
