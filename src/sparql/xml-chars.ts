/**
 * What XML 1.0 can carry. Its `Char` production (XML 1.0 §2.2) excludes U+0000–U+0008, U+000B,
 * U+000C, U+000E–U+001F, U+FFFE, U+FFFF and unpaired surrogates, written directly or as character
 * references (`&#1;` is not well-formed either). RDF literals may hold them (N-Triples writes
 * `"\u0001"`), so an answer with such a literal has no XML serialisation at all: oxigraph 0.5.11
 * writes the character raw, and the document does not parse.
 */

const ILLEGAL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * The first character of `text` that XML 1.0 cannot carry, as `U+XXXX`, or undefined when there is none.
 */
export function xmlIllegalChar(text: string): string | undefined {
  const m = ILLEGAL.exec(text);
  return m ? `U+${m[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}` : undefined;
}

/**
 * Writes every carriage return of an XML document as `&#13;`, so that a parser keeps it: XML 1.0
 * §2.11 turns a raw CR (or CR LF) into LF, which changes a literal holding one. Safe on documents
 * whose markup has no CR (oxigraph's SPARQL XML and RDF/XML writers, and src/sparql/results.ts,
 * put CRs only in text and attribute values).
 */
export function keepCarriageReturns(xml: string): string {
  return xml.includes('\r') ? xml.replace(/\r/g, '&#13;') : xml;
}
