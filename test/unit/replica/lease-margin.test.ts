/**
 * Sends fenced by leadership (issue 20 item 2): a ledger write carries a fencing token the store
 * checks, a chat send cannot — so a replica sends only while it holds the lease with margin.
 * `mayAct` is true from the take until two thirds of the TTL after the last successful renewal,
 * false at once when a renewal fails, and false for good once the lead is lost.
 */
import { describe, expect, it } from 'vitest';
import { Leadership } from '../../../src/core/replica/leadership.js';
import { silentLogger } from '../../../src/ports/logger.js';
import type { LeaderLease } from '../../../src/ports/store.js';

function lease() {
  const l = { holder: true, fail: false, renewals: 0 };
  const port: LeaderLease = {
    fenceKey: 'fence',
    acquire: async () => (l.holder ? 7 : undefined),
    renew: async () => {
      l.renewals += 1;
      if (l.fail) throw new Error('store unreachable');
      return l.holder;
    },
    release: async () => undefined,
  };
  return { l, port };
}

describe('a replica sends only while its lease holds with margin', () => {
  it('from the take until two thirds of the TTL after the last renewal; a renewal puts it back', async () => {
    let now = 1_000_000;
    const { port } = lease();
    const lead = new Leadership({
      lease: port,
      ttlMs: 3000,
      logger: silentLogger,
      onGain: async () => undefined,
      onLose: async () => undefined,
      now: () => now,
    });
    expect(lead.mayAct(), 'a follower sends nothing').toBe(false);
    await lead.check();
    expect(lead.isLeader).toBe(true);
    expect(lead.mayAct()).toBe(true);
    now += 1999;
    expect(lead.mayAct()).toBe(true);
    // Paused (SIGSTOP) past the margin: nothing goes out until a renewal proves the lease is still ours.
    now += 1;
    expect(lead.mayAct()).toBe(false);
    await lead.check();
    expect(lead.mayAct()).toBe(true);
    await lead.stop();
  });

  it('a failed renewal stops sends at once, before the lease could lapse; losing the lease stops them for good', async () => {
    let now = 0;
    const { l, port } = lease();
    const lost: string[] = [];
    const lead = new Leadership({
      lease: port,
      ttlMs: 3000,
      logger: silentLogger,
      onGain: async () => undefined,
      onLose: async (r) => void lost.push(r),
      now: () => now,
    });
    await lead.check();
    l.fail = true;
    now += 500;
    await lead.check();
    expect(lead.isLeader, 'still leading: the lease may hold').toBe(true);
    expect(lead.mayAct(), 'but sends nothing while it cannot renew').toBe(false);
    l.fail = false;
    await lead.check();
    expect(lead.mayAct()).toBe(true);
    l.holder = false;
    await lead.check();
    expect(lost).toEqual(['the lease is held by another replica']);
    expect(lead.mayAct()).toBe(false);
    await lead.stop();
  });
});
