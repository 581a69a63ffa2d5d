/**
 * `fkgqa questions`: for each question of a build, the question → its gold query → the shards its
 * answer needs (realised) and the shards that may match (implied) → its gold answer (rows and a
 * preview). Implied shards come from `benchmark.json` (`shardsImplied`, recorded by `fkgqa
 * partition`); needed shards and gold answers need the queries executed (minutes on the slowest
 * graph), so they are read from what `fkgqa stats` stored in the state folder and computed on
 * demand for the queries it has not (one oxigraph store per graph). Nothing is written.
 */
import path from 'node:path';
import { parseQuery } from '../sparql/parse.js';
import { InputError } from '../common/errors.js';
import { ProgressTicker } from '../common/progress.js';
import { StoreWorker, type StoreSource } from '../common/store-worker.js';
import { readBuildDir, readJsonFile } from '../build/open.js';
import type { BenchmarkEntry } from '../partition/index.js';
import { executeGoldQueries } from './answers.js';
import { GOLD_QUERY_TIMEOUT_MS, readGoldAnswers, type GoldAnswer } from '../build/gold-answers.js';
import { compactTerm, type SparqlResults, type SparqlTerm } from '../sparql/results.js';
import { realisedShards, type RealisedStatus } from './provenance.js';
import { shardGraph } from './stats.js';
import { readRealisedFanOut, type StoredRealisedFanOut } from '../build/fan-out.js';
import { stateDir } from '../build/state.js';
import { unknownGraphError } from '../build/names.js';
import { counted } from '../common/strings.js';

/** Options of `fkgqa questions`. */
export interface QuestionsOptions {
  /** A build directory written by `fkgqa partition`. */
  shards: string;
  /** Only the questions of these graphs. */
  kgs?: string[];
  /** Only the questions asking these gold queries (`<kg>/q<N>`). */
  queries?: string[];
  /** Time limit per query in ms when gold answers and realised shards are computed here. Default 60 000. */
  timeoutMs?: number;
  /** State folder where `fkgqa stats` stored gold answers and realised fan-out (default `<build>.state/`, see src/build/state.ts). */
  state?: string;
  /** Rows of the gold answer shown in `answer.preview`. Default 5. */
  previewRows?: number;
  progress?: (line: string) => void;
}

/** The gold answer of a question, as `fkgqa questions` shows it. */
interface AnswerView {
  status: GoldAnswer['status'] | 'unparsable';
  /** Result rows (SELECT), 1 for ASK, triples for CONSTRUCT/DESCRIBE; null if not executed. */
  rows: number | null;
  empty: boolean | null;
  error?: string;
  /** Variables of a SELECT result (empty otherwise). */
  vars: string[];
  /** The first rows: SELECT one cell per variable (N-Triples-like terms, "" if unbound), ASK `["true"]`, CONSTRUCT one N-Triples line. */
  preview: string[][];
  /** `stats`: stored by `fkgqa stats` for this build; `computed`: executed now. */
  source: 'stats' | 'computed' | 'none';
}

/** One question: its benchmark entry, the shards its answer needs and its gold answer. */
export interface QuestionView extends BenchmarkEntry {
  /** Shard endpoints whose triples a solution of the gold query uses (realised fan-out); null if unknown (see `shardsNeededStatus`). */
  shardsNeeded: string[] | null;
  shardsNeededStatus: RealisedStatus;
  answer: AnswerView;
}

interface Bench {
  defaultPrefix: string;
  entries: BenchmarkEntry[];
}

/** A SPARQL JSON term as text (`compactTerm`), xsd:integer and xsd:decimal literals as their lexical form. */
function termText(t: SparqlTerm): string {
  const XSD = 'http://www.w3.org/2001/XMLSchema#';
  return t.type !== 'bnode' && (t.datatype === `${XSD}integer` || t.datatype === `${XSD}decimal`) && !t['xml:lang'] ? t.value : compactTerm(t);
}

function answerView(a: GoldAnswer | undefined, source: AnswerView['source'], previewRows: number): AnswerView {
  if (!a) return { status: 'unparsable', rows: null, empty: null, vars: [], preview: [], source: 'none' };
  const base: AnswerView = { status: a.status, rows: a.rows ?? null, empty: a.empty ?? null, vars: [], preview: [], source, ...(a.error ? { error: a.error } : {}) };
  if (a.status !== 'ok' || a.results === undefined) return base;
  if (typeof a.results === 'string') {
    base.preview = a.results
      .split('\n')
      .filter((l) => l.trim())
      .slice(0, previewRows)
      .map((l) => [l]);
    return base;
  }
  const r = a.results as SparqlResults;
  if (!r.results) {
    base.preview = [[String(r.boolean)]];
    return base;
  }
  base.vars = r.head.vars ?? [];
  base.preview = r.results.bindings.slice(0, previewRows).map((b) => base.vars.map((v) => (b[v] ? termText(b[v]) : '')));
  return base;
}

/**
 * Collects the view of every selected question (see the module comment).
 * @returns the questions in benchmark order
 * @throws InputError if `shards` is not a build, or a `kgs`/`queries` entry names nothing in it
 */
export async function questionViews(options: QuestionsOptions): Promise<QuestionView[]> {
  const build = readBuildDir(options.shards);
  const benchFile = path.join(options.shards, 'benchmark.json');
  const bench = readJsonFile<Bench>(benchFile, 'benchmark.json');
  if (!Array.isArray(bench.entries) || typeof bench.defaultPrefix !== 'string') throw new InputError('not a benchmark.json written by fkgqa', { file: benchFile });
  for (const kg of options.kgs ?? []) if (!build.build.graphs.includes(kg)) throw unknownGraphError(kg, build.build.graphs, 'this build', options.shards);
  for (const id of options.queries ?? []) {
    if (!bench.entries.some((e) => e.queryId === id))
      throw new InputError(`--query ${id}: no such gold query in this build (ids look like ${bench.entries[0]?.queryId ?? '<kg>/q1'})`, { file: benchFile });
  }
  const selected = bench.entries.filter((e) => (!options.kgs?.length || options.kgs.includes(e.kg)) && (!options.queries?.length || options.queries.includes(e.queryId)));
  const timeoutMs = options.timeoutMs ?? GOLD_QUERY_TIMEOUT_MS;
  const previewRows = options.previewRows ?? 5;
  const log = options.progress ?? (() => {});
  const digest = build.build.outputDigest;
  const state = stateDir(options.shards, options.state);

  const views: QuestionView[] = [];
  const kgs = [...new Set(selected.map((e) => e.kg))];
  const results = new Map<string, { answer: AnswerView; realised: { status: RealisedStatus; shards: string[] } }>();
  const todo: { kg: string; ids: string[] }[] = [];
  for (const kg of kgs) {
    const ids = [...new Set(selected.filter((e) => e.kg === kg).map((e) => e.queryId))];
    const stored = storedByStats(options.shards, state, kg, digest);
    const answerOf = stored.answers ? new Map(stored.answers.map((a) => [a.query, a])) : undefined;
    const realisedOf = stored.realised ? new Map(stored.realised.map((r) => [r.query, r])) : undefined;
    const missing: string[] = [];
    for (const id of ids) {
      const a = answerOf?.get(id);
      const r = realisedOf?.get(id);
      if (r && (a || r.status === 'unparsable')) results.set(id, { answer: answerView(a, 'stats', previewRows), realised: { status: r.status, shards: r.shards } });
      else missing.push(id);
    }
    if (missing.length) todo.push({ kg, ids: missing });
  }

  const ticker = new ProgressTicker(log, 'fkgqa questions', 2 * todo.reduce((n, t) => n + t.ids.length, 0), { everyMs: options.progress ? undefined : 0 });
  try {
    for (const { kg, ids } of todo) {
      const m = build.manifests.find((x) => x.graph === kg)!;
      const dir = path.join(options.shards, kg);
      const files = m.shards.map((s) => ({ file: path.join(dir, path.basename(s.file)), endpoint: s.endpoint, name: s.name }));
      const nt = (file: string, graph?: string): StoreSource => ({ file, format: 'application/n-triples', graph });
      log(`fkgqa questions: ${kg}: computing ${counted(ids.length, 'gold answer')} and needed shards (not stored by fkgqa stats for this build)`);
      const store = await StoreWorker.start([...files.map((f) => nt(f.file, shardGraph(f.endpoint))), ...files.map((f) => nt(f.file))]);
      const shardOfGraph = new Map(files.map((f) => [shardGraph(f.endpoint), f.name]));
      try {
        for (const id of ids) {
          const text = selected.find((e) => e.queryId === id)!.query;
          const p = parseQuery(text, bench.defaultPrefix);
          if (!p.ok) {
            ticker.done(id);
            ticker.done(id);
            results.set(id, { answer: { ...answerView(undefined, 'none', 0), error: p.error }, realised: { status: 'unparsable', shards: [] } });
            continue;
          }
          const ast = p.query.ast as { queryType: string; order?: unknown[] };
          const [gold] = await executeGoldQueries(store, [{ id, normalized: p.query.normalized, queryType: ast.queryType, ordered: Boolean(ast.order?.length) }], timeoutMs, ticker);
          ticker.start(`${id} (needed shards)`);
          const realised = await realisedShards(store, p.query.ast, shardOfGraph, timeoutMs);
          ticker.done(`${id} (needed shards)`);
          results.set(id, { answer: answerView(gold, 'computed', previewRows), realised });
        }
      } finally {
        await store.close();
      }
    }
  } finally {
    ticker.stop();
  }

  for (const e of selected) {
    const r = results.get(e.queryId)!;
    views.push({
      ...e,
      shardsNeeded: r.realised.status === 'ok' ? r.realised.shards.map((s) => `${e.kg}-${s}`) : null,
      shardsNeededStatus: r.realised.status,
      answer: r.answer,
    });
  }
  return views;
}

/**
 * What `fkgqa stats` stored for one graph of this build (the output digest must match), looked up
 * in the state folder (`gold-answers/<kg>.json`, `realised-fan-out/<kg>.json`).
 */
function storedByStats(build: string, state: string, kg: string, digest: string): { answers?: GoldAnswer[]; realised?: StoredRealisedFanOut['realised'] } {
  const answers = readGoldAnswers(build, kg, digest, { state });
  const realised = readRealisedFanOut(build, kg, digest, { state });
  return { answers: answers?.answers, realised: realised?.realised };
}

const list = (xs: string[] | null, kg: string) => (xs === null ? 'unknown' : xs.length === 0 ? 'none' : `${xs.length} (${xs.map((x) => x.slice(kg.length + 1)).join(', ')})`);

/**
 * The text form of `fkgqa questions`: one block per question, e.g.
 * ```
 * library/q2 — question 2: Which books did Ada Lovelace write?
 *   query:  PREFIX : <…> SELECT …
 *   shards: 4 in the graph; needed 1 (shard3); implied 2 (shard1, shard3)
 *   answer: 2 rows
 *     ?title
 *     "…"
 * ```
 */
export function formatQuestionsText(views: QuestionView[]): string {
  const out: string[] = [];
  for (const v of views) {
    out.push(`${v.queryId} — question ${v.index}: ${v.question}`);
    out.push(`  query:  ${v.query.replace(/\s+/g, ' ').trim()}`);
    const needed = v.shardsNeeded === null ? `unknown (${v.shardsNeededStatus})` : list(v.shardsNeeded, v.kg);
    out.push(`  shards: ${v.endpoints.length} in the graph; needed ${needed}; implied ${list(v.shardsImplied, v.kg)}; ${v.status}${v.federated ? ', federated (implied fan-out ≥ 2)' : ''}`);
    const a = v.answer;
    if (a.status !== 'ok') out.push(`  answer: ${a.status}${a.error ? `: ${a.error}` : ''}`);
    else {
      out.push(`  answer: ${a.rows} ${a.rows === 1 ? 'row' : 'rows'}${a.preview.length < (a.rows ?? 0) ? ` (first ${a.preview.length})` : ''}`);
      if (a.vars.length) out.push(`    ${a.vars.map((x) => `?${x}`).join('  ')}`);
      for (const row of a.preview) out.push(`    ${row.join('  ')}`);
    }
    out.push('');
  }
  const needed = views.filter((v) => v.shardsNeeded !== null);
  out.push(
    `${counted(views.length, 'question')}; needed shards known for ${needed.length}` +
      (needed.length
        ? `, mean ${(needed.reduce((n, v) => n + v.shardsNeeded!.length, 0) / needed.length).toFixed(2)} needed of ${(needed.reduce((n, v) => n + v.endpoints.length, 0) / needed.length).toFixed(2)} shards`
        : ''),
  );
  return out.join('\n') + '\n';
}
