// The baseline of materialisation throughput: a bare N-Triples pass-through with n3 — stream parse
// and write to a file, nothing else. Prints {triples, ms, maxRssBytes} as JSON (totals over the files).
// Usage: node bench/passthrough.js <out-dir> <in.nt>...
import fs from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { StreamParser, StreamWriter } from 'n3';

const [outDir, ...inputs] = process.argv.slice(2);
fs.mkdirSync(outDir, { recursive: true });
let triples = 0;
const t0 = performance.now();
for (const input of inputs) {
  const parser = new StreamParser({ format: 'N-Triples' });
  parser.on('data', () => triples++);
  await pipeline(fs.createReadStream(input), parser, new StreamWriter({ format: 'N-Triples' }), fs.createWriteStream(path.join(outDir, path.basename(input))));
}
process.stdout.write(JSON.stringify({ triples, ms: performance.now() - t0, maxRssBytes: process.resourceUsage().maxRSS * 1024 }) + '\n');
