/**
 * Linear-time measurement without a wall-clock budget: the same work is timed on an input of size n
 * and of size 4n, interleaved and best of several rounds, so load on the machine hits both sizes
 * alike. Linear work costs about 4× more; quadratic about 16×. Sizes should sit above 128 KiB
 * for strings: V8 handles shorter ones differently (measured 8–20× from 64 to 128 KiB alone).
 */
export interface Growth {
  /** Best time at n, ms. */
  small: number;
  /** Best time at 4n, ms. */
  large: number;
  /** large / max(small, floorMs). */
  ratio: number;
}

export function growth<T>(make: (size: number) => T, run: (input: T) => void, size: number, opts: { rounds?: number; floorMs?: number } = {}): Growth {
  const smallInput = make(size);
  const largeInput = make(size * 4);
  const time = (input: T): number => {
    const t = performance.now();
    run(input);
    return performance.now() - t;
  };
  time(smallInput); // warm up
  let small = Number.POSITIVE_INFINITY;
  let large = Number.POSITIVE_INFINITY;
  for (let round = 0; round < (opts.rounds ?? 3); round++) {
    small = Math.min(small, time(smallInput));
    large = Math.min(large, time(largeInput));
  }
  return { small, large, ratio: large / Math.max(small, opts.floorMs ?? 2) };
}

/** Below this, growth reads as linear (4× expected); quadratic would be about 16×. */
export const LINEAR_RATIO = 9;
