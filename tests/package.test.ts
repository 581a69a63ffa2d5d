import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, tmpDir } from './helpers.js';

/**
 * The library as a user imports it: a project whose node_modules/fkgqa is this package (a
 * symlink, as `npm link` or a local install makes it), importing `from 'fkgqa'`, run by Node
 * (compiled by TypeScript against the published types in tests/package.slow.test.ts).
 */
describe("the library entry point: import { … } from 'fkgqa'", () => {
  const user = tmpDir('fkgqa-user-');
  fs.mkdirSync(path.join(user, 'node_modules'));
  fs.symlinkSync(ROOT, path.join(user, 'node_modules', 'fkgqa'), 'dir');
  fs.writeFileSync(path.join(user, 'package.json'), JSON.stringify({ name: 'user', type: 'module' }));

  // Type-checking a user program against the published types (a tsc start, 4 s of CPU): tests/package.slow.test.ts.
  it('runs: partition the demo through the package and read its result', () => {
    fs.writeFileSync(
      path.join(user, 'run.mjs'),
      `import * as fkgqa from 'fkgqa';
const r = await fkgqa.partition({ source: ${JSON.stringify(path.join(ROOT, 'datasets/demo'))}, out: 'shards' });
console.log(JSON.stringify({ exports: Object.keys(fkgqa).sort(), graphs: r.graphs.map((g) => g.manifest.graph), digest: r.outputDigest.slice(0, 16) }));
`,
    );
    const r = spawnSync(process.execPath, ['run.mjs'], { cwd: user, encoding: 'utf8' });
    expect(r.stderr).toBe('');
    const out = JSON.parse(r.stdout);
    expect(out.graphs).toEqual(['library', 'observatory']);
    expect(out.digest).toBe('507cf4fb97c90b54');
    expect(out.exports).toEqual([
      'DEFAULT_FEDERATION_ENGINE',
      'FEDERATION_ENGINES',
      'InputError',
      'checkMcpGold',
      'createEngine',
      'describe',
      'evaluate',
      'mcp',
      'merge',
      'partition',
      'query',
      'questions',
      'runLoop',
      'score',
      'serve',
      'stats',
      'synth',
      'verify',
      'view',
      'worker',
    ]);
    // A deep import is not part of the API: the package exports only its entry point.
    const deep = spawnSync(process.execPath, ['--input-type=module', '-e', "await import('fkgqa/dist/partition/index.js')"], { cwd: user, encoding: 'utf8' });
    expect(deep.stderr).toContain('ERR_PACKAGE_PATH_NOT_EXPORTED');
  });
});

describe('npm test rebuilds dist/ only when it is not the build of the tree (scripts/build-stamp.js)', () => {
  it('check: 0 for the tree as written, 1 after a source edit or a lost output, 0 once restored', () => {
    const root = tmpDir('fkgqa-stamp-');
    for (const f of ['src', 'federation/comunica', 'scripts', 'dist', 'tsconfig.json', 'package.json', 'package-lock.json']) fs.cpSync(path.join(ROOT, f), path.join(root, f), { recursive: true });
    const stamp = (mode: string) => spawnSync(process.execPath, [path.join(root, 'scripts/build-stamp.js'), mode, '--root', root], { encoding: 'utf8' }).status;
    expect(stamp('write')).toBe(0);
    expect(stamp('check')).toBe(0);
    const source = path.join(root, 'src/common/errors.ts');
    const text = fs.readFileSync(source, 'utf8');
    fs.appendFileSync(source, '// an edit\n');
    expect(stamp('check')).toBe(1);
    fs.writeFileSync(source, text);
    expect(stamp('check')).toBe(0);
    const engine = path.join(root, 'federation/comunica/engine-service.cjs');
    fs.appendFileSync(engine, '\n');
    expect(stamp('check')).toBe(1);
    fs.writeFileSync(engine, fs.readFileSync(path.join(ROOT, 'federation/comunica/engine-service.cjs')));
    fs.rmSync(path.join(root, 'dist/cli/main.js'));
    expect(stamp('check')).toBe(1);
    expect(stamp('nonsense')).toBe(2);
  });
});
