/** `fkgqa questions`: flags → `questions` (src/index.ts); prints the questions (text or JSON). */
import { questions } from '../../index.js';
import { formatQuestionsText } from '../../report/questions.js';
import { outputFormat, selectedQueries } from '../options.js';
import { stderrProgress } from '../progress.js';

export async function run(o: Record<string, any>): Promise<void> {
  const format = outputFormat(o);
  const sel = selectedQueries(o.shards, o.question, o.query);
  const all = await questions({ shards: o.shards, state: o.state, kgs: o.kg, queries: sel.queries, timeoutMs: o.timeout, previewRows: o.rows, progress: stderrProgress(o.quiet) });
  const views = sel.indexes ? all.filter((v) => sel.indexes!.includes(v.index)) : all;
  process.stdout.write(format === 'json' ? JSON.stringify(views, null, 2) + '\n' : formatQuestionsText(views));
}
