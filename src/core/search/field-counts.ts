/**
 * One posting's term counts, one per BM25 field, packed into 32 bits so a posting costs a
 * document id and one word. Layout in BM25_FIELDS order (title, alerts, tags, description,
 * body): 4 + 1 + 5 + 6 + 16 bits. A posting always has a non-zero count somewhere, so the
 * packed value 0 is free to mean "does not fit; the counts are stored beside the postings".
 */

/** Bits per field, BM25_FIELDS order. Alerts are listed once per term, so one bit holds them. */
const BITS = [4, 1, 5, 6, 16] as const;

/** Right shift of each field's count (body in the low bits: most postings are body-only). */
export const COUNT_SHIFT: readonly number[] = [28, 27, 22, 16, 0];
export const COUNT_MASK: readonly number[] = BITS.map((b) => 2 ** b - 1);

/** 2 ** COUNT_SHIFT[f]: a count times this lands in its bits. */
const SCALE: readonly number[] = COUNT_SHIFT.map((s) => 2 ** s);

/** Packed values below this hold a body count only (the common case, decoded without a loop). */
export const BODY_ONLY_LIMIT = 2 ** 16;

/** The packed value that says "look the counts up in the overflow table". */
export const OVERFLOW = 0;

/**
 * Pack `counts[f]` for the five fields, or return OVERFLOW when one does not fit its bits.
 * @param counts BM25_FIELDS order; `offset` is where the five counts start.
 */
export function packCounts(counts: ArrayLike<number>, offset = 0): number {
  let packed = 0;
  for (let f = 0; f < BITS.length; f++) {
    const c = counts[offset + f] ?? 0;
    if (c > COUNT_MASK[f]!) return OVERFLOW;
    packed += c * SCALE[f]!;
  }
  return packed;
}
