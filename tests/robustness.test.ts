import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { StagedOutput } from '../src/common/output.js';
import { InputError, partition } from '../src/index.js';
import { copyDir, DEMO, demoBuild, fkgqaInProcess, tmpDir } from './helpers.js';

/** Runs the built CLI in the test process (tests/helpers.ts): the child's exit code, stdout and stderr, without its start. */
const fkgqa = (...args: string[]) => fkgqaInProcess(args);
const entries = (dir: string) => (fs.existsSync(dir) ? fs.readdirSync(dir).sort() : []);
const digestOf = (out: string) => JSON.parse(fs.readFileSync(path.join(out, 'build.json'), 'utf8')).outputDigest;

/** A previous good demo build (a copy of the one made once per run), to check that a failed build leaves it alone. */
const goodBuild = () => demoBuild(tmpDir());

/**
 * The message of the InputError `work` rejects with (what the CLI prints after "fkgqa: error: ",
 * exiting 2): bad input given to the library function, where the test is about the message, not
 * the CLI (a CLI child costs a second of CPU; the other tests here keep the CLI).
 */
async function refusal(work: Promise<unknown>): Promise<string> {
  const e = await work.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(InputError);
  return (e as InputError).message;
}

describe('robustness / paths', () => {
  it('refuses graph names that are not one safe path segment', async () => {
    const src = copyDir(DEMO);
    fs.renameSync(path.join(src, 'kg/library.nt'), path.join(src, 'kg/...nt')); // graph ".."
    expect(await refusal(partition({ source: src, out: path.join(tmpDir(), 'shards') }))).toContain('kg/...nt: ".." cannot be a graph name');
  });

  it('refuses an --out that is the root, the source, or a non-empty folder without a build, and leaves it alone', async () => {
    expect((await fkgqa('partition', '--out', '/')).stderr).toContain('--out may not be the root of the file system');
    const src = copyDir(DEMO);
    expect((await fkgqa('partition', '--source', src, '--out', path.join(src, 'kg'))).stderr).toContain('--out may not be the source directory');
    const project = tmpDir();
    fs.mkdirSync(path.join(project, 'webext'));
    fs.writeFileSync(path.join(project, 'webext/manifest.json'), '{"name":"an extension"}');
    const r = await fkgqa('partition', '--out', project);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--out is not empty and holds no fkgqa build');
    expect(entries(path.join(project, 'webext'))).toEqual(['manifest.json']);
  });

  it('puts everything back when moving the new build into place fails half-way', async () => {
    const parent = tmpDir();
    const out = path.join(parent, 'out');
    fs.mkdirSync(path.join(out, 'a'), { recursive: true });
    fs.writeFileSync(path.join(out, 'a/old.txt'), 'old a');
    fs.writeFileSync(path.join(out, 'b.json'), 'old b');
    const staged = new StagedOutput(out);
    fs.mkdirSync(path.join(staged.dir, 'a'));
    fs.writeFileSync(path.join(staged.dir, 'a/new.txt'), 'new a');
    expect(() =>
      staged.commit((name) => {
        if (name === 'b.json') throw new Error('simulated failure');
        return false;
      }),
    ).toThrow('simulated failure');
    expect(fs.readFileSync(path.join(out, 'a/old.txt'), 'utf8')).toBe('old a');
    expect(fs.readFileSync(path.join(out, 'b.json'), 'utf8')).toBe('old b');
    staged.discard();
    expect(entries(parent)).toEqual(['out']);
  });

  it('refuses a second build into an output another live process is writing', async () => {
    const parent = tmpDir();
    const sleeper = spawn('sleep', ['30']);
    try {
      fs.writeFileSync(path.join(parent, '.shards.fkgqa-lock'), String(sleeper.pid));
      const r = await fkgqa('partition', '--out', path.join(parent, 'shards'));
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`another fkgqa process (pid ${sleeper.pid}) is writing to this output directory`);
    } finally {
      sleeper.kill();
    }
    // A lock left by a process that is gone is taken over.
    fs.writeFileSync(path.join(parent, '.shards.fkgqa-lock'), '999999999');
    expect((await fkgqa('partition', '--out', path.join(parent, 'shards'), '-q')).code).toBe(0);
    expect(entries(parent)).toEqual(['shards']);
  });
});

describe('robustness / input', () => {
  it('refuses empty questions with exit 2 and keeps the previous build', async () => {
    const out = await goodBuild();
    const before = digestOf(out);
    const src = copyDir(DEMO);
    fs.writeFileSync(path.join(src, 'dev.json'), '[]');
    expect(await refusal(partition({ source: src, out }))).toContain('dev.json: no questions: nothing to build');
    expect(digestOf(out)).toBe(before);
  });

  it('names the file and line of invalid UTF-8 and of an IRI the endpoints would reject', async () => {
    const src = copyDir(DEMO);
    const nt = path.join(src, 'kg/library.nt');
    fs.appendFileSync(nt, Buffer.concat([Buffer.from('<http://valuenet/ontop/author/author_id=1> <http://valuenet/ontop/author#bio> "caf'), Buffer.from([0xe9]), Buffer.from('" .\n')]));
    expect(await refusal(partition({ source: src, out: path.join(tmpDir(), 's') }))).toContain('kg/library.nt, line 98: invalid UTF-8 byte sequence');
    fs.writeFileSync(nt, fs.readFileSync(path.join(DEMO, 'kg/library.nt'), 'utf8') + '<http://a/%zz> <http://valuenet/ontop/author#name> "x" .\n');
    expect(await refusal(partition({ source: src, out: path.join(tmpDir(), 's') }))).toContain("kg/library.nt, line 98: invalid IRI <http://a/%zz>: Invalid IRI percent encoding '%zz'");
  });

  it('refuses prefixes and endpoint bases that would write broken Turtle', async () => {
    expect((await fkgqa('partition', '--default-prefix', 'http://valuenet/ontop/>', '--out', path.join(tmpDir(), 's'))).stderr).toContain(
      '--default-prefix must be an absolute IRI, got "http://valuenet/ontop/>" (Invalid IRI code point \'>\')',
    );
    expect((await fkgqa('partition', '--endpoint-base', 'http://x/a b', '--out', path.join(tmpDir(), 's'))).code).toBe(2);
  });

  it('exits 2 on bad options, with a short hint instead of the whole help', async () => {
    const r = await fkgqa('partition', '--seed', '-1');
    expect(r.code).toBe(2);
    expect(r.stderr.split('\n').length).toBeLessThan(5);
    expect((await fkgqa('stats', '--timeout', '0')).code).toBe(2);
  });

  it('refuses a CSV whose header repeats a column', async () => {
    const src = copyDir(DEMO);
    fs.rmSync(path.join(src, 'dev.json'));
    fs.writeFileSync(path.join(src, 'questions.csv'), 'kg_name,question,query,query\nlibrary,q,a,b\n');
    expect(await refusal(partition({ source: src, out: path.join(tmpDir(), 's') }))).toContain('CSV header repeats the column "query"');
  });
});

describe('robustness / later stages and synth', () => {
  it('stats refuses a build whose shard was cut short, naming the file', async () => {
    const out = await goodBuild();
    const shard = path.join(out, 'library/shard1.nt');
    fs.writeFileSync(shard, fs.readFileSync(shard, 'utf8').split('\n').slice(0, 5).join('\n') + '\n');
    const r = await fkgqa('stats', '--shards', out, '-q');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('library/shard1.nt: shard file differs from the one the build wrote');
    fs.writeFileSync(path.join(out, 'library/manifest.json'), '{');
    expect((await fkgqa('stats', '--shards', out)).stderr).toMatch(/library\/manifest\.json: graph manifest is not valid JSON/);
  });

  it('synth refuses an empty graph and an --out that is its source, writing nothing', async () => {
    const src = copyDir(DEMO);
    fs.writeFileSync(path.join(src, 'kg/library.nt'), '');
    const out = path.join(tmpDir(), 'syn');
    const e = await fkgqa('synth', '--source', src, '--kg', 'library', '--triples', '10', '--out', out);
    expect(e.code).toBe(2);
    expect(e.stderr).toContain('graph library has no triples to replicate');
    expect(fs.existsSync(out)).toBe(false);
    const s = await fkgqa('synth', '--source', DEMO, '--kg', 'library', '--triples', '10', '--out', DEMO);
    expect(s.code).toBe(2);
    expect(s.stderr).toContain('--out may not be the source directory');
  });
});

// Interrupting a build of the real corpus (SIGINT, exit 130, the staging directory removed): tests/robustness.slow.test.ts.
