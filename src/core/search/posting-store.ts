import { BM25_FIELDS, saturate } from '../bm25.js';
import type { Bm25Document, Bm25Params } from '../bm25.js';
import { entryDocument } from '../catalog/search-corpus.js';
import type { Entry } from '../types.js';
import { BODY, DocumentTable, repeatAdd, type SavedDocuments } from './document-table.js';
import { BODY_ONLY_LIMIT, OVERFLOW, packCounts } from './field-counts.js';
import { grow } from './grow.js';
import { gallop, TermPostings, type SavedPostings } from './term-postings.js';

const FIELDS = BM25_FIELDS.length;

/** Postings up to this many times longer than the documents sought are merged, not galloped. */
const MERGE_RATIO = 8;

/** Thrown when a removed entry no longer tokenizes to what was indexed (it was mutated in place). */
export class StaleEntryError extends Error {}

/** FNV-1a: a term's 32-bit hash, summed over a document's terms to fingerprint them. */
function hashTerm(term: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < term.length; i++) h = Math.imul(h ^ term.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/**
 * The catalog's BM25F statistics in typed arrays (internal to core/search; `PostingsIndex` is
 * the public face): postings with per-field counts (term-postings.ts) and per-document field
 * lengths (document-table.ts). Nothing per entry besides that: no `Map` of counts, no tokens.
 *
 * Adding an entry appends its postings; removing one takes back its df and lengths at once (the
 * entry is re-tokenized to learn its terms) and leaves its postings, dead, until `compact`.
 * Nothing else is touched: idf and length normalisation are computed at query time.
 *
 * Pruning needs an upper bound of each term's tf~, valid whatever the averages are now:
 * `maxTf[t]`, the largest tf~ of t at the reference averages `avgRef` (those of the last
 * compaction; a new posting raises it), scaled by `boundRatio`.
 */
export class PostingStore {
  readonly k1: number;
  readonly docs: DocumentTable;
  readonly postings = new TermPostings();
  readonly #weights: Float64Array;
  readonly avgRef = new Float64Array(FIELDS);
  /** A field went from empty to used since the reference averages were taken: compact before pruning. */
  boundsStale = false;

  // Per-document scratch while counting: slots' term ids and counts.
  #slotTerms: number[] = [];
  #slotCounts = new Uint32Array(0);
  /** `hashTerm` summed over the distinct terms of the document last counted. */
  #hash = 0;

  constructor(params: Readonly<Bm25Params>) {
    this.k1 = params.k1;
    this.#weights = Float64Array.from(BM25_FIELDS, (f) => params.weights[f]);
    this.docs = new DocumentTable(params.b, this.#weights);
  }

  /** Index `entries` from scratch, tokenizing each once; `onDocument` sees each document in order. */
  build(entries: readonly Entry[], onDocument?: (doc: number, document: Bm25Document) => void): void {
    this.postings.bulk = true;
    for (const entry of entries) {
      const document = entryDocument(entry);
      const doc = this.add(entry, document);
      onDocument?.(doc, document);
    }
    this.postings.bulk = false;
    this.compact();
  }

  get live(): number {
    return this.docs.live;
  }

  /** The store as plain arrays (compacted first when it is not): what a saved index holds. */
  saved(): SavedStore {
    if (this.postings.churn > 0 || this.docs.live !== this.docs.count || this.boundsStale) this.compact();
    return { postings: this.postings.saved(), docs: this.docs.saved(), avgRef: this.avgRef.slice() };
  }

  /**
   * Takes a saved store whose documents are `entries`, in order: no tokenizing, no counting.
   * @throws Error when the save does not fit together (the store is then unusable: discard it).
   */
  restore(entries: readonly Entry[], saved: SavedStore): void {
    if (saved.avgRef.length !== FIELDS) throw new Error('saved reference averages do not fit');
    this.postings.restore(saved.postings, entries.length);
    this.docs.restore(entries, saved.docs, saved.postings.terms.length);
    this.avgRef.set(saved.avgRef);
    this.boundsStale = false;
  }

  /**
   * How much larger than at the reference averages any tf~ can be now. B_f = 1 − b + b·len/avg
   * shrinks at most by avg/avgRef when the average grows (and never when it shrinks), so
   * tf~(now) ≤ max_f max(1, avg_f/avgRef_f) · tf~(reference) ≤ that · maxTf[t].
   */
  boundRatio(avg: Float64Array): number {
    let rho = 1;
    for (let f = 0; f < FIELDS; f++) {
      if (this.#weights[f] === 0 || avg[f] === 0) continue;
      const r = avg[f]! / this.avgRef[f]!;
      if (r > rho) rho = r;
    }
    return rho;
  }

  /** Index one entry under a new document number (its old version must be removed first). */
  add(entry: Entry, document: Bm25Document = entryDocument(entry)): number {
    const { docs, postings } = this;
    const d = docs.add(entry, document);
    for (let f = 0; f < FIELDS; f++) {
      if (!postings.bulk && this.avgRef[f] === 0 && this.#weights[f] !== 0 && docs.lens[f]![d]! > 0) this.boundsStale = true;
    }
    const slots = this.#count(document, true);
    docs.uniq[d] = slots;
    docs.termHash[d] = this.#hash;
    for (let s = 0; s < slots; s++) {
      const t = this.#slotTerms[s]!;
      const packed = packCounts(this.#slotCounts, s * FIELDS);
      if (packed === OVERFLOW) docs.setOverflow(d, t, this.#slotCounts.slice(s * FIELDS, (s + 1) * FIELDS));
      postings.append(t, d, packed);
      if (!postings.bulk && !this.boundsStale) {
        const tf = docs.tfAt(packed, d, t, this.avgRef);
        if (tf > postings.maxTf[t]!) postings.maxTf[t] = tf;
      }
    }
    return d;
  }

  /**
   * Take entry `id` out: its df and field lengths at once, its postings at the next compaction.
   * Its terms are learnt by tokenizing it again (the index keeps no copy of them); their count
   * and hash must match what was indexed.
   * @throws StaleEntryError when it no longer tokenizes to what was indexed; nothing is changed.
   */
  remove(id: string): boolean {
    const { docs, postings } = this;
    const d = docs.ids.get(id);
    if (d === undefined) return false;
    const slots = this.#count(entryDocument(docs.entries[d]!), false);
    if (slots !== docs.uniq[d] || this.#hash !== docs.termHash[d] || this.#slotTerms.slice(0, slots).some((t) => t < 0)) {
      throw new StaleEntryError(`entry ${id} changed after it was indexed`);
    }
    for (let s = 0; s < slots; s++) {
      const t = this.#slotTerms[s]!;
      postings.df[t] = postings.df[t]! - 1;
    }
    postings.deadPostings += slots;
    docs.remove(d);
    return true;
  }

  /**
   * Merge the postings into one base without dead documents or unused terms, renumber documents
   * densely (order kept, so postings stay sorted), then take new reference averages and exact
   * bounds. O(postings): callers run it when the churn is a fair share of the base.
   */
  compact(): void {
    const { newDoc, live } = this.docs.renumbering();
    const newTerm = this.postings.compact(newDoc, live);
    this.docs.compact(newDoc, live, newTerm);
    const { postings, docs } = this;
    docs.currentAvg(this.avgRef);
    for (let t = 0; t < postings.termCount; t++) {
      let max = 0;
      for (let i = postings.baseStart[t]!, end = postings.baseEnd[t]!; i < end; i++) {
        const tf = docs.tfAt(postings.basePacked[i]!, postings.baseDocs[i]!, t, this.avgRef);
        if (tf > max) max = tf;
      }
      postings.maxTf[t] = max;
    }
    this.boundsStale = false;
  }

  /**
   * Term-at-a-time: add term `t`'s contribution to every live document containing it (tf~ at
   * the averages of `docs.useAverages`). A document first seen in this query (`stamp[d] !==
   * gen`) starts at its contribution and is appended to `touched`. Returns the new count.
   */
  accumulate(t: number, wIdf: number, acc: Float64Array, stamp: Uint32Array, gen: number, touched: Int32Array, n: number): number {
    const { k1, docs, postings } = this;
    const alive = docs.alive;
    const skipDead = postings.deadPostings > 0;
    const base = postings.baseDocs;
    const packed = postings.basePacked;
    const bodyLens = docs.lens[BODY]!;
    const bodyUnits = docs.units[BODY]!;
    for (let i = postings.baseStart[t]!, end = postings.baseEnd[t]!; i < end; i++) {
      const d = base[i]!;
      if (skipDead && alive[d] === 0) continue;
      const p = packed[i]!;
      // Most postings hold a body count only: decoded inline.
      const tf = p !== OVERFLOW && p < BODY_ONLY_LIMIT ? repeatAdd(0, bodyUnits[bodyLens[d]!]!, p) : docs.tf(p, d, t);
      const c = saturate(wIdf, tf, k1);
      if (stamp[d] === gen) acc[d] = acc[d]! + c;
      else {
        stamp[d] = gen;
        acc[d] = c;
        touched[n++] = d;
      }
    }
    for (let i = postings.dHead[t]!; i !== -1; i = postings.dNext[i]!) {
      const d = postings.dDoc[i]!;
      if (alive[d] === 0) continue;
      const c = saturate(wIdf, docs.tf(postings.dPacked[i]!, d, t), k1);
      if (stamp[d] === gen) acc[d] = acc[d]! + c;
      else {
        stamp[d] = gen;
        acc[d] = c;
        touched[n++] = d;
      }
    }
    return n;
  }

  /**
   * Add term `t`'s contribution to `acc[d]` for the first `n` of `list` (ascending, live): a
   * merge along the postings when they are not much longer than the list, else a gallop per
   * document.
   */
  addTo(t: number, wIdf: number, list: Int32Array, n: number, acc: Float64Array): void {
    const { k1, docs, postings } = this;
    const { baseDocLimit } = postings;
    const base = postings.baseDocs;
    const packed = postings.basePacked;
    const end = postings.baseEnd[t]!;
    let at = postings.baseStart[t]!;
    const seek = end - at > MERGE_RATIO * n;
    let j = 0;
    for (; j < n && at < end; j++) {
      const d = list[j]!;
      if (d >= baseDocLimit) break;
      if (seek) at = gallop(base, at, end, d);
      else while (at < end && base[at]! < d) at++;
      if (at < end && base[at] === d) acc[d] = acc[d]! + saturate(wIdf, docs.tf(packed[at]!, d, t), k1);
    }
    let i = postings.dHead[t]!;
    if (i === -1) return;
    while (j < n && list[j]! < baseDocLimit) j++;
    for (; j < n && i !== -1; j++) {
      const d = list[j]!;
      while (i !== -1 && postings.dDoc[i]! < d) i = postings.dNext[i]!;
      if (i !== -1 && postings.dDoc[i] === d) acc[d] = acc[d]! + saturate(wIdf, docs.tf(postings.dPacked[i]!, d, t), k1);
    }
  }

  /**
   * Count `document`'s terms per field into the slots (fields with weight 0 left out, as in
   * `buildBm25Stats`); returns the number of distinct terms. With `create` false an unknown
   * term gets term id -1 (the caller treats that as a stale entry).
   */
  #count(document: Bm25Document, create: boolean): number {
    // Distinct words first, in a small per-document map (cheap: it stays in cache), then one
    // dictionary lookup per distinct word rather than per token. The map is new each time: a
    // long-lived map would hold every document's words across young-generation collections
    // and promote them, which grew the heap by ~500 MB while indexing 100k entries.
    const local = new Map<string, number>();
    let slots = 0;
    for (let f = 0; f < FIELDS; f++) {
      const tokens = document.fields[BM25_FIELDS[f]!];
      if (!tokens || tokens.length === 0 || this.#weights[f] === 0) continue;
      for (const term of tokens) {
        let s = local.get(term);
        if (s === undefined) {
          s = slots++;
          local.set(term, s);
          if (slots * FIELDS > this.#slotCounts.length) this.#slotCounts = grow(this.#slotCounts, slots * FIELDS);
          this.#slotCounts.fill(0, s * FIELDS, slots * FIELDS);
        }
        const at = s * FIELDS + f;
        this.#slotCounts[at] = this.#slotCounts[at]! + 1;
      }
    }
    let s = 0;
    let hash = 0;
    for (const term of local.keys()) {
      this.#slotTerms[s++] = create ? this.postings.intern(term) : (this.postings.termId(term) ?? -1);
      hash = (hash + hashTerm(term)) >>> 0;
    }
    this.#hash = hash;
    return slots;
  }
}

/** What `PostingStore.saved` returns and `restore` takes. */
export interface SavedStore {
  postings: SavedPostings;
  docs: SavedDocuments;
  avgRef: Float64Array<ArrayBuffer>;
}
