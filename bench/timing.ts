import { summarizeNs } from './percentile.js';
import type { LatencySummary } from './percentile.js';

/** Keeps results observable so the JIT cannot drop the work being timed. */
let sink = 0;
export function consume(n: number): void {
  sink = (sink + n) | 0;
}

/** Collect garbage when the process runs with `--expose-gc`, so one phase's garbage is not billed to the next. */
export function collectGarbage(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc) gc();
}

export interface SeriesOptions<T> {
  /**
   * Untimed calls first (other inputs than the timed ones), so the JIT has compiled the hot
   * path; cut short after a quarter of `budgetMs`.
   */
  warmup: readonly T[];
  /** Stop early once the timed calls have taken this long (the slow baselines at 100k). */
  budgetMs: number;
  /** Never fewer timed calls than this, whatever the budget. */
  minSamples: number;
}

/**
 * Time `fn` once per input with `process.hrtime.bigint()`. Returns the summary and whether the
 * budget cut the series short (then `n` is below `inputs.length`).
 */
export function timeSeries<T>(inputs: readonly T[], fn: (input: T) => number, opts: SeriesOptions<T>): LatencySummary & { truncated: boolean } {
  // Warm-up gets a quarter of the budget: enough calls for the JIT, not minutes of a slow baseline.
  const warmEnd = process.hrtime.bigint() + BigInt(Math.round((opts.budgetMs / 4) * 1e6));
  for (const [i, input] of opts.warmup.entries()) {
    consume(fn(input));
    if (i >= 5 && process.hrtime.bigint() > warmEnd) break;
  }
  collectGarbage();
  const samples: number[] = [];
  const budgetNs = BigInt(Math.round(opts.budgetMs * 1e6));
  const start = process.hrtime.bigint();
  for (const input of inputs) {
    const t0 = process.hrtime.bigint();
    const r = fn(input);
    const t1 = process.hrtime.bigint();
    consume(r);
    samples.push(Number(t1 - t0));
    if (samples.length >= opts.minSamples && t1 - start > budgetNs) break;
  }
  return { ...summarizeNs(samples), truncated: samples.length < inputs.length };
}
