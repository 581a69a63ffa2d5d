import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openBuild, readBuild } from '../src/build/open.js';
import { fileHashes, fkgqaSync, tmpDir } from './helpers.js';

const fkgqa = fkgqaSync;
const tree = fileHashes;

/**
 * The slow fault-injection sweep of build safety (`npm run test:slow`): a build killed (SIGKILL)
 * at every rename and removal of its commit, each followed by a full rebuild.
 */
/** The old build has VoID, the new one does not: a mixture of the two is easy to see. */
const OLD = ['partition', '-q'];
const NEW = ['partition', '-q', '--no-void', '--buckets', '3'];

describe('build safety / crash-safe commit (kill -9 at every rename and removal)', () => {
  const refs = tmpDir();
  const oldRef = path.join(refs, 'old');
  const newRef = path.join(refs, 'new');
  expect(fkgqa([...OLD, '--out', oldRef]).code).toBe(0);
  expect(fkgqa([...NEW, '--out', newRef]).code).toBe(0);
  fs.writeFileSync(path.join(oldRef, 'README.md'), 'kept across builds\n');
  fs.writeFileSync(path.join(newRef, 'README.md'), 'kept across builds\n');
  const oldTree = tree(oldRef);
  const newTree = tree(newRef);
  expect(Object.keys(oldTree).length).toBeGreaterThan(Object.keys(newTree).length); // VoID files

  // Steps of a commit: rename 1 journal (the commit is decided), rename 2 old build aside, rename 3
  // new build in, remove 1 old build. [fault, on disk right after the kill, what every opener sees]
  const cases: [string, 'old' | 'new' | 'none', 'old' | 'new'][] = [
    ['rename:1', 'old', 'old'],
    ['rename:2', 'old', 'new'],
    ['rename:3', 'none', 'new'],
    ['remove:1', 'new', 'new'],
  ];
  for (const [fault, onDisk, after] of cases) {
    it(`killed before ${fault}: the ${after} build, then a next run recovers without clean-up`, () => {
      const parent = tmpDir();
      const out = path.join(parent, 'shards');
      fs.cpSync(oldRef, out, { recursive: true });
      const killed = fkgqa([...NEW, '--out', out], { FKGQA_FAULT_AT: fault });
      expect(killed.signal).toBe('SIGKILL');
      // On disk: the old build, the new one, or (killed between the two renames) no folder yet.
      if (onDisk === 'none') expect(fs.existsSync(out)).toBe(false);
      else expect(tree(out)).toEqual(onDisk === 'old' ? oldTree : newTree);
      // Any opener sees exactly one build, and no hidden folder as a graph.
      const opened = openBuild(out);
      expect(tree(out)).toEqual(after === 'old' ? oldTree : newTree);
      expect(opened.build.graphs).toEqual(['library', 'observatory']);
      expect(readBuild(out).map((g) => g.graph)).toEqual(['library', 'observatory']);
      expect(fs.readdirSync(out).filter((e) => e.startsWith('.'))).toEqual([]);
      // A next build runs and cleans up.
      expect(fkgqa([...NEW, '--out', out]).code).toBe(0);
      expect(tree(out)).toEqual(newTree);
      expect(fs.readdirSync(parent)).toEqual(['shards']);
    });
  }

  it('a kill during the recovery itself is recovered by the next run', () => {
    const parent = tmpDir();
    const out = path.join(parent, 'shards');
    fs.cpSync(oldRef, out, { recursive: true });
    expect(fkgqa([...NEW, '--out', out], { FKGQA_FAULT_AT: 'rename:3' }).signal).toBe('SIGKILL');
    // The next run first completes the decided commit (its rename 1 is "new build in"): kill it there.
    expect(fkgqa([...OLD, '--out', out], { FKGQA_FAULT_AT: 'rename:1' }).signal).toBe('SIGKILL');
    expect(fs.existsSync(out)).toBe(false);
    expect(fkgqa([...OLD, '--out', out]).code).toBe(0);
    expect(tree(out)).toEqual(oldTree);
    expect(fs.readdirSync(parent)).toEqual(['shards']);
  });

  it('never takes a hidden .X.fkgqa-old-PID folder inside the build for a graph', () => {
    const out = path.join(tmpDir(), 'shards');
    fs.cpSync(oldRef, out, { recursive: true });
    fs.cpSync(path.join(out, 'library'), path.join(out, '.library.fkgqa-old-4242'), { recursive: true });
    expect(readBuild(out).map((g) => g.graph)).toEqual(['library', 'observatory']);
  });

  it('keeps the mode of the output folder (not the 0700 of a temporary folder)', () => {
    const out = path.join(tmpDir(), 'shards');
    expect(fkgqa([...NEW, '--out', out]).code).toBe(0);
    expect((fs.statSync(out).mode & 0o777).toString(8)).toBe((0o777 & ~process.umask()).toString(8));
  });
});
