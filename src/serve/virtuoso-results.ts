/**
 * Reading Virtuoso's SELECT answers as they arrive, in the SPARQL Query Results XML Format (W3C
 * 2013), row by row. Virtuoso 7.2 writes SPARQL XML results about five times faster than SPARQL
 * JSON results (docs/performance-notes.md); its TSV and CSV lose the kind of each term (an IRI is
 * written as a quoted string). The XML is read with saxes (@rubensworks/saxes, the tokenizer of
 * sparqlxml-parse), as XML 1.1: Virtuoso writes a control character of a literal as a character
 * reference (`&#1;`), which XML 1.1 allows and XML 1.0 does not (sparqlxml-parse reads XML 1.0
 * only). The characters that an XML parser would change as line ends (CR, and in XML 1.1 NEL
 * U+0085 and LINE SEPARATOR U+2028) or refuse (the C1 controls U+007F–U+009F, which XML 1.1 takes
 * only as references), and that Virtuoso writes as they are, are read as character references, so
 * that every literal keeps its characters. U+FFFE and U+FFFF, which no XML version carries in any
 * form and which Virtuoso writes as they are, pass the parser under an escape of their own
 * (`NONCHARACTER_ESCAPE`) and are read back in each term's value.
 */
import { SaxesParser } from '@rubensworks/saxes';
import type { SparqlRow, SparqlTerm } from '../sparql/results.js';

/** Characters read as character references (module comment). */
const AS_REFERENCE = /[\r\u007F-\u009F\u2028]/g;

/**
 * The escape that carries U+FFFE and U+FFFF through the XML parser (module comment): U+FDD0, a
 * noncharacter that XML 1.1 allows, followed by `1` (U+FFFE), `2` (U+FFFF) or `0` (U+FDD0 itself).
 */
const NONCHARACTER_ESCAPE = '\uFDD0';
const ESCAPED = /[\uFDD0\uFFFE\uFFFF]/g;
const ESCAPES: Record<string, string> = { '\uFDD0': '0', '\uFFFE': '1', '\uFFFF': '2' };
const UNESCAPED: Record<string, string> = { '0': '\uFDD0', '1': '\uFFFE', '2': '\uFFFF' };
const UNESCAPE = /\uFDD0([012])/g;

/**
 * Reads a SPARQL XML results document (a SELECT answer) from its bytes as they arrive.
 * @param body the document's bytes (UTF-8), e.g. a fetch Response's body
 * @param onHead called once with the variables of `<head>`, before any row
 * @param onRow called with each `<result>` in order: variable → term (SPARQL JSON results' terms; unbound variables absent)
 * @throws Error for a document that does not parse as XML, or holds no `<head>` (also when the body's stream fails)
 */
export async function readXmlRows(body: AsyncIterable<Uint8Array>, onHead: (vars: string[]) => void, onRow: (row: SparqlRow) => void): Promise<void> {
  for await (const batch of xmlResultBatches(body)) {
    if (batch.vars) onHead(batch.vars);
    for (const row of batch.rows) onRow(row);
  }
}

/** The rows read from one piece of an answer's bytes, and the variables of `<head>` in the first batch after it was read. */
export interface XmlResultBatch {
  vars?: string[];
  rows: SparqlRow[];
}

/**
 * Reads a SPARQL XML results document as `readXmlRows` does, as batches pulled by the reader: one
 * per piece of `body` that held a row or the head, so that the bytes are read no faster than the
 * rows are used. Stopping the iteration (`return`) stops reading `body` (a fetch body is cancelled).
 * @throws as `readXmlRows`
 */
export async function* xmlResultBatches(body: AsyncIterable<Uint8Array>): AsyncGenerator<XmlResultBatch> {
  let rows: SparqlRow[] = [];
  let newHead: string[] | undefined;
  const onHead = (v: string[]) => (newHead = v);
  const onRow = (r: SparqlRow) => rows.push(r);
  const parser = new SaxesParser({ defaultXMLVersion: '1.1', forceXMLVersion: true });
  const vars: string[] = [];
  let headed = false;
  let row: SparqlRow | undefined;
  let binding = '';
  let term: SparqlTerm | undefined;
  let failure: Error | undefined;
  const head = () => {
    if (!headed) onHead(vars);
    headed = true;
  };
  parser.on('error', (e) => (failure ??= e));
  parser.on('opentag', (tag) => {
    const attributes = tag.attributes as Record<string, string>;
    switch (tag.name) {
      case 'variable':
        if (!headed) vars.push(attributes.name);
        break;
      case 'results':
      case 'boolean':
        head();
        break;
      case 'result':
        row = {};
        break;
      case 'binding':
        binding = attributes.name;
        break;
      case 'uri':
      case 'bnode':
        term = { type: tag.name, value: '' };
        break;
      case 'literal':
        term = { type: 'literal', value: '' };
        if (attributes['xml:lang']) term['xml:lang'] = attributes['xml:lang'];
        else if (attributes.datatype) term.datatype = attributes.datatype;
        break;
    }
  });
  parser.on('text', (text) => {
    if (term) term.value += text;
  });
  parser.on('closetag', (tag) => {
    if (term && (tag.name === 'uri' || tag.name === 'bnode' || tag.name === 'literal')) {
      if (term.value.includes(NONCHARACTER_ESCAPE)) term.value = term.value.replace(UNESCAPE, (_, c: string) => UNESCAPED[c]);
      if (row) row[binding] = term;
      term = undefined;
    } else if (tag.name === 'result' && row) {
      onRow(row);
      row = undefined;
    }
  });
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const write = (text: string) => {
    parser.write(text.replace(AS_REFERENCE, (c) => `&#${c.charCodeAt(0)};`).replace(ESCAPED, (c) => NONCHARACTER_ESCAPE + ESCAPES[c]));
    if (failure) throw failure;
  };
  const taken = (): XmlResultBatch | undefined => {
    if (newHead === undefined && rows.length === 0) return undefined;
    const batch = { ...(newHead ? { vars: newHead } : {}), rows };
    newHead = undefined;
    rows = [];
    return batch;
  };
  for await (const chunk of body) {
    write(decoder.decode(chunk, { stream: true }));
    const batch = taken();
    if (batch) yield batch;
  }
  write(decoder.decode());
  parser.close();
  if (failure) throw failure;
  if (!headed) throw new Error('the SPARQL XML results hold no <results> or <boolean>');
  const last = taken();
  if (last) yield last;
}
