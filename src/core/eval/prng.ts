/**
 * Seeded randomness: the same seed gives the same folds in `reprise eval` and the same synthetic
 * catalog, queries and events in the benchmark on every machine, so runs compare.
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
