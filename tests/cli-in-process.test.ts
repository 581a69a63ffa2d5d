import { spawn } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { type CliResult, DEMO_GOLD_TIMEOUT_MS, demoBuild, fkgqaInProcess, ROOT, tmpDir } from './helpers.js';

/** Runs the built CLI as a child process (as fkgqaSync does, without blocking this process): its exit code, signal, stdout and stderr once its pipes closed. */
function fkgqaAsync(args: string[]): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const c = spawn(process.execPath, [path.join(ROOT, 'bin/fkgqa.js'), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    c.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    c.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    c.on('error', reject);
    c.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

// The in-process CLI runner (tests/helpers.ts fkgqaInProcess) gives what the child gives: the same
// argv, the same exit code, stdout and stderr byte for byte.
describe('fkgqaInProcess: the CLI in the test process, as its child', async () => {
  const dir = tmpDir();
  const build = await demoBuild(dir, { gold: true });
  const same = async (args: string[], code: number) => {
    // The child runs while the same command runs in this process.
    const [child, inProcess] = await Promise.all([fkgqaAsync(args), fkgqaInProcess(args)]);
    expect(child.code).toBe(code);
    expect(inProcess).toEqual({ code: child.code, signal: null, stdout: child.stdout, stderr: child.stderr });
    return inProcess;
  };

  it('success (0): questions of the demo build, text on stdout', async () => {
    const r = await same(['questions', '--shards', build, '--query', 'library/q2', 'library/q4'], 0);
    expect(r.stdout).toContain('library/q2 — question 2: What are the names of the authors from Peru?');
  });

  it('success (0): stats as JSON from the stored gold answers, and --version', async () => {
    const r = await same(['stats', '--shards', build, '--kg', 'library', '--timeout', String(DEMO_GOLD_TIMEOUT_MS), '--format', 'json', '-q'], 0);
    expect(JSON.parse(r.stdout).figures.graphs).toBe(1);
    expect((await same(['--version'], 0)).stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
  });

  it('no command (2, a usage error): the help on stderr; --help and help (0) on stdout', async () => {
    const none = await same([], 2);
    expect(none.stdout).toBe('');
    expect(none.stderr).toMatch(/^Usage: fkgqa \[options\] \[command\]\n/);
    expect(none.stderr).toContain('  partition [options]');
    const help = await same(['--help'], 0);
    expect([help.stdout, help.stderr]).toEqual([none.stderr, '']);
    expect((await same(['help'], 0)).stdout).toBe(none.stderr);
  });

  it('bad input (2): a build that is not there, named', async () => {
    const r = await same(['stats', '--shards', path.join(dir, 'nothing'), '-q'], 2);
    expect(r.stderr).toMatch(/^fkgqa: error: .*nothing/);
  });

  it("usage error (2): commander's message after the fkgqa prefix, and the hint, nothing on stdout", async () => {
    const r = await same(['partition', '--buckets', '1'], 2);
    expect(r.stderr).toBe("fkgqa: error: option '--buckets <n>' argument '1' is invalid. --buckets must be an integer from 2 to 1024\n(add --help for the options)\n");
    expect(r.stdout).toBe('');
    expect((await same(['no-such-command'], 2)).stderr).toBe("fkgqa: error: unknown command 'no-such-command'\n(add --help for the options)\n");
    expect((await same(['stats', '--bogus'], 2)).stderr).toBe("fkgqa: error: unknown option '--bogus'\n(add --help for the options)\n");
    // A time limit past Node's longest timer (2^31 - 1 ms) would fire at once: refused, as every option in ms.
    const t = await same(['query', '--timeout', '2147483648', 'SELECT * {}'], 2);
    expect(t.stderr).toBe("fkgqa: error: option '--timeout <ms>' argument '2147483648' is invalid. --timeout must be an integer from 1 to 2147483647\n(add --help for the options)\n");
  });

  it('leaves the test process as it was: exit code, environment, writers', async () => {
    const write = process.stdout.write;
    const r = await fkgqaInProcess(['stats', '--shards', path.join(dir, 'nothing'), '-q'], { env: { FKGQA_TEST_MARK: 'x' } });
    expect(r.code).toBe(2);
    expect(process.exitCode ?? 0).toBe(0);
    expect(process.env.FKGQA_TEST_MARK).toBeUndefined();
    expect(process.stdout.write).toBe(write);
    await expect(async () => fkgqaInProcess(['serve', '--shards', build])).rejects.toThrow(/runs as a child/);
  });

  it('refusal: a serve or mcp that refuses gives what the child gives and leaves no signal handler; a serve that serves instead is stopped at once', async () => {
    const handlers = () => ['SIGINT', 'SIGTERM'].map((sig) => process.listenerCount(sig));
    const before = handlers();
    for (const args of [
      ['serve', '--shards', path.join(dir, 'nothing'), '--port', '0', '-q'],
      ['mcp', '--endpoint', 'http://127.0.0.1:9/sparql', '--kgvoyager', '--embedder', 'local'],
    ]) {
      const [child, inProcess] = await Promise.all([fkgqaAsync(args), fkgqaInProcess(args, { refusal: true })]);
      expect(child.code).toBe(2);
      expect(inProcess).toEqual({ code: 2, signal: null, stdout: child.stdout, stderr: child.stderr });
      expect(handlers()).toEqual(before);
    }
    // A serve that does not refuse: stopped through its own SIGTERM handler once it printed its endpoints (exit 0, not 2).
    const served = await fkgqaInProcess(['serve', '--shards', build, '--kg', 'library', '--port', '0', '-q'], { refusal: true });
    expect(served.code).toBe(0);
    expect(served.stdout.split('\n').filter((l) => /^library-shard\d\thttp:\/\/127\.0\.0\.1:\d+\//.test(l))).toHaveLength(4);
    expect(handlers()).toEqual(before);
  });
});
