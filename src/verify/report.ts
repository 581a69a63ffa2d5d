/**
 * `fkgqa verify`'s report: totals per engine and form (answered, identical
 * to gold, timeouts, requests and time per query), the disagreements between engines and gold
 * (engine vs engine vs gold), and the report as text.
 */
import { compareResults, type GroupConcats } from '../answers/compare.js';
import type { SparqlResults } from '../sparql/results.js';
import type { FederationForm } from './forms.js';
import type { Comparison } from '../answers/compare.js';
import type { GoldResult } from '../build/gold-answers.js';
import { counted } from '../common/strings.js';

/**
 * How one form of one query fared on one engine: `identical` (same rows; same order where the query
 * orders), `equivalent` (other rows or order that the query allows: solutions tie under ORDER BY
 * and LIMIT or the order within ties differs, shown on the unsharded graph, see ties.ts),
 * `different`, `failed` (an error or the time limit on either side), or `skipped` (the form does
 * not apply: an engine without source selection in the federated form, or no realised fan-out for
 * the oracle form).
 */
export interface FormVerdict {
  status: 'identical' | 'equivalent' | 'different' | 'failed' | 'skipped';
  /** Why it differs, failed or was skipped (absent when identical). */
  reason?: string;
  /** How the engine failed (with `failed`, when the engine did; absent when only gold failed). */
  failure?: 'timeout' | 'error';
  /** Rows of the engine's answer. */
  rows?: number;
  /** Time of the engine's call, in ms. */
  ms: number;
  /** HTTP requests the engine sent, over all endpoints (service-description probes included). */
  requests: number;
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
  /** Per engine, per form. */
  engines: Record<string, Partial<Record<FederationForm, FormVerdict>>>;
}

/** The result of `verify`. */
export interface VerifyReport {
  graphs: string[];
  timeoutMs: number;
  /** `started` when verify ran the endpoints itself, else the endpoints file used (several joined by ` + `). */
  endpoints: string;
  /** The engines, in the order given. */
  engines: string[];
  forms: FederationForm[];
  queries: QueryVerdict[];
  /** Per engine, per form. */
  totals: Record<string, Partial<Record<FederationForm, FormTotals>>>;
  /** Every (query, form) where the engines and gold do not all agree (report.ts), in query order. */
  disagreements: Disagreement[];
  /** Verdicts `different` over all engines and forms: an engine differs from gold beyond ties (exit 1). */
  different: number;
  ms: number;
}

/** Counts and costs of one form on one engine, over the queries verified. */
export interface FormTotals {
  identical: number;
  equivalent: number;
  different: number;
  failed: number;
  /** Of the failed: those where the unsharded graph did not answer either (time limit or error). */
  failedOnBothSides: number;
  /** Of the failed: the engine reached the time limit / answered with an error. */
  timeouts: number;
  errors: number;
  /** The form does not apply (see FormVerdict). */
  skipped: number;
  /** The engine returned an answer (identical, equivalent, different, or one where gold failed). */
  answered: number;
  /** HTTP requests per query (not skipped): median, maximum and the query with the most, total. */
  requests: { median: number; max: number; maxQuery: string | null; total: number };
  /** Time per query (not skipped), in ms: median, 95th percentile (nearest rank), maximum and its query. */
  ms: { median: number; p95: number; max: number; maxQuery: string | null };
}

/**
 * A (query, form) where the engines and gold do not all agree:
 * - `different`: an engine's answer differs from gold beyond ties under ORDER BY (exit 1);
 * - `failed`: an engine failed (time limit or error) where gold answered, and none differs;
 * - `no-gold`: the unsharded graph did not answer and an engine did;
 * - `tie`: every engine's answer is identical or equivalent to gold, but they are not all
 *   identical (another choice among tied solutions, or another order within ties).
 * A (query, form) where every engine failed and gold failed too is no disagreement (it is counted in
 * `failedOnBothSides`).
 */
export interface Disagreement {
  query: string;
  form: FederationForm;
  kind: 'different' | 'failed' | 'no-gold' | 'tie';
  /** Gold in a few words: `103 rows`, `timeout`, `error`. */
  gold: string;
  /** Per engine that ran the form: its verdict in a few words (`identical 103`, `different 39`, `timeout`, `error`). */
  engines: Record<string, string>;
  /** The engines that answered, grouped by identical answers (one group: their answers agree). */
  groups: string[][];
  /** Per engine whose verdict is not identical: why. */
  reasons: Record<string, string>;
}

/** A verdict in a few words: `identical 5`, `equivalent 1`, `different 39`, `timeout`, `error`, `n/a`. */
function verdictCell(f: FormVerdict | undefined): string {
  if (!f || f.status === 'skipped') return 'n/a';
  if (f.status === 'failed') return f.failure ?? `answered ${f.rows}`;
  return `${f.status} ${f.rows}`;
}

const goldCell = (v: QueryVerdict) => (v.gold.status === 'ok' ? `${counted(v.gold.rows ?? 0, 'row')}` : v.gold.status);

/**
 * Whether the engines' verdicts of one form of one query are a disagreement (see Disagreement).
 * @param answers the answers of the engines that answered, by engine name
 * @param concats the query's GROUP_CONCAT variables and separators (`groupConcatSeparators`), compared as multisets of parts
 * @returns the disagreement, or undefined when every engine is identical to gold (or everyone failed)
 */
export function classifyDisagreement(v: QueryVerdict, form: FederationForm, answers: Map<string, SparqlResults>, concats: GroupConcats = {}): Disagreement | undefined {
  const ran = Object.entries(v.engines)
    .map(([engine, forms]) => [engine, forms[form]] as const)
    .filter((e): e is readonly [string, FormVerdict] => !!e[1] && e[1].status !== 'skipped');
  if (ran.length === 0 || ran.every(([, f]) => f.status === 'identical')) return undefined;
  const groups: string[][] = [];
  for (const [engine, answer] of answers) {
    const same = groups.find((g) => compareResults(answers.get(g[0])!, answer, v.ordered, undefined, concats).identical);
    if (same) same.push(engine);
    else groups.push([engine]);
  }
  const statuses = ran.map(([, f]) => f.status);
  let kind: Disagreement['kind'];
  if (statuses.includes('different')) kind = 'different';
  else if (statuses.includes('failed')) {
    if (v.gold.status === 'ok') kind = 'failed';
    else if (answers.size > 0) kind = 'no-gold';
    else return undefined;
  } else kind = 'tie';
  return {
    query: v.id,
    form,
    kind,
    gold: goldCell(v),
    engines: Object.fromEntries(ran.map(([e, f]) => [e, verdictCell(f)])),
    groups,
    reasons: Object.fromEntries(ran.filter(([, f]) => f.status !== 'identical' && f.reason).map(([e, f]) => [e, f.reason!])),
  };
}

const median = (xs: number[]) => {
  if (xs.length === 0) return 0;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const nearestRank = (xs: number[], p: number) => (xs.length === 0 ? 0 : [...xs].sort((a, b) => a - b)[Math.max(0, Math.ceil((p / 100) * xs.length) - 1)]);

/** Totals per engine and form over the verdicts (FormTotals). */
export function computeTotals(verdicts: QueryVerdict[], engines: string[], forms: FederationForm[]): VerifyReport['totals'] {
  const out: VerifyReport['totals'] = {};
  for (const e of engines) {
    out[e] = {};
    for (const f of forms) {
      const t: FormTotals = {
        identical: 0,
        equivalent: 0,
        different: 0,
        failed: 0,
        failedOnBothSides: 0,
        timeouts: 0,
        errors: 0,
        skipped: 0,
        answered: 0,
        requests: { median: 0, max: 0, maxQuery: null, total: 0 },
        ms: { median: 0, p95: 0, max: 0, maxQuery: null },
      };
      const ran: [string, FormVerdict][] = [];
      for (const v of verdicts) {
        const x = v.engines[e]?.[f];
        if (!x) continue;
        t[x.status]++;
        if (x.status === 'skipped') continue;
        ran.push([v.id, x]);
        if (x.rows !== undefined) t.answered++;
        if (x.status === 'failed' && v.gold.status !== 'ok') t.failedOnBothSides++;
        if (x.failure === 'timeout') t.timeouts++;
        if (x.failure === 'error') t.errors++;
      }
      const req = ran.map(([, x]) => x.requests);
      const ms = ran.map(([, x]) => x.ms);
      const most = ran.reduce<[string, FormVerdict] | undefined>((a, b) => (!a || b[1].requests > a[1].requests ? b : a), undefined);
      const slowest = ran.reduce<[string, FormVerdict] | undefined>((a, b) => (!a || b[1].ms > a[1].ms ? b : a), undefined);
      t.requests = { median: median(req), max: most?.[1].requests ?? 0, maxQuery: most?.[0] ?? null, total: req.reduce((a, b) => a + b, 0) };
      t.ms = { median: Math.round(median(ms)), p95: Math.round(nearestRank(ms, 95)), max: Math.round(slowest?.[1].ms ?? 0), maxQuery: slowest?.[0] ?? null };
      out[e][f] = t;
    }
  }
  return out;
}

/** A duration in ms as seconds, two decimals under 10 s. */
export const secs = (ms: number) => `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
const pad = (s: string, n: number) => s.padEnd(n);

/**
 * A comparison key (src/answers/compare.ts `termKey`) or tie reason in plain words for the report: a
 * number's key `#3` (compared by value) is shown `3`, so that `?aggregation_all=#3` next to
 * "ORDER BY key #3" does not read as row number 3; "ORDER BY key" becomes "ORDER BY value".
 */
export function readableKeys(text: string): string {
  // Strings and IRIs are kept as they are ("Bo #2", <http://x/#3>).
  return text
    .replace(/ORDER BY key /g, 'ORDER BY value ')
    .replace(/"(?:[^"\\]|\\.)*"|<[^>\s]*>|(^|[=\s(|])#(-?\d[\d.eE+-]*)/g, (m, pre: string | undefined, num: string | undefined) => (num === undefined ? m : `${pre}${num}`));
}

/** The report as text: one line per query, totals per engine and form, the disagreements, then every difference and failure explained. */
export function formatVerifyReport(r: VerifyReport): string {
  const lines: string[] = [];
  const n = r.queries.length;
  const cols = r.engines.flatMap((e) => r.forms.map((f) => [e, f] as const));
  const label = ([e, f]: readonly [string, FederationForm]) => (r.engines.length > 1 ? `${e}/${f}` : f);
  lines.push(
    `fkgqa verify: ${counted(n, 'distinct gold query', 'distinct gold queries')} over ${counted(r.graphs.length, 'graph')}; engine${r.engines.length > 1 ? 's' : ''} ${r.engines.join(', ')}; forms ${r.forms.join(', ')}; time limit ${secs(r.timeoutMs)} per query, form and engine`,
  );
  lines.push('');
  const w = cols.map((c) => Math.max(label(c).length, 15) + 1);
  lines.push(`${pad('query', 36)} ${pad('gold', 12)} ${cols.map((c, i) => pad(label(c), w[i])).join('')}`.trimEnd());
  for (const v of r.queries) lines.push(`${pad(v.id, 36)} ${pad(goldCell(v), 12)} ${cols.map(([e, f], i) => pad(verdictCell(v.engines[e]?.[f]), w[i])).join('')}`.trimEnd());
  lines.push('');
  lines.push(`Totals (n=${n}; requests and time per query that ran; "gold too": of the failed, the unsharded graph failed too)`);
  const head = ['engine', 'form', 'answered', 'identical', 'equivalent', 'different', 'failed', 'gold too', 'timeouts', 'errors', 'n/a', 'requests median / max', 'ms median / p95 / max'];
  const rows = cols.map(([e, f]) => {
    const t = r.totals[e]?.[f];
    if (!t) return [e, f];
    return [
      e,
      f,
      t.answered,
      t.identical,
      t.equivalent,
      t.different,
      t.failed,
      t.failedOnBothSides,
      t.timeouts,
      t.errors,
      t.skipped,
      `${t.requests.median} / ${t.requests.max}${t.requests.maxQuery ? ` (${t.requests.maxQuery})` : ''}`,
      `${t.ms.median} / ${t.ms.p95} / ${t.ms.max}${t.ms.maxQuery ? ` (${t.ms.maxQuery})` : ''}`,
    ].map(String);
  });
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((x) => (x[i] ?? '').length)));
  lines.push(
    '  ' +
      head
        .map((h, i) => pad(h, widths[i]))
        .join('  ')
        .trimEnd(),
  );
  for (const x of rows)
    lines.push(
      '  ' +
        x
          .map((c, i) => pad(c, widths[i]))
          .join('  ')
          .trimEnd(),
    );

  const kinds: [Disagreement['kind'], string][] = [
    ['different', 'an engine differs from gold beyond ties'],
    ['failed', 'an engine failed where gold answered'],
    ['no-gold', 'the unsharded graph did not answer, an engine did'],
  ];
  const listed = r.disagreements.filter((d) => d.kind !== 'tie');
  lines.push('', `Disagreements, engine vs engine vs gold (${listed.length}; ties listed after)`);
  for (const [kind, what] of kinds) {
    const ds = r.disagreements.filter((d) => d.kind === kind);
    if (ds.length === 0) continue;
    lines.push(`  ${kind}: ${what} (${ds.length})`);
    for (const d of ds) {
      const agree =
        d.groups.length <= 1
          ? Object.keys(d.engines).length > 1 && d.groups.length === 1 && d.groups[0].length > 1
            ? 'engines agree'
            : ''
          : `engines differ: ${d.groups.map((g) => g.join(' = ')).join(' | ')}`;
      lines.push(
        `    ${pad(d.query, 34)} ${pad(d.form, 10)} gold ${pad(d.gold, 10)} ${Object.entries(d.engines)
          .map(([e, c]) => `${e}: ${c}`)
          .join(', ')}${agree ? `; ${agree}` : ''}`,
      );
    }
  }
  const ties = r.disagreements.filter((d) => d.kind === 'tie');
  if (ties.length > 0) {
    lines.push('', `Ties: every engine identical or equivalent to gold, not all identical (${ties.length})`);
    for (const f of r.forms) {
      const ids = ties.filter((d) => d.form === f).map((d) => d.query);
      if (ids.length > 0) lines.push(`  ${f} (${ids.length}): ${ids.join(', ')}`);
    }
  }

  const explained = (status: FormVerdict['status']) =>
    r.queries.flatMap((v) =>
      cols
        .filter(([e, f]) => v.engines[e]?.[f]?.status === status)
        .map(([e, f]) => {
          const x = v.engines[e][f]!;
          const c = x.comparison;
          const rowsOf = c && status !== 'failed' && !c.orderOnly ? `\n      missing: ${readableKeys(c.missing.join(' | ')) || '-'}\n      extra:   ${readableKeys(c.extra.join(' | ')) || '-'}` : '';
          return `  ${v.id} ${label([e, f])}: ${x.reason === undefined ? x.reason : readableKeys(x.reason)}${rowsOf}`;
        }),
    );
  const equivalents = explained('equivalent');
  const diffs = explained('different');
  const fails = explained('failed');
  if (equivalents.length > 0) lines.push('', 'Equivalent (allowed by ties under ORDER BY)', ...equivalents);
  if (diffs.length > 0) lines.push('', 'Differences', ...diffs);
  if (fails.length > 0) lines.push('', 'Failures', ...fails);
  lines.push('', `verified in ${secs(r.ms)}; ${r.different === 0 ? 'no answer differs from gold beyond ties' : `${r.different} answer(s) differ from gold beyond ties`}`);
  return lines.join('\n') + '\n';
}
