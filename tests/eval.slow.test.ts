/**
 * The long federation run of the scripted agents (long federation runs go to
 * `npm run test:slow`): the oracle, trivial and single agents on every distinct gold query of the
 * demo graph library, each query through the federation engine, then scored. tests/eval.test.ts
 * keeps the same check on two gold queries (library/q1, library/q2).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { serve, type ShardServer } from '../src/serve/server.js';
import { scriptedAgentsCheck } from './eval-scripted.js';
import { demoBuild, tmpDir } from './helpers.js';

const dir = tmpDir('fkgqa-eval-slow-');
let build: string;
let endpointsFile: string;
let server: ShardServer;

beforeAll(async () => {
  // The demo build with the gold answers of fkgqa stats (made here: test:slow has no global setup).
  build = await demoBuild(dir, { gold: true });
  server = await serve({ shards: build, kgs: ['library'], writeFiles: false });
  endpointsFile = path.join(dir, 'endpoints.json');
  fs.writeFileSync(endpointsFile, JSON.stringify(server.endpointsFile()));
}, 300_000);

afterAll(async () => {
  await server?.close();
});

describe('eval / scripted agents on the demo build (slow: every distinct gold query of library)', () => {
  it('oracle: all correct, every needed shard, no trivial federation; trivial: all correct, all shards', async () => {
    // The largest time limit `fkgqa mcp --timeout` takes: for hangs, not for timing (see tests/eval.test.ts).
    await scriptedAgentsCheck({ build, endpointsFile, out: path.join(dir, 'scripted.jsonl'), timeoutMs: 100_000 });
  }, 600_000);
});
