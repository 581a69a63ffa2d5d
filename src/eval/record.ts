/**
 * The run record: one JSON line per agent run, written by `fkgqa eval` and read by `fkgqa score`.
 * It holds everything needed to score the run offline (no endpoint is contacted when scoring) and
 * to replay the conversation: the prompt, every message, every LLM and tool call with its timing,
 * and the full answer of the submitted query.
 */
import type { JsonResults } from '../sparql/results.js';

/** Format tag of a run line. */
export const RUN_FORMAT = 'fkgqa-run/1';

/** The setups of the FKGQA paper (section 5) plus KGVoyager's tools (issue 10, paper 004). */
export const SETUPS = ['baseline', 'high_level', 'void_tool', 'kgvoyager'] as const;
export type Setup = (typeof SETUPS)[number];

/** The scripted agents of `fkgqa eval --agent` (src/eval/agents.ts): no model, a fixed query. */
export const SCRIPTED_AGENTS = ['oracle', 'trivial', 'single'] as const;
export type ScriptedAgent = (typeof SCRIPTED_AGENTS)[number];

/** How a run ended. */
export const END_REASONS = ['submitted', 'cancelled', 'turn_limit', 'model_error'] as const;
export type EndReason = (typeof END_REASONS)[number];

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
export interface LlmStep {
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
}

export type Step = LlmStep | ToolStep;

/** The submitted query, executed by the harness in full (not the preview the agent saw). */
export interface FinalAnswer {
  status: 'ok' | 'error' | 'timeout';
  ms: number;
  rows?: number;
  results?: JsonResults;
  error?: string;
  /** `direct` (one SERVICE wrapping the whole WHERE: sent to that endpoint) or `federation` (Comunica). */
  route?: 'direct' | 'federation';
  /** SERVICE targets of the submitted query. */
  endpoints: string[];
}

/** One shard endpoint of the question's graph. */
export interface RunEndpoint {
  id: string;
  url: string;
  /** `shard<N>`. */
  shard: string;
}

/** A run line. */
export interface RunRecord {
  format: typeof RUN_FORMAT;
  /** `<setup>|<agent>|<question index>|r<repeat>`: the key used to skip finished runs. */
  id: string;
  question: { index: number; kg: string; text: string; queryId: string };
  setup: Setup;
  /** `llm` or a scripted agent (`oracle`, `trivial`, `single`). */
  agent: string;
  model: string | null;
  baseUrl: string | null;
  temperature: number | null;
  seed: number | null;
  repeat: number;
  maxTurns: number;
  prompt: { name: string; sha256: string; text: string };
  /** Where the tools came from: `fkgqa mcp` over stdio, or the same server in-process. */
  tools: { source: 'mcp' | 'in-process'; names: string[]; command?: string[] };
  endpoints: RunEndpoint[];
  startedAt: string;
  ms: number;
  endReason: EndReason;
  error?: string;
  cancelReason?: string;
  messages: ChatMessage[];
  steps: Step[];
  finalQuery: string | null;
  final?: FinalAnswer;
  usage: Usage;
  counts: { llmCalls: number; toolCalls: number; sparqlCalls: number; voidCalls: number; retries: number };
}
