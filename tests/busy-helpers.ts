/**
 * Test helpers for serve's busy verdicts (serve-limits.test.ts, federation-busy.test.ts): keep an
 * endpoint's worker busy with a heavy query while a test runs, waiting on the server's own state.
 */
import { expect } from 'vitest';
import type { ShardServer } from '../src/serve/server.js';
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
  const heavy = fetch(server.endpoint(endpoint)!.url, { method: 'POST', headers: { 'Content-Type': MEDIA.sparqlQuery, Accept: MEDIA.json }, body: HEAVY, signal: ac.signal }).catch((e: Error) => e.name);
  await until(() => server.queriesRunning().includes(endpoint));
  try {
    await fn();
  } finally {
    ac.abort();
    expect(await heavy).toBe('AbortError');
    await until(() => server.queriesRunning().length === 0);
  }
}
