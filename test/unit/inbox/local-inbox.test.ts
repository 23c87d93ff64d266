import { describe, expect, it } from 'vitest';
import type { BotOutcome } from '../../../src/core/bot/reprise-bot.js';
import { LocalInbox } from '../../../src/core/inbox/local-inbox.js';
import { ManualClock } from '../../../src/ports/clock.js';

const owner = (handle: () => Promise<BotOutcome[]>) => ({ handle, reload: async () => undefined, lead: () => undefined, follow: async () => undefined });

describe('LocalInbox', () => {
  it('refuses a push before the loop is attached, and after it stopped', async () => {
    const inbox = new LocalInbox(new ManualClock('2026-01-01T00:00:00Z'));
    await expect(inbox.push([{ type: 'tick' }])).rejects.toThrow(/not built yet: nothing was recorded/);
    inbox.attach(owner(async () => [{ status: 'ticked', released: [], flushed: 0 }]));
    expect(await inbox.push([{ type: 'tick' }])).toEqual([{ status: 'ticked', released: [], flushed: 0 }]);
    await inbox.stop();
    await expect(inbox.push([{ type: 'tick' }])).rejects.toThrow(/stopping/);
  });

  it('remembers the last push that could not be recorded, at the clock’s time, until one is', async () => {
    const clock = new ManualClock('2026-01-01T00:00:00Z');
    const inbox = new LocalInbox(clock);
    let fail = true;
    inbox.attach(
      owner(async () => {
        if (fail) throw new Error('SQLITE_FULL: database or disk is full');
        return [{ status: 'ticked', released: [], flushed: 0 }];
      }),
    );
    await expect(inbox.push([{ type: 'tick' }])).rejects.toThrow(/SQLITE_FULL/);
    expect(inbox.lastWriteError).toEqual({ at: '2026-01-01T00:00:00.000Z', message: 'SQLITE_FULL: database or disk is full' });
    fail = false;
    clock.advance(1000);
    await inbox.push([{ type: 'tick' }]);
    expect(inbox.lastWriteError).toBeUndefined();
  });
});
