import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Repository root. */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/**
 * The real corpus, beside the repository (CI provides it; tests that need it are skipped without
 * it), or where FKGQA_SPIDER points (a worktree outside /work, e.g. /work/wt/<branch>).
 */
export const SPIDER = process.env.FKGQA_SPIDER ? path.resolve(process.env.FKGQA_SPIDER) : path.resolve(ROOT, '../shared/spider4sparql');
export const HAS_SPIDER = fs.existsSync(path.join(SPIDER, 'dev.json'));
/** The demo dataset. */
export const DEMO = path.join(ROOT, 'datasets/demo');

/** A fresh temporary directory, removed by the caller (or left in /tmp). */
export function tmpDir(prefix = 'fkgqa-test-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

/** Copies a source directory (small: the demo) into a temporary directory and returns the copy. */
export function copyDir(src: string): string {
  const dst = path.join(tmpDir(), path.basename(src));
  fs.cpSync(src, dst, { recursive: true });
  return dst;
}

/** Reads an N-Triples file into its non-empty lines. */
export function ntLines(file: string): string[] {
  return fs.readFileSync(file, 'utf8').split('\n').filter((l) => l.length > 0);
}

/** sha256 of every file below `dir`, hidden ones included, by relative path. */
export function fileHashes(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out[path.relative(dir, p)] = crypto.createHash('sha256').update(fs.readFileSync(p)).digest('hex');
    }
  };
  walk(dir);
  return out;
}
