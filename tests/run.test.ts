import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import net from 'node:net';
import { program } from '../src/cli/program.js';
import { fakeApi, ok, toolCall } from './fake-chat.js';
import { demoBuild, fkgqaInProcess, tmpDir } from './helpers.js';

/** `fkgqa run`: the whole loop on the demo build with the oracle, as a user runs it. */
const dir = tmpDir('fkgqa-run-');
let build: string;
let state: string;

beforeAll(async () => {
  // The shared demo build (tests/global-setup.ts) with its gold answers: the whole loop from a build
  // without them, and its Ctrl-C, are in run.slow.test.ts.
  build = await demoBuild(dir, { gold: true });
  state = `${build}.state`;
}, 120_000);

/** Runs the CLI in the test process (tests/helpers.ts): the child's exit code, stdout and stderr, without its start. */
const fkgqa = (args: string[]) => fkgqaInProcess(args);

describe('run / its options, and what it refuses before starting anything', () => {
  it("--max-query-chars reaches the tools and the final execution: the oracle's query over 60 characters is refused as too long", async () => {
    const out = path.join(dir, 'short');
    const r = await fkgqa(['run', '--shards', build, '--state', state, '--out', out, '--agent', 'oracle', '--no-probe', '--question', '0', '--max-query-chars', '60', '--timeout', '100000']);
    expect(r.code).toBe(0);
    const [run] = fs
      .readFileSync(path.join(out, 'baseline-oracle.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(run.final).toMatchObject({ status: 'error', errorClass: 'too-long' });
    expect(r.stdout).toMatch(/accuracy %\s+0\s+0\/1/);
  }, 300_000);

  it('refuses a model without --base-url (exit 2) before starting anything', async () => {
    const r = await fkgqa(['run', '--shards', build, '--state', state, '--out', path.join(dir, 'model'), '--agent', 'llm', '--model', 'qwen3-8b']);
    expect([r.code, r.stderr]).toEqual([2, 'fkgqa: error: a model needs --base-url (or OPENAI_BASE_URL) and --model (or give --agent oracle|trivial|single)\n']);
    expect(fs.existsSync(path.join(dir, 'model'))).toBe(false);
    const asFile = path.join(dir, 'out-file');
    fs.writeFileSync(asFile, 'x');
    const f = await fkgqa(['run', '--shards', build, '--state', state, '--out', asFile, '--agent', 'oracle']);
    expect([f.code, f.stderr]).toEqual([2, `fkgqa: error: ${asFile}: --out is a file: give the output folder (run files and reports are written into it)\n`]);
    const body = await fkgqa(['run', '--shards', build, '--state', state, '--out', path.join(dir, 'model'), '--base-url', 'http://127.0.0.1:9/v1', '--model', 'm', '--extra-body', '[1]']);
    expect([body.code, body.stderr]).toEqual([2, `fkgqa: error: --extra-body must be a JSON object of request fields, e.g. '{"reasoning_effort":"low"}', not an array\n`]);
  }, 60_000);

  it("refuses a run folder holding runs of another build (exit 2) before starting anything, and names a folder for this build's runs", async () => {
    const out = path.join(dir, 'other-build');
    fs.mkdirSync(out);
    const made = { id: 'baseline|oracle|0|r0|5ec2a3f2', build: { outputDigest: 'ab'.repeat(32), goldDigest: null } };
    fs.writeFileSync(path.join(out, 'baseline-oracle.jsonl'), JSON.stringify(made) + '\n');
    const digest = JSON.parse(fs.readFileSync(path.join(build, 'build.json'), 'utf8')).outputDigest as string;
    const r = await fkgqa(['run', '--shards', build, '--state', path.join(dir, 'other-state'), '--out', out, '--agent', 'oracle']);
    expect([r.code, r.stderr]).toEqual([
      2,
      `fkgqa: error: ${path.join(out, 'baseline-oracle.jsonl')}, line 1: ${out} holds runs of another build (output digest abababababababab; this build's is ${digest.slice(0, 16)}), ` +
        `and the runs of a folder are scored together: give this build's runs their own folder, e.g. --out ${out}-${digest.slice(0, 8)}, or move ${out} away\n`,
    ]);
    // Nothing started: no gold answers computed into the state folder, no report written.
    expect(fs.existsSync(path.join(dir, 'other-state'))).toBe(false);
    expect(fs.readdirSync(out)).toEqual(['baseline-oracle.jsonl']);
  }, 60_000);

  it('refuses a run folder holding a run file the scoring step cannot read (exit 2), naming file and line, before starting anything', async () => {
    const out = path.join(dir, 'old-format');
    fs.mkdirSync(out);
    const old = path.join(out, 'baseline-trivial.jsonl');
    fs.writeFileSync(old, '{"format":"fkgqa-run/1"}\n');
    const r = await fkgqa(['run', '--shards', build, '--state', path.join(dir, 'old-format-state'), '--out', out, '--agent', 'oracle']);
    expect([r.code, r.stderr]).toEqual([
      2,
      `fkgqa: error: ${old}, line 1: format fkgqa-run/1 is no longer read; rerun with this version (fkgqa eval writes fkgqa-run/2) ` +
        `(the runs of ${out} are scored together, so nothing was started: fix or remove that run file, or give another --out)\n`,
    ]);
    // Nothing started: no gold answers computed into the state folder, no run file or report written.
    expect(fs.existsSync(path.join(dir, 'old-format-state'))).toBe(false);
    expect(fs.readdirSync(out)).toEqual(['baseline-trivial.jsonl']);
  }, 60_000);

  it('takes every agent, selection and limit option of eval, from the same definitions', () => {
    const options = (name: string) =>
      new Map(
        program()
          .commands.find((c) => c.name() === name)!
          .options.map((o) => [o.long!, o]),
      );
    const evalOptions = options('eval');
    const runOptions = options('run');
    // eval's own: where the endpoints are, how the runs are spread (--part, --queue) and the summary's format; run starts or finds the serve and prints the score report.
    expect([...evalOptions.keys()].filter((k) => !runOptions.has(k))).toEqual(['--endpoints', '--part', '--queue', '--format', '--json']);
    // run's own: the port of the serve it starts.
    expect([...runOptions.keys()].filter((k) => !evalOptions.has(k))).toEqual(['--port']);
    const shared = [
      '--setup',
      '--base-url',
      '--model',
      '--kg',
      '--question',
      '--query',
      '--distinct-queries',
      '--per-graph',
      '--sample-seed',
      '--limit',
      '--repeats',
      '--retry-errors',
      '--max-turns',
      '--message-limit',
      '--token-limit',
      '--time-limit',
      '--max-retries',
      '--backoff',
      '--request-timeout',
      '--timeout',
      '--max-query-chars',
      '--concurrency',
      '--no-probe',
      '--federation-engine',
    ];
    for (const k of shared) {
      const [e, r] = [evalOptions.get(k)!, runOptions.get(k)!];
      expect({ k, description: r.description, default: r.defaultValue, env: r.envVar, choices: r.argChoices }).toEqual({
        k,
        description: e.description,
        default: e.defaultValue,
        env: e.envVar,
        choices: e.argChoices,
      });
    }
    expect(runOptions.get('--base-url')!.envVar).toBe('OPENAI_BASE_URL');
  });

  it('a model behind OPENAI_BASE_URL (no --base-url), with --query, --limit and --port: one run of the first selected question, endpoints on that port', async () => {
    const fake = await fakeApi(() => ok({ tool_calls: [toolCall('c1', 'cancel', JSON.stringify({ reason: 'the test ends the run here' }))] }));
    try {
      const port = await new Promise<number>((resolve) => {
        const s = net.createServer().listen(0, '127.0.0.1', () => {
          const p = (s.address() as net.AddressInfo).port;
          s.close(() => resolve(p));
        });
      });
      const out = path.join(dir, 'model');
      const r = await fkgqaInProcess(
        ['run', '--shards', build, '--state', state, '--out', out, '--model', 'fake-model', '--query', 'library/q2', 'library/q1', '--limit', '1', '--port', String(port), '--timeout', '100000'],
        { env: { OPENAI_BASE_URL: fake.url } },
      );
      expect([r.code, r.stderr.match(/error.*/g)]).toEqual([0, null]);
      expect(fake.requests).toHaveLength(1);
      expect(fake.requests[0].body.model).toBe('fake-model');
      // The endpoints the model is told about are those of the serve run started, on --port.
      expect(JSON.stringify(fake.requests[0].body.messages)).toContain(`http://127.0.0.1:${port}/library-shard1/sparql`);
      expect(r.stdout).toContain('== baseline|fake-model (1 run; ended: cancelled 1');
      const runs = fs
        .readFileSync(path.join(out, 'baseline-fake-model.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      // --query keeps benchmark order (library/q1 asked before library/q2), --limit 1 the first.
      expect(runs.map((x) => x.question.queryId)).toEqual(['library/q1']);
    } finally {
      await fake.close();
    }
  }, 300_000);
});
