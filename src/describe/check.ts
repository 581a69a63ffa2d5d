/**
 * Checks that every statement of the VoID of a graph's shards is true at the shard's endpoint:
 * each statement becomes a SPARQL query whose triple patterns are asked where the statement says
 * they hold, and its answer is compared with the stated value (docs/void.md, "Checked by the
 * build", lists what is checked). `describeGraph` runs it on every graph it describes with SPARQL,
 * so a build that would write an untrue VoID statement fails instead.
 *
 * "At the endpoint of shard X" is `GRAPH <X> { … }` over a dataset that holds each shard as the
 * named graph of its dataset IRI (the dataset `computeStatistics` reads): shard X's endpoint
 * serves exactly that graph as its default graph. The queries are written per statement, not
 * shared with `queries.ts`, so that a mistake there is not repeated here.
 */
import { RDF_TYPE } from '../common/vocab.js';
import type { SparqlRow } from '../sparql/results.js';
import type { SparqlClient } from './client.js';
import type { ClassPartition, RemoteClassPartition, ShardStatistics } from './model.js';

/** A VoID statement the endpoint contradicts (or a fact of the endpoint the VoID leaves out). */
export interface UntrueStatement {
  /** Dataset IRI of the shard whose VoID states it. */
  dataset: string;
  /** The statement in VoID terms, e.g. `void:classPartition [ void:class <…/stadium> ] (ASK { ?s a C } here)`. */
  statement: string;
  /** What the VoID states (a count, `true`, or `none` for a fact it leaves out). */
  stated: string;
  /** What the endpoint answers. */
  found: string;
}

/** The outcome of `checkVoid`. */
export interface VoidCheck {
  /** Statements compared with the endpoints' answers. */
  statements: number;
  /** Of them, ASK checks (a class has an instance at the shard named). */
  asks: number;
  /** Queries sent. */
  queries: number;
  /** Every statement found untrue; empty when the VoID is true of its endpoints. */
  untrue: UntrueStatement[];
}

const TYPE = `<${RDF_TYPE}>`;
const str = (s: string) => JSON.stringify(s);
const num = (row: SparqlRow | undefined, v: string) => (row?.[v] ? Number(row[v].value) : 0);

/** `GRAPH <g> { patterns }`: the patterns asked at the endpoint of the shard with dataset IRI `g`. */
const at = (g: string, patterns: string) => `GRAPH <${g}> { ${patterns} }`;
/** `VALUES ?v { <g1> <g2> … }`. */
const valuesOf = (v: string, graphs: string[]) => `VALUES ?${v} { ${graphs.map((g) => `<${g}>`).join(' ')} }`;
/** A class partition in the words of the statements. */
const classPartitionName = (cls: string) => `void:classPartition [ void:class <${cls}> ]`;
/** A remote class partition in the words of the statements. */
const remoteClassPartitionName = (cls: string, typesIn: string) => `fkgqa:remoteClassPartition [ fkgqa:class <${cls}> ; fkgqa:typesIn <${typesIn}> ]`;
/** A datatype partition of a property partition, with its triples, in the words of the statements. */
const datatypePartitionTriples = (property: string, datatype: string) => `<${property}> void-ext:datatypePartition [ void-ext:datatype <${datatype}> ] void:triples`;

/**
 * The queries and comparisons of one `checkVoid`: what it compares, asks and sends, and the
 * untrue statements found. ASK answers are cached (the same class at the same shard is asked by
 * several partitions).
 */
class VoidChecker {
  readonly out: VoidCheck = { statements: 0, asks: 0, queries: 0, untrue: [] };
  private readonly askCache = new Map<string, boolean>();

  /**
   * @param client a dataset holding every shard of the graph as the named graph of its dataset IRI
   * @param all the dataset IRIs of every shard of the graph
   */
  constructor(
    private readonly client: SparqlClient,
    readonly all: string[],
  ) {}

  /** A SELECT, counted. */
  async select(query: string): Promise<SparqlRow[]> {
    this.out.queries++;
    return this.client.select(query);
  }

  /** ASK as a SELECT … LIMIT 1 (the client interface speaks SELECT). */
  async ask(where: string): Promise<boolean> {
    if (!this.askCache.has(where)) this.askCache.set(where, (await this.select(`SELECT (1 AS ?x) WHERE { ${where} } LIMIT 1`)).length > 0);
    return this.askCache.get(where)!;
  }

  /** Compares a statement of the VoID of shard X (dataset IRI) with what its endpoint answers; a difference is untrue. */
  compare(X: string, statement: string, stated: number | string | boolean, found: number | string | boolean): void {
    this.out.statements++;
    if (String(stated) !== String(found)) this.out.untrue.push({ dataset: X, statement, stated: String(stated), found: String(found) });
  }

  /** Compares stated and found counts by key: a key on one side only is untrue too (`none`). */
  compareAll(X: string, what: string, stated: Map<string, number>, found: Map<string, number>): void {
    for (const k of new Set([...stated.keys(), ...found.keys()])) this.compare(X, `${what} ${k}`, stated.get(k) ?? 'none', found.get(k) ?? 'none');
  }
}

/**
 * The dataset statements of shard d: triples, distinct subjects, properties, distinct objects,
 * entities, the URI space (the least and greatest entity IRI in it: every IRI between two that
 * start with the URI space starts with it too, in code-point order) and classes.
 * @returns the classes of the shard's own type triples
 */
async function checkDataset(k: VoidChecker, d: ShardStatistics): Promise<string[]> {
  const X = d.dataset;
  const [ds] = await k.select(`SELECT (COUNT(*) AS ?t) (COUNT(DISTINCT ?s) AS ?ds) (COUNT(DISTINCT ?p) AS ?np) (COUNT(DISTINCT ?o) AS ?do) WHERE { ${at(X, '?s ?p ?o')} }`);
  k.compare(X, 'void:triples', d.triples, num(ds, 't'));
  k.compare(X, 'void:distinctSubjects', d.distinctSubjects, num(ds, 'ds'));
  k.compare(X, 'void:properties', d.properties, num(ds, 'np'));
  k.compare(X, 'void:distinctObjects', d.distinctObjects, num(ds, 'do'));
  const [ent] = await k.select(`SELECT (COUNT(DISTINCT ?s) AS ?n) (MIN(STR(?s)) AS ?lo) (MAX(STR(?s)) AS ?hi) WHERE { ${at(X, '?s ?p ?o FILTER(isIRI(?s))')} }`);
  k.compare(X, 'void:entities', d.entities, num(ent, 'n'));
  if (d.uriSpace !== undefined) {
    const inside = (v: string) => ent?.[v]?.value.startsWith(d.uriSpace!) ?? false;
    k.compare(X, `void:uriSpace ${str(d.uriSpace)} (least and greatest entity IRI in it)`, true, inside('lo') && inside('hi'));
  }
  const ownClasses = (await k.select(`SELECT DISTINCT ?c WHERE { ${at(X, `?s ${TYPE} ?c`)} }`)).map((r) => r.c.value);
  k.compare(X, 'void:classes', d.classes, ownClasses.length);
  return ownClasses;
}

/**
 * The property partitions of shard d (and no predicate without one), and its vocabularies: a
 * vocabulary is used when a predicate of the shard, or a class of its own type triples, is in it.
 */
async function checkPropertyPartitions(k: VoidChecker, d: ShardStatistics, ownClasses: string[]): Promise<void> {
  const X = d.dataset;
  const pp = await k.select(`SELECT ?p (COUNT(*) AS ?t) (COUNT(DISTINCT ?s) AS ?ds) (COUNT(DISTINCT ?o) AS ?do) WHERE { ${at(X, '?s ?p ?o')} } GROUP BY ?p`);
  const counts = (m: Map<string, number>, p: string, triples: number, subjects: number, objects: number) => {
    m.set(`<${p}> void:triples`, triples);
    m.set(`<${p}> void:distinctSubjects`, subjects);
    m.set(`<${p}> void:distinctObjects`, objects);
  };
  const statedPp = new Map<string, number>();
  for (const p of d.propertyPartitions) counts(statedPp, p.property, p.triples, p.distinctSubjects, p.distinctObjects);
  const foundPp = new Map<string, number>();
  for (const r of pp) counts(foundPp, r.p.value, num(r, 't'), num(r, 'ds'), num(r, 'do'));
  k.compareAll(X, 'void:propertyPartition', statedPp, foundPp);
  for (const ns of d.vocabularies) {
    k.compare(
      X,
      `void:vocabulary <${ns}> (a predicate or class in it)`,
      true,
      [...pp.map((r) => r.p.value), ...ownClasses].some((t) => t.startsWith(ns)),
    );
  }
}

/** A class partition of shard X, or a remote one. */
type AnyClassPartition = ClassPartition | RemoteClassPartition;

/** Where the type triples of a (remote) class partition of shard X are. */
const typesOf = (c: AnyClassPartition, X: string) => ('typesIn' in c ? c.typesIn : X);
/** A (remote) class partition in the words of the statements. */
const partitionName = (c: AnyClassPartition) => ('typesIn' in c ? remoteClassPartitionName(c.class, c.typesIn) : classPartitionName(c.class));

/**
 * The class partitions of shard d (types here) and its remote class partitions (types where they
 * say): the ASK, then the set of them with their entities, then what is nested in each
 * (`checkNestedPartitions`).
 */
async function checkClassPartitions(k: VoidChecker, d: ShardStatistics): Promise<void> {
  const X = d.dataset;
  const partitions: AnyClassPartition[] = [...d.classPartitions, ...d.remoteClassPartitions];
  for (const c of partitions) {
    k.out.asks++;
    k.compare(X, `${partitionName(c)} (ASK { ?s a <${c.class}> } at <${typesOf(c, X)}>)`, true, await k.ask(at(typesOf(c, X), `?s ${TYPE} <${c.class}>`)));
  }
  const statedEntities = new Map(partitions.map((c) => [`${partitionName(c)} void:entities`, c.entities]));
  const foundEntities = new Map<string, number>();
  const typed = await k.select(
    `SELECT ?t ?c (COUNT(DISTINCT ?s) AS ?n) WHERE { { SELECT DISTINCT ?s WHERE { ${at(X, '?s ?p ?o')} } } ${valuesOf('t', k.all)} GRAPH ?t { ?s ${TYPE} ?c } } GROUP BY ?t ?c`,
  );
  for (const r of typed) {
    const key = r.t.value === X ? classPartitionName(r.c.value) : remoteClassPartitionName(r.c.value, r.t.value);
    foundEntities.set(`${key} void:entities`, num(r, 'n'));
  }
  k.compareAll(X, '', statedEntities, foundEntities);
  for (const c of partitions) await checkNestedPartitions(k, X, c);
}

/**
 * What is nested in a (remote) class partition c of shard X: its property partitions with their
 * object classes (own and remote) and datatypes, then an ASK per object class (object classes are
 * class partitions too: their type triples are where they say).
 */
async function checkNestedPartitions(k: VoidChecker, X: string, c: AnyClassPartition): Promise<void> {
  const subjects = `${at(typesOf(c, X), `?s ${TYPE} <${c.class}>`)} ${at(X, '?s ?p ?o')}`;
  const stated = new Map<string, number>();
  for (const p of c.properties) {
    stated.set(`<${p.property}> void:triples`, p.triples);
    for (const o of p.objectClasses) stated.set(`<${p.property}> ${classPartitionName(o.iri)} void:triples`, o.triples);
    for (const o of p.remoteObjectClasses) stated.set(`<${p.property}> ${remoteClassPartitionName(o.iri, o.typesIn)} void:triples`, o.triples);
    for (const o of p.datatypes) stated.set(datatypePartitionTriples(p.property, o.iri), o.triples);
  }
  const found = new Map<string, number>();
  for (const r of await k.select(`SELECT ?p (COUNT(*) AS ?n) WHERE { ${subjects} } GROUP BY ?p`)) found.set(`<${r.p.value}> void:triples`, num(r, 'n'));
  for (const r of await k.select(`SELECT ?p ?z ?d (COUNT(*) AS ?n) WHERE { ${subjects} FILTER(isIRI(?o)) ${valuesOf('z', k.all)} GRAPH ?z { ?o ${TYPE} ?d } } GROUP BY ?p ?z ?d`)) {
    found.set(`<${r.p.value}> ${r.z.value === X ? classPartitionName(r.d.value) : remoteClassPartitionName(r.d.value, r.z.value)} void:triples`, num(r, 'n'));
  }
  for (const r of await k.select(`SELECT ?p ?dt (COUNT(*) AS ?n) WHERE { ${subjects} FILTER(isLiteral(?o)) BIND(DATATYPE(?o) AS ?dt) } GROUP BY ?p ?dt`)) {
    found.set(datatypePartitionTriples(r.p.value, r.dt.value), num(r, 'n'));
  }
  k.compareAll(X, `${partitionName(c)} void:propertyPartition`, stated, found);
  for (const p of c.properties) {
    for (const o of [...p.objectClasses.map((x) => ({ ...x, typesIn: X })), ...p.remoteObjectClasses]) {
      k.out.asks++;
      k.compare(
        X,
        `${partitionName(c)} void:propertyPartition <${p.property}> object class <${o.iri}> (ASK { ?o a <${o.iri}> } at <${o.typesIn}>)`,
        true,
        await k.ask(at(o.typesIn, `?o ${TYPE} <${o.iri}>`)),
      );
    }
  }
}

/** The linksets of shard d (and no missing one): triples whose IRI object is a subject in another shard. */
async function checkLinksets(k: VoidChecker, d: ShardStatistics): Promise<void> {
  const X = d.dataset;
  const others = k.all.filter((g) => g !== X);
  const stated = new Map(d.linksets.map((l) => [`void:Linkset <${l.objectsTarget}> <${l.linkPredicate}> void:triples`, l.triples]));
  const found = new Map<string, number>();
  if (others.length > 0) {
    const described = `{ SELECT DISTINCT ?b ?o WHERE { ${valuesOf('b', others)} GRAPH ?b { ?o ?q ?x } } }`;
    const rows = await k.select(`SELECT ?b ?p (COUNT(*) AS ?n) WHERE { ${at(X, '?s ?p ?o FILTER(isIRI(?o))')} ${described} } GROUP BY ?b ?p`);
    for (const r of rows) found.set(`void:Linkset <${r.b.value}> <${r.p.value}> void:triples`, num(r, 'n'));
  }
  k.compareAll(X, '', stated, found);
}

/**
 * Checks the VoID descriptions of the shards of one knowledge graph against the shards: per shard
 * the dataset (`checkDataset`), its property partitions (`checkPropertyPartitions`), its (remote)
 * class partitions (`checkClassPartitions`) and its linksets (`checkLinksets`).
 * @param client a dataset holding every shard of the graph as the named graph `d.dataset`
 * @param descriptions the statistics of every shard of the graph (as computed, or read back from
 *   the files with `readVoid`)
 * @param linksets check the linksets too (the extended variant)
 * @returns what was checked and every untrue statement (none when all are true)
 * @throws Error from the client
 */
export async function checkVoid(client: SparqlClient, descriptions: ShardStatistics[], linksets = true): Promise<VoidCheck> {
  const k = new VoidChecker(
    client,
    descriptions.map((d) => d.dataset),
  );
  for (const d of descriptions) {
    const ownClasses = await checkDataset(k, d);
    await checkPropertyPartitions(k, d, ownClasses);
    await checkClassPartitions(k, d);
    if (linksets) await checkLinksets(k, d);
  }
  return k.out;
}

/**
 * One line per untrue statement (at most `max`, then how many more), for an error message.
 * @param names dataset IRI → endpoint name, for readable lines
 */
export function formatUntrue(untrue: UntrueStatement[], names: (dataset: string) => string, max = 20): string {
  const lines = untrue.slice(0, max).map((u) => `${names(u.dataset)}: ${u.statement.trim()}: VoID states ${u.stated}, the endpoint answers ${u.found}`);
  if (untrue.length > max) lines.push(`… and ${untrue.length - max} more`);
  return lines.join('\n');
}
