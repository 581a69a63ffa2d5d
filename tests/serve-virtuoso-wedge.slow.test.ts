/**
 * `fkgqa serve --store virtuoso` when its Virtuoso instance stops answering after queries stopped at
 * their time limits: heavy cross products are stopped by fkgqa (503), and the instance then answers
 * nothing, as an instance does whose HTTP threads are all held by stopped queries running on inside
 * it (its port accepts connections, nothing is answered, 0% CPU). That state is made certain here by
 * stopping the process (SIGSTOP). The store probes the instance after a query is stopped, restarts
 * it on its database files, answers 500 (the store failed, never the 503 time limit) while it
 * restarts, and then answers the shard's queries again with all its triples. A query that arrives
 * while the probe runs is held until its verdict: run when the instance answers it (a stop the
 * process comes back from, SIGCONT), answered 500 when it is restarted. Needs Virtuoso
 * (skipped where it is missing, failing in CI: `virtuosoTestsRun`).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serve, type ShardServer } from '../src/serve/server.js';
import { demoBuild, tmpDir, virtuosoTestsRun } from './helpers.js';

const run = virtuosoTestsRun();
const JSON_RESULTS = 'application/sparql-results+json';

/** A promise settled with the first progress line matching `re`, among `lines` seen so far or to come. */
function lineMatching(lines: string[], waiters: [RegExp, (line: string) => void][], re: RegExp): Promise<string> {
  const seen = lines.find((l) => re.test(l));
  if (seen) return Promise.resolve(seen);
  return new Promise((resolve) => waiters.push([re, resolve]));
}

/**
 * Resolves once every thread of process `pid` is in a state `states` lists (/proc/<pid>/task/<tid>/stat),
 * or the process is gone: a signal takes effect on each thread when it is next scheduled, not at `kill`.
 */
async function threadsIn(pid: number, states: RegExp): Promise<void> {
  for (;;) {
    let tasks: string[];
    try {
      tasks = fs.readdirSync(`/proc/${pid}/task`);
    } catch {
      return;
    }
    const stateOf = (tid: string) => {
      try {
        return /\) (\S)/.exec(fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8'))?.[1] ?? 'X';
      } catch {
        return 'X';
      }
    };
    if (tasks.every((t) => states.test(stateOf(t)))) return;
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** The first pid of the instance of the build's only Virtuoso folder (its pid file). */
function instancePid(build: string): number {
  const folders = fs.readdirSync(path.join(`${build}.state`, 'virtuoso'));
  expect(folders).toHaveLength(1);
  return Number(fs.readFileSync(path.join(`${build}.state`, 'virtuoso', folders[0], 'fkgqa-virtuoso.pid'), 'utf8'));
}

/**
 * Sends a query with `send` and resolves once the server counts it among the endpoint's running or
 * held queries (`queriesRunning`), or it was answered: `held` says which came first.
 */
async function arrival<T>(server: ShardServer, endpoint: string, send: () => Promise<T>): Promise<{ held: boolean; answer: Promise<T> }> {
  const before = server.queriesRunning().filter((id) => id === endpoint).length;
  let answered = false;
  const answer = send().finally(() => (answered = true));
  while (!answered && server.queriesRunning().filter((id) => id === endpoint).length <= before) await new Promise((r) => setTimeout(r, 10));
  return { held: !answered, answer };
}

describe.runIf(run)('serve --store virtuoso: an instance that stops answering after stopped queries is restarted', () => {
  let build: string;
  let server: ShardServer;
  const lines: string[] = [];
  const waiters: [RegExp, (line: string) => void][] = [];

  beforeAll(async () => {
    build = await demoBuild(tmpDir('fkgqa-virtuoso-wedge-'));
    server = await serve({
      shards: build,
      store: 'virtuoso',
      timeoutMs: 3_000,
      progress: (line) => {
        lines.push(line);
        for (const w of waiters.splice(0)) {
          if (w[0].test(line)) w[1](line);
          else waiters.push(w);
        }
      },
    });
  });

  afterAll(async () => {
    await server?.close();
  });

  it('holds a query that arrives while a probe runs, and runs it (200 with its rows) when the instance answers the probe', async () => {
    const url = server.endpoint('library-shard1')!.url;
    const count = async (headers: Record<string, string> = {}) => {
      const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/sparql-query', accept: JSON_RESULTS, ...headers }, body: 'SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }' });
      const text = await r.text();
      return { status: r.status, stopped: r.headers.get('fkgqa-stopped'), body: r.ok ? (JSON.parse(text) as { results: { bindings: { n: { value: string } }[] } }).results.bindings[0].n.value : text };
    };
    expect(await count()).toEqual({ status: 200, stopped: null, body: '35' });
    const pid = instancePid(build);
    process.kill(pid, 'SIGSTOP');
    await threadsIn(pid, /^[Tt]$/);
    // Stopped at the request's limit: the probe starts (it waits up to PROBE_MS for the stopped process).
    expect(await count({ 'Fkgqa-Timeout': '300' })).toMatchObject({ status: 503, stopped: 'time-limit; by=request; ms=300' });
    const held = await arrival(server, 'library-shard1', () => count());
    expect(held.held).toBe(true);
    expect(lines.some((l) => /did not answer a probe/.test(l))).toBe(false);
    // Held past the endpoint's time limit (3 s), within the probe's (PROBE_MS, 10 s): the hold is not counted in its limit.
    // The server's own clock says when 3 s have passed since the held query arrived: a query held after it with a request
    // limit of 3 s is answered at that limit (busy: its whole limit was the store's wait), while the first is still held.
    const timed = await arrival(server, 'library-shard1', () => count({ 'Fkgqa-Timeout': '3000' }));
    expect(timed.held).toBe(true);
    expect(await timed.answer).toMatchObject({ status: 503, stopped: expect.stringMatching(/^busy; by=request; waited=\d+; ms=3000$/) });
    expect(await Promise.race([held.answer.then(() => 'answered'), new Promise((r) => setImmediate(() => r('held')))])).toBe('held');
    expect(lines.some((l) => /did not answer a probe/.test(l))).toBe(false);
    // The process goes on: it answers the probe, and the held query runs.
    process.kill(pid, 'SIGCONT');
    expect(await held.answer).toEqual({ status: 200, stopped: null, body: '35' });
    expect(server.restartsOf('library-shard1')).toEqual({ restarts: 0, faults: 0 });
    expect(lines.some((l) => /did not answer a probe/.test(l))).toBe(false);
  });

  it('answers a point query 200 with its rows after heavy stopped queries left the instance answering nothing; 500 (the store failed) while it restarts, never 503', async () => {
    const url = server.endpoint('library-shard1')!.url;
    const post = (query: string, headers: Record<string, string> = {}) =>
      fetch(url, { method: 'POST', headers: { 'content-type': 'application/sparql-query', accept: JSON_RESULTS, ...headers }, body: query });
    const count = async () => {
      const r = await post('SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }');
      const text = await r.text();
      return { status: r.status, stopped: r.headers.get('fkgqa-stopped'), body: r.ok ? (JSON.parse(text) as { results: { bindings: { n: { value: string } }[] } }).results.bindings[0].n.value : text };
    };
    expect(await count()).toEqual({ status: 200, stopped: null, body: '35' });
    const authors = async () => {
      const r = await post('PREFIX : <http://valuenet/ontop/> SELECT ?n WHERE { ?a :author\\#name ?n } ORDER BY ?n');
      return [r.status, ((await r.json()) as { results: { bindings: { n: { value: string } }[] } }).results.bindings.map((b) => b.n.value)];
    };
    const before = await authors();

    // Heavy cross products, each stopped at the request's time limit.
    const heavy = 'SELECT * WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l . ?m ?n ?o }';
    const stopped = await Promise.all(
      Array.from({ length: 6 }, async () => {
        const r = await post(heavy, { 'Fkgqa-Timeout': '300' });
        await r.arrayBuffer();
        return [r.status, r.headers.get('fkgqa-stopped')];
      }),
    );
    expect(stopped).toEqual(Array(6).fill([503, 'time-limit; by=request; ms=300']));
    expect(server.restartsOf('library-shard1')).toEqual({ restarts: 0, faults: 0 });
    // The stopped queries had the instance probed; a query now is held until that probe's verdict (it answers), then runs:
    // once it is answered, no probe runs, and the next one starts with the query that finds the instance stopped.
    expect(await count()).toEqual({ status: 200, stopped: null, body: '35' });

    // The instance answers nothing from now on (its process stopped, its port still accepting connections).
    const pid = instancePid(build);
    process.kill(pid, 'SIGSTOP');
    await threadsIn(pid, /^[Tt]$/);

    // The query that finds it so is stopped at the endpoint's time limit; the probe after it is not answered, and the instance is restarted.
    const restarting = lineMatching(lines, waiters, /did not answer a probe .*: restarting it$/);
    const restarted = lineMatching(lines, waiters, /Virtuoso on \S+ restarted \(pid \d+\)/);
    expect(await count()).toMatchObject({ status: 503, stopped: 'time-limit; by=endpoint; ms=3000' });
    // A query that arrives while the probe runs is held until its verdict: the restart, so the store's 500, not the time limit.
    const held = await arrival(server, 'library-shard1', count);
    expect(held.held).toBe(true);
    expect(lines.some((l) => /did not answer a probe/.test(l))).toBe(false);
    const heldAnswer = await held.answer;
    expect([heldAnswer.status, heldAnswer.stopped]).toEqual([500, null]);
    expect(heldAnswer.body).toMatch(/^query evaluation failed: Virtuoso on 127\.0\.0\.1:\d+: restarting /);
    await restarting;
    const during = await count();
    expect([during.status, during.stopped]).toEqual([500, null]);
    expect(during.body).toMatch(/^query evaluation failed: Virtuoso on 127\.0\.0\.1:\d+: restarting /);
    const line = await restarted;

    // Its old process is gone; the new one holds every triple of the shard and answers.
    expect(fs.existsSync(`/proc/${pid}/cmdline`) && fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('virtuoso')).toBe(false);
    expect(Number(/\(pid (\d+)\)/.exec(line)![1])).not.toBe(pid);
    expect(await count()).toEqual({ status: 200, stopped: null, body: '35' });
    expect(await authors()).toEqual(before);
    expect(server.restartsOf('library-shard1')!.restarts).toBe(1);
    expect(server.restartsOf('library-shard1')!.faults).toBeGreaterThanOrEqual(1);
    const counts = server.log.counts()['library-shard1'];
    expect(counts.failed).toBeGreaterThanOrEqual(1);
  });

  it('answers 500 (the store failed), never an empty 200, when a restarted instance no longer holds its shards', async () => {
    const url = server.endpoint('library-shard1')!.url;
    const count = async () => {
      const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/sparql-query', accept: JSON_RESULTS }, body: 'SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }' });
      return { status: r.status, body: await r.text() };
    };
    expect((await count()).status).toBe(200);
    // Its database files gone and its process killed: a restart starts an empty database, which is not the store's.
    const folder = path.join(`${build}.state`, 'virtuoso', fs.readdirSync(path.join(`${build}.state`, 'virtuoso'))[0]);
    const pid = Number(fs.readFileSync(path.join(folder, 'fkgqa-virtuoso.pid'), 'utf8'));
    for (const f of ['virtuoso.db', 'virtuoso.trx']) fs.rmSync(path.join(folder, f), { force: true });
    const failed = lineMatching(lines, waiters, /could not be restarted: [\s\S]*; its endpoints answer 500 from now on$/);
    process.kill(pid, 'SIGKILL');
    await threadsIn(pid, /^[ZX]$/);
    expect((await count()).status).toBe(500);
    await failed;
    const after = await count();
    expect(after.status).toBe(500);
    expect(after.body).toMatch(/^query evaluation failed: Virtuoso on 127\.0\.0\.1:\d+ could not be restarted: /);
  });
});
