/**
 * The options of `fkgqa partition`, their defaults and their checks.
 */
import { InputError } from '../common/errors.js';
import { iriError } from '../common/iri.js';
import { SPIDER_DEFAULT_PREFIX } from '../common/vocab.js';
import { endpointUrl, type VoidEngine } from '../describe/index.js';
import type { HorizontalPlacement, LayoutMode } from '../plan/layout.js';
import type { HorizontalCandidates, PredicateCandidates } from '../plan/rules.js';
import { DEFAULT_METHOD_OPTIONS, PRESETS, type MethodOptions } from './presets.js';

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

/**
 * Checks the options before anything is read.
 * @throws InputError naming the option (as the CLI spells it) and what is wrong
 */
export function validatePartitionOptions(o: PartitionOptions): void {
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
