/**
 * Test helpers that check VoID without the code under test: counts worked out from the shard
 * N-Triples files with n3's parser and plain JavaScript (no SPARQL), and the numbers a VoID file
 * states, read with n3's Store by the VoID IRIs spelled out here (so a swapped constant in the
 * writer, like Comunica's distinctSubjects/distinctObjects swap, cannot hide).
 * Both sides are flattened to the same "fact → number" records, so one toEqual shows every
 * difference.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Parser, Store } from 'n3';
import * as oxigraph from 'oxigraph';
import type * as RDF from '@rdfjs/types';
import { expect, it } from 'vitest';
import { checkVoid, OxigraphClient, readVoid, shardDatasetIri, streamStatistics } from '../src/describe/index.js';
import type { PartitionResult } from '../src/partition/index.js';

const VOID = 'http://rdfs.org/ns/void#';
const EXT = 'http://ldf.fi/void-ext#';
const TYPE = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#type';
const XSD_STRING = 'http://www.w3.org/2001/XMLSchema#string';

/**
 * Flat facts: `triples`, `class <c> entities`, `class <c> property <p> datatype <d> triples`,
 * `remoteClass <c> in <dataset> entities`, `… objectClass <d> triples`, `… remoteObjectClass <d>
 * in <dataset> triples`, `linkset <b> <p> triples`, … → number. `class` is a class partition (the
 * rdf:type triples are in the shard itself), `remoteClass … in <dataset>` a remote one (they are
 * in that shard).
 */
export type Facts = Record<string, number>;

/** The fkgqa vocabulary (docs/void.md), spelled out here. */
export const FKGQA = 'urn:fkgqa:vocab#';

/** n3's id of a term (`"3"^^<…#integer>` and `"3"` differ, as in RDF term equality). */
const id = (t: RDF.Term) => (t.termType === 'Literal' ? `"${t.value}"@${(t as RDF.Literal).language}^^${(t as RDF.Literal).datatype.value}` : `${t.termType}:${t.value}`);

const inc = (f: Facts, key: string, by = 1) => {
  f[key] = (f[key] ?? 0) + by;
};

/**
 * The facts of every shard of one knowledge graph, counted from the shard files.
 * @param dir the graph's folder
 * @param shards shard names (`shard<N>`)
 * @param datasetIri dataset IRI of a shard (for linkset and remote class partition keys)
 */
export function countedFacts(dir: string, shards: string[], datasetIri: (shard: string) => string): Map<string, Facts> {
  const triplesOf = new Map<string, RDF.Quad[]>();
  for (const s of shards) triplesOf.set(s, new Parser({ format: 'application/n-triples' }).parse(fs.readFileSync(path.join(dir, `${s}.nt`), 'utf8')));
  // Classes of every subject in the whole knowledge graph, with the shard holding each type triple.
  const classesOf = new Map<string, { c: string; shard: string }[]>();
  const subjectsIn = new Map<string, Set<string>>();
  for (const [s, quads] of triplesOf) {
    const subjects = new Set<string>();
    for (const q of quads) {
      subjects.add(q.subject.value);
      if (q.predicate.value === TYPE) {
        if (!classesOf.has(q.subject.value)) classesOf.set(q.subject.value, []);
        classesOf.get(q.subject.value)!.push({ c: q.object.value, shard: s });
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
    const partition = (t: { c: string; shard: string }) => (t.shard === s ? `class ${t.c}` : `remoteClass ${t.c} in ${datasetIri(t.shard)}`);
    const objectClass = (t: { c: string; shard: string }) => (t.shard === s ? `objectClass ${t.c}` : `remoteObjectClass ${t.c} in ${datasetIri(t.shard)}`);
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
      for (const t of classesOf.get(q.subject.value) ?? []) {
        const k = partition(t);
        if (!instances.has(k)) instances.set(k, new Set());
        instances.get(k)!.add(q.subject.value);
        inc(f, `${k} property ${p} triples`);
        if (q.object.termType === 'Literal') {
          const dt = (q.object as RDF.Literal).datatype?.value ?? XSD_STRING;
          inc(f, `${k} property ${p} datatype ${dt} triples`);
        } else {
          for (const o of classesOf.get(q.object.value) ?? []) inc(f, `${k} property ${p} ${objectClass(o)} triples`);
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
    for (const [k, xs] of instances) f[`${k} entities`] = xs.size;
    out.set(s, f);
  }
  return out;
}

/**
 * The facts a VoID file states about its dataset (the one `void:Dataset` with an IRI), read with
 * n3. Nested partitions are followed by `void:classPartition`, `fkgqa:remoteClassPartition`,
 * `void:propertyPartition`, `void-ext:datatypePartition`; linksets by `void:subset` with `a
 * void:Linkset`.
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
  const one = (s: RDF.Term, p: string) => {
    const o = objs(s, p);
    if (o.length !== 1) throw new Error(`expected one ${p} of ${s.value}, got ${o.length}`);
    return o[0].value;
  };
  const datasets = store.getSubjects(named(TYPE), named(`${VOID}Dataset`), null).filter((s) => s.termType === 'NamedNode');
  if (datasets.length !== 1) throw new Error(`expected one named void:Dataset, got ${datasets.length}`);
  const ds = datasets[0];
  const f: Facts = {};
  for (const k of ['triples', 'entities', 'classes', 'properties', 'distinctSubjects', 'distinctObjects']) f[k] = num(ds, `${VOID}${k}`);
  for (const pp of objs(ds, `${VOID}propertyPartition`)) {
    const p = one(pp, `${VOID}property`);
    for (const k of ['triples', 'distinctSubjects', 'distinctObjects']) f[`property ${p} ${k}`] = num(pp, `${VOID}${k}`);
  }
  const partitions = [
    ...objs(ds, `${VOID}classPartition`).map((cp) => ({ cp, key: `class ${one(cp, `${VOID}class`)}` })),
    ...objs(ds, `${FKGQA}remoteClassPartition`).map((cp) => ({ cp, key: `remoteClass ${one(cp, `${FKGQA}class`)} in ${one(cp, `${FKGQA}typesIn`)}` })),
  ];
  for (const { cp, key } of partitions) {
    f[`${key} entities`] = num(cp, `${VOID}entities`);
    for (const pp of objs(cp, `${VOID}propertyPartition`)) {
      const p = one(pp, `${VOID}property`);
      f[`${key} property ${p} triples`] = num(pp, `${VOID}triples`);
      for (const oc of objs(pp, `${VOID}classPartition`)) f[`${key} property ${p} objectClass ${one(oc, `${VOID}class`)} triples`] = num(oc, `${VOID}triples`);
      for (const oc of objs(pp, `${FKGQA}remoteClassPartition`))
        f[`${key} property ${p} remoteObjectClass ${one(oc, `${FKGQA}class`)} in ${one(oc, `${FKGQA}typesIn`)} triples`] = num(oc, `${VOID}triples`);
      for (const dp of objs(pp, `${EXT}datatypePartition`)) f[`${key} property ${p} datatype ${one(dp, `${EXT}datatype`)} triples`] = num(dp, `${VOID}triples`);
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

/** A claim of a VoID file that a class has instances at a dataset: a class partition or an object class (at its own shard), or a remote one (at the shard it names). */
export interface TypeClaim {
  /** `void:classPartition`, `fkgqa:remoteClassPartition`, or `… object class` for the nested ones. */
  kind: string;
  class: string;
  /** Dataset IRI of the shard whose endpoint must answer `ASK { ?s a <class> }` with true. */
  at: string;
}

/** Every class that a VoID file says has instances somewhere, with where (read with n3 by the IRIs spelled out here). */
export function typeClaims(turtle: string): TypeClaim[] {
  const { dataset, store } = statedFacts(turtle);
  const named = (iri: string) => ({ termType: 'NamedNode', value: iri }) as RDF.NamedNode;
  const objs = (s: RDF.Term, p: string) => store.getObjects(s as RDF.Quad_Subject, named(p), null);
  const out: TypeClaim[] = [];
  const nested = (cp: RDF.Term) => {
    for (const pp of objs(cp, `${VOID}propertyPartition`)) {
      for (const oc of objs(pp, `${VOID}classPartition`)) out.push({ kind: 'void:classPartition object class', class: objs(oc, `${VOID}class`)[0].value, at: dataset });
      for (const oc of objs(pp, `${FKGQA}remoteClassPartition`))
        out.push({ kind: 'fkgqa:remoteClassPartition object class', class: objs(oc, `${FKGQA}class`)[0].value, at: objs(oc, `${FKGQA}typesIn`)[0].value });
    }
  };
  for (const cp of objs(named(dataset), `${VOID}classPartition`)) {
    out.push({ kind: 'void:classPartition', class: objs(cp, `${VOID}class`)[0].value, at: dataset });
    nested(cp);
  }
  for (const cp of objs(named(dataset), `${FKGQA}remoteClassPartition`)) {
    out.push({ kind: 'fkgqa:remoteClassPartition', class: objs(cp, `${FKGQA}class`)[0].value, at: objs(cp, `${FKGQA}typesIn`)[0].value });
    nested(cp);
  }
  return out;
}

/**
 * Registers the checks of the VoID of every shard of the Spider4SPARQL dev build, on a build made
 * by the caller (partition.slow.test.ts builds the dev set anyway; one build fewer for the suite).
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

  it('VoID: every class partition answers ASK { ?s a C } at its own shard, every remote one at the shard it names (all 92 shards, a store per shard)', () => {
    const { out, result } = build();
    const tally = { ask: 0, classPartitions: 0, remoteClassPartitions: 0, shardsWithRemote: new Set<string>(), untrue: [] as string[] };
    for (const g of result.graphs) {
      const kg = g.manifest.graph;
      // One in-process store per shard: the endpoint of that shard alone.
      const stores = new Map<string, oxigraph.Store>();
      for (const s of g.manifest.shards) {
        const store = new oxigraph.Store();
        store.load(read(out, kg, s.file), { format: 'application/n-triples' });
        stores.set(shardDatasetIri(kg, s.name), store);
      }
      for (const s of g.manifest.shards) {
        for (const v of ['', '_extended']) {
          for (const c of typeClaims(read(out, kg, `${s.name}_void${v}.ttl`))) {
            tally.ask++;
            const store = stores.get(c.at);
            if (!store || store.query(`ASK { ?s a <${c.class}> }`) !== true) tally.untrue.push(`${kg}-${s.name}${v}: ${c.kind} <${c.class}> at ${c.at}`);
            if (v !== '') continue;
            if (c.kind === 'void:classPartition') tally.classPartitions++;
            if (c.kind === 'fkgqa:remoteClassPartition') {
              tally.remoteClassPartitions++;
              tally.shardsWithRemote.add(`${kg}-${s.name}`);
            }
          }
        }
      }
    }
    expect(tally.untrue).toEqual([]);
    // Class membership taken from the whole graph would give 156 class partitions, 30 of them in 15 shards without the type triples.
    expect([tally.classPartitions, tally.remoteClassPartitions, tally.shardsWithRemote.size]).toEqual([126, 45, 15]);
    expect(tally.ask).toBeGreaterThan(2 * (126 + 45));
  });

  it('VoID: checkVoid finds every statement of every file true at its shard (dataset counts, partitions, ASKs, linksets)', async () => {
    const { out, result } = build();
    let statements = 0;
    let asks = 0;
    for (const g of result.graphs) {
      const kg = g.manifest.graph;
      const shards = g.manifest.shards.map((s) => s.name);
      const written = shards.map((s) => readVoid(read(out, kg, `${s}_void_extended.ttl`), `${kg}/${s}`));
      const client = OxigraphClient.load(shards.map((s) => ({ file: path.join(out, kg, `${s}.nt`), graph: shardDatasetIri(kg, s) })));
      try {
        const check = await checkVoid(client, written);
        expect(check.untrue, kg).toEqual([]);
        statements += check.statements;
        asks += check.asks;
      } finally {
        client.close();
      }
    }
    expect(asks).toBeGreaterThan(126 + 45);
    expect(statements).toBeGreaterThan(5000);
  });

  it('VoID: the shard with stadium attributes but no stadium types claims no stadiums, and says where their types are', () => {
    const { out, result } = build();
    const kg = 'concert_singer';
    const STADIUM = 'http://valuenet/ontop/stadium';
    const shards = result.graphs.find((g) => g.manifest.graph === kg)!.manifest.shards.map((s) => s.name);
    const storeOf = (s: string) => {
      const store = new oxigraph.Store();
      store.load(read(out, kg, `${s}.nt`), { format: 'application/n-triples' });
      return store;
    };
    // Found by data: the shard holding stadium capacities without any `?s a :stadium`, and the one holding the types.
    const holder = shards.find((s) => storeOf(s).query(`ASK { ?s <${STADIUM}#capacity> ?c FILTER NOT EXISTS { ?s a <${STADIUM}> } }`) === true)!;
    const typed = shards.filter((s) => storeOf(s).query(`ASK { ?s a <${STADIUM}> }`) === true);
    expect(holder).toBeDefined();
    expect(typed).toHaveLength(1);
    expect(storeOf(holder).query(`ASK { ?s a <${STADIUM}> }`)).toBe(false);
    const ttl = read(out, kg, `${holder}_void.ttl`);
    const { facts } = statedFacts(ttl);
    // No class partition of stadiums here (on main: `void:class :stadium; void:entities 9`) …
    expect(Object.keys(facts).filter((k) => k.startsWith(`class ${STADIUM} `))).toEqual([]);
    expect(typeClaims(ttl).filter((c) => c.class === STADIUM && c.at === shardDatasetIri(kg, holder))).toEqual([]);
    // … but a remote class partition: 9 stadiums whose types are in the other shard, with their capacity and name here.
    const remote = `remoteClass ${STADIUM} in ${shardDatasetIri(kg, typed[0])}`;
    expect(facts[`${remote} entities`]).toBe(9);
    expect(facts[`${remote} property ${STADIUM}#capacity triples`]).toBe(9);
    expect(facts[`${remote} property ${STADIUM}#name triples`]).toBe(9);
    expect(facts.classes).toBe(0);
    // Standard readers see no stadium schema at this endpoint; the property partitions stay.
    expect(consumerRows(ttl).filter((r) => r.startsWith(STADIUM))).toEqual([]);
    expect(facts[`property ${STADIUM}#capacity triples`]).toBe(9);
  });

  it('VoID: answers the sparql-llm consumer query with rows exactly for the shards that hold type triples, each row true there', () => {
    const { out } = build();
    let withRows = 0;
    for (const { kg, shard } of shardsOf()) {
      const ttl = read(out, kg, `${shard}_void.ttl`);
      const rows = consumerRows(ttl);
      const store = new oxigraph.Store();
      store.load(read(out, kg, `${shard}.nt`), { format: 'application/n-triples' });
      expect(rows.length > 0, `${kg}/${shard}`).toBe(statedFacts(ttl).facts.classes > 0);
      if (rows.length > 0) withRows++;
      // A row (C, p, D or datatype or -) says: `?s a C ; p ?o` (and `?o a D`) has a match here.
      for (const r of rows) {
        const [c, p, o] = r.split(' ');
        const object = o === '-' || o.startsWith('http://www.w3.org/2001/XMLSchema#') || o.endsWith('#langString') ? '' : `. ?o a <${o}>`;
        expect(store.query(`ASK { ?s a <${c}> ; <${p}> ?o ${object} }`), `${kg}/${shard}: ${r}`).toBe(true);
      }
    }
    expect(withRows).toBe(92 - 15);
  });

  it('VoID: catalogues all 92 shards with a sentence each that does not name the sharding', () => {
    const { out, result } = build();
    const cat = JSON.parse(read(out, 'catalogue.json'));
    expect(cat.count).toBe(92);
    const descriptions = result.graphs.flatMap((g) => g.descriptions);
    // The 15 shards whose subjects are typed elsewhere say so, and only they.
    expect(cat.shards.filter((e: { description: string }) => e.description.includes('without their rdf:type statements')).length).toBe(15);
    for (const e of cat.shards) {
      expect(e.description).toMatch(/^Data about [\d,]+ .* knowledge graph(, without their rdf:type statements \(held at another endpoint\))?\.$/);
      expect(e.description).not.toMatch(/bucket|hash|horizontal|vertical|predicate|slot|rule|partition|split|shard/i);
      expect(e.description).toBe(descriptions.find((d) => d.title === e.endpoint)!.description);
    }
  });
}
