/**
 * BM25F (SPEC §5 "Search"): every candidate, whatever engine found it, gets this score,
 * computed from the catalog's own statistics, so gates can compare scores.
 *
 * Each field is length-normalised against its own average, then weighted, so an entry with
 * rich metadata (alerts, tags) is not penalised against a bare one for being "longer":
 *
 *   B_f      = 1 − b + b · len_f(d) / avglen_f                 avglen_f over all documents
 *   tf~(t,d) = Σ_f w_f · tf_f(t,d) / B_f
 *   idf(t)   = ln(1 + (N − df_t + 0.5) / (df_t + 0.5))          df_t = docs with t in any field
 *   score    = Σ_t idf(t) · tf~·(k1 + 1) / (tf~ + k1)           each query term counted once
 *
 * With a single field of weight 1 this is exactly classic BM25.
 */

export const BM25_FIELDS = ['title', 'alerts', 'tags', 'description', 'body'] as const;
export type Bm25Field = (typeof BM25_FIELDS)[number];
export type FieldWeights = Record<Bm25Field, number>;

/** Alert names are the strongest signal, then titles, tags, descriptions, body text. */
export const DEFAULT_FIELD_WEIGHTS: Readonly<FieldWeights> = Object.freeze({
  title: 3,
  alerts: 4,
  tags: 2,
  description: 1.5,
  body: 1,
});

export interface Bm25Params {
  /** Term-frequency saturation. */
  k1: number;
  /** Length normalisation (0 = none, 1 = full). */
  b: number;
  weights: FieldWeights;
}

export const DEFAULT_BM25_PARAMS: Readonly<Bm25Params> = Object.freeze({
  k1: 1.2,
  b: 0.75,
  weights: DEFAULT_FIELD_WEIGHTS,
});

/** One document as BM25 sees it: already-tokenized fields. */
export interface Bm25Document {
  id: string;
  fields: Partial<Record<Bm25Field, readonly string[]>>;
}

/** Corpus statistics, precomputed at index time so scoring a document is O(query terms). */
export interface Bm25Stats {
  readonly params: Readonly<Bm25Params>;
  readonly ids: readonly string[];
  /** id → position in `ids`. */
  readonly position: ReadonlyMap<string, number>;
  /** Per document: term → weighted, length-normalised term frequency (tf~). */
  readonly tf: readonly ReadonlyMap<string, number>[];
  /** Per field: average length in tokens over all documents. */
  readonly avgFieldLength: Readonly<FieldWeights>;
  /** term → number of documents containing it in any field. */
  readonly df: ReadonlyMap<string, number>;
}

/** Precompute normalised term frequencies and document frequencies for `docs`. */
export function buildBm25Stats(docs: readonly Bm25Document[], params: Readonly<Bm25Params> = DEFAULT_BM25_PARAMS): Bm25Stats {
  const avg = { title: 0, alerts: 0, tags: 0, description: 0, body: 0 };
  for (const doc of docs) for (const f of BM25_FIELDS) avg[f] += doc.fields[f]?.length ?? 0;
  for (const f of BM25_FIELDS) avg[f] = docs.length === 0 ? 0 : avg[f] / docs.length;

  const ids: string[] = [];
  const position = new Map<string, number>();
  const tf: Map<string, number>[] = [];
  const df = new Map<string, number>();
  for (const doc of docs) {
    const weighted = new Map<string, number>();
    for (const f of BM25_FIELDS) {
      const tokens = doc.fields[f];
      const w = params.weights[f];
      if (!tokens || tokens.length === 0 || w === 0) continue;
      const norm = fieldNorm(params.b, tokens.length, avg[f]);
      for (const t of tokens) weighted.set(t, (weighted.get(t) ?? 0) + w / norm);
    }
    for (const t of weighted.keys()) df.set(t, (df.get(t) ?? 0) + 1);
    position.set(doc.id, ids.length);
    ids.push(doc.id);
    tf.push(weighted);
  }
  return { params, ids, position, tf, avgFieldLength: avg, df };
}

/**
 * The formula's three pieces, shared by every implementation so that all of them compute
 * bit-identical scores (same operations in the same order), not merely close ones: then ties
 * between entries are ties everywhere, and "ties by id" means the same thing in each index.
 */

/** B_f: length normalisation of a field of `len` tokens against the field's average. */
export function fieldNorm(b: number, len: number, avgLen: number): number {
  return 1 - b + (b * len) / avgLen;
}

/** idf of a term found in `df` of `n` documents (never negative). */
export function idfOf(n: number, df: number): number {
  return Math.log(1 + (n - df + 0.5) / (df + 0.5));
}

/** One term's contribution: `wIdf` (query weight × idf) times the saturated tf~. */
export function saturate(wIdf: number, tf: number, k1: number): number {
  return (wIdf * tf * (k1 + 1)) / (tf + k1);
}

/** Inverse document frequency of `term` in this corpus (never negative). */
export function idf(stats: Bm25Stats, term: string): number {
  return idfOf(stats.ids.length, stats.df.get(term) ?? 0);
}

/** Query terms counted once each, in first-seen order. */
export function uniqueTerms(queryTokens: readonly string[]): string[] {
  return [...new Set(queryTokens)];
}

/**
 * The order in which a score adds up its terms: rarest first (ascending df), ties in query
 * order. Floating-point addition is not associative, so every index adds in this one order and
 * all of them compute bit-identical scores: a tie is a tie everywhere, and "ties by id" picks
 * the same entries. Rarest first is also the order the postings index prunes in.
 */
export function scoringOrder<T>(terms: readonly T[], df: (term: T) => number): T[] {
  // Array.prototype.sort is stable: equal df keep their query order.
  return terms
    .map((term) => ({ term, df: df(term) }))
    .sort((a, b) => a.df - b.df)
    .map((x) => x.term);
}

/** Weight of a query term (1 unless the query says otherwise). */
export function termWeight(weights: ReadonlyMap<string, number> | undefined, term: string): number {
  return weights?.get(term) ?? 1;
}

/**
 * BM25 score of the document at `docIndex` (see `stats.position`) for already-unique terms,
 * each term's contribution multiplied by its query weight, added in `scoringOrder`.
 */
export function bm25ScoreAt(stats: Bm25Stats, docIndex: number, terms: readonly string[], weights?: ReadonlyMap<string, number>): number {
  const counts = stats.tf[docIndex];
  if (counts === undefined) return 0;
  const { k1 } = stats.params;
  let score = 0;
  for (const t of scoringOrder(terms, (x) => stats.df.get(x) ?? 0)) {
    const f = counts.get(t);
    if (f === undefined) continue;
    score += saturate(termWeight(weights, t) * idf(stats, t), f, k1);
  }
  return score;
}

/** BM25 score of document `id` for a query; 0 when the id is not in the corpus. */
export function bm25Score(stats: Bm25Stats, id: string, queryTokens: readonly string[], weights?: ReadonlyMap<string, number>): number {
  const i = stats.position.get(id);
  return i === undefined ? 0 : bm25ScoreAt(stats, i, uniqueTerms(queryTokens), weights);
}
