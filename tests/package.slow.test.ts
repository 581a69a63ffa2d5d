import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { ROOT, tmpDir } from './helpers.js';

/**
 * The library as a user type-checks it (a tsc start is 4 s of CPU, so in `npm run test:slow`): a
 * project whose node_modules/fkgqa is this package (a symlink, as `npm link` or a local install
 * makes it), importing `from 'fkgqa'`, compiled by TypeScript against the published types.
 * tests/package.test.ts runs the package by Node.
 */
describe("the library entry point: import { … } from 'fkgqa' (types)", () => {
  const user = tmpDir('fkgqa-user-');
  fs.mkdirSync(path.join(user, 'node_modules'));
  fs.symlinkSync(ROOT, path.join(user, 'node_modules', 'fkgqa'), 'dir');
  fs.writeFileSync(path.join(user, 'package.json'), JSON.stringify({ name: 'user', type: 'module' }));

  it('type-checks a user program against the typed option objects (and refuses a wrong option)', () => {
    const good = `import { partition, stats, questions, describe, serve, verify, mcp, evaluate, score, FEDERATION_ENGINES, type PartitionInput, type VerifyOptions } from 'fkgqa';
const p: PartitionInput = { source: 'src', out: 'out', buckets: 3, preset: 'paper' };
const v: VerifyOptions = { shards: 'out', kgs: ['library'], federationEngine: FEDERATION_ENGINES[0] };
export const calls = [partition(p), stats({ shards: 'out', timeoutMs: 1000 }), questions({ shards: 'out' }), describe({ dir: 'out' }), serve({ shards: 'out' }), verify(v), mcp({ registry: { urls: ['http://127.0.0.1:9/sparql'] } }), evaluate({ shards: 'out', setup: 'baseline', agent: 'oracle', out: 'runs.jsonl' }), score({ runs: ['runs.jsonl'], shards: 'out' })];
`;
    fs.writeFileSync(path.join(user, 'good.ts'), good);
    fs.writeFileSync(path.join(user, 'bad.ts'), `import { partition } from 'fkgqa';\nexport const x = partition({ source: 'src', out: 'out', bukets: 3 });\n`);
    const tsc = path.join(ROOT, 'node_modules/typescript/bin/tsc');
    const args = [
      '--noEmit',
      '--strict',
      '--module',
      'nodenext',
      '--moduleResolution',
      'nodenext',
      '--target',
      'es2022',
      '--skipLibCheck',
      '--types',
      'node',
      '--typeRoots',
      path.join(ROOT, 'node_modules/@types'),
    ];
    // One tsc over both programs (a tsc start is 4 s of CPU): every error is bad.ts's, none good.ts's.
    const r = spawnSync(process.execPath, [tsc, ...args, 'good.ts', 'bad.ts'], { cwd: user, encoding: 'utf8' });
    expect(r.status).toBe(2);
    expect(r.stderr).toBe('');
    const errors = r.stdout.split('\n').filter((l) => /^\S+\(\d+,\d+\): error/.test(l));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/^bad\.ts\(2,\d+\): error TS\d+: .*'bukets' does not exist in type 'PartitionInput'/);
  });
});
