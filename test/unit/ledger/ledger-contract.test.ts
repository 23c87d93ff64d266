/**
 * The ledger's storage contract (SPEC §8, issue 12 item 5), run unchanged on every store a
 * deployment can use: the embedded sqlite file and a real Redis (append-only file, fsync on
 * every write). Redis is skipped when redis-server is not installed — unless
 * REPRISE_REQUIRE_REDIS=1 (CI), where that fails instead.
 */
import { stateDigest } from '../../../src/core/ledger/ledger-export-format.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createStore } from '../../../src/adapters/keyv/keyv-store.js';
import { Ledger, SNAPSHOT_KEY } from '../../../src/core/ledger/ledger.js';
import type { KeyValueStore } from '../../../src/ports/store.js';
import { redisAvailable, startRedis, type RedisServer } from '../../helpers/redis-server.js';
import { open, resolve, TK, vote } from './ledger-events-fixture.js';
import { randomEvents } from './random-events.js';

interface Backend {
  name: string;
  available: boolean;
  setup(): Promise<void>;
  teardown(): Promise<void>;
  /** A fresh empty store for each test; `store()` again opens the same one (another process's view). */
  reset(): Promise<void>;
  store(): KeyValueStore;
  /** A crash of the storage itself (process killed, restarted from disk); undefined when not meaningful. */
  crash?(): Promise<void>;
}

let dir: string;
let redis: RedisServer | undefined;
const HAS_REDIS = redisAvailable();

const backends: Backend[] = [
  {
    name: 'embedded sqlite',
    available: true,
    setup: async () => {},
    teardown: async () => {},
    reset: async () => {},
    store: () => createStore(`sqlite://${join(dir, 'ledger.sqlite')}`, dir),
  },
  {
    name: 'Redis (AOF, fsync always)',
    available: HAS_REDIS,
    setup: async () => {
      redis = await startRedis({ durable: true });
    },
    teardown: async () => {
      await redis?.stop();
    },
    reset: async () => {
      redis!.cli('FLUSHALL');
    },
    store: () => createStore(redis!.url, dir),
    crash: async () => {
      await redis!.restart();
    },
  },
];

describe.each(backends)('ledger contract on $name', (b) => {
  let stores: KeyValueStore[];
  const store = (): KeyValueStore => {
    const s = b.store();
    stores.push(s);
    return s;
  };
  beforeAll(async () => {
    if (b.available) await b.setup();
  });
  afterAll(async () => {
    if (b.available) await b.teardown();
  });
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'reprise-contract-'));
    stores = [];
    if (b.available) await b.reset();
  });
  afterEach(async () => {
    for (const s of stores) await s.close().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  });

  it.skipIf(!b.available)('numbers events from 1, serves the reads, and a reopen equals a full replay', async () => {
    const ledger = await Ledger.open(store(), { snapshotEvery: 150 });
    expect(await ledger.append(open('f', 0))).toBe(1);
    expect((await ledger.record(resolve('f', 5))).closed).toBeDefined();
    await ledger.append(vote(TK, 'bob', 'up', 6));
    for (const e of randomEvents(400, 21)) await ledger.append(e);
    expect(ledger.seq).toBe(403);
    const before = ledger.read.digest();
    const again = await Ledger.open(store(), { snapshotEvery: 150 });
    expect(again.seq).toBe(403);
    expect(again.read.digest()).toBe(before);
    expect(stateDigest(await Ledger.replayAll(store()))).toBe(before);
  });

  it.skipIf(!b.available)('two writers on one store never reuse or overwrite a number', async () => {
    const one = await Ledger.open(store());
    const two = await Ledger.open(store());
    const events = randomEvents(200, 4);
    const seqs = await Promise.all(events.map((e, i) => (i % 2 === 0 ? one : two).append(e)));
    expect([...seqs].sort((x, y) => x - y)).toEqual(events.map((_, i) => i + 1));
    const replayed = await Ledger.replayAll(store());
    expect(replayed.applied).toBe(200);
    expect(replayed.skipped).toBe(0);
  });

  it.skipIf(!b.available)('an append with an id already recorded writes nothing and says where the first one went', async () => {
    const s = store();
    const ledger = await Ledger.open(s);
    const first = await ledger.transaction(
      async (tx) => {
        tx.record(open('f', 0));
        tx.record(vote(TK, 'ann', 'down', 1));
      },
      { id: 'webhook-1' },
    );
    expect(first).toMatchObject({ first: 1, count: 2 });
    await ledger.append(resolve('f', 2));
    // The same id again (a hand-off replayed after a crash): nothing new, the read model as stored.
    const again = await ledger.transaction(
      async (tx) => {
        tx.record(open('f', 3));
      },
      { id: 'webhook-1' },
    );
    expect(again.first).toBe(1);
    expect(ledger.seq).toBe(3);
    expect(ledger.read.openEpisodes('f')).toHaveLength(0);
    expect(ledger.read.digest()).toBe(stateDigest(await Ledger.replayAll(store())));
    // Straight at the port, too.
    const log = { headKey: 'h', prefix: 'r:', pad: 4 };
    expect(await s.appendLog(log, [{ n: 1 }], { id: 'x' })).toBe(1);
    expect(await s.appendLog(log, [{ n: 2 }], { id: 'x' })).toBe(1);
    expect(await s.appendLog(log, [{ n: 3 }], { id: 'y' })).toBe(2);
    expect(await s.get('h')).toBe(2);
    expect(await s.getMany(['r:0001', 'r:0002'])).toEqual([{ n: 1 }, { n: 3 }]);
  });

  it.skipIf(!b.available)('writes a transaction all or nothing: a body that throws leaves no trace', async () => {
    const ledger = await Ledger.open(store());
    await ledger.append(open('f', 0));
    await expect(
      ledger.transaction(async (tx) => {
        tx.record(resolve('f', 1));
        throw new Error('decided badly');
      }),
    ).rejects.toThrow(/decided badly/);
    expect(ledger.seq).toBe(1);
    expect(ledger.read.openEpisodes('f')).toHaveLength(1);
    expect((await Ledger.replayAll(store())).applied).toBe(1);
  });

  it.skipIf(!b.available)('commits a burst of transactions together, and one whose body throws fails alone', async () => {
    const s = store();
    let appends = 0;
    const counting: KeyValueStore = Object.assign(Object.create(s) as KeyValueStore, {
      appendLog: (...args: Parameters<KeyValueStore['appendLog']>) => {
        appends++;
        return s.appendLog(...args);
      },
    });
    const ledger = await Ledger.open(counting);
    const results = await Promise.allSettled(
      Array.from({ length: 40 }, (_, i) =>
        ledger.transaction(async (tx) => {
          tx.record(open(`f${i}`, i));
          if (i === 17) throw new Error('body 17 failed');
          return i;
        }),
      ),
    );
    expect(results.filter((r) => r.status === 'rejected')).toHaveLength(1);
    expect((results[17] as PromiseRejectedResult).reason).toMatchObject({ message: 'body 17 failed' });
    // Every other one is durable, each under its own seq, in call order.
    const firsts = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value.first] : []));
    expect(firsts).toEqual(Array.from({ length: 39 }, (_, i) => i + 1));
    expect(ledger.read.openEpisodes('f17')).toHaveLength(0);
    expect(ledger.read.openEpisodes('f18')).toHaveLength(1);
    expect(ledger.read.digest()).toBe(stateDigest(await Ledger.replayAll(store())));
    // Fewer store writes than transactions: the burst shared its commits.
    expect(appends).toBeLessThan(40);
  });

  it.skipIf(!b.available || !b.crash)('loses nothing acknowledged when the storage itself is killed and restarted', async () => {
    const ledger = await Ledger.open(store(), { snapshotEvery: 50 });
    const events = randomEvents(180, 8);
    for (const e of events) await ledger.append(e);
    const expected = ledger.read.digest();
    await b.crash!();
    const reopened = await Ledger.open(store(), { snapshotEvery: 50 });
    expect(reopened.seq).toBe(180);
    expect(reopened.read.digest()).toBe(expected);
    expect(await reopened.append(open('after-crash', 10_000))).toBe(181);
    expect(await store().get<{ seq: number }>(SNAPSHOT_KEY)).toMatchObject({ seq: 150 });
  });
});
