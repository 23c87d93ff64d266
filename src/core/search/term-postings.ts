import { grow } from './grow.js';

/**
 * The term dictionary and postings (internal to core/search): term → term id, and per term its
 * document frequency, pruning bound and postings — document numbers with their packed per-field
 * counts (field-counts.ts), in document order.
 *
 * Postings live in two segments. The base is one CSR block: term t's postings are
 * `baseDocs/basePacked[baseStart[t] .. baseEnd[t])`, written by `compact`. Postings added later
 * go to the delta: an append-only log with one linked chain per term, also in document order,
 * since new documents get numbers above every base document. Postings of removed documents stay
 * until `compact`, which drops them and merges the delta into a new base.
 */
export class TermPostings {
  readonly #terms = new Map<string, number>();
  termCount = 0;
  /** Live documents containing the term. */
  df = new Int32Array(0);
  /** Largest tf~ of the term at the reference averages (see `PostingStore.boundRatio`). */
  maxTf = new Float64Array(0);
  baseStart = new Uint32Array(0);
  baseEnd = new Uint32Array(0);
  baseDocs = new Uint32Array(0);
  basePacked = new Uint32Array(0);
  basePostings = 0;
  /** Documents with a lower number are in the base segment; the others only in the delta. */
  baseDocLimit = 0;

  dHead = new Int32Array(0);
  #dTail = new Int32Array(0);
  dDoc = new Uint32Array(0);
  dPacked = new Uint32Array(0);
  dNext = new Int32Array(0);
  #dTerm = new Uint32Array(0);
  dLen = 0;
  /** Where each delta document's postings start in the log (they are appended together). */
  #dFirst = new Uint32Array(0);
  /** Postings of documents removed since the last compaction. */
  deadPostings = 0;
  /** While true (initial build, nothing queried until `compact`), no chains are kept. */
  bulk = false;

  termId(term: string): number | undefined {
    return this.#terms.get(term);
  }

  /** The id of `term`, created (with no postings) if new. */
  intern(term: string): number {
    const known = this.#terms.get(term);
    if (known !== undefined) return known;
    const t = this.termCount++;
    this.#terms.set(term, t);
    const cap = this.termCount;
    this.df = grow(this.df, cap);
    this.maxTf = grow(this.maxTf, cap);
    this.baseStart = grow(this.baseStart, cap);
    this.baseEnd = grow(this.baseEnd, cap);
    this.dHead = grow(this.dHead, cap, -1);
    this.#dTail = grow(this.#dTail, cap, -1);
    return t;
  }

  /** Postings written or dead since the last compaction. */
  get churn(): number {
    return this.dLen + this.deadPostings;
  }

  /** Add document `d` (above every document so far) to term `t`'s postings. */
  append(t: number, d: number, packed: number): void {
    const i = this.dLen++;
    if (i >= this.dDoc.length) {
      this.dDoc = grow(this.dDoc, i + 1);
      this.dPacked = grow(this.dPacked, i + 1);
      this.#dTerm = grow(this.#dTerm, i + 1);
      if (!this.bulk) this.dNext = grow(this.dNext, i + 1);
    }
    if (i === 0 || this.dDoc[i - 1] !== d) {
      this.#dFirst = grow(this.#dFirst, d - this.baseDocLimit + 1);
      this.#dFirst[d - this.baseDocLimit] = i;
    }
    this.dDoc[i] = d;
    this.dPacked[i] = packed;
    this.#dTerm[i] = t;
    this.df[t] = this.df[t]! + 1;
    if (this.bulk) return;
    this.dNext[i] = -1;
    const tail = this.#dTail[t]!;
    if (tail === -1) this.dHead[t] = i;
    else this.dNext[tail] = i;
    this.#dTail[t] = i;
  }

  /** The packed posting of term `t` in document `d`, or -1 when `d` does not contain `t`. */
  find(t: number, d: number): number {
    if (d < this.baseDocLimit) {
      const docs = this.baseDocs;
      const end = this.baseEnd[t]!;
      const i = gallop(docs, this.baseStart[t]!, end, d);
      return i < end && docs[i] === d ? this.basePacked[i]! : -1;
    }
    // A delta document's postings are contiguous in the log: scan them, not the term's chain.
    const first = this.#dFirst[d - this.baseDocLimit];
    if (first === undefined) return -1;
    for (let i = first; i < this.dLen && this.dDoc[i] === d; i++) if (this.#dTerm[i] === t) return this.dPacked[i]!;
    return -1;
  }

  /**
   * One base of the live postings: documents renumbered by `newDoc` (-1 = dead), terms nobody
   * has any more dropped. Returns the new id of every term (-1 = dropped). O(postings).
   */
  compact(newDoc: Int32Array, live: number): Int32Array {
    const newTerm = new Int32Array(this.termCount);
    let terms = 0;
    for (let t = 0; t < this.termCount; t++) newTerm[t] = this.df[t]! > 0 ? terms++ : -1;
    const start = new Uint32Array(terms + 1);
    const df = new Int32Array(terms);
    for (let t = 0; t < this.termCount; t++) if (newTerm[t]! >= 0) df[newTerm[t]!] = this.df[t]!;
    for (let t = 0; t < terms; t++) start[t + 1] = start[t]! + df[t]!;
    const total = start[terms]!;
    const docs = new Uint32Array(total);
    const packed = new Uint32Array(total);
    const cursor = start.slice(0, terms);
    // Per term: its live base postings, then its live delta postings (higher documents).
    for (let t = 0; t < this.termCount; t++) {
      const nt = newTerm[t]!;
      if (nt < 0) continue;
      for (let i = this.baseStart[t]!, end = this.baseEnd[t]!; i < end; i++) {
        const d = newDoc[this.baseDocs[i]!]!;
        if (d < 0) continue;
        const at = cursor[nt]!++;
        docs[at] = d;
        packed[at] = this.basePacked[i]!;
      }
    }
    for (let i = 0; i < this.dLen; i++) {
      const d = newDoc[this.dDoc[i]!]!;
      if (d < 0) continue;
      const at = cursor[newTerm[this.#dTerm[i]!]!]!++;
      docs[at] = d;
      packed[at] = this.dPacked[i]!;
    }
    for (let t = 0; t < terms; t++) {
      if (cursor[t] !== start[t + 1]) throw new Error(`postings of term ${t} disagree with its df; index corrupt`);
    }
    for (const [term, t] of this.#terms) {
      if (newTerm[t]! >= 0) this.#terms.set(term, newTerm[t]!);
      else this.#terms.delete(term);
    }
    this.termCount = terms;
    this.df = df;
    this.maxTf = new Float64Array(terms);
    this.baseStart = start.subarray(0, terms);
    this.baseEnd = start.subarray(1, terms + 1);
    this.baseDocs = docs;
    this.basePacked = packed;
    this.basePostings = total;
    this.baseDocLimit = live;
    this.dHead = new Int32Array(terms).fill(-1);
    this.#dTail = new Int32Array(terms).fill(-1);
    this.dDoc = new Uint32Array(0);
    this.dPacked = new Uint32Array(0);
    this.dNext = new Int32Array(0);
    this.#dTerm = new Uint32Array(0);
    this.#dFirst = new Uint32Array(0);
    this.dLen = 0;
    this.deadPostings = 0;
    return newTerm;
  }

  /**
   * The compacted postings as plain arrays (a saved index): terms in id order, then per term
   * its df, bound and base postings. Only a compacted store (no delta, nothing dead) is saved.
   */
  saved(): SavedPostings {
    if (this.dLen !== 0 || this.deadPostings !== 0) throw new Error('only compacted postings can be saved; compact first');
    const terms = Array.from<string>({ length: this.termCount });
    for (const [term, t] of this.#terms) terms[t] = term;
    const start = new Uint32Array(this.termCount + 1);
    start.set(this.baseStart.subarray(0, this.termCount));
    start[this.termCount] = this.basePostings;
    return {
      terms,
      df: this.df.slice(0, this.termCount),
      maxTf: this.maxTf.slice(0, this.termCount),
      start,
      docs: this.baseDocs.slice(0, this.basePostings),
      packed: this.basePacked.slice(0, this.basePostings),
    };
  }

  /**
   * Takes the postings of a saved index over `live` documents, as `compact` leaves them.
   * @throws Error when the arrays do not fit together (a damaged save): nothing is kept.
   */
  restore(saved: SavedPostings, live: number): void {
    const { terms, df, maxTf, start, docs, packed } = saved;
    const n = terms.length;
    const total = start[n];
    const fits =
      df.length === n &&
      maxTf.length === n &&
      start.length === n + 1 &&
      total === docs.length &&
      packed.length === total &&
      start[0] === 0 &&
      new Set(terms).size === n;
    if (!fits) throw new Error('saved postings are inconsistent');
    for (let t = 0; t < n; t++) {
      const from = start[t]!;
      const to = start[t + 1]!;
      if (to - from !== df[t] || df[t]! <= 0) throw new Error(`saved postings of term ${t} disagree with its df`);
      // Each term's documents ascend and exist: what every search assumes.
      for (let i = from; i < to; i++)
        if (docs[i]! >= live || (i > from && docs[i]! <= docs[i - 1]!)) throw new Error(`saved postings of term ${t} are out of order`);
    }
    this.#terms.clear();
    terms.forEach((term, t) => this.#terms.set(term, t));
    this.termCount = n;
    // Copies: a deserialized array is a view into the whole saved file, which would stay alive.
    const own = start.slice();
    this.df = df.slice();
    this.maxTf = maxTf.slice();
    this.baseStart = own.subarray(0, n);
    this.baseEnd = own.subarray(1, n + 1);
    this.baseDocs = docs.slice();
    this.basePacked = packed.slice();
    this.basePostings = total;
    this.baseDocLimit = live;
    this.dHead = new Int32Array(n).fill(-1);
    this.#dTail = new Int32Array(n).fill(-1);
  }
}

/** What `TermPostings.saved` returns and `restore` takes. */
export interface SavedPostings {
  terms: string[];
  df: Int32Array<ArrayBuffer>;
  maxTf: Float64Array<ArrayBuffer>;
  /** Term t's postings are docs/packed[start[t] .. start[t + 1]). */
  start: Uint32Array<ArrayBuffer>;
  docs: Uint32Array<ArrayBuffer>;
  packed: Uint32Array<ArrayBuffer>;
}

/** First index in [lo, end) whose document is ≥ `target` (or `end`): exponential then binary search. */
export function gallop(docs: Uint32Array, lo: number, end: number, target: number): number {
  let step = 1;
  let hi = lo;
  while (hi < end && docs[hi]! < target) {
    lo = hi + 1;
    hi += step;
    step *= 2;
  }
  if (hi > end) hi = end;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (docs[mid]! < target) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
