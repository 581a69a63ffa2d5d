/**
 * The SPARQL 1.1 Protocol side of one shard endpoint (§2.1): reading the request (GET, POST form,
 * POST direct; body size limit), the text guard (length and nesting depth, before any parsing),
 * the request's own time limit (`timeout` parameter, `Fkgqa-Timeout` header), the behaviour
 * profile's latency, the service description (SPARQL 1.1 Service Description), the endpoint's VoID,
 * and handing a query to the endpoint pool (pool.ts; answer.ts in a worker) under the time limits,
 * stopped when the client goes away.
 */
import type http from 'node:http';
import { checkQueryText } from '../sparql/guard.js';
import {
  MEDIA,
  negotiate,
  parseProtocolRequest,
  parseTimeLimit,
  ProtocolError,
  QUERY_ERROR_HEADER,
  readBody,
  STOPPED_HEADER,
  strictSearchParams,
  TIME_LIMIT_HEADER,
  type ProtocolRequest,
} from '../sparql/protocol.js';
import type { EndpointTask } from './answer.js';
import type { GoneSignal } from './pool-limits.js';
import type { EndpointStore } from './store.js';
import type { LiveDescriptions, LiveShard } from './live-void.js';
import type { EndpointProfile } from './profile.js';
import { text, type Answer } from './routing.js';
import type { EndpointInfo } from './state.js';
import { serviceDescription } from './service-description.js';

/** One endpoint as the server holds it: its listing and its profile (its store is in the endpoint pool). */
export interface ServedEndpoint {
  info: EndpointInfo;
  /** URL of the endpoint's VoID route. */
  voidUrl?: string;
  profile?: EndpointProfile;
  random: () => number;
  /** Service descriptions already written, by media type and VoID link. */
  sd: Map<string, string>;
}

/** The limits of the server's endpoints. */
export interface EndpointLimits {
  /** Time limit of one query, in ms (503 above). */
  timeoutMs: number;
  /** Largest request body in bytes (413 above); also the longest query text (400). */
  maxBodyBytes: number;
  /** Deepest bracket nesting of a query (400 above, before parsing). */
  maxQueryDepth: number;
}

/** What answering one request needs besides the endpoint: the pool, when the request arrived, and a signal aborted when its client went away. */
export interface RequestContext {
  pool: EndpointStore;
  /** `performance.now()` when the request arrived (a request's time limit counts from then). */
  arrived: number;
  /** Aborted when the client disconnects before the answer is sent. */
  signal: GoneSignal;
}

export { STOPPED_HEADER } from '../sparql/protocol.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The endpoint as LiveDescriptions knows it (shards only; unsharded graphs have no VoID). */
export function liveShard(ep: ServedEndpoint): LiveShard | undefined {
  return ep.info.shard ? { id: ep.info.id, graph: ep.info.graph, shard: ep.info.shard, url: ep.info.url } : undefined;
}

/** Waits the latency (and jitter) of the endpoint's behaviour profile, if any. */
export async function applyLatency(ep: ServedEndpoint): Promise<void> {
  const p = ep.profile;
  if (!p || (!p.latencyMs && !p.jitterMs)) return;
  await sleep((p.latencyMs ?? 0) + (p.jitterMs ? Math.floor(ep.random() * p.jitterMs) : 0));
}

/** `GET /<id>/.well-known/void`: the endpoint's VoID with its live URL (404 when the build has none). */
export async function answerVoid(req: http.IncomingMessage, ep: ServedEndpoint, live: LiveDescriptions | undefined): Promise<Answer> {
  req.resume();
  if (req.method !== 'GET' && req.method !== 'HEAD') return text(405, `method ${req.method} is not allowed here: use GET`, 'void', { Allow: 'GET, OPTIONS' });
  await applyLatency(ep);
  const s = liveShard(ep);
  const body = s && live ? live.void(s) : undefined;
  if (!body) {
    return text(
      404,
      `no VoID description for ${ep.info.id}: the build has no ${ep.info.shard ? `${ep.info.graph}/${ep.info.shard}_void.ttl` : 'VoID for unsharded graphs'} (VoID files are written by the VoID build)`,
      'void',
    );
  }
  return { status: 200, body, type: `${MEDIA.turtle}; charset=utf-8`, kind: 'void' };
}

/** The SPARQL endpoint: service description or query (SPARQL 1.1 Protocol §2.1). */
export async function answerSparql(req: http.IncomingMessage, url: URL, ep: ServedEndpoint, limits: EndpointLimits, live: LiveDescriptions | undefined, ctx: RequestContext): Promise<Answer> {
  const method = req.method ?? 'GET';
  let body: Buffer | undefined;
  if (method === 'POST') body = await readBody(req, limits.maxBodyBytes);
  else req.resume();
  const request = parseProtocolRequest(method, strictSearchParams(url.search), req.headers['content-type'], body);
  let requestLimitMs: number | undefined;
  if (request.type === 'query') {
    try {
      checkQueryText(request.query, { maxLength: limits.maxBodyBytes, maxDepth: limits.maxQueryDepth });
      requestLimitMs = parseTimeLimit(request.timeout, req.headers[TIME_LIMIT_HEADER.toLowerCase()]);
    } catch (e) {
      if (e instanceof ProtocolError) return { ...text(e.status, e.message, 'invalid'), query: request.query.slice(0, 10_000) };
      throw e;
    }
  }
  if (ep.profile) await applyLatency(ep);
  if (request.type === 'service-description') {
    const accept = req.headers.accept;
    // An RDF serialisation the client accepts, else Turtle: a probe must never fail (Comunica probes every endpoint before querying it).
    const format = negotiate(accept, 'graph') === MEDIA.ntriples ? MEDIA.ntriples : MEDIA.turtle;
    const info = ep.info;
    // The build may gain (or lose) its VoID files while serving: looked for on every probe.
    const shard = liveShard(ep);
    const voidUrl = shard && live?.has(shard) ? ep.voidUrl : undefined;
    const key = `${format} ${voidUrl ?? ''}`;
    let sd = ep.sd.get(key);
    if (sd === undefined) {
      const title = info.shard ? `${info.id}: ${info.shard} of graph ${info.graph}` : `${info.id}: graph ${info.graph}, unsharded`;
      sd = await serviceDescription({ url: info.url, title, triples: info.triples, voidUrl }, format);
      ep.sd.set(key, sd);
    }
    return { status: 200, body: sd, type: `${format}; charset=utf-8`, kind: 'service-description', headers: voidUrl ? { Link: `<${voidUrl}>; rel="describedby"` } : {} };
  }
  // The answer is a fresh object (from the worker's message, or made here): the query is added to it, not to a copy.
  const answer = await runQuery(ep, request, req.headers.accept, limits.timeoutMs, requestLimitMs, ctx);
  answer.query = request.query;
  return answer;
}

/**
 * Sends a query to the endpoint pool, which answers it whole in a worker (answer.ts), under the
 * smaller of the endpoint's time limit and the request's; stopped when the client goes away.
 */
async function runQuery(
  ep: ServedEndpoint,
  request: Extract<ProtocolRequest, { type: 'query' }>,
  accept: string | undefined,
  timeoutMs: number,
  requestLimitMs: number | undefined,
  ctx: RequestContext,
): Promise<Answer> {
  const p = ep.profile;
  // Drawn for every query request that reaches the endpoint, so the same request sequence fails the same way.
  const fail = p?.failureRate ? ep.random() < p.failureRate : false;
  const task: EndpointTask = {
    endpoint: ep.info.id,
    query: request.query,
    ...(accept !== undefined ? { accept } : {}),
    protocolDataset: request.defaultGraphs.length > 0 || request.namedGraphs.length > 0,
    ...(p?.refuse ? { refuse: p.refuse } : {}),
    ...(p?.maxRows !== undefined ? { maxRows: p.maxRows } : {}),
    ...(fail ? { failStatus: p?.failureStatus ?? 503 } : {}),
  };
  const outcome = await ctx.pool.run(ep.info.id, task, { limitMs: timeoutMs, requestLimitMs, arrived: ctx.arrived, signal: ctx.signal });
  if (outcome.status === 'timeout') {
    const whose =
      outcome.by === 'endpoint'
        ? `the endpoint's time limit of ${outcome.limitMs} ms (fkgqa serve --timeout)`
        : `the request's time limit of ${outcome.limitMs} ms (its timeout parameter or ${TIME_LIMIT_HEADER} header)`;
    return { ...text(503, `query stopped at ${whose}`, 'data', { [STOPPED_HEADER]: `time-limit; by=${outcome.by}; ms=${outcome.limitMs}` }), timeout: true };
  }
  if (outcome.status === 'busy') {
    const w = Math.round(outcome.waitedMs);
    const when = outcome.ranMs === undefined ? 'had not started' : `had run only ${Math.round(outcome.ranMs)} ms`;
    const end = outcome.by === 'queue' ? `serve's queue limit of ${outcome.limitMs} ms` : `the request's limit of ${outcome.limitMs} ms`;
    return {
      ...text(503, `${ep.info.id} was busy: the query waited ${w} ms behind other queries and ${when} when ${end} ended; the wait is the endpoint's, not the query's: retry later`, 'data', {
        [STOPPED_HEADER]: `busy; by=${outcome.by}; waited=${w}; ms=${outcome.limitMs}`,
        'Retry-After': '1',
      }),
      busy: true,
    };
  }
  if (outcome.status === 'cancelled') return { ...text(499, 'the client went away; the query was stopped', 'data'), cancelled: true };
  if (outcome.status === 'error') {
    if (outcome.fault && !outcome.crashed) {
      // The query trapped oxigraph (a deterministic fault of the query's own, e.g. 3,000 chained +1): the query's, not the endpoint's.
      return text(
        400,
        `query evaluation failed: the query engine of ${ep.info.id} faulted on this query (${outcome.error}); the endpoint was restarted from its shard file and answers further queries`,
        'invalid',
        { [QUERY_ERROR_HEADER]: 'engine-fault' },
      );
    }
    // The store's failure, not the query's: counted apart from refused queries (request-log.ts `failed`).
    if (outcome.crashed) {
      return {
        ...text(500, `query evaluation failed: the worker of ${ep.info.id} crashed (${outcome.error}); the endpoint was restarted from its shard file and answers further queries`, 'data'),
        failed: true,
      };
    }
    return { ...text(500, `query evaluation failed: ${outcome.error}`, 'data'), failed: true };
  }
  return outcome.answer;
}
