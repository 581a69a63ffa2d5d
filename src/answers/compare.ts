/**
 * Comparing two answers to the same query (SPARQL 1.1 JSON results): the answer on the unsharded
 * graph (gold) and a federated one. Rows are compared by variable name (engines order the columns
 * of `SELECT *` differently; oxigraph orders them alphabetically), as multisets unless the query orders its results, and
 * terms as values: numbers by numeric value (whole numbers exactly, others to 12 significant digits), plain and xsd:string literals alike, language tags
 * case-insensitively (sparqljs, N3 and oxigraph rewrite language-tag case and numeric literals); blank nodes all compare equal (labels are local to an answer).
 * A GROUP_CONCAT of the query's projection is compared as the multiset of its parts (its value split at
 * its separator, the parts sorted): SPARQL 1.1 (18.5.1.7) leaves the order of the concatenated values
 * to the engine, and oxigraph, Comunica and Jena each have their own (`groupConcatSeparators`).
 */
import type { SparqlResults, SparqlTerm } from '../sparql/results.js';
import { XSD, XSD_NUMERIC_TYPES } from '../common/vocab.js';

/** Significant digits decimals and doubles are compared to (AVG and division differ in the last digits between engines). */
const NUMBER_DIGITS = 12;

/** The lexical forms of XSD numbers (XML Schema 1.1 Part 2: integer, decimal, double), white space around allowed. */
const INTEGER_LEXICAL = /^\s*\+?(-?\d+)(?:\.0*)?\s*$/;
const NUMBER_LEXICAL = /^\s*(?:[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|[+-]?INF|NaN)\s*$/;

/**
 * The comparison key of one term (see the module comment). A number written as a whole number (`12`, `12.0`) is
 * compared exactly (`#1000000000001`, whatever its size: a COUNT or SUM past 2^53 or 10^12 is not rounded);
 * any other number to `NUMBER_DIGITS` significant digits, so that `#3` is also the key of `3.0` and `3e0`
 * (engines write the same value in other forms). An ill-typed number (`""` or `"0x10"` as xsd:integer)
 * keeps its literal: it equals no number.
 */
export function termKey(t: SparqlTerm): string {
  if (t.type === 'uri') return `<${t.value}>`;
  if (t.type === 'bnode') return '_:';
  if (t['xml:lang']) return `"${t.value}"@${t['xml:lang'].toLowerCase()}`;
  const dt = t.datatype;
  if (dt && XSD_NUMERIC_TYPES.has(dt) && NUMBER_LEXICAL.test(t.value)) {
    // Within 12 digits the exact key is the rounded one: integers stay equal to decimals and doubles of their value.
    const whole = INTEGER_LEXICAL.exec(t.value);
    if (whole) return `#${BigInt(whole[1]).toString()}`;
    const n = Number(t.value);
    if (Number.isFinite(n)) return `#${n === 0 ? '0' : Number(n.toPrecision(NUMBER_DIGITS)).toString()}`;
    return `#${t.value.trim()}`;
  }
  if (!dt || dt === `${XSD}string`) return `"${t.value}"`;
  return `"${t.value}"^^<${dt}>`;
}

/** The separator of each GROUP_CONCAT variable of a query's projection (`groupConcatSeparators` of src/sparql/inspect.ts). */
export type GroupConcats = Record<string, string>;

/**
 * The comparison key of one row: its bound variables in name order with their term keys; the
 * literal of a GROUP_CONCAT variable (`concats`) with its parts sorted (module comment; an empty
 * separator cannot be split: compared as it is).
 */
export function rowKey(row: Record<string, SparqlTerm>, concats: GroupConcats = {}): string {
  return Object.keys(row)
    .sort()
    .map((v) => `?${v}=${termKey(sortedParts(row[v], concats[v]))}`)
    .join(' ');
}

/** A GROUP_CONCAT's literal with its parts (split at `separator`) sorted; any other term as it is. */
function sortedParts(t: SparqlTerm, separator: string | undefined): SparqlTerm {
  if (!separator || t.type !== 'literal') return t;
  return { ...t, value: t.value.split(separator).sort().join(separator) };
}

/** How two answers compare. */
export interface Comparison {
  identical: boolean;
  /** Why not identical, in words (absent when identical). */
  reason?: string;
  /** Rows of the gold answer. */
  goldRows: number;
  /** Rows of the other answer. */
  rows: number;
  /** Rows in gold but not in the other answer (multiset difference), up to `examples` of them. */
  missing: string[];
  missingCount: number;
  /** Rows in the other answer but not in gold, up to `examples` of them. */
  extra: string[];
  extraCount: number;
  /** Same rows, different order (only when `ordered`). */
  orderOnly?: boolean;
}

function multiset(keys: string[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const k of keys) m.set(k, (m.get(k) ?? 0) + 1);
  return m;
}

function minus(a: Map<string, number>, b: Map<string, number>): { keys: string[]; count: number } {
  const keys: string[] = [];
  let count = 0;
  for (const [k, n] of a) {
    const d = n - (b.get(k) ?? 0);
    if (d > 0) {
      count += d;
      keys.push(d > 1 ? `${k} (×${d})` : k);
    }
  }
  return { keys: keys.sort(), count };
}

/**
 * Compares an answer with the gold answer.
 * @param gold the answer on the unsharded graph
 * @param other the federated answer
 * @param ordered compare row order too (the query has a top-level ORDER BY)
 * @param examples how many missing/extra rows to keep for the report
 * @param concats the query's GROUP_CONCAT variables and their separators (`groupConcatSeparators`), compared as multisets of parts
 */
export function compareResults(gold: SparqlResults, other: SparqlResults, ordered: boolean, examples = 5, concats: GroupConcats = {}): Comparison {
  const base = { missing: [], missingCount: 0, extra: [], extraCount: 0 };
  if (gold.boolean !== undefined || other.boolean !== undefined) {
    const same = gold.boolean === other.boolean;
    return { ...base, identical: same, reason: same ? undefined : `ASK answered ${other.boolean}, gold ${gold.boolean}`, goldRows: 1, rows: 1 };
  }
  const g = (gold.results?.bindings ?? []).map((r) => rowKey(r, concats));
  const o = (other.results?.bindings ?? []).map((r) => rowKey(r, concats));
  const gv = [...(gold.head.vars ?? [])].sort();
  const ov = [...(other.head.vars ?? [])].sort();
  // Variables are compared when both answers have rows: for an empty answer the head is all there
  // is, and Comunica 4.5.0 sends an empty head when it has pruned every source (docs/serving-reference.md).
  const varsDiffer = g.length > 0 && o.length > 0 && gv.join(' ') !== ov.join(' ');
  const missing = minus(multiset(g), multiset(o));
  const extra = minus(multiset(o), multiset(g));
  const result: Comparison = {
    identical: false,
    goldRows: g.length,
    rows: o.length,
    missing: missing.keys.slice(0, examples),
    missingCount: missing.count,
    extra: extra.keys.slice(0, examples),
    extraCount: extra.count,
  };
  if (varsDiffer) return { ...result, reason: `variables differ: gold (${gv.join(' ')}), answer (${ov.join(' ')})` };
  if (missing.count > 0 || extra.count > 0) {
    return { ...result, reason: `${missing.count} of ${g.length} gold rows missing, ${extra.count} extra rows` };
  }
  if (ordered && g.some((k, i) => k !== o[i])) return { ...result, orderOnly: true, reason: 'same rows in another order (the query orders its results)' };
  return { ...result, identical: true };
}
