/**
 * `fkgqa verify`: the federation loses no answer, and the federation engines agree. Every distinct gold query of a build is run in three forms (src/verify/forms.ts) on every
 * chosen federation engine (`--federation-engine <name>|all`, src/federation/engines.ts):
 * federated (the engine selects sources among the graph's shard endpoints), trivial (the paper's
 * trivial federation over all shards; oxigraph has no SERVICE, so an engine evaluates
 * it) and oracle (the trivial federation over the shards the gold answer needs, as `fkgqa eval`'s
 * oracle agent submits it). Each answer is compared with the answer on the unsharded graph (gold),
 * ties under ORDER BY allowed, and the engines' answers with each other: every disagreement (engine
 * vs engine vs gold) is reported (src/verify/report.ts). The endpoints come from the endpoint
 * registry (src/federation/registry.ts: the endpoints files of running serves, checked), or are
 * started in this process by the launcher the library entry point passes (src/index.ts), so verify
 * never imports serve.
 */
import { ProgressTicker } from '../common/progress.js';
import { FORMS, type FederationForm } from './forms.js';
import fs from 'node:fs';
import path from 'node:path';
import { parseQuery } from '../sparql/parse.js';
import type { SparqlQuery } from 'sparqljs';
import { InputError } from '../common/errors.js';
import { STATE_FILES, stateDir } from '../build/state.js';
import { readBuild, readJsonFile } from '../build/open.js';
import { readGoldQueries } from '../build/benchmark.js';
import { goldResultsById, readGoldAnswers, TIE_ANALYSIS, type GoldAnswer, type GoldResult, type GoldTies } from '../build/gold-answers.js';
import { StoreWorker } from '../common/store-worker.js';
import { MEDIA } from '../sparql/protocol.js';
import type { SparqlResults } from '../sparql/results.js';
import { compareResults } from '../answers/compare.js';
import { admissibleUnderTies, byVariableName, type AdmissibleAnswers } from '../answers/ties.js';
import { trivialFederation } from '../sparql/trivial.js';
import { type EngineOutcome, type FederationEngine } from '../federation/engine.js';
import { createEngine, DEFAULT_FEDERATION_ENGINE, engineUnavailable, parseEngineList, type FederationEngineName } from '../federation/engines.js';
import { negatedShards } from '../federation/oracle.js';
import { readNeededShards } from '../build/fan-out.js';
import { oracleFederation } from '../sparql/trivial.js';
import { classifyDisagreement, computeTotals, type Disagreement, type FormVerdict, type QueryVerdict, type VerifyReport } from './report.js';
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
  /**
   * The federation engines, by `--federation-engine` name (src/federation/engines.ts): one name, a
   * list (or names separated by commas), or `all` (every engine but the baseline
   * `comunica-default`); default `comunica`. Each runs every form of every query.
   */
  federationEngine?: string | string[];
  /** State folder of the build (default `<shards>.state/`, see src/build/state.ts): stored gold answers and the default endpoints file. */
  state?: string;
  /** Only these graphs. */
  kgs?: string[];
  /** Only these query ids (`<kg>/q<N>`); without `kgs`, their graphs are the graphs verified. */
  queries?: string[];
  /** Time limit per query, form and engine, and of the unsharded graph, in ms (default 20,000). */
  timeoutMs?: number;
  /**
   * Forms to run (default all three; without stored realised fan-out, see `fkgqa stats`, the oracle
   * form is then skipped, and naming it is an error).
   */
  forms?: FederationForm[];
  /** Progress lines (stderr in the CLI). */
  progress?: (line: string) => void;
  /**
   * The tie analysis of a gold answer verify computes itself (no stored gold answers):
   * `analyseGoldTies` of src/report/answers.ts, which the library entry point passes (verify does
   * not import report). Stored gold answers carry theirs. Without it, a computed gold answer admits
   * no other answer.
   */
  analyseTies?: (store: StoreWorker, q: { id: string; normalized: string; queryType: string; ordered: boolean; ast: SparqlQuery }, gold: GoldAnswer, timeoutMs: number) => Promise<GoldTies | undefined>;
}

export type { Disagreement, FormTotals, FormVerdict, QueryVerdict, VerifyReport } from './report.js';

/** The output digest of a build (build.json, already checked by `openBuild`). */
function readBuildDigest(shards: string): string {
  return readJsonFile<{ outputDigest: string }>(path.join(shards, 'build.json'), 'build.json of an fkgqa build').outputDigest;
}

function outcomeJson(o: { status: 'ok'; body: string }): SparqlResults {
  return JSON.parse(o.body) as SparqlResults;
}

const rowsOf = (r: SparqlResults) => (r.boolean !== undefined ? 1 : (r.results?.bindings.length ?? 0));
const secs = (ms: number) => `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;

/** An engine's outcome with the time it took (ms, measured around the call). */
type TimedOutcome = EngineOutcome & { ms: number };

const requestsOf = (o: EngineOutcome) => Object.values(o.requests).reduce((a, b) => a + b, 0);

function verdict(gold: GoldResult, outcome: TimedOutcome, ordered: boolean, form: FederationForm): FormVerdict {
  const requests = requestsOf(outcome);
  if (outcome.status !== 'ok') {
    const what = outcome.status === 'timeout' ? `timeout after ${secs(outcome.ms)}` : `error: ${outcome.error}`;
    const goldWhat = gold.status === 'ok' ? '' : `; the unsharded graph: ${gold.status === 'timeout' ? 'timeout' : `error: ${gold.error}`} too`;
    return { status: 'failed', failure: outcome.status === 'timeout' ? 'timeout' : 'error', reason: `${form}: ${what}${goldWhat}`, ms: outcome.ms, requests };
  }
  const results = outcomeJson(outcome);
  if (gold.status !== 'ok' || !gold.results) {
    return { status: 'failed', reason: `the unsharded graph did not answer (${gold.status === 'timeout' ? 'timeout' : `error: ${gold.error}`}); ${form} answered ${rowsOf(results)} rows`, rows: rowsOf(results), ms: outcome.ms, requests };
  }
  const c = compareResults(gold.results, results, ordered);
  return c.identical
    ? { status: 'identical', rows: c.rows, ms: outcome.ms, requests, comparison: c }
    : { status: 'different', reason: c.reason, rows: c.rows, ms: outcome.ms, requests, comparison: c };
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
  let names: string[];
  try {
    names = parseEngineList(options.federationEngine ?? DEFAULT_FEDERATION_ENGINE);
  } catch (e) {
    throw new InputError(`--federation-engine: ${(e as Error).message}`);
  }
  for (const name of names as FederationEngineName[]) {
    const why = await engineUnavailable(name);
    if (why) throw new InputError(`--federation-engine: ${name} cannot run here: ${why}`);
  }
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
    // The probe gets the query time limit (not the 5 s default): a serve of the whole corpus just
    // started, at load 30+, answers ~80 ASK {} at once slower than 5 s (measured with bench:federation).
    const down = await unreachableEndpoints(graphs.flatMap((g) => urls.get(g)!), Math.max(5_000, timeoutMs));
    if (down.length > 0) {
      throw new InputError(`${down.length} endpoint(s) do not answer${down.every((d) => d.status === undefined) ? ' (is fkgqa serve running?)' : ' ASK {} properly'}: ${down.map((d) => `${d.url}: ${d.why}`).join('; ')}`, { file: endpointsPath });
    }
  }

  const engines: FederationEngine[] = [];
  const verdicts: QueryVerdict[] = [];
  const disagreements: Disagreement[] = [];
  // Progress: [k/n] per query, and every 10 s the queries running long.
  const ticker = new ProgressTicker(progress, 'fkgqa verify', queries.length, { everyMs: options.progress ? undefined : 0, unit: 'queries' });
  try {
    for (const name of names) {
      try {
        const engine = await createEngine(name, { endpoints: registry.endpoints.map((e) => e.url) });
        engines.push(engine);
        progress(`fkgqa verify: starting the federation engine ${name}`);
        if (forms.includes('federated') && !engine.selectsSources) progress(`fkgqa verify: the federated form is skipped on ${name}: it has no source selection (it evaluates SERVICE clauses only; docs/federation.md)`);
        await engine.warm?.();
      } catch (e) {
        throw new InputError(`the federation engine ${name} failed to start: ${(e as Error).message}`);
      }
    }
    const run = async (engine: FederationEngine, query: string, sources: string[]): Promise<TimedOutcome> => {
      const t = performance.now();
      const o = await engine.query(query, MEDIA.json, { timeoutMs, sources });
      return { ...o, ms: performance.now() - t };
    };
    for (const g of build) {
      const gq = queries.filter((q) => q.graph === g.graph);
      if (gq.length === 0) continue;
      const storedDoc = readGoldAnswers(options.shards, g.graph, digest, { state: options.state });
      const stored = storedDoc ? goldResultsById(storedDoc) : undefined;
      const needed = forms.includes('oracle') ? readNeededShards(options.shards, g.graph, digest, options.state) : undefined;
      if (forms.includes('oracle') && !needed) {
        const why = `no realised fan-out of ${g.graph} stored for this build (run fkgqa stats --shards ${options.shards}${options.state ? ` --state ${options.state}` : ''})`;
        if (options.forms?.includes('oracle')) throw new InputError(`--form oracle: ${why}`, { file: options.shards });
        progress(`${g.graph}: the oracle form is skipped: ${why}`);
      }
      // The unsharded graph: the union of its shards, which the build guarantees equals the input.
      let store = stored ? undefined : await StoreWorker.start(g.shards.map((s) => ({ file: s.file, format: 'application/n-triples' })));
      progress(`${g.graph}: ${gq.length} queries, ${g.shards.length} shard endpoints; gold ${stored ? 'from gold-answers.json' : 'computed on the unsharded graph'}`);
      const shardEndpoints = urls.get(g.graph)!;
      const shardUrls = registry.endpoints.filter((e) => e.graph === g.graph && e.shard !== null).map((e) => ({ shard: e.shard!, url: e.url }));
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
                ? { status: 'ok', results: JSON.parse(o.body) as SparqlResults, ms: o.ms, source: 'computed' }
                : { status: o.status, error: o.status === 'error' ? o.error : undefined, ms: o.ms, source: 'computed' };
            if (gold.results) gold.rows = rowsOf(gold.results);
          }
          const { results: _results, ...goldInfo } = gold;
          const v: QueryVerdict = { id: q.id, graph: q.graph, questions: q.questions, ordered, gold: goldInfo, engines: Object.fromEntries(names.map((n) => [n, {}])) };
          // Ties under ORDER BY, at the top level and in sub-SELECTs: the tie analysis of the gold
          // answer (stored by fkgqa stats, or made here on the unsharded graph when gold was computed
          // here or stored without a tie analysis), judged by the admissibility rule score uses (admissibleUnderTies).
          let ties: GoldTies | null | undefined = stored && storedDoc?.tieAnalysis === TIE_ANALYSIS ? (gold.ties ?? null) : undefined;
          const tieCheck = async (f: FormVerdict, answer: SparqlResults | undefined) => {
            if (f.status !== 'different' || !answer || !gold.results) return;
            if (ties === undefined) {
              ties = null;
              if (options.analyseTies && gold.status === 'ok') {
                store ??= await StoreWorker.start(g.shards.map((s) => ({ file: s.file, format: 'application/n-triples' })));
                const queryType = parsed.query.ast.type === 'query' ? parsed.query.ast.queryType : 'UPDATE';
                ties = (await options.analyseTies(store, { id: q.id, normalized, queryType, ordered, ast: parsed.query.ast }, { query: q.id, status: 'ok', rows: gold.rows, ordered, results: gold.results as SparqlResults }, timeoutMs)) ?? null;
              }
            }
            if (!ties) return;
            const a = admissibleUnderTies(gold.results, ties as AdmissibleAnswers, answer, ordered, byVariableName);
            if (a.match.correct) {
              f.status = 'equivalent';
              f.reason = `${f.reason}; admissible under ties (${a.by === 'alternative' ? 'another choice among solutions tied in a sub-SELECT' : 'another order or choice of solutions tied under the top-level ORDER BY'}): ${ties.reason}`;
            } else f.reason = `${f.reason}; not explained by ties (${ties.reason})`;
          };
          // The text of each form (the same for every engine).
          const texts: Partial<Record<FederationForm, { text: string; sources: string[]; caveats: string[] } | { skipped: string }>> = {};
          if (forms.includes('federated')) texts.federated = { text: normalized, sources: shardEndpoints, caveats: [] };
          if (forms.includes('trivial')) {
            const t = trivialFederation(parsed.query.ast, shardEndpoints);
            texts.trivial = { text: t.text, sources: [], caveats: t.caveats };
          }
          if (forms.includes('oracle')) {
            if (!needed) texts.oracle = { skipped: 'no realised fan-out stored for this build (fkgqa stats)' };
            else {
              const n = needed.has(q.id) ? needed.get(q.id)! : null;
              const negated = n === null ? [] : await negatedShards(q.text, defaultPrefix, shardUrls, timeoutMs);
              const t = oracleFederation(parsed.query.ast, shardUrls, n, negated);
              texts.oracle = { text: t.text, sources: [], caveats: t.caveats };
            }
          }
          const cells: string[] = [];
          for (const f of forms) {
            const form = texts[f]!;
            const answers = new Map<string, SparqlResults>();
            for (const engine of engines) {
              let fv: FormVerdict;
              if ('skipped' in form) fv = { status: 'skipped', reason: form.skipped, ms: 0, requests: 0 };
              else if (f === 'federated' && !engine.selectsSources) fv = { status: 'skipped', reason: `${engine.name} has no source selection (it evaluates SERVICE clauses only)`, ms: 0, requests: 0 };
              else {
                const o = await run(engine, form.text, form.sources);
                fv = verdict(gold, o, ordered, f);
                const answer = o.status === 'ok' ? outcomeJson(o) : undefined;
                if (answer) answers.set(engine.name, answer);
                await tieCheck(fv, answer);
                if (form.caveats.length > 0 && fv.status !== 'identical') fv.reason += ` (${form.caveats.join('; ')})`;
              }
              v.engines[engine.name][f] = fv;
              cells.push(`${names.length > 1 ? `${engine.name} ` : ''}${f} ${fv.status}${fv.status === 'skipped' ? '' : ` ${fv.requests} req ${secs(fv.ms)}`}`);
            }
            const d = classifyDisagreement(v, f, answers);
            if (d) disagreements.push(d);
          }
          verdicts.push(v);
          ticker.done(q.id);
          progress(`  [${verdicts.length}/${queries.length}] ${q.id}: gold ${gold.status === 'ok' ? `${gold.rows} rows` : gold.status}; ${cells.join(', ')} (${secs(performance.now() - t0)})`);
        }
      } finally {
        await store?.close();
      }
    }
  } finally {
    ticker.stop();
    await Promise.all(engines.map((e) => e.close()));
    await server?.close();
  }
  const totals = computeTotals(verdicts, names, forms);
  const different = verdicts.reduce((n, v) => n + names.reduce((m, e) => m + forms.filter((f) => v.engines[e][f]?.status === 'different').length, 0), 0);
  return { graphs, timeoutMs, endpoints: endpointsPath ?? 'started', engines: names, forms, queries: verdicts, totals, disagreements, different, ms: performance.now() - t0 };
}

export { formatVerifyReport } from './report.js';
