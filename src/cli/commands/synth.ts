/** `fkgqa synth`: flags → `synth` (src/index.ts). */
import { synth } from '../../index.js';
import { stderrProgress } from '../progress.js';
import { counted } from '../../common/strings.js';

export async function run(o: Record<string, any>): Promise<void> {
  const r = await synth({
    source: o.source,
    kg: o.kg,
    triples: o.triples,
    seed: o.seed,
    out: o.out,
    progress: stderrProgress(o.quiet),
  });
  process.stdout.write(`${r.file}: ${counted(r.triples, 'triple')} (${counted(r.copies, 'copy', 'copies')} of ${r.baseTriples}), ${counted(r.questions, 'question')}\n`);
}
