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
import { parseQuery, type ParsedQuery } from '../sparql/parse.js';
import type { SparqlQuery } from 'sparqljs';
import { InputError } from '../common/errors.js';
import { STATE_FILES, stateDir } from '../build/state.js';
import { readBuild, readJsonFile, type GraphShards } from '../build/open.js';
import { readGoldQueries, type BuildGoldQuery } from '../build/benchmark.js';
import { goldResultsById, readGoldAnswers, TIE_ANALYSIS, type GoldAnswer, type GoldAnswers, type GoldResult, type GoldTies } from '../build/gold-answers.js';
import { StoreWorker } from '../common/store-worker.js';
import { MEDIA } from '../sparql/protocol.js';
import type { SparqlResults } from '../sparql/results.js';
import { compareResults, type GroupConcats } from '../answers/compare.js';
import { groupConcatSeparators } from '../sparql/inspect.js';
import { admissibleUnderTies, byVariableNameOf, type AdmissibleAnswers } from '../answers/ties.js';
import { trivialFederation } from '../sparql/trivial.js';
import { type EngineOutcome, type FederationEngine } from '../federation/engine.js';
import { createEngine, DEFAULT_FEDERATION_ENGINE, engineUnavailable, parseEngineList, type FederationEngineName } from '../federation/engines.js';
import { negatedShards } from '../federation/oracle.js';
import { readNeededShards } from '../build/fan-out.js';
import { oracleFederation } from '../sparql/trivial.js';
import { classifyDisagreement, computeTotals, secs, type Disagreement, type FormVerdict, type QueryVerdict, type VerifyReport } from './report.js';
import {
  openRegistry,
  placementLine,
  placementMismatches,
  placementRefusal,
  readEndpointsFile,
  registryFromEndpointsValue,
  unreachableEndpoints,
  type EndpointLauncher,
  type EndpointRegistry,
  type RunningEndpoints,
} from '../federation/registry.js';
import { counted } from '../common/strings.js';

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
  analyseTies?: (
    store: StoreWorker,
    q: { id: string; normalized: string; queryType: string; ordered: boolean; ast: SparqlQuery },
    gold: GoldAnswer,
    timeoutMs: number,
  ) => Promise<GoldTies | undefined>;
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

/** An engine's outcome with the time it took (ms, measured around the call). */
type TimedOutcome = EngineOutcome & { ms: number };

const requestsOf = (o: EngineOutcome) => Object.values(o.requests).reduce((a, b) => a + b, 0);

function verdict(gold: GoldResult, outcome: TimedOutcome, ordered: boolean, form: FederationForm, concats: GroupConcats): FormVerdict {
  const requests = requestsOf(outcome);
  if (outcome.status !== 'ok') {
    const what = outcome.status === 'timeout' ? `timeout after ${secs(outcome.ms)}` : `error: ${outcome.error}`;
    const goldWhat = gold.status === 'ok' ? '' : `; the unsharded graph: ${gold.status === 'timeout' ? 'timeout' : `error: ${gold.error}`} too`;
    return { status: 'failed', failure: outcome.status === 'timeout' ? 'timeout' : 'error', reason: `${form}: ${what}${goldWhat}`, ms: outcome.ms, requests };
  }
  const results = outcomeJson(outcome);
  if (gold.status !== 'ok' || !gold.results) {
    return {
      status: 'failed',
      reason: `the unsharded graph did not answer (${gold.status === 'timeout' ? 'timeout' : `error: ${gold.error}`}); ${form} answered ${counted(rowsOf(results), 'row')}`,
      rows: rowsOf(results),
      ms: outcome.ms,
      requests,
    };
  }
  const c = compareResults(gold.results, results, ordered, undefined, concats);
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

/** The federation engines to run, by name: `--federation-engine` parsed (`parseEngineList`), each checked to run here. */
async function chosenEngines(federationEngine: string | string[] | undefined): Promise<string[]> {
  let names: string[];
  try {
    names = parseEngineList(federationEngine ?? DEFAULT_FEDERATION_ENGINE);
  } catch (e) {
    throw new InputError(`--federation-engine: ${(e as Error).message}`);
  }
  for (const name of names as FederationEngineName[]) {
    const why = await engineUnavailable(name);
    if (why) throw new InputError(`--federation-engine: ${name} cannot run here: ${why}`);
  }
  return names;
}

/** The graphs and gold queries to verify (`selectQueries`). */
interface Selection {
  /** The graphs with their shard files. */
  build: GraphShards[];
  /** The build's output digest. */
  digest: string;
  /** Their names. */
  graphs: string[];
  /** The IRI of the undeclared `:` prefix of the gold queries. */
  defaultPrefix: string;
  /** The distinct gold queries of those graphs (only `options.queries` when given). */
  queries: BuildGoldQuery[];
}

/**
 * Opens the build (`readBuild`: build.json, benchmark.json, manifests, shard sha256) and selects
 * the graphs and gold queries: `--kg`, else the graphs of `--query <kg>/q<N>`, else all.
 * @throws InputError for a query id that is not `<kg>/q<N>` or not in the build, or a build that does not check
 */
function selectQueries(options: VerifyOptions): Selection {
  for (const id of options.queries ?? []) {
    if (!/^[^/]+\/q\d+$/.test(id)) throw new InputError(`--query ${id}: a query id is <kg>/q<N>, e.g. concert_singer/q3`);
  }
  const kgs = options.kgs?.length ? options.kgs : options.queries?.length ? [...new Set(options.queries.map((id) => id.split('/')[0]))] : undefined;
  const build = readBuild(options.shards, kgs);
  const digest = readBuildDigest(options.shards);
  const graphs = build.map((g) => g.graph);
  const { defaultPrefix, queries: all } = readGoldQueries(options.shards);
  const wanted = options.queries ? new Set(options.queries) : undefined;
  for (const id of wanted ?? []) if (!all.some((q) => q.id === id)) throw new InputError(`no gold query ${id} in the build`, { file: path.join(options.shards, 'benchmark.json') });
  return { build, digest, graphs, defaultPrefix, queries: all.filter((q) => graphs.includes(q.graph) && (!wanted || wanted.has(q.id))) };
}

/** The endpoints verify queries (`openEndpoints`). */
interface VerifyEndpoints {
  registry: EndpointRegistry;
  /** The endpoints started in this process, to stop at the end; undefined with endpoints files. */
  server: RunningEndpoints | undefined;
  /** The endpoints files, joined with ` + `; undefined when started here. */
  endpointsPath: string | undefined;
  /** Shard endpoint URLs per graph, in shard order. */
  urls: Map<string, string[]>;
}

/**
 * The endpoints of the selected graphs: those of `options.endpoints`, else of the serve running on
 * this build when it can be used as is (`usableServe`), else started in this process with
 * `options.launch` (a progress line says which). Each graph must have one endpoint per shard, and
 * endpoints of running serves must answer ASK {}.
 * @throws InputError for a graph without endpoints or with another number of them, endpoints that
 *   do not answer, or no endpoints and no launcher
 */
async function openEndpoints(options: VerifyOptions, s: Selection, timeoutMs: number, progress: (line: string) => void): Promise<VerifyEndpoints> {
  let server: RunningEndpoints | undefined;
  let registry: EndpointRegistry;
  let files =
    options.endpoints === true ? [path.join(stateDir(options.shards, options.state), STATE_FILES.endpoints)] : typeof options.endpoints === 'string' ? [options.endpoints] : options.endpoints;
  // Without --endpoints: the serve running on this build, when it can be used as is (and say so).
  let started = 'no --endpoints';
  if (!files?.length) {
    const running = usableServe(options.shards, options.state, s.graphs);
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
    server = await options.launch({ shards: options.shards, kgs: s.graphs, timeoutMs });
    registry = registryFromEndpointsValue(server.endpointsFile(), 'started');
  }
  const urls = shardUrls(registry);
  for (const g of s.graphs) if (!urls.has(g)) throw new InputError(`no shard endpoints of graph ${g} in the endpoints file`, { file: endpointsPath });
  for (const g of s.build) {
    if (urls.get(g.graph)!.length !== g.shards.length) {
      throw new InputError(
        `graph ${g.graph} has ${counted(g.shards.length, 'shard')} in the build but ${counted(urls.get(g.graph)!.length, 'endpoint')} in the endpoints file (rebuilt since serve started?)`,
        { file: endpointsPath },
      );
    }
  }
  if (endpointsPath) {
    // The probe gets the query time limit (not the 5 s default): a serve of the whole corpus just
    // started, at load 30+, answers ~80 ASK {} at once slower than 5 s (measured with bench:federation).
    const down = await unreachableEndpoints(
      s.graphs.flatMap((g) => urls.get(g)!),
      Math.max(5_000, timeoutMs),
    );
    const where = placementLine(registry);
    if (where) progress(`fkgqa verify: endpoints on ${where}`);
    const moved = down.length > 0 ? [] : await placementMismatches(registry, { checked: (e) => e.graph !== null && s.graphs.includes(e.graph) });
    if (moved.length > 0) throw new InputError(placementRefusal(moved), { file: endpointsPath });
    if (down.length > 0) {
      throw new InputError(
        `${down.length} endpoint(s) do not answer${down.every((d) => d.status === undefined) ? ' (is fkgqa serve running?)' : ' ASK {} properly'}: ${down.map((d) => `${d.url}: ${d.why}`).join('; ')}`,
        { file: endpointsPath },
      );
    }
  }
  return { registry, server, endpointsPath, urls };
}

/**
 * Starts each named engine over the registry's endpoints, adding it to `engines` as soon as it is
 * created (the caller closes them), and warms it.
 * @throws InputError naming an engine that failed to start
 */
async function startEngines(names: string[], registry: EndpointRegistry, forms: FederationForm[], progress: (line: string) => void, engines: FederationEngine[]): Promise<void> {
  for (const name of names) {
    try {
      const engine = await createEngine(name, { endpoints: registry.endpoints.map((e) => e.url) });
      engines.push(engine);
      progress(`fkgqa verify: starting the federation engine ${name}`);
      if (forms.includes('federated') && !engine.selectsSources)
        progress(`fkgqa verify: the federated form is skipped on ${name}: it has no source selection (it evaluates SERVICE clauses only; docs/federation.md)`);
      await engine.warm?.();
    } catch (e) {
      throw new InputError(`the federation engine ${name} failed to start: ${(e as Error).message}`);
    }
  }
}

/** What verifying every query shares: the options, the engines, the endpoints and the verdicts so far. */
interface VerifyContext {
  options: VerifyOptions;
  progress: (line: string) => void;
  timeoutMs: number;
  forms: FederationForm[];
  names: string[];
  engines: FederationEngine[];
  endpoints: VerifyEndpoints;
  selection: Selection;
  ticker: ProgressTicker;
  /** When verify started (performance.now()). */
  t0: number;
  verdicts: QueryVerdict[];
  disagreements: Disagreement[];
}

/** One graph being verified: its stored gold answers and realised fan-out, its shard endpoints, and the store of the unsharded graph. */
interface GraphUnderTest {
  g: GraphShards;
  storedDoc: GoldAnswers | undefined;
  /** Stored gold answers by query id; undefined: gold is computed here on `store`. */
  stored: Map<string, GoldResult> | undefined;
  /** Stored realised fan-out (the oracle form), when that form runs and it is stored. */
  needed: Map<string, string[] | null> | undefined;
  /** The unsharded graph (the union of its shards), started when gold is computed here or ties are analysed. */
  store: StoreWorker | undefined;
  shardEndpoints: string[];
  shardUrls: { shard: string; url: string }[];
}

/** The unsharded graph: the union of its shards, which the build guarantees equals the input. */
function unshardedStore(g: GraphShards): Promise<StoreWorker> {
  return StoreWorker.start(g.shards.map((s) => ({ file: s.file, format: 'application/n-triples' })));
}

/**
 * Verifies the queries `gq` of graph `g` (`verifyQuery`).
 * @throws InputError when the oracle form was named and the graph's realised fan-out is not stored
 */
async function verifyGraphQueries(g: GraphShards, gq: BuildGoldQuery[], ctx: VerifyContext): Promise<void> {
  const { options, progress, forms, endpoints } = ctx;
  const storedDoc = readGoldAnswers(options.shards, g.graph, ctx.selection.digest, { state: options.state });
  const stored = storedDoc ? goldResultsById(storedDoc) : undefined;
  const needed = forms.includes('oracle') ? readNeededShards(options.shards, g.graph, ctx.selection.digest, options.state) : undefined;
  if (forms.includes('oracle') && !needed) {
    const why = `no realised fan-out of ${g.graph} stored for this build (run fkgqa stats --shards ${options.shards}${options.state ? ` --state ${options.state}` : ''})`;
    if (options.forms?.includes('oracle')) throw new InputError(`--form oracle: ${why}`, { file: options.shards });
    progress(`${g.graph}: the oracle form is skipped: ${why}`);
  }
  const store = stored ? undefined : await unshardedStore(g);
  progress(
    `${g.graph}: ${counted(gq.length, 'query', 'queries')}, ${counted(g.shards.length, 'shard endpoint')}; gold ${stored ? 'stored by fkgqa stats (gold-answers/' + g.graph + '.json of the state folder)' : 'computed on the unsharded graph'}`,
  );
  const t: GraphUnderTest = {
    g,
    storedDoc,
    stored,
    needed,
    store,
    shardEndpoints: endpoints.urls.get(g.graph)!,
    shardUrls: endpoints.registry.endpoints.filter((e) => e.graph === g.graph && e.shard !== null).map((e) => ({ shard: e.shard!, url: e.url })),
  };
  try {
    for (const q of gq) await verifyQuery(q, t, ctx);
  } finally {
    await t.store?.close();
  }
}

/** The gold answer of a query: stored, or computed now on the unsharded graph. */
async function goldOf(id: string, normalized: string, t: GraphUnderTest, timeoutMs: number): Promise<GoldResult> {
  if (t.stored) return t.stored.get(id) ?? { status: 'error', error: 'not in gold-answers.json', source: 'gold-answers.json' };
  const o = await t.store!.query({ query: normalized, resultsFormat: MEDIA.json, timeoutMs });
  const gold: GoldResult =
    o.status === 'ok'
      ? { status: 'ok', results: JSON.parse(o.body) as SparqlResults, ms: o.ms, source: 'computed' }
      : { status: o.status, error: o.status === 'error' ? o.error : undefined, ms: o.ms, source: 'computed' };
  if (gold.results) gold.rows = rowsOf(gold.results);
  return gold;
}

/**
 * The tie check of one query's verdicts: a `different` answer that is admissible under ties
 * (at the top level and in sub-SELECTs, by the rule score uses, `admissibleUnderTies`) becomes
 * `equivalent`, else its reason says that ties do not explain it. The tie analysis is the stored
 * one (fkgqa stats), or made here on the unsharded graph, once, when first needed (gold computed
 * here, or stored without a tie analysis).
 */
function tieCheckOf(
  q: BuildGoldQuery,
  query: ParsedQuery,
  ordered: boolean,
  gold: GoldResult,
  t: GraphUnderTest,
  ctx: VerifyContext,
): (f: FormVerdict, answer: SparqlResults | undefined) => Promise<void> {
  let ties: GoldTies | null | undefined = t.stored && t.storedDoc?.tieAnalysis === TIE_ANALYSIS ? (gold.ties ?? null) : undefined;
  const analyseTies = ctx.options.analyseTies;
  return async (f, answer) => {
    if (f.status !== 'different' || !answer || !gold.results) return;
    if (ties === undefined) {
      ties = null;
      if (analyseTies && gold.status === 'ok') {
        t.store ??= await unshardedStore(t.g);
        const queryType = query.ast.type === 'query' ? query.ast.queryType : 'UPDATE';
        ties =
          (await analyseTies(
            t.store,
            { id: q.id, normalized: query.normalized, queryType, ordered, ast: query.ast },
            { query: q.id, status: 'ok', rows: gold.rows, ordered, results: gold.results as SparqlResults },
            ctx.timeoutMs,
          )) ?? null;
      }
    }
    if (!ties) return;
    const a = admissibleUnderTies(gold.results, ties as AdmissibleAnswers, answer, ordered, byVariableNameOf(groupConcatSeparators(query.ast.type === 'query' ? query.ast : undefined)));
    if (a.match.correct) {
      f.status = 'equivalent';
      f.reason = `${f.reason}; admissible under ties (${a.by === 'alternative' ? 'another choice among solutions tied in a sub-SELECT' : 'another order or choice of solutions tied under the top-level ORDER BY'}): ${ties.reason}`;
    } else f.reason = `${f.reason}; not explained by ties (${ties.reason})`;
  };
}

/** The text of a form (the same for every engine), its sources and caveats, or why it is skipped. */
type FormText = { text: string; sources: string[]; caveats: string[] } | { skipped: string };

/** The text of each chosen form of a query: the query itself (federated), its trivial federation, its oracle federation. */
async function formTexts(q: BuildGoldQuery, query: ParsedQuery, t: GraphUnderTest, ctx: VerifyContext): Promise<Partial<Record<FederationForm, FormText>>> {
  const { forms } = ctx;
  const texts: Partial<Record<FederationForm, FormText>> = {};
  if (forms.includes('federated')) texts.federated = { text: query.normalized, sources: t.shardEndpoints, caveats: [] };
  if (forms.includes('trivial')) {
    const tf = trivialFederation(query.ast, t.shardEndpoints);
    texts.trivial = { text: tf.text, sources: [], caveats: tf.caveats };
  }
  if (forms.includes('oracle')) {
    if (!t.needed) texts.oracle = { skipped: 'no realised fan-out stored for this build (fkgqa stats)' };
    else {
      const n = t.needed.has(q.id) ? t.needed.get(q.id)! : null;
      const negated = n === null ? [] : await negatedShards(q.text, ctx.selection.defaultPrefix, t.shardUrls, ctx.timeoutMs);
      const of = oracleFederation(query.ast, t.shardUrls, n, negated);
      texts.oracle = { text: of.text, sources: [], caveats: of.caveats };
    }
  }
  return texts;
}

/** Runs a query on an engine within the time limit, timed (ms). */
async function timedQuery(engine: FederationEngine, query: string, sources: string[], timeoutMs: number): Promise<TimedOutcome> {
  const t = performance.now();
  const o = await engine.query(query, MEDIA.json, { deadline: { ms: timeoutMs, from: 'call' }, sources });
  return { ...o, ms: performance.now() - t };
}

/**
 * Runs every form of a query on every engine into `v.engines`, each verdict tie-checked, and
 * records the disagreements of each form.
 * @returns one progress cell per form and engine
 */
async function runForms(
  v: QueryVerdict,
  texts: Partial<Record<FederationForm, FormText>>,
  gold: GoldResult,
  ordered: boolean,
  tieCheck: (f: FormVerdict, answer: SparqlResults | undefined) => Promise<void>,
  ctx: VerifyContext,
  concats: GroupConcats,
): Promise<string[]> {
  const cells: string[] = [];
  for (const f of ctx.forms) {
    const form = texts[f]!;
    const answers = new Map<string, SparqlResults>();
    for (const engine of ctx.engines) {
      let fv: FormVerdict;
      if ('skipped' in form) fv = { status: 'skipped', reason: form.skipped, ms: 0, requests: 0 };
      else if (f === 'federated' && !engine.selectsSources) fv = { status: 'skipped', reason: `${engine.name} has no source selection (it evaluates SERVICE clauses only)`, ms: 0, requests: 0 };
      else {
        const o = await timedQuery(engine, form.text, form.sources, ctx.timeoutMs);
        fv = verdict(gold, o, ordered, f, concats);
        const answer = o.status === 'ok' ? outcomeJson(o) : undefined;
        if (answer) answers.set(engine.name, answer);
        await tieCheck(fv, answer);
        if (form.caveats.length > 0 && fv.status !== 'identical') fv.reason += ` (${form.caveats.join('; ')})`;
      }
      v.engines[engine.name][f] = fv;
      cells.push(`${ctx.names.length > 1 ? `${engine.name} ` : ''}${f} ${fv.status}${fv.status === 'skipped' ? '' : ` ${fv.requests} req ${secs(fv.ms)}`}`);
    }
    const d = classifyDisagreement(v, f, answers, concats);
    if (d) ctx.disagreements.push(d);
  }
  return cells;
}

/**
 * Verifies one gold query: its gold answer (`goldOf`), the text of each form (`formTexts`), every
 * form on every engine (`runForms`); adds its verdict to `ctx.verdicts` and says it on progress.
 * @throws InputError when the gold query does not parse
 */
async function verifyQuery(q: BuildGoldQuery, t: GraphUnderTest, ctx: VerifyContext): Promise<void> {
  ctx.ticker.start(q.id);
  const parsed = parseQuery(q.text, ctx.selection.defaultPrefix);
  if (!parsed.ok) throw new InputError(`gold query does not parse: ${parsed.error}`, { query: q.id });
  const ordered = parsed.query.ast.type === 'query' && !!(parsed.query.ast as { order?: unknown[] }).order?.length;
  const gold = await goldOf(q.id, parsed.query.normalized, t, ctx.timeoutMs);
  const { results: _results, ...goldInfo } = gold;
  const v: QueryVerdict = { id: q.id, graph: q.graph, questions: q.questions, ordered, gold: goldInfo, engines: Object.fromEntries(ctx.names.map((n) => [n, {}])) };
  const tieCheck = tieCheckOf(q, parsed.query, ordered, gold, t, ctx);
  const texts = await formTexts(q, parsed.query, t, ctx);
  const cells = await runForms(v, texts, gold, ordered, tieCheck, ctx, groupConcatSeparators(parsed.query.ast.type === 'query' ? parsed.query.ast : undefined));
  ctx.verdicts.push(v);
  ctx.ticker.done(q.id);
  ctx.progress(
    `  [${ctx.verdicts.length}/${ctx.selection.queries.length}] ${q.id}: gold ${gold.status === 'ok' ? `${counted(gold.rows ?? 0, 'row')}` : gold.status}; ${cells.join(', ')} (${secs(performance.now() - ctx.t0)})`,
  );
}

/**
 * Runs the verification (see the module comment): the engines (`chosenEngines`), the graphs and
 * queries (`selectQueries`), the endpoints (`openEndpoints`), then each graph's queries
 * (`verifyGraphQueries`); the engines and the endpoints started here are stopped at the end.
 * @throws InputError for a missing build, an unknown graph or query id, or an endpoints file that
 *   lacks a graph
 */
export async function verify(options: VerifyOptions): Promise<VerifyReport> {
  const t0 = performance.now();
  const progress = options.progress ?? (() => {});
  const timeoutMs = options.timeoutMs ?? 20_000;
  const forms = options.forms ?? FORMS;
  const names = await chosenEngines(options.federationEngine);
  const selection = selectQueries(options);
  const endpoints = await openEndpoints(options, selection, timeoutMs, progress);
  const engines: FederationEngine[] = [];
  const verdicts: QueryVerdict[] = [];
  const disagreements: Disagreement[] = [];
  // Progress: [k/n] per query, and every 10 s the queries running long.
  const ticker = new ProgressTicker(progress, 'fkgqa verify', selection.queries.length, { everyMs: options.progress ? undefined : 0, unit: 'queries' });
  try {
    await startEngines(names, endpoints.registry, forms, progress, engines);
    const ctx: VerifyContext = { options, progress, timeoutMs, forms, names, engines, endpoints, selection, ticker, t0, verdicts, disagreements };
    for (const g of selection.build) {
      const gq = selection.queries.filter((q) => q.graph === g.graph);
      if (gq.length > 0) await verifyGraphQueries(g, gq, ctx);
    }
  } finally {
    ticker.stop();
    await Promise.all(engines.map((e) => e.close()));
    await endpoints.server?.close();
  }
  const totals = computeTotals(verdicts, names, forms);
  const different = verdicts.reduce((n, v) => n + names.reduce((m, e) => m + forms.filter((f) => v.engines[e][f]?.status === 'different').length, 0), 0);
  return {
    graphs: selection.graphs,
    timeoutMs,
    endpoints: endpoints.endpointsPath ?? 'started',
    engines: names,
    forms,
    queries: verdicts,
    totals,
    disagreements,
    different,
    ms: performance.now() - t0,
  };
}

export { formatVerifyReport } from './report.js';
