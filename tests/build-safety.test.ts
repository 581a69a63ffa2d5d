// @module-tag split-tiers (tests/tiers.ts: the tests tagged slow run in npm run test:slow)
import { execFile, spawn } from 'node:child_process';
import os from 'node:os';
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { lockHolderOf, processStart, recoverInterruptedCommit, StagedOutput, takeLockFile, writeFileAtomic } from '../src/common/output.js';
import { mergeRunFiles } from '../src/eval/merge.js';
import { RunFile } from '../src/eval/run-file.js';
import { readRunFiles, runFileLock } from '../src/eval/run-reader.js';
import { parseQuery } from '../src/sparql/parse.js';
import { requiredPatterns } from '../src/analyze/patterns.js';
import { openBuild } from '../src/build/open.js';
import { describe as describeBuild, InputError, partition, serve, stats, verify } from '../src/index.js';
import { copyDir, DEMO, demoBuild, tmpDir, fileHashes, fkgqaInProcess } from './helpers.js';

/** The CLI in the test process (tests/helpers.ts): the child's exit code, stdout and stderr, without its start. */
const fkgqa = (args: string[]) => fkgqaInProcess(args);
const tree = fileHashes;

describe('build safety / locks', () => {
  it('a lock naming a live process whose start time differs (a reused pid) is stale', async () => {
    const parent = tmpDir();
    const lock = path.join(parent, '.shards.fkgqa-lock');
    const start = processStart(process.ppid);
    expect(start).toBeGreaterThan(0);
    // The right start time: the holder is alive, the build refused.
    fs.writeFileSync(lock, JSON.stringify({ pid: process.ppid, procStart: start, started: 'x' }));
    const busy = await fkgqa(['partition', '-q', '--out', path.join(parent, 'shards')]);
    expect(busy.code).toBe(2);
    expect(busy.stderr).toContain(`another fkgqa process (pid ${process.ppid}) is writing to this output directory`);
    // Same pid, another start time: the process that wrote the lock is gone, the pid was reused.
    fs.writeFileSync(lock, JSON.stringify({ pid: process.ppid, procStart: start! + 1, started: 'x' }));
    expect((await fkgqa(['partition', '-q', '--out', path.join(parent, 'shards')])).code).toBe(0);
    expect(fs.readdirSync(parent)).toEqual(['shards']);
  });

  it('names the host of a lock held on another machine, and how to release it (exit 2)', async () => {
    const parent = tmpDir();
    const lock = path.join(parent, '.shards.fkgqa-lock');
    fs.writeFileSync(lock, JSON.stringify({ pid: 4242, procStart: 1, started: 'x', hostname: 'elsewhere.example' }));
    const busy = await fkgqa(['partition', '-q', '--out', path.join(parent, 'shards')]);
    expect(busy.code).toBe(2);
    expect(busy.stderr).toContain(
      `another fkgqa process (pid 4242 on host elsewhere.example) is writing to this output directory (a process on another host cannot be checked from here: if it no longer runs, remove ${lock})`,
    );
    expect(fs.readdirSync(parent)).toEqual(['.shards.fkgqa-lock']);
  });

  it('a lock path that is a directory is an input error naming it (exit 2), not an internal error', async () => {
    const parent = tmpDir();
    const lock = path.join(parent, '.shards.fkgqa-lock');
    fs.mkdirSync(lock);
    const refused = await fkgqa(['partition', '-q', '--out', path.join(parent, 'shards')]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`${lock}: is a directory, where fkgqa keeps its lock file: remove it`);
    expect(fs.readdirSync(parent)).toEqual(['.shards.fkgqa-lock']);
  });

  it('a lock with an empty host name is checked on this machine; a missing parent folder is an input error naming it', () => {
    const parent = tmpDir();
    const lock = path.join(parent, '.out.fkgqa-lock');
    fs.writeFileSync(lock, JSON.stringify({ pid: process.ppid, procStart: processStart(process.ppid), started: 'x', hostname: '' }));
    expect(() => takeLockFile(lock, parent, 'output directory')).toThrow(`another fkgqa process (pid ${process.ppid}) is writing to this output directory`);
    // Its process gone: stale, taken over.
    fs.writeFileSync(lock, JSON.stringify({ pid: 99_999_999, procStart: null, started: 'x', hostname: '' }));
    takeLockFile(lock, parent, 'output directory');
    expect(JSON.parse(fs.readFileSync(lock, 'utf8')).pid).toBe(process.pid);
    const missing = path.join(parent, 'nowhere');
    expect(() => takeLockFile(path.join(missing, '.out.fkgqa-lock'), missing, 'output directory')).toThrow(
      new InputError(`the folder ${missing} does not exist`, { file: path.join(missing, '.out.fkgqa-lock') }),
    );
    expect(fs.readdirSync(parent)).toEqual(['.out.fkgqa-lock']);
  });

  it("a lock naming this pid on another host is another process's: refused naming that host; on this host it is taken over", () => {
    const parent = tmpDir();
    const lock = path.join(parent, '.out.fkgqa-lock');
    const other = JSON.stringify({ pid: process.pid, procStart: null, started: 'x', hostname: `not-${os.hostname()}` });
    fs.writeFileSync(lock, other);
    expect(() => takeLockFile(lock, parent, 'run file')).toThrow(`another fkgqa process (pid ${process.pid} on host not-${os.hostname()}) is writing to this run file`);
    expect(fs.readFileSync(lock, 'utf8')).toBe(other);
    expect(lockHolderOf(lock)).toMatchObject({ pid: process.pid, alive: true, self: false });
    fs.writeFileSync(lock, JSON.stringify({ pid: process.pid, procStart: processStart(process.pid), started: 'x', hostname: os.hostname() }));
    expect(lockHolderOf(lock)).toMatchObject({ self: true });
    takeLockFile(lock, parent, 'run file');
    expect(JSON.parse(fs.readFileSync(lock, 'utf8'))).toMatchObject({ pid: process.pid, hostname: os.hostname() });
  });

  it('takes a lock whose name is near the 255-byte limit of a file name; a .takeover that is a directory is an input error naming it', () => {
    const parent = tmpDir();
    const lock = path.join(parent, `.${'o'.repeat(225)}.fkgqa-lock`);
    takeLockFile(lock, parent, 'output directory');
    expect(JSON.parse(fs.readFileSync(lock, 'utf8')).pid).toBe(process.pid);
    expect(fs.readdirSync(parent)).toEqual([path.basename(lock)]);
    const stale = path.join(parent, '.p2.fkgqa-lock');
    fs.writeFileSync(stale, JSON.stringify({ pid: 99_999_999, procStart: null, started: 'x', hostname: '' }));
    fs.mkdirSync(`${stale}.takeover`);
    expect(() => takeLockFile(stale, parent, 'output directory')).toThrow(new InputError('is a directory, where fkgqa takes over a stale lock: remove it', { file: `${stale}.takeover` }));
    // A stale .takeover (its process gone) is removed, and the stale lock taken over; nothing else is left.
    fs.rmdirSync(`${stale}.takeover`);
    fs.writeFileSync(`${stale}.takeover`, JSON.stringify({ pid: 99_999_998, procStart: null, started: 'x', hostname: '' }));
    takeLockFile(stale, parent, 'output directory');
    expect(JSON.parse(fs.readFileSync(stale, 'utf8')).pid).toBe(process.pid);
    expect(fs.readdirSync(parent).sort()).toEqual(['.p2.fkgqa-lock', path.basename(lock)].sort());
  });

  /**
   * Four processes, each taking the lock `rounds` times (released or left stale, in turn): none ever
   * holds it while another does, and each takes it at least once.
   */
  async function race(rounds: number): Promise<void> {
    const parent = tmpDir();
    const lock = path.join(parent, '.out.fkgqa-lock');
    const racers = 4;
    // Each racer waits for all to be ready, then takes the lock again and again. Holding it, it makes
    // the folder `inside` (mkdir fails when another holder made it) and checks the lock names it; it
    // releases by removing the lock, or every other time by leaving a stale one (a holder that is
    // gone, written in one step as a killed process leaves it).
    const script = `
      import fs from 'node:fs';
      import { takeLockFile } from ${JSON.stringify(new URL('../dist/common/output.js', import.meta.url).href)};
      const [dir, lock, racers, me, rounds] = [process.argv[1], process.argv[2], Number(process.argv[3]), process.argv[4], Number(process.argv[5])];
      fs.writeFileSync(dir + '/ready-' + me, '');
      while (fs.readdirSync(dir).filter((f) => f.startsWith('ready-')).length < racers) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1);
      const n = { held: 0, refused: 0, together: 0, notMine: 0 };
      for (let i = 0; i < rounds; i++) {
        try { takeLockFile(lock, dir, 'output directory'); } catch { n.refused++; continue; }
        n.held++;
        try { fs.mkdirSync(dir + '/inside'); } catch { n.together++; continue; }
        let text = '';
        try { text = fs.readFileSync(lock, 'utf8'); } catch {}
        if (!text.includes('"pid":' + process.pid + ',')) n.notMine++;
        fs.rmdirSync(dir + '/inside');
        if (n.held % 2) fs.rmSync(lock, { force: true });
        else { fs.writeFileSync(lock + '.' + me, JSON.stringify({ pid: 99999999, procStart: null, started: 'x' })); fs.renameSync(lock + '.' + me, lock); }
      }
      console.log(JSON.stringify(n));`;
    const runs = await Promise.all(
      Array.from(
        { length: racers },
        (_, i) =>
          new Promise<{ held: number; refused: number; together: number; notMine: number }>((resolve, reject) =>
            execFile(process.execPath, ['--input-type=module', '-e', script, parent, lock, String(racers), String(i), String(rounds)], { encoding: 'utf8' }, (e, stdout) =>
              e ? reject(e) : resolve(JSON.parse(stdout.trim())),
            ),
          ),
      ),
    );
    expect(runs.map((r) => [r.together, r.notMine])).toEqual(runs.map(() => [0, 0]));
    expect(runs.every((r) => r.held > 0 && r.held + r.refused === rounds)).toBe(true);
  }

  it('processes racing for one lock never hold it at once, whether it is released or left stale', async () => {
    await race(300);
  });

  it('processes racing for one lock never hold it at once over 1,500 rounds each', { tags: ['slow'] }, async () => {
    await race(1500);
  });

  it('writes its pid, start time, the time and its host into the lock', async () => {
    const parent = tmpDir();
    const staged = new StagedOutput(path.join(parent, 'out'));
    try {
      expect(JSON.parse(fs.readFileSync(path.join(parent, '.out.fkgqa-lock'), 'utf8'))).toEqual({
        pid: process.pid,
        procStart: processStart(process.pid),
        started: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        hostname: os.hostname(),
      });
    } finally {
      staged.discard();
    }
    expect(fs.readdirSync(parent)).toEqual([]);
  });

  it('an opener leaves a commit of a live writer alone: it waits, then says so', async () => {
    // A commit decided by a process that is still running: the opener must not touch it.
    const parent = tmpDir();
    const out = path.join(parent, 'shards');
    const sleeper = spawn('sleep', ['30']);
    try {
      fs.mkdirSync(out);
      fs.writeFileSync(path.join(parent, '.shards.fkgqa-lock'), JSON.stringify({ pid: sleeper.pid, procStart: processStart(sleeper.pid!), started: 'x' }));
      fs.writeFileSync(path.join(parent, '.shards.fkgqa-journal'), JSON.stringify({ staged: '.shards.fkgqa-tmp-1-a', aside: '.shards.fkgqa-old-1' }));
      // It waits (300 ms here; 5 s by default) for the writer, which is still running when it gives up.
      const started = Date.now();
      expect(() => openBuild(out, { commitWaitMs: 300 })).toThrow(`a build by pid ${sleeper.pid} is being moved into place; try again`);
      expect(Date.now() - started).toBeGreaterThanOrEqual(300);
      expect(fs.readdirSync(parent).sort()).toEqual(['.shards.fkgqa-journal', '.shards.fkgqa-lock', 'shards']);
    } finally {
      sleeper.kill();
    }
  });
});

describe('build safety / one way to take a lock', () => {
  it("an opener takes a dead writer's lock through the stale-lock takeover: not while a live process holds <lock>.takeover, then it finishes the commit", async () => {
    const parent = tmpDir();
    const out = path.join(parent, 'shards');
    const lock = path.join(parent, '.shards.fkgqa-lock');
    const journal = path.join(parent, '.shards.fkgqa-journal');
    fs.mkdirSync(out);
    fs.writeFileSync(path.join(out, 'old.txt'), 'old');
    fs.mkdirSync(path.join(parent, '.shards.fkgqa-tmp-1-a'));
    fs.writeFileSync(path.join(parent, '.shards.fkgqa-tmp-1-a', 'new.txt'), 'new');
    fs.writeFileSync(journal, JSON.stringify({ staged: '.shards.fkgqa-tmp-1-a', aside: '.shards.fkgqa-old-1' }));
    // The writer is dead (no such pid): its lock is stale.
    fs.writeFileSync(lock, JSON.stringify({ pid: 99_999_997, procStart: null, started: 'x', hostname: os.hostname() }));
    // A live process is removing that stale lock: the opener leaves lock and commit to it.
    const sleeper = spawn('sleep', ['30']);
    try {
      fs.writeFileSync(`${lock}.takeover`, JSON.stringify({ pid: sleeper.pid, procStart: processStart(sleeper.pid!), started: 'x', hostname: os.hostname() }));
      expect(() => recoverInterruptedCommit(out, 0)).toThrow(`a process holding ${lock}.takeover is taking over a stale lock`);
      expect(fs.readdirSync(out)).toEqual(['old.txt']);
      expect(fs.existsSync(journal)).toBe(true);
      expect(JSON.parse(fs.readFileSync(lock, 'utf8')).pid).toBe(99_999_997);
    } finally {
      sleeper.kill('SIGKILL');
      await new Promise((r) => (sleeper.exitCode !== null || sleeper.signalCode !== null ? r(undefined) : sleeper.once('exit', r)));
    }
    // Its process gone, the .takeover is stale too: the opener removes both and completes the commit.
    recoverInterruptedCommit(out, 0);
    expect(fs.readdirSync(out)).toEqual(['new.txt']);
    expect(fs.readdirSync(parent)).toEqual(['shards']);
  });

  it('a lock that is a directory beside an interrupted commit is an input error naming it, as for every lock', () => {
    const parent = tmpDir();
    const out = path.join(parent, 'shards');
    fs.mkdirSync(out);
    fs.writeFileSync(path.join(parent, '.shards.fkgqa-journal'), JSON.stringify({ staged: '.shards.fkgqa-tmp-1-a', aside: '.shards.fkgqa-old-1' }));
    fs.mkdirSync(path.join(parent, '.shards.fkgqa-lock'));
    expect(() => recoverInterruptedCommit(out, 0)).toThrow(new InputError('is a directory, where fkgqa keeps its lock file: remove it', { file: path.join(parent, '.shards.fkgqa-lock') }));
  });

  it('the run file reader and merge name a lock holder on another host by pid and host (not as this process, even with its pid)', () => {
    const dir = tmpDir();
    const f = path.join(dir, 'runs.jsonl');
    fs.writeFileSync(f, '{}\n');
    const lock = runFileLock(f);
    fs.writeFileSync(lock, JSON.stringify({ pid: process.pid, procStart: null, started: 'x', hostname: 'elsewhere.example' }));
    const advice = ` (a process on another host cannot be checked from here: if it no longer runs, remove ${lock})`;
    expect(() => readRunFiles([f])).toThrow(
      `fkgqa eval (pid ${process.pid} on host elsewhere.example) is still writing this run file: it has written 1 run so far, not all its runs; wait until eval ends, or pass --partial to score them (the report then says it is partial)${advice}`,
    );
    expect(() => mergeRunFiles({ files: [f], out: path.join(dir, 'merged.jsonl') })).toThrow(
      `fkgqa eval (pid ${process.pid} on host elsewhere.example) is still writing this run file: merge its part when that eval has ended${advice}`,
    );
    expect(fs.existsSync(path.join(dir, 'merged.jsonl'))).toBe(false);
  });
});

describe('build safety / a folder the system refuses to write in (merge --out, eval --out, serve --state)', () => {
  // Root writes through mode 0o555; /sys/kernel refuses new files and folders to every user (EACCES, EPERM).
  const REFUSING = '/sys/kernel';
  const refusing = fs.existsSync(REFUSING);

  it.skipIf(!refusing)('is an input error (exit 2) naming the lock, the run file or the state folder and that it cannot be written', async () => {
    const empty = path.join(tmpDir(), 'empty.jsonl');
    fs.writeFileSync(empty, '');
    const lock = `${REFUSING}/.merged.jsonl.fkgqa-lock`;
    const merged = await fkgqa(['merge', empty, '--out', `${REFUSING}/merged.jsonl`]);
    expect(merged.code).toBe(2);
    expect(merged.stderr).toContain(`${lock}: the lock file cannot be written: ${REFUSING} is on a read-only file system or not writable by this user (EACCES)`);
    const below = await fkgqa(['merge', empty, '--out', `${REFUSING}/fkgqa-runs/merged.jsonl`]);
    expect(below.code).toBe(2);
    expect(below.stderr).toMatch(
      new RegExp(
        `${REFUSING}/fkgqa-runs/merged\\.jsonl: the run file cannot be written: the folder ${REFUSING}/fkgqa-runs cannot be made there, on a read-only file system or without permission \\(E(PERM|ACCES)\\)`,
      ),
    );
    expect(() => RunFile.open(`${REFUSING}/runs.jsonl`)).toThrow(
      new InputError(`the lock file cannot be written: ${REFUSING} is on a read-only file system or not writable by this user (EACCES)`, { file: `${REFUSING}/.runs.jsonl.fkgqa-lock` }),
    );
    const shards = await demoBuild(tmpDir());
    const served = await fkgqaInProcess(['serve', '--shards', shards, '--port', '0', '--state', `${REFUSING}/fkgqa-state`, '-q'], { refusal: true });
    expect(served.code).toBe(2);
    expect(served.stderr).toMatch(new RegExp(`${REFUSING}/fkgqa-state: the state folder cannot be written: the folder ${REFUSING}/fkgqa-state cannot be made there`));
  });

  it.skipIf(process.getuid?.() === 0)('a folder of mode 0o555 refuses the lock of merge --out (EACCES; skipped as root, whom the mode does not stop)', async () => {
    const dir = tmpDir();
    const empty = path.join(dir, 'empty.jsonl');
    fs.writeFileSync(empty, '');
    const ro = path.join(dir, 'ro');
    fs.mkdirSync(ro, { mode: 0o555 });
    const merged = await fkgqa(['merge', empty, '--out', path.join(ro, 'merged.jsonl')]);
    expect(merged.code).toBe(2);
    expect(merged.stderr).toContain(`${path.join(ro, '.merged.jsonl.fkgqa-lock')}: the lock file cannot be written: ${ro} is on a read-only file system or not writable by this user (EACCES)`);
    expect(fs.readdirSync(ro)).toEqual([]);
  });
});

describe('build safety / a report the system refuses to write', () => {
  it('is an input error naming the file, not an internal error; no temporary file is left', () => {
    // /proc takes no new files (ENOENT), whatever the user.
    const file = '/proc/fkgqa-report.html';
    let thrown: unknown;
    try {
      writeFileAtomic(file, 'x');
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(InputError);
    expect((thrown as Error).message).toMatch(/^\/proc\/fkgqa-report\.html: could not be written \(E[A-Z]+: .*\/proc\/fkgqa-report\.html'?\); nothing was written$/);
    expect((thrown as Error).message).not.toContain('fkgqa-tmp');
    expect(fs.existsSync(`${file}.fkgqa-tmp-${process.pid}`)).toBe(false);
  });
});

describe('build safety / the build is read-only: stats writes to the state folder', () => {
  it('fkgqa stats leaves every build file byte-identical; --state puts gold answers elsewhere', async () => {
    const out = await demoBuild(tmpDir());
    const before = tree(out);
    const s = await fkgqa(['stats', '--shards', out, '-q', '--format', 'json']);
    expect(s.code).toBe(0);
    expect(tree(out)).toEqual(before);
    expect(Object.keys(tree(`${out}.state`)).sort()).toEqual(['gold-answers/library.json', 'gold-answers/observatory.json', 'realised-fan-out/library.json', 'realised-fan-out/observatory.json']);
    const elsewhere = path.join(tmpDir(), 'state');
    expect((await fkgqa(['stats', '--shards', out, '-q', '--state', elsewhere, '--kg', 'library'])).code).toBe(0);
    expect(Object.keys(tree(elsewhere)).sort()).toEqual(['gold-answers/library.json', 'realised-fan-out/library.json']);
    expect(tree(out)).toEqual(before);
  });
  it("the library's stats() without a time limit runs each gold query under the CLI's default (60,000 ms): library's 7 answered, none timed out", async () => {
    const out = await demoBuild(tmpDir());
    const s = await stats({ shards: out, kgs: ['library'] });
    expect([s.figures.goldAnswers.graphQueryPairs, s.figures.goldAnswers.executed, s.figures.goldAnswers.timedOut]).toEqual([7, 7, 0]);
    const stored = JSON.parse(fs.readFileSync(path.join(`${out}.state`, 'gold-answers', 'library.json'), 'utf8')) as { timeoutMs: number };
    expect(stored.timeoutMs).toBe(60_000);
  });
});

describe('build safety / one way to open a build: broken JSON is named (exit 2)', () => {
  // The demo build (tests/global-setup.ts), copied.
  let good: string;
  beforeAll(async () => {
    good = await demoBuild(tmpDir());
  });
  const corruptions: [string, string, string][] = [
    ['build.json', '{"tool": {"name": "fkgqa"}, "graphs": ["library"', 'build.json of an fkgqa build is not valid JSON'],
    ['build.json', '{"tool": {"name": "fkgqa"}, "graphs": "library", "outputDigest": "x"}', '"graphs" is missing, empty or not a list of names'],
    ['benchmark.json', '', 'benchmark.json of an fkgqa build is not valid JSON'],
    [
      'benchmark.json',
      '{"defaultPrefix": "http://valuenet/ontop/", "entries": [{"kg": "library"}]}',
      'not a benchmark.json written by fkgqa partition: entries[0]: needs string fields "kg", "question", "query" and "queryId"',
    ],
    ['library/manifest.json', '{"tool": {"name": "fkg', 'graph manifest is not valid JSON'],
    ['library/manifest.json', '[]', 'not a graph manifest written by fkgqa partition: not a JSON object'],
  ];
  // The four commands, as the CLI runs them and as the library calls them (the CLI prints an
  // InputError's message after "fkgqa: error: " and exits 2). Each corruption goes through one
  // command's CLI (in turn, so that every command's CLI sees a broken build) and through the
  // library functions of the other three: a CLI child costs a second of CPU; the
  // CLI runs in the test process (fkgqaInProcess), serve's too as one that refuses before it serves.
  const commands: { cli: string[]; library: (shards: string) => Promise<unknown> }[] = [
    { cli: ['stats'], library: (shards) => stats({ shards, timeoutMs: 60_000 }) },
    { cli: ['describe'], library: (dir) => describeBuild({ dir }) },
    { cli: ['verify', '--query', 'library/q1'], library: (shards) => verify({ shards, queries: ['library/q1'] }) },
    { cli: ['serve', '--port', '0'], library: async (shards) => (await serve({ shards, port: 0, writeFiles: false })).close() },
  ];
  corruptions.forEach(([file, text, message], i) => {
    const viaCli = commands[i % commands.length];
    it(`${file} = ${JSON.stringify(text.slice(0, 40))}: stats, describe, verify and serve exit 2 naming it (fkgqa ${viaCli.cli[0]}'s CLI)`, async () => {
      const copy = path.join(tmpDir(), 'shards');
      fs.cpSync(good, copy, { recursive: true });
      if (file === 'library/manifest.json' && text.startsWith('{"tool"')) {
        // Keep the other fields: the file cut short in the middle.
        const full = fs.readFileSync(path.join(copy, file), 'utf8');
        fs.writeFileSync(path.join(copy, file), full.slice(0, Math.floor(full.length / 2)));
      } else fs.writeFileSync(path.join(copy, file), text);
      const r = await fkgqaInProcess([...viaCli.cli, '--shards', copy, '-q'], { refusal: viaCli.cli[0] === 'serve' });
      expect(r.code, `${viaCli.cli[0]}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toContain(`${path.join(copy, file)}: ${message}`);
      for (const c of commands.filter((x) => x !== viaCli)) {
        const e = await c.library(copy).then(
          () => undefined,
          (x: unknown) => x,
        );
        expect(e, c.cli[0]).toBeInstanceOf(InputError);
        expect((e as Error).message, c.cli[0]).toContain(`${path.join(copy, file)}: ${message}`);
      }
    });
  });
});

describe('build safety / partition input', () => {
  const lol = (levels: number) => {
    const decls = ['<!ENTITY lol0 "lol">'];
    for (let i = 1; i <= levels; i++) decls.push(`<!ENTITY lol${i} "${`&lol${i - 1};`.repeat(10)}">`);
    return `<?xml version="1.0"?>\n<!DOCTYPE rdf:RDF [\n${decls.join('\n')}\n]>\n<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:rdfs="http://www.w3.org/2000/01/rdf-schema#">\n<rdf:Description rdf:about="http://valuenet/ontop/x"><rdfs:label>&lol${levels};</rdfs:label></rdf:Description>\n</rdf:RDF>\n`;
  };

  it('a 0-byte ontology warns like a missing one', async () => {
    const src = copyDir(DEMO);
    fs.writeFileSync(path.join(src, 'ontologies/library.owl'), '');
    const r = await fkgqa(['partition', '--source', src, '--out', path.join(tmpDir(), 's'), '--no-void']);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('warning: library: ontology ontologies/library.owl is empty (0 bytes): classes come from explicit rdf:type patterns only');
    fs.rmSync(path.join(src, 'ontologies/library.owl'));
    expect((await fkgqa(['partition', '--source', src, '--out', path.join(tmpDir(), 's'), '--no-void'])).stderr).toContain('warning: library: no ontology in ontologies/library.(owl|rdf|xml|ttl)');
  });

  it('an XML entity bomb (billion laughs) in an ontology is refused before parsing, naming the file and line', async () => {
    const src = copyDir(DEMO);
    fs.writeFileSync(path.join(src, 'ontologies/library.owl'), lol(9)); // 10^9 × "lol" expanded
    // Refused by the entity check before any expansion (an expansion takes 2.9 GB and ends in a panic).
    const r = await fkgqa(['partition', '--source', src, '--out', path.join(tmpDir(), 's'), '-q']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${path.join(src, 'ontologies/library.owl')}, line 7: entity lol4 expands to more than 10000 characters (an XML entity bomb?): refused`);
  });

  it('refuses external and parameter entities, keeps IRI abbreviations as Protégé writes them', async () => {
    const src = copyDir(DEMO);
    const owl = path.join(src, 'ontologies/library.owl');
    const demo = fs.readFileSync(path.join(DEMO, 'ontologies/library.owl'), 'utf8');
    const withDoctype = (subset: string, text = demo) => text.replace('<?xml version="1.0"?>\n', `<?xml version="1.0"?>\n<!DOCTYPE rdf:RDF [\n${subset}\n]>\n`);
    fs.writeFileSync(owl, withDoctype('<!ENTITY secret SYSTEM "file:///etc/passwd">'));
    const r = await fkgqa(['partition', '--source', src, '--out', path.join(tmpDir(), 's'), '-q']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${owl}, line 3: external entity secret (SYSTEM) in the DOCTYPE: refused`);
    // The same through the library function (the CLI above: an InputError's message, exit 2).
    fs.writeFileSync(owl, withDoctype('<!ENTITY % p "x">'));
    await expect(partition({ source: src, out: path.join(tmpDir(), 's') })).rejects.toThrow(/line 3: parameter entity %p in the DOCTYPE: refused/);
    // IRI abbreviations: the same ontology, the same manifest as without them.
    fs.writeFileSync(owl, withDoctype('<!ENTITY xsd "http://www.w3.org/2001/XMLSchema#">', demo.replaceAll('"http://www.w3.org/2001/XMLSchema#', '"&xsd;')));
    const a = path.join(tmpDir(), 's');
    const b = path.join(tmpDir(), 's');
    await partition({ source: src, out: a, void: false, kgs: ['library'] });
    fs.writeFileSync(owl, demo);
    await partition({ source: src, out: b, void: false, kgs: ['library'] });
    const manifest = (d: string) => JSON.parse(fs.readFileSync(path.join(d, 'library/manifest.json'), 'utf8'));
    expect(manifest(a).rules).toEqual(manifest(b).rules);
    expect(manifest(a).queries).toEqual(manifest(b).queries); // |C(q)| from the ranges: datatypes recognised through &xsd;
    expect(manifest(a).rules.length).toBeGreaterThan(0);
  });

  it('--out below a regular file is an input error, not "internal error: EEXIST"', async () => {
    const file = path.join(tmpDir(), 'somefile');
    fs.writeFileSync(file, 'x');
    const r = await fkgqa(['partition', '--out', path.join(file, 'sub'), '-q']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${path.join(file, 'sub')}: --out lies below ${file}, which is a file, not a directory`);
  });
});

describe('build safety / which triple patterns every solution needs', () => {
  const req = (q: string) => {
    const p = parseQuery(q, 'http://e/');
    if (!p.ok) throw new Error(p.error);
    return requiredPatterns(p.query.ast);
  };
  it('takes the top-level BGPs and nested groups, not OPTIONAL, UNION, MINUS, FILTER EXISTS, subqueries or property paths', async () => {
    const r = req(
      'SELECT ?a WHERE { ?a :p ?b . { ?b :q ?c } OPTIONAL { ?a :o ?x } { ?a :u1 ?y } UNION { ?a :u2 ?y } MINUS { ?a :m ?z } FILTER EXISTS { ?a :e ?w } ?a :r+ ?v { SELECT ?a WHERE { ?a :s ?t } } }',
    );
    expect(r).toEqual({ keys: ['?a <http://e/p> ?b', '?b <http://e/q> ?c'], implicitGroup: false });
  });
  it('knows an aggregate without GROUP BY answers one row over no solutions', async () => {
    expect(req('SELECT (COUNT(*) AS ?n) WHERE { ?a :p ?b }').implicitGroup).toBe(true);
    expect(req('SELECT ?b (COUNT(*) AS ?n) WHERE { ?a :p ?b } GROUP BY ?b').implicitGroup).toBe(false);
  });
});
