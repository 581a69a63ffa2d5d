// npm run bench:mcp [-- --shards DIR] [-- --runs N] [-- --warmup N] [-- --compare CHECKOUT] [-- --profile DIR]
// Tool-call latency of run_sparql_query (fkgqa mcp) side by side with querying the endpoint
// directly, in one run (a benchmark, not a test). The shard endpoints (and the unsharded graphs)
// run in a separate `fkgqa serve` process; the MCP server runs in this process with an in-memory
// MCP client (JSON-RPC, tool dispatch, planning, the HTTP request) and, for one scenario, as a
// spawned `fkgqa mcp` over stdio. Scenarios on the demo build's library graph (or --shards with a
// library-like graph given by --kg and --class):
//   lone SERVICE: `SELECT * { SERVICE <shard> { ?s a <class> } }` through the tool (wrapper stripped,
//                 sent directly) vs the same body POSTed to the shard;
//   2 SERVICE:    a join over two shards through the tool (federation engine) vs the same BGP on
//                 the unsharded graph's endpoint.
// The direct side is what a user would write in Node: `fetch`, which keeps its connections alive
// (undici's global agent), as the tool's own client does (node:http with a keep-alive agent,
// src/common/http-client.ts): keep-alive on both sides, since an agent's MCP server lives across
// many calls and so does a user's script. A second direct row POSTs with node:http and a
// keep-alive agent (the tool's client), reported so the gain of the client itself is visible.
// The stdio server is waited for until its federation engine has started (a federated call):
// `fkgqa mcp` warms the engine at start, 2–3 s of CPU that otherwise overlap the timed rounds.
// Each round runs the scenarios in a new order (a seeded shuffle), so none always follows the same one
// (rotating them, as before, kept each after the same neighbour). Note: A/A runs (--compare giving this
// checkout again) put the first stdio row 9–50 % above the --compare row in latency and 6–11 % in
// server CPU, with rotation and with the shuffle alike (load 22–26): compare such rows over several
// runs, or with the two checkouts swapped.
// --compare CHECKOUT adds a row for another checkout's `fkgqa mcp` (its bin/fkgqa.js and dist, e.g. main
// built in a copy) over stdio, timed in the same rounds, so a change is measured side by side.
// Rows for insight, not goals (the floor under the stdio goal): the same `fkgqa mcp` driven by a
// raw JSON-RPC client (newline JSON on the child's stdin/stdout, no SDK on the client side); a bare
// stdio echo (bench/mcp-echo.js bare: a child that answers each request with a line of the size of
// our answer); the SDK's stdio with a no-op tool (bench/mcp-echo.js sdk: McpServer over serveStdio
// answering a fixed text of our answer's size, called with the SDK client); the SDK client with a
// minimal server (bench/mcp-echo.js min: initialize and tools/call answered by a bare line echo, so
// only the client's SDK works); the SDK's stdio with a tool that only POSTs the query (bench/mcp-echo.js
// sdk-http: node:http, keep-alive, as run_sparql_query's client), the floor of any tool over the SDK's
// stdio that sends its query from the server process (the server sleeps during the request and must
// be woken for the answer, so this is more than the sum of a POST and a no-op round trip on a busy
// machine). The printed floors add an echo to a direct POST: the last, node:http
// (the tool's client) + SDK client to the minimal server, is what no MCP server over stdio reached
// with the SDK client can beat on this machine.
// --profile DIR runs each stdio server (ours, --compare's, the SDK echo) with `--cpu-prof --cpu-prof-dir
// DIR/<row>` (V8 CPU profiles, written when the bench closes them) and the timed rounds' window to
// DIR/window.json, for `node bench/mcp-profile.js DIR`: where a call's time goes, per server.
// For each stdio server the CPU time (user + system, all its threads, from /proc/<pid>/stat) used
// during the timed rounds is printed per call: load-independent, unlike latency.
// Columns: median and p95 latency (ms) of the calls that succeeded, ratio = median / the median of
// the direct query it is compared with, failed = calls that failed (first message on stderr).
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { registryFromEndpointsValue } from '../dist/federation/registry.js';
import { createMcpServer } from '../dist/mcp/server.js';
import { benchOptions, here, loadAverage, median, writeResult } from './lib.js';

const cli = path.resolve(here, '../bin/fkgqa.js');
const o = benchOptions({ shards: '', runs: '100', warmup: '10', compare: '', profile: '' });
/** Node options of a stdio server: a CPU profile into --profile's folder `<name>` when asked. */
const nodeArgs = (name) => (o.profile ? ['--cpu-prof', '--cpu-prof-dir', path.resolve(o.profile, name)] : []);
/** CPU time used so far by a process and all its threads (user + system), in ms; NaN when unknown (no /proc). */
function cpuMs(pid) {
  try {
    const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = f.slice(f.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime, stime in clock ticks (USER_HZ = 100 on Linux)
  } catch {
    return NaN;
  }
}
const runs = Number(o.runs);
const loadBefore = loadAverage();
const warmup = Number(o.warmup);
let shards = o.shards;
if (!shards) {
  shards = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'fkgqa-bench-mcp-')), 'shards');
  execFileSync(process.execPath, [cli, 'partition', '--out', shards, '--quiet'], { stdio: 'ignore' });
}

/** Starts `fkgqa serve --with-originals --kg library` and resolves with its endpoints file. */
function startServe() {
  const state = fs.mkdtempSync(path.join(os.tmpdir(), 'fkgqa-bench-mcp-serve-'));
  const child = spawn(process.execPath, [cli, 'serve', '--shards', shards, '--kg', 'library', '--with-originals', '--port', '0', '--quiet'], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    child.on('exit', (code) => reject(new Error(`fkgqa serve exited with ${code}`)));
    child.stdout.on('data', (d) => {
      out += d;
      const lines = out.trim().split('\n');
      if (lines.length === 5) {
        const urls = Object.fromEntries(lines.map((l) => l.split('\t')));
        resolve({ child, urls, state });
      }
    });
  });
}

const P = 'http://valuenet/ontop/';
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1)];

/**
 * Times every scenario `runs` times, interleaved (one call of each in turn, in a new shuffled order
 * each round), so that load changes affect all alike. A call that fails (e.g. a federated query at its time limit) is counted, its
 * first message printed on stderr, and left out of the times: the bench goes on.
 * @returns [name, times of the calls that succeeded (ms), number of failed calls] per scenario
 */
async function timeAll(scenarios) {
  const failed = scenarios.map(() => 0);
  const attempt = async (k, fn) => {
    try {
      await fn();
      return true;
    } catch (e) {
      if (failed[k]++ === 0) process.stderr.write(`bench:mcp: ${scenarios[k][0]} failed: ${String(e.message).split('\n')[0].slice(0, 300)}\n`);
      return false;
    }
  };
  for (let i = 0; i < warmup; i++) for (const [k, [, fn]] of scenarios.entries()) await attempt(k, fn);
  failed.fill(0);
  const ms = scenarios.map(() => []);
  timed.start = Number(process.hrtime.bigint() / 1000n);
  const order = scenarios.map((_, k) => k);
  let seed = 20;
  // mulberry32: a small seeded generator, so that every run of the bench uses the same orders.
  const random = () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  for (let i = 0; i < runs; i++) {
    for (let j = order.length - 1; j > 0; j--) {
      const r = Math.floor(random() * (j + 1));
      [order[j], order[r]] = [order[r], order[j]];
    }
    for (let j = 0; j < scenarios.length; j++) {
      const k = order[j];
      const fn = scenarios[k][1];
      const t0 = performance.now();
      if (await attempt(k, fn)) ms[k].push(performance.now() - t0);
    }
  }
  timed.end = Number(process.hrtime.bigint() / 1000n);
  return scenarios.map(([name], k) => [name, ms[k], failed[k]]);
}
/** The timed rounds (after the warm-up), in µs of the monotonic clock that V8's CPU profiles use: for --profile's window.json. */
const timed = { start: 0, end: 0 };

const { child, urls } = await startServe();
try {
  const endpointsFile = {
    tool: { name: 'fkgqa', version: '' },
    shards: path.resolve(shards),
    timeoutMs: 30000,
    maxBodyBytes: 1 << 20,
    profileFile: null,
    endpoints: Object.entries(urls).map(([id, url]) => ({
      id,
      url,
      graph: 'library',
      role: /-shard\d+$/.test(id) ? 'shard' : 'original',
      shard: /-(shard\d+)$/.exec(id)?.[1] ?? null,
      void: null,
      triples: 0,
      profile: null,
    })),
  };
  const registry = registryFromEndpointsValue(endpointsFile, 'bench');
  const mcp = await createMcpServer({ registry, callLog: null, state: null });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await mcp.server.connect(a);
  const client = new Client({ name: 'bench', version: '1' });
  await client.connect(b);
  const tool = (query) => async () => {
    const r = await client.callTool({ name: 'run_sparql_query', arguments: { query } });
    if (r.isError) throw new Error(r.content[0].text);
  };
  const direct = (url, query) => async () => {
    const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/sparql-results+json' }, body: new URLSearchParams({ query }) });
    if (!r.ok) throw new Error(await r.text());
    await r.text();
  };
  const agent = new http.Agent({ keepAlive: true });
  const directHttp = (url, query) => () =>
    new Promise((resolve, reject) => {
      const body = new URLSearchParams({ query }).toString();
      const req = http.request(
        url,
        { method: 'POST', agent, headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/sparql-results+json', 'content-length': Buffer.byteLength(body) } },
        (res) => {
          const chunks = [];
          res.on('data', (c) => chunks.push(c));
          res.on('error', reject);
          res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(Buffer.concat(chunks).toString()))));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  const s1 = urls['library-shard1'];
  const body = `?s a <${P}author>`;
  const join = (a, b) => `SELECT ?title WHERE { SERVICE <${a}> { ?b <${P}book#year> ?y FILTER(?y > 2010) } SERVICE <${b}> { ?b <${P}book#title> ?title } }`;
  const unsharded = `SELECT ?title WHERE { ?b <${P}book#year> ?y FILTER(?y > 2010) ?b <${P}book#title> ?title }`;

  // The same MCP server as a child process over stdio.
  const epFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'fkgqa-bench-mcp-ep-')), 'endpoints.json');
  fs.writeFileSync(epFile, JSON.stringify(endpointsFile));
  const stdio = new Client({ name: 'bench', version: '1' });
  const stdioTransport = new StdioClientTransport({ command: process.execPath, args: [...nodeArgs('stdio'), cli, 'mcp', '--endpoints', epFile, '-q'] });
  await stdio.connect(stdioTransport);
  const stdioTool = (query) => async () => {
    const r = await stdio.callTool({ name: 'run_sparql_query', arguments: { query } });
    if (r.isError) throw new Error(r.content[0].text);
  };

  /** An SDK client over stdio to `node ARGS…` and a caller of its run_sparql_query. */
  const sdkStdio = async (args) => {
    const c = new Client({ name: 'bench', version: '1' });
    const t = new StdioClientTransport({ command: process.execPath, args });
    await c.connect(t);
    const call = (query) => async () => {
      const r = await c.callTool({ name: 'run_sparql_query', arguments: { query } });
      if (r.isError) throw new Error(r.content[0].text);
      return r;
    };
    return { client: c, call, pid: t.pid };
  };
  /** A raw JSON-RPC client over a child's stdio: newline-delimited JSON, one pending request at a time. */
  const rawStdio = (args) => {
    const child = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'inherit'] });
    let buf = '';
    let wake = null;
    let id = 0;
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (d) => {
      buf += d;
      const i = buf.indexOf('\n');
      if (i >= 0 && wake) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        const w = wake;
        wake = null;
        w(JSON.parse(line));
      }
    });
    const request = (method, params) =>
      new Promise((resolve, reject) => {
        wake = (m) => (m.error ? reject(new Error(m.error.message)) : resolve(m.result));
        child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params }) + '\n');
      });
    const init = async () => {
      await request('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench-raw', version: '1' } });
      child.stdin.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) + '\n');
    };
    const call = (query) => async () => {
      const r = await request('tools/call', { name: 'run_sparql_query', arguments: { query } });
      if (r.isError) throw new Error(r.content[0].text);
    };
    return { child, init, call, close: () => child.stdin.end() };
  };
  const mcpArgs = (root) => [path.join(root, 'bin/fkgqa.js'), 'mcp', '--endpoints', epFile, '-q'];
  const lone = `SELECT * WHERE { SERVICE <${s1}> { ${body} } }`;
  const compare = o.compare ? await sdkStdio([...nodeArgs('compare'), ...mcpArgs(path.resolve(o.compare))]) : null;
  const raw = rawStdio(mcpArgs(path.resolve(here, '..')));
  await raw.init();
  // Until each stdio server's federation engine has started (see the header).
  await stdioTool(join(urls['library-shard4'], urls['library-shard2']))();
  if (compare) await compare.call(join(urls['library-shard4'], urls['library-shard2']))();
  await raw.call(join(urls['library-shard4'], urls['library-shard2']))();
  // The echoes answer with as much as run_sparql_query does.
  const sample = await stdio.callTool({ name: 'run_sparql_query', arguments: { query: lone } });
  const answerChars = sample.content[0].text.length;
  const lineBytes = Buffer.byteLength(JSON.stringify({ jsonrpc: '2.0', id: 1, result: sample }));
  const bare = rawStdio([path.join(here, 'mcp-echo.js'), 'bare', String(lineBytes)]);
  const sdkEcho = await sdkStdio([...nodeArgs('sdk-echo'), path.join(here, 'mcp-echo.js'), 'sdk', String(answerChars)]);
  const minEcho = await sdkStdio([path.join(here, 'mcp-echo.js'), 'min', String(answerChars)]);
  const httpEcho = await sdkStdio([...nodeArgs('sdk-http-echo'), path.join(here, 'mcp-echo.js'), 'sdk-http', String(answerChars), s1, `SELECT * WHERE { ${body} }`]);

  // [name, call, index of the row it is compared with, goal of that ratio (null: none)]
  const plan = [
    ['lone SERVICE, endpoint directly (HTTP POST)', direct(s1, `SELECT * WHERE { ${body} }`), 0, null],
    ['lone SERVICE, endpoint directly (node:http POST)', directHttp(s1, `SELECT * WHERE { ${body} }`), 0, 'report'],
    ['lone SERVICE, run_sparql_query (in-memory MCP)', tool(lone), 0, '≤ 1.2'],
    ['lone SERVICE, run_sparql_query (stdio MCP)', stdioTool(lone), 0, '≤ 1.2'],
    ...(compare ? [[`lone SERVICE, run_sparql_query (stdio MCP, --compare)`, compare.call(lone), 0, 'report']] : []),
    ['lone SERVICE, run_sparql_query (stdio, raw JSON-RPC client)', raw.call(lone), 0, 'report'],
    ['floor: bare stdio echo round trip', bare.call(lone), 0, null],
    ['floor: SDK stdio round trip, no-op tool', sdkEcho.call(lone), 0, null],
    ['floor: SDK client, minimal stdio server (no-op tool)', minEcho.call(lone), 0, null],
    ['floor: SDK stdio, a tool that only POSTs the query (node:http)', httpEcho.call(lone), 0, 'report'],
    ['2-shard join, unsharded endpoint directly', direct(urls.library, unsharded), -1, null],
    ['2-shard join, run_sparql_query (federation)', tool(join(urls['library-shard4'], urls['library-shard2'])), -1, 'report'],
  ];
  const joinBase = plan.findIndex(([name]) => name.startsWith('2-shard join, unsharded'));
  for (const row of plan) if (row[2] === -1) row[2] = joinBase;
  // CPU of the stdio servers during the timed rounds (each gets `runs` calls there, plus none else).
  const servers = [
    ['fkgqa mcp (stdio)', stdioTransport.pid],
    ...(compare ? [['fkgqa mcp (--compare)', compare.pid]] : []),
    ['SDK stdio, no-op tool', sdkEcho.pid],
    ['SDK client, minimal server', minEcho.pid],
    ['SDK stdio, tool that only POSTs', httpEcho.pid],
  ];
  const cpuBefore = servers.map(([, pid]) => cpuMs(pid));
  const rows = await timeAll(plan.map(([name, fn]) => [name, fn]));
  const cpuPerCall = servers.map(([name, pid], k) => [name, (cpuMs(pid) - cpuBefore[k]) / runs]);
  // The window of the timed rounds, for bench/mcp-profile.js (each profiled server got `runs` calls in it).
  if (o.profile) fs.mkdirSync(path.resolve(o.profile), { recursive: true });
  if (o.profile) fs.writeFileSync(path.resolve(o.profile, 'window.json'), JSON.stringify({ t0: timed.start, t1: timed.end, n: runs }) + '\n');
  console.log(
    `bench:mcp — ${shards} (library), ${runs} runs of each scenario (interleaved) after ${warmup} warm-up rounds; latency in ms; load average ${os.loadavg()[0].toFixed(1)} on ${os.availableParallelism()} CPUs`,
  );
  // ratio: the scenario's median over the median of its baseline (the direct query it is compared with).
  console.log(`${'scenario'.padEnd(60)} ${'median'.padStart(8)} ${'p95'.padStart(8)} ${'ratio'.padStart(6)} ${'failed'.padStart(6)}`);
  const f = (x) => (Number.isFinite(x) ? x.toFixed(2) : '–');
  const figures = {};
  const ratios = [];
  const med = (k) => (rows[k][1].length ? median(rows[k][1]) : NaN);
  const nodeHttp = plan.findIndex(([name]) => name.endsWith('(node:http POST)'));
  for (const [k, [name, ms, failed]] of rows.entries()) {
    const [, , b, goal] = plan[k];
    console.log(`${name.padEnd(60)} ${f(med(k)).padStart(8)} ${f(ms.length ? pct(ms, 95) : NaN).padStart(8)} ${f(med(k) / med(b)).padStart(6)} ${String(failed).padStart(6)}`);
    figures[name] = { medianMs: med(k), p95Ms: ms.length ? pct(ms, 95) : null, failed };
    if (goal) ratios.push({ what: `${name} vs ${rows[b][0]} (median latency)`, value: med(k) / med(b), unit: '× time', goal });
    if (name.startsWith('lone SERVICE, run_sparql_query (in-memory') || name === 'lone SERVICE, run_sparql_query (stdio MCP)')
      ratios.push({ what: `${name} vs ${rows[nodeHttp][0]} (median latency)`, value: med(k) / med(nodeHttp), unit: '× time', goal: 'report' });
  }
  // The floors of the stdio goal (see the header): a direct POST plus a round trip that does no work.
  const fetchMed = med(0);
  const bareMed = med(plan.findIndex(([name]) => name.startsWith('floor: bare')));
  const sdkMed = med(plan.findIndex(([name]) => name.startsWith('floor: SDK stdio')));
  const minMed = med(plan.findIndex(([name]) => name.startsWith('floor: SDK client')));
  const floors = [
    ['floor: (fetch POST + bare stdio echo) / fetch POST', (fetchMed + bareMed) / fetchMed],
    ['floor: (node:http POST + bare stdio echo) / fetch POST', (med(nodeHttp) + bareMed) / fetchMed],
    ['floor: (node:http POST + SDK stdio round trip, no-op tool) / fetch POST', (med(nodeHttp) + sdkMed) / fetchMed],
    ['floor: (node:http POST + SDK client to a minimal server) / fetch POST', (med(nodeHttp) + minMed) / fetchMed],
  ];
  for (const [what, value] of floors) {
    console.log(`${what.padEnd(76)} ${f(value).padStart(6)}`);
    ratios.push({ what, value, unit: '× time', goal: 'report' });
  }
  for (const [name, ms] of cpuPerCall) {
    console.log(`${`server CPU per call (ms, user + system): ${name}`.padEnd(76)} ${f(ms).padStart(6)}`);
  }
  console.log(`answer of the lone-SERVICE call: ${answerChars} characters of text, a JSON-RPC line of ${lineBytes} bytes`);
  writeResult(o, 'mcp', { loadBefore, ratios, figures: { shards, runs, warmup, scenarios: figures, serverCpuMsPerCall: Object.fromEntries(cpuPerCall) } });
  await stdio.close();
  if (compare) await compare.client.close();
  await sdkEcho.client.close();
  await minEcho.client.close();
  await httpEcho.client.close();
  raw.close();
  bare.close();
  await client.close();
  await mcp.close();
} finally {
  child.kill('SIGTERM');
}
