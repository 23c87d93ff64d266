/**
 * Property (issue 12 item 5): the aggregates the ledger maintains incrementally — event by
 * event, in transactions of any size, across a snapshot — equal a full replay of the stored
 * log, for random sequences that include resolves arriving before their open, timestamps out
 * of order, and users changing (and clearing) their votes. Votes are also checked against a
 * naive recount, an oracle that shares no code with the ledger.
 */
import { stateDigest } from '../../../src/core/ledger/ledger-export-format.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createStore } from '../../../src/adapters/keyv/keyv-store.js';
import { Ledger } from '../../../src/core/ledger/ledger.js';
import { applyEvent, createLedgerState, entryStats, replayEvents, restoreLedgerState } from '../../../src/core/ledger/ledger-state.js';
import type { LedgerEvent } from '../../../src/core/ledger-events.js';
import { at } from './ledger-events-fixture.js';

const FPS = ['f0', 'f1', 'f2', 'gitops:a', '__proto__'];
const TRIGGERS = ['t0', 't1', 'constructor'];
const ENTRIES = ['e0', 'e1'];
const USERS = ['ann', 'bob', 'eve'];

/** Minutes drawn independently per event: time runs backwards as often as forwards. */
const minute = fc.integer({ min: 0, max: 600 });

const openArb = fc
  .record({
    fp: fc.constantFrom(...FPS),
    tk: fc.constantFrom(...TRIGGERS),
    entry: fc.option(fc.constantFrom(...ENTRIES), { nil: undefined }),
    dup: fc.constantFrom('d0', 'd1'),
    m: minute,
  })
  .map(({ fp, tk, entry, dup, m }): LedgerEvent => ({
    type: 'open',
    fingerprint: fp,
    triggerKey: tk,
    kind: entry === undefined ? 'fresh' : 'recall',
    ...(entry === undefined ? {} : { entry, answerKind: 'incident' as const }),
    dupFingerprint: dup,
    verdict: 'action_suggested',
    resolvable: !fp.includes(':'),
    at: at(m),
  }));
const resolveArb = fc.record({ fp: fc.constantFrom(...FPS), m: minute }).map(({ fp, m }): LedgerEvent => ({ type: 'resolve', fingerprint: fp, at: at(m) }));
const voteArb = fc
  .record({ tk: fc.constantFrom(...TRIGGERS), user: fc.constantFrom(...USERS), vote: fc.constantFrom('up', 'down', 'clear'), m: minute })
  .map(({ tk, user, vote, m }): LedgerEvent => ({ type: 'feedback', triggerKey: tk, user, vote: vote as 'up' | 'down' | 'clear', at: at(m) }));
const silenceArb = fc
  .record({ tk: fc.constantFrom(...TRIGGERS), m: minute, len: fc.integer({ min: 1, max: 300 }) })
  .map(({ tk, m, len }): LedgerEvent => ({ type: 'silence', triggerKey: tk, user: 'ann', until: at(m + len), at: at(m) }));
const confirmArb = fc
  .record({ entry: fc.constantFrom(...ENTRIES), dup: fc.constantFrom('d0', 'd1'), m: minute })
  .map(({ entry, dup, m }): LedgerEvent => ({ type: 'confirm', entry, dupFingerprint: dup, at: at(m) }));

/** Resolves and votes weighted up: pairing and vote moves are where incremental upkeep goes wrong. */
const eventsArb = fc.array(
  fc.oneof(
    { arbitrary: openArb, weight: 3 },
    { arbitrary: resolveArb, weight: 3 },
    { arbitrary: voteArb, weight: 3 },
    { arbitrary: silenceArb, weight: 1 },
    { arbitrary: confirmArb, weight: 1 },
  ),
  { minLength: 1, maxLength: 120 },
);

const LIMITS = { maxFingerprints: 4, maxOpenPerFingerprint: 3, episodesPerTrigger: 3, recentEpisodes: 10 };

/** Live votes per entry, recounted naively: the newest vote of each (trigger, user) against the trigger's newest open then. */
function naiveVotes(events: readonly LedgerEvent[]): Record<string, { up: number; down: number }> {
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

describe('incremental aggregates equal a full replay (property)', () => {
  it('event by event, across a JSON snapshot at any point', () => {
    fc.assert(
      fc.property(eventsArb, fc.nat(), (events, cutAt) => {
        const cut = cutAt % (events.length + 1);
        const live = createLedgerState(LIMITS);
        for (const e of events.slice(0, cut)) applyEvent(live, e);
        const restored = restoreLedgerState(JSON.parse(JSON.stringify(live)))!;
        for (const e of events.slice(cut)) {
          applyEvent(live, e);
          applyEvent(restored, e);
        }
        const replayed = replayEvents(events, LIMITS);
        expect(JSON.stringify(live)).toBe(JSON.stringify(replayed));
        expect(JSON.stringify(restored)).toBe(JSON.stringify(replayed));
        const naive = naiveVotes(events);
        for (const entry of ENTRIES) {
          const s = entryStats(live, entry);
          expect({ up: s.up, down: s.down }).toEqual(naive[entry] ?? { up: 0, down: 0 });
        }
      }),
      { numRuns: 300 },
    );
  });

  it('through the ledger: transactions of random sizes and snapshots, then a replay of what was stored', async () => {
    await fc.assert(
      fc.asyncProperty(
        eventsArb,
        fc.array(fc.integer({ min: 1, max: 7 }), { minLength: 1, maxLength: 40 }),
        fc.integer({ min: 0, max: 9 }),
        async (events, sizes, snapshotEvery) => {
          const store = createStore('memory://', '');
          const ledger = await Ledger.open(store, { limits: LIMITS, snapshotEvery });
          let i = 0;
          for (let k = 0; i < events.length; k++) {
            const n = sizes[k % sizes.length]!;
            const batch = events.slice(i, i + n);
            i += n;
            await ledger.transaction(async (tx) => {
              for (const e of batch) tx.record(e);
            });
          }
          const replayed = await Ledger.replayAll(store, LIMITS);
          expect(ledger.read.digest()).toBe(stateDigest(replayed));
          const reopened = await Ledger.open(store, { limits: LIMITS });
          expect(reopened.read.digest()).toBe(stateDigest(replayed));
          expect(JSON.stringify(replayed)).toBe(JSON.stringify(replayEvents(events, LIMITS)));
        },
      ),
      { numRuns: 100 },
    );
  });
});
