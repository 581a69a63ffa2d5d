/**
 * The Comunica engine a thread of `ComunicaEngine` runs (thread.ts), loaded fast: at start-up a
 * thread spends most of its time loading Comunica's ~1,600 CommonJS modules (0.9 s of CPU on a
 * quiet 2-core machine; figures in docs/performance.md). `npm run build` therefore bundles
 * each compiled engine with esbuild into one file (federation/comunica/bundle.js, `dist/federation/comunica/*.bundle.cjs`)
 * and stores V8's code cache of it beside it; a thread compiles the bundle with that cache
 * (`vm.Script` `cachedData`: 0.25 s). What the bundle runs is the same code: Comunica's modules,
 * the compiled engine (engine-service.cjs or engine-default.js) and `QueryEngineBase`.
 *
 * Trust: a bundle is used only for the engine file it was made from, unchanged, and only when the
 * bundle's own SHA-256 is the one bundles.json recorded (a truncated or edited bundle is loaded
 * module by module instead, with a warning); the code cache is given to V8 only when its SHA-256 is
 * the recorded one (V8 does not check a cache's contents in release builds: a corrupted cache of
 * the right size crashed the process). bundles.json names files in its own folder only. No bundle,
 * or any mismatch: the engine is `require`d as before.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import vm from 'node:vm';
import type { QueryEngineBase } from '@comunica/actor-init-query';

/**
 * A bundle of a compiled engine. In bundles.json `of` is relative to the package's root and
 * `bundle` and `cache` are file names in the bundles' folder (so that a moved clone keeps its
 * bundles); `bundleFor` returns them as absolute paths.
 */
export interface EngineBundle {
  /** Path of the compiled engine the bundle was made from (`ThreadData.enginePath`). */
  of: string;
  /** SHA-256 (hex) of that file's bytes when bundled. */
  sha256: string;
  /** Path of the bundle (CommonJS; exports `{ engine, QueryEngineBase }`). */
  bundle: string;
  /** SHA-256 (hex) of the bundle's bytes. */
  bundleSha256: string;
  /** Path of V8's code cache of the bundle (may be missing). */
  cache: string;
  /** SHA-256 (hex) of the code cache's bytes. */
  cacheSha256: string;
}

/**
 * What a thread needs of a compiled engine: its `(variables) => actor`, Comunica's `QueryEngineBase`,
 * and the asynciterator module Comunica's operators use. A stream of solutions handed to Comunica
 * (corrections.ts) must be made with that copy: asynciterator links a source to its reader by a
 * symbol of its module and schedules its events in a queue of its module, so an iterator of another
 * copy (the ES module that `import` loads, or a copy outside the bundle) is read through a wrapper
 * whose events Comunica's reader can miss, and the query never ends.
 */
export interface EngineModule {
  engine: (variables?: Record<string, unknown>) => unknown;
  QueryEngineBase: typeof QueryEngineBase;
  asynciterator: Iterators;
}

/** The part of asynciterator the corrections use (corrections.ts). */
export type Iterators = Pick<typeof import('asynciterator'), 'ArrayIterator'>;

/** The folder of the bundles: dist/federation/comunica (this module's folder when compiled). */
function bundleFolder(): string {
  const here = fileURLToPath(import.meta.url);
  return here.endsWith('.ts') ? fileURLToPath(new URL('../../../dist/federation/comunica/', import.meta.url)) : path.dirname(here);
}

/** The index of the bundles (`bundles.json` in `folder`), written by federation/comunica/bundle.js. */
export const BUNDLES_FILE = 'bundles.json';

/** SHA-256 (hex) of bytes. */
export const sha256Of = (bytes: Buffer | string): string => crypto.createHash('sha256').update(bytes).digest('hex');

const HEX64 = /^[0-9a-f]{64}$/;
/** A file name in the bundles' folder: no folder part, not `.` or `..`. */
const plainName = (x: unknown): x is string => typeof x === 'string' && x !== '' && x === path.basename(x) && x !== '.' && x !== '..';

/**
 * The bundle of `enginePath`, when `npm run build` made one from that file as it is now.
 * @returns undefined when there is no bundle, bundles.json is not an index of bundles, or the
 *   engine file changed since (then it is `require`d)
 */
export function bundleFor(enginePath: string, folder = bundleFolder()): EngineBundle | undefined {
  let index: unknown;
  try {
    index = JSON.parse(fs.readFileSync(path.join(folder, BUNDLES_FILE), 'utf8'));
  } catch {
    return undefined;
  }
  if (!Array.isArray(index)) return undefined;
  const root = path.resolve(folder, '../../..');
  const entry = index.find((x: Record<string, unknown> | null) => x !== null && typeof x === 'object' && typeof x.of === 'string' && path.resolve(root, x.of) === path.resolve(enginePath)) as
    Record<string, unknown> | undefined;
  if (!entry || !plainName(entry.bundle) || !plainName(entry.cache) || ![entry.sha256, entry.bundleSha256, entry.cacheSha256].every((h) => typeof h === 'string' && HEX64.test(h))) return undefined;
  const b: EngineBundle = {
    of: path.resolve(enginePath),
    sha256: entry.sha256 as string,
    bundle: path.join(folder, entry.bundle),
    bundleSha256: entry.bundleSha256 as string,
    cache: path.join(folder, entry.cache),
    cacheSha256: entry.cacheSha256 as string,
  };
  if (!fs.existsSync(b.bundle)) return undefined;
  return sha256Of(fs.readFileSync(enginePath)) === b.sha256 ? b : undefined;
}

/** A bundle whose bytes are not the ones bundles.json recorded. */
class BundleMismatch extends Error {}

/**
 * Compiles and runs a bundle as a CommonJS module, with its code cache when `useCache` and the
 * cache is the recorded one.
 * @returns the module's exports and the compiled script (for `createCachedData`)
 * @throws BundleMismatch when the bundle's SHA-256 is not `b.bundleSha256` (unless `trustBundle`)
 */
function runBundle(b: EngineBundle, useCache: boolean, trustBundle = false): { exports: EngineModule; script: vm.Script } {
  const bytes = fs.readFileSync(b.bundle);
  if (!trustBundle && sha256Of(bytes) !== b.bundleSha256) throw new BundleMismatch(`${b.bundle} is not the bundle ${BUNDLES_FILE} recorded (changed or cut since npm run build)`);
  let cachedData: Buffer | undefined;
  if (useCache) {
    try {
      cachedData = fs.readFileSync(b.cache);
    } catch {
      cachedData = undefined;
    }
    if (cachedData && sha256Of(cachedData) !== b.cacheSha256) cachedData = undefined;
  }
  const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) {${bytes.toString('utf8')}\n})`, { filename: b.bundle, cachedData });
  const module = { exports: {} as EngineModule };
  (script.runInThisContext() as (...a: unknown[]) => void)(module.exports, createRequire(b.bundle), module, b.bundle, path.dirname(b.bundle));
  return { exports: module.exports, script };
}

/** An engine module, and how it was loaded (`problem`: why its bundle was not used). */
interface LoadedEngine {
  module: EngineModule;
  from: 'bundle' | 'modules';
  problem?: string;
}

/**
 * The engine module of `enginePath`: from its bundle (`bundle`, see `bundleFor`) when given and
 * intact, else with `require` (the compiled engine, `QueryEngineBase` from @comunica/actor-init-query, and
 * asynciterator's CommonJS build, which Comunica's modules require).
 * @throws what loading the engine throws (a missing module, an error at its top level)
 */
export function loadEngineModule(enginePath: string, bundle?: EngineBundle): LoadedEngine {
  let problem: string | undefined;
  if (bundle) {
    try {
      return { module: runBundle(bundle, true).exports, from: 'bundle' };
    } catch (e) {
      if (!(e instanceof BundleMismatch)) throw e;
      problem = `${e.message}: Comunica is loaded module by module; run npm run build`;
    }
  }
  const require = createRequire(import.meta.url);
  const module = {
    engine: require(enginePath),
    QueryEngineBase: (require('@comunica/actor-init-query') as { QueryEngineBase: typeof QueryEngineBase }).QueryEngineBase,
    // Comunica's modules require the CommonJS build of asynciterator: the same module here.
    asynciterator: require('asynciterator') as Iterators,
  };
  return { module, from: 'modules', ...(problem ? { problem } : {}) };
}

/**
 * Writes V8's code cache of a freshly written bundle (federation/comunica/bundle.js, in a process
 * of its own): it builds the engine once, so that the functions a start runs are in the cache too.
 * @param b the bundle's path (`bundle`) and where to write its cache (`cache`)
 * @returns the cache's size in bytes
 */
export function writeCodeCache(b: Pick<EngineBundle, 'bundle' | 'cache'>): number {
  const { exports, script } = runBundle({ ...b, of: '', sha256: '', bundleSha256: '', cacheSha256: '' }, false, true);
  new exports.QueryEngineBase(exports.engine() as never);
  const data = script.createCachedData();
  fs.writeFileSync(b.cache, data);
  return data.length;
}
