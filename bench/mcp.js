// npm run bench:mcp [-- --shards DIR] [-- --runs N] [-- --warmup N]
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
// src/federation/http.ts): keep-alive on both sides, since an agent's MCP server lives across
// many calls and so does a user's script. A second direct row POSTs with node:http and a
// keep-alive agent (the tool's client), reported so the gain of the client itself is visible.
// The stdio server is waited for until its federation engine has started (a federated call):
// `fkgqa mcp` warms the engine at start, 2–3 s of CPU that otherwise overlap the timed rounds.
// Rounds rotate the order of the scenarios, so none always follows the same one.
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
const o = benchOptions({ shards: '', runs: '100', warmup: '10' });
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
 * Times every scenario `runs` times, interleaved (one call of each in turn, each round starting one
 * scenario later), so that load changes affect all alike. A call that fails (e.g. a federated query at its time limit) is counted, its
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
  for (let i = 0; i < runs; i++) {
    for (let j = 0; j < scenarios.length; j++) {
      const k = (i + j) % scenarios.length;
      const fn = scenarios[k][1];
      const t0 = performance.now();
      if (await attempt(k, fn)) ms[k].push(performance.now() - t0);
    }
  }
  return scenarios.map(([name], k) => [name, ms[k], failed[k]]);
}

const { child, urls } = await startServe();
try {
  const endpointsFile = {
    tool: { name: 'fkgqa', version: '' }, shards: path.resolve(shards), timeoutMs: 30000, maxBodyBytes: 1 << 20, profileFile: null,
    endpoints: Object.entries(urls).map(([id, url]) => ({ id, url, graph: 'library', role: /-shard\d+$/.test(id) ? 'shard' : 'original', shard: /-(shard\d+)$/.exec(id)?.[1] ?? null, void: null, triples: 0, profile: null })),
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
      const req = http.request(url, { method: 'POST', agent, headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/sparql-results+json', 'content-length': Buffer.byteLength(body) } }, (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(Buffer.concat(chunks).toString()))));
      });
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
  await stdio.connect(new StdioClientTransport({ command: process.execPath, args: [cli, 'mcp', '--endpoints', epFile, '-q'] }));
  const stdioTool = (query) => async () => {
    const r = await stdio.callTool({ name: 'run_sparql_query', arguments: { query } });
    if (r.isError) throw new Error(r.content[0].text);
  };

  // Until the stdio server's federation engine has started (see the header).
  await stdioTool(join(urls['library-shard4'], urls['library-shard2']))();

  const rows = await timeAll([
    ['lone SERVICE, endpoint directly (HTTP POST)', direct(s1, `SELECT * WHERE { ${body} }`)],
    ['lone SERVICE, endpoint directly (node:http POST)', directHttp(s1, `SELECT * WHERE { ${body} }`)],
    ['lone SERVICE, run_sparql_query (in-memory MCP)', tool(`SELECT * WHERE { SERVICE <${s1}> { ${body} } }`)],
    ['lone SERVICE, run_sparql_query (stdio MCP)', stdioTool(`SELECT * WHERE { SERVICE <${s1}> { ${body} } }`)],
    ['2-shard join, unsharded endpoint directly', direct(urls.library, unsharded)],
    ['2-shard join, run_sparql_query (federation)', tool(join(urls['library-shard4'], urls['library-shard2']))],
  ]);
  console.log(`bench:mcp — ${shards} (library), ${runs} runs of each scenario (interleaved) after ${warmup} warm-up rounds; latency in ms; load average ${os.loadavg()[0].toFixed(1)} on ${os.availableParallelism()} CPUs`);
  // ratio: the scenario's median over the median of its baseline (the direct query it is compared with: rows 0 and 4).
  const baseOf = [0, 0, 0, 0, 4, 4];
  console.log(`${'scenario'.padEnd(50)} ${'median'.padStart(8)} ${'p95'.padStart(8)} ${'ratio'.padStart(6)} ${'failed'.padStart(6)}`);
  const f = (x) => (Number.isFinite(x) ? x.toFixed(2) : '–');
  const figures = {};
  const ratios = [];
  const goals = [null, 'report', '≤ 1.2', '≤ 1.2', null, 'report'];
  for (const [k, [name, ms, failed]] of rows.entries()) {
    const med = ms.length ? median(ms) : NaN;
    const base = rows[baseOf[k]][1].length ? median(rows[baseOf[k]][1]) : NaN;
    console.log(`${name.padEnd(50)} ${f(med).padStart(8)} ${f(ms.length ? pct(ms, 95) : NaN).padStart(8)} ${f(med / base).padStart(6)} ${String(failed).padStart(6)}`);
    figures[name] = { medianMs: med, p95Ms: ms.length ? pct(ms, 95) : null, failed };
    if (goals[k]) ratios.push({ what: `${name} vs ${rows[baseOf[k]][0]} (median latency)`, value: med / base, unit: '× time', goal: goals[k] });
    if (k === 2 || k === 3) ratios.push({ what: `${name} vs ${rows[1][0]} (median latency)`, value: med / median(rows[1][1]), unit: '× time', goal: 'report' });
  }
  writeResult(o, 'mcp', { loadBefore, ratios, figures: { shards, runs, warmup, scenarios: figures } });
  await stdio.close();
  await client.close();
  await mcp.close();
} finally {
  child.kill('SIGTERM');
}
