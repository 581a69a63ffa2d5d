/**
 * `fkgqa score RUNS...`: scores agent runs (run lines of `fkgqa eval`, read by
 * src/eval/run-reader.ts) against a build's gold answers, offline, with the metrics of section 6 of
 * the FKGQA paper. A score means exactly "how well did the agent answer": runs of another build are
 * refused, failed runs (`infrastructure_error`, `model_error`) reported apart, an answer another
 * choice among tied solutions gives is correct, necessarily empty answers are reported apart, and
 * runs of two conditions are never merged. Definitions: docs/evaluation.md (`fkgqa score RUNS...`),
 * src/score/metrics.ts, src/score/validity.ts.
 */
import path from 'node:path';
import { parseQuery } from '../sparql/parse.js';
import { InputError } from '../common/errors.js';
import { StoreWorker } from '../common/store-worker.js';
import { distribution, percent, round, share, type Share } from '../report/figures.js';
import { shardGraph } from '../report/stats.js';
import { graphShards, openBuild } from '../build/open.js';
import { readNeededShards } from '../build/fan-out.js';
import { findGoldAnswers, GOLD_QUERY_TIMEOUT_MS, goldAnswerDigest, goldResultsById, TIE_ANALYSIS, type GoldResult, type GoldTies } from '../build/gold-answers.js';
import sparqljs from 'sparqljs';
import { negatedTriples } from '../sparql/negation.js';
import { MEDIA } from '../sparql/protocol.js';
import { parseSparqlJson, type SparqlResults } from '../sparql/results.js';
import { admissibleUnderTies, type AdmissibleAnswers } from '../answers/ties.js';
import { readGoldQueries } from '../build/benchmark.js';
import { graspF1, matchAnswer, spinachF1, type AnswerMatch } from './metrics.js';
import { bootstrapMeanInterval, wilsonInterval, type Interval } from './intervals.js';
import { classifyQuery, NOT_JUDGED, notJudged, VALIDITY_CLASSES, type NotJudged, type ValidityClass } from './validity.js';
import { serviceTargets } from '../sparql/services.js';
import { conditionFields, END_REASONS, FAILED_END_REASONS, LIMIT_END_REASONS, type EndReason, type RunCondition, type RunRecord } from '../eval/record.js';
import { readRunFiles, type LocatedRun } from '../eval/run-reader.js';
import { counted } from '../common/strings.js';

/** Options of `score`. */
export interface ScoreOptions {
  /** Run files (JSON lines). */
  runs: string[];
  /** The build the runs were made on (gold queries, gold answers, realised fan-out, shard files). */
  shards: string;
  /** Time limit of each query that finds the shards where a negated pattern matches, in ms (default 60,000). */
  timeoutMs?: number;
  /** The state folder of the build, where fkgqa stats stored gold answers (default `<shards>.state/`). */
  state?: string;
  /** Score runs made on another build (another output digest or other gold answers) against this one; without it such runs are refused (InputError). */
  allowOtherBuild?: boolean;
  /** Score a run file that fkgqa eval is still writing (its runs so far; the report's `partial` names it); refused by default (InputError). */
  partial?: boolean;
  progress?: (line: string) => void;
}

/** What kind of gold question a run asked (benchmark.json and the graph's manifest). */
type GoldKind = 'federated' | 'necessarily-empty' | 'not-federated';

/** The score of one run. */
export interface RunScore {
  id: string;
  /** Where the run was read: `<file>:<line>`. */
  source: string;
  /** The label of its group: its condition (`conditionLabels`). */
  group: string;
  /** The digest of the condition the run measured (src/eval/record.ts, RunCondition). */
  condition: string;
  setup: string;
  agent: string;
  model: string | null;
  kg: string;
  queryId: string;
  /** The question (text). */
  question: string;
  endReason: EndReason;
  /**
   * Counted in accuracy: false for the runs that failed (FAILED_END_REASONS: `infrastructure_error`,
   * an endpoint or the engine failed; `model_error`, the LLM API failed): they say nothing about how
   * well the agent answers, and `fkgqa eval --retry-errors` reruns them.
   */
  counted: boolean;
  /** What failed, for `infrastructure_error` runs. */
  infrastructure?: string;
  /** The API's error, for `model_error` runs. */
  modelError?: string;
  /** `ok` when the gold answer exists; else the gold query's status (error, timeout, missing). */
  gold: 'ok' | 'error' | 'timeout' | 'missing';
  /**
   * `federated`: covered with an implied fan-out of two shards or more; `necessarily-empty`: a
   * required triple pattern matches nothing in the graph (section "answer necessarily empty" of
   * docs/method.md); `not-federated`: uncoverable, unparsable or on one shard.
   */
  goldKind: GoldKind;
  /** How the gold answer depends on ties (`none`, or GoldTies.dependence). */
  goldTies: 'none' | GoldTies['dependence'];
  /** The final answer matches gold (metrics.ts, matchAnswer), or an admissible answer under ties. */
  correct: boolean;
  /** Why not (absent when correct). */
  reason?: string;
  /** Accepted only as another order or choice of solutions tied under the top-level ORDER BY. */
  byTies: boolean;
  /** Accepted only as another admissible answer: another choice among solutions tied in a sub-SELECT. */
  byAlternative: boolean;
  /** Wrong, but the gold answer depends on ties that were not enumerated (GoldTies `unknown`): reported apart. */
  tieUnresolved: boolean;
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
  /** Validity classes of the queries sent to run_sparql_query (those not judged are not in them). */
  validity: Record<ValidityClass, number>;
  /** Queries sent that parse but whose tool error says nothing about the agent (src/score/validity.ts `notJudged`): in no class. */
  notJudged: Record<NotJudged, number>;
  tokens: number;
  llmCalls: number;
  sparqlCalls: number;
  voidCalls: number;
  seconds: number;
}

/** The figures of one group of runs: the runs of one condition (same setup, model and its sampling, limits, federation engine, build, prompt; RunCondition). */
export interface GroupScore {
  /** `<setup>|<model or agent>`, and the fields that tell it from the other conditions of that setup and model (`conditionLabels`). */
  group: string;
  /** The condition its runs measured, and its digest. */
  condition: RunCondition;
  conditionDigest: string;
  /** Where its runs were read: `<file>:<lines>` per file (e.g. `a.jsonl:1-40,42`). */
  sources: string[];
  setup: string;
  agent: string;
  model: string | null;
  /** Scripted agent (oracle, trivial, single): no model of the paper is comparable. */
  scripted: boolean;
  /** Every run of the group. */
  runs: number;
  /** Runs counted in accuracy: all but those that failed (`infrastructure_error`, `model_error`). */
  scored: number;
  endReasons: Record<EndReason, number>;
  /** Runs that ended with infrastructure_error (never in accuracy), by what failed. */
  infrastructure: { runs: number; what: Record<string, number> };
  /** Runs that ended with model_error (never in accuracy), by the API's error. */
  modelErrors: { runs: number; what: Record<string, number> };
  /** Correct of the scored runs. */
  accuracy: Share;
  /** Accuracy over scored runs whose gold answer exists (the unsharded graph answered the gold query). */
  accuracyExecutableGold: Share;
  /** Accuracy over scored runs with executable gold, without the questions whose answer is necessarily empty. */
  accuracyWithoutNecessarilyEmpty: Share;
  /** Accuracy over scored runs with executable gold on the questions whose answer is necessarily empty. */
  necessarilyEmpty: Share;
  byTies: number;
  byAlternative: number;
  tieUnresolved: number;
  graspF1: number;
  spinachF1: number;
  /**
   * 95 % confidence intervals `[low, high]` in percent (mean F1 ×100, as the report draws it),
   * rounded to 2 decimals; null over no runs (src/score/intervals.ts): Wilson score intervals of the
   * accuracy shares, percentile bootstrap intervals (2,000 resamples, seed 0) of the mean F1s.
   */
  ci95: {
    accuracy: Interval | null;
    accuracyExecutableGold: Interval | null;
    accuracyWithoutNecessarilyEmpty: Interval | null;
    graspF1: Interval | null;
    spinachF1: Interval | null;
  };
  /**
   * Syntactic validity over the queries judged (`queries`: the sum of `classes`); `notJudged`: queries
   * sent that parse and failed for the infrastructure or at their time limit, in no class and no share.
   */
  validity: { queries: number; classes: Record<ValidityClass, number>; valid: Share; failureShares: Record<Exclude<ValidityClass, 'ok'>, number>; notJudged: Record<NotJudged, number> };
  consultation: { submitted: Share; correct: Share };
  trivial: { submitted: Share; correct: Share };
  allShards: Share;
  tokens: { total: number; median: number; min: number; max: number };
  llmCallsPerRun: number;
  sparqlCallsPerRun: number;
  voidCallsPerRun: number;
  seconds: { median: number; max: number; total: number };
}

/** A gold query whose answer depends on ties, as the report lists it. */
interface TieQuestion {
  queryId: string;
  dependence: GoldTies['dependence'];
  reason: string;
  /** Admissible answers other than gold (sub-SELECT choices). */
  alternatives: number;
}

/** The result of `score`. */
export interface ScoreReport {
  shards: string;
  /** The build's output digest, and the gold-answers file of each scored graph. */
  build: { outputDigest: string; goldAnswers: Record<string, string> };
  files: string[];
  runs: number;
  groups: GroupScore[];
  perRun: RunScore[];
  /** Gold queries of the scored runs whose answer depends on ties (stats' tie analysis). */
  tieQuestions: TieQuestion[];
  /** Torn last lines skipped, runs of another build scored with allowOtherBuild, … */
  warnings: string[];
  /** Run files scored while fkgqa eval was still writing them (`partial`): the figures are over their runs so far. Empty otherwise. */
  partial: string[];
}

/**
 * Reads run lines (src/eval/run-reader.ts, `readRunFiles`): a later line of the same run (condition,
 * question, repeat) replaces an earlier one; a torn last line is skipped.
 * @throws InputError naming the file and line of a line that is no valid run record
 */
export function readRuns(files: string[]): RunRecord[] {
  return readRunFiles(files).runs.map((l) => l.record);
}

const SCRIPTED = new Set(['oracle', 'trivial', 'single']);

/**
 * The label of each condition: `<setup>|<model or agent>`, and, where several conditions share it,
 * the fields in which they differ with this condition's values, e.g.
 * `baseline|oracle (federationEngine=jena)`. Deterministic.
 * @param conditions by digest
 * @returns the label by digest, and per shared `<setup>|<model or agent>` the fields that differ
 */
export function conditionLabels(conditions: Map<string, RunCondition>): { labels: Map<string, string>; differ: Map<string, string[]> } {
  const base = (c: RunCondition) => `${c.setup}|${c.agent === 'llm' ? (c.model ?? 'llm') : c.agent}`;
  const byBase = new Map<string, string[]>();
  for (const [d, c] of conditions) byBase.set(base(c), [...(byBase.get(base(c)) ?? []), d]);
  const labels = new Map<string, string>();
  const differ = new Map<string, string[]>();
  for (const [b, digests] of byBase) {
    if (digests.length === 1) {
      labels.set(digests[0], b);
      continue;
    }
    const fields = digests.map((d) => conditionFields(conditions.get(d)!));
    const names = [...fields[0].keys()].filter((k) => fields.some((f) => f.get(k) !== fields[0].get(k)));
    differ.set(b, names);
    digests.forEach((d, i) => labels.set(d, `${b} (${names.map((k) => `${k}=${fields[i].get(k)}`).join(', ')})`));
  }
  return { labels, differ };
}

/** Line numbers as ranges: [1,2,3,5] → `1-3,5`. */
function lineRanges(lines: number[]): string {
  const xs = [...new Set(lines)].sort((a, b) => a - b);
  const out: string[] = [];
  for (let i = 0; i < xs.length;) {
    let j = i;
    while (j + 1 < xs.length && xs[j + 1] === xs[j] + 1) j++;
    out.push(j > i ? `${xs[i]}-${xs[j]}` : String(xs[i]));
    i = j + 1;
  }
  return out.join(',');
}

/** Where runs were read, per file: `<file>:<lines>`. */
function sourcesOf(lines: LocatedRun[]): string[] {
  const byFile = new Map<string, number[]>();
  for (const l of lines) byFile.set(l.file, [...(byFile.get(l.file) ?? []), l.line]);
  return [...byFile].map(([f, ls]) => `${f}:${lineRanges(ls)}`);
}

/**
 * Checks that every run was made on this build and against these gold answers.
 * @returns warnings for the runs of another build when `allow` is set
 * @throws InputError naming the first such run (file, line), both digests and how many runs differ
 */
function checkBuildIdentity(lines: LocatedRun[], outputDigest: string, goldDigestOf: (queryId: string) => string | null, shards: string, allow: boolean): string[] {
  const other = lines.filter((l) => l.record.build.outputDigest !== outputDigest || (l.record.build.goldDigest !== null && l.record.build.goldDigest !== goldDigestOf(l.record.question.queryId)));
  const noGold = lines.filter((l) => l.record.build.outputDigest === outputDigest && l.record.build.goldDigest === null);
  const warnings: string[] = [];
  if (other.length > 0) {
    const first = other[0];
    const b = first.record.build;
    const q = first.record.question.queryId;
    const what =
      `run ${first.record.id} was made on build ${b.outputDigest} with gold answer ${b.goldDigest} (${q}); --shards ${shards} is build ${outputDigest} with gold answer ${goldDigestOf(q)}` +
      (other.length > 1 ? ` (${counted(other.length, 'run')} of another build in all)` : '');
    if (!allow) throw new InputError(`${what}: score runs against the build and gold answers they were made on, or pass --allow-other-build`, { file: first.file, line: first.line });
    warnings.push(`${first.file}, line ${first.line}: ${what}; scored against this build because of --allow-other-build`);
  }
  if (noGold.length > 0) warnings.push(`${counted(noGold.length, 'run')} with no gold-answers digest (fkgqa stats had not run when they were made): scored against the gold answers stored now`);
  return warnings;
}

/**
 * The verdict of an answer against gold and, when gold depends on ties, against every admissible
 * answer (GoldTies: top-level segments, sub-SELECT alternatives with their own segments).
 */
function matchAdmissible(gold: SparqlResults, ties: GoldTies | undefined, pred: SparqlResults, ordered: boolean): AnswerMatch & { byTies: boolean; byAlternative: boolean } {
  const { match: m, by, admissible } = admissibleUnderTies(gold, ties as AdmissibleAnswers | undefined, pred, ordered, matchAnswer);
  if (m.correct) return { ...m, byTies: by === 'ties', byAlternative: by === 'alternative' };
  return { ...m, reason: `${m.reason}${admissible > 1 ? ` (nor any of the ${admissible - 1} other admissible answers)` : ''}`, byTies: false, byAlternative: false };
}

/**
 * F1 of an answer where gold may depend on ties: 1 for an answer accepted as admissible (it is one
 * of the correct answers), else the best F1 against gold and each alternative (sub-SELECT choices).
 */
function f1Of(f: typeof graspF1, pred: SparqlResults | undefined, gold: SparqlResults, ties: GoldTies | undefined, correct: boolean): number {
  if (correct && pred && ties) return 1;
  const all = [gold, ...(ties?.alternatives ?? []).map((a) => a.results as SparqlResults)];
  return round(Math.max(...all.map((g) => f(pred, g))), 4);
}

/** What scoring reads of the build besides the gold answers (`readScoringBuild`). */
interface ScoringBuild {
  /** The graphs of the build with their shard files, in shard order. */
  graphs: ReturnType<typeof graphShards>;
  /** The build's output digest. */
  digest: string;
  /** The IRI of the undeclared `:` prefix of the gold queries. */
  defaultPrefix: string;
  /** Gold query id → its text. */
  textOf: Map<string, string>;
  /** `<kg>|<benchmark index>` → the question (for runs that do not carry its text). */
  questionOf: Map<string, string>;
  /** Gold query id → what kind of gold question it is (the first question asking it decides). */
  kindOf: Map<string, GoldKind>;
}

/**
 * The build as scoring reads it: its graphs and shards, the gold queries, the questions and the
 * kind of each gold query (benchmark.json and the graphs' manifests).
 * @throws InputError for a missing build or one that does not check (`openBuild`, shards unchecked)
 */
function readScoringBuild(shards: string): ScoringBuild {
  const opened = openBuild(shards, { checkShards: false });
  const { defaultPrefix, queries } = readGoldQueries(shards);
  const questionOf = new Map<string, string>();
  const kindOf = new Map<string, GoldKind>();
  const emptyIds = new Set(opened.manifests.flatMap((m) => ((m.queries as { id: string; necessarilyEmpty?: boolean }[] | undefined) ?? []).filter((q) => q.necessarilyEmpty).map((q) => q.id)));
  for (const e of opened.benchmark.entries) {
    if (!kindOf.has(e.queryId)) kindOf.set(e.queryId, emptyIds.has(e.queryId) ? 'necessarily-empty' : e.federated === true ? 'federated' : 'not-federated');
    if (typeof e.index === 'number') questionOf.set(`${e.kg}|${e.index}`, e.question);
  }
  return { graphs: graphShards(opened), digest: opened.build.outputDigest, defaultPrefix, textOf: new Map(queries.map((q) => [q.id, q.text])), questionOf, kindOf };
}

/** The stored gold side of every graph the runs ask about (`readGoldOfGraphs`). */
interface GoldOfGraphs {
  /** Graph → gold query id → gold answer. */
  golds: Map<string, Map<string, GoldResult>>;
  /** Gold query id → digest of its stored gold answer. */
  goldDigests: Map<string, string | null>;
  /** Graph → its gold-answers file. */
  goldFiles: Map<string, string>;
  /** Graph → gold query id → the shards its answer uses (realised fan-out), when stored. */
  realised: Map<string, Map<string, string[] | null> | undefined>;
}

/**
 * The gold answers (with their tie analysis) and realised fan-out fkgqa stats stored for each graph
 * the runs ask about, in graph order.
 * @throws InputError naming the first run of a graph the build lacks, or the graph whose gold
 *   answers are missing or carry no tie analysis (run fkgqa stats)
 */
function readGoldOfGraphs(options: ScoreOptions, lines: LocatedRun[], b: ScoringBuild): GoldOfGraphs {
  const out: GoldOfGraphs = { golds: new Map(), goldDigests: new Map(), goldFiles: new Map(), realised: new Map() };
  const statsCommand = `fkgqa stats --shards ${options.shards}${options.state ? ` --state ${options.state}` : ''}`;
  for (const kg of [...new Set(lines.map((l) => l.record.question.kg))].sort()) {
    if (!b.graphs.some((g) => g.graph === kg)) {
      const l = lines.find((x) => x.record.question.kg === kg)!;
      throw new InputError(`run ${l.record.id} asks about graph ${kg}, which is not in the build ${options.shards}`, { file: l.file, line: l.line });
    }
    const stored = findGoldAnswers(options.shards, kg, b.digest, { state: options.state });
    if (!stored) throw new InputError(`no gold answers of ${kg} for this build: run ${statsCommand} first`, { file: options.shards });
    if (stored.answers.tieAnalysis !== TIE_ANALYSIS)
      throw new InputError(`the gold answers of ${kg} were stored without the tie analysis version ${TIE_ANALYSIS} that scoring needs: run ${statsCommand} again (it computes them anew)`, {
        file: stored.file,
      });
    out.golds.set(kg, goldResultsById(stored.answers));
    out.goldFiles.set(kg, stored.file);
    for (const a of stored.answers.answers) out.goldDigests.set(a.query, goldAnswerDigest(a));
    out.realised.set(kg, readNeededShards(options.shards, kg, b.digest, options.state));
  }
  return out;
}

/**
 * The shards where a triple pattern under MINUS or FILTER (NOT) EXISTS of a gold query matches:
 * such a triple can remove a solution, so the shard is needed although no solution uses its
 * triples. One store per graph (its shards as named graphs), started when first needed and kept
 * until `close`; one answer per gold query.
 */
class NegatedShards {
  private readonly stores = new Map<string, StoreWorker>();
  private readonly byQuery = new Map<string, string[] | null>();

  /**
   * @param graphs the build's graphs and shard files
   * @param timeoutMs time limit of each query, in ms
   */
  constructor(
    private readonly graphs: ReturnType<typeof graphShards>,
    private readonly timeoutMs: number,
  ) {}

  /** The shard names (in the order found), or null when a query failed or hit its time limit. */
  async of(kg: string, id: string, ast: sparqljs.SparqlQuery): Promise<string[] | null> {
    if (this.byQuery.has(id)) return this.byQuery.get(id)!;
    const triples = negatedTriples(ast);
    let out: string[] | null = [];
    if (triples.length > 0) {
      const g = this.graphs.find((b) => b.graph === kg)!;
      let store = this.stores.get(kg);
      if (!store) {
        store = await StoreWorker.start(g.shards.map((s) => ({ file: s.file, format: 'application/n-triples', graph: shardGraph(s.endpoint) })));
        this.stores.set(kg, store);
      }
      const nameOf = new Map(g.shards.map((s) => [shardGraph(s.endpoint), s.name]));
      const found = new Set<string>();
      const gen = new sparqljs.Generator({ allPrefixes: false });
      for (const t of triples) {
        const q = gen.stringify({
          type: 'query',
          queryType: 'SELECT',
          distinct: true,
          prefixes: {},
          variables: [{ termType: 'Variable', value: 'fkgqa_g' }],
          where: [{ type: 'graph', name: { termType: 'Variable', value: 'fkgqa_g' }, patterns: [{ type: 'bgp', triples: [t] }] }],
        } as unknown as sparqljs.SparqlQuery);
        const o = await store.query({ query: q, resultsFormat: MEDIA.json, timeoutMs: this.timeoutMs });
        if (o.status !== 'ok') {
          out = null;
          break;
        }
        for (const b of parseSparqlJson(o.body, 'the shard query')) if (b.fkgqa_g && nameOf.has(b.fkgqa_g.value)) found.add(nameOf.get(b.fkgqa_g.value)!);
      }
      if (out) out = [...found];
    }
    this.byQuery.set(id, out);
    return out;
  }

  /** Stops the stores. */
  async close(): Promise<void> {
    for (const s of this.stores.values()) await s.close();
  }
}

/**
 * One warning per `<setup>|<model or agent>` shared by several conditions: they are reported
 * apart, with the fields in which they differ and where each condition's runs were read.
 */
function conditionWarnings(lines: LocatedRun[], conditions: Map<string, RunCondition>, labels: Map<string, string>, differ: Map<string, string[]>): string[] {
  return [...differ].map(([base, fields]) => {
    const ds = [...conditions.keys()].filter((d) => labels.get(d)!.startsWith(`${base} (`)).sort((a, b) => (labels.get(a)! < labels.get(b)! ? -1 : 1));
    return (
      `${base}: ${ds.length} conditions, reported apart (they differ in ${fields.join(', ')}): ` +
      ds.map((d) => `${labels.get(d)}: ${counted(lines.filter((l) => l.conditionDigest === d).length, 'run')} from ${sourcesOf(lines.filter((l) => l.conditionDigest === d)).join(' ')}`).join('; ')
    );
  });
}

/** The verdict on a run's final answer: correct (and how), or why not. */
interface AnswerVerdict {
  correct: boolean;
  reason: string | undefined;
  byTies: boolean;
  byAlternative: boolean;
}

/**
 * The verdict on the final answer `pred` of run `r` against gold (`matchAdmissible`), or why there
 * is none: the run failed (infrastructure or model error), gold has no answer, or the run has no answer.
 */
function judgeAnswer(r: RunRecord, gold: GoldResult | undefined, goldResults: SparqlResults | undefined, pred: SparqlResults | undefined, ordered: boolean): AnswerVerdict {
  if (r.endReason === 'infrastructure_error')
    return {
      correct: false,
      reason: `infrastructure error (not the agent's fault, not in accuracy; fkgqa eval --retry-errors reruns it): ${r.infrastructure?.what ?? r.error ?? 'unknown'}`,
      byTies: false,
      byAlternative: false,
    };
  if (r.endReason === 'model_error')
    return { correct: false, reason: `model error (the LLM API failed; not in accuracy; fkgqa eval --retry-errors reruns it): ${r.error ?? 'unknown'}`, byTies: false, byAlternative: false };
  if (!goldResults) return { correct: false, reason: `no gold answer (${gold ? gold.status : 'missing'})`, byTies: false, byAlternative: false };
  if (!pred) {
    const limit = LIMIT_END_REASONS.includes(r.endReason) ? `hit the ${r.endReason.replace('_', ' ')} before answering` : undefined;
    const reason = limit ?? (r.finalQuery ? `the submitted query failed (${r.final?.status}: ${r.final?.error ?? ''})` : `nothing submitted (${r.endReason}${r.error ? `: ${r.error}` : ''})`);
    return { correct: false, reason, byTies: false, byAlternative: false };
  }
  const m = matchAdmissible(goldResults, gold?.ties, pred, ordered);
  return { correct: m.correct, reason: m.reason, byTies: m.byTies, byAlternative: m.byAlternative };
}

/** The validity classes of the queries run `r` sent to run_sparql_query, and those not judged (src/score/validity.ts). */
function queryValidity(r: RunRecord): { validity: Record<ValidityClass, number>; notJudged: Record<NotJudged, number> } {
  const validity = Object.fromEntries(VALIDITY_CLASSES.map((c) => [c, 0])) as Record<ValidityClass, number>;
  const unjudged = Object.fromEntries(NOT_JUDGED.map((c) => [c, 0])) as Record<NotJudged, number>;
  for (const s of r.steps) {
    if (s.type !== 'tool' || s.name !== 'run_sparql_query') continue;
    let q: unknown;
    try {
      q = (JSON.parse(s.arguments) as { query?: unknown }).query;
    } catch {
      q = undefined;
    }
    if (typeof q !== 'string') continue; // a malformed tool call sends no query
    const toolError = s.isError ? s.result : undefined;
    const v = classifyQuery(q, toolError);
    const why = notJudged(v, s.isError ? s.error : undefined);
    if (why) unjudged[why]++;
    else validity[v.class]++;
  }
  return { validity, notJudged: unjudged };
}

/** What scoring every run shares: the build, its gold side, the negated-pattern shards, the condition labels and the tie questions found so far. */
interface RunScoring {
  build: ScoringBuild;
  gold: GoldOfGraphs;
  negated: NegatedShards;
  /** Condition digest → its label (`conditionLabels`). */
  labels: Map<string, string>;
  /** Gold query id → its tie question, added to by `scoreRun`. */
  tieQuestions: Map<string, TieQuestion>;
}

/**
 * The score of one run: its verdict (`judgeAnswer`), F1, the shards its answer needs and those
 * its final query consulted, the validity of its queries (`queryValidity`) and its cost.
 * @throws InputError when its gold query is not in the build or does not parse
 */
async function scoreRun({ record: r, file, line, conditionDigest: condition }: LocatedRun, s: RunScoring): Promise<RunScore> {
  const kg = r.question.kg;
  const gold = s.gold.golds.get(kg)!.get(r.question.queryId);
  const text = s.build.textOf.get(r.question.queryId);
  if (!text) throw new InputError(`run ${r.id} asks gold query ${r.question.queryId}, which is not in the build's benchmark.json`, { file, line });
  const parsed = parseQuery(text, s.build.defaultPrefix);
  if (!parsed.ok) throw new InputError(`gold query does not parse: ${parsed.error}`, { query: r.question.queryId });
  const ast = parsed.query.ast;
  const ordered = ast.type === 'query' && !!(ast as { order?: unknown[] }).order?.length;
  const goldResults = gold?.status === 'ok' && gold.results && typeof gold.results === 'object' ? (gold.results as SparqlResults) : undefined;
  if (gold?.ties && !s.tieQuestions.has(r.question.queryId))
    s.tieQuestions.set(r.question.queryId, { queryId: r.question.queryId, dependence: gold.ties.dependence, reason: gold.ties.reason, alternatives: gold.ties.alternatives?.length ?? 0 });
  const pred = r.final?.status === 'ok' ? r.final.results : undefined;
  const counted = !FAILED_END_REASONS.includes(r.endReason);
  const { correct, byTies, byAlternative, ...verdict } = judgeAnswer(r, gold, goldResults, pred, ordered);
  let reason = verdict.reason;
  const tieUnresolved = counted && !correct && !!goldResults && !!pred && gold?.ties?.dependence === 'unknown';
  if (tieUnresolved) reason = `${reason}; the gold answer depends on ties that were not enumerated (${gold!.ties!.reason})`;
  const realisedShards = s.gold.realised.get(kg)?.get(r.question.queryId) ?? null;
  const negated = realisedShards ? await s.negated.of(kg, r.question.queryId, ast) : null;
  const num = (x: string) => Number(/(\d+)$/.exec(x)?.[1] ?? 0);
  const needed = realisedShards && negated ? [...new Set([...realisedShards, ...negated])].sort((a, b) => num(a) - num(b)) : null;
  const shardOf = new Map(r.endpoints.map((e) => [e.url, e.shard]));
  const targets = r.finalQuery ? (r.final?.endpoints ?? serviceTargets(r.finalQuery)) : undefined;
  const consulted = targets ? [...new Set(targets.filter((t) => shardOf.has(t)).map((t) => shardOf.get(t)!))].sort() : null;
  const foreign = targets ? targets.filter((t) => !shardOf.has(t)) : [];
  const all = consulted ? consulted.length === r.endpoints.length : null;
  const { validity, notJudged: unjudged } = queryValidity(r);
  return {
    id: r.id,
    source: `${file}:${line}`,
    group: s.labels.get(condition)!,
    condition,
    setup: r.setup,
    agent: r.agent,
    model: r.model,
    kg,
    queryId: r.question.queryId,
    question: typeof r.question.text === 'string' ? r.question.text : (s.build.questionOf.get(`${kg}|${r.question.index}`) ?? ''),
    endReason: r.endReason,
    counted,
    ...(r.endReason === 'infrastructure_error' ? { infrastructure: r.infrastructure?.what ?? r.error ?? 'unknown' } : {}),
    ...(r.endReason === 'model_error' ? { modelError: (r.error ?? 'unknown').slice(0, 200) } : {}),
    gold: gold ? gold.status : 'missing',
    goldKind: s.build.kindOf.get(r.question.queryId) ?? 'not-federated',
    goldTies: gold?.ties?.dependence ?? 'none',
    correct,
    reason: correct ? undefined : reason,
    byTies,
    byAlternative,
    tieUnresolved,
    graspF1: goldResults && counted ? f1Of(graspF1, pred, goldResults, gold?.ties, correct) : 0,
    spinachF1: goldResults && counted ? f1Of(spinachF1, pred, goldResults, gold?.ties, correct) : 0,
    neededShards: needed,
    graphShards: r.endpoints.length,
    consultedShards: consulted,
    foreignTargets: foreign,
    consultedAllNeeded: consulted && needed ? needed.every((x) => consulted.includes(x)) : null,
    allShards: all,
    trivial: all !== null && needed ? (needed.length < r.endpoints.length ? all : null) : null,
    validity,
    notJudged: unjudged,
    tokens: r.usage.totalTokens,
    llmCalls: r.counts.llmCalls,
    sparqlCalls: r.counts.sparqlCalls,
    voidCalls: r.counts.voidCalls,
    seconds: r.ms / 1000,
  };
}

/**
 * Scores runs (module comment): reads the runs, the build (`readScoringBuild`) and its gold side
 * (`readGoldOfGraphs`), checks the build identity, scores each run in run id order (`scoreRun`)
 * and aggregates one group per condition (`aggregate`).
 * @throws InputError for a missing build, a run file that does not parse or holds an invalid record
 *   (file and line), a run file fkgqa eval is still writing (unless `partial`), a run of another build (unless `allowOtherBuild`), a run of a graph the build
 *   lacks, or a build without gold answers with their tie analysis (run fkgqa stats first)
 */
export async function score(options: ScoreOptions): Promise<ScoreReport> {
  const progress = options.progress ?? (() => {});
  const { runs: lines, warnings, partial } = readRunFiles(options.runs, { partial: options.partial === true });
  for (const w of warnings) progress(`fkgqa score: warning: ${w}`);
  const warn = (w: string) => {
    warnings.push(w);
    progress(`fkgqa score: warning: ${w}`);
  };
  const build = readScoringBuild(options.shards);
  const gold = readGoldOfGraphs(options, lines, build);
  for (const w of checkBuildIdentity(lines, build.digest, (q) => gold.goldDigests.get(q) ?? null, options.shards, options.allowOtherBuild === true)) warn(w);
  // One group per condition (RunCondition): runs that differ in what was measured are never merged.
  const conditions = new Map(lines.map((l) => [l.conditionDigest, l.condition]));
  const { labels, differ } = conditionLabels(conditions);
  for (const w of conditionWarnings(lines, conditions, labels, differ)) warn(w);
  const perRun: RunScore[] = [];
  const scoring: RunScoring = { build, gold, negated: new NegatedShards(build.graphs, options.timeoutMs ?? GOLD_QUERY_TIMEOUT_MS), labels, tieQuestions: new Map() };
  try {
    for (const l of [...lines].sort((a, b) => (a.record.id < b.record.id ? -1 : a.record.id > b.record.id ? 1 : 0))) perRun.push(await scoreRun(l, scoring));
  } finally {
    await scoring.negated.close();
  }
  progress(`fkgqa score: ${counted(perRun.length, 'run')} scored`);
  const groups = [...conditions.keys()]
    .sort((a, b) => (labels.get(a)! < labels.get(b)! ? -1 : labels.get(a)! > labels.get(b)! ? 1 : 0))
    .map((d) =>
      aggregate(
        perRun.filter((s) => s.condition === d),
        { condition: conditions.get(d)!, digest: d, sources: sourcesOf(lines.filter((l) => l.conditionDigest === d)) },
      ),
    );
  for (const g of groups) {
    if (g.runs === g.scored) continue;
    warn(
      `${g.group}: ${g.runs - g.scored} of ${counted(g.runs, 'run')} failed (${FAILED_END_REASONS.filter((e) => g.endReasons[e] > 0)
        .map((e) => `${e} ${g.endReasons[e]}`)
        .join(', ')}) and are in no rate: rerun them with fkgqa eval --retry-errors`,
    );
  }
  return {
    shards: path.resolve(options.shards),
    build: { outputDigest: build.digest, goldAnswers: Object.fromEntries(gold.goldFiles) },
    files: options.runs,
    runs: perRun.length,
    groups,
    perRun,
    tieQuestions: [...scoring.tieQuestions.values()].sort((a, b) => (a.queryId < b.queryId ? -1 : 1)),
    warnings,
    partial,
  };
}

/**
 * The figures of a group of run scores (the runs of one condition).
 * @param of the group's condition, its digest and where its runs were read
 */
export function aggregate(rs: RunScore[], of: { condition: RunCondition; digest: string; sources: string[] }): GroupScore {
  const first = rs[0];
  const executable = (s: RunScore) => s.gold === 'ok';
  const count = (f: (s: RunScore) => boolean) => rs.filter(f).length;
  const endReasons = Object.fromEntries(END_REASONS.map((e) => [e, 0])) as Record<EndReason, number>;
  for (const s of rs) endReasons[s.endReason]++;
  const infra: Record<string, number> = {};
  const model: Record<string, number> = {};
  for (const s of rs) if (s.infrastructure !== undefined) infra[s.infrastructure] = (infra[s.infrastructure] ?? 0) + 1;
  for (const s of rs) if (s.modelError !== undefined) model[s.modelError] = (model[s.modelError] ?? 0) + 1;
  // Accuracy, F1, validity, consultation and trivial federation are over the scored runs (an
  // infrastructure or model error says nothing about the agent); the cost figures are over every run.
  const all = rs;
  rs = rs.filter((s) => s.counted);
  const classes = Object.fromEntries(VALIDITY_CLASSES.map((c) => [c, rs.reduce((n, s) => n + s.validity[c], 0)])) as Record<ValidityClass, number>;
  const queries = Object.values(classes).reduce((a, b) => a + b, 0);
  const failures = queries - classes.ok;
  const failureShares = Object.fromEntries(VALIDITY_CLASSES.filter((c) => c !== 'ok').map((c) => [c, round(percent(classes[c], failures))])) as GroupScore['validity']['failureShares'];
  const unjudged = Object.fromEntries(NOT_JUDGED.map((c) => [c, rs.reduce((n, s) => n + (s.notJudged?.[c] ?? 0), 0)])) as Record<NotJudged, number>;
  const decided = (f: (s: RunScore) => boolean | null, among: (s: RunScore) => boolean = () => true) => {
    const d = rs.filter((s) => among(s) && f(s) !== null);
    return share(d.filter((s) => f(s) === true).length, d.length);
  };
  /** The share among submitted runs and among correct ones. */
  const submittedAndCorrect = (f: (s: RunScore) => boolean | null) => ({ submitted: decided(f), correct: decided(f, (s) => s.correct) });
  const tokens = distribution(all.map((s) => s.tokens));
  const secs = distribution(all.map((s) => s.seconds));
  const mean = (f: (s: RunScore) => number, over = rs) => round(over.reduce((a, s) => a + f(s), 0) / Math.max(1, over.length), 2);
  const accuracy = share(
    count((s) => s.correct),
    rs.length,
  );
  const accuracyExecutableGold = share(
    count((s) => s.correct && executable(s)),
    count(executable),
  );
  const accuracyWithoutNecessarilyEmpty = share(
    count((s) => s.correct && executable(s) && s.goldKind !== 'necessarily-empty'),
    count((s) => executable(s) && s.goldKind !== 'necessarily-empty'),
  );
  const inPercent = (i: Interval | null): Interval | null => i && [round(i[0] * 100, 2), round(i[1] * 100, 2)];
  const wilson = (s: Share) => inPercent(wilsonInterval(s.count, s.of));
  const ci95 = {
    accuracy: wilson(accuracy),
    accuracyExecutableGold: wilson(accuracyExecutableGold),
    accuracyWithoutNecessarilyEmpty: wilson(accuracyWithoutNecessarilyEmpty),
    graspF1: inPercent(bootstrapMeanInterval(rs.map((s) => s.graspF1))),
    spinachF1: inPercent(bootstrapMeanInterval(rs.map((s) => s.spinachF1))),
  };
  return {
    group: first.group,
    condition: of.condition,
    conditionDigest: of.digest,
    sources: of.sources,
    setup: first.setup,
    agent: first.agent,
    model: first.model,
    scripted: SCRIPTED.has(first.agent),
    runs: all.length,
    scored: rs.length,
    endReasons,
    infrastructure: { runs: endReasons.infrastructure_error, what: infra },
    modelErrors: { runs: endReasons.model_error, what: model },
    accuracy,
    accuracyExecutableGold,
    accuracyWithoutNecessarilyEmpty,
    necessarilyEmpty: share(
      count((s) => s.correct && executable(s) && s.goldKind === 'necessarily-empty'),
      count((s) => executable(s) && s.goldKind === 'necessarily-empty'),
    ),
    byTies: count((s) => s.byTies),
    byAlternative: count((s) => s.byAlternative),
    tieUnresolved: count((s) => s.tieUnresolved),
    graspF1: mean((s) => s.graspF1),
    spinachF1: mean((s) => s.spinachF1),
    ci95,
    validity: { queries, classes, valid: share(classes.ok, queries), failureShares, notJudged: unjudged },
    consultation: submittedAndCorrect((s) => s.consultedAllNeeded),
    trivial: submittedAndCorrect((s) => s.trivial),
    allShards: decided((s) => s.allShards),
    tokens: { total: all.reduce((a, s) => a + s.tokens, 0), median: tokens.median, min: tokens.min, max: tokens.max },
    llmCallsPerRun: mean((s) => s.llmCalls, all),
    sparqlCallsPerRun: mean((s) => s.sparqlCalls, all),
    voidCallsPerRun: mean((s) => s.voidCalls, all),
    seconds: {
      median: round(secs.median, 2),
      max: round(secs.max, 2),
      total: round(
        all.reduce((a, s) => a + s.seconds, 0),
        1,
      ),
    },
  };
}
