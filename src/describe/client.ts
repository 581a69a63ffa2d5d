/**
 * The one small interface through which VoID statistics are computed: a SPARQL 1.1 SELECT query
 * in, a table of RDF terms out. Two implementations: an in-process oxigraph store, and a remote
 * endpoint spoken to with the SPARQL 1.1 Protocol. Both return results through the same parser of
 * the SPARQL 1.1 Query Results JSON Format, so the describing code cannot tell them apart.
 */
import fs from 'node:fs';
import * as oxigraph from 'oxigraph';
import { InputError, lineFromParserMessage } from '../common/errors.js';
import { postWithin } from '../common/http-client.js';
import { parseSparqlJson, type SparqlRow } from '../sparql/results.js';

/**
 * A SPARQL endpoint, local or remote. `select` runs a SELECT query over the endpoint's dataset
 * and resolves with its solutions in the order the endpoint returns them.
 */
export interface SparqlClient {
  /** Where the queries go, for messages: a file list or a URL. */
  readonly label: string;
  /**
   * Runs a SELECT query.
   * @throws Error naming `label` when the query fails, times out, or the answer is not SPARQL JSON results
   */
  select(query: string): Promise<SparqlRow[]>;
  /** Releases what the client holds (the store's memory); the client cannot be used afterwards. */
  close(): void;
}

const JSON_RESULTS = 'application/sparql-results+json';

/** An RDF file to load into a named graph of an `OxigraphClient`. */
export interface GraphFile {
  /** Path of an N-Triples file. */
  file: string;
  /** IRI of the named graph that receives the file's triples. */
  graph: string;
}

/**
 * An in-process oxigraph (npm) store holding N-Triples files, each in its own named graph.
 * Queries run synchronously on the caller's thread (oxigraph's `query` cannot be interrupted,
 * oxigraph's npm build blocks its thread): use it for the build's own shards, whose size is known; memory is ~1 KB per
 * triple and is given back to the WebAssembly heap by `close`.
 */
export class OxigraphClient implements SparqlClient {
  readonly label: string;
  private store: oxigraph.Store | undefined;

  private constructor(files: GraphFile[]) {
    this.label = files.length === 1 ? files[0].file : `${files.length} files (${files[0]?.file ?? 'none'}, ...)`;
    this.store = new oxigraph.Store();
  }

  /**
   * Loads each file into its named graph.
   * @throws InputError naming the file (and line, when oxigraph gives one) of a file that does not load
   */
  static load(files: GraphFile[]): OxigraphClient {
    const c = new OxigraphClient(files);
    for (const f of files) {
      try {
        c.store!.load(fs.readFileSync(f.file), {
          format: 'application/n-triples',
          to_graph_name: oxigraph.namedNode(f.graph),
          no_transaction: true,
        });
      } catch (e) {
        c.close();
        const message = (e as Error).message ?? String(e);
        throw new InputError(`cannot load the shard into the store: ${message}`, { file: f.file, line: lineFromParserMessage(message) });
      }
    }
    return c;
  }

  async select(query: string): Promise<SparqlRow[]> {
    if (!this.store) throw new Error(`${this.label}: the store is closed`);
    let body: string;
    try {
      body = this.store.query(query, { results_format: JSON_RESULTS }) as string;
    } catch (e) {
      throw new Error(`${this.label}: query failed: ${(e as Error).message ?? e}\n${query}`, { cause: e });
    }
    return parseSparqlJson(body, this.label);
  }

  close(): void {
    // wasm-bindgen's free() (not in oxigraph's typings) hands the store's memory back at once.
    (this.store as unknown as { free?: () => void } | undefined)?.free?.();
    this.store = undefined;
  }
}

/**
 * A remote SPARQL endpoint, queried with the SPARQL 1.1 Protocol (W3C Recommendation 2013,
 * §2.1.2 "query via POST with URL-encoded parameters"), asking for JSON results, with fkgqa's HTTP
 * client (src/common/http-client.ts: a redirect is not followed).
 */
export class HttpSparqlClient implements SparqlClient {
  readonly label: string;

  /**
   * @param endpoint URL of the endpoint, e.g. `http://127.0.0.1:7001/concert_singer-shard1/sparql`
   * @param timeoutMs time limit of each request, in ms (default 60 000)
   */
  constructor(
    readonly endpoint: string,
    readonly timeoutMs = 60_000,
  ) {
    this.label = endpoint;
    let u: URL | undefined;
    try {
      u = new URL(endpoint);
    } catch {
      /* reported below */
    }
    if (!u || (u.protocol !== 'http:' && u.protocol !== 'https:')) throw new InputError(`not an http(s) URL of a SPARQL endpoint: "${endpoint}"`);
  }

  async select(query: string): Promise<SparqlRow[]> {
    const res = await postWithin(this.endpoint, { 'content-type': 'application/x-www-form-urlencoded', accept: JSON_RESULTS }, new URLSearchParams({ query }).toString(), this.timeoutMs);
    if ('unreachable' in res) throw new InputError(`the SPARQL endpoint cannot be reached: ${res.unreachable}`, { file: this.label });
    if (res.status < 200 || res.status > 299) throw new Error(`${this.label}: HTTP ${res.status} ${res.statusText}: ${res.text.slice(0, 300)}`);
    return parseSparqlJson(res.text, this.label);
  }

  close(): void {}
}
