import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BoundedSparqlClient } from '../src/federation/client.js';
import { ComunicaEngine, COMUNICA_SERVICE_ENGINE } from '../src/federation/comunica/engine.js';
import { bundleFor } from '../src/federation/comunica/engine-module.js';
import { FEDERATION_ENGINES } from '../src/federation/engines.js';
import { openRegistry, readEndpointsFile, registryFromUrls, unreachableEndpoints, PROBE_MAX_BYTES } from '../src/federation/registry.js';
import { endpointUrl } from '../src/describe/describe.js';
import { runQuery } from '../src/query/query.js';
import { serve, type ShardServer } from '../src/serve/server.js';
import { MEDIA } from '../src/sparql/protocol.js';
import { demoBuild, engineTestsRun, fkgqaInProcess, ROOT, tmpDir } from './helpers.js';

/**
 * The edges of the endpoint registry and of what fkgqa reads from an endpoint: one URL rule for
 * `--endpoint` and endpoints files (http(s) only, no credentials, which agents would see), one
 * media-type rule on every route (SPARQL JSON or XML results), an endless answer that is not
 * "unreachable", and a broken Comunica bundle that the user is told about.
 */

const ENGINE_TESTS_RUN = Object.fromEntries(await Promise.all(FEDERATION_ENGINES.map(async (e) => [e, await engineTestsRun(e)] as const)));
const ROW = '{"head":{"vars":["b"]},"results":{"bindings":[{"b":{"type":"uri","value":"http://valuenet/ontop/data/book/1"}}]}}';

/** An endpoints file as fkgqa serve writes it (no pid: taken as it is), with these URLs. */
function endpointsFile(urls: string[]): string {
  const file = path.join(tmpDir('fkgqa-endpoints-'), 'endpoints.json');
  fs.writeFileSync(file, JSON.stringify({ endpoints: urls.map((url, i) => ({ id: `library-shard${i + 1}`, graph: 'library', role: 'shard', shard: `shard${i + 1}`, url })) }));
  return file;
}

describe('one URL rule for --endpoint, endpoints files and --endpoint-base: http(s), no credentials', () => {
  it('an endpoints file with a file:, ftp: or javascript: URL is refused, naming the file and the entry, as --endpoint refuses it', async () => {
    for (const [bad, why] of [
      ['file:///etc/passwd', 'not an http(s) URL (its scheme is file:)'],
      ['ftp://127.0.0.1/sparql', 'not an http(s) URL (its scheme is ftp:)'],
      ['javascript:alert(1)', 'not an http(s) URL (its scheme is javascript:)'],
    ]) {
      const file = endpointsFile(['http://127.0.0.1:9/library-shard1/sparql', bad]);
      expect(() => readEndpointsFile(file)).toThrow(`${file}: endpoints[1] (id library-shard2): the url "${bad}" is refused: ${why}`);
      expect(() => openRegistry({ endpointsFiles: [file] })).toThrow(`endpoints[1] (id library-shard2): the url "${bad}" is refused: ${why}`);
      const cli = await fkgqaInProcess(['query', '--endpoints', file, `SELECT * WHERE { SERVICE <${bad}> { ?s ?p ?o } }`]);
      expect([cli.code, cli.stderr]).toEqual([2, `fkgqa: error: ${file}: endpoints[1] (id library-shard2): the url "${bad}" is refused: ${why}\n`]);
      const flag = await fkgqaInProcess(['query', '--endpoint', bad, `SELECT * WHERE { SERVICE <${bad}> { ?s ?p ?o } }`]);
      expect([flag.code, flag.stderr]).toEqual([2, `fkgqa: error: --endpoint "${bad}": ${why}\n`]);
    }
  });

  it('a URL with credentials is refused everywhere, and the message does not show them', async () => {
    const secret = 'http://alice:s3cr3t@127.0.0.1:9/library-shard1/sparql';
    const why = 'it carries credentials (user name or password), which fkgqa refuses: endpoint URLs are shown to agents';
    const file = endpointsFile([secret]);
    const errors = [
      () => readEndpointsFile(file),
      () => registryFromUrls([secret]),
      () => openRegistry({ urls: [secret] }),
      () => endpointUrl('http://alice:s3cr3t@127.0.0.1:9', 'library-shard1'),
    ].map((f) => {
      try {
        f();
        return 'accepted';
      } catch (e) {
        return (e as Error).message;
      }
    });
    expect(errors).toEqual([
      `${file}: endpoints[0] (id library-shard1): the url "http://…@127.0.0.1:9/library-shard1/sparql" is refused: ${why}`,
      `--endpoint "http://…@127.0.0.1:9/library-shard1/sparql": ${why}`,
      `--endpoint "http://…@127.0.0.1:9/library-shard1/sparql": ${why}`,
      `--endpoint-base "http://…@127.0.0.1:9": ${why}`,
    ]);
    const q = await fkgqaInProcess(['query', '--endpoint', secret, `SELECT * WHERE { SERVICE <http://127.0.0.1:9/library-shard1/sparql> { ?s ?p ?o } }`]);
    expect(q.code).toBe(2);
    expect(q.stderr).not.toContain('s3cr3t');
    expect(q.stderr).not.toContain('alice');
  });
});

/** A foreign endpoint whose first path segment says what it answers to every query, ASK {} included. */
const MODES: Record<string, (res: http.ServerResponse) => void> = {
  plainrows: (res) => res.writeHead(200, { 'content-type': 'text/plain' }).end(ROW),
  jsonrows: (res) => res.writeHead(200, { 'content-type': 'application/json' }).end(ROW),
  rows: (res) => res.writeHead(200, { 'content-type': MEDIA.json }).end(ROW),
  // A 200 whose body never ends: a row every 50 ms, or as fast as the socket takes it.
  trickle: (res) => {
    res.writeHead(200, { 'content-type': MEDIA.json });
    res.write('{"head":{"vars":["b"]},"results":{"bindings":[');
    const t = setInterval(() => res.write('{"b":{"type":"literal","value":"x"}},'), 50);
    res.on('close', () => clearInterval(t));
  },
  flood: (res) => {
    res.writeHead(200, { 'content-type': MEDIA.json });
    res.write('{"head":{"vars":["b"]},"results":{"bindings":[');
    const chunk = '{"b":{"type":"literal","value":"x"}},'.repeat(2000);
    const more = () => {
      while (!res.destroyed && res.write(chunk));
    };
    res.on('drain', more);
    more();
  },
};

describe('what fkgqa reads from an endpoint: the same rule on every route', () => {
  let foreign: http.Server;
  let base: string;
  let s: ShardServer;
  const url = (mode: string) => `${base}/${mode}/sparql`;
  beforeAll(async () => {
    foreign = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => (MODES[req.url!.split('/')[1]] ?? ((r: http.ServerResponse) => r.writeHead(404).end()))(res));
    });
    await new Promise<void>((r) => foreign.listen(0, '127.0.0.1', () => r()));
    base = `http://127.0.0.1:${(foreign.address() as AddressInfo).port}`;
    s = await serve({ shards: await demoBuild(tmpDir('fkgqa-inputs-')), kgs: ['library'], writeFiles: false });
  }, 120_000);
  afterAll(async () => {
    await s?.close();
    foreign?.closeAllConnections();
    await new Promise<void>((r) => (foreign ? foreign.close(() => r()) : r()));
  });

  it("SPARQL JSON results sent as text/plain or application/json are the endpoint's fault on the direct route, in the words of both engines", async () => {
    const shard1 = s.endpoint('library-shard1')!.url;
    const words = (type: string) => `answered HTTP 200 with content type ${type}, which is no SPARQL results type`;
    const got: Record<string, string> = {};
    const want: Record<string, string> = {};
    for (const [mode, type] of [
      ['plainrows', 'text/plain'],
      ['jsonrows', 'application/json'],
    ]) {
      const client = new BoundedSparqlClient(registryFromUrls([url(mode), shard1]));
      try {
        const direct = await client.direct(url(mode), 'SELECT * WHERE { ?b ?p ?o }', MEDIA.json, 30_000);
        got[`${mode} direct`] = direct.status === 'error' ? `${direct.error} | ${direct.badAnswer?.endpoint}` : direct.status;
        want[`${mode} direct`] = `the endpoint ${url(mode)} ${words(type)} | ${url(mode)}`;
      } finally {
        await client.close();
      }
      for (const engine of FEDERATION_ENGINES.filter((e) => e !== 'comunica-default' && ENGINE_TESTS_RUN[e])) {
        const fc = new BoundedSparqlClient(registryFromUrls([url(mode), shard1]), { engine });
        try {
          const o = await fc.federated(`SELECT * WHERE { SERVICE <${url(mode)}> { ?b ?p ?o } SERVICE <${shard1}> { ?b ?q ?t } }`, MEDIA.json, {
            ms: 60_000,
            from: 'start',
            waitMs: 120_000,
          });
          got[`${mode} ${engine}`] = o.status === 'error' ? `${o.error} | ${o.badAnswer?.endpoint}` : o.status;
          want[`${mode} ${engine}`] = `the endpoint ${url(mode)} ${words(type)} | ${url(mode)}`;
        } finally {
          await fc.close();
        }
      }
    }
    expect(got).toEqual(want);
    // The same endpoint answering as SPARQL JSON results is read: one row.
    const ok = new BoundedSparqlClient(registryFromUrls([url('rows')]));
    const rows = await ok.direct(url('rows'), 'SELECT * WHERE { ?b ?p ?o }', MEDIA.json, 30_000);
    expect(rows.status === 'ok' && JSON.parse(rows.body).results.bindings.length).toBe(1);
  }, 300_000);

  it('/federation/sparql: a lone SERVICE asked for as CSV asks its endpoint for SPARQL JSON results and writes CSV', async () => {
    const shard1 = s.endpoint('library-shard1')!.url;
    const fed = `${new URL(shard1).origin}/federation/sparql`;
    const r = await fetch(fed, { method: 'POST', headers: { 'Content-Type': MEDIA.sparqlQuery, Accept: MEDIA.csv }, body: `SELECT (COUNT(*) AS ?n) WHERE { SERVICE <${shard1}> { ?s ?p ?o } }` });
    expect([r.status, r.headers.get('content-type'), await r.text()]).toEqual([200, 'text/csv; charset=utf-8', 'n\r\n35\r\n']);
  });

  it('an endless 200 answer is no unreachable endpoint: the probe says it answered and its answer did not end within the time or size limit', async () => {
    expect(await unreachableEndpoints([url('trickle'), url('flood'), url('rows')], 1500)).toEqual([
      { url: url('trickle'), status: 200, why: 'answered HTTP 200, but its answer to ASK {} had not ended within 1500 ms' },
      { url: url('flood'), status: 200, why: `answered HTTP 200, but its answer to ASK {} was larger than ${PROBE_MAX_BYTES} bytes` },
    ]);
    // fkgqa query: its query's answer over the answer limit, and the probe finds the endpoint faulty, not unreachable.
    let message = '';
    try {
      await runQuery({ query: `SELECT * WHERE { SERVICE <${url('flood')}> { ?b ?p ?o } }`, urls: [url('flood')], maxResultBytes: 1 << 20, timeoutMs: 30_000 });
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toBe(
      `the endpoint ${url('flood')} answered HTTP 200, but its answer to ASK {} was larger than ${PROBE_MAX_BYTES} bytes (the query: the answer of ${url('flood')} is larger than 1048576 bytes (fkgqa query's answer limit): add LIMIT, select fewer variables, or aggregate (COUNT, GROUP BY))`,
    );
  }, 120_000);
});

/** Runs a child process to its end without blocking this process. */
function run(cmd: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const c = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    c.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    c.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    c.once('error', reject);
    c.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('a Comunica bundle that is not the one npm run build recorded: the user is told, once', () => {
  /** A copy of the package whose Comunica bundle is cut (the rest linked), so that this checkout's own bundle stays whole. */
  let pkg: string;
  let s: ShardServer;
  beforeAll(async () => {
    pkg = path.join(tmpDir('fkgqa-cut-bundle-'), 'pkg');
    fs.mkdirSync(pkg);
    fs.cpSync(path.join(ROOT, 'dist'), path.join(pkg, 'dist'), { recursive: true });
    for (const f of ['bin', 'package.json']) fs.cpSync(path.join(ROOT, f), path.join(pkg, f), { recursive: true });
    for (const f of ['node_modules', 'federation', 'datasets', 'prompts', 'asp']) fs.symlinkSync(path.join(ROOT, f), path.join(pkg, f));
    const bundle = path.join(pkg, 'dist/federation/comunica/comunica.bundle.cjs');
    fs.writeFileSync(bundle, fs.readFileSync(bundle).subarray(0, 3_000_000));
    s = await serve({ shards: await demoBuild(tmpDir('fkgqa-cut-bundle-build-')), kgs: ['library'], writeFiles: false });
  }, 120_000);
  afterAll(async () => {
    await s?.close();
  });

  it('ComunicaEngine: two threads and two engines load module by module and pass one warning naming the bundle on', async () => {
    const real = bundleFor(COMUNICA_SERVICE_ENGINE)!;
    const cut = path.join(pkg, 'dist/federation/comunica/comunica.bundle.cjs');
    const warnings: string[] = [];
    const ep = (n: number) => s.endpoint(`library-shard${n}`)!.url;
    for (let i = 0; i < 2; i++) {
      const engine = new ComunicaEngine({ endpoints: [1, 2].map(ep), parallel: 2, warn: (m) => warnings.push(m) });
      (engine as unknown as { data: { bundle?: unknown } }).data.bundle = { ...real, bundle: cut };
      try {
        await engine.warm();
        expect(engine.loadedFrom).toBe('modules');
      } finally {
        await engine.close();
      }
    }
    expect(warnings).toEqual([`${cut} is not the bundle bundles.json recorded (changed or cut since npm run build): Comunica is loaded module by module; run npm run build`]);
  }, 120_000);

  it('fkgqa query and fkgqa serve (two engine threads) write the warning on stderr once, and answer', async () => {
    const ep = (n: number) => s.endpoint(`library-shard${n}`)!.url;
    const bin = path.join(pkg, 'bin/fkgqa.js');
    const cut = path.join(pkg, 'dist/federation/comunica/comunica.bundle.cjs');
    const warning = `fkgqa: warning: ${cut} is not the bundle bundles.json recorded (changed or cut since npm run build): Comunica is loaded module by module; run npm run build\n`;
    // A child of its own (not spawnSync: the endpoints answer from this process).
    const q = await run(process.execPath, [
      bin,
      'query',
      '--endpoint',
      ep(1),
      ep(2),
      '--format',
      'json',
      '-q',
      `SELECT (COUNT(*) AS ?n) WHERE { SERVICE <${ep(1)}> { ?s ?p ?o } SERVICE <${ep(2)}> { ?x ?y ?z } }`,
    ]);
    expect([q.code, q.stderr, JSON.parse(q.stdout).results.bindings[0].n.value]).toEqual([0, warning, '280']);
    const shards = s.endpointsFile().shards as string;
    const child = spawn(process.execPath, [bin, 'serve', '--shards', shards, '--kg', 'library', '--port', '0', '--state', path.join(tmpDir('fkgqa-cut-bundle-state-'), 'state'), '--engines', '2'], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (c: string) => (stderr += c));
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    try {
      // The engine's two threads started (the progress line after warm): each loaded module by module.
      while (!/federation engine comunica (started|failed)/.test(stderr) && child.exitCode === null) await new Promise((r) => setTimeout(r, 50));
      expect(stderr).toMatch(/federation engine comunica started for \/federation\/sparql \(loaded module by module/);
      expect(stderr.split(warning).length - 1).toBe(1);
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
  }, 300_000);
});
