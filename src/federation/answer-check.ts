/**
 * Whether an endpoint's answer is a complete SPARQL results document (SPARQL 1.1 Query Results
 * JSON Format §3: an object with `head` and either `results.bindings`, an array, or `boolean`;
 * SPARQL Query Results XML Format §2: a `sparql` root element with `results` or `boolean`, closed).
 * An answer cut off mid-body (the connection closed early, fewer bytes than its `Content-Length`),
 * garbage sent as SPARQL results, or an object without `results.bindings` must never count as "no
 * rows": the federation layer turns such an answer into an error naming the endpoint (the bounded
 * client's direct route, src/federation/client.ts; the engines' HTTP, comunica/thread.ts and the
 * Java program of jena). CSV and TSV answers have no closing mark, so a cut one cannot be told
 * from a complete one here; only a connection closed before the end is caught for them.
 *
 * Imports nothing (the Comunica thread loads it).
 */

/** The media types whose documents `resultsProblem` checks. */
export const CHECKED_RESULT_TYPES = new Set(['application/sparql-results+json', 'application/sparql-results+xml']);

/**
 * The media types of SPARQL results (SPARQL 1.1 Query Results JSON, XML, CSV and TSV). A 2xx answer of
 * another type (text/html, application/json, text/plain, none, an empty 200 or a 204) to a query sent
 * by a federation engine is a fault of that endpoint.
 */
export const SPARQL_RESULT_TYPES = new Set([...CHECKED_RESULT_TYPES, 'text/csv', 'text/tab-separated-values']);

/**
 * Why a 2xx answer to a SELECT or ASK is refused for its media type, in words after the endpoint's
 * URL: on every route an endpoint's answer is read only as SPARQL JSON or XML results
 * (`CHECKED_RESULT_TYPES`, the types both federation engines read and every route checks whole);
 * application/json, text/plain, an error page, none, and the CSV and TSV results types (which
 * carry no closing mark, so a cut answer cannot be told from a whole one) are the endpoint's fault.
 * @param reader who asked for JSON or XML and reads no other type (`fkgqa`, `Comunica`)
 * @returns e.g. "answered HTTP 200 with content type text/plain, which is no SPARQL results type"
 */
export function unreadTypeWords(status: number, type: string, reader: string): string {
  const unread = SPARQL_RESULT_TYPES.has(type) ? ` ${reader} reads (it asked for SPARQL JSON or XML results)` : '';
  return `answered HTTP ${status} ${type ? `with content type ${type}` : 'without a content type'}, which is no SPARQL results type${unread}`;
}

/** The form of a query as its answer shows it: rows (`select`), a boolean (`ask`), or another (`graph`: CONSTRUCT, DESCRIBE). */
export type AnswerForm = 'select' | 'ask' | 'graph';

/** A form keyword that is a whole word: not a prefix name (`ask:`), not part of a longer name. */
const FORM_KEYWORD = /^(select|ask|construct|describe)(?![\w:.\-\u00B7\u00C0-\uFFFF])/i;

/**
 * The form of a SPARQL query read from its first keyword after the prologue (BASE and PREFIX
 * declarations, comments and whitespace anywhere between their parts, any case), without parsing it;
 * undefined when something else comes first (the caller may then parse: `formByInspection` in
 * client.ts). One pass over the prologue, in linear time (the regular expression used before
 * backtracked exponentially on a long run of spaces not followed by a form keyword: 24 spaces took
 * 85 ms, 30 several seconds).
 * @param query SPARQL query text, e.g. "PREFIX a: <http://x#> ASK { ?s ?p ?o }" → 'ask'
 */
export function queryForm(query: string): AnswerForm | undefined {
  const n = query.length;
  const token = /[^\s#<]+/y;
  let i = 0;
  for (;;) {
    while (i < n && /\s/.test(query[i])) i++;
    if (i >= n) return undefined;
    const c = query[i];
    if (c === '#') {
      // A comment ends at the end of its line (SPARQL 1.1 Query §19.4: CR or LF).
      while (i < n && query[i] !== '\n' && query[i] !== '\r') i++;
    } else if (c === '<') {
      // An IRI of PREFIX or BASE: `#` inside it is no comment.
      const end = query.indexOf('>', i);
      if (end < 0) return undefined;
      i = end + 1;
    } else {
      token.lastIndex = i;
      const word = token.exec(query)![0];
      const k = FORM_KEYWORD.exec(word);
      if (k) {
        const f = k[1].toLowerCase();
        return f === 'select' ? 'select' : f === 'ask' ? 'ask' : 'graph';
      }
      const w = word.toLowerCase();
      // PREFIX and BASE, and a prefix name (`a:`, `:`, `ex.b:`; it may touch its IRI: `a:<…>`, read above).
      if (w !== 'prefix' && w !== 'base' && !/^[^:]*:$/.test(word)) return undefined;
      i += word.length;
    }
  }
}

/** The RDF term types of SPARQL JSON results (SPARQL 1.1 Query Results JSON Format §3.2.2; `triple` of SPARQL 1.2 / RDF-star). */
const TERM_TYPES = new Set(['uri', 'literal', 'bnode', 'triple']);

/**
 * What is wrong with a SPARQL results document, in words, or undefined when it is complete.
 * @param text the whole answer (UTF-8 decoded)
 * @param contentType its media type (parameters and case ignored); other types than `CHECKED_RESULT_TYPES` are not checked
 * @param form the form of the query it answers: a `select` answered with a boolean, or an `ask` with
 *   rows, is wrong; undefined or `graph`: not checked
 * @returns e.g. "it is not JSON (Unexpected end of JSON input), 87 bytes" or "it has no results.bindings"
 */
export function resultsProblem(text: string, contentType: string, form?: AnswerForm): string | undefined {
  const type = contentType.split(';')[0].trim().toLowerCase();
  if (type === 'application/sparql-results+json') return jsonTextProblem(text, form);
  if (type === 'application/sparql-results+xml') {
    const t = text.trim();
    if (!/<(?:\w+:)?sparql[\s>]/.test(t)) return 'it has no <sparql> root element';
    if (!/<\/(?:\w+:)?sparql>$/.test(t)) return `it does not end with </sparql> (${Buffer.byteLength(text)} bytes: cut off?)`;
    const results = /<(?:\w+:)?results[\s>/]/.test(t);
    const boolean = /<(?:\w+:)?boolean[\s>/]/.test(t);
    if (!results && !boolean) return 'it has neither <results> nor <boolean>';
    if (results && boolean) return 'it has both <results> and <boolean>';
    if (form === 'select' && boolean) return 'it is a boolean (an ASK answer) but the query is a SELECT';
    if (form === 'ask' && results) return 'it has <results> (rows) but the query is an ASK';
  }
  return undefined;
}

/** Characters that do not occur in text: C0 controls other than tab, LF, CR, FF; DEL; and U+FFFD (bytes that are no UTF-8). */
const BINARY = /[\u0000-\u0008\u000B\u000E-\u001F\u007F\uFFFD]/;

function jsonTextProblem(text: string, form: AnswerForm | undefined): string | undefined {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    const size = `${Buffer.byteLength(text)} bytes${text.trim() === '' ? ', empty' : ''}`;
    // JSON.parse quotes the text: binary bytes (a compressed or image body) are never printed.
    if (BINARY.test(text.slice(0, 512))) return 'it is not JSON (binary data, not text: a compressed or binary body)';
    return `it is not JSON (${(e as Error).message.split('\n')[0]}; ${size})`;
  }
  return jsonResultsProblem(doc, form);
}

/** What is wrong with a parsed SPARQL JSON results document (see `resultsProblem`), or undefined. */
export function jsonResultsProblem(doc: unknown, form?: AnswerForm): string | undefined {
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) return `it is JSON but not an object (${doc === null ? 'null' : Array.isArray(doc) ? 'an array' : typeof doc})`;
  const d = doc as { head?: unknown; results?: { bindings?: unknown }; boolean?: unknown };
  if (d.head === null || typeof d.head !== 'object') return 'it has no "head" object';
  const hasResults = d.results !== undefined;
  if (typeof d.boolean === 'boolean') {
    if (hasResults) return 'it has both "results" and "boolean"';
    if (form === 'select') return 'it is a boolean (an ASK answer) but the query is a SELECT';
    return undefined;
  }
  if (d.results === null || typeof d.results !== 'object') return 'it has neither "results" nor a boolean "boolean"';
  if (form === 'ask') return 'it has "results" (rows) but the query is an ASK';
  const rows = d.results.bindings;
  if (!Array.isArray(rows)) return 'it has no "results.bindings" array';
  for (let i = 0; i < rows.length; i++) {
    const row: unknown = rows[i];
    if (row === null || typeof row !== 'object' || Array.isArray(row))
      return `row ${i + 1} of "results.bindings" is not an object (${row === null ? 'null' : Array.isArray(row) ? 'an array' : JSON.stringify(row).slice(0, 40)})`;
    for (const k in row) {
      const t = (row as Record<string, unknown>)[k] as { type?: unknown; value?: unknown } | null;
      if (
        t === null ||
        typeof t !== 'object' ||
        typeof t.type !== 'string' ||
        !TERM_TYPES.has(t.type) ||
        (t.type === 'triple' ? t.value === null || typeof t.value !== 'object' : typeof t.value !== 'string')
      ) {
        return `row ${i + 1} of "results.bindings" binds ?${k} to no RDF term (${JSON.stringify(t)?.slice(0, 60)})`;
      }
    }
  }
  return undefined;
}
