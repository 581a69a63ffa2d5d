import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The tool's name and version, from package.json. */
export const TOOL: { name: string; version: string } = (() => {
  const pkg = JSON.parse(fs.readFileSync(fileURLToPath(new URL('../../package.json', import.meta.url)), 'utf8'));
  return { name: pkg.name as string, version: pkg.version as string };
})();

/**
 * sha256 over the tool's own code and encodings (every compiled `*.js` of the tool, the folder above this module's, and
 * `asp/*.lp`): two builds with the same inputs, options and code digest must be byte-identical.
 */
export function codeDigest(): string {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  // The compiled tree (dist/, or src/ under a TypeScript runner): every module of the tool.
  const here = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
  const files: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (/\.(js|ts|lp)$/.test(e.name) && !e.name.endsWith('.d.ts')) files.push(p);
    }
  };
  walk(here);
  walk(path.join(root, 'asp'));
  const h = crypto.createHash('sha256');
  for (const f of files.sort()) h.update(`${path.relative(root, f)}\n`).update(fs.readFileSync(f));
  return h.digest('hex');
}
