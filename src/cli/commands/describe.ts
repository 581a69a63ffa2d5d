/** `fkgqa describe`: flags → `describe` (src/index.ts); prints the summary (text or JSON). */
import path from 'node:path';
import { describe } from '../../index.js';
import { outputFormat, voidEngine } from '../options.js';
import { stderrProgress } from '../progress.js';
import { counted } from '../../common/strings.js';

export async function run(o: Record<string, any>): Promise<void> {
  const format = outputFormat(o);
  const r = await describe({
    dir: o.shards,
    endpointBase: o.endpointBase,
    sparql: o.sparql,
    engine: voidEngine(o),
    progress: stderrProgress(o.quiet),
  });
  const summary = { dir: path.resolve(o.shards), graphs: r.graphs, shards: r.shards, linksets: r.linksets, voidBytes: r.voidBytes, files: r.files.length, ms: r.timings.totalMs };
  if (format === 'json') process.stdout.write(JSON.stringify(summary, null, 2) + '\n');
  else {
    process.stdout.write(
      `fkgqa describe: ${counted(r.graphs, 'graph')}, ${counted(r.shards, 'shard')}, ${counted(r.linksets, 'linkset')}; ` +
        `${r.shards * 2} VoID files (${(r.voidBytes / 1024).toFixed(0)} KiB) and the catalogue written to ${o.shards}/ in ${(r.timings.totalMs / 1000).toFixed(1)} s\n`,
    );
  }
}
