/**
 * How the KGVoyager tools talk to endpoints: one small function, a SELECT query to one endpoint
 * with a time limit and a row limit, so that the tools do not depend on which client `fkgqa mcp`
 * uses (and tests or the retrieval benchmark can answer from in-process stores).
 */
import { HttpSparqlClient } from '../../describe/client.js';
import { compactTerm, type SparqlRow, type SparqlTerm } from '../../sparql/results.js';

/** Bounds of one SELECT request. */
export interface SelectBounds {
  /** Time limit of the request in ms. */
  timeoutMs: number;
  /** Largest number of rows returned (the rest is dropped; callers put a LIMIT in the query too). */
  maxRows: number;
}

/**
 * Runs a SPARQL 1.1 SELECT query at one endpoint.
 * @param url the endpoint URL (as in the registry)
 * @returns the solutions (at most `maxRows`)
 * @throws Error naming the endpoint when the query fails or times out (a timeout is never an empty result)
 */
export type SparqlSelect = (url: string, query: string, bounds: SelectBounds) => Promise<SparqlRow[]>;

/**
 * The default `SparqlSelect`: the SPARQL 1.1 Protocol over HTTP POST with JSON results, through
 * fkgqa's `HttpSparqlClient` (src/describe/client.ts), one client per request.
 */
export const httpSelect: SparqlSelect = async (url, query, bounds) => {
  const rows = await new HttpSparqlClient(url, bounds.timeoutMs).select(query);
  return rows.length > bounds.maxRows ? rows.slice(0, bounds.maxRows) : rows;
};

/** An IRI as SPARQL text (`<iri>`); `>` and other characters not allowed in an IRIREF are %-escaped. */
export function iriRef(iri: string): string {
  return `<${iri.replace(/[\u0000-\u0020<>"{}|^`\\]/g, (c) => encodeURIComponent(c))}>`;
}

/** A string as a SPARQL string literal (`"…"` with `\\`, `\"`, newline and tab escaped). */
export function stringLiteral(s: string): string {
  return `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n').replace(/\r/g, '\\r').replace(/\t/g, '\\t')}"`;
}

/** A term of a result row in N-Triples-like text for an LLM: `<iri>`, `"lexical"`, `"5"^^xsd:integer`, `_:b`. */
export function termText(t: SparqlTerm | undefined, maxChars = 200): string {
  const XSD = 'http://www.w3.org/2001/XMLSchema#';
  return t ? compactTerm(t, { maxChars, datatype: (dt) => (dt.startsWith(XSD) ? `xsd:${dt.slice(XSD.length)}` : `<${dt}>`) }) : '(unbound)';
}

/**
 * Runs tasks with at most `limit` at a time, results in input order (settled: a failed task gives
 * its error, the others still run).
 */
export async function settleAll<T, R>(items: readonly T[], limit: number, task: (item: T) => Promise<R>): Promise<PromiseSettledResult<R>[]> {
  const out: PromiseSettledResult<R>[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      try {
        out[i] = { status: 'fulfilled', value: await task(items[i]) };
      } catch (e) {
        out[i] = { status: 'rejected', reason: e };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}
