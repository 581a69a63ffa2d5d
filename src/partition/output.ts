/**
 * The output folder of `fkgqa partition`: what a build owns in it, its digest, and the build that
 * was there before (for the determinism check).
 */
import fs from 'node:fs';
import crypto from 'node:crypto';
import path from 'node:path';
import { sha256OfFile } from '../common/hash.js';
import type { PartitionResult } from './manifest.js';

/**
 * Names of the top-level entries of an output directory that a build owns (and a new build
 * replaces): its files, and the graph folders whose manifest.json was written by fkgqa.
 * `checkOutputDir` has made sure the directory holds an fkgqa build, if anything.
 */
export function isBuildEntry(name: string, outDir: string): boolean {
  if (['benchmark.json', 'build.json', 'catalogue.json', 'catalogue.ttl', 'endpoints.json'].includes(name)) return true;
  try {
    return JSON.parse(fs.readFileSync(path.join(outDir, name, 'manifest.json'), 'utf8'))?.tool?.name === 'fkgqa';
  } catch {
    return false;
  }
}

/** The build that was in the output directory before, compared with this one (null when none or unreadable). */
export function readPrevious(out: string, inputsDigest: string, outputDigest: string): PartitionResult['previous'] {
  const file = path.join(out, 'build.json');
  if (!fs.existsSync(file)) return null;
  try {
    const prev = JSON.parse(fs.readFileSync(file, 'utf8'));
    return { digest: prev.outputDigest, sameInputs: prev.inputsDigest === inputsDigest, identical: prev.outputDigest === outputDigest, graphs: Array.isArray(prev.graphs) ? prev.graphs : [] };
  } catch {
    return null;
  }
}

/** sha256 over the sorted relative paths and contents of every file under `dir`. */
export function digestTree(dir: string): string {
  const files: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else files.push(p);
    }
  };
  walk(dir);
  const h = crypto.createHash('sha256');
  for (const f of files.map((f) => path.relative(dir, f).split(path.sep).join('/')).sort()) {
    if (f === 'build.json') continue;
    h.update(`${f}\n${sha256OfFile(path.join(dir, f))}\n`);
  }
  return h.digest('hex');
}
