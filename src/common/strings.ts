/** A copy of a string that does not keep a larger parent string alive (V8 sliced strings). */
export function detach(s: string): string {
  return (' ' + s).slice(1);
}

/**
 * A count and its noun, singular for exactly 1: `counted(1, 'graph')` is `1 graph`,
 * `counted(2, 'graph')` is `2 graphs`, `counted(3, 'query', 'queries')` is `3 queries`.
 * @param n the count
 * @param singular the noun for one
 * @param plural the noun for any other count (default: `singular` + `s`)
 */
export function counted(n: number, singular: string, plural = `${singular}s`): string {
  return `${n} ${n === 1 ? singular : plural}`;
}

/** Compares strings by code point (not locale), for sorting that is the same everywhere. */
export const byCodePoint = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** A duration in ms as seconds with one decimal: `seconds(1234)` is `1.2 s`. */
export const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** Escapes text for HTML content and attribute values (`&`, `<`, `>`, `"`). */
export const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
