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
