/**
 * The ReAct-style agent loop of the FKGQA evaluation (paper, section 5): LLM calls alternate with
 * tool calls, at most `maxTurns` LLM calls (10 in the paper), until the agent calls
 * `submit_final_query` or `cancel`. Every step is recorded. A tool call with arguments that are
 * not a JSON object, or naming an unknown tool, is answered with an error the model can act on,
 * and the loop goes on. The submitted query is then executed in full by the harness (the answer
 * that is scored; the agent only ever sees previews).
 *
 * Limits (Inspect AI's habits): before each LLM call the run ends when its time limit has passed
 * (`time_limit`; an LLM call or tool call in progress is stopped at that instant), when it has
 * made `maxTurns` LLM calls (`turn_limit`), when its conversation holds `limits.messages` messages
 * or more (`message_limit`: system prompt, question, replies, tool results and nudges all count),
 * or when its LLM calls used `limits.tokens` tokens or more (`token_limit`). The tool calls of a
 * reply are carried out even if that reply crossed a limit (a submission in it counts). The
 * harness's execution of the submitted query is not part of the time limit.
 *
 * Failures that are not the agent's end the run at once as `infrastructure_error`: a tool result
 * whose `_meta["fkgqa/error"]` says `infrastructure: true` (an endpoint or the federation engine
 * down, refusing or faulting; contracts.md), a tool call the MCP server never answered, or an
 * infrastructure failure of the final execution (src/eval/execute.ts). An LLM API failure is
 * `model_error`.
 */
import type { ChatModel, ToolSpec } from './chat.js';
import { ModelError } from './chat.js';
import type { QueryExecutor } from './execute.js';
import type { WaitNotice } from './chat.js';
import type { ChatMessage, EndReason, FinalAnswer, InfrastructureFailure, RunRecord, Step, ToolStep, Usage } from './record.js';
import { HARNESS_TOOLS, type ToolProvider } from './tools.js';
import { serviceTargets } from '../sparql/services.js';

/** Input of one run. */
export interface LoopInput {
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
export const NUDGE = 'Continue with a tool call: run queries with run_sparql_query and submit your answer with submit_final_query (or cancel).';

/** The reason the run's abort signal carries when its time limit passes. */
class TimeLimitReached extends Error {
  constructor(ms: number) {
    super(`the run's time limit of ${ms} ms was reached`);
    this.name = 'TimeLimitReached';
  }
}

/** Runs the loop (module comment). Never throws for model or tool failures: they end or inform the run. */
export async function runLoop(input: LoopInput): Promise<LoopResult> {
  const t0 = performance.now();
  const messages: ChatMessage[] = [
    { role: 'system', content: input.system },
    { role: 'user', content: input.user },
  ];
  const steps: Step[] = [];
  const usage: Usage = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
  const counts = { llmCalls: 0, toolCalls: 0, sparqlCalls: 0, voidCalls: 0, retries: 0 };
  const offered = input.tools.tools();
  const tools: ToolSpec[] = [...offered, ...HARNESS_TOOLS];
  const names = tools.map((t) => t.name);
  const limits = input.limits ?? {};
  let endReason: EndReason | undefined;
  let error: string | undefined;
  let cancelReason: string | undefined;
  let infrastructure: InfrastructureFailure | undefined;
  let finalQuery: string | null = null;
  const clock = new AbortController();
  const timer = limits.timeMs !== undefined ? setTimeout(() => clock.abort(new TimeLimitReached(limits.timeMs!)), limits.timeMs) : undefined;
  const signal = clock.signal;

  try {
    for (let turn = 1; !endReason; turn++) {
      if (signal.aborted) endReason = 'time_limit';
      else if (turn > input.maxTurns) endReason = 'turn_limit';
      else if (limits.messages !== undefined && messages.length >= limits.messages) endReason = 'message_limit';
      else if (limits.tokens !== undefined && usage.totalTokens >= limits.tokens) endReason = 'token_limit';
      if (endReason) break;
      const s0 = performance.now();
      counts.llmCalls++;
      let reply;
      try {
        reply = await input.model.complete({ messages, tools, turn, signal, ...(input.onWait ? { onWait: (n: WaitNotice) => input.onWait!({ ...n, turn }) } : {}) });
      } catch (e) {
        const retries = e instanceof ModelError ? e.retries : [];
        counts.retries += retries.length;
        error = (e as Error).message;
        steps.push({ type: 'llm', turn, ms: performance.now() - s0, usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 }, finishReason: null, retries, error });
        endReason = signal.aborted ? 'time_limit' : 'model_error';
        break;
      }
      counts.retries += reply.retries.length;
      usage.promptTokens += reply.usage.promptTokens;
      usage.completionTokens += reply.usage.completionTokens;
      usage.totalTokens += reply.usage.totalTokens;
      steps.push({ type: 'llm', turn, ms: performance.now() - s0, usage: reply.usage, finishReason: reply.finishReason, retries: reply.retries, message: reply.message });
      messages.push(reply.message);
      const calls = reply.message.tool_calls ?? [];
      if (calls.length === 0) {
        messages.push({ role: 'user', content: NUDGE });
        continue;
      }
      for (const call of calls) {
        const c0 = performance.now();
        const name = call.function?.name ?? '';
        const raw = call.function?.arguments ?? '';
        let args: Record<string, unknown> | undefined;
        let text: string;
        let isError = false;
        let endpoints: string[] | undefined;
        let meta: ToolStep['error'];
        try {
          const parsed = raw.trim() === '' ? {} : (JSON.parse(raw) as unknown);
          if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) args = parsed as Record<string, unknown>;
        } catch {
          args = undefined;
        }
        counts.toolCalls++;
        if (endReason) {
          text = 'ignored: the task has already ended';
          isError = true;
        } else if (signal.aborted) {
          endReason = 'time_limit';
          text = `ignored: ${(signal.reason as Error).message}`;
          isError = true;
        } else if (!args) {
          text = `error: the arguments of ${name || 'this tool call'} are not a JSON object: ${raw.slice(0, 200)}`;
          isError = true;
        } else if (!names.includes(name)) {
          text = `error: unknown tool ${JSON.stringify(name)}; tools: ${names.join(', ')}`;
          isError = true;
        } else if (name === 'submit_final_query') {
          if (typeof args.query !== 'string' || !args.query.trim()) {
            text = 'error: submit_final_query needs a "query" string';
            isError = true;
          } else {
            finalQuery = args.query;
            endReason = 'submitted';
            text = 'submitted';
          }
        } else if (name === 'cancel') {
          cancelReason = typeof args.reason === 'string' ? args.reason : '';
          endReason = 'cancelled';
          text = 'cancelled';
        } else {
          if (name === 'run_sparql_query') {
            counts.sparqlCalls++;
            if (typeof args.query === 'string') endpoints = serviceTargets(args.query);
          } else if (name === 'get_void_descriptions') counts.voidCalls++;
          const r = await input.tools.call(name, args, { signal });
          text = r.text;
          isError = r.isError;
          meta = r.error;
          if (signal.aborted) {
            endReason = 'time_limit';
            text = `stopped: ${(signal.reason as Error).message}`;
            isError = true;
            meta = undefined;
          } else if (meta?.infrastructure) {
            endReason = 'infrastructure_error';
            infrastructure = { what: `${name} failed (${meta.class}${meta.endpoint ? ` at ${meta.endpoint}` : ''}): ${text.slice(0, 500)}`, ...(meta.endpoint ? { endpoint: meta.endpoint } : {}), step: steps.length };
          }
        }
        const step: ToolStep = { type: 'tool', turn, callId: call.id, name, arguments: raw, ms: performance.now() - c0, isError, result: text, ...(endpoints ? { endpoints } : {}), ...(meta ? { error: meta } : {}) };
        steps.push(step);
        messages.push({ role: 'tool', tool_call_id: call.id, content: text });
      }
    }
  } finally {
    clearTimeout(timer);
  }
  let final: FinalAnswer | undefined;
  if (finalQuery !== null && endReason === 'submitted') {
    const x = await input.executor.run(finalQuery);
    final = {
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
      endReason = 'infrastructure_error';
      infrastructure = { what: `the harness's execution of the submitted query failed (${x.errorClass}): ${(x.error ?? '').slice(0, 500)}`, ...(x.failedEndpoint ? { endpoint: x.failedEndpoint } : {}) };
    }
  }
  return { endReason: endReason ?? 'turn_limit', error, cancelReason, ...(infrastructure ? { infrastructure } : {}), messages, steps, finalQuery, final, usage, counts, ms: performance.now() - t0 };
}
