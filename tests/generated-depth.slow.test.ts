import { describe, expect, it } from 'vitest';
import { ENGINE_TESTS_RUN, server, useHostileEndpoints, withMcp, type ToolAnswer } from './hostile-fixture.js';

/**
 * A query accepted from an agent is never refused for the depth of text fkgqa or a federation engine
 * generated from it: a chain of operators the agent wrote without brackets is handed on without them
 * (src/sparql/generate.ts), and a shard endpoint accepts the brackets an engine's text for a SERVICE
 * clause has for every operator (MAX_SERVED_QUERY_DEPTH). Refusals name what the agent wrote.
 */

useHostileEndpoints();

/** `?one + 1 + … + 1 > 0` with `n` additions (true for every row: ?one is 1). */
const chain = (n: number) => `?one${' + 1'.repeat(n)} > 0`;

/** The rows of a run_sparql_query answer in SPARQL JSON results (the note line first), or its error text. */
const rows = (r: ToolAnswer): number | string => {
  const text = r.content[0].text;
  if (r.isError) return text.slice(0, 300);
  return (JSON.parse(text.slice(text.indexOf('\n') + 1)) as { results: { bindings: unknown[] } }).results.bindings.length;
};

describe("generated depth / a chain of operators within the limits on the agent's text runs on every route", () => {
  for (const engine of ['comunica', 'jena'] as const) {
    it.skipIf(!ENGINE_TESTS_RUN[engine])(
      `${engine}: 70 additions across two SERVICE clauses, 250 inside one of them, 250 in a lone SERVICE (planned, not cut from the text): every row kept`,
      async () => {
        const shard1 = server.endpoint('library-shard1')!.url;
        // The same shard twice (one federated query, joined on ?b by the engine): its rows are known to join.
        const two = (outer: string, inner: string) => `SELECT * { SERVICE <${shard1}> { ?b a ?c BIND(1 AS ?one) ${inner} } SERVICE <${shard1}> { ?b ?q ?t } ${outer} }`;
        // A PREFIX declaration keeps the lone SERVICE off the quick route that sends the agent's own text: the query is parsed and generated.
        const lone = (inner: string) => `PREFIX ex: <http://example.org/> SELECT * { SERVICE <${shard1}> { ?b ?p ?o BIND(1 AS ?one) ${inner} } }`;
        await withMcp([shard1], engine, async (call) => {
          const want = { two: rows(await call(two('', ''))), lone: rows(await call(lone(''))) };
          expect(typeof want.two === 'number' && want.two > 0 && typeof want.lone === 'number' && want.lone > 0).toBe(true);
          const got = {
            outside: rows(await call(two(`FILTER(${chain(70)})`, ''))),
            inside: rows(await call(two('', `FILTER(${chain(250)})`))),
            lone: rows(await call(lone(`FILTER(${chain(250)})`))),
          };
          const lonePlan = await call(lone(`FILTER(${chain(250)})`));
          expect(lonePlan.content[0].text).toMatch(/^\d+ rows \(direct: the SERVICE wrapper was removed/);
          expect(got).toEqual({ outside: want.two, inside: want.two, lone: want.lone });
          // Over the limit, the refusal names the agent's own text: its operator depth, not generated brackets.
          const deep = await call(two('', `FILTER(${chain(300)})`));
          expect([deep.isError, deep.content[0].text]).toEqual([true, expect.stringContaining("the query's operators nest 306 levels deep, more than the limit of 256")]);
        });
      },
      300_000,
    );
  }
});
