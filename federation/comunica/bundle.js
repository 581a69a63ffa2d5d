// node federation/comunica/bundle.js   (the last step of `npm run build`, after tsc)
// Bundles each compiled Comunica engine (engine-service.cjs for `comunica`, @comunica/query-sparql's
// engine-default.js for `comunica-default`) with Comunica's modules and QueryEngineBase into one
// CommonJS file with esbuild, dist/federation/comunica/<engine>.bundle.cjs, writes V8's code cache
// of it beside it (<engine>.bundle.cache, made in a child process that builds the engine once), and
// lists both in dist/federation/comunica/bundles.json with the SHA-256 of the engine file bundled.
// A thread of the federation engine loads the bundle instead of ~1,600 modules (src/federation/comunica/engine-module.ts).
// Without esbuild (an install without dev dependencies) it says so and writes nothing: the threads
// then load the engine with require, as before.
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
const FILES = ['bundles.json', ...Object.keys(engines).flatMap((name) => [`${name}.bundle.cjs`, `${name}.bundle.cache`])];
if (kept && FILES.every((f) => fs.existsSync(path.join(kept, f)))) {
  for (const f of FILES) fs.copyFileSync(path.join(kept, f), path.join(out, f));
  process.exit(0);
}
const index = [];
for (const [name, of] of Object.entries(engines)) {
  const bundle = path.join(out, `${name}.bundle.cjs`);
  const cache = path.join(out, `${name}.bundle.cache`);
  const entry = `module.exports = { engine: require(${JSON.stringify(of)}), QueryEngineBase: require('@comunica/actor-init-query').QueryEngineBase };\n`;
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
  index.push({ of: path.relative(root, of), sha256: crypto.createHash('sha256').update(fs.readFileSync(of)).digest('hex'), bundle: path.basename(bundle), cache: path.basename(cache) });
}
fs.writeFileSync(path.join(out, 'bundles.json'), `${JSON.stringify(index, null, 2)}\n`);
// The code caches, each in a process of its own (a cache is made from a fresh compile).
const loader = path.join(out, 'engine-module.js');
for (const b of index) {
  const script = `import { bundleFor, writeCodeCache } from ${JSON.stringify(loader)}; writeCodeCache(bundleFor(${JSON.stringify(path.resolve(root, b.of))}));`;
  execFileSync(process.execPath, ['--input-type=module', '-e', script], { stdio: 'inherit' });
}
if (kept) {
  // Kept whole or not at all: written to a temporary folder, then renamed.
  const tmp = `${kept}.${process.pid}.tmp`;
  fs.mkdirSync(tmp, { recursive: true });
  for (const f of FILES) fs.copyFileSync(path.join(out, f), path.join(tmp, f));
  fs.rmSync(kept, { recursive: true, force: true });
  fs.renameSync(tmp, kept);
}
