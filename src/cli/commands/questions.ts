/** `fkgqa questions`: flags → `questions` (src/index.ts); prints the questions (text or JSON). */
import { questions } from '../../index.js';
import { formatQuestionsText } from '../../report/questions.js';
import { outputFormat } from '../options.js';
import { stderrProgress } from '../progress.js';

export async function run(o: Record<string, any>): Promise<void> {
  const format = outputFormat(o);
  const views = await questions({ shards: o.shards, state: o.state, kgs: o.kg, queries: o.query, timeoutMs: o.timeout, previewRows: o.rows, progress: stderrProgress(o.quiet) });
  process.stdout.write(format === 'json' ? JSON.stringify(views, null, 2) + '\n' : formatQuestionsText(views));
}
