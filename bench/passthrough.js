// The baseline of materialisation throughput: a bare N-Triples pass-through with n3 — stream parse
// and write to a file, nothing else. Prints {triples, ms, maxRssBytes} as JSON.
// Usage: node bench/passthrough.js <in.nt> <out.nt>
import fs from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { StreamParser, StreamWriter } from 'n3';

const [input, output] = process.argv.slice(2);
const t0 = performance.now();
let triples = 0;
const parser = new StreamParser({ format: 'N-Triples' });
parser.on('data', () => triples++);
await pipeline(fs.createReadStream(input), parser, new StreamWriter({ format: 'N-Triples' }), fs.createWriteStream(output));
process.stdout.write(JSON.stringify({ triples, ms: performance.now() - t0, maxRssBytes: process.resourceUsage().maxRSS * 1024 }) + '\n');
