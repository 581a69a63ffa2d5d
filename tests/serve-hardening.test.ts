import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import * as oxigraph from 'oxigraph';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { InputError } from '../src/common/errors.js';
import { readQuestions, distinctQueries } from '../src/load/questions.js';
import { DEFAULT_PARTITION_OPTIONS, digestTree } from '../src/partition/index.js';
import { answerQuery } from '../src/serve/answer.js';
import { checkQueryText, MAX_QUERY_DEPTH, MAX_SERVED_QUERY_DEPTH, nestingDepth } from '../src/sparql/guard.js';
import { MEDIA, refusedRequestLine, strictSearchParams } from '../src/sparql/protocol.js';
import { inspectQuery, quickInspect } from '../src/sparql/inspect.js';
import { rotatedName } from '../src/serve/request-log.js';
import { serializeResults, type SparqlResults } from '../src/sparql/results.js';
import { readServeEndpoints } from '../src/federation/registry.js';
import { serve, type ShardServer } from '../src/serve/server.js';
import { STATE_FILES } from '../src/build/state.js';
import { demoBuild, fkgqaInProcess, HAS_SPIDER, SPIDER, tmpDir, fileHashes, rawAnswer } from './helpers.js';

const COUNT = 'SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }';
let shards: string;
let server: ShardServer;
let url: string; // library-shard1 (35 triples)

/** Sends raw bytes on a fresh socket and returns the status line's code (fetch normalises targets). */
function rawStatus(port: number, request: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(request));
    let data = '';
    socket.on('data', (c) => {
      data += c;
      const m = /^HTTP\/1\.1 (\d{3})/.exec(data);
      if (m) {
        resolve(Number(m[1]));
        socket.destroy();
      }
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(-1));
  });
}

const get = (query: string, accept?: string, base = url) => fetch(`${base}?query=${encodeURIComponent(query)}`, { headers: accept ? { Accept: accept } : {} });
const countOf = async (r: Response) => Number(((await r.json()) as { results: { bindings: { n: { value: string } }[] } }).results.bindings[0].n.value);

const hashes = fileHashes;

let before: Record<string, string>;

beforeAll(async () => {
  // A copy of the shared demo build (tests/global-setup.ts: default options, as partition made it here).
  shards = await demoBuild(tmpDir('fkgqa-hardening-'));
  before = hashes(shards);
  server = await serve({ shards, kgs: ['library'], timeoutMs: 5_000 });
  url = server.endpoint('library-shard1')!.url;
});
afterAll(async () => {
  await server?.close();
});

describe('serve: an error boundary on every request path (400, never an exit)', () => {
  it('answers 400 to malformed request targets sent raw, and keeps answering', async () => {
    const port = Number(new URL(url).port);
    expect(await rawStatus(port, 'GET /%ZZ/sparql HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n')).toBe(400);
    expect(await rawStatus(port, 'GET http://[ HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n')).toBe(400);
    // A path starting with // is a path, not a host: 404 as /[::1/ is.
    expect(await rawStatus(port, 'GET //[::1/ HTTP/1.1\r\nHost: localhost\r\n\r\n')).toBe(404);
    expect(await countOf(await get(COUNT))).toBe(35);
  });

  it('answers 400 naming the header to a control character in a header (refused by Node’s HTTP parser before the handler), closes that connection, and keeps answering', async () => {
    const port = Number(new URL(url).port);
    const target = `${new URL(url).pathname}?query=${encodeURIComponent(COUNT)}`;
    const answer = (header: string) => rawAnswer(port, `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\n${header}\r\n\r\n`);
    const refused = (body: string) => `HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
    expect(await answer('Fkgqa-Timeout: 1\x0100')).toBe(
      refused(
        'header Fkgqa-Timeout: "1\\u000100" is not a time limit in milliseconds (a positive number): it holds the control character U+0001, which HTTP does not allow in a header value (RFC 9110 §5.5)\n',
      ),
    );
    expect(await answer('fkgqa-timeout: 5\x7f')).toBe(
      refused(
        'header Fkgqa-Timeout: "5\\u007f" is not a time limit in milliseconds (a positive number): it holds the control character U+007F, which HTTP does not allow in a header value (RFC 9110 §5.5)\n',
      ),
    );
    expect(await answer('X-Other: a\x01b')).toBe(
      refused('header "X-Other": "a\\u0001b" is refused: it holds the control character U+0001, which HTTP does not allow in a header value (RFC 9110 §5.5)\n'),
    );
    expect(await answer('Fkgqa-Time\x01out: 5')).toBe(refused('the header "Fkgqa-Time\\u0001out: 5" is refused: its name holds U+0001, which HTTP does not allow in a header name (RFC 9110 §5.1)\n'));
    expect(await rawStatus(port, `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'x'.repeat(20_000)}\r\n\r\n`)).toBe(431);
    expect(await countOf(await get(COUNT))).toBe(35);
  });

  it('answers pipelined valid requests in full and in order before refusing an unreadable request after them on the same connection', async () => {
    const port = Number(new URL(url).port);
    const target = `${new URL(url).pathname}?query=${encodeURIComponent(COUNT)}`;
    const valid = `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: ${MEDIA.json}\r\n\r\n`;
    const statusLines = (data: string) => [...data.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => Number(m[1]));
    const counts = (data: string) => [...data.matchAll(/"n":\s*\{[^}]*"value":\s*"(\d+)"/g)].map((m) => Number(m[1]));
    for (const [refused, status, why] of [
      ['GARBAGE\x01\r\n\r\n', 400, 'the request is not valid HTTP/1.1'],
      [`GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Other: a\x01b\r\n\r\n`, 400, 'header "X-Other": "a\\u0001b" is refused'],
      [`GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'x'.repeat(20_000)}\r\n\r\n`, 431, "the request's headers are larger than the server reads"],
    ] as const) {
      const one = await rawAnswer(port, valid + refused);
      expect(statusLines(one)).toEqual([200, status]);
      expect(counts(one)).toEqual([35]);
      expect(one.indexOf(why)).toBeGreaterThan(one.indexOf('"35"'));
      const two = await rawAnswer(port, valid + valid + refused);
      expect(statusLines(two)).toEqual([200, 200, status]);
      expect(counts(two)).toEqual([35, 35]);
      expect(two.indexOf(why)).toBeGreaterThan(two.lastIndexOf('"35"'));
    }
    expect(await countOf(await get(COUNT))).toBe(35);
  });

  it('answers 400 naming the line to a header line without a colon (not as a character of its name)', async () => {
    const port = Number(new URL(url).port);
    const answer = await rawAnswer(port, `GET ${new URL(url).pathname} HTTP/1.1\r\nHost: 127.0.0.1\r\nNoColonHere\r\n\r\n`);
    const body = 'the header line "NoColonHere" is refused: a header line without a colon (RFC 9112 §5: a field line is a name, a colon, then the value)\n';
    expect(answer).toBe(`HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
    expect(await countOf(await get(COUNT))).toBe(35);
  });

  it('finds the request line of the refused request in the packet Node refused: after the earlier pipelined requests, none in a packet without it', () => {
    const packet = (text: string, refusedAt: string) => ({ rawPacket: Buffer.from(text, 'latin1'), bytesParsed: text.indexOf(refusedAt) });
    const first = 'GET /a-shard1/sparql?query=ASK%7B%7D HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n';
    const second = 'POST /b-shard2/sparql HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Other: a\x01b\r\n\r\n';
    expect(refusedRequestLine(packet(second, '\x01'))).toEqual({ method: 'POST', target: '/b-shard2/sparql' });
    expect(refusedRequestLine(packet(first + second, '\x01'))).toEqual({ method: 'POST', target: '/b-shard2/sparql' });
    // A packet that starts within the headers (they spanned several packets): its first line is no request line.
    expect(refusedRequestLine(packet('X-Big: xxxx\r\nX-Other: a\x01b\r\n', '\x01'))).toBeUndefined();
    expect(refusedRequestLine({})).toBeUndefined();
  });

  it('answers 400 to a request line without an HTTP version (HTTP/0.9) and 505 to HTTP/2.0, each closing its connection', async () => {
    const port = Number(new URL(url).port);
    const target = `${new URL(url).pathname}?query=${encodeURIComponent(COUNT)}`;
    const nine = await rawAnswer(port, `GET ${target}\r\n\r\n`);
    expect(nine).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(nine).toContain('\r\nConnection: close\r\n');
    expect(nine).toContain(`the request line "GET ${target}" names no HTTP version (an HTTP/0.9 request): send HTTP/1.1 (RFC 9112 §3)\n`);
    expect(nine).not.toContain('"35"');
    const two = await rawAnswer(port, `GET ${target} HTTP/2.0\r\nHost: 127.0.0.1\r\n\r\n`);
    expect(two).toMatch(/^HTTP\/1\.1 505 HTTP Version Not Supported\r\n/);
    expect(two).toContain('\r\nConnection: close\r\n');
    expect(two).toContain('HTTP/2.0 is not supported: send HTTP/1.1 (RFC 9112)\n');
    // HTTP/1.0 is answered.
    expect(await rawStatus(port, `GET ${target} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n`)).toBe(200);
    expect(await countOf(await get(COUNT))).toBe(35);
  });

  it('answers 405 with Allow to CONNECT and closes the connection; after a pipelined valid request, once its answer is out', async () => {
    const port = Number(new URL(url).port);
    const connect = 'CONNECT example.org:443 HTTP/1.1\r\nHost: example.org:443\r\n\r\n';
    const body = 'method CONNECT is not allowed: fkgqa serve is no proxy; send SPARQL queries with GET or POST (SPARQL 1.1 Protocol §2.1)\n';
    const refused = `HTTP/1.1 405 Method Not Allowed\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nAllow: GET, POST, OPTIONS\r\nConnection: close\r\n\r\n${body}`;
    expect(await rawAnswer(port, connect)).toBe(refused);
    const valid = `GET ${new URL(url).pathname}?query=${encodeURIComponent(COUNT)} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: ${MEDIA.json}\r\n\r\n`;
    const both = await rawAnswer(port, valid + connect);
    expect([...both.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => Number(m[1]))).toEqual([200, 405]);
    expect(both.endsWith(refused)).toBe(true);
    expect(both.indexOf('"35"')).toBeGreaterThan(0);
    expect(await countOf(await get(COUNT))).toBe(35);
  });

  it('closes the connection after a refusal given before the request body was read (403, 404, 405, 413): the body it declares never comes', async () => {
    const port = Number(new URL(url).port);
    const path = new URL(url).pathname;
    // Each request declares a body it never sends: the answer must say Connection: close and the server close, not wait for the body.
    const head = (method: string, target: string, host: string, length: number) =>
      `${method} ${target} HTTP/1.1\r\nHost: ${host}\r\nContent-Type: ${MEDIA.sparqlQuery}\r\nContent-Length: ${length}\r\n\r\n`;
    for (const [request, status] of [
      [head('POST', path, 'evil.example', 100_000_000), 403],
      [head('POST', path, 'evil.example', 100), 403],
      [head('POST', '/no-such-path', '127.0.0.1', 100), 404],
      [head('PUT', path, '127.0.0.1', 100), 405],
      [head('POST', path, '127.0.0.1', 100_000_000), 413],
    ] as const) {
      const answer = await rawAnswer(port, request);
      expect(answer).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
      expect(answer.slice(0, answer.indexOf('\r\n\r\n'))).toContain('\r\nConnection: close');
    }
    // A request without a body stays on its connection after a refusal: the next request on it is answered.
    const ask = `GET ${path}?query=ASK%7B%7D HTTP/1.1\r\nHost: `;
    const kept = await rawAnswer(port, `${ask}evil.example\r\n\r\n${ask}127.0.0.1\r\nConnection: close\r\n\r\n`);
    expect([...kept.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => Number(m[1]))).toEqual([403, 200]);
    expect(await countOf(await get(COUNT))).toBe(35);
  });

  it('bound to loopback, answers 403 to a Host that is not a loopback name (DNS rebinding), 200 to loopback names', async () => {
    const port = Number(new URL(url).port);
    const path = new URL(url).pathname;
    const ask = `GET ${path}?query=ASK%7B%7D HTTP/1.1\r\nHost: `;
    expect(await rawStatus(port, `${ask}evil.example\r\n\r\n`)).toBe(403);
    expect(await rawStatus(port, `${ask}evil.example:${port}\r\n\r\n`)).toBe(403);
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, '127.0.0.1']) expect(await rawStatus(port, `${ask}${host}\r\n\r\n`)).toBe(200);
    // The server remembers the last Host it allowed (clients send the same one every time) and the
    // routes of endpoint paths: a rebinding Host right after an allowed one is still refused, and an
    // unknown endpoint beside a known one is still 404.
    expect(await rawStatus(port, `${ask}evil.example\r\n\r\n`)).toBe(403);
    expect(await rawStatus(port, `${ask}127.0.0.1:${port}\r\n\r\n`)).toBe(200);
    expect(await rawStatus(port, `GET ${path.replace(/[^/]+\/sparql$/, 'nope-shard9/sparql')}?query=ASK%7B%7D HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`)).toBe(404);
  });

  it('answers 400 naming the parameter to %FF (not UTF-8) in query, GET and form POST', async () => {
    const r = await fetch(`${url}?query=SELECT%FF`);
    expect(r.status).toBe(400);
    expect(await r.text()).toContain('parameter query');
    const form = await fetch(url, { method: 'POST', headers: { 'Content-Type': MEDIA.form }, body: 'query=ASK%20%7B%7D%FF' });
    expect(form.status).toBe(400);
    expect(await form.text()).toContain('parameter query');
    // Valid UTF-8 and a lone % still read as URLSearchParams reads them.
    expect(strictSearchParams('?query=caf%C3%A9+x&b=50%').get('query')).toBe('café x');
    expect(strictSearchParams('b=50%').get('b')).toBe('50%');
    expect(() => strictSearchParams('%FF=1')).toThrow(/parameter name/);
  });
});

describe('serve: the text guard (before any parsing)', () => {
  it('counts bracket depth, ignoring strings, IRIs, comments and escaped local names', () => {
    expect(nestingDepth('SELECT * { ?s ?p ?o }')).toBe(1);
    expect(nestingDepth('SELECT * { ?s <http://e/p> "{{{(" . # {{{ [[\n ?s :a\\( ?o FILTER(?o < 3 && (?o > 1)) }')).toBe(3);
    expect(nestingDepth(`SELECT * { ?s ?p """ {{ " }} """ , '{' }`)).toBe(1);
    expect(nestingDepth('{'.repeat(700) + '}'.repeat(700))).toBe(700);
    // A `<` after an operand in an expression is less-than: the brackets after it count; in a triple pattern an IRI starts there.
    expect(nestingDepth('SELECT * { FILTER(?a<((1))&&?b>0) }')).toBe(4);
    expect(nestingDepth('SELECT * { FILTER(?a<=((1))||?b>0) }')).toBe(4);
    expect(nestingDepth('SELECT * { ?s <urn:a((b> ?o FILTER(<urn:((>(?o)) }')).toBe(3);
  });

  it('answers 400 naming the limit to ~700 nested {} (6 KB GET) and 5,000 nested OPTIONAL', async () => {
    const braces = await get('SELECT * WHERE ' + '{'.repeat(700) + '}'.repeat(700));
    expect(braces.status).toBe(400);
    expect(await braces.text()).toContain('the limit is 320');
    expect(MAX_SERVED_QUERY_DEPTH).toBe(320);
    const optional = await fetch(url, {
      method: 'POST',
      headers: { 'Content-Type': MEDIA.sparqlQuery },
      body: 'SELECT * WHERE { ?s ?p ?o ' + 'OPTIONAL { ?s ?p ?o '.repeat(5000) + '}'.repeat(5000) + '}',
    });
    expect(optional.status).toBe(400);
    expect(await optional.text()).toContain('nest 5001 levels');
    expect(() => checkQueryText('x'.repeat(11), { maxLength: 10, maxDepth: 5 })).toThrow(/query too long: 11 characters, the limit is 10/);
    expect(await countOf(await get(COUNT))).toBe(35);
  });
});

describe('serve: quick inspection of plain queries (no sparqljs parse)', () => {
  it('answers only when keywords settle form, kind and features; otherwise defers to sparqljs', () => {
    expect(quickInspect('SELECT ?o WHERE { <http://e/s> <http://e/p> ?o }')).toEqual({ form: 'bindings', kind: 'data', features: new Set(), hasFrom: false });
    expect(quickInspect('ask { ?s ?p "SERVICE" } # FROM count')).toEqual({ form: 'boolean', kind: 'ask', features: new Set(), hasFrom: false });
    expect(quickInspect('DESCRIBE <http://e/s>')?.form).toBe('graph');
    for (const q of [
      'SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }',
      'SELECT * WHERE { SERVICE <http://e/x> { ?s ?p ?o } }',
      'SELECT * FROM <http://e/g> WHERE { ?s ?p ?o }',
      'SELECT * WHERE { { SELECT ?s WHERE { ?s ?p ?o } } }',
      'SELECT * WHERE { ?s ?p ?o } VALUES ?s { <http://e/a> }',
      'PREFIX ask: <http://e/> SELECT * WHERE { ?s ask:p ?o }',
      'INSERT DATA { <http://e/a> <http://e/b> <http://e/c> }',
      'WHERE { ?s ?p ?o }',
    ]) {
      expect(quickInspect(q), q).toBeUndefined();
    }
  });
});

describe.skipIf(!HAS_SPIDER)('serve: quick inspection agrees with sparqljs on the gold queries', () => {
  it("for every distinct gold query it answers, form, kind, features and FROM equal inspectQuery's", () => {
    const queries = distinctQueries(readQuestions(path.join(SPIDER, 'dev.json')));
    let quick = 0;
    for (const q of queries) {
      // The gold queries use the default prefix without declaring it.
      const text = `PREFIX : <${DEFAULT_PARTITION_OPTIONS.defaultPrefix}>\n${q.text}`;
      const fast = quickInspect(text);
      if (!fast) continue;
      quick++;
      expect(fast, q.id).toEqual(inspectQuery(text));
    }
    // 208 of 544 take the quick path; the others aggregate (COUNT, MAX, GROUP BY …) or are longer than
    // 512 characters (2 × the operator depth: they could exceed it) and take the full parse.
    expect(quick).toBe(208);
  });
});

describe.skipIf(!HAS_SPIDER)('serve: the guard lets every gold query of the corpus through', () => {
  it('all distinct gold queries of Spider4SPARQL nest at most 5 deep, below the limit', () => {
    const queries = distinctQueries(readQuestions(path.join(SPIDER, 'dev.json')));
    expect(new Set(queries.map((q) => q.text)).size).toBeGreaterThanOrEqual(542);
    const depths = queries.map((q) => nestingDepth(q.text));
    expect(Math.max(...depths)).toBe(5);
    for (const q of queries) expect(() => checkQueryText(q.text, { maxLength: 1 << 20, maxDepth: MAX_QUERY_DEPTH })).not.toThrow();
  });
});

describe("serve: an error the query causes is answered as the query's (400, Fkgqa-Query-Error), not as the endpoint's failure", () => {
  it('a function oxigraph cannot evaluate (bif:contains, fn:contains): 400 evaluation, and the endpoint answers the next query', async () => {
    const rs = await Promise.all([
      get('PREFIX bif: <bif:> SELECT * WHERE { ?s ?p ?o FILTER(bif:contains(?o, "a")) }'),
      get('SELECT * WHERE { ?s ?p ?o FILTER(<http://www.w3.org/2005/xpath-functions#contains>(?o, "a")) }'),
    ]);
    expect(await Promise.all(rs.map(async (r) => [r.status, r.headers.get('fkgqa-query-error'), await r.text()]))).toEqual([
      [400, 'evaluation', 'query evaluation failed: The custom function <bif:contains> is not supported\n'],
      [400, 'evaluation', 'query evaluation failed: The custom function <http://www.w3.org/2005/xpath-functions#contains> is not supported\n'],
    ]);
    expect(await countOf(await get(COUNT))).toBe(35);
  });
});

/** A serve with the depth limits raised, so that queries past the defaults reach the workers: one for both describes below. */
describe('serve: queries past the default depth limits', () => {
  let deep: ShardServer;
  beforeAll(async () => {
    // The limit leaves another endpoint's first COUNT (sparqljs warming up in its worker) time to answer on a loaded machine.
    deep = await serve({ shards, kgs: ['library'], maxQueryDepth: 100_000, maxOperatorDepth: 100_000, timeoutMs: 5_000, writeFiles: false });
  });
  afterAll(async () => {
    await deep?.close();
  });

  describe('serve: a worker whose engine faulted is replaced', () => {
    it("answers 400 engine-fault (the query's) to a query that traps oxigraph, then the correct count from a fresh worker", async () => {
      const id = 'library-shard1';
      // 3,000 chained "+1" trap oxigraph 0.5.11 ("memory access out of bounds"): refused by the default
      // operator depth (256), they reach oxigraph when --max-operator-depth is raised.
      const trap = `SELECT * WHERE { ?s ?p ?o FILTER(1${'+1'.repeat(3000)} > 0) }`;
      const refused = await get(trap);
      expect([refused.status, (await refused.text()).slice(0, 70)]).toEqual([400, "query too complex: the query's operators nest 3003 levels deep, more t"]);
      const at = deep.endpoint(id)!.url;
      const r = await get(trap, undefined, at);
      expect([r.status, r.headers.get('fkgqa-query-error')]).toEqual([400, 'engine-fault']);
      expect(await r.text()).toMatch(/faulted on this query \(.*out of bounds.*\); the endpoint was restarted/);
      expect(deep.restartsOf(id)!.faults).toBe(1);
      expect(await countOf(await get(COUNT, undefined, at))).toBe(35);
      expect(await countOf(await get(COUNT, undefined, at))).toBe(35);
    });
  });

  describe('serve: no per-query work on the main thread', () => {
    it('parses in the worker under the time limit: a 3,000-OPTIONAL query (27 s in sparqljs) is stopped at the limit (5 s) while other endpoints answer', async () => {
      const s = deep;
      // COUNT sends it through sparqljs (quickInspect does not answer for aggregates).
      const optionals = 'SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o ' + 'OPTIONAL { ?s ?p ?o '.repeat(3000) + '}'.repeat(3000) + '}';
      const t0 = performance.now();
      let slowDone = false;
      const slow = fetch(s.endpoint('library-shard1')!.url, { method: 'POST', headers: { 'Content-Type': MEDIA.sparqlQuery }, body: optionals }).finally(() => (slowDone = true));
      // The other endpoint answers while the deep query is still being parsed (not after it).
      expect(await countOf(await get(COUNT, undefined, s.endpoint('library-shard2')!.url))).toBe(8);
      expect(slowDone).toBe(false);
      const r = await slow;
      expect(r.status).toBe(503);
      expect(await r.text()).toContain('time limit of 5000 ms');
      // Stopped at the limit (the 503 names it), not after sparqljs finished.
      expect(performance.now() - t0).toBeGreaterThanOrEqual(4_900);
      expect(await countOf(await get(COUNT, undefined, s.endpoint('library-shard1')!.url))).toBe(35);
    });
  });
});

describe('serve: one serialisation path, profile or not', () => {
  let capped: ShardServer;
  beforeAll(async () => {
    capped = await serve({ shards, kgs: ['library'], profiles: { endpoints: { 'library-shard1': { maxRows: 2 } } }, writeFiles: false });
  });
  afterAll(async () => {
    await capped?.close();
  });
  const both = () => [url, capped.endpoint('library-shard1')!.url];

  it('CSV quotes a value with a newline; TSV writes integers in short form', async () => {
    for (const u of both()) {
      const csv = await (await get('SELECT ?x ?n WHERE { BIND("a\\nb" AS ?x) BIND(1 AS ?n) }', 'text/csv', u)).text();
      expect(csv).toBe('x,n\r\n"a\nb",1\r\n');
      const tsv = await (await get('SELECT ?x ?n WHERE { BIND("a\\nb" AS ?x) BIND(1 AS ?n) }', 'text/tab-separated-values', u)).text();
      expect(tsv).toBe('?x\t?n\n"a\\nb"\t1\n');
    }
  });

  it('answers an RDF/XML request with RDF/XML, cut or not', async () => {
    for (const u of both()) {
      const r = await get('CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }', 'application/rdf+xml', u);
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toBe('application/rdf+xml');
      const body = await r.text();
      expect(body).toContain('<rdf:RDF');
      const triples = [...oxigraph.parse(body, { format: 'application/rdf+xml' })];
      expect(triples).toHaveLength(u === url ? 35 : 2);
    }
    const cut = await get('CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }', 'application/rdf+xml', capped.endpoint('library-shard1')!.url);
    expect(cut.headers.get('fkgqa-truncated')).toBe('triples=2; of=35');
  });

  it("writes uncut answers byte-identical to oxigraph's own serialisers (JSON, XML, CSV, TSV)", () => {
    const store = new oxigraph.Store();
    store.load(
      [
        '<http://e/a> <http://e/p> "x\\ny,z" .',
        '<http://e/a> <http://e/q> "1"^^<http://www.w3.org/2001/XMLSchema#integer> .',
        '<http://e/a> <http://e/r> "1.5"^^<http://www.w3.org/2001/XMLSchema#decimal> .',
        '<http://e/a> <http://e/r> "1.0e3"^^<http://www.w3.org/2001/XMLSchema#double> .',
        '<http://e/a> <http://e/r> "true"^^<http://www.w3.org/2001/XMLSchema#boolean> .',
        '<http://e/a> <http://e/r> "chat"@fr-be .',
        '<http://e/a> <http://e/r> "q\\"uote\\ttab" .',
        '<http://e/a> <http://e/r> "d"^^<http://e/dt> .',
        '_:b <http://e/r> <http://e/a> .',
      ].join('\n'),
      { format: 'application/n-triples' },
    );
    for (const q of ['SELECT ?s ?p ?o ?unbound WHERE { ?s ?p ?o }', 'SELECT * WHERE {}', 'ASK { ?s ?p ?o }']) {
      const json = JSON.parse(store.query(q, { results_format: MEDIA.json }) as string) as SparqlResults;
      for (const f of q.startsWith('ASK') ? [MEDIA.json, MEDIA.xml] : [MEDIA.json, MEDIA.xml, MEDIA.csv, MEDIA.tsv]) {
        expect(serializeResults(json, f), `${q} as ${f}`).toBe(store.query(q, { results_format: f }));
      }
    }
    // And the worker's own function on that store: same text, and the 406 for CSV of an ASK.
    expect(answerQuery(oxigraph, store, { endpoint: 't', query: 'SELECT ?o WHERE { <http://e/a> <http://e/q> ?o }', accept: 'text/tab-separated-values', protocolDataset: false }).body).toBe(
      '?o\n1\n',
    );
    expect(answerQuery(oxigraph, store, { endpoint: 't', query: 'ASK {}', accept: 'text/csv', protocolDataset: false }).status).toBe(406);
  });
});

describe('serve: the request log is capped and rotated', () => {
  it('stops growing at the cap: the file is rotated to .1', async () => {
    const log = path.join(tmpDir('fkgqa-log-'), 'requests.jsonl');
    expect(rotatedName(log)).toBe(log.replace(/requests\.jsonl$/, 'requests.1.jsonl'));
    const s = await serve({ shards, kgs: ['library'], requestLog: log, requestLogMaxBytes: 2048, writeFiles: false });
    try {
      const u = s.endpoint('library-shard2')!.url;
      for (let i = 0; i < 60; i++) await get(`ASK { ?s ?p ${i} }`, undefined, u);
      // Every answer is logged when its response closes: wait for the 60th, not for a fixed time.
      await vi.waitFor(() => expect(s.log.counts()['library-shard2'].total).toBe(60), { timeout: 60_000, interval: 10 });
    } finally {
      await s.close();
    }
    const size = fs.statSync(log).size;
    const rotated = fs.statSync(rotatedName(log)).size;
    expect(size).toBeLessThanOrEqual(2048);
    expect(rotated).toBeLessThanOrEqual(2048);
    expect(rotated).toBeGreaterThan(1500);
    expect(s.log.rotations).toBeGreaterThanOrEqual(2);
    // Every line is whole JSON.
    for (const f of [log, rotatedName(log)]) for (const l of fs.readFileSync(f, 'utf8').trim().split('\n')) expect(JSON.parse(l).endpoint).toBe('library-shard2');
  });

  it("logs requests refused by Node's HTTP parser and CONNECT with their status, like the others", async () => {
    const log = path.join(tmpDir('fkgqa-log-'), 'requests.jsonl');
    const s = await serve({ shards, kgs: ['library'], requestLog: log, writeFiles: false });
    try {
      const u = new URL(s.endpoint('library-shard1')!.url);
      const port = Number(u.port);
      expect(await rawStatus(port, `GET ${u.pathname}?query=ASK%7B%7D HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Other: a\x01b\r\n\r\n`)).toBe(400);
      expect(await rawStatus(port, `GET /library-shard2/sparql HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'x'.repeat(20_000)}\r\n\r\n`)).toBe(431);
      expect(await rawStatus(port, 'GARBAGE\x01\r\n\r\n')).toBe(400);
      expect(await rawStatus(port, 'CONNECT example.org:443 HTTP/1.1\r\nHost: example.org:443\r\n\r\n')).toBe(405);
      expect(s.log.counts()['library-shard1']).toEqual({ total: 1, errors: 1, invalid: 1 });
    } finally {
      await s.close();
    }
    const entries = fs
      .readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { endpoint: string; kind: string; method: string; status: number; bytes: number });
    expect(entries.map(({ endpoint, kind, method, status }) => ({ endpoint, kind, method, status }))).toEqual([
      { endpoint: 'library-shard1', kind: 'invalid', method: 'GET', status: 400 },
      // The headers are larger than one packet: the request line may or may not be in the refused one.
      { endpoint: entries[1].endpoint, kind: 'invalid', method: entries[1].method, status: 431 },
      { endpoint: '-', kind: 'invalid', method: '?', status: 400 },
      { endpoint: '-', kind: 'invalid', method: 'CONNECT', status: 405 },
    ]);
    expect(['library-shard2', '-']).toContain(entries[1].endpoint);
    expect(entries[0].bytes).toBe(Buffer.byteLength('header "X-Other": "a\\u0001b" is refused: it holds the control character U+0001, which HTTP does not allow in a header value (RFC 9110 §5.5)\n'));
  });

  it('goes to requests.jsonl in the state folder when no file is named', async () => {
    const state = tmpDir('fkgqa-state-');
    const s = await serve({ shards, kgs: ['library'], state, requestLog: true });
    try {
      await get(COUNT, undefined, s.endpoint('library-shard1')!.url);
    } finally {
      await s.close();
    }
    expect(JSON.parse(fs.readFileSync(path.join(state, 'requests.jsonl'), 'utf8').trim()).kind).toBe('count');
  });
});

describe('serve: the build folder is immutable', () => {
  it('a second serve with the same state folder refuses (exit 2, naming the running pid); with its own --state it runs', async () => {
    // The suite's server (this process) holds <shards>.state/.
    const info = readServeEndpoints(shards);
    expect(info.pid).toBe(process.pid);
    expect(info.endpoints.find((e) => e.id === 'library-shard1')!.url).toBe(url);
    await expect(serve({ shards, kgs: ['library'] })).rejects.toThrow(InputError);
    await expect(serve({ shards, kgs: ['library'] })).rejects.toThrow(`pid ${process.pid}`);
    // The CLI in this process (tests/helpers.ts), where the suite's server holds the lock: the pid it names is this one.
    const cli = await fkgqaInProcess(['serve', '--shards', shards, '--kg', 'library', '--port', '0', '-q'], { refusal: true });
    expect(cli.code).toBe(2);
    expect(cli.stderr).toContain(`fkgqa serve (pid ${process.pid}`);
    expect(cli.stderr).toContain('--state');
    const state = tmpDir('fkgqa-state-');
    const second = await serve({ shards, kgs: ['library'], state });
    try {
      expect(await countOf(await get(COUNT, undefined, second.endpoint('library-shard1')!.url))).toBe(35);
      expect(fs.existsSync(path.join(state, 'endpoints.json'))).toBe(true);
    } finally {
      await second.close();
    }
    expect(fs.readdirSync(state)).toEqual([]);
  });

  it('refuses a lock held on another host naming that host (exit 2), and a serve.lock that is a directory naming its path (exit 2)', async () => {
    const state = tmpDir('fkgqa-state-');
    const lock = path.join(state, STATE_FILES.serveLock);
    fs.writeFileSync(lock, JSON.stringify({ pid: 4242, procStart: 1, started: '2026-01-02T03:04:05.000Z', hostname: 'elsewhere.example' }));
    await expect(serve({ shards, kgs: ['library'], state })).rejects.toThrow(
      `fkgqa serve (pid 4242 on host elsewhere.example, started 2026-01-02T03:04:05.000Z) is already serving ${path.resolve(shards)} with this state folder: stop it, or give this serve its own --state <dir> (a process on another host cannot be checked from here: if it no longer runs, remove ${lock})`,
    );
    fs.rmSync(lock);
    fs.mkdirSync(lock);
    const cli = await fkgqaInProcess(['serve', '--shards', shards, '--kg', 'library', '--state', state, '--port', '0', '-q'], { refusal: true });
    expect(cli.code).toBe(2);
    expect(cli.stderr).toContain(`${lock}: is a directory, where fkgqa keeps its lock file: remove it`);
    expect(fs.readdirSync(state)).toEqual([STATE_FILES.serveLock]);
  });

  it('takes over a stale lock: a dead pid, or a live pid whose process start differs (pid reused)', async () => {
    const state = tmpDir('fkgqa-state-');
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    for (const owner of [
      { pid: Number(dead.stdout), procStart: null, started: 'x' },
      { pid: 1, procStart: 1, started: 'x' },
    ]) {
      fs.writeFileSync(path.join(state, STATE_FILES.serveLock), JSON.stringify(owner));
      const s = await serve({ shards, kgs: ['library'], state });
      expect(JSON.parse(fs.readFileSync(path.join(state, STATE_FILES.serveLock), 'utf8')).pid).toBe(process.pid);
      await s.close();
    }
    expect(() => readServeEndpoints(shards, state)).toThrow(/no fkgqa serve is running/);
    fs.writeFileSync(path.join(state, 'endpoints.json'), JSON.stringify({ pid: Number(dead.stdout), procStart: null, started: 'x', endpoints: [] }));
    expect(() => readServeEndpoints(shards, state)).toThrow(`stale: the fkgqa serve that wrote it (pid ${Number(dead.stdout)}) is no longer running`);
  });

  it('leaves every file of the build byte-identical, and its output digest still checks', async () => {
    // Requests that could write or re-render files: VoID, catalogue, service description.
    const base = new URL(url).origin;
    expect((await fetch(`${base}/.well-known/void`)).status).toBe(200);
    expect((await fetch(url.replace(/sparql$/, '.well-known/void'))).status).toBe(200);
    expect((await fetch(url)).status).toBe(200);
    expect(hashes(shards)).toEqual(before);
    const build = JSON.parse(fs.readFileSync(path.join(shards, 'build.json'), 'utf8')) as { outputDigest: string };
    expect(digestTree(shards)).toBe(build.outputDigest);
    expect(fs.readdirSync(`${shards}.state`).sort()).toEqual(['endpoints.json', STATE_FILES.serveLock]);
  });
});
