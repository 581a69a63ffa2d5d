// @module-tag split-tiers (tests/tiers.ts: the tests tagged slow run in npm run test:slow)
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import sparqljs from 'sparqljs';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseQuery } from '../src/sparql/parse.js';
import type { SparqlResults } from '../src/sparql/results.js';
import { serve } from '../src/serve/server.js';
import { compareResults } from '../src/answers/compare.js';
import { admittedBySegments, keyQuery, singleSolution, tieSegments } from '../src/answers/ties.js';
import { trivialFederation } from '../src/sparql/trivial.js';
import { verify } from '../src/index.js';
import { classifyDisagreement, computeTotals, formatVerifyReport, readableKeys, type FormVerdict, type QueryVerdict } from '../src/verify/report.js';
import { demoBuild, fkgqaInProcess, ROOT, tmpDir } from './helpers.js';

const XSD = 'http://www.w3.org/2001/XMLSchema#';
const lit = (value: string, datatype?: string) => ({ type: 'literal' as const, value, ...(datatype ? { datatype } : {}) });
const res = (vars: string[], rows: Record<string, ReturnType<typeof lit>>[]): SparqlResults => ({ head: { vars }, results: { bindings: rows } });
const parse = (q: string) => {
  const p = parseQuery(q, 'http://valuenet/ontop/');
  if (!p.ok) throw new Error(p.error);
  return p.query.ast;
};

describe('verify / comparing answers', () => {
  it('compares rows as multisets by variable name, numbers by value', () => {
    const gold = res(
      ['a', 'n'],
      [
        { a: lit('x'), n: lit('1', `${XSD}integer`) },
        { a: lit('y'), n: lit('2.50', `${XSD}decimal`) },
      ],
    );
    const other = res(
      ['n', 'a'],
      [
        { n: lit('2.5', `${XSD}double`), a: lit('y', `${XSD}string`) },
        { a: lit('x'), n: lit('1.0', `${XSD}decimal`) },
      ],
    );
    expect(compareResults(gold, other, false).identical).toBe(true);
    const ordered = compareResults(gold, other, true);
    expect(ordered.identical).toBe(false);
    expect(ordered.orderOnly).toBe(true);
  });
  it('reports missing and extra rows with their counts (duplicates count)', () => {
    const gold = res(['a'], [{ a: lit('x') }, { a: lit('x') }, { a: lit('y') }]);
    const other = res(['a'], [{ a: lit('x') }, { a: lit('z') }]);
    const c = compareResults(gold, other, false);
    expect(c).toMatchObject({ identical: false, missingCount: 2, extraCount: 1, goldRows: 3, rows: 2 });
    expect(c.missing).toEqual(['?a="x"', '?a="y"']);
    expect(c.extra).toEqual(['?a="z"']);
  });
  it('treats different variables as a difference unless both answers are empty', () => {
    expect(compareResults(res(['a'], [{ a: lit('x') }]), res(['b'], [{ b: lit('x') }]), false).reason).toMatch(/variables differ/);
    expect(compareResults(res(['a'], []), res([], []), false).identical).toBe(true);
    expect(compareResults({ head: {}, boolean: true }, { head: {}, boolean: false }, false).identical).toBe(false);
  });
});

describe('verify / ties under ORDER BY', () => {
  const q = 'SELECT ?name WHERE { ?x <http://e/name> ?name . ?x <http://e/age> ?age } ORDER BY ASC(?age) LIMIT 2';
  it('builds the key query: ORDER BY keys projected, no LIMIT', () => {
    const kq = keyQuery(parse(q))!;
    expect(kq).toContain('(?age AS ?__fkgqa_order0)');
    expect(kq).not.toMatch(/LIMIT/);
    expect(keyQuery(parse('SELECT ?x WHERE { ?x ?p ?o }'))).toBeUndefined();
  });
  it('accepts another choice among tied solutions, refuses a row outside the tie', () => {
    const age = (n: string) => lit(n, `${XSD}integer`);
    const keyed = res(
      ['name', '__fkgqa_order0'],
      [
        { name: lit('ann'), __fkgqa_order0: age('20') },
        { name: lit('bob'), __fkgqa_order0: age('30') },
        { name: lit('cy'), __fkgqa_order0: age('30') },
        { name: lit('dan'), __fkgqa_order0: age('40') },
      ],
    );
    const ast = parse(q) as sparqljs.SelectQuery;
    const segments = tieSegments(ast, keyed, ['name']);
    // bob and cy tie at age 30 for the one place the LIMIT leaves after ann: either is correct.
    expect(segments).toEqual([{ start: 1, take: 1, tied: 2, key: expect.stringContaining('30'), rows: [{ name: lit('bob') }, { name: lit('cy') }] }]);
    const gold = res(['name'], [{ name: lit('ann') }, { name: lit('bob') }]);
    expect(admittedBySegments(gold, segments, res(['name'], [{ name: lit('ann') }, { name: lit('cy') }]))).toEqual({ admitted: true });
    const wrong = admittedBySegments(gold, segments, res(['name'], [{ name: lit('ann') }, { name: lit('dan') }]));
    expect(wrong).toEqual({ admitted: false, why: expect.stringMatching(/^row 2 \(\?name="dan"\) is none of the 2 solutions tied/) });
    expect(admittedBySegments(gold, segments, res(['name'], [{ name: lit('cy') }, { name: lit('ann') }])).admitted).toBe(false);
  });
  it('a SELECT that aggregates without GROUP BY has one solution; an aggregate of a nested sub-SELECT does not make it so', () => {
    const sel = (text: string) => parse(text) as sparqljs.SelectQuery;
    expect(singleSolution(sel('SELECT (COUNT(?x) AS ?n) WHERE { ?x <http://e/age> ?age } ORDER BY ?n LIMIT 1'))).toBe(true);
    expect(singleSolution(sel('SELECT ?x (COUNT(?age) AS ?n) WHERE { ?x <http://e/age> ?age } GROUP BY ?x ORDER BY ?n'))).toBe(false);
    const nested = 'SELECT ?x (EXISTS { SELECT (COUNT(?y) AS ?c) WHERE { ?x <http://e/knows> ?y } } AS ?k) WHERE { ?x <http://e/age> ?age } ORDER BY ?age';
    expect(singleSolution(sel(nested))).toBe(false);
  });
});

describe('verify / equivalence needs every gold row', () => {
  it('a lost row is not "equivalent" even when the key query lost it too (a damaged unsharded graph)', () => {
    const q = 'SELECT ?name WHERE { ?x <http://e/name> ?name . ?x <http://e/age> ?age } ORDER BY ASC(?age)';
    const age = (n: string) => lit(n, `${XSD}integer`);
    const gold = res(['name'], [{ name: lit('ann') }, { name: lit('bob') }, { name: lit('cy') }]);
    // The key query ran on data that lacks bob (as when a shard lost a triple): its rows match the answer.
    const keyed = res(
      ['name', '__fkgqa_order0'],
      [
        { name: lit('ann'), __fkgqa_order0: age('20') },
        { name: lit('cy'), __fkgqa_order0: age('30') },
      ],
    );
    const answer = res(['name'], [{ name: lit('ann') }, { name: lit('cy') }]);
    const segments = tieSegments(parse(q) as sparqljs.SelectQuery, keyed, ['name']);
    expect(segments).toEqual([]); // no two solutions tie in what the key query kept
    expect(admittedBySegments(gold, segments, answer)).toEqual({ admitted: false, why: '2 rows where gold has 3' });
  });
});

describe('verify / trivial federation (paper section 2)', () => {
  it('rewrites every triple pattern, also inside FILTER NOT EXISTS and sub-SELECTs, into a UNION of SERVICE over all endpoints', () => {
    const ast = parse('SELECT (COUNT(*) AS ?n) WHERE { ?a a :dogs . ?a :dogs\\#owner_id ?o . FILTER NOT EXISTS { { SELECT ?o2 WHERE { ?d :owners\\#owner_id ?o2 } } FILTER(?o = ?o2) } }');
    const t = trivialFederation(ast, ['http://h/e1/sparql', 'http://h/e2/sparql', 'http://h/e3/sparql']);
    expect(t.triplePatterns).toBe(3);
    expect(t.text.match(/SERVICE/g)).toHaveLength(9);
    expect(t.text.match(/UNION/g)).toHaveLength(6);
    expect(t.text).toContain('SERVICE <http://h/e2/sparql> { ?d <http://valuenet/ontop/owners#owner_id> ?o2. }');
    expect(t.caveats).toEqual([]);
    expect(new sparqljs.Parser().parse(t.text).type).toBe('query');
    expect(JSON.stringify(ast)).not.toContain('SERVICE');
  });
});

describe('verify / the demo build', () => {
  let shards: string;
  beforeAll(async () => {
    shards = await demoBuild(tmpDir('fkgqa-verify-'));
  });
  // One query (library/q1) through every form and engine (comunica and jena) and the long federation runs
  // over the whole demo are in tests/verify.slow.test.ts (`npm run test:slow`).
  it('verifies against running endpoints given by endpoints.json (their request log shows the traffic)', async () => {
    const server = await serve({ shards, kgs: ['library'] });
    try {
      const r = await verify({ shards, endpoints: path.join(`${shards}.state`, 'endpoints.json'), kgs: ['library'], queries: ['library/q2'], forms: ['federated'] });
      expect(r.endpoints).toBe(path.join(`${shards}.state`, 'endpoints.json'));
      expect(r.totals.comunica.federated).toMatchObject({ identical: 1, different: 0 });
      const counts = server.log.counts();
      expect(Object.keys(counts)).toEqual(['library-shard1', 'library-shard2', 'library-shard3', 'library-shard4']);
      expect(Object.values(counts).every((c) => c['service-description'] === 1)).toBe(true);
    } finally {
      await server.close();
    }
  });

  it('uses the gold answers fkgqa stats stored for this build in the state folder (a wrong stored answer shows as a difference)', { tags: ['slow'] }, async () => {
    const gold = await verify({ shards, kgs: ['library'], queries: ['library/q1'], forms: ['federated'] });
    const answer = { head: { vars: ['n'] }, results: { bindings: [{ n: lit('999', `${XSD}integer`) }] } };
    const copy = path.join(tmpDir('fkgqa-verify-gold-'), 'shards');
    fs.cpSync(shards, copy, { recursive: true });
    const digest = JSON.parse(fs.readFileSync(path.join(copy, 'build.json'), 'utf8')).outputDigest;
    const stored = (buildDigest: string) => JSON.stringify({ graph: 'library', buildDigest, timeoutMs: 60_000, answers: [{ query: 'library/q1', status: 'ok', rows: 1, results: answer }] });
    fs.mkdirSync(path.join(`${copy}.state`, 'gold-answers'), { recursive: true });
    // Answers stored for another build are not used.
    fs.writeFileSync(path.join(`${copy}.state`, 'gold-answers', 'library.json'), stored('0'.repeat(64)));
    const other = await verify({ shards: copy, queries: ['library/q1'], forms: ['federated'] });
    expect(other.graphs).toEqual(['library']); // --query implies its graph
    expect(other.queries[0].gold.source).toBe('computed');
    fs.writeFileSync(path.join(`${copy}.state`, 'gold-answers', 'library.json'), stored(digest));
    const r = await verify({ shards: copy, kgs: ['library'], queries: ['library/q1'], forms: ['federated'] });
    expect(gold.queries[0].engines.comunica.federated!.status).toBe('identical');
    expect(r.queries[0].gold.source).toBe('gold-answers.json');
    expect(r.queries[0].engines.comunica.federated!.status).toBe('different');
    expect(r.queries[0].engines.comunica.federated!.comparison!.missing).toEqual(['?n=#999']);
  });

  it('fkgqa verify prints the totals and exits 0; fkgqa serve stops cleanly on SIGTERM', async () => {
    // verify in this process (its output is under test, not its process); serve as a child: its stop on SIGTERM is.
    const v = await fkgqaInProcess(['verify', '--shards', shards, '--query', 'observatory/q2', 'observatory/q5', '-q']);
    expect(v.code, v.stderr).toBe(0);
    // --query <kg>/qN without --kg verifies that graph only.
    expect(v.stdout).toContain('fkgqa verify: 2 distinct gold queries over 1 graph;');
    // engine, form, answered, identical, equivalent, different, failed, gold too, timeouts, errors, n/a
    expect(v.stdout).toMatch(/^ {2}comunica +federated +2 +2 +0 +0 +0 +0 +0 +0 +0 +\d+ \/ \d+ \(observatory\/q[25]\)/m);
    expect(v.stdout).toMatch(/^observatory\/q5 +6 rows +identical 6 +identical 6 +n\/a$/m);
    const child = spawn(process.execPath, [path.join(ROOT, 'bin/fkgqa.js'), 'serve', '--shards', shards, '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stderr.on('data', (c) => (err += c));
    await new Promise<void>((resolve) => child.stdout.on('data', (c) => ((out += c), out.split('\n').length > 8 && resolve())));
    const first = out.split('\n')[0].split('\t');
    expect(first[0]).toBe('library-shard1');
    const r = await fetch(`${first[1]}?query=${encodeURIComponent('ASK { ?s ?p ?o }')}`);
    expect(((await r.json()) as { boolean: boolean }).boolean).toBe(true);
    child.kill('SIGTERM');
    const code = await new Promise((resolve) => child.on('exit', resolve));
    expect(code).toBe(0);
    // Every served shard has its line at the stop, those that got no request too.
    expect(err).toContain('fkgqa serve: 1 requests, 0 answered with an error status (HTTP 4xx/5xx); 8 endpoints, 7 without requests; per endpoint, requests by kind, then errors by cause:\n');
    expect(err).toContain('  library-shard1: 1 requests (ask 1); no errors\n  library-shard2: 0 requests\n');
    expect(err).toContain('  observatory-shard4: 0 requests\n');
  });
});

describe('verify / refuses what it cannot check (exit 2, named)', () => {
  let shards: string;
  /** The CLI in the test process (tests/helpers.ts; its event loop keeps running the endpoints under test): the child's exit code, stdout and stderr. */
  const cli = async (...args: string[]) => {
    const r = await fkgqaInProcess(args);
    return { status: r.code, stdout: r.stdout, stderr: r.stderr };
  };
  beforeAll(async () => {
    shards = await demoBuild(tmpDir('fkgqa-verify-refuse-'));
  });

  // A --query <kg>/qN without --kg verifying that graph only: 'fkgqa verify prints the totals' above.
  it('--query takes a query id <kg>/qN', async () => {
    const v = await cli('verify', '--shards', shards, '--query', 'q1', '-q');
    expect([v.status, v.stdout]).toEqual([2, '']);
    expect(v.stderr).toContain('--query q1: a query id is <kg>/q<N>');
  });

  it('a shard with a triple removed: verify and serve refuse, naming the shard', async () => {
    const copy = path.join(tmpDir('fkgqa-verify-damaged-'), 'shards');
    fs.cpSync(shards, copy, { recursive: true });
    const shard = path.join(copy, 'library', 'shard1.nt');
    const lines = fs.readFileSync(shard, 'utf8').split('\n');
    fs.writeFileSync(shard, lines.slice(1).join('\n'));
    // Both in this process: serve refuses before it serves (refusal, tests/helpers.ts).
    const serveRefused = await fkgqaInProcess(['serve', '--port', '0', '--shards', copy, '-q'], { refusal: true });
    for (const r of [await cli('verify', '--query', 'library/q1', '--shards', copy, '-q'), { status: serveRefused.code, stderr: serveRefused.stderr }]) {
      expect(r.status).toBe(2);
      expect(r.stderr).toContain(`${shard}: shard file differs from the one the build wrote`);
    }
  });

  it('endpoints that do not answer: exit 2 naming them, before any query', async () => {
    // A port nothing listens on: bind one, then close it.
    const net = await import('node:net');
    const port = await new Promise<number>((resolve) => {
      const srv = net.createServer().listen(0, '127.0.0.1', () => {
        const p = (srv.address() as { port: number }).port;
        srv.close(() => resolve(p));
      });
    });
    const server = await serve({ shards, kgs: ['library'], writeFiles: false });
    let file: string;
    try {
      const ef = server.endpointsFile();
      ef.endpoints = ef.endpoints.map((e, i) => (i === 1 ? { ...e, url: `http://127.0.0.1:${port}/library-shard2/sparql` } : e));
      file = path.join(tmpDir('fkgqa-verify-down-'), 'endpoints.json');
      fs.writeFileSync(file, JSON.stringify(ef));
      const r = await cli('verify', '--shards', shards, '--endpoints', file, '--query', 'library/q1', '-q');
      expect(r.status).toBe(2);
      expect(r.stderr).toContain(
        `${file}: 1 endpoint(s) do not answer (is fkgqa serve running?): http://127.0.0.1:${port}/library-shard2/sparql: refused the connection: nothing listens there (ECONNREFUSED)`,
      );
      expect(r.stdout).toBe('');
    } finally {
      await server.close();
    }
    // All of them down once the server stopped.
    const r = await cli('verify', '--shards', shards, '--endpoints', file, '--query', 'library/q1', '-q');
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('4 endpoint(s) do not answer');
  });

  it('a missing or broken endpoints file is named; --endpoints alone means <state>/endpoints.json', async () => {
    const gone = path.join(tmpDir(), 'endpoints.json');
    const r = await cli('verify', '--shards', shards, '--endpoints', gone, '-q');
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(`${gone}: endpoints file not found: is fkgqa serve running on this build?`);
    const d = await cli('verify', '--shards', shards, '--endpoints', '-q');
    expect(d.status).toBe(2);
    expect(d.stderr).toContain(`${path.join(`${shards}.state`, 'endpoints.json')}: endpoints file not found`);
    fs.writeFileSync(gone, '{"endpoints": [{"id": 1}]}');
    expect((await cli('verify', '--shards', shards, '--endpoints', gone, '-q')).stderr).toContain(`${gone}: not an endpoints file written by fkgqa serve: endpoints[0]: needs string fields`);
  });

  it('every command documents its exit codes in its help', async () => {
    for (const c of ['partition', 'stats', 'synth', 'describe', 'serve', 'verify']) {
      const h = await cli(c, '--help');
      expect(h.status).toBe(0);
      expect(h.stdout).toMatch(/Exit codes: 0 [^\n]*2 bad input/);
    }
    expect((await cli('verify', '--help')).stdout).toContain("1 an engine's answer differs from gold beyond ties");
  });
});

describe('verify / what Comunica 4.5.0 got wrong over several SPARQL endpoints, corrected (src/federation/comunica/corrections.ts)', () => {
  let shards: string;
  beforeAll(() => {
    // Two shards: A holds ?o <p> "1", "2"; B holds <d1> <q> "1" (docs/federation.md, "Comunica 4.5.0, corrected").
    shards = path.join(tmpDir('fkgqa-verify-mini-'), 'shards');
    fs.mkdirSync(path.join(shards, 'g'), { recursive: true });
    fs.writeFileSync(path.join(shards, 'g', 'shard1.nt'), '<http://e/o1> <http://e/p> "1" .\n<http://e/o2> <http://e/p> "2" .\n');
    fs.writeFileSync(path.join(shards, 'g', 'shard2.nt'), '<http://e/d1> <http://e/q> "1" .\n');
    const sha256 = (f: string) =>
      crypto
        .createHash('sha256')
        .update(fs.readFileSync(path.join(shards, 'g', f)))
        .digest('hex');
    const shard = (n: number, triples: number) => ({ name: `shard${n}`, endpoint: `g-shard${n}`, file: `shard${n}.nt`, triples, sha256: sha256(`shard${n}.nt`) });
    const tool = { name: 'fkgqa', version: '0' };
    fs.writeFileSync(path.join(shards, 'g', 'manifest.json'), JSON.stringify({ tool, graph: 'g', options: { defaultPrefix: 'http://e/' }, shards: [shard(1, 2), shard(2, 1)] }));
    fs.writeFileSync(path.join(shards, 'build.json'), JSON.stringify({ tool, graphs: ['g'], outputDigest: 'x' }));
    const entries = [
      'SELECT ?o WHERE { ?o <http://e/p> ?x FILTER NOT EXISTS { ?d <http://e/q> ?x } }',
      'SELECT (COUNT(*) AS ?n) WHERE { ?s <http://e/none> ?o }',
      'SELECT ?o ?d WHERE { ?o <http://e/p> ?x . ?d <http://e/q> ?x }',
      'SELECT ?o WHERE { ?o <http://e/p> ?x FILTER EXISTS { ?d <http://e/q> ?x } }',
      'SELECT ?o WHERE { ?o <http://e/p> ?x MINUS { ?o <http://e/none> ?y } }',
    ].map((query, i) => ({ kg: 'g', question: `question ${i + 1}`, query, queryId: `g/q${i + 1}` }));
    fs.writeFileSync(path.join(shards, 'benchmark.json'), JSON.stringify({ defaultPrefix: 'http://e/', entries }));
  });

  it('FILTER (NOT) EXISTS across endpoints, COUNT and MINUS over a pattern no endpoint matches: the federated form equals gold in both Comunica configurations', { tags: ['slow'] }, async () => {
    const r = await verify({ shards, timeoutMs: 20_000, federationEngine: 'comunica,comunica-default', forms: ['federated', 'trivial'] });
    expect(r.engines).toEqual(['comunica', 'comunica-default']);
    for (const e of r.engines) {
      const byId = Object.fromEntries(r.queries.map((q) => [q.id, q.engines[e]]));
      // Comunica 4.5.0 sent the FILTER with its EXISTS to shard A alone (o1 and o2; EXISTS: none),
      // and answered no row for a COUNT or MINUS over a pattern it pruned every source of.
      expect(Object.fromEntries(Object.entries(byId).map(([id, f]) => [id, [f.federated!.status, f.federated!.comparison!.rows, f.trivial!.status]])), e).toEqual({
        'g/q1': ['identical', 1, 'identical'],
        'g/q2': ['identical', 1, 'identical'],
        'g/q3': ['identical', 1, 'identical'],
        'g/q4': ['identical', 1, 'identical'],
        'g/q5': ['identical', 2, 'identical'],
      });
      expect(r.totals[e].federated!.different).toBe(0);
    }
    expect([r.different, r.disagreements]).toEqual([0, []]);
  });

  it('fkgqa verify exits 1 and lists the disagreement (here a wrong gold answer stored for the build)', async () => {
    const state = `${shards}.state`;
    fs.mkdirSync(path.join(state, 'gold-answers'), { recursive: true });
    const wrong = { head: { vars: ['n'] }, results: { bindings: [{ n: lit('7', `${XSD}integer`) }] } };
    fs.writeFileSync(
      path.join(state, 'gold-answers', 'g.json'),
      JSON.stringify({ graph: 'g', buildDigest: 'x', timeoutMs: 20_000, answers: [{ query: 'g/q2', status: 'ok', rows: 1, results: wrong }] }),
    );
    try {
      const v = await fkgqaInProcess(['verify', '--shards', shards, '--query', 'g/q2', '--form', 'federated', '-q']);
      expect(v.code, v.stderr).toBe(1);
      expect(v.stdout).toContain('Disagreements, engine vs engine vs gold (1; ties listed after)\n  different: an engine differs from gold beyond ties (1)\n');
      expect(v.stdout).toMatch(/^ {4}g\/q2 +federated +gold 1 row +comunica: different 1$/m);
      expect(v.stdout).toMatch(/1 answer\(s\) differ from gold beyond ties\n$/);
    } finally {
      fs.rmSync(state, { recursive: true, force: true });
    }
  });
});

describe('verify / disagreements between engines and gold (report.ts)', () => {
  const fv = (status: FormVerdict['status'], rows?: number, failure?: 'timeout' | 'error'): FormVerdict => ({
    status,
    ms: 1,
    requests: 2,
    ...(rows !== undefined ? { rows } : {}),
    ...(failure ? { failure, reason: failure } : {}),
    ...(status === 'different' ? { reason: 'rows differ' } : {}),
  });
  const q = (gold: 'ok' | 'timeout', engines: Record<string, FormVerdict>): QueryVerdict => ({
    id: 'car_1/q37',
    graph: 'car_1',
    questions: 1,
    ordered: false,
    gold: gold === 'ok' ? { status: 'ok', rows: 1, source: 'gold-answers.json' } : { status: 'timeout', source: 'gold-answers.json' },
    engines: Object.fromEntries(Object.entries(engines).map(([e, v]) => [e, { trivial: v }])),
  });
  const a = res(['x'], [{ x: lit('a') }]);
  const b = res(['x'], [{ x: lit('b') }]);

  it('an engine differing from gold while the other is identical: different, the engines in two groups', () => {
    const d = classifyDisagreement(
      q('ok', { comunica: fv('different', 1), jena: fv('identical', 1) }),
      'trivial',
      new Map([
        ['comunica', b],
        ['jena', a],
      ]),
    );
    expect(d).toEqual({
      query: 'car_1/q37',
      form: 'trivial',
      kind: 'different',
      gold: '1 row',
      engines: { comunica: 'different 1', jena: 'identical 1' },
      groups: [['comunica'], ['jena']],
      reasons: { comunica: 'rows differ' },
    });
  });

  it('both equivalent to gold with other answers: a tie; both identical: none; all failed with gold failed: none; one answering without gold: no-gold; one failing: failed', () => {
    expect(
      classifyDisagreement(
        q('ok', { comunica: fv('equivalent', 1), jena: fv('identical', 1) }),
        'trivial',
        new Map([
          ['comunica', b],
          ['jena', a],
        ]),
      )?.kind,
    ).toBe('tie');
    expect(
      classifyDisagreement(
        q('ok', { comunica: fv('identical', 1), jena: fv('identical', 1) }),
        'trivial',
        new Map([
          ['comunica', a],
          ['jena', a],
        ]),
      ),
    ).toBeUndefined();
    expect(classifyDisagreement(q('timeout', { comunica: fv('failed', undefined, 'timeout'), jena: fv('failed', undefined, 'timeout') }), 'trivial', new Map())).toBeUndefined();
    const noGold = classifyDisagreement(q('timeout', { comunica: fv('failed', 1), jena: fv('failed', undefined, 'timeout') }), 'trivial', new Map([['comunica', a]]));
    expect([noGold?.kind, noGold?.engines]).toEqual(['no-gold', { comunica: 'answered 1', jena: 'timeout' }]);
    const failed = classifyDisagreement(q('ok', { comunica: fv('identical', 1), jena: fv('failed', undefined, 'error') }), 'trivial', new Map([['comunica', a]]));
    expect([failed?.kind, failed?.groups, failed?.reasons]).toEqual(['failed', [['comunica']], { jena: 'error' }]);
  });

  it('totals: answered, timeouts, requests median/max and time median/p95 per engine and form', () => {
    const verdicts = [1, 2, 3, 4].map((i) => ({
      ...q('ok', { comunica: { ...fv(i === 4 ? 'failed' : 'identical', i === 4 ? undefined : 1, i === 4 ? 'timeout' : undefined), requests: i * 10, ms: i * 100 } }),
      id: `g/q${i}`,
    }));
    const t = computeTotals(verdicts, ['comunica'], ['trivial']).comunica.trivial!;
    expect(t).toEqual({
      identical: 3,
      equivalent: 0,
      different: 0,
      failed: 1,
      failedOnBothSides: 0,
      timeouts: 1,
      errors: 0,
      skipped: 0,
      answered: 3,
      requests: { median: 25, max: 40, maxQuery: 'g/q4', total: 100 },
      ms: { median: 250, p95: 400, max: 400, maxQuery: 'g/q4' },
    });
  });
});

describe('verify / the tie report in plain words', () => {
  it("a number's comparison key #3 is shown 3, and 'ORDER BY key' is 'ORDER BY value' (#3 reads as a row number)", () => {
    expect(readableKeys('row ?aggregation_all=#3 ?name="Bo #2" ?c=<http://x/#3> (ORDER BY key #3 | #-1.5 | "x")')).toBe(
      'row ?aggregation_all=3 ?name="Bo #2" ?c=<http://x/#3> (ORDER BY value 3 | -1.5 | "x")',
    );
    const f: FormVerdict = {
      status: 'equivalent',
      reason:
        '1 of 2 gold rows missing, 1 extra rows; admissible under ties (another order or choice of solutions tied under the top-level ORDER BY): top-level ORDER BY DESC (?aggregation_all) LIMIT 1: 2 solutions tie (ORDER BY key #3) for 1 place',
      comparison: { identical: false, goldRows: 1, rows: 1, missing: ['?aggregation_all=#3 ?name="Ann"'], extra: ['?aggregation_all=#3 ?name="Bo"'] },
    } as FormVerdict;
    const v = { id: 'g/q1', graph: 'g', questions: [1], ordered: true, gold: { status: 'ok', source: 'computed', rows: 1 }, engines: { comunica: { trivial: f } } } as unknown as QueryVerdict;
    const text = formatVerifyReport({
      graphs: ['g'],
      timeoutMs: 1000,
      endpoints: 'started',
      engines: ['comunica'],
      forms: ['trivial'],
      queries: [v],
      totals: computeTotals([v], ['comunica'], ['trivial']),
      disagreements: [],
      different: 0,
      ms: 5,
    });
    const lines = text.split('\n');
    const at = lines.findIndex((l) => l.startsWith('  g/q1 trivial: '));
    expect(lines.slice(at, at + 3)).toEqual([
      '  g/q1 trivial: 1 of 2 gold rows missing, 1 extra rows; admissible under ties (another order or choice of solutions tied under the top-level ORDER BY): top-level ORDER BY DESC (?aggregation_all) LIMIT 1: 2 solutions tie (ORDER BY value 3) for 1 place',
      '      missing: ?aggregation_all=3 ?name="Ann"',
      '      extra:   ?aggregation_all=3 ?name="Bo"',
    ]);
  });
});
