/**
 * The options of `fkgqa partition` and their defaults (checked by `validatePartitionOptions` in
 * partition.ts). Light: the CLI reads the defaults for its help without loading the method.
 */
import { SPIDER_DEFAULT_PREFIX } from '../common/vocab.js';
import type { VoidEngine } from '../describe/index.js';
import { DEFAULT_METHOD_OPTIONS, type MethodOptions } from './presets.js';

/** The method options a build records only when not the default, so that default manifests keep their bytes. */
export type OptionalMethodOption = 'horizontalCandidates' | 'horizontalPlacement' | 'predicateCandidates';

/** Options of `fkgqa partition` (defaults in DEFAULT_PARTITION_OPTIONS; the method options are documented in MethodOptions). */
export interface PartitionOptions extends Pick<MethodOptions, 'buckets' | 'layout' | 'expressionPatterns' | 'classInference'>, Partial<Pick<MethodOptions, OptionalMethodOption>> {
  /** Benchmark source directory (Spider4SPARQL layout). */
  source: string;
  /** Output directory; replaced only when the whole build succeeds. */
  out: string;
  /** Questions file, if not the source's `dev.json` / `questions.json` / `dev.csv` / `questions.csv`. */
  questions?: string;
  /** Build only these graphs (default: every graph the questions name). */
  kgs?: string[];
  /** Seed of the subject hash (xxh64) and of the shard numbering, a non-negative integer. Default 0. */
  seed: number;
  /** IRI of the undeclared `:` prefix of the gold queries. Default `http://valuenet/ontop/`. */
  defaultPrefix: string;
  /** Time limit of each ASP solve in ms. Default 60 000. */
  solverTimeoutMs: number;
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
