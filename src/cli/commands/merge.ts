/** `fkgqa merge`: flags → `merge` (src/index.ts); prints what was written. */
import { merge } from '../../index.js';

export async function run(files: string[], o: Record<string, any>): Promise<void> {
  const s = await merge({ files, out: o.out, warn: o.quiet ? undefined : (line) => process.stderr.write(`${line}\n`) });
  process.stdout.write(`fkgqa merge: ${s.runs} run${s.runs === 1 ? '' : 's'} written to ${s.out} (${s.files.map((f) => `${f.file} ${f.runs}`).join(', ')})\n`);
}
