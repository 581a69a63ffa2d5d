/**
 * Reproducible pseudo-random numbers.
 */

/** FNV-1a over the UTF-16 code units of a string (32 bits). */
function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/**
 * A seeded pseudo-random generator (mulberry32) for one stream of draws named by a key (an endpoint
 * id for behaviour profiles, a graph for eval's per-graph sample): the same seed and key give the
 * same sequence of draws, so failures, jitter and samples are reproducible.
 * @returns a function giving numbers in [0, 1)
 */
export function seededRandom(seed: number, key: string): () => number {
  let a = (fnv1a(key) ^ seed) >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
