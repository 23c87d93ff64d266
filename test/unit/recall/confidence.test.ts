import { describe, expect, it } from 'vitest';
import { deriveConfidence, isStale, type ConfidenceInput } from '../../../src/core/recall/confidence.js';
import { recall } from '../../../src/core/recall/recall.js';
import { DAY_MS, NOW, alert, fixedSnapshot, incidentEntry, noHistory, playbook, recallOpts, stepsOf, tracks } from './recall-fixtures.js';

const fresh = incidentEntry('incidents/fresh.md', { resource: 'payments/checkout-api', title: 'fresh', timestamp: '2025-12-01' });
const stale = incidentEntry('incidents/stale.md', { resource: 'payments/checkout-api', title: 'stale', timestamp: '2025-01-01' });
const revalidated = incidentEntry('incidents/revalidated.md', {
  resource: 'payments/checkout-api',
  title: 'old but re-validated',
  timestamp: '2024-01-01',
  lastValidated: '2025-11-15',
});
const opts = recallOpts();
const base = (over: Partial<ConfidenceInput> = {}): ConfidenceInput => ({
  score: 16,
  margin: 16,
  solo: true,
  tier: 'exact',
  byName: false,
  factor: 1,
  entry: fresh,
  now: NOW,
  ...over,
});

describe('deriveConfidence', () => {
  it('never exceeds confidence_cap', () => {
    expect(deriveConfidence(base(), opts)).toBe(0.9);
    expect(deriveConfidence(base({ score: 1000, margin: 1000 }), opts)).toBe(0.9);
    expect(deriveConfidence(base(), recallOpts({ confidenceCap: 0.55 }))).toBe(0.55);
  });

  it('gives 0.8 of the evidence for just clearing the gate and saturates at twice the bar', () => {
    expect(deriveConfidence(base({ score: 8, margin: 8 }), opts)).toBe(0.8); // solo at solo_floor
    expect(deriveConfidence(base({ solo: false, margin: 0.3 }), opts)).toBe(0.8); // lead = margin_gap
    expect(deriveConfidence(base({ solo: false, margin: 0.6 }), recallOpts({ confidenceCap: 1 }))).toBe(1);
  });

  it('multiplies in the outcome factor and the tier', () => {
    expect(deriveConfidence(base({ factor: 0.8 }), opts)).toBe(0.8);
    expect(deriveConfidence(base({ factor: 0.5 }), opts)).toBe(0.5);
    expect(deriveConfidence(base({ tier: 'namespace' }), opts)).toBe(0.85);
    expect(deriveConfidence(base({ tier: 'runbook', byName: true }), recallOpts({ confidenceCap: 1 }))).toBe(0.95);
    expect(deriveConfidence(base({ tier: 'runbook', byName: false }), recallOpts({ confidenceCap: 1 }))).toBe(0.81);
    expect(deriveConfidence(base({ tier: 'scopeless', byName: true }), opts)).toBe(0.6);
  });

  it('applies one staleness step past stale_after', () => {
    expect(deriveConfidence(base({ entry: stale }), opts)).toBe(0.75);
    expect(deriveConfidence(base({ entry: stale, factor: 0.8 }), opts)).toBe(0.6);
    expect(deriveConfidence(base({ entry: revalidated }), opts)).toBe(0.9);
    expect(deriveConfidence(base({ entry: stale }), recallOpts({ staleAfterMs: 0 }))).toBe(0.9);
  });

  it('isStale reads last_validated before timestamp', () => {
    expect(isStale(stale, NOW, 180 * DAY_MS)).toBe(true);
    expect(isStale(fresh, NOW, 180 * DAY_MS)).toBe(false);
    expect(isStale(revalidated, NOW, 180 * DAY_MS)).toBe(false);
    expect(isStale(revalidated, NOW, 30 * DAY_MS)).toBe(true);
    const undated = { ...fresh };
    delete undated.timestamp;
    expect(isStale(undated, NOW, 1)).toBe(false);
  });
});

describe('recall confidence and the confirm backstop', () => {
  const incident = alert({ alertname: 'KubePodCrashLooping', labels: { namespace: 'payments', pod: 'checkout-api-7d9f8c6b5-x2k4q' } });

  it('caps an unconfirmed instant recall at unconfirmed_cap with a confirm step', () => {
    const r = recall(incident, fixedSnapshot([fresh], { [fresh.id]: 30 }), noHistory, opts, NOW);
    expect(r.instant?.confidence).toBe(0.7);
    expect(r.instant?.confirmCapped).toBe(true);
    expect(r.answer?.confidence).toBe(0.7);
    const confirm = stepsOf(r.trace, 'confirm');
    expect(confirm).toHaveLength(1);
    expect(confirm[0]).toMatchObject({ entry: fresh.id, passed: true, value: 0.7, threshold: 0.7 });
    expect(confirm[0]?.reason).toMatch(/no live-state tools.*0\.70/);
  });

  it('does not cap when live-state tools can confirm', () => {
    const r = recall(incident, fixedSnapshot([fresh], { [fresh.id]: 30 }), noHistory, recallOpts({ liveStateTools: true }), NOW);
    expect(r.instant?.confidence).toBe(0.9);
    expect(r.instant?.confirmCapped).toBeUndefined();
    expect(stepsOf(r.trace, 'confirm')).toHaveLength(0);
  });

  it('never raises a confidence already below the cap', () => {
    const r = recall(incident, fixedSnapshot([stale], { [stale.id]: 30 }), tracks({ [stale.id]: { recalls: 8, resolved: 7 } }), opts, NOW);
    expect(r.instant?.confidence).toBe(0.67); // 1 × 8/9 factor × 0.75 stale
    expect(r.instant?.confirmCapped).toBeUndefined();
  });

  it('marks a stale entry down by stale_factor', () => {
    const live = recallOpts({ liveStateTools: true });
    expect(recall(incident, fixedSnapshot([stale], { [stale.id]: 30 }), noHistory, live, NOW).instant?.confidence).toBe(0.75);
    expect(recall(incident, fixedSnapshot([revalidated], { [revalidated.id]: 30 }), noHistory, live, NOW).instant?.confidence).toBe(0.9);
  });

  it('does not cap a runbook answer: it claims no diagnosis', () => {
    const book = playbook('runbooks/crash.md', { title: 'Pod crash looping', alerts: ['KubePodCrashLooping'], body: 'logs' });
    const r = recall(incident, fixedSnapshot([book], { [book.id]: 30 }), noHistory, opts, NOW);
    expect(r.instant).toBeNull();
    expect(r.runbook?.confidence).toBe(0.9);
    expect(r.answer).toEqual({ kind: 'runbook', entry: book.id, confidence: 0.9 });
    expect(stepsOf(r.trace, 'confirm')).toHaveLength(0);
  });

  it('leads with the instant recall when both fire, and decides each independently', () => {
    const book = playbook('runbooks/crash.md', { title: 'Pod crash looping', alerts: ['KubePodCrashLooping'], body: 'logs' });
    const r = recall(incident, fixedSnapshot([fresh, book], { [fresh.id]: 30, [book.id]: 29 }), noHistory, opts, NOW);
    expect(r.answer).toMatchObject({ kind: 'incident', entry: fresh.id, confidence: 0.7 });
    expect(r.runbook?.entry.id).toBe(book.id);
    expect(r.runbook?.confidence).toBe(0.9);
  });
});
