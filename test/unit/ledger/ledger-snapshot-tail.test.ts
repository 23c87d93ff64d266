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
import { SNAPSHOT_PART_CHARS, snapshotPartKey, snapshotText, type Snapshot } from '../../../src/core/ledger/ledger-load.js';
import { eventKey, Ledger, SNAPSHOT_KEY } from '../../../src/core/ledger/ledger.js';
import type { Logger } from '../../../src/ports/logger.js';
import type { KeyValueStore } from '../../../src/ports/store.js';
import { randomEvents } from './random-events.js';

const LIMITS = { maxFingerprints: 40, maxOpenPerFingerprint: 5 };

/** `store` with some of its methods replaced, the others its own. */
function withMethods(store: KeyValueStore, replaced: Partial<KeyValueStore>): KeyValueStore {
  return new Proxy(store, {
    get(target, prop, receiver) {
      if (prop in replaced) return replaced[prop as keyof KeyValueStore];
      const v = Reflect.get(target, prop, receiver) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

/** The store, with every event key read through it recorded (the ledger's reads, seen from outside). */
function watched(store: KeyValueStore): { store: KeyValueStore; eventsRead: () => number[] } {
  const keys: string[] = [];
  const proxy = withMethods(store, {
    get: <T>(key: string) => (keys.push(key), store.get<T>(key)),
    getMany: <T>(ks: readonly string[]) => (keys.push(...ks), store.getMany<T>(ks)),
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

/** `count` random events (`seed`), the first `cut` written by a ledger that snapshots only on close. */
async function snapshotted(count: number, seed: number, cut: number, sizes: readonly number[], opts: { snapshotPartChars?: number } = {}) {
  const store = createStore('memory://', '');
  const events = randomEvents(count, seed);
  const ledger = await Ledger.open(store, { snapshotEvery: 0, ...opts });
  await append(ledger, events.slice(0, cut), sizes);
  await ledger.close();
  return { store, events, ledger };
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

  it('a snapshot written before it carried its tip, or with its text in the record (older builds), is still used', async () => {
    const store = createStore('memory://', '');
    const ledger = await Ledger.open(store, { limits: LIMITS, snapshotEvery: 0 });
    await append(ledger, randomEvents(30, 4), [3]);
    await ledger.close();
    const snap = (await store.get<Snapshot>(SNAPSHOT_KEY))!;
    await store.set(SNAPSHOT_KEY, { seq: snap.seq, json: await snapshotText(store, snap) });
    const { store: seen, eventsRead } = watched(store);
    const reopened = await Ledger.open(seen, { limits: LIMITS });
    expect(eventsRead()).toEqual([]);
    expect(reopened.read.digest()).toBe(ledger.read.digest());
  });

  it('a large read model is snapshotted less often, one event per 4 KB of its snapshot, and a restart replays only the tail since', async () => {
    const { store, events } = await snapshotted(900, 7, 600, [7]);
    const chars = (await store.get<Snapshot>(SNAPSHOT_KEY))!.chars!;
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

  it('a large model is stored in parts no bigger than a part, the replaced parts go, and a missing part means a full replay, said in the log', async () => {
    // Parts of 1,000 characters: this model's text is cut many times, each cut joined back.
    const partChars = 1000;
    const { store, events, ledger } = await snapshotted(1200, 11, 1100, [50], { snapshotPartChars: partChars });
    const first = (await store.get<Snapshot>(SNAPSHOT_KEY))!;
    const text = (await snapshotText(store, first))!;
    expect(first.parts).toBeGreaterThan(20);
    expect(first.parts).toBe(Math.ceil(first.chars! / partChars));
    expect(text).toBe(JSON.stringify(JSON.parse(text)));
    for (let i = 0; i < first.parts!; i++) expect((await store.get<string>(snapshotPartKey(first.seq, i)))!.length).toBeLessThanOrEqual(partChars);
    expect((await Ledger.open(store, {})).read.digest()).toBe(ledger.read.digest());
    // The default part is large: one write of a part is never a copy of a whole 60 MB model.
    expect(SNAPSHOT_PART_CHARS).toBe(4 * 1024 * 1024);

    const again = await Ledger.open(store, { snapshotEvery: 0, snapshotPartChars: partChars });
    await append(again, events.slice(1100), [10]);
    await again.close();
    const second = (await store.get<Snapshot>(SNAPSHOT_KEY))!;
    expect(second.seq).toBe(1200);
    // The replaced snapshot's parts are gone; the new one's are there.
    for (let i = 0; i < first.parts!; i++) expect(await store.get(snapshotPartKey(first.seq, i))).toBeUndefined();
    expect(typeof (await store.get(snapshotPartKey(second.seq, 0)))).toBe('string');

    // A part lost: not used (never a torn state), the whole log replayed instead.
    await store.delete(snapshotPartKey(second.seq, second.parts! - 1));
    const lines: string[] = [];
    const { store: seen, eventsRead } = watched(store);
    const reopened = await Ledger.open(seen, { logger: warnings(lines) });
    expect(eventsRead()).toContain(1);
    expect(reopened.read.digest()).toBe(again.read.digest());
    expect(lines).toEqual(['the ledger snapshot at #1200 has a part missing or cut short; replaying the whole log']);
  });

  it('a failed record write leaves the previous snapshot whole, and the parts it wrote go', async () => {
    const { store, events } = await snapshotted(60, 12, 40, [5]);
    const before = (await store.get<Snapshot>(SNAPSHOT_KEY))!;
    // The next snapshot's parts are written, its record is refused (a full disk).
    const partsWritten: string[] = [];
    const failing = withMethods(store, {
      set: async (key: string, value: unknown) => {
        if (key === SNAPSHOT_KEY) throw new Error('disk full writing the record');
        partsWritten.push(key);
        await store.set(key, value);
      },
    });
    const next = await Ledger.open(failing, { snapshotEvery: 0, snapshotPartChars: 500 });
    await append(next, events.slice(40), [5]);
    await next.close();
    expect(await store.get<Snapshot>(SNAPSHOT_KEY)).toEqual(before);
    expect(partsWritten.length).toBeGreaterThan(1);
    for (const key of partsWritten) expect(await store.get(key)).toBeUndefined();
    expect(typeof (await store.get(snapshotPartKey(before.seq, 0)))).toBe('string');
    const { store: seen, eventsRead } = watched(store);
    const reopened = await Ledger.open(seen, {});
    // The previous snapshot, then the 20 events after it.
    expect(eventsRead()).toEqual([40, ...Array.from({ length: 20 }, (_, i) => 41 + i)]);
    expect(reopened.read.digest()).toBe(next.read.digest());
  });
});
