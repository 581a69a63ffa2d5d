/** KGVoyager's instance lookup: lookup_class_instances (paper section 3.1, "Instance Lookup"). */
import { type KgVoyagerCore, type ToolAnswer, allFailed, argumentError, Budget, DEFAULT_PAGE, endpointList, LABEL, short, failureLines } from './core.js';
import { pageNote, pickPage, type PageArgs } from '../paging.js';
import type { RegisteredEndpoint } from '../../federation/registry.js';
import { cosine } from './embedder.js';
import type { IndexFailure } from './schema-index.js';
import type { SparqlTerm } from '../../sparql/results.js';
import { iriRef, settleAll, stringLiteral, termText } from './sparql.js';
import { iriText } from './text.js';
import { counted, byCodePoint } from '../../common/strings.js';

/**
 * lookup_class_instances (paper section 3.1, "Instance Lookup"): instances of a class, optionally
 * those whose IRI or `rdfs:label` contains `exact_term` (case-insensitive); with `all_attributes`
 * any literal value of the instance is matched instead of labels (slower). When `exact_term`
 * finds nothing and `fallback_term` is given, instances matching the broader fallback are
 * ranked by the similarity (the embedder's cosine) of their matched text to `exact_term`.
 * Federation: values held at other endpoints of the class's graph (a vertical split puts the
 * type triple and the attributes in different shards) are matched there and kept when the
 * subject is an instance of the class at an endpoint that holds the class. One page of the
 * instances is shown (at most `maxRows` from `page.offset`, within `page.maxChars`).
 */
export async function lookupClassInstances(
  kgv: KgVoyagerCore,
  args: { class: string; exact_term?: string; fallback_term?: string; all_attributes?: boolean },
  page: PageArgs = DEFAULT_PAGE,
): Promise<ToolAnswer> {
  const cls = args.class?.trim().replace(/^<|>$/g, '');
  if (!cls) return argumentError('lookup_class_instances needs a class IRI (from search_all_classes).');
  const budget = new Budget(kgv.options.timeoutMs, kgv.select);
  const { byIri } = await kgv.classIndex(budget.requests);
  const entry = byIri.get(cls);
  const failures: IndexFailure[] = [];
  const holders = kgv.endpointsOf(entry?.endpoints);
  const where = kgv.graph ? ` in the knowledge graph ${kgv.graph}` : '';
  const head = entry
    ? `<${cls}>${where}: ${counted(entry.total, 'instance')} at ${counted(entry.endpoints.length, 'endpoint')} (${endpointList(entry.endpoints)}).`
    : `<${cls}> is not in the class index${where} (no endpoint has instances of it); asking every endpoint.`;
  const exact = args.exact_term?.trim();
  const n = kgv.options.maxRows;
  const upTo = page.offset + n;
  /** One page of item lines under a heading made from the page's note; the failures after it. */
  const paged = (lines: string[], heading: (note: string) => string, total: number, exact = true, before: string[] = []) => {
    const tail = failureLines(failures);
    const fixed = [head, ...before, ...tail].join('\n').length + 300;
    const p = pickPage(lines, page.offset, n, page.maxChars - fixed, (l) => l.length);
    const note = pageNote({ offset: page.offset, shown: p.items.length, total, exact, unit: 'instances', cutByChars: p.cutByChars, maxChars: page.maxChars, how: kgv.continuation() });
    return [head, ...before, heading(note), ...p.items, ...tail];
  };

  if (!exact) {
    const q = `SELECT ?s (SAMPLE(?l0) AS ?l) WHERE { ?s a ${iriRef(cls)} OPTIONAL { ?s <${LABEL}> ?l0 } } GROUP BY ?s ORDER BY ?s LIMIT ${upTo}`;
    const settled = await settleAll(holders, kgv.options.concurrency, (e) => budget.run(e.url, q, upTo));
    const rows: { s: string; label?: string; endpoint: string }[] = [];
    holders.forEach((e, i) => {
      const s = settled[i];
      if (s.status === 'rejected') failures.push({ endpoint: e.id, url: e.url, error: String((s.reason as Error)?.message ?? s.reason) });
      else for (const r of s.value) if (r.s) rows.push({ s: r.s.value, label: r.l?.value, endpoint: e.id });
    });
    const down = allFailed(holders.length, failures, budget.requests);
    if (down) return down;
    rows.sort((a, b) => byCodePoint(a.s, b.s) || byCodePoint(a.endpoint, b.endpoint));
    const total = entry?.total ?? rows.length;
    const lines = rows.map((r) => `- <${r.s}>${r.label ? ` ${JSON.stringify(r.label)}` : ''} [${r.endpoint}]`);
    return { text: paged(lines, (note) => `Instances (${note}):`, total, entry !== undefined || rows.length < upTo).join('\n'), isError: false, requests: budget.requests, hits: total };
  }

  const first = await matchInstances(kgv, cls, holders, exact, args.all_attributes ?? false, upTo, budget, failures);
  const down = allFailed(holders.length, failures, budget.requests);
  if (down) return down;
  const matchWhere = args.all_attributes ? 'IRI or any literal value' : 'IRI or rdfs:label';
  if (first.matches.size > 0 || !args.fallback_term?.trim()) {
    const lines = [...first.matches.values()].map((m) => `- <${m.s}>${m.text ? ` ${m.text}` : ''} [${[...m.endpoints].join(', ')}]`);
    const out = paged(
      lines,
      (note) => `Instances whose ${matchWhere} contains ${JSON.stringify(exact)} (case-insensitive): ${note}${first.more ? ' (more exist; refine the term)' : ''}:`,
      first.matches.size,
      !first.more,
    );
    if (first.matches.size === 0)
      out.splice(2, 0, args.all_attributes ? 'None. Try a fallback_term (a broader word).' : 'None. Try all_attributes: true (names are often in literal attributes, not labels), or a fallback_term.');
    return { text: out.join('\n'), isError: false, requests: budget.requests, hits: first.matches.size };
  }
  const fb = args.fallback_term!.trim();
  const wide = await matchInstances(kgv, cls, holders, fb, args.all_attributes ?? false, kgv.options.sampleSize, budget, failures);
  const cands = [...wide.matches.values()];
  const texts = cands.map((c) => c.plain || iriText(c.s));
  const [q, ...vs] = cands.length ? await kgv.embedder.embed([exact, ...texts]) : [];
  const ranked = cands.map((c, i) => ({ c, sim: cosine(q, vs[i]) })).sort((a, b) => b.sim - a.sim || byCodePoint(a.c.s, b.c.s));
  const lines = ranked.map(({ c, sim }) => `- <${c.s}>${c.text ? ` ${c.text}` : ''} [${[...c.endpoints].join(', ')}] similarity ${sim.toFixed(3)}`);
  const out = paged(
    lines,
    (note) =>
      `No instance's ${matchWhere} contains ${JSON.stringify(exact)}. ${cands.length}${wide.more ? '+' : ''} ${cands.length === 1 ? 'instance matches' : 'instances match'} the fallback ${JSON.stringify(fb)}; most similar to ${JSON.stringify(exact)} first (${kgv.embedder.id} cosine): ${note}:`,
    cands.length,
    !wide.more,
  );
  return { text: out.join('\n'), isError: false, requests: budget.requests, hits: cands.length };
}

/** Instances of `cls` matching a term on IRI and labels (or all literals), across the federation. */
async function matchInstances(
  kgv: KgVoyagerCore,
  cls: string,
  holders: RegisteredEndpoint[],
  term: string,
  allAttributes: boolean,
  limit: number,
  budget: Budget,
  failures: IndexFailure[],
): Promise<{ matches: Map<string, { s: string; text: string; plain: string; endpoints: Set<string> }>; more: boolean }> {
  const lc = stringLiteral(term.toLowerCase());
  const value = allAttributes ? `?s ?p ?v . FILTER(isLiteral(?v) && CONTAINS(LCASE(STR(?v)), ${lc}))` : `?s <${LABEL}> ?v . BIND(<${LABEL}> AS ?p) FILTER(CONTAINS(LCASE(STR(?v)), ${lc}))`;
  const local = `SELECT DISTINCT ?s ?p ?v WHERE { ?s a ${iriRef(cls)} . OPTIONAL { ${value} } FILTER(BOUND(?v) || CONTAINS(LCASE(STR(?s)), ${lc})) } ORDER BY ?s LIMIT ${limit + 1}`;
  const remote = `SELECT DISTINCT ?s ?p ?v WHERE { ${value} FILTER(isIRI(?s)) } ORDER BY ?s LIMIT ${kgv.options.sampleSize}`;
  const others = kgv.colocated(holders);
  const jobs = [...holders.map((e) => ({ e, q: local, local: true })), ...others.map((e) => ({ e, q: remote, local: false }))];
  const settled = await settleAll(jobs, kgv.options.concurrency, (j) => budget.run(j.e.url, j.q, kgv.options.sampleSize + 1));
  const matches = new Map<string, { s: string; text: string; plain: string; endpoints: Set<string> }>();
  const pending = new Map<string, { p: string; v: SparqlTerm; endpoint: string }[]>();
  let more = false;
  const add = (s: string, endpoint: string, p?: string, v?: SparqlTerm) => {
    let m = matches.get(s);
    if (!m) matches.set(s, (m = { s, text: '', plain: '', endpoints: new Set() }));
    m.endpoints.add(endpoint);
    if (p && v && !m.text) {
      m.text = `${short(p)} = ${termText(v)}`;
      m.plain = v.value;
    }
  };
  jobs.forEach((j, i) => {
    const s = settled[i];
    if (s.status === 'rejected') return void failures.push({ endpoint: j.e.id, url: j.e.url, error: String((s.reason as Error)?.message ?? s.reason) });
    if (j.local && s.value.length > limit) more = true;
    for (const r of s.value) {
      if (r.s?.type !== 'uri') continue;
      if (j.local) add(r.s.value, j.e.id, r.p?.value, r.v);
      else {
        let xs = pending.get(r.s.value);
        if (!xs) pending.set(r.s.value, (xs = []));
        if (r.p && r.v) xs.push({ p: r.p.value, v: r.v, endpoint: j.e.id });
      }
    }
  });
  const unresolved = [...pending.keys()].filter((s) => !matches.has(s) || !matches.get(s)!.text);
  if (unresolved.length > 0) {
    const types = await kgv.typesAt(unresolved.slice(0, kgv.options.sampleSize), holders, budget, failures);
    for (const s of unresolved) {
      const where = types.get(s)?.get(cls);
      if (!where) continue;
      for (const x of pending.get(s)!) add(s, x.endpoint, x.p, x.v);
      for (const id of where) add(s, id);
    }
  }
  const sorted = new Map([...matches].sort(([a], [b]) => byCodePoint(a, b)));
  if (sorted.size > limit) more = true;
  return { matches: new Map([...sorted].slice(0, limit)), more };
}
