/**
 * A small client for OpenAI-compatible chat-completions APIs with tool calling (`POST
 * <base>/chat/completions`: OpenAI, vLLM, llama.cpp server, Ollama's /v1, …) over `fetch`; the
 * `openai` 7.x package needs Node 22. Retries 429 and 5xx answers and network errors with
 * exponential backoff (honouring `Retry-After` in seconds), every retry recorded.
 */
import type { ChatMessage, Retry, Usage } from './record.js';

/** A tool as offered to the model (OpenAI `tools[].function`). */
export interface ToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the arguments object. */
  parameters: Record<string, unknown>;
}

/** One request to a chat model. */
export interface ChatRequest {
  messages: ChatMessage[];
  tools: ToolSpec[];
  /** Turn number, from 1. */
  turn: number;
}

/** A model's reply. */
export interface ChatReply {
  message: ChatMessage;
  usage: Usage;
  finishReason: string | null;
  retries: Retry[];
}

/** A model failure after all retries (or one that is not retried); `retries` lists the tries made. */
export class ModelError extends Error {
  constructor(
    message: string,
    readonly retries: Retry[],
    readonly status: number | null,
  ) {
    super(message);
    this.name = 'ModelError';
  }
}

/** Anything that answers chat requests: an API client or a scripted agent. */
export interface ChatModel {
  /** Model name for the record (`null` for scripted agents). */
  readonly model: string | null;
  complete(request: ChatRequest): Promise<ChatReply>;
}

/** Options of the API client. */
export interface OpenAiChatOptions {
  /** Base URL, e.g. `http://127.0.0.1:8080/v1` (the client appends `/chat/completions`). */
  baseUrl: string;
  model: string;
  /** Bearer token (optional: local servers need none). */
  apiKey?: string;
  temperature?: number;
  seed?: number;
  /** Retries after the first try (default 5). */
  maxRetries?: number;
  /** First backoff in ms, doubled per retry (default 1,000). */
  backoffMs?: number;
  /** Time limit of one HTTP request in ms (default 300,000). */
  requestTimeoutMs?: number;
  /** Extra fields merged into every request body (e.g. `{"reasoning_effort": "low"}`). */
  extraBody?: Record<string, unknown>;
}

const zeroUsage = (): Usage => ({ promptTokens: 0, completionTokens: 0, totalTokens: 0 });

interface ApiReply {
  choices?: { message?: { role?: string; content?: string | null; tool_calls?: ChatMessage['tool_calls'] }; finish_reason?: string | null }[];
  usage?: { prompt_tokens?: number; completion_tokens?: number; total_tokens?: number };
  error?: { message?: string };
}

/** The chat-completions client (module comment). */
export class OpenAiChat implements ChatModel {
  readonly model: string;
  constructor(private readonly o: OpenAiChatOptions) {
    this.model = o.model;
  }

  async complete(request: ChatRequest): Promise<ChatReply> {
    const url = `${this.o.baseUrl.replace(/\/+$/, '')}/chat/completions`;
    const body = JSON.stringify({
      model: this.o.model,
      messages: request.messages.map((m) => Object.fromEntries(Object.entries(m).filter(([, v]) => v !== undefined))),
      ...(request.tools.length ? { tools: request.tools.map((t) => ({ type: 'function', function: t })), tool_choice: 'auto' } : {}),
      ...(this.o.temperature !== undefined ? { temperature: this.o.temperature } : {}),
      ...(this.o.seed !== undefined ? { seed: this.o.seed } : {}),
      ...(this.o.extraBody ?? {}),
    });
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
    if (this.o.apiKey) headers.authorization = `Bearer ${this.o.apiKey}`;
    const retries: Retry[] = [];
    const maxRetries = this.o.maxRetries ?? 5;
    const backoff = this.o.backoffMs ?? 1000;
    for (let attempt = 0; ; attempt++) {
      let status: number | null = null;
      let error: string;
      let retryAfterMs: number | undefined;
      try {
        const res = await fetch(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(this.o.requestTimeoutMs ?? 300_000) });
        status = res.status;
        const text = await res.text();
        if (res.ok) {
          let j: ApiReply;
          try {
            j = JSON.parse(text) as ApiReply;
          } catch {
            throw new ModelError(`the API answered ${res.status} with a body that is not JSON: ${text.slice(0, 200)}`, retries, status);
          }
          const choice = j.choices?.[0];
          if (!choice?.message) throw new ModelError(`the API answered without a message: ${text.slice(0, 200)}`, retries, status);
          const m = choice.message;
          const message: ChatMessage = { role: 'assistant', content: m.content ?? null, ...(m.tool_calls?.length ? { tool_calls: m.tool_calls } : {}) };
          const usage = j.usage
            ? { promptTokens: j.usage.prompt_tokens ?? 0, completionTokens: j.usage.completion_tokens ?? 0, totalTokens: j.usage.total_tokens ?? (j.usage.prompt_tokens ?? 0) + (j.usage.completion_tokens ?? 0) }
            : zeroUsage();
          return { message, usage, finishReason: choice.finish_reason ?? null, retries };
        }
        error = `HTTP ${res.status}: ${text.slice(0, 300)}`;
        const ra = Number(res.headers.get('retry-after'));
        if (Number.isFinite(ra) && ra >= 0) retryAfterMs = ra * 1000;
        if (res.status !== 429 && res.status < 500) throw new ModelError(error, retries, status);
      } catch (e) {
        if (e instanceof ModelError) throw e;
        error = `${(e as Error).name === 'TimeoutError' ? 'request time limit exceeded' : (e as Error).message}`;
      }
      if (attempt >= maxRetries) {
        retries.push({ status, error, waitMs: 0 });
        throw new ModelError(`gave up after ${attempt + 1} tries: ${error}`, retries, status);
      }
      const waitMs = retryAfterMs ?? backoff * 2 ** attempt;
      retries.push({ status, error, waitMs });
      await new Promise((r) => setTimeout(r, waitMs));
    }
  }
}
