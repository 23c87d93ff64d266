/**
 * One backoff rule for every retry loop: exponential from a base, capped, optionally jittered
 * so that retries from many senders spread out, and always yielding to a server that said when
 * to come back (`Retry-After`, a rate limit's reset, Matrix's `retry_after_ms`).
 */

/** How a retry loop backs off. */
export interface BackoffPolicy {
  /** Wait after the first failure, ms. */
  baseMs: number;
  /** Longest wait, ms. */
  maxMs: number;
  /** Spread as a fraction of the wait: 0.2 waits between 80% and 120% of it (default 0: exact). */
  jitter?: number;
}

/**
 * Wait before the next attempt after the `failures`-th failure in a row (1 = the first):
 * `baseMs · 2^(failures-1)`, at most `maxMs`, spread by `jitter`. When the server named a wait
 * (`serverWaitMs`), that wins, never below `floorMs` (so a reset already past does not spin).
 * `random` is injectable for tests; it returns [0, 1).
 */
export function backoffDelay(
  policy: BackoffPolicy,
  failures: number,
  opts: { serverWaitMs?: number | undefined; floorMs?: number; random?: () => number } = {},
): number {
  if (opts.serverWaitMs !== undefined && Number.isFinite(opts.serverWaitMs)) return Math.max(opts.serverWaitMs, opts.floorMs ?? 0);
  const n = Math.max(1, Math.floor(failures));
  // 2^(n-1) overflows to Infinity past ~1000 failures; the cap holds either way.
  const exact = Math.min(policy.maxMs, policy.baseMs * 2 ** (n - 1));
  const jitter = Math.min(Math.max(policy.jitter ?? 0, 0), 1);
  if (jitter === 0) return exact;
  const r = (opts.random ?? Math.random)();
  return Math.round(exact * (1 - jitter + 2 * jitter * r));
}
