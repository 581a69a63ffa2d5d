/**
 * The data of the `fkgqa view` page, compact: one small summary per run (what the list and its
 * filters need) and one detail document per run, kept as a JSON string that the page parses only
 * when the run is opened. Texts shared by many runs (system prompts, gold answers) are stored once.
 *
 * Terms of answer tables are strings in N-Triples-like form: `<iri>`, `"lexical"`,
 * `"lexical"@lang`, `"lexical"^^<datatype>`, `_:label`; an unbound cell is the empty string.
 */
import { compactTerm, type SparqlResults, type SparqlTerm } from '../sparql/results.js';
import { conditionFields, type RunRecord } from '../eval/record.js';
import type { LocatedRun } from '../eval/run-reader.js';
import { type RunScore } from '../score/score.js';
import { diffAnswers, type RowMark } from './diff.js';

/** What the run list shows and filters on. */
export interface RunSummary {
  /** The run's id (`<setup>|<agent>|<question>|r<repeat>`). */
  id: string;
  setup: string;
  /** The model (for `llm` runs) or the scripted agent. */
  who: string;
  /** The condition the run measured, as `fkgqa score` labels its group (`conditionLabels`: `<setup>|<who>`, and what differs from the other conditions of that setup and model). */
  cond: string;
  kg: string;
  /** Gold query id `<kg>/q<N>`. */
  q: string;
  /** The question. */
  text: string;
  end: string;
  /** `correct`, `wrong`, or `unscored` (no --shards, or a run `fkgqa score` leaves out). */
  verdict: 'correct' | 'wrong' | 'unscored';
  /** LLM calls (null for a scripted agent: it has no model), tool calls. */
  llm: number | null;
  tools: number;
  /** Seconds from start to the end of the final execution. */
  s: number;
  tokens: number;
}

/** An answer as a table (or a boolean), cut to `maxRows` rows, with the row marks of a comparison. */
interface AnswerTable {
  vars: string[];
  rows: string[][];
  /** Rows in the whole answer. */
  n: number;
  boolean?: boolean;
  /** One mark per shown row (absent when nothing was compared). */
  marks?: RowMark[];
}

/** One message of the conversation, with what the harness recorded about it. */
type ViewMessage =
  | { r: 'system'; shared: number }
  | { r: 'user'; t: string }
  | { r: 'assistant'; t: string | null; calls: { id: string; name: string; args: string }[]; turn?: number; ms?: number; tokens?: number; finish?: string | null; retries?: number }
  | { r: 'tool'; id: string; name: string; t: string; table?: AnswerTable; note?: string; err: boolean; ms?: number; ep?: string[] };

/** Everything the page shows about one run. */
export interface RunDetail extends Pick<RunRecord, 'id' | 'question' | 'agent' | 'model' | 'baseUrl' | 'temperature' | 'seed' | 'repeat' | 'maxTurns'> {
  /** The condition's label, digest and fields (`name=value`, src/eval/record.ts RunCondition). */
  condition: { label: string; digest: string; fields: [string, string][] };
  file: string;
  line: number;
  format: string;
  setup: string;
  prompt: { name: string; sha256: string };
  tools: { source: string; names: string[] };
  endpoints: { id: string; url: string; shard: string }[];
  startedAt: string;
  ms: number;
  endReason: string;
  error?: string;
  cancelReason?: string;
  infrastructure?: RunRecord['infrastructure'];
  build?: RunRecord['build'];
  toolSurface?: RunRecord['toolSurface'];
  usage: RunRecord['usage'];
  counts: RunRecord['counts'];
  messages: ViewMessage[];
  /** LLM calls that failed (no assistant message). */
  llmErrors: { turn: number; error: string; retries: number }[];
  finalQuery: string | null;
  final?: { status: string; ms: number; rows?: number; route?: string; endpoints: string[]; error?: string; answer?: AnswerTable; missing?: number; extra?: number };
  /** The verdict of `fkgqa score` (absent when not scored). */
  score?: Pick<RunScore, 'correct' | 'reason' | 'byTies' | 'graspF1' | 'spinachF1' | 'gold' | 'neededShards' | 'consultedShards' | 'consultedAllNeeded' | 'trivial' | 'allShards' | 'foreignTargets'>;
  /** Marks of the gold rows against this run's answer (the gold table is shared: `ViewData.gold[queryId]`). */
  goldMarks?: RowMark[];
}

/** A gold query with its answer on the unsharded graph. */
export interface GoldView {
  query: string;
  status: string;
  ordered: boolean;
  answer?: AnswerTable;
  error?: string;
}

/** The page's data. */
export interface ViewData {
  files: string[];
  build: string | null;
  runs: RunSummary[];
  /** `JSON.stringify(RunDetail)` per run, in the order of `runs`. */
  details: string[];
  /** Texts shared by many runs (system prompts), referenced by index. */
  shared: string[];
  /** Gold queries and answers by query id (with --shards). */
  gold: Record<string, GoldView>;
}

/** Bounds on what the page embeds (the run files keep everything). */
export interface ViewLimits {
  /** Rows of an answer table shown (default 100). */
  maxRows: number;
  /** Characters of a message or tool result kept (default 20,000). */
  maxChars: number;
}

/** A term in the page's compact form (module comment). */
export function termCode(t: SparqlTerm | undefined): string {
  return t ? compactTerm(t) : '';
}

/** An answer as a table cut to `maxRows` rows, with marks when given. */
export function answerTable(r: SparqlResults, maxRows: number, marks?: RowMark[]): AnswerTable {
  if (r.boolean !== undefined) return { vars: [], rows: [], n: 1, boolean: r.boolean };
  const vars = [...(r.head?.vars ?? [])];
  const bindings = r.results?.bindings ?? [];
  for (const row of bindings) for (const v of Object.keys(row)) if (!vars.includes(v)) vars.push(v);
  const shown = bindings.slice(0, maxRows);
  return { vars, rows: shown.map((row) => vars.map((v) => termCode(row[v]))), n: bindings.length, ...(marks ? { marks: marks.slice(0, maxRows) } : {}) };
}

const cut = (s: string, max: number) => (s.length > max ? `${s.slice(0, max)}\n… ${s.length - max} more characters (in the run file)` : s);

/**
 * A run_sparql_query result text as a note and a table, or undefined when it is no such text: the
 * table form (the tool's default: the note line, a header line of `?variables`, then a line of
 * tab-separated terms per row) or SPARQL JSON results ("N rows (…)\n{SPARQL JSON}"); lines after the
 * rows that begin `VoID note:` (the notes of the setups with VoID) join the note.
 */
function toolTable(text: string, maxRows: number): { note: string; table: AnswerTable } | undefined {
  const lines = text.split('\n');
  if (lines.length < 2) return undefined;
  const notes = lines.filter((l, i) => i > 0 && l.startsWith('VoID note: '));
  const body = lines.slice(1).filter((l) => !l.startsWith('VoID note: '));
  const note = [lines[0], ...notes].join('\n');
  if (body[0].startsWith('?')) {
    const vars = body[0].split('\t').map((v) => v.replace(/^\?/, ''));
    const rows = body.slice(1).map((l) => l.split('\t'));
    if (rows.some((r) => r.length !== vars.length)) return undefined;
    return { note, table: { vars, rows: rows.slice(0, maxRows), n: rows.length } };
  }
  const json = body.join('\n').trim();
  if (!json.startsWith('{')) return undefined;
  try {
    const r = JSON.parse(json) as SparqlResults;
    if (!r || typeof r !== 'object' || !r.head) return undefined;
    return { note, table: answerTable(r, maxRows) };
  } catch {
    return undefined;
  }
}

/** Interns texts shared by runs. */
export class SharedTexts {
  readonly texts: string[] = [];
  private readonly index = new Map<string, number>();
  /** The index of `t`, adding it when new. */
  add(t: string): number {
    let i = this.index.get(t);
    if (i === undefined) {
      i = this.texts.length;
      this.texts.push(t);
      this.index.set(t, i);
    }
    return i;
  }
}

/** The model (for `llm` runs) or the scripted agent of a run, as `fkgqa score` groups them. */
const whoOf = (r: RunRecord) => (r.agent === 'llm' ? (r.model ?? 'llm') : r.agent);

/** A tool step of a run record. */
type ToolStepOf = Extract<RunRecord['steps'][number], { type: 'tool' }>;
/** An LLM step of a run record. */
type LlmStepOf = Extract<RunRecord['steps'][number], { type: 'llm' }>;

/**
 * The messages of a run as the page shows them: the system prompt shared, texts cut to
 * `limits.maxChars`, each assistant message with its LLM step (turn, time, tokens) and tool calls,
 * each tool result with its tool step and, for query tools, its table.
 * @param llmSteps the run's LLM steps, in order
 */
function viewMessages(r: RunRecord, llmSteps: LlmStepOf[], shared: SharedTexts, limits: ViewLimits): ViewMessage[] {
  const toolSteps = new Map<string, ToolStepOf>();
  for (const s of r.steps ?? []) if (s.type === 'tool') toolSteps.set(s.callId, s);
  const answered = llmSteps.filter((s) => s.message);
  let assistantIndex = 0;
  const names = new Map<string, string>();
  return r.messages.map((m): ViewMessage => {
    if (m.role === 'system') return { r: 'system', shared: shared.add(m.content ?? '') };
    if (m.role === 'user') return { r: 'user', t: cut(m.content ?? '', limits.maxChars) };
    if (m.role === 'assistant') {
      const step = answered[assistantIndex++];
      const calls = (m.tool_calls ?? []).map((c) => {
        names.set(c.id, c.function.name);
        return { id: c.id, name: c.function.name, args: cut(c.function.arguments, limits.maxChars) };
      });
      return {
        r: 'assistant',
        t: m.content === null ? null : cut(m.content, limits.maxChars),
        calls,
        ...(step ? { turn: step.turn, ms: Math.round(step.ms), tokens: step.usage.totalTokens, finish: step.finishReason, retries: step.retries.length } : {}),
      };
    }
    const step = toolSteps.get(m.tool_call_id ?? '');
    const text = m.content ?? '';
    const name = step?.name ?? names.get(m.tool_call_id ?? '') ?? m.name ?? '?';
    const parsed = name === 'run_sparql_query' || name === 'execute_query' ? toolTable(text, limits.maxRows) : undefined;
    return {
      r: 'tool',
      id: m.tool_call_id ?? '',
      name,
      t: parsed ? '' : cut(text, limits.maxChars),
      ...(parsed ? { note: parsed.note, table: parsed.table } : {}),
      err: step?.isError ?? false,
      ...(step ? { ms: Math.round(step.ms) } : {}),
      ...(step?.endpoints ? { ep: step.endpoints } : {}),
    };
  });
}

/** What the page shows of `fkgqa score`'s verdict on a run. */
function scoreView(verdict: RunScore): NonNullable<RunDetail['score']> {
  return {
    correct: verdict.correct,
    reason: verdict.reason,
    byTies: verdict.byTies,
    graspF1: verdict.graspF1,
    spinachF1: verdict.spinachF1,
    gold: verdict.gold,
    neededShards: verdict.neededShards,
    consultedShards: verdict.consultedShards,
    consultedAllNeeded: verdict.consultedAllNeeded,
    trivial: verdict.trivial,
    allShards: verdict.allShards,
    foreignTargets: verdict.foreignTargets,
  };
}

/**
 * The final execution of a run as the page shows it: its answer as a table with the row marks
 * against gold, and the count of missing and extra rows.
 * @param diff the comparison with gold, when the run was scored wrong
 */
function finalView(
  final: NonNullable<RunRecord['final']>,
  predicted: SparqlResults | undefined,
  diff: ReturnType<typeof diffAnswers> | undefined,
  limits: ViewLimits,
): NonNullable<RunDetail['final']> {
  return {
    status: final.status,
    ms: Math.round(final.ms),
    ...(final.rows !== undefined ? { rows: final.rows } : {}),
    ...(final.route ? { route: final.route } : {}),
    endpoints: final.endpoints ?? [],
    ...(final.error ? { error: cut(final.error, limits.maxChars) } : {}),
    ...(predicted ? { answer: answerTable(predicted, limits.maxRows, diff?.answer) } : {}),
    ...(diff ? { missing: diff.missing, extra: diff.extra } : {}),
  };
}

/** What the run list shows and filters on (`RunSummary`). */
function runSummary(r: RunRecord, verdict: RunScore | undefined, label: string): RunSummary {
  return {
    id: r.id,
    setup: r.setup,
    who: whoOf(r),
    cond: label,
    kg: r.question.kg,
    q: r.question.queryId,
    text: r.question.text,
    end: r.endReason,
    verdict: verdict ? (verdict.correct ? 'correct' : 'wrong') : 'unscored',
    llm: r.agent === 'llm' ? (r.counts?.llmCalls ?? 0) : null,
    tools: r.counts?.toolCalls ?? 0,
    s: Math.round((r.ms ?? 0) / 100) / 10,
    tokens: r.usage?.totalTokens ?? 0,
  };
}

/**
 * The summary and detail of one run: the messages (`viewMessages`), the final execution
 * (`finalView`) compared with gold when the run was scored wrong, the verdict (`scoreView`) and
 * the summary (`runSummary`).
 * @param run the record and where it was read
 * @param verdict `fkgqa score`'s score of the run, when scored
 * @param gold the gold answer of the run's query (for the row marks), when known
 * @param ordered the gold query orders its results
 * @param label the label of the run's condition (default `<setup>|<model or agent>`)
 */
export function runView(
  run: LocatedRun,
  verdict: RunScore | undefined,
  gold: SparqlResults | undefined,
  ordered: boolean,
  shared: SharedTexts,
  limits: ViewLimits,
  label: string = `${run.record.setup}|${whoOf(run.record)}`,
): { summary: RunSummary; detail: RunDetail } {
  const r = run.record;
  const llmSteps = (r.steps ?? []).filter((s): s is LlmStepOf => s.type !== 'tool');
  const messages = viewMessages(r, llmSteps, shared, limits);
  const predicted = r.final?.status === 'ok' ? r.final.results : undefined;
  const diff = gold && predicted && verdict && !verdict.correct ? diffAnswers(gold, predicted, ordered) : undefined;
  const detail: RunDetail = {
    id: r.id,
    condition: { label, digest: run.conditionDigest, fields: [...conditionFields(run.condition)] },
    file: run.file,
    line: run.line,
    format: r.format,
    question: r.question,
    setup: r.setup,
    agent: r.agent,
    model: r.model,
    baseUrl: r.baseUrl,
    temperature: r.temperature,
    seed: r.seed,
    repeat: r.repeat,
    maxTurns: r.maxTurns,
    prompt: { name: r.prompt?.name, sha256: r.prompt?.sha256 },
    tools: { source: r.tools?.source, names: r.tools?.names ?? [] },
    endpoints: r.endpoints ?? [],
    startedAt: r.startedAt,
    ms: Math.round(r.ms),
    endReason: r.endReason,
    ...(r.error ? { error: r.error } : {}),
    ...(r.cancelReason ? { cancelReason: r.cancelReason } : {}),
    ...(r.infrastructure ? { infrastructure: r.infrastructure } : {}),
    ...(r.build ? { build: r.build } : {}),
    ...(r.toolSurface ? { toolSurface: r.toolSurface } : {}),
    usage: r.usage,
    counts: r.counts,
    messages,
    llmErrors: llmSteps.filter((s) => !s.message).map((s) => ({ turn: s.turn, error: s.error ?? '', retries: s.retries.length })),
    finalQuery: r.finalQuery,
    ...(r.final ? { final: finalView(r.final, predicted, diff, limits) } : {}),
    ...(verdict ? { score: scoreView(verdict) } : {}),
    ...(diff ? { goldMarks: diff.gold.slice(0, limits.maxRows) } : {}),
  };
  return { summary: runSummary(r, verdict, label), detail };
}
