/**
 * The figures the FKGQA paper reports for its Spider4SPARQL dev build (sections 4.1 and 4.2 of
 * `../shared/papers/000_462b64a14f238500.txt`). Shares are percentages. The applicability shares
 * are over the 1,034 dev questions (992/1,034 = 95.94% and 415/1,034 = 40.14% are the only
 * fractions with a denominator near 542 or 1,034 that round to both), not over distinct queries.
 */
export const PAPER = {
  graphs: 19,
  questions: 1034,
  distinctQueries: 542,
  applicability: { class: 40.14, predicate: 95.94, horizontal: 100 },
  rulesPerGraph: { mean: 3.7, median: 4, min: 2, max: 8 },
  ruleComposition: { predicate: 18.3, class: 30.42, horizontal: 51.28 },
  shards: { total: 118, mean: 6.21, median: 6, min: 3, max: 14 },
  shardBalanceCv: 0.88,
  impliedFanOut: { mean: 6.48, median: 6, min: 2, max: 14 },
  realisedFanOut: { noMatchShare: 4.84, oneShardShare: 24.49 },
} as const;
