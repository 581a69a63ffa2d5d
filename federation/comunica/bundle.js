// node federation/comunica/bundle.js   (the last step of `npm run build`, after tsc)
// Bundles each compiled Comunica engine (engine-service.cjs for `comunica`, @comunica/query-sparql's
// engine-default.js for `comunica-default`) with Comunica's modules and QueryEngineBase into one
// CommonJS file with esbuild, dist/federation/comunica/<engine>.bundle.cjs, writes V8's code cache
// of it beside it (<engine>.bundle.cache, made in a child process that builds the engine once), and
// lists both in dist/federation/comunica/bundles.json with the SHA-256 of the engine file bundled
// and of each file written (a thread uses a bundle and a cache only with those bytes). Everything is
// made in a temporary folder and renamed into place, bundles.json last.
// A thread of the federation engine loads the bundle instead of ~1,600 modules (src/federation/comunica/engine-module.ts).
// Without esbuild it says so and writes nothing: the threads then load the engine with require, as before.
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const out = path.join(root, 'dist/federation/comunica');
const require = createRequire(path.join(root, 'package.json'));
let esbuild;
try {
  esbuild = require('esbuild');
} catch {
  process.stderr.write('federation/comunica/bundle.js: esbuild is not installed: the federation engine threads load Comunica module by module (slower start-up)\n');
  process.exit(0);
}
if (!fs.existsSync(out)) {
  process.stderr.write(`federation/comunica/bundle.js: ${out} is missing: run tsc first (npm run build)\n`);
  process.exit(1);
}
const engines = {
  comunica: path.join(here, 'engine-service.cjs'),
  'comunica-default': require.resolve('@comunica/query-sparql/engine-default.js'),
};
// What a bundle and its code cache are made from: this script, each engine file, the installed
// packages (npm's node_modules/.package-lock.json), esbuild's and Node's versions. With the same
// inputs the files of the last build are copied from node_modules/.cache/fkgqa-comunica-bundle/<key>/
// (npm test builds first: 0.1 s instead of 3 s). No key without .package-lock.json: always built.
const installed = path.join(root, 'node_modules/.package-lock.json');
const key = fs.existsSync(installed)
  ? crypto
      .createHash('sha256')
      .update(JSON.stringify([fs.readFileSync(fileURLToPath(import.meta.url), 'utf8'), Object.values(engines).map((f) => fs.readFileSync(f, 'utf8')), fs.readFileSync(installed, 'utf8'), esbuild.version, process.version, process.arch]))
      .digest('hex')
  : undefined;
const kept = key && path.join(root, 'node_modules/.cache/fkgqa-comunica-bundle', key);
const names = Object.keys(engines).flatMap((name) => [`${name}.bundle.cjs`, `${name}.bundle.cache`]);
const sha256Of = (file) => crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');

/** Copies `files` from `from` into `out`, each through a temporary name and a rename, bundles.json last. */
function install(from, files) {
  for (const f of [...files, 'bundles.json']) {
    const tmp = path.join(out, `.${f}.${process.pid}.tmp`);
    fs.copyFileSync(path.join(from, f), tmp);
    fs.renameSync(tmp, path.join(out, f));
  }
}

/** Whether `dir` holds an index and every file it names with the SHA-256 it records (a kept copy that was cut or edited is made again). */
function intact(dir) {
  try {
    const index = JSON.parse(fs.readFileSync(path.join(dir, 'bundles.json'), 'utf8'));
    return Array.isArray(index) && index.length === Object.keys(engines).length && index.every((b) => sha256Of(path.join(dir, b.bundle)) === b.bundleSha256 && sha256Of(path.join(dir, b.cache)) === b.cacheSha256);
  } catch {
    return false;
  }
}

if (kept && intact(kept)) {
  install(kept, names);
  process.exit(0);
}
// Made in a temporary folder beside dist's, then installed: an interrupted build leaves the last
// complete set (or none), never a bundles.json naming a cut bundle.
const work = fs.mkdtempSync(path.join(out, '.bundle-'));
try {
  const index = [];
  for (const [name, of] of Object.entries(engines)) {
    const bundle = path.join(work, `${name}.bundle.cjs`);
    const cache = path.join(work, `${name}.bundle.cache`);
    const entry = `module.exports = { engine: require(${JSON.stringify(of)}), QueryEngineBase: require('@comunica/actor-init-query').QueryEngineBase, asynciterator: require('asynciterator') };\n`;
    await esbuild.build({
      stdin: { contents: entry, resolveDir: root, sourcefile: `${name}-entry.cjs`, loader: 'js' },
      bundle: true,
      platform: 'node',
      format: 'cjs',
      target: 'node20',
      outfile: bundle,
      logLevel: 'warning',
      legalComments: 'none',
    });
    // The code cache, in a process of its own (a cache is made from a fresh compile).
    const loader = path.join(out, 'engine-module.js');
    const script = `import { writeCodeCache } from ${JSON.stringify(loader)}; writeCodeCache(${JSON.stringify({ bundle, cache })});`;
    execFileSync(process.execPath, ['--input-type=module', '-e', script], { stdio: 'inherit' });
    index.push({ of: path.relative(root, of), sha256: sha256Of(of), bundle: path.basename(bundle), bundleSha256: sha256Of(bundle), cache: path.basename(cache), cacheSha256: sha256Of(cache) });
  }
  fs.writeFileSync(path.join(work, 'bundles.json'), `${JSON.stringify(index, null, 2)}\n`);
  if (kept) {
    // Kept whole or not at all: copied to a temporary folder, then renamed.
    const tmp = `${kept}.${process.pid}.tmp`;
    fs.mkdirSync(tmp, { recursive: true });
    for (const f of [...names, 'bundles.json']) fs.copyFileSync(path.join(work, f), path.join(tmp, f));
    fs.rmSync(kept, { recursive: true, force: true });
    try {
      fs.renameSync(tmp, kept);
    } catch {
      fs.rmSync(tmp, { recursive: true, force: true }); // another build kept its copy first
    }
  }
  install(work, names);
} finally {
  fs.rmSync(work, { recursive: true, force: true });
}
