import { describe, expect, it } from 'vitest';
import { BoundedSparqlClient } from '../src/federation/client.js';
import { FEDERATION_ENGINES } from '../src/federation/engines.js';
import { registryFromUrls } from '../src/federation/registry.js';
import {
  accepts,
  BINARY,
  endpoint,
  ENGINE_TESTS_RUN,
  expectTimedOut503Verdicts,
  expectVerdictsInTwoService,
  federated,
  FORMS,
  MODES,
  reset,
  seen,
  server,
  TIMED_OUT_503_TITLE,
  useHostileEndpoints,
  VERDICTS_IN_TWO_SERVICE_TITLE,
  what,
  withMcp,
} from './hostile-fixture.js';

/**
 * The sweep of tests/hostile-answers.test.ts (`npm run test:slow`): every hostile behaviour of
 * tests/hostile-fixture.ts on every federation engine, each test with its own `fkgqa mcp` server or
 * bounded client (an engine start each), and jena's verdicts of stops. `npm test` keeps one representative of each kind per engine.
 */

useHostileEndpoints();

describe('hostile answers / run_sparql_query: an incomplete answer is an infrastructure error naming the endpoint', () => {
  for (const engine of FEDERATION_ENGINES) {
    it.skipIf(!ENGINE_TESTS_RUN[engine])(
      `${engine}: each hostile endpoint inside a two-SERVICE query: _meta endpoint, infrastructure true; no ASK {} probe`,
      async () => {
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
      },
      300_000,
    );
  }
});

describe('hostile answers / the ASK {} probe runs only when an endpoint may be at fault', () => {
  for (const engine of ['comunica', 'jena'] as const) {
    it.skipIf(!ENGINE_TESTS_RUN[engine])(
      `${engine}: no probe after a syntax error (nothing sent at all), after an endpoint's own time limit, nor after a login page (the engine's HTTP names it)`,
      async () => {
        const shard1 = server.endpoint('library-shard1')!.url;
        const [limit, login] = ['limit503', 'login'].map(endpoint);
        const client = new BoundedSparqlClient(registryFromUrls([limit, login, shard1]), { engine });
        // 300 s: the value does not matter here; 30 s, which counts the engine's start, ended the query before it reached the endpoint at load 25.
        try {
          reset();
          const syntax = await client.federated(`SELECT * { SERVICE <${shard1}> { ?b ?p ?o } SERVICE <${limit}> { ?b ?q ?t . FILTER( } }`, 'application/sparql-results+json', {
            ms: 300_000,
            from: 'call',
          });
          expect([syntax.status, syntax.requests, seen.limit503]).toEqual(['error', {}, undefined]);
          const limited = await client.federated(`SELECT * { SERVICE <${shard1}> { ?b ?p ?o } SERVICE <${limit}> { ?b ?q ?t } }`, 'application/sparql-results+json', { ms: 300_000, from: 'call' });
          expect([limited.status, seen.limit503.asks]).toEqual(['error', 0]);
          expect(limited.status === 'error' && limited.error).toContain('time limit of 1000 ms');
          // A login page (200, text/html) is caught by the engine's HTTP, which names the endpoint: no probe needed.
          const page = await client.federated(`SELECT * { SERVICE <${shard1}> { ?b ?p ?o } SERVICE <${login}> { ?b ?q ?t } }`, 'application/sparql-results+json', { ms: 300_000, from: 'call' });
          expect([page.status, page.status === 'error' && page.badAnswer?.endpoint, seen.login.asks]).toEqual(['error', login, 0]);
          expect(page.status === 'error' && page.error).toContain(`the endpoint ${login} answered HTTP 200 with content type text/html, which is no SPARQL results type`);
        } finally {
          await client.close();
        }
      },
      120_000,
    );
  }
});

describe("hostile answers / a 2xx answer that is no SPARQL results document of the query's form never counts as rows", () => {
  for (const engine of FEDERATION_ENGINES) {
    it.skipIf(!ENGINE_TESTS_RUN[engine])(
      `${engine}: each inside a two-SERVICE query is a fault of that endpoint (_meta endpoint, infrastructure true); a good XML answer counts`,
      async () => {
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
      },
      300_000,
    );
  }
});

describe("hostile answers / an unsolicited gzip answer is decoded everywhere, a broken one is the endpoint's fault; no binary bytes in messages; bytes past Content-Length do not stall the next query", () => {
  for (const engine of FEDERATION_ENGINES) {
    it.skipIf(!ENGINE_TESTS_RUN[engine])(
      `${engine}: a gzip answer inside a two-SERVICE query counts; a cut one is that endpoint's fault, in words without binary bytes`,
      async () => {
        const shard1 = server.endpoint('library-shard1')!.url;
        const [good, cut, binary] = ['gzipgood', 'gzipcut', 'binary'].map(endpoint);
        await withMcp([good, cut, binary, shard1], engine, async (call) => {
          const q = (u: string) => `SELECT ?p ?b { SERVICE <${shard1}> { ?x ?p ?o } SERVICE <${u}> { ?b ?q ?t } } LIMIT 3`;
          const g = await call(q(good));
          expect([g.isError ?? false, /^3 rows \(federation engine/.test(g.content[0].text) ? 'rows' : g.content[0].text]).toEqual([false, 'rows']);
          for (const u of [cut, binary]) {
            const r = await call(q(u));
            expect([r.isError, r._meta?.['fkgqa/error'], r.content[0].text.includes(`the endpoint ${u} `), BINARY.test(r.content[0].text)]).toEqual([
              true,
              { class: 'endpoint', infrastructure: true, endpoint: u },
              true,
              false,
            ]);
          }
          if (engine === 'jena') expect((await call(q(cut))).content[0].text).toContain(`the endpoint ${cut} sent a gzip-encoded answer that does not decode (Unexpected end of ZLIB input stream`);
        });
      },
      300_000,
    );

    it.skipIf(!ENGINE_TESTS_RUN[engine])(
      `${engine}: after an answer with bytes past its Content-Length, the next query to the same host answers (it waited for its time limit on jena)`,
      async () => {
        const [longer, rows] = ['longer', 'rows'].map(endpoint);
        const client = new BoundedSparqlClient(registryFromUrls([longer, rows]), { engine });
        try {
          const q = (u: string) => `SELECT * { SERVICE <${rows}> { ?b ?p ?o } SERVICE <${u}> { ?b ?q ?t } }`;
          const outcomes = [];
          // Each query right after the one before, three times over: a connection left in a pool after the
          // answer with bytes past its Content-Length would be handed to the next request to that host and port.
          const order = [longer, rows, longer, rows, longer, rows, rows];
          for (const u of order) outcomes.push((await client.federated(q(u), 'application/sparql-results+json', { ms: 60_000, from: 'call' })).status);
          expect(outcomes).toEqual(order.map(() => 'ok'));
        } finally {
          await client.close();
        }
      },
      300_000,
    );
  }
});

describe("verdicts / a stop is one only when it agrees with the limit sent and the clock; an error the query caused is the agent's", () => {
  // comunica's two-SERVICE verdicts are in tests/hostile-answers.test.ts (npm test), with the same checks.
  it.skipIf(!ENGINE_TESTS_RUN.jena)(VERDICTS_IN_TWO_SERVICE_TITLE('jena'), () => expectVerdictsInTwoService('jena'), 300_000);
  it.skipIf(!ENGINE_TESTS_RUN.comunica)(TIMED_OUT_503_TITLE('comunica'), () => expectTimedOut503Verdicts('comunica'), 120_000);
  it.skipIf(!ENGINE_TESTS_RUN.jena)(TIMED_OUT_503_TITLE('jena'), () => expectTimedOut503Verdicts('jena'), 120_000);
});
