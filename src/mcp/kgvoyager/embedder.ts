/**
 * The dense side of KGVoyager's hybrid retrieval (paper section 3.1: "dense vector similarity"),
 * behind one small interface with three implementations:
 * - `NgramEmbedder` (the default): deterministic, offline, no model — hashed character 3-grams;
 * - `OpenAiEmbedder`: any OpenAI-compatible `POST /v1/embeddings` service (OpenAI, vLLM, Ollama,
 *   llama.cpp server, text-embeddings-inference, …);
 * - `LocalModelEmbedder`: a feature-extraction model in a local folder, run by the optional
 *   package `@huggingface/transformers` when the user has installed it (fkgqa does not depend on
 *   it and never downloads a model).
 */
import { InputError } from '../../common/errors.js';
import { getHasher, type Hasher } from '../../common/hash.js';
import { postWithin } from '../../common/http-client.js';
import { words } from './text.js';

/** Turns texts into vectors; similar texts get vectors with a high cosine. */
export interface Embedder {
  /** Stable name of the embedder and its parameters, e.g. `ngram3-2048`, recorded with results. */
  readonly id: string;
  /**
   * Embeds texts.
   * @returns one vector per text, in order; all of one length and L2-normalised (or zero)
   * @throws Error naming the service when a remote embedder fails
   */
  embed(texts: string[]): Promise<Float32Array[]>;
}

/**
 * Cosine similarity of two vectors of one length (0 when either is the zero vector).
 * @throws Error when the lengths differ
 */
export function cosine(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) throw new Error(`cosine: vectors of length ${a.length} and ${b.length}`);
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

/** Scales a vector to length 1 in place (the zero vector stays zero) and returns it. */
function l2normalize(v: Float32Array): Float32Array {
  let n = 0;
  for (let i = 0; i < v.length; i++) n += v[i] * v[i];
  if (n > 0) {
    const s = 1 / Math.sqrt(n);
    for (let i = 0; i < v.length; i++) v[i] *= s;
  }
  return v;
}

/** Options of `NgramEmbedder`. */
interface NgramEmbedderOptions {
  /** Length of the character n-grams (default 3). */
  n?: number;
  /** Dimension of the vectors (default 2048). */
  dimension?: number;
  /** Seed of the xxh32 hash (default 0). */
  seed?: number;
}

/**
 * The built-in embedder: feature hashing of character n-grams (the subword features of fastText,
 * Bojanowski et al. 2017, hashed as in Weinberger et al. 2009). A text is split into words (see
 * `words` in text.ts: lower case, split on non-alphanumerics and camel case); every word is padded
 * as `<word>` and each of its character n-grams (all of `<word>` when it is shorter than n) adds 1
 * to coordinate `xxh32(gram, seed) mod dimension`; the vector is then L2-normalised. So
 * `singer`/`singers` share 5 of their 6 and 7 3-grams (cosine 5/√42 ≈ 0.772 without collisions),
 * and texts without a common n-gram have cosine 0. Deterministic: same text, same vector, on any
 * machine.
 */
export class NgramEmbedder implements Embedder {
  readonly id: string;
  readonly n: number;
  readonly dimension: number;
  readonly seed: number;
  private hasher: Hasher | undefined;

  constructor(options: NgramEmbedderOptions = {}) {
    this.n = options.n ?? 3;
    this.dimension = options.dimension ?? 2048;
    this.seed = options.seed ?? 0;
    if (!Number.isInteger(this.n) || this.n < 1) throw new InputError(`n-gram length must be a positive integer, got ${this.n}`);
    if (!Number.isInteger(this.dimension) || this.dimension < 1) throw new InputError(`embedding dimension must be a positive integer, got ${this.dimension}`);
    this.id = `ngram${this.n}-${this.dimension}${this.seed ? `-seed${this.seed}` : ''}`;
  }

  /** The n-grams of a text, with repeats, in order (exposed for tests and documentation). */
  grams(text: string): string[] {
    const out: string[] = [];
    for (const w of words(text)) {
      const padded = `<${w}>`;
      if (padded.length <= this.n) out.push(padded);
      else for (let i = 0; i + this.n <= padded.length; i++) out.push(padded.slice(i, i + this.n));
    }
    return out;
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    this.hasher ??= await getHasher();
    const h = this.hasher;
    return texts.map((t) => {
      const v = new Float32Array(this.dimension);
      for (const g of this.grams(t)) v[h.h32(g, this.seed) % this.dimension] += 1;
      return l2normalize(v);
    });
  }
}

/** Options of `OpenAiEmbedder`. */
interface OpenAiEmbedderOptions {
  /** Base URL of the service, with or without `/v1` (e.g. `http://127.0.0.1:8080`, `https://api.openai.com/v1`). */
  url: string;
  /** Model name sent as `model` (e.g. `text-embedding-3-small`). */
  model: string;
  /** Bearer token, when the service needs one (read it from the environment, never from a file in the repository). */
  apiKey?: string;
  /** Texts per request (default 128). */
  batchSize?: number;
  /** Time limit of one request in ms (default 30,000). */
  timeoutMs?: number;
}

/**
 * A client of the OpenAI embeddings API (`POST {url}/v1/embeddings`, body `{model, input: string[]}`,
 * answer `{data: [{index, embedding: number[]}]}`), which many local and hosted services speak.
 * Vectors are L2-normalised on arrival. Sent with fkgqa's HTTP client (src/common/http-client.ts).
 */
export class OpenAiEmbedder implements Embedder {
  readonly id: string;
  private readonly endpoint: string;

  constructor(private readonly options: OpenAiEmbedderOptions) {
    let u: URL;
    try {
      u = new URL(options.url);
    } catch {
      throw new InputError(`not a URL of an embeddings service: "${options.url}"`);
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new InputError(`not an http(s) URL of an embeddings service: "${options.url}"`);
    if (!options.model) throw new InputError('the embeddings service needs a model name (--embedding-model)');
    const base = options.url.replace(/\/+$/, '');
    this.endpoint = /\/v1$/.test(base) ? `${base}/embeddings` : `${base}/v1/embeddings`;
    this.id = `openai:${options.model}@${u.host}`;
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    const out: Float32Array[] = [];
    const size = this.options.batchSize ?? 128;
    for (let i = 0; i < texts.length; i += size) out.push(...(await this.batch(texts.slice(i, i + size))));
    return out;
  }

  private async batch(input: string[]): Promise<Float32Array[]> {
    const timeoutMs = this.options.timeoutMs ?? 30_000;
    const headers = { 'content-type': 'application/json', ...(this.options.apiKey ? { authorization: `Bearer ${this.options.apiKey}` } : {}) };
    const res = await postWithin(this.endpoint, headers, JSON.stringify({ model: this.options.model, input }), timeoutMs);
    if ('unreachable' in res) throw new Error(`embeddings service ${this.endpoint} cannot be reached: ${res.unreachable}`);
    const body = res.text;
    if (res.status < 200 || res.status > 299) throw new Error(`embeddings service ${this.endpoint}: HTTP ${res.status}: ${body.slice(0, 300)}`);
    let doc: { data?: { index?: number; embedding?: number[] }[] };
    try {
      doc = JSON.parse(body);
    } catch {
      throw new Error(`embeddings service ${this.endpoint}: the answer is not JSON: ${body.slice(0, 200)}`);
    }
    const data = doc.data;
    if (!Array.isArray(data) || data.length !== input.length) {
      throw new Error(`embeddings service ${this.endpoint}: expected ${input.length} embeddings in "data", got ${Array.isArray(data) ? data.length : 'none'}`);
    }
    const vectors: Float32Array[] = new Array(input.length);
    for (const [pos, d] of data.entries()) {
      const i = typeof d.index === 'number' ? d.index : pos;
      if (!Array.isArray(d.embedding) || i < 0 || i >= input.length) throw new Error(`embeddings service ${this.endpoint}: entry ${pos} of "data" has no embedding`);
      vectors[i] = l2normalize(Float32Array.from(d.embedding));
    }
    const dim = vectors[0]?.length;
    if (vectors.some((v) => !v || v.length !== dim)) throw new Error(`embeddings service ${this.endpoint}: embeddings of different lengths or missing indexes`);
    return vectors;
  }
}

/** The optional package that runs a local model (not a dependency of fkgqa). */
const LOCAL_MODEL_PACKAGE = '@huggingface/transformers';

type FeatureExtractor = (texts: string[], options: { pooling: 'mean'; normalize: boolean }) => Promise<{ tolist(): number[][] }>;

/**
 * A sentence-embedding model in a local folder (ONNX weights and tokenizer, in the layout of
 * `@huggingface/transformers`' `feature-extraction` pipeline, e.g. a copy of
 * `Xenova/all-MiniLM-L6-v2`), mean-pooled and normalised. Remote model loading is switched off:
 * the folder must already hold the model. The runtime is the optional package
 * `@huggingface/transformers`, loaded on first use; fkgqa does not install it.
 */
export class LocalModelEmbedder implements Embedder {
  readonly id: string;
  private extractor: FeatureExtractor | undefined;

  /** @param modelPath folder of the model (absolute or relative to the working directory) */
  constructor(private readonly modelPath: string) {
    this.id = `local:${modelPath}`;
  }

  /**
   * @throws InputError naming the missing package (with the install command) or the model folder
   */
  async embed(texts: string[]): Promise<Float32Array[]> {
    this.extractor ??= await this.load();
    const out = await this.extractor(texts, { pooling: 'mean', normalize: true });
    return out.tolist().map((v) => Float32Array.from(v));
  }

  private async load(): Promise<FeatureExtractor> {
    const fs = await import('node:fs');
    const path = await import('node:path');
    const dir = path.resolve(this.modelPath);
    if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) throw new InputError('the local embedding model folder does not exist', { file: dir });
    let mod: {
      env: { allowRemoteModels: boolean; allowLocalModels: boolean; localModelPath: string };
      pipeline: (task: string, model: string) => Promise<FeatureExtractor>;
    };
    try {
      const name = LOCAL_MODEL_PACKAGE; // a variable, so that tsc does not look for the optional package
      mod = await import(name);
    } catch {
      throw new InputError(
        `a local embedding model needs the package ${LOCAL_MODEL_PACKAGE}, which fkgqa does not ship: ` +
          `install it beside fkgqa (npm i -E ${LOCAL_MODEL_PACKAGE}@4.3.1), or serve the model with an OpenAI-compatible ` +
          `/v1/embeddings server and use --embedder openai`,
        { file: dir },
      );
    }
    mod.env.allowRemoteModels = false;
    mod.env.allowLocalModels = true;
    mod.env.localModelPath = path.dirname(dir);
    return mod.pipeline('feature-extraction', path.basename(dir));
  }
}

/** How to choose an embedder (the `--embedder` options of `fkgqa mcp`). */
export type EmbedderSpec = { kind: 'ngram'; n?: number; dimension?: number } | ({ kind: 'openai' } & OpenAiEmbedderOptions) | { kind: 'local'; modelPath: string };

/** Creates the embedder a spec names (default: `NgramEmbedder` with n = 3, dimension 2048). */
export function createEmbedder(spec: EmbedderSpec = { kind: 'ngram' }): Embedder {
  switch (spec.kind) {
    case 'ngram':
      return new NgramEmbedder(spec);
    case 'openai':
      return new OpenAiEmbedder(spec);
    case 'local':
      return new LocalModelEmbedder(spec.modelPath);
  }
}
