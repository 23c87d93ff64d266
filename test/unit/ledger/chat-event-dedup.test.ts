/**
 * Chat events exactly once, durably (issue 20 item 3): which chat events were applied is part of
 * the ledger's read model, kept for a retention window rather than a count — a batch of any size
 * read again, before or after a restart, applies each event once and answers once.
 */
import { describe, expect, it } from 'vitest';
import { createStore } from '../../../src/adapters/keyv/keyv-store.js';
import type { ChatIntent } from '../../../src/core/chat/chat-types.js';
import { incidentIntents } from '../../../src/core/bot/intent.js';
import { rememberChatEvent, seenChatEvent } from '../../../src/core/ledger/ledger-chat.js';
import { createLedgerState } from '../../../src/core/ledger/ledger-state.js';
import { ManualClock } from '../../../src/ports/clock.js';
import { botHarness } from '../bot/bot-harness.js';
import { alert, fixedSnapshot, incidentEntry } from '../recall/recall-fixtures.js';

const oom = incidentEntry('incidents/checkout-api-oomkilled.md', {
  resource: 'payments/checkout-api',
  title: 'checkout-api OOMKilled',
  cause: 'cache',
  resolution: 'rollback',
});
const snapshot = fixedSnapshot([oom], { [oom.id]: 30 });
const BATCH = 6000;

describe('chat events exactly once', () => {
  it(
    `a ${BATCH}-event batch read again — in the same process and after a restart — records each event once and answers once`,
    { timeout: 120_000 },
    async () => {
      const store = createStore('memory://', '');
      const h = await botHarness({ snapshot, store });
      await h.bot.handle(
        incidentIntents([
          alert({ alertname: 'KubePodCrashLooping', fingerprint: 'fp-1', labels: { namespace: 'payments', pod: 'checkout-api-7d9f8c6b5-x2k4q' } }),
        ]),
      );
      await h.settle();
      const root = h.transport.posts[0]!.ref!;
      // Votes from many people and notes, as a Matrix /sync batch would carry them (event ids unique per homeserver).
      const batch: ChatIntent[] = Array.from({ length: BATCH }, (_, i) =>
        i % 300 === 0
          ? { type: 'note', eventId: `$note-${i}`, actor: { id: `@u${i}:example.org`, via: 'rec' }, text: `note ${i}`, target: { message: root } }
          : {
              type: 'vote',
              eventId: `$vote-${i}`,
              actor: { id: `@u${i}:example.org`, via: 'rec' },
              vote: i % 3 === 0 ? 'down' : 'up',
              target: { message: root },
            },
      );
      const counts = async (hh: typeof h) => {
        const events = await hh.events();
        return { feedback: events.filter((e) => e.type === 'feedback').length, notes: events.filter((e) => e.type === 'note').length, seq: hh.ledger.seq };
      };
      await h.bot.handle(batch);
      await h.settle();
      const once = await counts(h);
      expect(once.feedback).toBe(BATCH - BATCH / 300);
      expect(once.notes).toBe(BATCH / 300);
      const answered = h.transport.sent.length;

      // Read again in the same process: every event a duplicate, nothing recorded, nothing said.
      const again = await h.bot.handle(batch);
      expect(again.every((o) => o.status === 'duplicate')).toBe(true);
      await h.settle();
      expect(await counts(h)).toEqual(once);
      expect(h.transport.sent.length).toBe(answered);
      await h.outbox.stop();

      // A new process on the same store (a restart or a failover) reads the batch once more.
      const next = await botHarness({ snapshot, store, clock: new ManualClock(h.clock.now().toISOString()) });
      const third = await next.bot.handle(batch);
      expect(third.filter((o) => o.status !== 'duplicate')).toEqual([]);
      expect(await counts(next)).toEqual(once);
    },
  );

  it('ids are kept for the retention window after the newest event, then forgotten (in batches); a count cap guards memory', () => {
    const day = 24 * 3_600_000;
    const state = createLedgerState({ chatEventRetentionMs: 7 * day, chatEvents: 1000 });
    const t0 = Date.parse('2026-12-01T00:00:00Z');
    for (let i = 0; i < 300; i++) rememberChatEvent(state, `old-${i}`, new Date(t0 + i).toISOString());
    rememberChatEvent(state, 'six-days-on', new Date(t0 + 6 * day).toISOString());
    expect(seenChatEvent(state, 'old-0'), 'inside the window').toBe(true);
    rememberChatEvent(state, 'eight-days-on', new Date(t0 + 8 * day).toISOString());
    expect(seenChatEvent(state, 'old-0')).toBe(false);
    expect(seenChatEvent(state, 'old-299')).toBe(false);
    expect(seenChatEvent(state, 'six-days-on')).toBe(true);
    expect(seenChatEvent(state, 'eight-days-on')).toBe(true);
    for (let i = 0; i < 3000; i++) rememberChatEvent(state, `burst-${i}`, new Date(t0 + 8 * day).toISOString());
    expect(state.chatEventOrder.length).toBeLessThanOrEqual(1000);
    expect(seenChatEvent(state, 'burst-2999')).toBe(true);
  });
});
