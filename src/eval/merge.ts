/**
 * `fkgqa merge`: joins the run files of the parts of one evaluation (`fkgqa eval --part k/n`, one
 * run file each, made on any hosts) into one run file, as if one `fkgqa eval` had written it. Each
 * file is read as `fkgqa eval` reads its own (`parseRunLines`); a run id in two files, a run of
 * another condition than the first (`conditionMismatch`), or a file (or `--out`) an eval is still
 * writing is refused, exit 2, nothing written. The output keeps each line's bytes and is written
 * whole or not at all (`writeFileAtomic`) under the run file's lock. docs/evaluation.md ("Without
 * infrastructure") gives the rules.
 */
import fs from 'node:fs';
import path from 'node:path';
import { InputError } from '../common/errors.js';
import { lockHolderOf, makeFolderFor, takeLockFile, writeFileAtomic } from '../common/output.js';
import { conditionMismatch } from './record.js';
import { parseRunLines, runFileLock, type RunLine } from './run-reader.js';

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
    if (writer?.alive && !writer.self) throw new InputError(`fkgqa eval (${writer.name}) is still writing this run file: merge its part when that eval has ended${writer.advice}`, { file });
    if (writer && !writer.alive)
      warn(
        `warning: ${file}: the fkgqa eval that wrote it (${writer.name}) stopped without finishing (killed?): the runs it had not reached are missing; the same fkgqa eval command completes the file`,
      );
    const parsed = parseRunLines(fs.readFileSync(file, 'utf8'), file);
    if (parsed.torn)
      warn(
        `warning: ${at(file, parsed.torn.line)}: left out a torn last line (${parsed.torn.bytes} bytes without newline: a run being written when its eval stopped); the same fkgqa eval command runs it again`,
      );
    const own = new Map<string, RunLine>();
    for (const l of parsed.lines) own.set(l.id, l); // the last line of an id counts
    const ids: string[] = [];
    for (const l of parsed.lines) {
      const kept = own.get(l.id)!;
      if (kept !== l) continue;
      const other = byId.get(l.id);
      if (other)
        throw new InputError(
          `run ${l.id} is in two files: ${at(other.file, other.line)} and ${at(file, l.line)}: the parts overlap (made with the same --part, or not parts of one selection); merge each run once`,
          { file },
        );
      reference ??= { ...l, file };
      const why = conditionMismatch(reference.record, l.record);
      if (why) {
        throw new InputError(
          `run ${l.id} (${at(file, l.line)}) was made under another condition than run ${reference.id} (${at(reference.file, reference.line)}): ${why}; merge only the parts of one evaluation`,
          { file, line: l.line },
        );
      }
      byId.set(l.id, { ...l, file });
      ids.push(l.id);
    }
    perFile.push({ file, ids });
  }
  const text = perFile.flatMap((f) => f.ids.map((id) => byId.get(id)!.text + '\n')).join('');
  makeFolderFor(path.dirname(path.resolve(o.out)), 'run file', o.out);
  const lock = runFileLock(o.out);
  takeLockFile(lock, o.out, 'run file');
  try {
    writeFileAtomic(o.out, text);
  } finally {
    fs.rmSync(lock, { force: true });
  }
  return { out: o.out, runs: byId.size, files: perFile.map((f) => ({ file: f.file, runs: f.ids.length })), warnings };
}
