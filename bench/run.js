// npm run bench [-- --runs N] [-- --source DIR] [-- --no-compare] [-- --result FILE]
// Measures the whole build of the Spider4SPARQL dev set (or another source), stage by stage:
// median of N runs, each in a fresh process, and the peak resident memory of each run. Every build
// is paired with a bare n3 pass-through of the same files, run right after it, and the throughput
// ratio is the median of the per-pair ratios: a ratio of runs far apart in time measures the load,
// not the code (unpaired, a changing load once turned 0.9 into 0.21). Unless --no-compare, each
// build is also paired with a build without VoID (--no-void), so the time VoID adds is measured as
// the difference of whole builds under the same load.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { benchOptions, here, loadAverage, median, writeResult } from './lib.js';

const options = benchOptions({ runs: '5' }, ['no-compare']);
const source = options.source;
const runs = Number(options.runs);
if (!fs.existsSync(path.join(source, 'dev.json')) && !fs.existsSync(path.join(source, 'questions.json'))) {
  console.error(`bench: no benchmark source at ${source} (pass --source DIR)`);
  process.exit(2);
}
const compare = !options['no-compare'];
const loadBefore = loadAverage();
const buildOnce = (...extra) => {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'fkgqa-bench-'));
  const json = execFileSync(process.execPath, [path.join(here, 'build-once.js'), source, path.join(out, 'shards'), ...extra], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  fs.rmSync(out, { recursive: true, force: true });
  return JSON.parse(json);
};
// The same input through a bare n3 pass-through (parse and write, nothing else), right after each
// build: materialisation throughput is reported as a ratio to it (absolute times vary between machines).
const kgFiles = fs
  .readdirSync(path.join(source, 'kg'))
  .filter((f) => f.endsWith('.nt'))
  .sort()
  .map((f) => path.join(source, 'kg', f));
const passThrough = () => {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'fkgqa-bench-pass-'));
  try {
    return JSON.parse(execFileSync(process.execPath, [path.join(here, 'passthrough.js'), out, ...kgFiles], { encoding: 'utf8' }));
  } finally {
    fs.rmSync(out, { recursive: true, force: true });
  }
};
const results = [];
const withoutVoid = [];
const passes = [];
for (let i = 0; i < runs; i++) {
  results.push(buildOnce());
  passes.push(passThrough());
  if (compare) withoutVoid.push(buildOnce('--no-void'));
  process.stderr.write(
    `run ${i + 1}/${runs}: ${(results[i].totalMs / 1000).toFixed(2)} s, pass-through ${(passes[i].ms / 1000).toFixed(2)} s` +
      (compare ? `, without VoID ${(withoutVoid[i].totalMs / 1000).toFixed(2)} s` : '') +
      ` (load ${loadAverage()[0]})\n`,
  );
}
const r0 = results[0];
console.log(`fkgqa partition on ${source}: ${r0.graphs} graphs, ${r0.triples} triples; median of ${runs} runs (${os.cpus().length} cores, node ${process.version})`);
console.log(`  whole build      ${(median(results.map((r) => r.totalMs)) / 1000).toFixed(2)} s`);
for (const k of Object.keys(r0.stages)) {
  console.log(`  ${k.padEnd(16)} ${(median(results.map((r) => r.stages[k])) / 1000).toFixed(2)} s`);
}
console.log(`  peak RSS         ${(Math.max(...results.map((r) => r.maxRssBytes)) / 1048576).toFixed(0)} MiB (max over runs)`);
const passMs = median(passes.map((p) => p.ms));
const matRatio = median(results.map((r, i) => passes[i].ms / r.stages.materialize));
const dataRatio = median(results.map((r, i) => passes[i].ms / (r.stages.profile + r.stages.materialize + r.stages.verify)));
const buildRatio = median(results.map((r, i) => r.totalMs / passes[i].ms));
console.log(
  `  pass-through     ${(passMs / 1000).toFixed(2)} s (n3 parse + write of the ${kgFiles.length} .nt files, ${passes[0].triples} triples), peak RSS ${(Math.max(...passes.map((p) => p.maxRssBytes)) / 1048576).toFixed(0)} MiB`,
);
console.log(
  `  throughput ratio materialisation pass ${matRatio.toFixed(2)}, profile + materialise + verify ${dataRatio.toFixed(2)} (1 = as fast as the pass-through; median of ${runs} paired ratios)`,
);
console.log(`  whole build      ${buildRatio.toFixed(2)}× the pass-through's time (median of paired ratios)`);
let voidAdds = null;
if (compare) {
  voidAdds = median(results.map((r, i) => r.totalMs - withoutVoid[i].totalMs));
  console.log(
    `  without VoID     ${(median(withoutVoid.map((r) => r.totalMs)) / 1000).toFixed(2)} s whole build, peak RSS ${(Math.max(...withoutVoid.map((r) => r.maxRssBytes)) / 1048576).toFixed(0)} MiB`,
  );
  console.log(`  VoID adds        ${(voidAdds / 1000).toFixed(2)} s (median of the paired differences of whole builds)`);
}
const loadAfter = loadAverage();
console.log(`  load average     ${loadBefore.join(' ')} before, ${loadAfter.join(' ')} after`);
writeResult(options, 'build', {
  loadBefore,
  ratios: [
    { what: 'materialisation throughput vs a bare n3 parse-and-write of the same files (paired)', value: matRatio, unit: '× pass-through', goal: 'report' },
    { what: 'whole build time vs the bare pass-through (paired)', value: buildRatio, unit: '× time', goal: 'report' },
  ],
  figures: {
    source,
    graphs: r0.graphs,
    triples: r0.triples,
    runs,
    wholeBuildMs: median(results.map((r) => r.totalMs)),
    stagesMs: Object.fromEntries(Object.keys(r0.stages).map((k) => [k, median(results.map((r) => r.stages[k]))])),
    passThroughMs: passMs,
    peakRssMiB: Math.round(Math.max(...results.map((r) => r.maxRssBytes)) / 1048576),
    passThroughPeakRssMiB: Math.round(Math.max(...passes.map((p) => p.maxRssBytes)) / 1048576),
    voidAddsMs: voidAdds,
  },
});
