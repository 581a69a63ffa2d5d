/**
 * Hybrid retrieval of KGVoyager (paper section 3.1): BM25 lexical scores (MiniSearch) and dense
 * similarity (an `Embedder`), fused by reciprocal rank fusion (Cormack, Clarke & Büttcher, SIGIR
 * 2009), then adaptive filtering (drop hits whose score is below δ times the top score, always
 * keep the top three).
 */
import MiniSearch from 'minisearch';
import type { Embedder } from './embedder.js';
import { sStem, words } from './text.js';

/** One document of a search index: an id (an IRI) and its text. */
export interface IndexDocument {
  id: string;
  /** Words the IRI stands for (see `iriText`). */
  name: string;
  /** `rdfs:label` values, joined by spaces (empty when there are none). */
  label: string;
}

/** A ranked hit: document id and the score of the ranking that produced it (higher is better). */
interface ScoredId {
  id: string;
  score: number;
}

/** Which signal ranks: lexical only, dense only, or both fused (the default). */
export type RetrievalMode = 'bm25' | 'dense' | 'hybrid';

/** Defaults of the retrieval (see docs/kgvoyager.md for why k = 2). */
export const RETRIEVAL_DEFAULTS = {
  /** RRF constant k (Cormack et al. use 60; see `rrf`). */
  rrfK: 2,
  /** δ of the adaptive filter (KGVoyager paper, section 3.1). */
  delta: 0.125,
  /** Hits always kept by the adaptive filter. */
  minKeep: 3,
} as const;

/** Sorts by score descending, ties by id ascending, so that rankings are deterministic. */
function byScoreThenId(a: ScoredId, b: ScoredId): number {
  return b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/**
 * Reciprocal rank fusion: score(d) = Σ over the rankings that contain d of 1 / (k + rank(d)), ranks
 * counted from 1. A document missing from a ranking gets nothing from it.
 * Why k matters for the adaptive filter (δ = 0.125): a hit found by one ranking only, at rank r,
 * scores 1/(k+r); the top score is 2/(k+1) when one document is first in both rankings and
 * 1/(k+1) when the two rankings disagree. So the hit survives iff r ≤ 3k + 4 (agreeing top) or
 * r ≤ 7k + 8 (disagreeing top): with k = 60, ranks 184 or 428 — the filter prunes nothing in a
 * schema of a few hundred IRIs; with k = 2, ranks 10 or 22.
 * @param rankings lists of ids, best first (each id at most once per list)
 * @param k the RRF constant, ≥ 0
 * @returns fused scores, best first (ties by id)
 */
export function rrf(rankings: readonly (readonly string[])[], k: number = RETRIEVAL_DEFAULTS.rrfK): ScoredId[] {
  if (!(k >= 0)) throw new RangeError(`RRF constant k must be ≥ 0, got ${k}`);
  const fused = new Map<string, number>();
  for (const ranking of rankings) ranking.forEach((id, i) => fused.set(id, (fused.get(id) ?? 0) + 1 / (k + i + 1)));
  return [...fused].map(([id, score]) => ({ id, score })).sort(byScoreThenId);
}

/**
 * Adaptive filtering (KGVoyager paper, section 3.1): keeps the hits whose score is at least
 * `delta` × the top score, and always the first `minKeep` hits.
 * @param hits hits best first
 * @returns a prefix of `hits`
 */
export function adaptiveFilter<T extends { score: number }>(hits: readonly T[], delta: number = RETRIEVAL_DEFAULTS.delta, minKeep: number = RETRIEVAL_DEFAULTS.minKeep): T[] {
  if (hits.length === 0) return [];
  const threshold = delta * hits[0].score;
  let n = 0;
  while (n < hits.length && (n < minKeep || hits[n].score >= threshold)) n++;
  return hits.slice(0, n);
}

/** Options of a search. */
interface SearchOptions {
  mode?: RetrievalMode;
  /** RRF constant (hybrid mode). */
  rrfK?: number;
  /** δ of the adaptive filter; 0 keeps every hit. */
  delta?: number;
  /** Hits always kept by the filter. */
  minKeep?: number;
}

/** The result of a search: the ranking before and after the adaptive filter. */
export interface SearchResult {
  /** Every hit (BM25 hits, or documents with cosine > 0, or their fusion), best first. */
  ranked: ScoredId[];
  /** The hits kept by the adaptive filter, a prefix of `ranked`. */
  kept: ScoredId[];
}

/**
 * A searchable set of documents: a MiniSearch index over the fields `name` and `label` and one
 * embedding per document. MiniSearch 7.2.0 scores BM25+ (Lv & Zhai 2011; k1 = 1.2, b = 0.7,
 * δ = 0.5), summed over query terms and fields and multiplied by the number of query terms that
 * matched; terms match exactly (no prefix or fuzzy matching) after the same word splitting as the
 * index text (`words`) and, by default, Harman's S-stemmer (`sStem`: plurals).
 */
export class HybridIndex {
  private readonly search_: MiniSearch<IndexDocument>;
  private readonly ids: string[];

  private constructor(
    docs: readonly IndexDocument[],
    private readonly vectors: Float32Array[],
    readonly embedder: Embedder,
    stem: boolean,
  ) {
    this.search_ = new MiniSearch<IndexDocument>({
      fields: ['name', 'label'],
      idField: 'id',
      tokenize: (text) => words(text),
      processTerm: stem ? (term) => sStem(term.toLowerCase()) : (term) => term.toLowerCase(),
    });
    this.search_.addAll(docs as IndexDocument[]);
    this.ids = docs.map((d) => d.id);
  }

  /**
   * Indexes documents (ids must be distinct) and embeds their `name label` text.
   * @param stem apply the S-stemmer (`sStem`) to index and query terms of the BM25 side (default true)
   * @throws Error when the embedder fails or ids repeat
   */
  static async build(docs: readonly IndexDocument[], embedder: Embedder, stem = true): Promise<HybridIndex> {
    const vectors = docs.length > 0 ? await embedder.embed(docs.map((d) => `${d.name} ${d.label}`.trim())) : [];
    return new HybridIndex(docs, vectors, embedder, stem);
  }

  /** Number of documents. */
  get size(): number {
    return this.ids.length;
  }

  /** BM25 ranking of the documents that contain a query word, best first. */
  bm25(query: string): ScoredId[] {
    return this.search_
      .search(query)
      .map((r) => ({ id: String(r.id), score: r.score }))
      .sort(byScoreThenId);
  }

  /**
   * Dense ranking: documents with cosine > 0 to the query's embedding, best first. Embeddings are
   * L2-normalised (the `Embedder` contract), so the cosine is the dot product, summed over the
   * query vector's non-zero coordinates only (about 20 for the n-gram embedder).
   */
  async dense(query: string): Promise<ScoredId[]> {
    if (this.ids.length === 0) return [];
    const [q] = await this.embedder.embed([query]);
    const nz: number[] = [];
    for (let i = 0; i < q.length; i++) if (q[i] !== 0) nz.push(i);
    const out: ScoredId[] = [];
    for (let d = 0; d < this.ids.length; d++) {
      const v = this.vectors[d];
      if (v.length !== q.length) throw new Error(`embedder ${this.embedder.id}: query vector of length ${q.length}, document vector of length ${v.length}`);
      let dot = 0;
      for (const i of nz) dot += q[i] * v[i];
      if (dot > 1e-9) out.push({ id: this.ids[d], score: dot });
    }
    return out.sort(byScoreThenId);
  }

  /**
   * Searches with one signal or both, then applies the adaptive filter to the resulting scores.
   * @param query free text (a term, a phrase or a question)
   */
  async search(query: string, options: SearchOptions = {}): Promise<SearchResult> {
    const mode = options.mode ?? 'hybrid';
    let ranked: ScoredId[];
    if (mode === 'bm25') ranked = this.bm25(query);
    else if (mode === 'dense') ranked = await this.dense(query);
    else {
      const dense = await this.dense(query);
      ranked = rrf([this.bm25(query).map((h) => h.id), dense.map((h) => h.id)], options.rrfK ?? RETRIEVAL_DEFAULTS.rrfK);
    }
    return { ranked, kept: adaptiveFilter(ranked, options.delta ?? RETRIEVAL_DEFAULTS.delta, options.minKeep ?? RETRIEVAL_DEFAULTS.minKeep) };
  }
}
