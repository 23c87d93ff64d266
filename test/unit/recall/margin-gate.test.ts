import { describe, expect, it } from 'vitest';
import { marginGate } from '../../../src/core/recall/margin-gate.js';
import { recall } from '../../../src/core/recall/recall.js';
import type { Entry, StructuralTier } from '../../../src/core/types.js';
import { NOW, alert, fixedSnapshot, incidentEntry, noHistory, playbook, recallOpts, stepsOf } from './recall-fixtures.js';

const A = 'incidents/checkout-oom-a.md';
const B = 'incidents/checkout-oom-b.md';
const entries: Entry[] = [
  incidentEntry(A, { resource: 'payments/checkout-api', title: 'checkout-api OOMKilled (cache)' }),
  incidentEntry(B, { resource: 'payments/checkout-api', title: 'checkout-api OOMKilled (leak)' }),
];
const checkoutAlert = alert({ alertname: 'KubePodCrashLooping', labels: { namespace: 'payments', pod: 'checkout-api-7d9f8c6b5-x2k4q' } });
const opts = recallOpts();

describe('margin gate (no model)', () => {
  it('refuses a top score below min_score and points at it as a near miss', () => {
    const r = recall(checkoutAlert, fixedSnapshot(entries, { [A]: 5.9 }), noHistory, opts, NOW);
    expect(r.answer).toBeNull();
    const [m] = stepsOf(r.trace, 'margin', A);
    expect(m).toMatchObject({ passed: false, value: 5.9, threshold: 6 });
    expect(m?.reason).toMatch(/below min_score 6/);
    expect(r.nearMiss).toMatchObject({ entry: A, gate: 'margin' });
    expect(stepsOf(r.trace, 'outcome')).toHaveLength(0);
  });

  it('refuses when the top leads the runner-up by less than margin_gap of its score, naming the runner-up', () => {
    const r = recall(checkoutAlert, fixedSnapshot(entries, { [A]: 10, [B]: 8 }), noHistory, opts, NOW);
    expect(r.answer).toBeNull();
    expect(r.instant).toBeNull();
    const [m] = stepsOf(r.trace, 'margin', A);
    expect(m).toMatchObject({ passed: false, value: 0.2, threshold: 0.3 });
    expect(m?.reason).toContain(B);
    expect(r.nearMiss).toEqual({ entry: A, gate: 'margin', reason: m?.reason });
  });

  it('fires when the top is ahead by at least margin_gap', () => {
    const r = recall(checkoutAlert, fixedSnapshot(entries, { [A]: 10, [B]: 7 }), noHistory, opts, NOW);
    expect(r.answer).toMatchObject({ kind: 'incident', entry: A });
    expect(stepsOf(r.trace, 'margin', A)[0]).toMatchObject({ passed: true, value: 0.3, threshold: 0.3 });
    expect(r.nearMiss).toBeNull();
  });

  it('lets a lone agreeing candidate fire at or above solo_floor only', () => {
    const above = recall(checkoutAlert, fixedSnapshot(entries, { [A]: 8 }), noHistory, opts, NOW);
    expect(above.answer?.entry).toBe(A);
    expect(stepsOf(above.trace, 'margin', A)[0]).toMatchObject({ passed: true, threshold: 8 });

    const below = recall(checkoutAlert, fixedSnapshot(entries, { [A]: 7.9 }), noHistory, opts, NOW);
    expect(below.answer).toBeNull();
    const [m] = stepsOf(below.trace, 'margin', A);
    expect(m).toMatchObject({ passed: false, value: 7.9, threshold: 8 });
    expect(m?.reason).toMatch(/alone .* below solo_floor 8/);
    expect(below.nearMiss).toMatchObject({ entry: A, gate: 'margin' });
  });

  it('ignores runners-up that failed the structural gate', () => {
    const other = incidentEntry('incidents/billing.md', { resource: 'payments/billing-api', title: 'billing-api OOMKilled' });
    const r = recall(checkoutAlert, fixedSnapshot([...entries, other], { [A]: 9, 'incidents/billing.md': 8.9 }), noHistory, opts, NOW);
    expect(r.answer?.entry).toBe(A);
    expect(stepsOf(r.trace, 'margin', A)[0]?.reason).toMatch(/alone/);
  });
});

describe('margin gate: scopeless (workload-less incident, resource-less entry)', () => {
  const P = 'runbooks/latency.md';
  const Q = 'runbooks/errors.md';
  const books = [
    playbook(P, { title: 'Checkout latency', body: 'Checkout latency is high.' }),
    // Not a near-sibling of P's title (the sibling rule would judge the pair on their words).
    playbook(Q, { title: 'Payment gateway errors', body: 'Checkout error rate is high.' }),
  ];
  const pager = alert({ alertname: 'CheckoutLatencyHigh', annotations: { summary: 'checkout latency high' } });

  it('needs solo_floor even with a comfortable margin', () => {
    expect(pager.workload).toBeUndefined();
    const r = recall(pager, fixedSnapshot(books, { [P]: 7, [Q]: 1 }), noHistory, opts, NOW);
    expect(r.runbook).toBeNull();
    const [m] = stepsOf(r.trace, 'margin', P);
    expect(m).toMatchObject({ passed: false, value: 7, threshold: 8 });
    expect(m?.reason).toMatch(/workload-less/);
  });

  it('needs the margin even above solo_floor', () => {
    const r = recall(pager, fixedSnapshot(books, { [P]: 10, [Q]: 8 }), noHistory, opts, NOW);
    expect(r.runbook).toBeNull();
    expect(stepsOf(r.trace, 'margin', P)[0]).toMatchObject({ passed: false, value: 0.2, threshold: 0.3 });
  });

  it('fires when both hold, at reduced confidence', () => {
    const r = recall(pager, fixedSnapshot(books, { [P]: 10, [Q]: 4 }), noHistory, opts, NOW);
    expect(r.runbook).toMatchObject({ tier: 'scopeless', kind: 'runbook' });
    expect(r.answer).toMatchObject({ kind: 'runbook', entry: P });
    // scopeless_factor 0.6 × by-content 0.85 × saturated evidence: well under the cap.
    expect(r.runbook!.confidence).toBeCloseTo(0.6 * 0.85, 2);
  });
});

describe('marginGate (direct)', () => {
  const agreeing = (id: string, score: number, tier: StructuralTier = 'exact') => ({
    cand: { entry: incidentEntry(id, { resource: 'ns/x', title: id }), score },
    tier,
    byName: false,
  });

  it('reports value, threshold and margin', () => {
    expect(marginGate(agreeing('a', 10), agreeing('b', 7), opts)).toMatchObject({ passed: true, value: 0.3, threshold: 0.3, margin: 0.3 });
    expect(marginGate(agreeing('a', 10), undefined, opts)).toMatchObject({ passed: true, value: 10, threshold: 8, margin: 10 });
    expect(marginGate(agreeing('a', 10), agreeing('b', 9.5), opts)).toMatchObject({ passed: false, threshold: 0.3 });
  });

  it('checks min_score before anything else', () => {
    expect(marginGate(agreeing('a', 5), agreeing('b', 0), recallOpts())).toMatchObject({ passed: false, value: 5, threshold: 6 });
  });
});
