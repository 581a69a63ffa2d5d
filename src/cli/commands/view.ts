/**
 * `fkgqa view RUNS…`: flags → `view` (src/index.ts); writes the page (temp + rename; by default
 * view.html in the folder of the first run file, as `fkgqa run` lays it out) and says where on stderr.
 */
import fs from 'node:fs';
import path from 'node:path';
import { writeFileAtomic } from '../../common/output.js';
import { view } from '../../index.js';
import { stderrProgress } from '../progress.js';

export async function run(runs: string[], o: Record<string, any>): Promise<void> {
  const progress = stderrProgress(o.quiet);
  const r = await view({ runs, shards: o.shards, state: o.state, timeoutMs: o.timeout, maxRows: o.maxRows, maxChars: o.maxChars, partial: o.partial === true, progress });
  const out: string = o.out ?? path.join(path.dirname(runs[0]), 'view.html');
  writeFileAtomic(out, r.html);
  // Where the page went is said even with --quiet when it was not named: the user did not choose it.
  const said = `fkgqa view: wrote ${out} (${(fs.statSync(out).size / 1024).toFixed(0)} KiB); open it in a browser, or ${out}#run=<run id>`;
  if (progress) progress(said);
  else if (o.out === undefined) process.stderr.write(`${said}\n`);
}
