/**
 * Long queries of 990,000 characters whose lists and chains take sparqljs seconds to parse (the
 * fast cases and the limits are in long-query.test.ts): a list within the limits — triple
 * patterns, the objects of one triple pattern, a collection, VALUES rows, comment lines — is
 * parsed (on the parser thread: sparqljs spreads long lists onto the stack) and planned; a chain
 * beyond the operator depth of 256 — `&&`, UNION branches, SERVICE clauses, OPTIONALs — is refused
 * as too complex, with its depth, never as a syntax error. A 990,000-character query through
 * run_sparql_query to a shard served by fkgqa serve. The operator depth of every gold query of the
 * real corpus, and of its trivial form.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMcpContext } from '../src/mcp/server.js';
import { runSparqlQuery } from '../src/mcp/run-query.js';
import { serve, type ShardServer } from '../src/serve/server.js';
import type { EndpointRegistry } from '../src/federation/registry.js';
import { demoBuild, HAS_SPIDER, SPIDER, tmpDir } from './helpers.js';
import { readQuestions, distinctQueries } from '../src/load/questions.js';
import { DEFAULT_PARTITION_OPTIONS } from '../src/partition/index.js';
import { trivialFederation } from '../src/sparql/trivial.js';
import { operatorDepth, parseQuery, parseSparql } from '../src/sparql/parse.js';
import { planQuery } from '../src/federation/routing.js';
import { registryFromEndpointsValue } from '../src/federation/registry.js';
import { classifyQuery } from '../src/score/validity.js';

const LIMIT = 990_000;
const E = 'http://127.0.0.1:9/library-shard1/sparql';
const registry = registryFromEndpointsValue({ endpoints: [{ id: 'library-shard1', url: E, graph: 'library', shard: 'shard1', role: 'shard' }] } as never, 'test');

/** `head`, then `unit(i)` for i = 0, 1, … as long as it fits, spaces to fill, then `tail`: exactly `LIMIT` characters; and the number of units. */
function filled(head: string, unit: (i: number) => string, tail: string): { text: string; units: number } {
  const parts: string[] = [];
  let length = head.length + tail.length;
  for (let i = 0; ; i++) {
    const u = unit(i);
    if (length + u.length > LIMIT) break;
    parts.push(u);
    length += u.length;
  }
  const text = head + parts.join('') + ' '.repeat(LIMIT - length) + tail;
  expect(text.length).toBe(LIMIT);
  return { text, units: parts.length };
}

describe('long queries / 990,000 characters of lists: parsed and planned', () => {
  const cases: [string, () => { text: string; units: number }][] = [
    ['37,000 triple patterns', () => filled(`SELECT * WHERE { SERVICE <${E}> { `, (i) => `?s <http://x/p${i % 10}> ?o${i} . `, '} }')],
    ['495,000 objects of one triple pattern (?s ?p 1,1,…)', () => filled(`SELECT * WHERE { SERVICE <${E}> { ?s ?p 1`, () => ',1', ' } }')],
    ['a collection of 330,000 members', () => filled(`SELECT * WHERE { SERVICE <${E}> { ?s ?p (`, () => '1 ', ') } }')],
    ['330,000 VALUES rows', () => filled(`SELECT * WHERE { SERVICE <${E}> { VALUES ?x { `, () => '1 ', '} ?x ?p ?o } }')],
    ['330,000 comment lines', () => filled(`SELECT * WHERE { SERVICE <${E}> { ?s ?p ?o `, () => '#c\n', '} }')],
  ];
  for (const [what, make] of cases) {
    it(`${what}: route direct, validity ok`, () => {
      const { text } = make();
      const plan = planQuery(text, registry, { maxQueryChars: 1_000_000 });
      expect(plan.ok ? plan.route : plan).toBe('direct');
      expect(classifyQuery(text)).toEqual({ class: 'ok' });
    });
  }
});

describe('long queries / 990,000 characters of chains: too complex, with their depth', () => {
  const cases: [string, () => { text: string; units: number }, (units: number) => number][] = [
    // WHERE (1) + the SERVICE's group (bgp, FILTER: 2) + the first && and one per unit.
    ['a FILTER of 247,000 && (?o && ?o …)', () => filled(`SELECT * WHERE { SERVICE <${E}> { ?s ?p ?o FILTER(?o `, () => '&&?o', ') } }'), (n) => 1 + 2 + n],
    // WHERE (1) + the SERVICE's group (1: the UNION) + its branches (n + 1) + each branch's group (1).
    ['a UNION of 141,000 branches', () => filled(`SELECT * WHERE { SERVICE <${E}> { {} `, () => 'UNION{}', '} }'), (n) => 1 + 1 + n + 1 + 0],
    // WHERE: one element per SERVICE clause, then its group (1) and its triple block.
    ['15,000 SERVICE clauses', () => filled('SELECT * WHERE { ', (i) => `SERVICE <${E}> { ?s <http://x/p${i}> ?o } `, '}'), (n) => n + 1],
    // The SERVICE's group: the triple block and one OPTIONAL per unit, then the OPTIONAL's group (0 elements).
    ['99,000 OPTIONALs', () => filled(`SELECT * WHERE { SERVICE <${E}> { ?s ?p ?o `, () => 'OPTIONAL{}', '} }'), (n) => 1 + 1 + n],
  ];
  for (const [what, make, depth] of cases) {
    it(`${what}: too-complex, not syntax; validity execution`, () => {
      const { text, units } = make();
      const plan = planQuery(text, registry, { maxQueryChars: 1_000_000 });
      expect(plan).toEqual({ ok: false, errorClass: 'too-complex', message: expect.stringContaining(`the query's operators nest ${depth(units)} levels deep, more than the limit of 256`) });
      expect(classifyQuery(text).class).toBe('execution');
    });
  }
});

describe('long queries / through run_sparql_query and the shard endpoints of fkgqa serve', () => {
  const P = 'http://valuenet/ontop/';
  let server: ShardServer;
  let served: EndpointRegistry;
  const url = (n: number) => server.endpoint(`library-shard${n}`)!.url;
  beforeAll(async () => {
    server = await serve({ shards: await demoBuild(tmpDir('fkgqa-long-query-')), kgs: ['library'], writeFiles: false, timeoutMs: 120_000 });
    served = registryFromEndpointsValue(server.endpointsFile(), 'test');
  });
  afterAll(async () => server?.close());

  it('a 990,000-character query (a string literal, 4.7 MB form-encoded) answers the 8 book titles; a 990,000-character && chain is too-complex (not the infrastructure, nothing sent)', async () => {
    const ctx = createMcpContext({ registry: served, build: null, state: null, callLog: null, limits: { maxQueryChars: 1_000_000, previewRows: 100 } });
    const head = `SELECT ?t WHERE { SERVICE <${url(2)}> { ?b <${P}book#title> ?t FILTER(?t != "`;
    // Form-encoded, as the tool sends it to the endpoint, 'é' takes 6 bytes: 4.7 MB in all (fkgqa serve's default --max-body is 10 MiB).
    const long = filled(head, () => 'é a ', '") } } ORDER BY ?t').text;
    const r = await runSparqlQuery(ctx, { query: long, timeout_ms: 100_000 });
    expect([r.isError ?? false, r.route, r.rows]).toEqual([false, 'direct', 8]);
    const chain = filled(`SELECT ?t WHERE { SERVICE <${url(2)}> { ?b <${P}book#title> ?t FILTER(?t != "" `, () => '&& ?t != "" ', ') } }').text;
    const c = await runSparqlQuery(ctx, { query: chain, timeout_ms: 100_000 });
    expect([c.isError, c.errorClass, c.error]).toEqual([true, 'too-complex', { class: 'too-complex', infrastructure: false }]);
    expect(c.text).toMatch(/^Error \(too-complex\): the query's operators nest \d{5,} levels deep, more than the limit of 256/);
  });
});

describe.skipIf(!HAS_SPIDER)('long queries / the operator depth of the corpus', () => {
  it('the distinct gold queries of Spider4SPARQL reach operator depth 11 at most, their trivial forms over 8 endpoints 30: far below 256', () => {
    const queries = distinctQueries(readQuestions(path.join(SPIDER, 'dev.json')));
    const endpoints = Array.from({ length: 8 }, (_, i) => `http://127.0.0.1:9/shard${i + 1}/sparql`);
    let gold = 0;
    let trivial = 0;
    for (const q of queries) {
      const p = parseQuery(q.text, DEFAULT_PARTITION_OPTIONS.defaultPrefix);
      if (!p.ok) continue;
      gold = Math.max(gold, operatorDepth(p.query.ast));
      trivial = Math.max(trivial, operatorDepth(parseSparql(trivialFederation(p.query.ast, endpoints).text)));
    }
    expect([gold, trivial]).toEqual([11, 30]);
  });
});
