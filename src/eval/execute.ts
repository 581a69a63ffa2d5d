/**
 * Executing an agent's query the way SPARQL-MCP routes it (FKGQA paper, section 3): the query must
 * name its endpoints in SERVICE clauses; with exactly one SERVICE target whose group is the whole
 * WHERE, the wrapper is stripped and the body sent to that endpoint (SPARQL 1.1 Protocol, POST);
 * otherwise the query goes to the local federation engine (Comunica 4.5 in a worker thread, killed
 * at the time limit, src/verify/engine-worker.ts). Only registered endpoints may be named.
 *
 * The harness uses it to execute the submitted query in full (the answer that is scored), and the
 * in-process tool provider (`--tools direct`) uses it for run_sparql_query.
 */
import sparqljs from 'sparqljs';
import { parseQuery } from '../analyze/parse.js';
import { MEDIA } from '../serve/protocol.js';
import type { JsonResults } from '../serve/results.js';
import { EngineWorker } from '../verify/engine-worker.js';
import { serviceTargets } from '../score/validity.js';

/** The outcome of one execution. */
export interface Execution {
  status: 'ok' | 'error' | 'timeout';
  ms: number;
  results?: JsonResults;
  rows?: number;
  error?: string;
  route?: 'direct' | 'federation';
  /** SERVICE targets of the query (empty when it does not parse). */
  endpoints: string[];
}

/**
 * The lone SERVICE of a query: when the WHERE is exactly one SERVICE group, the query with the
 * wrapper removed and its target; otherwise undefined.
 */
export function loneService(ast: sparqljs.SparqlQuery): { target: string; query: string } | undefined {
  if (ast.type !== 'query') return undefined;
  const where = ast.where ?? [];
  const only = where.length === 1 ? (where[0] as { type: string; name?: { termType: string; value: string }; patterns?: sparqljs.Pattern[]; silent?: boolean }) : undefined;
  if (!only || only.type !== 'service' || only.name?.termType !== 'NamedNode' || only.silent) return undefined;
  const stripped = { ...ast, where: only.patterns, prefixes: {} } as sparqljs.SparqlQuery;
  return { target: only.name.value, query: new sparqljs.Generator({ allPrefixes: false }).stringify(stripped) };
}

/** Runs agent queries against registered endpoints (module comment). Call `close` at the end. */
export class QueryExecutor {
  private engine: Promise<EngineWorker> | undefined;

  /**
   * @param endpoints the registered endpoint URLs (SERVICE targets outside them are refused)
   * @param timeoutMs time limit of one query, in ms
   */
  constructor(
    readonly endpoints: string[],
    readonly timeoutMs = 30_000,
  ) {}

  /** Executes a query; never throws (errors are outcomes, written for an agent to act on). */
  async run(query: string, timeoutMs = this.timeoutMs): Promise<Execution> {
    const t0 = performance.now();
    const ms = () => performance.now() - t0;
    const parsed = parseQuery(query, undefined);
    if (!parsed.ok) return { status: 'error', error: `the query does not parse: ${parsed.error}`, ms: ms(), endpoints: [] };
    if (parsed.query.ast.type !== 'query') return { status: 'error', error: 'only queries are allowed (no SPARQL Update)', ms: ms(), endpoints: [] };
    const targets = serviceTargets(query) ?? [];
    if (targets.length === 0) return { status: 'error', error: `the query names no endpoint: wrap its patterns in SERVICE <endpoint> { … }; endpoints: ${this.endpoints.join(' ')}`, ms: ms(), endpoints: [] };
    const unknown = targets.filter((t) => !this.endpoints.includes(t));
    if (unknown.length > 0) return { status: 'error', error: `unknown endpoint ${unknown.join(', ')}; known endpoints: ${this.endpoints.join(' ')}`, ms: ms(), endpoints: targets };
    const lone = loneService(parsed.query.ast);
    if (lone) {
      try {
        const res = await fetch(lone.target, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', accept: MEDIA.json },
          body: new URLSearchParams({ query: lone.query }),
          signal: AbortSignal.timeout(timeoutMs),
        });
        const body = await res.text();
        if (!res.ok) return { status: res.status === 503 && /time limit|timeout/i.test(body) ? 'timeout' : 'error', error: `endpoint ${lone.target} answered ${res.status}: ${body.slice(0, 500)}`, ms: ms(), route: 'direct', endpoints: targets };
        const results = JSON.parse(body) as JsonResults;
        return { status: 'ok', results, rows: rowsOf(results), ms: ms(), route: 'direct', endpoints: targets };
      } catch (e) {
        const timeout = (e as Error).name === 'TimeoutError';
        return { status: timeout ? 'timeout' : 'error', error: timeout ? `time limit of ${timeoutMs} ms exceeded` : `endpoint ${lone.target}: ${(e as Error).message}`, ms: ms(), route: 'direct', endpoints: targets };
      }
    }
    this.engine ??= EngineWorker.start();
    const engine = await this.engine;
    const o = await engine.query({ query: parsed.query.normalized, sources: [], asAlgebra: true, timeoutMs });
    if (o.status === 'ok') {
      const results = JSON.parse(o.body) as JsonResults;
      return { status: 'ok', results, rows: rowsOf(results), ms: ms(), route: 'federation', endpoints: targets };
    }
    return { status: o.status, error: o.status === 'timeout' ? `time limit of ${timeoutMs} ms exceeded` : o.error, ms: ms(), route: 'federation', endpoints: targets };
  }

  /** Stops the federation engine, if it was started. */
  async close(): Promise<void> {
    if (this.engine) await (await this.engine).close();
  }
}

/** Rows of an answer (1 for ASK). */
export function rowsOf(r: JsonResults): number {
  return r.boolean !== undefined ? 1 : (r.results?.bindings.length ?? 0);
}
