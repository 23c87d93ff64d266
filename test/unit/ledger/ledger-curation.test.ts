import { describe, expect, it } from 'vitest';
import { applyEvent, occurrences, pendingCurate, replayEvents, restoreLedgerState } from '../../../src/core/ledger/ledger-state.js';
import { ledgerEventProblem } from '../../../src/core/ledger/ledger-event-problem.js';
import type { CurateEvent, CuratedEvent, LedgerEvent } from '../../../src/core/ledger-events.js';
import { TK, at, open } from './ledger-events-fixture.js';

const draft = {
  title: 't',
  alertname: 'A',
  where: 'w',
  symptom: 's',
  summary: 'x',
  verdict: 'action_required' as const,
  confidence: 0.9,
  causes: [],
  actions: [],
  ruledOut: [],
  investigator: 'm · h',
};
const curate = (id: string, m: number, o: Partial<CurateEvent> = {}): CurateEvent => ({
  type: 'curate',
  id,
  subject: 'finding',
  openId: 'o1',
  triggerKey: TK,
  dupFingerprint: 'dup-1',
  draft,
  at: at(m),
  ...o,
});
const curated = (id: string | undefined, m: number, o: Partial<CuratedEvent> = {}): CuratedEvent => ({
  type: 'curated',
  ...(id ? { id } : {}),
  subject: 'finding',
  openId: 'o1',
  triggerKey: TK,
  decision: 'novel',
  url: 'https://x/pull/1',
  number: 1,
  at: at(m),
  ...o,
});

describe('curation in the ledger', () => {
  it('keeps curate intents pending until settled, and the decision with the thread', () => {
    const events: LedgerEvent[] = [
      open('f1', 0, { id: 'o1' }),
      curate('c1', 1),
      curate('c2', 2, { subject: 'note', draft: undefined, note: { user: 'u', name: 'u', via: 'cli', text: 'hi' } }),
    ];
    const s = replayEvents(events);
    expect(s.threads['o1']?.dupFingerprint).toBe('dup-1');
    expect(pendingCurate(s).map((i) => i.id)).toEqual(['c1', 'c2']);
    applyEvent(s, curated('c1', 3));
    applyEvent(s, curated('c2', 4, { subject: 'note', decision: 'pr_comment' }));
    expect(pendingCurate(s)).toEqual([]);
    expect(s.threads['o1']?.curation).toEqual({ decision: 'novel', url: 'https://x/pull/1', number: 1 });
    // The draft is the open's KB link: the next firing's recurrence line points at it.
    applyEvent(s, open('f2', 6, { id: 'o2' }));
    expect(occurrences(s, TK)).toMatchObject({ previousKbLink: 'https://x/pull/1' });
    // A decision made at file time (no intent) is kept the same way.
    applyEvent(s, curated(undefined, 5, { decision: 'below_bar', detail: 'confidence: 0.5', url: undefined, number: undefined }));
    expect(s.threads['o1']?.curation).toEqual({ decision: 'below_bar', detail: 'confidence: 0.5' });
  });

  it('replays to the same state, survives a snapshot round trip, and an older snapshot without the field', () => {
    const events: LedgerEvent[] = [open('f1', 0, { id: 'o1' }), curate('c1', 1), curate('c2', 2), curated('c1', 3)];
    const s = replayEvents(events);
    const restored = restoreLedgerState(JSON.parse(JSON.stringify(s)));
    expect(restored).toEqual(s);
    expect(pendingCurate(restored!).map((i) => i.id)).toEqual(['c2']);
    const old = JSON.parse(JSON.stringify(replayEvents([open('f1', 0, { id: 'o1' })]))) as Record<string, unknown>;
    delete old['curate'];
    const fromOld = restoreLedgerState(old)!;
    expect(pendingCurate(fromOld)).toEqual([]);
    applyEvent(fromOld, curate('c3', 5));
    expect(pendingCurate(fromOld).map((i) => i.id)).toEqual(['c3']);
  });

  it('refuses malformed curation events (replay skips them)', () => {
    expect(ledgerEventProblem(curate('c1', 1, { draft: undefined }))).toMatch(/draft must be an object/);
    expect(ledgerEventProblem(curate('c1', 1, { subject: 'other' as 'note' }))).toMatch(/subject must be one of/);
    expect(ledgerEventProblem(curated('c1', 1, { decision: 'merged' as 'novel' }))).toMatch(/decision must be one of/);
    expect(ledgerEventProblem(curated('c1', 1, { number: 1.5 }))).toMatch(/number must be an integer/);
    const s = replayEvents([{ type: 'curate', id: 'x', at: at(0) }]);
    expect(s.skipped).toBe(1);
    expect(pendingCurate(s)).toEqual([]);
  });
});
