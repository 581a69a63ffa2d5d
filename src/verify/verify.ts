/**
 * `fkgqa verify`: the federation loses no answer. Every distinct gold query of a build is run as a
 * federated query over its graph's shard endpoints with Comunica 4.5.0 (sources = the endpoints),
 * and in the paper's trivial-federation form (every triple pattern a UNION of SERVICE calls over
 * all shards of the graph, also executed by Comunica: oxigraph has no SERVICE, pitfall B11); each
 * answer is compared with the answer on the unsharded graph.
 */
import { ProgressTicker } from '../common/progress.js';
import fs from 'node:fs';
import path from 'node:path';
import { parseQuery } from '../sparql/parse.js';
import { InputError } from '../common/errors.js';
import { STATE_FILES, stateDir } from '../build/state.js';
import { readJsonFile } from '../build/open.js';
import { readGoldAnswers as readStoredAnswers } from '../report/answers.js';
import { StoreWorker } from '../common/store-worker.js';
import { MEDIA } from '../sparql/protocol.js';
import type { JsonResults } from '../sparql/results.js';
import { readBuild, serve, type EndpointsFile, type ShardServer } from '../serve/server.js';
import { compareResults, type Comparison } from '../answers/compare.js';
import { EngineWorker, type EngineOutcome } from '../federation/comunica/worker.js';
import { equivalentUnderTies, keyQuery } from '../answers/ties.js';
import { trivialFederation } from '../sparql/trivial.js';

/** The two federated forms of a query. */
export type FederationForm = 'federated' | 'trivial';
/** Both forms, in report order. */
export const FORMS: FederationForm[] = ['federated', 'trivial'];

/** Options of `verify`. */
export interface VerifyOptions {
  /** Directory of a `fkgqa partition` build (with `benchmark.json`). */
  shards: string;
  /**
   * `endpoints.json` of running endpoints (`fkgqa serve`, which writes it to
   * `<state>/endpoints.json`): a file path, or `true` for that default file. Without it, verify
   * starts the endpoints itself, in this process, on a free loopback port, and stops them at the
   * end. Every endpoint is checked to answer before any query runs.
   */
  endpoints?: string | true;
  /** State folder of the build (default `<shards>.state/`, see src/common/state.ts): stored gold answers and the default endpoints file. */
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

/** The gold answer of one query. */
export interface GoldAnswer {
  status: 'ok' | 'error' | 'timeout';
  error?: string;
  rows?: number;
  ms?: number;
  /** Stored by `fkgqa stats` (`<state>/gold-answers/<kg>.json`, for this very build), or computed here on the union of the graph's shards. */
  source: 'gold-answers.json' | 'computed';
  results?: JsonResults;
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
  gold: Omit<GoldAnswer, 'results'>;
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
  /** `started` when verify ran the endpoints itself, else the endpoints file used. */
  endpoints: string;
  forms: FederationForm[];
  queries: QueryVerdict[];
  totals: Partial<Record<FederationForm, FormTotals>>;
  ms: number;
}

interface BenchmarkFile {
  defaultPrefix: string;
  entries: { kg: string; query: string; queryId: string }[];
}

/** A distinct gold query of the build. */
interface GoldQuery {
  id: string;
  graph: string;
  text: string;
  questions: number;
}

/**
 * The distinct gold queries of a build, from `benchmark.json`, in id order within each graph.
 * @throws InputError when the file is missing
 */
export function readGoldQueries(shards: string): { defaultPrefix: string; queries: GoldQuery[] } {
  const file = path.join(shards, 'benchmark.json');
  if (!fs.existsSync(file)) throw new InputError('benchmark.json not found: not a fkgqa partition build', { file });
  const b = readJsonFile<BenchmarkFile>(file, 'benchmark.json of an fkgqa build');
  const byId = new Map<string, GoldQuery>();
  for (const e of b.entries) {
    const q = byId.get(e.queryId);
    if (q) q.questions++;
    else byId.set(e.queryId, { id: e.queryId, graph: e.kg, text: e.query, questions: 1 });
  }
  const num = (id: string) => Number(/q(\d+)$/.exec(id)?.[1] ?? 0);
  const queries = [...byId.values()].sort((a, b) => (a.graph < b.graph ? -1 : a.graph > b.graph ? 1 : num(a.id) - num(b.id)));
  return { defaultPrefix: b.defaultPrefix, queries };
}

/**
 * Gold answers stored by `fkgqa stats` for this build, by query id: `<state>/gold-answers/<kg>.json`
 * (or `<shards>/<kg>/gold-answers.json`, where versions before the state folder kept them), used
 * only when its `buildDigest` is the build's output digest (answers of another build are ignored).
 * @param shards the build folder
 * @param graph the graph
 * @param digest the build's output digest (build.json)
 * @param state the `--state` folder, if not `<shards>.state/`
 * @returns the answers, or undefined when no stored answers match the build
 */
export function readGoldAnswers(shards: string, graph: string, digest: string, state?: string): Map<string, GoldAnswer> | undefined {
  for (const file of [path.join(stateDir(shards, state), STATE_FILES.goldAnswers(graph)), path.join(shards, graph, 'gold-answers.json')]) {
    const g = readStoredAnswers(file);
    if (!g || g.buildDigest !== digest || !Array.isArray(g.answers)) continue;
    return new Map(g.answers.map((a) => [a.query, { status: a.status, error: a.error, rows: a.rows, results: a.results as JsonResults | undefined, source: 'gold-answers.json' as const }]));
  }
  return undefined;
}

/** Checks the shape of an endpoints file and names what is wrong (undefined when fine). */
function endpointsProblem(e: unknown): string | undefined {
  if (!e || typeof e !== 'object' || Array.isArray(e)) return 'not a JSON object';
  const x = e as Record<string, unknown>;
  if (!Array.isArray(x.endpoints)) return '"endpoints" is missing or not a list';
  for (const [i, en] of (x.endpoints as unknown[]).entries()) {
    const o = en as Record<string, unknown> | null;
    if (!o || typeof o !== 'object' || typeof o.id !== 'string' || typeof o.url !== 'string' || typeof o.role !== 'string' || typeof o.graph !== 'string') {
      return `endpoints[${i}]: needs string fields "id", "url", "role" and "graph"`;
    }
  }
  return undefined;
}

/**
 * Reads an endpoints file written by `fkgqa serve`.
 * @throws InputError naming the file when it is missing (e.g. serve stopped or the build was
 *   rebuilt), is not JSON, has the wrong shape, or belongs to another build
 */
export function readEndpointsFile(file: string, shards: string): EndpointsFile {
  if (!fs.existsSync(file)) throw new InputError('endpoints file not found: is fkgqa serve running on this build? (start it, or leave out --endpoints to let verify start the endpoints)', { file });
  const e = readJsonFile<unknown>(file, 'endpoints file');
  const problem = endpointsProblem(e);
  if (problem) throw new InputError(`not an endpoints file written by fkgqa serve: ${problem}`, { file });
  const f = e as EndpointsFile;
  if (typeof f.shards === 'string' && path.resolve(f.shards) !== path.resolve(shards)) {
    throw new InputError(`the endpoints serve another build (${f.shards}), not ${path.resolve(shards)}`, { file });
  }
  return f;
}

/**
 * Checks that every endpoint answers a SPARQL query (`ASK {}` by GET, SPARQL 1.1 Protocol) with a
 * 2xx status within `timeoutMs`, all at once.
 * @returns the endpoints that do not, each with why (`fetch failed`, `timeout`, `HTTP 404`), empty when all answer
 */
export async function unreachableEndpoints(urls: string[], timeoutMs = 5_000): Promise<{ url: string; why: string }[]> {
  const results = await Promise.all(
    urls.map(async (url) => {
      try {
        const r = await fetch(`${url}${url.includes('?') ? '&' : '?'}query=${encodeURIComponent('ASK {}')}`, {
          headers: { accept: MEDIA.json },
          signal: AbortSignal.timeout(timeoutMs),
        });
        await r.arrayBuffer();
        return r.ok ? undefined : { url, why: `HTTP ${r.status}` };
      } catch (e) {
        const err = e as Error & { cause?: { code?: string } };
        return { url, why: err.name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : `${err.message}${err.cause?.code ? ` (${err.cause.code})` : ''}` };
      }
    }),
  );
  return results.filter((x): x is { url: string; why: string } => x !== undefined);
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

function verdict(gold: GoldAnswer, outcome: EngineOutcome, ordered: boolean, form: FederationForm): FormVerdict {
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

/** Shard endpoint URLs per graph, from a running server or an endpoints file. */
function shardUrls(file: EndpointsFile): Map<string, string[]> {
  const m = new Map<string, string[]>();
  for (const e of file.endpoints) {
    if (e.role !== 'shard') continue;
    if (!m.has(e.graph)) m.set(e.graph, []);
    m.get(e.graph)!.push(e.url);
  }
  return m;
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

  let server: ShardServer | undefined;
  let endpoints: EndpointsFile;
  const endpointsPath = options.endpoints === true ? path.join(stateDir(options.shards, options.state), STATE_FILES.endpoints) : options.endpoints;
  if (endpointsPath) {
    endpoints = readEndpointsFile(endpointsPath, options.shards);
  } else {
    progress(`fkgqa verify: starting the shard endpoints`);
    server = await serve({ shards: options.shards, kgs: graphs, timeoutMs, writeFiles: false });
    endpoints = server.endpointsFile();
  }
  const urls = shardUrls(endpoints);
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

  const engine = await EngineWorker.start();
  const verdicts: QueryVerdict[] = [];
  // Progress: [k/n] per query, and every 10 s the queries running long.
  const ticker = new ProgressTicker(progress, 'fkgqa verify', queries.length, { everyMs: options.progress ? undefined : 0 });
  try {
    for (const g of build) {
      const gq = queries.filter((q) => q.graph === g.graph);
      if (gq.length === 0) continue;
      const stored = readGoldAnswers(options.shards, g.graph, digest, options.state);
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
          let gold: GoldAnswer;
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
            const o = await engine.query({ query: normalized, sources: shardEndpoints, timeoutMs });
            v.federated = verdict(gold, o, ordered, 'federated');
            await tieCheck(v.federated, o.status === 'ok' ? outcomeJson(o) : undefined);
          }
          if (forms.includes('trivial')) {
            const t = trivialFederation(parsed.query.ast, shardEndpoints);
            const o = await engine.query({ query: t.text, sources: [], asAlgebra: true, timeoutMs });
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
