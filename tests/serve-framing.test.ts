import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MEDIA, refusedRequestAnswer } from '../src/sparql/protocol.js';
import { serve, type ShardServer } from '../src/serve/server.js';
import { demoBuild, rawAnswer, tmpDir } from './helpers.js';

const COUNT = 'SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }';
let server: ShardServer;
let url: URL; // library-shard1 (35 triples)
let port: number;
let log: string;

/** The status codes of the answers in the bytes a server sent. */
const statuses = (answer: string) => [...answer.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => Number(m[1]));

/** The request log's entries so far. */
function entries(): { endpoint: string; method: string; status: number; cancelled?: boolean; query?: string }[] {
  if (!fs.existsSync(log)) return [];
  return fs
    .readFileSync(log, 'utf8')
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { endpoint: string; method: string; status: number; cancelled?: boolean; query?: string });
}

const countQuery = () => `${url.pathname}?query=${encodeURIComponent(COUNT)}`;

beforeAll(async () => {
  const shards = await demoBuild(tmpDir('fkgqa-framing-'));
  log = path.join(tmpDir('fkgqa-framing-log-'), 'requests.jsonl');
  server = await serve({ shards, kgs: ['library'], timeoutMs: 5_000, requestLog: log, writeFiles: false });
  url = new URL(server.endpoint('library-shard1')!.url);
  port = Number(url.port);
});
afterAll(async () => {
  await server?.close();
});

describe('serve: the request target is taken as written', () => {
  it('answers 404 to //anything/<endpoint>/sparql, as to /anything/<endpoint>/sparql, not as the endpoint', async () => {
    for (const target of [`//anything${countQuery()}`, `/anything${countQuery()}`, `//library-shard1/sparql?query=ASK%7B%7D`]) {
      const answer = await rawAnswer(port, `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: ${MEDIA.json}\r\nConnection: close\r\n\r\n`);
      expect(statuses(answer)).toEqual([404]);
      expect(answer).not.toContain('"35"');
    }
    expect(statuses(await rawAnswer(port, `GET ${countQuery()} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`))).toEqual([200]);
  });
});

describe('serve: Expect: 100-continue', () => {
  it('sends 100 Continue only for a request whose body will be read; a refusal before the body comes alone', async () => {
    const head = (method: string, target: string, host: string, length: number) =>
      `${method} ${target} HTTP/1.1\r\nHost: ${host}\r\nContent-Type: ${MEDIA.sparqlQuery}\r\nContent-Length: ${length}\r\nExpect: 100-continue\r\n\r\n`;
    for (const [request, status] of [
      [head('POST', url.pathname, 'evil.example', 100), 403],
      [head('POST', '/no-such-path', '127.0.0.1', 100), 404],
      [head('PUT', url.pathname, '127.0.0.1', 100), 405],
      [head('POST', url.pathname, '127.0.0.1', 100_000_000), 413],
    ] as const) {
      const answer = await rawAnswer(port, request);
      expect(statuses(answer)).toEqual([status]);
      expect(answer).not.toContain('100 Continue');
    }
    // A request that will be read: 100 Continue, then its body, then its answer.
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1', () =>
        socket.write(head('POST', url.pathname, '127.0.0.1', Buffer.byteLength(COUNT)).replace('\r\n\r\n', `\r\nAccept: ${MEDIA.json}\r\nConnection: close\r\n\r\n`)),
      );
      let data = '';
      socket.on('data', (c) => {
        const first = data === '';
        data += c;
        if (first && data.startsWith('HTTP/1.1 100 Continue\r\n\r\n')) socket.write(COUNT);
      });
      socket.on('error', reject);
      socket.on('close', () => resolve(data));
    });
    expect(statuses(answer)).toEqual([100, 200]);
    expect(answer).toContain('"35"');
  });
});

describe('serve: a complete but malformed request body', () => {
  it('is answered 400 naming what is wrong and logged 400 (not 499): a bad chunk size, a control byte in a chunk extension, a transfer coding other than chunked', async () => {
    const post = (framing: string, body: string) => `POST ${url.pathname} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ${MEDIA.sparqlQuery}\r\n${framing}\r\n\r\n${body}`;
    for (const [request, why] of [
      [post('Transfer-Encoding: chunked', 'ZZ\r\nSELECT\r\n0\r\n\r\n'), /could not read the request body: the request is not valid HTTP\/1\.1 \(Invalid character in chunk size\)/],
      [
        post('Transfer-Encoding: chunked', `${Buffer.byteLength(COUNT).toString(16)};a=\x01\r\n${COUNT}\r\n0\r\n\r\n`),
        /could not read the request body: the request is not valid HTTP\/1\.1 \(.*chunk.*\)/i,
      ],
      [post('Transfer-Encoding: gzip', 'abc'), /could not read the request body: the request is not valid HTTP\/1\.1 \(.*Transfer-Encoding.*\)/],
    ] as const) {
      // Entries of earlier requests may still be on their way to the log: count this request's kind only.
      const refused = () => entries().filter((e) => e.endpoint === 'library-shard1' && e.method === 'POST' && e.status === 400).length;
      const before = refused();
      const answer = await rawAnswer(port, request);
      expect(statuses(answer)).toEqual([400]);
      expect(answer).toMatch(why);
      expect(answer).toContain('\r\nConnection: close\r\n');
      await expect.poll(refused).toBe(before + 1);
    }
    expect(entries().filter((e) => e.status === 499)).toEqual([]);
  });

  it('is logged 499 when its client cut it (closed the connection before its end)', async () => {
    const cut = () => entries().filter((e) => e.endpoint === 'library-shard1' && e.status === 499 && e.cancelled).length;
    const before = cut();
    await new Promise<void>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => {
        socket.write(`POST ${url.pathname} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ${MEDIA.sparqlQuery}\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nSELECT`);
        // Closed (not half-closed) once the bytes are out.
        socket.end(() => socket.destroy());
      });
      socket.on('error', () => resolve());
      socket.on('close', () => resolve());
    });
    await expect.poll(cut).toBe(before + 1);
  });
});

describe('serve: a request whose headers never end', () => {
  it("is refused 408 Request Timeout when Node's headersTimeout ends it (a version-less request line without a blank line after it)", () => {
    expect(refusedRequestAnswer({ code: 'ERR_HTTP_REQUEST_TIMEOUT' })).toEqual({
      status: 408,
      message: 'the request line and headers did not end in time (a blank line ends them): send an HTTP/1.1 request (RFC 9112 §3)',
    });
  });
});

/** Log entries as written, with the query text when there is one. */
type Entry = { endpoint: string; method: string; status: number; bytes: number; cancelled?: true; timeout?: true; query?: string };
let markers = 0;

/**
 * Sends a marker request (an ASK of its own) after the requests sent so far, and waits for its log
 * entry: the requests before it that are logged are in the log then.
 * @returns the place of the marker's entry in the log
 */
async function logMark(): Promise<number> {
  const marker = `ASK { ?s ?p "marker ${++markers}" }`;
  expect((await fetch(`${url.href}?query=${encodeURIComponent(marker)}`)).status).toBe(200);
  await expect.poll(() => entries().some((e) => e.query === marker)).toBe(true);
  return entries().findIndex((e) => e.query === marker);
}

/** The request log's entries after the marker at `from` (logMark), once every request sent before now is in it. */
async function loggedSince(from: number): Promise<Entry[]> {
  const to = await logMark();
  return (entries() as Entry[]).slice(from + 1, to);
}

/** The entries of the log, without the fields that vary (time, ms, query). */
const brief = (es: Entry[]) => es.map(({ endpoint, method, status, cancelled, timeout }) => ({ endpoint, method, status, ...(cancelled ? { cancelled } : {}), ...(timeout ? { timeout } : {}) }));

describe('serve: nothing after an answer that closes the connection', () => {
  it('neither answers nor logs a request pipelined behind an answer that said Connection: close (505, Connection: close, HTTP/1.0), not even as 499', async () => {
    const ask = `GET ${url.pathname}?query=ASK%7B%7D HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`;
    for (const [first, status, logged] of [
      [`GET ${url.pathname}?query=ASK%7B%7D HTTP/2.0\r\nHost: 127.0.0.1\r\n\r\n`, 505, { endpoint: 'library-shard1', method: 'GET', status: 505 }],
      [`GET ${url.pathname}?query=ASK%7B%7D HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`, 200, { endpoint: 'library-shard1', method: 'GET', status: 200 }],
      [`GET ${url.pathname}?query=ASK%7B%7D HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n`, 200, { endpoint: 'library-shard1', method: 'GET', status: 200 }],
    ] as const) {
      const from = await logMark();
      const answer = await rawAnswer(port, first + ask + ask);
      expect(statuses(answer)).toEqual([status]);
      expect(answer).not.toContain('Data after');
      expect(brief(await loggedSince(from))).toEqual([logged]);
    }
  });
});

describe('serve: a client that leaves with a CONNECT pipelined behind its query', () => {
  it('stops the query when the client leaves (499, not run to its time limit), as without the CONNECT', async () => {
    const heavy = `SELECT (COUNT(*) AS ?n) WHERE { ${Array.from({ length: 8 }, (_, i) => `?s${i} ?p${i} ?o${i} .`).join(' ')} }`;
    const from = await logMark();
    const before = server.restartsOf('library-shard1')!.restarts;
    const socket = net.connect(port, '127.0.0.1', () =>
      socket.write(`GET ${url.pathname}?query=${encodeURIComponent(heavy)} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\nCONNECT example.org:443 HTTP/1.1\r\nHost: example.org:443\r\n\r\n`),
    );
    socket.on('error', () => undefined);
    while (!server.queriesRunning().includes('library-shard1')) await new Promise((r) => setTimeout(r, 20));
    socket.destroy();
    while (server.queriesRunning().length > 0) await new Promise((r) => setTimeout(r, 20));
    // Stopped because its client left (its worker replaced), not at the 5 s time limit (503, timeout).
    expect(server.restartsOf('library-shard1')!.restarts).toBe(before + 1);
    // Both requests were the client's, and it left before their answers: 499 (in the order their connection's close reached them).
    expect(brief(await loggedSince(from)).sort((a, b) => a.method.localeCompare(b.method))).toEqual([
      { endpoint: '-', method: 'CONNECT', status: 499, cancelled: true },
      { endpoint: 'library-shard1', method: 'GET', status: 499, cancelled: true },
    ]);
  });
});

describe('serve: requests under way when serve stops', () => {
  it('are not logged, neither 499 (their client did not leave: the server closed their connections) nor 500 (the store did not fail: it was stopped)', async () => {
    const heavy = `SELECT (COUNT(*) AS ?n) WHERE { ${Array.from({ length: 8 }, (_, i) => `?s${i} ?p${i} ?o${i} .`).join(' ')} }`;
    const own = path.join(tmpDir('fkgqa-framing-stop-'), 'requests.jsonl');
    const s = await serve({ shards: await demoBuild(tmpDir('fkgqa-framing-stop-build-')), kgs: ['library'], timeoutMs: 300_000, requestLog: own, writeFiles: false });
    const u = new URL(s.endpoint('library-shard1')!.url);
    expect((await fetch(`${u.href}?query=ASK%7B%7D`)).status).toBe(200);
    // A query running, and on its connection an answer (404) waiting behind it: neither is sent nor logged.
    const queued = rawAnswer(Number(u.port), `GET ${u.pathname}?query=${encodeURIComponent(heavy)} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\nGET /nope HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`).catch(() => '');
    while (!s.queriesRunning().includes('library-shard1')) await new Promise((r) => setTimeout(r, 20));
    // And a query waiting for the store behind it.
    const ended = fetch(`${u.href}?query=${encodeURIComponent(heavy)}`).then(
      (r) => r.status,
      (e: Error) => e.name,
    );
    await s.close();
    expect(await ended).toBe('TypeError');
    expect(statuses(await queued)).toEqual([]);
    const logged = fs
      .readFileSync(own, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Entry);
    expect(brief(logged)).toEqual([{ endpoint: 'library-shard1', method: 'GET', status: 200 }]);
  });
});

describe('serve: a request line without an HTTP version (HTTP/0.9)', () => {
  it('is refused 400 as soon as the line is read, without waiting for headers that never come, and logged under its endpoint', async () => {
    const from = await logMark();
    const answer = await new Promise<string>((resolve, reject) => {
      // The line alone, as an HTTP/0.9 client sends it: no blank line after it. The server closes the connection.
      const socket = net.connect(port, '127.0.0.1', () => socket.write(`GET ${url.pathname}\r\n`));
      let data = '';
      socket.on('data', (c) => (data += c));
      socket.on('error', reject);
      socket.on('close', () => resolve(data));
    });
    const body = `the request line "GET ${url.pathname}" names no HTTP version (an HTTP/0.9 request): send HTTP/1.1 (RFC 9112 §3)\n`;
    expect(answer).toBe(`HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
    expect(brief(await loggedSince(from))).toEqual([{ endpoint: 'library-shard1', method: 'GET', status: 400 }]);
    // With the blank line after it, the handler refuses it the same way (and logs it under its endpoint too).
    const from2 = await logMark();
    expect(await rawAnswer(port, `GET ${url.pathname}\r\n\r\n`)).toContain(body);
    expect(brief(await loggedSince(from2))).toEqual([{ endpoint: 'library-shard1', method: 'GET', status: 400 }]);
  });
});

describe('serve: the edges of a request', () => {
  it('logs a request line longer than Node reads once (431), not again as 499 when its client then leaves', async () => {
    const from = await logMark();
    const answer = await rawAnswer(port, `GET ${url.pathname}?q=${'x'.repeat(100_000)} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
    expect(statuses(answer)).toEqual([431]);
    expect(brief(await loggedSince(from))).toEqual([{ endpoint: '-', method: '?', status: 431 }]);
  });

  it('answers 400 naming what is wrong, and logs it, to an HTTP/1.1 request without Host or with two Host headers', async () => {
    const target = `${url.pathname}?query=ASK%7B%7D`;
    const from = await logMark();
    const none = await rawAnswer(port, `GET ${target} HTTP/1.1\r\nConnection: close\r\n\r\n`);
    expect(statuses(none)).toEqual([400]);
    expect(none).toContain('\r\n\r\nthe request has no Host header: an HTTP/1.1 request names its host (RFC 9112 §3.2)\n');
    const two = await rawAnswer(port, `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n`);
    expect(statuses(two)).toEqual([400]);
    expect(two).toContain('\r\n\r\nthe request has 2 Host headers: send exactly one (RFC 9112 §3.2)\n');
    // HTTP/1.0 needs no Host.
    expect(statuses(await rawAnswer(port, `GET ${target} HTTP/1.0\r\n\r\n`))).toEqual([200]);
    expect(brief(await loggedSince(from))).toEqual([
      { endpoint: '-', method: 'GET', status: 400 },
      { endpoint: '-', method: 'GET', status: 400 },
      { endpoint: 'library-shard1', method: 'GET', status: 200 },
    ]);
  });

  it('checks the host of an absolute-form target, not the Host header (RFC 9112 §3.2.2)', async () => {
    const target = `${url.pathname}?query=ASK%7B%7D`;
    const evil = await rawAnswer(port, `GET http://evil.example${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
    expect(statuses(evil)).toEqual([403]);
    expect(evil).toContain('Host "evil.example" is not a name of this loopback server');
    expect(statuses(await rawAnswer(port, `GET http://127.0.0.1:${port}${target} HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n`))).toEqual([200]);
  });

  it('answers 417 naming an Expect other than 100-continue, and logs it under its endpoint', async () => {
    const from = await logMark();
    const answer = await rawAnswer(port, `GET ${url.pathname}?query=ASK%7B%7D HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: teapot\r\nConnection: close\r\n\r\n`);
    expect(statuses(answer)).toEqual([417]);
    expect(answer).toContain('\r\n\r\nExpect: "teapot" cannot be met: the only expectation this server meets is 100-continue (RFC 9110 §10.1.1)\n');
    expect(brief(await loggedSince(from))).toEqual([{ endpoint: 'library-shard1', method: 'GET', status: 417 }]);
  });

  it('answers 501 naming a transfer coding before chunked (gzip, chunked), and closes the connection', async () => {
    const from = await logMark();
    const body = 'query=ASK%7B%7D';
    const coded = `POST ${url.pathname} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: gzip, chunked\r\n\r\n${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`;
    const answer = await rawAnswer(port, `${coded}GET ${url.pathname}?query=ASK%7B%7D HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
    expect(statuses(answer)).toEqual([501]);
    expect(answer).toContain('\r\nConnection: close\r\n');
    expect(answer).toContain('Transfer-Encoding: "gzip, chunked" is not implemented here: send the body with Content-Length or Transfer-Encoding: chunked alone (RFC 9112 §6.1)\n');
    expect(brief(await loggedSince(from))).toEqual([{ endpoint: 'library-shard1', method: 'POST', status: 501 }]);
  });

  it('answers a request asking to upgrade as HTTP/1.1 and closes the connection (a request pipelined behind it is not read)', async () => {
    const from = await logMark();
    const ask = `GET ${url.pathname}?query=ASK%7B%7D HTTP/1.1\r\nHost: 127.0.0.1\r\n`;
    const answer = await rawAnswer(port, `${ask}Connection: Upgrade\r\nUpgrade: foo\r\n\r\n${ask}\r\n`);
    expect(statuses(answer)).toEqual([200]);
    expect(answer).toContain('\r\nConnection: close\r\n');
    expect(brief(await loggedSince(from))).toEqual([{ endpoint: 'library-shard1', method: 'GET', status: 200 }]);
    // Upgrade without `Connection: Upgrade`, or with an empty value, is no upgrade: the connection stays.
    expect(statuses(await rawAnswer(port, `${ask}Upgrade: h2c\r\n\r\n${ask}Connection: close\r\n\r\n`))).toEqual([200, 200]);
    expect(statuses(await rawAnswer(port, `${ask}Connection: upgrade\r\nUpgrade:\r\n\r\n${ask}Connection: close\r\n\r\n`))).toEqual([200, 200]);
  });

  it('logs a HEAD answer with 0 bytes (it has no body)', async () => {
    const from = await logMark();
    const answer = await rawAnswer(port, `HEAD ${url.pathname}?query=ASK%7B%7D HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
    expect(statuses(answer)).toEqual([200]);
    expect(answer.endsWith('\r\n\r\n')).toBe(true);
    const logged = await loggedSince(from);
    expect(logged.map((e) => [e.method, e.status, e.bytes])).toEqual([['HEAD', 200, 0]]);
  });

  it('answers 501 naming a method Node does not know (lower case, or unknown), with Allow, logged under its endpoint and method', async () => {
    const from = await logMark();
    const lower = await rawAnswer(port, `get ${url.pathname}?query=ASK%7B%7D HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
    expect(statuses(lower)).toEqual([501]);
    expect(lower).toContain('\r\nAllow: GET, POST, OPTIONS\r\n');
    expect(lower).toContain('\r\n\r\nmethod "get" is not known here (methods are case-sensitive, RFC 9110 §9.1: send GET): send SPARQL queries with GET or POST (SPARQL 1.1 Protocol §2.1)\n');
    const unknown = await rawAnswer(port, `FOO ${url.pathname} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
    expect(statuses(unknown)).toEqual([501]);
    expect(unknown).toContain('\r\n\r\nmethod "FOO" is not known here: send SPARQL queries with GET or POST (SPARQL 1.1 Protocol §2.1)\n');
    expect(brief(await loggedSince(from))).toEqual([
      { endpoint: 'library-shard1', method: 'get', status: 501 },
      { endpoint: 'library-shard1', method: 'FOO', status: 501 },
    ]);
  });
});

describe('serve: answers given at once, then a query, then bytes that end the connection, in one write', () => {
  it('sends the query answer in its place before the refusal or the close, and logs what it sent', async () => {
    const ask = (close: boolean) => `GET ${url.pathname}?query=ASK%7B%7D HTTP/1.1\r\nHost: 127.0.0.1\r\n${close ? 'Connection: close\r\n' : ''}\r\n`;
    const at = (method: string, target: string) => `${method} ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`;
    for (const [first, firstLogged, last, expected, lastLogged] of [
      // After `Connection: close`: the GET / behind it is neither answered nor logged.
      [at('OPTIONS', '/'), { endpoint: '-', method: 'OPTIONS', status: 204 }, ask(true) + at('GET', '/'), [204, 200], undefined],
      [at('GET', '/nope'), { endpoint: '-', method: 'GET', status: 404 }, ask(false) + at('FOO', '/'), [404, 200, 501], { endpoint: '-', method: 'FOO', status: 501 }],
      [
        at('OPTIONS', '/'),
        { endpoint: '-', method: 'OPTIONS', status: 204 },
        ask(false) + `CONNECT example.org:443 HTTP/1.1\r\nHost: example.org:443\r\n\r\n`,
        [204, 200, 405],
        { endpoint: '-', method: 'CONNECT', status: 405 },
      ],
    ] as const) {
      const from = await logMark();
      const answer = await rawAnswer(port, first + last);
      expect(statuses(answer)).toEqual(expected);
      expect(answer).toContain('"boolean":true');
      expect(brief(await loggedSince(from))).toEqual([firstLogged, { endpoint: 'library-shard1', method: 'GET', status: 200 }, ...(lastLogged ? [lastLogged] : [])]);
    }
  });
});

describe('serve: a client that leaves with an unfinished request pipelined behind its query', () => {
  it('stops the query when the client leaves (499, not run to its time limit), and logs the unfinished request 499, not a 400 no one read', async () => {
    const heavy = `SELECT (COUNT(*) AS ?n) WHERE { ${Array.from({ length: 8 }, (_, i) => `?s${i} ?p${i} ?o${i} .`).join(' ')} }`;
    // A version-less line without its blank line (logged as `?`: no request line), and headers without theirs (logged under the line's endpoint).
    for (const [behind, unfinished] of [
      ['GET /x\r\n', { endpoint: '-', method: '?' }],
      ['GET /library-shard2/sparql HTTP/1.1\r\nHost: a\r\n', { endpoint: 'library-shard2', method: 'GET' }],
    ] as const) {
      const from = await logMark();
      const before = server.restartsOf('library-shard1')!.restarts;
      const socket = net.connect(port, '127.0.0.1', () => socket.write(`GET ${url.pathname}?query=${encodeURIComponent(heavy)} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n${behind}`));
      socket.on('error', () => undefined);
      while (!server.queriesRunning().includes('library-shard1')) await new Promise((r) => setTimeout(r, 20));
      socket.destroy();
      while (server.queriesRunning().length > 0) await new Promise((r) => setTimeout(r, 20));
      // Stopped because its client left (its worker replaced), not at the 5 s time limit (503, timeout).
      expect(server.restartsOf('library-shard1')!.restarts).toBe(before + 1);
      expect(brief(await loggedSince(from)).sort((a, b) => a.endpoint.localeCompare(b.endpoint))).toEqual(
        [
          { ...unfinished, status: 499, cancelled: true },
          { endpoint: 'library-shard1', method: 'GET', status: 499, cancelled: true },
        ].sort((a, b) => a.endpoint.localeCompare(b.endpoint)),
      );
    }
  });
});

/** The bytes a server sent back to `pieces`, each written once the one before it was handed to the system (separate TCP segments, unless the server reads late). */
function piecewiseAnswer(pieces: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.setNoDelay(true);
      const next = (i: number) => {
        if (i < pieces.length && !socket.destroyed) socket.write(pieces[i], () => next(i + 1));
      };
      next(0);
    });
    let data = '';
    socket.on('data', (c) => (data += c));
    socket.on('error', reject);
    socket.on('close', () => resolve(data));
  });
}

describe('serve: a version-less request line after empty lines or with several spaces, and a refused method in several segments', () => {
  it('refuses the HTTP/0.9 line at once (400) after leading empty lines or with two spaces, not at the headers timeout', async () => {
    for (const [sent, line, endpoint] of [
      [`\r\nGET ${url.pathname}\r\n`, `GET ${url.pathname}`, 'library-shard1'],
      [`\n\r\nGET ${url.pathname}\n`, `GET ${url.pathname}`, 'library-shard1'],
      ['GET  /x\r\n', 'GET  /x', '-'],
    ] as const) {
      const from = await logMark();
      // The line alone, no blank line after it: the answer closes the connection (else the test's own time limit ends it).
      const answer = await piecewiseAnswer([sent]);
      expect(statuses(answer)).toEqual([400]);
      expect(answer).toContain(`\r\n\r\nthe request line "${line}" names no HTTP version (an HTTP/0.9 request): send HTTP/1.1 (RFC 9112 §3)\n`);
      expect(brief(await loggedSince(from))).toEqual([{ endpoint, method: 'GET', status: 400 }]);
    }
  });

  it('names the whole method in its 501, and logs it under its endpoint, however the request line is cut into segments', async () => {
    const request = `FOO ${url.pathname} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`;
    const from = await logMark();
    for (const pieces of [['F', request.slice(1)], ['FOO', request.slice(3)], [request.slice(0, 8), request.slice(8)], [...request.slice(0, 6)].concat(request.slice(6))]) {
      const answer = await piecewiseAnswer(pieces);
      expect(statuses(answer)).toEqual([501]);
      expect(answer).toContain('\r\n\r\nmethod "FOO" is not known here: send SPARQL queries with GET or POST (SPARQL 1.1 Protocol §2.1)\n');
    }
    expect(brief(await loggedSince(from))).toEqual(Array.from({ length: 4 }, () => ({ endpoint: 'library-shard1', method: 'FOO', status: 501 })));
  });
});

describe('serve: a request that names an empty host', () => {
  it('answers 400 to an absolute-form target without a host (whatever its Host header) and to an empty Host header, naming it, and logs it', async () => {
    const target = `${url.pathname}?query=ASK%7B%7D`;
    const from = await logMark();
    const noAuthority = await rawAnswer(port, `GET foo://${target} HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n`);
    expect(statuses(noAuthority)).toEqual([400]);
    expect(noAuthority).toContain(`\r\n\r\nthe request target "foo://${target}" names no host: send an origin-form target (/path) or an http URI with its host (RFC 9112 §3.2.2)\n`);
    const empty = await rawAnswer(port, `GET ${target} HTTP/1.1\r\nHost:\r\nConnection: close\r\n\r\n`);
    expect(statuses(empty)).toEqual([400]);
    expect(empty).toContain('\r\n\r\nthe request has an empty Host header: name the host (RFC 9112 §3.2)\n');
    expect(brief(await loggedSince(from))).toEqual([
      { endpoint: '-', method: 'GET', status: 400 },
      { endpoint: '-', method: 'GET', status: 400 },
    ]);
  });
});

describe('serve: a request line naming another protocol or version than HTTP/1.x', () => {
  it('answers 505 naming it, closes the connection, and logs it under its endpoint (RTSP/1.0, HTTP/3.0, HTTP/1.9)', async () => {
    const target = `${url.pathname}?query=ASK%7B%7D`;
    const from = await logMark();
    for (const [version, why] of [
      ['RTSP/1.0', 'RTSP/1.0 is not HTTP: send HTTP/1.1 (RFC 9112 §2.3)'],
      ['HTTP/3.0', 'HTTP/3.0 is not supported: send HTTP/1.1 (RFC 9112)'],
      ['HTTP/1.9', 'HTTP/1.9 is not supported: send HTTP/1.1 (RFC 9112)'],
    ]) {
      const answer = await rawAnswer(port, `GET ${target} ${version}\r\nHost: 127.0.0.1\r\n\r\nGET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
      expect(statuses(answer)).toEqual([505]);
      expect(answer).toContain(`\r\nConnection: close\r\n`);
      expect(answer).toContain(`\r\n\r\n${why}\n`);
    }
    expect(brief(await loggedSince(from))).toEqual(Array.from({ length: 3 }, () => ({ endpoint: 'library-shard1', method: 'GET', status: 505 })));
  });
});

describe('serve: answers waiting behind a query when the client leaves', () => {
  it('stops every query of the connection and logs every request 499 with 0 bytes, also those whose answers waited behind the first', async () => {
    const heavy = `SELECT (COUNT(*) AS ?n) WHERE { ${Array.from({ length: 8 }, (_, i) => `?s${i} ?p${i} ?o${i} .`).join(' ')} }`;
    const get = (target: string) => `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`;
    const second = new URL(server.endpoint('library-shard2')!.url).pathname;
    const from = await logMark();
    const socket = net.connect(port, '127.0.0.1', () => socket.write(get(`${url.pathname}?query=${encodeURIComponent(heavy)}`) + get('/nope') + get(`${second}?query=${encodeURIComponent(heavy)}`)));
    socket.on('error', () => undefined);
    while (!server.queriesRunning().includes('library-shard1')) await new Promise((r) => setTimeout(r, 20));
    socket.destroy();
    // Both queries stopped (not run to the 5 s time limit, 503) and the 404 that was never sent: 499 each, nothing sent.
    await expect.poll(() => entries().length - from, { timeout: 60_000 }).toBeGreaterThanOrEqual(4);
    const logged = await loggedSince(from);
    expect(brief(logged).sort((a, b) => a.endpoint.localeCompare(b.endpoint))).toEqual([
      { endpoint: '-', method: 'GET', status: 499, cancelled: true },
      { endpoint: 'library-shard1', method: 'GET', status: 499, cancelled: true },
      { endpoint: 'library-shard2', method: 'GET', status: 499, cancelled: true },
    ]);
    expect(logged.map((e) => e.bytes)).toEqual([0, 0, 0]);
    await expect.poll(() => server.queriesRunning(), { timeout: 60_000 }).toEqual([]);
  });
});

describe('serve: a malformed body of a request pipelined behind a query', () => {
  it('is answered 400 in its place, after the query answer, and the connection closes (not left waiting, nor cut with the query answer)', async () => {
    const first = `GET ${url.pathname}?query=${encodeURIComponent(COUNT)}&timeout=1ms HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: ${MEDIA.json}\r\n\r\n`;
    // An endpoint reads the body at once; /federation/sparql only once its engine's modules are loaded (after the body was refused).
    for (const [target, logged] of [
      [url.pathname, 'library-shard1'],
      ['/federation/sparql', '/federation/sparql'],
    ]) {
      const post = `POST ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ${MEDIA.sparqlQuery}\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nASK{}\r\nZZ\r\n`;
      const from = await logMark();
      const answer = await rawAnswer(port, first + post);
      const [status] = statuses(answer);
      expect(statuses(answer)).toEqual([status, 400]);
      expect(answer).toMatch(/\r\n\r\ncould not read the request body: the request is not valid HTTP\/1\.1 \(Invalid character in chunk size\)\n$/);
      expect(answer.slice(answer.lastIndexOf('HTTP/1.1 400'))).toContain('\r\nConnection: close\r\n');
      expect(brief(await loggedSince(from)).map((e) => [e.endpoint, e.method, e.status])).toEqual([
        ['library-shard1', 'GET', status],
        [logged, 'POST', 400],
      ]);
    }
  });
});

describe("serve: the protocol of a request line is read from that request's own line", () => {
  it('answers a request 200 when an earlier header value or body holds its line with RTSP/1.0, and 505 to RTSP/1.0 followed by a long body', async () => {
    const target = `${url.pathname}?query=ASK%7B%7D`;
    const ask = `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`;
    const spoof = `GET ${target} RTSP/1.0\r\n`;
    const inHeader = await rawAnswer(port, `GET /nope HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Note: ${spoof}\r\n${ask}`);
    expect(statuses(inHeader)).toEqual([404, 200]);
    // The line in a comment of the query text sent as the body.
    const query = `ASK {} # ${spoof}`;
    const inBody = await rawAnswer(port, `POST ${url.pathname} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ${MEDIA.sparqlQuery}\r\nContent-Length: ${query.length}\r\n\r\n${query}${ask}`);
    expect(statuses(inBody)).toEqual([200, 200]);
    const body = 'x'.repeat(40_000);
    const rtsp = await rawAnswer(port, `POST ${url.pathname} RTSP/1.0\r\nHost: 127.0.0.1\r\nContent-Type: ${MEDIA.sparqlQuery}\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
    expect(statuses(rtsp)).toEqual([505]);
    expect(rtsp).toContain('\r\n\r\nRTSP/1.0 is not HTTP: send HTTP/1.1 (RFC 9112 §2.3)\n');
    // A form body holding a whole RTSP request before an HTTP/1.1 one, and the reverse.
    const form = `query=ASK%7B%7D&x=${encodeURIComponent('x')}${spoof}Host: 127.0.0.1\r\n\r\n`;
    const post = `POST ${url.pathname} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${form.length}\r\n\r\n${form}`;
    expect(statuses(await rawAnswer(port, `${post}${ask}`))).toEqual([200, 200]);
    const httpForm = form.replace('RTSP/1.0', 'HTTP/1.1');
    const postHttp = `POST ${url.pathname} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${httpForm.length}\r\n\r\n${httpForm}`;
    expect(statuses(await rawAnswer(port, `${postHttp}${spoof}Host: 127.0.0.1\r\n\r\n`))).toEqual([200, 505]);
    // More header lines than Node keeps by default (1,000): still 505, and a body after them still no request line.
    const many = Array.from({ length: 1_100 }, (_, i) => `a${i}:`).join('\r\n');
    expect(statuses(await rawAnswer(port, `GET ${target} RTSP/1.0\r\nHost: 127.0.0.1\r\n${many}\r\n\r\n`))).toEqual([505]);
    const postMany = post.replace('Host: 127.0.0.1\r\n', `Host: 127.0.0.1\r\n${many}\r\n`);
    expect(statuses(await rawAnswer(port, `${postMany}${ask}`))).toEqual([200, 200]);
    // Blanks around header values (optional whitespace, RFC 9112 §5) however many: still 505.
    const padded = ['X-Pad: ' + ' '.repeat(700) + 'v', 'X-Pad: v' + ' '.repeat(700), Array.from({ length: 20 }, (_, i) => `X-H${i}:${' '.repeat(30)}v`).join('\r\n')];
    for (const header of padded) {
      expect(statuses(await rawAnswer(port, `GET ${target} RTSP/1.0\r\nHost: 127.0.0.1\r\n${header}\r\n\r\n`))).toEqual([505]);
    }
  });
});

describe('serve: a request line ended by a bare LF, and absolute-form targets with an empty authority or userinfo', () => {
  it('answers 400 naming what is wrong (not 505, not the endpoint), and logs it', async () => {
    const target = `${url.pathname}?query=ASK%7B%7D`;
    const from = await logMark();
    const lf = await rawAnswer(port, `GET ${target} HTTP/1.1\nHost: 127.0.0.1\r\n\r\n`);
    expect(statuses(lf)).toEqual([400]);
    expect(lf).toContain('\r\n\r\nthe request line does not end with CRLF after its HTTP version (a bare LF is refused, RFC 9112 §2.2): end every line with CRLF\n');
    const empty = await rawAnswer(port, `GET http:///127.0.0.1${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
    expect(statuses(empty)).toEqual([400]);
    expect(empty).toContain(`\r\n\r\nthe request target "http:///127.0.0.1${target}" names no host`);
    const user = await rawAnswer(port, `GET http://a:b@127.0.0.1${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
    expect(statuses(user)).toEqual([400]);
    expect(user).toContain(`names a user (userinfo@): send an origin-form target (/path) or an http URI without userinfo (RFC 9110 §4.2.4)\n`);
    expect(brief(await loggedSince(from))).toEqual([
      { endpoint: 'library-shard1', method: 'GET', status: 400 },
      { endpoint: '-', method: 'GET', status: 400 },
      { endpoint: '-', method: 'GET', status: 400 },
    ]);
  });
});

describe('serve: the time of a refused request', () => {
  it('is counted from its first byte: a method whose line never ends is logged with the wait for it (METHOD_WAIT_MS, 1 s), not 0', async () => {
    const from = await logMark();
    const answer = await rawAnswer(port, `FOO ${url.pathname}`);
    expect(statuses(answer)).toEqual([501]);
    const [entry] = (await loggedSince(from)) as (Entry & { ms: number })[];
    expect([entry.method, entry.status]).toEqual(['?', 501]);
    expect(entry.ms).toBeGreaterThanOrEqual(990);
  });
});
