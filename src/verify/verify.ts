/**
 * `fkgqa verify`: the federation loses no answer. Every distinct gold query of a build is run as a
 * federated query over its graph's shard endpoints by the federation engine (`--federation-engine`,
 * default Comunica 4.5.0; sources = the endpoints), and in the paper's trivial-federation form
 * (every triple pattern a UNION of SERVICE calls over all shards of the graph, also executed by the
 * engine: oxigraph has no SERVICE, pitfall B11); each answer is compared with the answer on the
 * unsharded graph. The endpoints come from the endpoint registry (src/federation/registry.ts: the
 * endpoints files of running serves, checked), or are started in this process by the launcher the
 * library entry point passes (src/index.ts), so verify never imports serve.
 */
import { ProgressTicker } from '../common/progress.js';
import { FORMS, type FederationForm } from './forms.js';
import fs from 'node:fs';
import path from 'node:path';
import { parseQuery } from '../sparql/parse.js';
import { InputError } from '../common/errors.js';
import { STATE_FILES, stateDir } from '../build/state.js';
import { readBuild, readJsonFile } from '../build/open.js';
import { readGoldQueries } from '../build/benchmark.js';
import { goldResultsById, readGoldAnswers, type GoldResult } from '../build/gold-answers.js';
import { StoreWorker } from '../common/store-worker.js';
import { MEDIA } from '../sparql/protocol.js';
import type { JsonResults } from '../sparql/results.js';
import { compareResults, type Comparison } from '../answers/compare.js';
import { equivalentUnderTies, keyQuery } from '../answers/ties.js';
import { trivialFederation } from '../sparql/trivial.js';
import { type EngineOutcome } from '../federation/engine.js';
import { createEngine, DEFAULT_FEDERATION_ENGINE } from '../federation/engines.js';
import { openRegistry, readEndpointsFile, registryFromEndpointsValue, unreachableEndpoints, type EndpointLauncher, type EndpointRegistry, type RunningEndpoints } from '../federation/registry.js';


/** Options of `verify`. */
export interface VerifyOptions {
  /** Directory of a `fkgqa partition` build (with `benchmark.json`). */
  shards: string;
  /**
   * Endpoints files of running endpoints (`fkgqa serve`, which writes `<state>/endpoints.json`): a
   * file path, several (shards served by several hosts), or `true` for that default file. Without
   * it, verify uses the serve running on this build (`<state>/endpoints.json`) when there is one it
   * can use as is (`usableServe`), else starts the endpoints itself with `launch`, in this process,
   * and stops them at the end; a progress line says which. Every endpoint is checked to answer
   * before any query runs.
   */
  endpoints?: string | string[] | true;
  /**
   * Starts the endpoints when `endpoints` is not given: `fkgqa serve`'s library function, which the
   * library entry point (src/index.ts) passes; without it, `endpoints` is required.
   */
  launch?: EndpointLauncher;
  /** The federation engine, by `--federation-engine` name (default `comunica`; src/federation/engine.ts). */
  federationEngine?: string;
  /** State folder of the build (default `<shards>.state/`, see src/build/state.ts): stored gold answers and the default endpoints file. */
  state?: string;
  /** Only these graphs. */
  kgs?: string[];
  /** Only these query ids (`<kg>/q<N>`); without `kgs`, their graphs are the graphs verified. */
  queries?: string[];
  /** Time limit per query and side (unsharded, federated, trivial), in ms (default 20,000). */
  timeoutMs?: number;
  /** Forms to run (default both). */
  forms?: FederationForm[];
  /** Progress lines (stderr in the CLI). */
  progress?: (line: string) => void;
}

/**
 * How one form of one query fared: `identical` (same rows; same order where the query orders),
 * `equivalent` (other rows or order that the query allows: solutions tie under ORDER BY and LIMIT
 * or the order within ties differs, shown on the unsharded graph, see ties.ts), `different`, or
 * `failed` (an error or the time limit on either side).
 */
export interface FormVerdict {
  status: 'identical' | 'equivalent' | 'different' | 'failed';
  /** Why it differs or failed (absent when identical). */
  reason?: string;
  /** Rows of the federated answer. */
  rows?: number;
  ms: number;
  /** The comparison with gold, when both answered. */
  comparison?: Comparison;
}

/** The verdicts of one distinct gold query. */
export interface QueryVerdict {
  id: string;
  graph: string;
  /** Questions asking this query. */
  questions: number;
  /** The query orders its results (row order compared too). */
  ordered: boolean;
  gold: Omit<GoldResult, 'results'>;
  federated?: FormVerdict;
  trivial?: FormVerdict;
}

/** Counts of verdicts of one form. */
export interface FormTotals {
  identical: number;
  equivalent: number;
  different: number;
  failed: number;
  /** Of the failed: those where the unsharded graph did not answer either (time limit or error). */
  failedOnBothSides: number;
}

/** The result of `verify`. */
export interface VerifyReport {
  graphs: string[];
  timeoutMs: number;
  /** `started` when verify ran the endpoints itself, else the endpoints file used (several joined by ` + `). */
  endpoints: string;
  forms: FederationForm[];
  queries: QueryVerdict[];
  totals: Partial<Record<FederationForm, FormTotals>>;
  ms: number;
}

/** The output digest of a build (build.json, already checked by `openBuild`). */
function readBuildDigest(shards: string): string {
  return readJsonFile<{ outputDigest: string }>(path.join(shards, 'build.json'), 'build.json of an fkgqa build').outputDigest;
}

function outcomeJson(o: { status: 'ok'; body: string }): JsonResults {
  return JSON.parse(o.body) as JsonResults;
}

const rowsOf = (r: JsonResults) => (r.boolean !== undefined ? 1 : (r.results?.bindings.length ?? 0));
const secs = (ms: number) => `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;

/** An engine's outcome with the time it took (ms, measured around the call). */
type TimedOutcome = EngineOutcome & { ms: number };

function verdict(gold: GoldResult, outcome: TimedOutcome, ordered: boolean, form: FederationForm): FormVerdict {
  if (outcome.status !== 'ok') {
    const what = outcome.status === 'timeout' ? `timeout after ${secs(outcome.ms)}` : `error: ${outcome.error}`;
    const goldWhat = gold.status === 'ok' ? '' : `; the unsharded graph: ${gold.status === 'timeout' ? 'timeout' : `error: ${gold.error}`} too`;
    return { status: 'failed', reason: `${form}: ${what}${goldWhat}`, ms: outcome.ms };
  }
  const results = outcomeJson(outcome);
  if (gold.status !== 'ok' || !gold.results) {
    return { status: 'failed', reason: `the unsharded graph did not answer (${gold.status === 'timeout' ? 'timeout' : `error: ${gold.error}`}); ${form} answered ${rowsOf(results)} rows`, rows: rowsOf(results), ms: outcome.ms };
  }
  const c = compareResults(gold.results, results, ordered);
  return c.identical
    ? { status: 'identical', rows: c.rows, ms: outcome.ms, comparison: c }
    : { status: 'different', reason: c.reason, rows: c.rows, ms: outcome.ms, comparison: c };
}

/** Shard endpoint URLs per graph, in shard order, from the registry. */
function shardUrls(registry: EndpointRegistry): Map<string, string[]> {
  const m = new Map<string, string[]>();
  for (const e of registry.endpoints) {
    if (e.graph === null) continue;
    if (!m.has(e.graph)) m.set(e.graph, []);
    m.get(e.graph)!.push(e.url);
  }
  return m;
}

/**
 * The endpoints file of the `fkgqa serve` running on this build (`<state>/endpoints.json`), when
 * verify can use it as is: its serve is alive and serves this build (`readEndpointsFile`), it
 * serves every graph to verify, and it has no behaviour profiles (which cut or fail answers).
 * @returns the file and its serve's pid, or why not (no file, stale, another build, a graph missing, profiles)
 */
export function usableServe(shards: string, state: string | undefined, graphs: string[]): { file: string; pid: number | undefined; timeoutMs: number } | { why: string } {
  const file = path.join(stateDir(shards, state), STATE_FILES.endpoints);
  if (!fs.existsSync(file)) return { why: `none runs on this build: no ${file}` };
  let f;
  try {
    f = readEndpointsFile(file, { build: shards });
  } catch (e) {
    return { why: e instanceof InputError ? e.message : String(e) };
  }
  const served = new Set(f.endpoints.map((e) => e.graph));
  const missing = graphs.filter((g) => !served.has(g));
  if (missing.length) return { why: `it does not serve ${missing.join(', ')}` };
  if (f.endpoints.some((e) => e.profile)) return { why: 'it has behaviour profiles, which change answers (give --endpoints to use it anyway)' };
  return { file, pid: f.pid, timeoutMs: f.timeoutMs };
}

/**
 * Runs the verification (see the module comment).
 * @throws InputError for a missing build, an unknown graph or query id, or an endpoints file that
 *   lacks a graph
 */
export async function verify(options: VerifyOptions): Promise<VerifyReport> {
  const t0 = performance.now();
  const progress = options.progress ?? (() => {});
  const timeoutMs = options.timeoutMs ?? 20_000;
  const forms = options.forms ?? FORMS;
  // --query <kg>/q<N> names its graph: without --kg, verify those graphs only.
  for (const id of options.queries ?? []) {
    if (!/^[^/]+\/q\d+$/.test(id)) throw new InputError(`--query ${id}: a query id is <kg>/q<N>, e.g. concert_singer/q3`);
  }
  const kgs = options.kgs?.length ? options.kgs : options.queries?.length ? [...new Set(options.queries.map((id) => id.split('/')[0]))] : undefined;
  const build = readBuild(options.shards, kgs); // openBuild: build.json, benchmark.json, manifests, shard sha256
  const digest = readBuildDigest(options.shards);
  const graphs = build.map((g) => g.graph);
  const { defaultPrefix, queries: all } = readGoldQueries(options.shards);
  const wanted = options.queries ? new Set(options.queries) : undefined;
  for (const id of wanted ?? []) if (!all.some((q) => q.id === id)) throw new InputError(`no gold query ${id} in the build`, { file: path.join(options.shards, 'benchmark.json') });
  const queries = all.filter((q) => graphs.includes(q.graph) && (!wanted || wanted.has(q.id)));

  let server: RunningEndpoints | undefined;
  let registry: EndpointRegistry;
  let files = options.endpoints === true ? [path.join(stateDir(options.shards, options.state), STATE_FILES.endpoints)] : typeof options.endpoints === 'string' ? [options.endpoints] : options.endpoints;
  // Without --endpoints: the serve running on this build, when it can be used as is (and say so).
  let started = 'no --endpoints';
  if (!files?.length) {
    const running = usableServe(options.shards, options.state, graphs);
    if ('file' in running) {
      files = [running.file];
      const limit = running.timeoutMs < timeoutMs ? `; its time limit of ${running.timeoutMs} ms per query applies` : '';
      progress(`fkgqa verify: using the endpoints of the fkgqa serve running on this build (pid ${running.pid ?? '?'}, ${running.file})${limit}`);
    } else started = running.why;
  }
  const endpointsPath = files?.length ? files.join(' + ') : undefined;
  if (files?.length) {
    registry = openRegistry({ endpointsFiles: files, build: options.shards, hint: 'start it, or leave out --endpoints to let verify start the endpoints' });
  } else {
    if (!options.launch) throw new InputError('verify needs running endpoints: give --endpoints <file> (fkgqa serve), or call verify from the fkgqa library entry point, which starts them');
    progress(`fkgqa verify: not using a running fkgqa serve (${started}): starting the shard endpoints in this process`);
    server = await options.launch({ shards: options.shards, kgs: graphs, timeoutMs });
    registry = registryFromEndpointsValue(server.endpointsFile(), 'started');
  }
  const urls = shardUrls(registry);
  for (const g of graphs) if (!urls.has(g)) throw new InputError(`no shard endpoints of graph ${g} in the endpoints file`, { file: endpointsPath });
  for (const g of build) {
    if (urls.get(g.graph)!.length !== g.shards.length) {
      throw new InputError(`graph ${g.graph} has ${g.shards.length} shards in the build but ${urls.get(g.graph)!.length} endpoints in the endpoints file (rebuilt since serve started?)`, { file: endpointsPath });
    }
  }
  if (endpointsPath) {
    const down = await unreachableEndpoints(graphs.flatMap((g) => urls.get(g)!));
    if (down.length > 0) {
      throw new InputError(`${down.length} endpoint(s) do not answer (is fkgqa serve running?): ${down.map((d) => `${d.url}: ${d.why}`).join('; ')}`, { file: endpointsPath });
    }
  }

  const engine = await createEngine(options.federationEngine ?? DEFAULT_FEDERATION_ENGINE, { endpoints: registry.endpoints.map((e) => e.url) });
  const run = async (query: string, sources: string[]): Promise<TimedOutcome> => {
    const t = performance.now();
    const o = await engine.query(query, MEDIA.json, { timeoutMs, sources });
    return { ...o, ms: performance.now() - t };
  };
  const verdicts: QueryVerdict[] = [];
  // Progress: [k/n] per query, and every 10 s the queries running long.
  const ticker = new ProgressTicker(progress, 'fkgqa verify', queries.length, { everyMs: options.progress ? undefined : 0 });
  try {
    await engine.warm?.();
    for (const g of build) {
      const gq = queries.filter((q) => q.graph === g.graph);
      if (gq.length === 0) continue;
      const storedDoc = readGoldAnswers(options.shards, g.graph, digest, { state: options.state });
      const stored = storedDoc ? goldResultsById(storedDoc) : undefined;
      // The unsharded graph: the union of its shards, which the build guarantees equals the input.
      let store = stored ? undefined : await StoreWorker.start(g.shards.map((s) => ({ file: s.file, format: 'application/n-triples' })));
      progress(`${g.graph}: ${gq.length} queries, ${g.shards.length} shard endpoints; gold ${stored ? 'from gold-answers.json' : 'computed on the unsharded graph'}`);
      try {
        for (const q of gq) {
          ticker.start(q.id);
          const parsed = parseQuery(q.text, defaultPrefix);
          if (!parsed.ok) throw new InputError(`gold query does not parse: ${parsed.error}`, { query: q.id });
          const normalized = parsed.query.normalized;
          const ordered = parsed.query.ast.type === 'query' && !!(parsed.query.ast as { order?: unknown[] }).order?.length;
          let gold: GoldResult;
          if (stored) {
            gold = stored.get(q.id) ?? { status: 'error', error: 'not in gold-answers.json', source: 'gold-answers.json' };
          } else {
            const o = await store!.query({ query: normalized, resultsFormat: MEDIA.json, timeoutMs });
            gold =
              o.status === 'ok'
                ? { status: 'ok', results: JSON.parse(o.body) as JsonResults, ms: o.ms, source: 'computed' }
                : { status: o.status, error: o.status === 'error' ? o.error : undefined, ms: o.ms, source: 'computed' };
            if (gold.results) gold.rows = rowsOf(gold.results);
          }
          const { results: _results, ...goldInfo } = gold;
          const v: QueryVerdict = { id: q.id, graph: q.graph, questions: q.questions, ordered, gold: goldInfo };
          const shardEndpoints = urls.get(q.graph)!;
          // Ties under ORDER BY: the key query's answer on the unsharded graph, computed when needed.
          let keyed: JsonResults | null | undefined;
          const tieCheck = async (f: FormVerdict, answer: JsonResults | undefined) => {
            if (f.status !== 'different' || !ordered || !answer) return;
            if (keyed === undefined) {
              const kq = keyQuery(parsed.query.ast);
              store ??= await StoreWorker.start(g.shards.map((s) => ({ file: s.file, format: 'application/n-triples' })));
              const o = kq ? await store.query({ query: kq, resultsFormat: MEDIA.json, timeoutMs }) : undefined;
              keyed = o?.status === 'ok' ? (JSON.parse(o.body) as JsonResults) : null;
            }
            if (!keyed) return;
            const e = equivalentUnderTies(parsed.query.ast, keyed, answer, gold.results);
            if (e.equivalent) {
              f.status = 'equivalent';
              f.reason = `${f.reason}; allowed by ties under ORDER BY (${e.ties} tied solutions on the unsharded graph)`;
            } else f.reason = `${f.reason}; not explained by ties (${e.why})`;
          };
          if (forms.includes('federated')) {
            const o = await run(normalized, shardEndpoints);
            v.federated = verdict(gold, o, ordered, 'federated');
            await tieCheck(v.federated, o.status === 'ok' ? outcomeJson(o) : undefined);
          }
          if (forms.includes('trivial')) {
            const t = trivialFederation(parsed.query.ast, shardEndpoints);
            const o = await run(t.text, []);
            v.trivial = verdict(gold, o, ordered, 'trivial');
            await tieCheck(v.trivial, o.status === 'ok' ? outcomeJson(o) : undefined);
            if (t.caveats.length > 0 && v.trivial.status !== 'identical') v.trivial.reason += ` (${t.caveats.join('; ')})`;
          }
          verdicts.push(v);
          ticker.done(q.id);
          progress(`  [${verdicts.length}/${queries.length}] ${q.id}: gold ${gold.status === 'ok' ? `${gold.rows} rows` : gold.status}; ${forms.map((f) => `${f} ${v[f]!.status}`).join(', ')} (${secs(performance.now() - t0)})`);
        }
      } finally {
        await store?.close();
      }
    }
  } finally {
    ticker.stop();
    await engine.close();
    await server?.close();
  }
  const totals: VerifyReport['totals'] = {};
  for (const f of forms) {
    const t: FormTotals = { identical: 0, equivalent: 0, different: 0, failed: 0, failedOnBothSides: 0 };
    for (const v of verdicts) {
      const s = v[f]!.status;
      t[s]++;
      if (s === 'failed' && v.gold.status !== 'ok') t.failedOnBothSides++;
    }
    totals[f] = t;
  }
  return { graphs, timeoutMs, endpoints: endpointsPath ?? 'started', forms, queries: verdicts, totals, ms: performance.now() - t0 };
}

/** The report as text: one line per query, totals, then every difference and failure explained. */
export function formatVerifyReport(r: VerifyReport): string {
  const lines: string[] = [];
  const n = r.queries.length;
  lines.push(`fkgqa verify: ${n} distinct gold queries over ${r.graphs.length} graphs; time limit ${secs(r.timeoutMs)} per query and side`);
  lines.push('');
  const cell = (v?: FormVerdict) => (v ? `${v.status}${v.status === 'failed' ? '' : ` (${v.rows} rows)`}` : '-');
  lines.push(`${'query'.padEnd(36)} ${'gold'.padEnd(14)} ${r.forms.map((f) => f.padEnd(24)).join(' ')}`);
  for (const v of r.queries) {
    const gold = v.gold.status === 'ok' ? `${v.gold.rows} rows` : v.gold.status;
    lines.push(`${v.id.padEnd(36)} ${gold.padEnd(14)} ${r.forms.map((f) => cell(v[f]).padEnd(24)).join(' ')}`);
  }
  lines.push('');
  lines.push(`Totals (n=${n})     identical   equivalent  different   failed (of which the unsharded graph failed too)`);
  for (const f of r.forms) {
    const t = r.totals[f]!;
    lines.push(`  ${f.padEnd(16)} ${String(t.identical).padEnd(11)} ${String(t.equivalent).padEnd(11)} ${String(t.different).padEnd(11)} ${t.failed} (${t.failedOnBothSides})`);
  }
  const listed = (status: 'equivalent' | 'different' | 'failed') =>
    r.queries.flatMap((v) =>
      r.forms
        .filter((f) => v[f]?.status === status)
        .map((f) => {
          const x = v[f]!;
          const c = x.comparison;
          const rows = c && status !== 'failed' && !c.orderOnly ? `\n      missing: ${c.missing.join(' | ') || '-'}\n      extra:   ${c.extra.join(' | ') || '-'}` : '';
          return `  ${v.id} ${f}: ${x.reason}${rows}`;
        }),
    );
  const equivalents = listed('equivalent');
  const diffs = listed('different');
  const fails = listed('failed');
  if (equivalents.length > 0) lines.push('', 'Equivalent (allowed by ties under ORDER BY)', ...equivalents);
  if (diffs.length > 0) lines.push('', 'Differences', ...diffs);
  if (fails.length > 0) lines.push('', 'Failures', ...fails);
  lines.push('', `verified in ${secs(r.ms)}`);
  return lines.join('\n') + '\n';
}
