/**
 * Worker-thread entry of StoreWorker (see store-worker.ts and store-host.ts): one oxigraph Store
 * answering plain queries.
 */
import { hostStore } from './store-host.js';

hostStore();
