/**
 * jena's case of "a busy shard endpoint inside a federated query (run_sparql_query)" (issue 16 item
 * 7: a JVM's start and 10 s of wall go to `npm run test:slow`); tests/federation-busy.test.ts keeps
 * comunica's (the same function, busy-helpers.ts).
 */
import { afterAll, beforeAll, describe, it } from 'vitest';
import { serve, type ShardServer } from '../src/serve/server.js';
import { BUSY_INSIDE_FEDERATED_QUERY, busyInsideFederatedQuery } from './busy-helpers.js';
import { demoBuild, engineTestsRun, tmpDir } from './helpers.js';

const JENA = await engineTestsRun('jena');

let s: ShardServer;
beforeAll(async () => {
  // One worker holds every library endpoint and no takeover happens (slowMs 10 min): a query behind a slow one must wait.
  s = await serve({ shards: await demoBuild(tmpDir('fkgqa-fed-busy-')), kgs: ['library'], timeoutMs: 120_000, workers: 1, slowMs: 600_000, writeFiles: false });
}, 120_000);
afterAll(async () => {
  await s?.close();
});

describe('a busy shard endpoint inside a federated query (run_sparql_query)', () => {
  it.skipIf(!JENA)(`jena: ${BUSY_INSIDE_FEDERATED_QUERY}`, () => busyInsideFederatedQuery(s, 'jena'), 180_000);
});
