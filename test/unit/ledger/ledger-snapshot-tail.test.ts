/**
 * Start from the snapshot (issue 30 item 5): opening a ledger reads its snapshot and replays
 * only the events after the snapshot's seq — and the state equals a full replay of the log, for
 * random event sequences, snapshot points and tails. A snapshot that does not match the log
 * (another event stored at its seq: a store restored or replaced under it) is discarded.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createStore } from '../../../src/adapters/keyv/keyv-store.js';
import { stateDigest } from '../../../src/core/ledger/ledger-export-format.js';
import type { Snapshot } from '../../../src/core/ledger/ledger-load.js';
import { eventKey, Ledger, SNAPSHOT_KEY } from '../../../src/core/ledger/ledger.js';
import type { Logger } from '../../../src/ports/logger.js';
import type { KeyValueStore } from '../../../src/ports/store.js';
import { randomEvents } from './random-events.js';

const LIMITS = { maxFingerprints: 40, maxOpenPerFingerprint: 5 };

/** The store, with every event key read through it recorded (the ledger's reads, seen from outside). */
function watched(store: KeyValueStore): { store: KeyValueStore; eventsRead: () => number[] } {
  const keys: string[] = [];
  const proxy = new Proxy(store, {
    get(target, prop, receiver) {
      if (prop === 'get') return (key: string) => (keys.push(key), target.get(key));
      if (prop === 'getMany') return (ks: readonly string[]) => (keys.push(...ks), target.getMany(ks));
      const v = Reflect.get(target, prop, receiver) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  const eventsRead = (): number[] => keys.filter((k) => k.startsWith('ev:')).map((k) => Number(k.slice(3)));
  return { store: proxy, eventsRead };
}

async function append(ledger: Ledger, events: ReturnType<typeof randomEvents>, sizes: readonly number[]): Promise<void> {
  for (let i = 0, k = 0; i < events.length; k++) {
    const batch = events.slice(i, i + sizes[k % sizes.length]!);
    i += batch.length;
    await ledger.transaction(async (tx) => {
      for (const e of batch) tx.record(e);
    });
  }
}

function warnings(lines: string[]): Logger {
  const log: Logger = {
    debug: () => {},
    info: () => {},
    warn: (o, m) => void lines.push(typeof o === 'string' ? o : (m ?? '')),
    error: () => {},
    child: () => log,
  };
  return log;
}

describe('ledger snapshot + tail replay', () => {
  it('reads only the events after the snapshot, and equals a full replay (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        fc.integer({ min: 0, max: 120 }),
        fc.integer({ min: 0, max: 60 }),
        fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 1, maxLength: 8 }),
        fc.integer({ min: 1, max: 50 }),
        async (seed, before, tail, sizes, snapshotEvery) => {
          const events = randomEvents(before + tail, seed);
          const store = createStore('memory://', '');
          // The events before the cut, with snapshots as a running bot takes them, and a final one on close.
          const first = await Ledger.open(store, { limits: LIMITS, snapshotEvery });
          await append(first, events.slice(0, before), sizes);
          await first.close();
          // The tail, written by a ledger that takes no snapshot (a crash before its next one).
          const second = await Ledger.open(store, { limits: LIMITS, snapshotEvery: 0 });
          await append(second, events.slice(before), sizes);
          // Nothing to snapshot before the first event.
          expect((await store.get<Snapshot>(SNAPSHOT_KEY))?.seq ?? 0).toBe(before);

          const { store: seen, eventsRead } = watched(store);
          const opened = await Ledger.open(seen, { limits: LIMITS });
          const expected = Array.from({ length: tail }, (_, i) => before + 1 + i);
          // The snapshot's own event once (does the log still hold it?), then the tail only.
          expect(eventsRead()).toEqual(before > 0 ? [before, ...expected] : expected);
          expect(opened.seq).toBe(before + tail);
          expect(opened.read.digest()).toBe(stateDigest(await Ledger.replayAll(store, LIMITS)));
          expect(opened.read.digest()).toBe(second.read.digest());
        },
      ),
      { numRuns: 60 },
    );
  });

  it('a snapshot taken over another history than the log holds is discarded: full replay, said in the log', async () => {
    const store = createStore('memory://', '');
    const events = randomEvents(80, 3);
    const ledger = await Ledger.open(store, { limits: LIMITS, snapshotEvery: 0 });
    await append(ledger, events.slice(0, 50), [5]);
    await ledger.close();
    // The log is replaced under the snapshot: the same length, another event at its seq.
    const other = randomEvents(1, 99)[0]!;
    await store.set(eventKey(50), other);
    const lines: string[] = [];
    const { store: seen, eventsRead } = watched(store);
    const reopened = await Ledger.open(seen, { limits: LIMITS, logger: warnings(lines) });
    expect(eventsRead()).toContain(1);
    expect(reopened.read.digest()).toBe(stateDigest(await Ledger.replayAll(store, LIMITS)));
    expect(lines).toEqual(['the ledger snapshot at #50 does not match the event stored there; replaying the whole log']);
    // Its next snapshot is of the log as it is: the one after that starts from it again.
    await reopened.close();
    await reopened.read.digest();
    const { store: again, eventsRead: readAgain } = watched(store);
    await Ledger.open(again, { limits: LIMITS, logger: warnings(lines) });
    expect(lines).toHaveLength(1);
    expect(readAgain()).toEqual([50]);
  });

  it('a snapshot written before it carried its tip is still used', async () => {
    const store = createStore('memory://', '');
    const ledger = await Ledger.open(store, { limits: LIMITS, snapshotEvery: 0 });
    await append(ledger, randomEvents(30, 4), [3]);
    await ledger.close();
    const snap = (await store.get<Snapshot>(SNAPSHOT_KEY))!;
    await store.set(SNAPSHOT_KEY, { seq: snap.seq, json: snap.json });
    const { store: seen, eventsRead } = watched(store);
    const reopened = await Ledger.open(seen, { limits: LIMITS });
    expect(eventsRead()).toEqual([]);
    expect(reopened.read.digest()).toBe(ledger.read.digest());
  });

  it('a large read model is snapshotted less often, one event per 4 KB of its snapshot, and a restart replays only the tail since', async () => {
    const store = createStore('memory://', '');
    const events = randomEvents(900, 7);
    const ledger = await Ledger.open(store, { snapshotEvery: 0 });
    await append(ledger, events.slice(0, 600), [7]);
    await ledger.close();
    const chars = (await store.get<Snapshot>(SNAPSHOT_KEY))!.json!.length;
    const due = Math.floor(chars / 4096);
    // The fixture's read model is large enough for its size, not the setting, to decide.
    expect(due).toBeGreaterThan(10);
    const reopened = await Ledger.open(store, { snapshotEvery: 5 });
    const snapshotsAt: number[] = [];
    for (const e of events.slice(600, 600 + 2 * due + 2)) {
      await reopened.transaction(async (tx) => tx.record(e));
      const seq = (await store.get<Snapshot>(SNAPSHOT_KEY))!.seq;
      if (seq !== (snapshotsAt.at(-1) ?? 600)) snapshotsAt.push(seq);
    }
    // Not every 5 events: the first after `due`, the next about `due` after it (the model grew a little).
    expect(snapshotsAt[0]).toBe(600 + due);
    expect(snapshotsAt.length).toBeGreaterThanOrEqual(1);
    expect(snapshotsAt.length).toBeLessThanOrEqual(2);
    const { store: seen, eventsRead } = watched(store);
    const again = await Ledger.open(seen, {});
    expect(eventsRead().length).toBeLessThanOrEqual(due + 1);
    expect(again.read.digest()).toBe(stateDigest(await Ledger.replayAll(store)));
  });
});
