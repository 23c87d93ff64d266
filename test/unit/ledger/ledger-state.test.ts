import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  applyEvent,
  createLedgerState,
  dupStats,
  entryStats,
  occurrences,
  openEpisodes,
  recentEpisodes,
  replayEvents,
  silenceState,
  trackRecord,
} from '../../../src/core/ledger/ledger-state.js';
import { ENTRY, TK, at, confirm, open, resolve, silence, vote } from './ledger-events-fixture.js';

describe('episodes', () => {
  it('pairs each resolve with the newest unresolved open of its fingerprint (LIFO)', () => {
    const s = replayEvents([open('f1', 0, { threadId: 't0' }), open('f1', 5, { threadId: 't5' }), open('f1', 9)]);
    const closed = applyEvent(s, resolve('f1', 10));
    expect(closed).toMatchObject({ fingerprint: 'f1', openedAt: at(9), resolvedAt: at(10) });
    expect(openEpisodes(s, 'f1').map((e) => e.threadId)).toEqual(['t5', 't0']);
    expect(applyEvent(s, resolve('f1', 11))?.threadId).toBe('t5');
    expect(entryStats(s, ENTRY)).toMatchObject({ recalls: 3, resolved: 2, lastResolved: at(11) });
    expect(occurrences(s, TK)).toMatchObject({ count: 3, resolved: 2 });
  });

  it('buffers a resolve that arrives first and pairs it with the next open', () => {
    const s = createLedgerState();
    expect(applyEvent(s, resolve('f2', 1))).toBeUndefined();
    const closed = applyEvent(s, open('f2', 3, { threadId: 'th' }));
    expect(closed).toMatchObject({ openedAt: at(3), resolvedAt: at(1), threadId: 'th' });
    expect(openEpisodes(s, 'f2')).toEqual([]);
    expect(entryStats(s, ENTRY)).toMatchObject({ recalls: 1, resolved: 1 });
    // the buffered resolve is consumed: the next open stays unresolved
    applyEvent(s, open('f2', 4));
    expect(openEpisodes(s, 'f2')).toHaveLength(1);
  });

  it('drops a buffered resolve older than the buffer window', () => {
    const s = replayEvents([resolve('f3', 0), open('f3', 24 * 60)]);
    expect(openEpisodes(s, 'f3')).toHaveLength(1);
    expect(entryStats(s, ENTRY).resolved).toBe(0);
  });

  it('keeps memory bounded: unresolved opens per fingerprint and fingerprints overall', () => {
    const s = createLedgerState({ maxOpenPerFingerprint: 3, maxFingerprints: 5 });
    for (let i = 0; i < 10; i++) applyEvent(s, open('same', i));
    expect(openEpisodes(s, 'same')).toHaveLength(3);
    for (let i = 0; i < 10; i++) applyEvent(s, open(`fp${i}`, i));
    expect(Object.keys(s.fingerprints)).toHaveLength(5);
    expect(s.fingerprintCount).toBe(5);
    expect(Object.keys(s.fingerprints)).toContain('fp9');
  });

  it('lists recent closed episodes newest first, per trigger and overall', () => {
    const s = replayEvents([open('a', 0), open('b', 1, { triggerKey: 'other' }), resolve('a', 2), resolve('b', 3)]);
    expect(recentEpisodes(s).map((e) => e.fingerprint)).toEqual(['b', 'a']);
    expect(recentEpisodes(s, TK).map((e) => e.fingerprint)).toEqual(['a']);
    expect(dupStats(s, 'dup-1')).toMatchObject({ opens: 2, resolved: 2, lastResolvedAt: at(3) });
  });
});

describe('entry aggregate', () => {
  it('never counts synthetic (non-resolvable) fingerprints', () => {
    const s = replayEvents([open('gitops:x', 0, { resolvable: false }), resolve('gitops:x', 1)]);
    expect(entryStats(s, ENTRY)).toMatchObject({ recalls: 0, resolved: 0 });
    expect(occurrences(s, TK).count).toBe(1);
  });

  it('ignores fresh opens and runbook answers in recalls', () => {
    const s = replayEvents([open('f', 0, { kind: 'fresh', entry: undefined }), open('g', 1, { answerKind: 'runbook', entry: 'playbooks/crashloop.md' })]);
    expect(entryStats(s, 'playbooks/crashloop.md').recalls).toBe(0);
  });

  it('moves a changed vote, clears it, and keeps it with the entry it was cast on', () => {
    const s = replayEvents([open('f', 0), vote(TK, 'bob', 'up', 1)]);
    expect(entryStats(s, ENTRY)).toMatchObject({ up: 1, down: 0 });
    applyEvent(s, vote(TK, 'bob', 'up', 2)); // duplicate click: idempotent
    expect(entryStats(s, ENTRY)).toMatchObject({ up: 1, down: 0 });
    applyEvent(s, vote(TK, 'bob', 'down', 3));
    expect(entryStats(s, ENTRY)).toMatchObject({ up: 0, down: 1 });
    applyEvent(s, vote(TK, 'bob', 'clear', 4));
    expect(entryStats(s, ENTRY)).toMatchObject({ up: 0, down: 0 });
    expect(occurrences(s, TK)).toMatchObject({ up: 0, down: 0 });

    applyEvent(s, vote(TK, 'carol', 'down', 5)); // attributed to ENTRY
    applyEvent(s, open('f', 6, { entry: 'incidents/other.md' }));
    applyEvent(s, vote(TK, 'dave', 'down', 7)); // attributed to the newest open's entry
    expect(entryStats(s, ENTRY).down).toBe(1);
    expect(entryStats(s, 'incidents/other.md').down).toBe(1);
    applyEvent(s, vote(TK, 'carol', 'clear', 8)); // removed from where it was cast
    expect(entryStats(s, ENTRY).down).toBe(0);
    expect(entryStats(s, 'incidents/other.md').down).toBe(1);
  });

  it('records a vote on a fresh investigation without weighing any entry', () => {
    const s = replayEvents([open('f', 0, { kind: 'fresh', entry: undefined }), vote(TK, 'bob', 'down', 1)]);
    expect(Object.keys(s.entries)).toEqual([]);
    expect(occurrences(s, TK).down).toBe(1);
  });

  it('offsets one 👎 per two confirmations', () => {
    const s = replayEvents([open('f', 0), vote(TK, 'bob', 'down', 1), vote(TK, 'eve', 'down', 1), confirm(ENTRY, 2)]);
    expect(entryStats(s, ENTRY)).toMatchObject({ down: 2, confirmations: 1, effectiveDown: 2 });
    applyEvent(s, confirm(ENTRY, 3));
    expect(entryStats(s, ENTRY).effectiveDown).toBe(1);
    for (let i = 0; i < 6; i++) applyEvent(s, confirm(ENTRY, 4 + i));
    expect(entryStats(s, ENTRY).effectiveDown).toBe(0);
  });
});

describe('track record (outcome factor)', () => {
  const H = 60; // minutes in an hour
  const WINDOW = 24 * H * 60_000; // the default resolve window, in ms
  const now = (m: number) => new Date(at(m));
  const tr = (s: ReturnType<typeof replayEvents>, m: number, kind: 'incident' | 'runbook' = 'incident', entry = ENTRY) =>
    trackRecord(s, entry, kind, now(m), WINDOW);

  it('counts an unresolved recall only once concluded: in progress until the resolve window lapses', () => {
    const s = replayEvents([resolve('unrelated', 0), open('f', 1)]);
    expect(tr(s, 10)).toMatchObject({ recalls: 1, resolved: 0, failed: 0, inFlight: 1, factor: 1, rate: 0.5, withheld: true });
    // 24 h after the open it is a failure: rate (0+1)/(1+2), factor (0+1)/(1+1).
    expect(tr(s, 1 + 24 * H)).toMatchObject({ failed: 1, inFlight: 0, withheld: false, rate: 1 / 3, factor: 1 / 2 });
  });

  it('does not count failures while the ledger has never seen a resolve (Alertmanager without send_resolved)', () => {
    const s = replayEvents([open('f', 0), open('g', 1)]);
    expect(tr(s, 48 * H)).toMatchObject({ failed: 0, inFlight: 2, factor: 1, withheld: true });
    applyEvent(s, resolve('unrelated', 48 * H));
    expect(tr(s, 48 * H)).toMatchObject({ failed: 2, factor: 1 / 3, rate: 1 / 4 });
  });

  it('never lowers confidence for a success: one resolved recall keeps the factor at 1 and raises the rate', () => {
    const s = replayEvents([open('f', 0), resolve('f', 14)]);
    expect(tr(s, 20)).toMatchObject({ resolved: 1, failed: 0, factor: 1, rate: 2 / 3, withheld: false });
  });

  it('uses S = resolved + 👍, N = resolved + failed + 👍 + 👎′: rate (S+1)/(N+2), factor (S+1)/(N+1)', () => {
    const s = replayEvents([
      resolve('x', 0),
      open('f', 0),
      resolve('f', 1),
      open('f', 2),
      resolve('f', 3),
      open('f', 4),
      vote(TK, 'bob', 'up', 5),
      vote(TK, 'eve', 'down', 5),
      confirm(ENTRY, 6),
      confirm(ENTRY, 7),
    ]);
    // resolved 2, the third recall failed (past the window), up 1, down 1 offset by 2 confirmations
    expect(tr(s, 4 + 25 * H)).toMatchObject({ resolved: 2, failed: 1, effectiveDown: 0, rate: 4 / 6, factor: 4 / 5 });
    // Ten minutes in, the third recall is still in progress: neither success nor failure.
    expect(tr(s, 14)).toMatchObject({ failed: 0, inFlight: 1, rate: 4 / 5, factor: 1 });
  });

  it('applies feedback even without a resolve channel', () => {
    const s = replayEvents([open('f', 0), vote(TK, 'bob', 'down', 1)]);
    expect(tr(s, 2)).toMatchObject({ withheld: false, rate: 1 / 3, factor: 1 / 2 });
  });

  it('never decays a runbook by resolves or lapses, only by votes', () => {
    const rb = 'playbooks/crashloop.md';
    const s = replayEvents([
      open('f', 0, { entry: rb, answerKind: 'runbook', kind: 'fresh' }),
      open('f', 1, { entry: rb, answerKind: 'runbook', kind: 'recall' }),
      resolve('x', 2),
    ]);
    expect(tr(s, 48 * H, 'runbook', rb)).toMatchObject({ factor: 1, withheld: true });
    applyEvent(s, vote(TK, 'bob', 'down', 3));
    expect(tr(s, 48 * H, 'runbook', rb)).toMatchObject({ rate: 1 / 3, factor: 1 / 2, withheld: false });
    applyEvent(s, vote(TK, 'eve', 'up', 4));
    expect(tr(s, 48 * H, 'runbook', rb)).toMatchObject({ rate: 2 / 4, factor: 2 / 3 });
  });

  it('withholds for an entry never observed', () => {
    const s = replayEvents([resolve('x', 0)]);
    expect(tr(s, 1, 'incident', 'incidents/new.md')).toMatchObject({ factor: 1, rate: 0.5, withheld: true, recalls: 0 });
  });

  it('a recall pushed out of the in-flight bound counts as a failure, and back as a success if it resolves', () => {
    const s = replayEvents([resolve('x', 0), open('a', 1), open('b', 2)], { inFlightPerEntry: 1 });
    expect(tr(s, 3)).toMatchObject({ failed: 1, inFlight: 1 });
    applyEvent(s, resolve('a', 4));
    expect(tr(s, 5)).toMatchObject({ resolved: 1, failed: 0, inFlight: 1, factor: 1 });
  });

  it('is monotonic for any history: a resolve or 👍 never lowers the factor, a lapse or 👎 never raises it', () => {
    const step = fc.oneof(
      fc.record({ kind: fc.constant('open' as const), fp: fc.integer({ min: 0, max: 4 }) }),
      fc.record({ kind: fc.constant('resolve' as const), fp: fc.integer({ min: 0, max: 4 }) }),
      fc.record({
        kind: fc.constant('vote' as const),
        user: fc.constantFrom('ann', 'bob', 'eve'),
        vote: fc.constantFrom('up' as const, 'down' as const, 'clear' as const),
      }),
      fc.record({ kind: fc.constant('confirm' as const) }),
      fc.record({ kind: fc.constant('wait' as const), minutes: fc.integer({ min: 1, max: 30 * H }) }),
    );
    fc.assert(
      fc.property(fc.array(step, { maxLength: 40 }), fc.integer({ min: 0, max: 4 }), fc.constantFrom('up' as const, 'down' as const), (steps, fp, v) => {
        let m = 0;
        const s = replayEvents([resolve('channel', 0)]);
        for (const st of steps) {
          m += 1;
          if (st.kind === 'open') applyEvent(s, open(`f${st.fp}`, m));
          else if (st.kind === 'resolve') applyEvent(s, resolve(`f${st.fp}`, m));
          else if (st.kind === 'vote') applyEvent(s, vote(TK, st.user, st.vote, m));
          else if (st.kind === 'confirm') applyEvent(s, confirm(ENTRY, m));
          else m += st.minutes;
        }
        const before = tr(s, m);
        expect(before.factor).toBeLessThanOrEqual(1);
        // A success: the newest open of fp resolves, or a new 👍.
        const ok = replayEvents([]);
        Object.assign(ok, structuredClone(s));
        applyEvent(ok, resolve(`f${fp}`, m + 1));
        expect(tr(ok, m + 1).factor).toBeGreaterThanOrEqual(tr(s, m + 1).factor - 1e-12);
        // A failure: time passes until every open recall lapses, or a 👎 from a new voter.
        expect(tr(s, m + 25 * H).factor).toBeLessThanOrEqual(before.factor + 1e-12);
        const voted = replayEvents([]);
        Object.assign(voted, structuredClone(s));
        applyEvent(voted, vote(TK, 'newcomer', v, m + 1));
        if (v === 'up') expect(tr(voted, m + 1).factor).toBeGreaterThanOrEqual(tr(s, m + 1).factor - 1e-12);
        else expect(tr(voted, m + 1).factor).toBeLessThanOrEqual(tr(s, m + 1).factor + 1e-12);
      }),
      { numRuns: 300 },
    );
  });
});

describe('occurrences', () => {
  it('tracks count, last seen, previous KB link and the newest concluded open', () => {
    const s = replayEvents([
      open('f', 0, { curatedUrl: 'https://git/pr/1', verdict: 'action_required' }),
      open('f', 10, { kind: 'fresh', entry: undefined, verdict: 'inconclusive' }),
    ]);
    const o = occurrences(s, TK);
    expect(o).toMatchObject({ count: 2, firstSeen: at(0), lastSeen: at(10), previousKbLink: 'https://git/pr/1' });
    expect(o.newestOpen?.at).toBe(at(10));
    expect(o.newestConcludedOpen?.at).toBe(at(0));
    expect(occurrences(s, 'never')).toEqual({ count: 0, resolved: 0, up: 0, down: 0 });
  });

  it('first seen is when the alert first fired (its startsAt), not when Reprise heard of it; a startsAt after that is not believed', () => {
    const fired = new Date(Date.parse(at(0)) - 7 * 60_000).toISOString();
    expect(occurrences(replayEvents([open('f', 0, { startsAt: fired })]), TK).firstSeen).toBe(fired);
    const later = new Date(Date.parse(at(0)) + 60_000).toISOString();
    expect(occurrences(replayEvents([open('f', 0, { startsAt: later })]), TK).firstSeen).toBe(at(0));
    expect(occurrences(replayEvents([open('f', 0, { startsAt: 'garbage' })]), TK).firstSeen).toBe(at(0));
  });
});

describe('silence', () => {
  const now = (m: number) => new Date(at(m));

  it('holds until `until` and then lapses', () => {
    const s = replayEvents([open('f', 0), silence(TK, 1, 61)]);
    expect(silenceState(s, TK, now(30)).active).toBe(true);
    expect(silenceState(s, TK, now(61)).active).toBe(false);
    expect(silenceState(s, 'other', now(30))).toEqual({ active: false });
  });

  it('is ended by a resolve of the trigger', () => {
    const s = replayEvents([open('f', 0), silence(TK, 1, 600), resolve('f', 5)]);
    expect(silenceState(s, TK, now(6))).toMatchObject({ active: false, silence: { endedBy: 'resolve', endedAt: at(5) } });
  });

  it('is ended by a resolve arriving after the open was already resolved (same fingerprint)', () => {
    const s = replayEvents([open('f', 0), resolve('f', 1), silence(TK, 2, 600), resolve('f', 5)]);
    expect(silenceState(s, TK, now(6)).active).toBe(false);
  });

  it('is ended by a 👎 newer than the silence, not by an older one', () => {
    const s = replayEvents([open('f', 0), vote(TK, 'bob', 'down', 1), silence(TK, 2, 600)]);
    expect(silenceState(s, TK, now(3)).active).toBe(true);
    applyEvent(s, vote(TK, 'bob', 'up', 4));
    expect(silenceState(s, TK, now(5)).active).toBe(true);
    applyEvent(s, vote(TK, 'eve', 'down', 6));
    expect(silenceState(s, TK, now(7))).toMatchObject({ active: false, silence: { endedBy: 'down' } });
  });

  it('is ended by a critical firing recorded as a silence with until = now', () => {
    const s = replayEvents([silence(TK, 0, 600), silence(TK, 5, 5, 'reprise')]);
    expect(silenceState(s, TK, now(5)).active).toBe(false);
  });
});

describe('bad input', () => {
  it('skips malformed events without throwing', () => {
    const s = createLedgerState();
    for (const bad of [null, 42, {}, { type: 'nope', at: at(0) }, { type: 'open', at: at(0) }, { type: 'resolve', fingerprint: 'f', at: 'yesterday' }]) {
      expect(applyEvent(s, bad)).toBeUndefined();
    }
    expect(s).toMatchObject({ skipped: 6, applied: 0 });
  });

  it('is immune to prototype keys in trigger keys and user names', () => {
    const s = replayEvents([open('__proto__', 0, { triggerKey: '__proto__' }), vote('__proto__', '__proto__', 'down', 1)]);
    expect(occurrences(s, '__proto__')).toMatchObject({ count: 1, down: 1 });
    expect(({} as Record<string, unknown>)['count']).toBeUndefined();
  });
});

describe('findings', () => {
  const WINDOW = 24 * 3_600_000;
  const finding = (m: number, o: Partial<Record<string, unknown>> = {}) => ({
    type: 'finding' as const,
    openId: 'o1',
    fingerprint: 'f',
    triggerKey: TK,
    kind: 'recall' as const,
    status: 'completed' as const,
    entry: ENTRY,
    confidence: 0.86,
    verdict: 'action_suggested' as const,
    summary: 'heap too big',
    topCause: 'Xmx above the limit',
    checked: ['k8s__pod_status: OOMKilled'],
    calls: 2,
    tokensIn: 900,
    tokensOut: 120,
    at: at(m),
    ...o,
  });

  it('counts a verified recall against its entry: in progress, then a success when it resolves', () => {
    const s = replayEvents([resolve('x', 0), open('f', 1, { id: 'o1', kind: 'fresh', entry: undefined, answerKind: undefined, verdict: 'inconclusive' })]);
    expect(trackRecord(s, ENTRY, 'incident', new Date(at(2)), WINDOW)).toMatchObject({ recalls: 0 });
    applyEvent(s, finding(2));
    expect(trackRecord(s, ENTRY, 'incident', new Date(at(3)), WINDOW)).toMatchObject({ recalls: 1, inFlight: 1, resolved: 0 });
    applyEvent(s, finding(3)); // a duplicate counts once
    expect(trackRecord(s, ENTRY, 'incident', new Date(at(3)), WINDOW)).toMatchObject({ recalls: 1 });
    applyEvent(s, resolve('f', 10));
    expect(trackRecord(s, ENTRY, 'incident', new Date(at(11)), WINDOW)).toMatchObject({ recalls: 1, resolved: 1, inFlight: 0, factor: 1 });
    expect(occurrences(s, TK).newestConcludedOpen).toMatchObject({ id: 'o1', verdict: 'action_suggested' });
  });

  it('counts a verdict that arrives after the resolve as a recall that already succeeded', () => {
    const s = replayEvents([open('f', 1, { id: 'o1', kind: 'fresh', entry: undefined, answerKind: undefined }), resolve('f', 5)]);
    applyEvent(s, finding(6));
    expect(trackRecord(s, ENTRY, 'incident', new Date(at(7)), WINDOW)).toMatchObject({ recalls: 1, resolved: 1, inFlight: 0 });
  });

  it("keeps a fresh finding out of every entry's record, but remembers it for the trigger and sums the day's tokens", async () => {
    const { triggerFindings, tokensSpent } = await import('../../../src/core/ledger/ledger-state.js');
    const s = replayEvents([open('f', 1, { id: 'o1', kind: 'fresh', entry: undefined })]);
    applyEvent(s, finding(2, { kind: 'fresh', entry: undefined }));
    applyEvent(s, finding(3, { kind: 'fresh', entry: undefined, status: 'exhausted', summary: 'partial', tokensIn: 100, tokensOut: 0 }));
    expect(trackRecord(s, ENTRY, 'incident', new Date(at(4)), WINDOW).recalls).toBe(0);
    expect(triggerFindings(s, TK).map((f) => f.summary)).toEqual(['partial', 'heap too big']);
    expect(tokensSpent(s, at(0).slice(0, 10))).toBe(900 + 120 + 100);
  });
});
