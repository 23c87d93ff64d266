import { Index } from 'flexsearch';
import type { Bm25Params } from '../../core/bm25.js';
import { BM25_FIELDS, DEFAULT_BM25_PARAMS } from '../../core/bm25.js';
import { PostingsIndex } from '../../core/search/postings-index.js';
import type { Entry } from '../../core/types.js';
import type { SearchIndex } from '../../ports/search-index.js';

export interface FlexIndexOptions {
  /** BM25 parameters for the final scores (defaults: k1 1.2, b 0.75, SPEC field weights). */
  bm25?: Readonly<Bm25Params>;
  /**
   * How many ids FlexSearch may return per lookup. Wider than the caller's k so a term common
   * to many entries cannot crowd out the one that matches the rest of the query.
   */
  candidateLimit?: number;
  /**
   * Terms found in more than this share of entries are not looked up for candidates (they
   * still count in every candidate's BM25 score). Default 0.25.
   */
  commonTermShare?: number;
}

/** Up to this many entries, common terms are looked up too (exact top-k, cheap at this size). */
const SMALL_CATALOG = 1000;

/**
 * FlexSearch finds candidates, BM25 ranks them (SPEC §5 as first written). Alert recall does
 * not use it any more: `serve` and `eval` answer with the exact `PostingsIndex`, which the
 * benchmark measures faster to build and query and smaller,
 * while this index's top k drifts from the exhaustive one above SMALL_CATALOG entries (it
 * skips lookups of common terms) and none of FlexSearch's own query features was used. It is
 * kept only as a baseline of the engine benchmark. FlexSearch's own features — prefix and typo
 * matching — serve text people type (`text-index.ts`).
 *
 * Text is tokenized once, by our tokenizer, while the postings index is built; FlexSearch gets
 * each document's terms space-joined with its encoder reduced to a split, so both engines see
 * the same terms. FlexSearch 0.8 ANDs multi-term queries, so the candidate set is the union of a
 * `suggest` query (documents matching most terms) and one lookup per distinct term (OR
 * semantics); the candidates get the postings index's BM25 scores. Ids in FlexSearch are the
 * postings index's document numbers, which keeps its memory small.
 */
export function buildFlexIndex(entries: readonly Entry[], opts: FlexIndexOptions = {}): SearchIndex {
  const params = opts.bm25 ?? DEFAULT_BM25_PARAMS;
  const limitFloor = opts.candidateLimit ?? 50;
  const commonShare = opts.commonTermShare ?? 0.25;
  const flex = new Index({
    tokenize: 'strict',
    encode: (text: string) => text.split(' ').filter((t) => t !== ''),
    resolution: 9,
  });
  // Strongest fields first, each term once: FlexSearch ranks a term higher the earlier it
  // appears, so a lookup capped at `limit` keeps the entries where the term matters most.
  const order = [...BM25_FIELDS].sort((a, b) => params.weights[b] - params.weights[a]);
  const postings = new PostingsIndex(entries, {
    bm25: params,
    onDocument: (doc, document) => {
      flex.add(doc, [...new Set(order.flatMap((f) => document.fields[f] ?? []))].join(' '));
    },
  });

  return {
    size: postings.size,
    search(queryTokens, k, weights) {
      // Terms no entry has cannot match; terms most entries have cannot discriminate. Both
      // only cost lookups (the OR-suggest query's time grows with every term it is given).
      const n = postings.size;
      const known = [...new Set(queryTokens)].filter((t) => t !== '' && postings.documentFrequency(t) > 0 && (weights?.get(t) ?? 1) !== 0);
      if (known.length === 0 || !(k >= 1)) return [];
      // Small catalogs gather candidates from every term: the union stays small anyway.
      const common = n > SMALL_CATALOG ? n * commonShare : Number.POSITIVE_INFINITY;
      const rare = known.filter((t) => postings.documentFrequency(t) <= common);
      const lookup = rare.length > 0 ? rare : known;
      const limit = Math.max(limitFloor, k);
      const found = new Set<number>();
      const add = (ids: unknown): void => {
        if (Array.isArray(ids)) for (const id of ids) if (typeof id === 'number') found.add(id);
      };
      add(flex.search(lookup.join(' '), limit, { suggest: true }));
      for (const t of lookup) add(flex.search(t, limit));
      return postings.rankDocuments(found, queryTokens, k, weights);
    },
    score: (queryTokens, entryId, weights) => postings.score(queryTokens, entryId, weights),
  };
}
