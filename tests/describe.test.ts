import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import * as oxigraph from 'oxigraph';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeBuild, describeGraph, HttpSparqlClient, OxigraphClient, checkVoid, type SparqlRow, readVoid, renderVoid, shardDatasetIri, uriSpaceOf, countedLabel } from '../src/describe/index.js';
import { DEFAULT_PARTITION_OPTIONS, digestTree, partition, type GraphManifest } from '../src/partition/index.js';
import { DEMO, demoBuild, tmpDir } from './helpers.js';
import { consumerRows, countedFacts, statedFacts } from './void-facts.js';

const NS = 'http://valuenet/ontop/';
const XSD = 'http://www.w3.org/2001/XMLSchema#';
const manifest = (out: string, kg: string): GraphManifest => JSON.parse(fs.readFileSync(path.join(out, kg, 'manifest.json'), 'utf8'));
const read = (...p: string[]) => fs.readFileSync(path.join(...p), 'utf8');
const shardByRole = (m: GraphManifest, slot: string) => m.shards.find((s) => s.role.slot === slot)!.name;

/** A SPARQL 1.1 Protocol endpoint over an oxigraph store (GET ?query= and POST form), counting requests. */
function startEndpoint(store: oxigraph.Store): Promise<{ url: string; requests: () => number; close: () => Promise<void> }> {
  let requests = 0;
  const server = http.createServer((req, res) => {
    requests++;
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const url = new URL(req.url!, 'http://x');
      const query = req.method === 'POST' ? new URLSearchParams(body).get('query') : url.searchParams.get('query');
      if (!query) return res.writeHead(400).end('no query');
      try {
        const out = store.query(query, { results_format: 'application/sparql-results+json' }) as string;
        res.writeHead(200, { 'content-type': 'application/sparql-results+json' }).end(out);
      } catch (e) {
        res.writeHead(400, { 'content-type': 'text/plain' }).end(String((e as Error).message));
      }
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({ url: `http://127.0.0.1:${port}/sparql`, requests: () => requests, close: () => new Promise((r) => server.close(() => r())) });
    }),
  );
}

describe('describe / demo dataset, checked by hand', async () => {
  const out = await demoBuild(tmpDir());
  const lib = manifest(out, 'library');
  // library: shard of book#title (predicate rule), base (books), two buckets of authors and loans.
  const titles = shardByRole(lib, 'predicate-1');
  const base = shardByRole(lib, 'base');
  const bucket0 = shardByRole(lib, 'bucket-1-0');
  const voidOf = (shard: string, variant = '') => read(out, 'library', `${shard}_void${variant}.ttl`);

  it('writes a standard and an extended VoID file for every shard, and the catalogue', () => {
    expect(fs.readdirSync(path.join(out, 'library')).filter((f) => f.endsWith('.ttl')).length).toBe(2 * lib.shards.length);
    expect(fs.existsSync(path.join(out, 'catalogue.json'))).toBe(true);
    expect(fs.existsSync(path.join(out, 'catalogue.ttl'))).toBe(true);
  });

  it('counts the bucket of author 3 and loans a2, a3 as worked out from its 14 lines', () => {
    // author 3 (4 triples) and the skolemised loans a2, a3 (5 each). "3"^^xsd:integer is both
    // author 3's id and loan a2's book id: one distinct object. 12 distinct objects in all.
    const { facts } = statedFacts(voidOf(bucket0));
    expect(facts).toMatchObject({ triples: 14, distinctSubjects: 3, entities: 3, properties: 8, classes: 2, distinctObjects: 12 });
    expect(facts[`class ${NS}author entities`]).toBe(1);
    expect(facts[`class ${NS}loan entities`]).toBe(2);
    // Loans link to books, whose types are in the base shard: a remote object class, not `?o a :book` here.
    expect(facts[`class ${NS}loan property ${NS}loan#ref-book_id remoteObjectClass ${NS}book in ${shardDatasetIri('library', base)} triples`]).toBe(2);
    expect(Object.keys(facts).some((k) => k.includes('objectClass') && !k.includes('remoteObjectClass'))).toBe(false);
    expect(facts[`class ${NS}loan property ${NS}loan#days datatype ${XSD}integer triples`]).toBe(2);
    expect(facts[`property ${NS}loan#member distinctObjects`]).toBe(2); // Noor, Kim
    // Skolem IRIs (urn:fkgqa:bnode:…) beside http://valuenet/ontop/…: no common URI space.
    expect(voidOf(bucket0)).not.toContain('void:uriSpace');
  });

  it('gives the shard of book titles no class partition but a remote one naming the base shard, where the types are', () => {
    // The shard holds only book#title: no rdf:type triples (void:classes 0), so no class partition
    // (`?s a :book` answers nothing here); its 8 subjects are books by the base shard's type
    // triples: a remote class partition :book, typed in the base shard, with 8 entities.
    const { facts } = statedFacts(voidOf(titles));
    const book = `remoteClass ${NS}book in ${shardDatasetIri('library', base)}`;
    expect(facts).toEqual({
      triples: 8,
      entities: 8,
      classes: 0,
      properties: 1,
      distinctSubjects: 8,
      distinctObjects: 8,
      [`property ${NS}book#title triples`]: 8,
      [`property ${NS}book#title distinctSubjects`]: 8,
      [`property ${NS}book#title distinctObjects`]: 8,
      [`${book} entities`]: 8,
      [`${book} property ${NS}book#title triples`]: 8,
      [`${book} property ${NS}book#title datatype ${XSD}string triples`]: 8,
    });
    expect(voidOf(titles)).not.toContain('void:class ');
    expect(voidOf(titles)).toContain(`fkgqa:typesIn <${shardDatasetIri('library', base)}>`);
    expect(voidOf(titles)).toContain(`void:uriSpace "${NS}book/"`);
  });

  it('writes linksets only in the extended variant: loans of bucket 0 link to books in two shards', () => {
    const ext = statedFacts(voidOf(bucket0, '_extended')).facts;
    // loan a2 → book 3, loan a3 → book 6; books are subjects in the base shard and in the titles shard.
    expect(
      Object.entries(ext)
        .filter(([k]) => k.startsWith('linkset'))
        .sort(),
    ).toEqual(
      [
        [`linkset ${shardDatasetIri('library', base)} ${NS}loan#ref-book_id triples`, 2],
        [`linkset ${shardDatasetIri('library', titles)} ${NS}loan#ref-book_id triples`, 2],
      ].sort(),
    );
    expect(Object.keys(statedFacts(voidOf(bucket0)).facts).some((k) => k.startsWith('linkset'))).toBe(false);
  });

  it('answers the sparql-llm consumer query with (class, property, class or datatype) rows only for what the shard types itself', () => {
    // The titles shard holds no types: no rows (a row would read as `?s a :book` answering here).
    expect(consumerRows(voidOf(titles))).toEqual([]);
    const rows = consumerRows(voidOf(bucket0));
    // Books are typed in the base shard: the link shows without an object class.
    expect(rows).toContain(`${NS}loan ${NS}loan#ref-book_id -`);
    expect(rows.some((r) => r.endsWith(`${NS}book`))).toBe(false);
    expect(rows).toContain(`${NS}author http://www.w3.org/1999/02/22-rdf-syntax-ns#type -`);
    for (const kg of ['library', 'observatory']) {
      for (const s of manifest(out, kg).shards) {
        const ttl = read(out, kg, `${s.name}_void.ttl`);
        expect(consumerRows(ttl).length > 0, `${kg}/${s.name}`).toBe(statedFacts(ttl).facts.classes > 0);
      }
    }
  });

  it('agrees with counts made from the N-Triples files without SPARQL, for every demo shard', () => {
    for (const kg of ['library', 'observatory']) {
      const names = manifest(out, kg).shards.map((s) => s.name);
      const counted = countedFacts(path.join(out, kg), names, (s) => shardDatasetIri(kg, s));
      for (const s of names) expect(statedFacts(read(out, kg, `${s}_void_extended.ttl`)).facts, `${kg}/${s}`).toEqual(counted.get(s));
    }
  });

  it('describes each shard in one topical sentence that does not name how it was made', () => {
    const cat = JSON.parse(read(out, 'catalogue.json'));
    expect(cat.count).toBe(8);
    const entry = (e: string) => cat.shards.find((x: { endpoint: string }) => x.endpoint === e);
    expect(entry(`library-${titles}`)).toEqual({
      endpoint: `library-${titles}`,
      graph: 'library',
      shard: titles,
      dataset: shardDatasetIri('library', titles),
      url: null,
      description: 'Data about 8 books (title) from the library knowledge graph, without their rdf:type statements (held at another endpoint).',
      triples: 8,
      void: `library/${titles}_void.ttl`,
      voidExtended: `library/${titles}_void_extended.ttl`,
    });
    expect(entry(`library-${bucket0}`).description).toBe('Data about 2 loans (book id (link to book), days, member) and 1 author (author id, country, name) from the library knowledge graph.');
    for (const e of cat.shards) expect(e.description).not.toMatch(/bucket|hash|horizontal|vertical|predicate|slot|rule|partition|split|shard/i);
    expect(read(out, 'catalogue.ttl')).toContain(`<${shardDatasetIri('library', titles)}> a void:Dataset;`);
  });

  it('reads every VoID file back to the description it was written from', () => {
    for (const kg of ['library', 'observatory']) {
      for (const s of manifest(out, kg).shards) {
        const file = path.join(out, kg, `${s.name}_void_extended.ttl`);
        const d = readVoid(read(file), file);
        expect(renderVoid(d, 'extended', NS)).toBe(read(file));
        expect(renderVoid(d, 'standard', NS)).toBe(read(out, kg, `${s.name}_void.ttl`));
      }
    }
  });

  it('writes the same bytes with fkgqa describe as partition did, and endpoint URLs from a base URL', async () => {
    const dir = path.join(tmpDir(), 'shards');
    fs.cpSync(out, dir, { recursive: true });
    const digest = digestTree(dir);
    const r = await describeBuild({ dir });
    expect(r.shards).toBe(8);
    expect(digestTree(dir)).toBe(digest);
    await describeBuild({ dir, endpointBase: 'http://example.org/fed/' });
    expect(read(dir, 'library', `${titles}_void.ttl`)).toContain(`void:sparqlEndpoint <http://example.org/fed/library-${titles}/sparql>`);
  });
});

describe('describe / remote SPARQL endpoint (SPARQL 1.1 Protocol over HTTP)', () => {
  let endpoint: Awaited<ReturnType<typeof startEndpoint>>;
  let out: string;
  let shards: string[];
  beforeAll(async () => {
    out = path.join(tmpDir(), 'shards');
    await partition({ ...DEFAULT_PARTITION_OPTIONS, source: DEMO, out, kgs: ['library'] });
    shards = manifest(out, 'library').shards.map((s) => s.name);
    // The endpoint holds the shards as named graphs, plus an unrelated graph the queries must ignore.
    const store = new oxigraph.Store();
    for (const s of shards) store.load(read(out, 'library', `${s}.nt`), { format: 'application/n-triples', to_graph_name: oxigraph.namedNode(shardDatasetIri('library', s)) });
    store.load('<http://e/x> <http://e/p> <http://valuenet/ontop/book/book_id=1> .', { format: 'application/n-triples', to_graph_name: oxigraph.namedNode('http://e/other') });
    endpoint = await startEndpoint(store);
  });
  afterAll(async () => endpoint?.close());

  it('computes the same descriptions as the in-process store, query by query over HTTP', async () => {
    const local = await describeGraph({ graph: 'library', dir: path.join(out, 'library'), shards, prefix: NS });
    const before = endpoint.requests();
    const remote = await describeGraph({ graph: 'library', dir: path.join(out, 'library'), shards, prefix: NS, client: new HttpSparqlClient(endpoint.url) });
    // The nine statistics queries, then the check of every statement (checkVoid), at the endpoint too.
    const store = OxigraphClient.load(shards.map((s) => ({ file: path.join(out, 'library', `${s}.nt`), graph: shardDatasetIri('library', s) })));
    const check = await checkVoid(store, local);
    store.close();
    expect(check.untrue).toEqual([]);
    expect(check.queries).toBeGreaterThan(shards.length * 8);
    expect(endpoint.requests() - before).toBe(9 + check.queries);
    expect(remote).toEqual(local);
    expect(remote.reduce((n, d) => n + d.linksets.length, 0)).toBeGreaterThan(0);
  });

  it('a remote endpoint that redirects the query or refuses the connection is named, nothing followed or retried elsewhere', async () => {
    let posts = 0;
    const server = http.createServer((req, res) => {
      posts++;
      req.resume();
      res.writeHead(307, { location: 'http://127.0.0.1:1/elsewhere' }).end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/sparql`;
    try {
      await expect(new HttpSparqlClient(url).select('SELECT * { ?s ?p ?o }')).rejects.toThrow(
        `the SPARQL endpoint cannot be reached: ${url} answered HTTP 307 with a redirect to http://127.0.0.1:1/elsewhere: not followed`,
      );
      expect(posts).toBe(1);
    } finally {
      await new Promise((r) => server.close(r));
    }
    await expect(new HttpSparqlClient(url).select('ASK {}')).rejects.toThrow(/the SPARQL endpoint cannot be reached: fetch failed \(connect ECONNREFUSED 127\.0\.0\.1:\d+\)$/);
  });

  it('writes the same files from the endpoint as from the shard files (fkgqa describe --sparql)', async () => {
    const local = path.join(tmpDir(), 'shards');
    fs.cpSync(out, local, { recursive: true });
    await describeBuild({ dir: local });
    const viaHttp = await describeBuild({ dir: out, sparql: endpoint.url });
    expect(viaHttp.shards).toBe(shards.length);
    for (const f of viaHttp.files) expect(read(out, f), f).toBe(read(local, f));
  });

  it('names the endpoint and the error when a query fails or nothing answers', async () => {
    const bad = new HttpSparqlClient(endpoint.url);
    await expect(bad.select('SELECT ?x WHERE { ?x ?y }')).rejects.toThrow(new RegExp(`${endpoint.url.replace(/[./]/g, '\\$&')}: HTTP 400`));
    await expect(new HttpSparqlClient('http://127.0.0.1:1/sparql', 2000).select('ASK {}')).rejects.toThrow(/127\.0\.0\.1:1\/sparql: /);
  });
});

describe('describe / decisions on a small made-up graph', () => {
  // shard1: s1 is both an A and a B (types here), links to s2 and s3; shard2: s2 is an A, with a
  // language-tagged literal; s3 has no type anywhere; shard2 also describes s1 (no type there).
  const E = 'http://e.org/';
  const dir = tmpDir();
  fs.writeFileSync(
    path.join(dir, 'shard1.nt'),
    [
      `<${E}s1> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <${E}A> .`,
      `<${E}s1> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <${E}B> .`,
      `<${E}s1> <${E}p> <${E}s2> .`,
      `<${E}s1> <${E}p> <${E}s3> .`,
      `<${E}s1> <${E}q> "x" .`,
      `<${E}s3> <${E}q> "x" .`,
    ].join('\n') + '\n',
  );
  fs.writeFileSync(path.join(dir, 'shard2.nt'), [`<${E}s2> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <${E}A> .`, `<${E}s2> <${E}q> "x"@en .`, `<${E}s1> <${E}r> <${E}s2> .`].join('\n') + '\n');
  const shards = ['shard1', 'shard2'];
  const described = describeGraph({ graph: 'made', dir, shards });

  it('puts a subject with two types in both class partitions, and leaves untyped subjects out of them', async () => {
    const [d1] = await described;
    expect(d1.classPartitions.map((c) => [c.class, c.entities])).toEqual([
      [`${E}A`, 1],
      [`${E}B`, 1],
    ]);
    // s1's two triples of p count under A and under B; the object s2 is an A by shard2's type
    // triple (a remote object class, naming shard2), s3 has no class.
    expect(d1.classPartitions[1].properties.find((p) => p.property === `${E}p`)).toEqual({
      property: `${E}p`,
      triples: 2,
      objectClasses: [],
      remoteObjectClasses: [{ iri: `${E}A`, typesIn: shardDatasetIri('made', 'shard2'), triples: 1 }],
      datatypes: [],
    });
    expect(d1.remoteClassPartitions).toEqual([]);
    expect(d1.distinctSubjects).toBe(2); // s1 and the untyped s3
  });

  it('counts literals among the distinct objects, "x" once and "x"@en apart, with their datatypes', async () => {
    const [d1, d2] = await described;
    expect(d1.distinctObjects).toBe(5); // A, B, s2, s3, "x"
    const q2 = d2.classPartitions.find((c) => c.class === `${E}A`)!.properties.find((p) => p.property === `${E}q`)!;
    expect(q2.datatypes).toEqual([{ iri: 'http://www.w3.org/1999/02/22-rdf-syntax-ns#langString', triples: 1 }]);
  });

  it("keeps a class partition to the shard's own types: s1 in shard2 is in remote class partitions A and B naming shard1", async () => {
    const [, d2] = await described;
    expect(d2.classes).toBe(1); // only shard2's own type triple (s2 a A)
    expect(d2.classPartitions.map((c) => [c.class, c.entities])).toEqual([[`${E}A`, 1]]);
    const shard1 = shardDatasetIri('made', 'shard1');
    expect(d2.remoteClassPartitions.map((c) => [c.class, c.typesIn, c.entities, c.properties.map((p) => [p.property, p.triples])])).toEqual([
      [`${E}A`, shard1, 1, [[`${E}r`, 1]]],
      [`${E}B`, shard1, 1, [[`${E}r`, 1]]],
    ]);
    // s1 r s2: s2 is an A by shard2's own type triple, a class partition nested here.
    expect(d2.remoteClassPartitions[0].properties[0].objectClasses).toEqual([{ iri: `${E}A`, triples: 1 }]);
    // The sentence says where the types are, and only for the kinds typed elsewhere.
    // (A's instances here are typed here and elsewhere: not flagged; the partitions give the detail.)
    expect(d2.description).toBe('Data about 2 As (q, r) and 1 B (r) from the made knowledge graph, without the rdf:type statements of the Bs (held at another endpoint).');
  });

  it("fails the build when a VoID statement is not true at its endpoint (main's class partitions typed by the whole graph)", async () => {
    // A client that answers the statistics queries as main's did: every type triple counted as the
    // described shard's own (?tg := ?g), as if `?s a C` answered in every shard where s is described.
    const store = OxigraphClient.load(shards.map((s) => ({ file: path.join(dir, `${s}.nt`), graph: shardDatasetIri('made', s) })));
    const wrong = {
      label: 'main semantics',
      close: () => store.close(),
      select: async (q: string) => {
        const rows = await store.select(q);
        if (!/GROUP BY \?g \?tg/.test(q)) return rows;
        const merged = new Map<string, SparqlRow>();
        for (const r of rows) {
          const x = { ...r, tg: r.g, ...(r.tg2 ? { tg2: r.g } : {}) };
          const key = JSON.stringify({ ...x, triples: null, entities: null });
          const prev = merged.get(key);
          const n = (v: string) => Number(prev?.[v]?.value ?? 0) + Number(x[v]?.value ?? 0);
          merged.set(key, {
            ...x,
            ...(x.triples ? { triples: { ...x.triples, value: String(n('triples')) } } : {}),
            ...(x.entities ? { entities: { ...x.entities, value: String(n('entities')) } } : {}),
          });
        }
        return [...merged.values()];
      },
    };
    await expect(describeGraph({ graph: 'made', dir, shards, client: wrong })).rejects.toThrow(
      /statements not true at their endpoints:\n(.*\n)*made-shard2: void:classPartition \[ void:class <http:\/\/e\.org\/B> \] \(ASK \{ \?s a <http:\/\/e\.org\/B> \} at <urn:fkgqa:void:made:shard2>\): VoID states true, the endpoint answers false/,
    );
    store.close();
  });

  it('links s1 → s2 and s1 → s3 only where the object is a subject in the other shard', async () => {
    const [d1, d2] = await described;
    expect(d1.linksets).toEqual([{ subjectsTarget: shardDatasetIri('made', 'shard1'), objectsTarget: shardDatasetIri('made', 'shard2'), linkPredicate: `${E}p`, triples: 1 }]);
    // shard2's r triple points at s2, described in shard2 itself only: no linkset.
    expect(d2.linksets).toEqual([]);
  });

  it('agrees with the independent count', async () => {
    const ds = await described;
    const counted = countedFacts(dir, shards, (s) => shardDatasetIri('made', s));
    for (const d of ds) expect(statedFacts(renderVoid(d, 'extended')).facts).toEqual(counted.get(d.shard));
  });
});

describe('describe / words', () => {
  it('counts things in plain English', () => {
    expect(['stadium', 'pets', 'country', 'match', 'car makers', 'singer in concert', 'people'].map((l) => countedLabel(l, 9))).toEqual([
      'stadiums',
      'pets',
      'countries',
      'matches',
      'car makers',
      'singer in concert records',
      'people',
    ]);
    expect(['pets', 'countries', 'charges', 'singer'].map((l) => countedLabel(l, 1))).toEqual(['pet', 'country', 'charge', 'singer']);
  });

  it('finds a URI space only where every entity IRI shares a hierarchical prefix', () => {
    expect(uriSpaceOf(`${NS}author/author_id=1`, `${NS}book/book_id=8`)).toBe(NS);
    expect(uriSpaceOf(`${NS}book/book_id=1`, `${NS}book/book_id=8`)).toBe(`${NS}book/`);
    expect(uriSpaceOf(`${NS}book/book_id=1`, 'urn:fkgqa:bnode:library:loan_a1')).toBeUndefined();
    expect(uriSpaceOf('http://a.org/x', 'http://b.org/y')).toBeUndefined();
    expect(uriSpaceOf(undefined, undefined)).toBeUndefined();
  });
});

// The VoID of every shard of the Spider4SPARQL dev build is checked in partition.slow.test.ts, on the build
// made there (one build of the dev set fewer): see `itChecksDevVoid` in void-facts.ts.
