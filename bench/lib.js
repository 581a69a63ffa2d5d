// Shared by the bench scripts: their options (node's util.parseArgs) and the default corpus.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

/** The folder of the bench scripts. */
export const here = path.dirname(fileURLToPath(import.meta.url));

/**
 * Parses `--name value` options of a bench script; every option is a string with a default.
 * `--source` (the real corpus beside the repository) is always there.
 */
export function benchOptions(defaults, flags = []) {
  const options = { source: { type: 'string', default: path.resolve(here, '../../shared/spider4sparql') } };
  for (const [name, value] of Object.entries(defaults)) options[name] = { type: 'string', default: value };
  for (const name of flags) options[name] = { type: 'boolean', default: false };
  return parseArgs({ options, args: process.argv.slice(2) }).values;
}

/** The median of a list of numbers. */
export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}
