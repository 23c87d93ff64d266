/**
 * The memory view's fold (ledger-view.ts): each event kind lands where the pages read it,
 * a finding moves an open's kind in the day it opened, votes are live, the view stays bounded,
 * and it survives a JSON snapshot (replay and restore agree).
 */
import { describe, expect, it } from 'vitest';
import type { LedgerEvent } from '../../../src/core/ledger-events.js';
import { LedgerReader } from '../../../src/core/ledger/ledger-reader.js';
import { applyEvent, createLedgerState, replayEvents, restoreLedgerState } from '../../../src/core/ledger/ledger-state.js';
import { VIEW_LIMITS, weekOf } from '../../../src/core/ledger/ledger-view.js';
import { overview } from '../../../src/http/ui/ui-data.js';

const T0 = Date.parse('2026-03-02T08:00:00Z');
const at = (min: number): string => new Date(T0 + min * 60_000).toISOString();

const open = (id: string, min: number, over: Partial<Extract<LedgerEvent, { type: 'open' }>> = {}): LedgerEvent => ({
  type: 'open',
  id,
  fingerprint: `fp-${id}`,
  triggerKey: over.triggerKey ?? 'tk-a',
  kind: 'fresh',
  dupFingerprint: `dup-${id}`,
  verdict: 'inconclusive',
  resolvable: true,
  at: at(min),
  ...over,
});
const finding = (openId: string, min: number, over: Partial<Extract<LedgerEvent, { type: 'finding' }>> = {}): LedgerEvent => ({
  type: 'finding',
  openId,
  fingerprint: `fp-${openId}`,
  triggerKey: 'tk-a',
  kind: 'fresh',
  status: 'completed',
  calls: 3,
  tokensIn: 1000,
  tokensOut: 200,
  at: at(min),
  ...over,
});

function reader(events: LedgerEvent[]): LedgerReader {
  const s = replayEvents(events);
  return new LedgerReader(() => s, { resolveWindowMs: 86_400_000 });
}

describe('the memory view fold', () => {
  it('counts answers by kind per day, and a finding moves an open in the day it opened', () => {
    const events: LedgerEvent[] = [
      open('o1', 0, { kind: 'recall', entry: 'e1', answerKind: 'incident', verdict: 'action_suggested' }),
      open('o2', 1, { entry: 'rb', answerKind: 'runbook' }),
      open('o3', 2),
      open('o4', 3),
      open('o5', 4),
      // The model verified a recall for o3, o4's investigation degraded, o5's completed.
      finding('o3', 30, { kind: 'recall', entry: 'e1', calls: 2, tokensIn: 300, tokensOut: 100 }),
      finding('o4', 31, { status: 'degraded', calls: 1, tokensIn: 50, tokensOut: 0 }),
      finding('o5', 32),
      { type: 'noise', action: 'drop', fingerprint: 'fp-x', triggerKey: 'tk-a', reason: 'silence', detail: 'silenced', at: at(40) },
      {
        type: 'question_answered',
        openId: 'o1',
        triggerKey: 'tk-a',
        status: 'answered',
        calls: 1,
        tokensIn: 10,
        tokensOut: 5,
        at: at(50),
      } as unknown as LedgerEvent,
    ];
    const r = reader(events);
    const days = r.viewDays('2026-03-02', '2026-03-02');
    expect(days).toHaveLength(1);
    const [day, d] = days[0]!;
    expect(day).toBe('2026-03-02');
    expect(d).toMatchObject({ instant: 2, instantNoModel: 1, runbook: 1, investigation: 1, degraded: 1, silenced: 1 });
    expect(d).toMatchObject({ modelCalls: 3 + 2 + 1 + 1, tokens: 1200 + 400 + 50 + 15, investigations: 2, investigationTokens: 1200 + 50 });
    expect(r.viewIncident('o3')).toMatchObject({ cls: 'instant', entry: 'e1', calls: 2, tokens: 400 });
    expect(r.viewEntry('e1')?.opens).toEqual(['o1', 'o3']);
    const o = overview(r, new Date('2026-03-02T12:00:00Z'), 7);
    expect(o.totals).toMatchObject({ instant: 2, runbook: 1, investigation: 1, degraded: 1, silenced: 1 });
    // One instant recall needed no model; an investigation averaged (1200 + 50) / 2 tokens.
    expect(o.meanInvestigationTokens).toBe(625);
    expect(o.tokensAvoided).toBe(625);
  });

  it('samples first acks and resolves, and keeps votes live on recalled answers', () => {
    const events: LedgerEvent[] = [
      open('o1', 0, { kind: 'recall', entry: 'e1', answerKind: 'incident', verdict: 'action_suggested', startsAt: at(-5) }),
      { type: 'ack', triggerKey: 'tk-a', openId: 'o1', user: 'u1', via: 'slack', at: at(3) } as LedgerEvent,
      { type: 'ack', triggerKey: 'tk-a', openId: 'o1', user: 'u2', via: 'slack', at: at(4) } as LedgerEvent,
      { type: 'feedback', triggerKey: 'tk-a', openId: 'o1', user: 'u1', vote: 'down', at: at(5) },
      { type: 'feedback', triggerKey: 'tk-a', openId: 'o1', user: 'u1', vote: 'up', at: at(6) },
      { type: 'feedback', triggerKey: 'tk-a', openId: 'o1', user: 'u2', vote: 'up', at: at(6) },
      { type: 'feedback', triggerKey: 'tk-a', openId: 'o1', user: 'u2', vote: 'clear', at: at(7) },
      { type: 'resolve', fingerprint: 'fp-o1', at: at(25) },
    ];
    const r = reader(events);
    const d = r.viewDays('2026-03-02', '2026-03-02')[0]![1];
    // Only the first ack counts, from the alert's start (5 min before the open).
    expect(d.acks).toBe(1);
    expect(d.ackSeconds).toEqual([8 * 60]);
    expect(d.resolves).toBe(1);
    expect(d.resolveSeconds).toEqual([30 * 60]);
    expect(d.recalledUp).toBe(1);
    expect(d.recalledDown).toBe(0);
    expect(r.viewIncident('o1')?.resolvedAt).toBe(at(25));
    // The history counts votes as cast (👎, then 👍 twice), not the live ones.
    expect(r.viewEntry('e1')?.weeks).toEqual([[weekOf(at(0)), 1, 1, 2, 1]]);
  });

  it('counts near misses by gate per trigger from the open trace, and curation outcomes', () => {
    const trace = {
      answer: 'none' as const,
      stoppedBy: 'margin',
      candidates: [{ entry: 'e1', score: 3 }],
      nearMiss: { entry: 'e1', gate: 'margin', reason: 'too close' },
    };
    const events: LedgerEvent[] = [
      open('o1', 0, { trace }),
      open('o2', 10, { trace }),
      open('o3', 20, { trace: { answer: 'none', stoppedBy: 'structural', candidates: [] } }),
      {
        type: 'curated',
        subject: 'finding',
        openId: 'o1',
        triggerKey: 'tk-a',
        decision: 'novel',
        url: 'https://github.com/o/kb/pull/7',
        number: 7,
        at: at(30),
      },
      { type: 'curated', subject: 'finding', openId: 'o2', triggerKey: 'tk-a', decision: 'below_bar', detail: 'confidence', at: at(31) },
    ];
    const r = reader(events);
    const triggers = Object.fromEntries(r.viewTriggers());
    expect(triggers['tk-a']).toMatchObject({ opens: 3, answered: 0, nearMiss: { margin: 2 } });
    const c = r.viewCuration();
    expect(c.decisions).toMatchObject({ novel: 1, below_bar: 1 });
    expect(c.prs.map((p) => p.url)).toEqual(['https://github.com/o/kb/pull/7']);
    expect(c.recent[0]).toMatchObject({ decision: 'below_bar' });
    expect(r.viewIncident('o1')?.prs).toEqual(['https://github.com/o/kb/pull/7']);
  });

  it('stays bounded: the oldest opens and days go first', () => {
    const s = createLedgerState();
    const n = VIEW_LIMITS.incidents + 5;
    for (let i = 0; i < n; i++) applyEvent(s, open(`o${i}`, i * 60));
    expect(s.view!.incidentOrder).toHaveLength(VIEW_LIMITS.incidents);
    expect(Object.keys(s.view!.incidents)).toHaveLength(VIEW_LIMITS.incidents);
    expect(s.view!.incidents['o0']).toBeUndefined();
    expect(s.view!.incidents[`o${n - 1}`]).toBeDefined();
    expect(Object.keys(s.view!.days).length).toBeLessThanOrEqual(VIEW_LIMITS.days);
    expect(s.view!.entries).toEqual({});
  });

  it('survives a JSON snapshot: restored and replayed agree, and folding goes on the same', () => {
    const events: LedgerEvent[] = [
      open('o1', 0, { kind: 'recall', entry: 'e1', answerKind: 'incident', verdict: 'action_suggested' }),
      { type: 'feedback', triggerKey: 'tk-a', openId: 'o1', user: 'u1', vote: 'up', at: at(1) },
      open('o2', 2, { trace: { answer: 'none', stoppedBy: 'outcome', candidates: [{ entry: 'e1', score: 1 }] } }),
    ];
    const s = replayEvents(events.slice(0, 2));
    const restored = restoreLedgerState(JSON.parse(JSON.stringify(s)))!;
    applyEvent(restored, events[2]!);
    applyEvent(s, events[2]!);
    expect(JSON.parse(JSON.stringify(restored))).toEqual(JSON.parse(JSON.stringify(s)));
    expect(JSON.parse(JSON.stringify(restored))).toEqual(JSON.parse(JSON.stringify(replayEvents(events))));
  });
});
