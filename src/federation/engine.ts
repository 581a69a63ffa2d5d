/**
 * Federation engines behind one interface (FKGQA paper, section 3: "concrete federation engines
 * should be easily interchangeable, delimiting the query plan generation from the agentic endpoint
 * discovery"); docs/architecture.md ("Federation engines") describes the interface and who calls it,
 * docs/federation.md the engines. `createEngine` (engines.ts) builds one by name, loading its
 * implementation only then, so commands that never federate do not load Comunica.
 *
 * Adding an engine: implement `FederationEngine` in `src/federation/<name>/engine.ts` (time limit:
 * the outcome is `timeout`, never an empty answer; requests counted per endpoint URL without query
 * string; nothing sent outside `EngineSetup.endpoints`: use `fetchVia` of common/http-client.ts or an
 * equivalent check, redirects included; a SERVICE-explicit query checked with `checkServiceQuery`
 * of service-check.ts before anything is sent; every request carrying the time the query has left
 * in `Fkgqa-Timeout`, `sentLimit` of limit.ts, and a `503` with `Fkgqa-Stopped` reported as a fault
 * with `stopped`, the limit sent and the time until its status line (`sentLimitMs`, `elapsedMs`: `judgeStop` reads them); each request's answer reported to a `DueAnswers` of limit.ts as soon as its status
 * line arrives, read at the limit with `dueGraceMs`; nothing sent past the limit), add its name to FEDERATION_ENGINES and a case to
 * `createEngine` in engines.ts. tests/federation.test.ts and tests/engines.slow.test.ts run their checks
 * on every engine listed.
 */

/**
 * The time limit of one query, passed down unchanged from the caller to the engine, which races its
 * work against it (`waitLimit` and `runLimit` of limit.ts); times in ms, instants on the `Date.now()`
 * clock. `from: 'call'` counts from `since`, the wait for a busy engine included; `from: 'start'` from
 * when the engine takes the query, the wait ended only by `waitMs`, `clientMs` or the signal
 * (docs/architecture.md, "Federation engines"; docs/serving.md, serve's time limits).
 */
export type Deadline =
  | {
      /** The query's time limit, ms, counted from `since`. */
      ms: number;
      from: 'call';
      /** When the wait for the engine began (`Date.now()` clock, ms): a caller's own queue before the call. Default: the call. */
      since?: number;
    }
  | {
      /** The query's time limit, ms, counted from when the engine takes the query (at most what `clientMs` leaves). */
      ms: number;
      from: 'start';
      /**
       * The longest wait (ms, from `since`) for the engine to take the query; over it the outcome is an
       * `error` with `busy` and HTTP status 503 (the engine was starting or busy: not the query's
       * fault). Default: no limit.
       */
      waitMs?: number;
      /**
       * A client's own deadline (ms, from `since`) for the whole call, e.g. a request's `Fkgqa-Timeout`
       * at `/federation/sparql`: the wait is bounded by it, and the query's limit is what the wait left
       * of it (at most `ms`). A query stopped there after a wait `waitedTooLong` calls too long is an
       * `error` with `busy` and HTTP status 503: the wait was the engine's, not the query's.
       */
      clientMs?: number;
      /**
       * When the wait for the engine began (`Date.now()` clock, ms): a caller's own queue in front of
       * the engine (fkgqa serve's fair share between clients at `/federation/sparql`). That wait counts
       * towards `waitMs` and `clientMs`. Default: the call.
       */
      since?: number;
    };

/** Options of one query. */
export interface EngineQueryOptions {
  /** The query's time limit (`Deadline`). */
  deadline: Deadline;
  /** Aborts the query (outcome `error` "aborted"); the engine's work on it is stopped. */
  signal?: AbortSignal;
  /**
   * SPARQL endpoints to federate over when the query names none with SERVICE (the engine selects
   * sources itself: `fkgqa verify`'s federated form). Omitted or empty for SERVICE-explicit queries,
   * whose SERVICE clauses name the endpoints.
   */
  sources?: string[];
}

/**
 * The outcome of one query. `requests` counts the HTTP requests the engine sent, per endpoint URL
 * (without query string): service-description probes and COUNT queries included; also after a
 * timeout, up to the moment the engine was stopped.
 */
export type EngineOutcome =
  | { status: 'ok'; body: string; contentType: string; requests: Record<string, number> }
  | { status: 'timeout'; requests: Record<string, number> }
  | {
      status: 'error';
      error: string;
      httpStatus?: number;
      fault?: EndpointFault;
      busy?: true;
      /** With `busy`: how long the query waited for the engine (ms). */ waitedMs?: number;
      requests: Record<string, number>;
    };

/**
 * An endpoint that failed the query in the engine's HTTP, seen there: it closed the connection
 * before answering or before the end of its answer, or answered a SPARQL results document that is
 * incomplete or no results document at all (src/federation/answer-check.ts). The engine's error
 * message rarely names the endpoint; this does. An infrastructure failure, never an empty answer.
 */
export interface EndpointFault {
  /** The endpoint URL (without query string). */
  endpoint: string;
  /** What it did, in words, to follow its URL (e.g. "closed the connection before the answer was complete (HTTP 200, 87 bytes received)"). */
  what: string;
  /** The HTTP status it answered, when it answered one. */
  httpStatus?: number;
  /**
   * The `Fkgqa-Stopped` header of a `503` of fkgqa serve (`busy; …` or `time-limit; by=…; ms=N`):
   * the shard endpoint stopped the query at the limit the engine sent it in `Fkgqa-Timeout` (the
   * time the query had left) or at its own, or the query waited there behind others (busy). Read by
   * `judgeStop` of limit.ts with `sentLimitMs` and `elapsedMs` (`stopSent`): believed, it is busy or a
   * time limit (`BoundedSparqlClient.federated`); not believed, that endpoint's error.
   */
  stopped?: string;
  /**
   * Another server's `503` without `Fkgqa-Stopped` whose text names a time limit (`TIME_LIMIT_TEXT` of
   * limit.ts, "Query timed out"): the start of that text (at most `SAID_MAX_CHARS`). `BoundedSparqlClient.federated`
   * reads it with `readStop`, `sentLimitMs` and `elapsedMs`, as the direct route reads such an answer: the
   * query's time limit when the clock shows it ran the limit sent, else that endpoint's error.
   */
  said?: string;
  /** With `stopped` or `said`: the `Fkgqa-Timeout` the request carried (ms); absent when it carried none. */
  sentLimitMs?: number;
  /** With `stopped` or `said`: from just before the request was sent to its answer's status line (ms), measured where it was sent (the engine's thread or JVM). */
  elapsedMs?: number;
}

/** A federation engine (module comment). */
export interface FederationEngine {
  /** The value of `--federation-engine` that selects it. */
  readonly name: string;
  /**
   * Whether the engine selects sources itself for a query without SERVICE (`options.sources`,
   * `fkgqa verify`'s federated form). An engine that does not answers such a query with an `error`
   * outcome saying so, and verify reports the form as not applicable to it.
   */
  readonly selectsSources: boolean;
  /**
   * Evaluates a query.
   * @param query the query text with full IRIs (no prefix declarations needed)
   * @param mediaType the answer's media type: `application/sparql-results+json` for SELECT/ASK,
   *   `application/n-triples` for CONSTRUCT/DESCRIBE
   * @returns never rejects: errors and the time limit are outcomes
   */
  query(query: string, mediaType: string, options: EngineQueryOptions): Promise<EngineOutcome>;
  /** Stops the engine (its threads or processes). Idempotent. */
  close(): Promise<void>;
  /** Optional: starts the engine now rather than at its first query (engines that take seconds to start). */
  warm?(): Promise<void>;
  /** Optional: how its last start went, in words for a progress line (e.g. Comunica "loaded from its bundle"); undefined before a start. */
  startedHow?(): string | undefined;
}

/** What an engine is created with. */
export interface EngineSetup {
  /** The endpoint URLs the engine may contact (the registry's); any other request fails the query. */
  endpoints: string[];
  /** Queries evaluated at once (engine threads or processes; default 1). */
  parallel?: number;
  /**
   * The answer limit for an endpoint's encoded answer, decoded, in bytes (default `DEFAULT_MAX_DECODED_BYTES`):
   * one that decodes to more is that endpoint's fault (a compression bomb; http.ts `DECODED_CODINGS`).
   */
  maxDecodedBytes?: number;
  /**
   * Where a warning about the engine's installation goes, e.g. a Comunica bundle that is not the one
   * `npm run build` recorded (the engine then loads module by module: slower, same answers). Each
   * message once per process (`warnOnce`). Default: a line `fkgqa: warning: …` on stderr, so that
   * serve, mcp, query and verify all show it.
   */
  warn?: (message: string) => void;
}

/** Messages `warnOnce` has passed on in this process. */
const WARNED = new Set<string>();

/**
 * Passes a warning on once per process (the same message from every engine thread, engine and
 * client is shown once), to `sink` or as a line `fkgqa: warning: …` on stderr.
 */
export function warnOnce(message: string, sink?: (message: string) => void): void {
  if (WARNED.has(message)) return;
  WARNED.add(message);
  if (sink) sink(message);
  else process.stderr.write(`fkgqa: warning: ${message}\n`);
}

/** The default of `EngineSetup.maxDecodedBytes`: 32 MiB, the bounded client's default answer limit. */
export const DEFAULT_MAX_DECODED_BYTES = 32 << 20;
