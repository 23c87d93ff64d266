/**
 * A recalled entry as a Finding: a resolution written as a list — as Reprise drafts entries —
 * is one action per item without its list marker (seen through `reprise serve` in
 * test/integration/curation-e2e.test.ts, where a merged draft was recalled as "- kubectl …");
 * prose stays one action; none is claimed reversible.
 */
import { describe, expect, it } from 'vitest';
import { recallFinding, resolutionActions } from '../../../src/core/investigate/answers.js';
import { renderFindingEntry } from '../../../src/core/curate/kb-entry.js';
import { entryFrom } from '../recall/recall-fixtures.js';

const version = { model: 'm', promptHash: 'abc123def456', allowlist: [] };

describe("a recalled entry's actions", () => {
  it('round-trips a drafted entry: one action per item, continuation lines joined', () => {
    const draft = renderFindingEntry(
      {
        title: 't',
        alertname: 'KubePodCrashLooping',
        resource: 'payments/checkout-api',
        where: 'prod/payments/checkout-api',
        symptom: 'crash looping',
        summary: 'heap above the limit',
        verdict: 'action_required',
        confidence: 0.85,
        causes: [{ cause: 'JAVA_TOOL_OPTIONS=-Xmx960m inside a 1Gi limit', confidence: 0.85, evidence: ['OOMKilled, exit 137'] }],
        actions: [
          { action: 'kubectl -n payments rollout undo deploy/checkout-api', reversible: true },
          { action: 'raise the limit to 1536Mi\nand set MaxRAMPercentage=70', reversible: false },
        ],
        ruledOut: [],
        investigator: 'm · abc',
      },
      'f'.repeat(64),
      new Date('2026-12-01T00:00:00Z'),
    );
    const f = recallFinding(entryFrom(draft.path, draft.content), 0.9, version);
    expect(f.suggestedActions).toEqual([
      { action: 'kubectl -n payments rollout undo deploy/checkout-api', reversible: false },
      { action: 'raise the limit to 1536Mi and set MaxRAMPercentage=70 (not reversible)', reversible: false },
    ]);
  });

  it('keeps prose, and a list mixed with prose, as one action', () => {
    expect(resolutionActions('Rolled back the deploy.\nThen raised the limit.')).toEqual(['Rolled back the deploy.\nThen raised the limit.']);
    expect(resolutionActions('Do this:\n- roll back\n- raise the limit')).toEqual(['Do this:\n- roll back\n- raise the limit']);
    expect(resolutionActions('1. roll back\n2) raise the limit\n* page the owner')).toEqual(['roll back', 'raise the limit', 'page the owner']);
    expect(resolutionActions(Array.from({ length: 12 }, (_, i) => `- step ${i}`).join('\n'))).toHaveLength(8);
    expect(resolutionActions('-no space is not an item')).toEqual(['-no space is not an item']);
  });
});
