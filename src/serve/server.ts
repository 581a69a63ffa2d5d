/**
 * `fkgqa serve`: every shard of a build served as its own SPARQL endpoint (SPARQL 1.1 Protocol),
 * each backed by an oxigraph store held by the endpoint pool's worker threads (pool.ts), with
 * service description, VoID, behaviour profiles and a request log. This module holds the server's
 * life (binding its ports before anything is loaded, loading the stores, dispatching,
 * stopping); routing.ts says which path asks for what, protocol.ts answers one endpoint's SPARQL and
 * VoID requests, state.ts keeps the state folder (lock, endpoints file), federation-endpoint.ts
 * serves `/federation/sparql`.
 *
 * The main thread only reads requests, applies the text guard (src/sparql/guard.ts) and forwards query texts;
 * parsing, evaluation and serialisation run in a pool worker under the time limits (answer.ts), and
 * a query whose client disconnects is stopped. Every request path has an error boundary: a bad
 * request is a 4xx, an internal error a 500, never an exit. A worker whose engine faulted is
 * replaced (pool.ts). The build folder is never written: runtime state goes to the state folder
 * (state.ts), VoID and catalogue are served with the live URLs filled in (live-void.ts).
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { graphShards, openBuild } from '../build/open.js';
import { STATE_FILES, stateDir } from '../build/state.js';
import type { LockOwner } from '../common/output.js';
import { InputError, listenError } from '../common/errors.js';
import { seededRandom } from '../common/random.js';
import type { StoreSource } from '../common/store-worker.js';
import { TOOL } from '../common/version.js';
import type { EndpointLauncher } from '../federation/registry.js';
import { MAX_OPERATOR_DEPTH, MAX_SERVED_QUERY_DEPTH } from '../sparql/guard.js';
import { ALLOWED_METHODS, type ParserRefusal, ProtocolError, refusedBodies, refusedRequestAnswer, refusedRequestLine } from '../sparql/protocol.js';
import { DEFAULT_MAX_BODY_BYTES, FEDERATION_PATH } from './defaults.js';
import type { FederationEndpoint } from './federation-endpoint.js';
import type { FairQueueEvent } from './fair-queue.js';
import { LiveDescriptions } from './live-void.js';
import { profileFor, readProfileConfig, type ProfileConfig } from './profile.js';
import { EndpointPool } from './pool.js';
import type { PoolEndpoint } from './pool-groups.js';
import { ClientGone } from './pool-limits.js';
import { isStreamed, StreamStopped, type StreamedBody } from './answer.js';
import type { EndpointStore, StoreKind } from './store.js';
import { answerSparql, answerVoid, liveShard, type EndpointLimits, type ServedEndpoint } from './protocol.js';
import { REQUEST_LOG_MAX_BYTES, RequestLog } from './request-log.js';
import { corsHeaders, corsOrigins, hostAllowed, route as routeOf, serverPathAnswer, text, type Answer } from './routing.js';
import { queryPage } from './query-page.js';
import { acquireServeLock, releaseServeState, writeEndpointsFile, type EndpointInfo, type EndpointsFile } from './state.js';

export type { EndpointInfo, EndpointsFile };

/** Options of `serve`. */
export interface ServeOptions {
  /** Directory of a `fkgqa partition` build (`<kg>/manifest.json`, `<kg>/shard<N>.nt`). */
  shards: string;
  /** Interface to bind (default `127.0.0.1`, loopback only). */
  host?: string;
  /**
   * Port (default 0: any free port; the CLI's default is DEFAULT_PORT, 7373). With
   * `portPerEndpoint`, the first port; endpoints take consecutive ports (0: each any free port).
   * Every port is bound before any shard is loaded: a port in use is an InputError naming it.
   */
  port?: number;
  /** One port per endpoint (`http://host:port/sparql`) instead of one path per endpoint on one port. */
  portPerEndpoint?: boolean;
  /** Serve only these graphs (default all graphs of the build). */
  kgs?: string[];
  /** Also serve each unsharded graph (the union of its shards) as endpoint `<kg>`. */
  withOriginals?: boolean;
  /** Time limit of one query in ms (default 30,000); a query over it is stopped and answered 503. */
  timeoutMs?: number;
  /** Largest request body accepted, in bytes (default DEFAULT_MAX_BODY_BYTES, 10 MiB); larger bodies get 413. Also the longest query text (characters) accepted, GET or POST (400). */
  maxBodyBytes?: number;
  /** Deepest bracket nesting of a query accepted (default MAX_SERVED_QUERY_DEPTH = 320, guard.ts: engine-generated SERVICE text); deeper ones get 400 before any parsing. */
  maxQueryDepth?: number;
  /** Deepest operator nesting of a query accepted (default MAX_OPERATOR_DEPTH = 256, `operatorDepth` of src/sparql/parse.ts); deeper ones get 400 `query too complex`. */
  maxOperatorDepth?: number;
  /** Behaviour profiles: a profile file path, or the configuration itself (default none). */
  profiles?: string | ProfileConfig;
  /**
   * Worker threads of the endpoint pool (default: the number of CPU cores, at least 2): the
   * endpoints are split into this many groups of about equal triples, each held by one worker
   * (src/serve/pool.ts). A query whose client went away or that reached its time limit is stopped
   * by replacing its worker; a query that runs `slowMs` with others waiting behind it is left to its
   * worker while a fresh one takes over the group.
   */
  workers?: number;
  /**
   * What holds the endpoints' triples (`--store`; default `oxigraph`: the endpoint pool's worker
   * threads). `virtuoso`: Virtuoso instances started by serve (virtuoso-store.ts), one per
   * `storeHosts` entry, fronted by the same endpoint layer.
   */
  store?: StoreKind;
  /** Hosts (interfaces) of the Virtuoso instances, one instance each (`--store-host`; default: `host`). The shards are split over them by triples. */
  storeHosts?: string[];
  /** See `workers` (default 1000 ms). */
  slowMs?: number;
  /**
   * Append every request as a JSON line to this file; `true`: to `requests.jsonl` in the state
   * folder (default none; counts are always kept). Capped at `requestLogMaxBytes`, then rotated.
   */
  requestLog?: string | true;
  /** Size cap of the request log file in bytes (default 64 MiB); over it the file is rotated to `.1`. */
  requestLogMaxBytes?: number;
  /** The state folder (default `<shards>.state/`, see src/build/state.ts). */
  state?: string;
  /**
   * Take the state folder's serve lock and write `endpoints.json` there (default true). Without,
   * nothing at all is written (in-process use, e.g. verify starting its own endpoints).
   */
  writeFiles?: boolean;
  /** The federation engine of `/federation/sparql`, by `--federation-engine` name (default `comunica`; src/federation/engine.ts). */
  federationEngine?: string;
  /**
   * Start `/federation/sparql`'s federation engine as soon as the endpoints answer (in the
   * background: `startupMs` does not wait for it), not at its first query (default false; the CLI's
   * `fkgqa serve` sets it). A start-up failure is printed, and answered 502 to federated queries.
   */
  warmFederation?: boolean;
  /** Let `/federation/sparql` join endpoints of several graphs (`--mix-graphs`; default false: such a query is answered 400, as fkgqa mcp refuses it; `mixedGraphs` of src/federation/routing.ts). */
  mixGraphs?: boolean;
  /**
   * Federated queries `/federation/sparql` evaluates at once: the federation engine's threads
   * (`--engines`; default DEFAULT_FEDERATION_THREADS, 2). Clients share them fairly (fair-queue.ts).
   */
  engines?: number;
  /** Most federated queries one client may have waiting for the engine (`--max-queued`; default DEFAULT_MAX_QUEUED, 8); more are answered 503 busy at once. */
  maxQueued?: number;
  /**
   * Origins whose web pages may read the answers (`--cors-origin`; CORS `Access-Control-Allow-Origin`
   * for a request with that `Origin`), `*` for any. Default none: no CORS header at all (`corsHeaders`
   * of routing.ts). @throws InputError (from `serve`) for a value that is neither an origin nor `*`
   */
  corsOrigins?: string[];
  /** Called on every join, start, end and leave of a federated query in `/federation/sparql`'s fair queue (fair-queue.ts): for logs and tests. */
  onFederationQueue?: (e: FairQueueEvent) => void;
  /** Progress lines (stderr in the CLI). */
  progress?: (line: string) => void;
}

const DEFAULTS = { host: '127.0.0.1', timeoutMs: 30_000, maxBodyBytes: DEFAULT_MAX_BODY_BYTES };

/**
 * Triples one pool worker should hold at most: oxigraph needs about 0.8–1.1 KB per triple inside a
 * WebAssembly heap of at most 4 GiB (about 1 KB per triple), so a build with more triples gets more workers
 * than `workers` asks for. A single shard above it still gets one worker of its own.
 */
export const MAX_TRIPLES_PER_WORKER = 2_000_000;

/** Workers of the endpoint pool by default: the CPU cores, at least 2. */
export const defaultWorkers = (): number => Math.max(2, os.availableParallelism());

/**
 * Workers of the endpoint pool: as asked, but at least one per MAX_TRIPLES_PER_WORKER triples (one
 * oxigraph instance holds at most 4 GiB, about 1 KB per triple), and at most one per endpoint.
 * @param requested `--workers`
 * @param triples triples of all endpoints together
 * @param endpoints endpoints served
 */
export function poolWorkers(requested: number, triples: number, endpoints: number): number {
  return Math.max(1, Math.min(Math.max(requested, Math.ceil(triples / MAX_TRIPLES_PER_WORKER)), endpoints));
}

/**
 * The answer to a request whose handling threw: the ProtocolError's status and message, else 500.
 * A client that went away while sending its request (`gone`) is counted as gone (499), not as a
 * bad request.
 */
function refusal(e: unknown, gone: boolean): Answer {
  if (gone) return { ...text(499, 'the client went away while sending its request', 'invalid'), cancelled: true };
  return e instanceof ProtocolError ? text(e.status, e.message, 'invalid', e.headers) : text(500, `internal error: ${(e as Error)?.message ?? String(e)}`, 'invalid');
}

/**
 * What serve keeps of one connection (`connectionOf`, keyed by its socket: a closed socket drops out).
 */
interface Connection {
  /**
   * Where its close was announced, if it was: an answer on it said `Connection: close` (or will: its
   * request asked for it, or was HTTP/1.0 without keep-alive), or the server refused bytes on it and
   * closes it. A server that announced a close reads no further request on that connection (RFC 9112
   * §9.6): a request pipelined behind such an answer is neither answered nor logged, and a query it
   * started is stopped when the connection closes. The place of the announcing answer among the
   * connection's requests (`requests`): an answer written by the server itself after the ones under
   * way (`answerOnSocket`) comes half a place after the last request handed to the handler.
   */
  closing?: number;
  /**
   * The last bytes read (at least the last RECENT_BYTES, and the whole chunk Node's parser is reading), kept so that a refusal
   * of the parser can name the method and request line of a request that came in several TCP segments (the parser hands only
   * the last one to its 'clientError' event), and the protocol of a request line can be read (`requestProtocol`).
   */
  recent: Buffer;
  /** Bytes read so far (where `recent` ends among them). */
  bytesRead: number;
  /** Where the request line last read by `requestProtocol` ends among the bytes. */
  linesRead: number;
  /** A refused method is being read to its end before it is answered (`answerRefusedRequest`). */
  methodWait: boolean;
  /** Requests handed to the handler so far (the first is 1), and the last of them with its answer (its body may still be coming). */
  requests: number;
  last?: { req: http.IncomingMessage; res: http.ServerResponse };
  /** Answers to them finished (sent in full, or closed unfinished), and what waits for `done` to reach `requests` (`afterAnswers`). */
  done: number;
  waiting: (() => void)[];
  /** Closes the answers still waiting behind earlier ones when the connection closes (`handle`). */
  unsent: Set<() => void>;
  /** When the first byte after the last request handed to the handler came (wall clock, and `performance.now()`): a refused request's arrival. */
  headStart?: { at: number; t: number };
}
const connections = new WeakMap<Socket, Connection>();

/** The state of a connection (made at its first use). */
function connectionOf(socket: Socket): Connection {
  let c = connections.get(socket);
  if (!c) {
    const state: Connection = { recent: Buffer.alloc(0), bytesRead: 0, linesRead: 0, methodWait: false, requests: 0, done: 0, waiting: [], unsent: new Set() };
    socket.once('close', () => state.unsent.forEach((drop) => drop()));
    connections.set(socket, (c = state));
  }
  return c;
}

/** Node's limit of a request's line and headers (16 KiB), and its blank line: a request head fits in the bytes kept. */
const RECENT_BYTES = 16_384 + 1_024;

/** Whether the bytes from a request's start hold no whole request line yet (no line end within the 8 KiB a logged line may have). */
const lineUnfinished = (fromStart: string): boolean => !fromStart.includes('\n') && fromStart.length < 8_200;
/** How long the end of a refused method's line is waited for, in ms. */
const METHOD_WAIT_MS = 1_000;

/** Marks a connection's close as announced by the answer at `place` (an earlier mark stands). */
function announceClose(socket: Socket, place?: number): void {
  const c = connectionOf(socket);
  c.closing ??= place ?? c.requests + 0.5;
}

/** Counts one answer on the connection as finished, and runs what waited for the last of them. */
function answerDone(socket: Socket): void {
  const a = connectionOf(socket);
  a.done++;
  if (a.done < a.requests) return;
  const waiting = a.waiting.splice(0);
  // After the answers' own 'close' (next tick), where their requests are logged: the log keeps the order they were sent in.
  if (waiting.length) setImmediate(() => waiting.forEach((w) => w()));
}

/**
 * Runs `then` once every answer to the requests handed to the handler on this connection so far is
 * finished (or the connection closed first). Node writes pipelined answers one after the other (the
 * next one only once the one before it emitted 'finish'); an answer written with one synchronous
 * `end()` looks finished (`writableFinished`) before that, while the next answer still waits in
 * Node's queue: so the answers are counted, not read off the socket.
 */
function afterAnswers(socket: Socket, then: () => void): void {
  const a = connectionOf(socket);
  if (a.done >= a.requests || socket.destroyed) {
    then();
    return;
  }
  let settled = false;
  const once = () => {
    if (settled) return;
    settled = true;
    socket.off('close', once);
    then();
  };
  a.waiting.push(once);
  socket.once('close', once);
}

/**
 * Ends a connection without another answer: once the answers to the requests on it are out, the
 * connection is ended (the server's last bytes on it are those answers').
 */
function endAfterInFlight(socket: Socket): void {
  afterAnswers(socket, () => {
    if (socket.writable) socket.end();
    else socket.destroy();
  });
}

/**
 * Writes an answer on a connection the HTTP server no longer reads (Node's parser refused its
 * bytes, or the request was CONNECT), then closes it. When answers to earlier (pipelined) requests
 * on the connection are still under way, the answer is written only after the last of them has been
 * sent in full (`afterAnswers`), so that HTTP/1.1's in-order answers hold (RFC 9112 §9.3.2): a client
 * never reads it as the answer to one of its valid requests, and no answer is cut into or dropped.
 * @param sent called once: with the body's bytes when the answer was written, with undefined when the connection was gone first
 */
function answerOnSocket(socket: Socket, answer: { status: number; message: string; headers?: Record<string, string> }, sent: (bytes: number | undefined) => void): void {
  announceClose(socket);
  afterAnswers(socket, () => {
    if (!socket.writable) {
      socket.destroy();
      sent(undefined);
      return;
    }
    const body = `${answer.message}\n`;
    const extra = Object.entries(answer.headers ?? {})
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('');
    socket.end(
      `HTTP/1.1 ${answer.status} ${http.STATUS_CODES[answer.status]}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extra}Connection: close\r\n\r\n${body}`,
    );
    sent(Buffer.byteLength(body));
  });
}

/**
 * The refusal of a request whose request line names no HTTP/1.x (RFC 9112 §2.3): 400 for one
 * without any version (an HTTP/0.9 request line, `GET /`: its answer would be a bare body, no status),
 * 505 for another version (`HTTP/2.0` on an HTTP/1.1 connection).
 */
function versionRefusal(req: http.IncomingMessage): ProtocolError {
  if (req.httpVersionMajor === 0)
    return new ProtocolError(400, `the request line "${String(req.method)} ${String(req.url).slice(0, 200)}" names no HTTP version (an HTTP/0.9 request): send HTTP/1.1 (RFC 9112 §3)`);
  return new ProtocolError(505, `HTTP/${req.httpVersion} is not supported: send HTTP/1.1 (RFC 9112)`);
}

/**
 * The URL of a request target (RFC 9112 §3.2): an origin-form target (`/path?query`) is taken as
 * written, its path whole (`//x/y` is the path `//x/y`, not host `x` and path `/y`, as a relative
 * reference would read it); another (absolute-form `http://host/path`, asterisk-form `*`) is read
 * relative to `http://localhost/`.
 * @throws TypeError for a target that is no valid URL
 */
function targetUrl(target: string): URL {
  if (target.startsWith('/')) return new URL(`http://localhost${target}`);
  return new URL(target, 'http://localhost');
}

/** An absolute-form request target (RFC 9112 §3.2.2: `http://host/path`, as sent to a proxy): a scheme, then `//`. */
function absoluteForm(target: string): boolean {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(target);
}

/**
 * The host a request names (RFC 9112 §3.2): an absolute-form target's authority (it wins over the
 * Host header, §3.2.2), else the Host header (undefined without one).
 * @throws ProtocolError 400 for an absolute-form target without a host (`foo:///path`, `http:///path`) or an empty Host header
 *   (the name the loopback guard checks would be empty, and an http URI always has one, RFC 9110 §4.2.1), or for an
 *   absolute-form target with userinfo (`http://user@host/path`, RFC 9110 §4.2.4)
 */
function requestHost(req: http.IncomingMessage, url: URL): string | undefined {
  if (absoluteForm(req.url ?? '/')) {
    // The authority as written (the URL parser skips the empty one of `http:///host/path` and takes `host` for it).
    const authority = /^[^:]*:\/\/([^/?#]*)/.exec(req.url ?? '')?.[1] ?? '';
    // RFC 9110 §4.2.4: userinfo in an http URI is deprecated, and a recipient treats it as an error.
    if (authority.includes('@'))
      throw new ProtocolError(
        400,
        `the request target ${JSON.stringify(String(req.url).slice(0, 200))} names a user (userinfo@): send an origin-form target (/path) or an http URI without userinfo (RFC 9110 §4.2.4)`,
      );
    if (url.host === '' || authority === '')
      throw new ProtocolError(
        400,
        `the request target ${JSON.stringify(String(req.url).slice(0, 200))} names no host: send an origin-form target (/path) or an http URI with its host (RFC 9112 §3.2.2)`,
      );
    return url.host;
  }
  const host = req.headers.host;
  if (host !== undefined && host.trim() === '') throw new ProtocolError(400, 'the request has an empty Host header: name the host (RFC 9112 §3.2)');
  return host;
}

/**
 * The protocol a request line names (`HTTP/1.1`, `RTSP/1.0`), read from the connection's bytes (Node tells the version only):
 * the word after the method and target of the first request line there, after the ones read already, that the request's own
 * header lines follow, as they were sent (so that a header value or a body holding such a line is not taken for it).
 * @returns undefined when the line is not among the bytes kept
 */
function requestProtocol(req: http.IncomingMessage): string | undefined {
  const c = connectionOf(req.socket);
  // The kept bytes start at this place among the connection's bytes; requests before `linesRead` were read already.
  const first = c.bytesRead - c.recent.length;
  const line = `${String(req.method)} ${String(req.url)} `;
  for (let at = c.recent.indexOf(line, Math.max(0, c.linesRead - first), 'latin1'); at >= 0; at = c.recent.indexOf(line, at + 1, 'latin1')) {
    // Only the protocol and header block that follow are read as text (up to the blank line ending
    // them, at most RECENT_BYTES): blanks around header values, which rawHeaders drops, count too.
    const end = c.recent.indexOf('\r\n\r\n', at + line.length, 'latin1');
    const head = c.recent.toString('latin1', at + line.length, Math.min(end < 0 ? c.recent.length : end + 4, at + line.length + RECENT_BYTES));
    const protocol = /^([^\s]{1,40})\r\n/.exec(head);
    if (!protocol || !headersAt(head, protocol[0].length, req.rawHeaders)) continue;
    // The next request line starts after this request's body: a body of known length holding a
    // request line is never taken for the next request's (a chunked one is not measured here).
    const length = req.headers['transfer-encoding'] === undefined ? Number(req.headers['content-length'] ?? 0) : NaN;
    c.linesRead = first + (end >= 0 && Number.isSafeInteger(length) ? end + 4 + length : at + line.length);
    return protocol[1];
  }
  return undefined;
}

/** Whether `raw` holds, from `at`, these header lines (name, colon, optional blanks, value, optional blanks, CRLF), then a blank line. */
function headersAt(raw: string, at: number, rawHeaders: string[]): boolean {
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const head = `${rawHeaders[i]}:`;
    if (!raw.startsWith(head, at)) return false;
    at += head.length;
    while (raw[at] === ' ' || raw[at] === '\t') at++;
    if (!raw.startsWith(rawHeaders[i + 1], at)) return false;
    at += rawHeaders[i + 1].length;
    while (raw[at] === ' ' || raw[at] === '\t') at++;
    if (!raw.startsWith('\r\n', at)) return false;
    at += 2;
  }
  return raw.startsWith('\r\n', at);
}

/** How many Host header lines a request has (Node keeps the first of several in `headers`). */
function hostHeaders(req: http.IncomingMessage): number {
  let n = 0;
  for (let i = 0; i < req.rawHeaders.length; i += 2) if (req.rawHeaders[i].toLowerCase() === 'host') n++;
  return n;
}

/** An `Expect` value asking for 100 Continue (the test Node's HTTP server applies before its 'checkContinue' event). */
const CONTINUE = /(?:^|\W)100-continue(?:$|\W)/i;

/**
 * A running set of shard endpoints. Create with `serve`; stop with `close`.
 */
export class ShardServer {
  /** The endpoints, in the order of `endpoints.json`. */
  readonly endpoints: EndpointInfo[] = [];
  /** The request log (counts per endpoint and kind; its file is opened once the state folder's lock is taken). */
  log: RequestLog;
  /** Milliseconds from the call of `serve` until every endpoint answered. */
  startupMs = 0;
  /** The state folder (absolute), whether or not anything was written there. */
  readonly stateDir: string;
  /** The request log file, if any. */
  readonly requestLogFile: string | undefined;
  private readonly byId = new Map<string, ServedEndpoint>();
  private readonly servers: http.Server[] = [];
  /** The last Host header found allowed (hostAllowed): clients send the same one with every request. */
  private allowedHost: string | undefined;
  /** Routes of endpoint paths seen so far, by path (at most two per endpoint: SPARQL and VoID; unknown paths are not kept). */
  private readonly routes = new Map<string, ReturnType<typeof routeOf<ServedEndpoint>>>();
  private pool: EndpointStore | undefined;
  /** Every store is loaded: requests are answered (before, 503 with Retry-After). */
  private ready = false;
  private readonly limits: EndpointLimits;
  /** `--cors-origin`, checked (`corsOrigins` of routing.ts); empty: no CORS headers. */
  private readonly cors: string[];
  private live: LiveDescriptions | undefined;
  private owner: LockOwner | undefined;
  private profileFile: string | null = null;
  private outputDigest: string | undefined;
  /** `/federation/sparql`: SERVICE queries over the shard endpoints (src/serve/federation.ts). */
  private federation: Promise<FederationEndpoint> | undefined;
  private closed = false;

  /** @internal use `serve` */
  constructor(private readonly options: ServeOptions) {
    this.limits = {
      timeoutMs: options.timeoutMs ?? DEFAULTS.timeoutMs,
      maxBodyBytes: options.maxBodyBytes ?? DEFAULTS.maxBodyBytes,
      maxQueryDepth: options.maxQueryDepth ?? MAX_SERVED_QUERY_DEPTH,
    };
    try {
      this.cors = corsOrigins(options.corsOrigins ?? []);
    } catch (e) {
      throw new InputError((e as Error).message);
    }
    this.stateDir = stateDir(options.shards, options.state);
    this.requestLogFile = options.requestLog === true ? path.join(this.stateDir, STATE_FILES.requestLog) : options.requestLog;
    this.log = new RequestLog(undefined);
  }

  /** The endpoint with this id. */
  endpoint(id: string): EndpointInfo | undefined {
    return this.byId.get(id)?.info;
  }

  /**
   * Replacements so far of the pool worker that holds the endpoint's store (after time limits,
   * clients that went away, slow queries and engine faults), and engine faults; shared by the
   * endpoints of one group.
   */
  restartsOf(id: string): { restarts: number; faults: number } | undefined {
    return this.pool?.restartsOf(id);
  }

  /** The endpoints whose query is running in a pool worker now. */
  queriesRunning(): string[] {
    return this.pool?.running() ?? [];
  }

  /** Worker threads of the endpoint pool running now: one per group, retired ones finishing a slow query, and the spare. */
  get workers(): { current: number; retired: number; spare: number } {
    return this.pool?.workers ?? { current: 0, retired: 0, spare: 0 };
  }

  /** @internal loads the stores and starts listening */
  async start(): Promise<void> {
    const t0 = performance.now();
    const o = this.options;
    const progress = o.progress ?? (() => {});
    // The shard files' sha256 are checked by the pool's threads on the bytes they load (in
    // parallel, each file read once), not here before any loading.
    const opened = openBuild(o.shards, { kgs: o.kgs, checkShards: false });
    this.outputDigest = opened.build.outputDigest;
    const build = graphShards(opened);
    const sha256 = new Map(opened.manifests.flatMap((m) => m.shards.map((s) => [path.join(opened.dir, m.graph, s.file), s.sha256] as const)));
    const source = (file: string): StoreSource => ({ file, format: 'application/n-triples', sha256: sha256.get(file) });
    const profiles = typeof o.profiles === 'string' ? readProfileConfig(o.profiles) : o.profiles;
    this.profileFile = profiles && typeof o.profiles === 'string' ? path.resolve(o.profiles) : null;
    // Before any loading: a second serve with the same state folder stops here (exit 2).
    if (o.writeFiles !== false) this.owner = acquireServeLock(this.stateDir, o.shards);
    if (this.requestLogFile) {
      fs.mkdirSync(path.dirname(this.requestLogFile), { recursive: true });
      this.log = new RequestLog(this.requestLogFile, o.requestLogMaxBytes ?? REQUEST_LOG_MAX_BYTES);
    }
    const shardCount = build.reduce((n, g) => n + g.shards.length, 0);
    const plannedEndpoints = shardCount + (o.withOriginals ? build.length : 0);
    const triples = build.reduce((n, g) => n + g.shards.reduce((m, s) => m + s.triples, 0), 0) * (o.withOriginals ? 2 : 1);
    const workers = poolWorkers(o.workers ?? defaultWorkers(), triples, plannedEndpoints);

    type Planned = { id: string; graph: string; shard: string | null; triples: number; sources: StoreSource[] };
    const planned: Planned[] = [];
    for (const g of build) {
      for (const s of g.shards) {
        planned.push({ id: s.endpoint, graph: g.graph, shard: s.name, triples: s.triples, sources: [source(s.file)] });
      }
      if (o.withOriginals) {
        planned.push({
          id: g.graph,
          graph: g.graph,
          shard: null,
          triples: g.shards.reduce((n, s) => n + s.triples, 0),
          // The union of the shards equals the (skolemised) input: guarantee 1 of the build.
          sources: g.shards.map((s) => source(s.file)),
        });
      }
    }
    for (const p of planned) {
      const profile = profileFor(profiles, p.id, p.graph);
      const ep: ServedEndpoint = {
        info: { id: p.id, graph: p.graph, role: p.shard ? 'shard' : 'original', shard: p.shard, url: '', void: null, triples: p.triples, profile: profile ?? null },
        profile,
        random: seededRandom(profile?.seed ?? 0, p.id),
        sd: new Map(),
      };
      this.byId.set(p.id, ep);
      this.endpoints.push(ep.info);
    }

    // Every port before any loading: a port in use is found at once (exit 2 naming it).
    await this.listen();
    this.pool = await this.startStore(planned, workers, build.length, shardCount);
    this.live = new LiveDescriptions(
      o.shards,
      [...this.byId.values()].filter((e) => e.info.shard).map((e) => ({ id: e.info.id, graph: e.info.graph, shard: e.info.shard!, url: e.info.url })),
    );
    for (const ep of this.byId.values()) {
      ep.info.void = liveShard(ep) && this.live.has(liveShard(ep)!) ? ep.voidUrl! : null;
      ep.info.voidDigest = liveShard(ep) ? this.live.digest(liveShard(ep)!) : null;
      ep.info.store = this.pool.kind;
      ep.info.host = this.pool.placement(ep.info.id) ?? new URL(ep.info.url).host;
    }
    this.ready = true;
    this.startupMs = performance.now() - t0;
    if (this.owner) {
      progress(`  endpoints: ${writeEndpointsFile(this.stateDir, this.endpointsFile())}`);
    }
    progress(`fkgqa serve: ${this.endpoints.length} endpoints up in ${(this.startupMs / 1000).toFixed(2)} s`);
    if (o.warmFederation) {
      // In the background: the endpoints answer already; a federated query arriving meanwhile waits for the engine (not counted in its limit).
      this.federationWarm = this.federationEndpoint()
        .then((f) => f.warm())
        .then(
          (how) => progress(`fkgqa serve: federation engine ${o.federationEngine ?? 'comunica'} started for ${FEDERATION_PATH}${how ? ` (${how})` : ''}`),
          (e: Error) => progress(`fkgqa serve: the federation engine ${o.federationEngine ?? 'comunica'} failed to start: ${e.message} (federated queries are answered 502)`),
        );
    }
  }

  /**
   * Starts the store of the planned endpoints: the oxigraph pool (`workers` threads) or Virtuoso instances (`storeHosts`).
   * @throws InputError naming the file or instance that failed
   */
  private async startStore(planned: { id: string; triples: number; sources: StoreSource[] }[], workers: number, graphs: number, shards: number): Promise<EndpointStore> {
    const o = this.options;
    const progress = o.progress ?? (() => {});
    const what = `${graphs} graphs, ${shards} shards${o.withOriginals ? ` + ${graphs} unsharded graphs` : ''}`;
    const endpoints = planned.map((p): PoolEndpoint => ({ id: p.id, sources: p.sources, triples: p.triples }));
    const limits = { maxQueryDepth: this.limits.maxQueryDepth, maxOperatorDepth: o.maxOperatorDepth ?? MAX_OPERATOR_DEPTH };
    try {
      if (o.store !== undefined && o.store !== 'oxigraph' && o.store !== 'virtuoso') throw new Error(`store ${String(o.store)}: unknown (oxigraph or virtuoso)`);
      if (o.store !== 'virtuoso' && o.storeHosts?.length) throw new Error(`--store-host ${o.storeHosts.join(' ')}: only with --store virtuoso (the oxigraph store runs in serve's own threads)`);
      if (o.store === 'virtuoso') {
        const hosts = o.storeHosts?.length ? o.storeHosts : [o.host ?? DEFAULTS.host];
        const { checkStoreHosts } = await import('./virtuoso.js');
        await checkStoreHosts(hosts);
        progress(`fkgqa serve: ${what}; loading them into Virtuoso on ${hosts.join(', ')}`);
        const { VirtuosoStore } = await import('./virtuoso-store.js');
        return await VirtuosoStore.start(endpoints, { hosts, dir: path.join(this.stateDir, 'virtuoso'), timeoutMs: this.limits.timeoutMs, limits, progress });
      }
      progress(`fkgqa serve: ${what}; loading them into ${workers} oxigraph worker threads`);
      // A query that cannot even start within the endpoint's own time limit is answered busy (pool.ts, BUSY_WAIT_SHARE).
      return await EndpointPool.start(endpoints, { workers, ...(o.slowMs !== undefined ? { slowMs: o.slowMs } : {}), queueLimitMs: this.limits.timeoutMs, progress, limits });
    } catch (e) {
      throw new InputError((e as Error).message, { file: (e as { file?: string }).file });
    }
  }

  /** Settles when the federation engine started in the background (`warmFederation`) is up or failed; undefined without. */
  federationWarm: Promise<void> | undefined;

  private async listen(): Promise<void> {
    const o = this.options;
    const host = o.host ?? DEFAULTS.host;
    const urlHost = host === '0.0.0.0' || host === '::' ? os.hostname() : host.includes(':') ? `[${host}]` : host;
    const bind = (port: number, only?: ServedEndpoint) =>
      new Promise<number>((resolve, reject) => {
        // No Host header is answered by the handler (400 naming it, logged), not by Node's bare 400.
        const server = http.createServer({ requireHostHeader: false }, (req, res) => {
          this.handle(req, res, only).catch((e) => this.lastResort(res, e));
        });
        // Longer than clients keep idle sockets (Comunica's fetch reuses sockets idle for ~5 s; a
        // 5 s server timeout raced with it and failed queries with "other side closed").
        // A request Node's HTTP parser refuses (a control character in a header) is answered with what is wrong, not Node's bare 400.
        // The strict parser stays: insecureHTTPParser would accept such bytes, and with them ambiguous framing (request smuggling behind a proxy).
        server.on('clientError', (e: Error & ParserRefusal, socket: Socket) => this.answerRefusedRequest(e, socket, only));
        // `Expect: 100-continue`: 100 Continue only for a request whose body will be read; one refused before its body (403, 404, 405, 413) gets its refusal alone.
        server.on('checkContinue', (req: http.IncomingMessage, res: http.ServerResponse) => {
          if (this.readsBody(req, only)) res.writeContinue();
          this.handle(req, res, only).catch((e) => this.lastResort(res, e));
        });
        // CONNECT (a proxy's tunnel) is no method of an endpoint: answered 405, not dropped without a word (Node's way without a listener).
        // An `Expect` other than 100-continue: answered 417 by the handler (naming it, logged), not with Node's empty 417.
        server.on('checkExpectation', (req: http.IncomingMessage, res: http.ServerResponse) => {
          this.handle(req, res, only).catch((e) => this.lastResort(res, e));
        });
        server.on('connect', (req: http.IncomingMessage, socket: Socket) => this.answerConnect(req, socket));
        // A request line without an HTTP version (HTTP/0.9) is refused as soon as it is seen, not when the headers timeout ends it.
        server.on('connection', (socket: Socket) => this.watchRequestLine(socket, only));
        server.keepAliveTimeout = 65_000;
        server.headersTimeout = 66_000;
        // Every header line kept (Node keeps 1,000 by default; the 16 KiB header limit bounds them): a request's own header lines
        // are how its request line is told among the connection's bytes (`requestProtocol`).
        server.maxHeadersCount = 0;
        server.once('error', (e: NodeJS.ErrnoException) => reject(listenError(e, host, port)));
        server.listen(port, host, () => {
          server.off('error', reject);
          // After startup, a server error (e.g. from a socket) is not a reason to exit.
          server.on('error', (e) => o.progress?.(`fkgqa serve: server error: ${e.message}`));
          this.servers.push(server);
          resolve((server.address() as AddressInfo).port);
        });
      });
    if (o.portPerEndpoint) {
      let i = 0;
      for (const ep of this.byId.values()) {
        const port = await bind(o.port ? o.port + i++ : 0, ep);
        this.setUrls(ep, `http://${urlHost}:${port}`);
      }
    } else {
      const port = await bind(o.port ?? 0);
      for (const ep of this.byId.values()) this.setUrls(ep, `http://${urlHost}:${port}/${encodeURIComponent(ep.info.id)}`);
    }
  }

  /**
   * `/federation/sparql`, made at its first request: its modules (the federation layer, sparqljs,
   * the engines' clients) are imported then, not at start-up.
   */
  private federationEndpoint(): Promise<FederationEndpoint> {
    this.federation ??= (async () => {
      const [{ FederationEndpoint }, { registryFromEndpointsValue }] = await Promise.all([import('./federation-endpoint.js'), import('../federation/registry.js')]);
      const o = this.options;
      const fedUrl = this.endpoints[0] ? `${new URL(this.endpoints[0].url).origin}${FEDERATION_PATH}` : FEDERATION_PATH;
      return new FederationEndpoint(
        () => registryFromEndpointsValue(this.endpointsFile(), 'serve'),
        () => fedUrl,
        {
          timeoutMs: this.limits.timeoutMs,
          maxBodyBytes: this.limits.maxBodyBytes,
          ...(o.federationEngine ? { federationEngine: o.federationEngine } : {}),
          ...(o.mixGraphs ? { mixGraphs: true } : {}),
          ...(o.engines !== undefined ? { engines: o.engines } : {}),
          ...(o.maxQueued !== undefined ? { maxQueued: o.maxQueued } : {}),
          ...(o.onFederationQueue ? { onQueueEvent: o.onFederationQueue } : {}),
        },
      );
    })();
    return this.federation;
  }

  /**
   * Whether a request's body will be read (RFC 9110 §10.1.1: a server sends 100 Continue only then):
   * an HTTP/1.x POST with an allowed Host, to a SPARQL endpoint or `/federation/sparql`, that declares
   * at most `maxBodyBytes`. Every other request is refused, or answered, before its body (`handle`).
   */
  private readsBody(req: http.IncomingMessage, only?: ServedEndpoint): boolean {
    if (req.httpVersionMajor !== 1 || req.method !== 'POST') return false;
    let url: URL;
    try {
      url = targetUrl(req.url ?? '/');
    } catch {
      return false;
    }
    // Refused for its Host headers (`handle`): two, or none in HTTP/1.1.
    const hosts = hostHeaders(req);
    if (hosts > 1 || (hosts === 0 && req.httpVersionMinor >= 1)) return false;
    let host: string | undefined;
    try {
      host = requestHost(req, url);
    } catch {
      return false;
    }
    if (host === undefined || (host !== this.allowedHost && !hostAllowed(this.options.host ?? DEFAULTS.host, host))) return false;
    const length = req.headers['content-length'];
    if (length !== undefined && !(Number(length) <= this.limits.maxBodyBytes)) return false;
    if (req.headers.expect !== undefined && !CONTINUE.test(req.headers.expect)) return false;
    const pathname = url.pathname;
    const what = routeOf(pathname, (id) => this.byId.get(id), only).what;
    return this.ready && (what === 'sparql' || what === 'federation');
  }

  /**
   * The server's 'clientError' listener: answers a request Node's HTTP parser refused with its status
   * and a text naming what is wrong (`refusedRequestAnswer`), then closes the connection (after the
   * answers to earlier pipelined requests on it, `answerOnSocket`); nothing for a reset connection.
   * The request is logged (`kind` invalid; its endpoint and method when the refused packet holds its
   * request line, `refusedRequestLine`; else `-` and `?`), 499 when its client was gone before the
   * answer. Bytes refused within the body of the request being answered end that request with its
   * connection (its handler hears the client gone and logs it: 499). Bytes on a connection whose close
   * was announced (`closing`: after an answer that said `Connection: close`, or a refusal already
   * given there) are neither answered nor logged: the connection ends after its last answer.
   */
  private answerRefusedRequest(e: Error & ParserRefusal, socket: Socket, only?: ServedEndpoint, waited = false): void {
    // A refusal of a method whose end has not come yet is answered by the wait below, once it has.
    const c = connectionOf(socket);
    if (c.methodWait && !waited) return;
    // The parser's packet is the last chunk read: the refused request may have started in an earlier one (`F` then `OO / ...`).
    const recent = c.recent;
    // Where the parser's packet ends among the connection's bytes (kept before the parser reads them: the packet is their end).
    const packetEnd = c.bytesRead || (e.rawPacket?.length ?? 0);
    if (e.rawPacket && !waited && recent.length >= e.rawPacket.length && recent.subarray(recent.length - e.rawPacket.length).equals(e.rawPacket)) {
      const parsed = Math.min(e.bytesParsed ?? e.rawPacket.length, e.rawPacket.length);
      e = Object.assign(e, { rawPacket: recent, bytesParsed: recent.length - e.rawPacket.length + parsed });
    }
    // The connection ended within a request's line or headers: Node hands no packet, the unfinished request is the end of the bytes kept.
    if (e.code === 'HPE_INVALID_EOF_STATE' && !e.rawPacket && recent.length) e = Object.assign(e, { rawPacket: recent, bytesParsed: recent.length });
    // llhttp refuses a method at its first byte no method starts with (`FO`): the rest of its line may still be on its way. The
    // answer names the method whole and the log its target, so it waits for the line's end (or the connection's end, or METHOD_WAIT_MS).
    if (e.code === 'HPE_INVALID_METHOD' && e.rawPacket && !c.methodWait && !waited) {
      const raw = e.rawPacket.toString('latin1');
      const at = Math.min(e.bytesParsed ?? raw.length, raw.length);
      const blank = raw.lastIndexOf('\r\n\r\n', at - 1);
      if (lineUnfinished(raw.slice(blank < 0 ? 0 : blank + 4))) {
        c.methodWait = true;
        const refused = e;
        let settled = false;
        // The method's start and the refused byte among the connection's bytes.
        const methodAt = packetEnd - (e.rawPacket.length - (blank < 0 ? 0 : blank + 4));
        const refusedAt = packetEnd - (e.rawPacket.length - at);
        const go = (more: boolean) => {
          const now = c.recent.length ? c.recent : refused.rawPacket!;
          // The bytes kept start at this place among the connection's bytes.
          const first = (c.bytesRead || now.length) - now.length;
          if (more && lineUnfinished(now.toString('latin1', Math.max(0, methodAt - first)))) return;
          if (settled) return;
          settled = true;
          c.methodWait = false;
          clearTimeout(timer);
          socket.off('data', onData);
          socket.off('end', onEnd);
          socket.off('close', onEnd);
          this.answerRefusedRequest(Object.assign(refused, { rawPacket: now, bytesParsed: Math.max(0, refusedAt - first) }), socket, only, true);
        };
        const onData = () => go(true);
        const onEnd = () => go(false);
        const timer = setTimeout(onEnd, METHOD_WAIT_MS);
        socket.on('data', onData);
        socket.once('end', onEnd);
        socket.once('close', onEnd);
        return;
      }
    }
    const answer = refusedRequestAnswer(e);
    if (!answer) {
      socket.destroy(e);
      return;
    }
    // The refused bytes belong to the body of the last request handed to the handler (cut short by the client, or malformed),
    // whether its answer is being written or waits behind earlier ones (pipelined).
    const last = c.last;
    if (last && !last.req.complete && !last.res.writableFinished && !(last.res.headersSent && e.code !== 'HPE_INVALID_EOF_STATE')) {
      // A body that arrived but is malformed (a bad chunk size, a control byte in a chunk extension, a transfer coding other than
      // chunked) while its handler reads it: the read fails with what is wrong, answered 400 (and logged so) in its place, and the
      // connection closes after it.
      // A handler that reads the body later (it waits for something first) finds the refusal then (`refusedBodies`); one that
      // answers without the body answers as it would have (its answer closes the connection: the body was not read to its end).
      if (e.code !== 'HPE_INVALID_EOF_STATE') {
        refusedBodies.set(last.req, new Error(answer.message));
        if (last.req.listenerCount('error') > 0) last.req.emit('error', new Error(answer.message));
        return;
      }
      // A body its client cut (the connection ended before it, HPE_INVALID_EOF_STATE) is no malformed one: the request ends with
      // its connection, as Node's own handling ends it (its handler hears the client gone: 499), and nothing is answered.
      socket.destroy(e);
      return;
    }
    // A connection whose close was announced (an answer on it said `Connection: close`, or bytes on it were refused already):
    // bytes after that are no request of the client's to answer or log (llhttp refuses them as "Data after `Connection: close`";
    // a refused request's connection that its client then ends is refused a second time). It ends after its last answer.
    if (c.closing !== undefined || e.code === 'HPE_CLOSED_CONNECTION') {
      announceClose(socket);
      endAfterInFlight(socket);
      return;
    }
    // Arrived with its first byte (a 408's request waited the headers timeout, a refused method its line's end).
    const arrivedAt = c.headStart?.at ?? Date.now();
    const started = c.headStart?.t ?? performance.now();
    const line = refusedRequestLine(e);
    // The client ended the connection in the middle of a request while answers to its earlier ones are under way (a query
    // running): it left, as with CONNECT or refused bytes behind its query. The connection is closed at once, so that those
    // answers close and their queries are stopped (499), and the unfinished request, which no one will read an answer to, is
    // logged 499 too.
    if (e.code === 'HPE_INVALID_EOF_STATE' && c.done < c.requests) {
      announceClose(socket);
      socket.destroy();
      this.recordRequest(line ? this.logIdOf(line.target, only) : '-', { ...text(499, '', 'invalid'), cancelled: true }, { arrivedAt, started, method: line?.method ?? '?', bytes: 0 });
      return;
    }
    const logId = line ? this.logIdOf(line.target, only) : '-';
    answerOnSocket(socket, answer, (bytes) => {
      const a: Answer = bytes === undefined ? { ...text(499, '', 'invalid'), cancelled: true } : text(answer.status, answer.message, 'invalid');
      this.recordRequest(logId, a, { arrivedAt, started, method: line?.method ?? '?', bytes: bytes ?? 0 });
    });
  }

  /** The name a request for this target is logged under: its endpoint's id, the federation path, or `-` (also for a target that is no URL path). */
  private logIdOf(target: string, only?: ServedEndpoint): string {
    try {
      const r = routeOf(targetUrl(target).pathname, (id) => this.byId.get(id), only);
      return r.ep?.info.id ?? (r.what === 'federation' ? FEDERATION_PATH : '-');
    } catch {
      return '-';
    }
  }

  /**
   * The server's 'connection' listener: reads the first line of a connection beside Node's parser,
   * and refuses a request line without an HTTP version (`GET /x`, an HTTP/0.9 request, RFC 9112 §3)
   * at once, 400 and the connection closed, logged like a refusal of Node's parser. Node's parser
   * takes such a line for the start of a request whose headers follow: without this, a client that
   * sends the line alone (as HTTP/0.9 clients do) would wait for the headers timeout (408, 66 s). A
   * line whose blank line came with it is the handler's (its 400, `versionRefusal`); a line the parser
   * refused is the 'clientError' listener's. Only the first line of a connection is read so (a
   * version-less line after requests on a kept-alive connection still waits for the headers timeout):
   * the bytes of the connection go through JavaScript (not straight from the socket to the parser)
   * from then on.
   */
  private watchRequestLine(socket: Socket, only?: ServedEndpoint): void {
    let seen = '';
    let first = true;
    // Before Node's parser reads a chunk: what it refuses, and the requests it hands to the handler, are in the bytes kept.
    const c = connectionOf(socket);
    let trim: NodeJS.Immediate | undefined;
    socket.prependListener('data', (chunk: Buffer) => {
      c.bytesRead += chunk.length;
      c.headStart ??= { at: Date.now(), t: performance.now() };
      c.recent = c.recent.length ? Buffer.concat([c.recent, chunk]) : chunk;
      // Cut to RECENT_BYTES once the parser has read the chunk (and handed the requests in it to the handler): a request head
      // followed by more bytes in the same chunk (a body, further requests) is still whole when its request is handled.
      trim ??= setImmediate(() => {
        trim = undefined;
        if (c.recent.length > RECENT_BYTES) c.recent = Buffer.from(c.recent.subarray(-RECENT_BYTES));
      });
    });
    const onData = (chunk: Buffer) => {
      if (!first) return;
      // Empty lines before the request line are skipped (RFC 9112 §2.2).
      seen = (seen + chunk.toString('latin1')).replace(/^(?:\r?\n)+/, '');
      const lf = seen.indexOf('\n');
      // Lines longer than the parser reads are refused by it (431).
      if (lf < 0 && seen.length <= 16_384) return;
      first = false;
      if (lf < 0 || c.closing !== undefined) return;
      const line = seen.slice(0, lf).replace(/\r$/, '');
      // A method and a target, however many spaces between them (llhttp waits for headers after either form).
      const m = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+) +(\S+)$/.exec(line);
      if (!m) return;
      // With its blank line, the line is the handler's (`versionRefusal`) or the parser's.
      if (/^\r?\n/.test(seen.slice(lf + 1))) return;
      const arrivedAt = c.headStart?.at ?? Date.now();
      const started = c.headStart?.t ?? performance.now();
      const message = `the request line "${line.slice(0, 200)}" names no HTTP version (an HTTP/0.9 request): send HTTP/1.1 (RFC 9112 §3)`;
      const logId = this.logIdOf(m[2], only);
      answerOnSocket(socket, { status: 400, message }, (bytes) => {
        const a: Answer = bytes === undefined ? { ...text(499, '', 'invalid'), cancelled: true } : text(400, message, 'invalid');
        this.recordRequest(logId, a, { arrivedAt, started, method: m[1], bytes: bytes ?? 0 });
      });
    };
    socket.on('data', onData);
  }

  /**
   * The server's 'connect' listener: a CONNECT request (asking for a tunnel, as to a proxy) is
   * answered 405 with the methods an endpoint allows, and its connection closed; logged under `-`.
   */
  private answerConnect(req: http.IncomingMessage, socket: Socket): void {
    const arrivedAt = Date.now();
    const started = performance.now();
    const message = `method CONNECT is not allowed: fkgqa serve is no proxy; send SPARQL queries with GET or POST (SPARQL 1.1 Protocol §2.1)`;
    // Node has left the socket to this listener: its errors and the bytes the client still sends are the listener's to handle.
    socket.on('error', () => socket.destroy());
    // And its end: Node's own listener, which closes a connection whose client left (so that the answer being written on it
    // closes and its query is stopped), went with the socket. A client that leaves is gone, as without the CONNECT; once the
    // 405 is written (the socket ended), the connection closes by itself after it.
    socket.on('end', () => {
      if (!socket.writableEnded) socket.destroy();
    });
    socket.resume();
    answerOnSocket(socket, { status: 405, message, headers: { Allow: ALLOWED_METHODS } }, (bytes) => {
      const a: Answer = bytes === undefined ? { ...text(499, '', 'invalid'), cancelled: true } : text(405, message, 'invalid');
      this.recordRequest('-', a, { arrivedAt, started, method: req.method ?? 'CONNECT', bytes: bytes ?? 0 });
    });
  }

  /** Answers 500 when handling a request failed outside every other boundary (never rethrows). */
  private lastResort(res: http.ServerResponse, e: unknown): void {
    try {
      this.options.progress?.(`fkgqa serve: internal error: ${(e as Error)?.message ?? String(e)}`);
      if (!res.headersSent) {
        res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8', Connection: 'close' });
        res.end(`internal error: ${(e as Error)?.message ?? String(e)}\n`);
      } else res.destroy();
    } catch {
      res.destroy();
    }
  }

  private setUrls(ep: ServedEndpoint, base: string): void {
    ep.info.url = `${base}/sparql`;
    ep.voidUrl = `${base}/.well-known/void`;
  }

  /** The contents of `endpoints.json`. */
  endpointsFile(): EndpointsFile {
    return {
      tool: { name: TOOL.name, version: TOOL.version },
      shards: path.resolve(this.options.shards),
      ...(this.outputDigest ? { outputDigest: this.outputDigest } : {}),
      ...(this.owner ?? {}),
      timeoutMs: this.limits.timeoutMs,
      maxBodyBytes: this.limits.maxBodyBytes,
      profileFile: this.profileFile,
      endpoints: this.endpoints,
    };
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse, only?: ServedEndpoint): Promise<void> {
    // A request pipelined behind one whose answer closes the connection (RFC 9112 §9.6): the server reads no
    // further requests there, so it is neither run, answered nor logged (its body, if any, is drained).
    const socket = req.socket;
    const conn = connectionOf(socket);
    const place = ++conn.requests;
    conn.last = { req, res };
    conn.headStart = undefined;
    if (conn.closing !== undefined && conn.closing < place) {
      req.resume();
      // Never answered: nothing to wait for.
      answerDone(socket);
      return;
    }
    // Its answer counted once sent in full or closed unfinished (what the server writes itself after it waits for that, `afterAnswers`).
    let counted = false;
    const count = () => {
      if (counted) return;
      counted = true;
      answerDone(socket);
    };
    res.once('finish', count);
    res.once('close', count);
    // This request's answer closes the connection (it asked so, or is HTTP/1.0 without keep-alive): the next ones on it are not read.
    if (!res.shouldKeepAlive) announceClose(req.socket, place);
    const started = performance.now();
    // The wall-clock arrival, written as ISO 8601 only when the log has a file.
    const arrivedAt = Date.now();
    // Aborted when the client disconnects before the answer is written: its query is dropped or stopped.
    const gone = new ClientGone();
    // One listener for both: the client went away (its query is dropped or stopped), and the log.
    let recordOnClose: (() => void) | undefined;
    let closed = false;
    // An answer waiting behind earlier ones (pipelined) is not on the socket yet, and Node drops it without a 'close' when the
    // connection closes first: it is closed then as an answer on the socket is (its query stopped, its request logged 499).
    let unsent = false;
    const dropped = () => {
      if (res.writableFinished || res.socket) return;
      unsent = true;
      res.destroy();
      res.emit('close');
    };
    conn.unsent.add(dropped);
    res.once('close', () => {
      closed = true;
      conn.unsent.delete(dropped);
      if (!res.writableFinished) gone.abort();
      recordOnClose?.();
    });
    let ep: ServedEndpoint | undefined;
    // The name the request is logged and counted under: the endpoint's id, the federation endpoint's path, or `-` for the other server paths.
    let logId = '-';
    let answer: Answer;
    // The request line names another protocol than HTTP (its answer closes the connection).
    let foreign = false;
    try {
      // HTTP/1.0 and 1.1 only: a request line without a version (HTTP/0.9, `GET /`) or with another one is refused, its connection closed.
      if (req.httpVersionMajor !== 1) {
        logId = this.logIdOf(req.url ?? '/', only);
        throw versionRefusal(req);
      }
      // llhttp also reads RTSP (`GET / RTSP/1.0`), and hands it over as version 1.0: another protocol than HTTP/1.x, refused as such.
      const protocol = requestProtocol(req);
      if (protocol !== undefined && !protocol.startsWith('HTTP/')) {
        logId = this.logIdOf(req.url ?? '/', only);
        foreign = true;
        throw new ProtocolError(505, `${protocol.slice(0, 20)} is not HTTP: send HTTP/1.1 (RFC 9112 §2.3)`);
      }
      let url: URL;
      try {
        url = targetUrl(req.url ?? '/');
      } catch {
        throw new ProtocolError(400, `the request target is not a valid URL path: ${String(req.url).slice(0, 200)}`);
      }
      // RFC 9112 §3.2: a request with more than one Host, or an HTTP/1.1 request with none, is answered 400 (Node would answer the
      // latter with a bare 400 before any handler, `requireHostHeader`, and keeps the first of several).
      const hosts = hostHeaders(req);
      if (hosts > 1) throw new ProtocolError(400, `the request has ${hosts} Host headers: send exactly one (RFC 9112 §3.2)`);
      if (hosts === 0 && req.httpVersionMinor >= 1) throw new ProtocolError(400, 'the request has no Host header: an HTTP/1.1 request names its host (RFC 9112 §3.2)');
      // An absolute-form target (`GET http://host/path`) names the host itself, and that name wins over the Host header (RFC 9112 §3.2.2).
      const host = requestHost(req, url);
      if (host === undefined || host !== this.allowedHost) {
        if (!hostAllowed(this.options.host ?? DEFAULTS.host, host)) {
          throw new ProtocolError(403, `Host "${String(host).slice(0, 100)}" is not a name of this loopback server (a guard against DNS rebinding): use 127.0.0.1, localhost or [::1]`);
        }
        this.allowedHost = host;
      }
      const pathname = url.pathname;
      let route = only ? undefined : this.routes.get(pathname);
      if (!route) {
        route = routeOf(pathname, (id) => this.byId.get(id), only);
        if (!only && route.ep) this.routes.set(pathname, route);
      }
      ep = route.ep;
      logId = ep?.info.id ?? (route.what === 'federation' ? FEDERATION_PATH : '-');
      // `Expect: 100-continue` is answered (the 'checkContinue' listener); any other expectation cannot be met (RFC 9110 §10.1.1).
      const expect = req.headers.expect;
      if (expect !== undefined && !CONTINUE.test(expect)) {
        throw new ProtocolError(417, `Expect: ${JSON.stringify(expect.slice(0, 100))} cannot be met: the only expectation this server meets is 100-continue (RFC 9110 §10.1.1)`);
      }
      // A transfer coding before the final chunked (`gzip, chunked`): Node's parser reads the chunks, but the body is still coded
      // (without chunked last the body's length is unknown: Node's parser refuses it, 400).
      const coding = req.headers['transfer-encoding'];
      if (coding !== undefined && /,\s*chunked\s*$/i.test(coding)) {
        throw new ProtocolError(
          501,
          `Transfer-Encoding: ${JSON.stringify(coding.slice(0, 100))} is not implemented here: send the body with Content-Length or Transfer-Encoding: chunked alone (RFC 9112 §6.1)`,
        );
      }
      if (req.method === 'OPTIONS') {
        req.resume();
        // A CORS preflight: allowed (its headers below) only for an origin --cors-origin names.
        answer = { status: 204, body: '', type: 'text/plain', kind: 'other', headers: { Allow: ALLOWED_METHODS } };
      } else if (!this.ready) {
        req.resume();
        answer = text(503, `fkgqa serve is still loading its stores: retry in a moment`, 'other', { 'Retry-After': '1' });
      } else if (route.what === 'sparql') answer = await answerSparql(req, url, ep!, this.limits, this.live, { pool: this.pool!, arrived: started, signal: gone });
      else if (route.what === 'void') answer = await answerVoid(req, ep!, this.live);
      else if (route.what === 'federation') answer = await (await this.federationEndpoint()).handle(req, url, gone.signal(), arrivedAt);
      else {
        req.resume();
        answer = serverPathAnswer(
          route.what,
          req.method ?? 'GET',
          {
            endpointsFile: () => this.endpointsFile(),
            counts: () => this.log.counts(),
            catalogue: (file) => this.live?.catalogue(file),
            portPerEndpoint: !!this.options.portPerEndpoint,
            queryPage: (host) => queryPage(this.endpointsFile(), { host, portPerEndpoint: !!this.options.portPerEndpoint }),
          },
          { accept: req.headers.accept, host: req.headers.host },
        );
      }
    } catch (e) {
      req.resume();
      answer = refusal(e, gone.aborted || (req.destroyed && !req.complete));
    }
    // A body sent as it is written (a store's answer: chunked, no Content-Length), else whole.
    const streamed = isStreamed(answer.body) ? answer.body : undefined;
    // A text body is written as text: node sends it with the headers in one write (a Buffer is a second chunk).
    const body = typeof answer.body === 'string' ? answer.body : isStreamed(answer.body) ? '' : Buffer.from(answer.body.buffer, answer.body.byteOffset, answer.body.byteLength);
    let bytes = typeof body === 'string' ? Buffer.byteLength(body, 'utf8') : body.length;
    const cors = corsHeaders(typeof req.headers.origin === 'string' ? req.headers.origin : undefined, this.cors, req.method === 'OPTIONS');
    const headers: Record<string, string | number> = { ...cors, 'Content-Type': answer.type, ...(streamed ? {} : { 'Content-Length': bytes }), ...answer.headers };
    // A connection is closed after an answer given before the request's body was read to its end (a refusal: 403, 405, 413...):
    // the rest of that body may never come (a declared length no client sends), and the next request could not be found after it.
    // So is one whose request line named no HTTP/1.x.
    const bodyLeft = !req.complete && (req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0);
    // So is one asking to upgrade (`Connection: Upgrade`, `Upgrade: h2c`): serve answers it as HTTP/1.1 (RFC 9110 §7.8 lets it
    // ignore the upgrade), but Node's parser reads no further request on that connection, whose pipelined requests would wait.
    const upgrade = Boolean(req.headers.upgrade?.trim()) && /(?:^|,)\s*upgrade\s*(?:,|$)/i.test(String(req.headers.connection ?? ''));
    if (answer.status === 413 || bodyLeft || req.httpVersionMajor !== 1 || foreign || upgrade) {
      headers.Connection = 'close';
      announceClose(req.socket, place);
    }
    let a = answer;
    const record = () => {
      // Never answered because an earlier answer on its connection closed it: no request of the client's to log (not a 499).
      if (!res.headersSent && conn.closing !== undefined && conn.closing < place) return;
      // Cut because serve is stopping (it closes every connection and stops its workers): the server's doing, not its client's
      // (no 499) nor its store's (no 500 failed).
      if (this.closed && (unsent || a.cancelled || a.failed || !res.headersSent)) return;
      // Never sent (its client left while it waited behind earlier answers): 499, as for a client gone during its query.
      if (unsent) a = { ...a, status: 499, cancelled: true, timeout: undefined, busy: undefined, failed: undefined };
      // A HEAD answer carries no body, nor does one never written (its client left first): their bytes are 0.
      this.recordRequest(logId, a, { arrivedAt, started, method: req.method ?? '?', bytes: req.method === 'HEAD' || unsent || (a.cancelled && !streamed) ? 0 : bytes });
    };
    if (streamed) {
      await this.writeStreamed(req, res, streamed, answer.status, headers, gone, (n, stopped) => {
        bytes = n;
        if (stopped) a = { ...a, ...stopped };
        record();
      });
      return;
    }
    // A request whose client went away was closed already: logged now, else once the answer is out.
    if (closed || res.closed) record();
    else recordOnClose = record;
    if (answer.cancelled || res.destroyed) {
      // The client is gone: nothing to write (the log still records the request).
      if (!res.destroyed) res.destroy();
      return;
    }
    res.writeHead(answer.status, headers);
    res.end(req.method === 'HEAD' ? undefined : body);
  }

  /**
   * Counts one request in the request log, and writes its entry when the log has a file; a failed
   * write is reported on progress, never thrown (the answer is out already).
   * @param logId the endpoint id, the federation path, or `-`
   * @param a the answer (status, kind, and the verdict flags)
   * @param at arrival (wall clock, ms since the epoch, and `performance.now()`), method, and bytes sent
   */
  private recordRequest(logId: string, a: Answer, at: { arrivedAt: number; started: number; method: string; bytes: number }): void {
    try {
      if (!this.log.writesFile) {
        this.log.count(logId, a.kind, a.status, a);
        return;
      }
      this.log.record({
        time: new Date(at.arrivedAt).toISOString(),
        endpoint: logId,
        kind: a.kind,
        method: at.method,
        status: a.status,
        ms: Math.round((performance.now() - at.started) * 10) / 10,
        bytes: at.bytes,
        ...(a.profile ? { profile: a.profile } : {}),
        ...(a.timeout ? { timeout: true as const } : {}),
        ...(a.busy ? { busy: true as const } : {}),
        ...(a.cancelled ? { cancelled: true as const } : {}),
        ...(a.failed ? { failed: true as const } : {}),
        ...(a.client !== undefined ? { client: a.client } : {}),
        ...(a.waited !== undefined ? { waited: a.waited } : {}),
        ...(a.query !== undefined ? { query: a.query } : {}),
      });
    } catch (e) {
      this.options.progress?.(`fkgqa serve: request log: ${(e as Error).message}`);
    }
  }

  /**
   * Sends a body as it is written (StreamedBody), at the pace the client reads it; when the body
   * stops before its end, the connection is closed before the last chunk (the client sees an
   * incomplete answer, never a cut one that looks complete).
   * @param done called once at the end with the bytes sent and, when the body did not end, the verdict it is logged with (StreamStopped; 499 when the client went away, 500 for any other error)
   */
  private async writeStreamed(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    body: StreamedBody,
    status: number,
    headers: Record<string, string | number>,
    gone: ClientGone,
    done: (bytes: number, stopped?: StreamStopped['verdict']) => void,
  ): Promise<void> {
    let bytes = 0;
    const iterator = body.chunks[Symbol.asyncIterator]();
    if (res.destroyed || gone.aborted || req.method === 'HEAD') {
      await iterator.return?.();
      if (req.method === 'HEAD' && !res.destroyed) res.writeHead(status, headers).end();
      else if (!res.destroyed) res.destroy();
      done(0, req.method === 'HEAD' ? undefined : { status: 499, cancelled: true });
      return;
    }
    async function* counted(): AsyncGenerator<Uint8Array> {
      for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
        bytes += next.value.byteLength;
        yield next.value;
      }
    }
    res.writeHead(status, headers);
    try {
      await pipeline(Readable.from(counted()), res, ...(body.stop ? [{ signal: body.stop }] : []));
      done(bytes);
    } catch (e) {
      if (!res.destroyed) res.destroy();
      // A generator stopped by the pipeline is closed (`return`): the store ends its query and frees its connection.
      await iterator.return?.().catch(() => undefined);
      const reason: unknown = body.stop?.aborted ? body.stop.reason : undefined;
      const verdict =
        e instanceof StreamStopped
          ? e.verdict
          : reason instanceof StreamStopped
            ? reason.verdict
            : gone.aborted || (e as { code?: string }).code === 'ERR_STREAM_PREMATURE_CLOSE'
              ? { status: 499, cancelled: true as const }
              : { status: 500, failed: true as const };
      done(bytes, verdict);
    }
  }

  /** Stops listening, closes open connections, stops the workers, closes the log and removes `endpoints.json` and the lock. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all(
      this.servers.map(
        (s) =>
          new Promise<void>((resolve) => {
            s.close(() => resolve());
            s.closeAllConnections();
          }),
      ),
    );
    await this.pool?.close();
    await (await this.federation?.catch(() => undefined))?.close();
    await this.log.close();
    if (this.owner) releaseServeState(this.stateDir);
  }
}

/**
 * Starts the endpoints of a build: takes the state folder's serve lock, binds every port, loads
 * every shard (and with `withOriginals` every unsharded graph) into oxigraph stores in the endpoint
 * pool's worker threads, and writes `endpoints.json` into the state folder. Writes nothing into the
 * build.
 * @throws InputError for a missing build, unknown graph, bad profile file, a shard that does not load
 *   or whose bytes differ from its manifest's sha256 (checked by the pool's threads as they load it),
 *   a state folder in use by a running serve (naming its pid), or a port in use (naming it; found
 *   before any shard is loaded)
 */
export async function serve(options: ServeOptions): Promise<ShardServer> {
  const server = new ShardServer(options);
  try {
    await server.start();
  } catch (e) {
    await server.close();
    throw e;
  }
  return server;
}

/**
 * Starts a build's endpoints in this process without writing anything (no lock, no endpoints.json):
 * the `EndpointLauncher` that the library entry point gives to `verify` and the MCP gold check.
 */
export const launchEndpoints: EndpointLauncher = (o) => serve({ shards: o.shards, kgs: o.kgs, timeoutMs: o.timeoutMs, writeFiles: false });
