/** `fkgqa view RUNS…`: flags → `view` (src/index.ts); writes the page (temp + rename) and says what it holds on stderr. */
import fs from 'node:fs';
import { writeFileAtomic } from '../../common/output.js';
import { view } from '../../index.js';
import { stderrProgress } from '../progress.js';

export async function run(runs: string[], o: Record<string, any>): Promise<void> {
  const progress = stderrProgress(o.quiet);
  const r = await view({ runs, shards: o.shards, state: o.state, timeoutMs: o.timeout, maxRows: o.maxRows, maxChars: o.maxChars, partial: o.partial === true, progress });
  writeFileAtomic(o.out, r.html);
  progress?.(`fkgqa view: wrote ${o.out} (${(fs.statSync(o.out).size / 1024).toFixed(0)} KiB); open it in a browser, or ${o.out}#run=<run id>`);
}
