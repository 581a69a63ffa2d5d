import os from 'node:os';
import path from 'node:path';
import { SHARDING_KINDS, type ShardingKind } from '../analyze/analyze.js';
import { parseQuery, type ParsedQuery } from '../sparql/parse.js';
import { openBuild, type BenchmarkEntry } from '../build/open.js';
import { writeFileAtomic } from '../common/output.js';
import { STATE_FILES, stateDir } from '../build/state.js';
import { StoreWorker, type StoreSource } from '../common/store-worker.js';
import type { GraphManifest } from '../partition/index.js';
import { executeGoldQueries, type GoldQueryToRun } from './answers.js';
import { GOLD_QUERY_TIMEOUT_MS, readGoldAnswers, TIE_ANALYSIS, type GoldAnswer, type GoldAnswers } from '../build/gold-answers.js';
import { readRealisedFanOut, type StoredRealisedFanOut } from '../build/fan-out.js';
import { coefficientOfVariation, distribution, round, share, type Distribution, type Share } from './figures.js';
import { realisedShards } from './provenance.js';
import { ProgressTicker } from '../common/progress.js';
import { unknownGraphError } from '../build/names.js';
import { counted } from '../common/strings.js';

/** Options of `fkgqa stats`. */
export interface StatsOptions {
  /** A build directory written by `fkgqa partition`. */
  shards: string;
  /** Time limit per query in ms (gold answers and provenance); default GOLD_QUERY_TIMEOUT_MS (60 000). */
  timeoutMs?: number;
  /** Only these graphs (default: all graphs of the build). */
  kgs?: string[];
  /** Recompute gold answers even if stored ones match the build. */
  recompute?: boolean;
  /**
   * State folder where gold answers (`gold-answers/<kg>.json`) and realised fan-out
   * (`realised-fan-out/<kg>.json`) are stored (default `<build>.state/` beside the build, see
   * src/build/state.ts). The build itself is never written.
   */
  state?: string;
  /** Graphs processed at once (each uses two store workers, one thread each). Default: half the CPUs, at least 1. */
  concurrency?: number;
  progress?: (line: string) => void;
}

/** Figures for one distinct query (one row of `--per-query`). */
interface QueryStats {
  graph: string;
  /** `<kg>/q<N>`. */
  query: string;
  /** Number of questions asking it. */
  questions: number;
  /** The first question asking it (benchmark.json order). */
  question: string;
  /** The gold query text as in benchmark.json (`PREFIX :` declared). */
  text: string;
  /** Implied shards (`shard<N>`): shards holding a triple that matches some triple pattern; empty if unparsable. */
  impliedShards: string[];
  predicates: number | null;
  classes: number | null;
  subjectVariables: number | null;
  applicable: ShardingKind[];
  status: 'covered' | 'uncoverable' | 'unparsable';
  /** Why it is uncoverable, unparsable or not federated (from the manifest). */
  reason?: string;
  /** Covering rules as `r<N>:<kind>`. */
  coveringRules: string[];
  /** f(Q) (section 4.2): shards with a match for at least one triple pattern; null if not covered. */
  impliedFanOut: number | null;
  /** Σ_t |E_t| over the query's triple patterns (TPWSS); null if not covered. */
  tpwss: number | null;
  /** Shards holding a triple used by a solution of the query's pattern; null if not computed. */
  realisedFanOut: number | null;
  realisedShards: string[];
  /** `ok`, or why realised fan-out is missing: `timeout`, `error`, `unparsable`. */
  realisedStatus: 'ok' | 'timeout' | 'error' | 'unparsable';
  answerStatus: GoldAnswer['status'] | 'unparsable';
  answerRows: number | null;
  /** The gold answer has no rows (or is ASK false). */
  answerEmpty: boolean | null;
  /** How the gold answer depends on ties under ORDER BY (GoldTies of src/build/gold-answers.ts): `none`, `order`, `choice` or `unknown`; null without an answer. */
  answerTies: 'none' | 'order' | 'choice' | 'unknown' | null;
  /** Where the tie is, in words (when answerTies is not `none`). */
  answerTiesReason?: string;
  answerError?: string;
}

/** Figures for one graph. */
interface GraphStats {
  graph: string;
  shards: number;
  /** Triples per shard, in shard order. */
  shardSizes: number[];
  /** Coefficient of variation of the shard sizes (population standard deviation / mean). */
  shardBalanceCv: number;
  rules: number;
  ruleKinds: Record<ShardingKind, number>;
  queries: number;
}

/** The build-level figures of section 4.2 and the realised fan-out. */
export interface BuildFigures {
  graphs: number;
  questions: number;
  /** Distinct query texts, and distinct (graph, query) pairs: the unit of the per-query figures. */
  distinctQueries: number;
  graphQueryPairs: number;
  shards: { total: number; perGraph: Distribution };
  rulesPerGraph: Distribution;
  ruleComposition: Record<ShardingKind, Share>;
  shardBalanceCv: number;
  applicability: { overQuestions: Record<ShardingKind, Share>; overDistinctQueries: Record<ShardingKind, Share> };
  impliedFanOut: { overGraphQueryPairs: Distribution; overQuestions: Distribution };
  /** Σ_t |E_t| per covered query (TPWSS), over questions. */
  tpwss: { overQuestions: Distribution };
  realisedFanOut: {
    computed: number;
    noMatch: { overGraphQueryPairs: Share; overQuestions: Share };
    oneShard: { overGraphQueryPairs: Share; overQuestions: Share };
    overGraphQueryPairs: Distribution;
  };
  /**
   * `tiesChoice`: answers another choice among tied solutions would change (a LIMIT/OFFSET cuts a
   * run of ties, at the top level or in a sub-SELECT); `tiesOrder`: answers whose rows are fixed but
   * the order of some tied rows is open; `tiesUnknown`: answers whose dependence was not decided.
   */
  goldAnswers: { graphQueryPairs: number; executed: number; failed: number; timedOut: number; empty: number; tiesChoice: number; tiesOrder: number; tiesUnknown: number };
  /** Queries whose realised fan-out is below the implied one (section 4.2, Example 2), largest gap first. */
  gapExamples: { query: string; implied: number; realised: number }[];
}

/** Everything `fkgqa stats` reports. */
export interface BuildStats {
  shards: string;
  figures: BuildFigures;
  graphs: GraphStats[];
  queries: QueryStats[];
}

const byKind = <T>(f: (k: ShardingKind) => T) => Object.fromEntries(SHARDING_KINDS.map((k) => [k, f(k)])) as Record<ShardingKind, T>;
const roundDist = (d: Distribution): Distribution => ({ mean: round(d.mean), median: d.median, min: d.min, max: d.max });
const weighted = (xs: { value: number; weight: number }[]) => xs.flatMap((x) => Array<number>(x.weight).fill(x.value));

/** Writes a state file (creating its folder), through a temporary file so that a kill leaves the old one or the new one. */
function writeStateJson(file: string, value: unknown): void {
  writeFileAtomic(file, JSON.stringify(value, null, 2) + '\n');
}

/** Named-graph IRI of a shard in the provenance store. */
export const shardGraph = (endpoint: string) => `urn:fkgqa:shard:${endpoint}`;

/** The build through `openBuild` (checks build.json, benchmark.json, manifests, shard sha256). */
function readBuild(dir: string): { manifests: GraphManifest[]; entries: BenchmarkEntry[]; defaultPrefix: string; digest: string } {
  const b = openBuild(dir);
  return { manifests: b.manifests as unknown as GraphManifest[], entries: b.benchmark.entries, defaultPrefix: b.benchmark.defaultPrefix, digest: b.build.outputDigest };
}

async function pool<T>(items: T[], n: number, f: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.max(1, Math.min(n, items.length)) }, async () => {
      while (next < items.length) await f(items[next++]);
    }),
  );
}

/** What `fkgqa stats`'s progress line counts: two steps per gold query (e.g. "fkgqa stats: 48/90 steps (…) done, 95 s"). */
export const STATS_PROGRESS_UNIT = 'steps (a gold answer and a realised fan-out per query)';

/** Realised fan-out per gold query id: its status and the shards (`shard<N>`) a solution uses. */
type RealisedFanOut = Map<string, { status: QueryStats['realisedStatus']; shards: string[] }>;

/** A shard file of a graph with its endpoint name and shard name. */
interface ShardFileOf {
  file: string;
  endpoint: string;
  name: string;
}

/** What computing the answers of every graph shares. */
interface StatsRun {
  /** The options with the time limit filled in. */
  options: StatsOptions & { timeoutMs: number };
  /** The state folder. */
  state: string;
  /** The build's output digest. */
  digest: string;
  /** Progress lines (stderr in the CLI). */
  log: (line: string) => void;
  ticker: ProgressTicker;
}

/** A shard file as a store source, in the default graph or in `graph`. */
const nt = (f: { file: string }, graph?: string): StoreSource => ({ file: f.file, format: 'application/n-triples', graph });

/** The gold queries of a graph, parsed, by id (undefined: unparsable). */
function parseGraphQueries(m: GraphManifest, textOf: Map<string, string>, defaultPrefix: string): Map<string, ParsedQuery | undefined> {
  return new Map(
    m.queries.map((q) => {
      const p = parseQuery(textOf.get(q.id) ?? '', defaultPrefix);
      return [q.id, p.ok ? p.query : undefined] as const;
    }),
  );
}

/**
 * The gold answers of a graph on its unsharded graph (all shards in the default graph): the stored
 * ones when they can be reused, else computed (with their tie analysis, src/report/answers.ts) and
 * written to the state folder.
 * @param reuse the stored answers match the build, the time limit and the tie analysis (TIE_ANALYSIS), and no recompute was asked
 */
async function goldAnswersOf(m: GraphManifest, files: ShardFileOf[], toRun: GoldQueryToRun[], stored: GoldAnswers | undefined, reuse: boolean, run: StatsRun): Promise<GoldAnswer[]> {
  const { options, digest, ticker } = run;
  if (reuse) {
    for (const q of toRun) ticker.done(q.id);
    return stored!.answers;
  }
  const store = await StoreWorker.start(files.map((f) => nt(f)));
  try {
    const answers = await executeGoldQueries(store, toRun, options.timeoutMs, ticker);
    const doc: GoldAnswers = {
      graph: m.graph,
      buildDigest: digest,
      timeoutMs: options.timeoutMs,
      engine: 'oxigraph 0.5.11',
      tieAnalysis: TIE_ANALYSIS,
      answers,
    };
    writeStateJson(path.join(run.state, STATE_FILES.goldAnswers(m.graph)), doc);
    return answers;
  } finally {
    await store.close();
  }
}

/**
 * The realised fan-out of a graph's gold queries: stored, or computed by provenance queries on the
 * shards as named graphs (also loaded into the default graph, so that the patterns left
 * unrewritten — MINUS, FILTER EXISTS, aggregating subqueries — see all data) and written to the state folder.
 * @param reuse the stored fan-out matches the build and the time limit, and no recompute was asked
 */
async function realisedFanOutOf(
  m: GraphManifest,
  files: ShardFileOf[],
  parsed: Map<string, ParsedQuery | undefined>,
  stored: StoredRealisedFanOut | undefined,
  reuse: boolean,
  run: StatsRun,
): Promise<RealisedFanOut> {
  const { options, digest, ticker } = run;
  const realised: RealisedFanOut = new Map();
  if (reuse) {
    for (const r of stored!.realised) {
      realised.set(r.query, { status: r.status, shards: r.shards });
      ticker.done(r.query);
    }
    return realised;
  }
  const store = await StoreWorker.start([...files.map((f) => nt(f, shardGraph(f.endpoint))), ...files.map((f) => nt(f))]);
  const nameOfGraph = new Map(files.map((f) => [shardGraph(f.endpoint), f.name]));
  try {
    for (const q of m.queries) {
      const p = parsed.get(q.id);
      ticker.start(`${q.id} (realised fan-out)`);
      realised.set(q.id, p ? await realisedShards(store, p.ast, nameOfGraph, options.timeoutMs) : { status: 'unparsable', shards: [] });
      ticker.done(`${q.id} (realised fan-out)`);
    }
  } finally {
    await store.close();
  }
  const doc: StoredRealisedFanOut = {
    graph: m.graph,
    buildDigest: digest,
    timeoutMs: options.timeoutMs,
    realised: [...realised].map(([query, r]) => ({ query, ...r })),
  };
  writeStateJson(path.join(run.state, STATE_FILES.realisedFanOut(m.graph)), doc);
  return realised;
}

/**
 * The gold answers (`goldAnswersOf`) and realised fan-out (`realisedFanOutOf`) of one graph, at
 * once, each stored in the state folder (the build is read-only); a progress line says what was reused.
 */
async function graphAnswers(m: GraphManifest, parsed: Map<string, ParsedQuery | undefined>, run: StatsRun): Promise<{ answers: GoldAnswer[]; realised: RealisedFanOut }> {
  const { options, digest } = run;
  const t0 = performance.now();
  const dir = path.join(options.shards, m.graph);
  const files = m.shards.map((s) => ({ file: path.join(dir, s.file), endpoint: s.endpoint, name: s.name }));
  const toRun: GoldQueryToRun[] = [];
  for (const q of m.queries) {
    const p = parsed.get(q.id);
    if (!p) continue;
    const ast = p.ast as { queryType: string; order?: unknown[] };
    toRun.push({ id: q.id, normalized: p.normalized, queryType: ast.queryType, ordered: Boolean(ast.order?.length), ast: p.ast });
  }
  const stored = readGoldAnswers(options.shards, m.graph, digest, { state: options.state, timeoutMs: options.timeoutMs });
  const reuse = !options.recompute && stored?.buildDigest === digest && stored.timeoutMs === options.timeoutMs && stored.tieAnalysis === TIE_ANALYSIS;
  const answersTask = goldAnswersOf(m, files, toRun, stored, reuse, run);
  const storedProvenance = readRealisedFanOut(options.shards, m.graph, digest, { state: options.state, timeoutMs: options.timeoutMs });
  const reuseProvenance = !options.recompute && storedProvenance?.buildDigest === digest && storedProvenance.timeoutMs === options.timeoutMs;
  const realisedTask = realisedFanOutOf(m, files, parsed, storedProvenance, reuseProvenance, run);
  const [answers, realised] = await Promise.all([answersTask, realisedTask]);
  run.log(
    `${m.graph}: ${counted(m.queries.length, 'query', 'queries')}, gold answers ${reuse ? 'reused' : 'computed'}, ` +
      `realised fan-out ${reuseProvenance ? 'reused' : 'computed'} (${Math.round(performance.now() - t0)} ms)`,
  );
  return { answers, realised };
}

/** The figures of one graph from its manifest. */
function graphStatsOf(m: GraphManifest): GraphStats {
  const sizes = m.shards.map((s) => s.triples);
  return {
    graph: m.graph,
    shards: m.shards.length,
    shardSizes: sizes,
    shardBalanceCv: round(coefficientOfVariation(sizes), 4),
    rules: m.rules.length,
    ruleKinds: byKind((k) => m.rules.filter((r) => r.kind === k).length),
    queries: m.queries.length,
  };
}

/** The figures of each distinct query of a graph: its manifest entry, its first question, its gold answer and realised fan-out. */
function queryStatsOf(m: GraphManifest, g: { answers: GoldAnswer[]; realised: RealisedFanOut }, firstEntry: Map<string, BenchmarkEntry>): QueryStats[] {
  const answerOf = new Map(g.answers.map((a) => [a.query, a]));
  const kindOf = new Map(m.rules.map((r) => [r.id, r.kind]));
  return m.queries.map((q) => {
    const a = answerOf.get(q.id);
    const r = g.realised.get(q.id)!;
    return {
      graph: m.graph,
      query: q.id,
      questions: q.questions.length,
      question: firstEntry.get(q.id)?.question ?? '',
      text: firstEntry.get(q.id)?.query ?? '',
      impliedShards: firstEntry.get(q.id)?.shardsImplied?.map((e) => e.slice(m.graph.length + 1)) ?? q.shards ?? [],
      predicates: q.predicates ?? null,
      classes: q.classes ?? null,
      subjectVariables: q.subjectVariables ?? null,
      applicable: q.applicable ?? [],
      status: q.status,
      ...(q.reason ? { reason: q.reason } : {}),
      coveringRules: (q.rules ?? []).map((id) => `${id}:${kindOf.get(id)}`),
      impliedFanOut: q.status === 'covered' ? (q.fanOut ?? null) : null,
      tpwss: q.status === 'covered' ? (q.tpwss ?? null) : null,
      realisedFanOut: r.status === 'ok' ? r.shards.length : null,
      realisedShards: r.shards,
      realisedStatus: r.status,
      answerStatus: a ? a.status : 'unparsable',
      answerRows: a?.rows ?? null,
      answerEmpty: a?.empty ?? null,
      answerTies: a?.status === 'ok' ? (a.ties?.dependence ?? 'none') : null,
      ...(a?.ties ? { answerTiesReason: a.ties.reason } : {}),
      ...(a?.error ? { answerError: a.error } : {}),
    };
  });
}

/**
 * Computes the figures of a build: gold answers (stored in the state folder, `<state>/gold-answers/<kg>.json`, reused while
 * the build is unchanged), implied fan-out (from the manifests), realised fan-out (provenance
 * queries on the shards as named graphs), and the per-graph and build figures. Graphs are
 * processed `concurrency` at a time (`graphAnswers`).
 * @throws InputError if `shards` is not a build directory
 */
export async function computeStats(given: StatsOptions): Promise<BuildStats> {
  const options = { ...given, timeoutMs: given.timeoutMs ?? GOLD_QUERY_TIMEOUT_MS };
  const build = readBuild(options.shards);
  const { entries, defaultPrefix, digest } = build;
  for (const kg of options.kgs ?? []) {
    if (!build.manifests.some((m) => m.graph === kg))
      throw unknownGraphError(
        kg,
        build.manifests.map((m) => m.graph),
        'this build',
        options.shards,
      );
  }
  const manifests = options.kgs?.length ? build.manifests.filter((m) => options.kgs!.includes(m.graph)) : build.manifests;
  // The first question asking each gold query (benchmark.json order), and its text.
  const firstEntry = new Map<string, BenchmarkEntry>();
  for (const e of entries) if (!firstEntry.has(e.queryId)) firstEntry.set(e.queryId, e);
  const textOf = new Map([...firstEntry].map(([id, e]) => [id, e.query]));
  const parsedOf = new Map(manifests.map((m) => [m.graph, parseGraphQueries(m, textOf, defaultPrefix)]));
  // Progress: one item per gold answer and per realised fan-out of each query.
  const log = options.progress ?? (() => {});
  const ticker = new ProgressTicker(
    log,
    'fkgqa stats',
    manifests.reduce((n, m) => n + 2 * m.queries.length, 0),
    { everyMs: options.progress ? undefined : 0, unit: STATS_PROGRESS_UNIT },
  );
  // Unparsable queries have no gold answer to run nor fan-out to realise: both steps done at once.
  for (const m of manifests) {
    for (const q of m.queries) {
      if (parsedOf.get(m.graph)!.get(q.id)) continue;
      ticker.done(q.id);
      ticker.done(q.id);
    }
  }
  const perGraph = new Map<string, { answers: GoldAnswer[]; realised: RealisedFanOut }>();
  const run: StatsRun = { options, state: stateDir(options.shards, options.state), digest, log, ticker };
  await pool(manifests, options.concurrency ?? Math.max(1, Math.floor(os.cpus().length / 2)), async (m) => {
    perGraph.set(m.graph, await graphAnswers(m, parsedOf.get(m.graph)!, run));
  }).finally(() => ticker.stop());
  const graphs = manifests.map(graphStatsOf);
  const queries = manifests.flatMap((m) => queryStatsOf(m, perGraph.get(m.graph)!, firstEntry));
  return { shards: options.shards, figures: buildFigures(manifests, queries, graphs, textOf), graphs, queries };
}

/** Computes the build figures from the per-graph and per-query figures. */
function buildFigures(manifests: GraphManifest[], queries: QueryStats[], graphs: GraphStats[], textOf: Map<string, string>): BuildFigures {
  const analysed = queries.filter((q) => q.status !== 'unparsable');
  const firstByText = new Map<string, QueryStats>();
  for (const q of analysed) if (!firstByText.has(textOf.get(q.query)!)) firstByText.set(textOf.get(q.query)!, q);
  const distinct = [...firstByText.values()];
  const nQuestions = analysed.reduce((n, q) => n + q.questions, 0);
  const allRules = manifests.flatMap((m) => m.rules);
  const covered = queries.filter((q) => q.impliedFanOut !== null);
  const realised = queries.filter((q) => q.realisedFanOut !== null);
  const realisedQuestions = realised.reduce((n, q) => n + q.questions, 0);
  const withShare = (pred: (q: QueryStats) => boolean) => ({
    overGraphQueryPairs: share(realised.filter(pred).length, realised.length),
    overQuestions: share(
      realised.filter(pred).reduce((n, q) => n + q.questions, 0),
      realisedQuestions,
    ),
  });
  const answered = queries.filter((q) => q.answerStatus !== 'unparsable');
  return {
    graphs: manifests.length,
    questions: queries.reduce((n, q) => n + q.questions, 0),
    distinctQueries: new Set(queries.map((q) => textOf.get(q.query))).size,
    graphQueryPairs: queries.length,
    shards: { total: graphs.reduce((n, g) => n + g.shards, 0), perGraph: roundDist(distribution(graphs.map((g) => g.shards))) },
    rulesPerGraph: roundDist(distribution(graphs.map((g) => g.rules))),
    ruleComposition: byKind((k) => share(allRules.filter((r) => r.kind === k).length, allRules.length)),
    shardBalanceCv: round(graphs.reduce((s, g) => s + g.shardBalanceCv, 0) / Math.max(1, graphs.length)),
    applicability: {
      overQuestions: byKind((k) =>
        share(
          analysed.filter((q) => q.applicable.includes(k)).reduce((n, q) => n + q.questions, 0),
          nQuestions,
        ),
      ),
      overDistinctQueries: byKind((k) => share(distinct.filter((q) => q.applicable.includes(k)).length, distinct.length)),
    },
    impliedFanOut: {
      overGraphQueryPairs: roundDist(distribution(covered.map((q) => q.impliedFanOut!))),
      overQuestions: roundDist(distribution(weighted(covered.map((q) => ({ value: q.impliedFanOut!, weight: q.questions }))))),
    },
    tpwss: { overQuestions: roundDist(distribution(weighted(covered.map((q) => ({ value: q.tpwss ?? 0, weight: q.questions }))))) },
    realisedFanOut: {
      computed: realised.length,
      noMatch: withShare((q) => q.realisedFanOut === 0),
      oneShard: withShare((q) => q.realisedFanOut === 1),
      overGraphQueryPairs: roundDist(distribution(realised.map((q) => q.realisedFanOut!))),
    },
    goldAnswers: {
      graphQueryPairs: answered.length,
      executed: answered.filter((q) => q.answerStatus === 'ok').length,
      failed: answered.filter((q) => q.answerStatus === 'error').length,
      timedOut: answered.filter((q) => q.answerStatus === 'timeout').length,
      empty: answered.filter((q) => q.answerStatus === 'ok' && q.answerEmpty).length,
      tiesChoice: answered.filter((q) => q.answerTies === 'choice').length,
      tiesOrder: answered.filter((q) => q.answerTies === 'order').length,
      tiesUnknown: answered.filter((q) => q.answerTies === 'unknown').length,
    },
    gapExamples: covered
      .filter((q) => q.realisedFanOut !== null && q.realisedFanOut > 0 && q.realisedFanOut < q.impliedFanOut!)
      .map((q) => ({ query: q.query, implied: q.impliedFanOut!, realised: q.realisedFanOut! }))
      .sort((a, b) => b.implied - b.realised - (a.implied - a.realised) || (a.query < b.query ? -1 : 1))
      .slice(0, 5),
  };
}
