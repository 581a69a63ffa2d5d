/**
 * Defaults of `fkgqa serve` that the command line shows (src/cli/program.ts imports this light module).
 */

/**
 * The port `fkgqa serve` listens on unless `--port` says otherwise, so that endpoint URLs stay the
 * same across restarts (as Oxigraph's server keeps 7878 and Fuseki 3030). 7373 is taken by none of
 * the SPARQL servers (Oxigraph 7878, Fuseki 3030, Virtuoso 8890, Blazegraph 9999, GraphDB 7200,
 * Stardog 5820, QLever 7001/7019, RDF4J 8080) nor by the usual model servers beside which the
 * federation runs (vLLM 8000, llama.cpp 8080, Ollama 11434, LM Studio 1234, Gradio 7860).
 * `--port 0` takes any free port.
 */
export const DEFAULT_PORT = 7373;

/** The path of the federation endpoint on a `fkgqa serve` port (federation-endpoint.ts serves it). */
export const FEDERATION_PATH = '/federation/sparql';

/**
 * Engine threads of `/federation/sparql` by default (`--engines`): 2, one per core of a 2-core
 * machine (each Comunica thread holds 100–200 MB; the shard endpoints' pool has its own workers).
 * Two threads let a client's short query run beside another's long one (fair-queue.ts).
 */
export const DEFAULT_FEDERATION_THREADS = 2;
/** Federated queries one client may have waiting by default (`--max-queued`); each also waits at most its time limit. */
export const DEFAULT_MAX_QUEUED = 8;
/** The request header a client may name itself with, beside its remote address (`clientOf` of federation-endpoint.ts). */
export const CLIENT_HEADER = 'Fkgqa-Client';

/**
 * The largest request body `fkgqa serve` accepts unless `--max-body` says otherwise, in bytes (10
 * MiB); it also bounds a query's length. A query of 1,000,000 characters (the longest `fkgqa eval`
 * lets a scripted agent send) fits in any form a client sends it: form-encoded, a character outside
 * ASCII takes up to 9 bytes (`%XX` per UTF-8 byte), and the federation engines and fkgqa's own client
 * send queries form-encoded. At 1 MiB, a valid 990,000-character query was answered 413.
 */
export const DEFAULT_MAX_BODY_BYTES = 10 * 1024 * 1024;
