/**
 * The check and rewrite of built-ins outside SERVICE (src/sparql/builtins.ts), without engines:
 * the strings of numbers both engines give for STR, the refusals and their words, and that SERVICE
 * bodies are left alone. tests/builtins.slow.test.ts runs the cases on the engines.
 */
import sparqljs from 'sparqljs';
import { describe, expect, it } from 'vitest';
import { averageNumbers, builtinProblem, canonicalNumber, divideNumbers, rewriteBuiltins, STR_FUNCTION, unicodeClasses } from '../src/sparql/builtins.js';
import { compareResults } from '../src/answers/compare.js';
import { groupConcatSeparators } from '../src/sparql/inspect.js';
import { generateQuery } from '../src/sparql/generate.js';
import { DataFactory } from 'n3';
import { parseSparql } from '../src/sparql/parse.js';

const XSD = 'http://www.w3.org/2001/XMLSchema#';
const parse = (q: string) => parseSparql(`PREFIX fn: <http://www.w3.org/2005/xpath-functions#> PREFIX xsd: <${XSD}> ${q}`) as sparqljs.SparqlQuery;
const S = 'SERVICE <http://127.0.0.1:1/sparql> { ?s <http://e/p> ?n }';

describe('canonicalNumber: the string of a number as oxigraph writes it', () => {
  it.each([
    ['1.69E3', 'double', '1690'],
    ['1690.0e0', 'double', '1690'],
    ['2.7200000000000003E1', 'double', '27.2'],
    ['1.0E-7', 'double', '0.0000001'],
    ['1e21', 'double', '1000000000000000000000'],
    ['-0.0E0', 'double', '-0'],
    ['-INF', 'double', '-INF'],
    ['1.1', 'float', '1.1'],
    ['12.0', 'decimal', '12'],
    ['-0.50', 'decimal', '-0.5'],
    ['007', 'integer', '7'],
    ['+3', 'int', '3'],
  ])('%s^^xsd:%s is "%s"', (lexical, type, want) => {
    expect(canonicalNumber(lexical, `${XSD}${type}`)).toBe(want);
  });
  it('is undefined for a string and for an invalid number', () => {
    expect(canonicalNumber('12.0', `${XSD}string`)).toBeUndefined();
    expect(canonicalNumber('abc', `${XSD}double`)).toBeUndefined();
  });
});

describe('builtinProblem: the calls refused outside SERVICE', () => {
  it('names a function IRI that is no built-in and the built-in to write', () => {
    expect(builtinProblem(parse(`SELECT ?n WHERE { ${S} FILTER(fn:contains(?n, "a")) }`))).toBe(
      'the function <http://www.w3.org/2005/xpath-functions#contains> is refused outside SERVICE: it is not a SPARQL 1.1 built-in, and the federation engines do not all know it (the unsharded graph does not), so nothing was sent; write the SPARQL 1.1 built-in CONTAINS(?text, "word") instead',
    );
  });
  it('refuses SUBSTR from 0 with the call that gives the same characters from 1', () => {
    expect(builtinProblem(parse(`SELECT (SUBSTR(?n, 0, 3) AS ?x) WHERE { ${S} }`))).toMatch(/^SUBSTR\(…, 0, 3\) is refused: .* e\.g\. SUBSTR\(\?text, 1, 2\) for the first characters$/);
  });
  it('leaves the casts of SPARQL 1.1, SUBSTR from 1 and calls inside SERVICE alone', () => {
    expect(
      builtinProblem(parse(`SELECT (xsd:integer(?n) AS ?i) (SUBSTR(?n, 1, 2) AS ?x) WHERE { SERVICE <http://127.0.0.1:1/sparql> { ?s <http://e/p> ?n FILTER(fn:contains(?n, "a")) } }`)),
    ).toBeUndefined();
  });
});

describe('rewriteBuiltins', () => {
  it('puts the function of both engines in place of STR and xsd:string, and CONCAT inside GROUP_CONCAT, outside SERVICE only', () => {
    const ast = parse(`SELECT (STR(?n) AS ?a) (GROUP_CONCAT(xsd:string(?n)) AS ?g) WHERE { SERVICE <http://127.0.0.1:1/sparql> { ?s <http://e/p> ?n BIND(STR(?n) AS ?m) } }`);
    expect(rewriteBuiltins(ast)).toBe(3);
    const text = new sparqljs.Generator({ allPrefixes: false }).stringify({ ...ast, prefixes: {} });
    expect(text).toContain(`(<${STR_FUNCTION}>(?n) AS ?a)`);
    expect(text).toContain(`, GROUP_CONCAT(CONCAT(<${STR_FUNCTION}>(?n)); SEPARATOR = " ")) AS ?g)`);
    expect(text).toContain(`STRLANG(<${STR_FUNCTION}>(GROUP_CONCAT(CONCAT(<${STR_FUNCTION}>(?n)); SEPARATOR = " ")), SAMPLE(LANG(<${STR_FUNCTION}>(?n))))`);
    expect(text).toContain('BIND(STR(?n) AS ?m)');
  });
});

const num = (value: string, type: string) => DataFactory.literal(value, DataFactory.namedNode(`${XSD}${type}`));
const text = (ast: sparqljs.SparqlQuery) => generateQuery({ ...ast, prefixes: {} });

describe('divideNumbers and averageNumbers: / and AVG as oxigraph computes them', () => {
  it.each([
    ['1', 'integer', '3', 'integer', '0.333333333333333333', 'decimal'],
    ['-5', 'integer', '3', 'integer', '-1.666666666666666666', 'decimal'],
    ['12345678.9', 'decimal', '7', 'integer', '1763668.414285714285714285', 'decimal'],
    ['4', 'integer', '2', 'integer', '2', 'decimal'],
    ['2', 'integer', '3.0e0', 'double', '0.6666666666666666', 'double'],
    ['1e0', 'double', '0', 'integer', 'INF', 'double'],
  ])('%s^^%s / %s^^%s is %s^^%s', (a, ta, b, tb, value, type) => {
    expect(divideNumbers(num(a, ta), num(b, tb))).toEqual({ value, datatype: `${XSD}${type}` });
  });
  it('has no value for a decimal division by 0 or a string', () => {
    expect(divideNumbers(num('1', 'integer'), num('0.0', 'decimal'))).toBeUndefined();
    expect(divideNumbers(num('1', 'integer'), DataFactory.literal('2'))).toBeUndefined();
  });
  it('averages from SUM and COUNT, 0 for no value', () => {
    expect(averageNumbers(num('1', 'integer'), num('3', 'integer'))).toEqual({ value: '0.333333333333333333', datatype: `${XSD}decimal` });
    expect(averageNumbers(num('0', 'integer'), num('0', 'integer'))).toEqual({ value: '0', datatype: `${XSD}integer` });
  });
});

describe('unicodeClasses: \\d \\w \\s as oxigraph reads them', () => {
  it('writes the classes out, in brackets and outside', () => {
    expect(unicodeClasses('^\\d+[\\w-]\\D$').pattern).toBe('^\\p{Nd}+[\\p{L}\\p{Nl}\\p{M}\\p{Nd}\\p{Pc}-]\\P{Nd}$');
    expect(unicodeClasses('a\\Wb').pattern).toBe('a[^\\p{L}\\p{Nl}\\p{M}\\p{Nd}\\p{Pc}]b');
    expect(unicodeClasses('\\s').pattern).toBe('[\\p{Z}\\t\\n\\r\u000b\u000c\u0085]');
    expect(unicodeClasses('\\\\d\\.').pattern).toBe('\\\\d\\.');
  });
  it('refuses \\W in brackets, naming what to write', () => {
    expect(builtinProblem(parse(`SELECT ?n WHERE { ${S} FILTER(REGEX(?n, "[\\\\Wx]")) }`))).toBe(
      'the pattern "[\\\\Wx]" of REGEX is refused, nothing was sent: \\W inside brackets has no form that every federation engine reads as the unsharded graph does (Unicode word characters); write the complement outside brackets, e.g. (\\W|x) for [\\Wx], or [^…] listing what must not match',
    );
  });
});

describe('rewriteBuiltins: the forms every engine answers as oxigraph', () => {
  const TRUE = '"true"^^<http://www.w3.org/2001/XMLSchema#boolean>';
  const FALSE = '"false"^^<http://www.w3.org/2001/XMLSchema#boolean>';
  it('guards = != IN of terms', () => {
    const ast = parse(`SELECT ?s WHERE { ${S} FILTER(?n != "x" && ?n IN ("a", 2)) }`);
    expect(rewriteBuiltins(ast)).toBe(2);
    const q = text(ast);
    expect(q).toContain(`COALESCE(?n != "x", IF(SAMETERM(?n, ?n) && SAMETERM("x", "x"), ${TRUE}, ${TRUE}))`);
    expect(q).toContain('|| COALESCE(?n = 2 ,');
  });
  it('guards = != IN of computed operands, each operand rewritten first', () => {
    const ast = parse(`SELECT ?s (STR(?n) != ?k AS ?v) WHERE { ${S} FILTER(STRLEN(?n) + 0 = "x" && ?k * 1 NOT IN ("a", 2)) }`);
    expect(rewriteBuiltins(ast)).toBe(4);
    const q = text(ast);
    expect(q).toContain(`(COALESCE(<${STR_FUNCTION}>(?n) != ?k, IF(SAMETERM(<${STR_FUNCTION}>(?n), <${STR_FUNCTION}>(?n)) && SAMETERM(?k, ?k), ${TRUE}, ${TRUE})) AS ?v)`);
    expect(q).toContain(`COALESCE(STRLEN(?n) + 0  = "x", IF(SAMETERM(STRLEN(?n) + 0 , STRLEN(?n) + 0 ) && SAMETERM("x", "x"), ${FALSE}, ${FALSE}))`);
    expect(q).toContain('COALESCE(?k * 1  != "a", IF(SAMETERM(?k * 1 , ?k * 1 ) && SAMETERM("a", "a")');
    expect(q).toContain('&& COALESCE(?k * 1  != 2 ,');
  });
  it.each(['RAND()', 'NOW()', 'UUID()', 'STRUUID()', 'BNODE()', 'EXISTS { ?s <http://e/q> ?n }'])('leaves = and IN of an operand holding %s as written', (e) => {
    const ast = parse(`SELECT ?s WHERE { ${S} FILTER(${e} = "x" || ${e} IN ("a", 1) || (?n = 1) = "y") }`);
    expect(rewriteBuiltins(ast)).toBe(2);
    const q = text(ast);
    expect(q.match(/SAMETERM\(/g)).toHaveLength(8);
    expect(q).toContain(`COALESCE(COALESCE(?n = 1 , IF(SAMETERM(?n, ?n) && SAMETERM(1 , 1 ), ${FALSE}, ${FALSE})) = "y",`);
  });
  it('calls the division and AVG functions, and guards SUBSTR of a computed start', () => {
    const ast = parse(`SELECT (AVG(?n) AS ?a) (SAMPLE(SUBSTR(?n, ?k - 1)) AS ?b) (SUM(?n / 3) AS ?c) WHERE { ${S} }`);
    rewriteBuiltins(ast);
    const q = text(ast);
    expect(q).toContain('(<urn:fkgqa:function:avg>(SUM(?n), COUNT(?n)) AS ?a)');
    expect(q).toContain('SUM(<urn:fkgqa:function:divide>(?n, 3 ))');
    expect(q).toContain('IF(DATATYPE(?k - 1 ) NOT IN (');
    expect(q).toContain('?k - 1  >= 1 , SUBSTR(?n, ?k - 1 ), <http://www.w3.org/2001/XMLSchema#integer>("-"))');
  });
  it('writes an empty GROUP_CONCAT separator as U+FDD0 and removes it', () => {
    const ast = parse(`SELECT (GROUP_CONCAT(?n; SEPARATOR="") AS ?g) WHERE { ${S} }`);
    rewriteBuiltins(ast);
    expect(text(ast)).toContain('REPLACE(GROUP_CONCAT(CONCAT(?n); SEPARATOR = "\ufdd0"), "\ufdd0", "")');
  });
});

describe('compareResults: GROUP_CONCAT values as multisets of parts', () => {
  const answer = (v: string) => ({ head: { vars: ['g'] }, results: { bindings: [{ g: { type: 'literal' as const, value: v } }] } });
  const ast = parse(`SELECT (GROUP_CONCAT(?n; SEPARATOR=", ") AS ?g) WHERE { ${S} }`);
  it('reads the separators of the projection', () => {
    expect(groupConcatSeparators(ast)).toEqual({ g: ', ' });
  });
  it('takes the parts in another order as the same, other parts as different', () => {
    expect(compareResults(answer('b, a, c'), answer('a, c, b'), false, 5, groupConcatSeparators(ast)).identical).toBe(true);
    expect(compareResults(answer('b, a, c'), answer('a, c, b'), false).identical).toBe(false);
    expect(compareResults(answer('b, a, c'), answer('a, c, c'), false, 5, groupConcatSeparators(ast)).identical).toBe(false);
  });
});
