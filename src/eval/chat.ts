/**
 * A small client for OpenAI-compatible chat-completions APIs with tool calling (`POST
 * <base>/chat/completions`: OpenAI, vLLM, llama.cpp server, Ollama's /v1, …) over fkgqa's HTTP client (`send`); the
 * `openai` 7.x package needs Node 22. Every request has a time limit (`requestTimeoutMs`). 429 and
 * 5xx answers, network errors and requests over the time limit are retried with exponential backoff
 * (`backoffMs`, doubled per retry) unless the answer carries `Retry-After` (seconds or an HTTP
 * date, RFC 9110 §10.2.3; at most 10 minutes), every retry recorded. While a request is pending,
 * and at each retry, the caller is told (`onWait`), so that a stalled API shows on stderr.
 */
import { send } from '../common/http-client.js';
import type { ChatMessage, Retry, Usage } from './record.js';

/** Retries of an LLM call when none are given (`--max-retries`). */
export const DEFAULT_MAX_RETRIES = 5;
/** Time limit of one LLM API request when none is given (`--request-timeout`), in ms. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 300_000;

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
  /** Aborted when the run must stop (its time limit): the request and any backoff wait end at once, rejecting with the signal's reason. */
  signal?: AbortSignal;
  /** Told while a request is pending (every `noticeMs`) and before each retry. */
  onWait?: (notice: WaitNotice) => void;
}

/** A request that is taking long, or a retry about to wait. */
export interface WaitNotice {
  /** `waiting`: no answer yet; `retry`: the try failed and the next one starts after `retryInMs`. */
  kind: 'waiting' | 'retry';
  /** The try, from 1, and the most there will be. */
  attempt: number;
  tries: number;
  /** Time since this try was sent, in ms. */
  waitedMs: number;
  /** The time limit of one request, in ms. */
  requestTimeoutMs: number;
  /** Why the try failed (`retry`). */
  error?: string;
  /** Wait before the next try, in ms (`retry`). */
  retryInMs?: number;
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
  /** Time limit of one HTTP request in ms (default 300,000); a request over it is retried like a network error. */
  requestTimeoutMs?: number;
  /** Interval of the `waiting` notices while a request is pending, in ms (default 10,000). */
  noticeMs?: number;
  /** Extra fields merged into every request body (e.g. `{"reasoning_effort": "low"}`). */
  extraBody?: Record<string, unknown>;
  /** Largest answer body read, in bytes (default MAX_REPLY_BYTES); a larger one is a model error, not retried. */
  maxReplyBytes?: number;
}

/** Default largest API answer read (64 MiB): a chat completion is kilobytes; more is a broken or hostile API, and reading it all could exhaust memory. */
const MAX_REPLY_BYTES = 64 << 20;

const zeroUsage = (): Usage => ({ promptTokens: 0, completionTokens: 0, totalTokens: 0 });

interface ApiReply {
  choices?: { message?: { role?: string; content?: string | null; tool_calls?: ChatMessage['tool_calls'] }; finish_reason?: string | null }[];
  usage?: { prompt_tokens?: number; completion_tokens?: number; total_tokens?: number };
  error?: { message?: string };
}

/** Longest `Retry-After` honoured, in ms (a longer one is cut to this). */
const MAX_RETRY_AFTER_MS = 600_000;

/**
 * The wait a `Retry-After` header asks for (RFC 9110 §10.2.3: delay-seconds or an HTTP date), in ms,
 * at most `MAX_RETRY_AFTER_MS`; undefined when the header is absent or not understood.
 * @param now the current time in ms since the epoch (for an HTTP date)
 */
export function retryAfterMs(header: string | null, now = Date.now()): number | undefined {
  if (header === null || header.trim() === '') return undefined;
  const v = header.trim();
  let ms: number;
  if (/^\d+$/.test(v)) ms = Number(v) * 1000;
  else {
    const t = Date.parse(v);
    if (!Number.isFinite(t)) return undefined;
    ms = Math.max(0, t - now);
  }
  return Math.min(ms, MAX_RETRY_AFTER_MS);
}

/** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** The chat-completions client (module comment). */
export class OpenAiChat implements ChatModel {
  readonly model: string;
  constructor(private readonly o: OpenAiChatOptions) {
    this.model = o.model;
  }

  /**
   * Sends one chat request, retrying as the module comment says.
   * @throws ModelError when the API fails after the retries, or answers a 4xx other than 429, a
   *   body without a message, or a body over `maxReplyBytes`; the signal's reason when `request.signal` aborts
   */
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
    const maxRetries = this.o.maxRetries ?? DEFAULT_MAX_RETRIES;
    const backoff = this.o.backoffMs ?? 1000;
    const requestTimeoutMs = this.o.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    const noticeMs = this.o.noticeMs ?? 10_000;
    const runSignal = request.signal;
    for (let attempt = 0; ; attempt++) {
      if (runSignal?.aborted) throw runSignal.reason;
      let status: number | null = null;
      let error: string;
      let askedWaitMs: number | undefined;
      const sent = performance.now();
      const notice = request.onWait
        ? setInterval(() => request.onWait!({ kind: 'waiting', attempt: attempt + 1, tries: maxRetries + 1, waitedMs: performance.now() - sent, requestTimeoutMs }), noticeMs)
        : undefined;
      const limit = AbortSignal.timeout(requestTimeoutMs);
      try {
        const maxReply = this.o.maxReplyBytes ?? MAX_REPLY_BYTES;
        const res = await send({ url, method: 'POST', headers, body, signal: runSignal ? AbortSignal.any([limit, runSignal]) : limit }, { allowed: () => true, maxBytes: maxReply });
        status = res.status;
        const text = res.text;
        if (res.encodingProblem) throw new ModelError(`the API ${res.encodingProblem}`, retries, status);
        if (text === undefined) throw new ModelError(`the API answered ${res.status} with a body larger than ${maxReply} bytes (the limit of one answer); it was not read further`, retries, status);
        if (res.status >= 200 && res.status <= 299) {
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
            ? {
                promptTokens: j.usage.prompt_tokens ?? 0,
                completionTokens: j.usage.completion_tokens ?? 0,
                totalTokens: j.usage.total_tokens ?? (j.usage.prompt_tokens ?? 0) + (j.usage.completion_tokens ?? 0),
              }
            : zeroUsage();
          return { message, usage, finishReason: choice.finish_reason ?? null, retries };
        }
        error = `HTTP ${res.status}: ${text.slice(0, 300)}`;
        askedWaitMs = retryAfterMs(res.header('retry-after'));
        if (res.status !== 429 && res.status < 500) throw new ModelError(error, retries, status);
      } catch (e) {
        if (e instanceof ModelError) throw e;
        if (runSignal?.aborted) throw runSignal.reason;
        const err = e as Error & { cause?: { code?: string; message?: string } };
        error = limit.aborted || err.name === 'TimeoutError' ? `no answer within the request time limit of ${requestTimeoutMs} ms` : `${err.message}${err.cause?.code ? ` (${err.cause.code})` : ''}`;
      } finally {
        clearInterval(notice);
      }
      if (attempt >= maxRetries) {
        retries.push({ status, error, waitMs: 0 });
        throw new ModelError(`gave up after ${attempt + 1} ${attempt === 0 ? 'try' : 'tries'}: ${error}`, retries, status);
      }
      const waitMs = askedWaitMs ?? backoff * 2 ** attempt;
      retries.push({ status, error, waitMs });
      request.onWait?.({ kind: 'retry', attempt: attempt + 1, tries: maxRetries + 1, waitedMs: performance.now() - sent, requestTimeoutMs, error, retryInMs: waitMs });
      await sleep(waitMs, runSignal);
    }
  }
}

/** Network errors that mean nothing listens at the API's address (not a slow or failing server). */
const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);

/**
 * Checks, before any run, that something answers at an OpenAI-compatible API's address: one
 * `GET <baseUrl>/models`. Any HTTP answer (even 401 or 404) passes, and so does a slow server
 * (no answer within `timeoutMs`: the runs' own retries and time limits deal with it); only a
 * connection refused or a host that does not resolve fails, so that a run of hundreds of questions
 * does not spend 6 tries on each before saying the model server is not running.
 * @param baseUrl e.g. http://127.0.0.1:8080/v1
 * @param timeoutMs how long to wait for an answer (ms)
 * @returns null when the API may be used, else why not (e.g. "connect ECONNREFUSED 127.0.0.1:8080")
 */
export async function unreachableApi(baseUrl: string, apiKey: string | undefined, timeoutMs = 10_000): Promise<string | null> {
  try {
    // Any answer passes (a redirect too): its body is not read.
    await send(
      { url: `${baseUrl.replace(/\/+$/, '')}/models`, headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {}, signal: AbortSignal.timeout(timeoutMs) },
      { allowed: () => true, maxBytes: 0 },
    );
    return null;
  } catch (e) {
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    if (cause?.code && UNREACHABLE_CODES.has(cause.code)) return cause.message ?? cause.code;
    // A port fetch refuses to connect to at all (1, 6000 and the other "bad ports" of the Fetch standard).
    if (cause?.message === 'bad port') return `fetch refuses port ${new URL(baseUrl).port} (a "bad port" of the Fetch standard)`;
    return null;
  }
}
