/**
 * `get_void_descriptions {endpoint | endpoints[], variant?}` (FKGQA paper section 3, "VoiD
 * Computation"; reference tool names, field notes §0): the VoID description of registered
 * endpoints, found by a chain of steps (`VOID_STEPS`: cache, build-file, well-known,
 * service-description, default-graph, named-graph, computed), each with a time limit, the first
 * that yields VoID winning; docs/mcp.md ("Tools and resources") describes each step. The `computed`
 * step runs the describe stage's own queries (src/describe/queries.ts) and equals the build's file
 * statement for statement (tests/mcp.test.ts).
 *
 * Every request goes through the bounded client (src/federation/client.ts): documents only from
 * hosts of registered endpoints, no redirect out of them, queries only to registered endpoints.
 * The answer says which step produced each description and what the earlier steps found.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { DataFactory, Parser, Store, Writer } from 'n3';
import type * as RDF from '@rdfjs/types';
import { STATE_FILES } from '../build/state.js';
import { RDF_TYPE, VOID } from '../common/vocab.js';
import { describeInWords } from '../describe/catalogue.js';
import type { SparqlClient } from '../describe/client.js';
import { parseSparqlJson, type SparqlRow } from '../sparql/results.js';
import { sortDescription, type ClassPartition, type ClassPropertyPartition, type Linkset, type RemoteClassPartition, type ShardDescription, type ShardStatistics } from '../describe/model.js';
import { computeStatistics } from '../describe/statistics.js';
import { FKGQA_VOCAB, renderVoid, VOID_EXT, VOID_PREFIXES, writerText, type VoidVariant } from '../describe/void-turtle.js';
import type { McpToolContext } from './context.js';
import { listEndpoints } from '../federation/routing.js';
import { infrastructureMessage, type ToolErrorMeta } from './tool-error.js';
import { ENDPOINTS_ELSEWHERE } from './surface.js';
import { datasetIriOf, voidPage, voidStatements, voidSummary, type VoidFormat, type VoidSection } from './void-text.js';
import { pageArgs } from './paging.js';
import { findEndpoint, type RegisteredEndpoint } from '../federation/registry.js';
import { writeFileAtomic } from '../common/output.js';
import { counted } from '../common/strings.js';

/** The variants an agent may ask for. */
export const VOID_VARIANTS = ['standard', 'extended'] as const satisfies readonly VoidVariant[];

/** The steps of the chain, in order. */
export const VOID_STEPS = ['cache', 'build-file', 'well-known', 'service-description', 'default-graph', 'named-graph', 'computed'] as const;
type VoidStep = (typeof VOID_STEPS)[number];

/** One step tried for one endpoint. */
interface VoidAttempt {
  step: VoidStep;
  /** What it found, in words (`HTTP 404 from …`, `no VoID triples`, `yes`). */
  outcome: string;
  ms: number;
}

/** The VoID of one endpoint. */
interface VoidResult {
  endpoint: string;
  variant: VoidVariant;
  /** The step that produced the description, or null when none did. */
  step: VoidStep | null;
  /** For `cache`: the step that produced the cached description. */
  cachedFrom?: VoidStep;
  /** Where it came from: a file, a URL, or the queries. */
  source?: string;
  /** The description as Turtle. */
  turtle?: string;
  /** Triples of the description. */
  triples?: number;
  /** `void:Linkset`s in it. */
  linksets?: number;
  attempts: VoidAttempt[];
}

const { namedNode } = DataFactory;
const TYPE = namedNode(RDF_TYPE);
const DATASET = namedNode(`${VOID}Dataset`);
const SPARQL_ENDPOINT = namedNode(`${VOID}sparqlEndpoint`);
const LINKSET = namedNode(`${VOID}Linkset`);
const RDFS_SEE_ALSO = 'http://www.w3.org/2000/01/rdf-schema#seeAlso';
const RDF_ACCEPT = 'text/turtle, application/n-triples;q=0.9, application/trig;q=0.8, text/n3;q=0.7, */*;q=0.1';

/** Parses RDF text by its media type (Turtle when unknown). @throws Error with the parser's message */
function parseRdf(text: string, contentType: string, base: string): Store {
  const t = contentType.split(';')[0].trim().toLowerCase();
  const format = t === 'application/n-triples' || t === 'text/plain' ? 'application/n-triples' : t === 'application/trig' ? 'application/trig' : t === 'text/n3' ? 'text/n3' : 'text/turtle';
  return new Store(new Parser({ format, baseIRI: base }).parse(text));
}

/**
 * The part of an RDF document that describes the endpoint: the `void:Dataset`s whose
 * `void:sparqlEndpoint` is `url` (or, when no dataset names any endpoint, every dataset), with every
 * node reachable from them through blank nodes, and the triples about the endpoint IRI itself.
 * @returns the triples, or a reason why the document is no VoID of this endpoint
 */
function voidPart(store: Store, url: string): { quads: RDF.Quad[] } | { reason: string } {
  const datasets = store.getSubjects(TYPE, DATASET, null);
  const withEndpoint = store.getSubjects(SPARQL_ENDPOINT, null, null);
  if (datasets.length === 0 && withEndpoint.length === 0) return { reason: 'no void:Dataset in it' };
  const norm = (u: string) => u.replace(/\/+$/, '');
  const mine = [...new Set([...datasets, ...withEndpoint])].filter((d) => store.getObjects(d, SPARQL_ENDPOINT, null).some((o) => norm(o.value) === norm(url)));
  const anyEndpoint = withEndpoint.length > 0;
  if (mine.length === 0 && anyEndpoint) return { reason: `its datasets name other endpoints (void:sparqlEndpoint), not ${url}` };
  const roots = mine.length > 0 ? mine : datasets;
  const seen = new Set<string>();
  const out: RDF.Quad[] = [];
  const visit = (s: RDF.Term) => {
    const key = `${s.termType}:${s.value}`;
    if (seen.has(key)) return;
    seen.add(key);
    for (const q of store.getQuads(s as RDF.Quad_Subject, null, null, null)) {
      out.push(q);
      if (q.object.termType === 'BlankNode') visit(q.object);
    }
  };
  for (const r of roots) visit(r);
  visit(namedNode(url));
  return { quads: out };
}

/** Turtle of a set of triples (deterministic: sorted by subject, predicate, object). */
function toTurtle(quads: RDF.Quad[]): string {
  const w = new Writer({ prefixes: VOID_PREFIXES });
  const key = (q: RDF.Quad) => `${q.subject.termType === 'BlankNode' ? '~' : ''}${q.subject.value} ${q.predicate.value} ${q.object.value}`;
  for (const q of [...quads].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0))) w.addQuad(DataFactory.quad(q.subject, q.predicate, q.object));
  return writerText(w);
}

/** Counts triples and linksets of a Turtle text (0, 0 when it does not parse). */
function countOf(turtle: string): { triples: number; linksets: number } {
  try {
    const s = new Store(new Parser({ format: 'text/turtle' }).parse(turtle));
    return { triples: s.size, linksets: s.getSubjects(TYPE, LINKSET, null).length };
  } catch {
    return { triples: 0, linksets: 0 };
  }
}

/** The CONSTRUCT query for VoID triples (a dataset and three levels of void:/void-ext:/fkgqa: partitions), optionally inside GRAPH ?g. */
function voidTriplesQuery(named: boolean): string {
  const ns = (v: string) => `(STRSTARTS(STR(?${v}), "${VOID}") || STRSTARTS(STR(?${v}), "${VOID_EXT}") || STRSTARTS(STR(?${v}), "${FKGQA_VOCAB}"))`;
  const body = `?d a <${VOID}Dataset> .
    { BIND(?d AS ?a) ?a ?b ?c }
    UNION { ?d ?p1 ?a . FILTER(${ns('p1')}) ?a ?b ?c }
    UNION { ?d ?p1 ?x . ?x ?p2 ?a . FILTER(${ns('p1')} && ${ns('p2')}) ?a ?b ?c }
    UNION { ?d ?p1 ?x . ?x ?p2 ?y . ?y ?p3 ?a . FILTER(${ns('p1')} && ${ns('p2')} && ${ns('p3')}) ?a ?b ?c }`;
  return `CONSTRUCT { ?a ?b ?c } WHERE { ${named ? `GRAPH ?g { ${body} }` : body} }`;
}

/** The `/.well-known/void` URLs of an endpoint: beside its path, then at the host root. */
function wellKnownUrls(url: string): string[] {
  const u = new URL(url);
  const dir = u.pathname.replace(/\/[^/]*$/, '');
  return [...new Set([`${u.origin}${dir}/.well-known/void`, `${u.origin}/.well-known/void`])];
}

/** `rel="describedby"` targets of a Link header (RFC 8288), resolved against `base`. */
function describedBy(link: string | null, base: string): string[] {
  if (!link) return [];
  const out: string[] = [];
  for (const m of link.matchAll(/<([^>]*)>\s*((?:;\s*[^;,]+)*)/g)) if (/rel="?[^";,]*\bdescribedby\b/i.test(m[2])) out.push(new URL(m[1], base).href);
  return out;
}

/** A cached description. */
interface CacheEntry {
  endpoint: string;
  variant: VoidVariant;
  step: VoidStep;
  source: string;
  turtle: string;
  /** Epoch ms when it was fetched. */
  at: number;
}

const memoryCache = new WeakMap<McpToolContext, Map<string, CacheEntry>>();

function cacheFile(ctx: McpToolContext, key: string): string | null {
  if (!ctx.stateDir) return null;
  return path.join(ctx.stateDir, STATE_FILES.mcp, 'void', `${crypto.createHash('sha256').update(key).digest('hex').slice(0, 32)}.json`);
}

function readCache(ctx: McpToolContext, key: string): CacheEntry | undefined {
  const mem = memoryCache.get(ctx)?.get(key);
  const fresh = (e: CacheEntry | undefined) => (e && Date.now() - e.at <= ctx.limits.voidCacheTtlMs ? e : undefined);
  if (fresh(mem)) return mem;
  const f = cacheFile(ctx, key);
  if (!f || !fs.existsSync(f)) return undefined;
  try {
    const e = JSON.parse(fs.readFileSync(f, 'utf8')) as CacheEntry;
    return fresh(e);
  } catch {
    return undefined;
  }
}

function writeCache(ctx: McpToolContext, key: string, e: CacheEntry): void {
  if (!memoryCache.has(ctx)) memoryCache.set(ctx, new Map());
  memoryCache.get(ctx)!.set(key, e);
  const f = cacheFile(ctx, key);
  if (!f) return;
  writeFileAtomic(f, JSON.stringify(e));
}

/**
 * GETs an RDF document within the step's time limit, through the bounded client: only from the
 * host of a registered endpoint, following redirects only to such hosts (src/federation/client.ts).
 */
async function getRdf(ctx: McpToolContext, url: string): Promise<{ ok: true; text: string; type: string; link: string | null } | { ok: false; why: string }> {
  return ctx.sparql.document(url, RDF_ACCEPT, ctx.limits.voidStepTimeoutMs);
}

/** Reads an RDF document and keeps its VoID of `endpoint`. */
function voidFromDocument(text: string, type: string, base: string, endpoint: string): { turtle: string } | { why: string } {
  let store: Store;
  try {
    store = parseRdf(text, type, base);
  } catch (e) {
    return { why: `not RDF (${type}): ${(e as Error).message}` };
  }
  const part = voidPart(store, endpoint);
  if ('reason' in part) return { why: part.reason };
  return { turtle: toTurtle(part.quads) };
}

/** A `SparqlClient` (describe stage) over one endpoint's default graph: the describe queries' `GRAPH ?g { … }` become `{ … }`. */
function defaultGraphClient(ctx: McpToolContext, url: string): SparqlClient {
  return {
    label: url,
    select: (query: string) => ctx.sparql.select(url, query.replace(/GRAPH \?\w+ \{/g, '{'), ctx.limits.voidStepTimeoutMs),
    close: () => {},
  };
}

/** The dataset IRI of an endpoint's computed VoID: the fkgqa shard's own, or one minted from the endpoint id. */
const datasetOf = datasetIriOf;

/** Rows of a federated SELECT, or why there are none. */
async function federatedRows(ctx: McpToolContext, query: string): Promise<{ rows: SparqlRow[] } | { why: string }> {
  const o = await ctx.sparql.federated(query, 'application/sparql-results+json', { ms: ctx.limits.voidStepTimeoutMs, from: 'call' });
  if (o.status !== 'ok') return { why: o.status === 'timeout' ? `time limit of ${ctx.limits.voidStepTimeoutMs} ms` : o.error };
  return { rows: parseSparqlJson(o.body, 'federation engine') };
}

/** Stand-in datatype of IRI objects in the property/datatype query below (never written). */
const NO_DATATYPE = `${FKGQA_VOCAB}iri`;

/**
 * The remote class partitions of an fkgqa shard endpoint (`fkgqa:remoteClassPartition`: its
 * subjects typed in another shard of the graph; docs/void.md), and the object classes typed in
 * other shards of every (remote) class partition, counted through the federation engine with one
 * SERVICE per endpoint named in the statement: per peer, the subjects' classes (`void:entities`),
 * their property partitions and datatypes, and per pair of (subjects', objects') shards the object
 * classes. Adds them to `stats` (which holds the endpoint's own class partitions).
 * @param peers the other registered endpoints of the graph
 * @returns notes on what could not be counted
 */
async function addRemotePartitions(ctx: McpToolContext, e: RegisteredEndpoint, peers: RegisteredEndpoint[], stats: ShardStatistics): Promise<string[]> {
  const notes: string[] = [];
  const svc = (u: string, body: string) => `SERVICE <${u}> { ${body} }`;
  const partitionOf = new Map<string, ClassPartition>();
  for (const c of stats.classPartitions) partitionOf.set(`${stats.dataset} ${c.class}`, c);
  const nestedOf = (c: ClassPartition, p: string): ClassPropertyPartition => {
    let pp = c.properties.find((x) => x.property === p);
    if (!pp) c.properties.push((pp = { property: p, triples: 0, objectClasses: [], remoteObjectClasses: [], datatypes: [] }));
    return pp;
  };
  for (const y of peers) {
    const ent = await federatedRows(ctx, `SELECT ?c (COUNT(DISTINCT ?s) AS ?n) WHERE { ${svc(e.url, 'SELECT DISTINCT ?s WHERE { ?s ?p ?o }')} ${svc(y.url, `?s <${RDF_TYPE}> ?c`)} } GROUP BY ?c`);
    if ('why' in ent) {
      notes.push(`remote class partitions typed at ${y.url} not counted: ${ent.why}`);
      continue;
    }
    for (const r of ent.rows) {
      const c: RemoteClassPartition = { class: r.c.value, typesIn: datasetOf(y), entities: Number(r.n.value), properties: [] };
      stats.remoteClassPartitions.push(c);
      partitionOf.set(`${c.typesIn} ${c.class}`, c);
    }
    if (ent.rows.length === 0) continue;
    const props = await federatedRows(
      ctx,
      `SELECT ?c ?p ?dt (COUNT(*) AS ?n) WHERE { ${svc(e.url, '?s ?p ?o')} ${svc(y.url, `?s <${RDF_TYPE}> ?c`)} BIND(IF(isLiteral(?o), DATATYPE(?o), <${NO_DATATYPE}>) AS ?dt) } GROUP BY ?c ?p ?dt`,
    );
    if ('why' in props) {
      notes.push(`property partitions of the remote class partitions typed at ${y.url} not counted: ${props.why}`);
      continue;
    }
    for (const r of props.rows) {
      const pp = nestedOf(partitionOf.get(`${datasetOf(y)} ${r.c.value}`)!, r.p.value);
      pp.triples += Number(r.n.value);
      if (r.dt.value !== NO_DATATYPE) pp.datatypes.push({ iri: r.dt.value, triples: Number(r.n.value) });
    }
  }
  // Object classes typed at z, of subjects typed at y (y = z = this endpoint: computed already).
  const all = [e, ...peers];
  for (const y of all) {
    const subjectsTyped = y === e ? svc(e.url, `?s <${RDF_TYPE}> ?c . ?s ?p ?o FILTER(isIRI(?o))`) : `${svc(e.url, '?s ?p ?o FILTER(isIRI(?o))')} ${svc(y.url, `?s <${RDF_TYPE}> ?c`)}`;
    const typesIn = y === e ? stats.dataset : datasetOf(y);
    if (y !== e && !stats.remoteClassPartitions.some((c) => c.typesIn === typesIn)) continue;
    for (const z of all) {
      if (y === e && z === e) continue;
      const oc = await federatedRows(ctx, `SELECT ?c ?p ?oc (COUNT(*) AS ?n) WHERE { ${subjectsTyped} ${svc(z.url, `?o <${RDF_TYPE}> ?oc`)} } GROUP BY ?c ?p ?oc`);
      if ('why' in oc) {
        notes.push(`object classes typed at ${z.url} of subjects typed at ${y.url} not counted: ${oc.why}`);
        continue;
      }
      for (const r of oc.rows) {
        const cp = partitionOf.get(`${typesIn} ${r.c.value}`);
        if (!cp) continue;
        const pp = nestedOf(cp, r.p.value);
        const o = { iri: r.oc.value, triples: Number(r.n.value) };
        if (z === e) pp.objectClasses.push(o);
        else pp.remoteObjectClasses.push({ ...o, typesIn: datasetOf(z) });
      }
    }
  }
  sortDescription(stats);
  return notes;
}

/**
 * Step 7: VoID computed on the endpoint with the describe stage's aggregate queries; for an fkgqa
 * shard, its remote class partitions (subjects typed in other shards of its graph, see
 * `addRemotePartitions`) through the federation engine; for the extended variant, linksets to
 * the other registered endpoints of the same graph (or, for a foreign endpoint, to the other
 * foreign ones) through the federation engine, one query per pair.
 * @returns the Turtle and notes on what could not be counted
 */
async function computeVoid(ctx: McpToolContext, e: RegisteredEndpoint, variant: VoidVariant): Promise<{ turtle: string; notes: string[] }> {
  const graph = e.graph ?? e.id;
  const shard = e.shard ?? 'endpoint';
  const [stats] = await computeStatistics(defaultGraphClient(ctx, e.url), { graph, shards: [shard], namespaces: Object.values(ctx.prefixes) }, false);
  const notes: string[] = [];
  const linksets: Linkset[] = [];
  const peers = ctx.registry.endpoints.filter((p) => p !== e && p.graph === e.graph).slice(0, 32);
  if (e.graph !== null) notes.push(...(await addRemotePartitions(ctx, e, peers, stats)));
  if (variant === 'extended') {
    for (const p of peers) {
      const q = `SELECT ?p (COUNT(*) AS ?triples) WHERE { SERVICE <${e.url}> { ?s ?p ?o FILTER(isIRI(?o)) } SERVICE <${p.url}> { SELECT DISTINCT ?o WHERE { ?o ?q ?x } } } GROUP BY ?p`;
      const o = await ctx.sparql.federated(q, 'application/sparql-results+json', { ms: ctx.limits.voidStepTimeoutMs, from: 'call' });
      if (o.status !== 'ok') {
        notes.push(`linksets to ${p.url} not counted: ${o.status === 'timeout' ? `time limit of ${ctx.limits.voidStepTimeoutMs} ms` : o.error}`);
        continue;
      }
      const rows = parseSparqlJson(o.body, p.url);
      for (const r of rows)
        if (r.p && Number(r.triples?.value) > 0) linksets.push({ subjectsTarget: stats.dataset, objectsTarget: datasetOf(p), linkPredicate: r.p.value, triples: Number(r.triples.value) });
    }
  }
  stats.linksets = linksets.sort((a, b) =>
    a.objectsTarget < b.objectsTarget ? -1 : a.objectsTarget > b.objectsTarget ? 1 : a.linkPredicate < b.linkPredicate ? -1 : a.linkPredicate > b.linkPredicate ? 1 : 0,
  );
  const d: ShardDescription = { ...stats, title: e.id, description: describeInWords(stats), endpoint: e.url };
  return { turtle: renderVoid(d, variant, ctx.prefixes['']), notes };
}

/** A step's finding (`voidDescription`): the VoID document and where it was read, and the outcome in words. */
type VoidFound = { value?: { url: string; turtle: string }; outcome: string };

/**
 * The first of `urls` whose RDF document holds VoID of endpoint `e` (`voidFromDocument`), its outcome `yes(url)`;
 * or why none did, the documents' reasons joined by "; ".
 */
async function firstVoidDocument(ctx: McpToolContext, e: RegisteredEndpoint, urls: string[], yes: (url: string) => string): Promise<VoidFound> {
  const why: string[] = [];
  for (const u of urls) {
    const r = await getRdf(ctx, u);
    if (!r.ok) {
      why.push(r.why);
      continue;
    }
    const v = voidFromDocument(r.text, r.type, u, e.url);
    if ('turtle' in v) return { value: { url: u, turtle: v.turtle }, outcome: yes(u) };
    why.push(`${u}: ${v.why}`);
  }
  return { outcome: why.join('; ') };
}

/**
 * Step 4 of `voidDescription`: VoID in the endpoint's service description (its own URL dereferenced), or in a
 * document it links (`Link: rel=describedby`, `rdfs:seeAlso`, `void:inDataset`).
 */
async function serviceDescriptionVoid(ctx: McpToolContext, e: RegisteredEndpoint): Promise<VoidFound> {
  const r = await getRdf(ctx, e.url);
  if (!r.ok) return { outcome: `no service description: ${r.why}` };
  let store: Store;
  try {
    store = parseRdf(r.text, r.type, e.url);
  } catch (err) {
    return { outcome: `the service description is not RDF: ${(err as Error).message}` };
  }
  if (store.getSubjects(TYPE, DATASET, null).length > 0) {
    const v = voidFromDocument(r.text, r.type, e.url, e.url);
    if ('turtle' in v) return { value: { url: e.url, turtle: v.turtle }, outcome: 'yes (VoID in the service description)' };
  }
  const links = [
    ...describedBy(r.link, e.url),
    ...[RDFS_SEE_ALSO, `${VOID}inDataset`].flatMap((p) =>
      store
        .getObjects(null, namedNode(p), null)
        .filter((o) => o.termType === 'NamedNode')
        .map((o) => o.value),
    ),
  ];
  if (links.length === 0) return { outcome: 'no VoID in the service description and no link to one' };
  return firstVoidDocument(ctx, e, [...new Set(links)], (u) => `yes (linked: ${u})`);
}

/**
 * The VoID of one registered endpoint by the chain of the module comment. Never throws: a step
 * that fails is recorded in `attempts` and the next one tried.
 */
async function voidDescription(ctx: McpToolContext, e: RegisteredEndpoint, variant: VoidVariant): Promise<VoidResult> {
  const attempts: VoidAttempt[] = [];
  const key = `${e.url} ${variant}`;
  const result = (step: VoidStep, source: string, turtle: string, extra: Partial<VoidResult> = {}): VoidResult => ({
    endpoint: e.url,
    variant,
    step,
    source,
    turtle,
    ...countOf(turtle),
    attempts,
    ...extra,
  });
  const timed = async <T>(step: VoidStep, fn: () => Promise<{ value?: T; outcome: string }>): Promise<T | undefined> => {
    const t0 = performance.now();
    let r: { value?: T; outcome: string };
    try {
      r = await fn();
    } catch (err) {
      r = { outcome: `failed: ${(err as Error).message.split('\n')[0]}` };
    }
    attempts.push({ step, outcome: r.outcome, ms: Math.round(performance.now() - t0) });
    return r.value;
  };
  const found = (step: Exclude<VoidStep, 'cache' | 'build-file'>, source: string, turtle: string) => {
    writeCache(ctx, key, { endpoint: e.url, variant, step, source, turtle, at: Date.now() });
    return result(step, source, turtle);
  };

  // 1. cache
  const cached = await timed('cache', async () => {
    const c = readCache(ctx, key);
    return c ? { value: c, outcome: `yes (from ${c.step}, ${new Date(c.at).toISOString()})` } : { outcome: 'not cached' };
  });
  if (cached) return result('cache', cached.source, cached.turtle, { cachedFrom: cached.step });

  // 2. the build's file
  const file = variant === 'extended' ? e.voidExtendedFile : e.voidFile;
  const fromFile = await timed('build-file', async () => {
    if (!file) return { outcome: 'no VoID file in the build' };
    if (!fs.existsSync(file)) return { outcome: "the build's VoID file is missing" };
    return { value: fs.readFileSync(file, 'utf8'), outcome: 'yes' };
  });
  if (fromFile !== undefined) return result('build-file', file!, fromFile);

  // 3. /.well-known/void
  const wk = await timed('well-known', () => firstVoidDocument(ctx, e, wellKnownUrls(e.url), (u) => `yes (${u})`));
  if (wk) return found('well-known', wk.url, wk.turtle);

  // 4. the service description: VoID in it, or linked from it
  const sd = await timed('service-description', () => serviceDescriptionVoid(ctx, e));
  if (sd) return found('service-description', sd.url, sd.turtle);

  // 5./6. VoID triples in the default graph, then in named graphs
  for (const [step, named] of [
    ['default-graph', false],
    ['named-graph', true],
  ] as const) {
    const t = await timed(step, async () => {
      const o = await ctx.sparql.direct(e.url, voidTriplesQuery(named), 'application/n-triples, text/turtle;q=0.9', ctx.limits.voidStepTimeoutMs);
      if (o.status === 'timeout') return { outcome: `no answer within ${ctx.limits.voidStepTimeoutMs} ms` };
      if (o.status === 'error') return { outcome: `query failed: ${o.httpStatus ? `HTTP ${o.httpStatus}: ` : ''}${o.error.slice(0, 200)}` };
      const v = voidFromDocument(o.body, o.contentType || 'application/n-triples', e.url, e.url);
      return 'turtle' in v ? { value: v.turtle, outcome: 'yes' } : { outcome: `no VoID triples (${v.why})` };
    });
    if (t) return found(step, `${e.url} (CONSTRUCT${named ? ' in GRAPH ?g' : ''})`, t);
  }

  // 7. computed with SPARQL 1.1 aggregate queries
  const c = await timed('computed', async () => {
    const r = await computeVoid(ctx, e, variant);
    return { value: r, outcome: r.notes.length ? `yes; ${r.notes.join('; ')}` : 'yes' };
  });
  if (c) return found('computed', `${e.url} (SPARQL 1.1 aggregate queries)`, c.turtle);
  return { endpoint: e.url, variant, step: null, attempts };
}

/**
 * The standard VoID of an endpoint when it is at hand without a request: in the cache (an earlier
 * get_void_descriptions, memory or state folder) or the build's file. Undefined otherwise (the
 * chain's later steps ask the endpoint; this never does).
 */
export function knownVoid(ctx: McpToolContext, e: RegisteredEndpoint): string | undefined {
  const cached = readCache(ctx, `${e.url} standard`);
  if (cached) return cached.turtle;
  if (e.voidFile && fs.existsSync(e.voidFile)) return fs.readFileSync(e.voidFile, 'utf8');
  return undefined;
}

/** Arguments of get_void_descriptions. */
interface VoidArgs {
  endpoint?: string;
  endpoints?: string[];
  variant?: VoidVariant;
  /** `summary` (default: a line per dataset, partition and linkset) or `text/turtle` (a Turtle statement per line). */
  format?: VoidFormat;
  /** Lines (statements) of the answer skipped before the page shown (default 0). */
  offset?: number;
  /** Characters of the answer shown, within the limits' bounds (default `limits.defaultMaxChars`). */
  max_chars?: number;
}

/** Most endpoints per call. */
const MAX_VOID_ENDPOINTS = 25;

/**
 * One get_void_descriptions call: the VoID of each endpoint asked for, with the step that produced
 * it, logged in the call log (route `void`, the steps in `details`).
 * @returns the agent's text; `isError` when an endpoint is not registered, none is named, or no
 *   step produced VoID for any of them
 */
export async function getVoidDescriptions(ctx: McpToolContext, args: VoidArgs): Promise<{ text: string; isError: boolean; results: VoidResult[]; error?: ToolErrorMeta }> {
  const t0 = performance.now();
  const time = new Date().toISOString();
  const variant = args.variant ?? 'standard';
  const format = args.format ?? 'summary';
  const urls = [...new Set([...(args.endpoint ? [args.endpoint] : []), ...(args.endpoints ?? [])])];
  const log = (route: string, results: VoidResult[], text: string, errorClass?: string) =>
    ctx.callLog.record({
      time,
      tool: 'get_void_descriptions',
      setup: ctx.setup,
      route,
      endpoints: urls,
      requests: null,
      ms: Math.round((performance.now() - t0) * 10) / 10,
      ...(errorClass ? { errorClass, error: text } : {}),
      details: { variant, steps: Object.fromEntries(results.map((r) => [r.endpoint, r.step])) },
    });
  const fail = (errorClass: string, message: string) => {
    const text = `Error (${errorClass}): ${message}`;
    log('error', [], text, errorClass);
    return { text, isError: true, results: [], error: { class: errorClass, infrastructure: false } };
  };
  const registered = () => `Registered endpoints:\n${listEndpoints(ctx.registry.endpoints, 16, ENDPOINTS_ELSEWHERE)}`;
  if (urls.length === 0) return fail('no-endpoint', `name an endpoint (endpoint: "<URL>") or several (endpoints: [...]). ${registered()}`);
  if (urls.length > MAX_VOID_ENDPOINTS) return fail('too-many', `at most ${counted(MAX_VOID_ENDPOINTS, 'endpoint')} per call, ${urls.length} given: ask in several calls`);
  const unknown = urls.filter((u) => !findEndpoint(ctx.registry, u));
  if (unknown.length > 0) return fail('unknown-endpoint', `${unknown.map((u) => `<${u}>`).join(', ')} not registered. ${registered()}`);
  const results: VoidResult[] = [];
  for (const u of urls) results.push(await voidDescription(ctx, findEndpoint(ctx.registry, u)!, variant));
  const sections: VoidSection[] = results.map((r) => {
    if (!r.step || r.turtle === undefined) return { heading: `# VoID of <${r.endpoint}>: not found (${r.attempts.map((a) => `${a.step}: ${a.outcome}`).join(' | ')})` };
    // The cache's miss says nothing when a later step found the description; the other steps tried say why that step was needed.
    const tried = r.attempts.filter((a) => a.step !== r.step && !(a.step === 'cache' && a.outcome === 'not cached' && r.step === 'build-file')).map((a) => `${a.step}: ${a.outcome}`);
    const notes = r.attempts.find((a) => a.step === r.step)?.outcome.replace(/^yes(; )?/, '') ?? '';
    const triedLine = (tried.length ? `\n# earlier steps: ${tried.join(' | ')}` : '') + (notes && r.step === 'computed' ? `\n# note: ${notes}` : '');
    const from = r.step === 'cache' ? `cache (produced by ${r.cachedFrom})` : r.step === 'build-file' ? "build-file: the build's VoID file" : `${r.step}: ${r.source}`;
    const heading = `# VoID of <${r.endpoint}> (${variant}) from step ${from}; ${r.triples} triples${variant === 'extended' ? `, ${r.linksets} linksets` : ''}${triedLine}`;
    try {
      const render = format === 'summary' ? voidSummary : voidStatements;
      return { heading, void: render(r.turtle, findEndpoint(ctx.registry, r.endpoint)!, ctx.registry.endpoints, ctx.prefixes['']) };
    } catch (e) {
      return { heading: `${heading}\n# the description does not parse as Turtle (${(e as Error).message.split('\n')[0]}); as it came:\n${r.turtle}` };
    }
  });
  const page = voidPage(sections, pageArgs(args, ctx.limits), format);
  const text = page.text;
  const none = results.every((r) => !r.step);
  log(none ? 'error' : 'void', results, text, none ? 'no-void' : undefined);
  if (!none) return { text, isError: false, results };
  // No step found VoID for any endpoint: the infrastructure's fault when the endpoints could not be queried (down, 5xx), not when they simply publish none.
  const down = results.find((r) => r.attempts.some((a) => a.step === 'computed' && infrastructureMessage(a.outcome)));
  return {
    text: `Error (no-void): no step found a VoID description of ${urls.length === 1 ? 'the endpoint' : 'any endpoint asked'}.\n${text}`,
    isError: true,
    results,
    error: { class: 'no-void', infrastructure: !!down, ...(down ? { endpoint: down.endpoint } : {}) },
  };
}
