/**
 * What `fkgqa partition` writes about each graph (`<out>/<kg>/manifest.json`) and returns in memory.
 * Later commands read the parts they rely on through src/build/open.ts (`BuildManifest`).
 */
import type { QueryAnalysis, ShardingKind, UnparsableQuery } from '../analyze/analyze.js';
import type { ShardDescription } from '../describe/index.js';
import type { GoldQuery, Question } from '../load/questions.js';
import type { CompletenessCheck, FederationCheck, RuleCheck } from '../materialize/verify.js';
import type { ShardLayout } from '../plan/layout.js';
import type { DroppedRule, ShardingRule } from '../plan/rules.js';
import type { SolverStatistics } from '../plan/solver.js';
import type { ResolvedMethodOptions } from './presets.js';
import type { OptionalMethodOption, PartitionOptions } from './options.js';

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
  /** The options of PartitionOptions that make the shards, and the subject hash; `OptionalMethodOption`s and `preset` only when given. */
  options: Pick<PartitionOptions, 'buckets' | 'seed' | 'defaultPrefix' | 'solverTimeoutMs' | 'layout' | 'expressionPatterns' | 'classInference' | OptionalMethodOption | 'preset'> & { hash: string };
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
  /**
   * Comparison with the build that was in the output directory before, if any: `digest` its
   * recorded output digest, `sameInputs` whether its inputs digest is this build's, `asBuilt` whether
   * its recorded output digest is this build's, `changedFiles` (with the same inputs only) the files
   * (relative paths, sorted) whose bytes on disk differ from this build's or are in one build only,
   * `identical` whether the files on disk are byte for byte this build's (same inputs, `asBuilt`, no
   * changed file), `graphs` its graphs.
   */
  previous: { digest: string; sameInputs: boolean; identical: boolean; asBuilt: boolean; changedFiles: string[]; graphs: string[] } | null;
  timings: { totalMs: number };
}

/** Orders shard names `shard<N>` by N. */
export const byShardNumber = (a: string, b: string) => Number(a.replace(/\D/g, '')) - Number(b.replace(/\D/g, ''));
