/**
 * vitest globalSetup: the demo build that many test files read, made once per run instead of once
 * per file (issue 16 item 7). The build (default options, VoID included) goes to a temporary folder
 * and its gold answers (`fkgqa stats`, 20 s per query) to its state folder beside it; both are
 * read-only templates: a test file takes its own copy (`demoBuild` in tests/helpers.ts), so that
 * what it writes (a serve's endpoints file and lock, stored answers) stays its own.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { DEFAULT_PARTITION_OPTIONS, partition } from '../src/partition/index.js';
import { computeStats } from '../src/report/stats.js';
import { DEMO, DEMO_GOLD_TIMEOUT_MS } from './helpers.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The demo build made by tests/global-setup.ts; its gold answers are in `<demoBuild>.state`. */
    demoBuild: string;
  }
}

export default async function setup(project: TestProject): Promise<() => void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fkgqa-demo-template-'));
  const build = path.join(dir, 'shards');
  await partition({ ...DEFAULT_PARTITION_OPTIONS, source: DEMO, out: build });
  await computeStats({ shards: build, timeoutMs: DEMO_GOLD_TIMEOUT_MS });
  project.provide('demoBuild', build);
  return () => fs.rmSync(dir, { recursive: true, force: true });
}
