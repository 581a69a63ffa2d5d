/**
 * `fkgqa merge`: joins the run files of the parts of one evaluation (`fkgqa eval --part k/n`, one
 * run file each, made on any hosts) into one run file, as if one `fkgqa eval` had written it.
 *
 * - Each file is read as `fkgqa eval` reads its own (`parseRunLines` of src/eval/run-file.ts): a
 *   line that is not a run record is bad input (file and line named); a torn last line (a part
 *   whose eval was killed during an append) is left out with a warning — the run it held is missing,
 *   and the same `fkgqa eval --part` command completes that part. Within a file the last line of an
 *   id counts (a resumed run, or one rerun by `--retry-errors`), as for `fkgqa score`.
 * - **Refused** (exit 2, nothing written): a run id in two files (the parts overlap: named with both
 *   files and lines), a run of another condition than the first run of the first file
 *   (`conditionMismatch`: named with both files and lines), a file `fkgqa eval` is still writing (its
 *   lock names a live process), or an `--out` an eval is writing.
 * - The output holds each run's line as it was (the same bytes), the files in the order given, each
 *   file's runs in the order of their first line, and is written whole or not at all: a temporary
 *   file beside it, then a rename (`writeFileAtomic`), under the run file's lock.
 */
import fs from 'node:fs';
import path from 'node:path';
import { InputError } from '../common/errors.js';
import { lockHolderOf, takeLockFile, writeFileAtomic } from '../common/output.js';
import { canonicalJson, runFileLock, type RunRecord } from './record.js';
import { parseRunLines, type RunLine } from './run-file.js';

/** Options of `mergeRunFiles`. */
export interface MergeOptions {
  /** The run files to join, in this order. */
  files: string[];
  /** The run file to write (replaced whole). */
  out: string;
  /** Told what is left out (a torn last line, a lock left by a killed eval). */
  warn?: (line: string) => void;
}

/** What `mergeRunFiles` wrote. */
export interface MergeSummary {
  out: string;
  /** Runs written. */
  runs: number;
  /** Runs taken from each file (the last line of each id). */
  files: { file: string; runs: number }[];
  warnings: string[];
}

/** A field of a run record that decides what a run measures, read from the record. */
type ConditionField = [name: string, value: (r: RunRecord) => unknown];

/**
 * The fields whose values must be equal for two runs to belong to one evaluation (one condition):
 * the record format, the build (output digest), setup, agent and model, sampling, turn and other
 * limits (the federation engine among them), and the prompt. Not compared: where the model was
 * reached (`baseUrl`: each host may reach it at its own address), whether the tools were spawned or
 * in-process (the same server), the tool surface (it differs by graph), the gold digest (by question).
 */
const CONDITION_FIELDS: ConditionField[] = [
  ['format', (r) => r.format],
  ['build.outputDigest', (r) => r.build?.outputDigest ?? null],
  ['setup', (r) => r.setup],
  ['agent', (r) => r.agent],
  ['model', (r) => r.model],
  ['temperature', (r) => r.temperature],
  ['seed', (r) => r.seed],
  ['maxTurns', (r) => r.maxTurns],
  ['limits', (r) => r.limits ?? null],
  ['prompt.sha256', (r) => r.prompt?.sha256 ?? null],
];

/**
 * Why two runs cannot be in one merged run file (they were made under different conditions), or
 * undefined when they can: every field of `CONDITION_FIELDS` that differs, with both values. The one
 * place that says what "the same condition" means for merging; a field added to what identifies a
 * run belongs in that list.
 */
export function conditionMismatch(a: RunRecord, b: RunRecord): string | undefined {
  const diffs: string[] = [];
  for (const [name, value] of CONDITION_FIELDS) {
    const x = canonicalJson(value(a));
    const y = canonicalJson(value(b));
    if (x !== y) diffs.push(`${name} ${x} ≠ ${y}`);
  }
  return diffs.length ? diffs.join(', ') : undefined;
}

/** `file, line N` for messages. */
const at = (file: string, line: number) => `${file}, line ${line}`;

/**
 * Joins run files (module comment).
 * @throws InputError for a missing file, a line that is not a run record, an overlap or a condition
 *   mismatch between files, a file or `out` that a live `fkgqa eval` is writing, an `out` that is a directory
 */
export function mergeRunFiles(o: MergeOptions): MergeSummary {
  const warnings: string[] = [];
  const warn = (line: string) => {
    warnings.push(line);
    o.warn?.(line);
  };
  if (o.files.length === 0) throw new InputError('fkgqa merge needs at least one run file');
  /** Every id's kept line, with its file. */
  const byId = new Map<string, RunLine & { file: string }>();
  const perFile: { file: string; ids: string[] }[] = [];
  let reference: (RunLine & { file: string }) | undefined;
  for (const file of o.files) {
    if (!fs.existsSync(file)) throw new InputError('no such run file', { file });
    if (fs.statSync(file).isDirectory()) throw new InputError('is a directory, not a run file', { file });
    const writer = lockHolderOf(runFileLock(file));
    if (writer?.alive && writer.pid !== process.pid) throw new InputError(`fkgqa eval (pid ${writer.pid}) is still writing this run file: merge its part when that eval has ended`, { file });
    if (writer && !writer.alive) warn(`warning: ${file}: the fkgqa eval that wrote it (pid ${writer.pid}) stopped without finishing (killed?): the runs it had not reached are missing; the same fkgqa eval command completes the file`);
    const parsed = parseRunLines(fs.readFileSync(file, 'utf8'), file);
    if (parsed.torn) warn(`warning: ${at(file, parsed.torn.line)}: left out a torn last line (${parsed.torn.bytes} bytes without newline: a run being written when its eval stopped); the same fkgqa eval command runs it again`);
    const own = new Map<string, RunLine>();
    for (const l of parsed.lines) own.set(l.record.id, l); // the last line of an id counts
    const ids: string[] = [];
    for (const l of parsed.lines) {
      const kept = own.get(l.record.id)!;
      if (kept !== l) continue;
      const other = byId.get(l.record.id);
      if (other) throw new InputError(`run ${l.record.id} is in two files: ${at(other.file, other.line)} and ${at(file, l.line)}: the parts overlap (made with the same --part, or not parts of one selection); merge each run once`, { file });
      reference ??= { ...l, file };
      const why = conditionMismatch(reference.record, l.record);
      if (why) {
        throw new InputError(`run ${l.record.id} (${at(file, l.line)}) was made under another condition than run ${reference.record.id} (${at(reference.file, reference.line)}): ${why}; merge only the parts of one evaluation`, { file, line: l.line });
      }
      byId.set(l.record.id, { ...l, file });
      ids.push(l.record.id);
    }
    perFile.push({ file, ids });
  }
  const text = perFile.flatMap((f) => f.ids.map((id) => byId.get(id)!.text + '\n')).join('');
  fs.mkdirSync(path.dirname(path.resolve(o.out)), { recursive: true });
  const lock = runFileLock(o.out);
  takeLockFile(lock, o.out, 'run file');
  try {
    writeFileAtomic(o.out, text);
  } finally {
    fs.rmSync(lock, { force: true });
  }
  return { out: o.out, runs: byId.size, files: perFile.map((f) => ({ file: f.file, runs: f.ids.length })), warnings };
}
