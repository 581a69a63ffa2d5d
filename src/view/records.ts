/**
 * Reading run files for `fkgqa view`: JSON lines written by `fkgqa eval` (src/eval/record.ts) in
 * format `fkgqa-run/1` or `fkgqa-run/2` (the fields /2 adds are in `RunRecordV2`; docs/evaluation.md,
 * "Run records", describes every field). As `fkgqa score` reads them, a later line with
 * the same id replaces an earlier one (a resumed or retried run); each record keeps the file and
 * line it came from, so the page can say where to find it.
 */
import { InputError } from '../common/errors.js';
import { readTextInput } from '../common/input.js';
import type { RunRecord } from '../eval/record.js';

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

/** A run record with where it was read. */
export interface LocatedRun {
  record: RunRecordV2;
  file: string;
  /** 1-based line number in `file`. */
  line: number;
}

/**
 * Reads run files; a later line with the same id replaces an earlier one (in its place of first
 * appearance is not kept: runs are returned in order of their last line, file by file).
 * @param files run files (JSON lines)
 * @returns the runs, one per id
 * @throws InputError naming the file (and line) of a missing file, a line that is not JSON, or a
 *   line that is no run record of a format in VIEW_FORMATS; the file when it is a directory
 */
export function readRunFiles(files: string[]): LocatedRun[] {
  const byId = new Map<string, LocatedRun>();
  for (const file of files) {
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
      byId.delete(r.id);
      byId.set(r.id, { record: r, file, line: i + 1 });
    });
  }
  return [...byId.values()];
}
