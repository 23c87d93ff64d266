/**
 * Issue 28 item 2: one measure of how long an incident lasted — from the alert's own startsAt
 * (a group's earliest) to its own endsAt (a group's latest), Reprise's own times only when the
 * source sent none.
 */
import { describe, expect, it } from 'vitest';
import { earliest, elapsedMs, latest, resolvedNote, spanEnd, spanResolvedNote, spanStart } from '../../../src/core/chat/incident-span.js';
import { shortDuration } from '../../../src/core/duration.js';

describe('incident span', () => {
  it("measures from the alert's startsAt to its endsAt, not from when Reprise heard", () => {
    const s = { startsAt: '2026-11-29T03:00:00Z', openedAt: '2026-11-29T03:07:00Z', endsAt: '2026-11-29T03:21:00Z', resolvedAt: '2026-11-29T03:22:00Z' };
    expect(spanStart(s)).toBe('2026-11-29T03:00:00Z');
    expect(spanEnd(s)).toBe('2026-11-29T03:21:00Z');
    expect(spanResolvedNote(s)).toBe('resolved after 21 min');
  });

  it('a group counts from its earliest start to its latest end', () => {
    const s = {
      startsAt: '2026-11-29T04:27:00Z',
      openedAt: '2026-11-29T04:31:00Z',
      endsAt: '2026-11-29T04:40:00Z',
      resolvedAt: '2026-11-29T04:48:00Z',
      group: { startsAt: '2026-11-29T04:25:00Z', endsAt: '2026-11-29T04:46:00Z' },
    };
    expect(spanResolvedNote(s)).toBe('resolved after 21 min');
  });

  it("falls back to Reprise's own times only when the source sent none (or sent garbage)", () => {
    expect(spanResolvedNote({ openedAt: '2026-01-01T00:00:00Z', resolvedAt: '2026-01-01T00:09:00Z' })).toBe('resolved after 9 min');
    expect(spanResolvedNote({ startsAt: 'not a time', openedAt: '2026-01-01T00:00:00Z', endsAt: '', resolvedAt: '2026-01-01T00:09:00Z' })).toBe(
      'resolved after 9 min',
    );
    expect(spanStart({})).toBeUndefined();
    expect(resolvedNote(undefined, '2026-01-01T00:00:00Z')).toBe('resolved after 0 min');
  });

  it('never goes negative; picks by time, not by text', () => {
    expect(elapsedMs('2026-01-01T01:00:00Z', '2026-01-01T00:00:00Z')).toBe(0);
    expect(earliest('2026-01-01T10:00:00+02:00', '2026-01-01T09:00:00Z')).toBe('2026-01-01T10:00:00+02:00');
    expect(latest(undefined, 'x', '2026-01-01T00:00:00Z')).toBe('2026-01-01T00:00:00Z');
  });

  it('says durations in human units', () => {
    expect(shortDuration(9 * 60_000)).toBe('9 min');
    expect(shortDuration(65 * 60_000)).toBe('1 h 5 min');
    expect(shortDuration(51 * 3_600_000)).toBe('2 d 3 h');
  });
});
