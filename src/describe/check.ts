/**
 * Checks that every statement of the VoID of a graph's shards is true at the shard's endpoint:
 * each statement becomes a SPARQL query whose triple patterns are asked where the statement says
 * they hold, and its answer is compared with the stated value (docs/void.md, "Checked by the
 * build"). `describeGraph` runs it on every graph it describes with SPARQL, so a build that would
 * write an untrue VoID statement fails instead.
 *
 * "At the endpoint of shard X" is `GRAPH <X> { … }` over a dataset that holds each shard as the
 * named graph of its dataset IRI (the dataset `computeStatistics` reads): shard X's endpoint
 * serves exactly that graph as its default graph. The queries are written per statement, not
 * shared with `queries.ts`:
 *
 * - dataset: `void:triples`, `void:entities`, `void:classes`, `void:properties`,
 *   `void:distinctSubjects`, `void:distinctObjects`, `void:uriSpace` (the least and greatest
 *   entity IRI in it, hence all), `void:vocabulary` (a predicate or own class of the shard in it);
 * - every property partition (and no predicate without one);
 * - every class partition: `ASK { ?s a C }` at X; a remote class partition: `ASK { ?s a C }` at
 *   the shard it names (`fkgqa:typesIn`); both with `void:entities` (subjects of X typed there),
 *   the set of them complete, and their nested property partitions, object classes (`ASK { ?o a
 *   D }` where stated) and datatypes;
 * - every linkset (and no missing one) when `linksets` is on.
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

/**
 * Checks the VoID descriptions of the shards of one knowledge graph against the shards.
 * @param client a dataset holding every shard of the graph as the named graph `d.dataset`
 * @param descriptions the statistics of every shard of the graph (as computed, or read back from
 *   the files with `readVoid`)
 * @param linksets check the linksets too (the extended variant)
 * @returns what was checked and every untrue statement (none when all are true)
 * @throws Error from the client
 */
export async function checkVoid(client: SparqlClient, descriptions: ShardStatistics[], linksets = true): Promise<VoidCheck> {
  const out: VoidCheck = { statements: 0, asks: 0, queries: 0, untrue: [] };
  const all = descriptions.map((d) => d.dataset);
  const valuesOf = (v: string, graphs: string[]) => `VALUES ?${v} { ${graphs.map((g) => `<${g}>`).join(' ')} }`;
  const select = async (query: string) => {
    out.queries++;
    return client.select(query);
  };
  const askCache = new Map<string, boolean>();
  /** ASK as a SELECT … LIMIT 1 (the client interface speaks SELECT). */
  const ask = async (where: string) => {
    if (!askCache.has(where)) askCache.set(where, (await select(`SELECT (1 AS ?x) WHERE { ${where} } LIMIT 1`)).length > 0);
    return askCache.get(where)!;
  };

  for (const d of descriptions) {
    const X = d.dataset;
    const at = (g: string, patterns: string) => `GRAPH <${g}> { ${patterns} }`;
    const compare = (statement: string, stated: number | string | boolean, found: number | string | boolean) => {
      out.statements++;
      if (String(stated) !== String(found)) out.untrue.push({ dataset: X, statement, stated: String(stated), found: String(found) });
    };
    /** Compares stated and found counts by key: a key on one side only is untrue too (`none`). */
    const compareAll = (what: string, stated: Map<string, number>, found: Map<string, number>) => {
      for (const k of new Set([...stated.keys(), ...found.keys()])) compare(`${what} ${k}`, stated.get(k) ?? 'none', found.get(k) ?? 'none');
    };

    // The dataset.
    const [ds] = await select(`SELECT (COUNT(*) AS ?t) (COUNT(DISTINCT ?s) AS ?ds) (COUNT(DISTINCT ?p) AS ?np) (COUNT(DISTINCT ?o) AS ?do) WHERE { ${at(X, '?s ?p ?o')} }`);
    compare('void:triples', d.triples, num(ds, 't'));
    compare('void:distinctSubjects', d.distinctSubjects, num(ds, 'ds'));
    compare('void:properties', d.properties, num(ds, 'np'));
    compare('void:distinctObjects', d.distinctObjects, num(ds, 'do'));
    // Entities, and the least and greatest of their IRIs: every IRI between two that start with the
    // URI space starts with it too (code-point order), so these two show whether all are in it.
    const [ent] = await select(`SELECT (COUNT(DISTINCT ?s) AS ?n) (MIN(STR(?s)) AS ?lo) (MAX(STR(?s)) AS ?hi) WHERE { ${at(X, '?s ?p ?o FILTER(isIRI(?s))')} }`);
    compare('void:entities', d.entities, num(ent, 'n'));
    if (d.uriSpace !== undefined) {
      const inside = (v: string) => ent?.[v]?.value.startsWith(d.uriSpace!) ?? false;
      compare(`void:uriSpace ${str(d.uriSpace)} (least and greatest entity IRI in it)`, true, inside('lo') && inside('hi'));
    }
    const ownClasses = (await select(`SELECT DISTINCT ?c WHERE { ${at(X, `?s ${TYPE} ?c`)} }`)).map((r) => r.c.value);
    compare('void:classes', d.classes, ownClasses.length);

    // Property partitions.
    const pp = await select(`SELECT ?p (COUNT(*) AS ?t) (COUNT(DISTINCT ?s) AS ?ds) (COUNT(DISTINCT ?o) AS ?do) WHERE { ${at(X, '?s ?p ?o')} } GROUP BY ?p`);
    const statedPp = new Map<string, number>();
    for (const p of d.propertyPartitions) {
      statedPp.set(`<${p.property}> void:triples`, p.triples);
      statedPp.set(`<${p.property}> void:distinctSubjects`, p.distinctSubjects);
      statedPp.set(`<${p.property}> void:distinctObjects`, p.distinctObjects);
    }
    const foundPp = new Map<string, number>();
    for (const r of pp) {
      foundPp.set(`<${r.p.value}> void:triples`, num(r, 't'));
      foundPp.set(`<${r.p.value}> void:distinctSubjects`, num(r, 'ds'));
      foundPp.set(`<${r.p.value}> void:distinctObjects`, num(r, 'do'));
    }
    compareAll('void:propertyPartition', statedPp, foundPp);
    // A vocabulary is used: a predicate of the shard, or a class of its own type triples, is in it.
    for (const ns of d.vocabularies) {
      compare(`void:vocabulary <${ns}> (a predicate or class in it)`, true, [...pp.map((r) => r.p.value), ...ownClasses].some((t) => t.startsWith(ns)));
    }

    // Class partitions (types here) and remote class partitions (types where they say): the ASK,
    // then the set of them with their entities, then what is nested in each.
    const partitions: (ClassPartition | RemoteClassPartition)[] = [...d.classPartitions, ...d.remoteClassPartitions];
    const typesOf = (c: ClassPartition | RemoteClassPartition) => ('typesIn' in c ? c.typesIn : X);
    const name = (c: ClassPartition | RemoteClassPartition) =>
      'typesIn' in c ? `fkgqa:remoteClassPartition [ fkgqa:class <${c.class}> ; fkgqa:typesIn <${c.typesIn}> ]` : `void:classPartition [ void:class <${c.class}> ]`;
    for (const c of partitions) {
      out.asks++;
      compare(`${name(c)} (ASK { ?s a <${c.class}> } at <${typesOf(c)}>)`, true, await ask(at(typesOf(c), `?s ${TYPE} <${c.class}>`)));
    }
    const statedEntities = new Map(partitions.map((c) => [`${name(c)} void:entities`, c.entities]));
    const foundEntities = new Map<string, number>();
    const typed = await select(`SELECT ?t ?c (COUNT(DISTINCT ?s) AS ?n) WHERE { { SELECT DISTINCT ?s WHERE { ${at(X, '?s ?p ?o')} } } ${valuesOf('t', all)} GRAPH ?t { ?s ${TYPE} ?c } } GROUP BY ?t ?c`);
    for (const r of typed) {
      const key = r.t.value === X ? `void:classPartition [ void:class <${r.c.value}> ]` : `fkgqa:remoteClassPartition [ fkgqa:class <${r.c.value}> ; fkgqa:typesIn <${r.t.value}> ]`;
      foundEntities.set(`${key} void:entities`, num(r, 'n'));
    }
    compareAll('', statedEntities, foundEntities);

    for (const c of partitions) {
      const subjects = `${at(typesOf(c), `?s ${TYPE} <${c.class}>`)} ${at(X, '?s ?p ?o')}`;
      const stated = new Map<string, number>();
      for (const p of c.properties) {
        stated.set(`<${p.property}> void:triples`, p.triples);
        for (const o of p.objectClasses) stated.set(`<${p.property}> void:classPartition [ void:class <${o.iri}> ] void:triples`, o.triples);
        for (const o of p.remoteObjectClasses) stated.set(`<${p.property}> fkgqa:remoteClassPartition [ fkgqa:class <${o.iri}> ; fkgqa:typesIn <${o.typesIn}> ] void:triples`, o.triples);
        for (const o of p.datatypes) stated.set(`<${p.property}> void-ext:datatypePartition [ void-ext:datatype <${o.iri}> ] void:triples`, o.triples);
      }
      const found = new Map<string, number>();
      for (const r of await select(`SELECT ?p (COUNT(*) AS ?n) WHERE { ${subjects} } GROUP BY ?p`)) found.set(`<${r.p.value}> void:triples`, num(r, 'n'));
      for (const r of await select(`SELECT ?p ?z ?d (COUNT(*) AS ?n) WHERE { ${subjects} FILTER(isIRI(?o)) ${valuesOf('z', all)} GRAPH ?z { ?o ${TYPE} ?d } } GROUP BY ?p ?z ?d`)) {
        const key =
          r.z.value === X
            ? `<${r.p.value}> void:classPartition [ void:class <${r.d.value}> ] void:triples`
            : `<${r.p.value}> fkgqa:remoteClassPartition [ fkgqa:class <${r.d.value}> ; fkgqa:typesIn <${r.z.value}> ] void:triples`;
        found.set(key, num(r, 'n'));
      }
      for (const r of await select(`SELECT ?p ?dt (COUNT(*) AS ?n) WHERE { ${subjects} FILTER(isLiteral(?o)) BIND(DATATYPE(?o) AS ?dt) } GROUP BY ?p ?dt`)) {
        found.set(`<${r.p.value}> void-ext:datatypePartition [ void-ext:datatype <${r.dt.value}> ] void:triples`, num(r, 'n'));
      }
      compareAll(`${name(c)} void:propertyPartition`, stated, found);
      // Object classes are class partitions too: their type triples are where they say.
      for (const p of c.properties) {
        for (const o of [...p.objectClasses.map((x) => ({ ...x, typesIn: X })), ...p.remoteObjectClasses]) {
          out.asks++;
          compare(`${name(c)} void:propertyPartition <${p.property}> object class <${o.iri}> (ASK { ?o a <${o.iri}> } at <${o.typesIn}>)`, true, await ask(at(o.typesIn, `?o ${TYPE} <${o.iri}>`)));
        }
      }
    }

    // Linksets (extended variant).
    if (linksets) {
      const others = all.filter((g) => g !== X);
      const stated = new Map(d.linksets.map((l) => [`void:Linkset <${l.objectsTarget}> <${l.linkPredicate}> void:triples`, l.triples]));
      const found = new Map<string, number>();
      if (others.length > 0) {
        const described = `{ SELECT DISTINCT ?b ?o WHERE { ${valuesOf('b', others)} GRAPH ?b { ?o ?q ?x } } }`;
        const rows = await select(`SELECT ?b ?p (COUNT(*) AS ?n) WHERE { ${at(X, '?s ?p ?o FILTER(isIRI(?o))')} ${described} } GROUP BY ?b ?p`);
        for (const r of rows) found.set(`void:Linkset <${r.b.value}> <${r.p.value}> void:triples`, num(r, 'n'));
      }
      compareAll('', stated, found);
    }
  }
  return out;
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
