/**
 * Paging of tool answers: MCP clients cap tool output (e.g. "exceeds maximum
 * allowed tokens (25000)"), so run_sparql_query and the KGVoyager tools show one page of a list —
 * at most a number of rows from `offset`, and only as many whole rows as fit in a character
 * budget (`max_chars`) — and say where the next page starts: "rows 101–200 of 2345; pass
 * offset=200 to continue" (M exact when known, "M+" when only a lower bound is).
 */

/** The paging arguments of a tool call, with defaults applied. */
export interface PageArgs {
  /** Rows skipped (0-based). */
  offset: number;
  /** Characters of the whole answer. */
  maxChars: number;
}

/** Bounds of `max_chars` (McpLimits). */
export interface CharBounds {
  defaultMaxChars: number;
  minMaxChars: number;
  maxMaxChars: number;
}

/** The paging arguments from a tool's `offset` and `max_chars` (clamped to the bounds). */
export function pageArgs(args: { offset?: number; max_chars?: number }, b: CharBounds): PageArgs {
  const offset = Math.max(0, Math.floor(args.offset ?? 0));
  const maxChars = Math.min(Math.max(Math.floor(args.max_chars ?? b.defaultMaxChars), b.minMaxChars), b.maxMaxChars);
  return { offset, maxChars };
}

/** One page of a list. */
export interface Page<T> {
  items: T[];
  /** The page was cut by the character budget (not by the row limit or the end of the list). */
  cutByChars: boolean;
}

/**
 * Picks a page: the items from `offset` on, at most `maxItems`, and only as many as fit in
 * `budget` characters (each item counted as its `size` plus `sep`) — but at least one, so that
 * paging always moves on.
 */
export function pickPage<T>(all: readonly T[], offset: number, maxItems: number, budget: number, size: (x: T) => number, sep = 1): Page<T> {
  const items: T[] = [];
  let used = 0;
  let cutByChars = false;
  for (let i = offset; i < all.length && items.length < maxItems; i++) {
    const n = size(all[i]) + sep;
    if (items.length > 0 && used + n > budget) {
      cutByChars = true;
      break;
    }
    items.push(all[i]);
    used += n;
  }
  return { items, cutByChars };
}

/**
 * The note of a page of a list of `total` rows: `rows X–Y of M; pass offset=Y to continue`, or
 * `M rows` when the page holds them all, or a note that `offset` is past the end.
 * @param exact false when `total` is a lower bound (written `M+`)
 * @param unit `rows`, `triples`, `hits`, …
 * @param how extra words for the continuation, e.g. `graph="singer", ` before `offset=`
 */
export function pageNote(o: { offset: number; shown: number; total: number; exact?: boolean; unit?: string; cutByChars?: boolean; maxChars?: number; how?: string }): string {
  const unit = o.unit ?? 'rows';
  const of = `${o.total}${o.exact === false ? '+' : ''}`;
  if (o.shown === 0 && o.offset > 0) return `no ${unit} at offset=${o.offset}: there are ${of}`;
  const end = o.offset + o.shown;
  const more = end < o.total || o.exact === false;
  if (o.offset === 0 && !more) return `${o.total} ${o.total === 1 ? unit.replace(/s$/, '') : unit}`;
  const budget = o.cutByChars ? ` (max_chars=${o.maxChars} reached: pass a larger max_chars for more per page)` : '';
  return `${unit} ${o.shown === 0 ? 'none' : `${o.offset + 1}–${end}`} of ${of}${more ? `; pass ${o.how ?? ''}offset=${end} to continue` : ''}${budget}`;
}
