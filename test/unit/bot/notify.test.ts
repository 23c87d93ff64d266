/**
 * `notify`: the one way a flow tells a thread something — one outbox reply per surface named,
 * each its own item (its own id), the notice as given; no surface, no item.
 */
import { describe, expect, it } from 'vitest';
import { notify, type BotTx } from '../../../src/core/bot/bot-context.js';
import type { LedgerEvent } from '../../../src/core/ledger-events.js';

function tx(): BotTx & { events: LedgerEvent[] } {
  const events: LedgerEvent[] = [];
  return {
    events,
    record: (e) => (events.push(e), {}),
    get size() {
      return events.length;
    },
  };
}

describe('notify', () => {
  it('enqueues one reply per surface, carrying the notice', () => {
    const t = tx();
    const out = { count: 0 };
    notify({ tx: t, now: new Date('2026-01-01T00:00:00Z'), out }, 'o1', ['slack', 'matrix'], { topic: 'note', icon: '📝', text: ['saved'] });
    expect(out.count).toBe(2);
    expect(t.events).toEqual([
      expect.objectContaining({
        type: 'outbox',
        transport: 'slack',
        op: 'reply',
        openId: 'o1',
        view: { kind: 'notice', topic: 'note', icon: '📝', text: ['saved'] },
      }),
      expect.objectContaining({ type: 'outbox', transport: 'matrix', op: 'reply', openId: 'o1', at: '2026-01-01T00:00:00.000Z' }),
    ]);
    const ids = t.events.map((e) => (e as { id: string }).id);
    expect(new Set(ids).size).toBe(2);
  });

  it('enqueues nothing for a thread on no surface', () => {
    const t = tx();
    const out = { count: 0 };
    notify({ tx: t, now: new Date(), out }, 'o1', [], { topic: 'status', icon: '👀', text: ['x'] });
    expect(t.events).toEqual([]);
    expect(out.count).toBe(0);
  });
});
