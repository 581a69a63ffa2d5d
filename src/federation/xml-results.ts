/**
 * Reading an endpoint's SPARQL XML results (SPARQL Query Results XML Format, W3C 2013) on the direct
 * route, with the library `sparqlxml-parse` (the parser Comunica uses for the same answers), checked
 * as completely as a SPARQL JSON answer (answer-check.ts): the document must end with `</sparql>`,
 * parse as XML, hold `<results>` (a SELECT) or `<boolean>` (an ASK) as the query's form asks, every
 * binding an RDF term (`uri`, `bnode`, `literal`, `triple`), and a boolean `true` or `false`. A
 * garbled or incomplete document is the endpoint's fault (the caller names it), never fewer rows.
 */
import { Readable } from 'node:stream';
import { SaxesParser } from '@rubensworks/saxes';
import { SparqlXmlParser } from 'sparqlxml-parse';
import type * as RDF from '@rdfjs/types';
import { jsonTerm, type SparqlResults, type SparqlTerm } from '../sparql/results.js';
import { resultsProblem, type AnswerForm } from './answer-check.js';

const SPARQL_RESULTS_NS = 'http://www.w3.org/2005/sparql-results#';
/** The elements of a SPARQL XML results document (the W3C format, with SPARQL 1.2's quoted triples). */
const ELEMENTS = new Set(['sparql', 'head', 'variable', 'link', 'results', 'result', 'binding', 'uri', 'bnode', 'literal', 'triple', 'subject', 'predicate', 'object', 'boolean']);

/**
 * What the streaming parser would pass over silently (it drops what it does not know): a document
 * type declaration (entities), the root not in the SPARQL results namespace, an element the format does not have, more than one `<results>`.
 * Markup inside comments, CDATA sections and processing instructions is not counted.
 * @returns the problem in words, or undefined; and the number of `<result>` and `<binding>` elements,
 *   which the rows read must match (a result after `</results>` or a binding without an RDF term is dropped by the parser)
 */
function structureOf(text: string): { problem: string } | { results: number; bindings: number } {
  const markup = text.replace(/<!--[\s\S]*?-->|<!\[CDATA\[[\s\S]*?\]\]>|<\?[\s\S]*?\?>/g, '');
  // Entity declarations (billion laughs, external entities) have no place in a results document; the parser refuses them only at their first use.
  if (/<!DOCTYPE/i.test(markup)) return { problem: 'it has a document type declaration (<!DOCTYPE …>), which SPARQL XML results do not have' };
  const root = /<(?:([\w.-]+):)?sparql[\s>]([^>]*)/.exec(markup);
  const ns = root ? new RegExp(`xmlns${root[1] ? ':' + root[1] : ''}\\s*=\\s*["']([^"']*)["']`).exec(root[0])?.[1] : undefined;
  if (ns !== SPARQL_RESULTS_NS) return { problem: `its root is not <sparql> in the SPARQL results namespace ${SPARQL_RESULTS_NS}${ns ? ` (it is ${JSON.stringify(ns.slice(0, 80))})` : ''}` };
  let results = 0;
  let resultsElements = 0;
  let bindings = 0;
  for (const m of markup.matchAll(/<([\w.:-]+)/g)) {
    const name = m[1].replace(/^[\w.-]+:/, '');
    if (!ELEMENTS.has(name)) return { problem: `it holds an element <${m[1].slice(0, 40)}> that SPARQL XML results do not have` };
    if (name === 'result') results++;
    else if (name === 'results') resultsElements++;
    else if (name === 'binding') bindings++;
  }
  if (resultsElements > 1) return { problem: `it holds ${resultsElements} <results> elements (one is allowed)` };
  const shape = shapeProblem(text);
  if (shape) return { problem: shape };
  return { results, bindings };
}

/** The child elements each element of a SPARQL XML results document may have (an RDF term: `TERM`). */
const TERM = ['uri', 'bnode', 'literal', 'triple'];
const CHILDREN: Record<string, string[]> = {
  sparql: ['head', 'results', 'boolean'],
  head: ['variable', 'link'],
  results: ['result'],
  result: ['binding'],
  binding: TERM,
  triple: ['subject', 'predicate', 'object'],
  subject: TERM,
  predicate: TERM,
  object: TERM,
};

/**
 * The document read as XML with its namespaces resolved (@rubensworks/saxes, the tokenizer
 * sparqlxml-parse uses): every element in the SPARQL results namespace, each where the format puts it
 * (`CHILDREN`; an RDF term holds text only), a binding with a name the head declares and exactly one
 * RDF term, no text between elements. The parser reads past each of these (two terms in one
 * binding keep the last, a term inside a literal replaces it, a `<result>` in another
 * namespace counts, a root in another namespace passes the regular expression of `structureOf`
 * through an attribute's value holding `xmlns='…'`, a binding of an undeclared variable is kept).
 * @returns the problem in words, or undefined (also for a document that is not XML: sparqlxml-parse then
 *   refuses it in its own words)
 */
function shapeProblem(text: string): string | undefined {
  const parser = new SaxesParser({ xmlns: true });
  const stack: { name: string; terms: number }[] = [];
  const vars = new Set<string>();
  let problem: string | undefined;
  let broken = false;
  const fail = (p: string) => (problem ??= p);
  // Not XML at all: sparqlxml-parse (the same tokenizer) says so in its words, after this check.
  parser.on('error', () => {
    broken = true;
  });
  parser.on('opentag', (tag) => {
    if (problem || broken) return;
    if (tag.uri !== SPARQL_RESULTS_NS)
      return fail(`its element <${tag.name.slice(0, 40)}> is not in the SPARQL results namespace ${SPARQL_RESULTS_NS}${tag.uri ? ` (it is ${JSON.stringify(tag.uri.slice(0, 80))})` : ''}`);
    const parent = stack[stack.length - 1];
    if (!parent ? tag.local !== 'sparql' : !(CHILDREN[parent.name] ?? []).includes(tag.local))
      return fail(`it holds <${tag.local}> ${parent ? `inside <${parent.name}>` : 'as its root'}, where SPARQL XML results do not have it`);
    const name = (tag.attributes as Record<string, { value: string; uri: string }>).name;
    if (tag.local === 'variable' && name) vars.add(name.value);
    if (tag.local === 'binding' && (!name || !vars.has(name.value)))
      return fail(name ? `it binds the variable ${JSON.stringify(name.value.slice(0, 40))}, which its <head> does not declare` : 'it holds a <binding> without a name');
    if (parent && TERM.includes(tag.local) && ++parent.terms > 1) return fail(`it holds a <${parent.name}> with more than one RDF term`);
    stack.push({ name: tag.local, terms: 0 });
  });
  parser.on('closetag', () => void stack.pop());
  parser.on('text', (t) => {
    const inside = stack[stack.length - 1];
    if (!problem && inside && CHILDREN[inside.name] && t.trim() !== '')
      fail(`it holds text inside <${inside.name}> (${JSON.stringify(t.trim().slice(0, 40))}), where SPARQL XML results have elements only`);
  });
  try {
    parser.write(text).close();
  } catch {
    broken = true;
  }
  return broken ? undefined : problem;
}

/**
 * Reads a SPARQL XML results document as SPARQL JSON results.
 * @param text the whole answer (UTF-8 decoded)
 * @param form the form of the query it answers (`select` must have `<results>`, `ask` a `<boolean>`)
 * @returns the results, or what is wrong with the document in words (e.g. "it does not parse as SPARQL
 *   XML results (Unexpected close tag on line 1)"); never rejects
 */
export async function readXmlResults(text: string, form: AnswerForm | undefined): Promise<{ results: SparqlResults } | { problem: string }> {
  const shallow = resultsProblem(text, 'application/sparql-results+xml', form);
  if (shallow) return { problem: shallow };
  const structure = structureOf(text);
  if ('problem' in structure) return structure;
  // sparqlxml-parse 3.3.0 reads the text of a CDATA section as nothing (a literal <![CDATA[a]]> became
  // ""): the sections are given to it as the escaped text they stand for.
  if (text.includes('<![CDATA[')) text = text.replace(/<!\[CDATA\[([\s\S]*?)\]\]>/g, (_, x: string) => x.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;'));
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
    const rows: Record<string, SparqlTerm>[] = [];
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
    // The parser drops a <result> outside <results> and a <binding> without an RDF term: every one must have become a row or a term.
    const terms = rows.reduce((n, r) => n + Object.keys(r).length, 0);
    if (rows.length !== structure.results) return { problem: `it holds ${structure.results} <result> elements, of which ${rows.length} are rows inside <results>` };
    if (terms !== structure.bindings) return { problem: `it holds ${structure.bindings} <binding> elements, of which ${terms} hold an RDF term` };
    return { results: { head: { vars }, results: { bindings: rows } } };
  } catch (e) {
    return bad(e);
  }
}
