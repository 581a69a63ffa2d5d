import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { BoundedSparqlClient, formOf, MAX_FORM_PARSE_CHARS } from '../src/federation/client.js';
import { FEDERATION_ENGINES } from '../src/federation/engines.js';
import { decodeBody } from '../src/common/http-client.js';
import { registryFromUrls } from '../src/federation/registry.js';
import { createMcpServer } from '../src/mcp/server.js';
import { runQuery } from '../src/query/query.js';
import { EndpointPool } from '../src/serve/pool.js';
import type { PoolEndpoint } from '../src/serve/pool-groups.js';
import { BUSY_MIN_WAIT_MS, BUSY_WAIT_SHARE } from '../src/federation/limit.js';
import { MEDIA } from '../src/sparql/protocol.js';
import { endpoint, ENGINE_TESTS_RUN, server, shards, useHostileEndpoints, type Mode, type ToolAnswer } from './hostile-fixture.js';

/**
 * Hostile endpoint answers get the same verdict on all three routes: the lone-SERVICE direct route, Comunica
 * and Jena each call a broken SPARQL XML document, an XML document with entity declarations, a
 * compression bomb, an answer of a type the engine does not read, an unknown or broken content coding
 * the endpoint's fault — `_meta` class endpoint, infrastructure true, the endpoint named with what it
 * did — never rows, never the query's fault. One rule of content codings (http.ts DECODED_CODINGS):
 * gzip and deflate, alone or chained, decode; br, zstd and the like are refused everywhere.
 */

const NS = 'http://www.w3.org/2005/sparql-results#';
const X = { 'content-type': 'application/sparql-results+xml' };
const J = { 'content-type': 'application/sparql-results+json' };
const row = (v: string) => `<result><binding name="b"><uri>${v}</uri></binding></result>`;
const xsel = (rows: string) => `<?xml version="1.0"?>\n<sparql xmlns="${NS}"><head><variable name="b"/></head><results>${rows}</results></sparql>\n`;
const ONE_ROW = '{"head":{"vars":["b"]},"results":{"bindings":[{"b":{"type":"uri","value":"http://valuenet/ontop/data/book/1"}}]}}';
/** 64 MiB of zeros, gzip-encoded (65 KB): over the MCP server's answer limit of 32 MiB once decoded. */
const BOMB = zlib.gzipSync(Buffer.alloc(64 << 20), { level: 9 });
const LIMIT = 32 << 20;

const MODES: Record<string, Mode> = {
  xmlnoterm: (res) => res.writeHead(200, X).end(xsel(`<result><binding name="b">hello</binding></result>${row('http://x/2')}`)),
  xmlemptybinding: (res) => res.writeHead(200, X).end(xsel('<result><binding name="b"/></result>')),
  xmltworesults: (res) =>
    res
      .writeHead(200, X)
      .end(`<?xml version="1.0"?>\n<sparql xmlns="${NS}"><head><variable name="b"/></head><results>${row('http://x/1')}</results><results>${row('http://x/2')}</results></sparql>\n`),
  xmlstrayrows: (res) =>
    res
      .writeHead(200, X)
      .end(`<?xml version="1.0"?>\n<sparql xmlns="${NS}"><head><variable name="b"/></head><results>${row('http://x/1')}</results>${row('http://x/9')}${row('http://x/10')}</sparql>\n`),
  xmlwrongns: (res) => res.writeHead(200, X).end(xsel(row('http://x/1')).replace(NS, 'http://evil/')),
  laughs: (res) =>
    res
      .writeHead(200, X)
      .end(
        `<?xml version="1.0"?>\n<!DOCTYPE sparql [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]>\n<sparql xmlns="${NS}"><head><variable name="b"/></head><results><result><binding name="b"><literal>&c;</literal></binding></result></results></sparql>\n`,
      ),
  xxe: (res) =>
    res
      .writeHead(200, X)
      .end(
        `<?xml version="1.0"?>\n<!DOCTYPE sparql [<!ENTITY x SYSTEM "file:///etc/hostname">]>\n<sparql xmlns="${NS}"><head><variable name="b"/></head><results><result><binding name="b"><literal>&x;</literal></binding></result></results></sparql>\n`,
      ),
  bomb: (res) => res.writeHead(200, { ...J, 'content-encoding': 'gzip' }).end(BOMB),
  gzcsv: (res) => res.writeHead(200, { 'content-type': 'text/csv', 'content-encoding': 'gzip' }).end(zlib.gzipSync('b\r\nhttp://x/1\r\n')),
  gzcut: (res) => {
    const z = zlib.gzipSync(ONE_ROW);
    res.writeHead(200, { ...J, 'content-encoding': 'gzip' }).end(z.subarray(0, z.length - 6));
  },
  zstd: (res) => res.writeHead(200, { ...J, 'content-encoding': 'zstd' }).end(ONE_ROW),
  br: (res) => res.writeHead(200, { ...J, 'content-encoding': 'br' }).end(zlib.brotliCompressSync(ONE_ROW)),
  // Codings applied one after another, as one header and as two: decoded in reverse order on every route.
  chain: (res) => res.writeHead(200, { ...J, 'content-encoding': 'gzip, deflate' }).end(zlib.deflateSync(zlib.gzipSync(ONE_ROW))),
  twoheaders: (res) => {
    res.setHeader('content-encoding', ['deflate', 'gzip']);
    res.writeHead(200, J).end(zlib.gzipSync(zlib.deflateSync(ONE_ROW)));
  },
  xmlgood: (res) => res.writeHead(200, X).end(xsel(row('http://valuenet/ontop/data/book/1'))),
  strterms: (res) => res.writeHead(200, J).end('{"head":{"vars":["b"]},"results":{"bindings":[{"b":"http://x/1"}]}}'),
  big: (res) => res.writeHead(200, J).end(`{"head":{"vars":["b"]},"results":{"bindings":[${Array(20_000).fill('{"b":{"type":"uri","value":"http://valuenet/ontop/data/book/1"}}').join(',')}]}}`),
};

const notResults = (type: string) => `answered something that is not a SPARQL results document (${type}): `;
const XML = 'application/sparql-results+xml';
/** What the error says each endpoint did (after "the endpoint <url> "), the same on every route unless a route is named. */
const SAYS: Record<string, string | RegExp | Record<string, string | RegExp>> = {
  // Direct and Comunica share readXmlResults (its XML shape check); Jena has its own words.
  xmlnoterm: {
    direct: `${notResults(XML)}it holds text inside <binding> ("hello"), where SPARQL XML results have elements only`,
    comunica: `${notResults(XML)}it holds text inside <binding> ("hello"), where SPARQL XML results have elements only`,
    jena: `${notResults(XML)}it holds 2 <binding> elements, of which 1 hold an RDF term`,
  },
  xmlemptybinding: `${notResults(XML)}it holds 1 <binding> elements, of which 0 hold an RDF term`,
  xmltworesults: `${notResults(XML)}it holds 2 <results> elements (one is allowed)`,
  xmlstrayrows: {
    direct: `${notResults(XML)}it holds <result> inside <sparql>, where SPARQL XML results do not have it`,
    comunica: `${notResults(XML)}it holds <result> inside <sparql>, where SPARQL XML results do not have it`,
    jena: `${notResults(XML)}it holds 3 <result> elements, of which 1 are rows inside <results>`,
  },
  xmlwrongns: `${notResults(XML)}its root is not <sparql> in the SPARQL results namespace ${NS} (it is "http://evil/")`,
  laughs: `${notResults(XML)}it has a document type declaration (<!DOCTYPE …>), which SPARQL XML results do not have`,
  xxe: `${notResults(XML)}it has a document type declaration (<!DOCTYPE …>), which SPARQL XML results do not have`,
  bomb: {
    direct: `sent a gzip-encoded answer of ${BOMB.length} bytes that decodes to more than ${LIMIT} bytes (the answer limit): not read`,
    engine: new RegExp(`sent a gzip-encoded answer of \\d+ bytes that decodes to more than ${LIMIT} bytes \\(the answer limit\\): not read`),
  },
  gzcsv: {
    direct: 'answered HTTP 200 with content type text/csv, which is no SPARQL results type fkgqa reads (it asked for SPARQL JSON or XML results)',
    comunica: 'answered HTTP 200 with content type text/csv, which is no SPARQL results type Comunica reads (it asked for SPARQL JSON or XML results)',
    jena: 'answered HTTP 200 with content type text/csv, which is no SPARQL results type with term types (CSV carries plain strings)',
  },
  gzcut: /sent a gzip-encoded answer that does not decode \((unexpected end of file|Unexpected end of ZLIB input stream); \d+ bytes received\)/,
  zstd: 'sent an answer with Content-Encoding zstd, which is not decoded (zstd is none of gzip, x-gzip, deflate)',
  br: 'sent an answer with Content-Encoding br, which is not decoded (br is none of gzip, x-gzip, deflate)',
};

useHostileEndpoints(MODES);

/** The words expected of `mode` on `route` ('direct', 'comunica', 'jena'). */
function says(mode: string, route: string): string | RegExp {
  const s = SAYS[mode];
  if (typeof s === 'string' || s instanceof RegExp) return s;
  return s[route.replace(/-default$/, '')] ?? s[route === 'direct' ? 'direct' : 'engine'];
}

/** Runs every hostile mode through run_sparql_query on `route` and returns the verdicts, with the verdicts wanted. */
async function verdicts(route: string): Promise<{ got: Record<string, unknown>; want: Record<string, unknown>; rows: Record<string, string> }> {
  const shard1 = server.endpoint('library-shard1')!.url;
  const mcp = await createMcpServer({
    registry: registryFromUrls([...Object.keys(MODES).map(endpoint), shard1]),
    setup: 'baseline',
    callLog: null,
    state: null,
    ...(route === 'direct' ? {} : { federationEngine: route }),
  });
  const [x, y] = InMemoryTransport.createLinkedPair();
  await mcp.server.connect(x);
  const client = new Client({ name: 'test', version: '1' });
  await client.connect(y);
  const call = async (query: string) => (await client.callTool({ name: 'run_sparql_query', arguments: { query, timeout_ms: 60_000, format: 'application/sparql-results+json' } })) as ToolAnswer;
  // The direct route: a lone SERVICE; the engines: the hostile endpoint joined with a shard's answer.
  const query = (u: string) => (route === 'direct' ? `SELECT * { SERVICE <${u}> { ?b ?q ?t } }` : `SELECT ?b { SERVICE <${shard1}> { ?x ?p ?o } SERVICE <${u}> { ?b ?q ?t } } LIMIT 1`);
  const got: Record<string, unknown> = {};
  const want: Record<string, unknown> = {};
  const rows: Record<string, string> = {};
  try {
    for (const mode of Object.keys(SAYS)) {
      const bad = endpoint(mode);
      const r = await call(query(bad));
      const text = r.content[0].text;
      const w = says(mode, route);
      const at = text.lastIndexOf(`the endpoint ${bad} `);
      const what = at < 0 ? '' : text.slice(at + `the endpoint ${bad} `.length);
      got[mode] = { isError: r.isError ?? false, meta: r._meta?.['fkgqa/error'], says: (typeof w === 'string' ? what.startsWith(w) : w.test(what)) ? 'what' : text.slice(0, 400) };
      want[mode] = { isError: true, meta: { class: 'endpoint', infrastructure: true, endpoint: bad }, says: 'what' };
    }
    for (const mode of ['chain', 'twoheaders', 'xmlgood']) rows[mode] = (await call(query(endpoint(mode)))).content[0].text.split('\n')[0].replace(/; [\d.]+ m?s\)$/, ')');
  } finally {
    await client.close();
    await mcp.close();
  }
  return { got, want, rows };
}

describe("engines-hostile / run_sparql_query: a hostile answer is the endpoint's fault on every route, in the same words", () => {
  it('the direct route (a lone SERVICE): each an endpoint fault (infrastructure, named); gzip and deflate chains and a good XML answer are read (1 row)', async () => {
    const { got, want, rows } = await verdicts('direct');
    expect(got).toEqual(want);
    expect(rows).toEqual(Object.fromEntries(['chain', 'twoheaders', 'xmlgood'].map((m) => [m, `1 row (direct: the SERVICE wrapper was removed and the query sent to ${endpoint(m)})`])));
  }, 180_000);

  for (const engine of FEDERATION_ENGINES) {
    it.skipIf(!ENGINE_TESTS_RUN[engine])(
      `${engine}: each, inside a two-SERVICE query, an endpoint fault (infrastructure, named), never rows; the good chains and XML answer 1 row`,
      async () => {
        const { got, want, rows } = await verdicts(engine);
        expect(got).toEqual(want);
        expect(rows).toEqual(Object.fromEntries(['chain', 'twoheaders', 'xmlgood'].map((m) => [m, '1 row (federation engine over 2 endpoints)'])));
      },
      300_000,
    );
  }
});

describe("engines-hostile / the answer limit: a compression bomb is the endpoint's fault, a large answer the query's (the direct route's words)", () => {
  it('decodeBody: a body that decodes beyond the limit, an unknown coding and br are named; gzip then deflate decodes', () => {
    expect(decodeBody(BOMB, 'gzip', 1 << 20)).toEqual({ problem: `sent a gzip-encoded answer of ${BOMB.length} bytes that decodes to more than 1048576 bytes (the answer limit): not read` });
    expect(decodeBody(Buffer.from('x'), 'zstd', 100)).toEqual({ problem: 'sent an answer with Content-Encoding zstd, which is not decoded (zstd is none of gzip, x-gzip, deflate)' });
    expect(decodeBody(zlib.brotliCompressSync('x'), 'br', 100)).toEqual({ problem: 'sent an answer with Content-Encoding br, which is not decoded (br is none of gzip, x-gzip, deflate)' });
    expect(decodeBody(zlib.deflateSync(zlib.gzipSync('abc')), 'gzip, Deflate', 100)).toEqual({ body: Buffer.from('abc') });
  });

  it('fkgqa query (runQuery): the bomb names the endpoint and what it sent; an answer over the limit says so, not "answered with an error"', async () => {
    const [bomb, big] = ['bomb', 'big'].map(endpoint);
    const q = (u: string) => `SELECT * WHERE { SERVICE <${u}> { ?s ?p ?o } }`;
    await expect(runQuery({ query: q(bomb), urls: [bomb], maxResultBytes: 1 << 20 })).rejects.toThrow(
      `the endpoint ${bomb} sent a gzip-encoded answer of ${BOMB.length} bytes that decodes to more than 1048576 bytes (the answer limit): not read`,
    );
    await expect(runQuery({ query: q(big), urls: [big], maxResultBytes: 1 << 20 })).rejects.toThrow(
      new RegExp(
        `^the answer of ${big.replace(/[.?]/g, '\\$&')} is larger than 1048576 bytes \\(fkgqa query's answer limit\\): add LIMIT, select fewer variables, or aggregate \\(COUNT, GROUP BY\\)$`,
      ),
    );
  }, 60_000);

  it('the bounded client: the bomb is a bad answer of the endpoint; a plain answer over the limit is tooLarge (the query asked for too much)', async () => {
    const [bomb, big] = ['bomb', 'big'].map(endpoint);
    const client = new BoundedSparqlClient(registryFromUrls([bomb, big]), { maxResultBytes: 1 << 20 });
    try {
      const b = await client.direct(bomb, 'SELECT * { ?s ?p ?o }', 'application/sparql-results+json', 30_000);
      const g = await client.direct(big, 'SELECT * { ?s ?p ?o }', 'application/sparql-results+json', 30_000);
      expect([b.status, b.status === 'error' && b.badAnswer?.endpoint, b.status === 'error' && (b.tooLarge ?? false)]).toEqual(['error', bomb, false]);
      expect([g.status, g.status === 'error' && g.tooLarge, g.status === 'error' && g.error]).toEqual(['error', true, `the answer of ${big} is larger than 1048576 bytes`]);
    } finally {
      await client.close();
    }
  }, 60_000);
});

describe('engines-hostile / the form of a query the direct route checks: bounded, and never "graph" on a reading SPARQL does not share', () => {
  it('formOf: a query over MAX_FORM_PARSE_CHARS is not handed to the parsers; #c\\u2028ASK {} is no known form (not graph)', () => {
    const unclosed = 'PREFIX a: <http://x SELECT * {}'; // queryForm cannot read it; the parsers can
    const padded = `PREFIX a: <http://x ${' '.repeat(MAX_FORM_PARSE_CHARS)}SELECT * {}`;
    expect([formOf(unclosed), formOf(padded), formOf('#c\u2028ASK {}'), formOf('DESCRIBE <x>')]).toEqual(['select', undefined, undefined, 'graph']);
  });

  it("the bounded client: the answer to a query of no known form is still checked as SPARQL results (rows without RDF terms: the endpoint's fault)", async () => {
    const bad = endpoint('strterms');
    const client = new BoundedSparqlClient(registryFromUrls([bad]));
    try {
      const o = await client.direct(bad, '#c\u2028ASK { ?s ?p ?o }', 'application/sparql-results+json', 30_000);
      expect([o.status, o.status === 'error' && o.badAnswer?.endpoint, o.status === 'error' && o.error]).toEqual([
        'error',
        bad,
        `the endpoint ${bad} answered something that is not a SPARQL results document (application/sparql-results+json): row 1 of "results.bindings" binds ?b to no RDF term ("http://x/1")`,
      ]);
    } finally {
      await client.close();
    }
  }, 60_000);
});

describe("engines-hostile / serve's pool: busy only when the wait, not the query, used the request's limit (docs/serving.md)", () => {
  const HEAVY = `SELECT (COUNT(*) AS ?n) WHERE { ${Array.from({ length: 8 }, (_, i) => `?s${i} ?p${i} ?o${i} .`).join(' ')} }`;
  const task = (query: string) => ({ endpoint: 'library-shard1', query, accept: MEDIA.json, protocolDataset: false });
  const endpointsOf = (): PoolEndpoint[] => {
    const manifest = JSON.parse(fs.readFileSync(path.join(shards, 'library', 'manifest.json'), 'utf8')) as { shards: { endpoint: string; file: string; triples: number }[] };
    return manifest.shards.map((sh) => ({ id: sh.endpoint, sources: [{ file: path.join(shards, 'library', sh.file), format: MEDIA.ntriples }], triples: sh.triples }));
  };

  it('a request limit under BUSY_MIN_WAIT_MS that ends before the query starts is its own time limit, not busy', async () => {
    expect([BUSY_WAIT_SHARE, BUSY_MIN_WAIT_MS]).toEqual([0.1, 100]);
    const pool = await EndpointPool.start(endpointsOf(), { workers: 1, slowMs: 600_000 });
    try {
      // The first HEAVY runs 1000 ms (the endpoint's limit); behind it, a request limit of 20 ms ends before the second can start.
      const first = pool.run('library-shard1', task(HEAVY), { limitMs: 1000 });
      const tiny = pool.run('library-shard1', task(HEAVY), { limitMs: 600_000, requestLimitMs: 20 });
      expect(await first).toMatchObject({ status: 'timeout', by: 'endpoint', limitMs: 1000 });
      expect(await tiny).toMatchObject({ status: 'timeout', by: 'request', limitMs: 20 });
    } finally {
      await pool.close();
    }
  }, 120_000);
});
