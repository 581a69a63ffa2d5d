/**
 * The long federation runs of `fkgqa verify` over the whole demo build (long
 * federation runs go to `npm run test:slow`): all 14 distinct gold queries in every form, on
 * comunica and, where its tests run, jena (`--federation-engine all`), before and after stats. At
 * load 15 on 2 cores these two tests took 130-220 s of wall between them (Comunica and the JVM
 * evaluating 14 queries x 3 forms x 2 engines). tests/verify.test.ts keeps one query (library/q1)
 * through every form and engine.
 */
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { stats, verify } from '../src/index.js';
import { serve } from '../src/serve/server.js';
import type { VerifyReport } from '../src/verify/verify.js';
import { demoBuild, engineTestsRun, fkgqaInProcess, tmpDir } from './helpers.js';

/** Whether the Jena engine's tests run here (engineTestsRun). */
const JENA = await engineTestsRun('jena');

describe('verify / the demo build (slow: every gold query, every form, every engine)', () => {
  let shards: string;
  beforeAll(async () => {
    shards = await demoBuild(tmpDir('fkgqa-verify-'));
  }, 300_000);
  /**
   * verify without stats (no realised fan-out: the oracle form is skipped), on comunica and, where
   * its tests run, jena too (`--federation-engine all`): run once, read by the first two tests, so
   * that the federated and trivial forms are not evaluated a second time inside the `all` test.
   */
  let withoutStats: Promise<VerifyReport> | undefined;
  const verifyWithoutStats = () => (withoutStats ??= verify({ shards, timeoutMs: 60_000, federationEngine: JENA ? 'all' : 'comunica' }));

  it('all 14 distinct gold queries give identical answers federated and in trivial-federation form; without stats the oracle form is skipped', { timeout: 600_000 }, async () => {
    const r = await verifyWithoutStats();
    expect(r.queries).toHaveLength(14);
    expect(r.engines).toEqual(JENA ? ['comunica', 'jena'] : ['comunica']);
    const none = { equivalent: 0, different: 0, failed: 0, failedOnBothSides: 0, timeouts: 0, errors: 0 };
    expect(r.totals.comunica.federated).toMatchObject({ identical: 14, answered: 14, skipped: 0, ...none });
    expect(r.totals.comunica.trivial).toMatchObject({ identical: 14, answered: 14, skipped: 0, ...none });
    expect(r.totals.comunica.oracle).toMatchObject({ identical: 0, answered: 0, skipped: 14 });
    expect(r.queries[0].engines.comunica.oracle).toEqual({ status: 'skipped', reason: 'no realised fan-out stored for this build (fkgqa stats)', ms: 0, requests: 0 });
    expect([r.disagreements, r.different]).toEqual([[], 0]);
    expect(r.queries.find((q) => q.id === 'library/q3')!.gold).toMatchObject({ status: 'ok', rows: 5, source: 'computed' });
  });

  it.runIf(JENA)('--federation-engine all (stats in another state folder): trivial and oracle identical on comunica and jena, federated skipped on jena, no disagreement, the oracle form cheaper', { timeout: 600_000 }, async () => {
    // stats, then 14 queries x 3 forms x 2 engines and the JVM's start: over 120 s at load 45.
    // The federated and trivial forms are those of the run without stats (verifyWithoutStats, the
    // same build and engines); the oracle form needs stats, and runs here.
    const all = await verifyWithoutStats();
    const state = tmpDir('fkgqa-verify-all-state-');
    await stats({ shards, state, timeoutMs: 60_000 });
    const r = await verify({ shards, state, timeoutMs: 60_000, federationEngine: 'all', forms: ['oracle'] });
    expect([all.engines, all.forms]).toEqual([['comunica', 'jena'], ['federated', 'trivial', 'oracle']]);
    expect([r.engines, r.forms]).toEqual([['comunica', 'jena'], ['oracle']]);
    for (const e of ['comunica', 'jena']) {
      expect(all.totals[e].trivial).toMatchObject({ identical: 14, answered: 14, different: 0, failed: 0, skipped: 0 });
      expect(r.totals[e].oracle).toMatchObject({ identical: 14, answered: 14, different: 0, failed: 0, skipped: 0 });
      // The oracle form names only the shards each answer needs.
      expect(r.totals[e].oracle!.requests.total).toBeLessThan(all.totals[e].trivial!.requests.total);
    }
    expect(all.totals.comunica.federated).toMatchObject({ identical: 14, skipped: 0 });
    expect(all.totals.jena.federated).toMatchObject({ identical: 0, skipped: 14 });
    expect(all.queries[0].engines.jena.federated!.reason).toBe('jena has no source selection (it evaluates SERVICE clauses only)');
    expect([all.disagreements, all.different]).toEqual([[], 0]);
    expect([r.disagreements, r.different]).toEqual([[], 0]);
    // Jena sends exactly one request per SERVICE clause: library/q1's trivial form has 4 (one triple pattern over 4 shards).
    expect(all.queries.find((q) => q.id === 'library/q1')!.engines.jena.trivial!.requests).toBe(4);
  });

});

/**
 * The endpoint probe's wait (a time-limit run goes to `npm run test:slow`): a
 * probe held 5 s, then one answered after 6 s (13 s of wall). tests/verify.test.ts keeps the
 * endpoints that refuse the connection ("endpoints that do not answer: exit 2 naming them").
 */
describe('verify / the endpoint probe', () => {
  let shards: string;
  /** The CLI in the test process (tests/helpers.ts; its event loop keeps running the endpoints under test): the child's exit code, stdout and stderr. */
  const cli = async (...args: string[]) => {
    const r = await fkgqaInProcess(args);
    return { status: r.code, stdout: r.stdout, stderr: r.stderr };
  };
  beforeAll(async () => {
    shards = await demoBuild(tmpDir('fkgqa-verify-probe-'));
  });

  it('the endpoint probe waits max(5 s, --timeout): an endpoint that answers only after it is named (exit 2); one that answers within it lets verify proceed', async () => {
    const http = await import('node:http');
    const server = await serve({ shards, kgs: ['library'], writeFiles: false });
    const target = new URL(server.endpoint('library-shard2')!.url);
    const probe = `query=${encodeURIComponent('ASK {}')}`;
    // A proxy in front of library-shard2 that forwards everything at once but verify's probe (ASK {} by GET): that it holds
    // until the client gives up (mode 'never'), or answers after 6 s, past the 5 s a probe waited before (mode 'late').
    let mode: 'never' | 'late' = 'never';
    let probeClosed: () => void = () => {};
    const probeGaveUp = new Promise<void>((r) => (probeClosed = r));
    const probeAnswers: number[] = [];
    const forward = (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => {
      const up = http.request(new URL(req.url!, target.origin), { method: req.method, headers: { ...req.headers, host: target.host } }, (r) => {
        res.writeHead(r.statusCode!, r.headers);
        r.pipe(res);
      });
      req.pipe(up);
    };
    const proxy = http.createServer((req, res) => {
      if (req.method !== 'GET' || !req.url!.endsWith(probe)) return forward(req, res);
      if (mode === 'never') return void res.on('close', () => probeClosed());
      const t0 = performance.now();
      setTimeout(() => {
        probeAnswers.push(performance.now() - t0);
        forward(req, res);
      }, 6000);
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', () => r()));
    const proxied = `http://127.0.0.1:${(proxy.address() as { port: number }).port}${target.pathname}`;
    try {
      const ef = server.endpointsFile();
      ef.endpoints = ef.endpoints.map((e) => (e.id === 'library-shard2' ? { ...e, url: proxied } : e));
      const file = path.join(tmpDir('fkgqa-verify-probe-'), 'endpoints.json');
      fs.writeFileSync(file, JSON.stringify(ef));
      // --timeout 1000: the probe waits 5 s, the endpoint never answers it.
      const r = await cli('verify', '--shards', shards, '--endpoints', file, '--query', 'library/q1', '--form', 'federated', '--timeout', '1000', '-q');
      await probeGaveUp; // the probe closed its request: it gave up, the proxy did not
      expect([r.status, r.stdout]).toEqual([2, '']);
      expect(r.stderr).toBe(`fkgqa: error: ${file}: 1 endpoint(s) do not answer (is fkgqa serve running?): ${proxied}: no answer within 5000 ms\n`);
      // --timeout 30000: the probe waits 30 s; the answer after 6 s comes in time, and the query runs through the proxy.
      mode = 'late';
      const ok = await verify({ shards, endpoints: file, kgs: ['library'], queries: ['library/q1'], forms: ['federated'], timeoutMs: 30_000 });
      expect(probeAnswers).toHaveLength(1);
      expect(probeAnswers[0]).toBeGreaterThanOrEqual(5000);
      expect(ok.totals.comunica.federated).toMatchObject({ identical: 1, different: 0, failed: 0 });
    } finally {
      await new Promise<void>((r) => (proxy.close(() => r()), proxy.closeAllConnections()));
      await server.close();
    }
  }, 180_000);
});
