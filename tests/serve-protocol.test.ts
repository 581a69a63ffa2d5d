import { describe, expect, it } from 'vitest';
import { MAX_TIME_LIMIT_MS, MEDIA, negotiate, parseProtocolRequest, parseTimeLimit, ProtocolError } from '../src/sparql/protocol.js';
import { inspectQuery } from '../src/sparql/inspect.js';
import { serializeResults, truncateBindings, type SparqlResults } from '../src/sparql/results.js';

const params = (s: string) => new URLSearchParams(s);
const status = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    if (e instanceof ProtocolError) return e.status;
    throw e;
  }
  return 200;
};

describe('protocol / reading requests (SPARQL 1.1 Protocol §2.1)', () => {
  it('reads GET, POST form and POST direct queries with their dataset parameters', () => {
    expect(parseProtocolRequest('GET', params('query=ASK%7B%7D&default-graph-uri=urn%3Ag'))).toEqual({ type: 'query', query: 'ASK{}', defaultGraphs: ['urn:g'], namedGraphs: [], via: 'get' });
    expect(parseProtocolRequest('GET', params(''))).toEqual({ type: 'service-description' });
    expect(parseProtocolRequest('POST', params('named-graph-uri=urn:n'), 'application/x-www-form-urlencoded', Buffer.from('query=ASK+%7B%7D'))).toMatchObject({
      query: 'ASK {}',
      namedGraphs: ['urn:n'],
      via: 'post-form',
    });
    expect(parseProtocolRequest('POST', params(''), 'application/sparql-query;charset=utf-8', Buffer.from('ASK {}'))).toMatchObject({ query: 'ASK {}', via: 'post-direct' });
  });
  it('refuses bad requests with the right status', () => {
    expect(status(() => parseProtocolRequest('DELETE', params('query=x')))).toBe(405);
    expect(status(() => parseProtocolRequest('GET', params('query=a&query=b')))).toBe(400);
    expect(status(() => parseProtocolRequest('POST', params(''), 'application/x-www-form-urlencoded', Buffer.from('query=a&query=b')))).toBe(400);
    expect(status(() => parseProtocolRequest('POST', params('query=a'), 'application/x-www-form-urlencoded', Buffer.from('query=b')))).toBe(400);
    expect(status(() => parseProtocolRequest('POST', params(''), undefined, Buffer.from('ASK {}')))).toBe(400);
    expect(status(() => parseProtocolRequest('POST', params(''), 'text/plain', Buffer.from('ASK {}')))).toBe(415);
    expect(status(() => parseProtocolRequest('POST', params(''), 'application/sparql-query; charset=UTF-16', Buffer.from('ASK {}')))).toBe(415);
    expect(status(() => parseProtocolRequest('POST', params(''), 'application/sparql-query', Buffer.from([0xc3, 0x28])))).toBe(400);
    expect(status(() => parseProtocolRequest('POST', params(''), 'application/sparql-update', Buffer.from('CLEAR ALL')))).toBe(403);
    expect(status(() => parseProtocolRequest('GET', params('update=CLEAR+ALL')))).toBe(403);
    // An empty query parameter (GET or form) is named, as an empty body is, instead of oxigraph's "error at 1:1: expected [_]".
    for (const empty of [() => parseProtocolRequest('GET', params('query=')), () => parseProtocolRequest('POST', params(''), 'application/x-www-form-urlencoded', Buffer.from('query=+'))]) {
      expect(empty).toThrow(new ProtocolError(400, 'parameter query is empty: give the query text'));
      expect(status(empty)).toBe(400);
    }
  });
});

describe('protocol / the time limit a request sends (timeout parameter, Fkgqa-Timeout header)', () => {
  it('drops a fraction of a millisecond, never rounding a limit up; refuses a limit under 1 ms with 400 naming the parameter or header', () => {
    expect(parseTimeLimit(undefined, '1.5')).toBe(1);
    expect(parseTimeLimit(undefined, '2.999')).toBe(2);
    expect(parseTimeLimit('1.0005', undefined)).toBe(1000);
    expect(parseTimeLimit('2.7ms', undefined)).toBe(2);
    // 1.001 s is 1000.9999… ms in binary: still 1001 ms, not 1000.
    expect(parseTimeLimit('1.001', undefined)).toBe(1001);
    expect(parseTimeLimit('1.001s', '1001.9')).toBe(1001);
    expect(parseTimeLimit('3s', '1.5')).toBe(1);
    expect(parseTimeLimit(undefined, '1')).toBe(1);
    expect(parseTimeLimit(undefined, String(MAX_TIME_LIMIT_MS * 2))).toBe(MAX_TIME_LIMIT_MS);
    const refusal = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        return [(e as ProtocolError).status, (e as Error).message];
      }
      return undefined;
    };
    expect(refusal(() => parseTimeLimit(undefined, '0.5'))).toEqual([400, 'header Fkgqa-Timeout: "0.5" is under 1 ms, the shortest time limit']);
    expect(refusal(() => parseTimeLimit('0.0004', undefined))).toEqual([400, 'parameter timeout: "0.0004" is under 1 ms, the shortest time limit (timeout=1ms)']);
    expect(refusal(() => parseTimeLimit('0.9ms', '500'))).toEqual([400, 'parameter timeout: "0.9ms" is under 1 ms, the shortest time limit (timeout=1ms)']);
    expect(refusal(() => parseTimeLimit(undefined, '0'))).toEqual([400, 'header Fkgqa-Timeout: "0" is not a time limit in milliseconds (a positive number)']);
    // Node reads header bytes as Latin-1: UTF-8 bytes are shown as the characters they encode, controls escaped.
    const fullwidthFive = Buffer.from('５', 'utf8').toString('latin1');
    expect(refusal(() => parseTimeLimit(undefined, fullwidthFive))).toEqual([400, 'header Fkgqa-Timeout: "５" is not a time limit in milliseconds (a positive number)']);
    expect(refusal(() => parseTimeLimit(undefined, '5\x01\xe9'))).toEqual([400, 'header Fkgqa-Timeout: "5\\u0001é" is not a time limit in milliseconds (a positive number)']);
  });
});

describe('protocol / content negotiation', () => {
  it('defaults to JSON results and Turtle, honours q-values and wildcards, and has no CSV for ASK', () => {
    expect(negotiate(undefined, 'bindings')).toBe(MEDIA.json);
    expect(negotiate('*/*', 'graph')).toBe(MEDIA.turtle);
    expect(negotiate('text/*', 'bindings')).toBe(MEDIA.csv);
    expect(negotiate('text/csv;q=0.2, application/sparql-results+xml;q=0.8', 'bindings')).toBe(MEDIA.xml);
    expect(negotiate('application/json', 'boolean')).toBe(MEDIA.json);
    expect(negotiate('text/csv', 'boolean')).toBeUndefined();
    expect(negotiate('text/csv, */*;q=0', 'boolean')).toBeUndefined();
    expect(negotiate('application/n-triples, text/turtle;q=0.5', 'graph')).toBe(MEDIA.ntriples);
    expect(negotiate('image/png', 'graph')).toBeUndefined();
  });
});

describe('protocol / query kinds and features', () => {
  it('tells ASK, COUNT and data queries apart and finds SERVICE, VALUES, aggregates, sub-SELECTs', () => {
    expect(inspectQuery('SELECT (COUNT(*) AS ?count) WHERE { ?s ?p ?o }').kind).toBe('count');
    expect(inspectQuery('SELECT ?s (COUNT(*) AS ?n) WHERE { ?s ?p ?o } GROUP BY ?s').kind).toBe('data');
    expect(inspectQuery('ASK { ?s ?p ?o }')).toMatchObject({ kind: 'ask', form: 'boolean' });
    expect(inspectQuery('DESCRIBE <urn:x>').form).toBe('graph');
    const f = inspectQuery('SELECT * WHERE { { SELECT ?s WHERE { ?s ?p ?o } } SERVICE <urn:e> { ?s ?q ?r } VALUES ?s { <urn:a> } }').features;
    expect([...f].sort()).toEqual(['service', 'subqueries', 'values']);
    expect(inspectQuery('SELECT * FROM <urn:g> WHERE { ?s ?p ?o }').hasFrom).toBe(true);
  });
});

describe('results / writing a cut answer', () => {
  const r: SparqlResults = {
    head: { vars: ['s', 'o'] },
    results: {
      bindings: [
        { s: { type: 'uri', value: 'http://e/a' }, o: { type: 'literal', value: 'x, "y"\nz', 'xml:lang': 'en' } },
        { s: { type: 'bnode', value: 'b1' }, o: { type: 'literal', value: '5', datatype: 'http://www.w3.org/2001/XMLSchema#integer' } },
        { s: { type: 'uri', value: 'http://e/c' } },
      ],
    },
  };
  it('cuts to maxRows and marks the head', () => {
    const cut = truncateBindings(r, 2);
    expect(cut).toMatchObject({ truncated: true, rows: 3 });
    expect(cut.results.results!.bindings).toHaveLength(2);
    expect(cut.results.head.link).toEqual(['urn:fkgqa:truncated:max-rows=2']);
    expect(truncateBindings(r, 3).truncated).toBe(false);
  });
  it('writes CSV, TSV and XML per the W3C result formats', () => {
    expect(serializeResults(r, MEDIA.csv)).toBe('s,o\r\nhttp://e/a,"x, ""y""\nz"\r\n_:b1,5\r\nhttp://e/c,\r\n');
    expect(serializeResults(r, MEDIA.tsv)).toBe('?s\t?o\n<http://e/a>\t"x, \\"y\\"\\nz"@en\n_:b1\t5\n<http://e/c>\t\n');
    const xml = serializeResults(r, MEDIA.xml);
    expect(xml).toContain('<binding name="o"><literal xml:lang="en">x, &quot;y&quot;\nz</literal></binding>');
    expect(xml).toContain('<binding name="s"><bnode>b1</bnode></binding>');
  });
});
