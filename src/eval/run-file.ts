/**
 * The run file of `fkgqa eval`: JSON lines (src/eval/record.ts), appended to one whole line per
 * finished run (one `write`, then `fdatasync`), safe against a crash at any instant: a torn last
 * line is repaired on open, a lock file beside it (`.<name>.fkgqa-lock`) keeps one writer, and the
 * runs already in the file (known by `runId`, computed by `runIdentity`) are skipped on resume.
 * docs/evaluation.md ("Crash safety", "Resume") gives the rules.
 */
import fs from 'node:fs';
import path from 'node:path';
import { InputError } from '../common/errors.js';
import { makeFolderFor, noteKept, takeLockFile } from '../common/output.js';
import { FAILED_END_REASONS, runIdentity, type RunRecord } from './record.js';
import { isJson, parseRunLines, runFileLock } from './run-reader.js';

/** What opening a run file found and did. */
interface RunFileOpening {
  /** Lines (runs) in the file after the repair. */
  lines: number;
  /** What the repair did (a torn last line cut away, or its newline added), in words; undefined when the file was whole. */
  repaired?: string;
}

/**
 * Fault injection for the crash-safety tests: with `FKGQA_FAULT_AT=append:<k>`, the k-th append of
 * this process writes the first half of its line, then kills the process with SIGKILL (a torn
 * line, as a kill during a large write leaves). Not for users.
 */
function appendFault(n: number): boolean {
  return process.env.FKGQA_FAULT_AT === `append:${n}`;
}

/** The run file (module comment). Open with `RunFile.open`; `close` releases the lock. */
export class RunFile {
  /** The last record of each run id (`runIdentity`), in file order of first appearance. */
  private readonly latest = new Map<string, RunRecord>();
  private fd: number | undefined;
  /** Removes the lock when the process exits without `close` (e.g. `process.exit` on SIGINT). */
  private readonly onExit = () => fs.rmSync(this.lock, { force: true });
  /** Runs appended by this process. */
  appended = 0;

  private constructor(
    readonly file: string,
    private readonly lock: string,
    readonly opening: RunFileOpening,
  ) {}

  /**
   * Opens (or creates) a run file for appending: checks the path, takes the lock, repairs a torn
   * last line and reads the runs already there.
   * @param file the `--out` path
   * @param outputDigest the output digest of the build the new runs are made on: a run of another
   *   build in the file is refused (it would be skipped as done, and scoring mixes builds)
   * @param federationEngine the federation engine of the new runs (`--federation-engine`): a run of
   *   another engine in the file is refused for the same reasons (the engine decides what times out;
   *   lines without `limits.federationEngine`, written before it was recorded, are not checked)
   * @throws InputError when the path is a directory or below a file, another process holds the
   *   lock, a line other than a torn last one is not a run record, or a run was made on another
   *   build or federation engine (file and line named)
   */
  static open(file: string, outputDigest?: string, federationEngine?: string): RunFile {
    const abs = path.resolve(file);
    if (fs.existsSync(abs) && fs.statSync(abs).isDirectory()) {
      throw new InputError(`--out is a directory: give the run file's name (JSON lines), e.g. --out ${path.join(file, 'runs.jsonl')}`, { file });
    }
    for (let up = path.dirname(abs); ; up = path.dirname(up)) {
      if (fs.existsSync(up)) {
        if (!fs.statSync(up).isDirectory()) throw new InputError(`--out lies below ${up}, which is a file, not a directory`, { file });
        break;
      }
      if (path.dirname(up) === up) break;
    }
    makeFolderFor(path.dirname(abs), 'run file', file);
    const lock = runFileLock(abs);
    takeLockFile(lock, file, 'run file');
    try {
      const opening = RunFile.repair(abs, file);
      const rf = new RunFile(file, lock, opening);
      rf.read(abs, outputDigest, federationEngine);
      rf.fd = fs.openSync(abs, 'a');
      process.on('exit', rf.onExit);
      return rf;
    } catch (e) {
      fs.rmSync(lock, { force: true });
      throw e;
    }
  }

  /** Cuts a torn last line away (or completes it when it is JSON, a whole line); see the module comment. */
  private static repair(abs: string, given: string): RunFileOpening {
    if (!fs.existsSync(abs)) return { lines: 0 };
    const data = fs.readFileSync(abs);
    if (data.length === 0 || data[data.length - 1] === 0x0a) return { lines: countLines(data) };
    const cut = data.lastIndexOf(0x0a) + 1; // 0 when the file is one torn line
    const tail = data.subarray(cut).toString('utf8');
    const fd = fs.openSync(abs, 'r+');
    try {
      if (isJson(tail)) {
        fs.writeSync(fd, '\n', data.length);
        fs.fdatasyncSync(fd);
        return { lines: countLines(data) + 1, repaired: `${given}: the last line (a complete run) had no newline: added it` };
      }
      fs.ftruncateSync(fd, cut);
      fs.fdatasyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    const lines = countLines(data.subarray(0, cut));
    return {
      lines,
      repaired: `${given}: cut away a torn last line (line ${lines + 1}, ${data.length - cut} bytes without newline: a run that was being written when an earlier fkgqa eval stopped); that run will run again`,
    };
  }

  /** Reads every line (all whole after the repair). @throws InputError naming a line that is not a run record, or a run of another build */
  private read(abs: string, outputDigest: string | undefined, federationEngine: string | undefined): void {
    if (!fs.existsSync(abs)) return;
    for (const { record: r, line, id } of parseRunLines(fs.readFileSync(abs, 'utf8'), this.file, { hint: 'choose another --out' }).lines) {
      const made = (r.build as { outputDigest?: unknown } | undefined)?.outputDigest;
      if (outputDigest !== undefined && made !== undefined && made !== outputDigest) {
        throw new InputError(
          `run ${r.id} was made on another build (output digest ${String(made).slice(0, 16)}, this build's is ${outputDigest.slice(0, 16)}): give the runs of this build their own --out`,
          { file: this.file, line },
        );
      }
      const engine = (r.limits as { federationEngine?: unknown } | undefined)?.federationEngine;
      if (federationEngine !== undefined && engine !== undefined && engine !== federationEngine) {
        throw new InputError(
          `run ${r.id} was made with the federation engine ${String(engine)}, these runs use ${federationEngine}: give them their own --out (the engine decides what times out; a run already in the file would be skipped as done)`,
          { file: this.file, line },
        );
      }
      this.latest.set(id, r);
    }
  }

  /** Runs in the file (the last line of each id). */
  get runs(): number {
    return this.latest.size;
  }

  /**
   * Whether the run with this id (`runId`) is already in the file (and is not to be rerun).
   * @param retryErrors when true, runs that ended as a failure (`FAILED_END_REASONS`) are not done
   */
  done(id: string, retryErrors: boolean): boolean {
    const r = this.latest.get(id);
    return !!r && !(retryErrors && FAILED_END_REASONS.includes(r.endReason));
  }

  /**
   * Appends one run as one whole line (one write, then fdatasync) and notes it for the
   * interruption message.
   * @throws Error when the file cannot be written (disk full, …)
   */
  append(record: RunRecord): void {
    if (this.fd === undefined) throw new Error('the run file is closed');
    const buf = Buffer.from(JSON.stringify(record) + '\n', 'utf8');
    if (appendFault(this.appended + 1)) {
      fs.writeSync(this.fd, buf, 0, buf.length >> 1);
      process.kill(process.pid, 'SIGKILL');
    }
    for (let off = 0; off < buf.length;) off += fs.writeSync(this.fd, buf, off, buf.length - off);
    fs.fdatasyncSync(this.fd);
    this.latest.set(runIdentity(record).id, record);
    this.appended++;
    const n = this.appended;
    const file = this.file;
    noteKept(
      `runs:${path.resolve(file)}`,
      () => `${n} run${n === 1 ? '' : 's'} appended to ${file} (each line whole; runs in progress were dropped): rerun the same command to resume, finished runs are skipped`,
    );
  }

  /** Closes the file and releases the lock. */
  close(): void {
    if (this.fd !== undefined) fs.closeSync(this.fd);
    this.fd = undefined;
    process.off('exit', this.onExit);
    fs.rmSync(this.lock, { force: true });
  }
}

/** Number of newline-terminated lines in a buffer. */
function countLines(b: Buffer): number {
  let n = 0;
  for (let i = b.indexOf(0x0a); i !== -1; i = b.indexOf(0x0a, i + 1)) n++;
  return n;
}
