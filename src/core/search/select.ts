import type { Candidate, Entry } from '../types.js';

/**
 * The k-th largest of `values[0..n)` (1 ≤ k ≤ n), by quickselect: O(n), reorders `values`.
 */
export function kthLargest(values: Float64Array, n: number, k: number): number {
  const target = n - k;
  let lo = 0;
  let hi = n - 1;
  while (lo < hi) {
    const pivot = values[(lo + hi) >>> 1]!;
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (values[i]! < pivot) i++;
      while (values[j]! > pivot) j--;
      if (i <= j) {
        const x = values[i]!;
        values[i++] = values[j]!;
        values[j--] = x;
      }
    }
    if (target <= j) hi = j;
    else if (target >= i) lo = i;
    else break;
  }
  return values[target]!;
}

/** Score descending, ties by entry id (the order every SearchIndex returns). */
export function byScoreThenId(a: Candidate, b: Candidate): number {
  return b.score - a.score || (a.entry.id < b.entry.id ? -1 : a.entry.id > b.entry.id ? 1 : 0);
}

/** Candidates for the first `n` documents with a positive score, best `k` first. */
export function topCandidates(docs: Int32Array, n: number, acc: Float64Array, entryOf: (doc: number) => Entry | undefined, k: number): Candidate[] {
  const out: Candidate[] = [];
  for (let i = 0; i < n; i++) {
    const d = docs[i]!;
    const score = acc[d]!;
    const entry = entryOf(d);
    if (score > 0 && entry) out.push({ entry, score });
  }
  return out.sort(byScoreThenId).slice(0, Math.max(0, k));
}
