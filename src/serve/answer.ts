/**
 * The per-query work of a shard endpoint, run inside the endpoint's worker thread (see
 * endpoint-thread.ts) under the query's time limit: inspecting the query (sparqljs), the protocol
 * and profile checks that need it, evaluation (oxigraph), cutting to `maxRows`, and serialisation.
 * The main thread only reads the request, applies the text guard (guard.ts) and forwards the text.
 */
import * as oxigraph from 'oxigraph';
import { isEngineFault } from '../common/store-host.js';
import { MEDIA, negotiate, offered, ProtocolError } from '../sparql/protocol.js';
import { type Feature, inspectQuery, queryInfo } from '../sparql/inspect.js';
import { type RequestKind } from './request-log.js';
import { serializeResults, truncateBindings, type JsonResults } from '../sparql/results.js';

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
  /** Named graphs that form the endpoint's default graph when its store holds several shards. */
  defaultGraphs?: string[];
  /** Behaviour profile: features refused with 403. */
  refuse?: Feature[];
  /** Behaviour profile: rows (SELECT) or triples (CONSTRUCT/DESCRIBE) kept, the cut marked. */
  maxRows?: number;
  /** Behaviour profile: answer with this status instead of running (a simulated failure, drawn by the caller). */
  failStatus?: number;
}

/** The answer to send (status, body, media type) and what the request log records. */
export interface EndpointAnswer {
  status: number;
  body: string;
  /** The Content-Type header. */
  type: string;
  headers?: Record<string, string>;
  kind: RequestKind;
  profile?: 'truncated' | 'failure' | 'refused';
}

const plain = (status: number, message: string, kind: RequestKind, headers?: Record<string, string>): EndpointAnswer => ({
  status,
  body: `${message}\n`,
  type: 'text/plain; charset=utf-8',
  kind,
  ...(headers ? { headers } : {}),
});

/** A Content-Type header for a media type (text types get `charset=utf-8`). */
export const contentType = (format: string) => (format.startsWith('text/') ? `${format}; charset=utf-8` : format);

/**
 * Serialises a graph result (CONSTRUCT/DESCRIBE), cut or not, with oxigraph's own RDF writers:
 * Turtle, N-Triples or RDF/XML.
 * @param format MEDIA.turtle, MEDIA.ntriples or MEDIA.rdfxml
 */
export function serializeGraph(quads: oxigraph.Quad[], format: string): string {
  return new oxigraph.Store(quads).dump({ format, from_graph_name: oxigraph.defaultGraph() });
}

/**
 * Answers one query on a store, as a SPARQL 1.1 Protocol response (§2.1): inspection (`queryInfo`:
 * keywords for plain queries, sparqljs for the rest; 400 for a syntax error, 403 for an update), 400 for a request dataset or FROM, 406 when `Accept` names no
 * format of the query's form, the profile's refusals (403) and simulated failure, 501 for SERVICE,
 * then evaluation (400 for oxigraph's syntax errors, 500 for evaluation errors) and serialisation
 * by the one serialiser of each form (results.ts for SELECT/ASK, oxigraph's writers for graphs),
 * cut to `maxRows` when the profile says so.
 * @throws the engine's error when it faulted (isEngineFault in store-host.ts): the worker is then replaced
 */
export function answerQuery(store: oxigraph.Store, t: EndpointTask): EndpointAnswer {
  let q: ReturnType<typeof queryInfo>;
  try {
    q = queryInfo(t.query);
  } catch (e) {
    if (e instanceof ProtocolError) return plain(e.status, e.message, 'invalid', e.headers);
    throw e;
  }
  if (t.protocolDataset || q.hasFrom) {
    return plain(400, `${t.endpoint} serves one graph, its default graph; it has no named graphs, so default-graph-uri, named-graph-uri, FROM and FROM NAMED are not supported: leave them out`, 'invalid');
  }
  const format = negotiate(t.accept, q.form);
  if (!format) return plain(406, `the Accept header (${t.accept}) names no format this query can be answered in: ${offered(q.form).join(', ')}`, 'invalid');
  const refused = t.refuse?.find((f) => q.features.has(f));
  if (refused) return { ...plain(403, `${t.endpoint} refuses queries using ${refused} (behaviour profile)`, q.kind), profile: 'refused' };
  if (t.failStatus !== undefined) return { ...plain(t.failStatus, `${t.endpoint} is unavailable (simulated failure, behaviour profile)`, q.kind), profile: 'failure' };
  if (q.features.has('service')) {
    // oxigraph (npm) has no SERVICE, and SERVICE SILENT would quietly give one empty solution (pitfall B11).
    return plain(501, `${t.endpoint} does not evaluate SERVICE: send federated queries to a federation engine (e.g. Comunica) with the shard endpoints as sources`, q.kind);
  }

  const options = {
    ...(q.form === 'graph' ? {} : { results_format: MEDIA.json }),
    ...(t.defaultGraphs ? { default_graph: t.defaultGraphs.map((g) => oxigraph.namedNode(g)), named_graphs: [] } : {}),
  };
  let result: ReturnType<oxigraph.Store['query']>;
  try {
    result = store.query(t.query, options);
  } catch (e) {
    if (isEngineFault(e)) throw e;
    const message = (e as Error)?.message ?? String(e);
    const syntax = /^error at \d+:\d+/.test(message);
    if (syntax) {
      // oxigraph's syntax errors list the expected code points; sparqljs names an undeclared prefix
      // and the token (only on this error path: plain queries skip sparqljs, see quickInspect).
      try {
        inspectQuery(t.query);
      } catch (p) {
        if (p instanceof ProtocolError && p.status === 400) return plain(400, p.message, 'invalid');
      }
    }
    return plain(syntax ? 400 : 500, `${syntax ? 'malformed query' : 'query evaluation failed'}: ${message}`, syntax ? 'invalid' : q.kind);
  }
  const cap = t.maxRows;
  if (q.form === 'graph') {
    const quads = result as oxigraph.Quad[];
    const cut = cap !== undefined && quads.length > cap;
    return {
      status: 200,
      body: serializeGraph(cut ? quads.slice(0, cap) : quads, format),
      type: contentType(format),
      kind: q.kind,
      ...(cut ? { profile: 'truncated' as const, headers: { 'Fkgqa-Truncated': `triples=${cap}; of=${quads.length}` } } : {}),
    };
  }
  const parsed = JSON.parse(result as string) as JsonResults;
  const cut = cap !== undefined ? truncateBindings(parsed, cap) : { results: parsed, truncated: false, rows: 0 };
  return {
    status: 200,
    body: serializeResults(cut.results, format),
    type: contentType(format),
    kind: q.kind,
    ...(cut.truncated ? { profile: 'truncated' as const, headers: { 'Fkgqa-Truncated': `rows=${cap}; of=${cut.rows}` } } : {}),
  };
}
