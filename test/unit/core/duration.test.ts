import { describe, expect, it } from 'vitest';
import { parseDuration, tryParseDuration } from '../../../src/core/duration.js';

describe('parseDuration', () => {
  it.each([
    ['0', 0],
    [0, 0],
    ['0s', 0],
    ['250ms', 250],
    ['30s', 30_000],
    ['5m', 300_000],
    ['1h', 3_600_000],
    ['7d', 604_800_000],
    ['180d', 180 * 86_400_000],
    ['1h30m', 5_400_000],
    ['2w', 1_209_600_000],
  ] as const)('%s → %d ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each(['', '5', '5 m', '-5m', '1.5h', 'm5', '5mm', 'soon', '5y'])('rejects %j', (text) => {
    expect(tryParseDuration(text)).toBeUndefined();
    expect(() => parseDuration(text)).toThrow(/must be a duration like 30s/);
  });

  it('rejects numbers other than 0', () => {
    expect(tryParseDuration(30)).toBeUndefined();
  });
});
