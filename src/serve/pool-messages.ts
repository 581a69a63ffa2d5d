/**
 * The messages between the endpoint pool (pool.ts) and its threads (pool-thread.ts), in a module of
 * their own so that both import them (importing pool-thread.ts would run a thread's code). A batch
 * of queries and an answer travel as flat arrays, not nested objects: less to clone and less
 * garbage on both threads per query.
 */
import type { StoreSource } from '../common/store-worker.js';
import type { EndpointAnswer, EndpointTask } from './answer.js';

/**
 * @internal The queries posted to a thread in one message, flat: QUERY_FIELDS entries per query,
 * `seq, endpoint, query, accept, protocolDataset, profile` (profile: the task's `refuse`, `maxRows`
 * and `failStatus` when any is set, else undefined). See encodeQuery / decodeQuery.
 */
export type QueryBatch = unknown[];
/** @internal Entries per query in a QueryBatch. */
export const QUERY_FIELDS = 6;
type TaskProfile = Pick<EndpointTask, 'refuse' | 'maxRows' | 'failStatus'>;

/** @internal Appends one query (its sequence number in the thread and its task) to a batch. */
export function encodeQuery(batch: QueryBatch, seq: number, t: EndpointTask): void {
  const profile: TaskProfile | undefined =
    t.refuse !== undefined || t.maxRows !== undefined || t.failStatus !== undefined
      ? { ...(t.refuse !== undefined ? { refuse: t.refuse } : {}), ...(t.maxRows !== undefined ? { maxRows: t.maxRows } : {}), ...(t.failStatus !== undefined ? { failStatus: t.failStatus } : {}) }
      : undefined;
  batch.push(seq, t.endpoint, t.query, t.accept, t.protocolDataset, profile);
}

/** @internal The task of the query at entry `i` of a batch (inverse of encodeQuery). */
export function decodeQuery(batch: QueryBatch, i: number): EndpointTask {
  const accept = batch[i + 3] as string | undefined;
  const profile = batch[i + 5] as TaskProfile | undefined;
  return { endpoint: batch[i + 1] as string, query: batch[i + 2] as string, ...(accept !== undefined ? { accept } : {}), protocolDataset: batch[i + 4] as boolean, ...profile };
}

/** @internal What the pool sends a thread: a load, or a batch of queries (a flat array). */
export type PoolRequest = { type: 'load'; endpoint: string; sources: StoreSource[] } | QueryBatch;

/**
 * @internal A query's answer, flat: `[seq, status, body, type, kind, ms, extra]` (extra: the
 * answer's `headers` and `profile` when it has any, else undefined). See answerTuple / answerOf.
 */
export type AnswerTuple = [
  seq: number,
  status: number,
  body: EndpointAnswer['body'],
  type: string,
  kind: EndpointAnswer['kind'],
  ms: number,
  extra: Pick<EndpointAnswer, 'headers' | 'profile'> | undefined,
];

/** @internal The tuple a thread posts for an answer. */
export function answerTuple(seq: number, a: EndpointAnswer, ms: number): AnswerTuple {
  return [
    seq,
    a.status,
    a.body,
    a.type,
    a.kind,
    ms,
    a.headers !== undefined || a.profile !== undefined ? { ...(a.headers ? { headers: a.headers } : {}), ...(a.profile ? { profile: a.profile } : {}) } : undefined,
  ];
}

/** @internal The answer of a tuple (a fresh object; inverse of answerTuple). */
export function answerOf(m: AnswerTuple): EndpointAnswer {
  return { status: m[1], body: m[2], type: m[3], kind: m[4], ...m[6] };
}

/** @internal What a thread sends the pool: an answer (a flat array), or a message. `fault`: the engine trapped; the thread must be replaced. */
export type PoolReply =
  | AnswerTuple
  | { type: 'ready' }
  | { type: 'loaded'; endpoint: string; triples: number; ms: number }
  | { type: 'load-failed'; endpoint: string; error: string; fault?: true }
  | { type: 'error'; seq: number; error: string; fault?: true; ms: number }
  | { type: 'skipped'; seq: number };
