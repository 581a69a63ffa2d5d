/**
 * The long federation runs of `fkgqa verify` over the whole demo build (long
 * federation runs go to `npm run test:slow`): all 14 distinct gold queries in every form, on
 * comunica and, where its tests run, jena (`--federation-engine all`), before and after stats. At
 * load 15 on 2 cores these two tests took 130-220 s of wall between them (Comunica and the JVM
 * evaluating 14 queries x 3 forms x 2 engines); one query (library/q1) through every form and
 * engine, before and after stats (the JVM's start). tests/verify.test.ts keeps single queries
 * verified on comunica (running endpoints, stored gold answers, the CLI's exit codes).
 */
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { stats, verify } from '../src/index.js';
import { serve } from '../src/serve/server.js';
import type { VerifyReport } from '../src/verify/verify.js';
import { checkGoldThroughMcp } from '../src/checks/mcp-gold.js';
import { demoBuild, engineTestsRun, fkgqaInProcess, HAS_SPIDER, tiesBuild, tmpDir } from './helpers.js';

/** Whether the Jena engine's tests run here (engineTestsRun). */
const JENA = await engineTestsRun('jena');

describe('verify / the demo build (slow: every gold query, every form, every engine)', () => {
  let shards: string;
  beforeAll(async () => {
    shards = await demoBuild(tmpDir('fkgqa-verify-'));
  }, 300_000);
  // One query through every form and engine: the progress line that says the federated form is skipped on jena.
  it(
    'one query (library/q1), every form and engine (--federation-engine all where jena runs): without stats the oracle form is skipped; with stats federated, trivial and oracle identical, federated skipped on jena, no disagreement, the oracle form no dearer',
    { timeout: 600_000 },
    async () => {
      const engines = JENA ? ['comunica', 'jena'] : ['comunica'];
      const none = { equivalent: 0, different: 0, failed: 0, failedOnBothSides: 0, timeouts: 0, errors: 0 };
      const without = await verify({ shards, timeoutMs: 60_000, queries: ['library/q1'] });
      expect([without.engines, without.forms]).toEqual([['comunica'], ['federated', 'trivial', 'oracle']]);
      expect(without.totals.comunica.federated).toMatchObject({ identical: 1, answered: 1, skipped: 0, ...none });
      expect(without.totals.comunica.trivial).toMatchObject({ identical: 1, answered: 1, skipped: 0, ...none });
      expect(without.totals.comunica.oracle).toMatchObject({ identical: 0, answered: 0, skipped: 1 });
      expect(without.queries[0].engines.comunica.oracle).toEqual({ status: 'skipped', reason: 'no realised fan-out stored for this build (fkgqa stats)', ms: 0, requests: 0 });
      expect(without.queries[0].gold).toMatchObject({ status: 'ok', source: 'computed' });
      // With stats: the shared demo build's copy with the gold answers and realised fan-out fkgqa stats stored.
      const withStats = await demoBuild(tmpDir('fkgqa-verify-one-'), { gold: true });
      const lines: string[] = [];
      const all = await verify({ shards: withStats, timeoutMs: 60_000, federationEngine: JENA ? 'all' : 'comunica', queries: ['library/q1'], progress: (l) => lines.push(l) });
      expect(all.queries.map((q) => q.id)).toEqual(['library/q1']);
      expect(all.queries[0].gold).toMatchObject({ status: 'ok', source: 'gold-answers.json' });
      expect([all.engines, all.forms]).toEqual([engines, ['federated', 'trivial', 'oracle']]);
      expect(all.totals.comunica.federated).toMatchObject({ identical: 1, answered: 1, skipped: 0, ...none });
      for (const e of engines) {
        expect(all.totals[e].trivial).toMatchObject({ identical: 1, answered: 1, skipped: 0, ...none });
        expect(all.totals[e].oracle).toMatchObject({ identical: 1, answered: 1, skipped: 0, ...none });
        expect(all.totals[e].oracle!.requests.total).toBeLessThanOrEqual(all.totals[e].trivial!.requests.total);
      }
      expect([all.disagreements, all.different]).toEqual([[], 0]);
      if (JENA) {
        expect(all.totals.jena.federated).toMatchObject({ identical: 0, skipped: 1 });
        expect(all.queries[0].engines.jena.federated!.reason).toBe('jena has no source selection (it evaluates SERVICE clauses only)');
        // Said once, before the queries, with the reason (not "federated skipped" per query).
        expect(lines.filter((l) => l.includes('skipped on'))).toEqual([
          'fkgqa verify: the federated form is skipped on jena: it has no source selection (it evaluates SERVICE clauses only; docs/federation.md)',
        ]);
        // Jena sends exactly one request per SERVICE clause: library/q1's trivial form has 4 (one triple pattern over 4 shards).
        expect(all.queries[0].engines.jena.trivial!.requests).toBe(4);
      }
    },
  );

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

  it.runIf(JENA)(
    '--federation-engine all (stats in another state folder): trivial and oracle identical on comunica and jena, federated skipped on jena, no disagreement, the oracle form cheaper',
    { timeout: 600_000 },
    async () => {
      // stats, then 14 queries x 3 forms x 2 engines and the JVM's start: over 120 s at load 45.
      // The federated and trivial forms are those of the run without stats (verifyWithoutStats, the
      // same build and engines); the oracle form needs stats, and runs here.
      const all = await verifyWithoutStats();
      const state = tmpDir('fkgqa-verify-all-state-');
      await stats({ shards, state, timeoutMs: 60_000 });
      const r = await verify({ shards, state, timeoutMs: 60_000, federationEngine: 'all', forms: ['oracle'] });
      expect([all.engines, all.forms]).toEqual([
        ['comunica', 'jena'],
        ['federated', 'trivial', 'oracle'],
      ]);
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
    },
  );
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

/**
 * Ties in a sub-SELECT with gold computed by verify and by the MCP gold check themselves (no answers
 * stored by fkgqa stats: the tie analysis runs on the unsharded graph), 30 s of wall at load 10, and
 * the same checks with the gold answers fkgqa stats stored.
 */
describe.skipIf(!HAS_SPIDER)(
  'verify and the mcp gold check / ties in a sub-SELECT, the rule score uses, gold stored by fkgqa stats and computed here (Spider4SPARQL car_1/q37, dog_kennels/q19)',
  () => {
    let shards: string;
    beforeAll(async () => {
      // car_1, dog_kennels (and network_1), made once per run (tests/global-setup.ts); no gold answers stored yet.
      shards = await tiesBuild(tmpDir('fkgqa-verify-subties-'));
    }, 240_000);
    const ids = ['car_1/q37', 'dog_kennels/q19'];
    const SUB = 'admissible under ties (another choice among solutions tied in a sub-SELECT)';
    const check = (r: Awaited<ReturnType<typeof verify>>, form: 'trivial' | 'oracle') => {
      for (const id of ids) {
        const f = r.queries.find((v) => v.id === id)!.engines.comunica[form]!;
        // Comunica keeps another of the tied solutions of the sub-SELECT's LIMIT 1 than oxigraph:
        // another admissible answer (a 'different' verdict here without the sub-SELECT rule).
        expect(f.status, `${id} ${form}: ${f.reason}`).toMatch(/^(identical|equivalent)$/);
        if (f.status === 'equivalent') expect(f.reason).toContain(SUB);
      }
      expect(r.different).toBe(0);
      expect(r.disagreements.every((d) => d.kind === 'tie')).toBe(true);
    };

    it('gold computed here: the tie analysis is made on the unsharded graph, and the trivial form is a tie, not different', async () => {
      const r = await verify({ shards, queries: ids, forms: ['trivial'], timeoutMs: 60_000 });
      expect(r.queries.map((q) => q.gold.source)).toEqual(['computed', 'computed']);
      check(r, 'trivial');
      // On this data both answers differ from oxigraph's choice (as on the dev build).
      expect(r.queries.map((q) => q.engines.comunica.trivial!.status)).toEqual(['equivalent', 'equivalent']);
    }, 300_000);

    it('gold computed here (no stats), mcp gold check: the tie analysis is made on the unsharded graph, both trivial federations equivalent by a sub-SELECT choice', async () => {
      const shards = await tiesBuild(tmpDir('fkgqa-mcpgold-subties-nogold-'));
      const r = await checkGoldThroughMcp({ shards, kgs: ['car_1', 'dog_kennels'], queries: ids, timeoutMs: 60_000 });
      expect(r.verdicts.map((v) => [v.id, v.status, v.reason?.includes(SUB) ? 'sub-SELECT' : v.reason])).toEqual([
        ['car_1/q37', 'equivalent', 'sub-SELECT'],
        ['dog_kennels/q19', 'equivalent', 'sub-SELECT'],
      ]);
    }, 300_000);

    it('gold stored by fkgqa stats with its tie analysis: the oracle form too, and the trivial form', async () => {
      // The same build with what fkgqa stats (60 s per query) stored for it in tests/global-setup.ts.
      const stored = await tiesBuild(tmpDir('fkgqa-verify-subties-gold-'), { gold: true });
      const r = await verify({ shards: stored, queries: ids, forms: ['oracle', 'trivial'], timeoutMs: 60_000 });
      expect(r.queries.map((q) => q.gold.source)).toEqual(['gold-answers.json', 'gold-answers.json']);
      check(r, 'oracle');
      check(r, 'trivial');
    }, 400_000);

    it('gold stored by fkgqa stats with its tie analysis, mcp gold check (sub-SELECT ties, beyond the top-level ORDER BY): both trivial federations are equivalent, by a sub-SELECT choice', async () => {
      const shards = await tiesBuild(tmpDir('fkgqa-mcpgold-subties-'), { gold: true });
      const r = await checkGoldThroughMcp({ shards, kgs: ['car_1', 'dog_kennels'], queries: ids, timeoutMs: 60_000 });
      expect(r.verdicts.map((v) => [v.id, v.status, v.reason?.includes(SUB) ? 'sub-SELECT' : v.reason])).toEqual([
        ['car_1/q37', 'equivalent', 'sub-SELECT'],
        ['dog_kennels/q19', 'equivalent', 'sub-SELECT'],
      ]);
      expect(r.totals).toEqual({ identical: 0, equivalent: 2, different: 0, failed: 0, 'no-gold': 0 });
    }, 300_000);
  },
);
