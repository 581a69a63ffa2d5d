/**
 * The hostile endpoints of tests/hostile-answers.test.ts (one representative per engine and verdict
 * class, in `npm test`), tests/hostile-answers.slow.test.ts (the full sweep of every hostile
 * behaviour on every federation engine, in `npm run test:slow`) and tests/engines-hostile.slow.test.ts
 * (its own modes: XML shapes, content codings, the answer limit): one HTTP server whose first path
 * segment names what it does with a query (`endpoint(mode)`), and the demo build's library graph
 * served by `fkgqa serve` beside it.
 *
 * Trustworthy verdicts: an endpoint that sends an incomplete or broken SPARQL results
 * document — the connection closed mid-body, fewer bytes than its Content-Length, JSON cut off at a
 * row boundary, garbage, no `results.bindings`, XML without its end — or that closes the connection
 * without answering, is an infrastructure failure naming that endpoint, never "0 rows" or "1 row":
 * on every federation engine, on the lone-SERVICE direct route, in `fkgqa query` (exit 2) and in
 * eval's classification. The hostile endpoint answers `ASK {}` correctly (as an endpoint that cuts
 * large answers does), so the engine's HTTP must catch it, not the probe.
 */
import http from 'node:http';
import zlib from 'node:zlib';
import type { AddressInfo } from 'node:net';
import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, expect } from 'vitest';
import { FEDERATION_ENGINES } from '../src/federation/engines.js';
import { BoundedSparqlClient } from '../src/federation/client.js';
import { registryFromUrls } from '../src/federation/registry.js';
import { createMcpServer } from '../src/mcp/server.js';
import { serve, type ShardServer } from '../src/serve/server.js';
import { demoBuild, engineTestsRun, fkgqaInProcess, tmpDir } from './helpers.js';

export const ROW = '{"b":{"type":"uri","value":"http://valuenet/ontop/data/book/1"}}';
export const JSON_HEAD = '{"head":{"vars":["b"]},"results":{"bindings":[';
export const XML_CUT =
  '<?xml version="1.0"?>\n<sparql xmlns="http://www.w3.org/2005/sparql-results#"><head><variable name="b"/></head><results><result><binding name="b"><uri>http://valuenet/ontop/data/book/1</uri></binding></result>';
export const HALF = `${JSON_HEAD}${ROW},{"b":{"type"`; // 123 bytes, then the connection is closed (chunked)
export const SHORT = `${JSON_HEAD}${ROW}`; // 110 bytes of a Content-Length of 210

export type Mode = (res: http.ServerResponse) => void;
export const json = { 'content-type': 'application/sparql-results+json' };
/** What each hostile path does with a query (other than ASK {}). */
export const MODES: Record<string, Mode> = {
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

/** A complete, valid SELECT answer of one row in SPARQL XML results (the direct route reads it). */
export const XML_GOOD = `${XML_CUT}</results></sparql>\n`;
export const ONE_ROW = `${JSON_HEAD}${ROW}]}}`;
/**
 * Answers that are no SPARQL results document of the query's form although they are 2xx (the hostile
 * tester's findings, s25): each must be the endpoint's fault, never "0 rows" nor "3 rows".
 */
export const FORMS: Record<string, Mode> = {
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
export const ERROR_PAGE = `<!DOCTYPE html>\n<html><head><title>500 Internal Server Error</title><style>body{color:red}</style></head><body>\n<h1>Internal Server Error</h1>\n<p>The server could not complete your request &amp; logged it.</p>${'<p>details</p>'.repeat(200)}</body></html>`;
/** Endpoints that answer an HTTP error (a message must not repeat itself or quote a whole page). */
export const ERRORS: Record<string, Mode> = {
  html500: (res) => res.writeHead(500, { 'content-type': 'text/html' }).end(ERROR_PAGE),
  limit503: (res) => res.writeHead(503, { 'content-type': 'text/plain' }).end('the endpoint stopped the query at its time limit of 1000 ms'),
  login: (res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body>Please log in</body></html>'),
  redirect: (res) => res.writeHead(302, { location: `http://127.0.0.1:${res.socket!.localPort ?? 0}/good/sparql` }).end(),
};

/** What the error says each hostile endpoint did (after "the endpoint <url> "), per engine where they differ. */
export function what(mode: string, engine: string): string {
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

/** SPARQL XML answers for the direct route (which reads SPARQL XML as well as JSON). */
export const XML_HEAD = '<?xml version="1.0"?>\n<sparql xmlns="http://www.w3.org/2005/sparql-results#"><head><variable name="b"/><variable name="l"/></head>';
const xmlType = { 'content-type': 'application/sparql-results+xml; charset=utf-8' };
export const XML_MODES: Record<string, Mode> = {
  xmltwo: (res) =>
    res
      .writeHead(200, xmlType)
      .end(
        `${XML_HEAD}<results><result><binding name="b"><uri>http://valuenet/ontop/data/book/1</uri></binding><binding name="l"><literal xml:lang="en">Emma</literal></binding></result><result><binding name="l"><literal datatype="http://www.w3.org/2001/XMLSchema#integer">3</literal></binding></result></results></sparql>`,
      ),
  xmlask: (res) => res.writeHead(200, xmlType).end('<?xml version="1.0"?><sparql xmlns="http://www.w3.org/2005/sparql-results#"><head/><boolean>true</boolean></sparql>'),
  xmlmismatch: (res) => res.writeHead(200, xmlType).end(`${XML_HEAD}<results><result><binding name="b"><uri>http://x/1</uri></binding></results></sparql>`),
  xmlbadterm: (res) => res.writeHead(200, xmlType).end(`${XML_HEAD}<results><result><binding name="b"><iri>http://x/1</iri></binding></result></results></sparql>`),
  xmlmaybe: (res) => res.writeHead(200, xmlType).end('<?xml version="1.0"?><sparql xmlns="http://www.w3.org/2005/sparql-results#"><head/><boolean>maybe</boolean></sparql>'),
};

/** Answers whose bytes on the wire are odd: an unsolicited gzip encoding, bytes past Content-Length, binary data. */
export const WIRE_MODES: Record<string, Mode> = {
  gzipgood: (res) => res.writeHead(200, { ...json, 'content-encoding': 'gzip' }).end(zlib.gzipSync(ONE_ROW)),
  gzipcut: (res) => res.writeHead(200, { ...json, 'content-encoding': 'gzip' }).end(zlib.gzipSync(ONE_ROW).subarray(0, 40)),
  binary: (res) => res.writeHead(200, json).end(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0xff, 0xfe])),
  down503: (res) => res.writeHead(503, { 'content-type': 'text/plain' }).end('overloaded'),
  // A complete answer, then bytes past its Content-Length on a connection the server keeps open and silent.
  longer: (res) => res.socket!.write(`HTTP/1.1 200 OK\r\ncontent-type: application/sparql-results+json\r\ncontent-length: ${Buffer.byteLength(ONE_ROW)}\r\n\r\n${ONE_ROW}GARBAGE`),
};

/**
 * Endpoints whose 503 says it stopped the query in words fkgqa serve writes, but not for this request
 * (docs/serving.md, judgeStop): busy at a limit of 1000 ms whatever limit was sent, and the limit
 * sent (its `Fkgqa-Timeout`) at once, long before it ended, a limit of its own of 0 ms, and one of 20 s, at once; and another
 * server's 503 "Query timed out" (no `Fkgqa-Stopped`, no length) at once, long before the limit sent, and once that limit ran out. And endpoints whose error is the query's:
 * another server's 500 in oxigraph's words for an unsupported function, and Virtuoso's SPARQL compiler.
 */
export const STOPS: Record<string, Mode> = {
  forgedbusy: (res) => res.writeHead(503, { 'content-type': 'text/plain', 'fkgqa-stopped': 'busy; by=request; waited=900; ms=1000', 'retry-after': '1' }).end('busy'),
  forgedlimit: (res) =>
    res.writeHead(503, { 'content-type': 'text/plain', 'fkgqa-stopped': `time-limit; by=request; ms=${String(res.req.headers['fkgqa-timeout'])}` }).end("query stopped at the request's time limit"),
  // A time limit of its own of 0 ms, answered at once: the clock cannot check it (judgeStop's MIN_OWN_LIMIT_MS).
  instantlimit: (res) => res.writeHead(503, { 'content-type': 'text/plain', 'fkgqa-stopped': 'time-limit; by=endpoint; ms=0' }).end("query stopped at the endpoint's time limit"),
  // A limit of its own of 20 s, below the limit sent, answered at once: the clock asks 19.95 s of it (judgeStop's
  // earliestStop), far more than an answer sent at once takes even on a loaded machine. The boundary itself
  // (57 ms: believed from 45.3 ms on) is checked on judgeStop with given durations in tests/limit.test.ts.
  ownlimit: (res) => res.writeHead(503, { 'content-type': 'text/plain', 'fkgqa-stopped': 'time-limit; by=endpoint; ms=20000' }).end("query stopped at the endpoint's time limit"),
  // Another server's time limit in words, without its length, answered at once: checked against the limit sent.
  timedout503: (res) => res.writeHead(503, { 'content-type': 'text/plain' }).end('Query timed out'),
  // The same once the limit sent (its Fkgqa-Timeout) ran out: another server's genuine time limit.
  timedout503late: (res) => {
    const ms = Number(res.req.headers['fkgqa-timeout']);
    setTimeout(() => res.writeHead(503, { 'content-type': 'text/plain' }).end('Query timed out'), Number.isFinite(ms) ? ms : 0);
  },
  evalerror: (res) => res.writeHead(500, { 'content-type': 'text/plain' }).end('query evaluation failed: The custom function <bif:contains> is not supported'),
  virtuoso: (res) => res.writeHead(500, { 'content-type': 'text/plain' }).end("Virtuoso 37000 Error SP030: SPARQL compiler, line 1: syntax error at 'bif' before ':contains'"),
};

/** Bytes that are no text: never in a message. */
export const BINARY = /[\u0000-\u0008\u000B\u000E-\u001F\u007F\uFFFD]/;

export const notResults = 'answered something that is not a SPARQL results document';
/** What the direct route says each endpoint of FORMS did (after "the endpoint <url> "). */
export const direct: Record<string, string> = {
  // Only SPARQL JSON and XML results are read, on every route: the engines' words (unreadTypeWords).
  ctjson: 'answered HTTP 200 with content type application/json, which is no SPARQL results type',
  ctplain: 'answered HTTP 200 with content type text/plain, which is no SPARQL results type',
  ctnone: 'answered HTTP 200 without a content type, which is no SPARQL results type',
  ctcase: `${notResults} (application/sparql-results+json): it has no "head" object`,
  html200: 'answered HTTP 200 with content type text/html, which is no SPARQL results type',
  empty200: 'answered HTTP 200 without a content type, which is no SPARQL results type',
  nocontent: 'answered HTTP 204 without a content type, which is no SPARQL results type',
  badrows: `${notResults} (application/sparql-results+json): row 1 of "results.bindings" is not an object (null)`,
  strterms: `${notResults} (application/sparql-results+json): row 1 of "results.bindings" binds ?b to no RDF term ("http://valuenet/ontop/data/book/1")`,
  boolean: `${notResults} (application/sparql-results+json): it is a boolean (an ASK answer) but the query is a SELECT`,
  both: `${notResults} (application/sparql-results+json): it has both "results" and "boolean"`,
};

/** What each engine says of each endpoint of FORMS inside a two-SERVICE query. */
export const federated = (engine: string): Record<string, string> => {
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

/** The demo build, served (library graph only) by `fkgqa serve` in this process, and the hostile server; set by `useHostileEndpoints`. */
export let shards: string;
export let server: ShardServer;
let hostile: http.Server;
let base: string;
/** Requests received per hostile path: queries and ASK {} probes apart. */
export const seen: Record<string, { queries: number; asks: number }> = {};
/** The Accept header of the last query per hostile path. */
export const accepts: Record<string, string> = {};
export const ENGINE_TESTS_RUN = Object.fromEntries(await Promise.all(FEDERATION_ENGINES.map(async (e) => [e, await engineTestsRun(e)] as const)));

/** The default modes of the hostile server: MODES, ERRORS, FORMS, XML_MODES, WIRE_MODES, STOPS; any other path closes the connection. */
const defaultMode = (mode: string): Mode => MODES[mode] ?? ERRORS[mode] ?? FORMS[mode] ?? XML_MODES[mode] ?? WIRE_MODES[mode] ?? STOPS[mode] ?? MODES.close;
const notFound: Mode = (res) => res.writeHead(404).end();

/**
 * Starts the served demo build and the hostile server before the file's tests (beforeAll) and stops
 * both after them. Every path answers `ASK {}` with true (but `login`, with the default modes).
 * @param modes what each path (its first segment) does with any other query, any path not named
 *   answering 404; default: the modes of this file (`defaultMode`)
 */
export function useHostileEndpoints(modes?: Record<string, Mode>): void {
  const answerOf = (mode: string): Mode => (modes ? (modes[mode] ?? notFound) : defaultMode(mode));
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
          if (mode === 'login' && !modes) ERRORS.login(res);
          else res.writeHead(200, json).end('{"head":{},"boolean":true}');
          return;
        }
        s.queries++;
        accepts[mode] = req.headers.accept ?? '';
        answerOf(mode)(res);
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
}

/** The URL of the hostile endpoint that behaves as `mode`. */
export const endpoint = (mode: string) => `${base}/${mode}/sparql`;

export type ToolAnswer = { content: { text: string }[]; isError?: boolean; _meta?: Record<string, unknown> };

/** Runs `body` with an MCP client of a `fkgqa mcp` server (in memory) over `urls` and the server's bounded client (its federation engine), then closes both. */
export async function withMcp(urls: string[], engine: string | undefined, body: (call: (query: string) => Promise<ToolAnswer>, sparql: BoundedSparqlClient) => Promise<void>): Promise<void> {
  const mcp = await createMcpServer({ registry: registryFromUrls(urls), setup: 'baseline', callLog: null, state: null, ...(engine ? { federationEngine: engine } : {}) });
  const [x, y] = InMemoryTransport.createLinkedPair();
  await mcp.server.connect(x);
  const client = new Client({ name: 'test', version: '1' });
  await client.connect(y);
  try {
    // The SDK's own request limit (60 s by default) above the tool's 60 s: at load 20–30 the answer came after it (SdkError: Request timed out).
    // SPARQL JSON results, not the table: the tests read the route on the note line and the rows as JSON.
    await body(
      async (query) => (await client.callTool({ name: 'run_sparql_query', arguments: { query, timeout_ms: 60_000, format: 'application/sparql-results+json' } }, { timeout: 600_000 })) as ToolAnswer,
      mcp.context.sparql,
    );
  } finally {
    await client.close();
    await mcp.close();
  }
}
export const reset = () => Object.keys(seen).forEach((k) => delete seen[k]);

/**
 * `fkgqa query` run in this process (`fkgqaInProcess`: the same commander program, exit code and
 * output as the child, without a process start and the loading of every module per call); the
 * hostile endpoints answer from this process meanwhile. tests/query.test.ts runs `fkgqa query` as a child.
 */
export async function fkgqa(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const { code, stdout, stderr } = await fkgqaInProcess(args);
  return { code, stdout, stderr };
}

// The verdicts of stops and of errors the query caused, checked on each engine (jena's in tests/hostile-answers.slow.test.ts).
/** A function oxigraph does not know, inside the SERVICE clause the shard evaluates. */
export const bif = (u: string) => `PREFIX bif: <bif:> SELECT * { SERVICE <${u}> { ?b ?p ?o FILTER(bif:contains(?o, "a")) } }`;
export const meta = (r: { _meta?: Record<string, unknown> }) => r._meta?.['fkgqa/error'] as { class: string; infrastructure: boolean; endpoint?: string } | undefined;
export const MODES_ASKED = ['forgedbusy', 'forgedlimit', 'instantlimit', 'ownlimit', 'timedout503', 'evalerror', 'virtuoso', 'html500', 'serve'];
/** The verdict wanted of each on every route: a stop that disagrees is the endpoint's error, never busy; the query's errors are the agent's; a 500 error page stays the endpoint's. */
export const WANT = {
  forgedbusy: { class: 'endpoint', infrastructure: true, busy: false },
  forgedlimit: { class: 'endpoint', infrastructure: true, busy: false },
  instantlimit: { class: 'endpoint', infrastructure: true, busy: false },
  ownlimit: { class: 'endpoint', infrastructure: true, busy: false },
  timedout503: { class: 'endpoint', infrastructure: true, busy: false },
  evalerror: { class: 'endpoint-rejected', infrastructure: false, busy: false },
  virtuoso: { class: 'endpoint-rejected', infrastructure: false, busy: false },
  html500: { class: 'endpoint', infrastructure: true, busy: false },
  serve: { class: 'endpoint-rejected', infrastructure: false, busy: false },
};
/** The class and infrastructure flag of each case, and whether the text calls the endpoint busy. */
export const verdicts = async (call: (q: string) => Promise<{ content: { text: string }[]; _meta?: Record<string, unknown> }>, query: (mode: string) => string, modes: string[]) => {
  const got: Record<string, unknown> = {};
  for (const mode of modes) {
    const r = await call(query(mode));
    const m = meta(r);
    got[mode] = { class: m?.class, infrastructure: m?.infrastructure, busy: /was busy/.test(r.content[0].text) };
  }
  return got;
};

/** The title of `expectVerdictsInTwoService`. */
export const VERDICTS_IN_TWO_SERVICE_TITLE = (engine: string) => `${engine}: the same verdicts inside a two-SERVICE query`;

/** The verdicts of WANT inside a two-SERVICE query on `engine` (run_sparql_query), and a forged time limit named as the endpoint's error. */
export async function expectVerdictsInTwoService(engine: string): Promise<void> {
  const [shard1, shard2] = [1, 2].map((n) => server.endpoint(`library-shard${n}`)!.url);
  await withMcp([...Object.keys(STOPS).map(endpoint), endpoint('html500'), shard1, shard2], engine, async (call) => {
    const two = (mode: string) =>
      mode === 'serve'
        ? `PREFIX bif: <bif:> SELECT * { SERVICE <${shard1}> { ?b ?p ?o } SERVICE <${shard2}> { ?b ?q ?t FILTER(bif:contains(?t, "a")) } }`
        : `SELECT * { SERVICE <${shard1}> { ?b ?p ?o } SERVICE <${endpoint(mode)}> { ?b ?q ?t } }`;
    const got = await verdicts(call, two, MODES_ASKED);
    expect(got).toEqual(WANT);
    const forged = await call(two('forgedlimit'));
    expect(forged.content[0].text).toMatch(
      /answered HTTP 503 \(Fkgqa-Stopped: time-limit; by=request; ms=\d+\), a stop that names a limit of \d+ ms but came \d+ ms after the request was sent: neither busy nor the query's time limit, an error of the endpoint/,
    );
    expect(meta(forged)?.endpoint).toBe(endpoint('forgedlimit'));
  });
}

/** The title of `expectTimedOut503Verdicts`. */
export const TIMED_OUT_503_TITLE = (engine: string) =>
  `${engine}: another server's 503 "Query timed out" (no Fkgqa-Stopped) is the query's time limit once it ran the limit sent, the endpoint's error at once: the same on the direct route and inside a two-SERVICE query`;

/** Another server's 503 "Query timed out" on `engine` (bounded client): the query's time limit once it ran the limit sent, the endpoint's error before; direct and inside a two-SERVICE query. */
export async function expectTimedOut503Verdicts(engine: string): Promise<void> {
  const shard1 = server.endpoint('library-shard1')!.url;
  const [late, early] = [endpoint('timedout503late'), endpoint('timedout503')];
  const client = new BoundedSparqlClient(registryFromUrls([shard1, late, early]), { engine });
  try {
    const lone = (u: string) => `SELECT * { SERVICE <${u}> { ?b ?q ?t } }`;
    const two = (u: string) => `SELECT * { SERVICE <${shard1}> { ?b ?p ?o } SERVICE <${u}> { ?b ?q ?t } }`;
    const verdict = (o: Awaited<ReturnType<BoundedSparqlClient['direct']>>) => (o.status === 'error' ? { status: o.status, endpoint: o.badAnswer?.endpoint, error: o.error } : { status: o.status });
    const json = 'application/sparql-results+json';
    await client.warm();
    // The direct queries go beside the federated one that waits out its limit (the engine's one thread takes one query at a time).
    const [directLate, federatedLate, directEarly] = await Promise.all([
      client.direct(late, lone(late), json, 3000),
      client.federated(two(late), json, { ms: 3000, from: 'start' }),
      client.direct(early, lone(early), json, 30_000),
    ]);
    const got = {
      directLate: verdict(directLate),
      federatedLate: verdict(federatedLate),
      directEarly: verdict(directEarly),
      federatedEarly: verdict(await client.federated(two(early), json, { ms: 30_000, from: 'start' })),
    };
    // Without the engines' report of such a 503 (EndpointFault.said), inside a two-SERVICE query it is the endpoint's error even when genuine.
    const atOnce = (u: string) =>
      new RegExp(
        `^the endpoint ${u.replace(/[.?]/g, '\\$&')} answered HTTP 503 saying it stopped the query at a time limit \\(Query timed out\\), a stop that names no limit, and came \\d+ ms after the request was sent with a limit of \\d+ ms: neither busy nor the query's time limit, an error of the endpoint$`,
      );
    expect(got).toEqual({
      directLate: { status: 'timeout' },
      federatedLate: { status: 'timeout' },
      directEarly: { status: 'error', endpoint: early, error: expect.stringMatching(atOnce(early)) },
      federatedEarly: { status: 'error', endpoint: early, error: expect.stringMatching(atOnce(early)) },
    });
  } finally {
    await client.close();
  }
}
