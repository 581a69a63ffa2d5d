/**
 * Building one graph, stage by stage (section 4 of the FKGQA paper): load (the ontology) → analyze
 * (the gold queries: P(q), C(q), S(q)) → profile (one streaming pass over the data) → plan (candidate
 * rules, the ASP cover, the shard layout) → materialize (write the shards, name them) → verify (the
 * three guarantees) → manifest → describe (VoID). Each stage is a function with typed input and
 * output; `buildGraph` runs them in order, times them and collects the warnings (in this order:
 * they are written into the manifest).
 */
import fs from 'node:fs';
import path from 'node:path';
import { analyzeQueries, type QueryAnalysis, type ShardingKind, type UnparsableQuery } from '../analyze/analyze.js';
import { PatternMatcher } from '../analyze/match.js';
import { patternKey } from '../analyze/patterns.js';
import { getHasher, sha256OfFile } from '../common/hash.js';
import { writeJson } from '../common/output.js';
import { TOOL } from '../common/version.js';
import { chooseVoidEngine, describeGraph, endpointUrl, voidFileTexts, type ShardDescription } from '../describe/index.js';
import { EMPTY_ONTOLOGY, readOntology, type Ontology } from '../load/ontology.js';
import type { GoldQuery } from '../load/questions.js';
import type { GraphSource } from '../load/source.js';
import type { TripleFile } from '../load/triples.js';
import { ShardAssigner } from '../materialize/assign.js';
import { profileData, type DataProfile } from '../materialize/profile.js';
import { checkFederation, checkRules, verifyShards, type CompletenessCheck, type FederationCheck, type RuleCheck, type ShardFile } from '../materialize/verify.js';
import { materializeGraph, type MaterializeResult } from '../materialize/write.js';
import { selectRules } from '../plan/cover.js';
import { planLayout, type ShardLayout } from '../plan/layout.js';
import { candidateRules, type Candidates, type ShardingRule } from '../plan/rules.js';
import { SOLVER, type SolverStatistics } from '../plan/solver.js';
import { byShardNumber, type GraphBuild, type GraphManifest, type ManifestQuery, type ManifestShard } from './manifest.js';
import { methodOptionsOf, type PartitionOptions } from './options.js';
import { DEFAULT_METHOD_OPTIONS, type MethodOptions } from './presets.js';
import { counted } from '../common/strings.js';

/** The partition options plus what every graph shares: the source folder and the questions file. */
export interface GraphContext extends PartitionOptions {
  sourceDir: string;
  questionsFile: string;
  questionsSha: string;
}

/** Milliseconds since `t0` (performance.now() clock), rounded. */
export const ms = (t0: number) => Math.round(performance.now() - t0);

/** Stage load: the graph's ontology, or none (with a warning). */
function loadOntology(g: GraphSource, ctx: GraphContext, warnings: string[]): Ontology {
  if (g.ontologyFile && g.ontologyFormat && fs.statSync(g.ontologyFile).size === 0) {
    warnings.push(`ontology ${path.relative(ctx.sourceDir, g.ontologyFile)} is empty (0 bytes): classes come from explicit rdf:type patterns only`);
    return EMPTY_ONTOLOGY;
  }
  if (g.ontologyFile && g.ontologyFormat) return readOntology(g.ontologyFile, g.ontologyFormat);
  warnings.push(`no ontology in ontologies/${g.name}.(owl|rdf|xml|ttl): classes come from explicit rdf:type patterns only`);
  return EMPTY_ONTOLOGY;
}

/** Stage analyze: the gold queries' patterns and applicable shardings; unparsable ones are warned about and left out. */
function analyzeGraphQueries(queries: GoldQuery[], ontology: Ontology, ctx: GraphContext, warnings: string[]): { analyses: QueryAnalysis[]; unparsable: UnparsableQuery[] } {
  const { analyses, unparsable } = analyzeQueries(queries, ontology, ctx.defaultPrefix, {
    expressionPatterns: ctx.expressionPatterns,
    inferClasses: ctx.classInference,
  });
  for (const u of unparsable) {
    const asked = queries.find((q) => q.id === u.id)!.questions;
    warnings.push(`query ${u.id} (question${asked.length > 1 ? 's' : ''} ${asked.join(', ')}) does not parse (${u.error}): ${u.text}`);
  }
  return { analyses, unparsable };
}

/** Stage profile: one streaming pass over the data (subjects, classes, predicates, buckets). */
async function profileGraph(src: TripleFile, size: number, ctx: GraphContext, log: (line: string) => void, warnings: string[]): Promise<DataProfile> {
  const profile = await profileData(src, { buckets: ctx.buckets, seed: ctx.seed }, byteProgress(`${src.graph}: reading`, size, log));
  if (profile.triplesRead === 0) warnings.push('the data file has no triples: no query of this graph can be federated');
  if (profile.untypedSubjects) warnings.push(`${profile.untypedSubjects} subjects have no rdf:type: their triples go to the base shard unless a predicate shard takes them`);
  return profile;
}

/** What the plan stage decides. */
interface GraphPlan {
  method: MethodOptions;
  candidates: Candidates;
  cover: { rules: ShardingRule[]; statistics: SolverStatistics };
  layout: ShardLayout;
}

/** Stage plan: candidate rules (section 4.1), the smallest covering rule set (ASP), the shard layout. */
async function planGraph(analyses: QueryAnalysis[], profile: DataProfile, ctx: GraphContext, warnings: string[]): Promise<GraphPlan> {
  const method = methodOptionsOf(ctx);
  const candidates = candidateRules(analyses, profile, { horizontal: method.horizontalCandidates, predicate: method.predicateCandidates });
  const cover = await selectRules(candidates.rules, candidates.coverable, ctx.solverTimeoutMs);
  if (!cover.statistics.optimal) warnings.push(`rule selection hit the ${ctx.solverTimeoutMs} ms time limit: the rule set is the best found, not proven minimal`);
  const layout = await planLayout(
    cover.rules,
    ctx.buckets,
    { predicateTriples: profile.predicateTriples, classTriples: profile.classTriples },
    ctx.solverTimeoutMs,
    ctx.layout,
    method.horizontalPlacement,
  );
  if (!layout.statistics.optimal) warnings.push(`shard layout hit the ${ctx.solverTimeoutMs} ms time limit: not proven to use the fewest shards`);
  return { method, candidates, cover, layout };
}

/** A non-empty slot of the layout and the file it was written to. */
type WrittenSlot = MaterializeResult['slots'][number] & { index: number };

/** What the materialize stage wrote. */
interface Materialized {
  matcher: PatternMatcher;
  result: MaterializeResult;
  /** Non-empty slots in shard-number order (shard1 first). */
  order: WrittenSlot[];
  /** `shard<N>` of each non-empty slot index. */
  nameOfSlot: Map<number, string>;
  /** The shard name of a slot index (a description for an empty slot). */
  slotName: (i: number) => string;
}

/**
 * Stage materialize: every triple to its slot (second streaming pass), then public names: the
 * non-empty slots in an order given by a seeded hash, so that shard numbers reveal no rule.
 */
async function materializeShards(
  g: GraphSource,
  src: TripleFile,
  size: number,
  analyses: QueryAnalysis[],
  plan: GraphPlan,
  profile: DataProfile,
  ctx: GraphContext,
  dir: string,
  log: (line: string) => void,
): Promise<Materialized> {
  const matcher = new PatternMatcher();
  for (const a of analyses) for (const tp of a.patterns) matcher.add(tp);
  const work = path.join(dir, '.slots');
  fs.mkdirSync(work, { recursive: true });
  const assigner = new ShardAssigner(plan.layout, profile, await getHasher());
  const result = await materializeGraph(src, assigner, matcher, work, byteProgress(`${g.name}: writing shards`, size, log));
  const hasher = await getHasher();
  const nonEmpty = result.slots.map((s, i) => ({ ...s, index: i })).filter((s) => s.lines > 0);
  const order = nonEmpty
    .map((s) => ({ s, key: hasher.h64(`${g.name}/${s.slot}`, BigInt(ctx.seed)) }))
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : a.s.slot < b.s.slot ? -1 : 1))
    .map((x) => x.s);
  const nameOfSlot = new Map<number, string>();
  order.forEach((s, n) => nameOfSlot.set(s.index, `shard${n + 1}`));
  const slotName = (i: number) => nameOfSlot.get(i) ?? `empty slot ${result.slots[i].slot}`;
  for (const s of order) fs.renameSync(s.file, path.join(dir, `${nameOfSlot.get(s.index)}.nt`));
  fs.rmSync(work, { recursive: true, force: true });
  return { matcher, result, order, nameOfSlot, slotName };
}

/** What the verify stage found. */
interface Verified {
  completeness: CompletenessCheck;
  /** The shard file facts (triples, bytes, sha256, checksum) by slot index. */
  fileOf: Map<number, ShardFile>;
  shardFiles: ShardFile[];
  duplicates: number;
  covered: Set<string>;
  federation: FederationCheck[];
  ruleChecks: RuleCheck[];
  impliedShards: Map<string, string[]>;
}

/**
 * Stage verify: guarantee 1 (the shards hold exactly the input's triples), guarantee 2 (every
 * covered query is federated), guarantee 3 (every chosen rule is realised), and the implied shards
 * of every query.
 * @throws Error when guarantee 1 fails (a bug, never bad input)
 */
async function verifyGraph(g: GraphSource, analyses: QueryAnalysis[], plan: GraphPlan, m: Materialized, dir: string, warnings: string[]): Promise<Verified> {
  const verified = await verifyShards(
    m.order.map((s) => path.join(dir, `${m.nameOfSlot.get(s.index)}.nt`)),
    m.result.input,
  );
  const completeness = verified.check;
  if (!completeness.ok) {
    throw new Error(
      `${g.name}: guarantee 1 failed: input ${counted(completeness.inputLines, 'triple')} (${completeness.inputChecksum}), shards ${completeness.shardLines} (${completeness.shardChecksum})`,
    );
  }
  const fileOf = new Map(m.order.map((s, i) => [s.index, verified.shards[i]]));
  const duplicates = verified.shards.reduce((n, f) => n + f.duplicates, 0);
  if (duplicates) warnings.push(`${duplicates} repeated triples in the input were dropped (a graph is a set)`);
  const covered = new Set(plan.candidates.coverable);
  const federation = checkFederation(analyses, covered, m.matcher, m.result, m.slotName);
  const ruleChecks = checkRules(plan.cover.rules, m.result, m.slotName);
  const impliedShards = new Map(
    analyses.map((a) => {
      const union = new Set<number>();
      for (const tp of a.patterns) for (const s of m.result.patternSlots[m.matcher.indexOf.get(patternKey(tp))!]) union.add(s);
      return [a.id, [...union].map(m.slotName).sort(byShardNumber)] as const;
    }),
  );
  return { completeness, fileOf, shardFiles: verified.shards, duplicates, covered, federation, ruleChecks, impliedShards };
}

/**
 * The manifest entry of each gold query: unparsable (with the parser's message), uncoverable
 * (with the reason), or covered with its rules, implied fan-out, TPWSS and implied shards.
 * @param ruleId rule key → `r<N>`
 */
function manifestQueries(queries: GoldQuery[], analyses: QueryAnalysis[], unparsable: UnparsableQuery[], plan: GraphPlan, m: Materialized, v: Verified, ruleId: Map<string, string>): ManifestQuery[] {
  const { cover, candidates } = plan;
  const { covered } = v;
  const fed = new Map(v.federation.map((f) => [f.query, f]));
  const analysisOf = new Map(analyses.map((a) => [a.id, a]));
  const uncoverable = new Map(candidates.uncoverable.map((u) => [u.id, u.reason]));
  const unparsableOf = new Map(unparsable.map((u) => [u.id, u.error]));
  return queries.map((q) => {
    const a = analysisOf.get(q.id);
    if (!a) return { id: q.id, questions: q.questions, status: 'unparsable', reason: unparsableOf.get(q.id) };
    const base: ManifestQuery = {
      id: q.id,
      questions: q.questions,
      status: covered.has(q.id) ? 'covered' : 'uncoverable',
      predicates: a.predicates.length,
      classes: a.classes.length,
      subjectVariables: a.subjectVariables.length,
      applicable: (Object.keys(a.applicable) as ShardingKind[]).filter((k) => a.applicable[k]),
    };
    if (!covered.has(q.id)) return { ...base, reason: uncoverable.get(q.id) };
    const f = fed.get(q.id)!;
    return {
      ...base,
      ...(f.ok ? {} : { reason: f.reason }),
      ...(f.necessarilyEmpty ? { necessarilyEmpty: true as const } : {}),
      rules: cover.rules.filter((r) => r.covers.includes(q.id)).map((r) => ruleId.get(r.key)!),
      fanOut: f.fanOut,
      tpwss: f.tpwss,
      shards: f.slots.map(m.slotName).sort(byShardNumber),
    };
  });
}

/**
 * The manifest entry of each shard, in shard-number order: its name, endpoint, file facts and role
 * (its layout slot, the rules it realises, the predicates, classes or bucket it holds, and the
 * horizontal classes spread over it).
 * @param ruleId rule key → `r<N>`
 */
function manifestShards(g: GraphSource, plan: GraphPlan, m: Materialized, v: Verified, ruleId: Map<string, string>): ManifestShard[] {
  const { cover, layout } = plan;
  const slotRules = (slot: string): ShardingRule[] => {
    const [kind, a] = slot.split('-');
    return cover.rules.filter((r) => {
      if (layout.spread && r.kind === 'horizontal') return layout.spread.get(r.elements[0])!.includes(slot);
      if (kind === 'predicate') return r.kind === 'predicate' && r.elements.some((p) => layout.predicateShard.get(p) === Number(a));
      if (kind === 'class') return r.kind === 'class' && r.elements.some((c) => layout.classShard.get(c) === Number(a));
      if (kind === 'bucket') return r.kind === 'horizontal' && layout.horizontalGroup.get(r.elements[0]) === Number(a);
      return false;
    });
  };
  const members = (mp: Map<string, number>, k: number) =>
    [...mp]
      .filter(([, x]) => x === k)
      .map(([x]) => x)
      .sort();
  const shards: ManifestShard[] = m.order.map((s) => {
    const name = m.nameOfSlot.get(s.index)!;
    const [kind, a, b] = s.slot.split('-');
    const role: ManifestShard['role'] = { slot: s.slot, rules: slotRules(s.slot).map((r) => ruleId.get(r.key)!) };
    if (kind === 'predicate') role.predicates = members(layout.predicateShard, Number(a));
    if (kind === 'class') role.classes = members(layout.classShard, Number(a));
    if (kind === 'bucket') {
      role.classes = members(layout.horizontalGroup, Number(a));
      role.bucket = Number(b);
    }
    if (layout.spread)
      role.spread = [...layout.spread]
        .filter(([, slots]) => slots.includes(s.slot))
        .map(([c]) => c)
        .sort();
    const f = v.fileOf.get(s.index)!;
    return {
      name,
      endpoint: `${g.name}-${name}`,
      file: `${name}.nt`,
      triples: f.triples,
      bytes: f.bytes,
      sha256: f.sha256,
      checksum: f.checksum,
      role,
    };
  });
  return shards.sort((x, y) => Number(x.name.slice(5)) - Number(y.name.slice(5)));
}

/** The build options a graph was built with: the partition options and the method options that differ from the defaults. */
function manifestOptions(plan: GraphPlan, ctx: GraphContext): GraphManifest['options'] {
  const { layout, method } = plan;
  return {
    buckets: ctx.buckets,
    seed: ctx.seed,
    hash: layout.spread ? 'xxh64(UTF-8 subject IRI, seed) mod the number of shards its horizontal class is spread over' : 'xxh64(UTF-8 subject IRI, seed) mod buckets',
    defaultPrefix: ctx.defaultPrefix,
    solverTimeoutMs: ctx.solverTimeoutMs,
    layout: ctx.layout,
    expressionPatterns: ctx.expressionPatterns,
    classInference: ctx.classInference,
    ...(method.horizontalCandidates !== DEFAULT_METHOD_OPTIONS.horizontalCandidates ? { horizontalCandidates: method.horizontalCandidates } : {}),
    ...(method.horizontalPlacement !== DEFAULT_METHOD_OPTIONS.horizontalPlacement ? { horizontalPlacement: method.horizontalPlacement } : {}),
    ...(method.predicateCandidates !== DEFAULT_METHOD_OPTIONS.predicateCandidates ? { predicateCandidates: method.predicateCandidates } : {}),
    ...(ctx.preset !== undefined ? { preset: ctx.preset } : {}),
  };
}

/** The inputs of a graph's build: the data file (checksums and counts), the ontology file, the questions file; paths relative to the source folder. */
function manifestInputs(g: GraphSource, profile: DataProfile, m: Materialized, v: Verified, ctx: GraphContext): GraphManifest['inputs'] {
  const rel = (f: string) => path.relative(ctx.sourceDir, f).split(path.sep).join('/');
  return {
    data: {
      file: rel(g.dataFile),
      sha256: profile.sha256,
      triplesRead: m.result.input.lines,
      triples: v.shardFiles.reduce((n, f) => n + f.triples, 0),
      duplicates: v.duplicates,
      checksum: m.result.input.checksum,
      subjects: profile.subjects,
      untypedSubjects: profile.untypedSubjects,
    },
    ontology: g.ontologyFile ? { file: rel(g.ontologyFile), sha256: sha256OfFile(g.ontologyFile) } : null,
    questions: { file: path.basename(ctx.questionsFile), sha256: ctx.questionsSha },
  };
}

/**
 * Stage manifest: the graph's `manifest.json` from what the stages decided and found: options
 * (`manifestOptions`), inputs (`manifestInputs`), queries (`manifestQueries`), candidates, rules,
 * solver statistics, shards (`manifestShards`), the three guarantees and the warnings (a rule not
 * realised is added to them).
 */
function graphManifest(
  g: GraphSource,
  queries: GoldQuery[],
  analyses: QueryAnalysis[],
  unparsable: UnparsableQuery[],
  profile: DataProfile,
  plan: GraphPlan,
  m: Materialized,
  v: Verified,
  ctx: GraphContext,
  warnings: string[],
): GraphManifest {
  const { cover, layout, candidates } = plan;
  const { covered, federation, ruleChecks } = v;
  const ruleId = new Map(cover.rules.map((r, i) => [r.key, `r${i + 1}`]));
  const manifestQueryList = manifestQueries(queries, analyses, unparsable, plan, m, v, ruleId);
  const shards = manifestShards(g, plan, m, v, ruleId);
  const exceptions = federation.filter((f) => !f.ok).map((f) => ({ query: f.query, reason: f.reason! }));
  for (const r of ruleChecks.filter((r) => !r.ok)) warnings.push(`rule ${r.rule} is not realised: ${r.detail}`);
  return {
    tool: { ...TOOL, solver: SOLVER },
    graph: g.name,
    options: manifestOptions(plan, ctx),
    inputs: manifestInputs(g, profile, m, v, ctx),
    queries: manifestQueryList,
    candidates: {
      total: candidates.rules.length + candidates.dropped.length,
      realisable: candidates.rules.length,
      dropped: candidates.dropped,
    },
    rules: cover.rules.map((r) => ({ id: ruleId.get(r.key)!, kind: r.kind, elements: r.elements, covers: r.covers.filter((q) => covered.has(q)) })),
    solver: { cover: cover.statistics, layout: layout.statistics },
    shards,
    guarantees: {
      completeness: v.completeness,
      federation: { covered: federation.length, federated: federation.filter((f) => f.ok).length, necessarilyEmpty: federation.filter((f) => f.necessarilyEmpty).length, exceptions },
      rules: ruleChecks,
    },
    warnings,
  };
}

/** Stage describe: the VoID of every shard (standard and extended), written beside the shards; none with `void: false`. */
async function describeShards(g: GraphSource, manifest: GraphManifest, ctx: GraphContext, dir: string): Promise<ShardDescription[]> {
  if (ctx.void === false) return [];
  const base = ctx.endpointBase;
  const descriptions = await describeGraph({
    graph: g.name,
    dir,
    shards: manifest.shards.map((s) => s.name),
    engine: chooseVoidEngine(ctx.voidEngine ?? 'auto', manifest.inputs.data.triples),
    prefix: ctx.defaultPrefix,
    endpointOf: base ? (e) => endpointUrl(base, e) : undefined,
  });
  for (const [rel, text] of voidFileTexts(descriptions, ctx.defaultPrefix)) fs.writeFileSync(path.join(path.dirname(dir), rel), text);
  return descriptions;
}

/**
 * Builds one graph into `dir` (the staged `<out>/<kg>/`): runs the stages in order and writes the
 * shards, `manifest.json` and (unless `void: false`) the VoID files.
 * @throws InputError for bad input (an ontology that does not read, a data file that does not parse)
 */
export async function buildGraph(g: GraphSource, queries: GoldQuery[], ctx: GraphContext, dir: string, log: (line: string) => void): Promise<GraphBuild> {
  const tStart = performance.now();
  const warnings: string[] = [];
  let t = performance.now();
  const ontology = loadOntology(g, ctx, warnings);
  const load = ms(t);

  t = performance.now();
  const { analyses, unparsable } = analyzeGraphQueries(queries, ontology, ctx, warnings);
  const analyze = ms(t);

  t = performance.now();
  const src: TripleFile = { file: g.dataFile, format: g.dataFormat, graph: g.name };
  const size = fs.statSync(g.dataFile).size;
  const profile = await profileGraph(src, size, ctx, log, warnings);
  const profileMs = ms(t);

  t = performance.now();
  const plan = await planGraph(analyses, profile, ctx, warnings);
  const planMs = ms(t);

  t = performance.now();
  const m = await materializeShards(g, src, size, analyses, plan, profile, ctx, dir, log);
  const materialize = ms(t);

  t = performance.now();
  const v = await verifyGraph(g, analyses, plan, m, dir, warnings);
  const verify = ms(t);

  const manifest = graphManifest(g, queries, analyses, unparsable, profile, plan, m, v, ctx, warnings);
  writeJson(path.join(dir, 'manifest.json'), manifest);

  t = performance.now();
  const descriptions = await describeShards(g, manifest, ctx, dir);
  if (ctx.void !== false) {
    const linksets = descriptions.reduce((n, d) => n + d.linksets.length, 0);
    log(`${g.name}: VoID of ${counted(descriptions.length, 'shard')}, ${counted(linksets, 'linkset')} (${ms(t)} ms)`);
  }
  const describe = ms(t);
  return {
    manifest,
    analyses,
    unparsable,
    chosen: plan.cover.rules,
    layout: plan.layout,
    federation: v.federation,
    descriptions,
    impliedShards: v.impliedShards,
    timings: { load, analyze, profile: profileMs, plan: planMs, materialize, verify, describe, total: ms(tStart) },
  };
}

/** Reports reading progress of a large file every 2 s (files under 32 MB report nothing). */
function byteProgress(label: string, size: number, log: (line: string) => void): ((bytes: number) => void) | undefined {
  if (size < 32 << 20) return undefined;
  let last = performance.now();
  return (bytes) => {
    const now = performance.now();
    if (now - last < 2000) return;
    last = now;
    log(`${label} ${((100 * bytes) / size).toFixed(0)}% of ${(size / 1048576).toFixed(0)} MB`);
  };
}
