// npm run bench [-- --runs N] [-- --source DIR] [-- --no-compare]
// Measures the whole build of the Spider4SPARQL dev set (or another source), stage by stage:
// median of N runs, each in a fresh process, and the peak resident memory of each run. Unless
// --no-compare, each run is paired with a build without VoID (--no-void), run right after it, so
// the time VoID adds is also measured as the difference of whole builds under the same load.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { benchOptions, here, median } from './lib.js';

const options = benchOptions({ runs: '5' }, ['no-compare']);
const source = options.source;
const runs = Number(options.runs);
if (!fs.existsSync(path.join(source, 'dev.json')) && !fs.existsSync(path.join(source, 'questions.json'))) {
  console.error(`bench: no benchmark source at ${source} (pass --source DIR)`);
  process.exit(2);
}
const compare = !options['no-compare'];
const buildOnce = (...extra) => {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'fkgqa-bench-'));
  const json = execFileSync(process.execPath, [path.join(here, 'build-once.js'), source, path.join(out, 'shards'), ...extra], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  fs.rmSync(out, { recursive: true, force: true });
  return JSON.parse(json);
};
const results = [];
const withoutVoid = [];
for (let i = 0; i < runs; i++) {
  results.push(buildOnce());
  if (compare) withoutVoid.push(buildOnce('--no-void'));
  process.stderr.write(
    `run ${i + 1}/${runs}: ${(results[i].totalMs / 1000).toFixed(2)} s` + (compare ? `, without VoID ${(withoutVoid[i].totalMs / 1000).toFixed(2)} s` : '') + '\n',
  );
}
// The same input through a bare n3 pass-through (parse and write, nothing else), after each build:
// materialisation throughput is reported as a ratio to it (absolute times vary between machines).
const kgFiles = fs.readdirSync(path.join(source, 'kg')).filter((f) => f.endsWith('.nt')).map((f) => path.join(source, 'kg', f));
const passes = [];
for (let i = 0; i < runs; i++) {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'fkgqa-bench-pass-'));
  passes.push(JSON.parse(execFileSync(process.execPath, [path.join(here, 'passthrough.js'), out, ...kgFiles], { encoding: 'utf8' })));
  fs.rmSync(out, { recursive: true, force: true });
}
const r0 = results[0];
console.log(`fkgqa partition on ${source}: ${r0.graphs} graphs, ${r0.triples} triples; median of ${runs} runs (${os.cpus().length} cores, node ${process.version})`);
console.log(`  whole build      ${(median(results.map((r) => r.totalMs)) / 1000).toFixed(2)} s`);
for (const k of Object.keys(r0.stages)) {
  console.log(`  ${k.padEnd(16)} ${(median(results.map((r) => r.stages[k])) / 1000).toFixed(2)} s`);
}
console.log(`  peak RSS         ${(Math.max(...results.map((r) => r.maxRssBytes)) / 1048576).toFixed(0)} MiB (max over runs)`);
const passMs = median(passes.map((p) => p.ms));
const matMs = median(results.map((r) => r.stages.materialize));
const dataMs = median(results.map((r) => r.stages.profile + r.stages.materialize + r.stages.verify));
console.log(`  pass-through     ${(passMs / 1000).toFixed(2)} s (n3 parse + write of the ${kgFiles.length} .nt files, ${passes[0].triples} triples)`);
console.log(`  throughput ratio materialisation pass ${(passMs / matMs).toFixed(2)}, profile + materialise + verify ${(passMs / dataMs).toFixed(2)} (1 = as fast as the pass-through)`);
if (compare) {
  const added = median(results.map((r, i) => r.totalMs - withoutVoid[i].totalMs));
  console.log(`  without VoID     ${(median(withoutVoid.map((r) => r.totalMs)) / 1000).toFixed(2)} s whole build, peak RSS ${(Math.max(...withoutVoid.map((r) => r.maxRssBytes)) / 1048576).toFixed(0)} MiB`);
  console.log(`  VoID adds        ${(added / 1000).toFixed(2)} s (median of the paired differences of whole builds)`);
}
