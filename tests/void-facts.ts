/**
 * Test helpers that check VoID without the code under test: counts worked out from the shard
 * N-Triples files with n3's parser and plain JavaScript (no SPARQL), and the numbers a VoID file
 * states, read with n3's Store by the VoID IRIs spelled out here (so a swapped constant in the
 * writer, like Comunica's distinctSubjects/distinctObjects swap, pitfall B5, cannot hide).
 * Both sides are flattened to the same "fact → number" records, so one toEqual shows every
 * difference.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Parser, Store } from 'n3';
import * as oxigraph from 'oxigraph';
import type * as RDF from '@rdfjs/types';
import { expect, it } from 'vitest';
import { shardDatasetIri, streamStatistics } from '../src/describe/index.js';
import type { PartitionResult } from '../src/partition/index.js';

const VOID = 'http://rdfs.org/ns/void#';
const EXT = 'http://ldf.fi/void-ext#';
const TYPE = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#type';
const XSD_STRING = 'http://www.w3.org/2001/XMLSchema#string';

/** Flat facts: `triples`, `class <c> entities`, `class <c> property <p> datatype <d> triples`, `linkset <b> <p> triples`, … → number. */
export type Facts = Record<string, number>;

/** n3's id of a term (`"3"^^<…#integer>` and `"3"` differ, as in RDF term equality). */
const id = (t: RDF.Term) => (t.termType === 'Literal' ? `"${t.value}"@${(t as RDF.Literal).language}^^${(t as RDF.Literal).datatype.value}` : `${t.termType}:${t.value}`);

const inc = (f: Facts, key: string, by = 1) => {
  f[key] = (f[key] ?? 0) + by;
};

/**
 * The facts of every shard of one knowledge graph, counted from the shard files.
 * @param dir the graph's folder
 * @param shards shard names (`shard<N>`)
 * @param datasetIri dataset IRI of a shard (for linkset keys)
 */
export function countedFacts(dir: string, shards: string[], datasetIri: (shard: string) => string): Map<string, Facts> {
  const triplesOf = new Map<string, RDF.Quad[]>();
  for (const s of shards) triplesOf.set(s, new Parser({ format: 'application/n-triples' }).parse(fs.readFileSync(path.join(dir, `${s}.nt`), 'utf8')));
  // Classes of every subject in the whole knowledge graph (any shard's type triples).
  const classesOf = new Map<string, Set<string>>();
  const subjectsIn = new Map<string, Set<string>>();
  for (const [s, quads] of triplesOf) {
    const subjects = new Set<string>();
    for (const q of quads) {
      subjects.add(q.subject.value);
      if (q.predicate.value === TYPE) {
        if (!classesOf.has(q.subject.value)) classesOf.set(q.subject.value, new Set());
        classesOf.get(q.subject.value)!.add(q.object.value);
      }
    }
    subjectsIn.set(s, subjects);
  }
  const out = new Map<string, Facts>();
  for (const [s, quads] of triplesOf) {
    const f: Facts = {};
    const subjects = new Set<string>();
    const iriSubjects = new Set<string>();
    const objects = new Set<string>();
    const properties = new Set<string>();
    const ownClasses = new Set<string>();
    const perProperty = new Map<string, { s: Set<string>; o: Set<string> }>();
    const instances = new Map<string, Set<string>>();
    for (const q of quads) {
      const p = q.predicate.value;
      inc(f, 'triples');
      subjects.add(id(q.subject));
      if (q.subject.termType === 'NamedNode') iriSubjects.add(q.subject.value);
      objects.add(id(q.object));
      properties.add(p);
      if (p === TYPE) ownClasses.add(q.object.value);
      if (!perProperty.has(p)) perProperty.set(p, { s: new Set(), o: new Set() });
      perProperty.get(p)!.s.add(id(q.subject));
      perProperty.get(p)!.o.add(id(q.object));
      inc(f, `property ${p} triples`);
      for (const c of classesOf.get(q.subject.value) ?? []) {
        if (!instances.has(c)) instances.set(c, new Set());
        instances.get(c)!.add(q.subject.value);
        inc(f, `class ${c} property ${p} triples`);
        if (q.object.termType === 'Literal') {
          const dt = (q.object as RDF.Literal).datatype?.value ?? XSD_STRING;
          inc(f, `class ${c} property ${p} datatype ${dt} triples`);
        } else {
          for (const oc of classesOf.get(q.object.value) ?? []) inc(f, `class ${c} property ${p} objectClass ${oc} triples`);
        }
      }
      if (q.object.termType === 'NamedNode') {
        for (const b of shards) if (b !== s && subjectsIn.get(b)!.has(q.object.value)) inc(f, `linkset ${datasetIri(b)} ${p} triples`);
      }
    }
    f.distinctSubjects = subjects.size;
    f.entities = iriSubjects.size;
    f.distinctObjects = objects.size;
    f.properties = properties.size;
    f.classes = ownClasses.size;
    for (const [p, x] of perProperty) {
      f[`property ${p} distinctSubjects`] = x.s.size;
      f[`property ${p} distinctObjects`] = x.o.size;
    }
    for (const [c, xs] of instances) f[`class ${c} entities`] = xs.size;
    out.set(s, f);
  }
  return out;
}

/**
 * The facts a VoID file states about its dataset (the one `void:Dataset` with an IRI), read with
 * n3. Nested partitions are followed by `void:classPartition`, `void:propertyPartition`,
 * `void-ext:datatypePartition`; linksets by `void:subset` with `a void:Linkset`.
 */
export function statedFacts(turtle: string): { dataset: string; facts: Facts; store: Store } {
  const store = new Store(new Parser({ format: 'text/turtle' }).parse(turtle));
  const named = (iri: string) => ({ termType: 'NamedNode', value: iri }) as RDF.NamedNode;
  const objs = (s: RDF.Term, p: string) => store.getObjects(s as RDF.Quad_Subject, named(p), null);
  const num = (s: RDF.Term, p: string) => {
    const o = objs(s, p);
    if (o.length !== 1) throw new Error(`expected one ${p} of ${s.value}, got ${o.length}`);
    return Number(o[0].value);
  };
  const datasets = store.getSubjects(named(TYPE), named(`${VOID}Dataset`), null).filter((s) => s.termType === 'NamedNode');
  if (datasets.length !== 1) throw new Error(`expected one named void:Dataset, got ${datasets.length}`);
  const ds = datasets[0];
  const f: Facts = {};
  for (const k of ['triples', 'entities', 'classes', 'properties', 'distinctSubjects', 'distinctObjects']) f[k] = num(ds, `${VOID}${k}`);
  for (const pp of objs(ds, `${VOID}propertyPartition`)) {
    const p = objs(pp, `${VOID}property`)[0].value;
    for (const k of ['triples', 'distinctSubjects', 'distinctObjects']) f[`property ${p} ${k}`] = num(pp, `${VOID}${k}`);
  }
  for (const cp of objs(ds, `${VOID}classPartition`)) {
    const c = objs(cp, `${VOID}class`)[0].value;
    f[`class ${c} entities`] = num(cp, `${VOID}entities`);
    for (const pp of objs(cp, `${VOID}propertyPartition`)) {
      const p = objs(pp, `${VOID}property`)[0].value;
      f[`class ${c} property ${p} triples`] = num(pp, `${VOID}triples`);
      for (const oc of objs(pp, `${VOID}classPartition`)) f[`class ${c} property ${p} objectClass ${objs(oc, `${VOID}class`)[0].value} triples`] = num(oc, `${VOID}triples`);
      for (const dp of objs(pp, `${EXT}datatypePartition`)) f[`class ${c} property ${p} datatype ${objs(dp, `${EXT}datatype`)[0].value} triples`] = num(dp, `${VOID}triples`);
    }
  }
  for (const l of objs(ds, `${VOID}subset`)) {
    if (!store.getObjects(l as RDF.Quad_Subject, named(TYPE), null).some((t) => t.value === `${VOID}Linkset`)) continue;
    const subjects = objs(l, `${VOID}subjectsTarget`);
    const targets = objs(l, `${VOID}objectsTarget`);
    const predicates = objs(l, `${VOID}linkPredicate`);
    if (subjects.length !== 1 || targets.length !== 1 || predicates.length !== 1) throw new Error(`linkset without exactly one subjectsTarget, objectsTarget and linkPredicate`);
    if (subjects[0].value !== ds.value) throw new Error(`linkset of ${ds.value} whose subjectsTarget is ${subjects[0].value}`);
    f[`linkset ${targets[0].value} ${predicates[0].value} triples`] = num(l, `${VOID}triples`);
  }
  return { dataset: ds.value, facts: f, store };
}

/**
 * The consumer query of VoID schema used by sib-swiss/sparql-llm (`GET_VOID_DESC` in
 * src/sparql_llm/utils.py, reused from the SIB void-generator README): rows of (subject class,
 * property, object class or datatype). Re-typed here; same patterns.
 */
export const CONSUMER_QUERY = `PREFIX void: <http://rdfs.org/ns/void#>
PREFIX void-ext: <http://ldf.fi/void-ext#>
SELECT DISTINCT ?subjectClass ?prop ?objectClass ?objectDatatype WHERE {
  {
    ?cp void:class ?subjectClass ; void:propertyPartition ?pp .
    ?pp void:property ?prop .
    OPTIONAL {
      { ?pp void:classPartition [ void:class ?objectClass ] . }
      UNION
      { ?pp void-ext:datatypePartition [ void-ext:datatype ?objectDatatype ] . }
    }
  } UNION {
    ?linkset void:subjectsTarget [ void:class ?subjectClass ] ;
      void:linkPredicate ?prop ;
      void:objectsTarget [ void:class ?objectClass ] .
  }
}`;

/** Runs the consumer query on one VoID file (with oxigraph); returns its rows as sorted `subject property object` strings (`-` for no object). */
export function consumerRows(turtle: string): string[] {
  const store = new oxigraph.Store();
  store.load(turtle, { format: 'text/turtle' });
  const rows = store.query(CONSUMER_QUERY) as Map<string, oxigraph.Term>[];
  return rows.map((r) => [r.get('subjectClass')?.value, r.get('prop')?.value, r.get('objectClass')?.value ?? r.get('objectDatatype')?.value ?? '-'].join(' ')).sort();
}

/**
 * Registers the checks of the VoID of every shard of the Spider4SPARQL dev build, on a build made
 * by the caller (partition.test.ts builds the dev set anyway; one build fewer for the suite).
 * @param build returns the output directory and the result once the build has run
 */
export function itChecksDevVoid(build: () => { out: string; result: PartitionResult }): void {
  const read = (...p: string[]) => fs.readFileSync(path.join(...p), 'utf8');
  const shardsOf = () => build().result.graphs.flatMap((g) => g.manifest.shards.map((s) => ({ kg: g.manifest.graph, shard: s.name })));

  it('VoID: writes both variants for all 92 shards, and they parse with n3', () => {
    const { out } = build();
    expect(shardsOf().length).toBe(92);
    for (const { kg, shard } of shardsOf()) {
      for (const v of ['', '_extended']) expect(statedFacts(read(out, kg, `${shard}_void${v}.ttl`)).dataset).toBe(shardDatasetIri(kg, shard));
    }
  });

  it('VoID: states exactly the counts made from the N-Triples files (n3 + JavaScript, no SPARQL), linksets included', () => {
    const { out, result } = build();
    let checked = 0;
    let linksets = 0;
    for (const g of result.graphs) {
      const kg = g.manifest.graph;
      const names = g.manifest.shards.map((s) => s.name);
      const counted = countedFacts(path.join(out, kg), names, (s) => shardDatasetIri(kg, s));
      for (const s of names) {
        const stated = statedFacts(read(out, kg, `${s}_void_extended.ttl`)).facts;
        expect(stated, `${kg}/${s}`).toEqual(counted.get(s));
        linksets += Object.keys(stated).filter((k) => k.startsWith('linkset')).length;
        checked++;
      }
    }
    expect(checked).toBe(92);
    expect(linksets).toBe(174);
    // wta_1 as a spot check of size: 152,328 triples in three shards.
    const wta = result.graphs.find((g) => g.manifest.graph === 'wta_1')!;
    expect(wta.manifest.shards.reduce((n, s) => n + statedFacts(read(out, 'wta_1', `${s.name}_void.ttl`)).facts.triples, 0)).toBe(152_328);
  });

  it('VoID: the streaming engine (no store) gives the same statistics as the SPARQL queries, on every graph', async () => {
    const { out, result } = build();
    for (const g of result.graphs) {
      const kg = g.manifest.graph;
      const shards = g.manifest.shards.map((s) => s.name);
      const streamed = await streamStatistics({ graph: kg, shards, files: shards.map((s) => path.join(out, kg, `${s}.nt`)), namespaces: [g.manifest.options.defaultPrefix] });
      const bySparql = g.descriptions.map(({ title, description, endpoint, ...stats }) => stats);
      expect(streamed, kg).toEqual(bySparql);
    }
  });

  it('VoID: answers the sparql-llm consumer query with rows for every shard', () => {
    const { out } = build();
    for (const { kg, shard } of shardsOf()) expect(consumerRows(read(out, kg, `${shard}_void.ttl`)).length, `${kg}/${shard}`).toBeGreaterThan(0);
  });

  it('VoID: catalogues all 92 shards with a sentence each that does not name the sharding', () => {
    const { out, result } = build();
    const cat = JSON.parse(read(out, 'catalogue.json'));
    expect(cat.count).toBe(92);
    const descriptions = result.graphs.flatMap((g) => g.descriptions);
    for (const e of cat.shards) {
      expect(e.description).toMatch(/^Data about [\d,]+ .* knowledge graph\.$/);
      expect(e.description).not.toMatch(/bucket|hash|horizontal|vertical|predicate|slot|rule|partition|split|shard/i);
      expect(e.description).toBe(descriptions.find((d) => d.title === e.endpoint)!.description);
    }
  });
}
