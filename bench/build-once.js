// One measured build in a fresh process: prints {timings per stage, peak RSS} as JSON on stdout.
// Used by bench/run.js; run it alone with: node bench/build-once.js <source> <out> [--no-void]
import { partition, DEFAULT_PARTITION_OPTIONS } from '../dist/partition/index.js';

const [source, out, flag] = process.argv.slice(2);
const t0 = performance.now();
const r = await partition({ ...DEFAULT_PARTITION_OPTIONS, source, out, void: flag !== '--no-void' });
const totalMs = performance.now() - t0;
const stages = { load: 0, analyze: 0, profile: 0, plan: 0, materialize: 0, verify: 0, describe: 0 };
for (const g of r.graphs) for (const k of Object.keys(stages)) stages[k] += g.timings[k];
const triples = r.graphs.reduce((n, g) => n + g.manifest.inputs.data.triples, 0);
process.stdout.write(JSON.stringify({ totalMs, stages, triples, graphs: r.graphs.length, maxRssBytes: process.resourceUsage().maxRSS * 1024 }) + '\n');
