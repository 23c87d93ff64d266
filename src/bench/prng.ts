/**
 * Seeded randomness for the benchmark's synthetic data: the same seed gives the same catalog,
 * queries and events on every machine, so runs compare.
 */

/** A uniform generator on [0, 1). */
export type Rng = () => number;

/** mulberry32: tiny, fast, and good enough for test data (not for anything secret). */
export function createRng(seed: number): Rng {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** An integer in [min, max] inclusive. */
export function randInt(rng: Rng, min: number, max: number): number {
  return min + Math.floor(rng() * (max - min + 1));
}

/** One element of a non-empty list. */
export function pick<T>(rng: Rng, list: readonly T[]): T {
  const v = list[Math.floor(rng() * list.length)];
  if (v === undefined) throw new Error('pick: empty list');
  return v;
}

/**
 * Samples ranks 0…n-1 with probability ∝ 1/(rank+1)^s, the shape of word frequencies in real
 * text: a few words everywhere, a long tail that tells documents apart.
 */
export function zipfSampler(n: number, s = 1): (rng: Rng) => number {
  if (n <= 0) throw new Error('zipfSampler: n must be positive');
  const cumulative = new Float64Array(n);
  let total = 0;
  for (let r = 0; r < n; r++) {
    total += 1 / Math.pow(r + 1, s);
    cumulative[r] = total;
  }
  return (rng) => {
    const u = rng() * total;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((cumulative[mid] ?? 0) < u) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}
