/**
 * `fkgqa eval`: runs agents on the benchmark's questions (FKGQA paper, section 5) and appends one
 * run line per run (src/eval/record.ts) to a JSON-lines run file (src/eval/run-file.ts: whole
 * lines only, a torn last line cut away on open, one writer). Runs already in the file are skipped
 * (resume); runs go at most `concurrency` at a time, here, or through a queue to `fkgqa worker`s
 * (src/eval/queue.ts); `part` keeps one part of the selection. What a run is and how it is made is
 * src/eval/run-maker.ts.
 */
import { DEFAULT_FEDERATION_ENGINE } from '../federation/engines.js';
import { plannedRuns, prepareEval, RunMaker, RunTally, type EvalOptions, type EvalSummary } from './run-maker.js';
import { RunFile } from './run-file.js';

export {
  inPart,
  plannedRuns,
  prepareEval,
  PROMPTS_DIR,
  readPrompt,
  RunMaker,
  RunTally,
  SCRIPTED_MAX_QUERY_CHARS,
  systemPrompt,
  selectQuestions,
  type EvalContext,
  type EvalOptions,
  type EvalSummary,
  type PlannedRun,
} from './run-maker.js';
import { counted } from '../common/strings.js';

/**
 * Runs the evaluation (module comment): here, `concurrency` runs at a time, or, with `queue`, as the
 * coordinator of `fkgqa worker`s (src/eval/queue.ts). Either way this process is the only writer of
 * the run file.
 * @throws InputError for what `prepareEval` refuses, an `out` that is a directory or a run file with
 *   a line that is not a run record, or a run file another fkgqa eval is appending to
 */
export async function runEval(o: EvalOptions): Promise<EvalSummary> {
  const t0 = performance.now();
  const progress = o.progress ?? (() => {});
  const warn = o.warn ?? progress;
  const ctx = await prepareEval(o);
  const planned = plannedRuns(ctx);
  const runFile = RunFile.open(o.out, ctx.digest, o.federationEngine ?? DEFAULT_FEDERATION_ENGINE);
  const maker = new RunMaker(ctx);
  try {
    if (runFile.opening.repaired) warn(`warning: ${runFile.opening.repaired}`);
    const todo = planned.filter((p) => !runFile.done(p.id, !!o.retryErrors));
    const skipped = planned.length - todo.length;
    const part = o.part ? ` part ${o.part.k}/${o.part.n}:` : '';
    progress(
      `fkgqa eval:${part} ${counted(ctx.questions.length, 'question')} × ${o.repeats ?? 1}${o.part ? `, ${counted(planned.length, 'run')} in this part` : ''}, ${counted(skipped, 'run')} already in ${o.out}, ${todo.length} to run (${o.setup}, ${ctx.who}, tools ${o.tools ?? 'mcp'})`,
    );
    const tally = new RunTally(todo.length, progress);
    let lost: EvalSummary['lost'];
    if (o.queue) {
      const { coordinate } = await import('./queue.js');
      lost = await coordinate(ctx, runFile, todo, tally);
    } else {
      let next = 0;
      const worker = async (slot: number) => {
        while (next < todo.length) {
          const { q, repeat } = todo[next++];
          const record = await maker.run(q, repeat, slot);
          runFile.append(record);
          tally.note(record);
        }
      };
      await Promise.all(Array.from({ length: Math.max(1, Math.min(o.concurrency ?? 1, todo.length)) }, (_, slot) => worker(slot)));
    }
    const failures = tally.failed;
    const ran = tally.finished;
    return {
      out: o.out,
      planned: planned.length,
      skipped,
      ran,
      endReasons: tally.endReasons,
      succeeded: ran - failures.reduce((n, f) => n + f.runs, 0),
      failed: failures,
      ...(lost?.length ? { lost } : {}),
      ...(runFile.opening.repaired ? { repaired: runFile.opening.repaired } : {}),
      ms: performance.now() - t0,
    };
  } finally {
    runFile.close();
    await maker.close();
  }
}
