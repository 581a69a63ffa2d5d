/**
 * The run record: one JSON line per agent run, written by `fkgqa eval` and read by `fkgqa score`
 * (and `fkgqa view`). It holds everything needed to score the run offline (no endpoint is
 * contacted when scoring) and to replay the conversation: the prompt, every message, every LLM and
 * tool call with its timing, and the full answer of the submitted query; and what the run's
 * verdict depends on: the build and gold answer it was made for (`build`) and the information
 * surface the agent saw (`toolSurface`). These types are the contract between writer and readers;
 * docs/evaluation.md ("Run records") describes every field.
 *
 * This module is light (types, the lists of formats and end reasons, the identity of a run, two
 * digests): `fkgqa score` and `fkgqa view` import it and the reader of run files
 * (src/eval/run-reader.ts), nothing else of src/eval/.
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from '../build/gold-answers.js';
import type { SparqlResults } from '../sparql/results.js';
import type { Setup } from '../mcp/context.js';
import type { ToolErrorMeta } from '../mcp/tool-error.js';

/** Format tag of the run lines `fkgqa eval` writes, the only one the readers read (src/eval/run-reader.ts). */
export const RUN_FORMAT = 'fkgqa-run/2';

/** The scripted agents of `fkgqa eval --agent` (src/eval/agents.ts): no model, a fixed query. */
export const SCRIPTED_AGENTS = ['oracle', 'trivial', 'single'] as const;
export type ScriptedAgent = (typeof SCRIPTED_AGENTS)[number];

/**
 * How a run ended:
 * - `submitted`: the agent called submit_final_query (its answer is the harness's full execution, `final`);
 * - `cancelled`: the agent called cancel;
 * - `turn_limit`, `message_limit`, `token_limit`, `time_limit`: the run reached one of its limits
 *   (`maxTurns` LLM calls; `limits.messages` messages, `limits.tokens` tokens, `limits.timeMs` ms)
 *   without submitting: the agent's outcome, scored as wrong;
 * - `model_error`: the LLM API failed (after retries, or a 4xx other than 429);
 * - `infrastructure_error`: an endpoint or the federation engine (or the MCP server) was down,
 *   refused, faulted or was unreachable during the run or when the harness executed the final
 *   query (`infrastructure` says what): not the agent's fault.
 * The last two are failures of the run, not verdicts on the agent (`FAILED_END_REASONS`): never
 * counted in accuracy, rerun by `fkgqa eval --retry-errors`.
 */
export const END_REASONS = ['submitted', 'cancelled', 'turn_limit', 'message_limit', 'token_limit', 'time_limit', 'model_error', 'infrastructure_error'] as const;
export type EndReason = (typeof END_REASONS)[number];

/** End reasons that are failures of the run (API or infrastructure), not the agent's outcome: never in accuracy, rerun by `fkgqa eval --retry-errors`. */
export const FAILED_END_REASONS: readonly EndReason[] = ['model_error', 'infrastructure_error'];

/** End reasons that are limits the run hit before it answered: the agent's failure, scored as wrong. */
export const LIMIT_END_REASONS: readonly EndReason[] = ['turn_limit', 'message_limit', 'token_limit', 'time_limit'];

/** A chat message (OpenAI chat-completions shape). */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string | null;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
  name?: string;
}

/** A tool call as the model sent it; `arguments` is the raw JSON text (it may not parse). */
export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** Token counts of one LLM call or a whole run (from the API's `usage`; 0 when it sends none). */
export interface Usage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
}

/** One retry of an LLM call: the HTTP status (or network error) and the wait before the next try, in ms. */
export interface Retry {
  status: number | null;
  error: string;
  waitMs: number;
}

/** One LLM call. */
interface LlmStep {
  type: 'llm';
  /** Turn number, from 1. */
  turn: number;
  ms: number;
  usage: Usage;
  finishReason: string | null;
  retries: Retry[];
  /** The assistant message received (absent when the call failed). */
  message?: ChatMessage;
  error?: string;
}

/** One tool call and its result. */
export interface ToolStep {
  type: 'tool';
  turn: number;
  callId: string;
  name: string;
  /** The raw arguments text. */
  arguments: string;
  ms: number;
  isError: boolean;
  /** The result text the model received. */
  result: string;
  /** SERVICE targets of a run_sparql_query call (parsed from its query), or the endpoints the tool reports. */
  endpoints?: string[];
  /** For an error result: its classification (`ToolErrorMeta`), when the server or the harness gave one. */
  error?: ToolErrorMeta;
}

export type Step = LlmStep | ToolStep;

/** The submitted query, executed by the harness in full (not the preview the agent saw). */
export interface FinalAnswer {
  status: 'ok' | 'error' | 'timeout';
  ms: number;
  rows?: number;
  results?: SparqlResults;
  error?: string;
  /** `direct` (one SERVICE wrapping the whole WHERE: sent to that endpoint) or `federation` (Comunica). */
  route?: 'direct' | 'federation';
  /** SERVICE targets of the submitted query. */
  endpoints: string[];
  /** For an error: its class (`timeout`, `syntax`, `unknown-endpoint`, `endpoint`, `federation`, …). */
  errorClass?: string;
  /** For an error: true when an endpoint or the federation engine failed (the run then ends as `infrastructure_error`). */
  infrastructure?: boolean;
}

/** What failed in a run that ended as `infrastructure_error`. */
export interface InfrastructureFailure {
  /** What failed, in words (e.g. "the endpoint did not answer: connect ECONNREFUSED 127.0.0.1:8890"). */
  what: string;
  /** The endpoint URL that failed, when known. */
  endpoint?: string;
  /** Index in `steps` of the tool call that failed (0-based); absent when the harness's execution of the final query failed. */
  step?: number;
}

/**
 * The build a run was made on: its output digest (build.json `outputDigest`) and the digest of the
 * gold answer the run will be scored against (`goldAnswerDigest`; null when `fkgqa stats` has not
 * stored gold answers for this build and question).
 */
interface RunBuild {
  outputDigest: string;
  goldDigest: string | null;
}

/** The information surface the agent saw, as a digest (`toolSurfaceDigest`) and the number of tools offered to the model. */
interface ToolSurface {
  digest: string;
  tools: number;
}

/**
 * The per-run limits besides `maxTurns` (null: none, or not applicable). The last four are
 * optional and additive within `fkgqa-run/2` (lines written before them lack them; readers treat
 * them as unknown): every limit of `fkgqa eval` that can change a run's outcome is recorded.
 */
export interface RunLimits {
  /** Messages in the conversation (system prompt, question, replies, tool results and nudges). */
  messages: number | null;
  /** Tokens (`usage.totalTokens`) of the run's LLM calls. */
  tokens: number | null;
  /** Wall-clock time of the agent's work, in ms (the harness's final execution not included). */
  timeMs: number | null;
  /** Time limit of each SPARQL query of the tools and of the final execution, in ms (`--timeout`): over it a query is a `timeout`. */
  queryTimeoutMs?: number;
  /** Longest query the tools and the final execution accept, in characters (`--max-query-chars`): longer ones are refused (`too-long`). */
  maxQueryChars?: number;
  /** Time limit of one LLM API request, in ms (`--request-timeout`; null for scripted agents). */
  requestTimeoutMs?: number | null;
  /** Retries of an LLM call before the run ends with `model_error` (`--max-retries`; null for scripted agents). */
  maxRetries?: number | null;
  /** The federation engine of the tools and of the final execution (`--federation-engine`): it decides what times out. Absent in lines written before it. */
  federationEngine?: string;
}

/** One shard endpoint of the question's graph. */
export interface RunEndpoint {
  id: string;
  url: string;
  /** `shard<N>`. */
  shard: string;
}

/** A run line (`fkgqa-run/2`). */
export interface RunRecord {
  format: typeof RUN_FORMAT;
  /**
   * `<setup>|<model or agent>|<question index>|r<repeat>|<condition>` (`runId`). Readers compute it
   * from the fields (`runIdentity`), so lines written before it carried the condition read alike.
   */
  id: string;
  question: { index: number; kg: string; text: string; queryId: string };
  setup: Setup;
  /** `llm` or a scripted agent (`oracle`, `trivial`, `single`). */
  agent: string;
  model: string | null;
  baseUrl: string | null;
  temperature: number | null;
  seed: number | null;
  /** The extra request fields sent to the API with every call (`--extra-body`), when given. */
  extraBody?: Record<string, unknown>;
  /** Scripted agents: false when the agent submitted its query without running it first (`--no-probe`); absent otherwise. */
  probe?: boolean;
  repeat: number;
  maxTurns: number;
  limits?: RunLimits;
  build: RunBuild;
  prompt: { name: string; sha256: string; text: string };
  /** Where the tools came from: `fkgqa mcp` over stdio, or the same server in-process. */
  tools: { source: 'mcp' | 'in-process'; names: string[]; command?: string[]; /** Extra arguments for `fkgqa mcp` (`--mcp-arg`), when given. */ mcpArgs?: string[] };
  toolSurface?: ToolSurface;
  endpoints: RunEndpoint[];
  startedAt: string;
  ms: number;
  endReason: EndReason;
  error?: string;
  cancelReason?: string;
  /** Set when endReason is `infrastructure_error`. */
  infrastructure?: InfrastructureFailure;
  messages: ChatMessage[];
  steps: Step[];
  finalQuery: string | null;
  final?: FinalAnswer;
  usage: Usage;
  counts: { llmCalls: number; toolCalls: number; sparqlCalls: number; voidCalls: number; retries: number };
}

/**
 * The condition a run measured: every field of its record that can change what the agent did or
 * what its run is scored as. Two runs of one condition are repeats of one measurement; runs of two
 * conditions are never merged nor mixed in one figure (docs/evaluation.md, "Conditions"). Not in
 * it: the base URL and API key of the model server (another address of the same model), the
 * request time limit and retries of an LLM call (they decide only whether a run fails as
 * `model_error`, which is in no figure), the endpoint URLs (another port of the same shards) and the
 * tool surface's digest (it holds them), the source of the tools (`fkgqa mcp` or in-process: the
 * same server), the gold answer (checked per run by `fkgqa score`), and times.
 */
export interface RunCondition {
  setup: string;
  /** `llm` or a scripted agent. */
  agent: string;
  /** The model (null for a scripted agent). */
  model: string | null;
  temperature: number | null;
  seed: number | null;
  /** The extra request fields sent to the API (`--extra-body`: sampling parameters), or null. */
  extraBody: Record<string, unknown> | null;
  /** Scripted agents: whether the agent ran its query before submitting it (`--no-probe`: false); null for a model. */
  probe: boolean | null;
  maxTurns: number;
  /** The limits that change what a run can do (null: none, or not recorded). */
  limits: { messages: number | null; tokens: number | null; timeMs: number | null; queryTimeoutMs: number | null; maxQueryChars: number | null };
  /** The federation engine of the tools and the final execution (null: not recorded). */
  federationEngine: string | null;
  /** The build's output digest. */
  build: string;
  /** sha256 of the prompt template. */
  prompt: string;
  /** Extra arguments given to `fkgqa mcp` (`--mcp-arg`). */
  mcpArgs: string[];
}

/** The fields of a record the condition is read from (a record read, or the one eval is about to write). */
export type RunConditionSource = Pick<RunRecord, 'setup' | 'agent' | 'model' | 'temperature' | 'seed' | 'maxTurns' | 'limits' | 'build' | 'extraBody' | 'probe'> & {
  prompt: { sha256: string };
  tools?: { mcpArgs?: string[] };
};

const SCRIPTED = new Set<string>(SCRIPTED_AGENTS);

/**
 * The condition of a run, read from its record (RunCondition). Fields a record lacks because it was
 * written before they were recorded read as not recorded (null), but for `probe`, which reads as
 * true (the default), and `extraBody` and `mcpArgs`, which read as none.
 */
export function runCondition(r: RunConditionSource): RunCondition {
  const l = r.limits;
  return {
    setup: r.setup,
    agent: r.agent,
    model: r.model ?? null,
    temperature: r.temperature ?? null,
    seed: r.seed ?? null,
    extraBody: r.extraBody ?? null,
    probe: SCRIPTED.has(r.agent) ? r.probe !== false : null,
    maxTurns: r.maxTurns,
    limits: { messages: l?.messages ?? null, tokens: l?.tokens ?? null, timeMs: l?.timeMs ?? null, queryTimeoutMs: l?.queryTimeoutMs ?? null, maxQueryChars: l?.maxQueryChars ?? null },
    federationEngine: l?.federationEngine ?? null,
    build: r.build.outputDigest,
    prompt: r.prompt.sha256,
    mcpArgs: r.tools?.mcpArgs ?? [],
  };
}

/** The digest of a condition: sha256 (hex, first 16) of its canonical JSON. */
export function conditionDigest(c: RunCondition): string {
  return digest16(canonicalJson(c));
}

/**
 * The fields of a condition as `name → value` (the limits as `limits.<name>`; values as canonical
 * JSON), in the order of RunCondition: what `fkgqa score` labels conditions by and
 * `conditionMismatch` compares.
 */
export function conditionFields(c: RunCondition): Map<string, string> {
  const out = new Map<string, string>();
  for (const [k, v] of Object.entries(c)) {
    if (k === 'limits') for (const [k2, v2] of Object.entries(v as RunCondition['limits'])) out.set(`${k}.${k2}`, canonicalJson(v2));
    else out.set(k, canonicalJson(v));
  }
  return out;
}

/**
 * Why two runs are not of one condition (RunCondition, read from each record by `runCondition`), or
 * undefined when they are: every field of the condition that differs, with both values, e.g.
 * `temperature 0 ≠ 0.7, limits.timeMs null ≠ 60000`. `fkgqa merge` refuses to join such runs.
 */
export function conditionMismatch(a: RunConditionSource, b: RunConditionSource): string | undefined {
  const x = conditionFields(runCondition(a));
  const y = conditionFields(runCondition(b));
  const diffs = [...x].filter(([k, v]) => y.get(k) !== v).map(([k, v]) => `${k} ${v} ≠ ${y.get(k)}`);
  return diffs.length ? diffs.join(', ') : undefined;
}

/**
 * The id of a run: `<setup>|<model or agent>|<question index>|r<repeat>|<condition>`, the last part
 * the first 8 hex digits of the condition's digest (`conditionDigest`). Runs with the same id are the
 * same run (the same condition, question and repeat): `fkgqa eval` skips a run whose id is in its
 * run file (and its queue makes and appends each id once, its `--part` splits by id), a later line
 * of an id replaces an earlier one in a file, and `fkgqa score`, `fkgqa view` and `fkgqa merge`
 * refuse an id found in two files. Readers compute it from the record's fields (`runIdentity`), not
 * from its `id`, so lines written before ids carried the condition read and resume alike.
 * @param c the run's condition
 * @param condition `conditionDigest(c)` (16 hex digits; passed in, as callers have it already)
 */
export function runId(c: RunCondition, questionIndex: number, repeat: number, condition: string): string {
  return `${c.setup}|${c.agent === 'llm' ? (c.model ?? 'llm') : c.agent}|${questionIndex}|r${repeat}|${condition.slice(0, 8)}`;
}

/** The condition, its digest and the id of a run as read from its record's fields (`runId`: computed, whatever the line's `id` says). */
export function runIdentity(r: RunConditionSource & { question: { index: number }; repeat: number }): { condition: RunCondition; digest: string; id: string } {
  const condition = runCondition(r);
  const digest = conditionDigest(condition);
  return { condition, digest, id: runId(condition, r.question.index, r.repeat, digest) };
}

/** sha256 of a text, hex, first 16 digits (the digests of a run record). */
export function digest16(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
}

/** What the agent could see of an MCP server, in the order the server lists it (input of `toolSurfaceDigest`). */
interface ToolSurfaceInput {
  /** The server's instructions (null when it gives none). */
  instructions: string | null;
  /** Tools offered to the model: the server's, then the harness's submit_final_query and cancel. */
  tools: { name: string; description: string; parameters: Record<string, unknown> }[];
  /** Resources, resource templates and prompts the server lists (as listed). */
  resources: unknown[];
  resourceTemplates: unknown[];
  prompts: unknown[];
}

/**
 * The digest of an agent's information surface: sha256 (hex, first 16) of the
 * canonical JSON of `{instructions, tools, resources, resourceTemplates, prompts}` (tools with name,
 * description and input schema; lists in the server's order, object keys sorted). Two runs with the
 * same digest saw the same texts.
 */
export function toolSurfaceDigest(surface: ToolSurfaceInput): ToolSurface {
  return { digest: digest16(canonicalJson(surface)), tools: surface.tools.length };
}
