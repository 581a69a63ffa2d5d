/**
 * `fkgqa eval`'s run file after crashes and the message of an interrupted
 * command: a torn last line is cut away on open and said on stderr, only whole lines
 * are appended, a kill at any instant loses no finished run; Ctrl-C says what was kept. Here one
 * fault injection (a kill in the middle of an append) and its resume; the kill sweeps (6 and 60
 * instants) are in tests/eval-crash.slow.test.ts (`npm run test:slow`).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { processStart } from '../src/common/output.js';
import { InputError } from '../src/common/errors.js';
import { RUN_FORMAT, runIdentity } from '../src/eval/record.js';
import { RunFile } from '../src/eval/run-file.js';
import { readRuns } from '../src/score/score.js';
import { tmpDir } from './helpers.js';
import { fkgqaAsync, serveDemo, type ServedBuild } from './eval-fixture.js';

const dir = tmpDir('fkgqa-eval-crash-');
/** A run line: question a, b, c … is question 0, 1, 2 … of one condition (what the run file reads of a run: its condition, question and repeat). */
const fields = (id: string) => ({
  setup: 'baseline',
  agent: 'oracle',
  model: null,
  maxTurns: 10,
  prompt: { sha256: 'p' },
  question: { index: id.charCodeAt(0) - 97 },
  repeat: 0,
  build: { outputDigest: 'aaaa1111', goldDigest: null },
});
const run = (id: string, endReason = 'submitted') => JSON.stringify({ format: RUN_FORMAT, id, endReason, ...fields(id), padding: 'x'.repeat(200) });
/** The run id of line `id`, computed from its fields (runIdentity): what RunFile.done takes. */
const runIdOf = (id: string) => runIdentity(JSON.parse(run(id)) as Parameters<typeof runIdentity>[0]).id;

describe('eval / the run file (unit)', () => {
  // First: the message depends on what this process has written so far.
  it('an interrupted command says what it kept: a committed build, written files, appended runs; "nothing was written" only when true', async () => {
    // What is kept is recorded per process, and the test files of a vitest worker share their
    // modules (isolate: false): a fresh instance of the module, as a new fkgqa process has.
    vi.resetModules();
    const { interruptionMessage, noteKept, StagedOutput } = await import('../src/common/output.js');
    expect(interruptionMessage()).toBe('nothing was written');
    const out = path.join(dir, 'build');
    const staged = new StagedOutput(out);
    fs.writeFileSync(path.join(staged.dir, 'build.json'), '{}');
    expect(interruptionMessage()).toBe(`nothing was written (the unfinished output ${out} was removed, what was there before is unchanged)`);
    expect(fs.existsSync(staged.dir)).toBe(false);
    const again = new StagedOutput(out);
    fs.writeFileSync(path.join(again.dir, 'build.json'), '{}');
    again.commit(() => true);
    expect(interruptionMessage()).toBe(`kept: ${out}, written completely`);
    noteKept('runs:x', () => '2 runs appended to x.jsonl');
    expect(interruptionMessage()).toBe(`kept: ${out}, written completely; 2 runs appended to x.jsonl`);
  });

  it('cuts a torn last line away and says so; completes a whole last line without newline; appends whole lines', () => {
    const f = path.join(dir, 'torn.jsonl');
    const torn = run('c').slice(0, 90);
    fs.writeFileSync(f, `${run('a')}\n${run('b')}\n${torn}`);
    const rf = RunFile.open(f);
    expect(rf.opening).toEqual({
      lines: 2,
      repaired: `${f}: cut away a torn last line (line 3, 90 bytes without newline: a run that was being written when an earlier fkgqa eval stopped); that run will run again`,
    });
    expect(rf.runs).toBe(2);
    expect(rf.done(runIdOf('a'), false)).toBe(true);
    expect(rf.done(runIdOf('c'), false)).toBe(false);
    rf.append(JSON.parse(run('c')));
    rf.close();
    expect(fs.readFileSync(f, 'utf8')).toBe(`${run('a')}\n${run('b')}\n${run('c')}\n`);

    const g = path.join(dir, 'whole.jsonl');
    fs.writeFileSync(g, `${run('a')}\n${run('b', 'model_error')}`);
    const rg = RunFile.open(g);
    expect(rg.opening).toEqual({ lines: 2, repaired: `${g}: the last line (a complete run) had no newline: added it` });
    expect(rg.done(runIdOf('b'), false)).toBe(true);
    expect(rg.done(runIdOf('b'), true)).toBe(false); // --retry-errors reruns it
    rg.close();
    expect(fs.readFileSync(g, 'utf8')).toBe(`${run('a')}\n${run('b', 'model_error')}\n`);

    // A file that is one torn line is emptied.
    const h = path.join(dir, 'only-torn.jsonl');
    fs.writeFileSync(h, '{"format":"fkgqa-run/2","id":"x","endRea');
    RunFile.open(h).close();
    expect(fs.readFileSync(h, 'utf8')).toBe('');
  });

  it("names a bad line that is not the last (exit 2, nothing appended), refuses a second writer, takes over a dead one's lock", () => {
    const f = path.join(dir, 'bad.jsonl');
    fs.writeFileSync(f, `${run('a')}\n{"oops\n${run('b')}\n`);
    expect(() => RunFile.open(f)).toThrow(InputError);
    expect(() => RunFile.open(f)).toThrow(new RegExp(`^${f}, line 2: not JSON \\(`));
    const other = path.join(dir, 'other.jsonl');
    fs.writeFileSync(other, `${JSON.stringify({ format: 'something', id: 'x' })}\n`);
    expect(() => RunFile.open(other)).toThrow(`${other}, line 1: not a run record of fkgqa eval (format "something", expected fkgqa-run/2); choose another --out`);
    expect(fs.existsSync(path.join(dir, '.bad.jsonl.fkgqa-lock'))).toBe(false); // released after the refusal
    const bare = path.join(dir, 'bare.jsonl');
    fs.writeFileSync(bare, `${JSON.stringify({ format: RUN_FORMAT, id: 'x', endReason: 'submitted' })}\n`);
    expect(() => RunFile.open(bare)).toThrow(
      `${bare}, line 1: run x: the fields of its condition (setup, agent, question, repeat, prompt, …) are missing: not a run record of fkgqa eval, or changed by hand; choose another --out`,
    );
    // A run of another build would be skipped as done: refused, naming it (the lock released).
    const built = path.join(dir, 'built.jsonl');
    const on = (digest: string) => JSON.stringify({ format: RUN_FORMAT, id: 'a', endReason: 'submitted', ...fields('a'), build: { outputDigest: digest, goldDigest: null } });
    fs.writeFileSync(built, `${on('aaaa1111')}\n`);
    RunFile.open(built, 'aaaa1111').close();
    expect(() => RunFile.open(built, 'bbbb2222')).toThrow(
      `${built}, line 1: run a was made on another build (output digest aaaa1111, this build's is bbbb2222): give the runs of this build their own --out`,
    );
    expect(fs.existsSync(path.join(dir, '.built.jsonl.fkgqa-lock'))).toBe(false);
    // The same for a run of another federation engine (jena's runs must not go into comunica's file); a line
    // written before the engine was recorded is not checked.
    const engined = path.join(dir, 'engined.jsonl');
    fs.writeFileSync(engined, `${JSON.stringify({ format: RUN_FORMAT, id: 'a', endReason: 'submitted', ...fields('a'), limits: { federationEngine: 'comunica' } })}\n${on('aaaa1111')}\n`);
    RunFile.open(engined, 'aaaa1111', 'comunica').close();
    expect(() => RunFile.open(engined, 'aaaa1111', 'jena')).toThrow(
      `${engined}, line 1: run a was made with the federation engine comunica, these runs use jena: give them their own --out (the engine decides what times out; a run already in the file would be skipped as done)`,
    );
    RunFile.open(built, 'aaaa1111', 'jena').close();
    // A live process (the test's parent) holds the lock: refused. A dead one's lock is taken over.
    const g = path.join(dir, 'locked.jsonl');
    const lock = path.join(dir, '.locked.jsonl.fkgqa-lock');
    fs.writeFileSync(lock, JSON.stringify({ pid: process.ppid, procStart: processStart(process.ppid), started: 'x' }));
    expect(() => RunFile.open(g)).toThrow(`${g}: another fkgqa process (pid ${process.ppid}) is writing to this run file`);
    fs.writeFileSync(lock, JSON.stringify({ pid: 4_194_000, procStart: 1, started: 'x' }));
    const rf = RunFile.open(g);
    expect(JSON.parse(fs.readFileSync(lock, 'utf8')).pid).toBe(process.pid);
    rf.close();
    expect(fs.existsSync(lock)).toBe(false);
  });
});

describe('eval / kill -9 at any instant loses no finished run', () => {
  let served: ServedBuild;
  let build: string;
  let endpointsFile: string;
  beforeAll(async () => {
    served = await serveDemo(dir, ['library']);
    ({ build, endpointsFile } = served);
  }, 120_000);
  afterAll(async () => {
    await served?.server.close();
  });

  it('a fault in the middle of an append, then a resume: the torn line is cut away (said on stderr), the run is made again, the file is whole', async () => {
    const out = path.join(dir, 'fault.jsonl');
    const args = ['eval', '--shards', build, '--endpoints', endpointsFile, '--agent', 'single', '--no-probe', '--tools', 'in-process', '--kg', 'library', '--out', out];
    const killed = await fkgqaAsync(args, { FKGQA_FAULT_AT: 'append:3' });
    expect(killed.signal).toBe('SIGKILL');
    const text = fs.readFileSync(out, 'utf8');
    expect(text.split('\n')).toHaveLength(3); // two whole lines and a torn third
    expect(text.endsWith('\n')).toBe(false);
    const resumed = await fkgqaAsync(args);
    expect(resumed.code).toBe(0);
    expect(resumed.stderr).toMatch(new RegExp(`warning: ${out}: cut away a torn last line \\(line 3, \\d+ bytes without newline`));
    expect(resumed.stdout).toMatch(/^fkgqa eval: 6 runs in .* \(2 already there: skipped\)/);
    const runs = readRuns([out]);
    expect(runs).toHaveLength(8);
    expect(fs.readFileSync(out, 'utf8').split('\n').filter(Boolean)).toHaveLength(8);
  }, 120_000);
});
