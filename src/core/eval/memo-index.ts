import type { SearchIndex, TermWeights } from '../../ports/search-index.js';
import type { Candidate } from '../types.js';

/**
 * A SearchIndex that remembers answers, for calibration: the same alert is recalled under
 * hundreds of gate settings that do not change its query, and only the gates differ. Results
 * are copied on the way out because recall re-scores and extends the array it receives.
 */
export function memoIndex(inner: SearchIndex): SearchIndex {
  const searches = new Map<string, Candidate[]>();
  const scores = new Map<string, number>();
  const key = (tokens: readonly string[], weights: TermWeights | undefined): string =>
    tokens.map((t) => `${t}=${weights?.get(t) ?? 1}`).join(' ');
  return {
    get size() {
      return inner.size;
    },
    search(tokens, k, weights) {
      const kk = `${k}|${key(tokens, weights)}`;
      let hit = searches.get(kk);
      if (hit === undefined) {
        hit = inner.search(tokens, k, weights);
        searches.set(kk, hit);
      }
      return hit.map((c) => ({ entry: c.entry, score: c.score }));
    },
    score(tokens, id, weights) {
      const kk = `${id}|${key(tokens, weights)}`;
      let hit = scores.get(kk);
      if (hit === undefined) {
        hit = inner.score(tokens, id, weights);
        scores.set(kk, hit);
      }
      return hit;
    },
  };
}
