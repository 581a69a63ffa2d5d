import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serve, type ShardServer } from '../src/serve/server.js';
import { leftGroupedQuery } from '../src/sparql/generate.js';
import { demoBuild, tmpDir } from './helpers.js';

// The demo library: books 1–8 with years 1998 2004 2011 2015 2019 2021 2007 2023 (sum 16098) and
// author ids 1 2 3 2 4 5 6 1 (authors 1 and 2 have two books each).
const BOOK = 'http://valuenet/ontop/book';

let server: ShardServer;
let shard: string; // library-shard1's endpoint
let library: string; // the unsharded library graph's endpoint

beforeAll(async () => {
  server = await serve({ shards: await demoBuild(tmpDir('fkgqa-serve-arith-')), timeoutMs: 20_000, withOriginals: true });
  shard = server.endpoint('library-shard1')!.url;
  library = server.endpoint('library')!.url;
});

afterAll(async () => {
  await server?.close();
});

type Binding = Record<string, { value: string }>;
/** The rows of a SELECT answered by `endpoint`, each as variable → value. */
async function rows(endpoint: string, query: string): Promise<Record<string, string>[]> {
  const r = await fetch(`${endpoint}?query=${encodeURIComponent(query)}`);
  expect(r.status, await r.clone().text()).toBe(200);
  const body = (await r.json()) as { results: { bindings: Binding[] } };
  return body.results.bindings.map((b) => Object.fromEntries(Object.entries(b).map(([k, v]) => [k, v.value])));
}

describe('fkgqa serve: arithmetic chains are grouped from the left (SPARQL 1.1), on the shard endpoint itself', () => {
  it('evaluates + - * / chains, mixed and with unary minus, as SPARQL 1.1 does (oxigraph alone: 7, 1.25, …)', async () => {
    const [r] = await rows(
      shard,
      'SELECT (8-2-1 AS ?e) (10/4*2 AS ?a) (8 - 2 + 1 AS ?p) (8 / 2 / 2 AS ?d) (1 - 2 * 3 - 4 AS ?m) (2 * 3 / 2 * 4 - 1 - 1 AS ?n) ' +
        '(8 - -2 - 1 AS ?u) (-(8) - 2 - 1 AS ?v) (8 -2 -1 AS ?w) (8 - (2 - 1) AS ?r) {}',
    );
    // Right-grouped (oxigraph on the bare text): 7, 1.25, 5, 8, -1, 0.75, 11, -9, 7; a bracketed right operand stays 7.
    expect(r).toEqual({ e: '5', a: '5', p: '7', d: '2', m: '-9', n: '10', u: '9', v: '-11', w: '5', r: '7' });
  });

  it('groups chains inside FILTER, BIND, ORDER BY, HAVING and aggregates', async () => {
    // FILTER: ?y - 1000 - 998 = 0 holds for 1998 only (right-grouped: ?y = 2, no book).
    expect(await rows(library, `SELECT ?b { ?b <${BOOK}#year> ?y FILTER(?y - 1000 - 998 = 0) }`)).toEqual([{ b: `${BOOK}/book_id=1` }]);
    // BIND: 1998 - 1000 - 900 = 98 (right-grouped: 1898).
    expect(await rows(library, `SELECT ?d { <${BOOK}/book_id=1> <${BOOK}#year> ?y BIND(?y - 1000 - 900 AS ?d) }`)).toEqual([{ d: '98' }]);
    // ORDER BY: ?y - ?id - ?y is -?id, largest for book 1 (right-grouped: 2·?y - ?id, largest for book 8).
    expect(await rows(library, `SELECT ?b { ?b <${BOOK}#year> ?y ; <${BOOK}#book_id> ?id } ORDER BY DESC(?y - ?id - ?y) LIMIT 1`)).toEqual([{ b: `${BOOK}/book_id=1` }]);
    // HAVING: COUNT(*) - 1 - 1 >= 0 keeps the authors with two books (right-grouped: every author).
    expect(await rows(library, `SELECT ?a { ?b <${BOOK}#author_id> ?a } GROUP BY ?a HAVING (COUNT(*) - 1 - 1 >= 0) ORDER BY ?a`)).toEqual([{ a: '1' }, { a: '2' }]);
    // An aggregate's argument: SUM(?y - 2000 - 10) = 16098 - 8 × 2010 = 18 (right-grouped: 178).
    expect(await rows(library, `SELECT (SUM(?y - 2000 - 10) AS ?s) { ?b <${BOOK}#year> ?y }`)).toEqual([{ s: '18' }]);
  });

  it('leaves a query without an arithmetic chain as the client sent it', () => {
    for (const q of [
      'SELECT ?s { ?s ?p ?o }',
      // Property paths, prefixed names and language tags with "-", a lone operator, a right operand in brackets.
      'PREFIX ex: <http://e/> SELECT ?x { ?x ex:a/ex:b-c* ?y ; ex:l "x"@en-GB FILTER(?y - 1 > 2 * ?y && -?y < 8 - (2 - 1)) }',
      'SELECT ?x { ?x <http://e/a-b/c> "1-2-3" } # 8 - 2 - 1',
      'SELECT (1 + 2 AS ?x) (SUM(?y * 2) AS ?z) { ?a <http://e/p> ?y }',
      'SELECT ?x { ?x ?p ?y } ORDER BY (?y - ?x)',
      'not SPARQL - - at all',
    ]) {
      expect(leftGroupedQuery(q), q).toBeUndefined();
    }
    expect(leftGroupedQuery('PREFIX ex: <http://e/> SELECT ?x { ?x ex:p\\.q ?y FILTER(?y - 1 - 1 > 0) }')).toBe('SELECT ?x WHERE {\n  ?x <http://e/p.q> ?y.\n  FILTER((?y - 1 ) - 1  > 0 )\n}');
  });
});
