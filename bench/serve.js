// npm run bench:serve [-- --shards DIR] [-- --connections N] [-- --duration S] [-- --startups N] [-- --worker-per shard|graph]
//                     [-- --kg NAME,NAME] [-- --scenarios point-one,aggregate-one,point-all,aggregate-all,bare]
// Load figures of `fkgqa serve` (a benchmark, not a test): startup time of all endpoints, then
// autocannon 9 with N concurrent clients for S seconds per scenario: a point query and an
// aggregate query, on one shard and across all shards (requests cycle over every shard endpoint),
// and the baseline `bare`: the same point query on the same shard held by oxigraph behind a bare
// node:http handler in one process (bench/bare-oxigraph.js), i.e. what serve's protocol handling,
// worker thread and log cost. The server runs in its own process; without --shards the
// Spider4SPARQL dev set is built first. --kg serves only those graphs (faster startup).
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { benchOptions, here } from './lib.js';

const cli = path.resolve(here, '../bin/fkgqa.js');
const options = benchOptions({ connections: '10', duration: '10', startups: '3', 'worker-per': 'shard', shards: '', kg: '', scenarios: 'point-one,aggregate-one,point-all,aggregate-all,bare' });
const kgs = options.kg ? options.kg.split(',') : [];
const scenarios = new Set(options.scenarios.split(','));
const connections = Number(options.connections);
const duration = Number(options.duration);
const startups = Number(options.startups);
const workerPer = options['worker-per'];
let shards = options.shards || undefined;
if (!shards) {
  const source = options.source;
  if (!fs.existsSync(path.join(source, 'dev.json'))) {
    console.error(`bench:serve: no --shards and no corpus at ${source}`);
    process.exit(2);
  }
  shards = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'fkgqa-bench-serve-')), 'shards');
  process.stderr.write(`building the dev set into ${shards}\n`);
  execFileSync(process.execPath, [cli, 'partition', '--source', source, '--out', shards, '--quiet'], { stdio: 'ignore' });
}

/** Starts `fkgqa serve`; resolves when every endpoint is listed on stdout. */
function startServer() {
  const t0 = performance.now();
  const kgArgs = kgs.length ? ['--kg', ...kgs] : [];
  const child = spawn(process.execPath, [cli, 'serve', '--shards', shards, '--port', '0', '--quiet', '--timeout', '10000', '--worker-per', workerPer, ...kgArgs], { stdio: ['ignore', 'pipe', 'inherit'] });
  const expected = fs
    .readdirSync(shards)
    .filter((g) => fs.existsSync(path.join(shards, g, 'manifest.json')) && (kgs.length === 0 || kgs.includes(g)))
    .map((g) => JSON.parse(fs.readFileSync(path.join(shards, g, 'manifest.json'), 'utf8')).shards.length)
    .reduce((a, b) => a + b, 0);
  return new Promise((resolve, reject) => {
    let out = '';
    child.on('exit', (code) => reject(new Error(`fkgqa serve exited with ${code}`)));
    child.stdout.on('data', (c) => {
      out += c;
      const lines = out.split('\n').filter(Boolean);
      if (lines.length >= expected) {
        child.removeAllListeners('exit');
        resolve({ child, ms: performance.now() - t0, endpoints: lines.map((l) => l.split('\t')) });
      }
    });
  });
}

const stop = (child) => new Promise((resolve) => (child.kill('SIGTERM'), child.on('exit', resolve)));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

// Startup: fresh processes, time until all endpoints answer (the CLI prints them then).
const startMs = [];
let server;
for (let i = 0; i < startups; i++) {
  server = await startServer();
  startMs.push(server.ms);
  process.stderr.write(`startup ${i + 1}/${startups}: ${(server.ms / 1000).toFixed(2)} s, ${server.endpoints.length} endpoints\n`);
  if (i < startups - 1) await stop(server.child);
}
const rss = Number(execFileSync('ps', ['-o', 'rss=', '-p', String(server.child.pid)], { encoding: 'utf8' }).trim()) * 1024;

// Per shard: a point query (first triple's subject and predicate) and an aggregate query.
const perShard = server.endpoints.map(([id, url]) => {
  const [kg, shard] = id.split(/-(?=shard\d+$)/);
  const first = fs.readFileSync(path.join(shards, kg, `${shard}.nt`), 'utf8').split('\n', 1)[0];
  const [, s, p] = /^(<[^>]*>) (<[^>]*>)/.exec(first);
  const u = new URL(url);
  return {
    id,
    origin: u.origin,
    point: `${u.pathname}?query=${encodeURIComponent(`SELECT ?o WHERE { ${s} ${p} ?o }`)}`,
    aggregate: `${u.pathname}?query=${encodeURIComponent('SELECT ?p (COUNT(*) AS ?n) WHERE { ?s ?p ?o } GROUP BY ?p')}`,
  };
});
// "One shard": the largest shard of world_1 (25,315 triples on the dev build).
const one = perShard.find((e) => e.id === 'world_1-shard1') ?? perShard[0];

/** CPU time (user + system, all threads) of a process so far, in ms (Linux /proc; NaN elsewhere). */
function cpuMs(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(f[11]) + Number(f[12])) * 1000) / 100; // utime + stime, in clock ticks of 1/100 s
  } catch {
    return NaN;
  }
}

// req/s depends on what else runs on the machine; the server's CPU time per request much less so.
function run(title, paths, origin = one.origin, pid = server.child.pid) {
  return new Promise((resolve, reject) => {
    const cpu0 = cpuMs(pid);
    autocannon(
      { url: origin, connections, duration, requests: paths.map((p) => ({ method: 'GET', path: p, headers: { accept: 'application/sparql-results+json' } })) },
      (err, r) =>
        err
          ? reject(err)
          : resolve({ title, rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, total: r.requests.total, errors: r.errors + r.timeouts + r.non2xx, cpuUs: ((cpuMs(pid) - cpu0) * 1000) / r.requests.total }),
    );
  });
}

const results = [];
for (const [key, title, paths] of [
  ['point-one', `point query, one shard (${one.id})`, [one.point]],
  ['aggregate-one', `aggregate query, one shard (${one.id})`, [one.aggregate]],
  ['point-all', `point query, all ${perShard.length} shards`, perShard.map((e) => e.point)],
  ['aggregate-all', `aggregate query, all ${perShard.length} shards`, perShard.map((e) => e.aggregate)],
]) {
  if (!scenarios.has(key)) continue;
  process.stderr.write(`${title}: ${duration} s, ${connections} connections\n`);
  results.push(await run(title, paths));
}
await stop(server.child);

// Baseline: the same point query on the same shard, oxigraph behind a bare handler in one process.
if (scenarios.has('bare')) {
  const [kg, shard] = one.id.split(/-(?=shard\d+$)/);
  const bare = spawn(process.execPath, [path.join(here, 'bare-oxigraph.js'), path.join(shards, kg, `${shard}.nt`)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise((resolve, reject) => {
    bare.on('exit', (code) => reject(new Error(`bare-oxigraph exited with ${code}`)));
    bare.stdout.once('data', (c) => resolve(Number(String(c).trim())));
  });
  bare.removeAllListeners('exit');
  const title = `baseline: point query, bare oxigraph (${one.id})`;
  process.stderr.write(`${title}: ${duration} s, ${connections} connections\n`);
  const pointPath = new URL(one.point, one.origin);
  results.push(await run(title, [`/sparql${pointPath.search}`], `http://127.0.0.1:${port}`, bare.pid));
  await stop(bare);
}

console.log(`fkgqa serve --worker-per ${workerPer} on ${shards}: ${perShard.length} shard endpoints (${os.cpus().length} cores, node ${process.version}, autocannon 9)`);
console.log(`  startup (all endpoints answering)  median ${(median(startMs) / 1000).toFixed(2)} s of ${startups} (${startMs.map((m) => (m / 1000).toFixed(2)).join(', ')}); RSS ${(rss / 1048576).toFixed(0)} MiB`);
console.log(`  ${'scenario'.padEnd(52)} ${'req/s'.padStart(8)} ${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)} ${'requests'.padStart(9)} ${'errors'.padStart(7)} ${'CPU µs/req'.padStart(11)}`);
for (const r of results) {
  console.log(`  ${r.title.padEnd(52)} ${r.rps.toFixed(0).padStart(8)} ${String(r.p50).padStart(7)} ${String(r.p99).padStart(7)} ${String(r.total).padStart(9)} ${String(r.errors).padStart(7)} ${r.cpuUs.toFixed(0).padStart(11)}`);
}
