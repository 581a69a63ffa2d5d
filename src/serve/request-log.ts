/**
 * The request log of a running server: every request to an endpoint, with its kind (see
 * RequestKind), so a benchmark run can count how many requests an agent or a federation engine
 * sent to which endpoint, and of which kind (LargeRDFBench counts endpoint requests from server
 * logs; FedShop separates ASK from other HTTP requests).
 */
import fs from 'node:fs';
import { InputError } from '../common/errors.js';
import path from 'node:path';
import { FEDERATION_PATH } from './defaults.js';

/**
 * Kind of a request, as logged per endpoint (federation engines send service-description
 * probes and COUNT queries besides the data queries):
 * - `service-description`: a GET without a query (the probe engines send first);
 * - `void`: a request for the endpoint's VoID file;
 * - `ask`: an ASK query (FedX-style source selection);
 * - `count`: a SELECT whose projection is only COUNT aggregates, without GROUP BY (Comunica's
 *   cardinality queries have this shape, and so do "how many" questions);
 * - `data`: any other query;
 * - `invalid`: a request refused before running (bad protocol use, syntax error, update, 406);
 * - `other`: CORS preflight and unknown paths.
 */
export type RequestKind = 'service-description' | 'void' | 'ask' | 'count' | 'data' | 'invalid' | 'other';

/** Default size cap of a request log file: 64 MiB, then it is rotated (see RequestLog). */
export const REQUEST_LOG_MAX_BYTES = 64 * 1024 * 1024;

/** The file a log is rotated to: `.1` before the extension (`requests.jsonl` → `requests.1.jsonl`; `log` → `log.1`). */
export function rotatedName(file: string): string {
  const ext = path.extname(file);
  return ext ? `${file.slice(0, -ext.length)}.1${ext}` : `${file}.1`;
}

/** One logged request. */
export interface RequestLogEntry {
  /** ISO 8601 time the request arrived. */
  time: string;
  /** Endpoint id (`<kg>-shard<N>`, or `<kg>` for an unsharded graph); `/federation/sparql` for the federation endpoint; `-` for the other server paths (`/`, `/_stats`, `/endpoints.json`, the catalogue, unknown paths). */
  endpoint: string;
  kind: RequestKind;
  method: string;
  /** HTTP status of the answer. */
  status: number;
  /** Time from arrival to the end of the answer, in ms. */
  ms: number;
  /** Bytes of the answer body. */
  bytes: number;
  /** Set when a behaviour profile changed the answer: cut to maxRows, simulated failure, refused feature. */
  profile?: 'truncated' | 'failure' | 'refused';
  /** Set when the query was stopped at the time limit. */
  timeout?: true;
  /** Set when the endpoint was busy: the query waited behind others and was answered 503 busy (pool.ts, BUSY_WAIT_SHARE). */
  busy?: true;
  /** Set when the client went away before the answer (status 499): the query was dropped or stopped. */
  cancelled?: true;
  /** Set when the store failed on the query (status 500): its engine or instance, not the query (a Virtuoso error that is no error of the query, a crashed worker thread). */
  failed?: true;
  /** `/federation/sparql`: the client its fair share counted the query to (`clientOf` of federation-endpoint.ts: remote address, `#` and the `Fkgqa-Client` name when sent). */
  client?: string;
  /** `/federation/sparql`: ms the query waited for the federation engine (its client's turn and a free thread) before it started. */
  waited?: number;
  /** The query text, as sent (only in the log file). */
  query?: string;
}

/**
 * Requests per kind, and how many ended in an error status (≥ 400), for one endpoint; of those
 * errors, the ones stopped at a time limit (`timeout`), answered busy (`busy`), whose client went
 * away (`cancelled`) or on which the store failed (`failed`), each key present only when not 0.
 */
export type KindCounts = Partial<Record<RequestKind, number>> & { total: number; errors: number } & Partial<Record<ErrorCause, number>>;

/** Causes of error answers counted apart in `KindCounts` (the others are refused queries: 4xx, and 5xx of the server itself). */
export const ERROR_CAUSES = ['timeout', 'busy', 'cancelled', 'failed'] as const;
export type ErrorCause = (typeof ERROR_CAUSES)[number];

/** How `countsSummary` names a line: an endpoint by its id, the federation endpoint and the other server paths in words. */
function summaryName(id: string): string {
  if (id === FEDERATION_PATH) return `${FEDERATION_PATH} (the federation endpoint: federated queries)`;
  if (id === '-') return 'other paths (/, /_stats, /endpoints.json, the catalogue, unknown paths)';
  return id;
}

/**
 * The lines serve prints when it stops (on stderr): the requests per endpoint by kind, and its error
 * answers by cause, in words (a bare "errors 1" says nothing about what failed; a 503 busy is
 * counted as busy, the endpoint's fault, and a 500 of the store as the store failing, neither as a
 * refused query). Every served endpoint has its
 * line, one that got no request too (`0 requests`: a shard nobody consulted is a figure), in the
 * order served; then any other endpoint that got requests; then the federation endpoint
 * (`/federation/sparql`) and the other server paths (`-` in the counts), each on its own line when
 * it got requests.
 * An endpoint whose engine was restarted (`restarts`: a pool worker replaced, a Virtuoso instance
 * restarted) says how often at the end of its line; the endpoints one engine holds (a pool
 * worker's group, an instance's shards) each give that engine's count.
 * @param counts `RequestLog.counts()`
 * @param served the ids of the served endpoints (`ShardServer.endpoints`), in their order
 * @param restarts restarts so far of the engine that holds an endpoint (`ShardServer.restartsOf(id).restarts`), undefined or 0 for none
 */
export function countsSummary(counts: Record<string, KindCounts>, served: readonly string[] = [], restarts: (id: string) => number | undefined = () => undefined): string[] {
  const total = Object.values(counts).reduce((n, c) => n + c.total, 0);
  const errors = Object.values(counts).reduce((n, c) => n + c.errors, 0);
  const server = [FEDERATION_PATH, '-'];
  const others = Object.keys(counts).filter((id) => !served.includes(id) && !server.includes(id));
  const endpoints = [...served, ...others];
  const ids = [...endpoints, ...server.filter((id) => counts[id])];
  const unasked = endpoints.filter((id) => !counts[id]).length;
  const lines = [
    `fkgqa serve: ${total} requests, ${errors} answered with an error status (HTTP 4xx/5xx); ${endpoints.length} endpoints, ${unasked} without requests; per endpoint, requests by kind, then errors by cause:`,
  ];
  const words: Record<ErrorCause, string> = {
    timeout: 'stopped at a time limit (503)',
    busy: "busy: kept waiting for a free thread or engine, not the query's fault (503)",
    cancelled: 'the client went away (499)',
    failed: "the store failed: its engine's or instance's error, not the query's (500)",
  };
  const restarted = (id: string) => {
    const n = endpoints.includes(id) ? (restarts(id) ?? 0) : 0;
    return n > 0 ? `; its engine restarted ${n} time${n === 1 ? '' : 's'}` : '';
  };
  for (const id of ids) {
    const c = counts[id];
    if (!c) {
      lines.push(`  ${id}: 0 requests${restarted(id)}`);
      continue;
    }
    const kinds = Object.entries(c).filter(([k]) => k !== 'total' && k !== 'errors' && !(ERROR_CAUSES as readonly string[]).includes(k));
    const known = ERROR_CAUSES.filter((k) => (c[k] ?? 0) > 0);
    const other = c.errors - known.reduce((n, k) => n + (c[k] ?? 0), 0);
    const causes = [...known.map((k) => `${c[k]} ${words[k]}`), ...(other > 0 ? [`${other} refused (400 bad request or syntax, other 4xx and 5xx)`] : [])];
    lines.push(
      `  ${summaryName(id)}: ${c.total} requests (${kinds.map(([k, n]) => `${k} ${n}`).join(', ')}); ${c.errors === 0 ? 'no errors' : `errors ${c.errors}: ${causes.join(', ')}`}${restarted(id)}`,
    );
  }
  return lines;
}

/**
 * Collects request log entries: counts in memory (per endpoint and kind), and optionally every entry
 * as a JSON line in a file. The file is capped: when a line would take it over `maxBytes`, it is
 * renamed to `rotatedName(file)` (replacing an older one) and a new file is begun, so the log takes
 * at most twice `maxBytes` on disk however long the server runs.
 */
export class RequestLog {
  private readonly byEndpoint = new Map<string, KindCounts>();
  private out: fs.WriteStream | undefined;
  private bytes = 0;
  private readonly closing: Promise<void>[] = [];
  /** Times the file was rotated. */
  rotations = 0;

  /**
   * @param file a JSON-lines file to append every entry to (optional)
   * @param maxBytes size cap of the file in bytes (default REQUEST_LOG_MAX_BYTES)
   * @throws InputError when the file is an existing folder (the serve died at its first request)
   */
  constructor(
    private readonly file?: string,
    private readonly maxBytes = REQUEST_LOG_MAX_BYTES,
  ) {
    if (file) {
      if (fs.statSync(file, { throwIfNoEntry: false })?.isDirectory()) throw new InputError('--request-log: the request log is a folder: give the name of a JSON-lines file', { file });
      this.bytes = fs.existsSync(file) ? fs.statSync(file).size : 0;
      this.out = fs.createWriteStream(file, { flags: 'a' });
    }
  }

  private write(line: string): void {
    if (!this.out || !this.file) return;
    const n = Buffer.byteLength(line);
    if (this.bytes > 0 && this.bytes + n > this.maxBytes) {
      // Lines still buffered in the old stream land in the renamed file (same inode).
      const old = this.out;
      this.closing.push(new Promise((resolve) => old.end(resolve)));
      fs.renameSync(this.file, rotatedName(this.file));
      this.out = fs.createWriteStream(this.file, { flags: 'a' });
      this.bytes = 0;
      this.rotations++;
    }
    this.out.write(line);
    this.bytes += n;
  }

  /** Whether entries are written to a file (else only counted: `count` is all a request needs). */
  get writesFile(): boolean {
    return this.out !== undefined;
  }

  /**
   * Counts one request (per endpoint and kind, errors: status ≥ 400) without writing a line.
   * @param why for an error: stopped at a time limit, busy, the client went away, or the store failed (`KindCounts`)
   */
  count(endpoint: string, kind: RequestKind, status: number, why?: { timeout?: boolean; busy?: boolean; cancelled?: boolean; failed?: boolean }): void {
    let c = this.byEndpoint.get(endpoint);
    if (!c) this.byEndpoint.set(endpoint, (c = { total: 0, errors: 0 }));
    c.total++;
    c[kind] = (c[kind] ?? 0) + 1;
    if (status >= 400) {
      c.errors++;
      const cause = ERROR_CAUSES.find((k) => why?.[k]);
      if (cause) c[cause] = (c[cause] ?? 0) + 1;
    }
  }

  /** Records one request: counted, and written as a line when there is a file. */
  record(entry: RequestLogEntry): void {
    this.count(entry.endpoint, entry.kind, entry.status, entry);
    // Without a file, no line is written: none is made (JSON.stringify was a cost of every request).
    if (this.out) this.write(JSON.stringify(entry) + '\n');
  }

  /** Counts per endpoint (sorted by endpoint id) and kind since the start or the last reset. */
  counts(): Record<string, KindCounts> {
    return Object.fromEntries([...this.byEndpoint.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, v]) => [k, { ...v }]));
  }

  /** Forgets the counts (the log file keeps every entry). */
  reset(): void {
    this.byEndpoint.clear();
  }

  /** Flushes and closes the log file. */
  async close(): Promise<void> {
    const out = this.out;
    this.out = undefined;
    await Promise.all([...this.closing, ...(out ? [new Promise<void>((resolve) => out.end(resolve))] : [])]);
  }
}
