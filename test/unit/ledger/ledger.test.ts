import { mkdtempSync, rmSync } from 'node:fs';
import { stateDigest } from '../../../src/core/ledger/ledger-export-format.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createStore } from '../../../src/adapters/keyv/keyv-store.js';
import { HEAD_KEY, Ledger, SNAPSHOT_KEY, eventKey } from '../../../src/core/ledger/ledger.js';
import type { LedgerEvent } from '../../../src/core/ledger-events.js';
import type { KeyValueStore, LogKeys } from '../../../src/ports/store.js';
import { ENTRY, TK, open, resolve, vote } from './ledger-events-fixture.js';
import { randomEvents } from './random-events.js';

let dir: string;
let stores: KeyValueStore[];
const sqlite = (): KeyValueStore => {
  const s = createStore(`sqlite://${join(dir, 'ledger.sqlite')}`, dir);
  stores.push(s);
  return s;
};

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'reprise-ledger-'));
  stores = [];
});
afterEach(async () => {
  for (const s of stores) await s.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A store whose writes can be made to fail, to check nothing half-written is acknowledged. */
class FlakyStore implements KeyValueStore {
  readonly inner = createStore('memory://', '');
  failKey: string | undefined;
  get<T>(key: string) {
    return this.inner.get<T>(key);
  }
  getMany<T>(keys: readonly string[]) {
    return this.inner.getMany<T>(keys);
  }
  async set(key: string, value: unknown) {
    if (this.failKey !== undefined && key.startsWith(this.failKey)) throw new Error(`disk full writing ${key}`);
    await this.inner.set(key, value);
  }
  delete(key: string) {
    return this.inner.delete(key);
  }
  async appendLog(log: LogKeys, values: readonly unknown[]) {
    if (this.failKey !== undefined && (log.headKey.startsWith(this.failKey) || log.prefix.startsWith(this.failKey)))
      throw new Error(`disk full appending to ${log.prefix}`);
    return this.inner.appendLog(log, values);
  }
  close() {
    return this.inner.close();
  }
}

describe('Ledger', () => {
  it('appends under zero-padded keys, advances the head, and serves the reads', async () => {
    const store = sqlite();
    const ledger = await Ledger.open(store);
    expect(ledger.seq).toBe(0);
    expect(await ledger.append(open('f', 0, { threadId: 'th-1' }))).toBe(1);
    expect(await store.get(eventKey(1))).toMatchObject({ type: 'open', fingerprint: 'f' });
    expect(eventKey(1)).toBe('ev:000000000001');
    expect(await store.get(HEAD_KEY)).toBe(1);
    const r = await ledger.record(resolve('f', 5));
    expect(r).toMatchObject({ seq: 2, closed: { threadId: 'th-1', resolvedAt: expect.any(String) } });
    await ledger.append(vote(TK, 'bob', 'up', 6));
    expect(ledger.read.trackRecord(ENTRY, 'incident')).toMatchObject({ recalls: 1, resolved: 1, up: 1, rate: 3 / 4, factor: 1 });
    expect(ledger.read.occurrences(TK).count).toBe(1);
    expect(ledger.read.resolveChannelLive()).toBe(true);
  });

  it('never reuses a sequence number under concurrent appends', async () => {
    const ledger = await Ledger.open(createStore('memory://', ''), { snapshotEvery: 7 });
    const events = randomEvents(300, 3);
    const seqs = await Promise.all(events.map((e) => ledger.append(e)));
    expect([...seqs].sort((a, b) => a - b)).toEqual(events.map((_, i) => i + 1));
    expect(seqs).toEqual(events.map((_, i) => i + 1)); // and in call order
  });

  it('reopens a sqlite ledger to the same state, and equals a full replay', async () => {
    const events = randomEvents(400, 11);
    const first = await Ledger.open(sqlite(), { snapshotEvery: 150 });
    for (const e of events) await first.append(e);
    const before = first.read.digest();
    await first.close();
    await expect(first.append(events[0]!)).rejects.toThrow(/closed/);

    const store = sqlite();
    expect(await store.get<{ seq: number }>(SNAPSHOT_KEY)).toMatchObject({ seq: 400 });
    const again = await Ledger.open(store, { snapshotEvery: 150 });
    expect(again.seq).toBe(400);
    expect(again.read.digest()).toBe(before);
    expect(stateDigest(await Ledger.replayAll(store))).toBe(before);
  });

  it('replays the tail written after the last snapshot (crash without close)', async () => {
    const events = randomEvents(250, 5);
    const crashed = await Ledger.open(sqlite(), { snapshotEvery: 100 });
    for (const e of events) await crashed.append(e); // snapshots at 100 and 200, tail 201–250
    const expected = crashed.read.digest();

    const store = sqlite();
    expect(await store.get<{ seq: number }>(SNAPSHOT_KEY)).toMatchObject({ seq: 200 });
    // Prove the snapshot is used: damage an event it covers; only a full replay would notice.
    await store.set(eventKey(1), { type: 'damaged' });
    const reopened = await Ledger.open(store);
    expect(reopened.seq).toBe(250);
    expect(reopened.read.digest()).toBe(expected);
    expect((await Ledger.replayAll(store)).skipped).toBe(1);
  });

  it('ignores an event written past the head (crash before the head write) and overwrites it', async () => {
    const store = sqlite();
    const ledger = await Ledger.open(store);
    await ledger.append(open('f', 0));
    await store.set(eventKey(2), resolve('f', 1)); // never acknowledged
    const reopened = await Ledger.open(store);
    expect(reopened.seq).toBe(1);
    expect(reopened.read.openEpisodes('f')).toHaveLength(1);
    expect(await reopened.append(vote(TK, 'bob', 'down', 2))).toBe(2);
    expect(await store.get(eventKey(2))).toMatchObject({ type: 'feedback' });
  });

  it('rejects a malformed event without writing anything', async () => {
    const store = sqlite();
    const ledger = await Ledger.open(store);
    const bad = { type: 'open', fingerprint: 'f', at: 'never' } as unknown as LedgerEvent;
    await expect(ledger.append(bad)).rejects.toMatchObject({ code: 'invalid_payload' });
    expect(ledger.seq).toBe(0);
    expect(await store.get(HEAD_KEY)).toBeUndefined();
  });

  it('does not acknowledge or apply an event whose write failed, and carries on afterwards', async () => {
    const store = new FlakyStore();
    const ledger = await Ledger.open(store);
    await ledger.append(open('f', 0));
    store.failKey = HEAD_KEY;
    await expect(ledger.append(resolve('f', 1))).rejects.toThrow(/disk full/);
    expect(ledger.seq).toBe(1);
    expect(ledger.read.openEpisodes('f')).toHaveLength(1);
    store.failKey = undefined;
    expect(await ledger.append(resolve('f', 2))).toBe(2);
    expect((await Ledger.open(store)).read.digest()).toBe(ledger.read.digest());
  });

  it('keeps appending when a snapshot write fails', async () => {
    const store = new FlakyStore();
    store.failKey = SNAPSHOT_KEY;
    const ledger = await Ledger.open(store, { snapshotEvery: 2 });
    for (let i = 0; i < 5; i++) await ledger.append(open(`f${i}`, i));
    await ledger.close();
    expect(await store.get(SNAPSHOT_KEY)).toBeUndefined();
    expect((await Ledger.open(store)).read.digest()).toBe(ledger.read.digest());
  });

  it('falls back to a full replay when the snapshot was made with other limits', async () => {
    const store = sqlite();
    const a = await Ledger.open(store, { limits: { episodesPerTrigger: 1 } });
    for (const e of randomEvents(60, 2)) await a.append(e);
    await a.close();
    const b = await Ledger.open(store, { limits: { episodesPerTrigger: 5 } });
    expect(b.read.digest()).toBe(stateDigest(await Ledger.replayAll(store, { episodesPerTrigger: 5 })));
  });

  it('allocates seq in the store: two writers on one file never reuse or overwrite a number', async () => {
    const a = await Ledger.open(sqlite());
    const b = await Ledger.open(sqlite());
    const events = randomEvents(100, 21);
    // Interleaved bursts from both, as two processes on one data dir would.
    const seqs = await Promise.all(events.map((e, i) => (i % 2 === 0 ? a : b).append(e)));
    expect(new Set(seqs).size).toBe(100);
    expect([...seqs].sort((x, y) => x - y)).toEqual(events.map((_, i) => i + 1));
    const store = sqlite();
    const stored = await store.getMany<LedgerEvent>(Array.from({ length: 100 }, (_, i) => eventKey(i + 1)));
    // Every event is stored exactly once, under the seq its writer acknowledged.
    seqs.forEach((seq, i) => expect(stored[seq - 1]).toEqual(events[i]));
    // A writer folds in the other's events when it sees the head move under it.
    expect(await a.append(vote(TK, 'zed', 'up', 999))).toBe(101);
    expect(a.read.digest()).toBe(stateDigest(await Ledger.replayAll(store)));
  });

  it('writes a transaction all or nothing, and rolls the read model back when the write fails', async () => {
    const store = new FlakyStore();
    const ledger = await Ledger.open(store);
    await ledger.append(open('f', 0));
    const before = ledger.read.digest();
    store.failKey = 'ev:';
    await expect(
      ledger.transaction(async (tx) => {
        expect(tx.record(resolve('f', 1)).closed).toBeDefined();
        tx.record(open('g', 2));
        // Applied at once, so later decisions in the batch see it …
        expect(ledger.read.openEpisodes('f')).toHaveLength(0);
      }),
    ).rejects.toThrow(/disk full/);
    // … and gone again when the write failed.
    expect(ledger.read.digest()).toBe(before);
    expect(ledger.seq).toBe(1);
    expect(ledger.lastWriteError?.message).toMatch(/disk full/);
    store.failKey = undefined;
    const { first, count } = await ledger.transaction(async (tx) => {
      tx.record(resolve('f', 3));
      tx.record(open('g', 4));
    });
    expect([first, count]).toEqual([2, 2]);
    expect(ledger.lastWriteError).toBeUndefined();
    expect((await Ledger.open(store)).read.digest()).toBe(ledger.read.digest());
  });

  it('rolls back a transaction whose body throws, writing nothing', async () => {
    const store = sqlite();
    const ledger = await Ledger.open(store);
    await expect(
      ledger.transaction(async (tx) => {
        tx.record(open('f', 0));
        throw new Error('decided badly');
      }),
    ).rejects.toThrow('decided badly');
    expect(ledger.seq).toBe(0);
    expect(ledger.read.openEpisodes('f')).toEqual([]);
    expect(await store.get(HEAD_KEY)).toBeUndefined();
  });

  it('names a corrupt record by its seq, skips and counts it, and keeps loading', async () => {
    const store = sqlite();
    const ledger = await Ledger.open(store, { snapshotEvery: 0 });
    for (let i = 0; i < 5; i++) await ledger.append(open(`f${i}`, i));
    await store.close();
    // Damage event #3 on disk: invalid JSON where keyv expects its envelope.
    const { DatabaseSync } = await import('node:sqlite');
    const db = new DatabaseSync(join(dir, 'ledger.sqlite'));
    db.prepare('UPDATE keyv SET value = ? WHERE key = ?').run('{"value": {"type": "op', `reprise:${eventKey(3)}`);
    db.close();
    const reopened = await Ledger.open(sqlite(), { snapshotEvery: 0 });
    expect(reopened.seq).toBe(5);
    expect(reopened.read.skipped).toBe(1);
    expect(reopened.corruptRecords).toEqual([{ seq: 3, reason: expect.stringMatching(/ev:000000000003 cannot be decoded/) }]);
    expect(reopened.read.openEpisodes('f4')).toHaveLength(1);
    expect(reopened.read.openEpisodes('f2')).toHaveLength(0);
    // And the log stays appendable after the damaged record.
    expect(await reopened.append(open('f9', 9))).toBe(6);
  });

  it('attaches a delivered thread to its open, and a later resolve carries it', async () => {
    const ledger = await Ledger.open(sqlite());
    await ledger.append(open('f', 0, { id: 'open-1' }));
    expect(ledger.read.openEpisodes('f')[0]?.threadId).toBeUndefined();
    await ledger.append({ type: 'delivered', openId: 'open-1', fingerprint: 'f', transport: 'console', messageRef: 'th-9', at: '2026-03-01T00:00:01.000Z' });
    expect(ledger.read.openEpisodes('f')[0]?.threadId).toBe('th-9');
    expect(ledger.read.occurrences(TK).newestOpen?.threadId).toBe('th-9');
    expect(
      (await ledger.record({ type: 'resolve', fingerprint: 'f', endsAt: '2026-03-01T00:14:00.000Z', at: '2026-03-01T00:20:00.000Z' })).closed,
    ).toMatchObject({ threadId: 'th-9', endsAt: '2026-03-01T00:14:00.000Z' });
  });
});
