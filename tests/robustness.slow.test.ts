/**
 * `fkgqa partition` interrupted (a build of the real corpus, stopped once its second graph starts:
 * 15 s of wall at load 10, so in `npm run test:slow`).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { HAS_SPIDER, ROOT, SPIDER, tmpDir } from './helpers.js';

const entries = (dir: string) => (fs.existsSync(dir) ? fs.readdirSync(dir).sort() : []);

describe.skipIf(!HAS_SPIDER)('robustness / interruption', () => {
  it('removes the staging directory when interrupted (SIGINT) and exits 130', async () => {
    const parent = tmpDir();
    const child = spawn(process.execPath, [path.join(ROOT, 'bin/fkgqa.js'), 'partition', '--source', SPIDER, '--out', path.join(parent, 'x')]);
    let stderr = '';
    const code = await new Promise<number | null>((resolve) => {
      child.stderr.on('data', (d) => {
        stderr += d;
        if (stderr.includes('[2/20]') && !child.killed) child.kill('SIGINT');
      });
      child.on('exit', (c) => resolve(c));
    });
    expect(code).toBe(130);
    expect(stderr).toContain('interrupted (SIGINT); nothing was written');
    expect(entries(parent)).toEqual([]);
  });
});
