import { describe, expect, it } from 'vitest';
import { applyEvent, createLedgerState, entryStats, replayEvents, restoreLedgerState } from '../../../src/core/ledger/ledger-state.js';
import type { LedgerState } from '../../../src/core/ledger/ledger-state.js';
import { randomEvents } from './random-events.js';

/** Recount the entry aggregate naively from the whole log, as an independent oracle. */
function naiveVotes(events: ReturnType<typeof randomEvents>): Record<string, { up: number; down: number }> {
  const newestEntry = new Map<string, string | undefined>();
  const live = new Map<string, { vote: 'up' | 'down'; entry: string | undefined }>();
  for (const e of events) {
    if (e.type === 'open') newestEntry.set(e.triggerKey, e.entry);
    if (e.type !== 'feedback') continue;
    const k = `${e.triggerKey}\u0000${e.user}`;
    const prev = live.get(k);
    if (e.vote === 'clear') live.delete(k);
    else if (prev?.vote !== e.vote) live.set(k, { vote: e.vote, entry: newestEntry.get(e.triggerKey) });
  }
  const out: Record<string, { up: number; down: number }> = {};
  for (const { vote, entry } of live.values()) {
    if (entry === undefined) continue;
    const o = (out[entry] ??= { up: 0, down: 0 });
    o[vote] += 1;
  }
  return out;
}

const json = (s: LedgerState): string => JSON.stringify(s);

describe('replay equality', () => {
  for (const seed of [1, 7, 42]) {
    it(`incremental state equals a full replay and survives a JSON snapshot (seed ${seed})`, () => {
      const events = randomEvents(2000, seed);
      const limits = { maxFingerprints: 6, maxOpenPerFingerprint: 4, episodesPerTrigger: 3, recentEpisodes: 20 };
      const live = createLedgerState(limits);
      let restored: LedgerState | undefined;
      for (const [i, e] of events.entries()) {
        applyEvent(live, e);
        if (i === 999) restored = restoreLedgerState(JSON.parse(JSON.stringify(live)));
      }
      expect(restored).toBeDefined();
      for (const e of events.slice(1000)) applyEvent(restored!, e);

      const replayed = replayEvents(events, limits);
      expect(live.applied).toBe(2000);
      // the stream is not trivial: episodes closed, votes cast, entries graded
      expect(live.recentEpisodes.length).toBeGreaterThan(0);
      expect(Object.values(live.entries).some((a) => a.resolved > 0 && a.down > 0)).toBe(true);
      // toEqual, not toStrictEqual: its type check reads `.constructor`, which is an ordinary
      // key ('constructor' is one of the trigger keys) in these null-prototype dictionaries.
      // The JSON comparison is the strict one: same fields, no stray undefineds, same order.
      expect(live).toEqual(replayed);
      expect(restored).toEqual(replayed);
      expect(json(live)).toBe(json(replayed));
      expect(json(restored!)).toBe(json(replayed));

      // the vote bookkeeping agrees with a naive recount of the log
      const naive = naiveVotes(events);
      for (const entry of ['e0', 'e1', 'e2']) {
        const s = entryStats(live, entry);
        expect({ up: s.up, down: s.down }).toEqual(naive[entry] ?? { up: 0, down: 0 });
        expect(s.up).toBeGreaterThanOrEqual(0);
        expect(s.down).toBeGreaterThanOrEqual(0);
      }
    });
  }

  it('rejects a snapshot of another version', () => {
    const s = JSON.parse(JSON.stringify(createLedgerState())) as LedgerState;
    expect(restoreLedgerState({ ...s, version: 999 })).toBeUndefined();
    expect(restoreLedgerState('garbage')).toBeUndefined();
  });
});
