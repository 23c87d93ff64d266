import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createStore } from '../../../src/adapters/keyv/keyv-store.js';
import { HEAD_KEY, Ledger, SNAPSHOT_KEY, eventKey } from '../../../src/core/ledger/ledger.js';
import type { LedgerEvent } from '../../../src/core/ledger-events.js';
import type { KeyValueStore } from '../../../src/ports/store.js';
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

const json = (v: unknown): string => JSON.stringify(v);

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
    expect(ledger.trackRecord(ENTRY, 'incident')).toMatchObject({ recalls: 1, resolved: 1, up: 1, factor: 3 / 4 });
    expect(ledger.occurrences(TK).count).toBe(1);
    expect(ledger.resolveChannelLive()).toBe(true);
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
    const before = json(first.state);
    await first.close();
    await expect(first.append(events[0]!)).rejects.toThrow(/closed/);

    const store = sqlite();
    expect(await store.get<{ seq: number }>(SNAPSHOT_KEY)).toMatchObject({ seq: 400 });
    const again = await Ledger.open(store, { snapshotEvery: 150 });
    expect(again.seq).toBe(400);
    expect(json(again.state)).toBe(before);
    expect(json(await Ledger.replayAll(store))).toBe(before);
  });

  it('replays the tail written after the last snapshot (crash without close)', async () => {
    const events = randomEvents(250, 5);
    const crashed = await Ledger.open(sqlite(), { snapshotEvery: 100 });
    for (const e of events) await crashed.append(e); // snapshots at 100 and 200, tail 201–250
    const expected = json(crashed.state);

    const store = sqlite();
    expect(await store.get<{ seq: number }>(SNAPSHOT_KEY)).toMatchObject({ seq: 200 });
    // Prove the snapshot is used: damage an event it covers; only a full replay would notice.
    await store.set(eventKey(1), { type: 'damaged' });
    const reopened = await Ledger.open(store);
    expect(reopened.seq).toBe(250);
    expect(json(reopened.state)).toBe(expected);
    expect((await Ledger.replayAll(store)).skipped).toBe(1);
  });

  it('ignores an event written past the head (crash before the head write) and overwrites it', async () => {
    const store = sqlite();
    const ledger = await Ledger.open(store);
    await ledger.append(open('f', 0));
    await store.set(eventKey(2), resolve('f', 1)); // never acknowledged
    const reopened = await Ledger.open(store);
    expect(reopened.seq).toBe(1);
    expect(reopened.openEpisodes('f')).toHaveLength(1);
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
    expect(ledger.openEpisodes('f')).toHaveLength(1);
    store.failKey = undefined;
    expect(await ledger.append(resolve('f', 2))).toBe(2);
    expect(json((await Ledger.open(store)).state)).toBe(json(ledger.state));
  });

  it('keeps appending when a snapshot write fails', async () => {
    const store = new FlakyStore();
    store.failKey = SNAPSHOT_KEY;
    const ledger = await Ledger.open(store, { snapshotEvery: 2 });
    for (let i = 0; i < 5; i++) await ledger.append(open(`f${i}`, i));
    await ledger.close();
    expect(await store.get(SNAPSHOT_KEY)).toBeUndefined();
    expect(json((await Ledger.open(store)).state)).toBe(json(ledger.state));
  });

  it('falls back to a full replay when the snapshot was made with other limits', async () => {
    const store = sqlite();
    const a = await Ledger.open(store, { limits: { episodesPerTrigger: 1 } });
    for (const e of randomEvents(60, 2)) await a.append(e);
    await a.close();
    const b = await Ledger.open(store, { limits: { episodesPerTrigger: 5 } });
    expect(json(b.state)).toBe(json(await Ledger.replayAll(store, { episodesPerTrigger: 5 })));
    expect(b.state.limits.episodesPerTrigger).toBe(5);
  });
});
