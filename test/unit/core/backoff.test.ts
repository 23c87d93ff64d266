import { describe, expect, it } from 'vitest';
import { backoffDelay } from '../../../src/core/backoff.js';

const policy = { baseMs: 1000, maxMs: 30_000 };

describe('backoffDelay', () => {
  it('doubles from the base per failure, up to the cap', () => {
    expect([1, 2, 3, 4, 5, 6, 7].map((n) => backoffDelay(policy, n))).toEqual([1000, 2000, 4000, 8000, 16_000, 30_000, 30_000]);
    // Absurd counts stay at the cap instead of overflowing.
    expect(backoffDelay(policy, 5000)).toBe(30_000);
    // Zero or negative counts read as the first failure.
    expect(backoffDelay(policy, 0)).toBe(1000);
  });

  it('spreads by the jitter fraction, from the injected random source', () => {
    const p = { ...policy, jitter: 0.2 };
    expect(backoffDelay(p, 3, { random: () => 0 })).toBe(3200);
    expect(backoffDelay(p, 3, { random: () => 0.5 })).toBe(4000);
    expect(backoffDelay(p, 3, { random: () => 0.999999 })).toBe(4800);
  });

  it("lets the server's wait win, but not below the floor", () => {
    expect(backoffDelay(policy, 1, { serverWaitMs: 90_000 })).toBe(90_000);
    expect(backoffDelay({ ...policy, jitter: 0.5 }, 4, { serverWaitMs: 2500, random: () => 0 })).toBe(2500);
    expect(backoffDelay(policy, 1, { serverWaitMs: -5000, floorMs: 1000 })).toBe(1000);
    expect(backoffDelay(policy, 2, { serverWaitMs: undefined })).toBe(2000);
  });
});
