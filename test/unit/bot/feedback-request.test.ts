import { describe, expect, it } from 'vitest';
import { dupFingerprint, resourceRef } from '../../../src/core/bot/dup-fingerprint.js';
import { MAX_SILENCE_MS, feedbackEvent } from '../../../src/core/bot/feedback-request.js';
import { RepriseError } from '../../../src/core/errors.js';
import { alert } from '../recall/recall-fixtures.js';

const NOW = new Date('2026-01-01T00:00:00Z');

describe('feedbackEvent', () => {
  it('turns votes into feedback events, user defaulting to cli', () => {
    expect(feedbackEvent({ triggerKey: 'tk', action: 'down', user: 'ann' }, NOW)).toEqual({
      type: 'feedback',
      triggerKey: 'tk',
      user: 'ann',
      vote: 'down',
      at: '2026-01-01T00:00:00.000Z',
    });
    expect(feedbackEvent({ triggerKey: 'tk', action: 'clear' }, NOW)).toMatchObject({ vote: 'clear', user: 'cli' });
  });

  it('turns a silence into an event ending `duration` from now', () => {
    expect(feedbackEvent({ triggerKey: 'tk', action: 'silence', duration: '24h' }, NOW)).toMatchObject({ type: 'silence', until: '2026-01-02T00:00:00.000Z' });
    expect(feedbackEvent({ triggerKey: 'tk', action: 'silence', duration: '30d' }, NOW)).toMatchObject({
      until: new Date(NOW.getTime() + MAX_SILENCE_MS).toISOString(),
    });
  });

  it.each([
    [{ triggerKey: 'tk', action: 'silence', duration: 'a while' }],
    [{ triggerKey: 'tk', action: 'silence', duration: '-1h' }],
    [{ triggerKey: 'tk', action: 'silence', duration: '31d' }],
    [{ triggerKey: 'tk', action: 'silence' }],
    [{ action: 'up' }],
    [{ triggerKey: 'x'.repeat(513), action: 'up' }],
    [{ triggerKey: 'tk', action: 'up', user: '' }],
    ['up'],
  ])('rejects %j with invalid_payload', (input) => {
    let err: unknown;
    try {
      feedbackEvent(input, NOW);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(RepriseError);
    expect((err as RepriseError).code).toBe('invalid_payload');
  });
});

describe('dupFingerprint', () => {
  const a = alert({ alertname: 'KubePodCrashLooping', labels: { namespace: 'payments', pod: 'checkout-api-7d9f8c6b5-x2k4q', cluster: 'prod' } });

  it('is the same for restarts of the same workload and differs across workloads', () => {
    const restarted = alert({ alertname: 'KubePodCrashLooping', labels: { namespace: 'payments', pod: 'checkout-api-5c6b7d8f9-q9w8e', cluster: 'prod' } });
    const other = alert({ alertname: 'KubePodCrashLooping', labels: { namespace: 'payments', pod: 'billing-api-7d9f8c6b5-x2k4q', cluster: 'prod' } });
    expect(dupFingerprint(a)).toMatch(/^[0-9a-f]{64}$/);
    expect(dupFingerprint(restarted)).toBe(dupFingerprint(a));
    expect(dupFingerprint(other)).not.toBe(dupFingerprint(a));
    expect(resourceRef(a)).toBe('prod/payments/checkout-api');
    expect(resourceRef(alert({ alertname: 'X' }))).toBe('');
  });
});
