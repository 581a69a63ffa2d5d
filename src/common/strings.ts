/** A copy of a string that does not keep a larger parent string alive (V8 sliced strings). */
export function detach(s: string): string {
  return (' ' + s).slice(1);
}
