import { Index } from 'flexsearch';
import { buildSearchCorpus, rankPositions, scoreEntry } from '../../core/catalog/search-corpus.js';
import type { SearchCorpus } from '../../core/catalog/search-corpus.js';
import type { Bm25Params } from '../../core/bm25.js';
import { BM25_FIELDS } from '../../core/bm25.js';
import type { Entry } from '../../core/types.js';
import type { SearchIndex, SearchIndexFactory } from '../../ports/search-index.js';

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

/** A SearchIndex with its corpus exposed for benchmarks and tests. */
export interface FlexSearchIndex extends SearchIndex {
  readonly corpus: SearchCorpus;
}

/**
 * FlexSearch finds candidates, BM25 ranks them (SPEC §5). Text is tokenized by our own
 * tokenizer and handed over space-joined, with FlexSearch's encoder reduced to a split, so
 * both engines see exactly the same terms. FlexSearch 0.8 ANDs multi-term queries, so the
 * candidate set is the union of a `suggest` query (documents matching most terms) and one
 * lookup per distinct term (OR semantics); every candidate then gets the real BM25 score.
 * Ids in FlexSearch are positions in the corpus, which keeps its memory small.
 */
export function buildFlexIndex(entries: readonly Entry[], opts: FlexIndexOptions = {}): FlexSearchIndex {
  const corpus = buildSearchCorpus(entries, opts.bm25);
  const limitFloor = opts.candidateLimit ?? 50;
  const commonShare = opts.commonTermShare ?? 0.25;
  const flex = new Index({
    tokenize: 'strict',
    encode: (text: string) => text.split(' ').filter((t) => t !== ''),
    resolution: 9,
  });
  // Strongest fields first, each term once: FlexSearch ranks a term higher the earlier it
  // appears, so a lookup capped at `limit` keeps the entries where the term matters most.
  const order = [...BM25_FIELDS].sort((a, b) => corpus.stats.params.weights[b] - corpus.stats.params.weights[a]);
  corpus.documents.forEach((doc, i) => {
    const terms = new Set(order.flatMap((f) => doc.fields[f] ?? []));
    flex.add(i, [...terms].join(' '));
  });

  return {
    corpus,
    size: corpus.entries.length,
    search(queryTokens, k, weights) {
      // Terms no entry has cannot match; terms most entries have cannot discriminate. Both
      // only cost lookups (the OR-suggest query's time grows with every term it is given).
      const n = corpus.entries.length;
      const known = [...new Set(queryTokens)].filter((t) => t !== '' && corpus.stats.df.has(t) && (weights?.get(t) ?? 1) !== 0);
      if (known.length === 0 || k <= 0) return [];
      // Small catalogs gather candidates from every term: the union stays small anyway.
      const common = n > SMALL_CATALOG ? n * commonShare : Number.POSITIVE_INFINITY;
      const rare = known.filter((t) => (corpus.stats.df.get(t) ?? 0) <= common);
      const lookup = rare.length > 0 ? rare : known;
      const limit = Math.max(limitFloor, k);
      const found = new Set<number>();
      const add = (ids: unknown): void => {
        if (Array.isArray(ids)) for (const id of ids) if (typeof id === 'number') found.add(id);
      };
      add(flex.search(lookup.join(' '), limit, { suggest: true }));
      for (const t of lookup) add(flex.search(t, limit));
      return rankPositions(corpus, [...found].sort((a, b) => a - b), known, k, weights);
    },
    score: (queryTokens, entryId, weights) => scoreEntry(corpus, queryTokens, entryId, weights),
  };
}

/** `SearchIndexFactory` for the composition root. */
export const flexIndexFactory: SearchIndexFactory = (entries) => buildFlexIndex(entries);
