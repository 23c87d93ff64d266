import { describe, expect, it } from 'vitest';
import { applyEvent, createLedgerState, trackRecord, type LedgerState } from '../../../src/core/ledger/ledger-state.js';
import type { LedgerEvent, OpenEvent } from '../../../src/core/ledger-events.js';
import { recall, type TrackLookup } from '../../../src/core/recall/recall.js';
import type { Entry } from '../../../src/core/types.js';
import { NOW, alert, fixedSnapshot, incidentEntry, noHistory, playbook, recallOpts, stepsOf, tracks } from './recall-fixtures.js';

const ids = ['a', 'b', 'c', 'd', 'e', 'f'].map((x) => `incidents/checkout-${x}.md`);
const [A, B, C, D, E, F] = ids as [string, string, string, string, string, string];
const entries: Entry[] = ids.map((id) => incidentEntry(id, { resource: 'payments/checkout-api', title: `checkout-api ${id}` }));
const incident = alert({ alertname: 'KubePodCrashLooping', labels: { namespace: 'payments', pod: 'checkout-api-7d9f8c6b5-x2k4q' } });
const opts = recallOpts();
const bad = { recalls: 8, resolved: 0 }; // rate 1/10
const good = { recalls: 8, resolved: 7 }; // rate 8/10, confidence factor 8/9

describe('outcome gate', () => {
  it('rejects an entry below outcome_floor and falls back to the next agreeing candidate', () => {
    // A leads B by 50%, B leads C by 50%: both clear the margin gate in turn.
    const snap = fixedSnapshot(entries, { [A]: 40, [B]: 20, [C]: 10 });
    const r = recall(incident, snap, tracks({ [A]: bad, [B]: good }), opts, NOW);
    expect(r.instant?.entry.id).toBe(B);
    expect(r.answer).toMatchObject({ kind: 'incident', entry: B });
    const [rejected] = stepsOf(r.trace, 'outcome', A);
    expect(rejected).toMatchObject({ passed: false, value: 0.1, threshold: 0.5 });
    expect(rejected?.reason).toMatch(/below floor 0\.5/);
    expect(rejected?.reason).toMatch(/rate \(resolved 0 \+ 👍 0 \+ 1\)\/\(resolved 0 \+ failed 8 \+ 👍 0 \+ 👎 0 \+ 2\) = 0\.1 below floor/);
    expect(stepsOf(r.trace, 'outcome', B)[0]).toMatchObject({ passed: true, value: 0.8 });
    // B's margin is measured against C, the next one down, not against the rejected A.
    expect(stepsOf(r.trace, 'margin', B)[0]?.reason).toContain(C);
    expect(r.instant?.track.factor).toBeCloseTo(8 / 9);
    expect(stepsOf(r.trace, 'outcome', B)[0]?.reason).toMatch(/confidence factor .* = 0\.889/);
  });

  it('never offers a rejected entry as the near miss', () => {
    // A is rejected; B then fails the margin against C: the near miss is B, never A.
    const snap = fixedSnapshot(entries, { [A]: 40, [B]: 20, [C]: 19 });
    const r = recall(incident, snap, tracks({ [A]: bad }), opts, NOW);
    expect(r.answer).toBeNull();
    expect(r.nearMiss?.entry).toBe(B);
    expect(r.nearMiss?.gate).toBe('margin');
  });

  it('leaves no near miss when the only agreeing entry is rejected', () => {
    const snap = fixedSnapshot(entries, { [A]: 40 });
    const r = recall(incident, snap, tracks({ [A]: bad }), opts, NOW);
    expect(r.answer).toBeNull();
    expect(r.nearMiss).toBeNull();
    expect(stepsOf(r.trace, 'outcome', A)[0]?.passed).toBe(false);
  });

  it('tries at most max_fallbacks further candidates', () => {
    const scores = { [A]: 100, [B]: 50, [C]: 25, [D]: 12, [E]: 6.5, [F]: 1 };
    const allBad = Object.fromEntries(ids.map((id) => [id, bad]));
    const r = recall(incident, fixedSnapshot(entries, scores), tracks(allBad), opts, NOW);
    expect(r.answer).toBeNull();
    const outcomes = stepsOf(r.trace, 'outcome');
    expect(outcomes.map((s) => s.entry)).toEqual([A, B, C, D]);
    expect(outcomes.every((s) => !s.passed)).toBe(true);
    expect(stepsOf(r.trace, 'margin', E)).toHaveLength(0);

    const none = recall(incident, fixedSnapshot(entries, scores), tracks(allBad), recallOpts({ maxFallbacks: 0 }), NOW);
    expect(stepsOf(none.trace, 'outcome').map((s) => s.entry)).toEqual([A]);
  });

  it('lets a withheld track record pass whatever its factor, at factor 1', () => {
    const withheld: TrackLookup = (id, kind) => ({ ...noHistory(id, kind), recalls: 9, factor: 0.1, withheld: true });
    const r = recall(incident, fixedSnapshot(entries, { [A]: 40 }), withheld, recallOpts({ liveStateTools: true }), NOW);
    expect(r.answer?.entry).toBe(A);
    const [s] = stepsOf(r.trace, 'outcome', A);
    expect(s?.passed).toBe(true);
    expect(s?.reason).toMatch(/not graded yet/);
    expect(r.instant?.confidence).toBe(0.9);
  });
});

describe('outcome gate over a real ledger', () => {
  const ev = (state: LedgerState, e: LedgerEvent): void => {
    applyEvent(state, e);
  };
  const open = (fp: string, entry: string, at: string): OpenEvent => ({
    type: 'open',
    fingerprint: fp,
    triggerKey: 'tk',
    kind: 'recall',
    entry,
    answerKind: 'incident',
    dupFingerprint: 'dup',
    verdict: 'action_suggested',
    resolvable: true,
    at,
  });
  const lookup =
    (state: LedgerState): TrackLookup =>
    (id, kind) =>
      trackRecord(state, id, kind, NOW, 24 * 3_600_000);

  it('withholds decay until the ledger has seen any resolve, then rejects', () => {
    const state = createLedgerState();
    for (let n = 0; n < 5; n++) ev(state, open(`fp-${n}`, A, `2025-12-0${n + 1}T00:00:00Z`));
    const snap = fixedSnapshot(entries, { [A]: 40 });

    const before = recall(incident, snap, lookup(state), opts, NOW);
    expect(before.answer?.entry).toBe(A);
    expect(stepsOf(before.trace, 'outcome', A)[0]?.reason).toMatch(/not graded yet/);

    // A resolve of some other alert proves the resolve channel works: 5 unresolved recalls now count.
    ev(state, { type: 'resolve', fingerprint: 'unrelated', at: '2025-12-10T00:00:00Z' });
    const after = recall(incident, snap, lookup(state), opts, NOW);
    expect(after.answer).toBeNull();
    const [s] = stepsOf(after.trace, 'outcome', A);
    expect(s).toMatchObject({ passed: false, threshold: 0.5 });
    expect(s?.value).toBeCloseTo(1 / 7, 3);
  });

  it('judges a runbook by votes only, never by unresolved recalls', () => {
    const state = createLedgerState();
    const book = playbook('runbooks/crash.md', { title: 'Pod crash looping', alerts: ['KubePodCrashLooping'], body: 'logs' });
    const snap = fixedSnapshot([book], { [book.id]: 20 });
    ev(state, { type: 'resolve', fingerprint: 'unrelated', at: '2025-12-01T00:00:00Z' });
    for (let n = 0; n < 4; n++) {
      ev(state, { ...open(`fp-${n}`, book.id, `2025-12-0${n + 2}T00:00:00Z`), kind: 'fresh', answerKind: 'runbook' });
    }
    expect(recall(incident, snap, lookup(state), opts, NOW).runbook?.entry.id).toBe(book.id);

    ev(state, { type: 'feedback', triggerKey: 'tk', user: 'ann', vote: 'down', at: '2025-12-20T00:00:00Z' });
    ev(state, { type: 'feedback', triggerKey: 'tk', user: 'bob', vote: 'down', at: '2025-12-20T00:01:00Z' });
    const judged = recall(incident, snap, lookup(state), opts, NOW);
    expect(judged.runbook).toBeNull();
    expect(stepsOf(judged.trace, 'outcome', book.id)[0]).toMatchObject({ passed: false, value: 0.25 });
  });
});
