#!/usr/bin/env node
/**
 * Throughput of an evaluation spread over workers (`npm run bench:queue [-- --workers 1,2,4
 * --latency 200 --turns 5 --repeats 8 --concurrency 4]`): for each number of workers, in one run,
 * side by side, a `fkgqa eval --queue` coordinator and that many `fkgqa worker` processes (children,
 * as users run them) make the same runs on the demo build against a fake OpenAI-compatible API whose
 * every answer takes `--latency` ms: each run makes `--turns` LLM calls (text answers, nudged, then
 * cancel), so a run waits turns × latency on the API like a real agent, and the figure is how well
 * the queue overlaps that wait. Measured from the coordinator's "queued" line to its exit (every
 * run in the run file). Needs redis-server (a server of its own on a free port, nothing saved).
 * Prints a table and one JSON object, with the load average (`uptime`) before and after each.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { benchOptions, here, loadAverage, writeResult } from './lib.js';
import { partition, serve } from '../dist/index.js';

const o = benchOptions({ workers: '1,2,4', latency: '200', turns: '5', repeats: '8', concurrency: '4', redis: 'redis-server' });
const workerCounts = o.workers.split(',').map(Number);
const latency = Number(o.latency);
const turns = Number(o.turns);
const bin = path.join(here, '../bin/fkgqa.js');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fkgqa-bench-queue-'));

/** A free loopback port. */
const freePort = () =>
  new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const p = s.address().port;
      s.close(() => resolve(p));
    });
  });

/** Starts a child and resolves with it once a stderr/stdout line matches `ready` (if given). */
function start(cmd, args, { ready, env } = {}) {
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  let text = '';
  const exited = new Promise((resolve) => child.once('close', (code, signal) => resolve({ code, signal, text })));
  const waitFor = (re) =>
    new Promise((resolve, reject) => {
      const check = () => re.test(text) && (resolve(), true);
      if (check()) return;
      const on = () => check() && (child.stdout.off('data', on), child.stderr.off('data', on));
      child.stdout.on('data', on);
      child.stderr.on('data', on);
      exited.then(() => reject(new Error(`${path.basename(cmd)} ${args[1] ?? ''} exited before ${re}: ${text.slice(-1500)}`)));
    });
  child.stdout.on('data', (c) => (text += c));
  child.stderr.on('data', (c) => (text += c));
  return { child, exited, waitFor, ready: ready ? waitFor(ready) : Promise.resolve() };
}

// The fake API: every chat completion answers after `latency` ms; text until the last turn, then cancel.
let calls = 0;
const api = http.createServer((req, res) => {
  let data = '';
  req.on('data', (c) => (data += c));
  req.on('end', () => {
    if (req.method !== 'POST') return res.writeHead(404).end('{}');
    calls++;
    const body = JSON.parse(data);
    const turn = body.messages.filter((m) => m.role === 'assistant').length + 1;
    const message =
      turn < turns
        ? { role: 'assistant', content: 'thinking' }
        : { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'cancel', arguments: '{"reason":"bench"}' } }] };
    setTimeout(() => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 'x', object: 'chat.completion', choices: [{ index: 0, message, finish_reason: 'stop' }], usage: { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 } }));
    }, latency);
  });
});
await new Promise((r) => api.listen(0, '127.0.0.1', r));
const baseUrl = `http://127.0.0.1:${api.address().port}/v1`;

const shards = path.join(dir, 'shards');
await partition({ source: path.join(here, '../datasets/demo'), out: shards });
const server = await serve({ shards, writeFiles: false });
const endpoints = path.join(dir, 'endpoints.json');
fs.writeFileSync(endpoints, JSON.stringify(server.endpointsFile()));
const port = await freePort();
const redis = start(o.redis, ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no'], { ready: /Ready to accept connections/ });
await redis.ready;

const results = [];
for (const [i, w] of workerCounts.entries()) {
  const queue = `redis://127.0.0.1:${port}/${i}`;
  const out = path.join(dir, `runs-${w}.jsonl`);
  const loadBefore = loadAverage();
  const coordinator = start(process.execPath, [
    bin,
    'eval',
    '--shards',
    shards,
    '--endpoints',
    endpoints,
    '--queue',
    queue,
    '--base-url',
    baseUrl,
    '--model',
    'bench-model',
    '--tools',
    'in-process',
    '--max-turns',
    String(turns),
    '--repeats',
    o.repeats,
    '--out',
    out,
  ]);
  await coordinator.waitFor(/queued \d+ runs/);
  const t0 = performance.now();
  const workers = Array.from({ length: w }, () => start(process.execPath, [bin, 'worker', '--queue', queue, '--shards', shards, '--endpoints', endpoints, '--concurrency', o.concurrency, '-q']));
  const done = await coordinator.exited;
  const ms = performance.now() - t0;
  if (done.code !== 0) throw new Error(`the coordinator with ${w} workers exited ${done.code}: ${done.text.slice(-2000)}`);
  const runs = fs.readFileSync(out, 'utf8').split('\n').filter(Boolean).length;
  for (const x of workers) x.child.kill('SIGTERM');
  await Promise.all(workers.map((x) => x.exited));
  results.push({
    workers: w,
    concurrency: Number(o.concurrency),
    runs,
    seconds: Math.round(ms / 100) / 10,
    runsPerMinute: Math.round((runs / ms) * 60_000 * 10) / 10,
    loadBefore,
    loadAfter: loadAverage(),
  });
}
redis.child.kill('SIGTERM');
await redis.exited;
await server.close();
api.close();
fs.rmSync(dir, { recursive: true, force: true });

const ideal = (60_000 / (turns * latency)) * Number(o.concurrency);
process.stdout.write(
  `fake API: ${latency} ms per call, ${turns} calls per run (a run waits ${(turns * latency) / 1000} s on the API); ${o.concurrency} runs at once per worker, at most ${ideal.toFixed(0)} runs/min per worker\n`,
);
process.stdout.write('| workers | runs | seconds | runs/min | load before | load after |\n| ---: | ---: | ---: | ---: | --- | --- |\n');
for (const r of results) process.stdout.write(`| ${r.workers} | ${r.runs} | ${r.seconds} | ${r.runsPerMinute} | ${r.loadBefore.join(' ')} | ${r.loadAfter.join(' ')} |\n`);
process.stdout.write(JSON.stringify({ latencyMs: latency, turns, concurrency: Number(o.concurrency), apiCalls: calls, results }) + '\n');
writeResult(o, 'queue', {
  ratios: results.slice(1).map((r) => ({ what: `runs/min with ${r.workers} workers ÷ with ${results[0].workers}`, value: Math.round((r.runsPerMinute / results[0].runsPerMinute) * 100) / 100 })),
  figures: { results },
  loadBefore: results[0]?.loadBefore,
});
