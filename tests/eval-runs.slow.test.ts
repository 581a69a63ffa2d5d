/**
 * `fkgqa eval` when its serve is killed mid-run (a fault injection with a serve,
 * an MCP server and eval as child processes, 10 s of wall, goes to `npm run test:slow`).
 * tests/eval-runs.test.ts keeps the infrastructure verdicts without a kill (endpoints that close
 * every connection; a tool result's _meta), tests/eval-crash.test.ts one kill of eval itself.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ok, toolCall } from './fake-chat.js';
import { demoBuild, fkgqaInProcess, ROOT, tmpDir } from './helpers.js';
import { fkgqaAsync, runHelpers } from './eval-fixture.js';

const dir = tmpDir('fkgqa-eval-runs-slow-');
let build: string;
const { fakes, newFake, records, lib } = runHelpers(() => build);

/** The CLI as a child process, asynchronously, without the user's OPENAI_* variables: what a user runs (and what a signal can stop). */
const fkgqaChild = (args: string[], env: Record<string, string | undefined> = {}) => fkgqaAsync(args, { OPENAI_BASE_URL: undefined, OPENAI_API_KEY: undefined, ...env });

/** The CLI in the test process (tests/helpers.ts; its event loop keeps serving the fake APIs), without the user's OPENAI_* variables. */
const fkgqa = (args: string[], env: Record<string, string | undefined> = {}) => fkgqaInProcess(args, { env: { OPENAI_BASE_URL: undefined, OPENAI_API_KEY: undefined, ...env } });

beforeAll(async () => {
  // The demo build with the gold answers of fkgqa stats (made here: test:slow has no global setup).
  build = await demoBuild(dir, { gold: true });
}, 300_000);

afterAll(async () => {
  for (const f of fakes) await f.close();
});

describe('eval / infrastructure failures are not wrong answers', () => {
  it('fkgqa eval: serve killed mid-run → infrastructure_error and exit 2 (no run succeeded); serve restarted, --retry-errors → submitted', async () => {
    const state = path.join(dir, 'kill-state');
    const startServe = async () => {
      const child = spawn(process.execPath, [path.join(ROOT, 'bin/fkgqa.js'), 'serve', '--shards', build, '--kg', 'library', '--port', '0', '--state', state, '-q']);
      let out = '';
      await new Promise<void>((resolve, reject) => {
        child.stdout.on('data', (d) => {
          out += d;
          if (out.includes('library-shard')) resolve();
        });
        child.on('exit', (c) => reject(new Error(`serve exited ${c}`)));
      });
      return child;
    };
    let serveChild = await startServe();
    const [q1, q2] = lib();
    const killed = { done: false };
    let query = '';
    const fake = await newFake(async (question, turn) => {
      if (!killed.done) {
        // Turn 1 of the first run: the endpoints go down (serve killed), then the agent carries on.
        killed.done = true;
        const exited = new Promise((r) => serveChild.once('exit', r));
        serveChild.kill('SIGKILL');
        await exited;
      }
      const urls = JSON.parse(fs.readFileSync(path.join(state, 'endpoints.json'), 'utf8')).endpoints.map((e: { url: string }) => e.url) as string[];
      query = `SELECT ?b WHERE { SERVICE <${urls[0]}> { ?b ?p ?o } } LIMIT 1`;
      return turn === 1 && question === q1.question
        ? ok({ tool_calls: [toolCall('r', 'run_sparql_query', JSON.stringify({ query }))] })
        : ok({ tool_calls: [toolCall('s', 'submit_final_query', JSON.stringify({ query }))] });
    });
    const out = path.join(dir, 'killed.jsonl');
    const args = [
      'eval',
      '--shards',
      build,
      '--state',
      state,
      '--base-url',
      fake.url,
      '--model',
      'm',
      '--question',
      String(q1.index),
      String(q2.index),
      '--out',
      out,
      '--tools',
      'mcp',
      '--backoff',
      '1',
    ];
    const first = await fkgqaChild(args);
    expect(first.code).toBe(2);
    expect(first.stderr).toMatch(/fkgqa: error: no run succeeded: infrastructure_error 2 \(first /);
    expect(first.stdout).toMatch(/failed: 2 of 2 \(not the agent's outcome: never scored; rerun them with --retry-errors\)/);
    const [r1, r2] = records(out);
    expect(r1.endReason).toBe('infrastructure_error');
    expect(r1.steps.some((s) => s.type === 'tool' && s.name === 'run_sparql_query' && s.isError)).toBe(true);
    expect(r1.infrastructure!.endpoint).toBe(query.match(/<([^>]+)>/)![1]);
    // The next run could not even start its tools: fkgqa mcp refuses the endpoints of a serve that is gone.
    expect(r2).toMatchObject({ endReason: 'infrastructure_error', infrastructure: { what: expect.stringMatching(/^the run's tools could not be set up: the MCP server did not start/) } });
    serveChild = await startServe();
    try {
      const again = await fkgqa([...args, '--retry-errors']);
      expect(again.code).toBe(0);
      const all = records(out);
      expect(all).toHaveLength(4);
      expect(all.slice(2).map((r) => [r.question.index, r.endReason, r.final?.status])).toEqual([
        [q1.index, 'submitted', 'ok'],
        [q2.index, 'submitted', 'ok'],
      ]);
      // Resumed once more without --retry-errors: nothing left to run.
      const third = await fkgqa(args);
      expect(third.code).toBe(0);
      expect(third.stdout).toMatch(/^fkgqa eval: 0 runs in .* \(2 already there: skipped\)/);
    } finally {
      serveChild.kill('SIGTERM');
      await new Promise((r) => serveChild.once('exit', r));
    }
  }, 300_000);
});
