/**
 * Samplers over a seeded generator (src/core/eval/prng.ts) for the benchmark's synthetic data.
 */
import type { Rng } from '../src/core/eval/prng.js';

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
