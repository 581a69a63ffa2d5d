import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MEDIA } from '../src/sparql/protocol.js';
import { serve, type ShardServer } from '../src/serve/server.js';
import { demoBuild, tmpDir } from './helpers.js';

const COUNT = 'SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }';
let server: ShardServer;
let url: URL; // library-shard1 (35 triples)
let port: number;
let log: string;

/** Sends raw bytes on a fresh socket and returns all the server sends until it closes the connection. */
function rawAnswer(request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(request));
    let data = '';
    socket.on('data', (c) => (data += c));
    socket.on('error', reject);
    socket.on('close', () => resolve(data));
  });
}

/** The status codes of the answers in the bytes a server sent. */
const statuses = (answer: string) => [...answer.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => Number(m[1]));

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
      const answer = await rawAnswer(`GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: ${MEDIA.json}\r\nConnection: close\r\n\r\n`);
      expect(statuses(answer)).toEqual([404]);
      expect(answer).not.toContain('"35"');
    }
    expect(statuses(await rawAnswer(`GET ${countQuery()} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`))).toEqual([200]);
  });
});
