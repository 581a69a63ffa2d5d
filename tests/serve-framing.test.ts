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
function entries(): { endpoint: string; method: string; status: number; cancelled?: boolean }[] {
  if (!fs.existsSync(log)) return [];
  return fs
    .readFileSync(log, 'utf8')
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { endpoint: string; method: string; status: number; cancelled?: boolean });
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
