/**
 * Whether an error of oxigraph leaves its WebAssembly instance broken. A module of its own, without
 * imports, so that worker threads can use it without loading (and compiling) oxigraph's node build.
 */

/**
 * True when an error means the oxigraph WebAssembly instance can no longer be trusted: a trap
 * (`WebAssembly.RuntimeError`: "memory access out of bounds", `unreachable`), a Rust panic, or a
 * stack overflow (`RangeError: Maximum call stack size exceeded`). Observed with oxigraph 0.5.11:
 * about 700 nested `{}` or 3,000 chained `!`/`+` trap, and every later query of the instance then
 * fails with "memory access out of bounds".
 */
export function isEngineFault(e: unknown): boolean {
  if (e instanceof WebAssembly.RuntimeError || e instanceof RangeError) return true;
  const message = e instanceof Error ? e.message : String(e);
  return /memory access out of bounds|unreachable|panicked|call stack/i.test(message);
}
