/**
 * Test helpers for serve's busy verdicts (serve-limits.slow.test.ts, federation-busy.slow.test.ts): keep an
 * endpoint's worker busy with a heavy query while a test runs, waiting on the server's own state.
 */
import { expect } from 'vitest';
import type { ShardServer } from '../src/serve/server.js';
import type { FederationEngineName } from '../src/federation/engines.js';
import { serve } from '../src/serve/server.js';
import { demoBuild, tmpDir } from './helpers.js';
import { registryFromEndpointsValue } from '../src/federation/registry.js';
import { runSparqlQuery } from '../src/mcp/run-query.js';
import { createMcpContext } from '../src/mcp/server.js';
import { MEDIA } from '../src/sparql/protocol.js';

/** A COUNT over 8 unconnected triple patterns: runs until its time limit on any shard. */
export const HEAVY = `SELECT (COUNT(*) AS ?n) WHERE { ${Array.from({ length: 8 }, (_, i) => `?s${i} ?p${i} ?o${i} .`).join(' ')} }`;

/** Waits (on the server's own state, checked every 20 ms) until `cond` holds. */
export async function until(cond: () => boolean): Promise<void> {
  while (!cond()) await new Promise((r) => setTimeout(r, 20));
}

/**
 * Runs HEAVY on `endpoint` of `server` (directly, as another agent would) until `fn` is done, then
 * stops it (its client goes away) and waits until no query runs.
 */
export async function behindHeavy(server: ShardServer, endpoint: string, fn: () => Promise<void>): Promise<void> {
  const ac = new AbortController();
  const heavy = fetch(server.endpoint(endpoint)!.url, { method: 'POST', headers: { 'Content-Type': MEDIA.sparqlQuery, Accept: MEDIA.json }, body: HEAVY, signal: ac.signal }).catch(
    (e: Error) => e.name,
  );
  await until(() => server.queriesRunning().includes(endpoint));
  try {
    await fn();
  } finally {
    ac.abort();
    expect(await heavy).toBe('AbortError');
    await until(() => server.queriesRunning().length === 0);
  }
}

const COUNT = 'SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }';
/** A cross product of 8 triple patterns: hours in oxigraph on library-shard1. */
export const HEAVY_PATTERN = Array.from({ length: 8 }, (_, i) => `?s${i} ?p${i} ?o${i} .`).join(' ');

/** What `busyInsideFederatedQuery` checks (the test's name after the engine's). */
export const BUSY_INSIDE_FEDERATED_QUERY = "busy (class endpoint, infrastructure true, the shard named) when its shards wait behind another query; the query's own time limit when it ran at once";

/**
 * run_sparql_query through `engine` while library-shard1 runs HEAVY: the shards the query waits for
 * answer 503 busy (the endpoint's fault, named); a query that ran at once and was too slow is its own
 * time limit. `s` serves the demo's library with one worker and no takeover (tests/federation-busy*.test.ts).
 */
export async function busyInsideFederatedQuery(s: ShardServer, engine: FederationEngineName): Promise<void> {
  const ctx = createMcpContext({ registry: registryFromEndpointsValue(s.endpointsFile(), 'test'), build: null, state: null, callLog: null, federationEngine: engine });
  const ep = (n: number) => s.endpoint(`library-shard${n}`)!.url;
  try {
    // The engine is up and every endpoint loaded (the fresh worker's loads are the endpoint's waits).
    const warm = await runSparqlQuery(ctx, { query: `SELECT * WHERE { SERVICE <${ep(2)}> { ?s ?p ?o } SERVICE <${ep(3)}> { ?s ?q ?t } } LIMIT 1`, timeout_ms: 60_000 });
    expect(warm.isError ?? false).toBe(false);
    for (const n of [1, 2, 3, 4]) expect((await fetch(ep(n), { method: 'POST', headers: { 'Content-Type': MEDIA.sparqlQuery, Accept: MEDIA.json }, body: COUNT })).status).toBe(200);
    await behindHeavy(s, 'library-shard1', async () => {
      const t0 = performance.now();
      const r = await runSparqlQuery(ctx, { query: `SELECT * WHERE { SERVICE <${ep(2)}> { ?s ?p ?o } SERVICE <${ep(3)}> { ?s ?q ?t } }`, timeout_ms: 3000 });
      expect([r.isError, r.errorClass, r.error?.infrastructure]).toEqual([true, 'endpoint', true]);
      expect([ep(2), ep(3)]).toContain(r.error?.endpoint);
      expect(r.text).toMatch(/^Error \(endpoint\): the endpoint \S+ was busy \(HTTP 503, busy; by=request; waited=\d+; ms=\d+\): the query waited \d+ ms there behind other queries/);
      expect(r.text).toContain('not a fault of the query, and not an empty result (the answer is unknown). Retry it.');
      // Answered at the limit the shards were sent, within the query's own.
      expect(performance.now() - t0).toBeLessThan(3000 + 2000);
    });
    // The same time limit on a query that runs at once but is too slow (the shard counts, so it answers nothing before its
    // limit and then 503 time-limit; by=request): the query's own time limit (the agent's), not the endpoint's fault.
    // (Stopping the heavy query replaced the worker: the fresh one loads each endpoint first, a wait of the endpoint's.)
    for (const n of [1, 2, 3, 4]) expect((await fetch(ep(n), { method: 'POST', headers: { 'Content-Type': MEDIA.sparqlQuery, Accept: MEDIA.json }, body: COUNT })).status).toBe(200);
    const slow = await runSparqlQuery(ctx, { query: `SELECT * WHERE { SERVICE <${ep(1)}> { SELECT (COUNT(*) AS ?n) WHERE { ${HEAVY_PATTERN} } } SERVICE <${ep(2)}> { ?x ?y ?z } }`, timeout_ms: 3000 });
    expect([slow.isError, slow.errorClass, slow.error?.infrastructure]).toEqual([true, 'timeout', false]);
  } finally {
    await ctx.close();
  }
}

/**
 * The demo's library served with one worker holding every endpoint and no takeover (slowMs 10 min):
 * a query behind a slow one must wait (tests/federation-busy*.test.ts).
 */
export async function serveOneWorker(): Promise<ShardServer> {
  return serve({ shards: await demoBuild(tmpDir('fkgqa-fed-busy-')), kgs: ['library'], timeoutMs: 120_000, workers: 1, slowMs: 600_000, writeFiles: false });
}
