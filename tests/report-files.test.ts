import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { realPath, writeFileAtomic, writeReportFiles } from '../src/common/output.js';
import { tmpDir } from './helpers.js';

describe('report files / written all or none', () => {
  it('writes no report file, and leaves no folder or temporary file, when one of them cannot be written', () => {
    const dir = tmpDir('fkgqa-report-files-');
    const first = path.join(dir, 'new', 'per-run.csv');
    const kept = path.join(dir, 'report.txt');
    fs.writeFileSync(kept, 'before\n');
    expect(() =>
      writeReportFiles([
        { file: first, text: 'a,b\n' },
        { file: kept, text: 'after\n' },
        { file: '/proc/nonexistent/x.txt', text: 'x\n' },
      ]),
    ).toThrow(/^\/proc\/nonexistent\/x\.txt: could not be written \(ENOENT: .*\); nothing was written$/);
    expect([fs.readdirSync(dir), fs.readFileSync(kept, 'utf8')]).toEqual([['report.txt'], 'before\n']);
    writeReportFiles([
      { file: first, text: 'a,b\n' },
      { file: kept, text: 'after\n' },
    ]);
    expect([fs.readFileSync(first, 'utf8'), fs.readFileSync(kept, 'utf8'), fs.readdirSync(path.dirname(first))]).toEqual(['a,b\n', 'after\n', ['per-run.csv']]);
  });

  it('refuses a folder that cannot be created as bad input naming the file (under /proc, where a recursive mkdir loops)', () => {
    expect(() => writeFileAtomic('/proc/nonexistent/deeper/x.txt', 'x')).toThrow(
      /^\/proc\/nonexistent\/deeper\/x\.txt: could not be written \(ENOENT: .*mkdir '\/proc\/nonexistent'\); nothing was written$/,
    );
    expect(() => writeFileAtomic('/sys/nonexistent/x.txt', 'x')).toThrow(/^\/sys\/nonexistent\/x\.txt: could not be written \(EPERM: .*\); nothing was written$/);
  });

  it('resolves the symbolic links of a path, its own and those of its existing folders', () => {
    const dir = fs.realpathSync(tmpDir('fkgqa-real-path-'));
    fs.mkdirSync(path.join(dir, 'build'));
    fs.symlinkSync(path.join(dir, 'build'), path.join(dir, 'link'));
    expect([realPath(path.join(dir, 'link')), realPath(path.join(dir, 'link', 'missing', 'x'))]).toEqual([path.join(dir, 'build'), path.join(dir, 'build', 'missing', 'x')]);
  });
});
