/**
 * `status` says since when each open incident has been going as the card counts it: from the
 * alert's own startsAt (Reprise may hear of it minutes later), else from when it was opened.
 */
import { describe, expect, it } from 'vitest';
import { statusAnswer } from '../../../src/core/bot/commands.js';
import { richText } from '../../../src/core/chat/thread-view.js';

const NOW = new Date('2026-11-29T06:09:00Z');
const reads = (open: Array<{ triggerKey: string; openedAt: string; startsAt?: string }>) => ({
  openIncidents: () => open,
  activeSilences: () => [],
  ackSeconds: () => [],
});

describe('status', () => {
  it('counts an open incident from its startsAt, not from when Reprise opened it', () => {
    const view = statusAnswer(reads([{ triggerKey: 'tk-a', openedAt: '2026-11-29T06:03:00Z', startsAt: '2026-11-29T06:00:00Z' }]), NOW);
    expect(view.body.map(richText)).toContain('• tk-a since 06:00 UTC');
  });

  it('falls back to when it was opened without a usable startsAt (a source that sends none, or garbage)', () => {
    const view = statusAnswer(
      reads([
        { triggerKey: 'tk-b', openedAt: '2026-11-29T06:03:00Z' },
        { triggerKey: 'tk-c', openedAt: '2026-11-28T23:59:00Z', startsAt: 'not a time' },
      ]),
      NOW,
    );
    expect(view.body.map(richText)).toEqual(expect.arrayContaining(['• tk-b since 06:03 UTC', '• tk-c since 2026-11-28 23:59 UTC']));
  });
});
