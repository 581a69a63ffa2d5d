/**
 * `fkgqa score RUNS...`: scores agent runs (run lines of `fkgqa eval`, src/eval/record.ts) against
 * a build's gold answers, offline, with the metrics of section 6 of the FKGQA paper: accuracy,
 * F1 (GRASP and Spinach), syntactic validity of every query sent, endpoint consultation and the
 * trivial-federation rate, and the cost figures (tokens, LLM/SPARQL/VoID calls, runtime).
 * Definitions: docs/evaluation.md, src/score/metrics.ts, src/score/validity.ts.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseQuery } from '../sparql/parse.js';
import { InputError } from '../common/errors.js';
import { readTextInput } from '../common/input.js';
import { StoreWorker } from '../common/store-worker.js';
import { distribution, percent, round } from '../report/figures.js';
import { shardGraph } from '../report/stats.js';
import { openBuild, readBuild } from '../build/open.js';
import { readNeededShards } from '../build/fan-out.js';
import { goldResultsById, readGoldAnswers, type GoldResult } from '../build/gold-answers.js';
import sparqljs from 'sparqljs';
import { negatedTriples } from '../sparql/negation.js';
import { MEDIA } from '../sparql/protocol.js';
import type { JsonResults } from '../sparql/results.js';
import { equivalentUnderTies, keyQuery } from '../answers/ties.js';
import { readGoldQueries } from '../build/benchmark.js';
import { RUN_FORMATS, type EndReason, type RunRecord } from '../eval/record.js';
import { graspF1, matchAnswer, spinachF1 } from './metrics.js';
import { classifyQuery, VALIDITY_CLASSES, type ValidityClass } from './validity.js';
import { serviceTargets } from '../sparql/services.js';

/** Options of `score`. */
export interface ScoreOptions {
  /** Run files (JSON lines). */
  runs: string[];
  /** The build the runs were made on (gold queries, gold answers, realised fan-out, shard files for ties). */
  shards: string;
  /** Time limit of a key query for ties, in ms (default 60,000). */
  timeoutMs?: number;
  /** The state folder of the build, where fkgqa stats stored gold answers (default `<shards>.state/`). */
  state?: string;
  progress?: (line: string) => void;
}

/** The score of one run. */
export interface RunScore {
  id: string;
  group: string;
  setup: string;
  agent: string;
  model: string | null;
  kg: string;
  queryId: string;
  endReason: EndReason;
  /** `ok` when the gold answer exists; else the gold query's status (error, timeout, missing). */
  gold: 'ok' | 'error' | 'timeout' | 'missing';
  /** The final answer matches gold (metrics.ts, matchAnswer). */
  correct: boolean;
  /** Why not (absent when correct). */
  reason?: string;
  /** Accepted only through ties under ORDER BY. */
  byTies: boolean;
  graspF1: number;
  spinachF1: number;
  /**
   * Shards the gold answer needs, or null when unknown: those holding a triple used by a solution
   * (realised fan-out) and those where a triple pattern under MINUS or FILTER (NOT) EXISTS matches.
   */
  neededShards: string[] | null;
  /** Shards of the graph. */
  graphShards: number;
  /** Shards named by the submitted query's SERVICE clauses (null: nothing submitted or unparsable). */
  consultedShards: string[] | null;
  /** SERVICE targets that are no shard of the graph. */
  foreignTargets: string[];
  /** Every needed shard consulted (null when not decidable). */
  consultedAllNeeded: boolean | null;
  /** All shards of the graph consulted. */
  allShards: boolean | null;
  /** All shards consulted although fewer suffice (null when not decidable or when all are needed). */
  trivial: boolean | null;
  /** Validity classes of the queries sent to run_sparql_query. */
  validity: Record<ValidityClass, number>;
  tokens: number;
  llmCalls: number;
  sparqlCalls: number;
  voidCalls: number;
  seconds: number;
}

/** A share: count of denominator, and the percentage. */
export interface Share {
  count: number;
  of: number;
  percent: number;
}

/** The figures of one group of runs (same setup and agent/model). */
export interface GroupScore {
  group: string;
  setup: string;
  agent: string;
  model: string | null;
  runs: number;
  endReasons: Record<EndReason, number>;
  accuracy: Share;
  /** Accuracy over runs whose gold answer exists (the unsharded graph answered the gold query). */
  accuracyExecutableGold: Share;
  byTies: number;
  graspF1: number;
  spinachF1: number;
  validity: { queries: number; classes: Record<ValidityClass, number>; valid: Share; failureShares: Record<Exclude<ValidityClass, 'ok'>, number> };
  consultation: { submitted: Share; correct: Share };
  trivial: { submitted: Share; correct: Share };
  allShards: Share;
  tokens: { total: number; median: number; min: number; max: number };
  llmCallsPerRun: number;
  sparqlCallsPerRun: number;
  voidCallsPerRun: number;
  seconds: { median: number; max: number; total: number };
}

/** The result of `score`. */
export interface ScoreReport {
  shards: string;
  files: string[];
  runs: number;
  groups: GroupScore[];
  perRun: RunScore[];
}

const share = (count: number, of: number): Share => ({ count, of, percent: round(percent(count, of)) });

/**
 * Reads run lines; a later line with the same id replaces an earlier one (a resumed run).
 * @param outputDigest the build's output digest (build.json): a run recorded on another build is refused
 * @throws InputError naming the file and line of a line that is no run record or a run of another
 *   build, and the file when it is missing or a directory
 */
export function readRuns(files: string[], outputDigest?: string): RunRecord[] {
  const byId = new Map<string, RunRecord>();
  for (const file of files) {
    const lines = readTextInput(file, 'run file').split('\n');
    lines.forEach((line, i) => {
      if (!line.trim()) return;
      let r: RunRecord;
      try {
        r = JSON.parse(line) as RunRecord;
      } catch (e) {
        throw new InputError(`not JSON: ${(e as Error).message}`, { file, line: i + 1 });
      }
      if (!(RUN_FORMATS as readonly string[]).includes(r?.format)) throw new InputError(`not a run record of fkgqa eval (format ${JSON.stringify(r?.format)}, expected ${RUN_FORMATS.join(' or ')})`, { file, line: i + 1 });
      const q = r.question as Partial<RunRecord['question']> | undefined;
      if (typeof r.id !== 'string' || !q || typeof q !== 'object' || typeof q.kg !== 'string' || typeof q.queryId !== 'string') {
        throw new InputError('a run record needs "id" (a string) and "question" with "kg" and "queryId" (strings)', { file, line: i + 1 });
      }
      const made = (r.build as { outputDigest?: unknown } | undefined)?.outputDigest;
      if (outputDigest !== undefined && made !== undefined && made !== outputDigest) {
        throw new InputError(`run ${r.id} was made on another build (output digest ${String(made).slice(0, 16)}, this build's is ${outputDigest.slice(0, 16)}): score it with the build it was made on`, { file, line: i + 1 });
      }
      byId.set(r.id, r);
    });
  }
  return [...byId.values()];
}

const groupKey = (r: RunRecord) => `${r.setup}|${r.agent === 'llm' ? (r.model ?? 'llm') : r.agent}`;

/**
 * Scores runs (module comment).
 * @throws InputError for a missing build, a run file that does not parse, a run of a graph the
 *   build lacks, or a build without gold answers (run fkgqa stats first)
 */
export async function score(options: ScoreOptions): Promise<ScoreReport> {
  const progress = options.progress ?? (() => {});
  const timeoutMs = options.timeoutMs ?? 60_000;
  const build = readBuild(options.shards);
  const digest = openBuild(options.shards, { checkShards: false }).build.outputDigest;
  const runs = readRuns(options.runs, digest);
  const { defaultPrefix, queries } = readGoldQueries(options.shards);
  const textOf = new Map(queries.map((q) => [q.id, q.text]));
  const golds = new Map<string, Map<string, GoldResult>>();
  const realised = new Map<string, Map<string, string[] | null> | undefined>();
  for (const kg of new Set(runs.map((r) => r.question.kg))) {
    const g = build.find((b) => b.graph === kg);
    if (!g) throw new InputError(`the runs ask about graph ${kg}, which is not in the build`, { file: options.shards });
    const stored = readGoldAnswers(options.shards, kg, digest, { state: options.state });
    const answers = stored ? goldResultsById(stored) : undefined;
    if (!answers) throw new InputError(`no gold answers of ${kg}: run fkgqa stats --shards ${options.shards} first`, { file: options.shards });
    golds.set(kg, answers);
    realised.set(kg, readNeededShards(options.shards, kg, digest, options.state));
  }
  const stores = new Map<string, StoreWorker>();
  const named = new Map<string, StoreWorker>();
  const negatedNeeded = new Map<string, string[] | null>();
  // Shards where a triple pattern under MINUS or FILTER (NOT) EXISTS matches: such a triple can
  // remove a solution, so the shard is needed although no solution uses its triples.
  const negatedShardsOf = async (kg: string, id: string, ast: sparqljs.SparqlQuery): Promise<string[] | null> => {
    if (negatedNeeded.has(id)) return negatedNeeded.get(id)!;
    const triples = negatedTriples(ast);
    let out: string[] | null = [];
    if (triples.length > 0) {
      const g = build.find((b) => b.graph === kg)!;
      let store = named.get(kg);
      if (!store) {
        store = await StoreWorker.start(g.shards.map((s) => ({ file: s.file, format: 'application/n-triples', graph: shardGraph(s.endpoint) })));
        named.set(kg, store);
      }
      const nameOf = new Map(g.shards.map((s) => [shardGraph(s.endpoint), s.name]));
      const found = new Set<string>();
      const gen = new sparqljs.Generator({ allPrefixes: false });
      for (const t of triples) {
        const q = gen.stringify({ type: 'query', queryType: 'SELECT', distinct: true, prefixes: {}, variables: [{ termType: 'Variable', value: 'fkgqa_g' }], where: [{ type: 'graph', name: { termType: 'Variable', value: 'fkgqa_g' }, patterns: [{ type: 'bgp', triples: [t] }] }] } as unknown as sparqljs.SparqlQuery);
        const o = await store.query({ query: q, resultsFormat: MEDIA.json, timeoutMs });
        if (o.status !== 'ok') {
          out = null;
          break;
        }
        for (const b of (JSON.parse(o.body) as JsonResults).results?.bindings ?? []) if (nameOf.has(b.fkgqa_g.value)) found.add(nameOf.get(b.fkgqa_g.value)!);
      }
      if (out) out = [...found];
    }
    negatedNeeded.set(id, out);
    return out;
  };
  const keyed = new Map<string, JsonResults | null>();
  const keyedAnswer = async (kg: string, id: string, ast: Parameters<typeof keyQuery>[0]): Promise<JsonResults | null> => {
    if (keyed.has(id)) return keyed.get(id)!;
    const kq = keyQuery(ast);
    let out: JsonResults | null = null;
    if (kq) {
      let store = stores.get(kg);
      if (!store) {
        const g = build.find((b) => b.graph === kg)!;
        store = await StoreWorker.start(g.shards.map((s) => ({ file: s.file, format: 'application/n-triples' })));
        stores.set(kg, store);
      }
      const o = await store.query({ query: kq, resultsFormat: MEDIA.json, timeoutMs });
      out = o.status === 'ok' ? (JSON.parse(o.body) as JsonResults) : null;
    }
    keyed.set(id, out);
    return out;
  };

  const perRun: RunScore[] = [];
  try {
    for (const r of runs.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))) {
      const kg = r.question.kg;
      const gold = golds.get(kg)!.get(r.question.queryId);
      const text = textOf.get(r.question.queryId);
      if (!text) throw new InputError(`run ${r.id} asks gold query ${r.question.queryId}, which is not in the build's benchmark.json`, { file: options.shards });
      const parsed = parseQuery(text, defaultPrefix);
      if (!parsed.ok) throw new InputError(`gold query does not parse: ${parsed.error}`, { query: r.question.queryId });
      const ast = parsed.query.ast;
      const ordered = ast.type === 'query' && !!(ast as { order?: unknown[] }).order?.length;
      const goldResults = gold?.status === 'ok' && gold.results && typeof gold.results === 'object' ? (gold.results as JsonResults) : undefined;
      const pred = r.final?.status === 'ok' ? r.final.results : undefined;
      let correct = false;
      let reason: string | undefined;
      let byTies = false;
      if (!goldResults) reason = `no gold answer (${gold ? gold.status : 'missing'})`;
      else if (!pred) reason = r.finalQuery ? `the submitted query failed (${r.final?.status}: ${r.final?.error ?? ''})` : `nothing submitted (${r.endReason})`;
      else {
        let m = matchAnswer(goldResults, pred, ordered);
        if (!m.correct && ordered) {
          const k = await keyedAnswer(kg, r.question.queryId, ast);
          if (k) {
            m = matchAnswer(goldResults, pred, ordered, (renamed) => equivalentUnderTies(ast, k, renamed).equivalent);
            byTies = m.correct;
          }
        }
        correct = m.correct;
        reason = m.reason;
      }
      const realisedShards = realised.get(kg)?.get(r.question.queryId) ?? null;
      const negated = realisedShards ? await negatedShardsOf(kg, r.question.queryId, ast) : null;
      const num = (x: string) => Number(/(\d+)$/.exec(x)?.[1] ?? 0);
      const needed = realisedShards && negated ? [...new Set([...realisedShards, ...negated])].sort((a, b) => num(a) - num(b)) : null;
      const shardOf = new Map(r.endpoints.map((e) => [e.url, e.shard]));
      const targets = r.finalQuery ? (r.final?.endpoints ?? serviceTargets(r.finalQuery)) : undefined;
      const consulted = targets ? [...new Set(targets.filter((t) => shardOf.has(t)).map((t) => shardOf.get(t)!))].sort() : null;
      const foreign = targets ? targets.filter((t) => !shardOf.has(t)) : [];
      const all = consulted ? consulted.length === r.endpoints.length : null;
      const validity = Object.fromEntries(VALIDITY_CLASSES.map((c) => [c, 0])) as Record<ValidityClass, number>;
      for (const s of r.steps) {
        if (s.type !== 'tool' || s.name !== 'run_sparql_query') continue;
        let q: unknown;
        try {
          q = (JSON.parse(s.arguments) as { query?: unknown }).query;
        } catch {
          q = undefined;
        }
        if (typeof q !== 'string') continue; // a malformed tool call sends no query
        validity[classifyQuery(q, s.isError ? s.result : undefined).class]++;
      }
      perRun.push({
        id: r.id,
        group: groupKey(r),
        setup: r.setup,
        agent: r.agent,
        model: r.model,
        kg,
        queryId: r.question.queryId,
        endReason: r.endReason,
        gold: gold ? gold.status : 'missing',
        correct,
        reason: correct ? undefined : reason,
        byTies,
        graspF1: goldResults ? round(graspF1(pred, goldResults), 4) : 0,
        spinachF1: goldResults ? round(spinachF1(pred, goldResults), 4) : 0,
        neededShards: needed,
        graphShards: r.endpoints.length,
        consultedShards: consulted,
        foreignTargets: foreign,
        consultedAllNeeded: consulted && needed ? needed.every((s) => consulted.includes(s)) : null,
        allShards: all,
        trivial: all !== null && needed ? (needed.length < r.endpoints.length ? all : null) : null,
        validity,
        tokens: r.usage.totalTokens,
        llmCalls: r.counts.llmCalls,
        sparqlCalls: r.counts.sparqlCalls,
        voidCalls: r.counts.voidCalls,
        seconds: r.ms / 1000,
      });
    }
  } finally {
    for (const s of [...stores.values(), ...named.values()]) await s.close();
  }
  progress(`fkgqa score: ${perRun.length} runs scored`);
  const groups = [...new Set(perRun.map((s) => s.group))].sort().map((g) => aggregate(perRun.filter((s) => s.group === g)));
  return { shards: path.resolve(options.shards), files: options.runs, runs: perRun.length, groups, perRun };
}

/** The figures of a group of run scores. */
export function aggregate(rs: RunScore[]): GroupScore {
  const first = rs[0];
  const count = (f: (s: RunScore) => boolean) => rs.filter(f).length;
  const endReasons = { submitted: 0, cancelled: 0, turn_limit: 0, model_error: 0 } as Record<EndReason, number>;
  for (const s of rs) endReasons[s.endReason] = (endReasons[s.endReason] ?? 0) + 1;
  const classes = Object.fromEntries(VALIDITY_CLASSES.map((c) => [c, rs.reduce((n, s) => n + s.validity[c], 0)])) as Record<ValidityClass, number>;
  const queries = Object.values(classes).reduce((a, b) => a + b, 0);
  const failures = queries - classes.ok;
  const failureShares = Object.fromEntries(VALIDITY_CLASSES.filter((c) => c !== 'ok').map((c) => [c, round(percent(classes[c], failures))])) as GroupScore['validity']['failureShares'];
  const decided = (f: (s: RunScore) => boolean | null, among: (s: RunScore) => boolean) => {
    const d = rs.filter((s) => among(s) && f(s) !== null);
    return share(d.filter((s) => f(s) === true).length, d.length);
  };
  const tokens = distribution(rs.map((s) => s.tokens));
  const secs = distribution(rs.map((s) => s.seconds));
  const mean = (f: (s: RunScore) => number) => round(rs.reduce((a, s) => a + f(s), 0) / Math.max(1, rs.length), 2);
  return {
    group: first.group,
    setup: first.setup,
    agent: first.agent,
    model: first.model,
    runs: rs.length,
    endReasons,
    accuracy: share(count((s) => s.correct), rs.length),
    accuracyExecutableGold: share(count((s) => s.correct && s.gold === 'ok'), count((s) => s.gold === 'ok')),
    byTies: count((s) => s.byTies),
    graspF1: mean((s) => s.graspF1),
    spinachF1: mean((s) => s.spinachF1),
    validity: { queries, classes, valid: share(classes.ok, queries), failureShares },
    consultation: { submitted: decided((s) => s.consultedAllNeeded, () => true), correct: decided((s) => s.consultedAllNeeded, (s) => s.correct) },
    trivial: { submitted: decided((s) => s.trivial, () => true), correct: decided((s) => s.trivial, (s) => s.correct) },
    allShards: decided((s) => s.allShards, () => true),
    tokens: { total: rs.reduce((a, s) => a + s.tokens, 0), median: tokens.median, min: tokens.min, max: tokens.max },
    llmCallsPerRun: mean((s) => s.llmCalls),
    sparqlCallsPerRun: mean((s) => s.sparqlCalls),
    voidCallsPerRun: mean((s) => s.voidCalls),
    seconds: { median: round(secs.median, 2), max: round(secs.max, 2), total: round(rs.reduce((a, s) => a + s.seconds, 0), 1) },
  };
}
