import fs from 'node:fs';
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

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Files that may sit in an output directory without making it "not a build" (e.g. shards/README.md). */
const HARMLESS = /^(README(\.\w+)?|\.gitignore|\.gitkeep|\..*)$/;

/**
 * Checks an output directory before a build writes into it.
 * @throws InputError if `out` is the file-system root, a file, the source directory or inside it,
 *   or a non-empty directory that holds no fkgqa build (its entries could be taken for a build's)
 */
export function checkOutputDir(out: string, source?: string): void {
  const abs = path.resolve(out);
  if (path.parse(abs).root === abs) throw new InputError('--out may not be the root of the file system', { file: out });
  if (source) {
    const src = path.resolve(source);
    if (abs === src || abs.startsWith(src + path.sep)) throw new InputError(`--out may not be the source directory ${source} or inside it`, { file: out });
  }
  if (!fs.existsSync(abs)) return;
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
export function isFkgqaBuild(dir: string): boolean {
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
 * was. A lock file beside the output (`.<out>.fkgqa-lock`, holding the pid) keeps two builds from
 * writing the same output at once; staging directories left by a killed build are removed.
 */
export class StagedOutput {
  /** Path of the staging directory (same parent as the output, so renames stay on one file system). */
  readonly dir: string;
  private readonly lock: string;
  private done = false;

  constructor(readonly out: string) {
    const abs = path.resolve(out);
    const parent = path.dirname(abs);
    const base = path.basename(abs);
    fs.mkdirSync(parent, { recursive: true });
    this.lock = path.join(parent, `.${base}.fkgqa-lock`);
    this.takeLock();
    for (const e of fs.readdirSync(parent)) {
      if (e.startsWith(`.${base}.fkgqa-tmp-`)) fs.rmSync(path.join(parent, e), { recursive: true, force: true });
    }
    this.dir = fs.mkdtempSync(path.join(parent, `.${base}.fkgqa-tmp-${process.pid}-`));
    active.add(this);
  }

  private takeLock(): void {
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        fs.writeFileSync(this.lock, String(process.pid), { flag: 'wx' });
        return;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
        const pid = Number(fs.readFileSync(this.lock, 'utf8'));
        if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && pidAlive(pid)) {
          throw new InputError(`another fkgqa process (pid ${pid}) is writing to this output directory`, { file: this.out });
        }
        fs.rmSync(this.lock, { force: true }); // left by a process that is gone
      }
    }
    throw new InputError('cannot take the lock of the output directory', { file: this.lock });
  }

  /**
   * Moves the staged entries into the output directory, all or nothing: entries of the previous
   * build are first moved aside, and if any move fails every entry is put back before the error
   * is rethrown. Entries of a previous build that this build does not write (`owned` says which
   * names a build owns, e.g. graph folders) are removed; other files, such as a README, stay.
   */
  commit(owned: (name: string, outDir: string) => boolean): void {
    fs.mkdirSync(this.out, { recursive: true });
    const staged = fs.readdirSync(this.dir).sort();
    const stagedSet = new Set(staged);
    const aside: [string, string][] = []; // [original, moved-aside]
    const placed: [string, string][] = []; // [target, staged]
    try {
      for (const name of fs.readdirSync(this.out).sort()) {
        if (stagedSet.has(name) || owned(name, this.out)) {
          const from = path.join(this.out, name);
          const to = path.join(this.out, `.${name}.fkgqa-old-${process.pid}`);
          fs.renameSync(from, to);
          aside.push([from, to]);
        }
      }
      for (const name of staged) {
        const target = path.join(this.out, name);
        fs.renameSync(path.join(this.dir, name), target);
        placed.push([target, path.join(this.dir, name)]);
      }
    } catch (e) {
      for (const [target, back] of placed.reverse()) fs.renameSync(target, back);
      for (const [original, movedAside] of aside.reverse()) fs.renameSync(movedAside, original);
      throw e;
    }
    for (const [, movedAside] of aside) fs.rmSync(movedAside, { recursive: true, force: true });
    this.finish();
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

/** Writes a JSON file with two-space indentation and a final newline (stable bytes for stable input). */
export function writeJson(file: string, value: unknown): void {
  fs.writeFileSync(file, JSON.stringify(value, null, 2) + '\n');
}
