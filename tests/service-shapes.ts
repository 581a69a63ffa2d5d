/**
 * The shapes of SPARQL an agent may write around SERVICE, as queries over the car_1 graph of the
 * real corpus (its default build, `tiesBuild` in helpers.ts), for tests/service-shapes.test.ts and
 * tests/service-shapes.slow.test.ts.
 *
 * Each shape is written once, as a function of how a SERVICE clause is spelled: `svc(n, body)` is
 * `SERVICE <shard n> { body }` in the federated query and `{ body }` in the query on the unsharded
 * graph; `split(ns, body)` is `{ SERVICE <a> { body } } UNION { SERVICE <b> { body } } …` over
 * the shards that split a table by rows, and `{ body }` unsharded. Both texts mean the same because
 * each SERVICE body's triples lie in the shards it names (the build's manifest, below). `rows` is
 * the answer's size on the unsharded graph (the test checks it, so that a wrong or empty gold
 * cannot make two answers agree by accident).
 *
 * car_1's default build (shard: what it holds):
 *  1: car_names make, makeid, ref-model; model_list maker, modelid, ref-maker (and their types)
 *  2: car_makers (22 makers), 3: car_names model, model_list model,
 *  4 and 5: countries (15, split by rows; 8 have a maker, 7 none), 6 and 7: cars_data, continents (split by rows)
 */

import { expect } from 'vitest';
import { compareResults } from '../src/answers/compare.js';
import type { FederationEngine } from '../src/federation/engine.js';
import { createEngine } from '../src/federation/engines.js';
import type { SparqlResults } from '../src/sparql/results.js';
import { serve, type ShardServer } from '../src/serve/server.js';
import { engineTestsRun, HAS_SPIDER, tiesBuild, tmpDir } from './helpers.js';

export const JSON_RESULTS = 'application/sparql-results+json';

/** The engines the shapes run on: comunica, and jena where its tests run (engineTestsRun); none without the real corpus. */
export const SHAPE_ENGINES = HAS_SPIDER ? ['comunica', ...((await engineTestsRun('jena')) ? ['jena'] : [])] : [];

/** How a shape spells its SERVICE clauses (see the module comment). */
export interface Spelling {
  /** `SERVICE <shard n> { body }` (`SERVICE SILENT` with `silent`), or `{ body }` on the unsharded graph. */
  svc(n: number, body: string, silent?: boolean): string;
  /** A UNION of `SERVICE <shard n> { body }` over `ns`, or `{ body }` on the unsharded graph. */
  split(ns: number[], body: string): string;
}

/** One shape: its name, the query, and the size of its answer on the unsharded graph. */
export interface Shape {
  name: string;
  query: (s: Spelling) => string;
  /** Rows of the answer on the unsharded graph (1 for ASK). */
  rows: number;
  /** Its top-level ORDER BY orders every row (no ties): answers are compared in order. */
  ordered?: boolean;
  /**
   * Only in the longer sweep (tests/service-shapes.slow.test.ts): the shapes that take seconds each
   * (an EXISTS or OPTIONAL per solution sends a request each, on every engine).
   */
  slow?: boolean;
}

/** A shape refused before anything is sent, the same way on every engine: `error` is the start of the message. */
export interface Refused {
  name: string;
  query: (s: Spelling) => string;
  error: string;
}

const PREFIXES = `PREFIX t: <http://valuenet/ontop/>
PREFIX mk: <http://valuenet/ontop/car_makers#>
PREFIX ml: <http://valuenet/ontop/model_list#>
PREFIX cn: <http://valuenet/ontop/car_names#>
PREFIX co: <http://valuenet/ontop/countries#>
PREFIX cd: <http://valuenet/ontop/cars_data#>
`;

/** The spelling of a federated query over shard endpoints (`url(n)`: the endpoint of car_1-shard<n>). */
export function federated(url: (n: number) => string): Spelling {
  return {
    svc: (n, body, silent) => `SERVICE ${silent ? 'SILENT ' : ''}<${url(n)}> { ${body} }`,
    split: (ns, body) => ns.map((n) => `{ SERVICE <${url(n)}> { ${body} } }`).join(' UNION '),
  };
}

/** The spelling of the same query on the unsharded graph. */
export const UNSHARDED: Spelling = { svc: (_n, body) => `{ ${body} }`, split: (_ns, body) => `{ ${body} }` };

const q = (text: string) => PREFIXES + text;

/** The 15 countries (shards 4 and 5). */
const COUNTRIES = (s: Spelling) => s.split([4, 5], '?c co:countryname ?country');
/** A maker in country ?c (shard 2). */
const MAKER_IN = (s: Spelling, c = '?c') => s.svc(2, `?m mk:ref-country ${c}`);
/** The 22 makers (shard 2). */
const MAKERS = (s: Spelling) => s.svc(2, '?m a t:car_makers ; mk:fullname ?name');
/** A model of maker ?m (shard 1). */
const MODEL_OF = (s: Spelling, m = '?m') => s.svc(1, `?l ml:ref-maker ${m}`);

export const SHAPES: Shape[] = [
  { name: 'a join of two SERVICE clauses', rows: 35, query: (s) => q(`SELECT ?name ?l WHERE { ${MAKERS(s)} ${MODEL_OF(s)} }`) },
  { name: 'FILTER EXISTS { SERVICE }', slow: true, rows: 8, query: (s) => q(`SELECT ?country WHERE { ${COUNTRIES(s)} FILTER EXISTS { ${MAKER_IN(s)} } }`) },
  { name: 'FILTER NOT EXISTS { SERVICE }', rows: 7, query: (s) => q(`SELECT ?country WHERE { ${COUNTRIES(s)} FILTER NOT EXISTS { ${MAKER_IN(s)} } }`) },
  {
    name: 'FILTER NOT EXISTS { SERVICE SERVICE } (a join inside)',
    slow: true,
    rows: 12,
    query: (s) => q(`SELECT ?country WHERE { ${COUNTRIES(s)} FILTER NOT EXISTS { ${MAKER_IN(s)} ${s.svc(1, '?l ml:ref-maker ?m ; ml:modelid ?mid FILTER(?mid < 10)')} } }`),
  },
  {
    name: 'FILTER NOT EXISTS { { SERVICE } UNION { SERVICE } }',
    slow: true,
    rows: 11,
    query: (s) => q(`SELECT ?m WHERE { ${s.svc(2, '?m mk:ref-country ?c')} FILTER NOT EXISTS { ${s.split([4, 5], '?c co:continent 2')} } }`),
  },
  {
    name: 'FILTER NOT EXISTS { { SELECT … SERVICE } FILTER(?x IN (?y)) } (the shape of dog_kennels/q33)',
    slow: true,
    rows: 7,
    query: (s) => q(`SELECT ?country WHERE { ${COUNTRIES(s)} FILTER NOT EXISTS { { SELECT ?mc WHERE { ${s.svc(2, '?m mk:ref-country ?mc')} } } FILTER(?c IN (?mc)) } }`),
  },
  { name: 'MINUS { SERVICE }', rows: 7, query: (s) => q(`SELECT ?country WHERE { ${COUNTRIES(s)} MINUS { ${MAKER_IN(s)} } }`) },
  { name: 'MINUS { SERVICE } sharing no variable (removes nothing)', slow: true, rows: 15, query: (s) => q(`SELECT ?country WHERE { ${COUNTRIES(s)} MINUS { ${s.svc(2, '?x mk:ref-country ?y')} } }`) },
  { name: 'OPTIONAL { SERVICE }', slow: true, rows: 29, query: (s) => q(`SELECT ?country ?m WHERE { ${COUNTRIES(s)} OPTIONAL { ${MAKER_IN(s)} } }`) },
  { name: 'OPTIONAL { SERVICE } FILTER(!BOUND(…))', slow: true, rows: 7, query: (s) => q(`SELECT ?country WHERE { ${COUNTRIES(s)} OPTIONAL { ${MAKER_IN(s)} } FILTER(!BOUND(?m)) }`) },
  {
    name: 'OPTIONAL { SERVICE FILTER(variables of both sides) }',
    rows: 27,
    query: (s) => q(`SELECT ?name ?mid WHERE { ${s.svc(2, '?m mk:fullname ?name ; mk:id ?id')} OPTIONAL { ${s.svc(1, '?l ml:ref-maker ?m ; ml:modelid ?mid')} FILTER(?mid < ?id + 10) } }`),
  },
  {
    name: 'OPTIONAL { SERVICE } after OPTIONAL { SERVICE } sharing a variable',
    slow: true,
    rows: 35,
    query: (s) => q(`SELECT ?name ?l ?model WHERE { ${MAKERS(s)} OPTIONAL { ${MODEL_OF(s)} } OPTIONAL { ${s.svc(3, '?l ml:model ?model')} } }`),
  },
  {
    name: 'a sub-SELECT with GROUP BY around SERVICE, joined with SERVICE',
    rows: 22,
    query: (s) => q(`SELECT ?name ?n WHERE { ${MAKERS(s)} { SELECT ?m (COUNT(*) AS ?n) WHERE { ${MODEL_OF(s)} } GROUP BY ?m } }`),
  },
  {
    name: 'a sub-SELECT with ORDER BY and LIMIT around SERVICE',
    rows: 3,
    query: (s) => q(`SELECT ?name ?n WHERE { ${MAKERS(s)} { SELECT ?m (COUNT(*) AS ?n) WHERE { ${MODEL_OF(s)} } GROUP BY ?m ORDER BY DESC(?n) ?m LIMIT 3 } }`),
  },
  { name: 'a sub-SELECT inside SERVICE', rows: 22, query: (s) => q(`SELECT ?name ?n WHERE { ${MAKERS(s)} ${s.svc(1, 'SELECT ?m (COUNT(*) AS ?n) WHERE { ?l ml:ref-maker ?m } GROUP BY ?m')} }`) },
  { name: 'BIND and FILTER beside SERVICE', rows: 28, query: (s) => q(`SELECT ?name ?len WHERE { ${MAKERS(s)} BIND(STRLEN(?name) AS ?len) ${MODEL_OF(s)} FILTER(?len > 5) }`) },
  { name: 'BIND(EXISTS { SERVICE } AS ?x)', slow: true, rows: 15, query: (s) => q(`SELECT ?country ?has WHERE { ${COUNTRIES(s)} BIND(EXISTS { ${MAKER_IN(s)} } AS ?has) }`) },
  { name: 'SELECT (NOT EXISTS { SERVICE } AS ?x)', slow: true, rows: 15, query: (s) => q(`SELECT ?country (NOT EXISTS { ${MAKER_IN(s)} } AS ?none) WHERE { ${COUNTRIES(s)} }`) },
  { name: 'FILTER(EXISTS { SERVICE } || …)', slow: true, rows: 9, query: (s) => q(`SELECT ?country WHERE { ${COUNTRIES(s)} FILTER(EXISTS { ${MAKER_IN(s)} } || ?country = "egypt") }`) },
  { name: 'GROUP BY (EXISTS { SERVICE } AS ?x)', slow: true, rows: 2, query: (s) => q(`SELECT ?has (COUNT(*) AS ?n) WHERE { ${COUNTRIES(s)} } GROUP BY (EXISTS { ${MAKER_IN(s)} } AS ?has)`) },
  { name: 'HAVING(EXISTS { SERVICE })', slow: true, rows: 8, query: (s) => q(`SELECT ?c (COUNT(*) AS ?n) WHERE { ${COUNTRIES(s)} } GROUP BY ?c HAVING(EXISTS { ${MAKER_IN(s)} })`) },
  { name: 'VALUES before SERVICE', rows: 3, query: (s) => q(`SELECT ?name ?l WHERE { VALUES ?name { "Volvo" "Triumph" "Fiat" } ${MAKERS(s)} OPTIONAL { ${MODEL_OF(s)} } }`) },
  { name: 'VALUES inside SERVICE', rows: 2, query: (s) => q(`SELECT ?name ?l WHERE { ${s.svc(2, 'VALUES ?name { "Volvo" "Fiat" } ?m mk:fullname ?name')} ${MODEL_OF(s)} }`) },
  { name: 'a trailing VALUES clause', rows: 2, query: (s) => q(`SELECT ?name ?l WHERE { ${MAKERS(s)} ${MODEL_OF(s)} } VALUES ?name { "Volvo" "Fiat" }`) },
  { name: 'UNION of SERVICE clauses', rows: 15, query: (s) => q(`SELECT ?c ?country WHERE { ${COUNTRIES(s)} }`) },
  { name: 'nested groups { { SERVICE } { SERVICE } }', rows: 35, query: (s) => q(`SELECT ?name ?l WHERE { { { ${MAKERS(s)} } { ${MODEL_OF(s)} } } }`) },
  {
    name: 'DISTINCT, ORDER BY, LIMIT and OFFSET around SERVICE',
    rows: 3,
    ordered: true,
    query: (s) => q(`SELECT DISTINCT ?country WHERE { ${COUNTRIES(s)} ${MAKER_IN(s)} } ORDER BY ?country LIMIT 3 OFFSET 1`),
  },
  { name: 'GROUP BY and HAVING around SERVICE', rows: 3, query: (s) => q(`SELECT ?name (COUNT(?l) AS ?n) WHERE { ${MAKERS(s)} ${MODEL_OF(s)} } GROUP BY ?name HAVING(COUNT(?l) > 2)`) },
  {
    name: 'COUNT(DISTINCT), MIN, MAX, AVG over a join of SERVICE clauses',
    rows: 1,
    query: (s) => q(`SELECT (COUNT(DISTINCT ?m) AS ?n) (MIN(?mid) AS ?lo) (MAX(?mid) AS ?hi) (AVG(?mid) AS ?avg) WHERE { ${MAKERS(s)} ${s.svc(1, '?l ml:ref-maker ?m ; ml:modelid ?mid')} }`),
  },
  { name: 'COUNT over SERVICE matching nothing (one row, 0)', rows: 1, query: (s) => q(`SELECT (COUNT(*) AS ?n) WHERE { ${s.svc(2, '?m mk:nothing ?x')} }`) },
  { name: 'SUM(IF(EXISTS { SERVICE }, 1, 0))', slow: true, rows: 1, query: (s) => q(`SELECT (SUM(IF(EXISTS { ${MAKER_IN(s)} }, 1, 0)) AS ?n) WHERE { ${COUNTRIES(s)} }`) },
  {
    name: 'ORDER BY an EXISTS { SERVICE }',
    slow: true,
    rows: 5,
    ordered: true,
    query: (s) => q(`SELECT ?country WHERE { ${COUNTRIES(s)} } ORDER BY DESC(EXISTS { ${MAKER_IN(s)} }) ?country LIMIT 5`),
  },
  { name: 'SELECT * … ORDER BY an EXISTS { SERVICE }', slow: true, rows: 15, ordered: true, query: (s) => q(`SELECT * WHERE { ${COUNTRIES(s)} } ORDER BY DESC(EXISTS { ${MAKER_IN(s)} }) ?country`) },
  {
    name: 'ORDER BY two keys, the first with ties, around SERVICE',
    rows: 22,
    ordered: true,
    query: (s) => q(`SELECT ?name ?n WHERE { ${MAKERS(s)} { SELECT ?m (COUNT(*) AS ?n) WHERE { ${MODEL_OF(s)} } GROUP BY ?m } } ORDER BY DESC(?n) ?name`),
  },
  {
    name: 'OPTIONAL { SERVICE { … FILTER(a variable of the left side) } FILTER(variables of both sides) }',
    rows: 22,
    query: (s) =>
      q(`SELECT ?name ?mid WHERE { ${s.svc(2, '?m mk:fullname ?name ; mk:id ?id')} OPTIONAL { ${s.svc(1, '?l ml:ref-maker ?m ; ml:modelid ?mid FILTER(?mid > ?id)')} FILTER(?mid < ?id + 30) } }`),
  },
  {
    name: 'OPTIONAL { { SERVICE FILTER(!BOUND(a variable of the left side)) } FILTER(variables of both sides) }',
    rows: 27,
    query: (s) =>
      q(`SELECT ?name ?mid WHERE { ${s.svc(2, '?m mk:fullname ?name ; mk:id ?id')} OPTIONAL { { ${s.svc(1, '?l ml:ref-maker ?m ; ml:modelid ?mid')} FILTER(!BOUND(?id)) } FILTER(?mid < ?id + 10) } }`),
  },
  {
    name: 'OPTIONAL { SERVICE MINUS { SERVICE } FILTER(variables of both sides) }',
    rows: 26,
    query: (s) =>
      q(
        `SELECT ?name ?mid WHERE { ${s.svc(2, '?m mk:fullname ?name ; mk:id ?id')} OPTIONAL { ${s.svc(1, '?l ml:ref-maker ?m ; ml:modelid ?mid')} MINUS { ${s.svc(3, '?l ml:model "ford"')} } FILTER(?mid < ?id + 10) } }`,
      ),
  },
  {
    name: 'OPTIONAL { SERVICE FILTER EXISTS { SERVICE } }',
    slow: true,
    rows: 22,
    query: (s) => q(`SELECT ?name ?c WHERE { ${MAKERS(s)} OPTIONAL { ${s.svc(2, '?m mk:ref-country ?c')} FILTER EXISTS { ${s.split([4, 5], '?c co:continent 2')} } } }`),
  },
  {
    name: 'OPTIONAL { SERVICE FILTER NOT EXISTS { { SELECT … { SERVICE } UNION { SERVICE } } } }',
    slow: true,
    rows: 22,
    query: (s) => q(`SELECT ?name ?c WHERE { ${MAKERS(s)} OPTIONAL { ${s.svc(2, '?m mk:ref-country ?c')} FILTER NOT EXISTS { { SELECT ?c WHERE { ${s.split([4, 5], '?c co:continent 2')} } } } } }`),
  },
  {
    name: 'FILTER NOT EXISTS { SERVICE } in a UNION branch',
    slow: true,
    rows: 22,
    query: (s) => q(`SELECT ?country WHERE { { ${COUNTRIES(s)} FILTER NOT EXISTS { ${MAKER_IN(s)} } } UNION { ${COUNTRIES(s)} } }`),
  },
  {
    name: 'FILTER NOT EXISTS { SERVICE } in a sub-SELECT',
    slow: true,
    rows: 1,
    query: (s) => q(`SELECT (COUNT(*) AS ?n) WHERE { { SELECT ?c WHERE { ${COUNTRIES(s)} FILTER NOT EXISTS { ${MAKER_IN(s)} } } } }`),
  },
  {
    name: 'FILTER EXISTS { { SELECT … SERVICE } } (a sub-SELECT inside)',
    rows: 8,
    query: (s) => q(`SELECT ?country WHERE { ${COUNTRIES(s)} FILTER EXISTS { { SELECT ?c WHERE { ${MAKER_IN(s)} } } } }`),
  },
  {
    name: 'FILTER NOT EXISTS { { SELECT ?m … ?c … } } (an outer variable not projected)',
    slow: true,
    rows: 0,
    query: (s) => q(`SELECT ?country WHERE { ${COUNTRIES(s)} FILTER NOT EXISTS { { SELECT ?m WHERE { ${MAKER_IN(s)} } } } }`),
  },
  {
    name: 'FILTER EXISTS { SERVICE FILTER NOT EXISTS { SERVICE } } (nested EXISTS)',
    rows: 8,
    query: (s) => q(`SELECT ?country WHERE { ${COUNTRIES(s)} FILTER EXISTS { ${MAKER_IN(s)} FILTER NOT EXISTS { ${s.svc(1, '?l ml:ref-maker ?m ; ml:modelid 1000')} } } }`),
  },
  {
    name: 'FILTER NOT EXISTS { SERVICE OPTIONAL { SERVICE FILTER(variables of both sides) } }',
    slow: true,
    rows: 7,
    query: (s) => q(`SELECT ?country WHERE { ${COUNTRIES(s)} FILTER NOT EXISTS { ${MAKER_IN(s)} OPTIONAL { ${s.svc(1, '?l ml:ref-maker ?m ; ml:modelid ?mid')} FILTER(?mid < 5) } } }`),
  },
  { name: 'FILTER EXISTS { OPTIONAL { SERVICE } } (a lone OPTIONAL)', rows: 15, query: (s) => q(`SELECT ?country WHERE { ${COUNTRIES(s)} FILTER EXISTS { OPTIONAL { ${MAKER_IN(s)} } } }`) },
  {
    name: 'FILTER EXISTS { VALUES … SERVICE } (VALUES binding an outer variable)',
    rows: 1,
    query: (s) => q(`SELECT ?country WHERE { ${COUNTRIES(s)} FILTER EXISTS { VALUES ?c { <http://valuenet/ontop/countries/countryid=1> } ${MAKER_IN(s)} } }`),
  },
  {
    name: 'FILTER NOT EXISTS { SERVICE { … FILTER(an outer variable) } }',
    rows: 7,
    query: (s) => q(`SELECT ?country WHERE { ${COUNTRIES(s)} FILTER NOT EXISTS { ${s.svc(2, '?m mk:ref-country ?x FILTER(?x = ?c)')} } }`),
  },
  { name: 'FILTER NOT EXISTS { SERVICE SILENT }', rows: 7, query: (s) => q(`SELECT ?country WHERE { ${COUNTRIES(s)} FILTER NOT EXISTS { ${s.svc(2, '?m mk:ref-country ?c', true)} } }`) },
  { name: 'MINUS { SERVICE } inside OPTIONAL', rows: 22, query: (s) => q(`SELECT ?name ?c WHERE { ${MAKERS(s)} OPTIONAL { ${s.svc(2, '?m mk:country ?c')} MINUS { ${MODEL_OF(s)} } } }`) },
  { name: 'a property path inside SERVICE', rows: 404, query: (s) => q(`SELECT ?car ?name WHERE { ${s.svc(1, '?car cn:ref-model/ml:ref-maker ?m')} ${MAKERS(s)} }`) },
  { name: 'the same SERVICE target twice', rows: 404, query: (s) => q(`SELECT ?car ?m WHERE { ${MODEL_OF(s)} ${s.svc(1, '?car cn:ref-model ?l')} }`) },
  { name: 'a blank node in SERVICE', rows: 22, query: (s) => q(`SELECT DISTINCT ?name WHERE { ${MAKERS(s)} ${s.svc(1, '[] ml:ref-maker ?m')} }`) },
  { name: 'SELECT * over SERVICE clauses', rows: 35, query: (s) => q(`SELECT * WHERE { ${MAKERS(s)} ${MODEL_OF(s)} }`) },
  {
    name: 'a FILTER over variables of two SERVICE clauses',
    rows: 19,
    query: (s) => q(`SELECT ?name ?mid WHERE { ${s.svc(2, '?m mk:fullname ?name ; mk:id ?id')} ${s.svc(1, '?l ml:ref-maker ?m ; ml:modelid ?mid')} FILTER(?mid < ?id + 10) }`),
  },
  {
    name: 'FILTER(REGEX) and NOT IN over variables of SERVICE clauses',
    rows: 11,
    query: (s) => q(`SELECT ?name ?l WHERE { ${MAKERS(s)} ${MODEL_OF(s)} FILTER(REGEX(?name, "^[A-F]") && ?name NOT IN ("BMW", "Fiat")) }`),
  },
  { name: 'ASK over a join of SERVICE clauses', rows: 1, query: (s) => q(`ASK { ${MAKERS(s)} ${MODEL_OF(s)} FILTER(?name = "Volvo") }`) },
  { name: 'ASK { … FILTER NOT EXISTS { SERVICE } }', rows: 1, query: (s) => q(`ASK { ${COUNTRIES(s)} FILTER NOT EXISTS { ${MAKER_IN(s)} } FILTER(?country = "egypt") }`) },
  {
    name: 'aggregates over FILTER NOT EXISTS across tables split by rows',
    rows: 1,
    query: (s) => q(`SELECT (COUNT(*) AS ?n) (AVG(?w) AS ?avg) WHERE { ${s.split([6, 7], '?car cd:weight ?w ; cd:ref-id ?c')} FILTER NOT EXISTS { ${s.svc(3, '?c cn:model "ford"')} } }`),
    slow: true,
  },
];

/** Shapes refused before anything is sent (service-check.ts), with the words that say what to write instead. */
export const REFUSED: Refused[] = [
  {
    name: 'SERVICE inside SERVICE',
    query: (s) => q(`SELECT ?name WHERE { ${s.svc(2, `?m mk:fullname ?name ${MODEL_OF(s)}`)} ${COUNTRIES(s)} }`),
    error: 'SERVICE <',
  },
  {
    name: 'MINUS inside FILTER EXISTS, sharing only a variable of the outer query',
    query: (s) => q(`SELECT ?country WHERE { ${COUNTRIES(s)} FILTER EXISTS { ${s.svc(2, '?x mk:fullname ?name')} MINUS { ${MAKER_IN(s)} } } }`),
    error: 'MINUS inside FILTER EXISTS is refused',
  },
  {
    name: 'FILTER NOT EXISTS { MINUS { SERVICE } } (a lone MINUS)',
    query: (s) => q(`SELECT ?country WHERE { ${COUNTRIES(s)} FILTER NOT EXISTS { MINUS { ${MAKER_IN(s)} } } }`),
    error: 'MINUS inside FILTER NOT EXISTS is refused',
  },
  {
    name: 'BIND(… AS a variable of the outer query) inside FILTER EXISTS',
    query: (s) => q(`SELECT ?country WHERE { ${COUNTRIES(s)} FILTER EXISTS { ${MAKER_IN(s, '?x')} BIND(?x AS ?c) } }`),
    error: 'BIND(… AS ?c) inside FILTER EXISTS assigns ?c',
  },
  {
    name: 'ORDER BY an EXISTS in a query that groups',
    query: (s) => q(`SELECT ?c (COUNT(*) AS ?n) WHERE { ${COUNTRIES(s)} } GROUP BY ?c ORDER BY DESC(EXISTS { ${MAKER_IN(s)} }) ?c`),
    error: 'ORDER BY with EXISTS { … } is refused in a query that groups or aggregates',
  },
];

/** The engines, the served build of car_1 (shards and the unsharded graph), and the spelling of its shard endpoints. */
export interface ShapeBench {
  server: ShardServer;
  engines: Record<string, FederationEngine>;
  spelling: Spelling;
  close(): Promise<void>;
}

/** Serves car_1 of the real corpus (its shards and, as `car_1`, the unsharded graph) and starts each engine warm, with one thread. */
export async function shapeBench(engines: string[]): Promise<ShapeBench> {
  const server = await serve({ shards: await tiesBuild(tmpDir('fkgqa-shapes-')), kgs: ['car_1'], withOriginals: true, writeFiles: false, timeoutMs: 120_000 });
  const shards = [1, 2, 3, 4, 5, 6, 7].map((n) => server.endpoint(`car_1-shard${n}`)!.url);
  // One thread each: the shapes are asked one at a time (a second Comunica thread costs a second start).
  // The engines start side by side (comunica's thread, jena's JVM), kept in the order given.
  const started: Record<string, FederationEngine> = Object.fromEntries(
    await Promise.all(
      engines.map(async (name) => {
        const engine = await createEngine(name, { endpoints: shards, parallel: 1 });
        await engine.warm?.();
        return [name, engine] as const;
      }),
    ),
  );
  return {
    server,
    engines: started,
    spelling: federated((n) => shards[n - 1]),
    close: async () => {
      for (const e of Object.values(started)) await e.close();
      await server.close();
    },
  };
}

/** The answer of a shape on the unsharded graph (oxigraph, through its endpoint). */
export async function goldOf(bench: ShapeBench, shape: Shape): Promise<SparqlResults> {
  const r = await fetch(bench.server.endpoint('car_1')!.url, { method: 'POST', headers: { 'content-type': 'application/sparql-query', accept: JSON_RESULTS }, body: shape.query(UNSHARDED) });
  expect(r.status, await r.clone().text()).toBe(200);
  return (await r.json()) as SparqlResults;
}

/** Asserts that every engine answers the shape as the unsharded graph does (and that gold has `shape.rows` rows). */
export async function expectSameAsUnsharded(bench: ShapeBench, shape: Shape): Promise<void> {
  // The unsharded graph and the engines side by side (comunica's thread and jena's JVM): each query waits mostly on the shards.
  const [gold, outcomes] = await Promise.all([
    goldOf(bench, shape),
    Promise.all(
      Object.entries(bench.engines).map(async ([name, engine]) => [name, await engine.query(shape.query(bench.spelling), JSON_RESULTS, { deadline: { ms: 120_000, from: 'call' } })] as const),
    ),
  ]);
  expect(gold.boolean !== undefined ? 1 : gold.results!.bindings.length, 'rows of the unsharded graph').toBe(shape.rows);
  for (const [name, o] of outcomes) {
    expect(o.status === 'error' ? `${name}: ${o.error}` : `${name}: ${o.status}`).toBe(`${name}: ok`);
    const c = compareResults(gold, JSON.parse((o as { body: string }).body) as SparqlResults, shape.ordered ?? false);
    expect({ engine: name, identical: c.identical, reason: c.reason, missing: c.missing, extra: c.extra }).toEqual({ engine: name, identical: true, reason: undefined, missing: [], extra: [] });
  }
}
