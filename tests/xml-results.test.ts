import { describe, expect, it } from 'vitest';
import { readXmlResults } from '../src/federation/xml-results.js';
import { serializeResults } from '../src/sparql/results.js';
import { MEDIA } from '../src/sparql/protocol.js';

// SPARQL XML results that sparqlxml-parse reads without complaint although they are broken: it drops
// what it does not know. Unchecked, each would count as rows on the direct route.
const NS = 'http://www.w3.org/2005/sparql-results#';
const row = (v: string) => `<result><binding name="b"><uri>${v}</uri></binding></result>`;
const doc = (body: string, ns = NS) => `<?xml version="1.0"?>\n<sparql xmlns="${ns}"><head><variable name="b"/></head>${body}</sparql>\n`;
const select = (rows: string) => doc(`<results>${rows}</results>`);

describe('SPARQL XML results on the direct route: nothing the parser drops passes as rows', () => {
  it('reads a good document: rows, a language tag, a datatype, an empty solution, comments and CDATA; an ASK', async () => {
    const good = doc(
      `<!-- a <result> in a comment --><results>${row('http://x/1')}<result><binding name="b"><literal xml:lang="en"><![CDATA[a <binding> in CDATA]]></literal></binding></result>` +
        `<result><binding name="b"><literal datatype="http://www.w3.org/2001/XMLSchema#integer">3</literal></binding></result><result/></results>`,
    );
    expect(await readXmlResults(good, 'select')).toEqual({
      results: {
        head: { vars: ['b'] },
        results: {
          bindings: [
            { b: { type: 'uri', value: 'http://x/1' } },
            { b: { type: 'literal', value: 'a <binding> in CDATA', 'xml:lang': 'en' } },
            { b: { type: 'literal', value: '3', datatype: 'http://www.w3.org/2001/XMLSchema#integer' } },
            {},
          ],
        },
      },
    });
    expect(await readXmlResults(doc('<boolean>true</boolean>'), 'ask')).toEqual({ results: { head: {}, boolean: true } });
  });

  it('refuses a binding without an RDF term, an unknown element, a result outside <results>, two <results>, another namespace', async () => {
    const cases: [string, string][] = [
      [select(`<result><binding name="b">hello</binding></result>${row('http://x/2')}`), 'it holds text inside <binding> ("hello"), where SPARQL XML results have elements only'],
      [select('<result><binding name="b"/></result>'), 'it holds 1 <binding> elements, of which 0 hold an RDF term'],
      [select(`<result><wrong name="b"><uri>http://x/1</uri></wrong></result><result/>`), 'it holds an element <wrong> that SPARQL XML results do not have'],
      [doc(`<results>${row('http://x/1')}</results>${row('http://x/9')}${row('http://x/10')}`), 'it holds <result> inside <sparql>, where SPARQL XML results do not have it'],
      [doc(`<results>${row('http://x/1')}</results><results>${row('http://x/2')}</results>`), 'it holds 2 <results> elements (one is allowed)'],
      [doc(`<results>${row('http://x/1')}</results>`, 'http://evil/'), `its root is not <sparql> in the SPARQL results namespace ${NS} (it is "http://evil/")`],
    ];
    for (const [text, problem] of cases) expect(await readXmlResults(text, 'select'), problem).toEqual({ problem });
  });

  it('refuses what the parser reads past: two terms in a binding, a term inside a term, an element in another namespace, a root whose attribute value holds the namespace, an undeclared or unnamed binding', async () => {
    const cases: [string, string][] = [
      [select('<result><binding name="b"><uri>http://x/1</uri><uri>http://x/EVIL</uri></binding></result>'), 'it holds a <binding> with more than one RDF term'],
      [select('<result><binding name="b"><literal>a<uri>http://x/EVIL</uri>b</literal></binding></result>'), 'it holds <uri> inside <literal>, where SPARQL XML results do not have it'],
      [select('<result><binding name="b"><uri>http://x/1<literal>EVIL</literal></uri></binding></result>'), 'it holds <literal> inside <uri>, where SPARQL XML results do not have it'],
      [
        select(`<result xmlns="http://evil/"><binding name="b"><uri>http://x/EVIL</uri></binding></result>${row('http://x/1')}`),
        `its element <result> is not in the SPARQL results namespace ${NS} (it is "http://evil/")`,
      ],
      [
        `<?xml version="1.0"?>\n<sparql foo="xmlns='${NS}'" xmlns="http://evil/"><head><variable name="b"/></head><results>${row('http://x/1')}</results></sparql>\n`,
        `its element <sparql> is not in the SPARQL results namespace ${NS} (it is "http://evil/")`,
      ],
      [select('<result><binding name="zzz"><uri>http://x/1</uri></binding></result>'), 'it binds the variable "zzz", which its <head> does not declare'],
      [select('<result><binding><uri>http://x/1</uri></binding></result>'), 'it holds a <binding> without a name'],
    ];
    for (const [text, problem] of cases) expect(await readXmlResults(text, 'select'), problem).toEqual({ problem });
    // Still good: a quoted triple (SPARQL 1.2) and whitespace between elements.
    const triple = select(
      '<result>\n  <binding name="b"><triple><subject><uri>http://x/s</uri></subject><predicate><uri>http://x/p</uri></predicate><object><literal>o</literal></object></triple></binding>\n</result>',
    );
    expect('results' in (await readXmlResults(triple, 'select'))).toBe(true);
  });
});

describe('SPARQL XML results as fkgqa writes them', () => {
  it('a literal with CR, CR LF, NEL and U+2028 reads back with the same characters (a raw CR would read as LF)', async () => {
    const value = 'a\rb\r\nc\u0085d\u2028e';
    const results = { head: { vars: ['x'] }, results: { bindings: [{ x: { type: 'literal' as const, value, 'xml:lang': 'en' } }] } };
    const xml = serializeResults(results, MEDIA.xml);
    expect(xml).toContain('a&#13;b&#13;\nc');
    expect(await readXmlResults(xml, 'select')).toEqual({ results });
  });
});
