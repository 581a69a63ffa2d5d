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
 * What is wrong with a SPARQL results document, in words, or undefined when it is complete.
 * @param text the whole answer (UTF-8 decoded)
 * @param contentType its media type without parameters; other types than `CHECKED_RESULT_TYPES` are not checked
 * @returns e.g. "it is not JSON (Unexpected end of JSON input), 87 bytes" or "it has no results.bindings"
 */
export function resultsProblem(text: string, contentType: string): string | undefined {
  const type = contentType.split(';')[0].trim().toLowerCase();
  if (type === 'application/sparql-results+json') {
    let doc: unknown;
    try {
      doc = JSON.parse(text);
    } catch (e) {
      return `it is not JSON (${(e as Error).message.split('\n')[0]}; ${Buffer.byteLength(text)} bytes${text.trim() === '' ? ', empty' : ''})`;
    }
    return jsonResultsProblem(doc);
  }
  if (type === 'application/sparql-results+xml') {
    const t = text.trim();
    if (!/<(?:\w+:)?sparql[\s>]/.test(t)) return 'it has no <sparql> root element';
    if (!/<\/(?:\w+:)?sparql>$/.test(t)) return `it does not end with </sparql> (${Buffer.byteLength(text)} bytes: cut off?)`;
    if (!/<(?:\w+:)?(?:results|boolean)[\s>/]/.test(t)) return 'it has neither <results> nor <boolean>';
  }
  return undefined;
}

/** What is wrong with a parsed SPARQL JSON results document (see `resultsProblem`), or undefined. */
export function jsonResultsProblem(doc: unknown): string | undefined {
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) return `it is JSON but not an object (${doc === null ? 'null' : Array.isArray(doc) ? 'an array' : typeof doc})`;
  const d = doc as { head?: unknown; results?: { bindings?: unknown }; boolean?: unknown };
  if (d.head === null || typeof d.head !== 'object') return 'it has no "head" object';
  if (typeof d.boolean === 'boolean') return undefined;
  if (d.results === null || typeof d.results !== 'object') return 'it has neither "results" nor a boolean "boolean"';
  if (!Array.isArray(d.results.bindings)) return 'it has no "results.bindings" array';
  return undefined;
}
