import { DEFAULT_BM25_PARAMS, idfOf, saturate, scoringOrder, termWeight, uniqueTerms } from '../bm25.js';
import type { Bm25Document, Bm25Params } from '../bm25.js';
import type { Candidate, Entry } from '../types.js';
import type { TermWeights, UpdatableSearchIndex } from '../../ports/search-index.js';
import { exhaustiveTopK, prunedTopK } from './exact-top-k.js';
import type { ScoredQuery } from './exact-top-k.js';
import { PostingStore, StaleEntryError, type SavedStore } from './posting-store.js';
import { QueryScratch } from './query-scratch.js';
import { topCandidates } from './select.js';

export interface PostingsIndexOptions {
  /** BM25 parameters (defaults: k1 1.2, b 0.75, SPEC field weights). */
  bm25?: Readonly<Bm25Params>;
  /** Sees every tokenized document of the initial build once, with its document number. */
  onDocument?: (doc: number, document: Bm25Document) => void;
  /**
   * Compact once the postings written or dead since the last compaction exceed this share of
   * the base (default 1/8): each compaction is O(postings), so an update costs amortised
   * O(its postings / share). Tests set 0 (always) or Infinity (never).
   */
  churnShare?: number;
}

/**
 * The recall index (SPEC §5 "Search"): BM25F over compact postings (posting-store.ts), exact
 * top k by pruned term-at-a-time scoring (exact-top-k.ts), updated in place.
 *
 * Scores are bit-identical to the exhaustive scan's (`fullScanSearch`): the same statistics,
 * the same operations, terms added in `scoringOrder`. So the top k is the exhaustive top k,
 * ties by id, for any query and weights. idf is computed at query time from the current N
 * and df, and field lengths are normalised against the current averages, so an update touches
 * only the entries it changes.
 */
export class PostingsIndex implements UpdatableSearchIndex {
  #store: PostingStore;
  readonly #params: Readonly<Bm25Params>;
  /** Per-term bounds are valid for these parameters (non-negative weights, b in [0, 1]). */
  readonly #boundable: boolean;
  readonly #avg = new Float64Array(5);
  readonly #scratch = new QueryScratch();
  readonly #churnShare: number;

  constructor(entries: readonly Entry[], opts: PostingsIndexOptions = {}, saved?: SavedIndex) {
    this.#params = opts.bm25 ?? DEFAULT_BM25_PARAMS;
    this.#churnShare = opts.churnShare ?? 1 / 8;
    const { k1, b, weights } = this.#params;
    this.#boundable = k1 >= 0 && b >= 0 && b <= 1 && Object.values(weights).every((w) => w >= 0);
    this.#store = new PostingStore(this.#params);
    if (saved === undefined) this.#store.build(entries, opts.onDocument);
    else {
      if (JSON.stringify(saved.params) !== JSON.stringify(this.#params)) throw new Error('the saved index was built with other BM25 parameters');
      this.#store.restore(entries, saved.store);
    }
  }

  /**
   * The index as plain data (typed arrays, strings): with the same entries, `fromSaved` gives
   * back an index that answers every query exactly as this one does, without re-tokenizing.
   */
  saved(): SavedIndex {
    return { params: this.#params, store: this.#store.saved() };
  }

  /**
   * The index `saved()` described, over `entries` (the very entries it indexed, in order).
   * @throws Error when the save is damaged or made with other parameters: build afresh instead.
   */
  static fromSaved(entries: readonly Entry[], saved: SavedIndex, opts: Omit<PostingsIndexOptions, 'onDocument'> = {}): PostingsIndex {
    return new PostingsIndex(entries, opts, saved);
  }

  get size(): number {
    return this.#store.live;
  }

  /** Number of indexed entries containing `term` in a weighted field. */
  documentFrequency(term: string): number {
    const t = this.#store.postings.termId(term);
    return t === undefined ? 0 : this.#store.postings.df[t]!;
  }

  search(queryTokens: readonly string[], k: number, weights?: TermWeights): Candidate[] {
    if (!(k >= 1)) return [];
    const q = this.#prepare(queryTokens, weights);
    if (q.terms.length === 0) return [];
    const limit = Math.floor(k);
    const store = this.#store;
    const rho = store.boundRatio(this.#avg);
    if (!q.bounded || !this.#boundable || !(rho < Number.POSITIVE_INFINITY) || limit >= store.live) {
      return exhaustiveTopK(store, this.#scratch, q, limit);
    }
    return prunedTopK(store, this.#scratch, q, limit, rho);
  }

  score(queryTokens: readonly string[], entryId: string, weights?: TermWeights): number {
    const store = this.#store;
    const d = store.docs.ids.get(entryId);
    if (d === undefined) return 0;
    const q = this.#prepare(queryTokens, weights);
    let score = 0;
    for (let j = 0; j < q.terms.length; j++) {
      const t = q.terms[j]!;
      const packed = store.postings.find(t, d);
      if (packed >= 0) score += saturate(q.wIdf[j]!, store.docs.tf(packed, d, t), store.k1);
    }
    return score;
  }

  /**
   * BM25-rank the given documents (numbers from `onDocument`; valid until the first update)
   * and keep the top `k`: for an engine that finds candidates its own way (FlexSearch).
   */
  rankDocuments(docs: Iterable<number>, queryTokens: readonly string[], k: number, weights?: TermWeights): Candidate[] {
    if (!(k >= 1)) return [];
    const q = this.#prepare(queryTokens, weights);
    if (q.terms.length === 0) return [];
    const store = this.#store;
    const s = this.#scratch;
    s.begin(store.docs.count);
    let n = 0;
    for (const d of docs) {
      if (d >= 0 && d < store.docs.count && store.docs.alive[d] === 1) s.docs[n++] = d;
    }
    n = s.sortDocs(n, store.docs.count);
    for (let i = 0; i < n; i++) s.acc[s.docs[i]!] = 0;
    for (let j = 0; j < q.terms.length; j++) store.addTo(q.terms[j]!, q.wIdf[j]!, s.docs, n, s.acc);
    return topCandidates(s.docs, n, s.acc, (d) => store.docs.entries[d], Math.floor(k));
  }

  update(upserts: readonly Entry[], removedIds: readonly string[]): void {
    const store = this.#store;
    try {
      for (const id of removedIds) store.remove(id);
      for (const entry of upserts) {
        store.remove(entry.id);
        store.add(entry);
      }
    } catch (err) {
      if (!(err instanceof StaleEntryError)) throw err;
      // An indexed entry was mutated in place, so its old terms are unknown: rebuild from the
      // entries as they are now (what a fresh index would see).
      const gone = new Set([...removedIds, ...upserts.map((e) => e.id)]);
      const kept = store.docs.entries.filter((e): e is Entry => e !== undefined && !gone.has(e.id));
      this.#store = new PostingStore(this.#params);
      this.#store.build([...kept, ...upserts]);
      return;
    }
    if (store.boundsStale || store.postings.churn > store.postings.basePostings * this.#churnShare) store.compact();
  }

  /** The query's known terms in scoring order, with weight × idf; prepares tf~ at the current averages. */
  #prepare(queryTokens: readonly string[], weights: TermWeights | undefined): ScoredQuery {
    const store = this.#store;
    store.docs.useAverages(store.docs.currentAvg(this.#avg));
    const q: ScoredQuery = { terms: [], wIdf: [], bounded: true };
    const known: { t: number; w: number }[] = [];
    for (const term of uniqueTerms(queryTokens)) {
      const t = store.postings.termId(term);
      if (t === undefined || store.postings.df[t] === 0) continue;
      const w = termWeight(weights, term);
      if (w !== 0) known.push({ t, w });
    }
    for (const { t, w } of scoringOrder(known, (x) => store.postings.df[x.t]!)) {
      const x = w * idfOf(store.live, store.postings.df[t]!);
      q.terms.push(t);
      q.wIdf.push(x);
      if (!(x >= 0 && x < Number.POSITIVE_INFINITY)) q.bounded = false;
    }
    return q;
  }
}

/** A `PostingsIndex` as plain data (see `PostingsIndex.saved`). */
export interface SavedIndex {
  params: Readonly<Bm25Params>;
  store: SavedStore;
}
