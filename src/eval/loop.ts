/**
 * The ReAct-style agent loop of the FKGQA evaluation (paper, section 5): LLM calls alternate with
 * tool calls, at most `maxTurns` LLM calls (10 in the paper), until the agent calls
 * `submit_final_query` or `cancel`. Every step is recorded. A tool call with arguments that are
 * not a JSON object, or naming an unknown tool, is answered with an error the model can act on,
 * and the loop goes on. The submitted query is then executed in full by the harness (the answer
 * that is scored; the agent only ever sees previews).
 *
 * Limits (Inspect AI's habits: `time_limit`, `turn_limit`, `message_limit`, `token_limit`) are
 * checked before each LLM call, as docs/evaluation.md ("Limits") says; the tool calls of a reply
 * that crossed one are still carried out.
 *
 * Failures that are not the agent's end the run at once as `infrastructure_error`: a tool result
 * whose `_meta["fkgqa/error"]` says `infrastructure: true`, a tool call the MCP server never
 * answered, or an infrastructure failure of the final execution (src/eval/execute.ts). An LLM API
 * failure is `model_error`.
 */
import type { ChatModel, ToolSpec } from './chat.js';
import { ModelError } from './chat.js';
import type { QueryExecutor } from './execute.js';
import type { WaitNotice } from './chat.js';
import type { ChatMessage, EndReason, FinalAnswer, InfrastructureFailure, RunRecord, Step, ToolCall, ToolStep, Usage } from './record.js';
import { HARNESS_TOOLS, type ToolProvider } from './tools.js';
import { serviceTargets } from '../sparql/services.js';

/** Input of one run. */
interface LoopInput {
  system: string;
  user: string;
  model: ChatModel;
  tools: ToolProvider;
  executor: QueryExecutor;
  maxTurns: number;
  /** Further limits of the run (module comment); absent or undefined: none. */
  limits?: { messages?: number; tokens?: number; timeMs?: number };
  /** Told while an LLM request is pending and before each retry (for progress on stderr), with the turn. */
  onWait?: (notice: WaitNotice & { turn: number }) => void;
}

/** What the loop produced (the caller adds the run's identity and settings): those fields of a run record. */
export type LoopResult = Pick<RunRecord, 'endReason' | 'error' | 'cancelReason' | 'infrastructure' | 'messages' | 'steps' | 'finalQuery' | 'final' | 'usage' | 'counts' | 'ms'>;

/** Nudge sent when the model answers without calling a tool. */
const NUDGE = 'Continue with a tool call: run queries with run_sparql_query and submit your answer with submit_final_query (or cancel).';

/** The reason the run's abort signal carries when its time limit passes. */
class TimeLimitReached extends Error {
  constructor(ms: number) {
    super(`the run's time limit of ${ms} ms was reached`);
    this.name = 'TimeLimitReached';
  }
}

/** A run in progress: its conversation, steps, usage and counts, and how it ended (once it has). */
interface RunState {
  messages: ChatMessage[];
  steps: Step[];
  usage: Usage;
  counts: LoopResult['counts'];
  endReason?: EndReason;
  error?: string;
  cancelReason?: string;
  infrastructure?: InfrastructureFailure;
  /** The query submitted with submit_final_query. */
  finalQuery: string | null;
}

/** What every turn of a run shares: the input, the tools offered (the agent's and the harness's), and the signal of the run's time limit. */
interface Turns {
  input: LoopInput;
  tools: ToolSpec[];
  /** The tools' names, for checking a call. */
  names: string[];
  limits: NonNullable<LoopInput['limits']>;
  signal: AbortSignal;
}

/** The limit the run has reached before LLM call `turn` (module comment), or undefined. */
function limitReached(s: RunState, t: Turns, turn: number): EndReason | undefined {
  if (t.signal.aborted) return 'time_limit';
  if (turn > t.input.maxTurns) return 'turn_limit';
  if (t.limits.messages !== undefined && s.messages.length >= t.limits.messages) return 'message_limit';
  if (t.limits.tokens !== undefined && s.usage.totalTokens >= t.limits.tokens) return 'token_limit';
  return undefined;
}

/**
 * LLM call `turn`: the reply joins the conversation and its usage the run's.
 * @returns the reply's tool calls, or undefined when the call failed (the run ends as
 *   `model_error`, or `time_limit` when the time limit stopped it)
 */
async function llmCall(s: RunState, t: Turns, turn: number): Promise<ToolCall[] | undefined> {
  const { input, signal } = t;
  const s0 = performance.now();
  s.counts.llmCalls++;
  let reply;
  try {
    reply = await input.model.complete({ messages: s.messages, tools: t.tools, turn, signal, ...(input.onWait ? { onWait: (n: WaitNotice) => input.onWait!({ ...n, turn }) } : {}) });
  } catch (e) {
    const retries = e instanceof ModelError ? e.retries : [];
    s.counts.retries += retries.length;
    s.error = (e as Error).message;
    s.steps.push({ type: 'llm', turn, ms: performance.now() - s0, usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 }, finishReason: null, retries, error: s.error });
    s.endReason = signal.aborted ? 'time_limit' : 'model_error';
    return undefined;
  }
  s.counts.retries += reply.retries.length;
  s.usage.promptTokens += reply.usage.promptTokens;
  s.usage.completionTokens += reply.usage.completionTokens;
  s.usage.totalTokens += reply.usage.totalTokens;
  s.steps.push({ type: 'llm', turn, ms: performance.now() - s0, usage: reply.usage, finishReason: reply.finishReason, retries: reply.retries, message: reply.message });
  s.messages.push(reply.message);
  return reply.message.tool_calls ?? [];
}

/** The arguments of a tool call: a JSON object (an empty text is `{}`), else undefined. */
function toolArguments(raw: string): Record<string, unknown> | undefined {
  try {
    const parsed = raw.trim() === '' ? {} : (JSON.parse(raw) as unknown);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    return undefined;
  }
  return undefined;
}

/** The answer to a tool call: its text, whether it is an error, the SERVICE targets of a query, the error's class. */
interface ToolCallAnswer {
  text: string;
  isError: boolean;
  endpoints?: string[];
  meta?: ToolStep['error'];
}

/** An error answer to a tool call. */
const refused = (text: string): ToolCallAnswer => ({ text, isError: true });

/**
 * Answers one tool call: ignored once the run has ended or its time is up, refused for arguments
 * that are no JSON object or an unknown tool; submit_final_query and cancel end the run; any other
 * tool is called, and its infrastructure failure ends the run.
 */
async function answerToolCall(s: RunState, t: Turns, name: string, raw: string): Promise<ToolCallAnswer> {
  const { signal } = t;
  const args = toolArguments(raw);
  s.counts.toolCalls++;
  if (s.endReason) return refused('ignored: the task has already ended');
  if (signal.aborted) {
    s.endReason = 'time_limit';
    return refused(`ignored: ${(signal.reason as Error).message}`);
  }
  if (!args) return refused(`error: the arguments of ${name || 'this tool call'} are not a JSON object: ${raw.slice(0, 200)}`);
  if (!t.names.includes(name)) return refused(`error: unknown tool ${JSON.stringify(name)}; tools: ${t.names.join(', ')}`);
  if (name === 'submit_final_query') {
    if (typeof args.query !== 'string' || !args.query.trim()) return refused('error: submit_final_query needs a "query" string');
    s.finalQuery = args.query;
    s.endReason = 'submitted';
    return { text: 'submitted', isError: false };
  }
  if (name === 'cancel') {
    s.cancelReason = typeof args.reason === 'string' ? args.reason : '';
    s.endReason = 'cancelled';
    return { text: 'cancelled', isError: false };
  }
  let endpoints: string[] | undefined;
  if (name === 'run_sparql_query') {
    s.counts.sparqlCalls++;
    if (typeof args.query === 'string') endpoints = serviceTargets(args.query);
  } else if (name === 'get_void_descriptions') s.counts.voidCalls++;
  const r = await t.input.tools.call(name, args, { signal });
  if (signal.aborted) {
    s.endReason = 'time_limit';
    return { text: `stopped: ${(signal.reason as Error).message}`, isError: true, endpoints };
  }
  const meta = r.error;
  if (meta?.infrastructure) {
    s.endReason = 'infrastructure_error';
    s.infrastructure = {
      what: `${name} failed (${meta.class}${meta.endpoint ? ` at ${meta.endpoint}` : ''}): ${r.text.slice(0, 500)}`,
      ...(meta.endpoint ? { endpoint: meta.endpoint } : {}),
      step: s.steps.length,
    };
  }
  return { text: r.text, isError: r.isError, endpoints, meta };
}

/** Answers the tool calls of LLM call `turn`, in order, each recorded as a step and its answer added to the conversation. */
async function toolCalls(s: RunState, t: Turns, turn: number, calls: ToolCall[]): Promise<void> {
  for (const call of calls) {
    const c0 = performance.now();
    const name = call.function?.name ?? '';
    const raw = call.function?.arguments ?? '';
    const { text, isError, endpoints, meta } = await answerToolCall(s, t, name, raw);
    const step: ToolStep = {
      type: 'tool',
      turn,
      callId: call.id,
      name,
      arguments: raw,
      ms: performance.now() - c0,
      isError,
      result: text,
      ...(endpoints ? { endpoints } : {}),
      ...(meta ? { error: meta } : {}),
    };
    s.steps.push(step);
    s.messages.push({ role: 'tool', tool_call_id: call.id, content: text });
  }
}

/**
 * The harness's execution of the submitted query (the answer that is scored); its infrastructure
 * failure ends the run as `infrastructure_error`.
 */
async function executeFinal(s: RunState, executor: QueryExecutor, query: string): Promise<FinalAnswer> {
  const x = await executor.run(query);
  const final: FinalAnswer = {
    status: x.status,
    ms: x.ms,
    endpoints: x.endpoints,
    ...(x.route ? { route: x.route } : {}),
    ...(x.results ? { results: x.results, rows: x.rows } : {}),
    ...(x.error ? { error: x.error } : {}),
    ...(x.errorClass ? { errorClass: x.errorClass } : {}),
    ...(x.status !== 'ok' ? { infrastructure: !!x.infrastructure } : {}),
  };
  if (x.infrastructure) {
    s.endReason = 'infrastructure_error';
    s.infrastructure = {
      what: `the harness's execution of the submitted query failed (${x.errorClass}): ${(x.error ?? '').slice(0, 500)}`,
      ...(x.failedEndpoint ? { endpoint: x.failedEndpoint } : {}),
    };
  }
  return final;
}

/**
 * Runs the loop (module comment): until a limit is reached (`limitReached`) or the run ends, an
 * LLM call (`llmCall`; a reply without tool calls gets the nudge) and its tool calls
 * (`toolCalls`); then the submitted query is executed (`executeFinal`). Never throws for model or
 * tool failures: they end or inform the run.
 */
export async function runLoop(input: LoopInput): Promise<LoopResult> {
  const t0 = performance.now();
  const s: RunState = {
    messages: [
      { role: 'system', content: input.system },
      { role: 'user', content: input.user },
    ],
    steps: [],
    usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
    counts: { llmCalls: 0, toolCalls: 0, sparqlCalls: 0, voidCalls: 0, retries: 0 },
    finalQuery: null,
  };
  const tools: ToolSpec[] = [...input.tools.tools(), ...HARNESS_TOOLS];
  const limits = input.limits ?? {};
  const clock = new AbortController();
  const timer = limits.timeMs !== undefined ? setTimeout(() => clock.abort(new TimeLimitReached(limits.timeMs!)), limits.timeMs) : undefined;
  const t: Turns = { input, tools, names: tools.map((x) => x.name), limits, signal: clock.signal };
  try {
    for (let turn = 1; !s.endReason; turn++) {
      s.endReason = limitReached(s, t, turn);
      if (s.endReason) break;
      const calls = await llmCall(s, t, turn);
      if (!calls) break;
      if (calls.length === 0) {
        s.messages.push({ role: 'user', content: NUDGE });
        continue;
      }
      await toolCalls(s, t, turn, calls);
    }
  } finally {
    clearTimeout(timer);
  }
  const final = s.finalQuery !== null && s.endReason === 'submitted' ? await executeFinal(s, input.executor, s.finalQuery) : undefined;
  const { messages, steps, usage, counts, endReason, error, cancelReason, infrastructure, finalQuery } = s;
  return { endReason: endReason ?? 'turn_limit', error, cancelReason, ...(infrastructure ? { infrastructure } : {}), messages, steps, finalQuery, final, usage, counts, ms: performance.now() - t0 };
}
