/**
 * Worker-thread entry of a shard endpoint's store: a StoreWorker thread (store-host.ts) whose tasks
 * are whole queries of the endpoint (`EndpointTask`), answered by `answerQuery`, so that parsing,
 * evaluation and serialisation all run off the main thread and under the query's time limit.
 */
import type * as oxigraph from 'oxigraph';
import { hostStore } from '../common/store-host.js';
import { answerQuery, type EndpointTask } from './answer.js';

hostStore((store: oxigraph.Store, task: unknown) => answerQuery(store, task as EndpointTask));
