/**
 * Per-index working memory for one query at a time (recall is synchronous): score accumulators
 * and document lists sized to the document count, reused across queries. A generation counter
 * marks what the current query wrote, so nothing has to be cleared between queries.
 */
export class QueryScratch {
  /** Score accumulators, valid where `stamp[d] === gen`. */
  acc = new Float64Array(0);
  stamp = new Uint32Array(0);
  gen = 0;
  /** The documents the query touched (then its candidates). */
  docs = new Int32Array(0);
  /** Copies of scores for selection (reordered freely). */
  values = new Float64Array(0);
  /** Lower bounds of some entries' scores (`fullStamp[d] === gen`), see `raiseFloor`. */
  full = new Float64Array(0);
  fullStamp = new Uint32Array(0);
  scoredDocs = new Int32Array(0);
  scored = 0;
  /** The k-th partial score when leaders were last picked (`raiseFloor`). */
  leadAcc = 0;
  leaders = new Int32Array(0);
  #bits = new Int32Array(0);

  /** Start a query over `docCount` document numbers; returns its generation. */
  begin(docCount: number): number {
    if (this.acc.length < docCount) {
      const size = Math.max(docCount, this.acc.length * 2);
      this.acc = new Float64Array(size);
      this.stamp = new Uint32Array(size);
      this.docs = new Int32Array(size);
      this.values = new Float64Array(size);
      this.full = new Float64Array(size);
      this.fullStamp = new Uint32Array(size);
      this.scoredDocs = new Int32Array(size);
      this.leaders = new Int32Array(size);
    }
    this.gen = (this.gen + 1) >>> 0;
    if (this.gen === 0) {
      this.stamp.fill(0);
      this.fullStamp.fill(0);
      this.gen = 1;
    }
    this.scored = 0;
    this.leadAcc = 0;
    return this.gen;
  }

  /**
   * Sort the first `n` of `docs` ascending without duplicates; returns how many remain. Through
   * a bitmap over all `docCount` numbers when that is cheaper than comparing (V8's typed-array
   * sort is slow), else a sort.
   */
  sortDocs(n: number, docCount: number): number {
    const docs = this.docs;
    const words = (docCount + 31) >>> 5;
    if (n * 8 < words) {
      docs.subarray(0, n).sort();
      let unique = 0;
      for (let i = 0; i < n; i++) if (i === 0 || docs[i] !== docs[i - 1]) docs[unique++] = docs[i]!;
      return unique;
    }
    if (this.#bits.length < words) this.#bits = new Int32Array(Math.max(words, this.#bits.length * 2));
    const bits = this.#bits;
    bits.fill(0, 0, words);
    for (let i = 0; i < n; i++) {
      const d = docs[i]!;
      bits[d >>> 5] = bits[d >>> 5]! | (1 << (d & 31));
    }
    let out = 0;
    for (let w = 0; w < words; w++) {
      let x = bits[w]!;
      while (x !== 0) {
        const low = x & -x;
        docs[out++] = (w << 5) + 31 - Math.clz32(low);
        x ^= low;
      }
    }
    return out;
  }
}
