import { SHARDING_KINDS, type QueryAnalysis, type ShardingKind } from '../analyze/analyze.js';
import type { PartitionResult } from '../partition/index.js';
import { coefficientOfVariation, distribution, percent, round, type Distribution } from './figures.js';
import { PAPER } from './paper.js';
import { counted } from '../common/strings.js';

/** A count with its share in percent. */
export interface Share {
  count: number;
  share: number;
}

/**
 * The figures `fkgqa partition` prints: applicability (section 4.1), rules and shards per graph
 * (section 4.2), and the state of the three guarantees. Deterministic for a given build.
 */
interface PartitionSummary {
  graphs: number;
  questions: number;
  /** Distinct (graph, query) pairs, and distinct query texts. */
  distinctPairs: number;
  distinctTexts: number;
  unparsable: { id: string; error: string }[];
  /** Share of queries to which each kind applies: over distinct query texts, and over questions (the paper's denominator). */
  applicability: {
    distinctQueries: number;
    analysedQuestions: number;
    overDistinctQueries: Record<ShardingKind, Share>;
    overQuestions: Record<ShardingKind, Share>;
  };
  rulesPerGraph: Distribution & { byGraph: Record<string, number> };
  ruleComposition: Record<ShardingKind, Share> & { total: number };
  shards: { total: number; perGraph: Distribution; byGraph: Record<string, number> };
  /**
   * Implied fan-out f(Q) = |∪_t E_t| (section 4.2) of the covered queries, over questions (each
   * query counted once per question asking it, as the paper's figures are), from the manifests:
   * the same figure `fkgqa stats` reports as impliedFanOut.overQuestions, without gold answers.
   */
  impliedFanOut: Distribution;
  /** Mean over graphs of the coefficient of variation of the shard sizes in triples (section 4.2, "shard balance"), as `fkgqa stats`. */
  shardBalanceCv: number;
  /** Σ_t |E_t| (TPWSS) of the covered queries, over questions. */
  tpwss: Distribution;
  /** The method options of the build and the preset they came from. */
  method: PartitionResult['method'];
  coverage: { analysed: number; covered: number; uncoverable: { id: string; reason: string }[] };
  guarantees: {
    completeness: { ok: number; graphs: number };
    /** `necessarilyEmpty`: covered queries whose answer is empty on any sharding (not federated, see FederationCheck). */
    federation: { federated: number; covered: number; necessarilyEmpty: number; exceptions: { query: string; reason: string; necessarilyEmpty?: true }[] };
    rules: { realised: number; total: number; exceptions: { rule: string; graph: string; detail: string }[] };
    /**
     * Comparison with the build that was in the output folder before. When it had other inputs,
     * `previousGraphs` are its graphs and `sameGraphs` whether they are the graphs of this build.
     * `changed-after-build`: its recorded output digest is this build's, but files of it on disk had
     * been changed since (e.g. by `fkgqa describe --endpoint-base`); `changedFiles` (with
     * `changed-after-build` and `DIFFERENT`) are the files that differ from this build's.
     */
    determinism: {
      status: 'identical' | 'changed-after-build' | 'different-inputs' | 'DIFFERENT' | 'no-previous-build';
      outputDigest: string;
      previousGraphs?: string[];
      sameGraphs?: boolean;
      changedFiles?: string[];
    };
  };
  solver: { optimal: number; solves: number; maxWallMs: number };
}

const byKind = <T>(f: (k: ShardingKind) => T) => Object.fromEntries(SHARDING_KINDS.map((k) => [k, f(k)])) as Record<ShardingKind, T>;

/** Computes the summary of a partition build. */
export function summarizePartition(r: PartitionResult): PartitionSummary {
  const analyses: QueryAnalysis[] = r.graphs.flatMap((g) => g.analyses);
  const textOf = new Map(r.queries.map((q) => [q.id, q.text]));
  const questionsOf = new Map(r.queries.map((q) => [q.id, q.questions.length]));
  const firstByText = new Map<string, QueryAnalysis>();
  for (const a of analyses) if (!firstByText.has(textOf.get(a.id)!)) firstByText.set(textOf.get(a.id)!, a);
  const distinct = [...firstByText.values()];
  const nQuestions = analyses.reduce((n, a) => n + questionsOf.get(a.id)!, 0);
  const share = (count: number, whole: number): Share => ({ count, share: round(percent(count, whole)) });

  const rulesByGraph = Object.fromEntries(r.graphs.map((g) => [g.manifest.graph, g.manifest.rules.length]));
  const allRules = r.graphs.flatMap((g) => g.manifest.rules);
  const shardsByGraph = Object.fromEntries(r.graphs.map((g) => [g.manifest.graph, g.manifest.shards.length]));
  const emptyIds = new Set(r.graphs.flatMap((g) => g.manifest.queries.filter((q) => q.necessarilyEmpty).map((q) => q.id)));
  const exceptions = r.graphs.flatMap((g) => g.manifest.guarantees.federation.exceptions).map((e) => (emptyIds.has(e.query) ? { ...e, necessarilyEmpty: true as const } : e));
  const ruleChecks = r.graphs.flatMap((g) => g.manifest.guarantees.rules.map((c) => ({ ...c, graph: g.manifest.graph })));
  const roundDist = (d: Distribution): Distribution => ({ mean: round(d.mean), median: d.median, min: d.min, max: d.max });
  const solves = r.graphs.flatMap((g) => [g.manifest.solver.cover, g.manifest.solver.layout]);
  const covered = r.graphs.flatMap((g) => g.manifest.queries.filter((q) => q.status === 'covered'));
  const overQuestions = (value: (q: (typeof covered)[number]) => number) => roundDist(distribution(covered.flatMap((q) => Array<number>(q.questions.length).fill(value(q)))));
  return {
    graphs: r.graphs.length,
    questions: r.graphs.reduce((n, g) => n + g.manifest.queries.reduce((m, q) => m + q.questions.length, 0), 0),
    distinctPairs: r.graphs.reduce((n, g) => n + g.manifest.queries.length, 0),
    distinctTexts: new Set(r.graphs.flatMap((g) => g.manifest.queries.map((q) => textOf.get(q.id)))).size,
    unparsable: r.graphs.flatMap((g) => g.unparsable.map((u) => ({ id: u.id, error: u.error }))),
    applicability: {
      distinctQueries: distinct.length,
      analysedQuestions: nQuestions,
      overDistinctQueries: byKind((k) => share(distinct.filter((a) => a.applicable[k]).length, distinct.length)),
      overQuestions: byKind((k) =>
        share(
          analyses.filter((a) => a.applicable[k]).reduce((n, a) => n + questionsOf.get(a.id)!, 0),
          nQuestions,
        ),
      ),
    },
    rulesPerGraph: { ...roundDist(distribution(Object.values(rulesByGraph))), byGraph: rulesByGraph },
    ruleComposition: { ...byKind((k) => share(allRules.filter((x) => x.kind === k).length, allRules.length)), total: allRules.length },
    shards: {
      total: Object.values(shardsByGraph).reduce((a, b) => a + b, 0),
      perGraph: roundDist(distribution(Object.values(shardsByGraph))),
      byGraph: shardsByGraph,
    },
    impliedFanOut: overQuestions((q) => q.fanOut ?? 0),
    tpwss: overQuestions((q) => q.tpwss ?? 0),
    shardBalanceCv: round(r.graphs.reduce((n, g) => n + round(coefficientOfVariation(g.manifest.shards.map((x) => x.triples)), 4), 0) / Math.max(1, r.graphs.length)),
    method: r.method,
    coverage: {
      analysed: analyses.length,
      covered: r.graphs.reduce((n, g) => n + g.manifest.queries.filter((q) => q.status === 'covered').length, 0),
      uncoverable: r.graphs.flatMap((g) => g.manifest.queries.filter((q) => q.status === 'uncoverable').map((q) => ({ id: q.id, reason: q.reason ?? '' }))),
    },
    guarantees: {
      completeness: { ok: r.graphs.filter((g) => g.manifest.guarantees.completeness.ok).length, graphs: r.graphs.length },
      federation: {
        federated: r.graphs.reduce((n, g) => n + g.manifest.guarantees.federation.federated, 0),
        covered: r.graphs.reduce((n, g) => n + g.manifest.guarantees.federation.covered, 0),
        necessarilyEmpty: r.graphs.reduce((n, g) => n + (g.manifest.guarantees.federation.necessarilyEmpty ?? 0), 0),
        exceptions,
      },
      rules: {
        realised: ruleChecks.filter((c) => c.ok).length,
        total: ruleChecks.length,
        exceptions: ruleChecks.filter((c) => !c.ok).map((c) => ({ rule: c.rule, graph: c.graph, detail: c.detail })),
      },
      determinism: {
        status: !r.previous ? 'no-previous-build' : !r.previous.sameInputs ? 'different-inputs' : r.previous.identical ? 'identical' : r.previous.asBuilt ? 'changed-after-build' : 'DIFFERENT',
        outputDigest: r.outputDigest,
        ...(r.previous && r.previous.sameInputs && !r.previous.identical ? { changedFiles: r.previous.changedFiles } : {}),
        ...(r.previous && !r.previous.sameInputs ? { previousGraphs: r.previous.graphs, sameGraphs: r.previous.graphs.join(' ') === r.graphs.map((g) => g.manifest.graph).join(' ') } : {}),
      },
    },
    solver: {
      optimal: solves.filter((s) => s.optimal).length,
      solves: solves.length,
      maxWallMs: Math.round(Math.max(0, ...r.graphs.map((g) => g.timings.plan))),
    },
  };
}

const pct = (x: number) => `${x.toFixed(2)}%`;
const num = (x: number) => (Number.isInteger(x) ? String(x) : x.toFixed(2));
const pad = (s: string, n: number) => s.padEnd(n);

/** The graphs of the demo dataset (datasets/demo), to name a previous demo build as such. */
const DEMO_GRAPHS = 'library observatory';

/** The determinism line when the previous build in the folder had other inputs: what it was, honestly. */
function previousWas(d: PartitionSummary['guarantees']['determinism']): string {
  const graphs = d.previousGraphs ?? [];
  if (graphs.length === 0) return 'the previous build in this folder had other inputs, options or code: nothing to compare';
  if (d.sameGraphs) return 'the previous build in this folder was of the same graphs with other data, questions, options or code version: nothing to compare (run again to check)';
  const what = graphs.join(' ') === DEMO_GRAPHS ? 'the demo' : graphs.length <= 4 ? `graphs ${graphs.join(', ')}` : `${graphs.length} other graphs`;
  return `the previous build in this folder was of other inputs (${what}); nothing to compare (run again to check)`;
}

/** Changed files as `3 files (a, b, c)`, naming at most three. */
function changedFilesInWords(files: string[]): string {
  const named = files.slice(0, 3).join(', ') + (files.length > 3 ? ', …' : '');
  return `${counted(files.length, 'file')}${files.length > 0 ? ` (${named})` : ''}`;
}

/** Counts of query ids (`<kg>/q<N>`) per graph, as `kg N, kg N` in graph order. */
function perGraph(ids: string[]): string {
  const n = new Map<string, number>();
  for (const id of ids) n.set(id.split('/')[0], (n.get(id.split('/')[0]) ?? 0) + 1);
  return [...n]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([g, c]) => `${g} ${c}`)
    .join(', ');
}

/** How `formatPartitionSummary` writes the lists of queries. */
interface SummaryTextOptions {
  /** Every not coverable and necessarily empty query on its own line with its reason (`--verbose`); default: counts per graph. */
  verbose?: boolean;
  /** The build folder, named where the full lists are (each graph's manifest.json). */
  out?: string;
}

/**
 * The summary as the text `fkgqa partition` prints on stdout. Queries that are not coverable, and
 * covered queries whose answer is necessarily empty, are counted per graph; their reasons are in
 * each graph's manifest.json (`queries[].reason`), and on screen with `verbose`. Failures of a
 * guarantee (a query not federated for another reason, a rule not realised) and unparsable
 * queries are always listed in full.
 */
export function formatPartitionSummary(s: PartitionSummary, o: SummaryTextOptions = {}): string {
  const L: string[] = [];
  const a = s.applicability;
  L.push(
    `fkgqa partition: ${counted(s.graphs, 'graph')}, ${counted(s.questions, 'question')}, ${counted(s.distinctTexts, 'distinct query', 'distinct queries')} ` +
      `(${counted(s.distinctPairs, 'distinct graph/query pair')}), ${s.unparsable.length} unparsable`,
  );
  if (s.method.preset) {
    const o = s.method.options;
    L.push(
      `preset ${s.method.preset}: --buckets ${o.buckets} --layout ${o.layout}${o.expressionPatterns ? '' : ' --no-expression-patterns'}` +
        `${o.classInference ? '' : ' --no-class-inference'} --horizontal-candidates ${o.horizontalCandidates} --predicate-candidates ${o.predicateCandidates} --horizontal-placement ${o.horizontalPlacement}`,
    );
  }
  L.push('');
  L.push(`${pad('Applicability (section 4.1)', 32)}${pad(`distinct queries (n=${a.distinctQueries})`, 25)}${pad(`questions (n=${a.analysedQuestions})`, 21)}paper (questions)`);
  for (const k of ['class', 'predicate', 'horizontal'] as const) {
    L.push(
      `  ${pad(k, 30)}${pad(`${pct(a.overDistinctQueries[k].share)} (${a.overDistinctQueries[k].count})`, 25)}` +
        `${pad(`${pct(a.overQuestions[k].share)} (${a.overQuestions[k].count})`, 21)}${pct(PAPER.applicability[k])}`,
    );
  }
  L.push('');
  const rp = s.rulesPerGraph;
  const W = 40;
  L.push(`${pad('', W + 2)}${pad('this build', 27)}paper`);
  L.push(`  ${pad('rules per graph (mean/median/min/max)', W)}${pad(`${num(rp.mean)} / ${num(rp.median)} / ${rp.min} / ${rp.max}`, 27)}3.7 / 4 / 2 / 8`);
  const rc = s.ruleComposition;
  L.push(`  ${pad('rules: vertical/semantic/horizontal', W)}${pad(`${pct(rc.predicate.share)} / ${pct(rc.class.share)} / ${pct(rc.horizontal.share)}`, 27)}` + `18.30% / 30.42% / 51.28%`);
  L.push(`  ${pad('shards in total', W)}${pad(`${s.shards.total} over ${counted(s.graphs, 'graph')}`, 27)}118 over 19 graphs`);
  const sp = s.shards.perGraph;
  L.push(`  ${pad('shards per graph (mean/median/min/max)', W)}${pad(`${num(sp.mean)} / ${num(sp.median)} / ${sp.min} / ${sp.max}`, 27)}6.21 / 6 / 3 / 14`);
  const f = s.impliedFanOut;
  const pf = PAPER.impliedFanOut;
  L.push(`  ${pad('shard balance (mean CV of shard sizes)', W)}${pad(num(s.shardBalanceCv), 27)}${PAPER.shardBalanceCv}`);
  L.push(`  ${pad('implied fan-out (mean/median/min/max)', W)}${pad(`${num(f.mean)} / ${num(f.median)} / ${f.min} / ${f.max}`, 27)}${pf.mean} / ${pf.median} / ${pf.min} / ${pf.max}`);
  L.push(`  paper: the figures the FKGQA paper reports for its own build (section 4.2): ${counted(PAPER.shards.total, 'shard')} over the 19 Spider4SPARQL`);
  L.push(`  graphs it kept. This build has ${s.graphs} graph${s.graphs === 1 ? '' : 's'}: compare the per-graph figures, not the totals.`);
  L.push('');
  L.push(`Coverage: ${s.coverage.covered} of ${s.coverage.analysed} analysed queries covered by a chosen rule`);
  const where = `${o.out ? `${o.out}/` : ''}<kg>/manifest.json`;
  if (o.verbose) for (const u of s.coverage.uncoverable) L.push(`  not coverable: ${u.id}: ${u.reason}`);
  else if (s.coverage.uncoverable.length > 0) {
    L.push(`  not coverable: ${s.coverage.uncoverable.length}, per graph: ${perGraph(s.coverage.uncoverable.map((u) => u.id))}`);
  }
  for (const u of s.unparsable) L.push(`  unparsable: ${u.id}: ${u.error}`);
  L.push(`Solver: ${s.solver.optimal}/${s.solver.solves} solves proven optimal`);
  L.push('');
  const g = s.guarantees;
  L.push('Guarantees');
  L.push(`  1. nothing lost, nothing doubled: ${g.completeness.ok}/${counted(g.completeness.graphs, 'graph')} (count and checksum of shards = input)`);
  L.push(
    `  2. every covered query federated (f(Q) >= 2): ${g.federation.federated}/${g.federation.covered}` +
      (g.federation.necessarilyEmpty ? ` (${g.federation.necessarilyEmpty} with answer necessarily empty: a required triple pattern matches nothing)` : ''),
  );
  const empty = g.federation.exceptions.filter((e) => e.necessarilyEmpty);
  for (const e of g.federation.exceptions) if (o.verbose || !e.necessarilyEmpty) L.push(`     exception ${e.query}: ${e.reason}`);
  if (!o.verbose && empty.length > 0) L.push(`     necessarily empty, per graph: ${perGraph(empty.map((e) => e.query))}`);
  if (!o.verbose && (empty.length > 0 || s.coverage.uncoverable.length > 0)) {
    L.push(`     (each query's reason: ${where}, queries[].reason of those with status "uncoverable" or necessarilyEmpty true; --verbose prints them here)`);
  }
  L.push(`     chosen rules realised in the data: ${g.rules.realised}/${g.rules.total}`);
  for (const e of g.rules.exceptions) L.push(`     not realised ${e.graph}: ${e.rule}: ${e.detail}`);
  const det = {
    identical: 'byte-identical to the previous build of the same input and options',
    'changed-after-build':
      `the previous build of the same inputs and options was built with these bytes (the output digest in its build.json), ` +
      `but ${changedFilesInWords(g.determinism.changedFiles ?? [])} of it had been changed since (as fkgqa describe --endpoint-base does); this build replaces them`,
    'different-inputs': previousWas(g.determinism),
    DIFFERENT: `DIFFERS from the previous build of the same inputs, options and code in ${changedFilesInWords(g.determinism.changedFiles ?? [])}`,
    'no-previous-build': 'no previous build in the output directory to compare with (run again to check)',
  }[g.determinism.status];
  L.push(`  3. deterministic: ${det}; output digest ${g.determinism.outputDigest.slice(0, 16)}`);
  return L.join('\n') + '\n';
}
