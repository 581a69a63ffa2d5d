import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { analyzeQueries, type QueryAnalysis, type ShardingKind, type UnparsableQuery } from '../analyze/analyze.js';
import { PatternMatcher } from '../analyze/match.js';
import { patternKey } from '../analyze/patterns.js';
import { parseQuery, withPrefixDeclared } from '../sparql/parse.js';
import { InputError } from '../common/errors.js';
import { iriError } from '../common/iri.js';
import { getHasher, sha256OfFile } from '../common/hash.js';
import { checkOutputDir, StagedOutput, writeJson } from '../common/output.js';
import { SPIDER_DEFAULT_PREFIX } from '../common/vocab.js';
import { catalogueFileTexts, chooseVoidEngine, describeGraph, endpointUrl, voidFileTexts, type ShardDescription, type VoidEngine } from '../describe/index.js';
import { EMPTY_ONTOLOGY, readOntology } from '../load/ontology.js';
import { distinctQueries, readQuestions, type GoldQuery, type Question } from '../load/questions.js';
import { openSource, type GraphSource } from '../load/source.js';
import { ShardAssigner } from '../materialize/assign.js';
import { profileData } from '../materialize/profile.js';
import { checkFederation, checkRules, verifyShards, type CompletenessCheck, type FederationCheck, type RuleCheck } from '../materialize/verify.js';
import { materializeGraph } from '../materialize/write.js';
import { selectRules } from '../plan/cover.js';
import { planLayout, type HorizontalPlacement, type LayoutMode, type ShardLayout } from '../plan/layout.js';
import { candidateRules, type DroppedRule, type HorizontalCandidates, type PredicateCandidates, type ShardingRule } from '../plan/rules.js';
import { DEFAULT_METHOD_OPTIONS, PRESETS, type MethodOptions, type ResolvedMethodOptions } from './presets.js';
import { SOLVER, type SolverStatistics } from '../plan/solver.js';
import { codeDigest, TOOL } from '../common/version.js';

/** Options of `fkgqa partition` (defaults in DEFAULT_PARTITION_OPTIONS). */
export interface PartitionOptions {
  /** Benchmark source directory (Spider4SPARQL layout). */
  source: string;
  /** Output directory; replaced only when the whole build succeeds. */
  out: string;
  /** Questions file, if not the source's `dev.json` / `questions.json` / `dev.csv` / `questions.csv`. */
  questions?: string;
  /** Build only these graphs (default: every graph the questions name). */
  kgs?: string[];
  /** Buckets per horizontal group, 2–1024. Default 2. */
  buckets: number;
  /** Seed of the subject hash (xxh64) and of the shard numbering, a non-negative integer. Default 0. */
  seed: number;
  /** IRI of the undeclared `:` prefix of the gold queries. Default `http://valuenet/ontop/`. */
  defaultPrefix: string;
  /** Time limit of each ASP solve in ms. Default 60 000. */
  solverTimeoutMs: number;
  /** `compact` (fewest shards, default) or `separate` (one shard per predicate / class / horizontal class). */
  layout: LayoutMode;
  /** T(q) includes patterns inside FILTER/BIND/HAVING expressions. Default true. */
  expressionPatterns: boolean;
  /** C(q) uses the ontology's rdfs:domain / rdfs:range. Default true. */
  classInference: boolean;
  /** Which queries get horizontal candidates (see HorizontalCandidates). Default `unless-class`. */
  horizontalCandidates?: HorizontalCandidates;
  /** Which shards a horizontal class is hashed over (see HorizontalPlacement). Default `own-buckets`. */
  horizontalPlacement?: HorizontalPlacement;
  /** Which pairs of P(q) are predicate candidates (see PredicateCandidates). Default `all-pairs`. */
  predicateCandidates?: PredicateCandidates;
  /**
   * The preset the method options were resolved from (`resolveMethodOptions`), recorded in the
   * manifests and build.json; the options above are used as given (the preset is not re-applied).
   */
  preset?: string;
  /** Write the VoID of every shard and the catalogue (`describe` stage). Default true (CLI `--no-void` turns it off). */
  void?: boolean;
  /** How VoID statistics are computed (see `chooseVoidEngine`). Default `auto`. */
  voidEngine?: VoidEngine | 'auto';
  /** Base URL of the shard endpoints, `<base>/<graph>-shard<N>/sparql` (see `endpointUrl`); without it, VoID and catalogue carry no URLs. */
  endpointBase?: string;
  /** Receives progress lines (the CLI prints them on stderr). */
  progress?: (line: string) => void;
}

export const DEFAULT_PARTITION_OPTIONS = {
  ...DEFAULT_METHOD_OPTIONS,
  seed: 0,
  defaultPrefix: SPIDER_DEFAULT_PREFIX,
  solverTimeoutMs: 60_000,
} as const satisfies Partial<PartitionOptions>;

/** The method options of a partition call, defaults filled in (see MethodOptions). */
export function methodOptionsOf(o: PartitionOptions): MethodOptions {
  return {
    buckets: o.buckets,
    layout: o.layout,
    expressionPatterns: o.expressionPatterns,
    classInference: o.classInference,
    horizontalCandidates: o.horizontalCandidates ?? DEFAULT_METHOD_OPTIONS.horizontalCandidates,
    predicateCandidates: o.predicateCandidates ?? DEFAULT_METHOD_OPTIONS.predicateCandidates,
    horizontalPlacement: o.horizontalPlacement ?? DEFAULT_METHOD_OPTIONS.horizontalPlacement,
  };
}

/** One query's entry in a graph manifest. */
export interface ManifestQuery {
  id: string;
  /** Indices of the questions asking it. */
  questions: number[];
  status: 'covered' | 'uncoverable' | 'unparsable';
  reason?: string;
  /** |P(q)|, |C(q)|, |S(q)| and the applicable kinds (absent for unparsable queries). */
  predicates?: number;
  classes?: number;
  subjectVariables?: number;
  applicable?: ShardingKind[];
  /** Ids of the chosen rules that cover it. */
  rules?: string[];
  /** Implied fan-out f(Q) and the shards it counts (covered queries). */
  fanOut?: number;
  /** A required triple pattern matches nothing in the graph: the answer is necessarily empty and the query is not federated (see FederationCheck). */
  necessarilyEmpty?: true;
  /** Σ over triple patterns of the shards matching each (TPWSS). */
  tpwss?: number;
  shards?: string[];
}

/** One shard in a graph manifest. */
export interface ManifestShard {
  /** `shard<N>`: the public name; it says nothing about the rule that made the shard. */
  name: string;
  /** Endpoint name the published SPARQL-MCP server expects: `<kg>-shard<N>`. */
  endpoint: string;
  /** File name inside the graph folder: `shard<N>.nt`. */
  file: string;
  triples: number;
  bytes: number;
  sha256: string;
  checksum: string;
  /** What the shard holds (kept in the manifest only): its slot, rules and predicates or classes. */
  role: {
    slot: string;
    rules: string[];
    predicates?: string[];
    classes?: string[];
    bucket?: number;
    /** Horizontal placement `all-shards` or `every-shard`: the horizontal classes whose instances are hashed over this shard (among others). */
    spread?: string[];
  };
}

/** The manifest of one graph: `<out>/<kg>/manifest.json`. Byte-identical for the same input and options. */
export interface GraphManifest {
  tool: { name: string; version: string; solver: string };
  graph: string;
  options: {
    buckets: number;
    seed: number;
    hash: string;
    defaultPrefix: string;
    solverTimeoutMs: number;
    layout: LayoutMode;
    expressionPatterns: boolean;
    classInference: boolean;
    /** Present only when not the default (`unless-class`), so default manifests keep their bytes. */
    horizontalCandidates?: HorizontalCandidates;
    /** Present only when not the default (`own-buckets`). */
    horizontalPlacement?: HorizontalPlacement;
    /** Present only when not the default (`all-pairs`). */
    predicateCandidates?: PredicateCandidates;
    /** The preset the options were resolved from; present only for a build made with a preset. */
    preset?: string;
  };
  inputs: {
    data: {
      file: string;
      sha256: string;
      /** Triples read, duplicates included, and the multiset checksum of their N-Triples lines. */
      triplesRead: number;
      checksum: string;
      /** Distinct triples (= triples in the shards) and repeated triples dropped. */
      triples: number;
      duplicates: number;
      subjects: number;
      untypedSubjects: number;
    };
    ontology: { file: string; sha256: string } | null;
    questions: { file: string; sha256: string };
  };
  queries: ManifestQuery[];
  candidates: { total: number; realisable: number; dropped: DroppedRule[] };
  rules: { id: string; kind: ShardingKind; elements: string[]; covers: string[] }[];
  solver: { cover: SolverStatistics; layout: SolverStatistics };
  shards: ManifestShard[];
  guarantees: {
    completeness: CompletenessCheck;
    /**
     * Guarantee 2 over the covered queries: `federated` have f(Q) ≥ 2; `necessarilyEmpty` have a
     * required triple pattern that matches nothing (their answer is empty on any sharding, so they
     * are not federated); `exceptions` lists every covered query that is not federated, with why.
     */
    federation: { covered: number; federated: number; necessarilyEmpty: number; exceptions: { query: string; reason: string }[] };
    rules: RuleCheck[];
  };
  warnings: string[];
}

/** Wall times of one graph's stages in ms (not written to any output file: they vary). */
export interface GraphTimings {
  load: number;
  analyze: number;
  profile: number;
  plan: number;
  materialize: number;
  verify: number;
  /** VoID of the graph's shards (0 with `void: false`). */
  describe: number;
  total: number;
}

/** The in-memory result of building one graph. */
export interface GraphBuild {
  manifest: GraphManifest;
  analyses: QueryAnalysis[];
  unparsable: UnparsableQuery[];
  chosen: ShardingRule[];
  layout: ShardLayout;
  federation: FederationCheck[];
  /** The VoID descriptions of the shards (empty with `void: false`). */
  descriptions: ShardDescription[];
  /**
   * Implied shards of every parsed query, covered or not: the shards (`shard<N>`, in shard order)
   * holding a triple that matches at least one of its triple patterns (for covered queries the
   * shards f(Q) counts, section 4.2). Unparsable queries have no entry.
   */
  impliedShards: Map<string, string[]>;
  timings: GraphTimings;
}

/** The result of `partition`. */
export interface PartitionResult {
  out: string;
  graphs: GraphBuild[];
  questions: Question[];
  queries: GoldQuery[];
  warnings: string[];
  /** sha256 over every output file (path and content): equal digests mean byte-identical builds. */
  outputDigest: string;
  /** The method options the build used and the preset they came from (as in build.json). */
  method: ResolvedMethodOptions;
  /** Comparison with the build that was in the output directory before, if any. */
  previous: { digest: string; sameInputs: boolean; identical: boolean; graphs: string[] } | null;
  timings: { totalMs: number };
}

/** Orders shard names `shard<N>` by N. */
export const byShardNumber = (a: string, b: string) => Number(a.replace(/\D/g, '')) - Number(b.replace(/\D/g, ''));

const sha256File = sha256OfFile;
const ms = (t0: number) => Math.round(performance.now() - t0);

function validate(o: PartitionOptions): void {
  if (!Number.isInteger(o.buckets) || o.buckets < 2 || o.buckets > 1024) {
    throw new InputError(`--buckets must be an integer from 2 to 1024, got ${o.buckets}`);
  }
  if (!Number.isSafeInteger(o.seed) || o.seed < 0) throw new InputError(`--seed must be a non-negative integer, got ${o.seed}`);
  if (o.layout !== 'compact' && o.layout !== 'separate') throw new InputError(`--layout must be compact or separate, got "${o.layout}"`);
  if (o.horizontalCandidates !== undefined && o.horizontalCandidates !== 'unless-class' && o.horizontalCandidates !== 'every-query') {
    throw new InputError(`--horizontal-candidates must be unless-class or every-query, got "${o.horizontalCandidates}"`);
  }
  if (o.horizontalPlacement !== undefined && !['own-buckets', 'all-shards', 'every-shard'].includes(o.horizontalPlacement)) {
    throw new InputError(`--horizontal-placement must be own-buckets, all-shards or every-shard, got "${o.horizontalPlacement}"`);
  }
  if (o.predicateCandidates !== undefined && o.predicateCandidates !== 'all-pairs' && o.predicateCandidates !== 'no-rdf-type') {
    throw new InputError(`--predicate-candidates must be all-pairs or no-rdf-type, got "${o.predicateCandidates}"`);
  }
  if (o.preset !== undefined && !Object.hasOwn(PRESETS, o.preset)) throw new InputError(`--preset must be one of ${Object.keys(PRESETS).join(', ')}, got "${o.preset}"`);
  if (!(o.solverTimeoutMs > 0)) throw new InputError(`--solver-timeout must be positive, got ${o.solverTimeoutMs}`);
  const prefixError = iriError(o.defaultPrefix) ?? (/^[a-z][a-z0-9+.-]*:/i.test(o.defaultPrefix) ? undefined : 'not absolute');
  if (prefixError) throw new InputError(`--default-prefix must be an absolute IRI, got "${o.defaultPrefix}" (${prefixError})`);
  if (o.endpointBase !== undefined) endpointUrl(o.endpointBase, 'x');
}

/**
 * Names of the top-level entries of an output directory that a build owns (and a new build
 * replaces): its files, and the graph folders whose manifest.json was written by fkgqa.
 * `checkOutputDir` has made sure the directory holds an fkgqa build, if anything.
 */
export function isBuildEntry(name: string, outDir: string): boolean {
  if (['benchmark.json', 'build.json', 'catalogue.json', 'catalogue.ttl', 'endpoints.json'].includes(name)) return true;
  try {
    return JSON.parse(fs.readFileSync(path.join(outDir, name, 'manifest.json'), 'utf8'))?.tool?.name === 'fkgqa';
  } catch {
    return false;
  }
}

/**
 * `fkgqa partition`: builds the federated shards of every selected graph (load → analyse → plan →
 * materialise → verify → describe), writes `<out>/<kg>/shard<N>.nt`, `<out>/<kg>/manifest.json`,
 * the VoID of every shard (`<out>/<kg>/shard<N>_void.ttl`, `…_void_extended.ttl`) and
 * `<out>/catalogue.json|ttl` (unless `void: false`), `<out>/benchmark.json` and `<out>/build.json`,
 * and checks the guarantees. Output is staged and moves into `out` only when every graph has been
 * built.
 * @throws InputError for bad input (nothing is written then)
 */
export async function partition(options: PartitionOptions): Promise<PartitionResult> {
  const t0 = performance.now();
  validate(options);
  checkOutputDir(options.out, options.source);
  const log = options.progress ?? (() => {});
  const source = openSource(options.source, options.questions);
  const questions = readQuestions(source.questionsFile);
  const queries = distinctQueries(questions);
  const warnings: string[] = [];

  const named = [...new Set(questions.map((q) => q.kg))].sort();
  if (options.kgs?.length) {
    for (const kg of options.kgs) {
      if (!named.includes(kg) && !source.graphs.has(kg)) {
        throw new InputError(`--kg ${kg}: no such graph (not in the questions nor in kg/)`, { file: source.dir });
      }
    }
  }
  const selected = named.filter((kg) => !options.kgs?.length || options.kgs.includes(kg));
  for (const kg of selected) {
    if (!source.graphs.has(kg)) {
      const q = questions.find((x) => x.kg === kg)!;
      throw new InputError(
        `question ${q.index} names graph "${kg}", which has no data file ${path.join(source.dir, 'kg', `${kg}.nt`)} (or .ttl, .rdf, .owl, .xml)`,
        { file: source.questionsFile },
      );
    }
  }
  for (const kg of source.graphs.keys()) {
    if (!named.includes(kg) && (!options.kgs?.length || options.kgs.includes(kg))) {
      if (options.kgs?.includes(kg)) throw new InputError(`--kg ${kg}: the graph has a data file but no questions`, { file: source.questionsFile });
      warnings.push(`graph ${kg} has a data file but no questions: skipped`);
    }
  }
  if (selected.length === 0) throw new InputError('no questions: nothing to build', { file: source.questionsFile });
  const unparsable = queries.filter((q) => selected.includes(q.kg) && !parseQuery(q.text, options.defaultPrefix).ok);
  if (unparsable.length === queries.filter((q) => selected.includes(q.kg)).length) {
    throw new InputError(`none of the ${unparsable.length} gold queries parses: nothing to federate (first: ${unparsable[0].id}: ${(parseQuery(unparsable[0].text, options.defaultPrefix) as { error: string }).error})`, { file: source.questionsFile });
  }

  const staged = new StagedOutput(options.out);
  try {
    const questionsSha = sha256File(source.questionsFile);
    const graphs: GraphBuild[] = [];
    for (const [i, kg] of selected.entries()) {
      const g = source.graphs.get(kg)!;
      log(`[${i + 1}/${selected.length}] ${kg}: ${path.relative(source.dir, g.dataFile)}`);
      const build = await buildGraph(
        g,
        queries.filter((q) => q.kg === kg),
        { ...options, sourceDir: source.dir, questionsFile: source.questionsFile, questionsSha },
        path.join(staged.dir, kg),
        log,
      );
      for (const w of build.manifest.warnings) warnings.push(`${kg}: ${w}`);
      graphs.push(build);
      const m = build.manifest;
      log(
        `[${i + 1}/${selected.length}] ${kg}: ${m.inputs.data.triples} triples, ${m.queries.length} queries → ` +
          `${m.rules.length} rules, ${m.shards.length} shards; ${m.guarantees.federation.federated}/${m.guarantees.federation.covered} federated (${build.timings.total} ms)`,
      );
    }
    writeBenchmark(staged.dir, questions, queries, graphs, options.defaultPrefix, source.questionsFile, questionsSha);
    const describe = { void: options.void !== false, endpointBase: options.endpointBase ?? null };
    if (describe.void) {
      for (const [rel, text] of catalogueFileTexts(graphs.flatMap((g) => g.descriptions))) fs.writeFileSync(path.join(staged.dir, rel), text);
    }
    const inputsDigest = crypto
      .createHash('sha256')
      .update(JSON.stringify([codeDigest(), questionsSha, graphs.map((g) => [g.manifest.inputs, g.manifest.options]), describe]))
      .digest('hex');
    const outputDigest = digestTree(staged.dir);
    writeJson(path.join(staged.dir, 'build.json'), {
      tool: { ...TOOL, solver: SOLVER },
      graphs: graphs.map((g) => g.manifest.graph),
      // The method options as resolved (defaults, preset, explicit options), so the build can be repeated.
      preset: options.preset ?? null,
      options: { ...methodOptionsOf(options), seed: options.seed, defaultPrefix: options.defaultPrefix, solverTimeoutMs: options.solverTimeoutMs },
      inputsDigest,
      outputDigest,
    });
    const previous = readPrevious(options.out, inputsDigest, outputDigest);
    staged.commit(isBuildEntry);
    const method = { preset: options.preset ?? null, options: methodOptionsOf(options) };
    return { out: options.out, graphs, questions, queries, warnings, outputDigest, method, previous, timings: { totalMs: ms(t0) } };
  } catch (e) {
    staged.discard();
    throw e;
  }
}

function readPrevious(out: string, inputsDigest: string, outputDigest: string): PartitionResult['previous'] {
  const file = path.join(out, 'build.json');
  if (!fs.existsSync(file)) return null;
  try {
    const prev = JSON.parse(fs.readFileSync(file, 'utf8'));
    return { digest: prev.outputDigest, sameInputs: prev.inputsDigest === inputsDigest, identical: prev.outputDigest === outputDigest, graphs: Array.isArray(prev.graphs) ? prev.graphs : [] };
  } catch {
    return null;
  }
}

/** sha256 over the sorted relative paths and contents of every file under `dir`. */
export function digestTree(dir: string): string {
  const files: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else files.push(p);
    }
  };
  walk(dir);
  const h = crypto.createHash('sha256');
  for (const f of files.map((f) => path.relative(dir, f).split(path.sep).join('/')).sort()) {
    if (f === 'build.json') continue;
    h.update(`${f}\n${sha256File(path.join(dir, f))}\n`);
  }
  return h.digest('hex');
}

/**
 * One question of `<out>/benchmark.json`. Shard lists name endpoints (`<kg>-shard<N>`, the names
 * `fkgqa serve` and the SPARQL-MCP server use), in shard order.
 */
export interface BenchmarkEntry {
  /** Index of the question in the questions file (0-based). */
  index: number;
  kg: string;
  question: string;
  /** The gold query, with `PREFIX :` declared (runs on any SPARQL 1.1 engine). */
  query: string;
  /** `<kg>/q<N>`: one id per distinct query of a graph. */
  queryId: string;
  /** Whether the chosen sharding rules cover the query (section 4.1), or why not. */
  status: 'covered' | 'uncoverable' | 'unparsable';
  /** Covered and implied fan-out f(Q) ≥ 2. */
  federated: boolean;
  /** Every shard endpoint of the entry's graph: the endpoints an agent is given, NOT the shards the query needs. */
  endpoints: string[];
  /** Shards holding a triple that matches at least one triple pattern of the query (implied fan-out, computed by partition); null if the query does not parse. */
  shardsImplied: string[] | null;
}

/** What each field of a benchmark entry means (written into benchmark.json as `fields`). */
export const BENCHMARK_FIELDS: Record<keyof BenchmarkEntry, string> = {
  index: 'index of the question in the questions file (0-based)',
  kg: 'knowledge graph of the question',
  question: 'the natural-language question',
  query: 'the gold SPARQL query, with its default prefix declared',
  queryId: 'id of the distinct gold query, <kg>/q<N>',
  status: 'covered (the sharding rules split it), uncoverable (no rule can) or unparsable',
  federated: 'covered, its implied fan-out is at least 2 shards, and its answer is not necessarily empty (a required triple pattern matches nothing)',
  endpoints: "every shard endpoint of the question's graph (what an agent is given), not only the ones the query needs",
  shardsImplied:
    'shard endpoints holding a triple that matches some triple pattern of the query (implied fan-out); the shards whose triples the gold answer actually uses (realised) come from fkgqa questions or fkgqa stats',
};

function writeBenchmark(
  dir: string,
  questions: Question[],
  queries: GoldQuery[],
  graphs: GraphBuild[],
  defaultPrefix: string,
  questionsFile: string,
  questionsSha: string,
): void {
  const byGraph = new Map(graphs.map((g) => [g.manifest.graph, g.manifest]));
  const graphOf = new Map(graphs.map((g) => [g.manifest.graph, g]));
  const queryOf = new Map<number, GoldQuery>();
  for (const q of queries) for (const i of q.questions) queryOf.set(i, q);
  const entries = questions
    .filter((q) => byGraph.has(q.kg))
    .map((q) => {
      const m = byGraph.get(q.kg)!;
      const gq = queryOf.get(q.index)!;
      const mq = m.queries.find((x) => x.id === gq.id)!;
      const implied = graphOf.get(q.kg)!.impliedShards.get(gq.id);
      const entry: BenchmarkEntry = {
        index: q.index,
        kg: q.kg,
        question: q.question,
        query: withPrefixDeclared(q.query, defaultPrefix),
        queryId: gq.id,
        status: mq.status,
        federated: mq.status === 'covered' && (mq.fanOut ?? 0) >= 2 && !mq.necessarilyEmpty,
        endpoints: m.shards.map((s) => s.endpoint),
        shardsImplied: implied ? implied.map((name) => `${q.kg}-${name}`) : null,
      };
      return entry;
    });
  writeJson(path.join(dir, 'benchmark.json'), {
    tool: TOOL,
    questions: { file: path.basename(questionsFile), sha256: questionsSha },
    defaultPrefix,
    fields: BENCHMARK_FIELDS,
    count: entries.length,
    entries,
  });
}

interface GraphContext extends PartitionOptions {
  sourceDir: string;
  questionsFile: string;
  questionsSha: string;
}

async function buildGraph(
  g: GraphSource,
  queries: GoldQuery[],
  ctx: GraphContext,
  dir: string,
  log: (line: string) => void,
): Promise<GraphBuild> {
  const tStart = performance.now();
  const warnings: string[] = [];
  let t = performance.now();
  let ontology = EMPTY_ONTOLOGY;
  if (g.ontologyFile && g.ontologyFormat && fs.statSync(g.ontologyFile).size === 0) {
    warnings.push(`ontology ${path.relative(ctx.sourceDir, g.ontologyFile)} is empty (0 bytes): classes come from explicit rdf:type patterns only`);
  } else if (g.ontologyFile && g.ontologyFormat) ontology = readOntology(g.ontologyFile, g.ontologyFormat);
  else warnings.push(`no ontology in ontologies/${g.name}.(owl|rdf|xml|ttl): classes come from explicit rdf:type patterns only`);
  const load = ms(t);

  t = performance.now();
  const { analyses, unparsable } = analyzeQueries(queries, ontology, ctx.defaultPrefix, {
    expressionPatterns: ctx.expressionPatterns,
    inferClasses: ctx.classInference,
  });
  for (const u of unparsable) {
    const asked = queries.find((q) => q.id === u.id)!.questions;
    warnings.push(`query ${u.id} (question${asked.length > 1 ? 's' : ''} ${asked.join(', ')}) does not parse (${u.error}): ${u.text}`);
  }
  const analyze = ms(t);

  t = performance.now();
  const src = { file: g.dataFile, format: g.dataFormat, graph: g.name };
  const size = fs.statSync(g.dataFile).size;
  const progress = byteProgress(`${g.name}: reading`, size, log);
  const profile = await profileData(src, { buckets: ctx.buckets, seed: ctx.seed }, progress);
  if (profile.triplesRead === 0) warnings.push('the data file has no triples: no query of this graph can be federated');
  if (profile.untypedSubjects) warnings.push(`${profile.untypedSubjects} subjects have no rdf:type: their triples go to the base shard unless a predicate shard takes them`);
  const profileMs = ms(t);

  t = performance.now();
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
  const plan = ms(t);

  t = performance.now();
  const matcher = new PatternMatcher();
  for (const a of analyses) for (const tp of a.patterns) matcher.add(tp);
  const work = path.join(dir, '.slots');
  fs.mkdirSync(work, { recursive: true });
  const assigner = new ShardAssigner(layout, profile, await getHasher());
  const result = await materializeGraph(src, assigner, matcher, work, byteProgress(`${g.name}: writing shards`, size, log));
  // Public names: non-empty slots in an order given by a seeded hash, so numbers reveal no rule.
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
  const materialize = ms(t);

  t = performance.now();
  const verified = await verifyShards(
    order.map((s) => path.join(dir, `${nameOfSlot.get(s.index)}.nt`)),
    result.input,
  );
  const completeness = verified.check;
  if (!completeness.ok) {
    throw new Error(
      `${g.name}: guarantee 1 failed: input ${completeness.inputLines} triples (${completeness.inputChecksum}), shards ${completeness.shardLines} (${completeness.shardChecksum})`,
    );
  }
  const fileOf = new Map(order.map((s, i) => [s.index, verified.shards[i]]));
  const duplicates = verified.shards.reduce((n, f) => n + f.duplicates, 0);
  if (duplicates) warnings.push(`${duplicates} repeated triples in the input were dropped (a graph is a set)`);
  const covered = new Set(candidates.coverable);
  const federation = checkFederation(analyses, covered, matcher, result, slotName);
  const ruleChecks = checkRules(cover.rules, result, slotName);
  const impliedShards = new Map(
    analyses.map((a) => {
      const union = new Set<number>();
      for (const tp of a.patterns) for (const s of result.patternSlots[matcher.indexOf.get(patternKey(tp))!]) union.add(s);
      return [a.id, [...union].map(slotName).sort(byShardNumber)] as const;
    }),
  );
  const verify = ms(t);

  const ruleId = new Map(cover.rules.map((r, i) => [r.key, `r${i + 1}`]));
  const fed = new Map(federation.map((f) => [f.query, f]));
  const analysisOf = new Map(analyses.map((a) => [a.id, a]));
  const uncoverable = new Map(candidates.uncoverable.map((u) => [u.id, u.reason]));
  const unparsableOf = new Map(unparsable.map((u) => [u.id, u.error]));
  const manifestQueries: ManifestQuery[] = queries.map((q) => {
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
      shards: f.slots.map(slotName).sort(byShardNumber),
    };
  });

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
  const members = (m: Map<string, number>, k: number) => [...m].filter(([, v]) => v === k).map(([x]) => x).sort();
  const shards: ManifestShard[] = order.map((s) => {
    const name = nameOfSlot.get(s.index)!;
    const [kind, a, b] = s.slot.split('-');
    const role: ManifestShard['role'] = { slot: s.slot, rules: slotRules(s.slot).map((r) => ruleId.get(r.key)!) };
    if (kind === 'predicate') role.predicates = members(layout.predicateShard, Number(a));
    if (kind === 'class') role.classes = members(layout.classShard, Number(a));
    if (kind === 'bucket') {
      role.classes = members(layout.horizontalGroup, Number(a));
      role.bucket = Number(b);
    }
    if (layout.spread) role.spread = [...layout.spread].filter(([, slots]) => slots.includes(s.slot)).map(([c]) => c).sort();
    const f = fileOf.get(s.index)!;
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
  shards.sort((x, y) => Number(x.name.slice(5)) - Number(y.name.slice(5)));
  const exceptions = federation.filter((f) => !f.ok).map((f) => ({ query: f.query, reason: f.reason! }));
  for (const r of ruleChecks.filter((r) => !r.ok)) warnings.push(`rule ${r.rule} is not realised: ${r.detail}`);

  const rel = (f: string) => path.relative(ctx.sourceDir, f).split(path.sep).join('/');
  const manifest: GraphManifest = {
    tool: { ...TOOL, solver: SOLVER },
    graph: g.name,
    options: {
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
    },
    inputs: {
      data: {
        file: rel(g.dataFile),
        sha256: profile.sha256,
        triplesRead: result.input.lines,
        triples: verified.shards.reduce((n, f) => n + f.triples, 0),
        duplicates,
        checksum: result.input.checksum,
        subjects: profile.subjects,
        untypedSubjects: profile.untypedSubjects,
      },
      ontology: g.ontologyFile ? { file: rel(g.ontologyFile), sha256: sha256File(g.ontologyFile) } : null,
      questions: { file: path.basename(ctx.questionsFile), sha256: ctx.questionsSha },
    },
    queries: manifestQueries,
    candidates: {
      total: candidates.rules.length + candidates.dropped.length,
      realisable: candidates.rules.length,
      dropped: candidates.dropped,
    },
    rules: cover.rules.map((r) => ({ id: ruleId.get(r.key)!, kind: r.kind, elements: r.elements, covers: r.covers.filter((q) => covered.has(q)) })),
    solver: { cover: cover.statistics, layout: layout.statistics },
    shards,
    guarantees: {
      completeness,
      federation: { covered: federation.length, federated: federation.filter((f) => f.ok).length, necessarilyEmpty: federation.filter((f) => f.necessarilyEmpty).length, exceptions },
      rules: ruleChecks,
    },
    warnings,
  };
  writeJson(path.join(dir, 'manifest.json'), manifest);

  t = performance.now();
  let descriptions: ShardDescription[] = [];
  if (ctx.void !== false) {
    const base = ctx.endpointBase;
    descriptions = await describeGraph({
      graph: g.name,
      dir,
      shards: shards.map((s) => s.name),
      engine: chooseVoidEngine(ctx.voidEngine ?? 'auto', manifest.inputs.data.triples),
      prefix: ctx.defaultPrefix,
      endpointOf: base ? (e) => endpointUrl(base, e) : undefined,
    });
    for (const [rel, text] of voidFileTexts(descriptions, ctx.defaultPrefix)) fs.writeFileSync(path.join(path.dirname(dir), rel), text);
    const linksets = descriptions.reduce((n, d) => n + d.linksets.length, 0);
    log(`${g.name}: VoID of ${descriptions.length} shards, ${linksets} linksets (${ms(t)} ms)`);
  }
  const describe = ms(t);
  return {
    manifest,
    analyses,
    unparsable,
    chosen: cover.rules,
    layout,
    federation,
    descriptions,
    impliedShards,
    timings: { load, analyze, profile: profileMs, plan, materialize, verify, describe, total: ms(tStart) },
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
