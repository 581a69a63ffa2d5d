// npm run bench:serve [-- --shards DIR] [-- --compare DIR] [-- --pairs N] [-- --duration S] [-- --connections N]
//                     [-- --scenarios startup,point,aggregate,all,comunica,release,scale] [-- --kg NAME,NAME] [-- --json FILE]
//                     [-- --state DIR] [-- --result FILE] [-- --scale-triples N] [-- --scale-shards DIR] [-- --scale-pairs N]
//
// serve's figures (docs/performance.md, docs/performance-notes.md), each a ratio measured side by side in
// one run, alternating the two sides of each pair, with the load average (`uptime`) before and
// after each scenario. The machine is shared: rerun on a quiet machine for absolute figures.
//
// - startup: `fkgqa serve` from spawn until EVERY endpoint answers `ASK {}` (polled), vs one
//   process loading the same shards into oxigraph stores (bench/bare-oxigraph.js --load), from
//   spawn until it has loaded them; time and peak resident memory (VmHWM) of each.
// - point / aggregate: autocannon 9, `--connections` clients for about `--duration` s (a fixed number
//   of requests sized by each side's warm-up, so that no run ends by hanging up on queries), on the largest
//   shard (world_1-shard1 on the dev build): serve vs a bare node:http handler over one oxigraph
//   store (bench/bare-oxigraph.js); req/s, the server's CPU time per request (all threads) and its main thread's alone.
// - all: the same two queries cycling over every shard endpoint (serve only).
// - comunica: the point and aggregate query on Comunica's own SPARQL endpoint over the same shard
//   file (comunica-sparql-http, the file served by a static handler in this process), vs serve;
//   `--pairs` pairs, the median of the paired ratios. Comunica gets a discarded warm-up of each
//   query, and its runs send a fixed number of requests (about `--duration` s at the warm-up's
//   rate, 30 s for the aggregate) timed until the last answer.
// - scale (opt-in, not in the default list): the startup scenario on a synthetic build of
//   `--scale-triples` triples (default 10,000,000: wta_1 of the corpus replicated by `fkgqa synth`,
//   seed 0, then `fkgqa partition`; both cached under the temp folder, fkgqa-bench-synth/, beside
//   bench:scale's sources), or on `--scale-shards DIR`; `--scale-pairs` runs (default 1). The bare
//   loader starts a fresh oxigraph instance per 2M triples as serve's workers do (about 1 KB per triple in a 4 GiB heap).
//   Building the 10M set takes about 3 minutes on a quiet machine (synth and partition, once), each
//   run about 30 s per side and up to ~10 GiB of memory per side.
// - release: a heavy query with a 1 s client limit, then `ASK {}` to the same endpoint: time from
//   the client giving up to the ASK's answer; and an ASK to the same endpoint while a heavy query's
//   client keeps waiting (slow query).
//
// --state DIR holds the `--state` folders of the serve processes (and the dev set when built here);
// default a fresh folder under the system's temp folder. Either way it is removed at the end.
// --result FILE writes the record bench/all.js (on main) reads: { bench, ratios, figures, loadBefore,
// loadAfter, node, cpus }.
// --compare DIR runs another fkgqa checkout's serve (e.g. main, built) as a third side of every
// scenario, for before/after tables. Without --shards the dev set is built first.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { benchOptions, here, median } from './lib.js';

const o = benchOptions({
  connections: '10',
  duration: '5',
  pairs: '3',
  shards: '',
  kg: '',
  compare: '',
  json: '',
  state: '',
  result: '',
  scenarios: 'startup,point,aggregate,all,comunica,release',
  'release-runs': '5',
  'scale-triples': '10000000',
  'scale-shards': '',
  'scale-pairs': '1',
});
const kgs = o.kg ? o.kg.split(',') : [];
const scenarios = new Set(o.scenarios.split(','));
const pairs = Number(o.pairs);
const duration = Number(o.duration);
const connections = Number(o.connections);
const self = path.resolve(here, '..');
const sides = [{ name: 'serve', root: self }, ...(o.compare ? [{ name: `serve (${path.basename(path.resolve(o.compare))})`, root: path.resolve(o.compare) }] : [])];
if (o.state) fs.mkdirSync(o.state, { recursive: true });
const tmp = fs.mkdtempSync(path.join(o.state ? path.resolve(o.state) : os.tmpdir(), 'fkgqa-bench-serve-'));

let shards = o.shards ? path.resolve(o.shards) : undefined;
if (!shards) {
  if (!fs.existsSync(path.join(o.source, 'dev.json'))) {
    console.error(`bench:serve: no --shards and no corpus at ${o.source}`);
    process.exit(2);
  }
  shards = path.join(tmp, 'shards');
  process.stderr.write(`building the dev set into ${shards}\n`);
  execFileSync(process.execPath, [path.join(self, 'bin/fkgqa.js'), 'partition', '--source', o.source, '--out', shards, '--quiet'], { stdio: 'ignore' });
}

/** Every shard of a build (of the --kg graphs): endpoint id, file, triples. */
const shardsOf = (dir, only = kgs) =>
  fs
    .readdirSync(dir)
    .sort()
    .filter((g) => fs.existsSync(path.join(dir, g, 'manifest.json')) && (only.length === 0 || only.includes(g)))
    .flatMap((g) => JSON.parse(fs.readFileSync(path.join(dir, g, 'manifest.json'), 'utf8')).shards.map((s) => ({ id: s.endpoint, file: path.join(dir, g, s.file), triples: s.triples })));
const shardList = shardsOf(shards);
const largest = shardList.find((s) => s.id === 'world_1-shard1') ?? [...shardList].sort((a, b) => b.triples - a.triples)[0];
const load = () =>
  os
    .loadavg()
    .map((x) => x.toFixed(1))
    .join(' ');
const results = { machine: { cores: os.cpus().length, node: process.version, shards: shardList.length, triples: shardList.reduce((n, s) => n + s.triples, 0) }, scenarios: {} };
const log = (line) => process.stderr.write(`${line}\n`);

/** A free TCP port on loopback. */
function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** Peak resident memory (VmHWM) and CPU time (ms, all threads) of a process (Linux /proc). */
function procStats(pid) {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { peakRss: Number(/VmHWM:\s+(\d+)/.exec(status)[1]) * 1024, rss: Number(/VmRSS:\s+(\d+)/.exec(status)[1]) * 1024, cpuMs: ((Number(f[11]) + Number(f[12])) * 1000) / 100 };
  } catch {
    return { peakRss: NaN, rss: NaN, cpuMs: NaN };
  }
}

/**
 * CPU time (ms) of a process's main thread alone (Linux /proc/<pid>/task/<pid>/stat): the thread
 * that reads requests and writes answers in serve, and the only JS thread of the bare handler.
 */
function mainThreadCpuMs(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(f[11]) + Number(f[12])) * 1000) / 100;
  } catch {
    return NaN;
  }
}

// Children still running when this script ends (an error midway) are stopped with it.
const children = new Set();
process.on('exit', () => children.forEach((c) => c.exitCode === null && c.kill('SIGTERM')));
const track = (child) => (children.add(child), child.once('exit', () => children.delete(child)), child);

const stop = (child) => new Promise((resolve) => (child.exitCode !== null ? resolve() : (child.once('exit', resolve), child.kill('SIGTERM'))));

/**
 * Starts a side's serve on a free port; resolves once every endpoint answers ASK {} (polled from the
 * spawn on, one request at a time over one connection, a round every 20 ms that stops at the first
 * endpoint not answering yet). It polled all endpoints at once every 10 ms before: thousands of
 * requests a second that took CPU from the serve being measured (and not from the bare loader).
 */
async function startServe(side, extra = [], build = { dir: shards, list: shardList, kgs }) {
  const port = await freePort();
  const state = fs.mkdtempSync(path.join(tmp, 'state-'));
  const t0 = performance.now();
  const child = track(
    spawn(
      process.execPath,
      [path.join(side.root, 'bin/fkgqa.js'), 'serve', '--shards', build.dir, '--port', String(port), '--state', state, '--quiet', ...(build.kgs.length ? ['--kg', ...build.kgs] : []), ...extra],
      { stdio: ['ignore', 'ignore', 'inherit'] },
    ),
  );
  let exited = false;
  child.once('exit', () => (exited = true));
  const url = (id) => `http://127.0.0.1:${port}/${id}/sparql`;
  const pending = new Set(build.list.map((s) => s.id));
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const ask = (id) =>
    new Promise((resolve) => {
      const req = http.get(`${url(id)}?query=ASK%7B%7D`, { agent }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode === 200));
      });
      req.on('error', () => resolve(false));
    });
  while (pending.size > 0) {
    if (exited) throw new Error(`${side.name} exited before its endpoints answered`);
    for (const id of [...pending]) {
      if (!(await ask(id))) break;
      pending.delete(id);
    }
    if (pending.size > 0) await new Promise((r) => setTimeout(r, 20));
  }
  const ms = performance.now() - t0;
  agent.destroy();
  return { child, port, url, ms, ...procStats(child.pid) };
}

/** The bare loader: every shard into its own oxigraph store in one process. */
function bareLoad(dir = shards, only = kgs) {
  const t0 = performance.now();
  const child = track(spawn(process.execPath, [path.join(here, 'bare-oxigraph.js'), '--load', dir, ...only], { stdio: ['ignore', 'pipe', 'inherit'] }));
  let out = '';
  child.stdout.on('data', (c) => (out += c));
  return new Promise((resolve) =>
    child.on('exit', (code) => {
      const m = /^loaded (\d+) (\d+) (\d+) (\d+)/.exec(out);
      resolve(code === 0 && m ? { ms: performance.now() - t0, peakRss: Number(m[4]) } : { ms: NaN, peakRss: NaN, error: out.trim() });
    }),
  );
}

const mib = (b) => `${(b / 1048576).toFixed(0)} MiB`;
const s2 = (ms) => `${(ms / 1000).toFixed(2)} s`;

// ---- startup ------------------------------------------------------------------------------------
if (scenarios.has('startup')) {
  const before = load();
  const runs = { bare: [], ...Object.fromEntries(sides.map((s) => [s.name, []])) };
  for (let i = 0; i < pairs; i++) {
    const b = await bareLoad();
    runs.bare.push(b);
    log(`startup ${i + 1}/${pairs}: bare loader ${s2(b.ms)}, ${mib(b.peakRss)}${b.error ? ` (${b.error})` : ''}`);
    for (const side of sides) {
      const s = await startServe(side);
      await stop(s.child);
      runs[side.name].push({ ms: s.ms, peakRss: s.peakRss });
      log(`startup ${i + 1}/${pairs}: ${side.name} ${s2(s.ms)}, ${mib(s.peakRss)}`);
    }
  }
  const row = { load: [before, load()], bare: { ms: median(runs.bare.map((r) => r.ms)), peakRss: median(runs.bare.map((r) => r.peakRss)) }, sides: {} };
  for (const side of sides) {
    const r = runs[side.name];
    row.sides[side.name] = {
      ms: median(r.map((x) => x.ms)),
      peakRss: median(r.map((x) => x.peakRss)),
      timeRatio: median(r.map((x, i) => x.ms / runs.bare[i].ms)),
      memoryRatio: median(r.map((x, i) => x.peakRss / runs.bare[i].peakRss)),
      runs: r,
    };
  }
  row.bare.runs = runs.bare;
  results.scenarios.startup = row;
}

// ---- scale: start-up on a synthetic build of --scale-triples triples ------------------------------
if (scenarios.has('scale')) {
  let dir = o['scale-shards'] ? path.resolve(o['scale-shards']) : '';
  const n = Number(o['scale-triples']);
  if (!dir) {
    const cache = path.join(os.tmpdir(), 'fkgqa-bench-synth');
    const src = path.join(cache, `wta_1-${n}`);
    dir = path.join(cache, `wta_1-${n}-shards`);
    const cli = path.join(self, 'bin/fkgqa.js');
    if (!fs.existsSync(path.join(src, 'kg', 'wta_1.nt'))) {
      log(`scale: synth ${n} triples into ${src} ...`);
      execFileSync(process.execPath, [cli, 'synth', '--source', o.source, '--kg', 'wta_1', '--triples', String(n), '--out', src, '-q'], { stdio: 'ignore' });
    }
    if (!fs.existsSync(path.join(dir, 'wta_1', 'manifest.json'))) {
      log(`scale: partition into ${dir} ...`);
      execFileSync(process.execPath, [cli, 'partition', '--source', src, '--out', dir, '--quiet'], { stdio: 'ignore' });
    }
  }
  const list = shardsOf(dir, []);
  const triples = list.reduce((t, s) => t + s.triples, 0);
  const before = load();
  const runs = { bare: [], ...Object.fromEntries(sides.map((s) => [s.name, []])) };
  for (let i = 0; i < Number(o['scale-pairs']); i++) {
    const b = await bareLoad(dir, []);
    runs.bare.push(b);
    log(`scale ${i + 1}: bare loader ${s2(b.ms)}, ${mib(b.peakRss)}${b.error ? ` (${b.error})` : ''}`);
    for (const side of sides) {
      const s = await startServe(side, [], { dir, list, kgs: [] });
      await stop(s.child);
      runs[side.name].push({ ms: s.ms, peakRss: s.peakRss });
      log(`scale ${i + 1}: ${side.name} ${s2(s.ms)}, ${mib(s.peakRss)}`);
    }
  }
  const row = {
    load: [before, load()],
    build: dir,
    shards: list.length,
    triples,
    bare: { ms: median(runs.bare.map((r) => r.ms)), peakRss: median(runs.bare.map((r) => r.peakRss)), runs: runs.bare },
    sides: {},
  };
  for (const side of sides) {
    const r = runs[side.name];
    row.sides[side.name] = {
      ms: median(r.map((x) => x.ms)),
      peakRss: median(r.map((x) => x.peakRss)),
      timeRatio: median(r.map((x, i) => x.ms / runs.bare[i].ms)),
      memoryRatio: median(r.map((x, i) => x.peakRss / runs.bare[i].peakRss)),
      runs: r,
    };
  }
  results.scenarios.scale = row;
}

// ---- load scenarios: servers started once, measured alternately --------------------------------
const first = fs.readFileSync(largest.file, 'utf8').split('\n', 1)[0];
const [, subj, pred] = /^(<[^>]*>) (<[^>]*>)/.exec(first);
const POINT = `SELECT ?o WHERE { ${subj} ${pred} ?o }`;
const AGGREGATE = 'SELECT ?p (COUNT(*) AS ?n) WHERE { ?s ?p ?o } GROUP BY ?p';
const pathOf = (id, q) => `/${id}/sparql?query=${encodeURIComponent(q)}`;

/**
 * autocannon on `origin` with `paths` (cycled per connection) for `seconds`; req/s (answers over the
 * run's duration), latency, the server's CPU µs per request (all threads, and its main thread alone: mainCpuUs).
 */
function cannon(origin, paths, pid, seconds = duration, extra = {}) {
  return new Promise((resolve, reject) => {
    const cpu0 = procStats(pid).cpuMs;
    const main0 = mainThreadCpuMs(pid);
    // A fixed-count run (`amount`) ends when autocannon next samples (every `sampleInt` ms, 1 s by
    // default): its duration was rounded up to whole seconds (190 answers in 1.01, 2.01, 4.03 s).
    autocannon(
      {
        url: origin,
        connections,
        duration: seconds,
        ...(extra.amount ? { sampleInt: 10 } : {}),
        ...extra,
        requests: paths.map((p) => ({ method: 'GET', path: p, headers: { accept: 'application/sparql-results+json' } })),
      },
      (err, r) => {
        const per = (ms) => (ms * 1000) / Math.max(1, r?.requests.total ?? 1);
        if (err) return reject(err);
        resolve({
          rps: r.requests.total / r.duration,
          seconds: r.duration,
          p50: r.latency.p50,
          p99: r.latency.p99,
          requests: r.requests.total,
          errors: r.errors + r.timeouts + r.non2xx,
          cpuUs: per(procStats(pid).cpuMs - cpu0),
          mainCpuUs: per(mainThreadCpuMs(pid) - main0),
        });
      },
    );
  });
}

/**
 * Requests of a run of about `seconds` at `rps`: a multiple of the connections, at least two per
 * connection. The load runs send a fixed number of requests and end with the last answer: a run of
 * fixed duration hung up on up to `--connections` requests in flight at its end, and serve stops a
 * query whose client went away by replacing its worker, which then reloaded its group of shards (and
 * a new spare booted) during the next side's run.
 */
const amountFor = (rps, seconds = duration) => connections * Math.max(2, Math.round((rps * seconds) / connections));
/** A discarded warm-up of `perConnection` requests per connection (the first run of a cold process measures its JIT); its req/s sizes the runs. */
const warmUp = (origin, paths, pid, perConnection) => cannon(origin, paths, pid, duration, { amount: connections * perConnection });

const needServers = ['point', 'aggregate', 'all', 'comunica', 'release'].some((k) => scenarios.has(k));
const servers = {};
if (needServers) {
  for (const side of sides) servers[side.name] = await startServe(side);
}

if (scenarios.has('point') || scenarios.has('aggregate')) {
  const bare = track(spawn(process.execPath, [path.join(here, 'bare-oxigraph.js'), largest.file], { stdio: ['ignore', 'pipe', 'inherit'] }));
  const barePort = await new Promise((resolve) => bare.stdout.once('data', (c) => resolve(Number(String(c).trim()))));
  for (const [key, query] of [
    ['point', POINT],
    ['aggregate', AGGREGATE],
  ]) {
    if (!scenarios.has(key)) continue;
    const before = load();
    const runs = { bare: [], ...Object.fromEntries(sides.map((s) => [s.name, []])) };
    // A discarded warm-up of each side first (the first run of a cold process measures its JIT); its
    // req/s sizes that side's runs (amountFor: each run sends a fixed number of requests).
    const perConnection = key === 'point' ? 100 : 3;
    const bareOrigin = `http://127.0.0.1:${barePort}`;
    const barePaths = [`/sparql?query=${encodeURIComponent(query)}`];
    const amounts = { bare: amountFor((await warmUp(bareOrigin, barePaths, bare.pid, perConnection)).rps) };
    for (const side of sides)
      amounts[side.name] = amountFor((await warmUp(`http://127.0.0.1:${servers[side.name].port}`, [pathOf(largest.id, query)], servers[side.name].child.pid, perConnection)).rps);
    // The order of the sides alternates from pair to pair (odd pairs reversed): with a fixed order the
    // side measured last did better at load 20-24 (main's serve 0.93x as the third side, 0.89x as the second).
    const order = [
      () => cannon(bareOrigin, barePaths, bare.pid, duration, { amount: amounts.bare }).then((r) => runs.bare.push(r)),
      ...sides.map(
        (side) => () =>
          cannon(`http://127.0.0.1:${servers[side.name].port}`, [pathOf(largest.id, query)], servers[side.name].child.pid, duration, { amount: amounts[side.name] }).then((r) =>
            runs[side.name].push(r),
          ),
      ),
    ];
    for (let i = 0; i < pairs; i++) {
      for (const measure of i % 2 ? [...order].reverse() : order) await measure();
      log(`${key} ${i + 1}/${pairs}: bare ${runs.bare[i].rps.toFixed(0)} req/s; ${sides.map((s) => `${s.name} ${runs[s.name][i].rps.toFixed(0)}`).join('; ')}`);
    }
    const summary = (r) => ({
      rps: median(r.map((x) => x.rps)),
      p50: median(r.map((x) => x.p50)),
      p99: median(r.map((x) => x.p99)),
      cpuUs: median(r.map((x) => x.cpuUs)),
      mainCpuUs: median(r.map((x) => x.mainCpuUs)),
      errors: r.reduce((n, x) => n + x.errors, 0),
    });
    const row = { load: [before, load()], shard: largest.id, bare: summary(runs.bare), sides: {} };
    for (const side of sides) {
      row.sides[side.name] = {
        ...summary(runs[side.name]),
        ratio: median(runs[side.name].map((x, i) => x.rps / runs.bare[i].rps)),
        cpuRatio: median(runs[side.name].map((x, i) => x.cpuUs / runs.bare[i].cpuUs)),
        mainCpuRatio: median(runs[side.name].map((x, i) => x.mainCpuUs / runs.bare[i].mainCpuUs)),
      };
    }
    results.scenarios[key] = row;
  }
  await stop(bare);
}

if (scenarios.has('all')) {
  const before = load();
  const row = { load: [], sides: {} };
  for (const side of sides) {
    const s = servers[side.name];
    row.sides[side.name] = {
      point: await cannon(
        `http://127.0.0.1:${s.port}`,
        shardList.map((sh) => pathOf(sh.id, `SELECT ?o WHERE { ${/^(<[^>]*> <[^>]*>)/.exec(fs.readFileSync(sh.file, 'utf8').split('\n', 1)[0])[1]} ?o }`)),
        s.child.pid,
      ),
      aggregate: await cannon(
        `http://127.0.0.1:${s.port}`,
        shardList.map((sh) => pathOf(sh.id, AGGREGATE)),
        s.child.pid,
      ),
    };
    log(
      `all shards: ${side.name} point ${row.sides[side.name].point.rps.toFixed(0)} req/s, aggregate ${row.sides[side.name].aggregate.rps.toFixed(0)} req/s (errors ${row.sides[side.name].point.errors + row.sides[side.name].aggregate.errors})`,
    );
  }
  row.load = [before, load()];
  results.scenarios.all = row;
}

if (scenarios.has('comunica')) {
  const before = load();
  const body = fs.readFileSync(largest.file);
  const files = http.createServer((req, res) => res.writeHead(200, { 'Content-Type': 'application/n-triples', 'Content-Length': body.length }).end(body));
  await new Promise((r) => files.listen(0, '127.0.0.1', r));
  const port = await freePort();
  const comunica = track(
    spawn(process.execPath, [path.join(self, 'node_modules/.bin/comunica-sparql-http'), `http://127.0.0.1:${files.address().port}/shard.nt`, '-p', String(port), '-t', '120'], { stdio: 'ignore' }),
  ); // it logs every query on stderr
  // Ready when it answers a query (its first one loads and indexes the file).
  for (;;) {
    const ok = await fetch(`http://127.0.0.1:${port}/sparql?query=${encodeURIComponent(POINT)}`, { headers: { accept: 'application/sparql-results+json' } }).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  const s = servers.serve;
  const row = { load: [], shard: largest.id };
  const comunicaPath = (query) => [`/sparql?query=${encodeURIComponent(query)}`];
  // Comunica's runs send a fixed number of requests and count the time until the last answer, with
  // autocannon's per-request timeout at Comunica's own (120 s). A run of fixed duration dropped the
  // requests still running at its end: Comunica answers the 10 concurrent aggregates together every
  // few seconds (80, 90 or 40 answers in 30 s), so one batch more or less moved its rate by 12–25 %,
  // and at high load a batch took longer than autocannon's default 10 s timeout.
  const comunicaRun = (query, amount) => cannon(`http://127.0.0.1:${port}`, comunicaPath(query), comunica.pid, duration, { amount, timeout: 120 });
  for (const [key, query] of [
    ['point', POINT],
    ['aggregate', AGGREGATE],
  ]) {
    // A discarded warm-up of Comunica, as serve and the bare handler have one (its point query went
    // from 27 to 62 req/s over three runs without). It also gives the number of requests of a run:
    // about `--duration` s (at least 30 s for the aggregate) at the warm-up's rate, a multiple of
    // the connections.
    const warm = await comunicaRun(query, connections * (key === 'aggregate' ? 1 : 20));
    // And serve's (it matters when this scenario runs alone), which sizes serve's runs.
    const serveAmount = amountFor((await warmUp(`http://127.0.0.1:${s.port}`, [pathOf(largest.id, query)], s.child.pid, key === 'point' ? 100 : 3)).rps);
    const amount = amountFor(warm.rps, key === 'aggregate' ? Math.max(duration, 30) : duration);
    log(`comunica ${key}: warm-up ${warm.rps.toFixed(2)} req/s (${warm.requests} answers, ${warm.errors} errors); ${amount} requests per run`);
    // Paired like the other scenarios (it was one run of each side: under changing load the serve
    // run could be 9× slower than in the point scenario a minute before).
    const runs = [];
    for (let i = 0; i < pairs; i++) {
      const c = await comunicaRun(query, amount);
      const v = await cannon(`http://127.0.0.1:${s.port}`, [pathOf(largest.id, query)], s.child.pid, duration, { amount: serveAmount });
      runs.push({ c, v, ratio: v.rps / c.rps });
      log(
        `comunica ${key} ${i + 1}/${pairs}: ${c.rps.toFixed(2)} req/s (${c.requests} answers in ${c.seconds} s, ${c.errors} errors) vs serve ${v.rps.toFixed(0)} req/s (${(v.rps / c.rps).toFixed(1)}×)`,
      );
    }
    const mid = (f) => median(runs.map(f));
    row[key] = {
      comunica: { rps: mid((r) => r.c.rps), errors: runs.reduce((n, r) => n + r.c.errors, 0), warmUpRps: warm.rps, requestsPerRun: amount },
      serve: { rps: mid((r) => r.v.rps) },
      ratio: mid((r) => r.ratio),
      runs,
    };
  }
  row.load = [before, load()];
  results.scenarios.comunica = row;
  await stop(comunica);
  files.close();
}

if (scenarios.has('release')) {
  // 35^k-row cross products never finish; the aggregate needs the full parse path as an agent's queries do.
  const HEAVY = `SELECT (COUNT(*) AS ?n) WHERE { ${Array.from({ length: 6 }, (_, i) => `?s${i} ?p${i} ?o${i} .`).join(' ')} }`;
  const before = load();
  const row = { load: [], shard: largest.id, sides: {} };
  for (const side of sides) {
    const s = servers[side.name];
    const u = s.url(largest.id);
    const n = side.root === self ? Number(o['release-runs']) : 1;
    const gaveUp = [];
    const whileSlow = [];
    for (let i = 0; i < n; i++) {
      // The client gives up after 1 s; then ASK {} to the same endpoint.
      await fetch(u, { method: 'POST', headers: { 'content-type': 'application/sparql-query' }, body: HEAVY, signal: AbortSignal.timeout(1000) }).catch(() => {});
      const t = performance.now();
      await (await fetch(`${u}?query=ASK%7B%7D`)).text();
      gaveUp.push(performance.now() - t);
      if (side.root !== self) continue;
      // The client keeps waiting (up to 20 s); an ASK to the same endpoint 100 ms later.
      const ac = new AbortController();
      const slow = fetch(u, { method: 'POST', headers: { 'content-type': 'application/sparql-query' }, body: HEAVY, signal: ac.signal }).catch(() => {});
      await new Promise((r) => setTimeout(r, 100));
      const t2 = performance.now();
      await (await fetch(`${u}?query=ASK%7B%7D`)).text();
      whileSlow.push(performance.now() - t2);
      ac.abort();
      await slow;
      // Let the replacement worker reload its group before the next run.
      await new Promise((r) => setTimeout(r, 2000));
    }
    row.sides[side.name] = { askAfterGiveUpMs: median(gaveUp), runs: gaveUp, ...(whileSlow.length ? { askWhileSlowMs: median(whileSlow), whileSlowRuns: whileSlow } : {}) };
    log(
      `release: ${side.name}: ASK answered ${gaveUp.map((x) => x.toFixed(0)).join(', ')} ms after the client gave up${whileSlow.length ? `; during a slow query ${whileSlow.map((x) => x.toFixed(0)).join(', ')} ms` : ''}`,
    );
  }
  row.load = [before, load()];
  results.scenarios.release = row;
}

for (const side of sides) {
  if (!servers[side.name]) continue;
  servers[side.name].peakAfter = procStats(servers[side.name].child.pid).peakRss;
  await stop(servers[side.name].child);
}

// ---- report ---------------------------------------------------------------------------------------
const R = results.scenarios;
const lines = [
  `fkgqa serve on ${shards}: ${shardList.length} shard endpoints, ${results.machine.triples} triples (${results.machine.cores} cores, node ${process.version}; ${pairs} pairs, ${duration} s × ${connections} connections per load run)`,
];
const row = (what, value, ratio, ld) => lines.push(`  ${what.padEnd(58)} ${value.padEnd(44)} ${ratio.padEnd(22)} load ${ld.join(' → ')}`);
if (R.startup) {
  row('startup: bare loader (one process, every shard)', `${s2(R.startup.bare.ms)}, ${mib(R.startup.bare.peakRss)}`, '', R.startup.load);
  for (const [name, v] of Object.entries(R.startup.sides))
    row(`startup until every endpoint answers: ${name}`, `${s2(v.ms)}, ${mib(v.peakRss)}`, `${v.timeRatio.toFixed(2)}× time, ${v.memoryRatio.toFixed(2)}× mem`, R.startup.load);
}
if (R.scale) {
  row(`scale: bare loader, ${R.scale.shards} shards, ${R.scale.triples} triples`, `${s2(R.scale.bare.ms)}, ${mib(R.scale.bare.peakRss)}`, '', R.scale.load);
  for (const [name, v] of Object.entries(R.scale.sides))
    row(`scale: start-up until every endpoint answers: ${name}`, `${s2(v.ms)}, ${mib(v.peakRss)}`, `${v.timeRatio.toFixed(2)}× time, ${v.memoryRatio.toFixed(2)}× mem`, R.scale.load);
}
for (const key of ['point', 'aggregate']) {
  if (!R[key]) continue;
  const v = R[key];
  row(`${key} query, ${v.shard}: bare node:http + oxigraph`, `${v.bare.rps.toFixed(0)} req/s, ${v.bare.cpuUs.toFixed(0)} µs CPU/req (main thread ${v.bare.mainCpuUs.toFixed(0)})`, '', v.load);
  for (const [name, x] of Object.entries(v.sides))
    row(
      `${key} query, ${v.shard}: ${name}`,
      `${x.rps.toFixed(0)} req/s, ${x.cpuUs.toFixed(0)} µs CPU/req (main thread ${x.mainCpuUs.toFixed(0)}), p99 ${x.p99} ms`,
      `${x.ratio.toFixed(2)}× (CPU ${x.cpuRatio.toFixed(2)}×, main ${x.mainCpuRatio.toFixed(2)}×)`,
      v.load,
    );
}
if (R.all)
  for (const [name, x] of Object.entries(R.all.sides)) row(`all ${shardList.length} shards: ${name}`, `point ${x.point.rps.toFixed(0)}, aggregate ${x.aggregate.rps.toFixed(0)} req/s`, '', R.all.load);
if (R.comunica)
  for (const key of ['point', 'aggregate'])
    row(
      `${key} query vs Comunica's endpoint over the shard file`,
      `${R.comunica[key].comunica.rps.toFixed(2)} vs ${R.comunica[key].serve.rps.toFixed(0)} req/s`,
      `serve ${R.comunica[key].ratio.toFixed(1)}× faster`,
      R.comunica.load,
    );
if (R.release) {
  for (const [name, x] of Object.entries(R.release.sides)) {
    row(`ASK after the client gave up (1 s), ${R.release.shard}: ${name}`, `${x.askAfterGiveUpMs.toFixed(0)} ms (median of ${x.runs.length})`, '', R.release.load);
    if (x.askWhileSlowMs !== undefined) row(`ASK while a slow query's client waits: ${name}`, `${x.askWhileSlowMs.toFixed(0)} ms (median of ${x.whileSlowRuns.length})`, '', R.release.load);
  }
}
for (const side of sides) if (servers[side.name]) lines.push(`  peak RSS of ${side.name} over the load scenarios: ${mib(servers[side.name].peakAfter)}`);
console.log(lines.join('\n'));
if (o.json) fs.writeFileSync(o.json, JSON.stringify(results, null, 2) + '\n');
if (o.result) {
  // Only this checkout's serve; each ratio with its goal.
  const ratios = [];
  const v = (x) => Math.round(x * 100) / 100;
  if (R.startup) {
    ratios.push({
      what: 'serve start-up until every endpoint answers vs one process loading the same shards into oxigraph (paired)',
      value: v(R.startup.sides.serve.timeRatio),
      unit: '× time',
      goal: '≤ 2',
    });
    ratios.push({ what: 'serve peak memory at start-up vs the same bare load (paired)', value: v(R.startup.sides.serve.memoryRatio), unit: '× memory', goal: '≤ 2' });
  }
  if (R.scale) {
    ratios.push({ what: `serve start-up vs the bare loader on a synthetic build of ${R.scale.triples} triples (paired)`, value: v(R.scale.sides.serve.timeRatio), unit: '× time', goal: '≤ 2' });
    ratios.push({ what: `serve peak memory at start-up vs the bare loader, ${R.scale.triples} triples (paired)`, value: v(R.scale.sides.serve.memoryRatio), unit: '× memory', goal: '≤ 2' });
  }
  if (R.point)
    ratios.push({
      what: `point query on ${R.point.shard} vs a bare node:http + oxigraph handler (paired req/s)`,
      value: v(R.point.sides.serve.ratio),
      unit: '× throughput',
      goal: '≥ 0.8',
      note: `CPU per request ${v(R.point.sides.serve.cpuRatio)}×, main thread's ${v(R.point.sides.serve.mainCpuRatio)}× (${Math.round(R.point.sides.serve.mainCpuUs)} vs ${Math.round(R.point.bare.mainCpuUs)} µs)`,
    });
  if (R.aggregate)
    ratios.push({ what: `aggregate query on ${R.aggregate.shard} vs the same bare handler (paired req/s)`, value: v(R.aggregate.sides.serve.ratio), unit: '× throughput', goal: 'keep ≥ 0.84' });
  if (R.comunica)
    for (const key of ['point', 'aggregate'])
      ratios.push({ what: `${key} query: serve vs Comunica's endpoint over the shard file`, value: v(R.comunica[key].ratio), unit: '× throughput', goal: 'keep ≥ 10' });
  const figures = {
    scale: R.scale && { triples: R.scale.triples, bareMs: R.scale.bare.ms, bareMiB: R.scale.bare.peakRss / 1048576, serveMs: R.scale.sides.serve.ms, serveMiB: R.scale.sides.serve.peakRss / 1048576 },
    startup: R.startup && { bareMs: R.startup.bare.ms, bareMiB: R.startup.bare.peakRss / 1048576, serveMs: R.startup.sides.serve.ms, serveMiB: R.startup.sides.serve.peakRss / 1048576 },
    release: R.release?.sides.serve,
    servePeakMiB: servers.serve ? servers.serve.peakAfter / 1048576 : undefined,
    shards: shardList.length,
    triples: results.machine.triples,
  };
  const firstLoad = Object.values(R)[0]?.load?.[0];
  fs.writeFileSync(
    o.result,
    JSON.stringify(
      {
        bench: 'serve',
        ratios,
        figures,
        loadBefore: firstLoad ? firstLoad.split(' ').map(Number) : os.loadavg(),
        loadAfter: os.loadavg().map((x) => Math.round(x * 10) / 10),
        node: process.version,
        cpus: os.availableParallelism(),
      },
      null,
      2,
    ) + '\n',
  );
}
fs.rmSync(tmp, { recursive: true, force: true });
