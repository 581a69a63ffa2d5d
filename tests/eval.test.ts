// @module-tag split-tiers (tests/tiers.ts: the tests tagged slow run in npm run test:slow)
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseQuery } from '../src/sparql/parse.js';
import { OpenAiChat, ModelError } from '../src/eval/chat.js';
import { runEval, selectQuestions } from '../src/eval/eval.js';
import type { ChatMessage, RunRecord } from '../src/eval/record.js';
import { formatScoreCsv, formatScoreHtml, formatScoreText } from '../src/score/format.js';
import { readRuns, score } from '../src/score/score.js';
import { serve, type ShardServer } from '../src/serve/server.js';
import { trivialFederation } from '../src/sparql/trivial.js';
import { demoBuild, fkgqaInProcess, tmpDir } from './helpers.js';

/** A fake OpenAI-compatible server: each question has a script of replies, chosen by the turn (assistant messages so far). */
type Reply = { status: number; body?: unknown; headers?: Record<string, string> };
interface Fake {
  url: string;
  requests: { question: string; turn: number; body: { model: string; temperature?: number; seed?: number; tools?: unknown[]; messages: ChatMessage[] } }[];
  close(): Promise<void>;
}

const toolCall = (id: string, name: string, args: string) => ({ id, type: 'function', function: { name, arguments: args } });
const ok = (message: object, usage = { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 }): Reply => ({
  status: 200,
  body: { id: 'x', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: null, ...message }, finish_reason: 'tool_calls' }], usage },
});

async function fakeApi(script: (question: string, turn: number, attempt: number) => Reply): Promise<Fake> {
  const requests: Fake['requests'] = [];
  const attempts = new Map<string, number>();
  const server = http.createServer((req, res) => {
    let data = '';
    req.on('data', (c) => (data += c));
    req.on('end', () => {
      // eval's check that the API is up (GET /v1/models): answered 404, not counted.
      if (req.method !== 'POST') {
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not found"}}');
        return;
      }
      const body = JSON.parse(data) as Fake['requests'][number]['body'];
      const question = body.messages.find((m) => m.role === 'user')?.content ?? '';
      const turn = body.messages.filter((m) => m.role === 'assistant').length + 1;
      const key = `${question}|${turn}`;
      const attempt = (attempts.get(key) ?? 0) + 1;
      attempts.set(key, attempt);
      requests.push({ question, turn, body });
      const r = req.url === '/v1/chat/completions' ? script(question, turn, attempt) : { status: 404, body: { error: { message: 'not found' } } };
      res.writeHead(r.status, { 'content-type': 'application/json', ...(r.headers ?? {}) });
      res.end(JSON.stringify(r.body ?? { error: { message: 'scripted failure' } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, requests, close: () => new Promise((r) => server.close(() => r())) };
}

let build: string;
let endpointsFile: string;
let server: ShardServer;
let urls: string[];
let fake: Fake;
const dir = tmpDir('fkgqa-eval-');
/**
 * The time limit of each tool call and final query of these runs (ms). A query's first federated
 * call starts the engine (a Comunica thread): at load 17 on 2 cores that took over 20 s (the limit
 * was 20 s, and the tool call failed), so the limit is for hangs, not for timing: the largest
 * `fkgqa mcp --timeout` takes (McpLimits.maxTimeoutMs).
 */
const QUERY_LIMIT_MS = 100_000;
const bench = () =>
  JSON.parse(fs.readFileSync(path.join(build, 'benchmark.json'), 'utf8')) as { defaultPrefix: string; entries: { index: number; kg: string; question: string; query: string; queryId: string }[] };

beforeAll(async () => {
  build = await demoBuild(dir, { gold: true });
  server = await serve({ shards: build, kgs: ['library'], writeFiles: false });
  endpointsFile = path.join(dir, 'endpoints.json');
  fs.writeFileSync(endpointsFile, JSON.stringify(server.endpointsFile()));
  urls = server.endpoints.filter((e) => e.graph === 'library').map((e) => e.url);
}, 300_000);

afterAll(async () => {
  await fake?.close();
  await server?.close();
});

describe('eval / the agent loop against a fake OpenAI-compatible server', () => {
  it('covers every end reason: submitted (after a malformed and an unknown tool call), turn limit, cancelled, 429 then success, 500 until failure', async () => {
    const b = bench();
    const qs = b.entries.filter((e) => e.kg === 'library').slice(0, 5);
    const [qSubmit, qLimit, qCancel, q429, q500] = qs;
    const parsed = parseQuery(qSubmit.query, b.defaultPrefix);
    if (!parsed.ok) throw new Error(parsed.error);
    const good = trivialFederation(parsed.query.ast, urls).text;
    fake = await fakeApi((question, turn, attempt) => {
      if (question === qSubmit.question) {
        if (turn === 1) return ok({ tool_calls: [toolCall('c1', 'run_sparql_query', JSON.stringify({ query: good }))] });
        if (turn === 2) return ok({ tool_calls: [toolCall('c2', 'run_sparql_query', '{"query": "SELECT')] });
        if (turn === 3) return ok({ tool_calls: [toolCall('c3', 'describe_graph', '{}')] });
        return ok({ tool_calls: [toolCall('c4', 'submit_final_query', JSON.stringify({ query: good }))] });
      }
      if (question === qLimit.question) return ok({ tool_calls: [toolCall(`l${turn}`, 'run_sparql_query', JSON.stringify({ query: 'SELECT ?s WHERE { ?s ?p ?o } LIMIT 1' }))] });
      if (question === qCancel.question) {
        if (turn === 1) return ok({ content: 'I think the answer is 3.' });
        return ok({ tool_calls: [toolCall('x1', 'cancel', JSON.stringify({ reason: 'not answerable' }))] });
      }
      if (question === q429.question) {
        if (attempt === 1) return { status: 429, headers: { 'retry-after': '0' }, body: { error: { message: 'rate limited' } } };
        return ok({ tool_calls: [toolCall('r1', 'submit_final_query', JSON.stringify({ query: `SELECT ?x WHERE { SERVICE <${urls[0]}> { ?x a <http://valuenet/ontop/author> } }` }))] });
      }
      return { status: 500 };
    });
    const out = path.join(dir, 'llm.jsonl');
    const summary = await runEval({
      shards: build,
      endpoints: endpointsFile,
      setup: 'baseline',
      agent: 'llm',
      baseUrl: fake.url,
      model: 'fake-model',
      temperature: 0,
      seed: 7,
      maxRetries: 2,
      backoffMs: 1,
      out,
      questions: qs.map((q) => q.index),
      tools: 'in-process',
      timeoutMs: QUERY_LIMIT_MS,
    });
    expect(summary).toMatchObject({ planned: 5, skipped: 0, ran: 5, endReasons: { submitted: 2, turn_limit: 1, cancelled: 1, model_error: 1 } });
    const runs = new Map(readRuns([out]).map((r) => [r.question.index, r]));
    const s = runs.get(qSubmit.index)!;
    expect(s.endReason).toBe('submitted');
    expect(s.counts).toEqual({ llmCalls: 4, toolCalls: 4, sparqlCalls: 1, voidCalls: 0, retries: 0 });
    expect(s.usage).toEqual({ promptTokens: 400, completionTokens: 40, totalTokens: 440 });
    const toolSteps = s.steps.filter((x) => x.type === 'tool');
    expect(toolSteps.map((x) => x.type === 'tool' && x.isError)).toEqual([false, true, true, false]);
    expect(toolSteps[1].type === 'tool' && toolSteps[1].result).toMatch(/not a JSON object/);
    expect(toolSteps[2].type === 'tool' && toolSteps[2].result).toMatch(/unknown tool "describe_graph"; tools: run_sparql_query, submit_final_query, cancel/);
    expect(toolSteps[0].type === 'tool' && toolSteps[0].endpoints).toEqual(urls);
    // What the model was sent is what the record keeps (and what its API counts as tokens): the tool's table, the same text in the step and the message.
    expect(toolSteps[0].type === 'tool' && toolSteps[0].result).toMatch(/^\d+ rows?\n\?\S/);
    expect(s.messages.find((m) => m.role === 'tool')!.content).toBe(toolSteps[0].type === 'tool' ? toolSteps[0].result : null);
    expect(s.final).toMatchObject({ status: 'ok', route: 'federation', rows: 1 });
    expect(s.prompt.name).toBe('baseline.md');
    expect(s.prompt.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(s.messages[0].content).toContain(urls[0]);
    // The system prompt names the tools the run was offered, no other: the server's (from prompts/baseline.md) and the harness's (eval's own words).
    const named = (t: string) => [...new Set(t.replace(/https?:\/\/\S+/g, '').match(/\b[a-z]+(?:_[a-z]+)+\b|\bcancel\b/g))].sort();
    expect(named(s.messages[0].content!)).toEqual([...s.tools.names].sort());
    expect(named(s.prompt.text)).toEqual(['run_sparql_query']);
    expect(s.messages[0].content!.endsWith('Submit the query that answers the question. You have at most 10 turns.\n')).toBe(true);
    expect(s.messages.filter((m) => m.role === 'tool')).toHaveLength(4);
    expect(s).toMatchObject({ model: 'fake-model', temperature: 0, seed: 7, maxTurns: 10, tools: { source: 'in-process', names: ['run_sparql_query', 'submit_final_query', 'cancel'] } });
    const limit = runs.get(qLimit.index)!;
    expect(limit.endReason).toBe('turn_limit');
    expect(limit.counts.llmCalls).toBe(10);
    expect(limit.counts.sparqlCalls).toBe(10);
    expect(limit.finalQuery).toBeNull();
    const cancel = runs.get(qCancel.index)!;
    expect(cancel).toMatchObject({ endReason: 'cancelled', cancelReason: 'not answerable' });
    expect(cancel.messages[3]).toMatchObject({ role: 'user', content: expect.stringContaining('Continue with a tool call') });
    const r429 = runs.get(q429.index)!;
    expect(r429.endReason).toBe('submitted');
    expect(r429.counts.retries).toBe(1);
    expect(r429.steps[0]).toMatchObject({ type: 'llm', retries: [{ status: 429, waitMs: 0 }] });
    const r500 = runs.get(q500.index)!;
    expect(r500.endReason).toBe('model_error');
    expect(r500.error).toMatch(/gave up after 3 tries: HTTP 500/);
    expect(r500.counts).toMatchObject({ llmCalls: 1, retries: 3 });
    // Requests carried the model, temperature, seed and the tools (run_sparql_query and the two harness tools).
    const first = fake.requests.find((r) => r.question === qSubmit.question)!;
    expect(first.body).toMatchObject({ model: 'fake-model', temperature: 0, seed: 7 });
    expect(first.body.tools).toHaveLength(3);

    // Resumed (the same condition: model, temperature, seed, query time limit; the API's retries are
    // not part of it): finished runs are skipped; --retry-errors reruns the model error only.
    const again = await runEval({
      shards: build,
      endpoints: endpointsFile,
      setup: 'baseline',
      agent: 'llm',
      baseUrl: fake.url,
      model: 'fake-model',
      temperature: 0,
      seed: 7,
      timeoutMs: QUERY_LIMIT_MS,
      maxRetries: 0,
      backoffMs: 1,
      out,
      questions: qs.map((q) => q.index),
      tools: 'in-process',
      retryErrors: true,
    });
    expect(again).toMatchObject({ planned: 5, skipped: 4, ran: 1, endReasons: { model_error: 1 } });

    const report = await score({ runs: [out], shards: build });
    const g = report.groups[0];
    expect(g.group).toBe('baseline|fake-model');
    expect(g.runs).toBe(5);
    expect(g.endReasons).toEqual({ submitted: 2, cancelled: 1, turn_limit: 1, message_limit: 0, token_limit: 0, time_limit: 0, model_error: 1, infrastructure_error: 0 });
    const sc = report.perRun.find((x) => x.queryId === qSubmit.queryId)!;
    expect(sc).toMatchObject({ correct: true, graspF1: 1, spinachF1: 1, consultedAllNeeded: true, allShards: true });
    // 1 query sent for the submitted run (the malformed call sent none), 10 for the turn-limit run (no SERVICE: refused).
    expect(g.validity.queries).toBe(11);
    expect(g.validity.classes.ok).toBe(1);
    expect(g.validity.classes.execution).toBe(10);
    expect(g.tokens.total).toBe(440 + 1100 + 220 + 110);
    expect(formatScoreText(report)).toContain('accuracy %');
    expect(formatScoreCsv(report).split('\n')[0]).toBe('group,figure,value,of,ci95 low,ci95 high,paper GPT-5.2,paper Qwen3-8B,paper note');
    expect(formatScoreHtml(report)).toContain('<svg id="accuracy"');
  }, 180_000);
});

describe("eval / an error the query caused is the agent's: the run stays in accuracy, as wrong", () => {
  it('an unsupported function inside SERVICE (bif:contains, which oxigraph cannot evaluate): the tool errors are no infrastructure failure, the run is submitted, its final execution fails as endpoint-rejected, and score counts it wrong', async () => {
    const q = bench().entries.filter((e) => e.kg === 'library')[0];
    const lone = `PREFIX bif: <bif:> SELECT ?b WHERE { SERVICE <${urls[1]}> { ?b ?p ?o FILTER(bif:contains(?o, "a")) } }`;
    const joined = `PREFIX bif: <bif:> SELECT ?b WHERE { SERVICE <${urls[0]}> { ?b ?p ?o } SERVICE <${urls[1]}> { ?b ?q ?t FILTER(bif:contains(?t, "a")) } }`;
    const api = await fakeApi((_question, turn) => {
      if (turn === 1) return ok({ tool_calls: [toolCall('b1', 'run_sparql_query', JSON.stringify({ query: lone }))] });
      if (turn === 2) return ok({ tool_calls: [toolCall('b2', 'run_sparql_query', JSON.stringify({ query: joined }))] });
      return ok({ tool_calls: [toolCall('b3', 'submit_final_query', JSON.stringify({ query: joined }))] });
    });
    const out = path.join(dir, 'bif.jsonl');
    try {
      await runEval({
        shards: build,
        endpoints: endpointsFile,
        setup: 'baseline',
        agent: 'llm',
        baseUrl: api.url,
        model: 'fake-bif',
        maxRetries: 0,
        backoffMs: 1,
        out,
        questions: [q.index],
        tools: 'in-process',
        timeoutMs: QUERY_LIMIT_MS,
      });
    } finally {
      await api.close();
    }
    const [r] = readRuns([out]);
    expect(r.endReason).toBe('submitted');
    expect(r.steps.flatMap((x) => (x.type === 'tool' && x.isError ? [x.error] : []))).toEqual([
      { class: 'endpoint-rejected', infrastructure: false, endpoint: urls[1] },
      { class: 'endpoint-rejected', infrastructure: false, endpoint: urls[1] },
    ]);
    expect(r.final).toMatchObject({ status: 'error', errorClass: 'endpoint-rejected', infrastructure: false });
    const report = await score({ runs: [out], shards: build });
    const g = report.groups[0];
    expect([g.runs, g.scored, g.endReasons.submitted, g.endReasons.infrastructure_error, g.accuracy.count, g.accuracy.of]).toEqual([1, 1, 1, 0, 0, 1]);
    expect(report.perRun[0]).toMatchObject({ counted: true, correct: false });
    // Both queries parse and were refused for what they ask: judged, class execution (not left out as infrastructure).
    expect([g.validity.classes.execution, g.validity.notJudged.infrastructure]).toEqual([2, 0]);
  }, 180_000);
});

describe('eval / scripted agents on the demo build', () => {
  it('refuses the oracle when the needed shards are unknown (no fkgqa stats in this state folder), instead of naming every shard', async () => {
    const out = path.join(dir, 'no-stats.jsonl');
    await expect(
      runEval({ shards: build, endpoints: endpointsFile, state: tmpDir(), setup: 'baseline', agent: 'oracle', out, kgs: ['library'], distinctQueries: true, tools: 'in-process' }),
    ).rejects.toThrow(/--agent oracle needs the shards each answer needs \(realised fan-out\) of graph library: run fkgqa stats/);
    expect(fs.existsSync(out)).toBe(false);
  });

  it('eval and mcp refuse, before anything runs, an endpoints file whose VoID digest an endpoint no longer serves, naming the file and the entry', async () => {
    const file = JSON.parse(fs.readFileSync(endpointsFile, 'utf8')) as { endpoints: { id: string; url: string; void: string; voidDigest: string }[] };
    const entry = file.endpoints.findIndex((e) => e.id === 'library-shard2');
    const listed = file.endpoints[entry];
    const served = listed.voidDigest;
    listed.voidDigest = 'ab'.repeat(32);
    const stale = path.join(tmpDir('fkgqa-eval-stale-'), 'endpoints.json');
    fs.writeFileSync(stale, JSON.stringify(file));
    const why = `1 endpoint(s) do not serve the VoID their endpoints file lists, or it cannot be checked (is the file stale, or the serve another build?): library-shard2 <${listed.url}> (endpoints[${entry}] of ${stale}): its VoID (${listed.void}) has sha256 ${served.slice(0, 12)}…, the placement lists ${'ab'.repeat(6)}…`;
    const out = path.join(dir, 'stale.jsonl');
    await expect(runEval({ shards: build, endpoints: stale, setup: 'baseline', agent: 'trivial', out, kgs: ['library'], tools: 'in-process' })).rejects.toThrow(`${why}; nothing was run`);
    expect(fs.existsSync(out)).toBe(false);
    const mcp = await fkgqaInProcess(['mcp', '--endpoints', stale, '--setup', 'baseline'], { refusal: true });
    expect([mcp.code, mcp.stdout, mcp.stderr]).toEqual([2, '', `fkgqa: error: ${why}; the MCP server did not start\n`]);
  });

  // The scripted agents (oracle: all correct, every needed shard, no trivial federation; trivial: all
  // correct, all shards) on every distinct gold query of library, q1 and q2 among them: tests/eval.slow.test.ts.

  it('spawns fkgqa mcp over stdio: the tools a user would run', { tags: ['slow'], timeout: 300_000 }, async () => {
    const out = path.join(dir, 'stdio.jsonl');
    const q = bench().entries.find((e) => e.kg === 'library')!;
    await runEval({ shards: build, endpoints: endpointsFile, setup: 'void_tool', agent: 'oracle', out, questions: [q.index], tools: 'mcp', timeoutMs: QUERY_LIMIT_MS });
    const [r] = readRuns([out]) as RunRecord[];
    expect(r.tools.source).toBe('mcp');
    expect(r.tools.names).toEqual(['run_sparql_query', 'get_void_descriptions', 'submit_final_query', 'cancel']);
    expect(r.tools.command).toContain('mcp');
    const toolStep = r.steps.find((x) => x.type === 'tool' && x.name === 'run_sparql_query');
    expect(toolStep && toolStep.type === 'tool' && toolStep.isError).toBe(false);
    const report = await score({ runs: [out], shards: build });
    expect(report.perRun[0].correct).toBe(true);
  });
});

describe('eval / client and sampling', () => {
  it('does not retry a 4xx other than 429', async () => {
    const f = await fakeApi(() => ({ status: 400, body: { error: { message: 'bad request' } } }));
    try {
      const c = new OpenAiChat({ baseUrl: f.url, model: 'm', maxRetries: 3, backoffMs: 1 });
      const e = await c.complete({ messages: [{ role: 'user', content: 'q' }], tools: [], turn: 1 }).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(ModelError);
      expect((e as ModelError).status).toBe(400);
      expect(f.requests).toHaveLength(1);
    } finally {
      await f.close();
    }
  });
  it('stops reading an answer over maxReplyBytes: a model error, not retried (a 300 MB answer was read whole into memory)', async () => {
    const f = await fakeApi(() => ({ status: 200, body: { choices: [{ message: { role: 'assistant', content: 'y'.repeat(3 << 20) } }] } }));
    try {
      const c = new OpenAiChat({ baseUrl: f.url, model: 'm', maxRetries: 3, backoffMs: 1, maxReplyBytes: 1 << 20 });
      const e = await c.complete({ messages: [{ role: 'user', content: 'q' }], tools: [], turn: 1 }).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(ModelError);
      expect((e as ModelError).message).toBe(`the API answered 200 with a body larger than ${1 << 20} bytes (the limit of one answer); it was not read further`);
      expect(f.requests).toHaveLength(1);
      // Within the limit the same answer is read.
      const big = await new OpenAiChat({ baseUrl: f.url, model: 'm', maxReplyBytes: 4 << 20 }).complete({ messages: [{ role: 'user', content: 'q' }], tools: [], turn: 1 });
      expect(big.message.content).toHaveLength(3 << 20);
    } finally {
      await f.close();
    }
  });
  it('samples questions per graph, deterministically by seed', () => {
    const entries = Array.from({ length: 20 }, (_, i) => ({ index: i, kg: i < 10 ? 'a' : 'b', question: `q${i}`, query: '', queryId: `${i < 10 ? 'a' : 'b'}/q${i % 3}` }));
    const one = selectQuestions(entries, { perGraph: 3, sampleSeed: 1 });
    expect(one.filter((e) => e.kg === 'a')).toHaveLength(3);
    expect(one.filter((e) => e.kg === 'b')).toHaveLength(3);
    expect(selectQuestions(entries, { perGraph: 3, sampleSeed: 1 })).toEqual(one);
    expect(selectQuestions(entries, { distinctQueries: true }).map((e) => e.index)).toEqual([0, 1, 2, 10, 11, 12]);
  });
});
