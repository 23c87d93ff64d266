import { describe, expect, it } from 'vitest';
import { generateUiEvents } from '../../../bench/ui-ledger.js';
import { generateCatalog } from '../../../bench/synthetic-catalog.js';
import type { LedgerEvent } from '../../../src/core/ledger-events.js';
import { ledgerEventProblem } from '../../../src/core/ledger/ledger-event-problem.js';
import { replayEvents } from '../../../src/core/ledger/ledger-state.js';

const END = new Date('2026-06-01T00:00:00Z');

async function generate(events: number, idTailEvents: number): Promise<{ events: LedgerEvent[]; facts: Awaited<ReturnType<typeof generateUiEvents>> }> {
  const out: LedgerEvent[] = [];
  const facts = await generateUiEvents(generateCatalog(300).entries, { events, triggers: 500, days: 30, end: END, users: 20, idTailEvents }, async (b) => {
    out.push(...b);
  });
  return { events: out, facts };
}

describe('the ui bench ledger generator', () => {
  it('writes exactly the events asked for, every one valid, in time order inside the period', async () => {
    const { events, facts } = await generate(5000, 5000);
    expect(events).toHaveLength(5000);
    expect(facts.events).toBe(5000);
    expect(events.map(ledgerEventProblem).filter((p) => p !== undefined)).toEqual([]);
    const times = events.map((e) => Date.parse(e.at));
    expect([...times].sort((a, b) => a - b)).toEqual(times);
    expect(times[0]).toBeGreaterThanOrEqual(END.getTime() - 30 * 86_400_000);
    expect(times.at(-1)).toBeLessThanOrEqual(END.getTime());
    const types = new Set(events.map((e) => e.type));
    for (const t of ['open', 'resolve', 'finding', 'ack', 'feedback', 'silence', 'noise', 'curated']) expect(types.has(t as LedgerEvent['type']), t).toBe(true);
  });

  it('folds into a view with every kind of answer, and only the tail carries open ids', async () => {
    const { events, facts } = await generate(6000, 1000);
    const opens = events.filter((e) => e.type === 'open');
    const withId = opens.filter((e) => e.id !== undefined);
    expect(withId.length).toBeGreaterThan(0);
    expect(withId.length).toBeLessThan(opens.length / 2);
    expect(withId.at(-1)!.id).toBe(facts.newestOpen);
    const state = replayEvents(events);
    expect(state.skipped).toBe(0);
    const days = Object.values(state.view?.days ?? {});
    const sum = (k: 'instant' | 'runbook' | 'investigation' | 'degraded' | 'silenced' | 'tokens' | 'acks'): number => days.reduce((n, d) => n + d[k], 0);
    for (const k of ['instant', 'runbook', 'investigation', 'degraded', 'silenced', 'tokens', 'acks'] as const) expect(sum(k), k).toBeGreaterThan(0);
    expect(state.view?.incidents[facts.newestOpen]).toBeDefined();
  });

  it('is deterministic for a seed', async () => {
    const a = await generate(2000, 2000);
    const b = await generate(2000, 2000);
    expect(b.events).toEqual(a.events);
  });
});
