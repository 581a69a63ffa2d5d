/**
 * Reading an endpoint's SPARQL XML results (SPARQL Query Results XML Format, W3C 2013) on the direct
 * route, with the library `sparqlxml-parse` (the parser Comunica uses for the same answers), checked
 * as completely as a SPARQL JSON answer (answer-check.ts): the document must end with `</sparql>`,
 * parse as XML, hold `<results>` (a SELECT) or `<boolean>` (an ASK) as the query's form asks, every
 * binding an RDF term (`uri`, `bnode`, `literal`, `triple`), and a boolean `true` or `false`. A
 * garbled or incomplete document is the endpoint's fault (the caller names it), never fewer rows.
 */
import { Readable } from 'node:stream';
import type * as RDF from '@rdfjs/types';
import { SparqlXmlParser } from 'sparqlxml-parse';
import type { JsonResults, JsonTerm } from '../sparql/results.js';
import { resultsProblem, type AnswerForm } from './answer-check.js';

const XSD_STRING = 'http://www.w3.org/2001/XMLSchema#string';
const RDF_LANG_STRING = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#langString';

/** An RDF/JS term as an RDF term of SPARQL JSON results (§3.2.2; a quoted triple as SPARQL 1.2's `triple`). */
function jsonTerm(t: RDF.Term): JsonTerm {
  switch (t.termType) {
    case 'NamedNode':
      return { type: 'uri', value: t.value };
    case 'BlankNode':
      return { type: 'bnode', value: t.value };
    case 'Literal':
      if (t.language) return { type: 'literal', value: t.value, 'xml:lang': t.language };
      return t.datatype.value === XSD_STRING || t.datatype.value === RDF_LANG_STRING ? { type: 'literal', value: t.value } : { type: 'literal', value: t.value, datatype: t.datatype.value };
    case 'Quad':
      return { type: 'triple', value: { subject: jsonTerm(t.subject), predicate: jsonTerm(t.predicate), object: jsonTerm(t.object) } as unknown as string };
    default:
      throw new Error(`a binding holds a ${t.termType}, which is no RDF term`);
  }
}

/**
 * Reads a SPARQL XML results document as SPARQL JSON results.
 * @param text the whole answer (UTF-8 decoded)
 * @param form the form of the query it answers (`select` must have `<results>`, `ask` a `<boolean>`)
 * @returns the results, or what is wrong with the document in words (e.g. "it does not parse as SPARQL
 *   XML results (Unexpected close tag on line 1)"); never rejects
 */
export async function readXmlResults(text: string, form: AnswerForm | undefined): Promise<{ results: JsonResults } | { problem: string }> {
  const shallow = resultsProblem(text, 'application/sparql-results+xml', form);
  if (shallow) return { problem: shallow };
  const parser = new SparqlXmlParser();
  const bad = (e: unknown) => ({ problem: `it does not parse as SPARQL XML results (${((e as Error)?.message ?? String(e)).split('\n')[0]})` });
  // resultsProblem made sure there is exactly one of <results> and <boolean>.
  if (/<(?:\w+:)?boolean[\s>/]/.test(text)) {
    const m = /<(?:\w+:)?boolean\s*>\s*([^<]*?)\s*<\/(?:\w+:)?boolean\s*>/.exec(text);
    if (!m || (m[1] !== 'true' && m[1] !== 'false')) return { problem: `its <boolean> is neither true nor false (${JSON.stringify((m?.[1] ?? '').slice(0, 40))})` };
    try {
      return { results: { head: {}, boolean: await parser.parseXmlBooleanStream(Readable.from([text])) } };
    } catch (e) {
      return bad(e);
    }
  }
  try {
    const rows: Record<string, JsonTerm>[] = [];
    let vars: string[] = [];
    await new Promise<void>((resolve, reject) => {
      const stream = parser.parseXmlResultsStream(Readable.from([text]));
      stream.on('variables', (v: RDF.Variable[]) => (vars = v.map((x) => x.value)));
      stream.on('data', (b: Record<string, RDF.Term>) => {
        try {
          rows.push(Object.fromEntries(Object.entries(b).map(([k, t]) => [k, jsonTerm(t)])));
        } catch (e) {
          reject(e as Error);
        }
      });
      stream.on('error', reject);
      stream.on('end', resolve);
    });
    return { results: { head: { vars }, results: { bindings: rows } } };
  } catch (e) {
    return bad(e);
  }
}
