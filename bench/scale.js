// The synthetic scale series of `npm run bench`: Spider-like graphs of 1M, 5M and 10M triples made
// by `fkgqa synth` (wta_1 of the dev set replicated with renamed instances, seed 0), each built by
// `fkgqa partition` in a fresh process (stage times, peak RSS), beside a bare n3 pass-through of
// the same file (bench/passthrough.js). Prints a table, the fitted cost per million triples, and the
// ratio of materialisation throughput to pass-through throughput.
// Usage: node bench/scale.js [--source DIR] [--sizes 1000000,5000000,10000000] [--kg wta_1]
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { benchOptions, here } from './lib.js';

const options = benchOptions({ kg: 'wta_1', sizes: '1000000,5000000,10000000' });
const source = options.source;
const kg = options.kg;
const sizes = options.sizes.split(',').map(Number);
const cache = path.join(os.tmpdir(), 'fkgqa-bench-synth');
const node = (script, ...a) => JSON.parse(execFileSync(process.execPath, [script, ...a], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 1 << 26 }));
const cli = path.join(here, '../bin/fkgqa.js');

const rows = [];
for (const n of sizes) {
  const src = path.join(cache, `${kg}-${n}`);
  if (!fs.existsSync(path.join(src, 'kg', `${kg}.nt`))) {
    process.stderr.write(`synth ${n} triples ...\n`);
    execFileSync(process.execPath, [cli, 'synth', '--source', source, '--kg', kg, '--triples', String(n), '--out', src, '-q'], { stdio: 'ignore' });
  }
  const file = path.join(src, 'kg', `${kg}.nt`);
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'fkgqa-bench-scale-'));
  process.stderr.write(`${n} triples: pass-through ...\n`);
  const pass = node(path.join(here, 'passthrough.js'), path.join(out, 'pass'), file);
  fs.rmSync(path.join(out, 'pass'), { recursive: true, force: true });
  process.stderr.write(`${n} triples: partition ...\n`);
  const build = node(path.join(here, 'build-once.js'), src, path.join(out, 'shards'));
  fs.rmSync(out, { recursive: true, force: true });
  rows.push({ n, pass, build });
}

const s = (ms) => (ms / 1000).toFixed(1);
const mib = (b) => (b / 1048576).toFixed(0);
console.log(`Scale series: ${kg} replicated (fkgqa synth, seed 0), one process per build (${os.cpus().length} cores, node ${process.version})`);
console.log('triples     pass-through  partition  profile  materialize  verify  describe  peak RSS  materialize/pass-through  partition/pass-through');
for (const { n, pass, build } of rows) {
  const st = build.stages;
  console.log(
    `${String(n).padStart(9)}  ${s(pass.ms).padStart(8)} s  ${s(build.totalMs).padStart(7)} s  ${s(st.profile).padStart(5)} s  ${s(st.materialize).padStart(9)} s  ${s(st.verify).padStart(4)} s  ${s(st.describe).padStart(6)} s  ${mib(build.maxRssBytes).padStart(4)} MiB  ` +
      `${(pass.ms / st.materialize).toFixed(2).padStart(22)}  ${(pass.ms / (build.totalMs - st.describe)).toFixed(2).padStart(22)}`,
  );
}
// Least-squares fit of whole-build time against triples: cost per million triples and R² (two sizes or more).
if (rows.length < 2) process.exit(0);
const xs = rows.map((r) => r.n / 1e6);
const ys = rows.map((r) => r.build.totalMs / 1000);
const mx = xs.reduce((a, b) => a + b, 0) / xs.length;
const my = ys.reduce((a, b) => a + b, 0) / ys.length;
const slope = xs.reduce((a, x, i) => a + (x - mx) * (ys[i] - my), 0) / xs.reduce((a, x) => a + (x - mx) ** 2, 0);
const icept = my - slope * mx;
const ssr = ys.reduce((a, y, i) => a + (y - (icept + slope * xs[i])) ** 2, 0);
const sst = ys.reduce((a, y) => a + (y - my) ** 2, 0);
console.log(`fit: whole build ≈ ${icept.toFixed(1)} s + ${slope.toFixed(2)} s per million triples (R² ${(1 - ssr / sst).toFixed(4)})`);
