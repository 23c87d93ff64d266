import { BM25_FIELDS, fieldNorm } from '../bm25.js';
import type { Bm25Document } from '../bm25.js';
import type { Entry } from '../types.js';
import { COUNT_MASK, COUNT_SHIFT, OVERFLOW } from './field-counts.js';
import { grow } from './grow.js';

const FIELDS = BM25_FIELDS.length;
const [TITLE_SHIFT, ALERTS_SHIFT, TAGS_SHIFT, DESCRIPTION_SHIFT] = COUNT_SHIFT as [number, number, number, number, number];
const [, ALERTS_MASK, TAGS_MASK, DESCRIPTION_MASK, BODY_MASK] = COUNT_MASK as [number, number, number, number, number];

/** Index of the body field, whose count alone most postings hold. */
export const BODY = BM25_FIELDS.indexOf('body');

/** `tf + x + x + …` (`c` times): the per-occurrence additions of `buildBm25Stats`, bit for bit. */
export function repeatAdd(tf: number, x: number, c: number): number {
  for (; c > 0; c--) tf += x;
  return tf;
}

/**
 * Per document (internal to core/search): its entry, field lengths and liveness, and tf~ from a
 * posting's packed counts. Document numbers are handed out in order and never reused until
 * `compact` renumbers the live ones densely.
 *
 * tf~ is computed at query time against the current average field lengths, as `buildBm25Stats`
 * computes it (same operations, same order), so adding or removing a document never touches
 * the others. w_f/B_f depends on a document only through its field length, so it is tabulated
 * per length (`useAverages`) instead of divided per posting.
 */
export class DocumentTable {
  readonly #b: number;
  /** Field weights, BM25_FIELDS order. */
  readonly #weights: Float64Array;
  /** Document numbers handed out (live and dead). */
  count = 0;
  live = 0;
  entries: (Entry | undefined)[] = [];
  alive = new Uint8Array(0);
  /** Distinct terms per document: its number of postings. */
  uniq = new Uint32Array(0);
  /** Sum of the document's distinct terms' hashes: tells whether it still tokenizes the same. */
  termHash = new Uint32Array(0);
  /** Field lengths in tokens, per field then document. */
  lens: Uint32Array[] = BM25_FIELDS.map(() => new Uint32Array(0));
  readonly lenSum = new Float64Array(FIELDS);
  readonly ids = new Map<string, number>();
  /** Longest field seen per field: the unit tables' size. */
  readonly #maxLen = new Uint32Array(FIELDS);
  /** Per field, w_f/B_f indexed by field length, at the averages `#unitAvg`. */
  readonly units: Float64Array[] = BM25_FIELDS.map(() => new Float64Array(0));
  readonly #unitAvg = new Float64Array(FIELDS).fill(Number.NaN);
  /** Counts that do not fit a packed word: document → term id → counts per field. */
  #overflow = new Map<number, Map<number, Uint32Array>>();

  constructor(b: number, weights: Float64Array) {
    this.#b = b;
    this.#weights = weights;
  }

  /** Record a new document (its field lengths) and return its number. */
  add(entry: Entry, document: Bm25Document): number {
    const d = this.count++;
    if (d >= this.alive.length) {
      this.alive = grow(this.alive, d + 1);
      this.uniq = grow(this.uniq, d + 1);
      this.termHash = grow(this.termHash, d + 1);
      this.lens = this.lens.map((a) => grow(a, d + 1));
    }
    this.alive[d] = 1;
    this.entries[d] = entry;
    this.ids.set(entry.id, d);
    this.live++;
    for (let f = 0; f < FIELDS; f++) {
      const len = document.fields[BM25_FIELDS[f]!]?.length ?? 0;
      this.lens[f]![d] = len;
      this.lenSum[f] = this.lenSum[f]! + len;
      if (len > this.#maxLen[f]!) this.#maxLen[f] = len;
    }
    return d;
  }

  /** Mark `d` dead and take its lengths out of the averages. */
  remove(d: number): void {
    for (let f = 0; f < FIELDS; f++) this.lenSum[f] = this.lenSum[f]! - this.lens[f]![d]!;
    this.#overflow.delete(d);
    this.alive[d] = 0;
    this.ids.delete(this.entries[d]!.id);
    this.entries[d] = undefined;
    this.live--;
  }

  /** Keep counts of term `t` in `d` that `packCounts` could not pack (BM25_FIELDS order). */
  setOverflow(d: number, t: number, counts: Uint32Array): void {
    let byTerm = this.#overflow.get(d);
    if (!byTerm) this.#overflow.set(d, (byTerm = new Map()));
    byTerm.set(t, counts);
  }

  /** Average length of each field over live documents, as `buildBm25Stats` computes it. */
  currentAvg(out: Float64Array): Float64Array {
    for (let f = 0; f < FIELDS; f++) out[f] = this.live === 0 ? 0 : this.lenSum[f]! / this.live;
    return out;
  }

  /** Make `tf` compute at averages `avg` (once per query); O(longest field) when one moved. */
  useAverages(avg: Float64Array): void {
    for (let f = 0; f < FIELDS; f++) {
      if (avg[f] === this.#unitAvg[f] && this.units[f]!.length > this.#maxLen[f]!) continue;
      const units = new Float64Array(this.#maxLen[f]! + 1);
      const w = this.#weights[f]!;
      for (let len = 0; len < units.length; len++) units[len] = w / fieldNorm(this.#b, len, avg[f]!);
      this.units[f] = units;
      this.#unitAvg[f] = avg[f]!;
    }
  }

  /**
   * tf~ of term `t` in document `d` from its packed posting, at the averages of `useAverages`:
   * per field in BM25_FIELDS order, w_f/B_f added once per occurrence — the very additions
   * `buildBm25Stats` makes, so the result is bit-identical. Unrolled over the five fields.
   */
  tf(packed: number, d: number, t: number): number {
    const units = this.units;
    const lens = this.lens;
    if (packed === OVERFLOW) {
      const counts = this.#overflow.get(d)?.get(t);
      let tf = 0;
      for (let f = 0; f < FIELDS; f++) tf = repeatAdd(tf, units[f]![lens[f]![d]!]!, counts?.[f] ?? 0);
      return tf;
    }
    let tf = 0;
    let c = packed >>> TITLE_SHIFT;
    if (c !== 0) tf = repeatAdd(tf, units[0]![lens[0]![d]!]!, c);
    c = (packed >>> ALERTS_SHIFT) & ALERTS_MASK;
    if (c !== 0) tf = repeatAdd(tf, units[1]![lens[1]![d]!]!, c);
    c = (packed >>> TAGS_SHIFT) & TAGS_MASK;
    if (c !== 0) tf = repeatAdd(tf, units[2]![lens[2]![d]!]!, c);
    c = (packed >>> DESCRIPTION_SHIFT) & DESCRIPTION_MASK;
    if (c !== 0) tf = repeatAdd(tf, units[3]![lens[3]![d]!]!, c);
    c = packed & BODY_MASK;
    if (c !== 0) tf = repeatAdd(tf, units[4]![lens[4]![d]!]!, c);
    return tf;
  }

  /** `tf` at other averages (pruning bounds): divides per field, leaves the tables alone. */
  tfAt(packed: number, d: number, t: number, avg: Float64Array): number {
    const counts = packed === OVERFLOW ? this.#overflow.get(d)?.get(t) : undefined;
    let tf = 0;
    for (let f = 0; f < FIELDS; f++) {
      const c = counts ? counts[f]! : (packed >>> COUNT_SHIFT[f]!) & COUNT_MASK[f]!;
      if (c > 0) tf = repeatAdd(tf, this.#weights[f]! / fieldNorm(this.#b, this.lens[f]![d]!, avg[f]!), c);
    }
    return tf;
  }

  /** New number of every document: its rank among the live ones, or -1 when dead. */
  renumbering(): { newDoc: Int32Array; live: number } {
    const newDoc = new Int32Array(this.count);
    let live = 0;
    for (let d = 0; d < this.count; d++) newDoc[d] = this.alive[d] ? live++ : -1;
    return { newDoc, live };
  }

  /** The documents of a compacted table as plain arrays (a saved index); entries are saved apart. */
  saved(): SavedDocuments {
    if (this.live !== this.count) throw new Error('only a compacted document table can be saved; compact first');
    const n = this.count;
    const overflow: SavedDocuments['overflow'] = [];
    for (const [d, byTerm] of this.#overflow) for (const [t, counts] of byTerm) overflow.push([d, t, counts.slice()]);
    return { uniq: this.uniq.slice(0, n), termHash: this.termHash.slice(0, n), lens: this.lens.map((a) => a.slice(0, n)), overflow };
  }

  /**
   * Takes a saved table whose documents are `entries`, in order (as `compact` leaves them).
   * @throws Error when the arrays do not fit `entries` (a damaged save).
   */
  restore(entries: readonly Entry[], saved: SavedDocuments, terms: number): void {
    const n = entries.length;
    const { uniq, termHash, lens, overflow } = saved;
    if (uniq.length !== n || termHash.length !== n || lens.length !== FIELDS || lens.some((a) => a.length !== n))
      throw new Error('saved documents do not fit the entries');
    const byDoc = new Map<number, Map<number, Uint32Array>>();
    for (const [d, t, counts] of overflow) {
      if (!(d >= 0 && d < n && t >= 0 && t < terms && counts.length === FIELDS)) throw new Error('saved field counts are out of range');
      let byTerm = byDoc.get(d);
      if (!byTerm) byDoc.set(d, (byTerm = new Map()));
      byTerm.set(t, counts.slice());
    }
    this.ids.clear();
    entries.forEach((e, d) => this.ids.set(e.id, d));
    if (this.ids.size !== n) throw new Error('saved entries repeat an id');
    this.entries = entries.slice();
    this.count = n;
    this.live = n;
    this.alive = new Uint8Array(n).fill(1);
    // Copies: a deserialized array is a view into the whole saved file, which would stay alive.
    this.uniq = uniq.slice();
    this.termHash = termHash.slice();
    this.lens = lens.map((a) => a.slice());
    this.#overflow = byDoc;
    for (let f = 0; f < FIELDS; f++) {
      let sum = 0;
      let max = 0;
      for (const len of lens[f]!) {
        sum += len;
        if (len > max) max = len;
      }
      this.lenSum[f] = sum;
      this.#maxLen[f] = max;
    }
  }

  /** Drop dead documents and renumber the others (`renumbering`); term ids change by `newTerm`. */
  compact(newDoc: Int32Array, live: number, newTerm: Int32Array): void {
    const entries: Entry[] = [];
    const uniq = new Uint32Array(live);
    const termHash = new Uint32Array(live);
    const lens = BM25_FIELDS.map(() => new Uint32Array(live));
    for (let d = 0; d < this.count; d++) {
      const nd = newDoc[d]!;
      if (nd < 0) continue;
      entries[nd] = this.entries[d]!;
      uniq[nd] = this.uniq[d]!;
      termHash[nd] = this.termHash[d]!;
      for (let f = 0; f < FIELDS; f++) lens[f]![nd] = this.lens[f]![d]!;
    }
    for (const [id, d] of this.ids) this.ids.set(id, newDoc[d]!);
    const overflow = new Map<number, Map<number, Uint32Array>>();
    for (const [d, byTerm] of this.#overflow) overflow.set(newDoc[d]!, new Map([...byTerm].map(([t, c]) => [newTerm[t]!, c])));
    this.#overflow = overflow;
    this.entries = entries;
    this.uniq = uniq;
    this.termHash = termHash;
    this.lens = lens;
    this.alive = new Uint8Array(live).fill(1);
    this.count = live;
    for (let f = 0; f < FIELDS; f++) this.#maxLen[f] = lens[f]!.reduce((a, b) => (b > a ? b : a), 0);
  }
}

/** What `DocumentTable.saved` returns and `restore` takes. */
export interface SavedDocuments {
  uniq: Uint32Array<ArrayBuffer>;
  termHash: Uint32Array<ArrayBuffer>;
  /** Field lengths, BM25_FIELDS order. */
  lens: Uint32Array<ArrayBuffer>[];
  /** Counts too large to pack: [document, term, counts per field]. */
  overflow: Array<[number, number, Uint32Array<ArrayBuffer>]>;
}
