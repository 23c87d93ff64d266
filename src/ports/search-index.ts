import type { Candidate, Entry } from '../core/types.js';

/**
 * Optional per-term query weights: a term's BM25 contribution is multiplied by its weight
 * (absent = 1, 0 drops the term). Lets the query builder trust some evidence more than other
 * (an alert's PromQL expression against its free-text description) without repeating terms.
 */
export type TermWeights = ReadonlyMap<string, number>;

/**
 * Text search over the catalog (SPEC §5 "Search"). An implementation may use any engine to
 * find candidates, but every returned score is the catalog's own BM25 so gates can compare
 * scores across candidates and across engines. All entries are indexed whatever their
 * status; recall filters on `candidate.entry.status`.
 */
export interface SearchIndex {
  /** Number of indexed entries. */
  readonly size: number;
  /**
   * The top `k` entries for pre-tokenized query terms (use `tokenize` from core), sorted by
   * BM25 score descending, ties by entry id. Entries scoring 0 are left out. The array is
   * fresh: callers may add to it.
   */
  search(queryTokens: readonly string[], k: number, weights?: TermWeights): Candidate[];
  /** BM25 score of one entry for the query; 0 for an unknown id or no shared term. */
  score(queryTokens: readonly string[], entryId: string, weights?: TermWeights): number;
}

/**
 * A SearchIndex that follows catalog changes in place, in time proportional to the change (not
 * a rebuild). Recall is synchronous, so an update between two calls is never seen half-done.
 */
export interface UpdatableSearchIndex extends SearchIndex {
  /**
   * Remove `removedIds` (unknown ids are ignored), then add or replace `upserts` (by id). Every
   * later score is the one a fresh index over the resulting entries would give.
   */
  update(upserts: readonly Entry[], removedIds: readonly string[]): void;
}
