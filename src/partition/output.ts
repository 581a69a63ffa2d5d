/**
 * The output folder of `fkgqa partition`: what a build owns in it, its digest, and the build that
 * was there before (for the determinism check).
 */
import fs from 'node:fs';
import crypto from 'node:crypto';
import path from 'node:path';
import { sha256OfFile } from '../common/hash.js';
import { readJsonIfExists } from '../build/open.js';
import type { PartitionResult } from './manifest.js';

/**
 * Names of the top-level entries of an output directory that a build owns (and a new build
 * replaces): its files, and the graph folders whose manifest.json was written by fkgqa.
 * `checkOutputDir` has made sure the directory holds an fkgqa build, if anything.
 */
export function isBuildEntry(name: string, outDir: string): boolean {
  if (['benchmark.json', 'build.json', 'catalogue.json', 'catalogue.ttl', 'endpoints.json'].includes(name)) return true;
  return readJsonIfExists<{ tool?: { name?: string } }>(path.join(outDir, name, 'manifest.json'))?.tool?.name === 'fkgqa';
}

/**
 * The build that was in the output directory before, compared with this one (null when none or
 * unreadable). When its inputs are this build's, its files as they are on disk are compared with
 * this build's, file by file: `fkgqa describe` (or a hand) may have changed them after the build
 * recorded its output digest, so the recorded digest alone cannot say the bytes are equal.
 * @param out the output directory (the previous build, if any)
 * @param inputsDigest this build's inputs digest
 * @param staged the directory holding this build's files (not yet committed to `out`)
 * @param outputDigest this build's output digest (`digestTree(staged)`)
 */
export function readPrevious(out: string, inputsDigest: string, staged: string, outputDigest: string): PartitionResult['previous'] {
  const prev = readJsonIfExists<{ outputDigest?: unknown; inputsDigest?: unknown; graphs?: unknown }>(path.join(out, 'build.json'));
  if (!prev) return null;
  const sameInputs = prev.inputsDigest === inputsDigest;
  const asBuilt = prev.outputDigest === outputDigest;
  const changedFiles = sameInputs
    ? differingFiles(
        fileDigests(out, (name) => isBuildEntry(name, out)),
        fileDigests(staged),
      )
    : [];
  return {
    digest: String(prev.outputDigest),
    sameInputs,
    identical: asBuilt && sameInputs && changedFiles.length === 0,
    asBuilt,
    changedFiles,
    graphs: Array.isArray(prev.graphs) ? prev.graphs : [],
  };
}

/**
 * sha256 of every file under `dir` but `build.json`, by path relative to `dir` (`/`-separated).
 * @param include which top-level entries of `dir` to walk (default: all)
 */
function fileDigests(dir: string, include: (name: string) => boolean = () => true): Map<string, string> {
  const digests = new Map<string, string>();
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (d === dir && !include(e.name)) continue;
      if (e.isDirectory()) walk(p);
      else digests.set(path.relative(dir, p).split(path.sep).join('/'), sha256OfFile(p));
    }
  };
  walk(dir);
  digests.delete('build.json');
  return digests;
}

/** The paths, sorted, whose file is in one map only or has another digest in the other. */
function differingFiles(a: Map<string, string>, b: Map<string, string>): string[] {
  const paths = new Set([...a.keys(), ...b.keys()]);
  return [...paths].filter((p) => a.get(p) !== b.get(p)).sort();
}

/** sha256 over the sorted relative paths and contents of every file under `dir` but `build.json`. */
export function digestTree(dir: string): string {
  const digests = fileDigests(dir);
  const h = crypto.createHash('sha256');
  for (const f of [...digests.keys()].sort()) h.update(`${f}\n${digests.get(f)}\n`);
  return h.digest('hex');
}
