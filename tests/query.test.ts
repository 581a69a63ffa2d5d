// @module-tag split-tiers (tests/tiers.ts: the tests tagged slow run in npm run test:slow)
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { parse as parseCsv } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as oxigraph from 'oxigraph';
import { formatAnswer, runQuery } from '../src/query/query.js';
import { VOID_MAX_BYTES, VOID_READ_MS } from '../src/federation/registry.js';
import { DEMO, demoBuild, FAKE_VOID, FAKE_VOID_DIGEST, fakeShardHost, fkgqaChild, fkgqaInProcess, ROOT, tmpDir } from './helpers.js';

/** fkgqa query against a real `fkgqa serve` child on the demo build. */
const dir = tmpDir('fkgqa-query-');
let build: string;
let serveChild: ChildProcess;
const url: Record<string, string> = {};

beforeAll(async () => {
  build = await demoBuild(dir);
  serveChild = spawn(process.execPath, [path.join(ROOT, 'bin/fkgqa.js'), 'serve', '--shards', build, '--kg', 'library', '--port', '0', '-q'], { stdio: ['ignore', 'pipe', 'inherit'] });
  // serve prints "id<TAB>url" per endpoint once all listen.
  let out = '';
  await new Promise<void>((resolve, reject) => {
    serveChild.stdout!.on('data', (d) => {
      out += d;
      if (out.split('\n').filter((l) => l.includes('\t')).length === 4) resolve();
    });
    serveChild.on('exit', (code) => reject(new Error(`serve exited with ${code}`)));
  });
  for (const l of out.trim().split('\n')) {
    const [id, u] = l.split('\t');
    url[id] = u;
  }
}, 120_000);

/**
 * An endpoints file whose only entry's VoID URL accepts the connection and never answers, queried
 * with --timeout 600000 (a child process): refused after VOID_READ_MS (10 s), so its test is tagged slow.
 */
async function silentVoid(): Promise<{ file: string; host: string; run: { code: number | null; stdout: string; stderr: string }; held: number; queries: Record<string, number> }> {
  const held: http.ServerResponse[] = [];
  const fake = await fakeShardHost((name, res) => name === 'silent' && held.push(res) > 0);
  try {
    const file = path.join(dir, 'silent.json');
    const sparql = `http://${fake.host}/silent/sparql`;
    fs.writeFileSync(
      file,
      JSON.stringify({
        endpoints: [
          {
            id: 'silent-shard1',
            graph: 'silent',
            role: 'shard',
            shard: 'shard1',
            url: sparql,
            triples: 1,
            profile: null,
            host: fake.host,
            void: `http://${fake.host}/silent/.well-known/void`,
            voidDigest: FAKE_VOID_DIGEST,
          },
        ],
      }),
    );
    const run = await child(['query', '--endpoints', file, '--timeout', '600000', `SELECT ?s WHERE { SERVICE <${sparql}> { ?s ?p ?o } }`]);
    return { file, host: fake.host, run, held: held.length, queries: { ...fake.queries } };
  } finally {
    await fake.close();
  }
}

afterAll(async () => {
  if (serveChild && serveChild.exitCode === null) {
    const exited = new Promise((r) => serveChild.on('exit', r));
    serveChild.kill('SIGTERM');
    await exited;
  }
});

/** Authors (shard1) joined with their books (links in shard4, titles in shard2): 7 rows. */
const join = () =>
  `SELECT ?name ?title WHERE {
  SERVICE <${url['library-shard1']}> { ?a <http://valuenet/ontop/author#name> ?name }
  SERVICE <${url['library-shard4']}> { ?b <http://valuenet/ontop/book#ref-author_id> ?a }
  SERVICE <${url['library-shard2']}> { ?b <http://valuenet/ontop/book#title> ?title }
} ORDER BY ?title`;

/** Runs the CLI as a child process, asynchronously (the serve child answers meanwhile): what a user runs. */
const child = (args: string[]) => fkgqaChild(args);

/** Runs the CLI in the test process (tests/helpers.ts): the child's exit code, stdout and stderr, without its start. */
const fkgqa = (args: string[]) => fkgqaInProcess(args);

/** A function that makes its value on the first call and answers every call with it; `made` tells whether it was called. */
function once<T>(make: () => Promise<T>): (() => Promise<T>) & { made: boolean } {
  let value: Promise<T> | undefined;
  const f = Object.assign(
    () => {
      f.made = true;
      return (value ??= make());
    },
    { made: false },
  );
  return f;
}

describe('query / a federated join from the shell', () => {
  it('refuses a query naming endpoints of two graphs (as run_sparql_query and /federation/sparql), nothing sent; --mix-graphs lets it run', async () => {
    // The running serve's endpoints file with a second graph's endpoint beside library's (its URL: library-shard3's), listed
    // without a VoID in a file that names no build, so it is not checked (a shard entry is held to the shard its VoID describes).
    const file = JSON.parse(fs.readFileSync(path.join(`${build}.state`, 'endpoints.json'), 'utf8')) as { endpoints: Record<string, unknown>[] };
    const other = { ...file.endpoints.find((e) => e.id === 'library-shard3')!, id: 'observatory-shard1', graph: 'observatory', shard: 'shard1', void: undefined, voidDigest: undefined };
    const mixed = path.join(dir, 'mixed-endpoints.json');
    fs.writeFileSync(mixed, JSON.stringify({ ...file, shards: undefined, outputDigest: undefined, endpoints: [...file.endpoints.filter((e) => e.id !== 'library-shard3'), other] }));
    const q = `SELECT (COUNT(*) AS ?n) WHERE { SERVICE <${url['library-shard1']}> { ?a ?p ?o } SERVICE <${url['library-shard3']}> { ?a ?q ?r } }`;
    await expect(runQuery({ query: q, endpointsFiles: [mixed], timeoutMs: 60_000 })).rejects.toThrow(
      `the query is refused (mixed-graphs): the query names endpoints of 2 knowledge graphs (library: <${url['library-shard1']}>; observatory: <${url['library-shard3']}>); nothing was sent.`,
    );
    const a = await runQuery({ query: q, endpointsFiles: [mixed], timeoutMs: 60_000, mixGraphs: true });
    expect([a.route, a.engine, a.results.results!.bindings.length]).toEqual(['federation', 'comunica', 1]);
  }, 120_000);

  /** A SERVICE IRI spelling a registered endpoint otherwise: another host name for the loopback, a zero-padded port, a dot segment, an escaped hyphen. */
  const respelled = (u: string) => u.replace(/^http:\/\/127\.0\.0\.1:/, 'HTTP://localhost:0').replace('/library-', '/./library%2D');

  it('recognises a SERVICE IRI spelling a registered endpoint otherwise as that endpoint, sending, counting and naming it by its registered url', async () => {
    // Through the federation engine: 'answers a 3-shard join through the federation engine' below (its SERVICE IRIs are spelled so).
    for (const u of [respelled(url['library-shard1']), url['library-shard1'].replace('127.0.0.1', '127.1'), url['library-shard1'].replace('127.0.0.1', '[::1]')]) {
      const d = await fkgqa(['query', '--shards', build, '--format', 'tsv', `SELECT (COUNT(*) AS ?n) WHERE { SERVICE <${u}> { ?s ?p ?o } }`]);
      expect([u, d.code, d.stdout, d.stderr]).toEqual([u, 0, '?n\n35\n', expect.stringMatching(/^fkgqa query: 1 row \(direct to library-shard1; \d+ ms; 1 HTTP request\)\n$/)]);
    }
  }, 120_000);

  it('an --endpoint naming an endpoints-file entry in another spelling is that entry: no swapped urls, no two endpoints of one name', async () => {
    const served = path.join(path.resolve(build) + '.state', 'endpoints.json');
    for (const u of [url['library-shard1'].replace('/library-', '/library%2D'), `${url['library-shard1']}/`, url['library-shard1'].replace('127.0.0.1', 'localhost')]) {
      const r = await fkgqa(['query', '--endpoints', served, '--endpoint', u, '--format', 'tsv', `SELECT (COUNT(*) AS ?n) WHERE { SERVICE <${u}> { ?s ?p ?o } }`]);
      expect([u, r.code, r.stdout, r.stderr]).toEqual([u, 0, '?n\n35\n', expect.stringMatching(/^fkgqa query: 1 row \(direct to library-shard1; /)]);
    }
  }, 120_000);

  it('answers a 3-shard join through the federation engine (library function), its SERVICE IRIs spelling the registered endpoints otherwise', async () => {
    const spelled = join().replace(/<(http:[^>]+)>/g, (_m, u: string) => `<${respelled(u)}>`);
    expect(spelled).not.toContain(url['library-shard1']);
    const a = await runQuery({ query: spelled, shards: build, timeoutMs: 60_000 });
    expect(a.route).toBe('federation');
    expect(a.targets.map((t) => t.id)).toEqual(['library-shard1', 'library-shard4', 'library-shard2']);
    // Sent, counted and named by the registered url.
    expect(a.targets.map((t) => t.url)).toEqual(['library-shard1', 'library-shard4', 'library-shard2'].map((id) => url[id]));
    expect(Object.keys(a.requests).sort()).toEqual(['library-shard1', 'library-shard2', 'library-shard4'].map((id) => url[id]));
    expect(a.registry).toBe(`serve:${path.join(path.resolve(build) + '.state', 'endpoints.json')}`);
    const rows = a.results.results!.bindings.map((b) => [b.name.value, b.title.value]);
    expect(rows).toHaveLength(7);
    expect(rows[0]).toEqual(['Ada Quispe', 'Andean Notebook']);
    expect(rows).toContainEqual(['Bruno Lindqvist', 'Winter Ledger']);
    // Only what SPARQL JSON results define.
    expect(Object.keys(a.results)).toEqual(['head', 'results']);
    // The table: header, rule, 7 rows, columns aligned.
    const table = formatAnswer(a.results, 'table').trimEnd().split('\n');
    expect(table).toHaveLength(9);
    expect(table[0]).toBe('?name            ?title');
    expect(table[2]).toBe('Ada Quispe       Andean Notebook');
  }, 120_000);

  it('writes the answer as CSV, TSV and JSON that parse back to the same rows (CLI)', { tags: ['slow'], timeout: 180_000 }, async () => {
    const [csv, tsv, json] = await Promise.all(['csv', 'tsv', 'json'].map((f) => fkgqa(['query', '--shards', build, '--format', f, '--timeout', '60000', join()])));
    for (const r of [csv, tsv, json]) expect(r.code).toBe(0);
    expect(csv.stderr).toMatch(/^fkgqa query: 7 rows \(federation engine comunica over library-shard1, library-shard4, library-shard2; \d+ ms; \d+ HTTP requests\)\n$/);
    const c = parseCsv(csv.stdout, { columns: true }) as { name: string; title: string }[];
    expect(csv.stdout.split('\r\n')[0]).toBe('name,title');
    expect(c).toHaveLength(7);
    expect(c[6]).toEqual({ name: 'Bruno Lindqvist', title: 'Winter Ledger' });
    const t = parseCsv(tsv.stdout, { delimiter: '\t', quote: false, columns: true }) as Record<string, string>[];
    expect(Object.keys(t[0])).toEqual(['?name', '?title']);
    expect(t[6]).toEqual({ '?name': '"Bruno Lindqvist"', '?title': '"Winter Ledger"' });
    const j = JSON.parse(json.stdout) as { head: { vars: string[] }; results: { bindings: Record<string, { value: string }>[] } };
    expect(j.head.vars).toEqual(['name', 'title']);
    expect(j.results.bindings.map((b) => b.title.value)).toEqual(c.map((r) => r.title));
  });

  it('sends a lone SERVICE directly, reads --file, answers ASK', async () => {
    const file = path.join(dir, 'count.rq');
    fs.writeFileSync(file, `SELECT (COUNT(*) AS ?n) WHERE { SERVICE <${url['library-shard2']}> { ?b <http://valuenet/ontop/book#title> ?t } }`);
    const r = await fkgqa(['query', '--shards', build, '--file', file, '--format', 'tsv']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('?n\n8\n');
    expect(r.stderr).toMatch(/direct to library-shard2; \d+ ms; 1 HTTP request\)/);
    const ask = await fkgqa([
      'query',
      '--endpoints',
      path.join(path.resolve(build) + '.state', 'endpoints.json'),
      `ASK { SERVICE <${url['library-shard1']}> { ?s <http://valuenet/ontop/author#country> "Peru" } }`,
    ]);
    expect([ask.code, ask.stdout]).toEqual([0, 'true\n']);
  }, 120_000);
});

describe('query --sources: a query without SERVICE, the federation engine selecting the sources', () => {
  /** The join of `join()` without SERVICE clauses: which shard holds each triple pattern is the engine's to find. */
  const unserviced = `SELECT ?name ?title WHERE {
  ?a <http://valuenet/ontop/author#name> ?name .
  ?b <http://valuenet/ontop/book#ref-author_id> ?a .
  ?b <http://valuenet/ontop/book#title> ?title
} ORDER BY ?title`;

  it('--sources all answers as the unsharded graph does: 8 rows, the same rows', async () => {
    const whole = new oxigraph.Store();
    whole.load(fs.readFileSync(path.join(DEMO, 'kg', 'library.nt'), 'utf8'), { format: 'application/n-triples' });
    const expected = (whole.query(unserviced) as Map<string, oxigraph.Term>[]).map((row) => `${row.get('name')!.value}\t${row.get('title')!.value}`);
    expect(expected).toHaveLength(8);
    const a = await runQuery({ shards: build, query: unserviced, sources: ['all'] });
    expect(a.route).toBe('sources');
    expect(a.targets.map((t) => t.id)).toEqual(['library-shard1', 'library-shard2', 'library-shard3', 'library-shard4']);
    expect(a.results.results!.bindings.map((b) => `${b.name.value}\t${b.title.value}`)).toEqual(expected);
    // A graph name selects its endpoints, as all does here (this serve has graph library only): the same rows.
    const cli = await fkgqa(['query', '--shards', build, '--sources', 'library', '--format', 'tsv', unserviced]);
    expect(cli.code).toBe(0);
    expect(cli.stdout.trim().split('\n')).toEqual([
      '?name\t?title',
      ...expected.map((r) =>
        r
          .split('\t')
          .map((v) => JSON.stringify(v))
          .join('\t'),
      ),
    ]);
    expect(cli.stderr).toMatch(/^fkgqa query: 8 rows \(federation engine comunica selecting sources among library-shard1, library-shard2, library-shard3, library-shard4;/);
  }, 120_000);

  it('refuses what it cannot run, before anything is sent: jena (no source selection), a SERVICE query, an unknown source, sources of two graphs', async () => {
    const jena = await fkgqa(['query', '--shards', build, '--sources', 'all', '--federation-engine', 'jena', unserviced]);
    expect([jena.code, jena.stderr]).toEqual([
      2,
      'fkgqa: error: the federation engine jena has no source selection (it evaluates SERVICE clauses only), so --sources cannot run on it; nothing was sent: use --federation-engine comunica, or name the endpoints with SERVICE\n',
    ]);
    const service = await fkgqa(['query', '--shards', build, '--sources', 'all', join()]);
    expect([service.code, service.stderr]).toEqual([
      2,
      expect.stringContaining(
        `the query is refused (service-with-sources); nothing was sent: the query names its endpoints with SERVICE (<${url['library-shard1']}>, <${url['library-shard4']}>, <${url['library-shard2']}>)`,
      ),
    ]);
    const unknown = await fkgqa(['query', '--shards', build, '--sources', 'nowhere', unserviced]);
    expect([unknown.code, unknown.stderr]).toEqual([
      2,
      expect.stringContaining('--sources nowhere: neither all, a graph (library) nor an endpoint of the registry, which comes from the endpoints file '),
    ]);
    const two = await fkgqa(['query', '--endpoint', url['library-shard1'], 'http://127.0.0.1:9/observatory-shard1/sparql', '--sources', 'all', unserviced]);
    expect([two.code, two.stderr]).toEqual([
      2,
      expect.stringContaining('the query is refused (mixed-graphs): --sources all selects endpoints of 2 knowledge graphs (library, observatory); nothing was sent.'),
    ]);
    // Without --sources, a query without SERVICE is refused with the way to run it.
    const none = await fkgqa(['query', '--shards', build, unserviced]);
    expect([none.code, none.stderr]).toEqual([2, expect.stringContaining('Or let the federation engine select the sources of each triple pattern: --sources all (or --sources <graph>).')]);
  }, 120_000);
});

describe('query / refusals and failures: exit 2 with the reason', () => {
  it('refuses a folder given as --file (exit 2 naming it, not an internal error)', async () => {
    const dir = path.dirname(build);
    const r = await fkgqa(['query', '--shards', build, '--file', dir]);
    expect([r.code, r.stderr, r.stdout]).toEqual([2, `fkgqa: error: ${dir}: query file is a directory: give the file itself\n`, '']);
  }, 60_000);

  it('refuses a query without SERVICE, naming the registered endpoints; nothing is sent', async () => {
    const r = await fkgqa(['query', '--shards', build, 'SELECT * WHERE { ?s ?p ?o }']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('fkgqa: error: the query is refused (no-service); nothing was sent: the query names no endpoint');
    expect(r.stderr).toContain(url['library-shard3']);
    expect(r.stdout).toBe('');
  }, 60_000);

  it("refuses an endpoint that is not registered, and an undeclared prefix with the build's IRI to declare", async () => {
    const other = await fkgqa(['query', '--shards', build, 'SELECT * WHERE { SERVICE <http://example.org/sparql> { ?s ?p ?o } }']);
    expect(other.code).toBe(2);
    expect(other.stderr).toContain('the query is refused (unknown-endpoint): <http://example.org/sparql> is not a registered endpoint; nothing was sent.');
    // Where the registry comes from (the running serve's endpoints file) and its URLs (4: this serve has graph library only).
    expect(other.stderr).toContain(
      `The registry comes from the endpoints file ${path.resolve(`${build}.state`, 'endpoints.json')}; SERVICE may name only its endpoints:\n  ${url['library-shard1']}  (library-shard1)\n`,
    );
    // The port of another serve (a URL copied from elsewhere): the endpoint with the same path is named.
    const port = await fkgqa(['query', '--shards', build, 'SELECT * WHERE { SERVICE <http://127.0.0.1:1/library-shard2/sparql> { ?s ?p ?o } }']);
    expect([port.code, port.stderr]).toEqual([2, expect.stringContaining(`Did you mean <${url['library-shard2']}> (library-shard2, the same path on another host or port)?`)]);
    const option = await fkgqa(['query', '--endpoint', url['library-shard1'], url['library-shard2'], `SELECT * WHERE { SERVICE <${url['library-shard3']}> { ?s ?p ?o } }`]);
    expect([option.code, option.stderr]).toEqual([
      2,
      expect.stringContaining(
        `The registry comes from the --endpoint URLs; SERVICE may name only its endpoints:\n  ${url['library-shard1']}  (library-shard1)\n  ${url['library-shard2']}  (library-shard2)\n`,
      ),
    ]);
    const prefix = await fkgqa(['query', '--shards', build, `SELECT * WHERE { SERVICE <${url['library-shard1']}> { ?s :name ?o } }`]);
    expect(prefix.code).toBe(2);
    expect(prefix.stderr).toContain('declare it at the top of the query: PREFIX : <http://valuenet/ontop/>');
  }, 60_000);

  it("an endpoint that answered is not unreachable: a 400 is a refusal of the query, a 500 a failure on it, both with the endpoint's message (exit 2)", async () => {
    // Endpoints that answer every request (the query, and the ASK {} probe) with 400 or 500.
    const answering = http.createServer((req, res) => {
      req.resume();
      req.on('end', () =>
        req.url!.startsWith('/e400/')
          ? res.writeHead(400, { 'content-type': 'text/plain' }).end('Parse error: this endpoint speaks another dialect')
          : res.writeHead(500, { 'content-type': 'text/plain' }).end('store failure'),
      );
    });
    await new Promise<void>((r) => answering.listen(0, '127.0.0.1', () => r()));
    const base = `http://127.0.0.1:${(answering.address() as AddressInfo).port}`;
    const [e400, e500] = [`${base}/e400/sparql`, `${base}/e500/sparql`];
    try {
      const refused = await fkgqa(['query', '--endpoint', e400, `SELECT * WHERE { SERVICE <${e400}> { ?s ?p ?o } }`]);
      expect([refused.code, refused.stdout, refused.stderr]).toEqual([
        2,
        '',
        `fkgqa: error: the endpoint ${e400} refused the query: it answered HTTP 400: Parse error: this endpoint speaks another dialect\n`,
      ]);
      const failed = await fkgqa(['query', '--endpoint', e500, `SELECT * WHERE { SERVICE <${e500}> { ?s ?p ?o } }`]);
      expect([failed.code, failed.stdout, failed.stderr]).toEqual([2, '', `fkgqa: error: the endpoint ${e500} failed on the query: it answered HTTP 500: store failure\n`]);
      // Through the federation engine: the endpoint found answering 500 is named once with its status, not the engine as answering it.
      const shard = url['library-shard1'];
      const federated = await fkgqa(['query', '--endpoint', e500, shard, `SELECT * WHERE { SERVICE <${shard}> { ?s ?p ?o } SERVICE <${e500}> { ?s ?q ?r } }`]);
      expect([federated.code, federated.stdout]).toEqual([2, '']);
      expect(federated.stderr).toMatch(
        new RegExp(
          `^fkgqa: error: the federation engine \\S+ \\(SERVICE <${shard}>, <${e500}>\\) could not answer: the endpoint ${e500} answered HTTP 500 with content type text/plain \\(store failure\\), which is no SPARQL result \\(`,
        ),
      );
      expect(federated.stderr.match(/answered HTTP 500/g)).toHaveLength(1);
    } finally {
      await new Promise<void>((r) => (answering.close(() => r()), answering.closeAllConnections()));
    }
  }, 60_000);

  it('refuses, before anything is sent, an endpoint whose VoID URL answers 404 or 500 or whose endpoints file lists no VoID digest; runs when the digest agrees', async () => {
    // A fake shard endpoint per case: its SPARQL endpoint answers one row (counting the queries), its VoID answers per case.
    const digest = FAKE_VOID_DIGEST;
    const fake = await fakeShardHost((name, res) => {
      if (name === 'v404') res.writeHead(404, { 'content-type': 'text/plain' }).end('no VoID here');
      else if (name === 'v500') res.writeHead(500, { 'content-type': 'text/plain' }).end('store failure');
      // An answer that does not end: the check reads at most VOID_MAX_BYTES of it.
      else if (name === 'vhuge') {
        res.writeHead(200, { 'content-type': 'text/turtle' });
        const chunk = Buffer.alloc(1 << 20, 0x20);
        const more = () => {
          while (!res.destroyed && res.write(chunk));
          if (!res.destroyed) res.once('drain', more);
        };
        more();
      } else return false;
      return true;
    });
    const { host, queries } = fake;
    const run = (name: string, entry: { voidDigest?: string | null }) => {
      const sparql = `http://${host}/${name}/sparql`;
      const file = path.join(dir, `endpoints-${name}.json`);
      fs.writeFileSync(
        file,
        JSON.stringify({
          endpoints: [{ id: `${name}-shard1`, graph: name, role: 'shard', shard: 'shard1', url: sparql, void: `http://${host}/${name}/.well-known/void`, triples: 1, host, profile: null, ...entry }],
        }),
      );
      return fkgqa(['query', '--endpoints', file, `SELECT ?s WHERE { SERVICE <${sparql}> { ?s ?p ?o } }`]);
    };
    const refused = (name: string, why: string) =>
      `fkgqa: error: 1 endpoint(s) do not serve the VoID their endpoints file lists, or it cannot be checked (is the file stale, or the serve another build?); nothing was sent: ${name}-shard1 <http://${host}/${name}/sparql> (endpoints[0] of ${path.join(dir, `endpoints-${name}.json`)}): ${why}\n`;
    try {
      const missing = await run('v404', { voidDigest: digest });
      expect([missing.code, missing.stdout, missing.stderr]).toEqual([2, '', refused('v404', `its VoID (http://${host}/v404/.well-known/void) answered HTTP 404`)]);
      const failing = await run('v500', { voidDigest: digest });
      expect([failing.code, failing.stdout, failing.stderr]).toEqual([2, '', refused('v500', `its VoID (http://${host}/v500/.well-known/void) answered HTTP 500`)]);
      const huge = await run('vhuge', { voidDigest: digest });
      expect([huge.code, huge.stdout, huge.stderr]).toEqual([
        2,
        '',
        refused('vhuge', `its VoID (http://${host}/vhuge/.well-known/void) answered HTTP 200 with more than ${VOID_MAX_BYTES} bytes, larger than any VoID of a shard`),
      ]);
      for (const entry of [{ voidDigest: null }, {}]) {
        const unchecked = await run('nodigest', entry);
        expect([unchecked.code, unchecked.stdout, unchecked.stderr]).toEqual([
          2,
          '',
          refused('nodigest', `its endpoints file lists its VoID (http://${host}/nodigest/.well-known/void) without a voidDigest, so the VoID it serves cannot be checked`),
        ]);
      }
      expect(queries).toEqual({});
      const good = await run('good', { voidDigest: digest });
      expect([good.code, good.stderr]).toEqual([0, expect.stringMatching(/^fkgqa query: 1 row \(direct to good-shard1; /)]);
      expect(good.stdout).toContain('<urn:s>');
      expect(queries).toEqual({ good: 1 });
    } finally {
      await fake.close();
    }
  }, 60_000);

  it('checks every listed shard endpoint: without host, without a VoID URL while claiming a build, listed twice', async () => {
    const digest = FAKE_VOID_DIGEST;
    const other = createHash('sha256').update(`${FAKE_VOID}#`).digest('hex');
    const fake = await fakeShardHost();
    const { host, queries } = fake;
    // A port nothing listens on: a VoID URL there is refused the connection.
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', () => r()));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const sparql = (name: string) => `http://${host}/${name}/sparql`;
    const entry = (name: string, fields: Record<string, unknown>) => ({ id: `${name}-shard1`, graph: name, role: 'shard', shard: 'shard1', url: sparql(name), triples: 1, profile: null, ...fields });
    const write = (file: string, top: Record<string, unknown>, entries: object[]) => {
      fs.writeFileSync(path.join(dir, file), JSON.stringify({ ...top, endpoints: entries }));
      return path.join(dir, file);
    };
    const ask = (files: string[], name: string, extra: string[] = []) =>
      fkgqa(['query', ...files.flatMap((f) => ['--endpoints', f]), ...extra, `SELECT ?s WHERE { SERVICE <${sparql(name)}> { ?s ?p ?o } }`]);
    const refusal = (name: string, file: string, why: string) =>
      `fkgqa: error: 1 endpoint(s) do not serve the VoID their endpoints file lists, or it cannot be checked (is the file stale, or the serve another build?); nothing was sent: ${name}-shard1 <${sparql(name)}> (endpoints[0] of ${file}): ${why}\n`;
    const voidOf = (name: string) => `http://${host}/${name}/.well-known/void`;
    try {
      // No host: its VoID is checked all the same (another digest: refused).
      const nohost = write('nohost.json', {}, [entry('nohost', { void: voidOf('nohost'), voidDigest: other })]);
      expect(await ask([nohost], 'nohost')).toMatchObject({
        code: 2,
        stdout: '',
        stderr: refusal('nohost', nohost, `its VoID (${voidOf('nohost')}) has sha256 ${digest.slice(0, 12)}…, the placement lists ${other.slice(0, 12)}…`),
      });
      // The file names a build (not at hand here): an entry without a VoID URL cannot be checked.
      for (const [file, v] of [
        ['novoid-null.json', { void: null }],
        ['novoid-absent.json', {}],
      ] as const) {
        const f = write(file, { shards: path.join(dir, 'elsewhere-build') }, [entry('novoid', { host, ...v })]);
        expect(await ask([f], 'novoid')).toMatchObject({
          code: 2,
          stdout: '',
          stderr: refusal('novoid', f, `its entry lists no VoID URL ("void" is null or absent), though it claims a shard of a build, so what it serves cannot be checked`),
        });
      }
      // A VoID URL nothing answers at: refused, naming why.
      const down = write('down.json', {}, [entry('down', { host, void: `http://127.0.0.1:${closedPort}/down/.well-known/void`, voidDigest: digest })]);
      expect(await ask([down], 'down')).toMatchObject({
        code: 2,
        stdout: '',
        stderr: refusal('down', down, `its VoID (http://127.0.0.1:${closedPort}/down/.well-known/void) could not be read: refused the connection: nothing listens there (ECONNREFUSED)`),
      });
      // A VoID URL of another scheme: refused when the file is read, naming the file and the entry.
      for (const bad of ['ftp://127.0.0.1/void.ttl', 'file:///etc/hostname']) {
        const f = write('scheme.json', {}, [entry('scheme', { host, void: bad, voidDigest: digest })]);
        const r = await ask([f], 'scheme');
        expect([r.code, r.stdout]).toEqual([2, '']);
        expect(r.stderr).toBe(`fkgqa: error: ${f}: endpoints[0] (id scheme-shard1): the void "${bad}" is refused: not an http(s) URL (its scheme is ${new URL(bad).protocol})\n`);
      }
      // One id listed twice in a file, or in two files with different VoID digests: refused.
      const twice = write('twice.json', {}, [entry('twice', { host, void: voidOf('twice'), voidDigest: digest }), entry('twice', { host, void: voidOf('twice'), voidDigest: other })]);
      expect((await ask([twice], 'twice')).stderr).toBe(
        `fkgqa: error: ${twice}: not an endpoints file written by fkgqa serve: endpoints[1]: the id "twice-shard1" is listed twice (also endpoints[0]): each endpoint is listed once\n`,
      );
      const good = write('good.json', {}, [entry('dup', { host, void: voidOf('dup'), voidDigest: digest })]);
      const stale = write('stale.json', {}, [entry('dup', { host, void: voidOf('dup'), voidDigest: other })]);
      for (const files of [
        [good, stale],
        [stale, good],
      ]) {
        const r = await ask(files, 'dup');
        expect([r.code, r.stdout]).toEqual([2, '']);
        expect(r.stderr).toBe(
          `fkgqa: error: dup-shard1 <${sparql('dup')}> is listed twice with different VoIDs (endpoints[0] of ${files[0]}: ${voidOf('dup')}, digest ${(files[0] === good ? digest : other).slice(0, 12)}; ` +
            `endpoints[0] of ${files[1]}: ${voidOf('dup')}, digest ${(files[1] === good ? digest : other).slice(0, 12)}): one of them is stale\n`,
        );
      }
      // The same claim twice is one endpoint, checked: it runs.
      const same = await ask([good, good], 'dup');
      expect([same.code, same.stdout]).toEqual([0, expect.stringContaining('<urn:s>')]);
      expect(queries).toEqual({ dup: 1 });
    } finally {
      await fake.close();
    }
  }, 120_000);

  it("refuses two entries whose urls are swapped, and one url under two ids (each VoID names its shard's endpoint); an entry behind a reverse proxy runs", async () => {
    const served = path.join(path.resolve(build) + '.state', 'endpoints.json');
    type Entry = { id: string; url: string };
    /** The running serve's endpoints file with the urls of some entries changed, written beside it. */
    const edited = (name: string, urls: Record<string, string>) => {
      const f = JSON.parse(fs.readFileSync(served, 'utf8')) as { endpoints: Entry[] };
      for (const e of f.endpoints) e.url = urls[e.id] ?? e.url;
      const file = path.join(dir, `${name}.json`);
      fs.writeFileSync(file, JSON.stringify(f));
      return file;
    };
    const index = (id: string) => (JSON.parse(fs.readFileSync(served, 'utf8')) as { endpoints: Entry[] }).endpoints.findIndex((e) => e.id === id);
    const voidOf = (id: string) => url[id].replace(/sparql$/, '.well-known/void');
    const count = (u: string) => `SELECT (COUNT(*) AS ?n) WHERE { SERVICE <${u}> { ?s ?p ?o } }`;
    // library-shard1 holds 35 triples, library-shard2 8: with the urls swapped, library-shard1's id would reach shard2's 8.
    const direct = await fkgqa(['query', '--endpoints', served, '--format', 'tsv', count(url['library-shard1'])]);
    expect([direct.code, direct.stdout]).toEqual([0, '?n\n35\n']);
    const swapped = edited('swapped-endpoints', { 'library-shard1': url['library-shard2'], 'library-shard2': url['library-shard1'] });
    const at = (id: string, file: string) => `endpoints[${index(id)}] of ${file}`;
    const header = (n: number) =>
      `fkgqa: error: ${n} endpoint(s) are listed under the url of another registered endpoint: the VoID of one states the other's url as its SPARQL endpoint (are the urls of two entries swapped?)`;
    const s = await fkgqa(['query', '--endpoints', swapped, count(url['library-shard2'])]);
    expect([s.code, s.stdout, s.stderr]).toEqual([
      2,
      '',
      // One endpoint (library-shard1, the one the query reaches) named twice: by its own VoID and by library-shard2's.
      `${header(1)}; nothing was sent: ` +
        `library-shard1 <${url['library-shard2']}> (${at('library-shard1', swapped)}): its VoID (${voidOf('library-shard1')}) states as its SPARQL endpoint <${url['library-shard1']}>, the url of library-shard2 (${at('library-shard2', swapped)}); ` +
        `library-shard1 <${url['library-shard2']}> (${at('library-shard1', swapped)}): the VoID of library-shard2 <${url['library-shard1']}> (${at('library-shard2', swapped)}, ${voidOf('library-shard2')}) states its url as its SPARQL endpoint\n`,
    ]);
    // The same swap with the urls spelled otherwise (scheme in capitals, a `.` segment, a percent-encoded `-`): one endpoint each.
    const respelled = (u: string) => u.replace(/^http:/, 'HTTP:').replace('/library-', '/./library%2D');
    const swappedOtherwise = edited('swapped-otherwise-endpoints', { 'library-shard1': respelled(url['library-shard2']), 'library-shard2': respelled(url['library-shard1']) });
    const o = await fkgqa(['query', '--endpoints', swappedOtherwise, count(respelled(url['library-shard2']))]);
    expect([o.code, o.stdout]).toEqual([2, '']);
    expect(o.stderr).toContain(`${header(1)}; nothing was sent: library-shard1 <${respelled(url['library-shard2'])}>`);
    // The ids swapped instead: url, VoID and digest of library-shard1 and library-shard2 exchanged, each VoID stating its own url.
    const entries = (JSON.parse(fs.readFileSync(served, 'utf8')) as { endpoints: Record<string, unknown>[] }).endpoints;
    const idsSwapped = JSON.parse(fs.readFileSync(served, 'utf8')) as { endpoints: Record<string, unknown>[] };
    const [i1, i2] = [index('library-shard1'), index('library-shard2')];
    for (const k of ['url', 'void', 'voidDigest']) [idsSwapped.endpoints[i1][k], idsSwapped.endpoints[i2][k]] = [entries[i2][k], entries[i1][k]];
    const idsFile = path.join(dir, 'ids-swapped-endpoints.json');
    fs.writeFileSync(idsFile, JSON.stringify(idsSwapped));
    const ids = await fkgqa(['query', '--endpoints', idsFile, count(url['library-shard2'])]);
    expect([ids.code, ids.stdout]).toEqual([2, '']);
    expect(ids.stderr).toContain(
      `library-shard1 <${url['library-shard2']}> (${at('library-shard1', idsFile)}): its VoID (${voidOf('library-shard2')}) describes <urn:fkgqa:void:library:shard2>, not library's shard1 (<urn:fkgqa:void:library:shard1>), which its id claims`,
    );
    // mcp checks every endpoint: both entries, each by its own VoID.
    const m = await fkgqaInProcess(['mcp', '--endpoints', swapped, '--shards', build], { refusal: true });
    expect([m.code, m.stdout]).toEqual([2, '']);
    expect(m.stderr).toContain(
      `${header(2)}: library-shard1 <${url['library-shard2']}> (${at('library-shard1', swapped)}): its VoID (${voidOf('library-shard1')}) states as its SPARQL endpoint <${url['library-shard1']}>, the url of library-shard2`,
    );
    expect(m.stderr).toContain(
      `; library-shard2 <${url['library-shard1']}> (${at('library-shard2', swapped)}): its VoID (${voidOf('library-shard2')}) states as its SPARQL endpoint <${url['library-shard2']}>, the url of library-shard1`,
    );
    expect(m.stderr).toMatch(/; the MCP server did not start\n$/);
    // One url under two ids: library-shard3 listed at library-shard1's url, refused as the file is read (one url, one endpoint), VoID or not.
    const twice = edited('twice-endpoints', { 'library-shard3': url['library-shard1'] });
    const t = await fkgqa(['query', '--endpoints', twice, count(url['library-shard1'])]);
    expect([t.code, t.stdout, t.stderr]).toEqual([
      2,
      '',
      `fkgqa: error: two endpoints have one url, ${url['library-shard1']}: library-shard1 (${at('library-shard1', twice)}) and library-shard3 (${at('library-shard3', twice)}); one url is one endpoint: list it once, under one id\n`,
    ]);
    // A reverse proxy in front of serve: the entry's url is the proxy's, its VoID states serve's url, which no entry lists.
    const target = new URL(url['library-shard1']);
    // Queries forwarded, and GETs without a query (the service description the registry reads through the entry's url).
    let forwarded = 0;
    let described = 0;
    const proxy = http.createServer((req, res) => {
      if (req.method === 'GET' && !new URL(req.url!, 'http://x').searchParams.has('query')) described++;
      else forwarded++;
      const up = http.request({ host: target.hostname, port: target.port, path: req.url!.replace(/^\/behind/, ''), method: req.method, headers: { ...req.headers, host: target.host } }, (a) => {
        res.writeHead(a.statusCode!, a.headers);
        a.pipe(res);
      });
      up.on('error', () => res.destroy());
      req.pipe(up);
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', () => r()));
    try {
      const behind = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/behind${target.pathname}`;
      const proxied = edited('proxied-endpoints', { 'library-shard1': behind });
      const p = await fkgqa(['query', '--endpoints', proxied, '--format', 'tsv', count(behind)]);
      expect([p.code, p.stdout]).toEqual([0, '?n\n35\n']);
      expect(forwarded).toBe(1);
      expect(described).toBe(1);
    } finally {
      await new Promise<void>((r) => (proxy.close(() => r()), proxy.closeAllConnections()));
    }
  }, 120_000);

  /** An endpoints file beside the running serve's, VoIDs served by hand and a reverse proxy in front of serve (made once, for the three tests below). */
  type Entry = { id: string; url: string; void: string | null; voidDigest: string | null };
  type EndpointsFile = { shards?: string; outputDigest?: string; endpoints: Entry[] };
  const checks = once(async () => {
    const served = path.join(path.resolve(build) + '.state', 'endpoints.json');
    const read = () => JSON.parse(fs.readFileSync(served, 'utf8')) as EndpointsFile;
    const index = (id: string) => read().endpoints.findIndex((e) => e.id === id);
    /** The running serve's endpoints file with some entries changed, written beside it. */
    const edited = (name: string, change: (byId: Record<string, Entry>, f: EndpointsFile) => void) => {
      const f = read();
      change(Object.fromEntries(f.endpoints.map((e) => [e.id, e])), f);
      const file = path.join(dir, `${name}.json`);
      fs.writeFileSync(file, JSON.stringify(f));
      return file;
    };
    const count = (u: string) => `SELECT (COUNT(*) AS ?n) WHERE { SERVICE <${u}> { ?s ?p ?o } }`;
    const voidOf = (id: string) => url[id].replace(/sparql$/, '.well-known/void');
    const sha = (t: string) => createHash('sha256').update(t).digest('hex');
    // VoIDs served by hand: shard1's with a second shard dataset, and a VoID no fkgqa build wrote.
    const own = await (await fetch(voidOf('library-shard1'))).text();
    const texts: Record<string, string> = { '/two.ttl': `${own}\n<urn:fkgqa:void:library:shard2> a <http://rdfs.org/ns/void#Dataset> .\n`, '/foreign.ttl': FAKE_VOID };
    const voids = http.createServer((req, res) => res.writeHead(200, { 'content-type': 'text/turtle' }).end(texts[req.url!]));
    // A reverse proxy in front of serve, counting what it forwards.
    const target = new URL(url['library-shard1']);
    const forwarded: string[] = [];
    const proxy = http.createServer((req, res) => {
      forwarded.push(`${req.method} ${req.url!.replace(/\?.*/, '')}`);
      const up = http.request({ host: target.hostname, port: target.port, path: req.url!.replace(/^\/behind/, ''), method: req.method, headers: { ...req.headers, host: target.host } }, (a) => {
        res.writeHead(a.statusCode!, a.headers);
        a.pipe(res);
      });
      up.on('error', () => res.destroy());
      req.pipe(up);
    });
    await Promise.all([voids, proxy].map((x) => new Promise<void>((r) => x.listen(0, '127.0.0.1', () => r()))));
    const at = (x: http.Server) => `http://127.0.0.1:${(x.address() as AddressInfo).port}`;
    const refusal = (file: string, id: string, entryUrl: string, why: string) =>
      `fkgqa: error: 1 endpoint(s) are not what their endpoints file lists: their VoID or the endpoint answering at their url names another shard, endpoint or host than their entry (are the urls, ids or hosts of entries swapped or mistyped?); nothing was sent: ${id} <${entryUrl}> (endpoints[${index(id)}] of ${file}): ${why}\n`;
    return { edited, index, count, voidOf, sha, texts, voids, proxy, forwarded, at, refusal };
  });
  afterAll(async () => {
    if (!checks.made) return;
    const { voids, proxy } = await checks();
    await Promise.all([voids, proxy].map((x) => new Promise<void>((r) => (x.close(() => r()), x.closeAllConnections()))));
  });

  it('holds a shard entry to the one shard its VoID describes: a VoID of two shards, a foreign VoID under a build are refused; a foreign VoID in a file naming no build passes', async () => {
    const { edited, count, sha, texts, voids, at, refusal } = await checks();
    // A VoID describing two shards, its own among them: refused.
    const two = edited('two-shards-endpoints', (e) => Object.assign(e['library-shard1'], { void: `${at(voids)}/two.ttl`, voidDigest: sha(texts['/two.ttl']) }));
    const t = await fkgqa(['query', '--endpoints', two, count(url['library-shard1'])]);
    expect([t.code, t.stdout, t.stderr]).toEqual([
      2,
      '',
      refusal(
        two,
        'library-shard1',
        url['library-shard1'],
        `its VoID (${at(voids)}/two.ttl) describes 2 shards (<urn:fkgqa:void:library:shard1>, <urn:fkgqa:void:library:shard2>), not only library's shard1 (<urn:fkgqa:void:library:shard1>), which its id claims: the VoID of a shard describes that shard only`,
      ),
    ]);
    // A foreign VoID (no shard of fkgqa's) for an entry of a file naming the build: refused; in a file naming no build, read without one, it passes (its sha256 is the one listed).
    const foreign = (e: Record<string, Entry>) => Object.assign(e['library-shard1'], { void: `${at(voids)}/foreign.ttl`, voidDigest: sha(FAKE_VOID) });
    const underBuild = edited('foreign-void-endpoints', (e) => foreign(e));
    const u = await fkgqa(['query', '--endpoints', underBuild, count(url['library-shard1'])]);
    expect([u.code, u.stdout, u.stderr]).toEqual([
      2,
      '',
      refusal(
        underBuild,
        'library-shard1',
        url['library-shard1'],
        `its VoID (${at(voids)}/foreign.ttl) describes no shard of fkgqa (no void:Dataset <urn:fkgqa:void:…:shard<N>>), not library's shard1 (<urn:fkgqa:void:library:shard1>), which its id claims: is its VoID another endpoint's?`,
      ),
    ]);
    const noBuild = edited('foreign-void-nobuild-endpoints', (e, f) => {
      foreign(e);
      delete f.shards;
      delete f.outputDigest;
    });
    expect(await fkgqa(['query', '--endpoints', noBuild, '--format', 'tsv', count(url['library-shard1'])])).toMatchObject({ code: 0, stdout: '?n\n35\n' });
  }, 120_000);

  it("reads the service description through the entry's url: urls swapped behind a reverse proxy are refused, no query forwarded", async () => {
    const { edited, count, voidOf, proxy, forwarded, at, refusal } = await checks();
    // The urls of library-shard1 and library-shard2 swapped behind the proxy (VoIDs read straight from serve): refused, and no query forwarded.
    const behind = (id: string) => `${at(proxy)}/behind${new URL(url[id]).pathname}`;
    const swapped = edited('proxy-swapped-endpoints', (e) => {
      e['library-shard1'].url = behind('library-shard2');
      e['library-shard2'].url = behind('library-shard1');
    });
    const p = await fkgqa(['query', '--endpoints', swapped, count(behind('library-shard2'))]);
    expect([p.code, p.stdout, p.stderr]).toEqual([
      2,
      '',
      refusal(
        swapped,
        'library-shard1',
        behind('library-shard2'),
        `its url answers as <${url['library-shard2']}> (the sd:endpoint of the service description read through it), but its VoID (${voidOf('library-shard1')}) states its SPARQL endpoint at <${url['library-shard1']}>: is its url another entry's (urls swapped behind a proxy)?`,
      ),
    ]);
    expect(forwarded).toEqual([`GET ${new URL(behind('library-shard2')).pathname}`]);
  }, 120_000);

  it('names each entry of urls rotated over three entries once, by its own VoID', async () => {
    const { edited, index, count, voidOf } = await checks();
    // Urls rotated over three entries: each entry named once, by its own VoID.
    const rotated = edited('rotated-endpoints', (e) => {
      e['library-shard1'].url = url['library-shard2'];
      e['library-shard2'].url = url['library-shard3'];
      e['library-shard3'].url = url['library-shard1'];
    });
    const where = (id: string) => `endpoints[${index(id)}] of ${rotated}`;
    const r = await fkgqa(['query', '--endpoints', rotated, count(url['library-shard2'])]);
    expect([r.code, r.stdout, r.stderr]).toEqual([
      2,
      '',
      `fkgqa: error: 2 endpoint(s) are listed under the url of another registered endpoint: the VoID of one states the other's url as its SPARQL endpoint (are the urls of two entries swapped?); nothing was sent: ` +
        `library-shard1 <${url['library-shard2']}> (${where('library-shard1')}): its VoID (${voidOf('library-shard1')}) states as its SPARQL endpoint <${url['library-shard1']}>, the url of library-shard3 (${where('library-shard3')}); ` +
        `library-shard2 <${url['library-shard3']}> (${where('library-shard2')}): its VoID (${voidOf('library-shard2')}) states as its SPARQL endpoint <${url['library-shard2']}>, the url of library-shard1 (${where('library-shard1')})\n`,
    ]);
  }, 120_000);

  it("refuses an entry with store oxigraph whose host is not the host of the endpoint its VoID states (serve's listener); behind a proxy the listed host is serve's and runs", async () => {
    const served = path.join(path.resolve(build) + '.state', 'endpoints.json');
    const f = JSON.parse(fs.readFileSync(served, 'utf8')) as { endpoints: { id: string; host: string; store: string }[] };
    const i = f.endpoints.findIndex((e) => e.id === 'library-shard2');
    const own = new URL(url['library-shard2']).host;
    expect([f.endpoints[i].store, f.endpoints[i].host]).toEqual(['oxigraph', own]);
    f.endpoints[i].host = '127.0.0.9:7001';
    const file = path.join(dir, 'moved-host-endpoints.json');
    fs.writeFileSync(file, JSON.stringify(f));
    const r = await fkgqa(['query', '--endpoints', file, `SELECT (COUNT(*) AS ?n) WHERE { SERVICE <${url['library-shard2']}> { ?s ?p ?o } }`]);
    expect([r.code, r.stdout, r.stderr]).toEqual([
      2,
      '',
      `fkgqa: error: 1 endpoint(s) are not what their endpoints file lists: their VoID or the endpoint answering at their url names another shard, endpoint or host than their entry (are the urls, ids or hosts of entries swapped or mistyped?); nothing was sent: ` +
        `library-shard2 <${url['library-shard2']}> (endpoints[${i}] of ${file}): its entry lists host 127.0.0.9:7001, but its VoID (${url['library-shard2'].replace(/sparql$/, '.well-known/void')}) ` +
        `states its SPARQL endpoint at <${url['library-shard2']}>, on ${own}: with store oxigraph, "host" is the listener of the serve holding its triples\n`,
    ]);
  }, 60_000);

  it('a VoID URL that never answers refuses the run within VOID_READ_MS, whatever --timeout (10 minutes here)', { tags: ['slow'], timeout: 120_000 }, async () => {
    const { file, host, run, held, queries } = await silentVoid();
    const voidUrl = `http://${host}/silent/.well-known/void`;
    expect(run).toEqual({
      code: 2,
      stdout: '',
      stderr: `fkgqa: error: 1 endpoint(s) do not serve the VoID their endpoints file lists, or it cannot be checked (is the file stale, or the serve another build?); nothing was sent: silent-shard1 <http://${host}/silent/sparql> (endpoints[0] of ${file}): its VoID (${voidUrl}) could not be read: no answer within ${VOID_READ_MS} ms\n`,
    });
    expect(held).toBe(1);
    expect(queries).toEqual({});
  });

  it('a lone SERVICE SILENT whose request fails is one solution without bindings (ASK true); without SILENT the failure is the answer', async () => {
    const served = path.join(path.resolve(build) + '.state', 'endpoints.json');
    const ask = (silent: string) => `ASK { SERVICE ${silent}<${url['library-shard1']}> { ?a ?b ?c FILTER(<urn:f>(?c)) } }`;
    const s = await fkgqa(['query', '--endpoints', served, '--format', 'json', ask('SILENT ')]);
    expect([s.code, JSON.parse(s.stdout).boolean]).toEqual([0, true]);
    const loud = await fkgqa(['query', '--endpoints', served, '--format', 'json', ask('')]);
    expect([loud.code, loud.stdout]).toEqual([2, '']);
    expect(loud.stderr).toContain('<urn:f>');
  }, 120_000);

  it('names unreachable endpoints, and a build with no running serve', async () => {
    const down = ['http://127.0.0.1:9/a-shard1/sparql', 'http://127.0.0.1:9/a-shard2/sparql'];
    const r = await fkgqa(['query', '--endpoint', ...down, `SELECT * WHERE { SERVICE <${down[0]}> { ?s ?p ?o } SERVICE <${down[1]}> { ?o ?q ?r } }`]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`fkgqa: error: unreachable endpoints: ${down[0]} (`);
    expect(r.stderr).toContain(`; ${down[1]} (`);
    const none = await fkgqa(['query', '--shards', path.join(dir, 'nothing'), 'ASK {}']);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('no endpoints file of a running fkgqa serve');
    // Endpoints given as --endpoint URLs (no endpoints file): the refusal says the list is in those URLs.
    const many = Array.from({ length: 11 }, (_, i) => `http://127.0.0.1:9/a-shard${i + 1}/sparql`);
    const listed = await fkgqa(['query', '--endpoint', ...many, 'SELECT * WHERE { ?s ?p ?o }']);
    expect(listed.code).toBe(2);
    expect(listed.stderr).toContain(`  ${many[4]}  (a-shard5)\n  … and 6 more (11 endpoints, listed in the --endpoint URLs)\n`);
    expect(listed.stderr).not.toContain('endpoints file');
    const noQuery = await fkgqa(['query', '--shards', build]);
    expect([noQuery.code, noQuery.stderr]).toEqual([2, "fkgqa: error: no query: give it as an argument ('SELECT … WHERE { SERVICE <url> { … } }') or with --file q.rq (--file - reads stdin)\n"]);
    // The query after a variadic option, whatever it looks like: the last value that is not what the option takes.
    const served = path.join(path.resolve(build) + '.state', 'endpoints.json');
    for (const [option, value] of [
      ['--endpoints', served],
      ['--endpoint', url['library-shard1']],
    ]) {
      const eaten = await fkgqa(['query', option, value, 'x']);
      expect([eaten.code, eaten.stderr.split('\n')[0]]).toEqual([
        2,
        expect.stringMatching(/^fkgqa: error: the query is refused \(syntax\); nothing was sent: SPARQL syntax error at line 1, column 1: found 'x'/),
      ]);
    }
    const twoFiles = await fkgqa(['query', '--endpoints', served, served]);
    expect([twoFiles.code, twoFiles.stderr]).toEqual([
      2,
      `fkgqa: error: no query: the last value of --endpoints, ${served}, is read as an endpoints file (it exists); give the query before the options, or after -- (fkgqa query --endpoints ${served} -- 'SELECT …'), or with --file\n`,
    ]);
    // The query as the one value of a variadic option: named as taken by it, with the -- to put before it.
    const unserviced = 'SELECT ?n WHERE {\n  ?a <http://valuenet/ontop/author#name> ?n }';
    const taken = await fkgqa(['query', '--shards', build, '--sources', unserviced]);
    expect([taken.code, taken.stderr]).toEqual([
      2,
      "fkgqa: error: no query: the query (SELECT ?n WHERE { ?a <http://valuenet/on…) was taken as the value of --sources, which is a source (all, a graph name, an endpoint id or URL); give --sources its value and put -- before the query (fkgqa query --sources all -- 'SELECT …'), or give the query with --file\n",
    ]);
    const takenUrl = await fkgqa(['query', '--endpoint', 'ASK { ?s ?p ?o }']);
    expect([takenUrl.code, takenUrl.stderr]).toEqual([
      2,
      "fkgqa: error: no query: the query (ASK { ?s ?p ?o }) was taken as the value of --endpoint, which is an endpoint URL; give --endpoint its value and put -- before the query (fkgqa query --endpoint URL -- 'SELECT …'), or give the query with --file\n",
    ]);
    // A query found after a value that is no URL: the query is the query, and the value is refused as what it is.
    const notUrl = await fkgqa(['query', '--endpoint', 'ftp://127.0.0.1/sparql', 'ASK { SERVICE <ftp://127.0.0.1/sparql> { ?s ?p ?o } }']);
    expect([notUrl.code, notUrl.stderr]).toEqual([2, 'fkgqa: error: --endpoint "ftp://127.0.0.1/sparql": not an http(s) URL (its scheme is ftp:)\n']);
    const sourced = await fkgqa(['query', '--shards', build, '--sources', 'all', '--format', 'tsv', '--', `${unserviced} ORDER BY ?n LIMIT 1`]);
    expect([sourced.code, sourced.stdout]).toEqual([0, '?n\n"Ada Quispe"\n']);
    const ended = await fkgqa(['query', '--endpoints', served, '--', `ASK { SERVICE <${url['library-shard1']}> { ?s ?p ?o } }`]);
    expect([ended.code, ended.stdout]).toEqual([0, expect.stringContaining('true')]);
  }, 60_000);
});
