/**
 * `fkgqa serve --store virtuoso`: the shard endpoints held by Virtuoso instances (virtuoso.ts), one
 * per store host, each shard in a named graph of its own, fronted by fkgqa's endpoint layer
 * (server.ts, protocol.ts) so that an agent sees the same endpoints, limits, VoID, service
 * descriptions and verdicts as with oxigraph. Virtuoso only evaluates one shard's queries: it never
 * sees SERVICE (answered 501 before, as with oxigraph) and is never the federator.
 *
 * Per query: the checks shared with oxigraph (answer.ts `checkTask`), the text rewritten for
 * Virtuoso (virtuoso-query.ts), sent to the shard's instance over HTTP under the smaller of the
 * endpoint's and the request's time limits (the request is aborted at the limit, or when the
 * client goes away), the answer read back and written in the negotiated format by the same
 * serialisers as oxigraph's answers (results.ts; oxigraph's writers for graphs).
 */
import path from 'node:path';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import type * as oxigraph from 'oxigraph';
import type { StoreSource } from '../common/store-worker.js';
import { MEDIA, negotiate, offered, QUERY_ERROR_HEADER } from '../sparql/protocol.js';
import { QueryTooComplex, type SparqlParseOptions } from '../sparql/parse.js';
import { resultsWriter, serializeResults, truncationLink } from '../sparql/results.js';
import { xmlIllegalChar } from '../sparql/xml-chars.js';
import { checkTask, contentType, isStreamed, plain, serializeGraph, StreamStopped, type EndpointAnswer, type EndpointTask } from './answer.js';
import { splitIntoGroups } from './pool-groups.js';
import { queryLimits, waitingOutcome, type PoolOutcome, type RunLimits } from './pool-limits.js';
import { waitedTooLong } from '../federation/limit.js';
import type { EndpointStore } from './store.js';
import { freePorts, removeOrphans, VIRTUOSO_MAX_ROWS, VirtuosoInstance } from './virtuoso.js';
import { StoreCannotAnswer, SUB_EXTREME_PREFIX, UnsupportedFunction, virtuosoQuery, virtuosoRowReader, type VirtuosoQuery } from './virtuoso-query.js';
import { virtuosoCannotCompile, virtuosoDataException } from './virtuoso-shapes.js';
import { xmlResultBatches } from './virtuoso-results.js';

/**
 * Requests sent to one instance at once; more wait in arrival order (their time limits run). Below
 * the instance's HTTP threads (virtuoso.ts: 20): a federation engine's burst of a hundred requests
 * to one instance otherwise had some connections dropped ("fetch failed").
 */
export const INSTANCE_CONCURRENCY = 12;

/**
 * Deadline (ms) of the probe (`ASK {}` straight to the instance) sent after one of its queries is
 * stopped at a time limit or fails: an instance that does not answer it is restarted. An instance
 * answers it in milliseconds, also while 12 queries (INSTANCE_CONCURRENCY) run on it; one whose HTTP
 * threads are all held by queries stopped by fkgqa but running on inside Virtuoso (its own limits,
 * MaxQueryExecutionTime and the `timeout` parameter, do not stop a large cross product) answers
 * nothing, and would charge every later query with the time limit. A query that arrives while the
 * probe runs is held until its verdict (`VirtuosoStore.run`).
 */
export const PROBE_MS = 10_000;

/** One endpoint to load: its id, its N-Triples files, and their triples (for the placement). */
export interface VirtuosoEndpoint {
  id: string;
  sources: StoreSource[];
  triples: number;
}

/** Options of the Virtuoso store. */
export interface VirtuosoStoreOptions {
  /** Hosts (interfaces) of the instances, one instance each; the endpoints are split over them by triples (`splitIntoGroups`). */
  hosts: string[];
  /** Folder of the instances' folders (`<state>/virtuoso`); each instance's is removed when it stops. */
  dir: string;
  /** The endpoint's time limit (ms): the instances' own limit is set a little above it, as a backstop. */
  timeoutMs: number;
  /** The parse limits of the endpoints. */
  limits?: SparqlParseOptions;
  progress?: (line: string) => void;
}

/** The IRI of an endpoint's named graph in its instance. */
export const endpointGraph = (id: string) => `urn:fkgqa:endpoint:${encodeURIComponent(id)}`;

/** Checks a shard file against the sha256 its build wrote (as the oxigraph pool's threads do). @throws Error naming the file */
function checkSource(s: StoreSource): void {
  if (s.sha256 === undefined) return;
  const sha = createHash('sha256').update(fs.readFileSync(s.file)).digest('hex');
  if (sha !== s.sha256)
    throw Object.assign(new Error(`${s.file}: shard file differs from the one the build wrote (sha256 ${sha.slice(0, 12)}…, manifest ${s.sha256.slice(0, 12)}…): rebuild with fkgqa partition`), {
      file: s.file,
    });
}

/** True for an answer (not a request to ask again in another format). */
const isAnswer = (x: unknown): x is EndpointAnswer => typeof x === 'object' && x !== null && 'status' in x;

let oxigraphModule: Promise<typeof oxigraph> | undefined;

/** The store (see the module comment). Create with `VirtuosoStore.start`. */
export class VirtuosoStore implements EndpointStore {
  readonly kind = 'virtuoso' as const;
  readonly triples = new Map<string, number>();
  readonly workers = { current: 0, retired: 0, spare: 0 };
  private readonly instanceOf = new Map<string, VirtuosoInstance>();
  private readonly instances: VirtuosoInstance[] = [];
  private readonly inFlight = new Map<string, number>();
  /** Per endpoint: queries its instance failed on (its error, not the query's): `restartsOf`'s `faults`. */
  private readonly failures = new Map<string, number>();
  /** Per instance: requests being sent, and those waiting for a turn (INSTANCE_CONCURRENCY). */
  private readonly turns = new Map<VirtuosoInstance, { active: number; waiting: (() => void)[] }>();
  /** The endpoints loaded, by id: what a restarted instance must hold again. */
  private readonly loaded = new Map<string, VirtuosoEndpoint>();
  /**
   * Per instance: its probe or restart under way (`check`). `answered` settles with the probe's
   * verdict (true: it answered; false: it is restarted, or the store closes), `restarting` is set
   * before; `done` settles with the instance answering again, or failed.
   */
  private readonly checks = new Map<VirtuosoInstance, { restarting: boolean; answered: Promise<boolean>; done: Promise<void> }>();
  /** Per instance that could not be restarted with its shards: why. Its endpoints answer 500 (the store failed) from then on. */
  private readonly broken = new Map<VirtuosoInstance, string>();
  private closed = false;

  private constructor(private readonly options: VirtuosoStoreOptions) {}

  /**
   * Starts one instance per host and loads every endpoint into its instance.
   * @throws Error naming the file, instance or endpoint that failed (every instance is stopped then)
   */
  static async start(endpoints: VirtuosoEndpoint[], options: VirtuosoStoreOptions): Promise<VirtuosoStore> {
    const store = new VirtuosoStore(options);
    try {
      await store.load(endpoints);
    } catch (e) {
      await store.close();
      throw e;
    }
    return store;
  }

  private async load(endpoints: VirtuosoEndpoint[]): Promise<void> {
    const o = this.options;
    const orphans = removeOrphans(o.dir);
    if (orphans.length > 0) o.progress?.(`  stopped ${orphans.length} Virtuoso instance(s) left by a serve that did not stop them (pid ${orphans.join(', ')})`);
    const groups = splitIntoGroups(endpoints, o.hosts.length);
    const hosts = o.hosts.slice(0, groups.length);
    const ports = await freePorts([...hosts, ...hosts]);
    const dirsAllowed = [...new Set(endpoints.flatMap((e) => e.sources.map((s) => path.dirname(path.resolve(s.file)))))];
    const maxQuerySeconds = Math.ceil(o.timeoutMs / 1000) + 5;
    let loaded = 0;
    await Promise.all(
      groups.map(async (group, i) => {
        const host = hosts[i];
        const dir = path.join(o.dir, `${host}-${ports[i]}`);
        const v = await VirtuosoInstance.start({ dir, host, sqlPort: ports[i], httpPort: ports[hosts.length + i], dirsAllowed, maxQuerySeconds });
        this.instances.push(v);
        if (this.closed) return;
        o.progress?.(`  Virtuoso on ${v.address} (pid ${v.pid}): ${group.length} endpoints`);
        for (const e of group) {
          const t0 = performance.now();
          e.sources.forEach(checkSource);
          const n = await v.load(
            e.sources.map((s) => path.resolve(s.file)),
            endpointGraph(e.id),
          );
          if (n !== e.triples) throw new Error(`Virtuoso on ${v.address} holds ${n} triples of ${e.id}, its shard files ${e.triples}`);
          this.triples.set(e.id, n);
          this.instanceOf.set(e.id, v);
          this.loaded.set(e.id, e);
          o.progress?.(`  loaded ${e.id} into ${v.address} (${n} triples, ${((performance.now() - t0) / 1000).toFixed(2)} s) [${++loaded}/${endpoints.length}]`);
        }
      }),
    );
  }

  /** `host:port` of the instance that holds the endpoint. */
  placement(endpoint: string): string | undefined {
    return this.instanceOf.get(endpoint)?.address;
  }

  /** The instances, in start order. */
  get instanceList(): readonly VirtuosoInstance[] {
    return this.instances;
  }

  /**
   * `restarts`: times the endpoint's instance was restarted because it stopped answering (`check`);
   * `faults`: the queries its instance failed on (not the query's error), those answered while it restarted among them.
   */
  restartsOf(endpoint: string): { restarts: number; faults: number } | undefined {
    const v = this.instanceOf.get(endpoint);
    return v ? { restarts: v.restarts, faults: this.failures.get(endpoint) ?? 0 } : undefined;
  }

  /**
   * Probes the instance (`answers` within PROBE_MS) after one of its queries was stopped at a time
   * limit or failed; one that does not answer is restarted on its database files (`restart`), then
   * every endpoint it holds is counted and, when its triples differ from its shard files', loaded
   * again from them. One probe or restart per instance at a time; none once the store is closing.
   */
  private check(v: VirtuosoInstance): void {
    if (this.closed || this.checks.has(v)) return;
    let verdict: (answered: boolean) => void = () => {};
    const c = { restarting: false, answered: new Promise<boolean>((resolve) => (verdict = resolve)), done: Promise.resolve() };
    this.checks.set(v, c);
    const progress = this.options.progress;
    c.done = (async () => {
      const answered = await v.answers(PROBE_MS);
      if (!answered && !this.closed) {
        c.restarting = true;
        progress?.(`fkgqa serve: Virtuoso on ${v.address} did not answer a probe (ASK {}, at most ${PROBE_MS} ms) after a query was stopped or failed: restarting it`);
      }
      verdict(answered);
      if (answered || this.closed) return;
      const t0 = performance.now();
      await v.restart();
      for (const [id, e] of this.loaded) {
        if (this.instanceOf.get(id) !== v) continue;
        const graph = endpointGraph(id);
        if ((await v.triplesIn(graph)) === e.triples) continue;
        e.sources.forEach(checkSource);
        const n = await v.load(
          e.sources.map((s) => path.resolve(s.file)),
          graph,
        );
        if (n !== e.triples) throw new Error(`holds ${n} triples of ${id} after loading it again, its shard files ${e.triples}`);
        progress?.(`  loaded ${id} into ${v.address} again (${n} triples)`);
      }
      progress?.(`fkgqa serve: Virtuoso on ${v.address} restarted (pid ${v.pid}) in ${((performance.now() - t0) / 1000).toFixed(2)} s`);
    })()
      .catch((e: unknown) => {
        if (this.closed) return;
        // An instance not known to hold its shards again must not answer (an empty one would answer 200 with no rows).
        const why = (e as Error).message ?? String(e);
        this.broken.set(v, why);
        progress?.(`fkgqa serve: Virtuoso on ${v.address} could not be restarted: ${why}; its endpoints answer 500 from now on`);
      })
      .finally(() => {
        verdict(false);
        this.checks.delete(v);
      });
  }

  /** The endpoints whose query is running now, or held until its instance's probe ends (`run`); one entry per query. */
  running(): string[] {
    return [...this.inFlight.entries()].flatMap(([id, n]) => Array<string>(n).fill(id));
  }

  /** One more query of the endpoint running or held (`running`). */
  private enter(endpoint: string): void {
    this.inFlight.set(endpoint, (this.inFlight.get(endpoint) ?? 0) + 1);
  }

  /** One query of the endpoint fewer running or held. */
  private leave(endpoint: string): void {
    const n = this.inFlight.get(endpoint)! - 1;
    if (n > 0) this.inFlight.set(endpoint, n);
    else this.inFlight.delete(endpoint);
  }

  /**
   * The store's error for a query of an endpoint whose instance cannot take it now: it could not be
   * restarted with its shards, or it is restarting (counted among the endpoint's `faults`).
   * @returns undefined when the instance takes queries
   */
  private refusal(endpoint: string, v: VirtuosoInstance): PoolOutcome | undefined {
    const broken = this.broken.get(v);
    const why =
      broken !== undefined
        ? `Virtuoso on ${v.address} could not be restarted: ${broken}`
        : this.checks.get(v)?.restarting
          ? `Virtuoso on ${v.address}: restarting (it stopped answering, or its process ended)`
          : undefined;
    if (why === undefined) return undefined;
    this.failures.set(endpoint, (this.failures.get(endpoint) ?? 0) + 1);
    return { status: 'error', error: why, ms: 0 };
  }

  /**
   * Holds a query until its instance's probe gives its verdict (`answered` settles): the wait is the
   * store's, so the query's own time limit has not started. Its client going away ends the hold
   * (`cancelled`), and so does the request's time limit (`waitingOutcome`: busy, the endpoint's
   * fault, after a wait that `waitedTooLong` calls so).
   * @returns undefined once the verdict is in (the caller reads it: `refusal`), else the query's outcome
   */
  private hold(answered: Promise<boolean>, limits: RunLimits, arrived: number): Promise<PoolOutcome | undefined> {
    return new Promise((resolve) => {
      const q = queryLimits(limits, Infinity, arrived);
      let timer: NodeJS.Timeout | undefined;
      let held = true;
      const release = (outcome: PoolOutcome | undefined) => {
        if (!held) return;
        held = false;
        clearTimeout(timer);
        limits.signal?.removeEventListener('abort', gone);
        resolve(outcome);
      };
      const gone = () => release({ status: 'cancelled', ms: performance.now() - arrived });
      if (q.deadline !== Infinity) timer = setTimeout(() => release(waitingOutcome(q, Infinity, performance.now())), Math.max(0, q.deadline - performance.now()));
      limits.signal?.addEventListener('abort', gone, { once: true });
      void answered.then(() => release(undefined));
    });
  }

  /**
   * Answers one query of an endpoint (module comment) within the limits. A query of an instance
   * being probed (`check`) is held until the probe's verdict (`hold`): it runs once the instance
   * answers the probe, with its time limit counted from then; it is answered the store's error
   * (500, `refusal`) when the instance is restarted, never the time limit an instance that answers
   * nothing would give it.
   * @returns never rejects: the answer, an error, the time limit, busy (the request's limit ended while held, or soon after), or cancelled
   */
  async run(endpoint: string, task: EndpointTask, limits: RunLimits): Promise<PoolOutcome> {
    const arrived = limits.arrived ?? performance.now();
    const v = this.instanceOf.get(endpoint);
    if (!v || this.closed) return { status: 'error', error: this.closed ? 'the server is stopping' : `no endpoint ${endpoint}`, ms: 0 };
    if (limits.signal?.aborted) return { status: 'cancelled', ms: 0 };
    const refused = this.refusal(endpoint, v);
    if (refused) return refused;
    const checked = checkTask(task, this.options.limits);
    if ('status' in checked) return { status: 'ok', answer: checked, ms: performance.now() - arrived };
    let q: VirtuosoQuery;
    try {
      q = virtuosoQuery(task.query, endpointGraph(endpoint), this.options.limits);
    } catch (e) {
      const message = (e as Error).message ?? String(e);
      if (e instanceof StoreCannotAnswer) {
        this.failures.set(endpoint, (this.failures.get(endpoint) ?? 0) + 1);
        return { status: 'error', error: `Virtuoso store: ${message}`, ms: 0 };
      }
      if (e instanceof UnsupportedFunction) return { status: 'ok', answer: plain(400, `query evaluation failed: ${message}`, checked.q.kind, { [QUERY_ERROR_HEADER]: 'evaluation' }), ms: 0 };
      return { status: 'ok', answer: plain(400, e instanceof QueryTooComplex ? `query too complex: ${message}` : `malformed query: ${message}`, 'invalid'), ms: 0 };
    }
    const probe = this.checks.get(v);
    if (probe && !probe.restarting) {
      this.enter(endpoint);
      let held: PoolOutcome | undefined;
      try {
        held = await this.hold(probe.answered, limits, arrived);
      } finally {
        this.leave(endpoint);
      }
      if (held) return held;
      if (this.closed) return { status: 'error', error: 'the server is stopping', ms: 0 };
      const refusedAfter = this.refusal(endpoint, v);
      if (refusedAfter) return refusedAfter;
    }
    const started = performance.now();
    const byRequest = limits.requestLimitMs !== undefined && arrived + limits.requestLimitMs - started < limits.limitMs;
    const limitMs = byRequest ? limits.requestLimitMs! : limits.limitMs;
    const controller = new AbortController();
    let why: 'timeout' | 'cancelled' | undefined;
    // Aborted with the verdict of a stream that stops there (a client reading slowly is cut off at the time limit too).
    const atLimit = () => new StreamStopped(`query stopped at ${byRequest ? "the request's" : "the endpoint's"} time limit of ${limitMs} ms while its answer was sent`, { status: 503, timeout: true });
    const timer = setTimeout(() => ((why = 'timeout'), controller.abort(atLimit())), Math.max(0, byRequest ? arrived + limits.requestLimitMs! - started : limits.limitMs));
    const onAbort = () => ((why = 'cancelled'), controller.abort());
    limits.signal?.addEventListener('abort', onAbort, { once: true });
    this.enter(endpoint);
    const end = () => {
      clearTimeout(timer);
      limits.signal?.removeEventListener('abort', onAbort);
      this.leave(endpoint);
    };
    const failed = (e: unknown) => {
      this.failures.set(endpoint, (this.failures.get(endpoint) ?? 0) + 1);
      // A query Virtuoso cannot evaluate as SPARQL says is the store's failure, not the instance's: no probe.
      if (e instanceof StoreCannotAnswer) return `Virtuoso store: ${e.message}`;
      this.check(v);
      return `Virtuoso on ${v.address}: ${(e as Error).message ?? String(e)}`;
    };
    let streaming = false;
    try {
      const answer = await this.evaluate(v, task, q, checked.format, checked.q.kind, controller.signal);
      if (isStreamed(answer.body)) {
        // The query runs on while its answer is sent: its limits and its place among the running end with the stream.
        streaming = true;
        const chunks = answer.body.chunks;
        const stopped = (e: unknown): StreamStopped => {
          if (why === 'timeout') this.check(v);
          if (e instanceof StreamStopped) return e;
          if (why === 'timeout') return atLimit();
          if (why === 'cancelled') return new StreamStopped('the client went away', { status: 499, cancelled: true });
          return new StreamStopped(failed(e), { status: 500, failed: true });
        };
        return {
          status: 'ok',
          answer: {
            ...answer,
            body: {
              stop: controller.signal,
              chunks: (async function* () {
                try {
                  yield* chunks;
                } catch (e) {
                  throw stopped(e);
                } finally {
                  end();
                }
              })(),
            },
          },
          ms: performance.now() - started,
        };
      }
      return { status: 'ok', answer, ms: performance.now() - started };
    } catch (e) {
      if (why === 'timeout') {
        this.check(v);
        const now = performance.now();
        // Stopped at the request's limit after a hold (a probe of its instance) that took much of it: the wait was the store's.
        if (byRequest && waitedTooLong(started - arrived, limitMs)) return { status: 'busy', by: 'request', limitMs, waitedMs: started - arrived, ranMs: now - started, ms: now - arrived };
        return { status: 'timeout', by: byRequest ? 'request' : 'endpoint', limitMs, ms: now - started };
      }
      if (why === 'cancelled') return { status: 'cancelled', ms: performance.now() - started };
      return { status: 'error', error: failed(e), ms: performance.now() - started };
    } finally {
      if (!streaming) end();
    }
  }

  /**
   * Sends the rewritten query to the instance and writes its answer in `format`: a SELECT or ASK
   * answer is asked for in SPARQL XML results and written row by row as it arrives
   * (`streamedAnswer`); a graph in N-Triples.
   * @throws Error for a failure of the instance (not the query's), or the abort
   */
  private async evaluate(v: VirtuosoInstance, t: EndpointTask, q: VirtuosoQuery, format: string, kind: EndpointAnswer['kind'], signal: AbortSignal): Promise<EndpointAnswer> {
    const outcome = await this.send(v, q, signal, async (r): Promise<EndpointAnswer | { again: string }> => {
      if (!r.ok) {
        const body = await r.text();
        // Virtuoso's SQL states: 37000 compilation and 42xxx access, the query's; 22xxx a data exception, which SPARQL makes an
        // error of one solution, never of the query: the store's (virtuosoDataException). Anything else is the instance's.
        const first = body.trim().split('\n').slice(0, 2).join(' ');
        const dataException = virtuosoDataException(body);
        // The division by 0 a sub-SELECT's MIN or MAX compared in a FILTER makes for terms Virtuoso orders otherwise than SPARQL.
        if (dataException && /^Virtuoso 22012/.test(first) && q.text.includes(`?${SUB_EXTREME_PREFIX}known_`)) {
          throw new StoreCannotAnswer(
            `a FILTER comparing a term with a sub-SELECT's MIN or MAX over dates, booleans, language-tagged or custom-typed literals alone, or over a NaN, which Virtuoso orders otherwise than SPARQL (or a division by 0 of the query's own: ${first}); this store does not answer it (an oxigraph-backed serve does)`,
          );
        }
        if (dataException) throw new StoreCannotAnswer(dataException);
        // A failure of Virtuoso's SQL compiler (SQ…) on the text this store wrote: the store's limit, not the client's error.
        const cannotCompile = virtuosoCannotCompile(body);
        if (cannotCompile) throw new StoreCannotAnswer(cannotCompile);
        if (/^Virtuoso (37000|42\w{3}|S0022|S1T00)/.test(body.trim())) {
          return plain(400, `query evaluation failed: Virtuoso: ${first}`, kind, { [QUERY_ERROR_HEADER]: 'evaluation' });
        }
        throw new Error(`HTTP ${r.status}: ${first}`);
      }
      // An "anytime" answer: Virtuoso stopped the query at one of its limits and sent what it had (HTTP 200); never passed on.
      const state = r.headers.get('x-sql-state');
      if (state) throw new Error(`Virtuoso sent an incomplete answer (X-SQL-State ${state}: ${r.headers.get('x-sql-message') ?? ''}): refused rather than sent incomplete`);
      if (r.headers.get('x-sparql-maxrows')) throw new Error(`the answer was cut at ${r.headers.get('x-sparql-maxrows')} rows (ResultSetMaxRows): refused rather than sent incomplete`);
      if (q.form === 'graph') return this.graphAnswer(t, await r.text(), format, kind);
      return streamedAnswer(r.body ?? (async function* () {})(), t, q, format, kind);
    });
    if (!('again' in outcome)) return outcome;
    // The answer holds a character XML 1.0 cannot carry: asked again, written in the client's next acceptable format.
    return this.evaluate(v, t, q, outcome.again, kind, signal);
  }

  /**
   * Posts the query to the instance when it is this request's turn (INSTANCE_CONCURRENCY), and
   * reads the answer with `read` within the turn; a connection that fails before any answer is
   * tried once more (the query only reads).
   * @throws the abort, the connection's error, or `read`'s
   */
  private async send<T>(v: VirtuosoInstance, q: VirtuosoQuery, signal: AbortSignal, read: (r: Response) => Promise<T>): Promise<T> {
    let turn = this.turns.get(v);
    if (!turn) this.turns.set(v, (turn = { active: 0, waiting: [] }));
    if (turn.active >= INSTANCE_CONCURRENCY) {
      await new Promise<void>((resolve, reject) => {
        const go = () => {
          signal.removeEventListener('abort', gone);
          resolve();
        };
        const gone = () => {
          turn.waiting.splice(turn.waiting.indexOf(go), 1);
          reject(signal.reason);
        };
        turn.waiting.push(go);
        signal.addEventListener('abort', gone, { once: true });
      });
    } else turn.active++;
    let kept = false;
    let passed = false;
    // The turn passes to the first waiting request (active stays the same), else it is freed.
    const pass = () => {
      if (passed) return;
      passed = true;
      const next = turn.waiting.shift();
      if (next) next();
      else turn.active--;
    };
    try {
      const post = () =>
        fetch(v.sparqlUrl, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', accept: q.form === 'graph' ? MEDIA.ntriples : MEDIA.xml },
          body: new URLSearchParams({ query: q.text }),
          signal,
        });
      const r = await post().catch((e: unknown) => {
        if (signal.aborted) throw e;
        return post();
      });
      const out = await read(r).catch(async (e: unknown) => {
        // An answer not read to its end (a failure while reading it) is cancelled: its connection is not left waiting.
        if (r.body && !r.bodyUsed) await r.body.cancel().catch(() => {});
        throw e;
      });
      if (isAnswer(out) && isStreamed(out.body)) {
        // Read on while it is sent: the turn is kept until its end (reading a stopped stream's `return` cancels the fetch body).
        const chunks = out.body.chunks;
        kept = true;
        out.body = {
          chunks: (async function* () {
            try {
              yield* chunks;
            } finally {
              pass();
            }
          })(),
        };
      }
      return out;
    } finally {
      if (!kept) pass();
    }
  }

  /** A CONSTRUCT or DESCRIBE answer (N-Triples from Virtuoso) in `format`, cut to the profile's `maxRows` triples. */
  private async graphAnswer(t: EndpointTask, ntriples: string, format: string, kind: EndpointAnswer['kind']): Promise<EndpointAnswer> {
    const ox = await (oxigraphModule ??= import('oxigraph'));
    const store = new ox.Store();
    store.load(ntriples, { format: MEDIA.ntriples, to_graph_name: ox.defaultGraph() });
    let quads = store.match(null, null, null, null);
    const cap = t.maxRows;
    const cut = cap !== undefined && quads.length > cap;
    const of = quads.length;
    if (cut) quads = quads.slice(0, cap);
    return {
      status: 200,
      body: serializeGraph(ox, quads, format),
      type: contentType(format),
      kind,
      ...(cut ? { profile: 'truncated' as const, headers: { 'Fkgqa-Truncated': `triples=${cap}; of=${of}` } } : {}),
    };
  }

  /** Stops every instance and removes its folder. Idempotent. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.instances.map((v) => v.stop()));
    fs.rmSync(this.options.dir, { recursive: true, force: true });
  }
}

/** Text of the answer gathered into one buffer of about this many characters before it is encoded (UTF-8) and sent. */
const BATCH_CHARS = 1 << 16;

/**
 * Characters of an answer gathered before it is sent: a smaller answer is sent whole (Content-Length),
 * with exactly the verdicts of oxigraph's answers (406 or another format for a character XML cannot
 * carry, 500 at the row limits); a larger one is sent as it is read (chunked: `StreamedBody`).
 */
export const STREAM_AFTER_CHARS = 1 << 20;

/**
 * A SELECT or ASK answer in `format`, written as Virtuoso's SPARQL XML results arrive
 * (virtuoso-results.ts): each row read back (`virtuosoRowReader`) and written by the serialiser of
 * oxigraph's answers (results.ts `resultsWriter`). An answer of up to STREAM_AFTER_CHARS is sent
 * whole; a longer one (not cut by the profile's `maxRows`, which needs every row counted) is sent
 * as it is read: its rows are read from Virtuoso no faster than the client takes them, and a
 * failure after its first bytes (the row limits, a character XML cannot carry, the instance's
 * error, the time limit) stops it (`StreamStopped`: the connection is closed before its end). A
 * whole answer is cut to the profile's `maxRows` (the rows past it only counted). XML is never
 * written holding what XML 1.0 cannot carry (answer.ts does the same): a whole answer is asked for
 * again in the client's next acceptable format (`again`), or answered 406.
 * @throws Error when Virtuoso's answer does not parse, or reaches VIRTUOSO_MAX_ROWS rows (or the LIMIT given with an OFFSET) before it is sent
 */
async function streamedAnswer(body: AsyncIterable<Uint8Array>, t: EndpointTask, q: VirtuosoQuery, format: string, kind: EndpointAnswer['kind']): Promise<EndpointAnswer | { again: string }> {
  const cap = q.form === 'bindings' ? t.maxRows : undefined;
  let read: ReturnType<typeof virtuosoRowReader> | undefined;
  let write: ReturnType<typeof resultsWriter> | undefined;
  const buffers: Buffer[] = [];
  let batch = '';
  let gathered = 0;
  let rows = 0;
  let bad: string | undefined;
  const xml = format === MEDIA.xml;
  /** Reads one batch of rows into `batch` (and `buffers` when full). @returns false at the answer's end */
  const batches = xmlResultBatches(body);
  const readBatch = async (): Promise<boolean> => {
    const next = await batches.next();
    if (next.done) return false;
    if (next.value.vars) {
      read = virtuosoRowReader(next.value.vars, q);
      // The head is written once the rows are counted (a cut answer's head holds the truncation link): the rows' text does not depend on it.
      write = resultsWriter(format, { vars: read.vars });
    }
    for (const b of next.value.rows) {
      rows++;
      if (rows >= VIRTUOSO_MAX_ROWS) throw new Error(`the answer reached ${VIRTUOSO_MAX_ROWS} rows, Virtuoso's ResultSetMaxRows, and may be cut: refused rather than sent incomplete`);
      if (q.rowCap !== undefined && rows >= q.rowCap)
        throw new Error(`the answer reached ${q.rowCap} rows, the LIMIT sent with its OFFSET (Virtuoso sorts at most ${VIRTUOSO_MAX_ROWS} rows), and may be cut: refused rather than sent incomplete`);
      if (q.form !== 'bindings' || bad) continue;
      // A row the HAVING of an aggregate without GROUP BY removes (virtuosoRowReader `kept`) is no row of the answer.
      if (!read!.kept(b)) {
        rows--;
        continue;
      }
      if (cap !== undefined && rows > cap) continue;
      const text = write!.row(read!.row(b), rows === 1);
      if (xml) bad = xmlIllegalChar(text);
      batch += text;
      gathered += text.length;
      if (batch.length >= BATCH_CHARS) {
        buffers.push(Buffer.from(batch, 'utf8'));
        batch = '';
      }
    }
    return true;
  };
  const streams = () => q.form === 'bindings' && cap === undefined && !bad && gathered >= STREAM_AFTER_CHARS;
  try {
    while (!streams() && (await readBatch()));
  } catch (e) {
    await batches.return(undefined);
    throw e;
  }
  if (streams()) {
    const w = resultsWriter(format, { vars: read?.vars ?? [] });
    async function* chunks(): AsyncGenerator<Uint8Array> {
      try {
        yield Buffer.from(w.start, 'utf8');
        for (;;) {
          yield* buffers.splice(0);
          let more: boolean;
          try {
            more = await readBatch();
          } catch (e) {
            throw new Error(`${(e as Error).message ?? String(e)} (after ${rows} rows were sent)`, { cause: e });
          }
          if (bad) throw new StreamStopped(`the answer holds the character ${bad}, which XML 1.0 cannot carry, after ${rows} rows of ${format} were sent`, { status: 406 });
          if (!more) break;
          if (batch.length > 0) {
            buffers.push(Buffer.from(batch, 'utf8'));
            batch = '';
          }
        }
        yield Buffer.from(batch + w.end, 'utf8');
      } finally {
        await batches.return(undefined);
      }
    }
    return { status: 200, body: { chunks: chunks() }, type: contentType(format), kind };
  }
  if (q.form === 'boolean') {
    return { status: 200, body: serializeResults({ head: {}, boolean: rows > 0 }, format), type: contentType(format), kind };
  }
  if (bad) {
    const other = negotiate(t.accept, 'bindings', [MEDIA.xml]);
    if (other) return { again: other };
    return plain(
      406,
      `the answer holds the character ${bad}, which XML 1.0 cannot carry (not even as a character reference), so it has no ${format} serialisation: ask for ${offered('bindings')
        .filter((f) => f !== MEDIA.xml)
        .join(', ')}`,
      kind,
    );
  }
  const cut = cap !== undefined && rows > cap;
  const head = { vars: read?.vars ?? [], ...(cut ? { link: [truncationLink(cap)] } : {}) };
  const w = resultsWriter(format, head);
  const bytes = Buffer.concat([Buffer.from(w.start, 'utf8'), ...buffers, Buffer.from(batch + w.end, 'utf8')]);
  return {
    status: 200,
    body: bytes,
    type: contentType(format),
    kind,
    ...(cut ? { headers: { 'Fkgqa-Truncated': `rows=${cap}; of=${rows}` }, profile: 'truncated' as const } : {}),
  };
}
