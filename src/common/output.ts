import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { InputError } from './errors.js';

/** Staged outputs not yet committed or discarded: removed by `discardAllStaged` on SIGINT/SIGTERM. */
const active = new Set<StagedOutput>();

/** Whether this process has a staging directory that is neither committed nor discarded. */
export function hasStaged(): boolean {
  return active.size > 0;
}

/** Discards every staging directory of this process (for signal handlers). */
export function discardAllStaged(): void {
  for (const s of [...active]) s.discard();
}

/**
 * What this process has written completely and keeps, by key (a path): a committed build, a file
 * written with `writeFileAtomic`, or a description given by the writer (e.g. `fkgqa eval`'s run
 * file: how many runs were appended and how to resume). Read by `interruptionMessage`.
 */
const kept = new Map<string, () => string>();

/**
 * Records (or replaces) what this process keeps under `key`, for the message on SIGINT/SIGTERM;
 * `describe` is called then, so it can report a count that grows.
 */
export function noteKept(key: string, describe: () => string): void {
  kept.set(key, describe);
}

/**
 * The message of an interrupted command (SIGINT/SIGTERM), after discarding its staged outputs:
 * which unfinished outputs were removed, and what was written completely and is kept (each note of
 * `noteKept`; written files are listed, at most three by name). "nothing was written" only when
 * neither is the case. Discards the staged outputs.
 */
export function interruptionMessage(): string {
  const discarded = [...active].map((s) => s.out);
  discardAllStaged();
  const notes = [...kept.entries()];
  const files = notes.filter(([k]) => k.startsWith('file:')).map(([k]) => k.slice(5));
  const described = notes.filter(([k]) => !k.startsWith('file:')).map(([, f]) => f());
  if (files.length) described.push(`${files.length === 1 ? 'the file' : `${files.length} files`} ${files.slice(0, 3).join(', ')}${files.length > 3 ? ', …' : ''}, written completely`);
  const removed = discarded.length ? `the unfinished output ${discarded.join(', ')} was removed, what was there before is unchanged` : '';
  if (!described.length) return removed ? `nothing was written (${removed})` : 'nothing was written';
  return `${removed ? `${removed}; ` : ''}kept: ${described.join('; ')}`;
}

/** Whether a process with this pid exists (EPERM: it exists, owned by another user). */
function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Start time of a process: field 22 of `/proc/<pid>/stat` (clock ticks since boot, proc(5)), which
 * tells a process from a later one that got the same pid. Undefined where there is no /proc (not
 * Linux) or the process does not exist.
 */
function processStartTime(pid: number): string | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 2 (comm) is in parentheses and may hold spaces: count fields after the last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/**
 * The process that holds a lock file, as the file says (and, with these fields, a running serve's
 * `endpoints.json`, src/build/state.ts): its pid means something only on its host, and its start
 * time tells it from a later process that got the same pid.
 */
export interface LockOwner {
  pid: number;
  /** Start time of the process in clock ticks since boot (`/proc/<pid>/stat` field 22), or null where unknown. */
  procStart: number | null;
  /** ISO 8601 time the lock was taken. */
  started: string;
  /** Host name of the machine it runs on (`os.hostname()`). Absent in files of earlier versions. */
  hostname?: string;
}

/** The start time of a process in clock ticks since boot (see processStartTime), or null. */
export function processStart(pid: number): number | null {
  const v = Number(processStartTime(pid));
  return Number.isFinite(v) ? v : null;
}

/** This process as the owner of a lock it takes now. */
function thisOwner(): LockOwner {
  return { pid: process.pid, procStart: processStart(process.pid), started: new Date().toISOString(), hostname: os.hostname() };
}

/**
 * True when an owner runs on another machine: its `hostname` names one that is not this one. An
 * owner without a host name (files of earlier versions) or with an empty one counts as on this machine.
 */
function onOtherHost(owner: LockOwner): boolean {
  return owner.hostname !== undefined && owner.hostname !== '' && owner.hostname !== os.hostname();
}

/**
 * True when an owner is this very process: its pid on this machine (a lock naming this pid on
 * another host is another process's, which happens to have the same pid there).
 */
export function isThisProcess(owner: LockOwner): boolean {
  return owner.pid === process.pid && !onOtherHost(owner);
}

/**
 * True when the process an owner names still runs (same pid, same start time where known). An
 * owner on another host (its `hostname` is not this machine's) cannot be checked here and counts as
 * running.
 */
export function ownerAlive(owner: LockOwner): boolean {
  if (onOtherHost(owner)) return true;
  if (!pidAlive(owner.pid)) return false;
  if (owner.procStart === null) return true;
  const now = processStart(owner.pid);
  return now === null || now === owner.procStart;
}

/**
 * The holder of a lock as a message names it: `pid <n>`, and `on host <name>` when it runs on
 * another machine (its `hostname` is not this one's), where it cannot be checked from here.
 */
export function ownerName(owner: LockOwner): string {
  return onOtherHost(owner) ? `pid ${owner.pid} on host ${owner.hostname}` : `pid ${owner.pid}`;
}

/**
 * What a refusal adds for a holder on another machine: its process cannot be checked from here,
 * so a lock it left behind is removed by hand. Empty for a holder on this machine.
 */
export function otherHostAdvice(owner: LockOwner, lock: string): string {
  return onOtherHost(owner) ? ` (a process on another host cannot be checked from here: if it no longer runs, remove ${lock})` : '';
}

/**
 * The owner a lock file (or `endpoints.json`) names: its JSON object (`LockOwner`), or a bare pid
 * (locks of fkgqa before 0.1, without start times).
 * @returns undefined when there is no such file or it names no process
 */
export function readLockOwner(file: string): LockOwner | undefined {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8').trim();
  } catch {
    return undefined;
  }
  if (/^\d+$/.test(text)) return { pid: Number(text), procStart: null, started: '?' };
  try {
    const o = JSON.parse(text) as Partial<LockOwner>;
    if (!Number.isInteger(o.pid) || o.pid! <= 0) return undefined;
    return { pid: o.pid!, procStart: typeof o.procStart === 'number' ? o.procStart : null, started: String(o.started ?? '?'), ...(typeof o.hostname === 'string' ? { hostname: o.hostname } : {}) };
  } catch {
    return undefined;
  }
}

/**
 * The process named by a lock file, and whether it still runs (`ownerAlive`): a live holder is
 * writing what the lock protects; a dead one was killed before it released the lock.
 * @returns undefined when there is no lock file (or it names no process); else its pid, whether it
 *   runs (one on another host counts as running), whether it is this process (same pid, on this
 *   host), its name as lock messages give it (`ownerName`: `pid <n>`, `pid <n> on host <name>`), and
 *   what a refusal adds for a holder on another host (`otherHostAdvice`, empty for this host)
 */
export function lockHolderOf(lock: string): { pid: number; alive: boolean; self: boolean; name: string; advice: string } | undefined {
  const holder = readLockOwner(lock);
  if (!holder) return undefined;
  return { pid: holder.pid, alive: ownerAlive(holder), self: isThisProcess(holder), name: ownerName(holder), advice: otherHostAdvice(holder, lock) };
}

/**
 * Fault injection for the crash-safety tests: with `FKGQA_FAULT_AT=<step>:<k>` (step `rename` or
 * `remove`), the process kills itself with SIGKILL just before its k-th step of that kind in
 * `StagedOutput.commit` and in the recovery of an interrupted commit. Not for users.
 */
const faults = new Map<string, number>();
function faultPoint(step: 'rename' | 'remove'): void {
  const at = process.env.FKGQA_FAULT_AT;
  if (!at) return;
  const n = (faults.get(step) ?? 0) + 1;
  faults.set(step, n);
  if (at === `${step}:${n}`) process.kill(process.pid, 'SIGKILL');
}

function rename(from: string, to: string): void {
  faultPoint('rename');
  fs.renameSync(from, to);
}

function remove(p: string): void {
  faultPoint('remove');
  fs.rmSync(p, { recursive: true, force: true });
}

/**
 * The folder an output path names: a symbolic link (even one dangling in the middle of a commit)
 * is followed, so that the link itself stays and its target is what gets replaced.
 */
function resolveOut(out: string): string {
  let abs = path.resolve(out);
  for (let i = 0; i < 8; i++) {
    try {
      if (!fs.lstatSync(abs).isSymbolicLink()) break;
    } catch {
      break;
    }
    abs = path.resolve(path.dirname(abs), fs.readlinkSync(abs));
  }
  return abs;
}

/** Paths beside an output folder `<parent>/<base>` that fkgqa uses while writing it. */
function sidePaths(out: string) {
  const abs = resolveOut(out);
  const parent = path.dirname(abs);
  const base = path.basename(abs);
  return {
    abs,
    parent,
    base,
    lock: path.join(parent, `.${base}.fkgqa-lock`),
    journal: path.join(parent, `.${base}.fkgqa-journal`),
    tmpPrefix: `.${base}.fkgqa-tmp-`,
    oldPrefix: `.${base}.fkgqa-old-`,
  };
}

/** The commit journal: written (atomically) once the new build is complete; its existence decides the commit. */
interface Journal {
  /** Name of the staging folder holding the complete new build (beside the output). */
  staged: string;
  /** Name the previous build is moved to (beside the output). */
  aside: string;
}

/**
 * Completes a commit that was interrupted (a journal exists): the new build is moved into place if
 * it is not there yet, the previous build moved aside is removed, then the journal. Idempotent, so
 * a crash during recovery is recovered by the next call. The caller holds the lock.
 */
function rollForward(out: string): void {
  const p = sidePaths(out);
  let j: Journal;
  try {
    j = JSON.parse(fs.readFileSync(p.journal, 'utf8')) as Journal;
  } catch {
    fs.rmSync(p.journal, { force: true }); // cut short before its rename: cannot be (written to .tmp first)
    return;
  }
  const staged = path.join(p.parent, path.basename(j.staged));
  const aside = path.join(p.parent, path.basename(j.aside));
  if (fs.existsSync(staged)) {
    if (fs.existsSync(p.abs)) {
      if (fs.existsSync(aside)) remove(aside);
      rename(p.abs, aside);
    }
    rename(staged, p.abs);
  }
  if (fs.existsSync(aside)) remove(aside);
  fs.rmSync(p.journal, { force: true });
}

/**
 * Makes sure an output folder is not caught in the middle of a commit before it is read: when a
 * commit journal is beside it and its writer is gone, the commit is completed (the new build is
 * what the interrupted run had finished); when its writer is still running, waits up to `waitMs`
 * for it. The writer's lock is taken with `takeLock`, as every lock: a dead writer's lock is stale
 * and removed by one process at a time (`removeStaleLock`). Every command that opens a build calls
 * this (through `openBuild`).
 * @throws InputError when a live process keeps the commit unfinished past `waitMs` (naming it), when
 *   the lock is a directory, when another process holds `<lock>.takeover` throughout, or when the
 *   recovery cannot write beside the build
 */
export function recoverInterruptedCommit(out: string, waitMs = 5_000): void {
  const p = sidePaths(out);
  if (!fs.existsSync(p.journal)) return;
  const until = Date.now() + waitMs;
  for (;;) {
    // The writer's lock is taken as every lock is (`takeLock`): a dead writer's is stale and removed by one process at a time.
    let writer: LockOwner | undefined;
    try {
      takeLock(
        p.lock,
        (holder) => {
          writer = holder;
          return new InputError(`a build by ${ownerName(holder)} is being moved into place; try again`, { file: out });
        },
        () =>
          new InputError(
            `cannot finish an interrupted commit of this build: its lock changed hands a hundred times, or a process holding ${p.lock}.takeover is taking over a stale lock (if no fkgqa process runs, remove both files)`,
            { file: out },
          ),
      );
    } catch (e) {
      if (writer === undefined) {
        if (e instanceof InputError) throw e;
        throw new InputError(`cannot finish an interrupted commit of this build: ${(e as Error).message}`, { file: out });
      }
      if (!fs.existsSync(p.journal)) return; // the writer finished its commit
      if (Date.now() > until) throw e;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
      continue;
    }
    break;
  }
  try {
    rollForward(out);
  } finally {
    fs.rmSync(p.lock, { force: true });
  }
}

/**
 * Creates a lock file holding `owner` in one step: the owner is written to a temporary file in the
 * same folder, which is then hard-linked to the lock's name (link(2) fails when the name exists), so
 * a lock file is never seen empty or half-written. Where the file system has no hard links, the lock
 * is created exclusively and then written.
 * @returns false when the lock file exists
 * @throws InputError naming the folder when it does not exist, naming the lock when its folder
 *   refuses the write (`unwritableError`); other file system errors as they are
 */
function createLock(lock: string, owner: LockOwner): boolean {
  const text = JSON.stringify(owner) + '\n';
  // A short name beside the lock: a lock's own name may be near the file system's limit on a name (255 bytes).
  const tmp = path.join(path.dirname(lock), `.fkgqa-${process.pid}-${Math.random().toString(36).slice(2, 10)}.tmp`);
  try {
    fs.writeFileSync(tmp, text, { flag: 'wx' });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw new InputError(`the folder ${path.dirname(path.resolve(lock))} does not exist`, { file: lock });
    throw unwritableError(e, lock, 'lock file') ?? e;
  }
  try {
    fs.linkSync(tmp, lock);
    return true;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'ENOSYS' && code !== 'EOPNOTSUPP') throw e;
  } finally {
    fs.rmSync(tmp, { force: true });
  }
  try {
    fs.writeFileSync(lock, text, { flag: 'wx' });
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw unwritableError(e, lock, 'lock file') ?? e;
  }
}

/**
 * What identifies the lock file at `lock` now (not following a symbolic link): its device, inode and text (an inode number freed by
 * a removed lock may be reused at once by the next one; its text, naming pid and time, is not).
 * @returns undefined when there is no file at `lock` or it cannot be read
 */
function lockIdentity(lock: string): string | undefined {
  try {
    const st = fs.lstatSync(lock, { bigint: true });
    let text = '(unreadable)';
    try {
      text = fs.readFileSync(lock, 'latin1');
    } catch {
      // The file stays identified by its device and inode.
    }
    return `${st.dev}:${st.ino}:${text}`;
  } catch {
    return undefined;
  }
}

/**
 * Removes a stale lock file, unless another process takes it over first: a second lock beside it
 * (`<lock>.takeover`, held only while one process removes the stale lock) lets one process at a
 * time remove it, and only while the file at the lock's name is still the one found stale
 * (`identity`, see lockIdentity); so no process removes a lock another has just created. A
 * `.takeover` lock whose process is gone (killed while removing) is removed.
 * @returns false when another live process is removing it now
 */
function removeStaleLock(lock: string, identity: string): boolean {
  const takeover = `${lock}.takeover`;
  if (!createLock(takeover, thisOwner())) {
    const st = fs.lstatSync(takeover, { throwIfNoEntry: false });
    if (st && !st.isFile() && !st.isSymbolicLink())
      throw new InputError(`is ${st.isDirectory() ? 'a directory' : 'not a regular file'}, where fkgqa takes over a stale lock: remove it`, { file: takeover });
    const found = lockIdentity(takeover);
    const holder = readLockOwner(takeover);
    if (holder && ownerAlive(holder)) return false;
    // The stale .takeover is moved aside and removed only if it is the one found stale: another process's fresh one is put back.
    const aside = path.join(path.dirname(lock), `.fkgqa-${process.pid}-${Math.random().toString(36).slice(2, 10)}.stale`);
    try {
      fs.renameSync(takeover, aside);
    } catch {
      return true; // gone meanwhile
    }
    if (found !== undefined && lockIdentity(aside) !== found) {
      try {
        fs.linkSync(aside, takeover);
      } catch {
        // A newer .takeover holds the name.
      }
    }
    fs.rmSync(aside, { force: true });
    return true;
  }
  try {
    if (lockIdentity(lock) === identity) fs.rmSync(lock, { force: true });
  } finally {
    fs.rmSync(takeover, { force: true });
  }
  return true;
}

/**
 * Takes a lock file: creates it holding `thisOwner()` in one step (`createLock`: a lock file is
 * never seen empty). A lock whose process is gone, or whose pid now belongs to another process, is
 * stale and taken over (a process killed with SIGKILL leaves its lock behind); so is an unreadable
 * one. A stale lock is removed by one process at a time (`removeStaleLock`), so two processes
 * never both hold the lock. Remove the file to release it.
 * @param refusal the error for a live holder, or undefined to take its lock over
 * @param failure the error when the lock changes hands under us too often (a hundred times)
 * @returns the owner written
 * @throws InputError naming the path when it is a directory or another file that is not a regular
 *   file, or naming the folder when it does not exist
 */
export function takeLock(lock: string, refusal: (holder: LockOwner) => InputError | undefined, failure: () => InputError): LockOwner {
  const me = thisOwner();
  for (let attempt = 0; attempt < 100; attempt++) {
    if (createLock(lock, me)) return me;
    const st = fs.statSync(lock, { throwIfNoEntry: false });
    if (st && !st.isFile()) throw new InputError(`is ${st.isDirectory() ? 'a directory' : 'not a regular file'}, where fkgqa keeps its lock file: remove it`, { file: lock });
    const identity = lockIdentity(lock);
    if (identity === undefined) continue; // released meanwhile
    const holder = readLockOwner(lock);
    const refused = holder && ownerAlive(holder) ? refusal(holder) : undefined;
    if (refused) throw refused;
    // Another process is removing the stale lock: give it a moment to finish.
    if (!removeStaleLock(lock, identity)) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
  }
  throw failure();
}

/**
 * Takes the lock of an output (`takeLock`); a lock this process holds (its pid on this host, `isThisProcess`) is taken over.
 * @param lock the lock file
 * @param given the path the user named (for messages)
 * @param what what the lock protects, for the message (e.g. `output directory`, `run file`)
 * @throws InputError when another live process holds the lock
 */
export function takeLockFile(lock: string, given: string, what: string): void {
  takeLock(
    lock,
    (h) => (isThisProcess(h) ? undefined : new InputError(`another fkgqa process (${ownerName(h)}) is writing to this ${what}${otherHostAdvice(h, lock)}`, { file: given })),
    () =>
      new InputError(
        `cannot take the lock of the ${what}: it changed hands a hundred times, or a process holding ${lock}.takeover is taking over a stale lock (if no fkgqa process runs, remove both files)`,
        { file: lock },
      ),
  );
}

/** Files that may sit in an output directory without making it "not a build" (e.g. shards/README.md). */
const HARMLESS = /^(README(\.\w+)?|\.gitignore|\.gitkeep|\..*)$/;

/**
 * Checks an output directory before a build writes into it.
 * @throws InputError if `out` is the file-system root, a file, below a file, the source directory or inside it,
 *   or a non-empty directory that holds no fkgqa build (its entries could be taken for a build's)
 */
export function checkOutputDir(out: string, source?: string): void {
  const abs = path.resolve(out);
  if (path.parse(abs).root === abs) throw new InputError('--out may not be the root of the file system', { file: out });
  if (source) {
    const src = path.resolve(source);
    if (abs === src || abs.startsWith(src + path.sep)) throw new InputError(`--out may not be the source directory ${source} or inside it`, { file: out });
  }
  if (!fs.existsSync(abs)) {
    // The folder is created with its parents: the nearest existing one must be a folder.
    for (let up = path.dirname(abs); ; up = path.dirname(up)) {
      if (fs.existsSync(up)) {
        if (!fs.statSync(up).isDirectory()) throw new InputError(`--out lies below ${up}, which is a file, not a directory`, { file: out });
        return;
      }
      if (path.dirname(up) === up) return;
    }
  }
  if (!fs.statSync(abs).isDirectory()) throw new InputError('--out exists and is not a directory', { file: out });
  const entries = fs.readdirSync(abs).filter((e) => !HARMLESS.test(e));
  if (entries.length > 0 && !isFkgqaBuild(abs)) {
    throw new InputError(
      `--out is not empty and holds no fkgqa build (no build.json written by fkgqa): choose a new or empty directory (found ${entries.slice(0, 3).join(', ')}${entries.length > 3 ? ', …' : ''})`,
      { file: out },
    );
  }
}

/** Whether a directory holds a build written by fkgqa (`build.json` naming the tool). */
function isFkgqaBuild(dir: string): boolean {
  try {
    return JSON.parse(fs.readFileSync(path.join(dir, 'build.json'), 'utf8'))?.tool?.name === 'fkgqa';
  } catch {
    return false;
  }
}

/**
 * A staging directory beside the output directory: everything is written there, and only a
 * complete, checked build is moved into place (`commit`). If the build fails or the process is
 * interrupted, `discard` removes the staging directory and the output directory is left as it
 * was. A lock file beside the output (`.<out>.fkgqa-lock`, holding the pid and the process start
 * time) keeps two builds from writing the same output at once; a lock whose process is gone, or
 * whose pid now belongs to another process, is stale and taken over. Staging and moved-aside
 * folders left by a killed build are removed, and a commit it had decided is completed.
 *
 * Crash safety: the output folder's content changes with one rename of a whole folder (see
 * `commit`), decided by a journal file, so a kill at any instant leaves the previous build or the
 * new one, and the next run or any command opening the build (`recoverInterruptedCommit`) finishes
 * the job without manual clean-up.
 */
export class StagedOutput {
  /** Path of the staging directory (same parent as the output, so renames stay on one file system). */
  readonly dir: string;
  /** The output folder (a symbolic link given as `out` is resolved, so the link stays). */
  readonly out: string;
  private readonly lock: string;
  private done = false;

  constructor(out: string) {
    this.out = resolveOut(out);
    const p = sidePaths(this.out);
    fs.mkdirSync(p.parent, { recursive: true });
    this.lock = p.lock;
    this.takeLock(out);
    rollForward(this.out);
    // Left by killed builds (we hold the lock, so no live process owns them).
    for (const e of fs.readdirSync(p.parent)) {
      if (e.startsWith(p.tmpPrefix) || e.startsWith(p.oldPrefix) || e === `.${p.base}.fkgqa-journal.tmp`) fs.rmSync(path.join(p.parent, e), { recursive: true, force: true });
    }
    this.dir = fs.mkdtempSync(path.join(p.parent, `${p.tmpPrefix}${process.pid}-`));
    active.add(this);
  }

  private takeLock(given: string): void {
    takeLockFile(this.lock, given, 'output directory');
  }

  /**
   * Moves the staged build into place, all or nothing, so that a kill at any instant leaves either
   * the previous build or the new one:
   * 1. entries of the previous build that this build does not own (`owned` says which names a
   *    build owns, e.g. graph folders; others are a README or .gitignore) are copied into the
   *    staging folder, which then holds the complete new output folder;
   * 2. a journal naming the staging folder is written (to a temporary file, then renamed): from
   *    here on the commit is decided;
   * 3. the previous output folder is renamed aside (`.<out>.fkgqa-old-<pid>`), the staging folder
   *    renamed to the output;
   * 4. the folder moved aside and the journal are removed.
   * A kill before step 2 leaves the previous build (the staging folder is removed by the next
   * run); after it, the next run or opener completes steps 3–4 (`rollForward`).
   * @throws whatever `owned` or the file system throws; the output is then left as it was
   */
  commit(owned: (name: string, outDir: string) => boolean): void {
    const p = sidePaths(this.out);
    // mkdtemp made the staging folder 0700: give it the previous output's mode, or the umask's.
    fs.chmodSync(this.dir, fs.existsSync(this.out) ? fs.statSync(this.out).mode & 0o7777 : 0o777 & ~process.umask());
    if (fs.existsSync(this.out)) {
      const staged = new Set(fs.readdirSync(this.dir));
      for (const name of fs.readdirSync(this.out).sort()) {
        if (staged.has(name) || owned(name, this.out)) continue;
        fs.cpSync(path.join(this.out, name), path.join(this.dir, name), { recursive: true, preserveTimestamps: true });
      }
    }
    const journal: Journal = { staged: path.basename(this.dir), aside: `${p.oldPrefix}${process.pid}` };
    const tmp = `${p.journal}.tmp`;
    const fd = fs.openSync(tmp, 'w');
    try {
      fs.writeSync(fd, JSON.stringify(journal) + '\n');
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    rename(tmp, p.journal);
    rollForward(this.out);
    this.finish();
    const out = this.out;
    noteKept(`build:${out}`, () => `${out}, written completely`);
  }

  /** Removes the staging directory and everything in it, and releases the lock. */
  discard(): void {
    this.finish();
  }

  private finish(): void {
    if (this.done) return;
    this.done = true;
    active.delete(this);
    fs.rmSync(this.dir, { recursive: true, force: true });
    fs.rmSync(this.lock, { force: true });
  }
}

/** Where a report file may not go: the files a command reads, and the folders it reads from. */
interface ReportInputs {
  /** Files the command reads (run files): a report written there would replace them. */
  files?: readonly string[];
  /** Folders the command reads (a build, its state folder): nothing is written inside them. */
  folders?: readonly (string | undefined)[];
}

/** Longest file name (one path component) and longest path, in bytes, that Linux accepts (NAME_MAX, PATH_MAX less the final NUL). */
const NAME_MAX = 255;
const PATH_MAX = 4095;

/**
 * The nearest folder of `abs` (an absolute path) that exists, `abs` itself included, and the
 * components below it that do not exist yet (below a file, the file is what is found: the caller
 * tells it from a folder).
 */
function nearestExisting(abs: string): { existing: string; missing: string[] } {
  const missing: string[] = [];
  let up = abs;
  while (!fs.existsSync(up) && path.dirname(up) !== up) {
    missing.unshift(path.basename(up));
    up = path.dirname(up);
  }
  return { existing: up, missing };
}

/**
 * A path as the file system sees it: absolute, with every symbolic link resolved, its own included
 * (a folder given through a link is the folder it points to); a part that does not exist yet is
 * kept as given, below the resolved nearest existing folder.
 */
export function realPath(p: string): string {
  const { existing, missing } = nearestExisting(path.resolve(p));
  let real = existing;
  try {
    real = fs.realpathSync(existing);
  } catch {
    // unreadable: kept as given
  }
  return path.join(real, ...missing);
}

/** A report file as it will be written: its folder resolved (`realPath`), its own name kept (a link there is refused, not followed). */
function writtenPath(file: string): string {
  const abs = path.resolve(file);
  return path.join(realPath(path.dirname(abs)), path.basename(abs));
}

/**
 * Whether files and folders can be created in the existing folder `dir`: a temporary folder is
 * made there and removed at once (a permission check alone would pass for root on /proc or a
 * read-only mount).
 * @returns undefined when they can, else the system's error code and message
 */
function creatableIn(dir: string): { code: string; message: string } | undefined {
  try {
    fs.rmdirSync(fs.mkdtempSync(path.join(dir, '.fkgqa-probe-')));
    return undefined;
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    return { code: err.code ?? 'EIO', message: err.message };
  }
}

/**
 * Checks, before any work, that the report files of one command can be written without losing
 * anything: each is named (not empty), its name and path fit the system's limits (255 bytes a
 * name, 4095 a path), no two options name the same file, none is a file or inside a folder the
 * command reads (symbolic links resolved, the folders' own included), none is an existing folder
 * or special file (a symbolic link, a FIFO, a device), which the rename of `writeFileAtomic` would
 * replace by a regular file, none lies below a file, and the nearest existing folder on its path
 * lets files and folders be created in it (a missing folder is created by `writeReportFiles`).
 * @param outputs each report file with the option that names it (`--out`, `--per-query`, ...)
 * @param inputs the files and folders the command reads; give the folders it really reads (the
 *   effective state folder, not only `--state`)
 * @throws InputError naming the file and the option
 */
export function checkReportOutputs(outputs: readonly { file: string | undefined; option: string }[], inputs: ReportInputs = {}): void {
  for (const { file, option } of outputs) {
    if (file === undefined) continue;
    if (file === '') throw new InputError(`${option} names no file (an empty name): give the name of the file to write`);
    const long = path
      .resolve(file)
      .split(path.sep)
      .find((part) => Buffer.byteLength(part) > NAME_MAX);
    if (long !== undefined) throw new InputError(`has a name longer than ${NAME_MAX} bytes (${Buffer.byteLength(long)}), named by ${option}: give a shorter name`, { file });
    const bytes = Buffer.byteLength(path.resolve(file));
    if (bytes > PATH_MAX) throw new InputError(`is a path longer than ${PATH_MAX} bytes (${bytes}), named by ${option}: give a shorter path`, { file });
  }
  const seen = new Map<string, string>();
  const inputFiles = new Set((inputs.files ?? []).map(writtenPath));
  const folders = [...new Set((inputs.folders ?? []).filter((f): f is string => typeof f === 'string' && f !== '').map(realPath))];
  for (const { file, option } of outputs) {
    if (!file) continue;
    const at = writtenPath(file);
    const other = seen.get(at);
    if (other) throw new InputError(`is named by both ${other} and ${option}: give each report its own file`, { file });
    seen.set(at, option);
    if (inputFiles.has(at)) throw new InputError(`is a file this command reads, named by ${option}: the report would replace it; give another file`, { file });
    const inside = folders.find((d) => at === d || at.startsWith(d + path.sep));
    if (inside) throw new InputError(`is inside ${inside}, which this command reads (${option}): write reports elsewhere`, { file });
    const { existing: up } = nearestExisting(path.dirname(at));
    if (!fs.statSync(up).isDirectory()) throw new InputError(`lies below ${up}, which is a file, not a folder (${option})`, { file });
    const st = fs.lstatSync(at, { throwIfNoEntry: false });
    if (st?.isDirectory()) throw new InputError(`is a directory, named by ${option}: give the name of the file to write`, { file });
    if (st && !st.isFile()) throw new InputError(`is not a regular file (a symbolic link, FIFO or device), named by ${option}: give the name of a file to write`, { file });
    const refused = creatableIn(up);
    if (refused) throw new InputError(`cannot be written, named by ${option}: ${up} refuses new files and folders (${refused.code})`, { file });
  }
}

/**
 * Creates the missing folders of `dir` one level at a time (not `mkdirSync`'s recursive mode, which
 * Node 20 loops on forever under /proc); each folder created is appended to `created`, outermost first.
 * @throws the file system's error (the folders created so far are in `created`)
 */
function makeFolders(dir: string, created: string[]): void {
  const { existing, missing } = nearestExisting(path.resolve(dir));
  let at = existing;
  for (const part of missing) {
    at = path.join(at, part);
    fs.mkdirSync(at);
    created.push(at);
  }
}

/** The InputError of a write the system refused (ENOSPC, EACCES, EROFS…), naming the file; other errors unchanged. */
function writeError(e: unknown, file: string, temp: string, what: string): Error {
  const code = (e as NodeJS.ErrnoException).code;
  if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return new InputError(`could not be written (${code}: ${(e as Error).message.replace(`${temp}`, file)}); ${what}`, { file });
  return e as Error;
}

/** Codes of a refused write: a read-only file system (EROFS), or no permission (EACCES, EPERM). */
const REFUSED_WRITE = new Set(['EACCES', 'EPERM', 'EROFS']);

/**
 * The input error (exit 2) for a file that cannot be written because the system refuses writes in
 * its folder (read-only file system, no permission), naming the file, what it is, and its folder.
 * @param e the error of the refused write or mkdir
 * @param file the file (or folder) to be written
 * @param what what it is, for the message (e.g. `lock file`, `state folder`)
 * @returns undefined for any other error
 */
function unwritableError(e: unknown, file: string, what: string): InputError | undefined {
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  if (code === undefined || !REFUSED_WRITE.has(code)) return undefined;
  const folder = what.endsWith('folder') ? path.resolve(file) : path.dirname(path.resolve(file));
  return new InputError(`the ${what} cannot be written: ${folder} is on a read-only file system or not writable by this user (${code})`, { file });
}

/**
 * Makes a folder and its missing parents (`mkdir -p`).
 * @param dir the folder
 * @param what what it holds, for the message (e.g. `run file`)
 * @param file the file it is made for (named in the message)
 * @throws InputError naming `file` when the system refuses (`unwritableError`); other errors as they are
 */
export function makeFolderFor(dir: string, what: string, file: string): void {
  try {
    fs.mkdirSync(dir, { recursive: true });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== undefined && REFUSED_WRITE.has(code))
      throw new InputError(`the ${what} cannot be written: the folder ${path.resolve(dir)} cannot be made there, on a read-only file system or without permission (${code})`, { file });
    throw e;
  }
}

/**
 * Writes a file through a temporary file beside it and a rename, so that a reader or a kill never
 * sees half of it (the old content or the new, never a mixture); creates the folder if needed.
 * On a failure the temporary file and the folders it created are removed.
 * @throws InputError naming the file when it is an existing directory, or when the system refuses the write or the folder (ENOSPC, EACCES, EROFS, EPERM…; nothing is written)
 */
export function writeFileAtomic(file: string, text: string | Buffer): void {
  writeReportFiles([{ file, text }]);
}

/**
 * Writes several report files all or none: each goes to a temporary file beside it (its missing
 * folders created), and only when every one is written are they renamed into place. When one
 * cannot be written, the temporary files and the folders made for them are removed and no report
 * file changes.
 * @throws InputError naming the file the system refused (or that is an existing directory); nothing is written
 */
export function writeReportFiles(files: readonly { file: string; text: string | Buffer }[]): void {
  for (const { file } of files) {
    if (fs.statSync(file, { throwIfNoEntry: false })?.isDirectory()) throw new InputError('is a directory: give the name of the file to write', { file });
  }
  const created: string[] = [];
  const staged: { file: string; temp: string }[] = [];
  const undo = () => {
    for (const s of staged) fs.rmSync(s.temp, { force: true });
    for (const d of created.reverse()) {
      try {
        fs.rmdirSync(d); // only when empty: another process may have put something there
      } catch {
        // kept
      }
    }
  };
  for (const { file, text } of files) {
    const temp = `${file}.fkgqa-tmp-${process.pid}`;
    try {
      makeFolders(path.dirname(path.resolve(file)), created);
      staged.push({ file, temp });
      fs.writeFileSync(temp, text);
    } catch (e) {
      undo();
      throw writeError(e, file, temp, 'nothing was written');
    }
  }
  const done: string[] = [];
  for (const { file, temp } of staged) {
    try {
      fs.renameSync(temp, file);
    } catch (e) {
      for (const s of staged) fs.rmSync(s.temp, { force: true });
      throw writeError(e, file, temp, done.length ? `written before it: ${done.join(', ')}` : 'nothing was written');
    }
    done.push(file);
    noteKept(`file:${path.resolve(file)}`, () => file);
  }
}

/** Writes a JSON file with two-space indentation and a final newline (stable bytes for stable input). */
export function writeJson(file: string, value: unknown): void {
  fs.writeFileSync(file, JSON.stringify(value, null, 2) + '\n');
}
