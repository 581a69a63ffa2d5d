/**
 * `fkgqa eval`: runs agents on the benchmark's questions (FKGQA paper, section 5) and appends one
 * run line per run (src/eval/record.ts) to a JSON-lines file. Runs already in the file are
 * skipped (resume); runs go at most `concurrency` at a time; questions can be sampled per graph.
 * The agent is a model behind an OpenAI-compatible API (`OpenAiChat`) or a scripted agent
 * (src/eval/agents.ts); its tools come from `fkgqa mcp` over stdio or the in-process provider.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { InputError } from '../common/errors.js';
import { openBuild } from '../build/open.js';
import { seededRandom } from '../common/random.js';
import { readNeededShards } from '../build/fan-out.js';
import { negatedShards, ScriptedModel, scriptedQuery } from './agents.js';
import { type ScriptedAgent } from './record.js';
import { OpenAiChat, type ChatModel } from './chat.js';
import { QueryExecutor } from './execute.js';
import { runLoop } from './loop.js';
import { RUN_FORMAT, type RunEndpoint, type RunRecord, type Setup } from './record.js';
import { McpToolProvider, type ToolProvider } from './tools.js';
import { filterGraphs, openRegistry } from '../federation/registry.js';

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
  /** Retries of an LLM call and the first backoff (ms). */
  maxRetries?: number;
  backoffMs?: number;
  /** LLM calls per run (default 10, the paper's limit). */
  maxTurns?: number;
  /** The run file (JSON lines), appended to. */
  out: string;
  /** Only these graphs. */
  kgs?: string[];
  /** Only these question indexes (benchmark.json `index`). */
  questions?: number[];
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
  /** Longest query accepted by the tools and the final execution (default 8,000, the reference server's). */
  maxQueryChars?: number;
  /** Rerun runs that ended with a model error. */
  retryErrors?: boolean;
  progress?: (line: string) => void;
}

/** What `runEval` did. */
export interface EvalSummary {
  out: string;
  planned: number;
  skipped: number;
  ran: number;
  endReasons: Record<string, number>;
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

/** The questions to run, in benchmark order: filtered by graph and index, then sampled per graph. */
export function selectQuestions(entries: BenchmarkEntry[], o: Pick<EvalOptions, 'kgs' | 'questions' | 'perGraph' | 'sampleSeed' | 'distinctQueries'>): BenchmarkEntry[] {
  let xs = entries.filter((e) => (!o.kgs?.length || o.kgs.includes(e.kg)) && (!o.questions?.length || o.questions.includes(e.index)));
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
  return xs;
}

/** Ids of the runs already in a run file (lines that do not parse are ignored: a run cut off while written). */
function finishedRuns(file: string, retryErrors: boolean): Set<string> {
  const done = new Set<string>();
  if (!fs.existsSync(file)) return done;
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    try {
      const r = JSON.parse(line) as RunRecord;
      if (r.format === RUN_FORMAT && !(retryErrors && r.endReason === 'model_error')) done.add(r.id);
    } catch {
      // a partial last line
    }
  }
  return done;
}

/** The endpoint list shown to the agent: URLs, with the catalogue's descriptions in high_level. */
function endpointList(endpoints: RunEndpoint[], descriptions: Map<string, string> | undefined): string {
  return endpoints.map((e) => (descriptions ? `- ${e.url} — ${descriptions.get(e.id) ?? '(no description)'}` : `- ${e.url}`)).join('\n');
}

/**
 * Runs the evaluation (module comment).
 * @throws InputError for a missing build or endpoints file, an unknown graph, a missing base URL
 *   or model for `llm`, or a missing prompt
 */
export async function runEval(o: EvalOptions): Promise<EvalSummary> {
  const t0 = performance.now();
  const progress = o.progress ?? (() => {});
  const benchFile = path.join(o.shards, 'benchmark.json');
  const opened = openBuild(o.shards);
  const bench = opened.benchmark as unknown as { defaultPrefix: string; entries: BenchmarkEntry[] };
  const digest = opened.build.outputDigest;
  for (const k of o.kgs ?? []) if (!bench.entries.some((e) => e.kg === k)) throw new InputError(`--kg ${k}: no such graph in the build`, { file: benchFile });
  if (o.agent === 'llm' && (!o.baseUrl || !o.model)) throw new InputError('an LLM agent needs --base-url and --model (or use --agent oracle|trivial|single)');
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
  const repeats = o.repeats ?? 1;
  const agentName = o.agent === 'llm' ? 'llm' : o.agent;
  const runKey = (q: BenchmarkEntry, r: number) => `${o.setup}|${o.agent === 'llm' ? o.model : agentName}|${q.index}|r${r}`;
  const done = finishedRuns(o.out, !!o.retryErrors);
  const todo = questions.flatMap((q) => Array.from({ length: repeats }, (_, r) => ({ q, r }))).filter(({ q, r }) => !done.has(runKey(q, r)));
  const skipped = questions.length * repeats - todo.length;
  progress(`fkgqa eval: ${questions.length} questions × ${repeats}, ${skipped} runs already in ${o.out}, ${todo.length} to run (${o.setup}, ${o.agent === 'llm' ? o.model : agentName}, tools ${o.tools ?? 'mcp'})`);
  const needed = new Map<string, Map<string, string[] | null> | undefined>();
  // The oracle needs the shards each answer needs (realised fan-out, stored by fkgqa stats):
  // without them it would silently name every shard, i.e. become the trivial agent.
  if (o.agent === 'oracle') {
    for (const kg of new Set(questions.map((q) => q.kg))) {
      needed.set(kg, readNeededShards(o.shards, kg, digest, o.state));
      if (!needed.get(kg)) throw new InputError(`--agent oracle needs the shards each answer needs (realised fan-out) of graph ${kg}: run fkgqa stats --shards ${o.shards} --kg ${kg} first`, { file: o.shards });
    }
  }
  const endReasons: Record<string, number> = {};
  fs.mkdirSync(path.dirname(path.resolve(o.out)), { recursive: true });
  let next = 0;
  let finished = 0;
  // One executor (one federation engine thread: Comunica takes seconds to start) and, in-process,
  // one MCP server per graph and concurrency slot, shared by the runs of that graph in that slot;
  // a stdio server is spawned per run.
  const executors = new Map<string, QueryExecutor>();
  const servers = new Map<string, Promise<ToolProvider>>();
  const worker = async (slot: number) => {
    while (next < todo.length) {
      const { q, r } = todo[next++];
      const registry = filterGraphs(allEndpoints, [q.kg]);
      const endpoints: RunEndpoint[] = registry.endpoints.map((e) => ({ id: e.id, url: e.url, shard: e.shard ?? e.id }));
      let model: ChatModel;
      if (o.agent === 'llm') {
        model = new OpenAiChat({ baseUrl: o.baseUrl!, model: o.model!, apiKey: o.apiKey, temperature: o.temperature, seed: o.seed, maxRetries: o.maxRetries, backoffMs: o.backoffMs, extraBody: o.extraBody });
      } else {
        if (!needed.has(q.kg)) needed.set(q.kg, readNeededShards(o.shards, q.kg, digest, o.state));
        const n = needed.get(q.kg)?.get(q.queryId) ?? null;
        const negated = o.agent === 'oracle' ? await negatedShards(q.query, bench.defaultPrefix, endpoints) : [];
        model = new ScriptedModel(scriptedQuery(o.agent, q.query, bench.defaultPrefix, endpoints, n, negated), o.probe ?? true);
      }
      const timeoutMs = o.timeoutMs ?? 30_000;
      const spawned = (o.tools ?? 'mcp') === 'mcp';
      const maxQueryChars = o.maxQueryChars ?? 8000;
      const key = `${slot}|${q.kg}`;
      const engine = o.federationEngine ? { federationEngine: o.federationEngine } : {};
      if (!spawned && !servers.has(key)) servers.set(key, McpToolProvider.inProcess({ registry, setup: o.setup as 'baseline', callLog: null, state: null, limits: { defaultTimeoutMs: timeoutMs, maxQueryChars }, ...engine }));
      const tools: ToolProvider = spawned
        ? await McpToolProvider.spawn([
            process.execPath, BIN, 'mcp', '--endpoints', ...endpointsFiles, '--kg', q.kg, '--setup', o.setup, '--timeout', String(timeoutMs), '--max-query-chars', String(maxQueryChars),
            ...(o.federationEngine ? ['--federation-engine', o.federationEngine] : []), '--quiet', ...(o.mcpArgs ?? []),
          ])
        : await servers.get(key)!;
      if (!executors.has(key)) executors.set(key, new QueryExecutor(registry, timeoutMs, maxQueryChars, o.federationEngine));
      const executor = executors.get(key)!;
      const startedAt = new Date().toISOString();
      let loop;
      try {
        loop = await runLoop({
          system: prompt.text.replace('{{endpoints}}', endpointList(endpoints, descriptions)),
          user: q.question,
          model,
          tools,
          executor,
          maxTurns: o.maxTurns ?? 10,
        });
      } finally {
        if (spawned) await tools.close();
      }
      const record: RunRecord = {
        format: RUN_FORMAT,
        id: runKey(q, r),
        question: { index: q.index, kg: q.kg, text: q.question, queryId: q.queryId },
        setup: o.setup,
        agent: agentName,
        model: o.agent === 'llm' ? o.model! : null,
        baseUrl: o.agent === 'llm' ? o.baseUrl! : null,
        temperature: o.agent === 'llm' ? (o.temperature ?? null) : null,
        seed: o.agent === 'llm' ? (o.seed ?? null) : null,
        repeat: r,
        maxTurns: o.maxTurns ?? 10,
        prompt,
        tools: { source: tools.source, names: [...tools.tools().map((t) => t.name), 'submit_final_query', 'cancel'], ...(tools.command ? { command: tools.command } : {}) },
        endpoints,
        startedAt,
        ...loop,
      };
      fs.appendFileSync(o.out, JSON.stringify(record) + '\n');
      endReasons[loop.endReason] = (endReasons[loop.endReason] ?? 0) + 1;
      finished++;
      progress(`  [${finished}/${todo.length}] ${record.id} ${q.queryId}: ${loop.endReason}${loop.final ? ` (final ${loop.final.status}${loop.final.rows !== undefined ? `, ${loop.final.rows} rows` : ''})` : ''} in ${(loop.ms / 1000).toFixed(1)} s`);
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.max(1, Math.min(o.concurrency ?? 1, todo.length)) }, (_, slot) => worker(slot)));
  } finally {
    for (const e of executors.values()) await e.close();
    for (const s of servers.values()) await (await s).close();
  }
  return { out: o.out, planned: questions.length * repeats, skipped, ran: todo.length, endReasons, ms: performance.now() - t0 };
}
