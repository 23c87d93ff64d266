/**
 * 👎 recovery through confirmations (SPEC §8): a standing 👎 makes the track record refuse the
 * entry the model matched, so a fresh investigation runs; each that independently reaches the
 * same finding (completed, verified, conclusive, the entry's own dedup fingerprint) records a
 * `confirm`, and two confirmations offset the 👎 — recall fires again.
 */
import { describe, expect, it } from 'vitest';
import { confirmation } from '../../../src/core/bot/finding-knowledge.js';
import { InvestigationJobs, type InvestigationEngine } from '../../../src/core/bot/investigation-jobs.js';
import { dupFingerprint } from '../../../src/core/bot/dup-fingerprint.js';
import type { Finding } from '../../../src/core/investigate/finding.js';
import type { InvestigationRequest, InvestigationResult } from '../../../src/core/investigate/investigation-types.js';
import { emptyTally } from '../../../src/core/investigate/model-call.js';
import type { Entry } from '../../../src/core/types.js';
import { alert, fixedSnapshot, incidentEntry } from '../recall/recall-fixtures.js';
import { botHarness, recordingLogger } from './bot-harness.js';

const incident = alert({
  alertname: 'KubePodCrashLooping',
  fingerprint: 'fp-1',
  labels: { namespace: 'payments', pod: 'checkout-api-7d9f8c6b5-x2k4q', severity: 'critical' },
});
const DUP = dupFingerprint(incident);
const entry: Entry = {
  ...incidentEntry('incidents/checkout-api-oomkilled.md', { resource: 'payments/checkout-api', title: 'checkout-api OOMKilled', cause: 'cache' }),
  fingerprint: DUP,
};

function finding(o: Partial<Finding> = {}): Finding {
  return {
    summary: 'cache too small',
    verdict: 'action_required',
    confidence: 0.8,
    rootCauses: [{ cause: 'cache', confidence: 0.8, evidence: [], entities: [] }],
    suggestedActions: [],
    ruledOut: [],
    openQuestions: [],
    dataGaps: [],
    investigator: { model: 'fake', promptHash: 'h', allowlist: [] },
    partial: false,
    verified: true,
    ...o,
  };
}
function result(req: InvestigationRequest, f: Finding | null, status: InvestigationResult['status'] = 'completed'): InvestigationResult {
  const at = new Date().toISOString();
  return {
    id: 'r',
    status,
    detail: '',
    kind: req.recall ? 'recall' : 'fresh',
    finding: f,
    trace: [],
    usage: emptyTally(),
    steps: [],
    version: { model: 'fake', promptHash: 'h', allowlist: [] },
    startedAt: at,
    endedAt: at,
    queuedMs: 0,
  };
}

describe('confirmation()', () => {
  const req: InvestigationRequest = { incident };
  it("needs a completed, verified, conclusive finding with the entry's own dedup fingerprint", () => {
    expect(confirmation(entry, incident, result(req, finding()))).toEqual({ entry: entry.id, dupFingerprint: DUP });
    expect(confirmation(entry, incident, result(req, finding({ verified: false })))).toBeUndefined();
    expect(confirmation(entry, incident, result(req, finding({ verdict: 'inconclusive' })))).toBeUndefined();
    expect(confirmation(entry, incident, result(req, finding({ partial: true }), 'exhausted'))).toBeUndefined();
    expect(confirmation(entry, incident, result(req, null, 'failed'))).toBeUndefined();
    expect(confirmation({ ...entry, fingerprint: 'another-finding' }, incident, result(req, finding()))).toBeUndefined();
  });
});

describe('👎 recovery', () => {
  it('two confirmations offset one 👎 and recall fires again', async () => {
    const runs: InvestigationRequest[] = [];
    const engine: InvestigationEngine = {
      run: async (req) => (runs.push(req), result(req, finding())),
      rerank: async () => ({ hit: true, entry, confidence: 0.9, reason: 'same', trace: [], usage: emptyTally(), steps: [] }),
    };
    const h = await botHarness({ snapshot: fixedSnapshot([entry], { [entry.id]: 30 }) });
    const at = h.clock.now().toISOString();
    await h.ledger.append({
      type: 'open',
      id: 'o-0',
      fingerprint: 'fp-0',
      triggerKey: incident.triggerKey,
      kind: 'recall',
      entry: entry.id,
      answerKind: 'incident',
      dupFingerprint: DUP,
      verdict: 'action_suggested',
      resolvable: true,
      at,
    });
    await h.ledger.append({ type: 'feedback', triggerKey: incident.triggerKey, user: 'bob', vote: 'down', at });
    const jobs = new InvestigationJobs({
      engine,
      ledger: h.ledger,
      clock: h.clock,
      logger: recordingLogger([]),
      options: { investigateAfterMs: 0, outcomeFloor: 0.5 },
      handle: (i) => h.bot.handle(i),
    });
    const fire = async (n: number): Promise<void> => {
      jobs.start({ openId: `o-${n}`, incident: { ...incident, fingerprint: `fp-${n}` }, candidates: [{ entry, score: 30 }] });
      await jobs.idle();
    };
    await fire(1);
    expect(runs.at(-1)!.recall).toBeUndefined();
    expect(h.ledger.read.entryStats(entry.id)).toMatchObject({ down: 1, confirmations: 1, effectiveDown: 1 });
    await fire(2);
    expect(runs.at(-1)!.recall).toBeUndefined();
    expect(h.ledger.read.entryStats(entry.id)).toMatchObject({ down: 1, confirmations: 2, effectiveDown: 0 });
    // The 👎 no longer holds the entry back: the model's match is recalled (confirm → verify).
    await fire(3);
    expect(runs.at(-1)!.recall?.entry.id).toBe(entry.id);
    expect(h.ledger.read.entryStats(entry.id).confirmations).toBe(2);
  });
});
