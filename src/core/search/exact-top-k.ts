import { saturate } from '../bm25.js';
import type { Candidate, Entry } from '../types.js';
import type { PostingStore } from './posting-store.js';
import type { QueryScratch } from './query-scratch.js';
import { kthLargest, topCandidates } from './select.js';

/** A query as the index scores it: its terms no entry lacks and not weighted 0. */
export interface ScoredQuery {
  /** Term ids in `scoringOrder` (rarest first, ties in query order). */
  terms: number[];
  /** Query weight × idf, per term. */
  wIdf: number[];
  /** Every weight × idf is finite and ≥ 0, so per-term upper bounds hold. */
  bounded: boolean;
}

/**
 * Relative slack on every pruning decision. Bounds are rounded floating point (~1e-15
 * relative); 1e-9 dwarfs that, so pruning never drops an entry that belongs in the top k,
 * ties included.
 */
const SLACK = 1e-9;

/** Terms whose bound is below this share of the strongest remaining one do not raise the floor. */
const STRONG_SHARE = 0.2;

const entryOf =
  (store: PostingStore) =>
  (d: number): Entry | undefined =>
    store.docs.entries[d];

/** Every posting of every term: the accumulators end up holding every entry's exact score. */
export function exhaustiveTopK(store: PostingStore, s: QueryScratch, q: ScoredQuery, k: number): Candidate[] {
  const gen = s.begin(store.docs.count);
  let n = 0;
  for (let j = 0; j < q.terms.length; j++) n = store.accumulate(q.terms[j]!, q.wIdf[j]!, s.acc, s.stamp, gen, s.docs, n);
  n = keep(s, n, k, 0, 0);
  return topCandidates(s.docs, n, s.acc, entryOf(store), k);
}

/**
 * Exact top k, term at a time with MaxScore-style pruning (`rho`: see `PostingStore.boundRatio`).
 *
 * Phase 1 adds every posting of the rarest terms to score accumulators, until the sum of the
 * remaining terms' upper bounds falls below a floor: the k-th best of k entries' scores, known
 * to be reached (`raiseFloor`). An entry not seen by then cannot make the top k. Phase 2 adds
 * the remaining terms only to the entries seen, merging or galloping along the postings, and
 * drops an entry as soon as its partial score plus the remaining bounds falls below the floor.
 * So the common words of a query, whose postings are long and whose idf is small, are looked
 * up for a few entries instead of scanned. Terms are added in scoring order in both phases, so
 * the survivors' sums are bit-identical to the exhaustive scan's.
 */
export function prunedTopK(store: PostingStore, s: QueryScratch, q: ScoredQuery, k: number, rho: number): Candidate[] {
  const gen = s.begin(store.docs.count);
  const m = q.terms.length;
  const bound = q.terms.map((t, j) => saturate(q.wIdf[j]!, rho * store.postings.maxTf[t]!, store.k1) * (1 + SLACK));
  // rest[i]: the most that the terms from i on can add to any entry's score.
  const rest = new Float64Array(m + 1);
  for (let i = m - 1; i >= 0; i--) rest[i] = rest[i + 1]! + bound[i]!;

  let floor = 0;
  let n = 0;
  let raisedAt = 0;
  let i = 0;
  for (; i < m; i++) {
    // Raising the floor costs O(touched): do it again only once the touched set has doubled.
    if (n >= k && n >= 2 * raisedAt) {
      floor = raiseFloor(store, s, q, bound, i, n, k, floor);
      raisedAt = n;
    }
    if (rest[i]! * (1 + SLACK) < floor * (1 - SLACK)) break;
    n = store.accumulate(q.terms[i]!, q.wIdf[i]!, s.acc, s.stamp, gen, s.docs, n);
  }
  // Entering phase 2 with a fresh floor pays: complete the current leaders with every
  // remaining term, so the floor is their exact k-th score (-10% p99 on recall queries).
  if (i < m && n >= k && n > raisedAt) floor = raiseFloor(store, s, q, bound, i, n, k, floor, true);
  n = keep(s, n, k, rest[i]!, floor);
  if (i < m) n = s.sortDocs(n, store.docs.count);
  for (; i < m; i++) {
    store.addTo(q.terms[i]!, q.wIdf[i]!, s.docs, n, s.acc);
    n = keep(s, n, k, rest[i + 1]!, floor);
  }
  return topCandidates(s.docs, n, s.acc, entryOf(store), k);
}

/**
 * Add to the partial scores of the k leading entries (those not done yet) the strong terms
 * from `from` on, and return the k-th best of all such sums: each is a lower bound of an
 * entry's score, so the k-th score of the final top k cannot be lower. The weak terms (long
 * postings, small idf) are left out unless `everyTerm`: seeking in them costs more than they add.
 * `s.leadAcc` is the k-th partial score at the previous call: partial scores only grow, so
 * only entries at or above it can lead now, and the selection runs over those alone.
 */
function raiseFloor(
  store: PostingStore,
  s: QueryScratch,
  q: ScoredQuery,
  bound: readonly number[],
  from: number,
  n: number,
  k: number,
  floor: number,
  everyTerm = false,
): number {
  const { acc, docs, values, full, leaders } = s;
  let c = 0;
  for (let i = 0; i < n; i++) {
    const d = docs[i]!;
    const a = acc[d]!;
    if (a >= s.leadAcc) {
      values[c] = a;
      leaders[c++] = d;
    }
  }
  const kth = kthLargest(values, c, k);
  s.leadAcc = kth;
  let count = 0;
  for (let i = 0; i < c && count < 2 * k; i++) {
    const d = leaders[i]!;
    if (acc[d]! < kth || s.fullStamp[d] === s.gen) continue;
    s.fullStamp[d] = s.gen;
    full[d] = acc[d]!;
    leaders[count++] = d;
    s.scoredDocs[s.scored++] = d;
  }
  const batch = leaders.subarray(0, count).sort();
  let strongest = 0;
  for (let j = from; j < bound.length; j++) strongest = Math.max(strongest, bound[j]!);
  for (let j = from; j < bound.length; j++) {
    if (everyTerm || bound[j]! >= strongest * STRONG_SHARE) store.addTo(q.terms[j]!, q.wIdf[j]!, batch, count, full);
  }
  if (s.scored < k) return floor;
  for (let i = 0; i < s.scored; i++) values[i] = full[s.scoredDocs[i]!]!;
  return Math.max(floor, kthLargest(values, s.scored, k));
}

/**
 * Keep, in order, the first `n` documents that can still make the top k: partial score plus
 * `rest` (what the terms not added yet can bring) not below the floor, which is `floor` or,
 * before any entry was scored ahead, the k-th partial score (partial scores only grow).
 */
function keep(s: QueryScratch, n: number, k: number, rest: number, floor: number): number {
  const { acc, docs } = s;
  let min = floor;
  if (min <= 0 && n > k) {
    const values = s.values;
    for (let i = 0; i < n; i++) values[i] = acc[docs[i]!]!;
    min = kthLargest(values, n, k);
  }
  if (min <= 0) return n;
  min *= 1 - SLACK;
  let kept = 0;
  for (let i = 0; i < n; i++) {
    const d = docs[i]!;
    if (acc[d]! + rest >= min) docs[kept++] = d;
  }
  return kept;
}
