/**
 * The one serialiser of SELECT and ASK answers of the shard endpoints, profile or not: the endpoint
 * asks oxigraph for SPARQL JSON results, cuts them to a behaviour profile's `maxRows` when it has
 * one (explicitly marked), and writes the requested format here. For uncut answers the output is
 * byte-identical to oxigraph's own serialisation of each format (tested).
 * Formats: SPARQL 1.1 Query Results JSON, XML, CSV and TSV (W3C Recommendations, 2013).
 */
import type * as RDF from '@rdfjs/types';
import { stringify } from 'csv-stringify/sync';
import { MEDIA } from './protocol.js';

/**
 * One RDF term of a result row, as in the SPARQL 1.1 Query Results JSON Format (§3.2.2);
 * `typed-literal` is the pre-Recommendation spelling some servers still write, `triple` an RDF-star
 * quoted triple.
 */
export interface SparqlTerm {
  type: 'uri' | 'literal' | 'bnode' | 'typed-literal' | 'triple';
  value: string;
  'xml:lang'?: string;
  datatype?: string;
}

/** One solution: variable name (without `?`) → bound term. Unbound variables are absent. */
export type SparqlRow = Record<string, SparqlTerm>;

/** A SPARQL 1.1 Query Results JSON document: bindings (SELECT) or a boolean (ASK). */
export interface SparqlResults {
  head: { vars?: string[]; link?: string[] };
  results?: { bindings: SparqlRow[] };
  boolean?: boolean;
}

/**
 * Positions of an ordered answer whose rows tie on every ORDER BY key: any `take` of the `tied`
 * solutions may fill positions `start … start+take-1`, in any order (SPARQL 1.1 Query §15.1 leaves
 * the order of tied solutions open). Found by src/answers/ties.ts, stored with gold answers
 * (src/build/gold-answers.ts).
 */
export interface TieSegment {
  /** First position (0-based) in the answer. */
  start: number;
  /** Positions it fills. */
  take: number;
  /** Solutions that tie on the ORDER BY key there (at least `take`). */
  tied: number;
  /** The ORDER BY key of the tied solutions, as term keys joined by ` | `. */
  key: string;
  /** Every tied solution (projected variables) when more tie than the answer keeps (`tied > take`); absent when it keeps them all (then the answer's own rows there, in any order). */
  rows?: SparqlRow[];
}

const XSD = 'http://www.w3.org/2001/XMLSchema#';
const RDF_LANG_STRING = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#langString';

/** An RDF/JS term as an RDF term of SPARQL JSON results (§3.2.2; a quoted triple as SPARQL 1.2's `triple`). */
export function jsonTerm(t: RDF.Term): SparqlTerm {
  switch (t.termType) {
    case 'NamedNode':
      return { type: 'uri', value: t.value };
    case 'BlankNode':
      return { type: 'bnode', value: t.value };
    case 'Literal':
      if (t.language) return { type: 'literal', value: t.value, 'xml:lang': t.language };
      return t.datatype.value === `${XSD}string` || t.datatype.value === RDF_LANG_STRING ? { type: 'literal', value: t.value } : { type: 'literal', value: t.value, datatype: t.datatype.value };
    case 'Quad':
      return { type: 'triple', value: { subject: jsonTerm(t.subject), predicate: jsonTerm(t.predicate), object: jsonTerm(t.object) } as unknown as string };
    default:
      throw new Error(`a binding holds a ${t.termType}, which is no RDF term`);
  }
}

/**
 * Parses the bindings of a SPARQL 1.1 Query Results JSON document (W3C Recommendation 2013, §3)
 * into rows, in the document's order. QLever writes `null` for unbound variables (field notes §3);
 * such entries are dropped.
 * @param label where the document came from (a URL or a file), named in errors
 * @throws Error naming `label` if the body is not JSON or has no `results.bindings` array
 */
export function parseSparqlJson(body: string, label: string): SparqlRow[] {
  let doc: { results?: { bindings?: Record<string, SparqlTerm | null>[] } };
  try {
    doc = JSON.parse(body);
  } catch (e) {
    throw new Error(`${label}: the answer is not JSON (${(e as Error).message}): ${body.slice(0, 200)}`, { cause: e });
  }
  const bindings = doc.results?.bindings;
  if (!Array.isArray(bindings)) throw new Error(`${label}: the answer has no results.bindings: ${body.slice(0, 200)}`);
  return bindings.map((b) => {
    const row: SparqlRow = {};
    for (const [k, v] of Object.entries(b)) if (v) row[k] = v;
    return row;
  });
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
export function truncateBindings(results: SparqlResults, maxRows: number): { results: SparqlResults; truncated: boolean; rows: number } {
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

/** Text for XML content or an attribute: markup characters as entities, CR as `&#13;` (an XML parser reads a raw CR, or CR LF, as LF: XML 1.0 section 2.11). */
function xmlEscape(s: string): string {
  return s.replace(/[&<>"'\r]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;', '\r': '&#13;' })[c]!);
}

function xmlTerm(t: SparqlTerm): string {
  if (t.type === 'uri') return `<uri>${xmlEscape(t.value)}</uri>`;
  if (t.type === 'bnode') return `<bnode>${xmlEscape(t.value)}</bnode>`;
  const lang = t['xml:lang'] ? ` xml:lang="${xmlEscape(t['xml:lang'])}"` : '';
  const dt = t.datatype && !lang ? ` datatype="${xmlEscape(t.datatype)}"` : '';
  return `<literal${lang}${dt}>${xmlEscape(t.value)}</literal>`;
}

const XML_OPEN = '<?xml version="1.0"?><sparql xmlns="http://www.w3.org/2005/sparql-results#">';

/** The `<head>` content of SPARQL XML results: variables, then links. */
const xmlHead = (vars: readonly string[], link: readonly string[] = []) => [...vars.map((v) => `<variable name="${xmlEscape(v)}"/>`), ...link.map((l) => `<link href="${xmlEscape(l)}"/>`)].join('');

/** One `<result>` of SPARQL XML results: the row's bindings in the row's order. */
const xmlRow = (b: SparqlRow) =>
  `<result>${Object.entries(b)
    .map(([v, t]) => `<binding name="${xmlEscape(v)}">${xmlTerm(t)}</binding>`)
    .join('')}</result>`;

/** SPARQL 1.1 Query Results CSV (§2) options: CRLF record ends, CR or LF quoted (see `resultsWriter`). */
const CSV_OPTIONS = { record_delimiter: '\r\n', quoted_match: /[\r\n]/ } as const;

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
function tsvTerm(t: SparqlTerm): string {
  if (t.type === 'uri') return `<${t.value}>`;
  if (t.type === 'bnode') return `_:${t.value}`;
  if (t.datatype && !t['xml:lang'] && SHORT_FORM[t.datatype]?.test(t.value)) return t.value;
  const lexical = quoted(t.value);
  if (t['xml:lang']) return `${lexical}@${t['xml:lang']}`;
  if (!t.datatype || t.datatype === `${XSD}string`) return lexical;
  return `${lexical}^^<${t.datatype}>`;
}

/** A literal's lexical form between double quotes, with the escapes of SPARQL's STRING_LITERAL_QUOTE (grammar [156], [160]). */
function quoted(s: string): string {
  return `"${s.replace(/[\\"\t\n\r]/g, (c) => ({ '\\': '\\\\', '"': '\\"', '\t': '\\t', '\n': '\\n', '\r': '\\r' })[c]!)}"`;
}

/** PN_CHARS_BASE beyond ASCII letters (SPARQL 1.1 Query grammar [164]). */
const PN_CHARS_BASE_EXTRA = /[\u00C0-\u00D6\u00D8-\u00F6\u00F8-\u02FF\u0370-\u037D\u037F-\u1FFF\u200C-\u200D\u2070-\u218F\u2C00-\u2FEF\u3001-\uD7FF\uF900-\uFDCF\uFDF0-\uFFFD]/u;
/** What PN_CHARS adds to PN_CHARS_U beyond `-` and digits (grammar [167]): combining marks (U+0300–U+036F) among them, tested one character at a time. */
// eslint-disable-next-line no-misleading-character-class
const PN_CHARS_EXTRA = /[\u00B7\u0300-\u036F\u203F-\u2040]/u;
/** PN_LOCAL_ESC (grammar [173]): characters a local name holds only escaped with a backslash. */
const PN_LOCAL_ESC = "_~.-!$&'()*+,;=/?#@%";

/**
 * The local part of a prefixed name for `local` (PN_LOCAL, SPARQL 1.1 Query grammar [169]): letters,
 * digits, `_` and `:` as they are; `-` and `.` where PN_LOCAL allows them bare (`-` not first, `.`
 * neither first nor last), else escaped; `%` with two hex digits as a percent escape; the other
 * characters of PN_LOCAL_ESC escaped with a backslash (`singer#name` → `singer\#name`, as the
 * Spider4SPARQL queries write it).
 * @returns the local part, or undefined when a character cannot be written in a local name (a space, a quote, `<`, …)
 */
export function localPart(local: string): string | undefined {
  let out = '';
  for (let i = 0; i < local.length; i++) {
    const c = local[i];
    const first = i === 0;
    if (/[A-Za-z0-9_:]/.test(c) || PN_CHARS_BASE_EXTRA.test(c) || (!first && PN_CHARS_EXTRA.test(c))) out += c;
    else if (c === '-') out += first ? '\\-' : '-';
    else if (c === '.') out += first || i === local.length - 1 ? '\\.' : '.';
    else if (c === '%' && /^[0-9A-Fa-f]{2}$/.test(local.slice(i + 1, i + 3))) out += c;
    else if (PN_LOCAL_ESC.includes(c)) out += `\\${c}`;
    else return undefined;
  }
  return out;
}

/**
 * An IRI as a prefixed name of one of `prefixes` (namespace IRI by prefix label, `''` for `:`), the
 * longest namespace that gives a valid local part winning; undefined when none does.
 */
function prefixedName(iri: string, prefixes: Record<string, string>): string | undefined {
  let best: { label: string; ns: string; local: string } | undefined;
  for (const [label, ns] of Object.entries(prefixes)) {
    if (!ns || !iri.startsWith(ns) || (best && best.ns.length >= ns.length)) continue;
    const local = localPart(iri.slice(ns.length));
    if (local !== undefined) best = { label, ns, local };
  }
  return best && `${best.label}:${best.local}`;
}

/** An IRI as SPARQL writes it: a prefixed name when `prefixes` give one, else `<iri>`. */
export function sparqlIri(iri: string, prefixes: Record<string, string> = {}): string {
  return prefixedName(iri, prefixes) ?? `<${iri}>`;
}

/**
 * A term as a SPARQL query writes it (SPARQL 1.1 Query §4.1): IRIs as prefixed names of `prefixes`
 * where one fits, else `<iri>`; blank nodes `_:label`; plain and xsd:string literals quoted, language
 * tags kept (`"Paris"@fr`); xsd:integer, xsd:decimal, xsd:double and xsd:boolean without their
 * datatype, as the SPARQL token of the same value and datatype (`5`, `2.5`, a decimal "5" as `5.0`,
 * a double "13.0" as `13.0e0`); every other literal, and those whose lexical form has no such token
 * (`"NaN"`, a boolean `"1"`), as `"lexical"^^datatype`.
 */
export function sparqlTerm(t: SparqlTerm, prefixes: Record<string, string> = {}): string {
  if (t.type === 'uri') return sparqlIri(t.value, prefixes);
  if (t.type === 'bnode') return `_:${t.value}`;
  if (t.type === 'triple') {
    const v = t.value as unknown as { subject?: SparqlTerm; predicate?: SparqlTerm; object?: SparqlTerm };
    return v && typeof v === 'object' && v.subject && v.predicate && v.object
      ? `<< ${sparqlTerm(v.subject, prefixes)} ${sparqlTerm(v.predicate, prefixes)} ${sparqlTerm(v.object, prefixes)} >>`
      : quoted(JSON.stringify(t.value));
  }
  if (t['xml:lang']) return `${quoted(t.value)}@${t['xml:lang']}`;
  const dt = t.datatype;
  if (!dt || dt === `${XSD}string`) return quoted(t.value);
  if (SHORT_FORM[dt]?.test(t.value)) return t.value;
  if (dt === `${XSD}decimal` && /^[+-]?[0-9]+\.?$/.test(t.value)) return `${t.value.replace(/\.$/, '')}.0`;
  if (dt === `${XSD}double` && /^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)$/.test(t.value)) return `${t.value}e0`;
  return `${quoted(t.value)}^^${sparqlIri(dt, prefixes)}`;
}

/**
 * A term in the compact form reports, pages and tool results show: `<iri>`, `_:label`, and a
 * literal as its lexical form in JSON string syntax (`"Paris"`), with `@lang`, or with
 * `^^<datatype>` unless xsd:string.
 * @param o.maxChars lexical forms longer than this are cut and end in `…`
 * @param o.datatype how a datatype IRI is written (default `<iri>`)
 */
export function compactTerm(t: SparqlTerm, o: { maxChars?: number; datatype?: (iri: string) => string } = {}): string {
  if (t.type === 'uri') return `<${t.value}>`;
  if (t.type === 'bnode') return `_:${t.value}`;
  const lit = JSON.stringify(o.maxChars !== undefined && t.value.length > o.maxChars ? `${t.value.slice(0, o.maxChars)}…` : t.value);
  if (t['xml:lang']) return `${lit}@${t['xml:lang']}`;
  if (!t.datatype || t.datatype === `${XSD}string`) return lit;
  return `${lit}^^${o.datatype ? o.datatype(t.datatype) : `<${t.datatype}>`}`;
}

/** The header line of a results table: the variables as `?name`, separated by tabs. */
export function tableHeader(vars: readonly string[]): string {
  return vars.map((v) => `?${v}`).join('\t');
}

/** One row of a results table: the row's terms in `vars` order as `sparqlTerm` writes them, separated by tabs; an unbound variable is an empty cell. */
export function tableRow(row: Record<string, SparqlTerm>, vars: readonly string[], prefixes: Record<string, string> = {}): string {
  return vars.map((v) => (row[v] ? sparqlTerm(row[v], prefixes) : '')).join('\t');
}

/**
 * A writer of SELECT results in pieces: the text before the rows, each row, and the text after
 * them; joined, they are the bytes `serializeResults` writes for the same results (one row's text
 * depends on that row only), so an answer is written as it is read, row by row.
 * - SPARQL 1.1 Query Results JSON (§3): `JSON.stringify` of the document.
 * - XML (§2): each row's bindings in the row's order.
 * - CSV (§2): plain values, `_:label` for blank nodes, CRLF line ends; a value is quoted when it
 *   holds a comma, a quote, CR or LF (RFC 4180 §2.6; a lone LF too, which csv-stringify would
 *   leave bare with a CRLF record delimiter).
 * - TSV (§3): `?var` header, terms in Turtle syntax.
 * @param mediaType one of MEDIA.json, MEDIA.xml, MEDIA.csv, MEDIA.tsv
 * @param head the results' variables and links
 * @throws Error for any other media type
 */
export function resultsWriter(mediaType: string, head: { vars?: string[]; link?: string[] }): { start: string; row: (b: SparqlRow, first: boolean) => string; end: string } {
  const vars = head.vars ?? [];
  switch (mediaType) {
    case MEDIA.json: {
      const start = JSON.stringify({ head, results: { bindings: [] } });
      return { start: start.slice(0, -3), row: (b, first) => (first ? '' : ',') + JSON.stringify(b), end: ']}}' };
    }
    case MEDIA.xml:
      return { start: `${XML_OPEN}<head>${xmlHead(vars, head.link)}</head><results>`, row: xmlRow, end: '</results></sparql>' };
    case MEDIA.csv:
      return {
        start: stringify([vars], CSV_OPTIONS),
        row: (b) => stringify([vars.map((v) => (b[v] ? (b[v].type === 'bnode' ? `_:${b[v].value}` : b[v].value) : ''))], CSV_OPTIONS),
        end: '',
      };
    case MEDIA.tsv:
      return { start: `${vars.map((v) => `?${v}`).join('\t')}\n`, row: (b) => `${vars.map((v) => (b[v] ? tsvTerm(b[v]) : '')).join('\t')}\n`, end: '' };
    default:
      throw new Error(`cannot write SPARQL results as ${mediaType}`);
  }
}

/**
 * Writes SPARQL JSON results in another results format (`resultsWriter` for SELECT results).
 * @param mediaType one of MEDIA.json, MEDIA.xml, MEDIA.csv, MEDIA.tsv
 * @throws Error for any other media type
 */
export function serializeResults(r: SparqlResults, mediaType: string): string {
  if (mediaType === MEDIA.json) return JSON.stringify(r);
  if (mediaType === MEDIA.xml && r.boolean !== undefined) return `${XML_OPEN}<head>${xmlHead(r.head.vars ?? [], r.head.link)}</head><boolean>${r.boolean}</boolean></sparql>`;
  const w = resultsWriter(mediaType, r.head);
  const rows = r.results?.bindings ?? [];
  return w.start + rows.map((b, i) => w.row(b, i === 0)).join('') + w.end;
}
