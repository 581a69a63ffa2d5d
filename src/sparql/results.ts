/**
 * The one serialiser of SELECT and ASK answers of the shard endpoints, profile or not: the endpoint
 * asks oxigraph for SPARQL JSON results, cuts them to a behaviour profile's `maxRows` when it has
 * one (explicitly marked), and writes the requested format here. For uncut answers the output is
 * byte-identical to oxigraph's own serialisation of each format (tested).
 * Formats: SPARQL 1.1 Query Results JSON, XML, CSV and TSV (W3C Recommendations, 2013).
 */
import { stringify } from 'csv-stringify/sync';
import { MEDIA } from './protocol.js';

/** An RDF term in SPARQL JSON results (SPARQL 1.1 Query Results JSON Format §3.2.2). */
export interface JsonTerm {
  type: 'uri' | 'literal' | 'bnode' | 'typed-literal' | 'triple';
  value: string;
  'xml:lang'?: string;
  datatype?: string;
}

/** SPARQL 1.1 JSON results: bindings (SELECT) or a boolean (ASK). */
export interface JsonResults {
  head: { vars?: string[]; link?: string[] };
  results?: { bindings: Record<string, JsonTerm>[] };
  boolean?: boolean;
}

/** The `link` that marks a cut answer (SPARQL JSON `head.link`, SPARQL XML `<link href>`). */
export function truncationLink(maxRows: number): string {
  return `urn:fkgqa:truncated:max-rows=${maxRows}`;
}

/**
 * Cuts SPARQL JSON bindings to `maxRows` rows.
 * @returns the (possibly cut) results, with a truncation link in the head when rows were dropped,
 *   and the number of rows before the cut
 */
export function truncateBindings(results: JsonResults, maxRows: number): { results: JsonResults; truncated: boolean; rows: number } {
  const rows = results.results?.bindings.length ?? 0;
  if (!results.results || rows <= maxRows) return { results, truncated: false, rows };
  return {
    results: {
      head: { ...results.head, link: [...(results.head.link ?? []), truncationLink(maxRows)] },
      results: { bindings: results.results.bindings.slice(0, maxRows) },
    },
    truncated: true,
    rows,
  };
}

const XSD = 'http://www.w3.org/2001/XMLSchema#';

function xmlEscape(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]!);
}

function xmlTerm(t: JsonTerm): string {
  if (t.type === 'uri') return `<uri>${xmlEscape(t.value)}</uri>`;
  if (t.type === 'bnode') return `<bnode>${xmlEscape(t.value)}</bnode>`;
  const lang = t['xml:lang'] ? ` xml:lang="${xmlEscape(t['xml:lang'])}"` : '';
  const dt = t.datatype && !lang ? ` datatype="${xmlEscape(t.datatype)}"` : '';
  return `<literal${lang}${dt}>${xmlEscape(t.value)}</literal>`;
}

/** SPARQL 1.1 Query Results XML Format (§2). */
function toXml(r: JsonResults): string {
  const head = [...(r.head.vars ?? []).map((v) => `<variable name="${xmlEscape(v)}"/>`), ...(r.head.link ?? []).map((l) => `<link href="${xmlEscape(l)}"/>`)].join('');
  const open = '<?xml version="1.0"?><sparql xmlns="http://www.w3.org/2005/sparql-results#">';
  if (r.boolean !== undefined) return `${open}<head>${head}</head><boolean>${r.boolean}</boolean></sparql>`;
  const rows = (r.results?.bindings ?? [])
    .map((b) => `<result>${Object.entries(b).map(([v, t]) => `<binding name="${xmlEscape(v)}">${xmlTerm(t)}</binding>`).join('')}</result>`)
    .join('');
  return `${open}<head>${head}</head><results>${rows}</results></sparql>`;
}

/**
 * SPARQL 1.1 Query Results CSV (§2): plain values, `_:label` for blank nodes, CRLF line ends; a
 * value is quoted when it holds a comma, a quote, CR or LF (RFC 4180 §2.6; a lone LF too, which
 * csv-stringify would leave bare with a CRLF record delimiter).
 */
function toCsv(r: JsonResults): string {
  const vars = r.head.vars ?? [];
  const records = (r.results?.bindings ?? []).map((b) => vars.map((v) => (b[v] ? (b[v].type === 'bnode' ? `_:${b[v].value}` : b[v].value) : '')));
  return stringify([vars, ...records], { record_delimiter: '\r\n', quoted_match: /[\r\n]/ });
}

/** Turtle's short forms of numbers and booleans (Turtle §2.5.2, grammar [19]–[21], [133s]). */
const SHORT_FORM: Record<string, RegExp> = {
  [`${XSD}integer`]: /^[+-]?[0-9]+$/,
  [`${XSD}decimal`]: /^[+-]?[0-9]*\.[0-9]+$/,
  [`${XSD}double`]: /^[+-]?([0-9]+\.[0-9]*[eE][+-]?[0-9]+|\.[0-9]+[eE][+-]?[0-9]+|[0-9]+[eE][+-]?[0-9]+)$/,
  [`${XSD}boolean`]: /^(true|false)$/,
};

/**
 * A term in Turtle syntax, as SPARQL 1.1 TSV (§3) writes it: integers, decimals, doubles and
 * booleans whose lexical form is a Turtle number/boolean token in the short form (`1`, not
 * `"1"^^xsd:integer`), as oxigraph writes them.
 */
function tsvTerm(t: JsonTerm): string {
  if (t.type === 'uri') return `<${t.value}>`;
  if (t.type === 'bnode') return `_:${t.value}`;
  if (t.datatype && !t['xml:lang'] && SHORT_FORM[t.datatype]?.test(t.value)) return t.value;
  const lexical = `"${t.value.replace(/[\\"\t\n\r]/g, (c) => ({ '\\': '\\\\', '"': '\\"', '\t': '\\t', '\n': '\\n', '\r': '\\r' })[c]!)}"`;
  if (t['xml:lang']) return `${lexical}@${t['xml:lang']}`;
  if (!t.datatype || t.datatype === `${XSD}string`) return lexical;
  return `${lexical}^^<${t.datatype}>`;
}

/** SPARQL 1.1 Query Results TSV (§3): `?var` header, terms in Turtle syntax. */
function toTsv(r: JsonResults): string {
  const vars = r.head.vars ?? [];
  const lines = [vars.map((v) => `?${v}`).join('\t'), ...(r.results?.bindings ?? []).map((b) => vars.map((v) => (b[v] ? tsvTerm(b[v]) : '')).join('\t'))];
  return lines.join('\n') + '\n';
}

/**
 * Cuts an N-Triples document to its first `maxTriples` triples (one triple per line, as N-Triples
 * requires). Used by fkgqa mcp for the preview of CONSTRUCT/DESCRIBE answers.
 * @returns the cut text, whether anything was cut, and the number of triples in the whole text
 */
export function truncateNTriples(text: string, maxTriples: number): { text: string; truncated: boolean; triples: number } {
  const lines = text.split('\n').filter((l) => l.trim().length > 0);
  if (lines.length <= maxTriples) return { text, truncated: false, triples: lines.length };
  return { text: lines.slice(0, maxTriples).join('\n') + (maxTriples > 0 ? '\n' : ''), truncated: true, triples: lines.length };
}

/**
 * Writes SPARQL JSON results in another results format.
 * @param mediaType one of MEDIA.json, MEDIA.xml, MEDIA.csv, MEDIA.tsv
 * @throws Error for any other media type
 */
export function serializeResults(r: JsonResults, mediaType: string): string {
  switch (mediaType) {
    case MEDIA.json:
      return JSON.stringify(r);
    case MEDIA.xml:
      return toXml(r);
    case MEDIA.csv:
      return toCsv(r);
    case MEDIA.tsv:
      return toTsv(r);
    default:
      throw new Error(`cannot write SPARQL results as ${mediaType}`);
  }
}
