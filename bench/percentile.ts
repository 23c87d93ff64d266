/** Latency summary of one benchmark series, in milliseconds. */
export interface LatencySummary {
  n: number;
  p50: number;
  p99: number;
  mean: number;
  max: number;
}

/**
 * Nearest-rank percentile of an ascending list: the smallest value with at least p% of the
 * samples at or below it. NaN for an empty list.
 */
export function percentile(sortedAsc: ArrayLike<number>, p: number): number {
  const n = sortedAsc.length;
  if (n === 0) return Number.NaN;
  const rank = Math.min(n, Math.max(1, Math.ceil((p / 100) * n)));
  return sortedAsc[rank - 1] ?? Number.NaN;
}

/** Summarise nanosecond samples (from `process.hrtime.bigint()` differences) in ms. */
export function summarizeNs(samplesNs: readonly number[]): LatencySummary {
  const ms = Float64Array.from(samplesNs, (ns) => ns / 1e6).sort();
  let sum = 0;
  for (const v of ms) sum += v;
  return {
    n: ms.length,
    p50: percentile(ms, 50),
    p99: percentile(ms, 99),
    mean: ms.length === 0 ? Number.NaN : sum / ms.length,
    max: ms.length === 0 ? Number.NaN : (ms[ms.length - 1] ?? Number.NaN),
  };
}
