// @module-tag split-tiers (tests/tiers.ts: the tests tagged slow run in npm run test:slow)
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { verify } from '../src/index.js';
import { DEFAULT_PARTITION_OPTIONS, partition } from '../src/partition/index.js';
import { serve } from '../src/serve/server.js';
import { usableServe } from '../src/verify/verify.js';
import { DEMO, tmpDir } from './helpers.js';

/** `fkgqa verify` without --endpoints uses the serve running on the build, and says so. */
describe('verify: the running serve of the build by default', () => {
  let shards: string;
  beforeAll(async () => {
    shards = path.join(tmpDir('fkgqa-verify-serve-'), 'shards');
    await partition({ ...DEFAULT_PARTITION_OPTIONS, source: DEMO, out: shards, kgs: ['library'] });
  });

  it("uses the running serve's endpoints (its log shows the traffic), and starts its own when none runs", async () => {
    const file = path.join(`${shards}.state`, 'endpoints.json');
    const server = await serve({ shards });
    try {
      const lines: string[] = [];
      const r = await verify({ shards, queries: ['library/q2'], forms: ['federated'], progress: (l) => lines.push(l) });
      expect(r.endpoints).toBe(file);
      expect(r.totals.comunica.federated).toMatchObject({ identical: 1, different: 0 });
      expect(lines).toContain(`fkgqa verify: using the endpoints of the fkgqa serve running on this build (pid ${process.pid}, ${file})`);
      expect(Object.values(server.log.counts()).reduce((n, c) => n + c.total, 0)).toBeGreaterThan(4);
    } finally {
      await server.close();
    }
    const lines: string[] = [];
    const r = await verify({ shards, queries: ['library/q2'], forms: ['federated'], progress: (l) => lines.push(l) });
    expect(r.endpoints).toBe('started');
    expect(lines).toContain(`fkgqa verify: not using a running fkgqa serve (none runs on this build: no ${file}): starting the shard endpoints in this process`);
    expect(fs.existsSync(file)).toBe(false);
  });

  it('does not use a running serve with behaviour profiles, or one that lacks a graph', { tags: ['slow'] }, async () => {
    const server = await serve({ shards, profiles: { endpoints: { 'library-shard1': { maxRows: 1 } } } });
    try {
      expect(usableServe(shards, undefined, ['library'])).toEqual({ why: 'it has behaviour profiles, which change answers (give --endpoints to use it anyway)' });
      expect(usableServe(shards, undefined, ['library', 'observatory'])).toEqual({ why: 'it does not serve observatory' });
      const lines: string[] = [];
      const r = await verify({ shards, queries: ['library/q2'], forms: ['federated'], progress: (l) => lines.push(l) });
      expect(r.endpoints).toBe('started');
      expect(r.totals.comunica.federated).toMatchObject({ identical: 1, different: 0 });
      expect(lines.some((l) => l.includes('not using a running fkgqa serve (it has behaviour profiles'))).toBe(true);
      expect(server.log.counts()).toEqual({});
    } finally {
      await server.close();
    }
  });
});
