/**
 * `fkgqa run`, the whole loop in one command over the demo build: from a build without gold
 * answers to the score report and the view page, and Ctrl-C in the middle. Its options and
 * refusals are in run.test.ts (`npm test`).
 */
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { demoBuild, fkgqaChild, fkgqaInProcess, tmpDir } from './helpers.js';

const dir = tmpDir('fkgqa-run-');
let build: string;
let state: string;

beforeAll(async () => {
  state = path.join(dir, 'state');
  // The shared demo build (tests/global-setup.ts), without its gold answers: run computes them.
  build = await demoBuild(dir);
}, 120_000);

/** Runs the CLI in the test process (tests/helpers.ts): the child's exit code, stdout and stderr, without its start. */
const fkgqa = (args: string[]) => fkgqaInProcess(args);

describe('run / the whole loop in one command', () => {
  it('goes from a build without gold answers to the score report and the view page (oracle), and stops its serve', async () => {
    const out = path.join(dir, 'runs');
    const r = await fkgqaChild(['run', '--shards', build, '--state', state, '--out', out, '--agent', 'oracle', '--no-probe', '--timeout', '100000']);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('fkgqa run: no gold answers stored for library, observatory: running fkgqa stats (once per build)');
    expect(r.stderr).toMatch(/fkgqa run: serving 8 endpoints \(stopped at the end/);
    expect(r.stderr).toContain('fkgqa run: serve stopped');
    // The score report on stdout: 16 questions of the demo, all correct, every needed shard named.
    expect(r.stdout).toContain('== baseline|oracle (16 runs; ended: submitted 16');
    expect(r.stdout).toMatch(/accuracy %\s+100\s+16\/16/);
    expect(r.stdout).toMatch(/consultation of submitted runs %\s+100\s+16\/16/);
    expect(fs.readdirSync(out).sort()).toEqual(['baseline-oracle.jsonl', 'per-run.csv', 'report.html', 'report.txt', 'view.html']);
    expect(fs.readFileSync(path.join(out, 'baseline-oracle.jsonl'), 'utf8').trim().split('\n')).toHaveLength(16);
    expect(fs.readFileSync(path.join(out, 'report.txt'), 'utf8')).toBe(r.stdout);
    expect(fs.readFileSync(path.join(out, 'report.html'), 'utf8')).toContain('<p>16 runs, 1 group (one per condition: setup | agent or model, and what else differs)');
    expect(fs.readFileSync(path.join(out, 'per-run.csv'), 'utf8').trim().split('\n')).toHaveLength(17);
    const view = fs.readFileSync(path.join(out, 'view.html'), 'utf8');
    expect(view).toContain('<title>fkgqa view: 16 runs</title>');
    expect(view).toContain('verdicts of fkgqa score: 16 correct, 0 wrong');
    // The serve it started is gone: no endpoints file, no lock.
    expect(fs.readdirSync(state).sort()).toEqual(['gold-answers', 'realised-fan-out']);
    // Again: the runs are there (skipped), gold answers stored; the report is the same.
    const again = await fkgqa(['run', '--shards', build, '--state', state, '--out', out, '--agent', 'oracle', '--no-probe', '--timeout', '100000']);
    expect(again.code).toBe(0);
    expect(again.stderr).not.toContain('running fkgqa stats');
    expect(again.stderr).toContain('fkgqa run: 0 runs now, 16 already in');
    expect(again.stdout).toBe(r.stdout);
  }, 300_000);

  it('Ctrl-C: stops the serve it started (endpoints file and lock removed), exits 130, keeps the finished runs', async () => {
    const out = path.join(dir, 'interrupted');
    let sent = false;
    const r = await fkgqaChild(['run', '--shards', build, '--state', state, '--out', out, '--agent', 'trivial'], (text, child) => {
      // Once the first run is done (the serve is up and the agent at work).
      if (!sent && /\[1\/16\]/.test(text)) {
        sent = true;
        expect(fs.existsSync(path.join(state, 'endpoints.json'))).toBe(true);
        child.kill('SIGINT');
      }
    });
    expect(sent).toBe(true);
    expect(r.code).toBe(130);
    expect(r.stderr).toContain('fkgqa run: interrupted (SIGINT); a serve it started is stopped (a serve that was already running keeps running)');
    expect(fs.readdirSync(state).sort()).toEqual(['gold-answers', 'realised-fan-out']);
    const lines = fs.readFileSync(path.join(out, 'baseline-trivial.jsonl'), 'utf8').trim().split('\n');
    expect(lines.length).toBeGreaterThanOrEqual(1);
    expect(lines.length).toBeLessThan(16);
    expect(fs.existsSync(path.join(out, 'report.txt'))).toBe(false);
  }, 300_000);
});
