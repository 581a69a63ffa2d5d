/**
 * Long queries: no query within the documented limits (`--max-query-chars`, 1,000,000 for scripted
 * agents; brackets nested 64 deep; operators nested 256 deep, docs/mcp.md "Limits of a query") is
 * refused as a syntax error because of the parser's own limits (src/sparql/parse.ts,
 * src/sparql/sparqljs-lexer.ts). A query beyond them is refused as too complex (`too-complex`, HTTP
 * 400 `query too complex` at the shard endpoints), never as `syntax`. The 990,000-character lists and
 * chains that take seconds to parse, and a 990,000-character query through run_sparql_query to a
 * served shard, are in long-query.slow.test.ts.
 */
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operatorDepth, parseQuery, parseSparql, QueryTooComplex, sparqljsLib } from '../src/sparql/parse.js';
import { MAX_OPERATOR_DEPTH, MAX_SERVED_QUERY_DEPTH, nestingDepth } from '../src/sparql/guard.js';
import { generateQuery } from '../src/sparql/generate.js';
import type sparqljs from 'sparqljs';
import { replacedLexerRules } from '../src/sparql/sparqljs-lexer.js';
import { planQuery, routeQuery } from '../src/federation/routing.js';
import { registryFromEndpointsValue } from '../src/federation/registry.js';
import { classifyQuery } from '../src/score/validity.js';
import { quickInspect } from '../src/sparql/inspect.js';
import { MEDIA } from '../src/sparql/protocol.js';
import { serve, type ShardServer } from '../src/serve/server.js';
import { demoBuild, tmpDir } from './helpers.js';

const P = 'http://valuenet/ontop/';
const LIMIT = 990_000;
/** `head`, then `unit` as often as it fits, spaces to fill, then `tail`: exactly `LIMIT` characters. */
const filled = (head: string, unit: string, tail: string) => {
  const room = LIMIT - head.length - tail.length;
  const units = unit.repeat(Math.floor(room / unit.length));
  const text = head + units + ' '.repeat(room - units.length) + tail;
  expect(text.length).toBe(LIMIT);
  return text;
};

describe('long queries / the lexer', () => {
  it("the replaced rules (string literals, prefixed names) accept exactly the tokens of sparqljs 3.7.4's on 100,000 random texts each", () => {
    sparqljsLib();
    const rules = replacedLexerRules(createRequire(import.meta.url)('sparqljs/lib/SparqlParser.js'));
    expect([...rules.keys()].sort((a, b) => a - b)).toEqual([103, 117, 118, 119, 120]);
    const alphabet = ['a', 'B', '.', ':', '%', '4', 'F', '\\', '#', "'", '"', '-', '_', '\u00B7', '\uD83D', '\uDE00', '\uD83D\uDE00', ' ', '\n', 't', 'u', 'U', '0', 'é', '\u0300', '~', '$', '\r'];
    const starts: Record<number, string[]> = { 103: ['p:', ':', 'ab:', 'a.b:', 'p:.', 'p:a'], 117: ["'"], 118: ['"'], 119: ["'''", "''''"], 120: ['"""', '""""'] };
    let seed = 7;
    const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff), seed % n);
    const differ: string[] = [];
    let matched = 0;
    for (const [i, [original, replacement]] of rules) {
      for (let k = 0; k < 100_000; k++) {
        let text = starts[i][rnd(starts[i].length)];
        for (let n = rnd(14); n > 0; n--) text += alphabet[rnd(alphabet.length)];
        const a = original.exec(text)?.[0] ?? null;
        if (a !== null) matched++;
        if (a !== (replacement.exec(text)?.[0] ?? null)) differ.push(`${i} ${JSON.stringify(text)}`);
      }
    }
    expect(differ).toEqual([]);
    expect(matched).toBeGreaterThan(30_000); // many texts are tokens, not only failures
  });
});

describe('long queries / 990,000 characters, valid: parsed, planned, judged valid', () => {
  const registry = registryFromEndpointsValue(
    { endpoints: [1, 2].map((n) => ({ id: `library-shard${n}`, url: `http://127.0.0.1:9/library-shard${n}/sparql`, graph: 'library', shard: `shard${n}`, role: 'shard' })) } as never,
    'test',
  );
  const ep = 'http://127.0.0.1:9/library-shard1/sparql';
  const cases: [string, () => string][] = [
    ['a "…" string literal', () => filled(`SELECT * WHERE { SERVICE <${ep}> { ?s ?p ?o FILTER(?o != "`, 'ab c', '") } }')],
    ["a '''…''' string literal with quotes and newlines inside", () => filled(`SELECT * WHERE { SERVICE <${ep}> { ?s ?p ?o FILTER(?o != '''`, "a'b''c\n", "x''') } }")],
    ['a local name (PREFIX x:, then x:aaaa…)', () => filled(`PREFIX x: <${P}> SELECT * WHERE { SERVICE <${ep}> { ?s ?p x:`, 'a.b', ' } }')],
    ['an IRI', () => filled(`SELECT * WHERE { SERVICE <${ep}> { ?s ?p <${P}`, 'a', '> } }')],
    ['a comment', () => filled(`SELECT * WHERE { SERVICE <${ep}> { ?s ?p ?o } } #`, 'a', '')],
    ['whitespace', () => filled(`SELECT * WHERE { SERVICE <${ep}> { ?s ?p ?o`, ' ', ' } }')],
  ];
  for (const [what, make] of cases) {
    it(`${what}: route direct, validity ok, gold-query parse ok`, () => {
      const q = make();
      const plan = planQuery(q, registry, { maxQueryChars: 1_000_000 });
      expect(plan.ok ? [plan.route, plan.targets.map((t) => t.url)] : plan).toEqual(['direct', [ep]]);
      expect(classifyQuery(q)).toEqual({ class: 'ok' });
      expect(parseQuery(q, undefined).ok).toBe(true);
    });
  }

  it('the text handed on (generateQuery) brackets || and && chains only where precedence needs it, arithmetic chains from the left, and parses back to the same query', () => {
    const texts = [
      `SELECT * WHERE { ?s ?p ?b FILTER(?b${' || ?b'.repeat(70)}) }`,
      `SELECT * WHERE { ?s ?p ?b FILTER(?b${' + 1'.repeat(70)} > 0) }`,
      'SELECT * WHERE { ?s ?p ?b FILTER(?a - (?b - ?c) = 1 && (?x || ?y) && !(?a = ?b) && -?a < +?b && ?a * (?b + ?c) / ?d != 2 && (?a = ?b) IN (true) && !(!?a)) }',
    ];
    const out = texts.map((t) => {
      const ast = parseSparql(t) as sparqljs.SparqlQuery;
      const text = generateQuery(ast);
      const same =
        JSON.stringify(parseSparql(text, { maxQueryDepth: MAX_SERVED_QUERY_DEPTH }), (k, v) => (k === 'prefixes' ? undefined : v)) ===
        JSON.stringify(ast, (k, v) => (k === 'prefixes' ? undefined : v));
      return [nestingDepth(text), same];
    });
    // The || chain: the WHERE's brace and the FILTER's bracket; the + chain: one bracket per operator but the last.
    expect(out).toEqual([
      [2, true],
      [71, true],
      [4, true],
    ]);
    // sparqljs writes a number with a space after it: spaces before `)` are left out here.
    const text = (q: string) =>
      generateQuery(parseSparql(q) as sparqljs.SparqlQuery)
        .replace(/\s+/g, ' ')
        .replace(/ \)/g, ')');
    expect(text(texts[2])).toContain('FILTER(?a - (?b - ?c) = 1 && (?x || ?y) && !(?a = ?b) && - ?a < + ?b && (?a * (?b + ?c)) / ?d != 2');
    // oxigraph reads `10 - 4 - 3` as 10 - (4 - 3): the text sent says which grouping SPARQL means.
    expect(text('SELECT (10 - 4 - 3 AS ?a) (16 / 4 / 2 * 3 AS ?b) (?x + ?y - ?z AS ?c) {}')).toContain('((10 - 4) - 3 AS ?a) (((16 / 4) / 2) * 3 AS ?b) ((?x + ?y) - ?z AS ?c)');
    // Several HAVING conditions: one && of them (sparqljs writes them in one pair of brackets, which does not parse).
    const having = text('SELECT ?s (COUNT(*) AS ?n) { ?s ?p ?o } GROUP BY ?s HAVING (COUNT(*) > 1) (?s != <urn:x>) (STRLEN(STR(?s)) > 3)');
    expect(having).toContain('HAVING (COUNT(*) > 1 && ?s != <urn:x> && STRLEN(STR(?s)) > 3)');
    expect(() => parseSparql(having)).not.toThrow();
  });

  it('over the limits: 300 chained && (operator depth 303) and 65 nested groups are too complex, never syntax; at the limit a chain runs', () => {
    const chain = (n: number) => `SELECT * WHERE { SERVICE <${ep}> { ?s ?p ?o FILTER(?o ${'&& ?o '.repeat(n)}) } }`;
    // The WHERE (1 element), the SERVICE's group (2: the triple block, the FILTER), the && chain (n).
    expect(operatorDepth(parseSparql(chain(250)))).toBe(1 + 2 + 250);
    expect(planQuery(chain(253), registry, { maxQueryChars: 8000 })).toMatchObject({ ok: true, route: 'direct' });
    expect(planQuery(chain(300), registry, { maxQueryChars: 8000 })).toEqual({
      ok: false,
      errorClass: 'too-complex',
      message: expect.stringMatching(/^the query's operators nest 303 levels deep, more than the limit of 256: every element of a group/),
    });
    expect(() => parseSparql(chain(300))).toThrow(QueryTooComplex);
    expect(classifyQuery(chain(300))).toEqual({ class: 'execution', detail: expect.stringMatching(/^the query's operators nest 303 levels deep/) });
    const nested = `SELECT * WHERE { SERVICE <${ep}> { ${'{'.repeat(65)} ?s ?p ?o ${'}'.repeat(65)} } }`;
    expect(() => parseSparql(nested)).toThrow('brackets ({ ( [) nest 67 levels, more than the limit of 64: flatten the query');
    expect(classifyQuery(nested).class).toBe('execution');
    expect(MAX_OPERATOR_DEPTH).toBe(256);
  });

  it('a text a shard endpoint answers without parsing (quickInspect) is too short to exceed the operator depth', () => {
    const plain = (n: number) => `SELECT * WHERE { ?s ?p ?o FILTER(?o${'+1'.repeat(n)}) }`;
    expect(plain(230).length).toBeLessThanOrEqual(2 * MAX_OPERATOR_DEPTH);
    expect(quickInspect(plain(230))?.form).toBe('bindings');
    expect(quickInspect(plain(260))).toBeUndefined();
  });
});

describe('long queries / the shard endpoints of fkgqa serve', () => {
  let server: ShardServer;
  const url = (n: number) => server.endpoint(`library-shard${n}`)!.url;
  beforeAll(async () => {
    server = await serve({ shards: await demoBuild(tmpDir('fkgqa-long-query-')), kgs: ['library'], writeFiles: false, timeoutMs: 120_000 });
  });
  afterAll(async () => server?.close());

  it('a lone SERVICE with arithmetic takes the parsed route: its chains are sent bracketed from the left, as SPARQL groups them; the shard endpoint groups the text as written the same way (oxigraph alone groups from the right)', async () => {
    const reg = registryFromEndpointsValue({ endpoints: [{ id: 'library-shard1', url: url(1), graph: 'library', shard: 'shard1', role: 'shard' }] } as never, 'test');
    const route = routeQuery(`SELECT (COUNT(*) - 4 - 3 AS ?n) (16 / 4 / 2 AS ?h) WHERE { SERVICE <${url(1)}> { ?s ?p ?o } }`, reg, { maxQueryChars: 8000 }, { quick: true });
    expect(route.ok && [route.route, route.quick, route.query.replace(/\s+/g, ' ').replace(/ \)/g, ')')]).toEqual([
      'direct',
      false,
      expect.stringContaining('((COUNT(*) - 4) - 3 AS ?n) ((16 / 4) / 2 AS ?h)'),
    ]);
    const post = async (q: string) => {
      const r = await fetch(url(1), { method: 'POST', headers: { 'Content-Type': MEDIA.sparqlQuery, Accept: MEDIA.json }, body: q });
      const b = (await r.json()).results.bindings[0];
      return [Number(b.n.value), Number(b.h.value)];
    };
    const triples = server.endpoint('library-shard1')!.triples;
    expect(await post(route.ok ? route.query : '')).toEqual([triples - 7, 2]);
    // The same text as the agent wrote it, sent as is: serve brackets its chains before oxigraph evaluates (leftGroupedQuery).
    expect(await post('SELECT (COUNT(*) - 4 - 3 AS ?n) (16 / 4 / 2 AS ?h) WHERE { ?s ?p ?o }')).toEqual([triples - 7, 2]);
  });

  it('a shard endpoint answers a plain chain of 3,000 && (oxigraph overflows on it) 400 query too complex, and the next query 200', async () => {
    const post = (q: string) => fetch(url(1), { method: 'POST', headers: { 'Content-Type': MEDIA.sparqlQuery, Accept: MEDIA.json }, body: q });
    const deep = await post(`SELECT * WHERE { ?s ?p ?o FILTER(?o ${'&& ?o '.repeat(3000)}) }`);
    expect([deep.status, (await deep.text()).slice(0, 80)]).toEqual([400, "query too complex: the query's operators nest 3002 levels deep, more than the li"]);
    const next = await post('SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }');
    expect([next.status, (await next.json()).results.bindings[0].n.value]).toEqual([200, String(server.endpoint('library-shard1')!.triples)]);
  });
});
