import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { getHasher } from '../src/common/hash.js';
import { scanTriples } from '../src/load/triples.js';
import { describeBuild } from '../src/describe/index.js';
import { bucketOf } from '../src/materialize/profile.js';
import { DEFAULT_PARTITION_OPTIONS, partition, type GraphManifest } from '../src/partition/index.js';
import { formatPartitionSummary, summarizePartition } from '../src/report/partition-summary.js';
import { STATE_FILES } from '../src/build/state.js';
import { DEMO, ntLines, tmpDir } from './helpers.js';

const NS = 'http://valuenet/ontop/';
const TYPE = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#type';
const manifest = (out: string, kg: string): GraphManifest => JSON.parse(fs.readFileSync(path.join(out, kg, 'manifest.json'), 'utf8'));
const shardByRole = (m: GraphManifest, slot: string) => m.shards.find((s) => s.role.slot === slot)!;

describe('partition / demo dataset, checked by hand', async () => {
  const out = path.join(tmpDir(), 'shards');
  const result = await partition({ ...DEFAULT_PARTITION_OPTIONS, source: DEMO, out });
  const lib = manifest(out, 'library');

  it('chooses the minimum rule set of the library graph', () => {
    // 7 distinct queries: q1/q2 are about authors only (horizontal on author), q5 about loans only
    // (horizontal on loan), q3/q4/q6 use book#title with rdf:type, q4 and q7 join books with authors.
    expect(lib.rules.map((r) => `${r.kind} ${r.elements.map((e) => e.replace(NS, ':')).join(' ')}`)).toEqual([
      'class :author :book',
      'horizontal :author',
      'horizontal :loan',
      `predicate :book#title ${TYPE}`,
    ]);
    expect(lib.solver.cover.optimal).toBe(true);
    expect(lib.solver.cover.costs[0]).toBe(4);
  });

  it('sends every triple where the precedence says, with the counts worked out from the data', () => {
    // 8 books → 8 book#title triples in the predicate shard; authors (6 × 4 triples) and loans
    // (5 × 5) are hashed into the two buckets of one group; the rest of the books (8 × 5) stay in base.
    const title = shardByRole(lib, 'predicate-1');
    expect(title.triples).toBe(8);
    const titleLines = ntLines(path.join(out, 'library', title.file));
    expect(titleLines.every((l) => l.includes(`<${NS}book#title>`))).toBe(true);
    expect(shardByRole(lib, 'base').triples).toBe(40);
    expect(shardByRole(lib, 'bucket-1-0').triples + shardByRole(lib, 'bucket-1-1').triples).toBe(24 + 25);
    expect(lib.shards.reduce((n, s) => n + s.triples, 0)).toBe(97);
  });

  it('puts each author in the bucket of xxh64(subject IRI, seed 0) mod 2', async () => {
    const hasher = await getHasher();
    for (const b of [0, 1]) {
      const file = path.join(out, 'library', shardByRole(lib, `bucket-1-${b}`).file);
      const authors = new Set(
        ntLines(file)
          .map((l) => l.split(' ')[0])
          .filter((s) => s.includes('/author/')),
      );
      for (const a of authors) expect(bucketOf(hasher, a.slice(1, -1), 0, 2)).toBe(b);
    }
  });

  it('skolemises the blank nodes of the loans to stable IRIs (blank-node labels collide across files and die across shards)', () => {
    const all = lib.shards.flatMap((s) => ntLines(path.join(out, 'library', s.file)));
    expect(all.some((l) => l.startsWith('_:'))).toBe(false);
    expect(all).toContain(`<urn:fkgqa:bnode:library:loan_a1> <${NS}loan#days> "21"^^<http://www.w3.org/2001/XMLSchema#integer> .`);
  });

  it('names shards shard1..N without revealing the rule, and endpoints <kg>-shard<N>', () => {
    expect(lib.shards.map((s) => s.name)).toEqual(['shard1', 'shard2', 'shard3', 'shard4']);
    expect(lib.shards.map((s) => s.endpoint)).toEqual(['library-shard1', 'library-shard2', 'library-shard3', 'library-shard4']);
    expect(
      fs
        .readdirSync(path.join(out, 'library'))
        .filter((f) => !f.endsWith('.ttl'))
        .sort(),
    ).toEqual(['manifest.json', 'shard1.nt', 'shard2.nt', 'shard3.nt', 'shard4.nt']);
  });

  it('computes f(Q) from the shards each triple pattern matches', () => {
    const q = (id: string) => lib.queries.find((x) => x.id === id)!;
    // q1: ?t1 a :author — authors are in both buckets: f = 2.
    expect(q('library/q1').fanOut).toBe(2);
    // q3: book type (base) + book#title (predicate shard) + book#year (base): f = 2.
    expect(q('library/q3').shards).toEqual([shardByRole(lib, 'base').name, shardByRole(lib, 'predicate-1').name].sort());
    // q4: books (base), titles (predicate shard), authors (both buckets): f = 4.
    expect(q('library/q4').fanOut).toBe(4);
  });

  it('holds the three guarantees', () => {
    for (const kg of ['library', 'observatory']) {
      const m = manifest(out, kg);
      expect(m.guarantees.completeness.ok).toBe(true);
      expect(m.guarantees.federation.federated).toBe(m.guarantees.federation.covered);
      expect(m.guarantees.rules.every((r) => r.ok)).toBe(true);
    }
    expect(summarizePartition(result).coverage.covered).toBe(14);
  });

  it('writes one benchmark file with every question, its gold query with the prefix declared, and its endpoints', () => {
    const b = JSON.parse(fs.readFileSync(path.join(out, 'benchmark.json'), 'utf8'));
    expect(b.count).toBe(16);
    expect(b.entries[0]).toEqual({
      index: 0,
      kg: 'library',
      question: 'How many authors are there?',
      query: `PREFIX : <${NS}>\nselect (count( *) as ?aggregation_all) where { ?t1 a :author . }`,
      queryId: 'library/q1',
      status: 'covered',
      federated: true,
      endpoints: ['library-shard1', 'library-shard2', 'library-shard3', 'library-shard4'],
      // "How many authors": the author type triples are in the two author buckets.
      shardsImplied: ['library-shard1', 'library-shard3'],
    });
    expect(b.entries[1].queryId).toBe('library/q1');
  });

  it('gives byte-identical output for the same input and options, and reports it', async () => {
    const again = await partition({ ...DEFAULT_PARTITION_OPTIONS, source: DEMO, out });
    expect(again.outputDigest).toBe(result.outputDigest);
    expect(again.previous).toEqual({ digest: result.outputDigest, sameInputs: true, identical: true, asBuilt: true, changedFiles: [], graphs: ['library', 'observatory'] });
    expect(formatPartitionSummary(summarizePartition(again))).toContain('3. deterministic: byte-identical to the previous build');
    const other = path.join(tmpDir(), 'shards');
    await partition({ ...DEFAULT_PARTITION_OPTIONS, source: DEMO, out: other });
    for (const kg of ['library', 'observatory']) {
      for (const f of fs.readdirSync(path.join(out, kg))) {
        expect(fs.readFileSync(path.join(other, kg, f))).toEqual(fs.readFileSync(path.join(out, kg, f)));
      }
    }
  });

  it('does not call a build byte-identical to a previous one whose VoID describe rewrote with endpoint URLs', async () => {
    const dir = path.join(tmpDir(), 'shards');
    const built = await partition({ ...DEFAULT_PARTITION_OPTIONS, source: DEMO, out: dir });
    const voidFile = path.join(dir, 'library', 'shard1_void.ttl');
    const before = fs.readFileSync(voidFile, 'utf8');
    await describeBuild({ dir, endpointBase: 'http://127.0.0.1:7373' });
    expect(fs.readFileSync(voidFile, 'utf8')).not.toBe(before);
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'build.json'), 'utf8')).outputDigest).toBe(built.outputDigest);

    const again = await partition({ ...DEFAULT_PARTITION_OPTIONS, source: DEMO, out: dir });
    // The rebuild has the recorded bytes, but not the bytes on disk: the VoID of each of the 8 shards
    // (plain and extended) and the catalogue (Turtle and JSON) carry the URLs: 18 files.
    expect(again.outputDigest).toBe(built.outputDigest);
    expect(again.previous).toMatchObject({ sameInputs: true, asBuilt: true, identical: false });
    expect(again.previous!.changedFiles).toHaveLength(18);
    expect(again.previous!.changedFiles.slice(0, 3)).toEqual(['catalogue.json', 'catalogue.ttl', 'library/shard1_void.ttl']);
    const summary = summarizePartition(again);
    expect(summary.guarantees.determinism.status).toBe('changed-after-build');
    const text = formatPartitionSummary(summary);
    expect(text).not.toContain('byte-identical');
    expect(text).toContain('but 18 files (catalogue.json, catalogue.ttl, library/shard1_void.ttl, …) of it had been changed since');
    expect(fs.readFileSync(voidFile, 'utf8')).toBe(before);

    // Now the files on disk are the build's again: a third build is byte-identical to them.
    const third = await partition({ ...DEFAULT_PARTITION_OPTIONS, source: DEMO, out: dir });
    expect(third.previous).toMatchObject({ identical: true, changedFiles: [] });
  });

  it('says a count of one in the singular: a build of one graph is "over 1 graph"', async () => {
    const one = await partition({ ...DEFAULT_PARTITION_OPTIONS, source: DEMO, out: path.join(tmpDir(), 'one'), kgs: ['library'] });
    const text = formatPartitionSummary(summarizePartition(one));
    expect(text).toMatch(/^fkgqa partition: 1 graph, 8 questions, 7 distinct queries \(7 distinct graph\/query pairs\)/);
    expect(text).toMatch(/shards in total +4 over 1 graph /);
    expect(text).toContain('nothing lost, nothing doubled: 1/1 graph (');
    expect(text).not.toMatch(/\b1 (graphs|shards|questions|queries|rows|runs|files)\b/);
  });

  it('changes the shards with the seed, and keeps every triple', async () => {
    const seeded = await partition({ ...DEFAULT_PARTITION_OPTIONS, source: DEMO, out: path.join(tmpDir(), 's'), seed: 7 });
    expect(seeded.outputDigest).not.toBe(result.outputDigest);
    expect(seeded.graphs.every((g) => g.manifest.guarantees.completeness.ok)).toBe(true);
  });
});

describe('partition / duplicates', () => {
  it('drops repeated triples (a graph is a set), once per shard, and says how many', async () => {
    const src = path.join(tmpDir(), 'src');
    fs.cpSync(DEMO, src, { recursive: true });
    const nt = path.join(src, 'kg/library.nt');
    const lines = ntLines(nt);
    // Repeat a book title (predicate shard), an author's name (bucket) and a book year (base) twice each.
    const repeats = [lines.find((l) => l.includes('#title>'))!, lines.find((l) => l.includes('author#name>'))!, lines.find((l) => l.includes('book#year>'))!];
    fs.appendFileSync(nt, [...repeats, ...repeats].join('\n') + '\n');
    const out = path.join(tmpDir(), 'shards');
    const r = await partition({ ...DEFAULT_PARTITION_OPTIONS, source: src, out, kgs: ['library'], void: false });
    const m = r.graphs[0].manifest;
    expect(m.inputs.data).toMatchObject({ triplesRead: 103, triples: 97, duplicates: 6 });
    expect(m.guarantees.completeness.ok).toBe(true);
    expect(m.warnings).toContain('6 repeated triples in the input were dropped (a graph is a set)');
    const all = m.shards.flatMap((s) => ntLines(path.join(out, 'library', s.file)));
    expect(all.length).toBe(97);
    expect(new Set(all).size).toBe(97);
    for (const s of m.shards) expect(ntLines(path.join(out, 'library', s.file)).length).toBe(s.triples);
  });
});

describe('partition / a serve running on the output directory', () => {
  it('warns that the serve answers from the replaced build, and says nothing when the build is unchanged', async () => {
    const out = path.join(tmpDir(), 'shards');
    const options = { ...DEFAULT_PARTITION_OPTIONS, source: DEMO, out, kgs: ['library'], void: false };
    expect((await partition(options)).warnings).toEqual([]);
    // A serve lock held on another host counts as running (it cannot be checked from here).
    fs.mkdirSync(`${out}.state`);
    fs.writeFileSync(path.join(`${out}.state`, STATE_FILES.serveLock), JSON.stringify({ pid: 4242, procStart: 1, started: 'x', hostname: 'elsewhere.example' }));
    expect((await partition(options)).warnings).toEqual([]);
    expect((await partition({ ...options, kgs: ['observatory'] })).warnings).toEqual([
      `fkgqa serve (pid 4242 on host elsewhere.example) is serving the build this one replaced in ${out}: it answers from the shards it loaded at its start until it is restarted`,
    ]);
  });
});

describe('partition / input formats', () => {
  it('reads an RDF/XML graph and a CSV question file to the same shards as N-Triples and JSON', async () => {
    const src = path.join(tmpDir(), 'src');
    fs.cpSync(DEMO, src, { recursive: true });
    // The same library graph as RDF/XML (written with oxigraph), and the questions as CSV.
    const ox = await import('oxigraph');
    const store = new ox.Store();
    store.load(fs.readFileSync(path.join(src, 'kg/library.nt'), 'utf8'), { format: 'application/n-triples' });
    fs.writeFileSync(path.join(src, 'kg/library.rdf'), store.dump({ format: 'application/rdf+xml', from_graph_name: ox.defaultGraph() }));
    fs.rmSync(path.join(src, 'kg/library.nt'));
    const { stringify } = await import('csv-stringify/sync');
    const dev = JSON.parse(fs.readFileSync(path.join(src, 'dev.json'), 'utf8'));
    fs.writeFileSync(path.join(src, 'questions.csv'), stringify(dev, { header: true, columns: ['kg_name', 'question', 'query'] }));
    fs.rmSync(path.join(src, 'dev.json'));
    const out = path.join(tmpDir(), 'shards');
    const r = await partition({ ...DEFAULT_PARTITION_OPTIONS, source: src, out, kgs: ['library'] });
    const m = r.graphs[0].manifest;
    expect(m.inputs.data.file).toBe('kg/library.rdf');
    expect(m.inputs.data.triples).toBe(97);
    expect(Object.fromEntries(m.shards.map((s) => [s.role.slot, s.triples]))).toEqual({
      base: 40,
      'predicate-1': 8,
      'bucket-1-0': expect.any(Number),
      'bucket-1-1': expect.any(Number),
    });
    expect(m.guarantees.completeness.ok).toBe(true);
    // RDF/XML blank nodes are numbered in order of first appearance.
    let skolems = 0;
    await scanTriples({ file: path.join(src, 'kg/library.rdf'), format: 'rdf-xml', graph: 'library' }, (t) => {
      if (t.subject.value.startsWith('urn:fkgqa:bnode:library:~')) skolems++;
    });
    expect(skolems).toBe(25);
  });
});
