/**
 * 95 % confidence intervals of `fkgqa score`'s figures, beside each figure and its n (as
 * lm-evaluation-harness reports a standard error beside each metric): the Wilson score interval for
 * a share such as accuracy (Wilson 1927; Brown, Cai & DasGupta 2001 recommend it over the normal
 * approximation for small n and shares near 0 or 1), and a percentile bootstrap for a mean such as
 * mean F1 (Efron & Tibshirani 1993, ch. 13), resampled with a fixed seed so that the same runs
 * always give the same interval.
 */
import { seededRandom } from '../common/random.js';

/** The standard normal quantile of 0.975: a two-sided 95 % interval. */
const Z_95 = 1.959963984540054;

/** An interval `[low, high]`. */
export type Interval = [number, number];

/**
 * The Wilson score interval of a share `k / n` (proportions, 0–1):
 * (p + z²/2n ± z·√(p(1−p)/n + z²/4n²)) / (1 + z²/n), p = k/n.
 * @returns null for n = 0 (no runs: no interval)
 * @throws RangeError when k is not an integer in 0..n
 */
export function wilsonInterval(k: number, n: number, z = Z_95): Interval | null {
  if (!Number.isInteger(k) || !Number.isInteger(n) || k < 0 || k > n) throw new RangeError(`wilsonInterval: ${k} of ${n} is not a share`);
  if (n === 0) return null;
  const p = k / n;
  const z2 = z * z;
  const denominator = 1 + z2 / n;
  const centre = (p + z2 / (2 * n)) / denominator;
  const half = (z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / denominator;
  return [Math.max(0, centre - half), Math.min(1, centre + half)];
}

/** Options of `bootstrapMeanInterval`. */
interface BootstrapOptions {
  /** Resamples (default 2,000). */
  resamples?: number;
  /** Seed of the resampling (default 0): the same values and seed give the same interval. */
  seed?: number;
  /** Coverage (default 0.95). */
  level?: number;
}

/**
 * The percentile bootstrap interval of the mean of `values`: `resamples` resamples of n values
 * drawn with replacement (seeded, `seededRandom(seed, 'bootstrap')`), their means sorted, and the
 * (1 − level)/2 and (1 + level)/2 quantiles by linear interpolation between order statistics
 * (Hyndman & Fan's type 7, numpy's default).
 * @returns null for no values
 */
export function bootstrapMeanInterval(values: readonly number[], o: BootstrapOptions = {}): Interval | null {
  const n = values.length;
  if (n === 0) return null;
  const resamples = o.resamples ?? 2000;
  const level = o.level ?? 0.95;
  const random = seededRandom(o.seed ?? 0, 'bootstrap');
  const means = new Float64Array(resamples);
  for (let b = 0; b < resamples; b++) {
    let sum = 0;
    for (let i = 0; i < n; i++) sum += values[Math.floor(random() * n)];
    means[b] = sum / n;
  }
  means.sort();
  const quantile = (q: number) => {
    const h = (resamples - 1) * q;
    const lo = Math.floor(h);
    return means[lo] + (h - lo) * ((means[Math.min(lo + 1, resamples - 1)] ?? means[lo]) - means[lo]);
  };
  return [quantile((1 - level) / 2), quantile((1 + level) / 2)];
}
