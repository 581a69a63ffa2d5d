#!/usr/bin/env node
// node scripts/build-stamp.js write|check [--root DIR]
// The build's inputs and outputs, so that `npm test` (its pretest) rebuilds dist/ only when it is
// not the build of the tree as it is: `write` (the last step of `npm run build`) records in
// dist/.build-stamp.json the SHA-256 of everything a build reads (src/, tsconfig.json, package.json,
// package-lock.json, npm's node_modules/.package-lock.json, federation/comunica/'s engine, config
// and scripts, scripts/clean-dist.js and this script, and Node's version) and the size of every file
// it wrote; `check` exits 0 when both are still so, 1 otherwise (then pretest runs npm run build).
// Content, not timestamps: a checkout, an edit or an npm install changes the inputs; a deleted or
// cut file of dist/ changes the outputs.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
const rootAt = args.indexOf('--root');
const root = rootAt >= 0 ? path.resolve(args[rootAt + 1]) : path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.join(root, 'dist');
const STAMP = path.join(dist, '.build-stamp.json');

/** Every file under `dir` (relative to root), sorted; none when it does not exist. */
function files(dir) {
  const out = [];
  const walk = (d) => {
    let entries;
    try {
      entries = fs.readdirSync(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) out.push(path.relative(root, p));
    }
  };
  walk(path.join(root, dir));
  return out.sort();
}

function inputsDigest() {
  const h = crypto.createHash('sha256').update(`${process.version}\n`);
  const list = [
    ...files('src'),
    ...files('federation/comunica'),
    'tsconfig.json',
    'package.json',
    'package-lock.json',
    'node_modules/.package-lock.json',
    'scripts/clean-dist.js',
    'scripts/build-stamp.js',
  ];
  for (const f of list) {
    let bytes;
    try {
      bytes = fs.readFileSync(path.join(root, f));
    } catch {
      bytes = Buffer.from('(absent)');
    }
    h.update(`${f}\n${bytes.length}\n`).update(bytes);
  }
  return h.digest('hex');
}

function outputs() {
  return Object.fromEntries(
    files('dist')
      .filter((f) => f !== path.relative(root, STAMP))
      .map((f) => [f, fs.statSync(path.join(root, f)).size]),
  );
}

const mode = args.find((a) => a === 'write' || a === 'check');
if (mode === 'write') {
  const tmp = `${STAMP}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, `${JSON.stringify({ inputs: inputsDigest(), outputs: outputs() }, null, 1)}\n`);
  fs.renameSync(tmp, STAMP);
} else if (mode === 'check') {
  let stamp;
  try {
    stamp = JSON.parse(fs.readFileSync(STAMP, 'utf8'));
  } catch {
    process.exit(1);
  }
  const now = outputs();
  const same = stamp && stamp.inputs === inputsDigest() && JSON.stringify(stamp.outputs) === JSON.stringify(now);
  if (!same) process.exit(1);
  process.stderr.write('dist/ is the build of this tree (scripts/build-stamp.js): not rebuilt\n');
} else {
  process.stderr.write('usage: node scripts/build-stamp.js write|check [--root DIR]\n');
  process.exit(2);
}
