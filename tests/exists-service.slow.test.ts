import { describe, expect, it } from 'vitest';
import { endpoint, ENGINE_TESTS_RUN, server, useHostileEndpoints, withMcp, type ToolAnswer } from './hostile-fixture.js';

/** The rows of a successful run_sparql_query answer (SPARQL JSON results after the note line). */
const rowsOf = (r: ToolAnswer) => (JSON.parse(r.content[0].text.slice(r.content[0].text.indexOf('\n') + 1)) as { results: { bindings: unknown[] } }).results.bindings.length;

/**
 * A SERVICE clause that fails inside FILTER EXISTS, FILTER NOT EXISTS, MINUS, OPTIONAL or an EXISTS
 * inside `||` fails the query with the same verdict on both federation engines, as it does outside
 * them: an endpoint that cannot be reached, answers 500 or cuts its answer after a row is the
 * infrastructure's (the endpoint named), a query the shard refuses (fkgqa serve's 400 for a function
 * it cannot evaluate) is the agent's. Never rows. A failed SERVICE SILENT is one solution without
 * bindings in every position (SPARQL 1.1 Federated Query, section 4), on both engines.
 */

useHostileEndpoints();

/** Nothing listens on port 1 of the loopback address: the connection is refused. */
const DEAD = 'http://127.0.0.1:1/sparql';

describe('exists-service / a failed SERVICE inside FILTER (NOT) EXISTS, MINUS and OPTIONAL fails the query with the verdict it has outside them', () => {
  for (const engine of ['comunica', 'jena'] as const) {
    it.skipIf(!ENGINE_TESTS_RUN[engine])(
      `${engine}: an unreachable endpoint, a 500 and an answer cut after its first row are the endpoint's (infrastructure), a shard's 400 the agent's`,
      async () => {
        const [shard1, shard2] = [1, 2].map((n) => server.endpoint(`library-shard${n}`)!.url);
        const e500 = endpoint('html500');
        const half = endpoint('half');
        const inner: Record<string, string> = {
          dead: `SERVICE <${DEAD}> { ?b ?q ?t }`,
          http500: `SERVICE <${e500}> { ?b ?q ?t }`,
          http400: `SERVICE <${shard2}> { ?b ?q ?t FILTER(bif:contains(?t, "a")) }`,
          // One whole row, then the connection closed: comunica's EXISTS read the row and answered (8 rows, or 0 for NOT EXISTS).
          half: `SERVICE <${half}> { ?b ?q ?t }`,
        };
        const shapes: Record<string, (s: string) => string> = {
          exists: (s) => `FILTER EXISTS { ${s} }`,
          notExists: (s) => `FILTER NOT EXISTS { ${s} }`,
          minus: (s) => `MINUS { ${s} }`,
          optional: (s) => `OPTIONAL { ${s} }`,
          orTrue: (s) => `FILTER(EXISTS { ${s} } || true)`,
        };
        const want: Record<string, unknown> = {};
        const got: Record<string, unknown> = {};
        await withMcp([DEAD, e500, half, shard1, shard2], engine, async (call) => {
          for (const [shape, wrap] of Object.entries(shapes)) {
            for (const [fault, s] of Object.entries(inner)) {
              const r: ToolAnswer = await call(`PREFIX bif: <bif:> SELECT * { SERVICE <${shard1}> { ?b a ?c } ${wrap(s)} }`);
              const m = r._meta?.['fkgqa/error'] as { class: string; infrastructure: boolean; endpoint?: string } | undefined;
              got[`${shape} ${fault}`] = {
                isError: r.isError ?? false,
                class: m?.class,
                infrastructure: m?.infrastructure,
                endpoint: m?.endpoint,
                text: r.content[0].text.slice(0, 300),
              };
              const named = { dead: DEAD, http500: e500, http400: shard2, half }[fault]!;
              want[`${shape} ${fault}`] = {
                isError: true,
                class: fault === 'http400' ? 'endpoint-rejected' : 'endpoint',
                infrastructure: fault !== 'http400',
                endpoint: named,
                text: expect.stringContaining(named),
              };
            }
          }
        });
        expect(got).toEqual(want);
      },
      300_000,
    );
  }

  for (const engine of ['comunica', 'jena'] as const) {
    it.skipIf(!ENGINE_TESTS_RUN[engine])(
      `${engine}: a failed SERVICE SILENT is one solution without bindings in a group, OPTIONAL, MINUS, FILTER EXISTS and NOT EXISTS, a sub-SELECT and a UNION branch`,
      async () => {
        const [shard1, shard2] = [1, 2].map((n) => server.endpoint(`library-shard${n}`)!.url);
        const [e500, half] = [endpoint('html500'), endpoint('half')];
        const shapes: Record<string, (s: string) => string> = {
          group: (s) => s,
          optional: (s) => `OPTIONAL { ${s} }`,
          minus: (s) => `MINUS { ${s} }`,
          exists: (s) => `FILTER EXISTS { ${s} }`,
          notExists: (s) => `FILTER NOT EXISTS { ${s} }`,
          subSelect: (s) => `{ SELECT * { ${s} } }`,
          union: (s) => `{ SERVICE <${shard2}> { ?b a ?c } } UNION { ${s} }`,
        };
        const got: Record<string, unknown> = {};
        const want: Record<string, unknown> = {};
        const spec: Record<string, unknown> = {};
        await withMcp([DEAD, e500, half, shard1, shard2], engine, async (call) => {
          const query = (inner: string, wrap: (s: string) => string) => `SELECT * { SERVICE <${shard1}> { ?b a ?c } ${wrap(inner)} }`;
          const all = rowsOf(await call(`SELECT * { SERVICE <${shard1}> { ?b a ?c } }`));
          expect(all).toBeGreaterThan(0);
          for (const [shape, wrap] of Object.entries(shapes)) {
            // The same query with the failed clause as one solution without bindings (an empty group): what SPARQL 1.1 asks.
            const empty = await call(query('{}', wrap));
            spec[shape] = [empty.isError ?? false, rowsOf(empty)];
            for (const [fault, url] of Object.entries({ dead: DEAD, http500: e500, half })) {
              const r = await call(query(`SERVICE SILENT <${url}> { ?b ?q ?t }`, wrap));
              got[`${shape} ${fault}`] = r.isError ? r.content[0].text.slice(0, 200) : rowsOf(r);
              want[`${shape} ${fault}`] = rowsOf(empty);
            }
          }
          // Every row where one empty solution keeps them, none where it removes them (NOT EXISTS), shard 2's books added in the UNION.
          const union = rowsOf(await call(`SELECT * { SERVICE <${shard1}> { ?b a ?c } { SERVICE <${shard2}> { ?b a ?c } } UNION { } }`));
          expect(spec).toEqual({
            group: [false, all],
            optional: [false, all],
            minus: [false, all],
            exists: [false, all],
            notExists: [false, 0],
            subSelect: [false, all],
            union: [false, union],
          });
        });
        expect(got).toEqual(want);
      },
      300_000,
    );
  }
});
