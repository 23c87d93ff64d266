import { describe, expect, it } from 'vitest';
import { planCuration } from '../../../src/core/curate/plan-curation.js';
import { qualityBar } from '../../../src/core/curate/quality-bar.js';
import { dupFingerprint } from '../../../src/core/bot/dup-fingerprint.js';
import { alert } from '../recall/recall-fixtures.js';
import { goodFinding } from '../../integration/helpers/curation-harness.js';

const incident = alert({
  alertname: 'KubePodOOMKilled',
  labels: { namespace: 'payments', pod: 'checkout-api-7d9f8c6b5-x2k4q' },
  annotations: { summary: 'OOMKilled' },
});

describe('the quality bar', () => {
  it('passes a verified, confident finding with evidence and a causing change OR a fixing action', () => {
    expect(qualityBar(goodFinding(), 0.75)).toBeUndefined();
    expect(qualityBar(goodFinding({ changeRef: undefined }), 0.75)).toBeUndefined();
    expect(qualityBar(goodFinding({ suggestedActions: [] }), 0.75)).toBeUndefined();
  });

  it('names the first criterion a finding misses', () => {
    expect(qualityBar({ ...goodFinding(), partial: true }, 0.75)?.criterion).toBe('complete');
    expect(qualityBar(goodFinding({ verified: undefined as unknown as boolean }), 0.75)).toEqual({
      criterion: 'verified',
      detail: 'the cause was not verified',
    });
    expect(qualityBar(goodFinding({ confidence: 0.74 }), 0.75)).toEqual({ criterion: 'confidence', detail: 'confidence 0.74 is below 0.75' });
    expect(qualityBar(goodFinding({ confidence: Number.NaN }), 0.75)?.criterion).toBe('confidence');
    expect(qualityBar(goodFinding({ rootCauses: [{ cause: 'x', confidence: 0.9, evidence: [], entities: [] }] }), 0.75)?.criterion).toBe('evidence');
    expect(qualityBar(goodFinding({ rootCauses: [] }), 0.75)?.criterion).toBe('evidence');
    expect(qualityBar(goodFinding({ changeRef: undefined, suggestedActions: [] }), 0.75)?.criterion).toBe('provenance');
  });
});

describe('planCuration', () => {
  it('a recalled finding is not novel, whatever its quality', () => {
    expect(planCuration({ incident, finding: goodFinding(), recalledEntry: 'incidents/x.md', minConfidence: 0.75 })).toMatchObject({
      kind: 'decided',
      decision: 'recalled',
      detail: 'answered from incidents/x.md',
    });
  });

  it('drafts material for the worker with the DupFingerprint of the incident', () => {
    const p = planCuration({ incident, finding: goodFinding(), recurrence: '🔁 #3', minConfidence: 0.75 });
    expect(p).toMatchObject({
      kind: 'draft',
      dupFingerprint: dupFingerprint(incident),
      draft: {
        alertname: 'KubePodOOMKilled',
        resource: 'payments/checkout-api',
        symptom: 'OOMKilled',
        recurrence: '🔁 #3',
        investigator: 'main-model · abc123def456',
      },
    });
  });
});
