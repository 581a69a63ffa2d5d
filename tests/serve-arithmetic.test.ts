import * as oxigraph from 'oxigraph';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serve, type ShardServer } from '../src/serve/server.js';
import { leftGroupedQuery } from '../src/sparql/generate.js';
import { findArithmeticChain, unescapeIriCodepoints } from '../src/sparql/arithmetic-chain.js';
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
      expect(leftGroupedQuery(q), q).toEqual({ kind: 'as-sent' });
    }
    expect(leftGroupedQuery('PREFIX ex: <http://e/> SELECT ?x { ?x ex:p\\.q ?y FILTER(?y - 1 - 1 > 0) }')).toEqual({
      kind: 'rewritten',
      text: 'SELECT ?x WHERE {\n  ?x <http://e/p.q> ?y.\n  FILTER((?y - 1 ) - 1  > 0 )\n}',
    });
  });

  it('reads the codepoint escapes of IRIs before bracketing: <urn:\u0061> is <urn:a>, and 8-2-1 is 5 beside it', async () => {
    // Right-grouped, FILTER(8-2-1=7) holds and FILTER(8-2-1=5) does not.
    expect(await rows(shard, 'SELECT ?x { BIND(<urn:\\u0061> AS ?x) FILTER(8-2-1=7) }')).toEqual([]);
    expect(await rows(shard, 'SELECT ?x (8-2-1 AS ?e) { BIND(<urn:\\u0061> AS ?x) FILTER(8-2-1=5) }')).toEqual([{ x: 'urn:a', e: '5' }]);
    expect(await rows(shard, 'SELECT ?x (10/4*2 AS ?e) { BIND(<urn:\\U0001F600> AS ?x) }')).toEqual([{ x: 'urn:\u{1F600}', e: '5' }]);
    // Only IRIs are unescaped, only to characters an IRI holds as they are; strings keep their escapes (sparqljs reads them).
    expect(unescapeIriCodepoints('SELECT * { <urn:\\u0061> ?p "\\u0062" . <urn:\\u003E> <urn:\\u0020> <urn:\\uD83D\\uDE00> } # <urn:\\u0063>')).toBe(
      'SELECT * { <urn:a> ?p "\\u0062" . <urn:\\u003E> <urn:\\u0020> <urn:\\uD83D\\uDE00> } # <urn:\\u0063>',
    );
  });

  it('refuses SPARQL 1.2 syntax with 400 naming the construct, the same at 100 and at 2,000 characters, chain or not', async () => {
    const answer = async (query: string) => {
      const r = await fetch(`${shard}?query=${encodeURIComponent(query)}`);
      return [r.status, (await r.text()).trim()];
    };
    const said = (column: number, construct: string) =>
      `malformed query: Parse error on line 1, column ${column}: ${construct}, not SPARQL 1.1; ` +
      "the benchmark's endpoints and federation engines read SPARQL 1.1 queries (fkgqa parses them with sparqljs): write it in SPARQL 1.1";
    const cases: [string, number, string][] = [
      ['SELECT ?x WHERE { BIND("a"@en--ltr AS ?x) }', 27, '"…"@en--ltr is SPARQL 1.2 syntax (a language tag with a base direction)'],
      ['SELECT ?x WHERE { BIND(<<( <urn:a> <urn:b> <urn:c> )>> AS ?x) }', 24, '<<( … )>> is SPARQL 1.2 syntax (a triple term)'],
      ['SELECT * WHERE { ?s ?p ?o LATERAL { SELECT ?x WHERE { BIND(1 AS ?x) } } }', 27, 'LATERAL is SPARQL 1.2 syntax (a lateral join)'],
      ['VERSION "1.2" SELECT * WHERE { ?s ?p ?o }', 1, 'VERSION is SPARQL 1.2 syntax (a version declaration)'],
      ['SELECT * WHERE { << <urn:a> <urn:b> <urn:c> >> <urn:p> ?o }', 18, '<< … >> is SPARQL 1.2 syntax (a reified triple)'],
      ['SELECT * WHERE { <urn:a> <urn:b> <urn:c> {| <urn:p> ?o |} }', 42, '{| … |} is SPARQL 1.2 syntax (an annotation)'],
      ['SELECT ?x WHERE { BIND(isTRIPLE(<urn:a>) AS ?x) }', 24, 'isTRIPLE(…) is SPARQL 1.2 syntax (a function of triple terms)'],
      // With an arithmetic chain (right-grouped by oxigraph): the SPARQL 1.2 syntax is named, not the chain.
      ['SELECT ?x { BIND("a"@en--ltr AS ?x) FILTER(8-2-1=7) }', 21, '"…"@en--ltr is SPARQL 1.2 syntax (a language tag with a base direction)'],
      ['SELECT (?y * 10 / 4 * 2 AS ?e) { BIND(1 AS ?y) LATERAL { BIND(2 AS ?z) } }', 48, 'LATERAL is SPARQL 1.2 syntax (a lateral join)'],
    ];
    for (const [query, column, construct] of cases) {
      expect(query.length).toBeLessThan(512);
      const padded = `${query} #${'x'.repeat(2000 - query.length)}`;
      expect(await answer(query), query).toEqual([400, said(column, construct)]);
      expect(await answer(padded), query).toEqual([400, said(column, construct)]);
    }
    // `?r<<xsd:integer>("6")` is less-than and an IRI (SPARQL 1.1, as oxigraph reads it), no `<<`: answered at either length, its chain grouped from the left (8-2-1 = 5 < 6).
    const less = 'SELECT ?r WHERE { BIND(8-2-1 AS ?r) FILTER(?r<<http://www.w3.org/2001/XMLSchema#integer>("6")) }';
    expect(await rows(shard, less)).toEqual([{ r: '5' }]);
    expect(await rows(shard, `${less} #${'x'.repeat(2000)}`)).toEqual([{ r: '5' }]);
    // Without SPARQL 1.2 syntax, bracketed or with no chain at all (paths, collections, negative numbers, a bracketed right operand): answered as sent.
    expect(await rows(shard, 'SELECT ?x { BIND("a"@en AS ?x) FILTER((8-2)-1=5) }')).toEqual([{ x: 'a' }]);
    expect(await rows(shard, 'SELECT ?n { BIND("x"@en-GB AS ?l) OPTIONAL { ?s <urn:a>/<urn:b>/<urn:c> (1 -2 -3) } BIND(8 - (2 - 1) AS ?n) FILTER(-?n - -1 = -6) } # 8-2-1')).toEqual([{ n: '7' }]);
  });

  it('reports a syntax error where the client wrote it, not in the bracketed text', async () => {
    const status = async (query: string) => {
      const r = await fetch(`${shard}?query=${encodeURIComponent(query)}`);
      return [r.status, (await r.text()).trim()];
    };
    // oxigraph refuses a language subtag of 11 letters (sparqljs reads it): the tag ends at line 2, column 32 of this text.
    expect(await status('SELECT ?s\nWHERE { ?s ?p "x"@en-aaaaaaaaaaa FILTER(?p - 1 - 1 > 0) }')).toEqual([
      400,
      `malformed query: error at 2:33: expected one of "-", "--", ['a' ..= 'z' | 'A' ..= 'Z' | '0' ..= '9'], language tag parsing failed`,
    ]);
    // ?x bound twice: oxigraph reports it at the end of the text (line 2, column 56), not at line 5 of the generated text.
    expect(await status('SELECT ?x\nWHERE { BIND(1 AS ?x) BIND(?x - 1 - 1 AS ?x) ?x ?p ?o }')).toEqual([400, 'malformed query: error at 2:56: expected [_]']);
  });

  it('finds chains in text, not in strings, IRIs, comments, numbers, names, paths, collections or VALUES rows', () => {
    const at = (q: string) => {
      const c = findArithmeticChain(q);
      return c && `${c.first} ${c.op1} ${c.second} ${c.op2} @${c.line}:${c.column}`;
    };
    expect(at('SELECT (8-2-1 AS ?e) {}')).toBe('8 - 2 - @1:9');
    expect(at('SELECT * { FILTER(8 -2 -1 = 5) }')).toBe('8 - 2 - @1:19');
    expect(at('SELECT * { FILTER(-8 - -2 + 1 = 5) }')).toBe('-8 - -2 + @1:19');
    expect(at('SELECT * { FILTER(?a * 2 - ?b / 2 / 3 > 0) }')).toBe('?b / 2 / @1:28');
    expect(at('SELECT * {} ORDER BY DESC(STRLEN(?x) - 1 - 1)')).toBe('STRLEN(?x) - 1 - @1:27');
    expect(at('SELECT * { ?s ?p ?o FILTER NOT EXISTS { ?o ?q ?r FILTER(?r - 1 + 1 > 0) } }')).toBe('?r - 1 + @1:57');
    expect(at('SELECT * { { SELECT (SUM(?y) - 1 - 1 AS ?z) {} GROUP BY ?x HAVING(?x * 2 * 2 > 0) } }')).toBe('SUM(?y) - 1 - @1:22');
    expect(at('SELECT * {} GROUP BY ?x HAVING(COUNT(*) * 2 / 2 > 0)')).toBe('COUNT(*) * 2 / @1:32');
    expect(at('SELECT * {\n  ?s ?p ?o\n  BIND(?o - ?p - ?s AS ?z)\n}')).toBe('?o - ?p - @3:8');
    for (const q of [
      'SELECT * { ?s <urn:a-b-c>/ex:d-e-f/<urn:g>* ?o ; ex:q (1 -2 -3) , [ ex:r 4 ] FILTER(?o != "8-2-1"@en-GB--ltr) } # 8-2-1',
      'SELECT * { VALUES (?a ?b ?c) { (1 -2 -3) } BIND(1e-3-1 AS ?y) FILTER(?a - (?b - ?c) > 0 && ?a * -1 < 2 / ?b) }',
      'SELECT (COUNT(*) AS ?n) (8 - (2 - 1) AS ?r) { BIND(<<( <urn:a> <urn:b> -1 )>> AS ?t) ?s ?p ?o {| <urn:q> -2 |} FILTER(?x IN (1 -2, -3)) } ORDER BY ?x ?y',
      'SELECT * { ?s ?p ?o FILTER(?o) ?s ?q (1 -2 -3) }',
    ]) {
      expect(at(q), q).toBeUndefined();
    }
  });

  it('over 100 random expressions: a chain is found whenever oxigraph answers the text otherwise than its left-grouped form, and only where sparqljs sees one', () => {
    let seed = 7; // a fixed xorshift32 sequence: the same queries on every run
    const rnd = () => {
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      return (seed >>> 0) / 4294967296;
    };
    const pick = <T>(xs: T[]): T => xs[Math.floor(rnd() * xs.length)];
    // Numeric operands (a variable, literals, signs, calls, brackets, EXISTS) joined by + - * / and, less often, by < || IN.
    const atom = (d: number): string =>
      pick([
        () => '?a',
        () => '7',
        () => '2',
        () => '2.5',
        () => '1e-3',
        () => '.5E+2',
        () => '"3"^^<http://www.w3.org/2001/XMLSchema#integer>',
        () => '-?a',
        () => '+7',
        () => (d > 1 ? '5' : `ABS(${expr(d + 1)})`),
        () => (d > 1 ? '?a' : `(${expr(d + 1)})`),
        () => (d > 1 ? '3' : `IF(?a < 5, ${expr(d + 1)}, 1)`),
        () => (d > 1 ? '4' : `STRLEN(STR(${expr(d + 1)}))`),
      ])();
    const expr = (d: number): string => {
      let e = atom(d);
      for (let i = Math.floor(rnd() * 4); i > 0; i--) {
        const op = pick(['+', '-', '*', '/', '+', '-', '*', '/', '+', '-', '*', '/', '+', '-', '*', '/', '<', '||', 'IN']);
        const sp = () => pick(['', ' ']);
        e += op === 'IN' ? ` IN (1, ${atom(d)})` : `${sp()}${op}${sp()}${atom(d)}`;
      }
      return e;
    };
    const query = [
      (e: string) => `SELECT ?z { VALUES ?a { 3 } BIND(${e} AS ?z) }`,
      (e: string) => `SELECT ?z { VALUES ?a { 3 } BIND(${e} AS ?z) }`,
      (e: string) => `SELECT (${e} AS ?z) { VALUES ?a { 3 } }`,
      (e: string) => `SELECT * { VALUES ?a { 3 } FILTER(${e}) }`,
      (e: string) => `SELECT (${e} AS ?z) { VALUES ?a { 3 } }`,
      (e: string) => `SELECT ?a { VALUES ?a { 3 4 } } ORDER BY (${e}) DESC(${e})`,
      (e: string) => `SELECT * { VALUES ?a { 3 } OPTIONAL { ?s <urn:a>/<urn:b>* (1 -2 -3) } FILTER NOT EXISTS { VALUES ?r { 1 } FILTER(${e}) } }`,
      (e: string) => `SELECT * { VALUES (?a ?b) { (3 -2) (4 -4) } FILTER ABS(${e}) }`,
    ];
    const store = new oxigraph.Store();
    const answer = (q: string) => {
      try {
        return store.query(q, { results_format: 'application/sparql-results+json' }) as string;
      } catch (e) {
        return String(e);
      }
    };
    const missed: string[] = [];
    const spurious: string[] = [];
    let parsed = 0;
    let differ = 0;
    for (let i = 0; i < 100; i++) {
      const q = pick(query)(rnd() < 0.1 ? `EXISTS { VALUES ?r { 1 } FILTER(${expr(0)} > ?r) } = (${expr(0)} > 1)` : expr(0));
      const grouping = leftGroupedQuery(q);
      if (grouping.kind === 'refused') continue; // sparqljs does not parse it (e.g. EXISTS in ORDER BY)
      parsed++;
      const found = findArithmeticChain(q) !== undefined;
      if (found && grouping.kind !== 'rewritten') spurious.push(q);
      if (grouping.kind === 'rewritten' && answer(q) !== answer(grouping.text)) {
        differ++;
        if (!found) missed.push(q);
      }
    }
    expect({ missed, spurious }).toEqual({ missed: [], spurious: [] });
    // Enough of both kinds for the comparison to mean something.
    expect(parsed).toBeGreaterThan(80);
    expect(differ).toBeGreaterThan(5);
  });
});

describe('fkgqa serve: the endpoint reads comments, IRIs and `<` as the SPARQL grammar does', () => {
  /** Status and body of a POSTed query (application/sparql-query). */
  const post = async (endpoint: string, query: string): Promise<[number, string]> => {
    const r = await fetch(endpoint, { method: 'POST', headers: { 'content-type': 'application/sparql-query', accept: 'application/sparql-results+json' }, body: query });
    return [r.status, await r.text()];
  };

  it('ends a # comment at a lone CR, so that a chain after it is grouped from the left (8-2-1 is 5, not 7)', async () => {
    const [status, body] = await post(shard, 'SELECT ?x WHERE { # c\rBIND(8-2-1 AS ?x) }');
    expect(status, body).toBe(200);
    expect((JSON.parse(body) as { results: { bindings: Binding[] } }).results.bindings.map((b) => b.x.value)).toEqual(['5']);
    expect(await rows(shard, 'SELECT ?x WHERE { # c\rBIND(8-2-1 AS ?x) }')).toEqual([{ x: '5' }]);
    // SPARQL 1.2 syntax after the comment, on line 2: named there.
    const [refused, message] = await post(shard, 'SELECT ?x WHERE { # c\rBIND("x"@en--ltr AS ?l) BIND(8-2-1 AS ?x) }');
    expect([refused, message]).toEqual([400, expect.stringContaining('Parse error on line 2, column 9: "…"@en--ltr is SPARQL 1.2 syntax')]);
  });

  it('counts the brackets after a comment ended by a lone CR against the nesting limit', async () => {
    const query = `SELECT ?x WHERE { #\rBIND(${'('.repeat(3000)}1${')'.repeat(3000)} AS ?x) }`;
    const [status, body] = await post(shard, query);
    expect([status, body.trim()]).toEqual([400, 'query nested too deeply: brackets ({ ( [) nest 3002 levels, the limit is 320']);
    // The endpoint still answers.
    expect(await rows(shard, 'SELECT (8-2-1 AS ?x) {}')).toEqual([{ x: '5' }]);
  });
});

describe('fkgqa serve: a `<` after an operand in an expression is less-than, not an IRI', () => {
  it('finds the chain after `?a<` (no spaces) and refuses or groups it from the left; oxigraph alone answered a=6', async () => {
    const query = 'SELECT ?a WHERE { BIND(6 AS ?a) BIND(8 AS ?b) FILTER(?a<?b-2-1&&?b>0) }';
    expect(findArithmeticChain(query)).toMatchObject({ first: '?b', op1: '-', second: '2', op2: '-' });
    const r = await fetch(`${shard}?query=${encodeURIComponent(query)}`);
    const body = await r.text();
    // Never the right-grouped answer (6 < 8-(2-1) holds): refused naming the chain (sparqljs reads `<?b-2-1&&?b>` as an IRI).
    expect([r.status, body]).toEqual([400, expect.stringContaining('the arithmetic chain ?b - 2 - … (line 1, column 57)')]);
    // With spaces, both parsers read less-than: grouped from the left, 6 < 5 is false.
    expect(await rows(shard, 'SELECT ?a WHERE { BIND(6 AS ?a) BIND(8 AS ?b) FILTER(?a < ?b-2-1 && ?b > 0) }')).toEqual([]);
    // A triple pattern's `?s <p>` stays an IRI.
    expect(findArithmeticChain('SELECT * { ?s <urn:a-b-c> ?o FILTER(?o<3) }')).toBeUndefined();
  });
});

describe('fkgqa serve: brackets after a `<` that is less-than count against the nesting limit', () => {
  const deep = `${'('.repeat(3000)}1${')'.repeat(3000)}`;
  it.each([
    ['?a<… &&?b>0', `SELECT ?a WHERE { BIND(6 AS ?a) BIND(8 AS ?b) FILTER(?a<${deep}&&?b>0) }`],
    ['?a<=… &&?b>0', `SELECT ?a WHERE { BIND(6 AS ?a) BIND(8 AS ?b) FILTER(?a<=${deep}&&?b>0) }`],
    ['?a<… >?b', `SELECT ?a WHERE { BIND(6 AS ?a) BIND(8 AS ?b) FILTER(?a<${deep}>?b) }`],
  ])('answers 400 naming the limit to %s with 3,000 brackets between `<` and `>`, and the endpoint answers the next query unrestarted', async (_, query) => {
    const before = server.restartsOf('library-shard1')!;
    const r = await fetch(shard, { method: 'POST', headers: { 'content-type': 'application/sparql-query' }, body: query });
    expect([r.status, (await r.text()).trim()]).toEqual([400, 'query nested too deeply: brackets ({ ( [) nest 3002 levels, the limit is 320']);
    expect(await rows(shard, 'SELECT (8-2-1 AS ?x) {}')).toEqual([{ x: '5' }]);
    expect(server.restartsOf('library-shard1')).toEqual(before);
  });
});
