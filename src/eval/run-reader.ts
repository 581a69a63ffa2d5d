/**
 * Reading run files (JSON lines of `fkgqa eval`, src/eval/record.ts): the one reader of their
 * lines, for `fkgqa eval` resuming its own file and `fkgqa merge` (`parseRunLines`), and for
 * `fkgqa score` and `fkgqa view` (`readRunFiles`: every field they read checked first, so a broken
 * record is named by file and line, exit 2, never met as an internal error halfway). The rules (a
 * torn last line set apart, a run known by `runId` whatever its `id` says, the last line of an id
 * winning, one run in two files refused, a file still being written refused without `partial`) are
 * those of docs/evaluation.md (`fkgqa score RUNS...`).
 *
 * This module is light (record.ts, common/): `fkgqa score` and `fkgqa view` import it and
 * record.ts, nothing else of src/eval/.
 */
import fs from 'node:fs';
import path from 'node:path';
import { InputError } from '../common/errors.js';
import { readTextInput } from '../common/input.js';
import { lockHolderOf } from '../common/output.js';
import { jsonResultsProblem } from '../federation/answer-check.js';
import { END_REASONS, RUN_FORMAT, runIdentity, type EndReason, type RunCondition, type RunRecord } from './record.js';
import { counted } from '../common/strings.js';

/**
 * The lock file `fkgqa eval` holds beside a run file while it appends to it (`.<name>.fkgqa-lock`:
 * its pid and start time; src/eval/run-file.ts), released when eval ends: `fkgqa score` reads it to
 * tell a run file still being written. The lock sits beside the file's real path (symbolic links
 * followed; for a file not yet written, its folder's real path), so that a second eval or a score
 * given a symbolic link to the same file finds the same lock (else, through a link,
 * two evals would write one file at once and score would read a live eval's file without a word). A hard link,
 * or a copy, has a path of its own and is not recognised.
 */
export function runFileLock(file: string): string {
  let abs = path.resolve(file);
  try {
    abs = fs.realpathSync(abs);
  } catch {
    try {
      abs = path.join(fs.realpathSync(path.dirname(abs)), path.basename(abs));
    } catch {
      // The folder does not exist yet: eval creates it, and the path is its real one.
    }
  }
  return path.join(path.dirname(abs), `.${path.basename(abs)}.fkgqa-lock`);
}

const isObject = (x: unknown): x is Record<string, unknown> => !!x && typeof x === 'object' && !Array.isArray(x);
const isNumber = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x);

/**
 * Names what is wrong with a line's format tag, or undefined when it is RUN_FORMAT. The records of
 * `fkgqa-run/1` (fkgqa 0.1 before build identity: no build, limits, tool surface or infrastructure
 * failure) are refused by name.
 */
function formatProblem(r: unknown): string | undefined {
  const format = isObject(r) ? r.format : undefined;
  if (format === RUN_FORMAT) return undefined;
  if (format === 'fkgqa-run/1') return `format fkgqa-run/1 is no longer read; rerun with this version (fkgqa eval writes ${RUN_FORMAT})`;
  return `not a run record of fkgqa eval (format ${JSON.stringify(format)}, expected ${RUN_FORMAT})`;
}

/**
 * Names the first thing wrong with SPARQL JSON results, or undefined: the rule the federation
 * client applies to every answer (`jsonResultsProblem`), and a head whose `vars` are names.
 */
function resultsProblem(r: unknown, at: string): string | undefined {
  if (!isObject(r)) return `${at} is not an object (SPARQL JSON results)`;
  if (isObject(r.head) && r.head.vars !== undefined && (!Array.isArray(r.head.vars) || !r.head.vars.every((v) => typeof v === 'string'))) return `${at}.head.vars is not a list of names`;
  const problem = jsonResultsProblem(r);
  return problem && `${at}: ${problem}`;
}

/**
 * Names the first thing wrong with a run record (every field `fkgqa score` and `fkgqa view` read),
 * or undefined.
 * @param r the parsed line
 */
function runProblem(r: unknown): string | undefined {
  const format = formatProblem(r);
  if (format || !isObject(r)) return format ?? 'not a JSON object';
  if (typeof r.id !== 'string' || !r.id) return '"id" is missing or not a string';
  if (!isObject(r.question)) return '"question" is missing or not an object';
  if (typeof r.question.kg !== 'string' || !r.question.kg) return '"question.kg" is missing or not a string';
  if (typeof r.question.queryId !== 'string' || !r.question.queryId) return '"question.queryId" is missing or not a string';
  if (typeof r.setup !== 'string') return '"setup" is missing or not a string';
  if (typeof r.agent !== 'string') return '"agent" is missing or not a string';
  if (r.model !== null && r.model !== undefined && typeof r.model !== 'string') return '"model" is not a string or null';
  if (!END_REASONS.includes(r.endReason as EndReason)) return `"endReason" ${JSON.stringify(r.endReason)} is none of ${END_REASONS.join(', ')}`;
  if (!Array.isArray(r.endpoints) || !r.endpoints.every((e) => isObject(e) && typeof e.url === 'string' && typeof e.shard === 'string')) return '"endpoints" is not a list of {"url", "shard"}';
  if (!Array.isArray(r.messages)) return '"messages" is missing or not a list';
  if (!Array.isArray(r.steps)) return '"steps" is missing or not a list';
  for (const [i, s] of r.steps.entries()) {
    if (!isObject(s) || (s.type !== 'llm' && s.type !== 'tool')) return `steps[${i}] is not an LLM or tool step`;
    if (s.type === 'tool' && (typeof s.name !== 'string' || typeof s.arguments !== 'string' || typeof s.isError !== 'boolean' || typeof s.result !== 'string'))
      return `steps[${i}]: a tool step needs "name", "arguments" and "result" (strings) and "isError" (boolean)`;
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
  if (!isObject(r.counts) || !['llmCalls', 'sparqlCalls', 'voidCalls'].every((k) => isNumber((r.counts as Record<string, unknown>)[k])))
    return '"counts" needs numbers "llmCalls", "sparqlCalls" and "voidCalls"';
  if (!isNumber(r.ms)) return '"ms" is missing or not a number';
  if (!isObject(r.build) || typeof r.build.outputDigest !== 'string' || (r.build.goldDigest !== null && typeof r.build.goldDigest !== 'string'))
    return '"build" needs "outputDigest" (a string) and "goldDigest" (a string or null)';
  if (r.endReason === 'infrastructure_error' && (!isObject(r.infrastructure) || typeof r.infrastructure.what !== 'string'))
    return '"infrastructure.what" is missing: an infrastructure_error run says what failed';
  return undefined;
}

/** A line of a run file: the record, its run id and condition, its line number (from 1) and its text (without the newline). */
export interface RunLine {
  record: RunRecord;
  /** The run's id computed from its fields (`runIdentity` of record.ts), whatever the line's `id` says. */
  id: string;
  /** The condition the run measured (record.ts, RunCondition) and its digest. */
  condition: RunCondition;
  conditionDigest: string;
  line: number;
  text: string;
}

/** Whether a text is JSON (what a line torn by a crash during an append is not). */
export function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * The run records of a run file's text, in file order, each with its run id (computed from its
 * fields), line number and text. A last line without newline that is not JSON — torn by a crash
 * during an append — is not returned but described in `torn`.
 * @param file the file's name, for messages
 * @param o `hint`: what to do about a bad line, added to its message (e.g. `choose another --out`);
 *   `whole`: check every field score and view read (`runProblem`), not only the format, the id and
 *   the fields of the condition (what appending and resuming need)
 * @throws InputError naming the file and line of a line that is not JSON or not a run record
 */
export function parseRunLines(text: string, file: string, o: { hint?: string; whole?: boolean } = {}): { lines: RunLine[]; torn?: { line: number; bytes: number } } {
  const hint = o.hint ? `; ${o.hint}` : '';
  const out: RunLine[] = [];
  const lines = text.split('\n');
  for (const [i, line] of lines.entries()) {
    if (!line.trim()) continue;
    let r: RunRecord;
    try {
      r = JSON.parse(line) as RunRecord;
    } catch (e) {
      if (i === lines.length - 1) return { lines: out, torn: { line: i + 1, bytes: Buffer.byteLength(line) } };
      throw new InputError(`not JSON (${(e as Error).message}): not a run file of fkgqa eval, or changed by hand; fix or remove that line${hint}`, { file, line: i + 1 });
    }
    const problem = o.whole ? runProblem(r) : (formatProblem(r) ?? (typeof r.id === 'string' ? undefined : '"id" is missing or not a string'));
    if (problem) throw new InputError(problem + hint, { file, line: i + 1 });
    let who: ReturnType<typeof runIdentity>;
    try {
      who = runIdentity(r);
    } catch {
      throw new InputError(`run ${r.id}: the fields of its condition (setup, agent, question, repeat, prompt, …) are missing: not a run record of fkgqa eval, or changed by hand${hint}`, {
        file,
        line: i + 1,
      });
    }
    out.push({ record: r, id: who.id, condition: who.condition, conditionDigest: who.digest, line: i + 1, text: line });
  }
  return { lines: out };
}

/** A run as `readRunFiles` returns it: its line (the record's `id` set to the computed one) and its file. */
export interface LocatedRun extends RunLine {
  file: string;
}

/** What `readRunFiles` returns: the runs (one per run: condition, question, repeat) and warnings. */
interface RunFiles {
  runs: LocatedRun[];
  /** Torn last lines skipped, files being written (with `partial`), locks left by a killed eval: one sentence each. */
  warnings: string[];
  /** Files read although fkgqa eval was still writing them (`partial`). */
  partial: string[];
}

/** Where a run was read. */
interface RunPlace {
  file: string;
  /** 1-based line number. */
  line: number;
  /** The run's `startedAt`. */
  startedAt?: string;
}

/**
 * Why one run (one id: condition, question, repeat) found in two run files is refused: a run is
 * counted once, and the same id twice is either the same run read twice (same start time: a copy, or
 * a file given twice) or two runs that two `fkgqa eval` commands made into two files, which would
 * count one repeat twice.
 */
function runInTwoFiles(id: string, a: RunPlace, b: RunPlace): string {
  const same = a.startedAt !== undefined && a.startedAt === b.startedAt;
  return (
    `run ${id} is in ${a.file} (line ${a.line}) and in ${b.file} (line ${b.line}): the same condition, question and repeat, ` +
    (same
      ? 'the same run (same start time): a copy of a run file, or a file given twice'
      : `two runs (started ${a.startedAt ?? '?'} and ${b.startedAt ?? '?'}) that two fkgqa eval commands wrote into two files`) +
    '; each run is counted once: give each run file once, keep the repeats of a condition in one run file (fkgqa eval --repeats N appends them to it), or read the files apart'
  );
}

/**
 * Reads run files for `fkgqa score` and `fkgqa view` (module comment): every record checked
 * (`runProblem`), one run per id in order of first appearance (a later line of an id in a file
 * replaces the earlier in its place, so a retry does not reorder the runs), a torn last line skipped
 * with a warning.
 * @param o `partial`: read a run file fkgqa eval is still writing, with a warning
 * @throws InputError naming the file and line of a line that is not JSON or not a valid run record,
 *   a file that does not exist or is given twice, a run found in two files (both named), or
 *   (without `partial`) a file fkgqa eval is still writing
 */
export function readRunFiles(files: string[], o: { partial?: boolean } = {}): RunFiles {
  const byId = new Map<string, LocatedRun>();
  const warnings: string[] = [];
  const partial: string[] = [];
  const given = new Map<string, string>();
  for (const file of files) {
    const abs = path.resolve(file);
    if (given.has(abs)) throw new InputError(`the run file is given twice (${given.get(abs)} and ${file}): each run is counted once; give it once`, { file });
    given.set(abs, file);
  }
  for (const file of files) {
    const text = readTextInput(file, 'run file');
    const writer = lockHolderOf(runFileLock(file));
    const runs = text.split('\n').filter((l) => l.trim()).length;
    if (writer && !writer.self && writer.alive) {
      if (!o.partial)
        throw new InputError(
          `fkgqa eval (${writer.name}) is still writing this run file: it has written ${counted(runs, 'run')} so far, not all its runs; wait until eval ends, or pass --partial to score them (the report then says it is partial)${writer.advice}`,
          { file },
        );
      partial.push(file);
      warnings.push(`PARTIAL: ${file} was still being written by fkgqa eval (${writer.name}): ${counted(runs, 'run')} read so far, not all the runs it will hold`);
    } else if (writer && !writer.alive) {
      warnings.push(
        `${file}: the fkgqa eval that wrote it (${writer.name}) stopped without finishing (its lock is left: killed?): the runs it had not reached are missing; the same fkgqa eval command completes the file`,
      );
    }
    const { lines, torn } = parseRunLines(text, file, { whole: true });
    if (torn) warnings.push(`${file}, line ${torn.line}: skipped a torn last line (${torn.bytes} bytes without newline, not JSON: a run being written when its writer stopped)`);
    const inFile = new Set<string>();
    for (const l of lines) {
      const earlier = byId.get(l.id);
      if (earlier && !inFile.has(l.id)) {
        throw new InputError(runInTwoFiles(l.id, { file: earlier.file, line: earlier.line, startedAt: earlier.record.startedAt }, { file, line: l.line, startedAt: l.record.startedAt }), {
          file,
          line: l.line,
        });
      }
      inFile.add(l.id);
      byId.set(l.id, { ...l, record: { ...l.record, id: l.id }, file });
    }
  }
  return { runs: [...byId.values()], warnings, partial };
}
