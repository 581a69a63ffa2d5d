/**
 * Reading run files for `fkgqa view`: JSON lines written by `fkgqa eval` (src/eval/record.ts) in
 * format `fkgqa-run/1` or `fkgqa-run/2` (the fields /2 adds are in `RunRecordV2`; docs/evaluation.md,
 * "Run records", describes every field). As `fkgqa score` reads them, a later line of the same run
 * (condition, question, repeat) replaces an earlier one (a resumed or retried run) and the same run
 * in two files is refused; each record keeps the file and line it came from, so the page can say
 * where to find it.
 */
import { InputError } from '../common/errors.js';
import { readTextInput } from '../common/input.js';
import path from 'node:path';
import { runIdentity, runInTwoFiles, type RunCondition, type RunRecord } from '../eval/record.js';

/** The run-record formats the viewer reads. */
export const VIEW_FORMATS = ['fkgqa-run/1', 'fkgqa-run/2'] as const;

/**
 * A run record of format /1 or /2. Format /2 adds (contracts.md): `infrastructure` when the run
 * ended with `infrastructure_error`, the `build` the run was made on, and the digest of the
 * `toolSurface` the agent saw. End reasons of /2 include `infrastructure_error`, `message_limit`,
 * `token_limit` and `time_limit`.
 */
export type RunRecordV2 = Omit<RunRecord, 'format' | 'endReason'> & {
  format: (typeof VIEW_FORMATS)[number];
  endReason: string;
  infrastructure?: { what: string; endpoint?: string; step?: number };
  build?: { outputDigest: string; goldDigest: string | null };
  toolSurface?: { digest: string; tools: number };
};

/** A run record with where it was read and the condition it measured. */
export interface LocatedRun {
  /** The record; its `id` is the one computed from its fields (`runIdentity`) when they are there. */
  record: RunRecordV2;
  file: string;
  /** 1-based line number in `file`. */
  line: number;
  /** The condition the run measured and its digest (absent for a record without the fields it is read from). */
  condition?: RunCondition;
  conditionDigest?: string;
}

/**
 * Reads run files as `fkgqa score` does (src/score/records.ts): a run is known by its id (its
 * setup, model or agent, question, repeat and condition, computed from its fields: `runIdentity`), a
 * later line of a file with the same id replaces an earlier one (its place of first appearance is not
 * kept: runs are returned in order of their last line, file by file), the same id in two files is
 * refused, and so is a file given twice.
 * @param files run files (JSON lines)
 * @returns the runs, one per id
 * @throws InputError naming the file (and line) of a missing file, a line that is not JSON, a line
 *   that is no run record of a format in VIEW_FORMATS, a run found in two files (both named); the
 *   file when it is a directory or given twice
 */
export function readRunFiles(files: string[]): LocatedRun[] {
  const byId = new Map<string, LocatedRun>();
  const given = new Map<string, string>();
  for (const file of files) {
    const abs = path.resolve(file);
    if (given.has(abs)) throw new InputError(`the run file is given twice (${given.get(abs)} and ${file}): each run is shown once; give it once`, { file });
    given.set(abs, file);
  }
  for (const file of files) {
    const inFile = new Set<string>();
    const lines = readTextInput(file, 'run file').split('\n');
    lines.forEach((text, i) => {
      if (!text.trim()) return;
      let r: RunRecordV2;
      try {
        r = JSON.parse(text) as RunRecordV2;
      } catch (e) {
        throw new InputError(`not JSON: ${(e as Error).message}`, { file, line: i + 1 });
      }
      if (!r || !(VIEW_FORMATS as readonly string[]).includes(r.format)) {
        throw new InputError(`not a run record of fkgqa eval (format ${JSON.stringify(r?.format)}, expected one of ${VIEW_FORMATS.join(', ')})`, { file, line: i + 1 });
      }
      if (typeof r.id !== 'string' || !r.question || !Array.isArray(r.messages)) throw new InputError('a run record needs "id", "question" and "messages"', { file, line: i + 1 });
      let who: ReturnType<typeof runIdentity> | undefined;
      try {
        who = runIdentity(r as RunRecord);
      } catch {
        who = undefined; // a record without the fields of its condition: shown by the id it has
      }
      const key = who ? who.id : `as written:${r.id}`; // apart from every computed id
      const earlier = byId.get(key);
      if (earlier && !inFile.has(key)) throw new InputError(runInTwoFiles(who?.id ?? r.id, { file: earlier.file, line: earlier.line, startedAt: earlier.record.startedAt }, { file, line: i + 1, startedAt: r.startedAt }), { file, line: i + 1 });
      inFile.add(key);
      byId.delete(key);
      byId.set(key, { record: who ? { ...r, id: who.id } : r, file, line: i + 1, ...(who ? { condition: who.condition, conditionDigest: who.digest } : {}) });
    });
  }
  return [...byId.values()];
}
