import fs from 'node:fs';
import path from 'node:path';

/**
 * A staging directory beside the output directory: everything is written there, and only a
 * complete, checked build is moved into place (`commit`). If the build fails, `discard` removes
 * the staging directory and the output directory is left as it was.
 */
export class StagedOutput {
  /** Path of the staging directory (same parent as the output, so renames stay on one file system). */
  readonly dir: string;

  constructor(readonly out: string) {
    const parent = path.dirname(path.resolve(out));
    fs.mkdirSync(parent, { recursive: true });
    this.dir = fs.mkdtempSync(path.join(parent, `.${path.basename(out)}.fkgqa-tmp-`));
  }

  /**
   * Moves the staged entries into the output directory. Entries of a previous build that this
   * build does not write (`owned` says which names a build owns, e.g. graph folders) are removed;
   * other files, such as a README, are left alone.
   */
  commit(owned: (name: string, outDir: string) => boolean): void {
    fs.mkdirSync(this.out, { recursive: true });
    const staged = new Set(fs.readdirSync(this.dir));
    for (const name of fs.readdirSync(this.out)) {
      if (!staged.has(name) && owned(name, this.out)) fs.rmSync(path.join(this.out, name), { recursive: true, force: true });
    }
    for (const name of [...staged].sort()) {
      const target = path.join(this.out, name);
      const old = `${target}.fkgqa-old`;
      if (fs.existsSync(target)) fs.renameSync(target, old);
      fs.renameSync(path.join(this.dir, name), target);
      fs.rmSync(old, { recursive: true, force: true });
    }
    fs.rmSync(this.dir, { recursive: true, force: true });
  }

  /** Removes the staging directory and everything in it. */
  discard(): void {
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Writes a JSON file with two-space indentation and a final newline (stable bytes for stable input). */
export function writeJson(file: string, value: unknown): void {
  fs.writeFileSync(file, JSON.stringify(value, null, 2) + '\n');
}
