// Shared by the bench scripts: their options (node's util.parseArgs), the default corpus, the load
// average, and the result record that `npm run bench:all` collects (bench/all.js).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

/** The folder of the bench scripts. */
export const here = path.dirname(fileURLToPath(import.meta.url));

/**
 * Parses `--name value` options of a bench script; every option is a string with a default.
 * `--source` (the real corpus beside the repository) and `--result FILE` (where {@link writeResult}
 * writes the bench's ratios as JSON, for bench/all.js) are always there.
 */
export function benchOptions(defaults, flags = []) {
  const options = {
    source: { type: 'string', default: path.resolve(here, '../../shared/spider4sparql') },
    result: { type: 'string', default: '' },
  };
  for (const [name, value] of Object.entries(defaults)) options[name] = { type: 'string', default: value };
  for (const name of flags) options[name] = { type: 'boolean', default: false };
  return parseArgs({ options, args: process.argv.slice(2) }).values;
}

/** The median of a list of numbers (the mean of the two middle values when the count is even). */
export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** The 1-, 5- and 15-minute load averages, rounded to 0.1 (what `uptime` prints). */
export function loadAverage() {
  return os.loadavg().map((x) => Math.round(x * 10) / 10);
}

/**
 * Writes a bench's result to `--result FILE` when given (nothing otherwise):
 * `{ bench, ratios: [{ what, value, goal?, unit?, note? }], figures, loadBefore, loadAfter, node, cpus }`.
 * `ratios` are the side-by-side ratios the bench measured in one run (value: a number); `figures`
 * anything else worth keeping (times in ms, memory in MiB). bench/all.js turns them into a table.
 */
export function writeResult(options, bench, { ratios, figures = {}, loadBefore }) {
  if (!options.result) return;
  const record = { bench, ratios, figures, loadBefore, loadAfter: loadAverage(), node: process.version, cpus: os.availableParallelism() };
  fs.writeFileSync(options.result, JSON.stringify(record, null, 2) + '\n');
}
