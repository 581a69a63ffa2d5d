/**
 * The end-to-end check of `fkgqa mcp` on a build: every distinct gold query, rewritten as its
 * trivial federation (FKGQA paper section 2; src/sparql/trivial.ts) over its graph's shard
 * endpoints, sent through `run_sparql_query` exactly as an agent would send it, must give the gold
 * answer (the answer on the unsharded graph, stored by `fkgqa stats`, or computed here on the union of the shards). An answer that
 * differs is judged by the admissibility rule `fkgqa score` and `fkgqa verify` use (`admissibleUnderTies`
 * of src/answers/ties.ts: another order or choice of solutions tied under the top-level ORDER BY, or
 * another choice among solutions tied in a sub-SELECT), with the tie analysis stored by `fkgqa stats`,
 * or made here on the unsharded graph (`analyseGoldTies`) when gold was computed here or stored without one. Used by `bench/mcp-gold.js` and the tests. It lives in src/checks/, above
 * serve and mcp, because it starts the endpoints (serve) and calls run_sparql_query (mcp).
 */
import { parseQuery } from '../sparql/parse.js';
import { openBuild } from '../build/open.js';
import { StoreWorker } from '../common/store-worker.js';
import { MEDIA } from '../sparql/protocol.js';
import type { SparqlResults } from '../sparql/results.js';
import { serve } from '../serve/server.js';
import { readBuild } from '../build/open.js';
import { compareResults } from '../answers/compare.js';
import { admissibleUnderTies, byVariableNameOf, type AdmissibleAnswers } from '../answers/ties.js';
import { groupConcatSeparators } from '../sparql/inspect.js';
import { analyseGoldTies } from '../report/answers.js';
import { TIE_ANALYSIS, type GoldTies } from '../build/gold-answers.js';
import { trivialFederation } from '../sparql/trivial.js';
import { goldResultsById, readGoldAnswers } from '../build/gold-answers.js';
import { readGoldQueries } from '../build/benchmark.js';
import { registryFromEndpointsValue } from '../federation/registry.js';
import { runSparqlQuery } from '../mcp/run-query.js';
import { createMcpContext } from '../mcp/server.js';
import { counted } from '../common/strings.js';

/** Options of `checkGoldThroughMcp`. */
export interface GoldCheckOptions {
  /** The build (with gold answers from `fkgqa stats`). */
  shards: string;
  /** Only these graphs. */
  kgs?: string[];
  /** Only these query ids. */
  queries?: string[];
  /** `timeout_ms` of each run_sparql_query call (default 10,000). */
  timeoutMs?: number;
  /** The federation engine of run_sparql_query, by `--federation-engine` name (default `comunica`; src/federation/engines.ts). */
  federationEngine?: string;
  progress?: (line: string) => void;
}

/** The verdict on one distinct gold query. */
interface GoldCheckVerdict {
  id: string;
  graph: string;
  /** identical; equivalent (ties under ORDER BY); different; failed (an error or the time limit); no-gold (the unsharded graph did not answer). */
  status: 'identical' | 'equivalent' | 'different' | 'failed' | 'no-gold';
  reason?: string;
  /** Length of the trivial-federation query, in characters. */
  chars: number;
  /** SERVICE clauses in it. */
  services: number;
  rows?: number;
  goldRows?: number;
  ms: number;
}

/** The result of the check. */
export interface GoldCheckReport {
  graphs: string[];
  timeoutMs: number;
  verdicts: GoldCheckVerdict[];
  totals: Record<GoldCheckVerdict['status'], number>;
  /** Trivial-federation queries longer than the default limit of 8,000 characters (the check raises the limit). */
  overDefaultLimit: number;
  ms: number;
}

/**
 * Runs the check: serves the build in this process (loopback, any free port), and sends every
 * selected gold query's trivial federation through run_sparql_query.
 * @throws InputError for a missing build or unknown graph
 */
export async function checkGoldThroughMcp(o: GoldCheckOptions): Promise<GoldCheckReport> {
  const t0 = performance.now();
  const timeoutMs = o.timeoutMs ?? 10_000;
  const progress = o.progress ?? (() => {});
  const build = readBuild(o.shards, o.kgs);
  const graphs = build.map((g) => g.graph);
  const digest = openBuild(o.shards, { checkShards: false }).build.outputDigest;
  const { defaultPrefix, queries } = readGoldQueries(o.shards);
  const wanted = o.queries ? new Set(o.queries) : undefined;
  const server = await serve({ shards: o.shards, kgs: graphs, writeFiles: false, timeoutMs: Math.max(timeoutMs, 30_000) });
  const registry = registryFromEndpointsValue(server.endpointsFile(), 'gold-check');
  const ctx = createMcpContext({
    registry,
    setup: 'baseline',
    callLog: null,
    state: null,
    limits: { maxQueryChars: 1 << 20, maxTimeoutMs: Math.max(timeoutMs, 100_000), previewRows: 0 },
    ...(o.federationEngine ? { federationEngine: o.federationEngine } : {}),
  });
  const verdicts: GoldCheckVerdict[] = [];
  try {
    await ctx.sparql.warm();
    for (const g of build) {
      const gq = queries.filter((q) => q.graph === g.graph && (!wanted || wanted.has(q.id)));
      if (gq.length === 0) continue;
      const stored = readGoldAnswers(o.shards, g.graph, digest);
      const gold = stored ? goldResultsById(stored) : undefined;
      const urls = registry.endpoints.filter((e) => e.graph === g.graph).map((e) => e.url);
      let store: StoreWorker | undefined;
      progress(`${g.graph}: ${counted(gq.length, 'query', 'queries')} over ${counted(urls.length, 'endpoint')}`);
      try {
        for (const q of gq) {
          const parsed = parseQuery(q.text, defaultPrefix);
          if (!parsed.ok) throw new Error(`${q.id}: gold query does not parse: ${parsed.error}`);
          const ast = parsed.query.ast;
          const t = trivialFederation(ast, urls);
          const services = (t.text.match(/SERVICE </g) ?? []).length;
          const base = { id: q.id, graph: q.graph, chars: t.text.length, services };
          let want = gold?.get(q.id);
          if (!want) {
            // No stored answer: computed here on the unsharded graph (the union of its shards).
            store ??= await StoreWorker.start(g.shards.map((s) => ({ file: s.file, format: 'application/n-triples' })));
            const a = await store.query({ query: parsed.query.normalized, resultsFormat: MEDIA.json, timeoutMs: Math.max(timeoutMs, 30_000) });
            want =
              a.status === 'ok'
                ? { status: 'ok', results: JSON.parse(a.body) as SparqlResults, source: 'computed' }
                : { status: a.status, error: a.status === 'error' ? a.error : undefined, source: 'computed' };
          }
          if (want.status !== 'ok' || !want.results) {
            verdicts.push({ ...base, status: 'no-gold', reason: `the unsharded graph: ${want.status}${want.error ? ` (${want.error})` : ''}`, ms: 0 });
            continue;
          }
          const r = await runSparqlQuery(ctx, { query: t.text, timeout_ms: timeoutMs });
          const v: GoldCheckVerdict = { ...base, status: 'failed', goldRows: want.results.results?.bindings.length ?? 1, ms: Math.round(r.ms) };
          if (r.isError || !r.results) {
            v.reason = r.errorClass === 'timeout' ? `timeout: no answer within ${timeoutMs} ms` : r.text.split('\n')[0].slice(0, 300);
          } else {
            const ordered = !!(ast as { order?: unknown[] }).order?.length;
            const concats = groupConcatSeparators(ast.type === 'query' ? ast : undefined);
            const c = compareResults(want.results, r.results, ordered, undefined, concats);
            v.rows = c.rows;
            if (c.identical) v.status = 'identical';
            else {
              v.status = 'different';
              v.reason = c.reason;
              let ties: GoldTies | undefined = stored?.tieAnalysis === TIE_ANALYSIS && want.source === 'gold-answers.json' ? want.ties : undefined;
              if (!ties && !(stored?.tieAnalysis === TIE_ANALYSIS && want.source === 'gold-answers.json')) {
                store ??= await StoreWorker.start(g.shards.map((s) => ({ file: s.file, format: 'application/n-triples' })));
                const queryType = ast.type === 'query' ? ast.queryType : 'UPDATE';
                ties = await analyseGoldTies(
                  store,
                  { id: q.id, normalized: parsed.query.normalized, queryType, ordered, ast },
                  { query: q.id, status: 'ok', ordered, results: want.results },
                  Math.max(timeoutMs, 30_000),
                );
              }
              if (ties) {
                const a = admissibleUnderTies(want.results, ties as AdmissibleAnswers, r.results, ordered, byVariableNameOf(concats));
                if (a.match.correct) {
                  v.status = 'equivalent';
                  v.reason = `${c.reason}; admissible under ties (${a.by === 'alternative' ? 'another choice among solutions tied in a sub-SELECT' : 'another order or choice of solutions tied under the top-level ORDER BY'}): ${ties.reason}`;
                } else v.reason = `${c.reason}; not explained by ties (${ties.reason})`;
              }
              if (v.status === 'different' && t.caveats.length) v.reason += ` (${t.caveats.join('; ')})`;
            }
          }
          verdicts.push(v);
          progress(`  ${q.id}: ${v.status}${v.reason ? ` — ${v.reason}` : ''} (${v.services} SERVICE, ${v.chars} chars, ${v.ms} ms)`);
        }
      } finally {
        await store?.close();
      }
    }
  } finally {
    await ctx.close();
    await server.close();
  }
  const totals = { identical: 0, equivalent: 0, different: 0, failed: 0, 'no-gold': 0 };
  for (const v of verdicts) totals[v.status]++;
  return { graphs, timeoutMs, verdicts, totals, overDefaultLimit: verdicts.filter((v) => v.chars > 8000).length, ms: performance.now() - t0 };
}
