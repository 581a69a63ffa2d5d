/**
 * The store behind the shard endpoints of `fkgqa serve`: what the endpoint layer (server.ts,
 * protocol.ts) needs of it, whatever holds the triples. Two implementations: the oxigraph endpoint
 * pool (pool.ts, worker threads in this process, the default) and Virtuoso instances
 * (virtuoso-store.ts, `--store virtuoso`). The endpoint layer reads the request, applies the text
 * guard and the request's limits, and hands the store a task; the store answers it whole (status,
 * body, media type) or says why it stopped (time limit, busy, cancelled, error), and the endpoint
 * layer turns that into the same answers and `Fkgqa-Stopped` verdicts for every store.
 */
import type { EndpointTask } from './answer.js';
import type { PoolOutcome, RunLimits } from './pool-limits.js';

/** Which store serves the endpoints (`fkgqa serve --store`). */
export type StoreKind = 'oxigraph' | 'virtuoso';

/** The store kinds, as `--store` takes them. */
export const STORE_KINDS: readonly StoreKind[] = ['oxigraph', 'virtuoso'];

/**
 * A running store of endpoints.
 * - `run` answers one query of one endpoint within the limits and never rejects: the answer, an
 *   error, the time limit, busy, or cancelled (PoolOutcome).
 * - `close` stops it and frees what it holds (threads, processes, files); idempotent.
 */
export interface EndpointStore {
  readonly kind: StoreKind;
  /** Triples per endpoint, as loaded. */
  readonly triples: Map<string, number>;
  /** Where each endpoint's triples are held: `host:port` of its store instance (for the placement in endpoints.json), or undefined for this process. */
  placement(endpoint: string): string | undefined;
  run(endpoint: string, task: EndpointTask, limits: RunLimits): Promise<PoolOutcome>;
  /** Replacements of the engine holding the endpoint so far, and engine faults (undefined: unknown endpoint). */
  restartsOf(endpoint: string): { restarts: number; faults: number } | undefined;
  /** The endpoints whose query is running now. */
  running(): string[];
  /** Worker threads running now (zero for a store outside this process). */
  readonly workers: { current: number; retired: number; spare: number };
  close(): Promise<void>;
}
