/** `fkgqa synth`: flags → `synth` (src/index.ts). */
import { synth } from '../../index.js';
import { stderrProgress } from '../progress.js';

export async function run(o: Record<string, any>): Promise<void> {
  const r = await synth({
    source: o.source,
    kg: o.kg,
    triples: o.triples,
    seed: o.seed,
    out: o.out,
    progress: stderrProgress(o.quiet),
  });
  process.stdout.write(`${r.file}: ${r.triples} triples (${r.copies} copies of ${r.baseTriples}), ${r.questions} questions\n`);
}
