/**
 * The check and rewrite of built-ins outside SERVICE (src/sparql/builtins.ts), without engines:
 * the strings of numbers both engines give for STR, the refusals and their words, and that SERVICE
 * bodies are left alone. tests/builtins.slow.test.ts runs the cases on the engines.
 */
import sparqljs from 'sparqljs';
import { describe, expect, it } from 'vitest';
import { builtinProblem, canonicalNumber, rewriteBuiltins, STR_FUNCTION } from '../src/sparql/builtins.js';
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
    expect(text).toContain(`(GROUP_CONCAT(CONCAT(<${STR_FUNCTION}>(?n)); SEPARATOR = " ") AS ?g)`);
    expect(text).toContain('BIND(STR(?n) AS ?m)');
  });
});
