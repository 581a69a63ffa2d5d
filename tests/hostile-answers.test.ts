import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import zlib from 'node:zlib';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerProblem, queryForm, resultsProblem } from '../src/federation/answer-check.js';
import { BoundedSparqlClient, formOf } from '../src/federation/client.js';
import { FEDERATION_ENGINES } from '../src/federation/engines.js';
import { registryFromUrls } from '../src/federation/registry.js';
import { runEval } from '../src/eval/eval.js';
import { QueryExecutor } from '../src/eval/execute.js';
import type { RunRecord } from '../src/eval/record.js';
import { createMcpServer } from '../src/mcp/server.js';
import { serve, type ShardServer } from '../src/serve/server.js';
import { demoBuild, engineTestsRun, ROOT, tmpDir } from './helpers.js';

/**
 * Trustworthy verdicts (issue 18): an endpoint that sends an incomplete or broken SPARQL results
 * document — the connection closed mid-body, fewer bytes than its Content-Length, JSON cut off at a
 * row boundary, garbage, no `results.bindings`, XML without its end — or that closes the connection
 * without answering, is an infrastructure failure naming that endpoint, never "0 rows" or "1 row":
 * on every federation engine, on the lone-SERVICE direct route, in `fkgqa query` (exit 2) and in
 * eval's classification. The hostile endpoint answers `ASK {}` correctly (as an endpoint that cuts
 * large answers does), so the engine's HTTP must catch it, not the probe.
 */

const ROW = '{"b":{"type":"uri","value":"http://valuenet/ontop/data/book/1"}}';
const JSON_HEAD = '{"head":{"vars":["b"]},"results":{"bindings":[';
const XML_CUT = '<?xml version="1.0"?>\n<sparql xmlns="http://www.w3.org/2005/sparql-results#"><head><variable name="b"/></head><results><result><binding name="b"><uri>http://valuenet/ontop/data/book/1</uri></binding></result>';
const HALF = `${JSON_HEAD}${ROW},{"b":{"type"`; // 123 bytes, then the connection is closed (chunked)
const SHORT = `${JSON_HEAD}${ROW}`; // 110 bytes of a Content-Length of 210

type Mode = (res: http.ServerResponse) => void;
const json = { 'content-type': 'application/sparql-results+json' };
/** What each hostile path does with a query (other than ASK {}). */
const MODES: Record<string, Mode> = {
  half: (res) => {
    res.writeHead(200, json);
    res.write(HALF, () => res.socket!.destroy());
  },
  short: (res) => {
    res.writeHead(200, { ...json, 'content-length': String(Buffer.byteLength(SHORT) + 100) });
    res.write(SHORT, () => res.socket!.destroy());
  },
  cut: (res) => res.writeHead(200, json).end(`${JSON_HEAD}${ROW},`),
  garbage: (res) => res.writeHead(200, json).end('hello, not json'),
  nobindings: (res) => res.writeHead(200, json).end('{"head":{"vars":["b"]}}'),
  xmlcut: (res) => res.writeHead(200, { 'content-type': 'application/sparql-results+xml' }).end(XML_CUT),
  close: (res) => res.socket!.destroy(),
};

/** A complete, valid SELECT answer of one row in SPARQL XML results (item 5: the direct route reads it). */
const XML_GOOD = `${XML_CUT}</results></sparql>\n`;
const ONE_ROW = `${JSON_HEAD}${ROW}]}}`;
/**
 * Answers that are no SPARQL results document of the query's form although they are 2xx (the hostile
 * tester's findings, s25): each must be the endpoint's fault, never "0 rows" nor "3 rows".
 */
const FORMS: Record<string, Mode> = {
  ctjson: (res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"head":{"vars":["b"]}}'),
  ctplain: (res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('{}'),
  ctnone: (res) => {
    res.removeHeader('content-type');
    res.writeHead(200).end('{"head":{"vars":["b"]}}');
  },
  ctcase: (res) => res.writeHead(200, { 'content-type': 'Application/SPARQL-Results+JSON' }).end('{}'),
  html200: (res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body>Welcome</body></html>'),
  empty200: (res) => res.writeHead(200).end(),
  nocontent: (res) => res.writeHead(204).end(),
  badrows: (res) => res.writeHead(200, json).end('{"head":{"vars":["b"]},"results":{"bindings":[null,1,"x"]}}'),
  strterms: (res) => res.writeHead(200, json).end('{"head":{"vars":["b"]},"results":{"bindings":[{"b":"http://valuenet/ontop/data/book/1"}]}}'),
  boolean: (res) => res.writeHead(200, json).end('{"head":{},"boolean":true}'),
  both: (res) => res.writeHead(200, json).end('{"head":{"vars":["b"]},"boolean":true,"results":{"bindings":[]}}'),
  rows: (res) => res.writeHead(200, json).end(ONE_ROW),
  csv: (res) => res.writeHead(200, { 'content-type': 'text/csv' }).end('b\r\nhttp://valuenet/ontop/data/book/1\r\n'),
  xmlgood: (res) => res.writeHead(200, { 'content-type': 'application/sparql-results+xml' }).end(XML_GOOD),
};

/** An error page as a web server sends it: a title in its head, a style, a long body. */
const ERROR_PAGE = `<!DOCTYPE html>\n<html><head><title>500 Internal Server Error</title><style>body{color:red}</style></head><body>\n<h1>Internal Server Error</h1>\n<p>The server could not complete your request &amp; logged it.</p>${'<p>details</p>'.repeat(200)}</body></html>`;
/** Endpoints that answer an HTTP error (item 3 of the verdicts pass: messages that repeat themselves or quote a whole page). */
const ERRORS: Record<string, Mode> = {
  html500: (res) => res.writeHead(500, { 'content-type': 'text/html' }).end(ERROR_PAGE),
  limit503: (res) => res.writeHead(503, { 'content-type': 'text/plain' }).end('the endpoint stopped the query at its time limit of 1000 ms'),
  login: (res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body>Please log in</body></html>'),
  redirect: (res) => res.writeHead(302, { location: `http://127.0.0.1:${(res.socket!.localPort ?? 0)}/good/sparql` }).end(),
};

/** What the error says each hostile endpoint did (after "the endpoint <url> "), per engine where they differ. */
function what(mode: string, engine: string): string {
  const notResults = 'answered something that is not a SPARQL results document';
  switch (mode) {
    case 'half':
      return `closed the connection before the answer was complete (HTTP 200, ${Buffer.byteLength(HALF)} bytes received)`;
    case 'short':
      return `closed the connection before the answer was complete (HTTP 200, ${Buffer.byteLength(SHORT)} bytes received)`;
    case 'cut':
      return `${notResults} (application/sparql-results+json): it is not JSON (`;
    case 'garbage':
      return `${notResults} (application/sparql-results+json): it is ${engine === 'jena' ? 'not a JSON object' : 'not JSON ('}`;
    case 'nobindings':
      return `${notResults} (application/sparql-results+json): it has neither "results" nor a boolean "boolean"`;
    case 'xmlcut':
      return `${notResults} (application/sparql-results+xml): it does not end with </sparql> (${Buffer.byteLength(XML_CUT)} bytes: cut off?)`;
    default:
      return 'closed the connection before answering';
  }
}

let shards: string;
let server: ShardServer;
let hostile: http.Server;
let base: string;
/** Requests received per hostile path: queries and ASK {} probes apart. */
const seen: Record<string, { queries: number; asks: number }> = {};
/** The Accept header of the last query per hostile path. */
const accepts: Record<string, string> = {};
const ENGINE_TESTS_RUN = Object.fromEntries(await Promise.all(FEDERATION_ENGINES.map(async (e) => [e, await engineTestsRun(e)] as const)));

beforeAll(async () => {
  shards = await demoBuild(tmpDir('fkgqa-hostile-'));
  server = await serve({ shards, kgs: ['library'], writeFiles: false });
  hostile = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const mode = req.url!.split('/')[1];
      const q = new URLSearchParams(req.method === 'GET' ? req.url!.replace(/^[^?]*\??/, '') : body).get('query') ?? '';
      const s = (seen[mode] ??= { queries: 0, asks: 0 });
      if (/^\s*ASK\s*\{\s*\}\s*$/i.test(q)) {
        s.asks++;
        // A login page answers everything with itself; the others answer the probe correctly.
        if (mode === 'login') ERRORS.login(res);
        else res.writeHead(200, json).end('{"head":{},"boolean":true}');
        return;
      }
      s.queries++;
      accepts[mode] = req.headers.accept ?? '';
      (MODES[mode] ?? ERRORS[mode] ?? FORMS[mode] ?? XML_MODES[mode] ?? WIRE_MODES[mode] ?? MODES.close)(res);
    });
  });
  await new Promise<void>((r) => hostile.listen(0, '127.0.0.1', () => r()));
  base = `http://127.0.0.1:${(hostile.address() as AddressInfo).port}`;
}, 300_000);

afterAll(async () => {
  await server?.close();
  hostile?.closeAllConnections();
  await new Promise<void>((r) => (hostile ? hostile.close(() => r()) : r()));
});

const endpoint = (mode: string) => `${base}/${mode}/sparql`;

type ToolAnswer = { content: { text: string }[]; isError?: boolean; _meta?: Record<string, unknown> };

/** Runs `body` with an MCP client of a `fkgqa mcp` server (in memory) over `urls`, then closes both. */
async function withMcp(urls: string[], engine: string | undefined, body: (call: (query: string) => Promise<ToolAnswer>) => Promise<void>): Promise<void> {
  const mcp = await createMcpServer({ registry: registryFromUrls(urls), setup: 'baseline', callLog: null, state: null, ...(engine ? { federationEngine: engine } : {}) });
  const [x, y] = InMemoryTransport.createLinkedPair();
  await mcp.server.connect(x);
  const client = new Client({ name: 'test', version: '1' });
  await client.connect(y);
  try {
    await body(async (query) => (await client.callTool({ name: 'run_sparql_query', arguments: { query, timeout_ms: 60_000 } })) as ToolAnswer);
  } finally {
    await client.close();
    await mcp.close();
  }
}
const reset = () => Object.keys(seen).forEach((k) => delete seen[k]);

describe('hostile answers / resultsProblem: a SPARQL results document is complete or says what is wrong', () => {
  it('accepts complete JSON and XML documents and names what is wrong with the others', () => {
    expect(resultsProblem(`${JSON_HEAD}${ROW}]}}`, 'application/sparql-results+json')).toBeUndefined();
    expect(resultsProblem('{"head":{},"boolean":false}', 'application/sparql-results+json; charset=utf-8')).toBeUndefined();
    expect(resultsProblem(`${XML_CUT}</results></sparql>\n`, 'application/sparql-results+xml')).toBeUndefined();
    expect(resultsProblem(`${JSON_HEAD}${ROW},`, 'application/sparql-results+json')).toBe('it is not JSON (Unexpected end of JSON input; 111 bytes)');
    expect(resultsProblem('', 'application/sparql-results+json')).toBe('it is not JSON (Unexpected end of JSON input; 0 bytes, empty)');
    expect(resultsProblem('{"head":{"vars":["b"]}}', 'application/sparql-results+json')).toBe('it has neither "results" nor a boolean "boolean"');
    expect(resultsProblem('{"head":{"vars":["b"]},"results":{}}', 'application/sparql-results+json')).toBe('it has no "results.bindings" array');
    expect(resultsProblem('{"results":{"bindings":[]}}', 'application/sparql-results+json')).toBe('it has no "head" object');
    expect(resultsProblem('[1]', 'application/sparql-results+json')).toBe('it is JSON but not an object (an array)');
    expect(resultsProblem(XML_CUT, 'application/sparql-results+xml')).toBe(`it does not end with </sparql> (${Buffer.byteLength(XML_CUT)} bytes: cut off?)`);
    expect(resultsProblem('<html></html>', 'application/sparql-results+xml')).toBe('it has no <sparql> root element');
    // CSV and TSV have no end mark: not checked (a cut connection is caught by the HTTP layer).
    expect(resultsProblem('?b\n<http://a>', 'text/tab-separated-values')).toBeUndefined();
  });
});

describe('hostile answers / run_sparql_query: an incomplete answer is an infrastructure error naming the endpoint', () => {
  for (const engine of FEDERATION_ENGINES) {
    it.skipIf(!ENGINE_TESTS_RUN[engine])(`${engine}: each hostile endpoint inside a two-SERVICE query: _meta endpoint, infrastructure true; no ASK {} probe`, async () => {
      const shard1 = server.endpoint('library-shard1')!.url;
      const modes = Object.keys(MODES);
      await withMcp([...modes.map(endpoint), shard1], engine, async (call) => {
        const got: Record<string, unknown> = {};
        const want: Record<string, unknown> = {};
        for (const mode of modes) {
          reset();
          const bad = endpoint(mode);
          const r = await call(`SELECT * { SERVICE <${shard1}> { ?b ?p ?o } SERVICE <${bad}> { ?b ?q ?t } }`);
          const text = r.content[0].text;
          got[mode] = { isError: r.isError, meta: r._meta?.['fkgqa/error'], says: text.includes(`the endpoint ${bad} ${what(mode, engine)}`) ? 'what' : text, probes: seen[mode]?.asks ?? 0 };
          want[mode] = { isError: true, meta: { class: 'endpoint', infrastructure: true, endpoint: bad }, says: 'what', probes: 0 };
        }
        expect(got).toEqual(want);
      });
    }, 300_000);
  }

  it('the direct route (a lone SERVICE): the same errors, the same _meta; a good endpoint still answers', async () => {
    const shard1 = server.endpoint('library-shard1')!.url;
    const modes = Object.keys(MODES);
    await withMcp([...modes.map(endpoint), shard1], undefined, async (call) => {
      const got: Record<string, unknown> = {};
      const want: Record<string, unknown> = {};
      for (const mode of modes) {
        const bad = endpoint(mode);
        const r = await call(`SELECT * { SERVICE <${bad}> { ?b ?q ?t } }`);
        const text = r.content[0].text;
        got[mode] = { isError: r.isError, meta: r._meta?.['fkgqa/error'], says: text.includes(`the endpoint ${bad} ${what(mode, 'direct')}`) ? 'what' : text };
        want[mode] = { isError: true, meta: { class: 'endpoint', infrastructure: true, endpoint: bad }, says: 'what' };
      }
      expect(got).toEqual(want);
      const ok = await call(`SELECT (COUNT(*) AS ?n) { SERVICE <${shard1}> { ?b ?q ?t } }`);
      expect([ok.isError ?? false, /^1 row \(direct: /.test(ok.content[0].text)]).toEqual([false, true]);
    });
  }, 120_000);

  it('the bounded client: the outcome carries badAnswer with the endpoint and what it did (direct and federated)', async () => {
    const shard1 = server.endpoint('library-shard1')!.url;
    const bad = endpoint('short');
    const client = new BoundedSparqlClient(registryFromUrls([bad, shard1]));
    try {
      const d = await client.direct(bad, 'SELECT * { ?s ?p ?o }', 'application/sparql-results+json', 30_000);
      expect(d).toMatchObject({ status: 'error', error: `the endpoint ${bad} closed the connection before the answer was complete (HTTP 200, ${Buffer.byteLength(SHORT)} bytes received)`, badAnswer: { endpoint: bad, httpStatus: 200 } });
      const f = await client.federated(`SELECT * { SERVICE <${shard1}> { ?b ?p ?o } SERVICE <${bad}> { ?b ?q ?t } }`, 'application/sparql-results+json', 60_000);
      expect(f).toMatchObject({ status: 'error', error: `the endpoint ${bad} closed the connection before the answer was complete (HTTP 200, ${Buffer.byteLength(SHORT)} bytes received)`, badAnswer: { endpoint: bad, httpStatus: 200 } });
    } finally {
      await client.close();
    }
  }, 120_000);

  it("eval's executor: the submitted query's incomplete answer is an infrastructure failure (infrastructure_error), not a wrong answer", async () => {
    const bad = endpoint('cut');
    const ex = new QueryExecutor(registryFromUrls([bad]), 30_000);
    try {
      const r = await ex.run(`SELECT * { SERVICE <${bad}> { ?b ?q ?t } }`);
      expect([r.status, r.errorClass, r.infrastructure, r.failedEndpoint, r.results]).toEqual(['error', 'endpoint', true, bad, undefined]);
    } finally {
      await ex.close();
    }
  }, 60_000);
});

describe('hostile answers / an eval run: the final query meets a cut answer inside a federated query', () => {
  it('the run ends infrastructure_error and its record names the endpoint that cut its answer (from _meta, not the probe: it answers ASK {})', async () => {
    // The endpoints file of the served library graph, with its shard2 replaced by the hostile endpoint that cuts its answers.
    const file = JSON.parse(JSON.stringify(server.endpointsFile())) as { endpoints: { graph: string; url: string; id: string }[] };
    const bad = endpoint('cut');
    const replaced = file.endpoints.find((e) => e.id === 'library-shard2')!;
    replaced.url = bad;
    const dir = tmpDir('fkgqa-hostile-eval-');
    const endpoints = path.join(dir, 'endpoints.json');
    fs.writeFileSync(endpoints, JSON.stringify(file));
    const entries = (JSON.parse(fs.readFileSync(path.join(shards, 'benchmark.json'), 'utf8')) as { entries: { index: number; kg: string }[] }).entries;
    const q1 = entries.find((e) => e.kg === 'library')!;
    const out = path.join(dir, 'runs.jsonl');
    reset();
    // The trivial agent submits the gold query with every triple pattern a UNION over all shards: a federated query.
    await runEval({ shards, endpoints, setup: 'baseline', agent: 'trivial', out, questions: [q1.index], tools: 'in-process', probe: false, timeoutMs: 30_000 });
    const [r] = fs.readFileSync(out, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as RunRecord);
    expect(r.final!.endpoints.length).toBeGreaterThan(1);
    expect([r.endReason, r.final!.status, r.final!.errorClass, r.infrastructure!.endpoint, seen.cut.queries > 0]).toEqual(['infrastructure_error', 'error', 'endpoint', bad, true]);
    expect(r.infrastructure!.what).toMatch(/^the harness's execution of the submitted query failed \(endpoint\): /);
  }, 120_000);
});

/** `fkgqa query` as a child process (asynchronous: the hostile endpoint is in this process). */
function fkgqa(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(ROOT, 'bin/fkgqa.js'), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('hostile answers / fkgqa query: exit 2, the endpoint named with what it did in words (no raw undici codes alone, not "unreachable")', () => {
  it('direct and federated (comunica): a cut answer, garbage, a connection closed before answering', async () => {
    const shard1 = server.endpoint('library-shard1')!.url;
    const [short, garbage, close] = ['short', 'garbage', 'close'].map(endpoint);
    const cases = [
      { args: [`SELECT * WHERE { SERVICE <${short}> { ?s ?p ?o } }`], stderr: `fkgqa: error: the endpoint ${short} closed the connection before the answer was complete (HTTP 200, ${Buffer.byteLength(SHORT)} bytes received)\n` },
      {
        args: [`SELECT * WHERE { SERVICE <${garbage}> { ?s ?p ?o } }`],
        stderr: `fkgqa: error: the endpoint ${garbage} answered something that is not a SPARQL results document (application/sparql-results+json): it is not JSON (Unexpected token 'h', "hello, not json" is not valid JSON; 15 bytes)\n`,
      },
      {
        args: [`SELECT * WHERE { SERVICE <${shard1}> { ?b ?p ?o } SERVICE <${short}> { ?b ?q ?t } }`],
        stderr: `fkgqa: error: the federation engine comunica (SERVICE <${shard1}>, <${short}>) could not answer: the endpoint ${short} closed the connection before the answer was complete (HTTP 200, ${Buffer.byteLength(SHORT)} bytes received)\n`,
      },
      { args: [`SELECT * WHERE { SERVICE <${close}> { ?s ?p ?o } }`], stderr: `fkgqa: error: the endpoint ${close} closed the connection before answering (ECONNRESET)\n` },
    ];
    const results = await Promise.all(cases.map((c) => fkgqa(['query', '--endpoint', short, garbage, close, shard1, ...c.args])));
    expect(results).toEqual(cases.map((c) => ({ code: 2, stdout: '', stderr: c.stderr })));
  }, 120_000);
});

describe('hostile answers / fkgqa query: an HTTP error is said once, and an error page is quoted by its first line of text', () => {
  it('a 500 HTML page and a redirect, direct and federated (comunica)', async () => {
    const shard1 = server.endpoint('library-shard1')!.url;
    const [page, redirect] = ['html500', 'redirect'].map(endpoint);
    const target = endpoint('good');
    const refusal = `answered HTTP 302 with a redirect to ${target}: not followed, a query goes only to the endpoint named in its SERVICE clause; nothing was sent there`;
    const cases = [
      { args: [`SELECT * WHERE { SERVICE <${page}> { ?s ?p ?o } }`], stderr: `fkgqa: error: the endpoint ${page} failed on the query: it answered HTTP 500: Internal Server Error\n` },
      {
        args: [`SELECT * WHERE { SERVICE <${shard1}> { ?b ?p ?o } SERVICE <${page}> { ?b ?q ?t } }`],
        stderr: `fkgqa: error: the federation engine comunica (SERVICE <${shard1}>, <${page}>) failed on the query: it answered HTTP 500: Invalid SPARQL endpoint response from ${page} (HTTP status 500): Internal Server Error\n`,
      },
      { args: [`SELECT * WHERE { SERVICE <${redirect}> { ?s ?p ?o } }`], stderr: `fkgqa: error: the endpoint ${redirect} ${refusal}\n` },
      { args: [`SELECT * WHERE { SERVICE <${shard1}> { ?b ?p ?o } SERVICE <${redirect}> { ?b ?q ?t } }`], stderr: `fkgqa: error: the federation engine comunica (SERVICE <${shard1}>, <${redirect}>) could not answer: ${redirect}?… ${refusal}\n` },
    ];
    const results = await Promise.all(cases.map((c) => fkgqa(['query', '--endpoint', page, redirect, target, shard1, ...c.args])));
    expect(results).toEqual(cases.map((c) => ({ code: 2, stdout: '', stderr: c.stderr })));
  }, 120_000);
});

describe('hostile answers / the ASK {} probe runs only when an endpoint may be at fault', () => {
  for (const engine of ['comunica', 'jena'] as const) {
    it.skipIf(!ENGINE_TESTS_RUN[engine])(`${engine}: no probe after a syntax error (nothing sent at all), after an endpoint's own time limit, nor after a login page (the engine's HTTP names it)`, async () => {
      const shard1 = server.endpoint('library-shard1')!.url;
      const [limit, login] = ['limit503', 'login'].map(endpoint);
      const client = new BoundedSparqlClient(registryFromUrls([limit, login, shard1]), { engine });
      try {
        reset();
        const syntax = await client.federated(`SELECT * { SERVICE <${shard1}> { ?b ?p ?o } SERVICE <${limit}> { ?b ?q ?t . FILTER( } }`, 'application/sparql-results+json', 30_000);
        expect([syntax.status, syntax.requests, seen.limit503]).toEqual(['error', {}, undefined]);
        const limited = await client.federated(`SELECT * { SERVICE <${shard1}> { ?b ?p ?o } SERVICE <${limit}> { ?b ?q ?t } }`, 'application/sparql-results+json', 30_000);
        expect([limited.status, seen.limit503.asks]).toEqual(['error', 0]);
        expect(limited.status === 'error' && limited.error).toContain('time limit of 1000 ms');
        // A login page (200, text/html) is caught by the engine's HTTP, which names the endpoint: no probe needed.
        const page = await client.federated(`SELECT * { SERVICE <${shard1}> { ?b ?p ?o } SERVICE <${login}> { ?b ?q ?t } }`, 'application/sparql-results+json', 30_000);
        expect([page.status, page.status === 'error' && page.badAnswer?.endpoint, seen.login.asks]).toEqual(['error', login, 0]);
        expect(page.status === 'error' && page.error).toContain(`the endpoint ${login} answered HTTP 200 with content type text/html, which is no SPARQL results type`);
      } finally {
        await client.close();
      }
    }, 120_000);
  }
});

describe('hostile answers / a 2xx answer that is no SPARQL results document of the query\'s form never counts as rows', () => {
  it('resultsProblem and answerProblem: rows must be objects of RDF terms, the form must match, any content type is checked on the direct route', () => {
    expect(resultsProblem('{"head":{"vars":["b"]},"results":{"bindings":[null,1,"x"]}}', 'application/sparql-results+json')).toBe('row 1 of "results.bindings" is not an object (null)');
    expect(resultsProblem('{"head":{"vars":["b"]},"results":{"bindings":[{},{"b":"x"}]}}', 'application/sparql-results+json')).toBe('row 2 of "results.bindings" binds ?b to no RDF term ("x")');
    expect(resultsProblem('{"head":{"vars":["b"]},"results":{"bindings":[{"b":{"type":"iri","value":"x"}}]}}', 'application/sparql-results+json')).toBe('row 1 of "results.bindings" binds ?b to no RDF term ({"type":"iri","value":"x"})');
    expect(resultsProblem(ONE_ROW, 'application/sparql-results+json', 'select')).toBeUndefined();
    expect(resultsProblem(ONE_ROW, 'application/sparql-results+json', 'ask')).toBe('it has "results" (rows) but the query is an ASK');
    expect(resultsProblem('{"head":{},"boolean":true}', 'application/sparql-results+json', 'select')).toBe('it is a boolean (an ASK answer) but the query is a SELECT');
    expect(resultsProblem('{"head":{},"boolean":true,"results":{"bindings":[]}}', 'application/sparql-results+json')).toBe('it has both "results" and "boolean"');
    expect(resultsProblem(XML_GOOD, 'application/sparql-results+xml', 'ask')).toBe('it has <results> (rows) but the query is an ASK');
    expect(resultsProblem('{}', 'Application/Sparql-Results+JSON')).toBe('it has no "head" object');
    expect(answerProblem('{"head":{"vars":["b"]}}', 'application/json', 'select')).toBe('it has neither "results" nor a boolean "boolean"');
    expect(answerProblem('', '', 'select')).toBe('it is not JSON (Unexpected end of JSON input; 0 bytes, empty)');
    expect(answerProblem(ONE_ROW, 'text/plain', 'select')).toBeUndefined();
    expect(answerProblem('b\r\nx\r\n', 'text/csv', 'select')).toBeUndefined();
    expect([queryForm('PREFIX a: <http://x#> # ASK\n ask { ?s ?p ?o }'), queryForm('BASE <http://x/> SELECT * {}'), queryForm('CONSTRUCT {} {}'), queryForm('hello')]).toEqual(['ask', 'select', 'graph', undefined]);
  });

  const notResults = 'answered something that is not a SPARQL results document';
  /** What the direct route says each endpoint did (after "the endpoint <url> "). */
  const direct: Record<string, string> = {
    ctjson: `${notResults} (application/json): it has neither "results" nor a boolean "boolean"`,
    ctplain: `${notResults} (text/plain): it has no "head" object`,
    ctnone: `${notResults} (no content type): it has neither "results" nor a boolean "boolean"`,
    ctcase: `${notResults} (application/sparql-results+json): it has no "head" object`,
    html200: `${notResults} (text/html): it is not JSON (`,
    empty200: `${notResults} (no content type): it is not JSON (Unexpected end of JSON input; 0 bytes, empty)`,
    nocontent: `${notResults} (no content type): it is not JSON (Unexpected end of JSON input; 0 bytes, empty)`,
    badrows: `${notResults} (application/sparql-results+json): row 1 of "results.bindings" is not an object (null)`,
    strterms: `${notResults} (application/sparql-results+json): row 1 of "results.bindings" binds ?b to no RDF term ("http://valuenet/ontop/data/book/1")`,
    boolean: `${notResults} (application/sparql-results+json): it is a boolean (an ASK answer) but the query is a SELECT`,
    both: `${notResults} (application/sparql-results+json): it has both "results" and "boolean"`,
  };

  it('the direct route (run_sparql_query, a lone SERVICE): each is an endpoint fault, infrastructure, the endpoint named; an ASK answered with rows too', async () => {
    const modes = Object.keys(direct);
    await withMcp([...Object.keys(FORMS).map(endpoint)], undefined, async (call) => {
      const got: Record<string, unknown> = {};
      const want: Record<string, unknown> = {};
      for (const mode of modes) {
        const bad = endpoint(mode);
        const r = await call(`SELECT * { SERVICE <${bad}> { ?b ?q ?t } }`);
        const text = r.content[0].text;
        got[mode] = { isError: r.isError, meta: r._meta?.['fkgqa/error'], says: text.includes(`the endpoint ${bad} ${direct[mode]}`) ? 'what' : text };
        want[mode] = { isError: true, meta: { class: 'endpoint', infrastructure: true, endpoint: bad }, says: 'what' };
      }
      // A complete SPARQL XML answer although JSON was asked for: read (sparqlxml-parse), one row.
      const xml = await call(`SELECT * { SERVICE <${endpoint('xmlgood')}> { ?b ?q ?t } }`);
      got.xml = [xml.isError ?? false, /^1 row \(direct: /.test(xml.content[0].text)];
      want.xml = [false, true];
      const ask = await call(`ASK { SERVICE <${endpoint('rows')}> { ?b ?q ?t } }`);
      got.ask = [ask.isError, ask.content[0].text.includes(`the endpoint ${endpoint('rows')} ${notResults} (application/sparql-results+json): it has "results" (rows) but the query is an ASK`)];
      want.ask = [true, true];
      // A valid answer still counts: one row as JSON.
      const rows = await call(`SELECT * { SERVICE <${endpoint('rows')}> { ?b ?q ?t } }`);
      got.rows = [rows.isError ?? false, /^1 row \(direct: /.test(rows.content[0].text)];
      want.rows = [false, true];
      expect(got).toEqual(want);
    });
  }, 120_000);

  it('fkgqa query (direct): exit 2, the endpoint named, for application/json, text/plain and no content type', async () => {
    const modes = ['ctjson', 'ctplain', 'ctnone'];
    const says = direct;
    const results = await Promise.all(modes.map((m) => fkgqa(['query', '--endpoint', endpoint(m), `SELECT * WHERE { SERVICE <${endpoint(m)}> { ?s ?p ?o } }`])));
    expect(results).toEqual(modes.map((m) => ({ code: 2, stdout: '', stderr: `fkgqa: error: the endpoint ${endpoint(m)} ${says[m]}\n` })));
  }, 120_000);

  /** What each engine says of each endpoint inside a two-SERVICE query. */
  const federated = (engine: string): Record<string, string> => {
    const type = (t: string) => `answered HTTP 200 with content type ${t}, which is no SPARQL results type`;
    return {
      ctjson: type('application/json'),
      ctplain: type('text/plain'),
      ctnone: 'answered HTTP 200 without a content type, which is no SPARQL results type',
      ctcase: `${notResults} (application/sparql-results+json): it has no "head" object`,
      html200: type('text/html'),
      empty200: 'answered HTTP 200 without a content type, which is no SPARQL results type',
      nocontent: 'answered HTTP 204 without a content type, which is no SPARQL results type',
      badrows: `${notResults} (application/sparql-results+json): row 1 of "results.bindings" is not an object`,
      strterms: `${notResults} (application/sparql-results+json): row 1 of "results.bindings" binds ?b to no RDF term`,
      boolean: `${notResults} (application/sparql-results+json): it is a boolean (an ASK answer) but the query is a SELECT`,
      both: `${notResults} (application/sparql-results+json): it has both "results" and "boolean"`,
      ...(engine === 'jena' ? { csv: `${type('text/csv')} with term types (CSV carries plain strings)` } : {}),
    };
  };
  for (const engine of FEDERATION_ENGINES) {
    it.skipIf(!ENGINE_TESTS_RUN[engine])(`${engine}: each inside a two-SERVICE query is a fault of that endpoint (_meta endpoint, infrastructure true); a good XML answer counts`, async () => {
      const shard1 = server.endpoint('library-shard1')!.url;
      const says = federated(engine);
      await withMcp([...Object.keys(FORMS).map(endpoint), shard1], engine, async (call) => {
        const got: Record<string, unknown> = {};
        const want: Record<string, unknown> = {};
        for (const mode of Object.keys(says)) {
          const bad = endpoint(mode);
          const r = await call(`SELECT * { SERVICE <${shard1}> { ?b ?p ?o } SERVICE <${bad}> { ?b ?q ?t } }`);
          const text = r.content[0].text;
          got[mode] = { isError: r.isError, meta: r._meta?.['fkgqa/error'], says: text.includes(`the endpoint ${bad} ${says[mode]}`) ? 'what' : text };
          want[mode] = { isError: true, meta: { class: 'endpoint', infrastructure: true, endpoint: bad }, says: 'what' };
        }
        // A complete XML answer of one row counts (here in a cross product with shard1's triples): rows, not an error.
        const xml = await call(`SELECT ?p ?b { SERVICE <${shard1}> { ?x ?p ?o } SERVICE <${endpoint('xmlgood')}> { ?b ?q ?t } } LIMIT 3`);
        got.xmlgood = [xml.isError ?? false, /^[1-9]\d* rows? \(federation engine/.test(xml.content[0].text) ? 'rows' : xml.content[0].text];
        want.xmlgood = [false, 'rows'];
        // Jena asks only for result types with term types (no text/csv, whose plain strings joined to 0 rows).
        if (engine === 'jena') {
          got.accept = accepts.xmlgood;
          want.accept = 'application/sparql-results+json, application/sparql-results+xml;q=0.9, text/tab-separated-values;q=0.7';
        }
        expect(got).toEqual(want);
      });
    }, 300_000);
  }
});

/** SPARQL XML answers for the direct route (stop 25's leftover: it read only SPARQL JSON). */
const XML_HEAD = '<?xml version="1.0"?>\n<sparql xmlns="http://www.w3.org/2005/sparql-results#"><head><variable name="b"/><variable name="l"/></head>';
const xmlType = { 'content-type': 'application/sparql-results+xml; charset=utf-8' };
const XML_MODES: Record<string, Mode> = {
  xmltwo: (res) =>
    res
      .writeHead(200, xmlType)
      .end(`${XML_HEAD}<results><result><binding name="b"><uri>http://valuenet/ontop/data/book/1</uri></binding><binding name="l"><literal xml:lang="en">Emma</literal></binding></result><result><binding name="l"><literal datatype="http://www.w3.org/2001/XMLSchema#integer">3</literal></binding></result></results></sparql>`),
  xmlask: (res) => res.writeHead(200, xmlType).end('<?xml version="1.0"?><sparql xmlns="http://www.w3.org/2005/sparql-results#"><head/><boolean>true</boolean></sparql>'),
  xmlmismatch: (res) => res.writeHead(200, xmlType).end(`${XML_HEAD}<results><result><binding name="b"><uri>http://x/1</uri></binding></results></sparql>`),
  xmlbadterm: (res) => res.writeHead(200, xmlType).end(`${XML_HEAD}<results><result><binding name="b"><iri>http://x/1</iri></binding></result></results></sparql>`),
  xmlmaybe: (res) => res.writeHead(200, xmlType).end('<?xml version="1.0"?><sparql xmlns="http://www.w3.org/2005/sparql-results#"><head/><boolean>maybe</boolean></sparql>'),
};

describe('hostile answers / the direct route reads SPARQL XML results, checked as completely as JSON', () => {
  const notResults = 'answered something that is not a SPARQL results document (application/sparql-results+xml)';
  it('run_sparql_query: a complete XML SELECT is its rows (terms kept), an XML ASK its boolean; a garbled one is the endpoint\'s fault', async () => {
    const urls = Object.keys(XML_MODES).map(endpoint);
    await withMcp(urls, undefined, async (call) => {
      const two = await call(`SELECT * { SERVICE <${endpoint('xmltwo')}> { ?b ?q ?l } }`);
      expect([two.isError ?? false, two.content[0].text.split('\n')[0].replace(/; [\d.]+ m?s\)$/, ')')]).toEqual([false, `2 rows (direct: the SERVICE wrapper was removed and the query sent to ${endpoint('xmltwo')})`]);
      expect(JSON.parse(two.content[0].text.split('\n').slice(1).join('\n'))).toEqual({
        head: { vars: ['b', 'l'] },
        results: { bindings: [{ b: { type: 'uri', value: 'http://valuenet/ontop/data/book/1' }, l: { type: 'literal', value: 'Emma', 'xml:lang': 'en' } }, { l: { type: 'literal', value: '3', datatype: 'http://www.w3.org/2001/XMLSchema#integer' } }] },
      });
      const ask = await call(`ASK { SERVICE <${endpoint('xmlask')}> { ?b ?q ?l } }`);
      expect([ask.isError ?? false, ask.content[0].text.startsWith('ASK answer: true (direct: ')]).toEqual([false, true]);
      const got: Record<string, unknown> = {};
      const want: Record<string, unknown> = {};
      const cases: [string, string, string][] = [
        ['xmlmismatch', 'SELECT', `${notResults}: it does not parse as SPARQL XML results (2:`],
        ['xmlbadterm', 'SELECT', `${notResults}: it holds an element <iri> that SPARQL XML results do not have`],
        ['xmlmaybe', 'ASK', `${notResults}: its <boolean> is neither true nor false ("maybe")`],
        ['xmlask', 'SELECT', `${notResults}: it is a boolean (an ASK answer) but the query is a SELECT`],
        ['xmltwo', 'ASK', `${notResults}: it has <results> (rows) but the query is an ASK`],
      ];
      for (const [mode, form, says] of cases) {
        const bad = endpoint(mode);
        const r = await call(form === 'ASK' ? `ASK { SERVICE <${bad}> { ?b ?q ?t } }` : `SELECT * { SERVICE <${bad}> { ?b ?q ?t } }`);
        const text = r.content[0].text;
        got[`${mode} ${form}`] = { isError: r.isError, meta: r._meta?.['fkgqa/error'], says: text.includes(`the endpoint ${bad} ${says}`) ? 'what' : text };
        want[`${mode} ${form}`] = { isError: true, meta: { class: 'endpoint', infrastructure: true, endpoint: bad }, says: 'what' };
      }
      expect(got).toEqual(want);
    });
  }, 120_000);

  it('fkgqa query: an XML answer is printed as its rows (exit 0); a garbled one exits 2 naming the endpoint', async () => {
    const [two, mismatch] = ['xmltwo', 'xmlmismatch'].map(endpoint);
    const [ok, bad] = await Promise.all([
      fkgqa(['query', '--endpoint', two, '--format', 'csv', `SELECT * WHERE { SERVICE <${two}> { ?b ?q ?l } }`]),
      fkgqa(['query', '--endpoint', mismatch, `SELECT * WHERE { SERVICE <${mismatch}> { ?b ?q ?l } }`]),
    ]);
    expect(ok).toEqual({ code: 0, stdout: 'b,l\r\nhttp://valuenet/ontop/data/book/1,Emma\r\n,3\r\n', stderr: expect.stringMatching(/^fkgqa query: 2 rows \(direct to /) });
    expect([bad.code, bad.stdout, bad.stderr.startsWith(`fkgqa: error: the endpoint ${mismatch} ${notResults}: it does not parse as SPARQL XML results (2:`)]).toEqual([2, '', true]);
  }, 120_000);

  it('the bounded client: XML stays XML where the caller accepts it, and is still checked', async () => {
    const [two, mismatch] = ['xmltwo', 'xmlmismatch'].map(endpoint);
    const client = new BoundedSparqlClient(registryFromUrls([two, mismatch]));
    try {
      const asXml = await client.direct(two, 'SELECT * { ?b ?q ?l }', 'application/sparql-results+xml', 30_000);
      const asJson = await client.direct(two, 'SELECT * { ?b ?q ?l }', 'application/sparql-results+json', 30_000);
      const garbled = await client.direct(mismatch, 'SELECT * { ?b ?q ?l }', 'application/sparql-results+xml', 30_000);
      expect([asXml.status, asXml.status === 'ok' && asXml.contentType, asJson.status === 'ok' && asJson.contentType, asJson.status === 'ok' && JSON.parse(asJson.body).results.bindings.length]).toEqual(['ok', 'application/sparql-results+xml', 'application/sparql-results+json', 2]);
      expect([garbled.status, garbled.status === 'error' && garbled.badAnswer?.endpoint]).toEqual(['error', mismatch]);
    } finally {
      await client.close();
    }
  }, 60_000);
});

describe('hostile answers / the direct route reads the form of a query with an unusual prologue, and checks its answer', () => {
  /** Prologues the first keyword reader missed (stop 25): comments between a PREFIX's parts, a comment ended by CR alone, many PREFIXes, BASE, lower case, `#` in IRIs. */
  const prologues = [
    'PREFIX # the prefix of books\n  lib: <http://valuenet/ontop/data/book#>\n',
    'prefix lib: # a comment\n <http://x/#a> base <http://x/#> ',
    '# a comment ended by CR alone\rSELECT_PLACEHOLDER',
    `BASE <http://x/> ${Array.from({ length: 60 }, (_, i) => `PREFIX p${i}: <http://x/${i}#>`).join('\n')} # "a string" <not an IRI\n`,
    'PREFIX ask: <http://x/ask#> PREFIX select.x: <http://x/s#>\n',
  ];
  const withForm = (p: string, form: string) => (p.includes('SELECT_PLACEHOLDER') ? p.replace('SELECT_PLACEHOLDER', '') : p) + form;

  it('queryForm reads each prologue (any case) in one pass; formOf falls back to the quick inspection and sparqljs', () => {
    expect(prologues.map((p) => queryForm(withForm(p, 'select * { ?b ?q ?t }')))).toEqual(prologues.map(() => 'select'));
    expect(prologues.map((p) => queryForm(withForm(p, 'ASK{ ?b ?q ?t }')))).toEqual(prologues.map(() => 'ask'));
    expect([queryForm('PREFIX a:<http://x#y>CONSTRUCT{}{}'), queryForm('ASK{a:b ?p ?o}'), queryForm('SELECTED'), queryForm('PREFIX ask: <x>'), queryForm('hello')]).toEqual(['graph', 'ask', undefined, undefined, undefined]);
    // The regular expression used before backtracked exponentially here (24 spaces: 85 ms; this many: never ends).
    expect(queryForm(`${' '.repeat(100_000)}x`)).toBeUndefined();
    expect([formOf('PREFIX a: <x>\nSELECT (COUNT(*) AS ?n) {}'), formOf('hello'), formOf('DESCRIBE <x>')]).toEqual(['select', undefined, 'graph']);
  });

  it('the bounded client: a boolean answering such a SELECT, rows answering such an ASK, are the endpoint\'s fault; good answers count', async () => {
    const [boolean, rows] = ['boolean', 'rows'].map(endpoint);
    const client = new BoundedSparqlClient(registryFromUrls([boolean, rows]));
    try {
      const got: unknown[] = [];
      const want: unknown[] = [];
      for (const p of prologues) {
        const select = await client.direct(boolean, withForm(p, 'SELECT * { ?b ?q ?t }'), 'application/sparql-results+json', 30_000);
        const ask = await client.direct(rows, withForm(p, 'ask { ?b ?q ?t }'), 'application/sparql-results+json', 30_000);
        const good = await client.direct(rows, withForm(p, 'SELECT * { ?b ?q ?t }'), 'application/sparql-results+json', 30_000);
        got.push([select.status === 'error' && select.error, ask.status === 'error' && ask.error, good.status]);
        want.push([
          `the endpoint ${boolean} answered something that is not a SPARQL results document (application/sparql-results+json): it is a boolean (an ASK answer) but the query is a SELECT`,
          `the endpoint ${rows} answered something that is not a SPARQL results document (application/sparql-results+json): it has "results" (rows) but the query is an ASK`,
          'ok',
        ]);
      }
      expect(got).toEqual(want);
    } finally {
      await client.close();
    }
  }, 60_000);
});

/** Answers whose bytes on the wire are odd (stop 25's leftovers): an unsolicited gzip encoding, bytes past Content-Length, binary data. */
const WIRE_MODES: Record<string, Mode> = {
  gzipgood: (res) => res.writeHead(200, { ...json, 'content-encoding': 'gzip' }).end(zlib.gzipSync(ONE_ROW)),
  gzipcut: (res) => res.writeHead(200, { ...json, 'content-encoding': 'gzip' }).end(zlib.gzipSync(ONE_ROW).subarray(0, 40)),
  binary: (res) => res.writeHead(200, json).end(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0xff, 0xfe])),
  down503: (res) => res.writeHead(503, { 'content-type': 'text/plain' }).end('overloaded'),
  // A complete answer, then bytes past its Content-Length on a connection the server keeps open and silent.
  longer: (res) => res.socket!.write(`HTTP/1.1 200 OK\r\ncontent-type: application/sparql-results+json\r\ncontent-length: ${Buffer.byteLength(ONE_ROW)}\r\n\r\n${ONE_ROW}GARBAGE`),
};

describe('hostile answers / an unsolicited gzip answer is decoded everywhere, a broken one is the endpoint\'s fault; no binary bytes in messages; bytes past Content-Length do not stall the next query', () => {
  /** Bytes that are no text: never in a message. */
  const BINARY = /[\u0000-\u0008\u000B\u000E-\u001F\u007F\uFFFD]/;

  it('the direct route (bounded client): a gzip answer is read; a cut gzip answer and a binary body are named in words', async () => {
    const [good, cut, binary] = ['gzipgood', 'gzipcut', 'binary'].map(endpoint);
    const client = new BoundedSparqlClient(registryFromUrls([good, cut, binary]));
    try {
      const q = 'SELECT * { ?b ?q ?t }';
      const [g, c, b] = await Promise.all([good, cut, binary].map((u) => client.direct(u, q, 'application/sparql-results+json', 30_000)));
      expect([g.status, g.status === 'ok' && JSON.parse(g.body).results.bindings.length]).toEqual(['ok', 1]);
      expect([c.status === 'error' && c.error, c.status === 'error' && c.badAnswer?.endpoint]).toEqual([`the endpoint ${cut} sent a gzip-encoded answer that does not decode (unexpected end of file; 40 bytes received)`, cut]);
      expect(b.status === 'error' && b.error).toBe(`the endpoint ${binary} answered something that is not a SPARQL results document (application/sparql-results+json): it is not JSON (binary data, not text: a compressed or binary body)`);
    } finally {
      await client.close();
    }
  }, 60_000);

  for (const engine of FEDERATION_ENGINES) {
    it.skipIf(!ENGINE_TESTS_RUN[engine])(`${engine}: a gzip answer inside a two-SERVICE query counts; a cut one is that endpoint's fault, in words without binary bytes`, async () => {
      const shard1 = server.endpoint('library-shard1')!.url;
      const [good, cut, binary] = ['gzipgood', 'gzipcut', 'binary'].map(endpoint);
      await withMcp([good, cut, binary, shard1], engine, async (call) => {
        const q = (u: string) => `SELECT ?p ?b { SERVICE <${shard1}> { ?x ?p ?o } SERVICE <${u}> { ?b ?q ?t } } LIMIT 3`;
        const g = await call(q(good));
        expect([g.isError ?? false, /^3 rows \(federation engine/.test(g.content[0].text) ? 'rows' : g.content[0].text]).toEqual([false, 'rows']);
        for (const u of [cut, binary]) {
          const r = await call(q(u));
          expect([r.isError, r._meta?.['fkgqa/error'], r.content[0].text.includes(`the endpoint ${u} `), BINARY.test(r.content[0].text)]).toEqual([true, { class: 'endpoint', infrastructure: true, endpoint: u }, true, false]);
        }
        if (engine === 'jena') expect((await call(q(cut))).content[0].text).toContain(`the endpoint ${cut} sent a gzip-encoded answer that does not decode (Unexpected end of ZLIB input stream`);
      });
    }, 300_000);

    it.skipIf(!ENGINE_TESTS_RUN[engine])(`${engine}: after an answer with bytes past its Content-Length, the next query to the same host answers (it waited for its time limit on jena)`, async () => {
      const [longer, rows] = ['longer', 'rows'].map(endpoint);
      const client = new BoundedSparqlClient(registryFromUrls([longer, rows]), { engine });
      try {
        const q = (u: string) => `SELECT * { SERVICE <${rows}> { ?b ?p ?o } SERVICE <${u}> { ?b ?q ?t } }`;
        const outcomes = [];
        for (const u of [longer, rows, rows]) outcomes.push((await client.federated(q(u), 'application/sparql-results+json', 60_000)).status);
        expect(outcomes).toEqual(['ok', 'ok', 'ok']);
      } finally {
        await client.close();
      }
    }, 300_000);
  }
});

describe('hostile answers / comunica: why an endpoint answering 503 inside a two-SERVICE query gets 2 requests (docs/federation.md)', () => {
  it.skipIf(!ENGINE_TESTS_RUN.comunica)('the first contact dereferences the endpoint URL once (source identification, cached per engine), then the query; no retry; then our ASK {} probe', async () => {
    const shard1 = server.endpoint('library-shard1')!.url;
    const down = endpoint('down503');
    const client = new BoundedSparqlClient(registryFromUrls([shard1, down]), { engine: 'comunica' });
    try {
      reset();
      const q = `SELECT * { SERVICE <${shard1}> { ?b ?p ?o } SERVICE <${down}> { ?b ?q ?t } }`;
      const first = await client.federated(q, 'application/sparql-results+json', 30_000);
      const firstSeen = { ...seen.down503 };
      const second = await client.federated(q, 'application/sparql-results+json', 30_000);
      // queries: the GET of the endpoint URL without a query (Comunica's metadata dereference) counts as one here.
      expect([first.status, first.requests[down], firstSeen, second.status, second.requests[down], seen.down503]).toEqual(['error', 3, { queries: 2, asks: 1 }, 'error', 2, { queries: 3, asks: 2 }]);
      expect(first.status === 'error' && first.error).toBe(`Invalid SPARQL endpoint response from ${down} (HTTP status 503): overloaded`);
    } finally {
      await client.close();
    }
  }, 120_000);
});
