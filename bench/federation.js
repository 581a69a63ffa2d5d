// npm run bench:federation [-- --shards DIR --gold-state DIR --state DIR] [-- --engines all]
//   [-- --forms trivial,oracle] [-- --timeout 30000] [-- --runs 30] [-- --join kg/qN]
//   [-- --baseline kg/qN] [-- --out FILE] [-- --skip-corpus]
// The federation engines' figures (docs/federation.md), measured side by side in one run (a benchmark, not
// a test). Without --shards, on the demo build (partitioned and `stats`-ed into a temporary
// folder). The shard endpoints (and the unsharded graphs, --with-originals) run in a separate
// `fkgqa serve` process with its own --state; gold answers and realised fan-out are read from
// --gold-state (default <shards>.state; read only).
//  1. corpus: `fkgqa verify --federation-engine <engines> --form <forms> --timeout <ms>` over every
//     distinct gold query (a child process; its JSON report is kept in --out): per engine and
//     form, answered, identical to gold, timeouts, requests per query (median, max) and time
//     (median, p95), and the disagreements;
//  2. baseline: one query's oracle form (--baseline, default car_1/q5, or the demo's library/q6) on every engine
//     including comunica-default, the engine of earlier fkgqa versions (requests and time);
//  3. join: a join over two shards (--join, default concert_singer/q10, or the demo's library/q3: a query
//     whose answer needs two shards, each triple pattern sent to the one shard that holds it, one
//     SERVICE per shard) through run_sparql_query (an in-memory MCP client, per engine) against
//     the gold query on the unsharded graph's endpoint directly, interleaved, `--runs` times each.
// Prints `uptime` before and after each step, and peak memory (VmHWM) of serve and of verify.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import sparqljs from 'sparqljs';
import { registryFromEndpointsValue } from '../dist/federation/registry.js';
import { createMcpServer } from '../dist/mcp/server.js';
import { parseQuery } from '../dist/sparql/parse.js';
import { benchOptions, here, loadAverage, median, writeResult } from './lib.js';

const cli = path.resolve(here, '../bin/fkgqa.js');
const o = benchOptions({ shards: '', 'gold-state': '', state: '', engines: 'all', forms: 'trivial,oracle', timeout: '30000', runs: '30', warmup: '3', join: '', baseline: '', out: '' }, [
  'skip-corpus',
]);
const uptime = () => execFileSync('uptime', { encoding: 'utf8' }).trim();
const log = (line) => process.stderr.write(`${line}\n`);
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.max(0, Math.ceil((p / 100) * xs.length) - 1)];
const sum = (r) => Object.values(r ?? {}).reduce((a, b) => a + b, 0);
/** Peak resident memory (VmHWM) of a process, in MiB, or null once it is gone. */
const peakMiB = (pid) => {
  try {
    const m = /^VmHWM:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Math.round(Number(m[1]) / 1024) : null;
  } catch {
    return null;
  }
};

let shards = o.shards;
let goldState = o['gold-state'];
const demo = !shards;
if (demo) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fkgqa-bench-federation-'));
  shards = path.join(dir, 'shards');
  log(`bench:federation: building the demo into ${shards} (partition, stats)`);
  execFileSync(process.execPath, [cli, 'partition', '--out', shards, '--quiet'], { stdio: 'ignore' });
  execFileSync(process.execPath, [cli, 'stats', '--shards', shards, '--quiet'], { stdio: 'ignore' });
}
goldState ||= `${shards}.state`;
const state = o.state || fs.mkdtempSync(path.join(os.tmpdir(), 'fkgqa-bench-federation-state-'));
const spider = JSON.parse(fs.readFileSync(path.join(shards, 'build.json'), 'utf8')).graphs.includes('car_1');
const joinId = o.join || (spider ? 'concert_singer/q10' : 'library/q3');
const baselineId = o.baseline || (spider ? 'car_1/q5' : 'library/q6');
const out = o.out || path.join(state, 'bench-federation.json');
const loadBefore = loadAverage();
const result = { started: new Date().toISOString(), shards: path.resolve(shards), goldState: path.resolve(goldState), timeoutMs: Number(o.timeout), uptime: { start: uptime() }, steps: {} };
log(`bench:federation: ${uptime()}`);

/** `fkgqa serve --with-originals` on the build; resolves once every endpoint is listed. */
function startServe() {
  const child = spawn(process.execPath, [cli, 'serve', '--shards', shards, '--state', state, '--with-originals', '--port', '0', '--timeout', String(Math.max(Number(o.timeout), 30000)), '--quiet'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const endpoints = JSON.parse(fs.readFileSync(path.join(shards, 'build.json'), 'utf8')).graphs;
  return new Promise((resolve, reject) => {
    let text = '';
    child.on('exit', (code) => reject(new Error(`fkgqa serve exited with ${code}`)));
    child.stdout.on('data', (d) => {
      text += d;
      if (!text.endsWith('\n')) return;
      const urls = Object.fromEntries(
        text
          .trim()
          .split('\n')
          .map((l) => l.split('\t')),
      );
      if (endpoints.every((g) => urls[g])) resolve({ child, urls });
    });
  });
}

/** Runs `fkgqa verify` as a child process; resolves with its JSON report and its peak memory (MiB). */
function runVerify(args) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, 'verify', '--shards', shards, '--state', goldState, '--endpoints', path.join(state, 'endpoints.json'), '--timeout', o.timeout, '--json', ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let peak = 0;
    const jvmPeak = new Map();
    // Sample the peak memory of verify and of its JVM (the jena engine) every 2 s.
    const timer = setInterval(() => {
      peak = Math.max(peak, peakMiB(child.pid) ?? 0);
      for (const pid of fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
        try {
          const st = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
          if (Number(st.slice(st.lastIndexOf(')') + 2).split(' ')[1]) === child.pid) jvmPeak.set(pid, Math.max(jvmPeak.get(pid) ?? 0, peakMiB(pid) ?? 0));
        } catch {
          /* gone */
        }
      }
    }, 2000);
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => {
      stderr = (stderr + d).slice(-4000);
      for (const line of String(d).split('\n')) if (/^\s*\[\d+\/\d+\]|starting|skipped/.test(line)) log(`  ${line.trim().slice(0, 200)}`);
    });
    child.on('exit', (code) => {
      clearInterval(timer);
      if (code !== 0 && code !== 1) return reject(new Error(`fkgqa verify exited with ${code}: ${stderr.trim().split('\n').slice(-3).join(' | ')}`));
      resolve({ report: JSON.parse(stdout), code, peakMiB: peak, childPeakMiB: [...jvmPeak.values()] });
    });
  });
}

const { child: serve, urls } = await startServe();
try {
  // 1. Every distinct gold query in the chosen forms on the chosen engines.
  if (!o['skip-corpus']) {
    log(`bench:federation: 1. fkgqa verify --federation-engine ${o.engines} --form ${o.forms.split(',').join(' ')} --timeout ${o.timeout}`);
    const before = uptime();
    const t0 = performance.now();
    const v = await runVerify(['--federation-engine', o.engines, '--form', ...o.forms.split(',')]);
    result.steps.corpus = {
      uptime: { before, after: uptime() },
      seconds: Math.round((performance.now() - t0) / 1000),
      verifyPeakMiB: v.peakMiB,
      jvmPeakMiB: v.childPeakMiB,
      exitCode: v.code,
      report: v.report,
    };
    log(`bench:federation: ${result.steps.corpus.uptime.after}`);
  }
  // 2. One oracle form on every engine, the baseline included (3 runs each, interleaved).
  {
    log(`bench:federation: 2. ${baselineId} oracle form on comunica, jena, comunica-default`);
    const before = uptime();
    const runs = [];
    for (let i = 0; i < 3; i++) runs.push((await runVerify(['--federation-engine', 'comunica,jena,comunica-default', '--form', 'oracle', '--query', baselineId])).report);
    const per = Object.fromEntries(
      runs[0].engines.map((e) => [
        e,
        runs.map((r) => ({ status: r.queries[0].engines[e].oracle.status, requests: r.queries[0].engines[e].oracle.requests, ms: Math.round(r.queries[0].engines[e].oracle.ms) })),
      ]),
    );
    result.steps.baseline = { query: baselineId, uptime: { before, after: uptime() }, runs: per };
  }
  // 3. A join over two shards through run_sparql_query vs the unsharded endpoint directly.
  {
    const bench = JSON.parse(fs.readFileSync(path.join(shards, 'benchmark.json'), 'utf8'));
    const entry = bench.entries.find((e) => e.queryId === joinId);
    if (!entry) throw new Error(`--join ${joinId}: no such gold query`);
    const kg = joinId.split('/')[0];
    const realised = JSON.parse(fs.readFileSync(path.join(goldState, 'realised-fan-out', `${kg}.json`), 'utf8')).realised.find((r) => r.query === joinId);
    if (realised?.status !== 'ok' || realised.shards.length !== 2) throw new Error(`--join ${joinId}: its answer does not need exactly two shards (${realised?.shards})`);
    const endpointsFile = JSON.parse(fs.readFileSync(path.join(state, 'endpoints.json'), 'utf8'));
    const registry = registryFromEndpointsValue(endpointsFile, 'bench');
    const shardUrl = (s) => urls[`${kg}-${s}`];
    const parsed = parseQuery(entry.query, bench.defaultPrefix);
    if (!parsed.ok) throw new Error(parsed.error);
    const ast = parsed.query.ast;
    const post = async (url, query) => {
      const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/sparql-results+json' }, body: new URLSearchParams({ query }) });
      if (!r.ok) throw new Error(`${url}: ${r.status} ${await r.text()}`);
      return r.json();
    };
    // Each triple pattern of the query's BGPs to the one needed shard that holds it: one SERVICE per shard.
    const gen = new sparqljs.Generator({ allPrefixes: false });
    const bgps = ast.where.filter((p) => p.type === 'bgp');
    const groups = new Map(realised.shards.map((s) => [s, []]));
    for (const t of bgps.flatMap((b) => b.triples)) {
      const ask = gen.stringify({ type: 'query', queryType: 'ASK', prefixes: {}, where: [{ type: 'bgp', triples: [t] }] });
      const holders = [];
      for (const s of realised.shards) if ((await post(shardUrl(s), ask)).boolean) holders.push(s);
      if (holders.length !== 1) throw new Error(`--join ${joinId}: a triple pattern matches ${holders.length} of its two shards; choose a query whose patterns each sit in one shard`);
      groups.get(holders[0]).push(t);
    }
    const where = [
      ...[...groups]
        .filter(([, ts]) => ts.length > 0)
        .map(([s, ts]) => ({ type: 'service', name: { termType: 'NamedNode', value: shardUrl(s) }, silent: false, patterns: [{ type: 'bgp', triples: ts }] })),
      ...ast.where.filter((p) => p.type !== 'bgp'),
    ];
    const joinQuery = gen.stringify({ ...ast, prefixes: {}, where });
    const goldQuery = gen.stringify({ ...ast, prefixes: {} });
    const expected = (await post(urls[kg], goldQuery)).results.bindings.length;
    log(`bench:federation: 3. ${joinId} as a join over ${realised.shards.join(' and ')} (${expected} rows), ${o.runs} runs of each scenario, interleaved`);
    const before = uptime();
    const scenarios = [['unsharded endpoint directly (HTTP POST)', async () => ({ rows: (await post(urls[kg], goldQuery)).results.bindings.length, requests: 1 })]];
    const servers = [];
    for (const engine of ['comunica', 'jena', 'comunica-default']) {
      const mcp = await createMcpServer({ registry, callLog: null, state: null, federationEngine: engine });
      const [a, b] = InMemoryTransport.createLinkedPair();
      await mcp.server.connect(a);
      const client = new Client({ name: 'bench', version: '1' });
      await client.connect(b);
      servers.push({ mcp, client });
      scenarios.push([
        `run_sparql_query, federation engine ${engine}`,
        async () => {
          const r = await client.callTool({ name: 'run_sparql_query', arguments: { query: joinQuery, timeout_ms: Number(o.timeout) } });
          if (r.isError) throw new Error(`${engine}: ${r.content[0].text}`);
          const last = mcp.callLog.entries.at(-1);
          return { rows: last?.rows ?? null, requests: sum(last?.requests) };
        },
      ]);
    }
    const timings = scenarios.map(() => []);
    const requests = scenarios.map(() => []);
    const rows = scenarios.map(() => new Set());
    for (let i = 0; i < Number(o.warmup); i++) for (const [, fn] of scenarios) await fn();
    for (let i = 0; i < Number(o.runs); i++) {
      for (const [k, [, fn]] of scenarios.entries()) {
        const t = performance.now();
        const r = await fn();
        timings[k].push(performance.now() - t);
        requests[k].push(r.requests);
        rows[k].add(r.rows);
      }
    }
    for (const { client, mcp } of servers) {
      await client.close();
      await mcp.close();
    }
    result.steps.join = {
      query: joinId,
      shards: realised.shards,
      rows: expected,
      joinQuery,
      uptime: { before, after: uptime() },
      scenarios: scenarios.map(([name], k) => ({
        name,
        medianMs: Number(median(timings[k]).toFixed(1)),
        p95Ms: Number(pct(timings[k], 95).toFixed(1)),
        requests: median(requests[k]),
        rows: [...rows[k]],
      })),
    };
  }
  result.servePeakMiB = peakMiB(serve.pid);
} finally {
  serve.kill('SIGTERM');
}
result.uptime.end = uptime();
fs.writeFileSync(out, JSON.stringify(result, null, 2) + '\n');

// The summary.
const lines = [];
lines.push(`bench:federation — ${result.shards}; time limit ${o.timeout} ms; machine: ${os.availableParallelism()} CPUs, ${Math.round(os.totalmem() / 2 ** 30)} GiB`);
lines.push(`uptime at start: ${result.uptime.start}`);
if (result.steps.corpus) {
  const c = result.steps.corpus;
  const r = c.report;
  lines.push('', `1. Every distinct gold query (${r.queries.length}) in ${r.forms.join(' and ')} form, ${c.seconds} s; uptime before: ${c.uptime.before}; after: ${c.uptime.after}`);
  lines.push(
    '| form | engine | answered | identical | equivalent (ties) | different | timeouts | errors | requests median / max | ms median / p95 / max |',
    '|---|---|---|---|---|---|---|---|---|---|',
  );
  for (const f of r.forms) {
    for (const e of r.engines) {
      const t = r.totals[e][f];
      if (t.skipped === r.queries.length) continue;
      lines.push(
        `| ${f} | ${e} | ${t.answered}/${r.queries.length} | ${t.identical} | ${t.equivalent} | ${t.different} | ${t.timeouts} | ${t.errors} | ${t.requests.median} / ${t.requests.max} (${t.requests.maxQuery}) | ${t.ms.median} / ${t.ms.p95} / ${t.ms.max} (${t.ms.maxQuery}) |`,
      );
    }
  }
  lines.push(`peak memory: fkgqa verify (Node, Comunica threads) ${c.verifyPeakMiB} MiB, the Jena JVM ${c.jvmPeakMiB.join(', ') || '-'} MiB, fkgqa serve ${result.servePeakMiB} MiB`);
  const ds = r.disagreements.filter((d) => d.kind !== 'tie');
  lines.push(`disagreements (not ties): ${ds.length}; ties: ${r.disagreements.length - ds.length}; answers different from gold beyond ties: ${r.different}`);
  for (const d of ds)
    lines.push(
      `  ${d.query} ${d.form} ${d.kind}: gold ${d.gold}; ${Object.entries(d.engines)
        .map(([e, v]) => `${e} ${v}`)
        .join(', ')}${d.groups.length > 1 ? '; engines differ' : ''}`,
    );
}
const b = result.steps.baseline;
lines.push('', `2. ${b.query} oracle form, 3 runs per engine; uptime before: ${b.uptime.before}; after: ${b.uptime.after}`);
for (const [e, runs] of Object.entries(b.runs)) lines.push(`  ${e.padEnd(18)} ${runs.map((x) => `${x.status} ${x.requests} req ${x.ms} ms`).join('; ')}`);
const j = result.steps.join;
lines.push('', `3. ${j.query} (${j.rows} rows) as a join over ${j.shards.join(' and ')}, ${o.runs} interleaved runs; uptime before: ${j.uptime.before}; after: ${j.uptime.after}`);
lines.push('| scenario | median ms | p95 ms | requests | rows |', '|---|---|---|---|---|');
for (const s of j.scenarios) lines.push(`| ${s.name} | ${s.medianMs} | ${s.p95Ms} | ${s.requests} | ${s.rows.join(', ')} |`);
lines.push('', `uptime at end: ${result.uptime.end}`, `raw results: ${out}`);
console.log(lines.join('\n'));

// For bench:all: the join through run_sparql_query per engine against the unsharded endpoint, and
// the requests of the baseline query on each engine against the old default configuration.
const ratios = [];
const direct = j.scenarios[0];
for (const s of j.scenarios.slice(1))
  ratios.push({ what: `${j.query} as a 2-shard join: ${s.name} vs the ${direct.name} (median latency)`, value: s.medianMs / direct.medianMs, unit: '× time', goal: 'report' });
const reqs = (e) => median((b.runs[e] ?? []).map((x) => x.requests));
if (b.runs['comunica-default']) {
  for (const e of Object.keys(b.runs).filter((e) => e !== 'comunica-default')) {
    ratios.push({
      what: `${b.query} oracle form: HTTP requests of ${e} vs comunica-default (the engine of earlier versions)`,
      value: reqs(e) / reqs('comunica-default'),
      unit: '× requests',
      goal: '≤ 200 requests',
    });
  }
}
writeResult(o, 'federation', { loadBefore, ratios, figures: { raw: out, baseline: b, join: j } });
