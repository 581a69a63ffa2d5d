// @module-tag split-tiers (tests/tiers.ts: the tests tagged slow run in npm run test:slow)
/**
 * `fkgqa eval`: run records a score can trust, a hostile or slow LLM
 * API and the habits of Inspect/lm-eval users. Fake chat-completions
 * servers on loopback and scripted agents, never a real model.
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { goldAnswerDigest, readGoldAnswers } from '../src/build/gold-answers.js';
import { OpenAiChat, ModelError, retryAfterMs } from '../src/eval/chat.js';
import { runEval } from '../src/eval/eval.js';
import { score } from '../src/score/score.js';
import { formatScoreHtml } from '../src/score/format.js';
import { formatStatsHtml } from '../src/report/html.js';
import { stats } from '../src/index.js';
import type { QueryExecutor } from '../src/eval/execute.js';
import { runLoop } from '../src/eval/loop.js';
import { toolSurfaceDigest } from '../src/eval/record.js';
import { HARNESS_TOOLS, McpToolProvider, type ToolProvider } from '../src/eval/tools.js';
import { filterGraphs, openRegistry } from '../src/federation/registry.js';
import type { ShardServer } from '../src/serve/server.js';
import { fakeApi, ok, toolCall } from './fake-chat.js';
import { fkgqaInProcess, tmpDir } from './helpers.js';
import { fkgqaAsync, runHelpers, serveDemo } from './eval-fixture.js';

const dir = tmpDir('fkgqa-eval-runs-');
let build: string;
let endpointsFile: string;
let server: ShardServer;
const { fakes, newFake, bench, records, lib } = runHelpers(() => build);

/** The CLI as a child process, asynchronously, without the user's OPENAI_* variables: what a user runs (and what a signal can stop). */
const fkgqaChild = (args: string[], env: Record<string, string | undefined> = {}, onStderr?: Parameters<typeof fkgqaAsync>[2]) =>
  fkgqaAsync(args, { OPENAI_BASE_URL: undefined, OPENAI_API_KEY: undefined, ...env }, onStderr);

/** The CLI in the test process (tests/helpers.ts; its event loop keeps serving the endpoints and fake APIs), without the user's OPENAI_* variables. */
const fkgqa = (args: string[], env: Record<string, string | undefined> = {}) => fkgqaInProcess(args, { env: { OPENAI_BASE_URL: undefined, OPENAI_API_KEY: undefined, ...env } });

beforeAll(async () => {
  ({ build, endpointsFile, server } = await serveDemo(dir));
}, 300_000);

afterAll(async () => {
  for (const f of fakes) await f.close();
  await server?.close();
});

describe('eval / conditions: a run is its condition, question and repeat', () => {
  it('resumes only runs of the same condition (another query time limit runs again, as its own condition); ids carry the condition; a file written before they did still resumes; score reports each condition apart', async () => {
    const [q1, q2] = lib();
    const base = {
      shards: build,
      endpoints: endpointsFile,
      setup: 'baseline' as const,
      agent: 'single' as const,
      probe: false,
      questions: [q1.index, q2.index],
      timeoutMs: 20_000,
      tools: 'in-process' as const,
    };
    const out = path.join(dir, 'conditions.jsonl');
    expect(await runEval({ ...base, out })).toMatchObject({ planned: 2, skipped: 0, ran: 2 });
    expect(await runEval({ ...base, out })).toMatchObject({ planned: 2, skipped: 2, ran: 0 });
    // Another query time limit is another condition: nothing of it is done yet.
    expect(await runEval({ ...base, out, timeoutMs: 25_000 })).toMatchObject({ planned: 2, skipped: 0, ran: 2 });
    const rs = records(out);
    expect(rs.map((r) => r.id.replace(/\|[0-9a-f]{8}$/, '|c'))).toEqual([
      `baseline|single|${q1.index}|r0|c`,
      `baseline|single|${q2.index}|r0|c`,
      `baseline|single|${q1.index}|r0|c`,
      `baseline|single|${q2.index}|r0|c`,
    ]);
    expect(new Set(rs.map((r) => r.id)).size).toBe(4);
    expect(rs.map((r) => r.limits?.queryTimeoutMs)).toEqual([20_000, 20_000, 25_000, 25_000]);
    // Lines whose id has no condition (written before ids carried it) are known by their fields: still done.
    fs.writeFileSync(out, rs.map((r) => JSON.stringify({ ...r, id: r.id.replace(/\|[0-9a-f]{8}$/, '') }) + '\n').join(''));
    expect(await runEval({ ...base, out })).toMatchObject({ planned: 2, skipped: 2, ran: 0 });
    expect(await runEval({ ...base, out, timeoutMs: 25_000 })).toMatchObject({ planned: 2, skipped: 2, ran: 0 });
    const report = await score({ runs: [out], shards: build });
    expect(report.groups.map((g) => [g.group, g.runs])).toEqual([
      ['baseline|single (limits.queryTimeoutMs=20000)', 2],
      ['baseline|single (limits.queryTimeoutMs=25000)', 2],
    ]);
    expect(report.perRun.map((s) => s.id).sort()).toEqual(rs.map((r) => r.id).sort());
  }, 300_000);
});

describe('eval / the run record (fkgqa-run/2)', () => {
  it('carries the build, the gold answer it is scored against and the digest of the tool surface the agent saw', async () => {
    const [q1, q2] = lib();
    const base = { shards: build, endpoints: endpointsFile, agent: 'single' as const, probe: false, questions: [q1.index, q2.index], timeoutMs: 20_000, tools: 'in-process' as const };
    const inProc = path.join(dir, 'record-inproc.jsonl');
    const voidTool = path.join(dir, 'record-void.jsonl');
    await runEval({ ...base, setup: 'baseline', out: inProc });
    await runEval({ ...base, setup: 'void_tool', out: voidTool, questions: [q1.index] });
    const [a, b] = records(inProc);
    const [v] = records(voidTool);
    const digest = (JSON.parse(fs.readFileSync(path.join(build, 'build.json'), 'utf8')) as { outputDigest: string }).outputDigest;
    const golds = readGoldAnswers(build, 'library', digest)!;
    expect(a.format).toBe('fkgqa-run/2');
    expect(a.build).toEqual({ outputDigest: digest, goldDigest: goldAnswerDigest(golds.answers.find((g) => g.query === q1.queryId)) });
    expect(a.build!.goldDigest).toMatch(/^[0-9a-f]{16}$/);
    expect(b.build!.goldDigest).toBe(goldAnswerDigest(golds.answers.find((g) => g.query === q2.queryId)));
    // Every limit that can change the outcome: a scripted agent has no LLM request limit or retries, and
    // its queries may be 1,000,000 characters long (as --help says; it was 8,000, which refused the
    // trivial form of pets_1/q8 with 14,579 characters as "too-long", counted as a wrong answer).
    expect(a.limits).toEqual({ messages: null, tokens: null, timeMs: null, queryTimeoutMs: 20_000, maxQueryChars: 1_000_000, requestTimeoutMs: null, maxRetries: null, federationEngine: 'comunica' });
    // The digest is of what the server lists (instructions, tools with descriptions and schemas, resources, prompts) plus the harness's two tools.
    const registry = filterGraphs(openRegistry({ endpointsFiles: [endpointsFile], build }), ['library']);
    const p = await McpToolProvider.inProcess({ registry, setup: 'baseline', callLog: null, state: null, limits: { defaultTimeoutMs: 20_000, maxQueryChars: 1_000_000 } });
    const expected = toolSurfaceDigest({ ...p.surface(), tools: [...p.tools(), ...HARNESS_TOOLS] });
    await p.close();
    expect(a.toolSurface).toEqual(expected);
    expect(a.toolSurface).toEqual({ digest: expect.stringMatching(/^[0-9a-f]{16}$/), tools: 3 });
    expect(b.toolSurface).toEqual(a.toolSurface); // same graph and setup: the same surface (stdio: see the scope test)
    expect(v.toolSurface!.tools).toBe(4);
    expect(v.toolSurface!.digest).not.toBe(a.toolSurface!.digest);
    // One changed description changes the digest.
    const changed = p.tools().map((t, i) => (i === 0 ? { ...t, description: `${t.description} ` } : t));
    expect(toolSurfaceDigest({ ...p.surface(), tools: [...changed, ...HARNESS_TOOLS] }).digest).not.toBe(a.toolSurface!.digest);
  }, 300_000);
});

/** A scripted model that plays fixed replies, one per turn. */
const playing = (replies: { tool_calls: ReturnType<typeof toolCall>[] }[]) => ({
  model: null,
  async complete(r: { turn: number }) {
    return {
      message: { role: 'assistant' as const, content: null, ...replies[Math.min(r.turn, replies.length) - 1] },
      usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
      finishReason: 'tool_calls',
      retries: [],
    };
  },
});

/** Tools whose run_sparql_query answers with the given results in turn. */
const answering = (results: Awaited<ReturnType<ToolProvider['call']>>[]): ToolProvider => {
  let i = 0;
  return {
    source: 'in-process',
    tools: () => [{ name: 'run_sparql_query', description: 'd', parameters: { type: 'object' } }],
    surface: () => ({ instructions: null, resources: [], resourceTemplates: [], prompts: [] }),
    call: async () => results[i++],
    close: async () => {},
  };
};

describe('eval / infrastructure failures are not wrong answers', () => {
  it('a tool result whose _meta["fkgqa/error"] says infrastructure ends the run at that step; an agent mistake does not', async () => {
    const q = JSON.stringify({ query: 'SELECT * WHERE { SERVICE <http://x/sparql> { ?s ?p ?o } }' });
    const executor = { run: async () => ({ status: 'ok', ms: 1, endpoints: [], results: { head: { vars: [] }, results: { bindings: [] } }, rows: 0 }) } as unknown as QueryExecutor;
    const r = await runLoop({
      system: 's',
      user: 'u',
      maxTurns: 10,
      executor,
      model: playing([{ tool_calls: [toolCall('a', 'run_sparql_query', q)] }, { tool_calls: [toolCall('b', 'run_sparql_query', q), toolCall('c', 'submit_final_query', q)] }]),
      tools: answering([
        { text: 'Error (syntax): …', isError: true, error: { class: 'syntax', infrastructure: false } },
        { text: 'Error (endpoint): refused', isError: true, error: { class: 'endpoint', infrastructure: true, endpoint: 'http://x/sparql' } },
      ]),
    });
    expect(r.endReason).toBe('infrastructure_error');
    // steps: llm, tool (agent's mistake: the run went on), llm, tool (infrastructure: the run ended), tool (ignored)
    expect(r.steps.map((s) => s.type)).toEqual(['llm', 'tool', 'llm', 'tool', 'tool']);
    expect(r.infrastructure).toEqual({ what: 'run_sparql_query failed (endpoint at http://x/sparql): Error (endpoint): refused', endpoint: 'http://x/sparql', step: 3 });
    expect(r.steps[3]).toMatchObject({ type: 'tool', error: { class: 'endpoint', infrastructure: true } });
    expect(r.steps[4]).toMatchObject({ type: 'tool', name: 'submit_final_query', result: 'ignored: the task has already ended' });
    expect(r.finalQuery).toBeNull();
  });

  it("endpoints that close every connection on a request: the final execution fails as infrastructure, naming the endpoint (direct and federated); a syntax error stays the agent's", async () => {
    // Every library endpoint of this endpoints file is a TCP server that closes each connection when
    // the request arrives (a faulting endpoint). (One that closes before reading the request makes
    // Node's fetch wait for the time limit instead: a timeout, which is the agent's.)
    const sockets = new Set<net.Socket>();
    const closer = net.createServer((s) => {
      sockets.add(s);
      s.once('data', () => s.destroy());
    });
    await new Promise<void>((r) => closer.listen(0, '127.0.0.1', r));
    const port = (closer.address() as net.AddressInfo).port;
    const file = JSON.parse(JSON.stringify(server.endpointsFile())) as { endpoints: { graph: string; url: string; id: string }[] };
    for (const e of file.endpoints) if (e.graph === 'library') e.url = `http://127.0.0.1:${port}/${e.id}/sparql`;
    const broken = path.join(dir, 'broken-endpoints.json');
    fs.writeFileSync(broken, JSON.stringify(file));
    try {
      const [q1] = lib();
      const out = path.join(dir, 'closed.jsonl');
      // The closed connections fail at once; the per-query limit is for hangs only (as in eval.test.ts):
      // a timeout is the agent's (endReason submitted), and at load 15 a 20 s limit ran out before the
      // final execution failed, turning this test's verdict on the load instead of on the endpoint.
      for (const agent of ['single', 'trivial'] as const)
        await runEval({ shards: build, endpoints: broken, setup: 'baseline', agent, out, questions: [q1.index], tools: 'in-process', probe: false, timeoutMs: 100_000 });
      const [single, trivial] = records(out);
      for (const r of [single, trivial]) {
        expect(r.endReason).toBe('infrastructure_error');
        expect(r.final).toMatchObject({ status: 'error', infrastructure: true });
        expect(r.infrastructure!.endpoint).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${port}/library-shard\\d+/sparql$`));
        expect(r.infrastructure!.step).toBeUndefined();
        expect(r.infrastructure!.what).toMatch(/^the harness's execution of the submitted query failed \((endpoint|federation)\)/);
      }
      expect(single.final!.errorClass).toBe('endpoint');
      expect(single.infrastructure!.endpoint).toBe(single.final!.endpoints[0]);
      // The agent's own mistake against a healthy endpoint is an answer (wrong), not an infrastructure failure.
      const fake = await newFake(() =>
        ok({ tool_calls: [toolCall('s', 'submit_final_query', JSON.stringify({ query: `SELECT * WHERE { SERVICE <${server.endpoints.find((e) => e.graph === 'library')!.url}> { ?s ?p ?o` }))] }),
      );
      const mine = path.join(dir, 'syntax.jsonl');
      await runEval({ shards: build, endpoints: endpointsFile, setup: 'baseline', agent: 'llm', baseUrl: fake.url, model: 'm', out: mine, questions: [q1.index], tools: 'in-process' });
      const [m] = records(mine);
      expect(m.endReason).toBe('submitted');
      expect(m.final).toMatchObject({ status: 'error', errorClass: 'syntax', infrastructure: false });
      expect(m.infrastructure).toBeUndefined();
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise((r) => closer.close(r));
    }
  }, 300_000);
});

describe('eval / the LLM API: backoff, time limits, waits shown', () => {
  it('backs off exponentially from --backoff on a 500 without Retry-After; honours Retry-After in seconds and as a date', async () => {
    const fake = await newFake((q, _t, attempt) => {
      if (q === 'date') return attempt === 1 ? { status: 503, headers: { 'retry-after': new Date(Date.now() + 2000).toUTCString() } } : ok({ content: 'hi' });
      return attempt <= 3 ? { status: 500 } : ok({ content: 'hi' });
    });
    const c = new OpenAiChat({ baseUrl: fake.url, model: 'm', maxRetries: 3, backoffMs: 200 });
    // The backed-off request and the one told a date side by side (each waits on its own).
    const [r, d] = await Promise.all([
      c.complete({ messages: [{ role: 'user', content: 'backoff' }], tools: [], turn: 1 }),
      c.complete({ messages: [{ role: 'user', content: 'date' }], tools: [], turn: 1 }),
    ]);
    expect(r.retries.map((x) => [x.status, x.waitMs])).toEqual([
      [500, 200],
      [500, 400],
      [500, 800],
    ]);
    const at = fake.requests.filter((x) => x.question === 'backoff').map((x) => x.at);
    // Waited at least as long as recorded between tries (more at load, never less).
    expect(at[1] - at[0]).toBeGreaterThanOrEqual(195);
    expect(at[2] - at[1]).toBeGreaterThanOrEqual(395);
    expect(at[3] - at[2]).toBeGreaterThanOrEqual(795);
    expect(d.retries[0].status).toBe(503);
    expect(d.retries[0].waitMs).toBeGreaterThan(0); // the date's distance (HTTP dates have whole seconds), not the backoff
    expect(d.retries[0].waitMs).toBeLessThanOrEqual(2000);
    expect(retryAfterMs(null)).toBeUndefined();
    expect(retryAfterMs('')).toBeUndefined();
    expect(retryAfterMs('0')).toBe(0);
    expect(retryAfterMs('7')).toBe(7000);
    expect(retryAfterMs('soon')).toBeUndefined();
    expect(retryAfterMs('Wed, 21 Oct 2015 07:28:00 GMT', Date.parse('Wed, 21 Oct 2015 07:27:30 GMT'))).toBe(30_000);
    expect(retryAfterMs('86400')).toBe(600_000);
  }, 60_000);

  it('an API that never answers: the request time limit ends each try, every wait is shown with its run, then model_error', async () => {
    const fake = await newFake(() => 'hang');
    const [q] = lib();
    const lines: string[] = [];
    const out = path.join(dir, 'hang.jsonl');
    const s = await runEval({
      shards: build,
      endpoints: endpointsFile,
      setup: 'baseline',
      agent: 'llm',
      baseUrl: fake.url,
      model: 'm',
      out,
      questions: [q.index],
      tools: 'in-process',
      requestTimeoutMs: 600,
      noticeMs: 150,
      maxRetries: 1,
      backoffMs: 10,
      progress: (l) => lines.push(l),
    });
    expect(s).toMatchObject({ ran: 1, succeeded: 0, endReasons: { model_error: 1 } });
    const [r] = records(out);
    expect(r.error).toBe('gave up after 2 tries: no answer within the request time limit of 600 ms');
    expect(r.steps[0]).toMatchObject({
      type: 'llm',
      retries: [
        { status: null, waitMs: 10 },
        { status: null, waitMs: 0 },
      ],
    });
    expect(fake.requests).toHaveLength(2);
    const id = r.id; // <setup>|<model>|<question>|r<repeat>|<condition>
    expect(id).toMatch(new RegExp(`^baseline\\|m\\|${q.index}\\|r0\\|[0-9a-f]{8}$`));
    expect(lines.some((l) => l.startsWith(`  ${id} turn 1: waiting for the API for `) && l.endsWith('(try 1 of 2, request time limit 0.6 s)'))).toBe(true);
    expect(lines).toContain(
      `  ${id} turn 1: try 1 of 2 failed after ${lines.find((l) => l.includes('try 1 of 2 failed after'))!.match(/after (\S+ s)/)![1]} (no answer within the request time limit of 600 ms); next try in 0.0 s`,
    );
  }, 60_000);

  it('per-run limits end runs with their own reasons: message_limit, token_limit, time_limit; --limit takes the first N questions', { tags: ['slow'], timeout: 300_000 }, async () => {
    const [qm, qt, qs, q4] = lib();
    const run = JSON.stringify({ query: `SELECT * WHERE { SERVICE <${server.endpoints.find((e) => e.graph === 'library')!.url}> { ?s ?p ?o } } LIMIT 1` });
    const fake = await newFake((question, turn) => {
      if (question === qs.question) return 'hang';
      return ok({ tool_calls: [toolCall(`c${turn}`, 'run_sparql_query', run)] });
    });
    const base = { shards: build, endpoints: endpointsFile, setup: 'baseline' as const, agent: 'llm' as const, baseUrl: fake.url, model: 'm', tools: 'in-process' as const, maxRetries: 0 };
    const out = path.join(dir, 'limits.jsonl');
    await runEval({ ...base, out, questions: [qm.index], messageLimit: 6, maxQueryChars: 5000, timeoutMs: 25_000 });
    await runEval({ ...base, out, questions: [qt.index], tokenLimit: 250 });
    // The hung request is stopped by the run's limit (time_limit below), not by its 300 s request limit (past this test's limit).
    await runEval({ ...base, out, questions: [qs.index], timeLimitMs: 1500 });
    const [m, t, s] = records(out);
    // system, question, then 2 × (reply, tool result) = 6 messages: no third call.
    expect(m).toMatchObject({ endReason: 'message_limit', counts: { llmCalls: 2 } });
    // --max-query-chars, --timeout, --request-timeout (default) and --max-retries are recorded too.
    expect(m.limits).toEqual({ messages: 6, tokens: null, timeMs: null, queryTimeoutMs: 25_000, maxQueryChars: 5000, requestTimeoutMs: 300_000, maxRetries: 0, federationEngine: 'comunica' });
    expect(m.messages).toHaveLength(6);
    // 110 tokens per call: 330 ≥ 250 after the third call.
    expect(t).toMatchObject({ endReason: 'token_limit', limits: { tokens: 250 }, counts: { llmCalls: 3 }, usage: { totalTokens: 330 } });
    expect(s).toMatchObject({ endReason: 'time_limit', limits: { timeMs: 1500 }, counts: { llmCalls: 1 } });
    expect(s.error).toBe("the run's time limit of 1500 ms was reached");
    // --limit: the first N questions of the selection.
    const lim = path.join(dir, 'limit.jsonl');
    const summary = await runEval({ ...base, agent: 'oracle', out: lim, kgs: ['library'], limit: 2 });
    expect(summary).toMatchObject({ planned: 2, ran: 2 });
    expect(records(lim).map((r) => r.question.index)).toEqual(
      lib()
        .slice(0, 2)
        .map((e) => e.index),
    );
    expect(q4).toBeDefined();
  });
});

describe('eval / the command line', () => {
  it('bad input exits 2 and names it: --out a directory, --question 99999, --query of no gold query, --question abc', async () => {
    const base = ['eval', '--shards', build, '--endpoints', endpointsFile, '--agent', 'oracle', '--tools', 'in-process'];
    const d = await fkgqa([...base, '--out', dir]);
    expect(d.code).toBe(2);
    expect(d.stderr).toContain(`fkgqa: error: ${dir}: --out is a directory: give the run file's name (JSON lines), e.g. --out ${path.join(dir, 'runs.jsonl')}`);
    const out = path.join(dir, 'never.jsonl');
    const q = await fkgqa([...base, '--out', out, '--question', '99999']);
    expect(q.code).toBe(2);
    expect(q.stderr).toMatch(/benchmark\.json: --question 99999: no question with this index in the build \(its indexes: 0–15\)/);
    const id = await fkgqa([...base, '--out', out, '--query', 'library/q999']);
    expect(id.code).toBe(2);
    expect(id.stderr).toMatch(/--query library\/q999: no such gold query in the build \(ids are <kg>\/q<N>, e\.g\. library\/q\d+\)/);
    const abc = await fkgqa([...base, '--out', out, '--question', 'library/q1']);
    expect(abc.code).toBe(2);
    expect(abc.stderr).toContain('--question library/q1: not a question index (a whole number; for a gold query id such as library/q3 use --query)');
    expect(fs.existsSync(out)).toBe(false);
  }, 300_000);

  it('OPENAI_BASE_URL and OPENAI_API_KEY are defaults (--base-url wins); --query selects by gold query; --format json; an API down for every run exits 2', async () => {
    const fake = await newFake(() => ok({ tool_calls: [toolCall('c', 'cancel', '{"reason":"no"}')] }));
    const [q1] = lib();
    const out = path.join(dir, 'env.jsonl');
    const env = { OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: 'sk-test' };
    const a = await fkgqa(['eval', '--shards', build, '--endpoints', endpointsFile, '--model', 'm', '--query', q1.queryId, '--tools', 'in-process', '--out', out, '--format', 'json', '-q'], env);
    expect(a.code).toBe(0);
    const summary = JSON.parse(a.stdout) as { ran: number; succeeded: number; endReasons: Record<string, number> };
    const asking = lib().filter((e) => e.queryId === q1.queryId).length;
    expect(summary).toMatchObject({ ran: asking, succeeded: asking, endReasons: { cancelled: asking } });
    expect(fake.requests[0].authorization).toBe('Bearer sk-test');
    expect(records(out)[0].baseUrl).toBe(fake.url);
    // --base-url wins over OPENAI_BASE_URL (which names a port nothing listens on).
    const dead = `http://127.0.0.1:${await freePort()}/v1`;
    const out2 = path.join(dir, 'env2.jsonl');
    const b = await fkgqa(
      ['eval', '--shards', build, '--endpoints', endpointsFile, '--model', 'm', '--base-url', fake.url, '--question', String(q1.index), '--tools', 'in-process', '--out', out2, '-q'],
      { OPENAI_BASE_URL: dead },
    );
    expect(b.code).toBe(0);
    expect(b.stdout).toMatch(/^fkgqa eval: 1 run in .*\n {2}ended: cancelled 1\n$/);
    // Nothing listens at the API's address: exit 2 at once, naming it, and no run is made or written
    // (before, every question spent its tries: 16 questions took 8 minutes to say so).
    const out3 = path.join(dir, 'down.jsonl');
    const c = await fkgqa(['eval', '--shards', build, '--endpoints', endpointsFile, '--model', 'm', '--kg', 'library', '--limit', '2', '--tools', 'in-process', '--out', out3, '-q'], {
      OPENAI_BASE_URL: dead,
    });
    expect(c.code).toBe(2);
    const port = new URL(dead).port;
    expect(c.stderr).toBe(
      `fkgqa: error: the model API at ${dead} cannot be reached (connect ECONNREFUSED 127.0.0.1:${port}): start the model server or check --base-url (OPENAI_BASE_URL); nothing was run\n`,
    );
    expect(fs.existsSync(out3)).toBe(false);
    // A base URL that is no http(s) URL, or names a port fetch refuses (1): the same, at once.
    for (const [bad, why] of [
      ['not-a-url', '--base-url not-a-url: not an http(s) URL (e.g. http://127.0.0.1:8080/v1)'],
      ['ftp://x/v1', '--base-url ftp://x/v1: not an http(s) URL (e.g. http://127.0.0.1:8080/v1)'],
      ['http://127.0.0.1:99999/v1', '--base-url http://127.0.0.1:99999/v1: not an http(s) URL (e.g. http://127.0.0.1:8080/v1)'],
      [
        'http://127.0.0.1:1/v1',
        'the model API at http://127.0.0.1:1/v1 cannot be reached (fetch refuses port 1 (a "bad port" of the Fetch standard)): start the model server or check --base-url (OPENAI_BASE_URL); nothing was run',
      ],
    ]) {
      const e = await fkgqa(['eval', '--shards', build, '--endpoints', endpointsFile, '--model', 'm', '--base-url', bad, '--limit', '1', '--tools', 'in-process', '--out', out3, '-q']);
      expect([e.code, e.stderr]).toEqual([2, `fkgqa: error: ${why}\n`]);
      expect(fs.existsSync(out3)).toBe(false);
    }
    // The API up but failing every request: every run a model_error, exit 2, and why.
    const failing = await fakeApi(() => ({ status: 500, body: { error: { message: 'boom' } } }));
    try {
      const out4 = path.join(dir, 'failing.jsonl');
      const d = await fkgqa([
        'eval',
        '--shards',
        build,
        '--endpoints',
        endpointsFile,
        '--model',
        'm',
        '--base-url',
        failing.url,
        '--kg',
        'library',
        '--limit',
        '2',
        '--tools',
        'in-process',
        '--out',
        out4,
        '--max-retries',
        '0',
        '-q',
      ]);
      expect(d.code).toBe(2);
      expect(d.stdout).toMatch(/ended: model_error 2\n {2}failed: 2 of 2 .*\n {4}model_error 2, first baseline\|m\|\d+\|r0\|[0-9a-f]{8}: gave up after 1 try: HTTP 500/);
      expect(d.stderr).toMatch(/^fkgqa: error: no run succeeded: model_error 2 \(first baseline\|m\|\d+\|r0\|[0-9a-f]{8}: gave up after 1 try: HTTP 500/m);
    } finally {
      await failing.close();
    }
  }, 300_000);

  it('Ctrl-C after runs were appended says what was kept and how to resume (not "nothing was written")', async () => {
    const [q1, q2] = lib();
    const fake = await newFake((question) => (question === q1.question ? ok({ tool_calls: [toolCall('c', 'cancel', '{"reason":"no"}')] }) : 'hang'));
    const out = path.join(dir, 'sigint.jsonl');
    const r = await fkgqaChild(
      ['eval', '--shards', build, '--endpoints', endpointsFile, '--base-url', fake.url, '--model', 'm', '--question', String(q1.index), String(q2.index), '--tools', 'in-process', '--out', out],
      {},
      (err, kill) => {
        if (err.includes('[1/2]') && !err.includes('interrupted')) kill('SIGINT');
      },
    );
    expect(r.code).toBe(130);
    expect(r.stderr).toContain(
      `fkgqa: interrupted (SIGINT); kept: 1 run appended to ${out} (each line whole; runs in progress were dropped): rerun the same command to resume, finished runs are skipped`,
    );
    expect(records(out).map((x) => x.question.index)).toEqual([q1.index]);
    expect(fs.existsSync(path.join(dir, '.sigint.jsonl.fkgqa-lock'))).toBe(false); // released on exit
  }, 300_000);
});

describe("eval / every run sees only its question's graph", () => {
  it("in-process and over stdio: the prompt and the tools name only the graph's endpoints; another graph's endpoint is refused", async () => {
    const [q] = lib();
    const other = server.endpoints.find((e) => e.graph === 'observatory')!.url;
    const fake = await newFake((_q, turn) =>
      turn === 1
        ? ok({ tool_calls: [toolCall('x', 'run_sparql_query', JSON.stringify({ query: `SELECT * WHERE { SERVICE <${other}> { ?s ?p ?o } } LIMIT 1` }))] })
        : ok({ tool_calls: [toolCall('c', 'cancel', '{"reason":"done"}')] }),
    );
    const surfaces: unknown[] = [];
    for (const tools of ['in-process', 'mcp'] as const) {
      const out = path.join(dir, `scope-${tools}.jsonl`);
      await runEval({ shards: build, endpoints: endpointsFile, setup: 'baseline', agent: 'llm', baseUrl: fake.url, model: 'm', out, questions: [q.index], tools });
      const [r] = records(out);
      expect(r.endpoints.map((e) => e.id)).toEqual(server.endpoints.filter((e) => e.graph === 'library').map((e) => e.id));
      expect(r.messages[0].content).not.toContain('observatory');
      const step = r.steps.find((s) => s.type === 'tool' && s.name === 'run_sparql_query');
      expect(step).toMatchObject({ isError: true, result: expect.stringMatching(/unknown-endpoint/) });
      // Whatever the refusal lists besides the URL the agent wrote, it is not another graph's endpoint.
      expect(step && step.type === 'tool' && step.result.split(other).join('')).not.toContain('observatory');
      expect(r.endReason).toBe('cancelled');
      surfaces.push(r.toolSurface);
    }
    // fkgqa mcp over stdio shows the agent what the in-process server shows.
    expect(surfaces[1]).toEqual(surfaces[0]);
  }, 300_000);
});

/** A port nothing listens on (taken, then released). */
async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

it('ModelError is what an unreachable API gives the library caller', async () => {
  const c = new OpenAiChat({ baseUrl: `http://127.0.0.1:${await freePort()}/v1`, model: 'm', maxRetries: 0 });
  const e = await c.complete({ messages: [{ role: 'user', content: 'q' }], tools: [], turn: 1 }).catch((x: unknown) => x);
  expect(e).toBeInstanceOf(ModelError);
  expect((e as ModelError).message).toBe('gave up after 1 try: fetch failed (ECONNREFUSED)');
});

describe('one convention for the same thing across commands', () => {
  it(
    'reports: --format html --out FILE on stats and score, --html refused on both; questions: --question INDEX and --query ID on eval, questions and verify',
    { tags: ['slow'], timeout: 300_000 },
    async () => {
      const st = (...a: string[]) => fkgqa(['stats', '--shards', build, '--timeout', '20000', '-q', ...a]);
      const canon = path.join(dir, 'stats-canon.html');
      const c1 = await st('--format', 'html', '--out', canon);
      expect(c1.code).toBe(0);
      expect(c1.stdout).toBe(''); // the report went to --out
      expect(c1.stderr).not.toContain('wrote'); // --quiet
      // The page is the library's HTML report of the same figures, byte for byte.
      expect(fs.readFileSync(canon, 'utf8')).toBe(formatStatsHtml(await stats({ shards: build, timeoutMs: 20_000 })));
      expect(fs.readFileSync(canon, 'utf8')).toContain('<canvas id="fanout">');
      // The old spelling is an unknown option: exit code 2, nothing written.
      const gone = path.join(dir, 'stats-gone.html');
      const old = await st('--html', gone);
      expect([old.code, old.stderr.split('\n')[0]]).toEqual([2, "fkgqa: error: unknown option '--html'"]);
      expect(fs.existsSync(gone)).toBe(false);
      // Without --quiet, stats says which files it wrote, each with its size in KiB.
      const perQuery = path.join(dir, 'stats-per-query.csv');
      const said = await fkgqa(['stats', '--shards', build, '--timeout', '20000', '--format', 'html', '--out', canon, '--per-query', perQuery]);
      expect(said.code).toBe(0);
      const kib = (f: string) => Math.max(1, Math.round(fs.statSync(f).size / 1024));
      expect(said.stderr).toContain(`fkgqa stats: wrote ${perQuery} (${kib(perQuery)} KiB), ${canon} (${kib(canon)} KiB; open it in a browser)\n`);
      const json = path.join(dir, 'stats.json');
      expect((await st('--json', '--out', json)).stdout).toBe('');
      expect(JSON.parse(fs.readFileSync(json, 'utf8')).figures).toBeDefined();

      const [q] = lib();
      const runs = path.join(dir, 'conv-runs.jsonl');
      await runEval({ shards: build, endpoints: endpointsFile, setup: 'baseline', agent: 'single', probe: false, out: runs, questions: [q.index], tools: 'in-process' });
      const s1 = path.join(dir, 'score-canon.html');
      const sc1 = await fkgqa(['score', runs, '--shards', build, '--format', 'html', '--out', s1, '-q']);
      expect([sc1.code, sc1.stdout]).toEqual([0, '']);
      expect(fs.readFileSync(s1, 'utf8')).toBe(formatScoreHtml(await score({ runs: [runs], shards: build })));
      const sc2 = await fkgqa(['score', runs, '--shards', build, '--html', path.join(dir, 'score-gone.html'), '-q']);
      expect([sc2.code, sc2.stderr.split('\n')[0]]).toEqual([2, "fkgqa: error: unknown option '--html'"]);
      const scoreSaid = await fkgqa(['score', runs, '--shards', build, '--format', 'html', '--out', s1]);
      expect(scoreSaid.stderr).toContain(`fkgqa score: wrote ${s1} (`);

      // questions: --question selects that very question; --query all questions asking the query.
      const other = bench().entries.find((e) => e.queryId === q.queryId && e.index !== q.index);
      const byIndex = await fkgqa(['questions', '--shards', build, '--question', String(q.index), '--json', '-q', '--timeout', '20000']);
      expect(byIndex.code).toBe(0);
      expect((JSON.parse(byIndex.stdout) as { index: number }[]).map((v) => v.index)).toEqual([q.index]);
      const byQuery = await fkgqa(['questions', '--shards', build, '--query', q.queryId, '--json', '-q', '--timeout', '20000']);
      expect((JSON.parse(byQuery.stdout) as { index: number }[]).map((v) => v.index)).toEqual(
        bench()
          .entries.filter((e) => e.queryId === q.queryId)
          .map((e) => e.index),
      );
      expect(other === undefined || byQuery.stdout.includes(`"index": ${other.index}`)).toBe(true);
      const bad = await fkgqa(['questions', '--shards', build, '--question', '99999', '-q']);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toMatch(/benchmark\.json: --question 99999: no question with this index in the build/);
      // verify: --question verifies the gold query that question asks.
      const v = await fkgqa(['verify', '--shards', build, '--endpoints', endpointsFile, '--question', String(q.index), '--json', '-q']);
      expect(v.code).toBe(0);
      expect((JSON.parse(v.stdout) as { queries: { id: string }[] }).queries.map((x) => x.id)).toEqual([q.queryId]);
    },
  );
});
