/**
 * jena's case of "a busy shard endpoint inside a federated query (run_sparql_query)" (a JVM's start and 10 s of wall go to `npm run test:slow`); tests/federation-busy.test.ts keeps
 * comunica's (the same function, busy-helpers.ts).
 */
import { afterAll, beforeAll, describe, it } from 'vitest';
import type { ShardServer } from '../src/serve/server.js';
import { BUSY_INSIDE_FEDERATED_QUERY, busyInsideFederatedQuery, serveOneWorker } from './busy-helpers.js';
import { engineTestsRun } from './helpers.js';

const JENA = await engineTestsRun('jena');

let s: ShardServer;
beforeAll(async () => {
  s = await serveOneWorker();
}, 120_000);
afterAll(async () => {
  await s?.close();
});

describe('a busy shard endpoint inside a federated query (run_sparql_query)', () => {
  it.skipIf(!JENA)(`jena: ${BUSY_INSIDE_FEDERATED_QUERY}`, () => busyInsideFederatedQuery(s, 'jena'), 180_000);
});
