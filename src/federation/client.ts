/**
 * The SPARQL client of the MCP tools, with bounds on time and answer size: queries to one
 * registered endpoint (SPARQL 1.1 Protocol, POST form, §2.1.2) and federated queries through the
 * local federation engine (Comunica 4.5.0 in a worker thread that is killed at the time limit,
 * `EngineWorker` of src/verify, restricted to the registered endpoints). Every tool of the server
 * (run_sparql_query, get_void_descriptions, other tool sets registered onto the same server)
 * sends its queries through one instance, so nothing reaches a host outside the registry.
 */
import { EngineWorker } from './comunica/worker.js';
import { parseSparqlJson, type SparqlRow } from '../describe/client.js';
import { findEndpoint, type EndpointRegistry } from './registry.js';

/**
 * The outcome of one query: the answer's text and media type, an error (with the HTTP status of
 * the endpoint when it answered), or the time limit. `requests` counts the HTTP requests sent
 * per endpoint URL; null when unknown (the federation engine was stopped at its time limit).
 */
export type SparqlOutcome =
  | { status: 'ok'; body: string; contentType: string; ms: number; requests: Record<string, number> }
  | { status: 'error'; error: string; httpStatus?: number; tooLarge?: true; ms: number; requests: Record<string, number> | null }
  | { status: 'timeout'; ms: number; requests: Record<string, number> | null };

/** An error of `BoundedSparqlClient.select`: the outcome that was not an answer. */
export class SparqlQueryError extends Error {
  constructor(
    message: string,
    readonly outcome: Exclude<SparqlOutcome, { status: 'ok' }>,
  ) {
    super(message);
    this.name = 'SparqlQueryError';
  }
}

/** Reads a response body up to `maxBytes` bytes. @returns the text, or undefined when it is larger */
async function boundedText(res: Response, maxBytes: number): Promise<string | undefined> {
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel();
      return undefined;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Sends queries to registered endpoints, directly or federated, within time and size bounds.
 * Create one per server; `close` stops the federation engine's thread.
 */
export class BoundedSparqlClient {
  /** The federation engines (started on first use), each with the number of queries it has in hand. */
  private engines: { worker: Promise<EngineWorker>; busy: number }[] | undefined;

  /**
   * @param registry the endpoints queries may go to
   * @param maxResultBytes largest answer read from an endpoint or the engine, in bytes
   * @param engineCount federation engine threads (each runs one query at a time; a federated
   *   query goes to the least busy one)
   */
  constructor(
    readonly registry: EndpointRegistry,
    readonly maxResultBytes: number,
    readonly engineCount = 1,
  ) {}

  private pool(): { worker: Promise<EngineWorker>; busy: number }[] {
    this.engines ??= Array.from({ length: Math.max(1, this.engineCount) }, () => ({ worker: EngineWorker.start(), busy: 0 }));
    return this.engines;
  }

  /**
   * Sends a query to one registered endpoint.
   * @param url the endpoint URL (must be registered)
   * @param accept the `Accept` header
   * @param timeoutMs time limit of the request, in ms; a request over it is aborted (`timeout`)
   * @returns never rejects; an unregistered URL is an `error` outcome without any request
   */
  async direct(url: string, query: string, accept: string, timeoutMs: number): Promise<SparqlOutcome> {
    const t0 = performance.now();
    const ms = () => performance.now() - t0;
    if (!findEndpoint(this.registry, url)) return { status: 'error', error: `refused to contact ${url}: not a registered endpoint`, ms: 0, requests: {} };
    const requests = { [url]: 1 };
    const signal = AbortSignal.timeout(timeoutMs);
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept },
        body: new URLSearchParams({ query }).toString(),
        signal,
      });
      const body = await boundedText(res, this.maxResultBytes);
      if (body === undefined) return { status: 'error', error: `the answer of ${url} is larger than ${this.maxResultBytes} bytes`, tooLarge: true, ms: ms(), requests };
      // fkgqa serve answers 503 when a query reaches its own time limit.
      if (res.status === 503 && /time limit/i.test(body)) return { status: 'timeout', ms: ms(), requests };
      if (!res.ok) return { status: 'error', error: body.trim().slice(0, 1000) || res.statusText, httpStatus: res.status, ms: ms(), requests };
      return { status: 'ok', body, contentType: (res.headers.get('content-type') ?? '').split(';')[0].trim(), ms: ms(), requests };
    } catch (e) {
      const err = e as Error;
      if (signal.aborted || err.name === 'TimeoutError' || err.name === 'AbortError') return { status: 'timeout', ms: ms(), requests };
      const cause = err.cause ? ` (${(err.cause as Error).message ?? err.cause})` : '';
      return { status: 'error', error: `cannot reach ${url}: ${err.message}${cause}`, ms: ms(), requests };
    }
  }

  /** Starts the federation engines' threads now (Comunica takes ~1–3 s to start) instead of at the first federated query. */
  async warm(): Promise<void> {
    await Promise.all(this.pool().map((e) => e.worker));
  }

  /**
   * Runs a query with SERVICE clauses on the local federation engine, which may contact only the
   * registered endpoints.
   * @param mediaType of the answer (`application/sparql-results+json`, `application/n-triples`, …)
   * @param timeoutMs time limit, in ms; the engine's thread is killed when it is reached (`timeout`)
   * @returns never rejects
   */
  async federated(query: string, mediaType: string, timeoutMs: number): Promise<SparqlOutcome> {
    const t0 = performance.now();
    const engine = this.pool().reduce((a, b) => (b.busy < a.busy ? b : a));
    engine.busy++;
    // The limit bounds the whole call, also the wait for the engine's thread (re)starting or
    // finishing an earlier query; a query still queued at the deadline is dropped, not run.
    let timer: NodeJS.Timeout | undefined;
    const limit = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs)));
    const deadline = Date.now() + timeoutMs;
    const run = engine.worker
      .then((w) => w.query({ query, sources: [], asAlgebra: true, timeoutMs, deadline, mediaType, allowedEndpoints: this.registry.endpoints.map((e) => e.url) }))
      .finally(() => engine.busy--);
    const o = await Promise.race([run, limit]).finally(() => clearTimeout(timer));
    if (o === 'timeout' || o.status === 'timeout') return { status: 'timeout', ms: performance.now() - t0, requests: null };
    if (o.status === 'error') return { status: 'error', error: o.error, ms: o.ms, requests: o.requests ?? null };
    if (Buffer.byteLength(o.body) > this.maxResultBytes) return { status: 'error', error: `the answer is larger than ${this.maxResultBytes} bytes`, tooLarge: true, ms: o.ms, requests: o.requests ?? {} };
    return { status: 'ok', body: o.body, contentType: mediaType, ms: o.ms, requests: o.requests ?? {} };
  }

  /**
   * A SELECT query on one registered endpoint, answered as rows (for tools that compute from
   * answers, e.g. VoID statistics or class/property indexes).
   * @throws SparqlQueryError on an error, a non-JSON answer or the time limit
   */
  async select(url: string, query: string, timeoutMs: number): Promise<SparqlRow[]> {
    const o = await this.direct(url, query, 'application/sparql-results+json', timeoutMs);
    if (o.status === 'timeout') throw new SparqlQueryError(`${url}: no answer within ${timeoutMs} ms`, o);
    if (o.status === 'error') throw new SparqlQueryError(`${url}: ${o.httpStatus ? `HTTP ${o.httpStatus}: ` : ''}${o.error}`, o);
    return parseSparqlJson(o.body, url);
  }

  /** Stops the federation engines' threads (if they were started). */
  async close(): Promise<void> {
    const engines = this.engines ?? [];
    this.engines = undefined;
    await Promise.all(engines.map(async (e) => (await e.worker).close()));
  }
}
