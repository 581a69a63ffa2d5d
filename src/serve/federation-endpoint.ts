/**
 * The federation endpoint of `fkgqa serve` (`/federation/sparql`): the "federation endpoint" of
 * the FKGQA paper's Figure 1 as a SPARQL 1.1 Protocol endpoint, so that any SPARQL client can send
 * queries with SERVICE clauses naming the shard endpoints. Queries are routed as run_sparql_query
 * routes them (src/federation/routing.ts) through the bounded client (src/federation/client.ts); a
 * SERVICE target outside the registry is refused (403) before anything is sent. The engine's
 * threads (`--engines`) are shared fairly between clients (fair-queue.ts, `clientOf`); a lone
 * SERVICE does not wait for the engine, and is asked for SPARQL JSON results even when the client
 * asked for CSV or TSV (written here). docs/serving.md ("The federation endpoint: a fair share per
 * client") has the turns and bounds, docs/mcp.md ("The federation endpoint of `fkgqa serve`") the
 * status codes; the engine's work stops when the client disconnects.
 */
import type { IncomingMessage } from 'node:http';
import type { EndpointRegistry } from '../federation/registry.js';
import { MIX_GRAPHS_OPTION, routeQuery } from '../federation/routing.js';
import { BoundedSparqlClient, type SparqlOutcome } from '../federation/client.js';
import type { Deadline } from '../federation/engine.js';
import { waitLimit, waitOutcome } from '../federation/limit.js';
import { FairQueue, type FairQueueEvent, type Turn } from './fair-queue.js';
import { MEDIA, negotiate, offered, parseProtocolRequest, parseTimeLimit, ProtocolError, QUERY_ERROR_HEADER, readBody, strictSearchParams, TIME_LIMIT_HEADER } from '../sparql/protocol.js';
import { type SparqlResults, serializeResults } from '../sparql/results.js';
import type { RequestKind } from './request-log.js';
import type { Answer } from './routing.js';
import { serviceDescription } from './service-description.js';

/** The deadline of a federated query here: its limit counts from when the engine takes it (serve's `--timeout`, or the request's own). */
type StartDeadline = Extract<Deadline, { from: 'start' }>;

/** The path of the federation endpoint on a `fkgqa serve` port, and its defaults. */
export { CLIENT_HEADER, DEFAULT_FEDERATION_THREADS, DEFAULT_MAX_QUEUED, FEDERATION_PATH } from './defaults.js';
import { CLIENT_HEADER, DEFAULT_FEDERATION_THREADS, DEFAULT_MAX_QUEUED } from './defaults.js';

/** Options of the federation endpoint. */
interface FederationOptions {
  /** Time limit of one query, in ms. */
  timeoutMs: number;
  /** Largest request body, in bytes (413 above). */
  maxBodyBytes: number;
  /** Longest query accepted, in characters (default 8000, as run_sparql_query). */
  maxQueryChars?: number;
  /** Largest answer read from an endpoint or the engine, in bytes (default 32 MiB). */
  maxResultBytes?: number;
  /** The federation engine, by `--federation-engine` name (default `comunica`). */
  federationEngine?: string;
  /** Let one query join endpoints of several graphs (`--mix-graphs`); default false: answered 400 (`mixedGraphs`). */
  mixGraphs?: boolean;
  /** Federated queries evaluated at once: the federation engine's threads (`--engines`; default `DEFAULT_FEDERATION_THREADS`). */
  engines?: number;
  /** Most federated queries one client may have waiting for the engine (`--max-queued`; default `DEFAULT_MAX_QUEUED`); more: 503 busy at once. */
  maxQueued?: number;
  /** Called on every join, start, end and leave of a federated query in the fair queue (fair-queue.ts), for logs and tests. */
  onQueueEvent?: (e: FairQueueEvent) => void;
}

/** The longest `Fkgqa-Client` name, in characters. */
const MAX_CLIENT_NAME = 100;

/**
 * Who sent a request, for the fair share of the federation engine (fair-queue.ts): its remote
 * address, and after `#` the `Fkgqa-Client` header when sent (agents on one machine share an address;
 * each name gets its own share — the header is believed, as serve is a server for cooperating
 * benchmark clients, bound to loopback by default).
 * @throws ProtocolError 400 for a `Fkgqa-Client` header of more than MAX_CLIENT_NAME characters, of control characters, or sent twice
 */
export function clientOf(req: IncomingMessage): string {
  const address = req.socket.remoteAddress ?? '?';
  const name = req.headers[CLIENT_HEADER.toLowerCase()];
  if (name === undefined) return address;
  if (Array.isArray(name)) throw new ProtocolError(400, `the ${CLIENT_HEADER} header is sent ${name.length} times: send it once`);
  const n = name.trim();
  if (n.length > MAX_CLIENT_NAME || /[\u0000-\u001f\u007f]/.test(n))
    throw new ProtocolError(400, `the ${CLIENT_HEADER} header names the client in at most ${MAX_CLIENT_NAME} printable characters (got ${n.length})`);
  return n === '' ? address : `${address}#${n}`;
}

/** An answer of the federation endpoint (the shape `fkgqa serve` sends and logs), its body text. */
type FederationAnswer = Answer & { body: string };

const text = (status: number, body: string, kind: RequestKind = 'data', headers?: Record<string, string>): FederationAnswer => ({
  status,
  body: body.endsWith('\n') ? body : `${body}\n`,
  type: 'text/plain; charset=utf-8',
  kind,
  ...(headers ? { headers } : {}),
});

/** The answer to a request whose client went away: logged as 499, as a shard endpoint logs it (protocol.ts). */
const GONE: FederationAnswer = { ...text(499, 'the client went away; the query was stopped', 'data'), cancelled: true };
/** The answer to a request whose client went away while sending it: logged as 499, as serve logs it on a shard endpoint. */
const GONE_SENDING: FederationAnswer = { ...text(499, 'the client went away while sending its request', 'invalid'), cancelled: true };

/** HTTP status of a refused query, by error class. */
const REFUSED_STATUS: Record<string, number> = { update: 403, 'unknown-endpoint': 403 };

/**
 * The federation endpoint over a registry (see the module comment). Create one per server; the
 * federation engine's thread starts at `warm` or at the first federated query; `close` stops it.
 */
export class FederationEndpoint {
  private client: BoundedSparqlClient | undefined;
  private registryValue: EndpointRegistry | undefined;
  /** The fair share of the engine's threads between clients (fair-queue.ts). */
  readonly queue: FairQueue;

  /**
   * @param registry the endpoints SERVICE may name, read when the first request arrives (the
   *   server knows its URLs only after listening)
   * @param url this endpoint's own URL, for its service description
   */
  constructor(
    private readonly registry: () => EndpointRegistry,
    private readonly url: () => string,
    private readonly options: FederationOptions,
  ) {
    this.queue = new FairQueue(options.engines ?? DEFAULT_FEDERATION_THREADS, options.maxQueued ?? DEFAULT_MAX_QUEUED);
    this.queue.onEvent = options.onQueueEvent;
  }

  private sparql(): BoundedSparqlClient {
    this.registryValue ??= this.registry();
    this.client ??= new BoundedSparqlClient(this.registryValue, {
      maxResultBytes: this.options.maxResultBytes ?? 32 << 20,
      parallel: this.queue.threads,
      ...(this.options.federationEngine ? { engine: this.options.federationEngine } : {}),
    });
    return this.client;
  }

  /**
   * Answers one request (SPARQL 1.1 Protocol §2.1: GET or POST; a GET without query gets the
   * service description).
   * @param cancel aborted when the client disconnects: the query's work is stopped
   * @param arrived when the request arrived (`Date.now()` clock, ms; default now): a federated query's wait for the
   *   engine, and a request's own limit, count from then, as a shard endpoint counts its limits from the request's
   *   arrival (reading and parsing the request are part of the wait: at load, 12 requests at once parse one after another)
   * @returns the answer; protocol errors (405, 413, 415, …) are answers too, never thrown
   */
  async handle(req: IncomingMessage, url: URL, cancel?: AbortSignal, arrived = Date.now()): Promise<FederationAnswer> {
    const method = req.method ?? 'GET';
    let request;
    let requestLimitMs: number | undefined;
    let who: string;
    try {
      who = clientOf(req);
      const body = method === 'POST' ? await readBody(req, this.options.maxBodyBytes) : (req.resume(), undefined);
      request = parseProtocolRequest(method, strictSearchParams(url.search), req.headers['content-type'], body);
      if (request.type === 'query') requestLimitMs = parseTimeLimit(request.timeout, req.headers[TIME_LIMIT_HEADER.toLowerCase()]);
    } catch (e) {
      req.resume();
      // A client that went away while sending its request is gone (499), as on a shard endpoint, not a bad request.
      if (cancel?.aborted || (req.destroyed && !req.complete)) return GONE_SENDING;
      if (e instanceof ProtocolError) return text(e.status, e.message, 'invalid', e.headers);
      throw e;
    }
    const client = this.sparql();
    if (request.type === 'service-description') {
      const format = negotiate(req.headers.accept, 'graph') === MEDIA.ntriples ? MEDIA.ntriples : MEDIA.turtle;
      const sd = await serviceDescription({ url: this.url(), title: `fkgqa federation endpoint: SERVICE queries over ${client.registry.endpoints.length} shard endpoints`, triples: 0 }, format);
      return { status: 200, body: sd, type: `${format}; charset=utf-8`, kind: 'service-description' };
    }
    const query = request.query;
    if (request.defaultGraphs.length > 0 || request.namedGraphs.length > 0) {
      return { ...text(400, 'the federation endpoint has no dataset of its own: name the endpoints with SERVICE, not default-graph-uri/named-graph-uri'), query };
    }
    // The registry's source here is serve's own endpoints (no path): said, with where they are listed.
    const plan = routeQuery(query, client.registry, { maxQueryChars: this.options.maxQueryChars ?? 8000, registrySource: true }, { mixGraphs: this.options.mixGraphs });
    if (!plan.ok) {
      const lift = plan.errorClass === 'mixed-graphs' ? ` (fkgqa serve ${MIX_GRAPHS_OPTION} lets such a query run)` : '';
      return { ...text(REFUSED_STATUS[plan.errorClass] ?? 400, `${plan.errorClass}: ${plan.message}${lift}`, 'invalid'), query };
    }
    const format = negotiate(req.headers.accept, plan.form);
    if (!format) return { ...text(406, `the Accept header (${req.headers.accept}) names no format this query can be answered in: ${offered(plan.form).join(', ')}`), query };
    const by = requestLimitMs !== undefined && requestLimitMs < this.options.timeoutMs ? 'request' : 'endpoint';
    const t = by === 'request' ? requestLimitMs! : this.options.timeoutMs;
    // serve's own limit counts from when the engine takes the query (its start-up and the wait for it are not the
    // query's), the wait bounded by the same limit (then 503 busy); a request's own limit is its client's deadline,
    // counted from the call (`clientMs`): stopped there after a wait `waitedTooLong` calls too long, busy.
    // A lone SERVICE asked for as CSV or TSV: the endpoint is asked for SPARQL JSON results, the only results (with XML) any
    // route reads from an endpoint (checked whole; CSV has no closing mark), and its answer written as CSV or TSV here.
    const rewrite = plan.route === 'direct' && (format === MEDIA.csv || format === MEDIA.tsv) ? format : undefined;
    let o: SparqlOutcome;
    let waited: number | undefined;
    if (plan.route === 'direct') o = await client.direct(plan.targets[0].url, plan.query, rewrite ? MEDIA.json : format, t, cancel);
    else {
      // The engine's threads are shared fairly between clients (fair-queue.ts); the wait for a turn is the wait for the engine.
      const deadline: StartDeadline = by === 'endpoint' ? { ms: t, from: 'start', waitMs: t } : { ms: t, from: 'start', clientMs: t };
      const queued = await this.turn(who, deadline, cancel, client.engineName, arrived);
      if ('answer' in queued) return cancel?.aborted ? { ...GONE, query, client: who } : { ...queued.answer, query, client: who };
      waited = queued.waited;
      try {
        o = await client.federated(plan.query, format, { ...deadline, since: queued.since }, cancel);
      } finally {
        queued.turn.release();
      }
      if (o.status === 'error' && o.busy && o.busy.endpoint === 'federation engine') waited = o.busy.waitedMs;
    }
    const fed = plan.route === 'federation' ? { client: who, ...(waited !== undefined ? { waited: Math.round(waited) } : {}) } : {};
    // Whatever the outcome of a query whose client went away (stopped, an error of its aborted requests), it is the client's leaving.
    if (cancel?.aborted) return { ...GONE, query, ...fed };
    if (o.status === 'timeout') {
      const whose = by === 'endpoint' ? `the endpoint's time limit of ${t} ms (fkgqa serve --timeout)` : `the request's time limit of ${t} ms (its timeout parameter or ${TIME_LIMIT_HEADER} header)`;
      return { ...text(503, `query stopped at ${whose}`, 'data', { 'Fkgqa-Stopped': `time-limit; by=${by}; ms=${t}` }), timeout: true, query, ...fed };
    }
    if (o.status === 'error' && o.busy) {
      // The shard endpoint kept the query waiting behind others, or the engine did not take it within serve's limit: busy.
      const stopped =
        plan.route === 'direct' ? `busy; by=request; waited=${o.busy.waitedMs}; ms=${t}` : `busy; by=${by === 'request' ? 'request' : 'queue'}; waited=${Math.round(o.busy.waitedMs)}; ms=${t}`;
      return { ...text(503, o.error, 'data', { 'Fkgqa-Stopped': stopped, 'Retry-After': '1' }), busy: true, query, ...fed };
    }
    // An error the query caused (a shard's 400, or its Fkgqa-Query-Error: a function it cannot evaluate) is the client's: 400, not 502.
    const queryCaused = o.status === 'error' && (o.queryCaused || o.httpStatus === 400);
    if (o.status === 'error')
      return {
        ...text(
          queryCaused ? 400 : 502,
          `${plan.route === 'direct' ? plan.targets[0].url : 'the federation engine'} failed: ${o.httpStatus ? `HTTP ${o.httpStatus}: ` : ''}${o.error}`,
          'data',
          queryCaused ? { [QUERY_ERROR_HEADER]: 'evaluation' } : undefined,
        ),
        query,
        ...fed,
      };
    if (rewrite) return { status: 200, body: serializeResults(JSON.parse(o.body) as SparqlResults, rewrite), type: `${rewrite}; charset=utf-8`, kind: 'data', query };
    const type = o.contentType || format;
    return { status: 200, body: o.body, type: type.startsWith('text/') ? `${type}; charset=utf-8` : type, kind: 'data', query, ...fed };
  }

  /**
   * Waits for `client`'s turn at the engine (fair-queue.ts), within the wait the query's deadline allows
   * (`waitLimit` of src/federation/limit.ts: serve's `--timeout`, or the request's own deadline), or until `signal`;
   * the wait counts from `since` (the request's arrival, `Date.now()` clock).
   * @returns the turn (release it when the query ends), when the wait began (the deadline's `since` for the
   *   engine call) and how long it took (ms); or the answer when the query does not run: 503 busy
   *   (`by=full`, waited=0) when the client has `maxQueued` queries waiting already, or the answer of
   *   a wait that ended first (`waitOutcome`: busy, or the request's own time limit)
   */
  private async turn(
    client: string,
    deadline: StartDeadline,
    signal: AbortSignal | undefined,
    engine: string,
    since: number,
  ): Promise<{ turn: Turn; since: number; waited: number } | { answer: FederationAnswer }> {
    const turn = this.queue.join(client);
    const limitMs = deadline.clientMs ?? deadline.ms;
    const by = deadline.clientMs !== undefined ? 'request' : 'queue';
    if (!turn) {
      const words = `the federation engine ${engine} is busy: this client (${client}) has ${this.queue.maxWaiting} federated queries waiting already, the most fkgqa serve --max-queued lets one client queue; the query was not queued, not a fault of the query: retry later`;
      return { answer: { ...text(503, words, 'data', { 'Fkgqa-Stopped': 'busy; by=full; waited=0; ms=0', 'Retry-After': '1' }), busy: true, waited: 0 } };
    }
    const how = { deadline: { ...deadline, since }, ...(signal ? { signal } : {}) };
    const wait = waitLimit(how);
    const why = await Promise.race([turn.started.then(() => undefined), wait.stopped]);
    wait.dispose();
    // Started (also when the limit ended in the same turn of the loop: the engine's own wait then ends at once, as it would have).
    if (turn.isStarted || why === undefined) return { turn, since, waited: Date.now() - since };
    turn.release();
    const o = waitOutcome(how, engine, wait, why, {});
    if (o.status === 'error' && o.busy) {
      const waitedMs = Math.round(o.waitedMs ?? Date.now() - since);
      return { answer: { ...text(503, o.error, 'data', { 'Fkgqa-Stopped': `busy; by=${by}; waited=${waitedMs}; ms=${limitMs}`, 'Retry-After': '1' }), busy: true, waited: waitedMs } };
    }
    // The request's own limit under BUSY_MIN_WAIT_MS ended the wait (the query's own), or its client went away (nothing is sent then).
    const whose =
      by === 'request' ? `the request's time limit of ${limitMs} ms (its timeout parameter or ${TIME_LIMIT_HEADER} header)` : `the endpoint's time limit of ${limitMs} ms (fkgqa serve --timeout)`;
    return {
      answer: {
        ...text(503, `query stopped at ${whose}`, 'data', { 'Fkgqa-Stopped': `time-limit; by=${by === 'request' ? 'request' : 'endpoint'}; ms=${limitMs}` }),
        timeout: true,
        waited: Date.now() - since,
      },
    };
  }

  /**
   * Starts the federation engine now (`fkgqa serve` calls it once its endpoints answer), so that the
   * first federated query does not wait for it; after a stopped query the engine starts its
   * replacement at once (ComunicaEngine's warm spare).
   * @returns how it started, in words (FederationEngine.startedHow), when the engine says
   * @throws the engine's start-up error
   */
  async warm(): Promise<string | undefined> {
    return this.sparql().warm();
  }

  /** Stops the federation engine's thread. */
  async close(): Promise<void> {
    await this.client?.close();
  }
}
