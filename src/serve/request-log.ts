/**
 * The request log of a running server: every request to an endpoint, with its kind (see
 * RequestKind), so a benchmark run can count how many requests an agent or a federation engine
 * sent to which endpoint, and of which kind (LargeRDFBench counts endpoint requests from server
 * logs; FedShop separates ASK from other HTTP requests).
 */
import fs from 'node:fs';
import type { RequestKind } from './query-info.js';

/** One logged request. */
export interface RequestLogEntry {
  /** ISO 8601 time the request arrived. */
  time: string;
  /** Endpoint id (`<kg>-shard<N>`, or `<kg>` for an unsharded graph); `-` for server-wide paths. */
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
  /** The query text, as sent (only in the log file). */
  query?: string;
}

/** Requests per kind, and how many ended in an error status (≥ 400), for one endpoint. */
export type KindCounts = Partial<Record<RequestKind, number>> & { total: number; errors: number };

/**
 * Collects request log entries: counts in memory (per endpoint and kind), and optionally every entry
 * as a JSON line in a file.
 */
export class RequestLog {
  private readonly byEndpoint = new Map<string, KindCounts>();
  private readonly out: fs.WriteStream | undefined;

  /** @param file a JSON-lines file to append every entry to (optional) */
  constructor(file?: string) {
    this.out = file ? fs.createWriteStream(file, { flags: 'a' }) : undefined;
  }

  /** Records one request. */
  record(entry: RequestLogEntry): void {
    let c = this.byEndpoint.get(entry.endpoint);
    if (!c) this.byEndpoint.set(entry.endpoint, (c = { total: 0, errors: 0 }));
    c.total++;
    c[entry.kind] = (c[entry.kind] ?? 0) + 1;
    if (entry.status >= 400) c.errors++;
    this.out?.write(JSON.stringify(entry) + '\n');
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
  close(): Promise<void> {
    const out = this.out;
    return out ? new Promise((resolve) => out.end(resolve)) : Promise.resolve();
  }
}
