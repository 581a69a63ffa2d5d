// Scores a build can be trusted with, measured: the oracle and trivial agents over every distinct gold query
// of a build (`fkgqa eval --agent oracle|trivial --distinct-queries`), scored by `fkgqa score`;
// prints the accuracy over executable gold and each remaining miss with its reason, with the load
// (uptime) before and after and the time taken.
//
//   npm run bench:scripted -- --shards devbuild [--state DIR] [--out DIR] [--timeout 60000]
//
// It starts `fkgqa serve` on the build (its endpoints' own time limit = --timeout), runs eval for
// each agent (runs already in --out/<agent>.jsonl are kept: the script resumes), scores the run
// files and stops the serve it started. Needs the gold answers of `fkgqa stats` in the state folder.
// Options: --agents oracle,trivial; --concurrency 2; --tools in-process (or mcp); --probe (the
// scripted agents then run their query once with run_sparql_query before submitting it, as an agent
// would; by default they submit at once); --max-query-chars 1000000 (scripted forms longer than the
// reference server's 8,000 characters are not the agent's fault); --federation-engine; --kg a,b (only
// these graphs); --max-seconds N (stop each agent's eval with SIGINT after N s: the runs it finished
// are kept and scored, the summary names the queries not run — a subset, when the time is short);
// --score-only (no serve, no eval: score the run files already in --out).
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { benchOptions, here } from './lib.js';

const o = benchOptions(
  {
    shards: 'shards',
    state: '',
    out: 'scripted-runs',
    timeout: '60000',
    agents: 'oracle,trivial',
    concurrency: '2',
    tools: 'in-process',
    'max-query-chars': '1000000',
    'federation-engine': '',
    kg: '',
    'max-seconds': '',
  },
  ['probe', 'score-only'],
);
const cli = path.resolve(here, '../bin/fkgqa.js');
const state = o.state || `${path.resolve(o.shards)}.state`;
const load = () => execFileSync('uptime', { encoding: 'utf8' }).trim();
const log = (line) => process.stderr.write(`scripted-agents: ${line}\n`);
fs.mkdirSync(o.out, { recursive: true });

const loadBefore = load();
const t0 = Date.now();
log(`load before: ${loadBefore}`);

const run = (args, maxSeconds = 0) =>
  new Promise((resolve) => {
    const child = spawn(process.execPath, [cli, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    let stopped = false;
    const timer = maxSeconds > 0 ? setTimeout(() => ((stopped = true), log(`stopping eval after ${maxSeconds} s (--max-seconds)`), child.kill('SIGINT')), maxSeconds * 1000) : undefined;
    child.stdout.on('data', (d) => (out += d));
    child.on('exit', (code) => (clearTimeout(timer), resolve({ code, out, stopped })));
  });

const files = [];
const evalMs = {};
const stoppedAgents = new Set();
if (o['score-only']) for (const agent of o.agents.split(',')) files.push(path.join(o.out, `${agent}.jsonl`));
else {
  // 1. serve, until it has printed one line per endpoint and exited the loading phase.
  const serve = spawn(process.execPath, [cli, 'serve', '--shards', o.shards, '--state', state, '--timeout', o.timeout, '--port', '0', '-q'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const serveExit = new Promise((resolve) => serve.on('exit', (code, signal) => resolve({ code, signal })));
  await new Promise((resolve, reject) => {
    const rl = readline.createInterface({ input: serve.stdout });
    let lines = 0;
    rl.on('line', () => lines++);
    // serve prints all endpoint lines at once, when every endpoint listens and endpoints.json is written.
    const check = setInterval(() => {
      if (lines > 0 && fs.existsSync(path.join(state, 'endpoints.json'))) {
        clearInterval(check);
        log(`serve: ${lines} endpoints`);
        resolve();
      }
    }, 200);
    serveExit.then(({ code, signal }) => {
      clearInterval(check);
      reject(new Error(`fkgqa serve exited (${code ?? signal}) before it served`));
    });
  });

  try {
    // 2. eval, one agent after the other.
    for (const agent of o.agents.split(',')) {
      const file = path.join(o.out, `${agent}.jsonl`);
      files.push(file);
      const t = Date.now();
      const args = [
        'eval',
        '--shards',
        o.shards,
        '--state',
        state,
        '--agent',
        agent,
        '--distinct-queries',
        '--timeout',
        o.timeout,
        '--tools',
        o.tools,
        '--concurrency',
        o.concurrency,
        '--max-query-chars',
        o['max-query-chars'],
        '--out',
        file,
        ...(o.probe ? [] : ['--no-probe']),
        ...(o['federation-engine'] ? ['--federation-engine', o['federation-engine']] : []),
        ...(o.kg ? ['--kg', ...o.kg.split(',')] : []),
      ];
      log(`fkgqa ${args.join(' ')}`);
      const r = await run(args, Number(o['max-seconds'] || 0));
      evalMs[agent] = Date.now() - t;
      if (r.stopped) stoppedAgents.add(agent);
      log(`${agent}: eval exited ${r.code}${r.stopped ? ' (stopped by --max-seconds)' : ''} after ${Math.round(evalMs[agent] / 1000)} s`);
    }
  } finally {
    serve.kill('SIGTERM');
    await serveExit;
  }
}

// 3. score.
const scoreArgs = ['score', ...files.filter((f) => fs.existsSync(f)), '--shards', o.shards, '--state', state, '--format', 'json', '-q'];
const s = await run(scoreArgs);
if (s.code !== 0) {
  log(`fkgqa ${scoreArgs.join(' ')} exited ${s.code}`);
  process.exit(1);
}
const report = JSON.parse(s.out);
fs.writeFileSync(path.join(o.out, 'score.json'), s.out);
const distinct = new Set(JSON.parse(fs.readFileSync(path.join(o.shards, 'benchmark.json'), 'utf8')).entries.map((e) => e.queryId)).size;
const lines = [
  `scripted agents over the ${distinct} distinct gold queries of ${path.resolve(o.shards)} (time limit ${o.timeout} ms, ${o.tools} tools, concurrency ${o.concurrency}${o.probe ? ', probe' : ''})`,
];
for (const w of report.warnings) lines.push(`warning: ${w}`);
for (const g of report.groups) {
  const runs = report.perRun.filter((r) => r.group === g.group);
  const missed = runs.filter((r) => r.counted && r.gold === 'ok' && !r.correct);
  lines.push('');
  lines.push(
    `== ${g.agent}: ${g.runs} runs of ${distinct} distinct queries; eval ${Math.round((evalMs[g.agent] ?? 0) / 1000)} s${stoppedAgents.has(g.agent) ? ' (stopped by --max-seconds: a subset)' : ''}${o.kg ? ` (--kg ${o.kg})` : ''}`,
  );
  lines.push(
    `accuracy over executable gold: ${g.accuracyExecutableGold.count}/${g.accuracyExecutableGold.of} = ${g.accuracyExecutableGold.percent} %` +
      ` (without the necessarily empty answers: ${g.accuracyWithoutNecessarilyEmpty.count}/${g.accuracyWithoutNecessarilyEmpty.of} = ${g.accuracyWithoutNecessarilyEmpty.percent} %; accepted through ties: ${g.byTies} top-level, ${g.byAlternative} sub-SELECT)`,
  );
  lines.push(
    `ended: ${Object.entries(g.endReasons)
      .filter(([, n]) => n > 0)
      .map(([k, n]) => `${k} ${n}`)
      .join(', ')}`,
  );
  const noGold = runs.filter((r) => r.gold !== 'ok');
  if (noGold.length) lines.push(`not executable gold (${noGold.length}): ${noGold.map((r) => `${r.queryId} (${r.gold})`).join(', ')}`);
  const failed = runs.filter((r) => !r.counted);
  if (failed.length) lines.push(`failed runs (${failed.length}, not in accuracy): ${failed.map((r) => `${r.queryId} [${r.endReason}]: ${r.infrastructure ?? r.modelError}`).join('; ')}`);
  const seen = new Set(runs.map((r) => r.queryId));
  const notRun = [...new Set(JSON.parse(fs.readFileSync(path.join(o.shards, 'benchmark.json'), 'utf8')).entries.map((e) => e.queryId))].filter((q) => !seen.has(q));
  if (notRun.length) lines.push(`not run (${notRun.length}): ${notRun.join(', ')}`);
  lines.push(`misses (${missed.length}):`);
  for (const r of missed) lines.push(`  ${r.queryId} [${r.endReason}, ${r.seconds} s]: ${r.reason}`);
}
lines.push('', `load before: ${loadBefore}`, `load after:  ${load()}`, `total ${Math.round((Date.now() - t0) / 1000)} s`);
process.stdout.write(lines.join('\n') + '\n');
fs.writeFileSync(path.join(o.out, 'summary.txt'), lines.join('\n') + '\n');
