/** KGVoyager's exploration tools: explore_property_usage and explore_entity_relations (paper section 3.1). */
import { type KgVoyagerCore, type ToolAnswer, allFailed, argumentError, Budget, DEFAULT_PAGE, endpointList, short, failureLines } from './core.js';
import { pageNote, pickPage, type PageArgs } from '../paging.js';
import { RDF_TYPE } from '../../common/vocab.js';
import type { RegisteredEndpoint } from '../../federation/registry.js';
import type { IndexFailure } from './schema-index.js';
import type { SparqlRow, SparqlTerm } from '../../sparql/results.js';
import { iriRef, settleAll, stringLiteral, termText } from './sparql.js';
import { counted, byCodePoint } from '../../common/strings.js';

/**
 * explore_property_usage (paper section 3.2): how a property is used — at which endpoints, the
 * classes of its subjects and objects (or the datatypes of its literals) with triple counts, and
 * example triples. Subjects or objects without a type at the endpoint of the triple are looked up
 * at the other endpoints of the same graph (a sample of `sampleSize`), so a property in a vertical
 * shard still shows the class of its subjects. The example triples come in pages
 * (`EXAMPLES_PER_PAGE` from `page.offset`, ordered by subject and object).
 */
export async function explorePropertyUsage(kgv: KgVoyagerCore, args: { property: string }, page: PageArgs = DEFAULT_PAGE): Promise<ToolAnswer> {
  const prop = args.property?.trim().replace(/^<|>$/g, '');
  if (!prop) return argumentError('explore_property_usage needs a property IRI (from search_all_properties).');
  const budget = new Budget(kgv.options.timeoutMs, kgv.select);
  const { byIri } = await kgv.propertyIndex(budget.requests);
  const entry = byIri.get(prop);
  const holders = kgv.endpointsOf(entry?.endpoints);
  const failures: IndexFailure[] = [];
  const p = iriRef(prop);
  const k = kgv.options.maxRows;
  const qs = {
    subjects: `SELECT ?c (COUNT(*) AS ?n) (SAMPLE(?s) AS ?x) WHERE { ?s ${p} ?o OPTIONAL { ?s a ?c } } GROUP BY ?c ORDER BY DESC(?n) ?c LIMIT ${k}`,
    objects: `SELECT ?c ?dt (COUNT(*) AS ?n) (SAMPLE(?o) AS ?x) WHERE { ?s ${p} ?o OPTIONAL { ?o a ?c } BIND(DATATYPE(?o) AS ?dt) } GROUP BY ?c ?dt ORDER BY DESC(?n) ?c ?dt LIMIT ${k}`,
    examples: `SELECT ?s ?o WHERE { ?s ${p} ?o } ORDER BY ?s ?o LIMIT ${page.offset + EXAMPLES_PER_PAGE}`,
    untypedSubjects: `SELECT DISTINCT ?s WHERE { ?s ${p} ?o FILTER(isIRI(?s) && NOT EXISTS { ?s a ?t }) } LIMIT ${kgv.options.sampleSize}`,
    untypedObjects: `SELECT DISTINCT ?o WHERE { ?s ${p} ?o FILTER(isIRI(?o) && NOT EXISTS { ?o a ?t }) } LIMIT ${kgv.options.sampleSize}`,
  };
  type Per = { e: RegisteredEndpoint; subjects: SparqlRow[]; objects: SparqlRow[]; examples: SparqlRow[]; untypedS: string[]; untypedO: string[] };
  const settled = await settleAll(holders, kgv.options.concurrency, async (e): Promise<Per> => {
    const [subjects, objects, examples] = await Promise.all([budget.run(e.url, qs.subjects, k), budget.run(e.url, qs.objects, k), budget.run(e.url, qs.examples, page.offset + EXAMPLES_PER_PAGE)]);
    const hasUntypedS = subjects.some((r) => !r.c && r.x?.type === 'uri');
    const hasUntypedO = objects.some((r) => !r.c && !r.dt && r.x?.type === 'uri');
    const [us, uo] = await Promise.all([
      hasUntypedS ? budget.run(e.url, qs.untypedSubjects, kgv.options.sampleSize) : Promise.resolve([]),
      hasUntypedO ? budget.run(e.url, qs.untypedObjects, kgv.options.sampleSize) : Promise.resolve([]),
    ]);
    return { e, subjects, objects, examples, untypedS: us.map((r) => r.s?.value).filter((x): x is string => !!x), untypedO: uo.map((r) => r.o?.value).filter((x): x is string => !!x) };
  });
  const per: Per[] = [];
  holders.forEach((e, i) => {
    const s = settled[i];
    if (s.status === 'rejected') failures.push({ endpoint: e.id, url: e.url, error: String((s.reason as Error)?.message ?? s.reason) });
    else per.push(s.value);
  });
  const down = allFailed(holders.length, failures, budget.requests);
  if (down) return down;

  // Subject classes and object kinds, summed over endpoints.
  type Agg = { n: number; at: Map<string, number>; example?: SparqlTerm };
  const tally = (m: Map<string, Agg>, key: string, n: number, endpoint: string, example?: SparqlTerm) => {
    let a = m.get(key);
    if (!a) m.set(key, (a = { n: 0, at: new Map(), example }));
    a.n += n;
    a.at.set(endpoint, (a.at.get(endpoint) ?? 0) + n);
  };
  const sClasses = new Map<string, Agg>();
  const oKinds = new Map<string, Agg>();
  let triples = 0;
  for (const x of per) {
    for (const r of x.subjects) tally(sClasses, r.c ? `<${r.c.value}>` : '(no type at this endpoint)', Number(r.n?.value ?? 0), x.e.id, r.x);
    for (const r of x.objects) {
      const key = r.c ? `<${r.c.value}>` : r.dt ? `literal ${short(r.dt.value)}` : r.x?.type === 'uri' ? '(IRI without type at this endpoint)' : '(other)';
      const n = Number(r.n?.value ?? 0);
      tally(oKinds, key, n, x.e.id, r.x);
    }
    triples += entry?.endpoints.find((c) => c.endpoint === x.e.id)?.count ?? 0;
  }
  // Cross-endpoint types of untyped subjects/objects.
  const resolve = async (side: 'subjects' | 'objects') => {
    const lines: string[] = [];
    for (const x of per) {
      const iris = side === 'subjects' ? x.untypedS : x.untypedO;
      if (iris.length === 0) continue;
      const others = kgv.colocated([x.e]);
      const types = await kgv.typesAt(iris, others, budget, failures);
      const byClass = new Map<string, { n: number; at: Set<string> }>();
      for (const iri of iris)
        for (const [c, at] of types.get(iri) ?? []) {
          let b = byClass.get(c);
          if (!b) byClass.set(c, (b = { n: 0, at: new Set() }));
          b.n++;
          for (const id of at) b.at.add(id);
        }
      const found = [...byClass].sort(([a, x1], [b, y1]) => y1.n - x1.n || byCodePoint(a, b));
      lines.push(
        `  ${side} without a type at ${x.e.id}: ${iris.length}${iris.length >= kgv.options.sampleSize ? '+ (sampled)' : ''}; typed at other endpoints of the graph: ` +
          (found.length ? found.map(([c, b]) => `<${c}> ${b.n} of ${iris.length} (type at ${[...b.at].sort().join(', ')})`).join('; ') : 'none'),
      );
    }
    return lines;
  };
  const sExtra = await resolve('subjects');
  const oExtra = await resolve('objects');

  const fmt = (m: Map<string, Agg>) =>
    [...m]
      .sort(([a, x], [b, y]) => y.n - x.n || byCodePoint(a, b))
      .slice(0, k)
      .map(([key, a]) => `- ${key}: ${counted(a.n, 'triple')} (${[...a.at].map(([id, n]) => `${id} ${n}`).join(', ')})${a.example ? `, e.g. ${termText(a.example, 80)}` : ''}`);
  const inGraph = kgv.graph ? ` in the knowledge graph ${kgv.graph}` : '';
  const head = entry
    ? `explore_property_usage <${prop}>${inGraph}: ${counted(entry.total, 'triple')} at ${counted(entry.endpoints.length, 'endpoint')} (${endpointList(entry.endpoints)}).`
    : `explore_property_usage <${prop}>${inGraph}: not in the property index (no endpoint uses it as a predicate); asked every endpoint.`;
  const lines = [head];
  if (entry && entry.domains.length) lines.push(`Domain: ${entry.domains.map((a) => `${short(a.iri)} (${a.source === 'rdfs' ? 'rdfs:domain' : `VoID, ${a.triples} triples`})`).join(', ')}`);
  if (entry && entry.ranges.length) lines.push(`Range: ${entry.ranges.map((a) => `${short(a.iri)} (${a.source === 'rdfs' ? 'rdfs:range' : `VoID, ${a.triples} triples`})`).join(', ')}`);
  lines.push(`Subject classes (triples whose subject has the class at the same endpoint; showing ${Math.min(k, sClasses.size)} of ${sClasses.size}):`, ...fmt(sClasses), ...sExtra);
  lines.push(`Objects (classes or literal datatypes; showing ${Math.min(k, oKinds.size)} of ${oKinds.size}):`, ...fmt(oKinds), ...oExtra);
  const key = (t: SparqlTerm | undefined) => `${t?.type ?? ''} ${t?.value ?? ''}`;
  const ex = per
    .flatMap((x) => x.examples.map((r) => ({ r, id: x.e.id })))
    .sort((a, b) => byCodePoint(key(a.r.s), key(b.r.s)) || byCodePoint(key(a.r.o), key(b.r.o)) || byCodePoint(a.id, b.id))
    .map(({ r, id }) => `- ${termText(r.s, 120)} <${prop}> ${termText(r.o, 120)} [${id}]`);
  const tail = failureLines(failures);
  const p2 = pickPage(ex, page.offset, EXAMPLES_PER_PAGE, page.maxChars - [...lines, ...tail].join('\n').length - 300, (l) => l.length);
  const total = triples || ex.length;
  const note = pageNote({
    offset: page.offset,
    shown: p2.items.length,
    total,
    exact: triples > 0 || ex.length < page.offset + EXAMPLES_PER_PAGE,
    unit: 'triples',
    cutByChars: p2.cutByChars,
    maxChars: page.maxChars,
    how: kgv.continuation(),
  });
  lines.push(`Example triples (${note}):`, ...p2.items);
  lines.push(...tail);
  return { text: lines.join('\n'), isError: false, requests: budget.requests, hits: total };
}

/** Example triples shown per page by explore_property_usage. */
const EXAMPLES_PER_PAGE = 5;

/**
 * explore_entity_relations (paper section 3.2): for an entity IRI, its outgoing and incoming
 * properties at every endpoint, with counts and an example object or subject each; for a
 * literal, the entities that have that value (lexical form, case-insensitive) and the properties
 * holding it, with the entities' classes (looked up across the federation).
 */
export async function exploreEntityRelations(kgv: KgVoyagerCore, args: { entity?: string; literal?: string }, page: PageArgs = DEFAULT_PAGE): Promise<ToolAnswer> {
  const entity = args.entity?.trim().replace(/^<|>$/g, '');
  const literal = args.literal;
  if ((!entity && literal === undefined) || (entity && literal !== undefined)) {
    return argumentError('explore_entity_relations needs exactly one of: entity (an IRI) or literal (a value).');
  }
  const k = kgv.options.maxRows;
  const run = { budget: new Budget(kgv.options.timeoutMs, kgv.select), failures: [] as IndexFailure[], inGraph: kgv.graph ? ` in the knowledge graph ${kgv.graph}` : '', k, upTo: page.offset + k };
  return entity ? entityRelations(kgv, entity, page, run) : literalRelations(kgv, String(literal), page, run);
}

/** What one explore_entity_relations call keeps across its queries: its request budget, the endpoints that failed, the graph named in its answer, its page. */
interface RelationsRun {
  budget: Budget;
  failures: IndexFailure[];
  /** " in the knowledge graph G" when the tools serve one graph, else empty. */
  inGraph: string;
  /** Rows per page (`maxRows`). */
  k: number;
  /** Rows asked of each endpoint: the page's offset plus `k`. */
  upTo: number;
}

/** explore_entity_relations for an entity IRI: its outgoing and incoming properties at every endpoint, paged. */
async function entityRelations(kgv: KgVoyagerCore, entity: string, page: PageArgs, { budget, failures, inGraph, k, upTo }: RelationsRun): Promise<ToolAnswer> {
  const eps = kgv.endpoints;
  /** One page of a list's lines, and its note. */
  const pageOf = (lines: string[], total: number, exact: boolean, unit: string, budgetChars: number) => {
    const p = pickPage(lines, page.offset, k, budgetChars, (l) => l.length);
    return { items: p.items, note: pageNote({ offset: page.offset, shown: p.items.length, total, exact, unit, cutByChars: p.cutByChars, maxChars: page.maxChars, how: kgv.continuation() }) };
  };
  const e = iriRef(entity);
  const qOut = `SELECT ?p (COUNT(*) AS ?n) (SAMPLE(?o) AS ?x) WHERE { ${e} ?p ?o } GROUP BY ?p ORDER BY DESC(?n) ?p LIMIT ${upTo}`;
  const qIn = `SELECT ?p (COUNT(*) AS ?n) (SAMPLE(?s) AS ?x) WHERE { ?s ?p ${e} } GROUP BY ?p ORDER BY DESC(?n) ?p LIMIT ${upTo}`;
  const settled = await settleAll(eps, kgv.options.concurrency, (x) => Promise.all([budget.run(x.url, qOut, upTo), budget.run(x.url, qIn, upTo)]));
  type Rel = { n: number; at: Map<string, number>; example?: SparqlTerm };
  const out = new Map<string, Rel>();
  const inc = new Map<string, Rel>();
  const found = new Set<string>();
  const add = (m: Map<string, Rel>, r: SparqlRow, endpoint: string) => {
    if (!r.p) return;
    let a = m.get(r.p.value);
    if (!a) m.set(r.p.value, (a = { n: 0, at: new Map(), example: r.x }));
    const n = Number(r.n?.value ?? 0);
    a.n += n;
    a.at.set(endpoint, (a.at.get(endpoint) ?? 0) + n);
    found.add(endpoint);
  };
  const cut = new Set<number>();
  eps.forEach((x, i) => {
    const s = settled[i];
    if (s.status === 'rejected') return void failures.push({ endpoint: x.id, url: x.url, error: String((s.reason as Error)?.message ?? s.reason) });
    for (const r of s.value[0]) add(out, r, x.id);
    for (const r of s.value[1]) add(inc, r, x.id);
    if (s.value[0].length >= upTo) cut.add(0);
    if (s.value[1].length >= upTo) cut.add(1);
  });
  const down = allFailed(eps.length, failures, budget.requests);
  if (down) return down;
  const fmt = (m: Map<string, Rel>) =>
    [...m]
      .sort(([a, x], [b, y]) => (a === RDF_TYPE ? -1 : b === RDF_TYPE ? 1 : y.n - x.n || byCodePoint(a, b)))
      .map(([p, a]) => `- <${p}>: ${counted(a.n, 'triple')} (${[...a.at].map(([id, n]) => `${id} ${n}`).join(', ')}), e.g. ${termText(a.example, 120)}`);
  const head = `explore_entity_relations <${entity}>${inGraph}: found at ${counted(found.size, 'endpoint')}${found.size ? ` (${[...found].join(', ')})` : ''}.`;
  const tail = [...(found.size === 0 ? ['No endpoint has triples with this IRI. Check the IRI (copy it from lookup_class_instances), or give a literal instead.'] : []), ...failureLines(failures)];
  const room = (page.maxChars - [head, ...tail].join('\n').length - 400) / 2;
  const o = pageOf(fmt(out), out.size, !cut.has(0), 'properties', room);
  const n = pageOf(fmt(inc), inc.size, !cut.has(1), 'properties', room);
  const lines = [head, `Outgoing properties (${o.note}):`, ...o.items, `Incoming properties (${n.note}):`, ...n.items, ...tail];
  return { text: lines.join('\n'), isError: false, requests: budget.requests, hits: found.size };
}

/** explore_entity_relations for a literal: the entities that have that value (lexical form, case-insensitive), the properties holding it, the entities' classes. */
async function literalRelations(kgv: KgVoyagerCore, literal: string, page: PageArgs, { budget, failures, inGraph, k, upTo }: RelationsRun): Promise<ToolAnswer> {
  const eps = kgv.endpoints;
  const lit = stringLiteral(literal.toLowerCase());
  const pattern = `?s ?p ?v FILTER(isLiteral(?v) && LCASE(STR(?v)) = ${lit})`;
  const qRows = `SELECT ?s ?p ?v WHERE { ${pattern} } ORDER BY ?s ?p LIMIT ${upTo}`;
  const qCount = `SELECT ?p (COUNT(*) AS ?n) WHERE { ${pattern} } GROUP BY ?p ORDER BY DESC(?n) ?p LIMIT ${k}`;
  const settled = await settleAll(eps, kgv.options.concurrency, (x) => Promise.all([budget.run(x.url, qRows, upTo), budget.run(x.url, qCount, k)]));
  const rows: { s: string; p: string; v: SparqlTerm; endpoint: RegisteredEndpoint }[] = [];
  const props = new Map<string, { n: number; at: Map<string, number> }>();
  let total = 0;
  eps.forEach((x, i) => {
    const s = settled[i];
    if (s.status === 'rejected') return void failures.push({ endpoint: x.id, url: x.url, error: String((s.reason as Error)?.message ?? s.reason) });
    for (const r of s.value[0]) if (r.s && r.p && r.v) rows.push({ s: r.s.value, p: r.p.value, v: r.v, endpoint: x });
    for (const r of s.value[1]) {
      if (!r.p) continue;
      const n = Number(r.n?.value ?? 0);
      total += n;
      let a = props.get(r.p.value);
      if (!a) props.set(r.p.value, (a = { n: 0, at: new Map() }));
      a.n += n;
      a.at.set(x.id, n);
    }
  });
  const down = allFailed(eps.length, failures, budget.requests);
  if (down) return down;
  const shown = rows.sort((a, b) => byCodePoint(a.s, b.s) || byCodePoint(a.p, b.p) || byCodePoint(a.endpoint.id, b.endpoint.id)).slice(page.offset, upTo);
  // Classes of the subjects: at their own endpoint or anywhere in the same graph.
  const byGraph = new Map<string | null, Set<string>>();
  for (const r of shown) {
    let set = byGraph.get(r.endpoint.graph);
    if (!set) byGraph.set(r.endpoint.graph, (set = new Set()));
    set.add(r.s);
  }
  const classes = new Map<string, Set<string>>();
  for (const [graph, iris] of byGraph) {
    const t = await kgv.typesAt(
      [...iris].filter((x) => !x.startsWith('_:')),
      kgv.endpoints.filter((x) => x.graph === graph),
      budget,
      failures,
    );
    for (const [iri, cs] of t) classes.set(iri, new Set(cs.keys()));
  }
  const lines = [
    `explore_entity_relations ${JSON.stringify(literal)}${inGraph}: ${counted(total, 'triple')} with this value (lexical form, case-insensitive) at ${counted(new Set([...props.values()].flatMap((a) => [...a.at.keys()])).size, 'endpoint')}.`,
  ];
  lines.push(`Data properties (showing ${Math.min(k, props.size)} of ${props.size}):`);
  for (const [p, a] of [...props].sort(([a, x], [b, y]) => y.n - x.n || byCodePoint(a, b)).slice(0, k))
    lines.push(`- <${p}>: ${counted(a.n, 'triple')} (${[...a.at].map(([id, n]) => `${id} ${n}`).join(', ')})`);
  const entityLines = shown.map((r) => {
    const cs = [...(classes.get(r.s) ?? [])].sort(byCodePoint);
    return `- <${r.s}> <${r.p}> ${termText(r.v, 120)} [${r.endpoint.id}]${cs.length ? `; class ${cs.map((c) => `<${c}>`).join(', ')}` : ''}`;
  });
  const tail = [
    ...(total === 0 ? ['No triple has this value. Values must match whole (ignoring case); to search inside values use lookup_class_instances with all_attributes.'] : []),
    ...failureLines(failures),
  ];
  // `shown` starts at the offset already: page from 0 within it, and name the rows from the offset.
  const p = pickPage(entityLines, 0, k, page.maxChars - [...lines, ...tail].join('\n').length - 300, (l) => l.length);
  const note = pageNote({ offset: page.offset, shown: p.items.length, total, unit: 'triples', cutByChars: p.cutByChars, maxChars: page.maxChars, how: kgv.continuation() });
  lines.push(`Entities (${note}):`, ...p.items, ...tail);
  return { text: lines.join('\n'), isError: false, requests: budget.requests, hits: total };
}
