/**
 * The per-query work of a shard endpoint, run inside a worker thread of the endpoint pool (pool.ts,
 * pool-thread.ts) under the query's time limit: inspecting the query (quickInspect, else sparqljs),
 * the protocol and profile checks that need it, evaluation (oxigraph), cutting to `maxRows`, and
 * serialisation. A query with an arithmetic chain (`8 - 2 - 1`) is evaluated as generated text with
 * the chain bracketed from the left (src/sparql/generate.ts), or refused when it cannot be
 * generated; any other as sent. An answer that is not cut is oxigraph's own serialisation in the negotiated format,
 * passed through as it is (no parse and re-serialisation; src/sparql/results.ts writes the same
 * bytes), except that an XML answer keeps its carriage returns (`&#13;`) and an answer that XML 1.0
 * cannot carry is never sent as XML (src/sparql/xml-chars.ts). The main thread only reads the
 * request, applies the text guard (guard.ts) and forwards the text.
 */
import type * as oxigraph from 'oxigraph';
import { isEngineFault } from '../common/engine-fault.js';
import { MEDIA, negotiate, offered, ProtocolError, QUERY_ERROR_HEADER } from '../sparql/protocol.js';
import { type Feature, inspectQuery, queryInfo, type QueryInfo, type QueryParseLimits } from '../sparql/inspect.js';
import { type RequestKind } from './request-log.js';
import { serializeResults, truncateBindings, type SparqlResults } from '../sparql/results.js';
import { keepCarriageReturns, xmlIllegalChar } from '../sparql/xml-chars.js';
import { leftGroupedQuery } from '../sparql/generate.js';

/**
 * The oxigraph functions `answerQuery` needs besides the store, from the same instance as the store
 * (the thread's web build, src/common/oxigraph-wasm.ts, or the node build in tests).
 */
type OxigraphRuntime = Pick<typeof oxigraph, 'Store' | 'defaultGraph'>;

/** What the worker needs to answer one query of one endpoint. */
export interface EndpointTask {
  /** Endpoint id, for messages. */
  endpoint: string;
  /** The query text, as sent. */
  query: string;
  /** The request's `Accept` header. */
  accept?: string;
  /** The request named `default-graph-uri` or `named-graph-uri` (not supported: 400). */
  protocolDataset: boolean;
  /** Behaviour profile: features refused with 403. */
  refuse?: Feature[];
  /** Behaviour profile: rows (SELECT) or triples (CONSTRUCT/DESCRIBE) kept, the cut marked. */
  maxRows?: number;
  /** Behaviour profile: answer with this status instead of running (a simulated failure, drawn by the caller). */
  failStatus?: number;
}

/**
 * A body sent as it is written (HTTP/1.1 chunked transfer coding, no Content-Length): the bytes of
 * `chunks` in order. When `chunks` throws, the connection is closed before the body's last chunk,
 * so that the client sees an incomplete answer (its HTTP client fails), never a cut one that looks
 * complete; the request is logged with the `StreamStopped` verdict it throws.
 */
export interface StreamedBody {
  chunks: AsyncIterable<Uint8Array>;
  /** Aborted when the body must stop where it is, even while the client is not reading (the time limit): with a StreamStopped reason, its verdict. */
  stop?: AbortSignal;
}

/** True for a body sent as it is written (StreamedBody). */
export const isStreamed = (body: EndpointAnswer['body']): body is StreamedBody => typeof body === 'object' && 'chunks' in body;

/**
 * Why a streamed body stopped before its end: the status and cause the request is logged and
 * counted with (request-log.ts), those the answer would have had if it had not begun: 503 at a time
 * limit, 499 when the client went away, 500 when the store failed, 406 for a character its format
 * cannot carry.
 */
export class StreamStopped extends Error {
  constructor(
    message: string,
    readonly verdict: { status: number; timeout?: true; cancelled?: true; failed?: true },
  ) {
    super(message);
  }
}

/** The answer to send (status, body, media type) and what the request log records. */
export interface EndpointAnswer {
  status: number;
  /** The body: text, or its UTF-8 bytes (as the pool's threads hand it over), or bytes sent as they are written (a store's answer). */
  body: string | Uint8Array | StreamedBody;
  /** The Content-Type header. */
  type: string;
  headers?: Record<string, string>;
  kind: RequestKind;
  profile?: 'truncated' | 'failure' | 'refused';
}

/** A plain-text answer. */
export const plain = (status: number, message: string, kind: RequestKind, headers?: Record<string, string>): EndpointAnswer => ({
  status,
  body: `${message}\n`,
  type: 'text/plain; charset=utf-8',
  kind,
  ...(headers ? { headers } : {}),
});

/** A Content-Type header for a media type (text types get `charset=utf-8`). */
export const contentType = (format: string) => (format.startsWith('text/') ? `${format}; charset=utf-8` : format);

/** The XML media types: their answers must be XML 1.0 documents. */
const XML_FORMATS: readonly string[] = [MEDIA.xml, MEDIA.rdfxml];

/**
 * Serialises a graph result (CONSTRUCT/DESCRIBE) that was cut, with oxigraph's own RDF writers:
 * Turtle, N-Triples or RDF/XML.
 * @param format MEDIA.turtle, MEDIA.ntriples or MEDIA.rdfxml
 */
export function serializeGraph(ox: OxigraphRuntime, quads: oxigraph.Quad[], format: string): string {
  return new ox.Store(quads).dump({ format, from_graph_name: ox.defaultGraph() });
}

/** An answer that is ready: the body in its format, and what the request log needs. */
interface Evaluated {
  body: string;
  format: string;
  headers?: Record<string, string>;
  profile?: 'truncated';
}

/**
 * The checks of a query before any store evaluates it, the same for every store (oxigraph in the
 * pool's workers, Virtuoso): inspection (400 syntax, 403 update), 400 for a request dataset or
 * FROM, 406 when `Accept` names no format of the query's form, the profile's refusals (403) and
 * simulated failure, 501 for SERVICE.
 * @returns the answer to send when a check fails, else the query's inspection and the negotiated format
 */
export function checkTask(t: EndpointTask, limits?: QueryParseLimits): EndpointAnswer | { q: QueryInfo; format: string } {
  let q: QueryInfo;
  try {
    q = queryInfo(t.query, limits);
  } catch (e) {
    if (e instanceof ProtocolError) return plain(e.status, e.message, 'invalid', e.headers);
    throw e;
  }
  if (t.protocolDataset || q.hasFrom) {
    return plain(
      400,
      `${t.endpoint} serves one graph, its default graph; it has no named graphs, so default-graph-uri, named-graph-uri, FROM and FROM NAMED are not supported: leave them out`,
      'invalid',
    );
  }
  const format = negotiate(t.accept, q.form);
  if (!format) return plain(406, `the Accept header (${t.accept}) names no format this query can be answered in: ${offered(q.form).join(', ')}`, 'invalid');
  const refused = t.refuse?.find((f) => q.features.has(f));
  if (refused) return { ...plain(403, `${t.endpoint} refuses queries using ${refused} (behaviour profile)`, q.kind), profile: 'refused' };
  if (t.failStatus !== undefined) return { ...plain(t.failStatus, `${t.endpoint} is unavailable (simulated failure, behaviour profile)`, q.kind), profile: 'failure' };
  if (q.features.has('service')) {
    // oxigraph (npm) has no SERVICE, and SERVICE SILENT would quietly give one empty solution; Virtuoso must never federate (its SERVICE breaks on FILTER IN and VALUES).
    return plain(501, `${t.endpoint} does not evaluate SERVICE: send federated queries to a federation engine (e.g. Comunica) with the shard endpoints as sources`, q.kind, {
      [QUERY_ERROR_HEADER]: 'unsupported',
    });
  }
  return { q, format };
}

/**
 * Answers one query on a store, as a SPARQL 1.1 Protocol response (§2.1): inspection (`queryInfo`:
 * keywords for plain queries, sparqljs for the rest; 400 for a syntax error, 403 for an update), 400
 * for a request dataset or FROM, 406 when `Accept` names no format of the query's form, the
 * profile's refusals (403) and simulated failure, 501 for SERVICE, then evaluation of the client's
 * text, or of it with every arithmetic chain bracketed from the left when it has one
 * (`leftGroupedQuery`: oxigraph groups `8 - 2 - 1` from the right; 400 naming the chain and its
 * bracketed form when the endpoint cannot bracket it; a query with a chain is first read by
 * oxigraph as sent, so that its syntax errors point into the client's text) (400 for
 * oxigraph's syntax errors, and for its evaluation errors with `Fkgqa-Query-Error: evaluation`: the
 * query's, not the endpoint's) in the negotiated format (the bytes oxigraph
 * writes; cut to `maxRows` when the profile says so, written by the one serialiser of each form:
 * results.ts for SELECT/ASK, oxigraph's writers for graphs). An answer holding a character that
 * XML 1.0 cannot carry (U+0001 in a literal, say) is never sent as XML: it goes out in the client's
 * next acceptable format, or, when `Accept` allows only XML, as 406 naming the character.
 * @param ox the oxigraph instance of `store` (Store and defaultGraph, to write cut graph answers)
 * @param limits the bracket nesting and operator depth accepted (fkgqa serve's; default 64 and 256): deeper queries get 400
 * @throws the engine's error when it faulted (isEngineFault): the worker is then replaced
 */
export function answerQuery(ox: OxigraphRuntime, store: oxigraph.Store, t: EndpointTask, limits?: QueryParseLimits): EndpointAnswer {
  const checked = checkTask(t, limits);
  if ('status' in checked) return checked;
  const { q, format } = checked;
  // oxigraph groups `+ -` and `* /` chains from the right: such a query is evaluated bracketed from the left (generate.ts), or refused.
  const grouping = leftGroupedQuery(t.query, limits);
  let run = t;
  if (grouping.kind !== 'as-sent') {
    // oxigraph reads the client's own text first: a syntax error is reported where the client wrote it, never in the generated text.
    const sent = syntaxError(ox, t.query, format);
    if (sent) return malformed(sent, t.query, limits);
    if (grouping.kind === 'refused') return plain(400, grouping.message, 'invalid');
    run = { ...t, query: grouping.text };
  }

  let out: Evaluated;
  try {
    out = evaluate(ox, store, run, q.form, format);
    if (XML_FORMATS.includes(out.format)) {
      const bad = xmlIllegalChar(out.body);
      if (bad) {
        // XML 1.0 cannot carry the character in any form: another format the client accepts, or 406.
        const other = negotiate(t.accept, q.form, XML_FORMATS);
        if (!other) {
          return plain(
            406,
            `the answer holds the character ${bad}, which XML 1.0 cannot carry (not even as a character reference), so it has no ${out.format} serialisation: ask for ${offered(q.form)
              .filter((f) => !XML_FORMATS.includes(f))
              .join(', ')}`,
            q.kind,
          );
        }
        out = evaluate(ox, store, run, q.form, other);
      } else out = { ...out, body: keepCarriageReturns(out.body) };
    }
  } catch (e) {
    if (isEngineFault(e)) throw e;
    const message = (e as Error)?.message ?? String(e);
    if (SYNTAX_ERROR.test(message)) {
      if (run === t) return malformed(message, t.query, limits);
      // The client's text parses (checked above) and the generated one does not: the client can bracket the chain itself.
      return plain(
        400,
        `the query's arithmetic chains must be grouped from the left, as SPARQL 1.1 groups them; this endpoint's engine (oxigraph) groups them from the right, and the text the endpoint generated with them bracketed does not parse (${message}): bracket every chain of + - or * / yourself, as (8 - 2) - 1, and send the query again`,
        'invalid',
      );
    }
    // Any other error of oxigraph's evaluation (a store in memory) is the query's: e.g. "The custom function <bif:contains>
    // is not supported". 400 with Fkgqa-Query-Error, so that no client counts it as the endpoint's failure (docs/serving.md).
    return plain(400, `query evaluation failed: ${message}`, q.kind, { [QUERY_ERROR_HEADER]: 'evaluation' });
  }
  return {
    status: 200,
    body: out.body,
    type: contentType(out.format),
    kind: q.kind,
    ...(out.profile ? { profile: out.profile } : {}),
    ...(out.headers ? { headers: out.headers } : {}),
  };
}

/** oxigraph's syntax errors: `error at line:column: …`. */
const SYNTAX_ERROR = /^error at \d+:\d+/;

/**
 * The 400 for a query oxigraph does not parse: oxigraph's message (its position in `text`, the
 * expected code points), or sparqljs's when sparqljs does not parse it either (it names an
 * undeclared prefix and the token; only on this error path: plain queries skip sparqljs, see
 * quickInspect).
 */
function malformed(message: string, text: string, limits: QueryParseLimits | undefined): EndpointAnswer {
  try {
    inspectQuery(text, limits);
  } catch (p) {
    if (p instanceof ProtocolError && p.status === 400) return plain(400, p.message, 'invalid');
  }
  return plain(400, `malformed query: ${message}`, 'invalid');
}

/** An empty store per oxigraph instance: where `syntaxError` has oxigraph read a text. */
const emptyStores = new WeakMap<OxigraphRuntime, oxigraph.Store>();

/**
 * oxigraph's syntax error for a query text, read by evaluating it on an empty store (the oxigraph
 * package parses only as part of a query): undefined when it parses, whatever its evaluation
 * gives. Costs a parse, and an evaluation without data (a query built of VALUES and BIND alone is
 * evaluated in full).
 * @throws the engine's error when it faulted (isEngineFault)
 */
function syntaxError(ox: OxigraphRuntime, text: string, format: string): string | undefined {
  let empty = emptyStores.get(ox);
  if (!empty) emptyStores.set(ox, (empty = new ox.Store()));
  try {
    empty.query(text, { results_format: format });
  } catch (e) {
    if (isEngineFault(e)) throw e;
    const message = (e as Error)?.message ?? String(e);
    if (SYNTAX_ERROR.test(message)) return message;
  }
  return undefined;
}

/**
 * Evaluates the query and writes its answer in `format`: oxigraph's own bytes, or, when the profile
 * cuts the answer, the cut written by the form's one serialiser.
 * @throws oxigraph's error (syntax, evaluation, or an engine fault)
 */
function evaluate(ox: OxigraphRuntime, store: oxigraph.Store, t: EndpointTask, form: string, format: string): Evaluated {
  const cap = t.maxRows;
  if (cap === undefined) return { body: store.query(t.query, { results_format: format }) as string, format };
  if (form === 'graph') {
    const quads = store.query(t.query) as oxigraph.Quad[];
    if (quads.length <= cap) return { body: serializeGraph(ox, quads, format), format };
    return { body: serializeGraph(ox, quads.slice(0, cap), format), format, profile: 'truncated', headers: { 'Fkgqa-Truncated': `triples=${cap}; of=${quads.length}` } };
  }
  const parsed = JSON.parse(store.query(t.query, { results_format: MEDIA.json }) as string) as SparqlResults;
  const cut = truncateBindings(parsed, cap);
  return {
    body: serializeResults(cut.results, format),
    format,
    ...(cut.truncated ? { profile: 'truncated' as const, headers: { 'Fkgqa-Truncated': `rows=${cap}; of=${cut.rows}` } } : {}),
  };
}
