/**
 * `fkgqa eval`: runs agents on the benchmark's questions (FKGQA paper, section 5) and appends one
 * run line per run (src/eval/record.ts) to a JSON-lines run file (src/eval/run-file.ts: whole
 * lines only, a torn last line cut away on open, one writer). Runs already in the file are skipped
 * (resume); runs go at most `concurrency` at a time; questions can be sampled per graph and cut
 * to the first `limit`. The agent is a model behind an OpenAI-compatible API (`OpenAiChat`) or a
 * scripted agent (src/eval/agents.ts); its tools come from `fkgqa mcp` over stdio or the
 * in-process provider, scoped to the question's graph. Every run records the build it was made
 * on, the gold answer it will be scored against and the digest of the tool surface it saw.
 */
import { DEFAULT_FEDERATION_ENGINE } from '../federation/engines.js';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { InputError } from '../common/errors.js';
import { openBuild } from '../build/open.js';
import { seededRandom } from '../common/random.js';
import { readNeededShards } from '../build/fan-out.js';
import { readGoldAnswers, type GoldAnswer } from '../build/gold-answers.js';
import { negatedShards, ScriptedModel, scriptedQuery } from './agents.js';
import { DEFAULT_MAX_RETRIES, DEFAULT_REQUEST_TIMEOUT_MS, OpenAiChat, unreachableApi, type ChatModel, type WaitNotice } from './chat.js';
import { QueryExecutor } from './execute.js';
import { runLoop, type LoopResult } from './loop.js';
import {
  FAILED_END_REASONS,
  goldAnswerDigest,
  RUN_FORMAT,
  toolSurfaceDigest,
  type EndReason,
  type RunEndpoint,
  type RunRecord,
  type ScriptedAgent,
  type Setup,
} from './record.js';
import { RunFile } from './run-file.js';
import { HARNESS_TOOLS, McpToolProvider, type ToolProvider } from './tools.js';
import { filterGraphs, openRegistry } from '../federation/registry.js';
import { unknownGraphError } from '../build/names.js';

/** The prompts shipped with fkgqa (`prompts/<setup>.md`). */
export const PROMPTS_DIR = fileURLToPath(new URL('../../prompts', import.meta.url));
/** The CLI entry point, for spawning `fkgqa mcp`. */
const BIN = fileURLToPath(new URL('../../bin/fkgqa.js', import.meta.url));

/** Options of `runEval`. */
export interface EvalOptions {
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
  baseUrl?: string;
  model?: string;
  apiKey?: string;
  temperature?: number;
  seed?: number;
  /** Extra request fields for the API. */
  extraBody?: Record<string, unknown>;
  /** Retries of an LLM call and the first backoff (ms), doubled per retry unless the API sends Retry-After. */
  maxRetries?: number;
  backoffMs?: number;
  /** Time limit of one LLM request, in ms (default 300,000); a request over it is retried. */
  requestTimeoutMs?: number;
  /** Interval of the "waiting for the API" lines while a request is pending, in ms (default 10,000). */
  noticeMs?: number;
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
  ms: number;
}

interface BenchmarkEntry {
  index: number;
  kg: string;
  question: string;
  query: string;
  queryId: string;
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
  let xs = entries.filter(
    (e) => (!o.kgs?.length || o.kgs.includes(e.kg)) && (!o.questions?.length || o.questions.includes(e.index)) && (!o.queries?.length || o.queries.includes(e.queryId)),
  );
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
function endpointList(endpoints: RunEndpoint[], descriptions: Map<string, string> | undefined): string {
  return endpoints.map((e) => (descriptions ? `- ${e.url} — ${descriptions.get(e.id) ?? '(no description)'}` : `- ${e.url}`)).join('\n');
}


/** Seconds with one decimal, for progress lines. */
const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

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

/**
 * Runs the evaluation (module comment).
 * @throws InputError for a missing build or endpoints file, an unknown graph, question index or
 *   gold query id, a selection without questions, a missing base URL or model for `llm`, a missing
 *   prompt, an `out` that is a directory or a run file with a line that is not a run record, or a
 *   run file another fkgqa eval is appending to
 */
export async function runEval(o: EvalOptions): Promise<EvalSummary> {
  const t0 = performance.now();
  const progress = o.progress ?? (() => {});
  const warn = o.warn ?? progress;
  const benchFile = path.join(o.shards, 'benchmark.json');
  const opened = openBuild(o.shards);
  const bench = opened.benchmark as unknown as { defaultPrefix: string; entries: BenchmarkEntry[] };
  const digest = opened.build.outputDigest;
  for (const k of o.kgs ?? []) if (!bench.entries.some((e) => e.kg === k)) throw unknownGraphError(k, bench.entries.map((e) => e.kg), 'the build', benchFile);
  const indexes = bench.entries.map((e) => e.index);
  const badIndexes = (o.questions ?? []).filter((i) => !indexes.includes(i));
  if (badIndexes.length) {
    throw new InputError(`--question ${badIndexes.join(' ')}: no question with ${badIndexes.length === 1 ? 'this index' : 'these indexes'} in the build (its indexes: ${Math.min(...indexes)}–${Math.max(...indexes)})`, { file: benchFile });
  }
  const badQueries = (o.queries ?? []).filter((id) => !bench.entries.some((e) => e.queryId === id));
  if (badQueries.length) throw new InputError(`--query ${badQueries.join(' ')}: no such gold query in the build (ids are <kg>/q<N>, e.g. ${bench.entries[0]?.queryId ?? 'library/q0'})`, { file: benchFile });
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
    throw new InputError(`no question matches the selection (${[o.kgs?.length ? `--kg ${o.kgs.join(' ')}` : '', o.questions?.length ? `--question ${o.questions.join(' ')}` : '', o.queries?.length ? `--query ${o.queries.join(' ')}` : ''].filter(Boolean).join(', ')})`, { file: benchFile });
  }
  const repeats = o.repeats ?? 1;
  const agentName = o.agent === 'llm' ? 'llm' : o.agent;
  const runKey = (q: BenchmarkEntry, r: number) => `${o.setup}|${o.agent === 'llm' ? o.model : agentName}|${q.index}|r${r}`;
  const needed = new Map<string, Map<string, string[] | null> | undefined>();
  // The oracle needs the shards each answer needs (realised fan-out, stored by fkgqa stats):
  // without them it would silently name every shard, i.e. become the trivial agent.
  if (o.agent === 'oracle') {
    for (const kg of new Set(questions.map((q) => q.kg))) {
      needed.set(kg, readNeededShards(o.shards, kg, digest, o.state));
      if (!needed.get(kg)) throw new InputError(`--agent oracle needs the shards each answer needs (realised fan-out) of graph ${kg}: run fkgqa stats --shards ${o.shards} --kg ${kg} first`, { file: o.shards });
    }
  }
  // The gold answer each run will be scored against (fkgqa stats), for the run's build identity.
  const golds = new Map<string, Map<string, GoldAnswer> | undefined>();
  const goldOf = (q: BenchmarkEntry): GoldAnswer | undefined => {
    if (!golds.has(q.kg)) golds.set(q.kg, (a => a && new Map(a.answers.map((x) => [x.query, x])))(readGoldAnswers(o.shards, q.kg, digest, { state: o.state })));
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
  const runFile = RunFile.open(o.out, digest, o.federationEngine ?? DEFAULT_FEDERATION_ENGINE);
  const endReasons: Partial<Record<EndReason, number>> = {};
  const failed = new Map<EndReason, { runs: number; first: { id: string; error: string } }>();
  // One executor (one federation engine thread: Comunica takes seconds to start) and, in-process,
  // one MCP server per graph and concurrency slot, shared by the runs of that graph in that slot;
  // a stdio server is spawned per run.
  const executors = new Map<string, QueryExecutor>();
  const servers = new Map<string, Promise<ToolProvider>>();
  let todo: { q: BenchmarkEntry; r: number }[] = [];
  try {
    if (runFile.opening.repaired) warn(`warning: ${runFile.opening.repaired}`);
    todo = questions.flatMap((q) => Array.from({ length: repeats }, (_, r) => ({ q, r }))).filter(({ q, r }) => !runFile.done(runKey(q, r), !!o.retryErrors));
    const skipped = questions.length * repeats - todo.length;
    progress(`fkgqa eval: ${questions.length} questions × ${repeats}, ${skipped} runs already in ${o.out}, ${todo.length} to run (${o.setup}, ${o.agent === 'llm' ? o.model : agentName}, tools ${o.tools ?? 'mcp'})`);
    let next = 0;
    let finished = 0;
    const timeoutMs = o.timeoutMs ?? 30_000;
    const spawned = (o.tools ?? 'mcp') === 'mcp';
    const maxQueryChars = o.maxQueryChars ?? (o.agent === 'llm' ? 8000 : SCRIPTED_MAX_QUERY_CHARS);
    const limits = { messages: o.messageLimit, tokens: o.tokenLimit, timeMs: o.timeLimitMs };
    const worker = async (slot: number) => {
      while (next < todo.length) {
        const { q, r } = todo[next++];
        const id = runKey(q, r);
        const r0 = performance.now();
        // The run sees only its question's graph: its registry, and `--kg` for a spawned fkgqa mcp.
        const registry = filterGraphs(allEndpoints, [q.kg]);
        const endpoints: RunEndpoint[] = registry.endpoints.map((e) => ({ id: e.id, url: e.url, shard: e.shard ?? e.id }));
        const system = prompt.text.replace('{{endpoints}}', endpointList(endpoints, descriptions));
        const key = `${slot}|${q.kg}`;
        const engine = o.federationEngine ? { federationEngine: o.federationEngine } : {};
        if (!spawned && !servers.has(key)) {
          servers.set(key, McpToolProvider.inProcess({ registry, setup: o.setup as 'baseline', callLog: null, state: null, limits: { defaultTimeoutMs: timeoutMs, maxQueryChars }, ...engine }));
        }
        if (!executors.has(key)) executors.set(key, new QueryExecutor(registry, timeoutMs, maxQueryChars, o.federationEngine));
        const executor = executors.get(key)!;
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
            if (!needed.has(q.kg)) needed.set(q.kg, readNeededShards(o.shards, q.kg, digest, o.state));
            const n = needed.get(q.kg)?.get(q.queryId) ?? null;
            const negated = o.agent === 'oracle' ? await negatedShards(q.query, bench.defaultPrefix, endpoints) : [];
            model = new ScriptedModel(scriptedQuery(o.agent, q.query, bench.defaultPrefix, endpoints, n, negated), o.probe ?? true);
          }
          tools = spawned
            ? await McpToolProvider.spawn([
                process.execPath, BIN, 'mcp', '--endpoints', ...endpointsFiles, '--kg', q.kg, '--setup', o.setup, '--timeout', String(timeoutMs), '--max-query-chars', String(maxQueryChars),
                ...(o.federationEngine ? ['--federation-engine', o.federationEngine] : []), '--quiet', ...(o.mcpArgs ?? []),
              ])
            : await servers.get(key)!;
          const onWait = (n: WaitNotice & { turn: number }) =>
            progress(
              n.kind === 'waiting'
                ? `  ${id} turn ${n.turn}: waiting for the API for ${secs(n.waitedMs)} (try ${n.attempt} of ${n.tries}, request time limit ${secs(n.requestTimeoutMs)})`
                : `  ${id} turn ${n.turn}: try ${n.attempt} of ${n.tries} failed after ${secs(n.waitedMs)} (${(n.error ?? '').slice(0, 200)}); next try in ${secs(n.retryInMs ?? 0)}`,
            );
          loop = await runLoop({ system, user: q.question, model, tools, executor, maxTurns: o.maxTurns ?? 10, limits, onWait });
        } catch (e) {
          if (e instanceof InputError) throw e; // bad options: every run would fail alike
          loop = setupFailure(system, q.question, e, r0);
        } finally {
          if (spawned) await tools?.close().catch(() => {});
        }
        const offered = [...(tools?.tools() ?? []), ...HARNESS_TOOLS];
        const surface = tools?.surface() ?? { instructions: null, resources: [], resourceTemplates: [], prompts: [] };
        const record: RunRecord = {
          format: RUN_FORMAT,
          id,
          question: { index: q.index, kg: q.kg, text: q.question, queryId: q.queryId },
          setup: o.setup,
          agent: agentName,
          model: o.agent === 'llm' ? o.model! : null,
          baseUrl: o.agent === 'llm' ? o.baseUrl! : null,
          temperature: o.agent === 'llm' ? (o.temperature ?? null) : null,
          seed: o.agent === 'llm' ? (o.seed ?? null) : null,
          repeat: r,
          maxTurns: o.maxTurns ?? 10,
          limits: {
            messages: o.messageLimit ?? null,
            tokens: o.tokenLimit ?? null,
            timeMs: o.timeLimitMs ?? null,
            queryTimeoutMs: timeoutMs,
            maxQueryChars,
            requestTimeoutMs: o.agent === 'llm' ? (o.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS) : null,
            maxRetries: o.agent === 'llm' ? (o.maxRetries ?? DEFAULT_MAX_RETRIES) : null,
            federationEngine: o.federationEngine ?? DEFAULT_FEDERATION_ENGINE,
          },
          build: { outputDigest: digest, goldDigest: goldAnswerDigest(goldOf(q)) },
          prompt,
          tools: { source: spawned ? 'mcp' : 'in-process', names: offered.map((t) => t.name), ...(tools?.command ? { command: tools.command } : {}) },
          toolSurface: toolSurfaceDigest({ ...surface, tools: offered }),
          endpoints,
          startedAt,
          ...loop,
        };
        runFile.append(record);
        endReasons[loop.endReason] = (endReasons[loop.endReason] ?? 0) + 1;
        if (FAILED_END_REASONS.includes(loop.endReason)) {
          const f = failed.get(loop.endReason) ?? { runs: 0, first: { id, error: loop.infrastructure?.what ?? loop.error ?? '' } };
          f.runs++;
          failed.set(loop.endReason, f);
        }
        finished++;
        const detail = loop.endReason === 'infrastructure_error' ? ` (${loop.infrastructure?.what.slice(0, 200)})` : loop.endReason === 'model_error' ? ` (${(loop.error ?? '').slice(0, 200)})` : '';
        progress(`  [${finished}/${todo.length}] ${id} ${q.queryId}: ${loop.endReason}${loop.final ? ` (final ${loop.final.status}${loop.final.rows !== undefined ? `, ${loop.final.rows} rows` : ''})` : ''}${detail} in ${secs(loop.ms)}`);
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, Math.min(o.concurrency ?? 1, todo.length)) }, (_, slot) => worker(slot)));
    const failures = [...failed.entries()].map(([endReason, f]) => ({ endReason, ...f }));
    const ran = todo.length;
    return {
      out: o.out,
      planned: questions.length * repeats,
      skipped,
      ran,
      endReasons,
      succeeded: ran - failures.reduce((n, f) => n + f.runs, 0),
      failed: failures,
      ...(runFile.opening.repaired ? { repaired: runFile.opening.repaired } : {}),
      ms: performance.now() - t0,
    };
  } finally {
    runFile.close();
    for (const e of executors.values()) await e.close();
    for (const s of servers.values()) await s.then((x) => x.close(), () => {});
  }
}
