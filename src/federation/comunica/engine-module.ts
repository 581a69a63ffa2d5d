/**
 * The Comunica engine a thread of `ComunicaEngine` runs (thread.ts), loaded fast: at start-up a
 * thread spends most of its time loading Comunica's ~1,600 CommonJS modules (0.9 s of CPU on a
 * quiet 2-core machine, issue 16 item 7 and issue 20's start-up). `npm run build` therefore bundles
 * each compiled engine with esbuild into one file (federation/comunica/bundle.js, `dist/federation/comunica/*.bundle.cjs`)
 * and stores V8's code cache of it beside it; a thread compiles the bundle with that cache
 * (`vm.Script` `cachedData`: 0.25 s). What the bundle runs is the same code: Comunica's modules,
 * the compiled engine (engine-service.cjs or engine-default.js) and `QueryEngineBase`.
 *
 * A bundle is used only for the engine file it was made from, unchanged (its SHA-256 is recorded
 * in bundles.json); any other engine file, a changed one, or no bundle at all is loaded with
 * `require` as before. A code cache V8 rejects (another Node version or V8 flags) costs only the
 * compile it would have saved.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import vm from 'node:vm';
import type { QueryEngineBase } from '@comunica/actor-init-query';

/**
 * A bundle of a compiled engine. In bundles.json the paths are relative (`of` to the package's root,
 * `bundle` and `cache` to the bundles' folder), so that a moved clone keeps its bundles; `bundleFor`
 * returns them absolute.
 */
export interface EngineBundle {
  /** Path of the compiled engine the bundle was made from (`ThreadData.enginePath`). */
  of: string;
  /** SHA-256 (hex) of that file's bytes when bundled. */
  sha256: string;
  /** Path of the bundle (CommonJS; exports `{ engine, QueryEngineBase }`). */
  bundle: string;
  /** Path of V8's code cache of the bundle (may be missing). */
  cache: string;
}

/** What a thread needs of a compiled engine: its `(variables) => actor` and Comunica's `QueryEngineBase`. */
export interface EngineModule {
  engine: (variables?: Record<string, unknown>) => unknown;
  QueryEngineBase: typeof QueryEngineBase;
}

/** The folder of the bundles: dist/federation/comunica (this module's folder when compiled). */
export function bundleFolder(): string {
  const here = fileURLToPath(import.meta.url);
  return here.endsWith('.ts') ? fileURLToPath(new URL('../../../dist/federation/comunica/', import.meta.url)) : path.dirname(here);
}

/** The index of the bundles (`bundles.json` in `folder`), written by federation/comunica/bundle.js. */
export const BUNDLES_FILE = 'bundles.json';

/**
 * The bundle of `enginePath`, when `npm run build` made one from that file as it is now.
 * @returns undefined when there is no bundle, or the file changed since (then it is `require`d)
 */
export function bundleFor(enginePath: string, folder = bundleFolder()): EngineBundle | undefined {
  let index: EngineBundle[];
  try {
    index = JSON.parse(fs.readFileSync(path.join(folder, BUNDLES_FILE), 'utf8')) as EngineBundle[];
  } catch {
    return undefined;
  }
  const root = path.resolve(folder, '../../..');
  const entry = index.find((x) => path.resolve(root, x.of) === path.resolve(enginePath));
  if (!entry) return undefined;
  const b = { of: path.resolve(enginePath), sha256: entry.sha256, bundle: path.resolve(folder, entry.bundle), cache: path.resolve(folder, entry.cache) };
  if (!fs.existsSync(b.bundle)) return undefined;
  const sha256 = crypto.createHash('sha256').update(fs.readFileSync(enginePath)).digest('hex');
  return sha256 === b.sha256 ? b : undefined;
}

/**
 * Compiles and runs a bundle as a CommonJS module, with its code cache when there is one.
 * @returns the module's exports and the compiled script (for `createCachedData`)
 */
function runBundle(b: EngineBundle, useCache: boolean): { exports: EngineModule; script: vm.Script } {
  const source = fs.readFileSync(b.bundle, 'utf8');
  const cachedData = useCache && fs.existsSync(b.cache) ? fs.readFileSync(b.cache) : undefined;
  const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, { filename: b.bundle, cachedData });
  const module = { exports: {} as EngineModule };
  (script.runInThisContext() as (...a: unknown[]) => void)(module.exports, createRequire(b.bundle), module, b.bundle, path.dirname(b.bundle));
  return { exports: module.exports, script };
}

/**
 * The engine module of `enginePath`: from its bundle (`bundle`, see `bundleFor`) when given, else
 * with `require` (the compiled engine, and `QueryEngineBase` from @comunica/actor-init-query).
 * @throws what loading the engine throws (a missing module, an error at its top level)
 */
export function loadEngineModule(enginePath: string, bundle?: EngineBundle): EngineModule {
  if (bundle) return runBundle(bundle, true).exports;
  const require = createRequire(import.meta.url);
  return { engine: require(enginePath), QueryEngineBase: (require('@comunica/actor-init-query') as { QueryEngineBase: typeof QueryEngineBase }).QueryEngineBase };
}

/**
 * Writes V8's code cache of a bundle (federation/comunica/bundle.js, in a process of its own): it
 * builds the engine once, so that the functions a start runs are in the cache too.
 * @returns the cache's size in bytes
 */
export function writeCodeCache(b: EngineBundle): number {
  const { exports, script } = runBundle(b, false);
  new exports.QueryEngineBase(exports.engine() as never);
  const data = script.createCachedData();
  fs.writeFileSync(b.cache, data);
  return data.length;
}
