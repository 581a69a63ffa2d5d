import { InputError } from '../common/errors.js';
import type { HorizontalPlacement, LayoutMode } from '../plan/layout.js';
import type { HorizontalCandidates, PredicateCandidates } from '../plan/rules.js';

/**
 * The partition options that are readings of the method of section 4 of the FKGQA paper (where the
 * paper leaves a choice open) and that a preset may set. Each is documented where it is
 * implemented; docs/preset-paper.md measures what each does to the published figures.
 */
export interface MethodOptions {
  /** Buckets per horizontal group (`own-buckets`), or the fewest shards a horizontal class is hashed over (`all-shards`). 2–1024. */
  buckets: number;
  /** `compact` or `separate` shard layout (src/plan/layout.ts, LayoutMode). */
  layout: LayoutMode;
  /** T(q) includes patterns inside FILTER/BIND/HAVING expressions (src/analyze/patterns.ts). */
  expressionPatterns: boolean;
  /** C(q) uses the ontology's rdfs:domain / rdfs:range (src/analyze/analyze.ts). */
  classInference: boolean;
  /** Which queries get horizontal candidates (src/plan/rules.ts, HorizontalCandidates). */
  horizontalCandidates: HorizontalCandidates;
  /** Which pairs of P(q) are predicate candidates (src/plan/rules.ts, PredicateCandidates). */
  predicateCandidates: PredicateCandidates;
  /** Which shards a horizontal class is hashed over (src/plan/layout.ts, HorizontalPlacement). */
  horizontalPlacement: HorizontalPlacement;
}

/** fkgqa's own reading of the method, used when neither a preset nor an option says otherwise. */
export const DEFAULT_METHOD_OPTIONS: MethodOptions = {
  buckets: 2,
  layout: 'compact',
  expressionPatterns: true,
  classInference: true,
  horizontalCandidates: 'unless-class',
  predicateCandidates: 'all-pairs',
  horizontalPlacement: 'own-buckets',
};

/** A named set of method options: what it is for, and the options it sets (the rest stay default). */
export interface Preset {
  description: string;
  options: Partial<MethodOptions>;
}

/**
 * The presets of `fkgqa partition --preset <name>`.
 * - `paper`: the combination of readings whose figures come closest to those the paper publishes
 *   for its build (section 4.2: 118 shards over 19 graphs, implied fan-out 6.48 / 6 / 2 / 14;
 *   section 4.1: class applicability 40.14%). The measurements behind the choice are in
 *   docs/preset-paper.md.
 */
export const PRESETS: Record<string, Preset> = {
  paper: {
    description: "the readings of section 4 closest to the paper's published figures (docs/preset-paper.md)",
    options: {
      buckets: 4,
      layout: 'separate',
      expressionPatterns: false,
      classInference: false,
      horizontalPlacement: 'all-shards',
    },
  },
};

/** The method options of a build and where they come from. */
export interface ResolvedMethodOptions {
  /** The preset named, or null. */
  preset: string | null;
  options: MethodOptions;
}

/**
 * Resolves the method options of a build: the defaults, overridden by the preset's options, overridden
 * by the options given explicitly (an explicit option always wins over the preset).
 * @param preset a name in PRESETS, or undefined for none
 * @param explicit the options the user gave explicitly (undefined entries count as not given)
 * @throws InputError for an unknown preset name
 */
export function resolveMethodOptions(preset: string | undefined, explicit: Partial<MethodOptions> = {}): ResolvedMethodOptions {
  if (preset !== undefined && !Object.hasOwn(PRESETS, preset)) {
    throw new InputError(`--preset must be one of ${Object.keys(PRESETS).join(', ')}, got "${preset}"`);
  }
  const given = Object.fromEntries(Object.entries(explicit).filter(([, v]) => v !== undefined)) as Partial<MethodOptions>;
  return {
    preset: preset ?? null,
    options: { ...DEFAULT_METHOD_OPTIONS, ...(preset ? PRESETS[preset].options : {}), ...given },
  };
}
