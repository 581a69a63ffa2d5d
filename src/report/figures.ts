/** Small statistics helpers shared by the reports. */

/** Mean, median, min and max of a list of numbers (all NaN for an empty list). */
export interface Distribution {
  mean: number;
  median: number;
  min: number;
  max: number;
}

export function distribution(xs: number[]): Distribution {
  if (xs.length === 0) return { mean: NaN, median: NaN, min: NaN, max: NaN };
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return {
    mean: s.reduce((a, b) => a + b, 0) / s.length,
    median: s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2,
    min: s[0],
    max: s[s.length - 1],
  };
}

/** A share as a percentage (0 for an empty denominator). */
export function percent(part: number, whole: number): number {
  return whole === 0 ? 0 : (100 * part) / whole;
}

/** A share with its count and denominator, and the percentage (rounded to 2 decimals). */
export interface Share {
  count: number;
  of: number;
  percent: number;
}

/** `count` of `of` as a `Share` (0 % for an empty denominator). */
export const share = (count: number, of: number): Share => ({ count, of, percent: round(percent(count, of)) });

/** Coefficient of variation (population standard deviation / mean) of a list, 0 for fewer than 2 values. */
export function coefficientOfVariation(xs: number[]): number {
  if (xs.length < 2) return 0;
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  if (mean === 0) return 0;
  const variance = xs.reduce((a, b) => a + (b - mean) ** 2, 0) / xs.length;
  return Math.sqrt(variance) / mean;
}

/** Rounds to `digits` decimals for display and JSON (avoids 0.30000000000000004). */
export function round(x: number, digits = 2): number {
  if (!Number.isFinite(x)) return x;
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}
