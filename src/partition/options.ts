/**
 * The options of `fkgqa partition` and their defaults (checked by `validatePartitionOptions` in
 * partition.ts). Light: the CLI reads the defaults for its help without loading the method.
 */
import { SPIDER_DEFAULT_PREFIX } from '../common/vocab.js';
import type { VoidEngine } from '../describe/index.js';
import type { HorizontalPlacement, LayoutMode } from '../plan/layout.js';
import type { HorizontalCandidates, PredicateCandidates } from '../plan/rules.js';
import { DEFAULT_METHOD_OPTIONS, type MethodOptions } from './presets.js';

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
