/**
 * A query's verdict does not depend on its length or on how it spells a nesting: a chain of sign
 * operators (`!!?x`, `- - 1`) nests as deep as its bracketed spelling in the nesting limit and is
 * refused, naming the limit of fkgqa's parser and the spelling to write, whether the endpoint
 * clears the text on its keywords (up to 512 characters) or parses it; an IRI's codepoint escape
 * (SPARQL 1.1 §19.2) is read at any length; a syntax error names the offending token's true line
 * and column. On the serve endpoint and through `fkgqa query`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serve, type ShardServer } from '../src/serve/server.js';
import { measureNesting, MAX_SERVED_QUERY_DEPTH } from '../src/sparql/guard.js';
import { quickInspect } from '../src/sparql/inspect.js';
import { lessThanBeforeIri, signChain } from '../src/sparql/lexer.js';
import { parseSparql } from '../src/sparql/parse.js';
import { planSourceQuery } from '../src/federation/routing.js';
import { demoBuild, fkgqaInProcess, tmpDir } from './helpers.js';

const YEAR = 'http://valuenet/ontop/book#year';
/** `ASK { FILTER(<n signs> true) }`, padded with a comment to at least `length` characters. */
const chain = (sign: string, n: number, length = 0) => {
  const q = `ASK{FILTER(${sign.repeat(n)}true)}`;
  return q.length >= length ? q : `${q}\n#${'x'.repeat(length - q.length)}`;
};
/** The parse error a text gives (message and Jison's position), or undefined when it parses. */
const parseError = (text: string) => {
  try {
    parseSparql(text);
    return undefined;
  } catch (e) {
    return { message: (e as Error).message, loc: (e as { hash?: { loc?: unknown } }).hash?.loc };
  }
};

describe('chained signs: nesting, recognition, quick inspection', () => {
  it('nests a chain of signs as deep as its bracketed spelling; the sign of a numeric literal and signs in strings, IRIs and comments do not count', () => {
    expect(measureNesting('ASK{FILTER(!!!true)}')).toEqual({ depth: 4, signs: true });
    expect(measureNesting('ASK{FILTER(!(!(!true)))}')).toEqual({ depth: 4, signs: false });
    expect(measureNesting('ASK{FILTER(- - 1 = 1)}')).toEqual({ depth: 3, signs: true });
    for (const q of ['ASK{FILTER(--1 = 1)}', 'ASK{FILTER(- -1 = 1)}', 'ASK{FILTER(!-1)}', 'ASK{FILTER(1 - -.5 < 2)}', 'ASK{FILTER("!!" != "--") # !!!!\n}']) {
      expect([q, measureNesting(q)]).toEqual([q, { depth: 2, signs: false }]);
    }
    expect(measureNesting('ASK{?s <urn:!!!> ?o}')).toEqual({ depth: 1, signs: false });
    expect(measureNesting(chain('!', 490))).toEqual({ depth: 491, signs: true });
  });

  it('finds the first chain, with its line and column (lines end at CR, LF or CRLF)', () => {
    expect(signChain('ASK {\r\n FILTER(?a)\r FILTER(! !?b) }')).toEqual({ offset: 29, line: 3, column: 11, signs: '! !' });
    expect(signChain('ASK { FILTER(--1 = - -1 && !-1 && !BOUND(?x)) }')).toBeUndefined();
    expect(signChain('ASK { FILTER(+ + 1) }')).toMatchObject({ signs: '+ +', column: 16 });
  });

  it('clears no text with a chain on its keywords, and still clears one sign', () => {
    expect(quickInspect('ASK{FILTER(!!true)}')).toBeUndefined();
    expect(quickInspect('ASK{FILTER(- - 1 = 1)}')).toBeUndefined();
    expect(quickInspect('ASK{FILTER(!true)}')).toMatchObject({ form: 'boolean', kind: 'ask' });
    expect(quickInspect('ASK{FILTER(- -1 = 1)}')).toMatchObject({ form: 'boolean' });
  });

  it('refuses a chain as a limit of the parser, naming where it is and the bracketed spelling to write', () => {
    expect(parseError('ASK {\n  FILTER(!!true)\n}')?.message).toBe(
      "Parse error on line 2, column 11: the signs !! are chained; fkgqa's SPARQL parser (sparqljs) reads one sign (! + -) before an operand, as the SPARQL 1.1 grammar does ([118] UnaryExpression); bracket the operand of each further sign: !(!?x), -(-?x)",
    );
    expect(parseError('ASK {\n  FILTER(!(!true))\n}')).toBeUndefined();
  });
});

describe('syntax errors: the offending token’s true line and column', () => {
  it('names line 3, column 1 for a token that starts line 3 (sparqljs said line 2)', () => {
    const e = parseError('SELECT *\nWHERE {\n.. ?s ?p ?o }');
    expect(e?.message.split('\n').slice(0, 3)).toEqual(['Parse error on line 3, column 1:', '.. ?s ?p ?o }', '^']);
    expect(e?.loc).toEqual({ first_line: 3, first_column: 0, last_line: 3, last_column: 1 });
  });

  it('counts a lone CR and a CRLF as line ends, and a token inside a line by its column', () => {
    expect(parseError('SELECT *\rWHERE {\r\n  ?s ?p ?o . FILTER(?o = %) }')?.message.split('\n').slice(0, 3)).toEqual([
      'Parse error on line 3, column 26:',
      '  ?s ?p ?o . FILTER(?o = %) }',
      '-------------------------^',
    ]);
    // The end of the text: after its last line end.
    expect(parseError('SELECT *\nWHERE {\n  ?s ?p ?o\n')?.message.split('\n')[0]).toBe('Parse error on line 4, column 1:');
  });

  it('gives the column in the text as written when an IRI before the error holds codepoint escapes', () => {
    const text = 'SELECT * WHERE { ?s <http://e/\\u0070> ?o . ?s ?p ?o %% }';
    expect(parseError(text)?.message.split('\n')[0]).toBe(`Parse error on line 1, column ${text.indexOf('%%') + 1}:`);
  });

  it('gives the column in the text as written when a less-than written directly before an IRI comes before the error', () => {
    const text = 'SELECT * WHERE { ?s ?p ?o FILTER(?o<<urn:x> && ?s<<urn:\\u0078> &&& 1) }';
    const e = parseError(text);
    expect([e?.message.split('\n')[0], e?.loc]).toEqual([`Parse error on line 1, column ${text.indexOf('&&&') + 3}:`, { first_line: 1, first_column: 65, last_line: 1, last_column: 66 }]);
    expect(text.indexOf('&&&') + 2).toBe(65);
  });

  it('counts a character outside the BMP as one column (code points), in the message, the caret and Jison’s position', () => {
    const e = parseError('SELECT * WHERE {\n  ?s ?p "😀😀" . FILTER(?o = %) }');
    expect(e?.message.split('\n').slice(0, 3)).toEqual(['Parse error on line 2, column 28:', '  ?s ?p "😀😀" . FILTER(?o = %) }', '---------------------------^']);
    expect(e?.loc).toMatchObject({ first_line: 2, first_column: 27 });
  });

  it('gives the federation’s syntax error (routing.ts) the same line and column: lines end at CR, LF or CRLF, columns count code points', () => {
    const at = (text: string) => {
      const plan = planSourceQuery(text, { maxQueryChars: 8000 });
      return plan.ok ? undefined : plan.message.split(':')[0];
    };
    expect(at('SELECT *\rWHERE {\r\n  ?s ?p "😀" . FILTER(?o = %) }')).toBe('SPARQL syntax error at line 3, column 27');
    expect(at('SELECT *\r\nWHERE {\r.. ?s ?p ?o }')).toBe('SPARQL syntax error at line 3, column 1');
    expect(at('SELECT * WHERE { ?s ?p "😀" }\r\n}')).toBe('SPARQL syntax error at line 2, column 1');
  });

  it('reads `?o<<urn:x>` as SPARQL 1.1 does: less-than, then the IRI (after an operand of an expression); `<<` elsewhere stays SPARQL 1.2', () => {
    expect(lessThanBeforeIri('ASK { FILTER(?o<<urn:x> || 1<<urn:y>(2) || "<<urn:z>" = ?o) } # ?o<<urn:w>')).toEqual([15, 28]);
    expect(lessThanBeforeIri('ASK { FILTER(<<urn:x> = ?o) }')).toEqual([]);
    const ast = parseSparql('SELECT * WHERE { ?s ?p ?o FILTER(?o<<urn:x>) }') as { where: { type: string; expression?: unknown }[] };
    expect(ast.where[1]).toEqual({
      type: 'filter',
      expression: {
        type: 'operation',
        operator: '<',
        args: [
          { termType: 'Variable', value: 'o' },
          { termType: 'NamedNode', value: 'urn:x' },
        ],
      },
    });
    expect(JSON.parse(JSON.stringify(parseSparql('ASK { FILTER(?o<<urn:x>) }')))).toEqual(JSON.parse(JSON.stringify(parseSparql('ASK { FILTER(?o < <urn:x>) }'))));
    expect(parseError('SELECT * WHERE { ?s ?p ?o FILTER(<<urn:a> <urn:b> <urn:c>>> = ?o) }')?.message).toMatch(/^Parse error on line 1, column 34: << … >> is SPARQL 1.2 syntax \(a reified triple\)/);
  });

  it('names a character an IRI may not hold written as it is, as it names its codepoint escape; in a string or the query part it is no IRI’s', () => {
    for (const [raw, escape, why] of [
      ['\uE000', '\\uE000', 'is a private-use character, which an IRI holds only in its query part (RFC 3987 iprivate)'],
      ['\u{F0000}', '\\U000F0000', 'is a private-use character, which an IRI holds only in its query part (RFC 3987 iprivate)'],
      ['\uFDD0', '\\uFDD0', 'is a noncharacter, no IRI character (RFC 3987)'],
      ['\u{10FFFF}', '\\U0010FFFF', 'is a noncharacter, no IRI character (RFC 3987)'],
      ['\u007F', '\\u007F', 'is a control character, no IRI character (RFC 3987)'],
    ]) {
      const code = `U+${raw.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
      expect(parseError(`SELECT * WHERE {\n  ?s <urn:a${raw}> ?o }`)?.message).toBe(`Parse error on line 2, column 6: the IRI <urn:a${raw}> holds the character ${code}, which ${why}`);
      expect(parseError(`SELECT * WHERE {\n  ?s <urn:a${escape}> ?o }`)?.message).toBe(`Parse error on line 2, column 6: the IRI <urn:a${escape}> holds the escape ${escape}, which ${why}`);
    }
    expect(parseError('SELECT * WHERE { ?s ?p "<urn:\uE000\uFDD0>" FILTER(?s != <http://e/?q=\uE000>) }')).toBeUndefined();
  });

  it('reads the codepoint escapes of an IRI, as SPARQL 1.1 does before its grammar (§19.2)', () => {
    const ast = parseSparql('SELECT * WHERE { ?s <http://e/\\u0070\\U00000071> ?o }') as { where: { triples: { predicate: { value: string } }[] }[] };
    expect(ast.where[0].triples[0].predicate.value).toBe('http://e/pq');
  });
});

describe('the serve endpoint and fkgqa query: the same verdict at any length', () => {
  let server: ShardServer;
  let shard: string;
  beforeAll(async () => {
    server = await serve({ shards: await demoBuild(tmpDir('fkgqa-sign-chains-')), timeoutMs: 20_000, withOriginals: true });
    // The unsharded library graph: every predicate.
    shard = server.endpoint('library')!.url;
  });
  afterAll(async () => {
    await server?.close();
  });
  const post = async (query: string): Promise<[number, string]> => {
    const r = await fetch(shard, { method: 'POST', headers: { 'content-type': 'application/sparql-query', accept: 'application/sparql-results+json' }, body: query });
    return [r.status, (await r.text()).trim()];
  };

  it.each([
    ['!', 2],
    ['!', 300],
    ['- ', 2],
    ['+ ', 2],
  ])('refuses a chain of %j × %i within the nesting limit (400, the parser’s limit) below and above 512 characters', async (sign, n) => {
    for (const length of [0, 600]) {
      const q = chain(sign, n, length);
      expect(q.length > 512).toBe(length > 0);
      const [status, body] = await post(q);
      expect([status, body]).toEqual([400, expect.stringMatching(/^malformed query: Parse error on line 1, column \d+: the signs .* are chained; fkgqa's SPARQL parser/)]);
    }
  });

  it('refuses a chain beyond the nesting limit (320) as nested too deeply, below and above 512 characters, as its bracketed spelling', async () => {
    expect(MAX_SERVED_QUERY_DEPTH).toBe(320);
    for (const [n, length] of [
      [490, 0],
      [490, 600],
      [330, 0],
      [330, 600],
    ]) {
      const q = chain('!', n, length);
      expect(q.length > 512).toBe(length > 0);
      expect(await post(q)).toEqual([400, `query nested too deeply: brackets ({ ( [) and chained signs (! + -) nest ${n + 1} levels, the limit is 320`]);
    }
    const bracketed = `ASK{FILTER(${'!('.repeat(329)}true${')'.repeat(329)})}`;
    expect(await post(bracketed)).toEqual([400, 'query nested too deeply: brackets ({ ( [) nest 331 levels, the limit is 320']);
  });

  it('answers the bracketed spelling of a short chain, below and above 512 characters', async () => {
    for (const length of [0, 600]) {
      const q = chain('!(', 2, length).replace('true)}', 'true)))}');
      const [status, body] = await post(q);
      expect([q.length > 512, status, JSON.parse(body)]).toEqual([length > 0, 200, { head: {}, boolean: true }]);
    }
  });

  it('reads the codepoint escapes of an IRI below and above 512 characters (sparqljs alone refused the longer text)', async () => {
    for (const length of [0, 600]) {
      const base = `ASK { ?b <${YEAR.replace('year', '\\u0079ear')}> ?y }`;
      const q = base.length >= length ? base : `${base}\n#${'x'.repeat(length - base.length)}`;
      const [status, body] = await post(q);
      expect([q.length > 512, status, body]).toEqual([length > 0, 200, expect.stringContaining('"boolean":true')]);
    }
    expect(await post(`ASK { ?b <${YEAR}> ?y }`)).toEqual([200, expect.stringContaining('"boolean":true')]);
  });

  it('names the IRI of an escape that stands for no IRI character, below and above 512 characters; a private-use character in the query part is answered', async () => {
    const cases: [string, string][] = [
      ['SELECT * WHERE { ?s <urn:\\U0010FFFF> ?o }', 'the IRI <urn:\\U0010FFFF> holds the escape \\U0010FFFF, which is a noncharacter, no IRI character (RFC 3987)'],
      ['SELECT * WHERE {\n  ?s <urn:a\\u0020b> ?o }', 'the IRI <urn:a\\u0020b> holds the escape \\u0020, which is a character an IRI reference cannot hold (IRIREF, SPARQL 1.1 grammar [139])'],
      ['SELECT * WHERE { ?s <urn:\\U00110000> ?o }', 'the IRI <urn:\\U00110000> holds the escape \\U00110000, which names no character (code points end at U+10FFFF)'],
      ['SELECT * WHERE { ?s <urn:\\uE000> ?o }', 'the IRI <urn:\\uE000> holds the escape \\uE000, which is a private-use character, which an IRI holds only in its query part (RFC 3987 iprivate)'],
    ];
    for (const [query, named] of cases) {
      const at = query.includes('\n') ? 'line 2, column 6' : 'line 1, column 21';
      for (const padding of ['', `\n#${'x'.repeat(600)}`]) expect(await post(`${query}${padding}`)).toEqual([400, `malformed query: Parse error on ${at}: ${named}`]);
    }
    for (const padding of ['', `\n#${'x'.repeat(600)}`])
      expect(await post(`ASK { FILTER(<http://e/p?q=\\U0010FFFD> != <urn:a\\u00E9>) }${padding}`)).toEqual([200, expect.stringContaining('"boolean":true')]);
  });

  it('answers a less-than written directly before an IRI (`?y<<xsd:integer>("2005")`) as with a space, below and above 512 characters', async () => {
    for (const padding of ['', `\n#${'x'.repeat(600)}`]) {
      const q = `SELECT ?y WHERE { ?b <${YEAR}> ?y FILTER(?y<<http://www.w3.org/2001/XMLSchema#integer>("2005")) } ORDER BY ?y${padding}`;
      const [status, body] = await post(q);
      expect([status, (JSON.parse(body) as { results: { bindings: { y: { value: string } }[] } }).results.bindings.map((b) => b.y.value)]).toEqual([200, ['1998', '2004']]);
    }
  });

  it('refuses an IRI holding a private-use character or a noncharacter written as it is, as its escaped form, below and above 512 characters', async () => {
    for (const padding of ['', `\n#${'x'.repeat(600)}`]) {
      expect(await post(`SELECT * WHERE { ?s <urn:\uE000> ?o }${padding}`)).toEqual([
        400,
        'malformed query: Parse error on line 1, column 21: the IRI <urn:\uE000> holds the character U+E000, which is a private-use character, which an IRI holds only in its query part (RFC 3987 iprivate)',
      ]);
      expect(await post(`SELECT * WHERE { ?s <urn:\uFFFE> ?o }${padding}`)).toEqual([
        400,
        'malformed query: Parse error on line 1, column 21: the IRI <urn:\uFFFE> holds the character U+FFFE, which is a noncharacter, no IRI character (RFC 3987)',
      ]);
      expect(await post(`ASK { FILTER(<http://e/p?q=\uE000> != <urn:a>) }${padding}`)).toEqual([200, expect.stringContaining('"boolean":true')]);
    }
  });

  it('fkgqa query sends a less-than written directly before an IRI, and refuses an IRI holding a private-use character written as it is, naming it', async () => {
    const less = await fkgqaInProcess([
      'query',
      '--endpoint',
      shard,
      '--format',
      'tsv',
      `SELECT ?y WHERE { SERVICE <${shard}> { ?b <${YEAR}> ?y FILTER(?y<<http://www.w3.org/2001/XMLSchema#integer>("2005")) } } ORDER BY ?y`,
    ]);
    expect([less.code, less.stdout]).toEqual([0, '?y\n1998\n2004\n']);
    const raw = await fkgqaInProcess(['query', '--endpoint', shard, `SELECT * WHERE { SERVICE <${shard}> { ?s <urn:\uE000> ?o } }`]);
    expect([raw.code, raw.stderr]).toEqual([2, expect.stringContaining('the IRI <urn:\uE000> holds the character U+E000, which is a private-use character')]);
  });

  it('names line 3 of a multi-line query for an error there, below and above 512 characters', async () => {
    for (const padding of ['', `\n#${'x'.repeat(600)}`]) {
      const [status, body] = await post(`SELECT *\nWHERE {\n.. ?s ?p ?o }${padding}`);
      expect([status, body.split('\n')[0]]).toEqual([400, 'malformed query: Parse error on line 3, column 1:']);
    }
  });

  it('fkgqa query refuses a chain within and beyond the agent’s nesting limit, naming it', async () => {
    const short = await fkgqaInProcess(['query', '--endpoint', shard, chain('!', 2)]);
    expect([short.code, short.stderr]).toEqual([expect.not.stringMatching(/^0$/), expect.stringContaining('the signs !! are chained')]);
    for (const length of [0, 600]) {
      const deep = await fkgqaInProcess(['query', '--endpoint', shard, chain('!', 300, length)]);
      expect([deep.code === 0, deep.stderr]).toEqual([false, expect.stringContaining('brackets ({ ( [) and chained signs (! + -) nest 301 levels, more than the limit of 64')]);
    }
  });
});
