/**
 * Computing gold answers: every distinct gold query on its unsharded graph (`fkgqa stats`; stored
 * and read through src/build/gold-answers.ts), and whether each answer depends on how ties under
 * ORDER BY are broken (the definitions are in src/answers/ties.ts).
 */
import sparqljs from 'sparqljs';
import type { StoreWorker } from '../common/store-worker.js';
import { canonicalJson, type GoldAlternative, type GoldAnswer, type GoldTies } from '../build/gold-answers.js';
import type { SparqlResults, TieSegment } from '../sparql/results.js';
import { compareResults } from '../answers/compare.js';
import { answerVariables, keyQuery, singleSolution, subSelectChoices, tieAnalysisProblem, tieSegments, windowedSubSelects, withSubSelectAnswers, type SubSelectAnswer } from '../answers/ties.js';
import { counted } from '../common/strings.js';

/** A distinct gold query to execute. */
export interface GoldQueryToRun {
  id: string;
  /** Query text with full IRIs (ParsedQuery.normalized). */
  normalized: string;
  /** `SELECT`, `ASK`, `CONSTRUCT` or `DESCRIBE`. */
  queryType: string;
  ordered: boolean;
  /** The parsed query (ParsedQuery.ast): needed for the tie analysis; without it none is made. */
  ast?: sparqljs.SparqlQuery;
}

/** Most choices among tied solutions enumerated per query (each runs the query once); beyond it the dependence is `unknown`. */
const MAX_TIE_CHOICES = 64;
/** Most rows kept over all alternatives of one query; beyond it the dependence is `unknown`. */
const MAX_ALTERNATIVE_ROWS = 50_000;

/** `ORDER BY … LIMIT … OFFSET …` of a SELECT, as text (for reasons). */
function windowText(q: sparqljs.SelectQuery): string {
  const text = new sparqljs.Generator({ allPrefixes: false }).stringify({ ...q, type: 'query', prefixes: {} } as sparqljs.SparqlQuery);
  const m = /ORDER BY[\s\S]*$/i.exec(text);
  return (m ? m[0] : 'ORDER BY')
    .replace(/\s+/g, ' ')
    .replace(/<http:\/\/valuenet\/ontop\/([^>]*)>/g, ':$1')
    .trim();
}

/** Runs a query on the unsharded graph within the time limit: its results, or what it ran into, in words. */
type QueryRun = (text: string) => Promise<SparqlResults | string>;

/** `QueryRun` on a store, each query within `timeoutMs`. */
function queryRun(store: StoreWorker, timeoutMs: number): QueryRun {
  return async (text) => {
    const o = await store.query({ query: text, resultsFormat: 'application/sparql-results+json', timeoutMs });
    return o.status === 'ok' ? (JSON.parse(o.body) as SparqlResults) : o.status === 'timeout' ? `a time limit of ${timeoutMs} ms` : `an error (${o.error})`;
  };
}

/** What a tie analysis has found so far: its reasons (in words, in order), and whether the dependence is undecided or a choice. */
class TieFindings {
  readonly reasons: string[] = [];
  unknown = false;
  choice = false;

  /** The dependence cannot be decided, for this reason. */
  undecided(reason: string): void {
    this.unknown = true;
    this.reasons.push(reason);
  }
}

/** Top-level segments of an answer of `query` (the gold query, or one with sub-SELECTs inlined), or why they cannot be found. */
async function segmentsOf(run: QueryRun, query: sparqljs.SparqlQuery, answer: SparqlResults): Promise<TieSegment[] | string> {
  if (query.type !== 'query' || query.queryType !== 'SELECT' || !query.order?.length || singleSolution(query)) return [];
  const problem = tieAnalysisProblem(query);
  if (problem) return problem;
  const keyed = await run(keyQuery(query)!);
  if (typeof keyed === 'string') return `the key query ran into ${keyed}`;
  return tieSegments(query, keyed, answer.head.vars ?? answerVariables(keyed));
}

/** A windowed sub-SELECT whose window cuts a run of tied solutions: the distinct choices of its rows. */
interface SubSelectTies {
  sub: sparqljs.SelectQuery;
  /** The variables of its key query's answer. */
  vars: string[];
  choices: SubSelectAnswer['rows'][];
}

/**
 * The sub-SELECTs of `ast` with ORDER BY and LIMIT/OFFSET whose window cuts tied solutions, each
 * with its choices (`subSelectChoices`, at most MAX_TIE_CHOICES); a sub-SELECT that cannot be
 * analysed (one inside another, a key query that fails, too many choices) makes the dependence undecided.
 */
async function subSelectTies(subs: sparqljs.SelectQuery[], run: QueryRun, f: TieFindings): Promise<SubSelectTies[]> {
  const nested = subs.some((s) => windowedSubSelects({ ...s, type: 'query', prefixes: {} } as sparqljs.SparqlQuery).length > 0);
  const perSub: SubSelectTies[] = [];
  for (const sub of subs) {
    const problem = nested ? 'a windowed sub-SELECT inside another' : tieAnalysisProblem({ ...sub, type: 'query', prefixes: {} } as sparqljs.SparqlQuery);
    if (problem) {
      f.undecided(`sub-SELECT ${windowText(sub)}: not analysed (${problem})`);
      continue;
    }
    const keyed = await run(keyQuery({ ...sub, prefixes: {} } as sparqljs.SparqlQuery)!);
    if (typeof keyed === 'string') {
      f.undecided(`sub-SELECT ${windowText(sub)}: its key query ran into ${keyed}`);
      continue;
    }
    const c = subSelectChoices(sub, keyed, MAX_TIE_CHOICES);
    if (c.status === 'fixed') continue;
    if (c.status === 'too-many') {
      f.undecided(`sub-SELECT ${windowText(sub)}: ${c.tied} solutions tie (ORDER BY key ${c.key}) for ${counted(c.keep, 'place')}: more than ${MAX_TIE_CHOICES} choices, not enumerated`);
      continue;
    }
    f.reasons.push(`sub-SELECT ${windowText(sub)}: ${c.tied} solutions tie (ORDER BY key ${c.key}) for ${counted(c.keep, 'place')}: ${counted(c.choices.length, 'choice')}`);
    perSub.push({ sub, vars: answerVariables(keyed), choices: c.choices });
  }
  return perSub;
}

/**
 * The admissible answers other than gold: every combination of the sub-SELECTs' choices (at most
 * MAX_TIE_CHOICES) put in place of the sub-SELECTs as VALUES and the whole query run again; each
 * distinct answer that differs from gold is an alternative, with its own top-level segments (at
 * most MAX_ALTERNATIVE_ROWS rows over all). A blank node in a choice, a failed query or too many
 * rows make the dependence undecided; else it is a choice when there is an alternative.
 */
async function alternativeAnswers(ast: sparqljs.SelectQuery, goldResults: SparqlResults, perSub: SubSelectTies[], run: QueryRun, f: TieFindings): Promise<GoldAlternative[]> {
  const alternatives: GoldAlternative[] = [];
  let combos: SubSelectAnswer[][] = [[]];
  for (const s of perSub) combos = combos.flatMap((c) => s.choices.map((rows) => [...c, { sub: s.sub, rows, vars: s.vars }]));
  if (combos.length > MAX_TIE_CHOICES) {
    f.undecided(`${combos.length} combinations of choices: more than ${MAX_TIE_CHOICES}, not enumerated`);
    return alternatives;
  }
  const ordered = Boolean(ast.order?.length);
  let reproduced = false;
  let rows = 0;
  for (const combo of combos) {
    const rewritten = withSubSelectAnswers(ast, combo);
    if (!rewritten) {
      f.undecided('a tied solution holds a blank node (VALUES cannot)');
      break;
    }
    const answer = await run(rewritten.text);
    if (typeof answer === 'string') {
      f.undecided(`a choice's query ran into ${answer}`);
      break;
    }
    if (compareResults(goldResults, answer, ordered).identical) {
      reproduced = true;
      continue;
    }
    if (alternatives.some((a) => compareResults(a.results as SparqlResults, answer, ordered).identical)) continue;
    rows += answer.results?.bindings.length ?? 0;
    if (rows > MAX_ALTERNATIVE_ROWS) {
      f.undecided(`the alternatives hold more than ${counted(MAX_ALTERNATIVE_ROWS, 'row')}`);
      break;
    }
    const segs = await segmentsOf(run, rewritten.ast, answer);
    if (typeof segs === 'string') f.undecided(`an alternative's top-level ties: ${segs}`);
    alternatives.push({ results: ordered ? (answer as SparqlResults) : inCanonicalOrder(answer as SparqlResults), ...(typeof segs !== 'string' && segs.length ? { segments: segs } : {}) });
  }
  if (!f.unknown) {
    f.choice = alternatives.length > 0;
    f.reasons.push(
      `${counted(alternatives.length + 1, 'admissible answer')} (gold${alternatives.length ? ` and ${counted(alternatives.length, 'other')}` : ''})` +
        (reproduced ? '' : '; no choice reproduces the stored gold answer'),
    );
  }
  return alternatives;
}

/** Ties of the top-level ORDER BY in the gold answer: its segments, or why they were not analysed (then the dependence is undecided). */
async function topLevelTies(ast: sparqljs.SelectQuery, goldResults: SparqlResults, run: QueryRun, f: TieFindings): Promise<TieSegment[] | string> {
  const segments = await segmentsOf(run, ast, goldResults);
  if (typeof segments === 'string') {
    f.undecided(`top-level ${windowText(ast)}: not analysed (${segments})`);
  } else if (segments.length > 0) {
    const cut = segments.filter((s) => s.rows);
    if (cut.length > 0) {
      f.choice = true;
      f.reasons.push(`top-level ${windowText(ast)}: ${cut.map((s) => `${s.tied} solutions tie (ORDER BY key ${s.key}) for ${counted(s.take, 'place')}`).join('; ')}`);
    }
    const open = segments.filter((s) => !s.rows);
    if (open.length > 0)
      f.reasons.push(
        `top-level ${windowText(ast)}: the order of ${counted(
          open.reduce((n, s) => n + s.take, 0),
          'row',
        )} in ${counted(open.length, 'run')} of tied keys is open`,
      );
  }
  return segments;
}

/**
 * Decides whether a gold answer depends on how ties under ORDER BY are broken, on the store that
 * computed it (the unsharded graph), and returns what scoring needs to accept every admissible
 * answer (`GoldTies`), or undefined when the answer is the only correct one.
 *
 * - Top-level ORDER BY: the key query (`keyQuery`: ORDER BY keys projected, no LIMIT/OFFSET) gives
 *   every solution in order; runs of equal keys that overlap the kept window and hold distinct rows
 *   become `segments` (`tieSegments`; `topLevelTies`).
 * - A sub-SELECT with ORDER BY and LIMIT/OFFSET: its own key query gives its tied solutions; every
 *   distinct choice among those cut by its window (at most MAX_TIE_CHOICES) is put in place of the
 *   sub-SELECT as VALUES and the whole query run again; each answer that differs from gold is an
 *   `alternative` (with its own top-level segments) (`subSelectTies`, `alternativeAnswers`).
 * A time limit, an error, too many choices or a blank node in a choice make it `unknown`, with the
 * reason.
 * @param store the unsharded graph (a StoreWorker)
 * @param q the query (with its `ast`)
 * @param gold its gold answer, computed on `store`
 * @param timeoutMs time limit of each query run here, in ms
 */
export async function analyseGoldTies(store: StoreWorker, q: GoldQueryToRun, gold: GoldAnswer, timeoutMs: number): Promise<GoldTies | undefined> {
  const ast = q.ast;
  if (!ast || ast.type !== 'query' || ast.queryType !== 'SELECT' || gold.status !== 'ok' || !gold.results || typeof gold.results !== 'object' || gold.results.boolean !== undefined) return undefined;
  const goldResults = gold.results as SparqlResults;
  const run = queryRun(store, timeoutMs);
  const f = new TieFindings();
  // Sub-SELECTs that keep a window of tied solutions.
  let alternatives: GoldAlternative[] = [];
  const subs = windowedSubSelects(ast);
  if (subs.length > 0) {
    const perSub = await subSelectTies(subs, run, f);
    if (perSub.length > 0 && !f.unknown) alternatives = await alternativeAnswers(ast, goldResults, perSub, run, f);
  }
  const segments = await topLevelTies(ast, goldResults, run, f);
  if (!f.unknown && !f.choice && (typeof segments === 'string' || segments.length === 0)) return undefined;
  return {
    dependence: f.unknown ? 'unknown' : f.choice ? 'choice' : 'order',
    reason: f.reasons.join('; '),
    ...(typeof segments !== 'string' && segments.length ? { segments } : {}),
    ...(alternatives.length ? { alternatives } : {}),
  };
}

/**
 * Executes every query on a store holding the unsharded graph (the union of the graph's shards,
 * which guarantee 1 of `fkgqa partition` makes equal to the input), each under a time limit that
 * stops it (StoreWorker), and analyses each answer's dependence on ties (`analyseGoldTies`, for
 * queries given with their `ast`). A failing or timed-out query is recorded with its status, never
 * dropped. `onQuery` is told when each query starts and ends (progress, see ProgressTicker).
 */
export async function executeGoldQueries(store: StoreWorker, queries: GoldQueryToRun[], timeoutMs: number, onQuery?: { start(id: string): void; done(id: string): void }): Promise<GoldAnswer[]> {
  const out: GoldAnswer[] = [];
  for (const q of queries) {
    onQuery?.start(`${q.id} (gold answer)`);
    const graphResult = q.queryType === 'CONSTRUCT' || q.queryType === 'DESCRIBE';
    const r = await store.query({
      query: q.normalized,
      resultsFormat: graphResult ? 'application/n-triples' : 'application/sparql-results+json',
      timeoutMs,
    });
    let a: GoldAnswer;
    if (r.status === 'timeout') a = { query: q.id, status: 'timeout', ordered: q.ordered };
    else if (r.status === 'error') a = { query: q.id, status: 'error', error: r.error, ordered: q.ordered };
    else if (graphResult) {
      const rows = r.body.split('\n').filter((l) => l.trim()).length;
      a = { query: q.id, status: 'ok', rows, empty: rows === 0, ordered: q.ordered, results: inCanonicalLineOrder(r.body) };
    } else {
      const results = q.ordered ? (JSON.parse(r.body) as SparqlResults) : inCanonicalOrder(JSON.parse(r.body) as SparqlResults);
      const rows = results.results ? results.results.bindings.length : 1;
      const empty = results.results ? rows === 0 : results.boolean === false;
      a = { query: q.id, status: 'ok', rows, empty, ordered: q.ordered, results };
    }
    const ties = await analyseGoldTies(store, q, a, timeoutMs);
    out.push(ties ? { ...a, ties } : a);
    onQuery?.done(`${q.id} (gold answer)`);
  }
  return out;
}

const byCodeUnits = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The rows of an answer without ORDER BY in one canonical order: sorted by the canonical JSON of
 * each row (`canonicalJson`, code-unit order, not the locale's). SPARQL 1.1 Query §15 leaves their
 * order to the engine, and oxigraph's differs between stores (a DISTINCT over a UNION comes back
 * in either order), so the stored gold answer would not be byte-stable otherwise. ASK results are
 * returned as they are.
 * @param results a SPARQL 1.1 JSON results document
 * @returns a copy with `results.bindings` sorted (the head unchanged)
 */
function inCanonicalOrder(results: SparqlResults): SparqlResults {
  if (!results.results) return results;
  const keyed = results.results.bindings.map((row) => [canonicalJson(row), row] as const);
  keyed.sort(([a], [b]) => byCodeUnits(a, b));
  return { ...results, results: { ...results.results, bindings: keyed.map(([, row]) => row) } };
}

/**
 * The triples of a CONSTRUCT/DESCRIBE answer (N-Triples, one a line) in code-unit order, each
 * line ended by a newline: a graph has no order (RDF 1.1 Concepts §3).
 */
function inCanonicalLineOrder(nTriples: string): string {
  const lines = nTriples.split('\n').filter((l) => l.trim());
  return lines
    .sort(byCodeUnits)
    .map((l) => `${l}\n`)
    .join('');
}
