// npm run bench:virtuoso [-- --shards DIR] [-- --hosts 127.0.0.2,127.0.0.3] [-- --point N] [-- --aggregate N]
//                        [-- --connections N] [-- --result FILE]
//
// `fkgqa serve --store virtuoso` vs `fkgqa serve` (oxigraph) side by side, one run, on the same build
// (default: the dev build of the real corpus, built here into a temp folder), with the load average
// (`uptime`) before and after each side:
// - startup: from spawn until serve prints its endpoints (every endpoint loaded and answering);
// - memory: resident memory once started (VmRSS), of serve and, for Virtuoso, of its virtuoso-t
//   processes (summed), and serve's peak (VmHWM);
// - point / aggregate: `--point` point queries (`SELECT ?p ?o WHERE { <s> ?p ?o }`, subjects of the
//   largest shard in turn) and `--aggregate` aggregate queries (`SELECT ?p (COUNT(*) AS ?n) … GROUP BY
//   ?p`) on the largest shard's endpoint through fkgqa's endpoint layer, `--connections` at once:
//   queries per second and the median latency in ms.
// The machine is shared: the figures are this run's, beside its load; rerun on a quiet machine for absolute ones.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { benchOptions, here, loadAverage, median, writeResult } from './lib.js';

const o = benchOptions({ shards: '', hosts: '127.0.0.2,127.0.0.3', point: '400', aggregate: '40', connections: '4' });
const BIN = path.join(here, '../bin/fkgqa.js');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'fkgqa-bench-virtuoso-'));

/** The build to serve: --shards, else the dev build made here. */
function buildDir() {
  if (o.shards) return path.resolve(o.shards);
  const out = path.join(tmp, 'shards');
  process.stderr.write(`bench:virtuoso: building the dev set into ${out}\n`);
  execFileSync(process.execPath, [BIN, 'partition', '--source', o.source, '--out', out, '-q'], { stdio: 'inherit' });
  return out;
}

/** kB of a /proc/<pid>/status field (VmRSS, VmHWM), or 0 when the process is gone. */
function procKb(pid, field) {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

/** The pids of a process's children (Linux `/proc/<pid>/task/<tid>/children`). */
function children(pid) {
  try {
    return fs.readdirSync(`/proc/${pid}/task`).flatMap((t) => fs.readFileSync(`/proc/${pid}/task/${t}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number));
  } catch {
    return [];
  }
}

/** Starts a serve and resolves with its endpoints once it printed them, and the time that took. */
function startServe(shards, store) {
  const state = path.join(tmp, `${store}.state`);
  const args = [
    BIN,
    'serve',
    '--shards',
    shards,
    '--port',
    '0',
    '--state',
    state,
    '--timeout',
    '60000',
    '-q',
    ...(store === 'virtuoso' ? ['--store', 'virtuoso', '--store-host', ...o.hosts.split(',')] : []),
  ];
  const t0 = performance.now();
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr.on('data', (c) => (err += c));
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (c) => {
      out += c;
      if (out.endsWith('\n'))
        resolve({
          child,
          ms: performance.now() - t0,
          endpoints: new Map(
            out
              .trim()
              .split('\n')
              .map((l) => l.split('\t')),
          ),
          state,
        });
    });
    child.once('exit', (code) => reject(new Error(`fkgqa serve --store ${store} exited (${code}): ${err}`)));
  });
}

/** Runs `n` queries (`make(i)` gives the i-th) over `connections` at once; queries per second and median latency. */
async function load(url, n, make) {
  const ms = [];
  let next = 0;
  const t0 = performance.now();
  const worker = async () => {
    while (next < n) {
      const i = next++;
      const s = performance.now();
      const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/sparql-query', accept: 'application/sparql-results+json' }, body: make(i) });
      await r.arrayBuffer();
      if (!r.ok) throw new Error(`${url}: HTTP ${r.status} for ${make(i).slice(0, 100)}`);
      ms.push(performance.now() - s);
    }
  };
  await Promise.all(Array.from({ length: Number(o.connections) }, worker));
  return { qps: Math.round((n / (performance.now() - t0)) * 1000 * 10) / 10, medianMs: Math.round(median(ms) * 10) / 10 };
}

/** The largest shard of the build (its endpoint id and file) and subjects from it. */
function largestShard(shards) {
  let best;
  for (const g of fs.readdirSync(shards)) {
    const m = path.join(shards, g, 'manifest.json');
    if (!fs.existsSync(m)) continue;
    for (const s of JSON.parse(fs.readFileSync(m, 'utf8')).shards) if (!best || s.triples > best.triples) best = { ...s, file: path.join(shards, g, s.file) };
  }
  const subjects = [
    ...new Set(
      fs
        .readFileSync(best.file, 'utf8')
        .split('\n')
        .map((l) => /^<([^>]+)>/.exec(l)?.[1])
        .filter(Boolean),
    ),
  ];
  return { id: best.endpoint, triples: best.triples, subjects };
}

const shards = buildDir();
const shard = largestShard(shards);
const sides = {};
const loadBefore = loadAverage();
for (const store of ['oxigraph', 'virtuoso']) {
  const before = loadAverage();
  const s = await startServe(shards, store);
  const stop = () =>
    new Promise((resolve) => {
      if (s.child.exitCode !== null) return resolve();
      s.child.once('exit', resolve);
      s.child.kill('SIGTERM');
    });
  let rssKb, virtuosoKb, point, aggregate, hwmKb;
  try {
    rssKb = procKb(s.child.pid, 'VmRSS');
    virtuosoKb = children(s.child.pid).reduce((n, pid) => n + procKb(pid, 'VmRSS'), 0);
    const url = s.endpoints.get(shard.id);
    if (!url) throw new Error(`serve --store ${store} did not list ${shard.id}`);
    point = await load(url, Number(o.point), (i) => `SELECT ?p ?o WHERE { <${shard.subjects[i % shard.subjects.length]}> ?p ?o }`);
    aggregate = await load(url, Number(o.aggregate), () => 'SELECT ?p (COUNT(*) AS ?n) WHERE { ?s ?p ?o } GROUP BY ?p');
    hwmKb = procKb(s.child.pid, 'VmHWM');
  } finally {
    await stop();
  }
  sides[store] = {
    startupMs: Math.round(s.ms),
    serveRssMiB: Math.round(rssKb / 1024),
    storeRssMiB: Math.round(virtuosoKb / 1024),
    servePeakMiB: Math.round(hwmKb / 1024),
    point,
    aggregate,
    load: { before, after: loadAverage() },
  };
}

const row = (what, f) => `  ${what.padEnd(34)}${String(f(sides.oxigraph)).padStart(14)}${String(f(sides.virtuoso)).padStart(14)}`;
const endpoints = JSON.parse(fs.readFileSync(path.join(shards, 'build.json'), 'utf8'));
process.stdout.write(
  [
    `bench:virtuoso: ${shards} (${endpoints.outputDigest?.slice(0, 12) ?? '?'}…), largest shard ${shard.id} (${shard.triples} triples); Virtuoso on ${o.hosts}; ${o.connections} connections; ${os.availableParallelism()} cores`,
    `  ${''.padEnd(34)}${'oxigraph'.padStart(14)}${'virtuoso'.padStart(14)}`,
    row('startup (s)', (s) => (s.startupMs / 1000).toFixed(1)),
    row('memory: serve RSS (MiB)', (s) => s.serveRssMiB),
    row('memory: virtuoso-t RSS (MiB)', (s) => s.storeRssMiB),
    row('memory: serve + store (MiB)', (s) => s.serveRssMiB + s.storeRssMiB),
    row(`point: ${o.point} queries, q/s`, (s) => s.point.qps),
    row('point: median latency (ms)', (s) => s.point.medianMs),
    row(`aggregate: ${o.aggregate} queries, q/s`, (s) => s.aggregate.qps),
    row('aggregate: median latency (ms)', (s) => s.aggregate.medianMs),
    `  load average (uptime) before/after: oxigraph ${sides.oxigraph.load.before.join(' ')} / ${sides.oxigraph.load.after.join(' ')}; virtuoso ${sides.virtuoso.load.before.join(' ')} / ${sides.virtuoso.load.after.join(' ')}`,
    '',
  ].join('\n'),
);
writeResult(o, 'virtuoso', {
  ratios: [
    { what: 'startup, virtuoso / oxigraph', value: sides.virtuoso.startupMs / sides.oxigraph.startupMs },
    { what: 'point q/s, virtuoso / oxigraph', value: sides.virtuoso.point.qps / sides.oxigraph.point.qps },
    { what: 'aggregate q/s, virtuoso / oxigraph', value: sides.virtuoso.aggregate.qps / sides.oxigraph.aggregate.qps },
  ],
  figures: sides,
  loadBefore,
});
fs.rmSync(tmp, { recursive: true, force: true });
