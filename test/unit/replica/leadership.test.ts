/**
 * Leader election and the hand-off on a real Redis (issue 12 item 4): the lease and its
 * fencing token, a stale leader's writes refused, the Leadership state machine, the inbox.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createStore } from '../../../src/adapters/keyv/keyv-store.js';
import { Ledger } from '../../../src/core/ledger/ledger.js';
import { InboxLog, INBOX_CURSOR, type InboxItem } from '../../../src/core/replica/inbox-log.js';
import { Leadership } from '../../../src/core/replica/leadership.js';
import { silentLogger } from '../../../src/ports/logger.js';
import { StaleFenceError, type Fence, type KeyValueStore } from '../../../src/ports/store.js';
import { redisAvailable, startRedis, type RedisServer } from '../../helpers/redis-server.js';
import { open, resolve } from '../ledger/ledger-events-fixture.js';
import { waitFor } from '../../helpers/wait-for.js';

const HAS_REDIS = redisAvailable();

describe.skipIf(!HAS_REDIS)('leader election on Redis', () => {
  let redis: RedisServer;
  let stores: KeyValueStore[];
  const store = (): KeyValueStore => {
    const s = createStore(redis.url, '');
    stores.push(s);
    return s;
  };
  beforeAll(async () => {
    redis = await startRedis({ durable: false });
  });
  afterAll(async () => {
    await redis?.stop();
  });
  beforeEach(() => {
    redis.cli('FLUSHALL');
    stores = [];
  });
  afterEach(async () => {
    for (const s of stores) await s.close().catch(() => undefined);
  });

  it('one owner holds the lease; every acquisition draws a larger fencing token', async () => {
    const a = store().leaderLease!('a', 10_000);
    const b = store().leaderLease!('b', 10_000);
    const t1 = await a.acquire();
    expect(t1).toBeGreaterThan(0);
    expect(await b.acquire()).toBeUndefined();
    expect(await a.acquire()).toBe(t1); // ours already: kept, extended
    expect(await b.renew(t1!)).toBe(false); // not b's to renew
    expect(await a.renew(t1!)).toBe(true);
    await b.release(t1!); // not b's to drop
    expect(await b.acquire()).toBeUndefined();
    await a.release(t1!);
    const t2 = await b.acquire();
    expect(t2).toBe(t1! + 1);
    expect(await a.renew(t1!)).toBe(false);
  });

  it('the lease lapses without renewal, and the next owner gets a newer token', async () => {
    const a = store().leaderLease!('a', 150);
    const b = store().leaderLease!('b', 150);
    const t1 = (await a.acquire())!;
    expect(await b.acquire()).toBeUndefined();
    await waitFor(async () => (await b.acquire()) !== undefined, "b to get the lapsed lease (the store's own expiry)");
    expect(await b.renew(t1 + 1)).toBe(true);
    expect(await a.renew(t1)).toBe(false);
  });

  it('refuses the writes of a leader whose token went stale, writing nothing; the new leader writes', async () => {
    const sa = store();
    const sb = store();
    const la = sa.leaderLease!('a', 10_000);
    const lb = sb.leaderLease!('b', 10_000);
    let fenceA: Fence | undefined = { key: la.fenceKey, token: (await la.acquire())! };
    const a = await Ledger.open(sa, { fence: () => fenceA });
    expect(await a.append(open('f', 0))).toBe(1);
    // a pauses (GC, a frozen VM); its lease is gone and b takes over.
    await la.release(fenceA.token);
    const fenceB: Fence = { key: lb.fenceKey, token: (await lb.acquire())! };
    const b = await Ledger.open(sb, { fence: () => fenceB });
    await expect(a.append(resolve('f', 1))).rejects.toBeInstanceOf(StaleFenceError);
    expect(a.seq).toBe(1);
    expect(a.read.openEpisodes('f')).toHaveLength(1); // rolled back: memory holds what the store does
    expect(await b.append(resolve('f', 2))).toBe(2);
    // A follower (no token at all) cannot write either.
    fenceA = undefined;
    await expect(a.append(open('g', 3))).rejects.toThrow(/not the leader/);
    await expect(sa.setFenced!('k', 1, { key: la.fenceKey, token: fenceB.token - 1 })).rejects.toBeInstanceOf(StaleFenceError);
    expect((await Ledger.replayAll(store())).applied).toBe(2);
  });

  it('Leadership: exactly one leads; a stolen lease stops the loop at the next check; stop hands over', async () => {
    const calls: string[] = [];
    const make = (name: string): Leadership =>
      new Leadership({
        lease: store().leaderLease!(name, 10_000),
        ttlMs: 10_000,
        logger: silentLogger,
        onGain: async (token) => void calls.push(`${name} gained ${token}`),
        onLose: async (why) => void calls.push(`${name} lost: ${why}`),
      });
    const a = make('a');
    const b = make('b');
    await a.start();
    await b.start();
    expect([a.isLeader, b.isLeader]).toEqual([true, false]);
    expect(a.fence()).toMatchObject({ token: 1 });
    expect(b.fence()).toBeUndefined();

    // The lease vanishes (expired while a was paused) and b takes it.
    const leaseKey = redis.cli('KEYS', '*leader:lease*').trim();
    expect(leaseKey).not.toBe('');
    redis.cli('DEL', leaseKey);
    await b.check();
    expect(b.isLeader).toBe(true);
    await a.check();
    expect(a.isLeader).toBe(false);
    expect(a.fence()).toBeUndefined();
    expect(calls).toEqual(['a gained 1', 'b gained 2', 'a lost: the lease is held by another replica']);

    await b.stop();
    expect(b.isLeader).toBe(false);
    await a.check();
    expect(a.isLeader).toBe(true);
    expect(a.fence()).toMatchObject({ token: 3 });
    await a.stop();
  });

  it('Leadership: a take-over that fails gives the lease back instead of leading half-way', async () => {
    const lease = store().leaderLease!('a', 10_000);
    const l = new Leadership({
      lease,
      ttlMs: 10_000,
      logger: silentLogger,
      onGain: async () => {
        throw new Error('replay failed');
      },
      onLose: async () => {},
    });
    await l.start();
    expect(l.isLeader).toBe(false);
    expect(await store().leaderLease!('b', 10_000).acquire()).toBe(2);
    await l.stop();
  });

  it('Inbox: a put is idempotent by id, a drain goes in order and moves the cursor, a stale fence stops it', async () => {
    const s = store();
    const lease = s.leaderLease!('a', 10_000);
    const fence: Fence = { key: lease.fenceKey, token: (await lease.acquire())! };
    const inbox = new InboxLog(s, silentLogger);
    const item = (id: string): InboxItem => ({
      id,
      kind: 'chat',
      at: '2026-01-01T00:00:00Z',
      from: 'r',
      intent: {
        type: 'vote',
        eventId: id,
        actor: { id: 'u', via: 'console' },
        vote: 'up',
        target: { message: { transport: 'console', channel: 'c', id: 'm' } },
      },
    });
    expect(await inbox.put(item('one'))).toBe(1);
    expect(await inbox.put(item('one'))).toBe(1); // the same event twice (two replicas syncing Matrix)
    expect(await inbox.put(item('two'))).toBe(2);
    expect(await inbox.put(item('three'))).toBe(3);
    expect(await inbox.lag()).toBe(3);

    const seen: string[] = [];
    // The handler fails on "three" (the store went away mid-way): the cursor stays before it.
    let fail = true;
    await expect(
      inbox.drain(
        async (i) => {
          if (i.id === 'three' && fail) throw new Error('store unavailable');
          seen.push(i.id);
        },
        () => fence,
      ),
    ).rejects.toThrow(/unavailable/);
    expect(seen).toEqual(['one', 'two']);
    expect(await s.get(INBOX_CURSOR)).toBe(2);
    fail = false;

    // A stale leader cannot move the cursor: the new leader handles "three".
    await lease.release(fence.token);
    const other = store().leaderLease!('b', 10_000);
    const newer: Fence = { key: other.fenceKey, token: (await other.acquire())! };
    await expect(
      inbox.drain(
        async (i) => void seen.push(`stale ${i.id}`),
        () => fence,
      ),
    ).rejects.toBeInstanceOf(StaleFenceError);
    expect(await s.get(INBOX_CURSOR)).toBe(2);
    expect(
      await inbox.drain(
        async (i) => void seen.push(i.id),
        () => newer,
      ),
    ).toBe(1);
    expect(seen).toEqual(['one', 'two', 'stale three', 'three']);
    expect(await inbox.lag()).toBe(0);
    expect(
      await inbox.drain(
        async () => void seen.push('again'),
        () => newer,
      ),
    ).toBe(0);
  });
});

describe('describeStore', () => {
  it('never shows a Redis password', async () => {
    const { describeStore } = await import('../../../src/runtime/open-store.js');
    const { defaultConfig } = await import('../../../src/config/load-config.js');
    const config = defaultConfig();
    config.store.url = 'redis://user:s3cret@redis:6379/0';
    expect(describeStore(config)).toBe('redis://***@redis:6379/0');
    expect(describeStore(config)).not.toContain('s3cret');
  });
});

describe.skipIf(!HAS_REDIS)('Leadership take-over', () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await startRedis({ durable: false });
  });
  afterAll(async () => {
    await redis?.stop();
  });

  it('keeps the lease alive through a take-over longer than the TTL', async () => {
    const sa = createStore(redis.url, '');
    const sb = createStore(redis.url, '');
    try {
      // Long enough that a loaded CI machine's event-loop stalls do not outlast it; the replay still takes three TTLs.
      const ttl = 1000;
      // A replay that lasts until the test has tried to take the lease for three TTLs. Real time
      // is the input: Redis expires the lease on its own clock unless the leader renews it.
      let replayed!: () => void;
      const replay = new Promise<void>((r) => (replayed = r));
      let gained = false;
      const a = new Leadership({
        lease: sa.leaderLease!('a', ttl),
        ttlMs: ttl,
        logger: silentLogger,
        onGain: () => {
          gained = true;
          return replay;
        },
        onLose: async () => {},
      });
      const other = sb.leaderLease!('b', ttl);
      const started = a.start();
      let stolen: number | undefined;
      await waitFor(() => gained, 'a to take the lease and start its replay');
      const end = Date.now() + 3 * ttl;
      await waitFor(
        async () => {
          stolen ??= await other.acquire();
          return stolen !== undefined || Date.now() >= end;
        },
        { what: 'three TTLs of attempts to take the lease', intervalMs: ttl / 5 },
      );
      replayed();
      await started;
      expect(stolen).toBeUndefined();
      expect(a.isLeader).toBe(true);
      await a.stop();
    } finally {
      await sa.close();
      await sb.close();
    }
  });
});
