/**
 * Reading run files for `fkgqa score`: JSON lines of `fkgqa eval` (src/eval/record.ts), format
 * `fkgqa-run/2` (with the build the run was made on) or `fkgqa-run/1` (older runs, no build
 * identity). Every record is checked for the fields scoring reads before anything is scored, so a
 * broken record is named by file and line (exit 2), never met as an internal error halfway.
 * A torn last line — no newline at the end of the file and not JSON, what a `kill -9`
 * during an append leaves — is skipped with a warning; any other malformed line
 * is an error.
 *
 * A run file that `fkgqa eval` is still writing (its lock beside the file names a live process,
 * `runFileLock`) is refused: its runs so far would be scored as if they were all, without
 * a word. With `partial` it is scored, with a warning that says
 * so and the file in `partial` (the report's `partial`). A lock left by an eval that was killed is
 * a warning: runs it had not reached are missing.
 */
import { readTextInput } from '../common/input.js';
import { InputError } from '../common/errors.js';
import { lockHolderOf } from '../common/output.js';
import path from 'node:path';
import { runFileLock, runIdentity, runInTwoFiles, type RunCondition, type RunRecord } from '../eval/record.js';

/** The run formats score reads. */
export const RUN_FORMATS = ['fkgqa-run/1', 'fkgqa-run/2'] as const;
export type RunFormat = (typeof RUN_FORMATS)[number];

/**
 * How a run ended. `fkgqa-run/1`: submitted, cancelled, turn_limit, model_error; `fkgqa-run/2`
 * adds infrastructure_error (an endpoint or the federation engine failed: not the agent's fault)
 * and the per-run limits of eval (message_limit, token_limit, time_limit).
 */
export const SCORED_END_REASONS = ['submitted', 'cancelled', 'turn_limit', 'message_limit', 'token_limit', 'time_limit', 'model_error', 'infrastructure_error'] as const;
export type ScoredEndReason = (typeof SCORED_END_REASONS)[number];

/**
 * End reasons that are failures of the run, not the agent's outcome: an endpoint or the federation
 * engine failed (`infrastructure_error`), or the LLM API did (`model_error`). Never in accuracy;
 * `fkgqa eval --retry-errors` reruns them.
 */
export const FAILED_END_REASONS: ScoredEndReason[] = ['model_error', 'infrastructure_error'];

/** End reasons that are limits the run hit before it answered: the agent's failure, scored as wrong. */
export const LIMIT_END_REASONS: ScoredEndReason[] = ['turn_limit', 'message_limit', 'token_limit', 'time_limit'];

/** The build a `fkgqa-run/2` run was made on (docs: contracts of the run record). */
export interface RunBuild {
  /** The build's output digest (build.json). */
  outputDigest: string;
  /** The digest of the run's gold answer when the run was made (`goldAnswerDigest` of src/build/gold-answers.ts), or null when stats had not run. */
  goldDigest: string | null;
}

/** A run record as score reads it: the `fkgqa-run/1` fields, with those `fkgqa-run/2` adds. */
export type ScoredRun = Omit<RunRecord, 'format' | 'endReason'> & {
  format: RunFormat;
  endReason: ScoredEndReason;
  /** `fkgqa-run/2`: the build the run was made on. */
  build?: RunBuild;
  /** `fkgqa-run/2`, end reason infrastructure_error: what failed, in words. */
  infrastructure?: { what: string; endpoint?: string; step?: number };
  /** `fkgqa-run/2`: digest and size of the tool surface the agent saw. */
  toolSurface?: { digest: string; tools: number };
};

/** A run with the place it was read from and the condition it measured. */
export interface RunLine {
  /** The record; its `id` is the one computed from its fields (`runIdentity`), whatever the line says. */
  run: ScoredRun;
  file: string;
  /** 1-based line number. */
  line: number;
  /** The condition the run measured (src/eval/record.ts, RunCondition) and its digest. */
  condition: RunCondition;
  conditionDigest: string;
}

/** What `readRunFiles` returns: the runs (one per run: condition, question, repeat) and warnings. */
export interface RunFiles {
  runs: RunLine[];
  /** Torn last lines skipped, files being written (with `partial`), locks left by a killed eval: one sentence each. */
  warnings: string[];
  /** Files scored although fkgqa eval was still writing them (`partial`). */
  partial: string[];
}

const isObject = (x: unknown): x is Record<string, unknown> => !!x && typeof x === 'object' && !Array.isArray(x);
const isNumber = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x);
const TERM_TYPES = new Set(['uri', 'literal', 'bnode', 'typed-literal', 'triple']);

/** Names the first thing wrong with SPARQL JSON results, or undefined. */
function resultsProblem(r: unknown, at: string): string | undefined {
  if (!isObject(r)) return `${at} is not an object (SPARQL JSON results)`;
  if (!isObject(r.head)) return `${at}.head is not an object`;
  if (r.head.vars !== undefined && (!Array.isArray(r.head.vars) || !r.head.vars.every((v) => typeof v === 'string'))) return `${at}.head.vars is not a list of names`;
  if (r.boolean !== undefined) return typeof r.boolean === 'boolean' ? undefined : `${at}.boolean is not true or false`;
  if (!isObject(r.results) || !Array.isArray(r.results.bindings)) return `${at} has neither "boolean" nor "results.bindings" (a list)`;
  for (const [i, row] of r.results.bindings.entries()) {
    if (!isObject(row)) return `${at}.results.bindings[${i}] is not an object`;
    for (const [v, t] of Object.entries(row)) {
      if (!isObject(t) || typeof t.type !== 'string' || !TERM_TYPES.has(t.type) || typeof t.value !== 'string') return `${at}.results.bindings[${i}].${v} is not an RDF term ({"type": "uri"|"literal"|"bnode", "value": string})`;
    }
  }
  return undefined;
}

/**
 * Names the first thing wrong with a run record (the fields score reads), or undefined.
 * @param r the parsed line
 */
export function runProblem(r: unknown): string | undefined {
  if (!isObject(r)) return 'not a JSON object';
  if (!RUN_FORMATS.includes(r.format as RunFormat)) return `not a run record of fkgqa eval (format ${JSON.stringify(r.format)}, expected ${RUN_FORMATS.join(' or ')})`;
  if (typeof r.id !== 'string' || !r.id) return '"id" is missing or not a string';
  if (!isObject(r.question)) return '"question" is missing or not an object';
  if (typeof r.question.kg !== 'string' || !r.question.kg) return '"question.kg" is missing or not a string';
  if (typeof r.question.queryId !== 'string' || !r.question.queryId) return '"question.queryId" is missing or not a string';
  if (typeof r.setup !== 'string') return '"setup" is missing or not a string';
  if (typeof r.agent !== 'string') return '"agent" is missing or not a string';
  if (r.model !== null && r.model !== undefined && typeof r.model !== 'string') return '"model" is not a string or null';
  if (!SCORED_END_REASONS.includes(r.endReason as ScoredEndReason)) return `"endReason" ${JSON.stringify(r.endReason)} is none of ${SCORED_END_REASONS.join(', ')}`;
  if (r.format === 'fkgqa-run/1' && !['submitted', 'cancelled', 'turn_limit', 'model_error'].includes(r.endReason as string)) return `"endReason" ${JSON.stringify(r.endReason)} does not exist in fkgqa-run/1`;
  if (!Array.isArray(r.endpoints) || !r.endpoints.every((e) => isObject(e) && typeof e.url === 'string' && typeof e.shard === 'string')) return '"endpoints" is not a list of {"url", "shard"}';
  if (!Array.isArray(r.steps)) return '"steps" is missing or not a list';
  for (const [i, s] of r.steps.entries()) {
    if (!isObject(s) || (s.type !== 'llm' && s.type !== 'tool')) return `steps[${i}] is not an LLM or tool step`;
    if (s.type === 'tool' && (typeof s.name !== 'string' || typeof s.arguments !== 'string' || typeof s.isError !== 'boolean' || typeof s.result !== 'string')) return `steps[${i}]: a tool step needs "name", "arguments" and "result" (strings) and "isError" (boolean)`;
  }
  if (r.finalQuery !== null && typeof r.finalQuery !== 'string') return '"finalQuery" is not a string or null';
  if (r.final !== undefined) {
    if (!isObject(r.final)) return '"final" is not an object';
    if (!['ok', 'error', 'timeout'].includes(r.final.status as string)) return `"final.status" ${JSON.stringify(r.final.status)} is none of ok, error, timeout`;
    if (r.final.endpoints !== undefined && (!Array.isArray(r.final.endpoints) || !r.final.endpoints.every((e) => typeof e === 'string'))) return '"final.endpoints" is not a list of URLs';
    if (r.final.status === 'ok') {
      const p = resultsProblem(r.final.results, '"final.results"');
      if (p) return p;
    }
  }
  if (!isNumber(r.question.index)) return '"question.index" is missing or not a number';
  if (!isNumber(r.repeat)) return '"repeat" is missing or not a number';
  if (!isNumber(r.maxTurns)) return '"maxTurns" is missing or not a number';
  if (!isObject(r.prompt) || typeof r.prompt.sha256 !== 'string') return '"prompt.sha256" is missing or not a string';
  if (!isObject(r.usage) || !isNumber(r.usage.totalTokens)) return '"usage.totalTokens" is missing or not a number';
  if (!isObject(r.counts) || !['llmCalls', 'sparqlCalls', 'voidCalls'].every((k) => isNumber((r.counts as Record<string, unknown>)[k]))) return '"counts" needs numbers "llmCalls", "sparqlCalls" and "voidCalls"';
  if (!isNumber(r.ms)) return '"ms" is missing or not a number';
  if (r.format === 'fkgqa-run/2') {
    if (!isObject(r.build) || typeof r.build.outputDigest !== 'string' || (r.build.goldDigest !== null && typeof r.build.goldDigest !== 'string')) return '"build" needs "outputDigest" (a string) and "goldDigest" (a string or null) in fkgqa-run/2';
    if (r.endReason === 'infrastructure_error' && (!isObject(r.infrastructure) || typeof r.infrastructure.what !== 'string')) return '"infrastructure.what" is missing: an infrastructure_error run says what failed';
  }
  return undefined;
}

/**
 * Reads run files: one record per line. A run is known by its id (src/eval/record.ts, `runId`: its
 * setup, model or agent, question, repeat and condition), computed from its fields (`runIdentity`):
 * in one file a later line with the same id replaces an earlier one (a resumed or rerun run), as
 * `fkgqa eval` skips it; the same id in two files is refused (`runInTwoFiles`), as is a file given
 * twice. A last line without newline that is not JSON (torn by a crash during an append) is skipped
 * with a warning.
 * @param o `partial`: read a run file fkgqa eval is still writing (module comment), with a warning
 * @throws InputError naming the file and line of a line that is not JSON or not a valid run record,
 *   a file that does not exist or is given twice, a run found in two files (both named), or
 *   (without `partial`) a file fkgqa eval is still writing
 */
export function readRunFiles(files: string[], o: { partial?: boolean } = {}): RunFiles {
  const byId = new Map<string, RunLine>();
  const warnings: string[] = [];
  const partial: string[] = [];
  const given = new Map<string, string>();
  for (const file of files) {
    const abs = path.resolve(file);
    if (given.has(abs)) throw new InputError(`the run file is given twice (${given.get(abs)} and ${file}): each run is counted once; give it once`, { file });
    given.set(abs, file);
  }
  for (const file of files) {
    const inFile = new Set<string>();
    const text = readTextInput(file, 'run file');
    const writer = lockHolderOf(runFileLock(file));
    const runs = text.split('\n').filter((l) => l.trim()).length;
    if (writer && writer.pid !== process.pid && writer.alive) {
      if (!o.partial) throw new InputError(`fkgqa eval (pid ${writer.pid}) is still writing this run file: its ${runs} runs so far are not all its runs; wait until eval ends, or pass --partial to score them (the report then says it is partial)`, { file });
      partial.push(file);
      warnings.push(`PARTIAL: ${file} was still being written by fkgqa eval (pid ${writer.pid}): ${runs} runs scored so far, not all the runs it will hold (--partial)`);
    } else if (writer && !writer.alive) {
      warnings.push(`${file}: the fkgqa eval that wrote it (pid ${writer.pid}) stopped without finishing (its lock is left: killed?): the runs it had not reached are missing; the same fkgqa eval command completes the file`);
    }
    const lines = text.split('\n');
    const torn = !text.endsWith('\n') && text.length > 0;
    lines.forEach((line, i) => {
      if (!line.trim()) return;
      let r: unknown;
      try {
        r = JSON.parse(line);
      } catch (e) {
        if (torn && i === lines.length - 1) {
          warnings.push(`${file}, line ${i + 1}: skipped a torn last line (${line.length} characters, no newline, not JSON: a run being written when its writer stopped)`);
          return;
        }
        throw new InputError(`not JSON: ${(e as Error).message}`, { file, line: i + 1 });
      }
      const problem = runProblem(r);
      if (problem) throw new InputError(problem, { file, line: i + 1 });
      const run = r as ScoredRun;
      const who = runIdentity(run);
      const earlier = byId.get(who.id);
      if (earlier && !inFile.has(who.id)) {
        throw new InputError(runInTwoFiles(who.id, { file: earlier.file, line: earlier.line, startedAt: earlier.run.startedAt }, { file, line: i + 1, startedAt: run.startedAt }), { file, line: i + 1 });
      }
      inFile.add(who.id);
      // A later line with the same id (a rerun by --retry-errors) replaces the run in its place: the
      // report keeps the order of first appearance, so a retry does not reorder it.
      byId.set(who.id, { run: { ...run, id: who.id }, file, line: i + 1, condition: who.condition, conditionDigest: who.digest });
    });
  }
  return { runs: [...byId.values()], warnings, partial };
}
