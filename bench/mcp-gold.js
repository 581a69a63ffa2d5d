// node bench/mcp-gold.js [-- --shards DIR] [-- --kg a,b] [-- --timeout MS] [-- --federation-engine NAME] [-- --json FILE]
// The end-to-end check of fkgqa mcp on a build (a long run, not a test): every distinct gold query,
// rewritten as its trivial federation over its graph's shards, sent through run_sparql_query, must
// give the gold answer stored by fkgqa stats (src/checks/mcp-gold.ts). Default build: devbuild
// (as docs/evaluation.md builds it) when it exists. Prints the totals and every query that is not identical, with the reason.
import fs from 'node:fs';
import { checkGoldThroughMcp } from '../dist/checks/mcp-gold.js';
import { benchOptions } from './lib.js';

const o = benchOptions({ shards: 'devbuild', kg: '', timeout: '10000', json: '', 'federation-engine': 'comunica' }, ['quiet']);
if (!fs.existsSync(o.shards)) {
  console.error(`bench/mcp-gold: no build at ${o.shards} (give --shards)`);
  process.exit(2);
}
const r = await checkGoldThroughMcp({
  shards: o.shards,
  kgs: o.kg ? o.kg.split(',') : undefined,
  timeoutMs: Number(o.timeout),
  federationEngine: o['federation-engine'],
  progress: o.quiet ? undefined : (l) => process.stderr.write(`${l}\n`),
});
if (o.json) fs.writeFileSync(o.json, JSON.stringify(r, null, 2) + '\n');
const n = r.verdicts.length;
console.log(`fkgqa mcp gold check: ${n} distinct gold queries over ${r.graphs.length} graphs, trivial federation through run_sparql_query, timeout_ms ${r.timeoutMs}`);
console.log(
  `  identical ${r.totals.identical}, equivalent (ties under ORDER BY) ${r.totals.equivalent}, different ${r.totals.different}, failed ${r.totals.failed}, no gold answer ${r.totals['no-gold']}`,
);
console.log(`  ${r.overDefaultLimit} trivial-federation queries exceed the default query limit of 8,000 characters (raised for this check)`);
const s = (xs) => [...xs].sort((a, b) => a - b);
const chars = s(r.verdicts.map((v) => v.chars));
console.log(`  query length: median ${chars[Math.floor(n / 2)]}, max ${chars[n - 1]} characters; ${(r.ms / 1000).toFixed(0)} s in all`);
for (const v of r.verdicts.filter((v) => v.status !== 'identical')) console.log(`  ${v.id} ${v.status}: ${v.reason ?? ''}`);
