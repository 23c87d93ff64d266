/**
 * A recall reduced to what metrics count: the answer the thread leads with, and the gate that
 * stopped the best instant candidate — read from real recall() traces.
 */
import { describe, expect, it } from 'vitest';
import { recall } from '../../../src/core/recall/recall.js';
import { modelRecallDecision, recallDecision, stoppingGate } from '../../../src/core/recall/recall-decision.js';
import type { Entry } from '../../../src/core/types.js';
import { NOW, alert, fixedSnapshot, incidentEntry, noHistory, playbook, recallOpts, tracks } from './recall-fixtures.js';

const ids = ['a', 'b', 'c'].map((x) => `incidents/checkout-${x}.md`);
const [A, B, C] = ids as [string, string, string];
const entries: Entry[] = ids.map((id) => incidentEntry(id, { resource: 'payments/checkout-api', title: `checkout-api ${id}` }));
const book = playbook('runbooks/pod-crash.md', { title: 'Pod crash looping', alerts: ['KubePodCrashLooping'], body: '## Diagnosis\n\nkubectl describe pod' });
const incident = alert({ alertname: 'KubePodCrashLooping', labels: { namespace: 'payments', pod: 'checkout-api-7d9f8c6b5-x2k4q' } });
const elsewhere = alert({ alertname: 'KubePodCrashLooping', labels: { namespace: 'billing', pod: 'billing-api-7d9f8c6b5-x2k4q' } });
const opts = recallOpts();
const bad = { recalls: 8, resolved: 0 };

describe('recall decision', () => {
  it('an instant recall: answer incident, nothing stopped it', () => {
    const r = recall(incident, fixedSnapshot(entries, { [A]: 40 }), noHistory, opts, NOW);
    expect(r.instant?.entry.id).toBe(A);
    expect(recallDecision(r)).toEqual({ answer: 'incident', stoppedBy: null });
  });

  it('no entry agrees with the resource: stopped by the structural gate, led by the runbook when one matched', () => {
    const snap = fixedSnapshot([...entries, book], { [A]: 40, [book.id]: 30 });
    const r = recall(elsewhere, snap, noHistory, opts, NOW);
    expect(r.instantCandidates).toEqual([]);
    expect(r.runbook?.entry.id).toBe(book.id);
    expect(recallDecision(r)).toEqual({ answer: 'runbook', stoppedBy: 'structural' });
    const bare = recall(elsewhere, fixedSnapshot(entries, { [A]: 40 }), noHistory, opts, NOW);
    expect(recallDecision(bare)).toEqual({ answer: 'none', stoppedBy: 'structural' });
  });

  it('two candidates too close to call: stopped by the margin gate', () => {
    const r = recall(incident, fixedSnapshot(entries, { [A]: 20, [B]: 19.5 }), noHistory, opts, NOW);
    expect(r.instant).toBeNull();
    expect(recallDecision(r).stoppedBy).toBe('margin');
  });

  it('the best entry decayed below the floor and the runner-up then fails the margin: the outcome gate stopped it', () => {
    // A is refused by its track record; B is then too close to C.
    const r = recall(incident, fixedSnapshot(entries, { [A]: 40, [B]: 20, [C]: 19 }), tracks({ [A]: bad }), opts, NOW);
    expect(r.instant).toBeNull();
    expect(r.trace.filter((s) => !s.passed && s.gate !== 'structural').map((s) => s.gate)).toEqual(['outcome', 'margin']);
    expect(recallDecision(r)).toEqual({ answer: 'none', stoppedBy: 'outcome' });
  });

  it('a refused entry whose runner-up is recalled: an instant recall, not a stop', () => {
    const r = recall(incident, fixedSnapshot(entries, { [A]: 40, [B]: 20, [C]: 10 }), tracks({ [A]: bad }), opts, NOW);
    expect(recallDecision(r)).toEqual({ answer: 'incident', stoppedBy: null });
  });

  it("a runbook refusal does not count as the instant candidate's stop", () => {
    const trace = [
      { gate: 'margin' as const, entry: 'runbooks/x.md', passed: false, value: 1, threshold: 2, reason: '' },
      { gate: 'outcome' as const, entry: A, passed: false, value: 0.1, threshold: 0.5, reason: '' },
    ];
    expect(stoppingGate(trace, new Set([A]), 'margin')).toBe('outcome');
    expect(stoppingGate(trace, new Set([B]), 'margin')).toBe('margin');
    expect(stoppingGate([{ gate: 'rerank', entry: null, passed: false, value: null, threshold: 0.7, reason: '' }], new Set([A]), 'verify')).toBe('rerank');
  });

  it('with a model: delivered is an incident answer; a miss leads with the runbook when one is shown', () => {
    expect(modelRecallDecision({ delivered: true, runbook: true, stoppedBy: 'verify' })).toEqual({ answer: 'incident', stoppedBy: null });
    expect(modelRecallDecision({ delivered: false, runbook: true, stoppedBy: 'rerank' })).toEqual({ answer: 'runbook', stoppedBy: 'rerank' });
    expect(modelRecallDecision({ delivered: false, runbook: false, stoppedBy: 'verify' })).toEqual({ answer: 'none', stoppedBy: 'verify' });
  });
});
