/**
 * The rate limit on investigation starts (issue 12, SPEC §4): past the hourly limit an
 * investigation is not started, and that is recorded and said in its thread, never silently
 * lost; the next hour starts them again, and a restart does not reset the count.
 */
import { incidentIntents } from '../../../src/core/bot/intent.js';
import { describe, expect, it } from 'vitest';
import type { InvestigationJobsPort } from '../../../src/core/bot/bot-context.js';
import { InvestigationJobs, type InvestigationEngine } from '../../../src/core/bot/investigation-jobs.js';
import type { NoticeView } from '../../../src/core/chat/thread-view.js';
import type { InvestigationRequest, InvestigationResult } from '../../../src/core/investigate/investigation-types.js';
import { emptyTally } from '../../../src/core/investigate/model-call.js';
import type { FindingEvent } from '../../../src/core/ledger-events.js';
import type { InvestigationEnd, LoopObserver, RecallDecision } from '../../../src/ports/loop-observer.js';
import { alert, fixedSnapshot } from '../recall/recall-fixtures.js';
import { botHarness, recordingLogger } from './bot-harness.js';

const HOUR = 3_600_000;

function failedRun(req: InvestigationRequest): InvestigationResult {
  const at = new Date().toISOString();
  return {
    id: `run-${req.incident.fingerprint}`,
    status: 'failed',
    reason: 'model_error',
    detail: 'the fake model is down',
    kind: 'fresh',
    finding: null,
    trace: [],
    usage: { ...emptyTally(), calls: 1 },
    steps: [],
    version: { model: 'fake', promptHash: 'h', allowlist: [] },
    startedAt: at,
    endedAt: at,
    queuedMs: 0,
  };
}

const crit = (fp: string) => alert({ alertname: 'NodeDown', fingerprint: fp, labels: { instance: `node-${fp}`, severity: 'critical' } });

describe('rate limit on investigation starts', () => {
  it('starts at most N per rolling hour; the excess is recorded as skipped and said in the thread', async () => {
    const runs: InvestigationRequest[] = [];
    const engine: InvestigationEngine = { run: async (req) => (runs.push(req), failedRun(req)) };
    const ref: { jobs?: InvestigationJobs } = {};
    const port: InvestigationJobsPort = { start: (j) => ref.jobs!.start(j), cancel: (fp) => ref.jobs!.cancel(fp) };
    // What metrics are told: each end with its reason code, each recall decision once.
    const ends: InvestigationEnd[] = [];
    const decisions: RecallDecision[] = [];
    const observer: LoopObserver = { investigationEnded: (e) => void ends.push(e), recallDecided: (d) => void decisions.push(d), deliveryEnded: () => {} };
    const h = await botHarness({ snapshot: fixedSnapshot([], {}), jobs: port, observer });
    ref.jobs = new InvestigationJobs({
      engine,
      ledger: h.ledger,
      clock: h.clock,
      logger: recordingLogger([]),
      options: { investigateAfterMs: 0, outcomeFloor: 0.5, maxPerHour: 2 },
      handle: (i) => h.bot.handle(i),
      observer,
    });

    await h.bot.handle(incidentIntents([crit('a'), crit('b'), crit('c')]));
    await ref.jobs.idle();
    expect(runs.map((r) => r.incident.fingerprint).sort()).toEqual(['a', 'b']);
    const findings = (await h.events()).filter((e): e is FindingEvent => e.type === 'finding');
    expect(findings.map((f) => [f.fingerprint, f.status]).sort()).toEqual([
      ['a', 'failed'],
      ['b', 'failed'],
      ['c', 'skipped'],
    ]);
    expect(ends.map((e) => `${e.status}/${e.reason}`).sort()).toEqual(['failed/model_error', 'failed/model_error', 'skipped/rate_limit']);
    // Nothing in the catalog agrees with a node: settled at intake, stopped by the structural gate.
    expect(decisions).toEqual([0, 1, 2].map(() => ({ answer: 'none', stoppedBy: 'structural' })));
    expect(findings.find((f) => f.status === 'skipped')!.reason).toMatch(
      /^rate limit: 2 investigations already started in the last hour \(trigger\.max_investigations_per_hour\); the next slot opens in 60 min$/,
    );
    await h.settle();
    const notices = h.transport.replies.map((r) => r.view as NoticeView).filter((v) => v.kind === 'notice');
    expect(notices.map((n) => n.text.join(''))).toEqual([expect.stringMatching(/^investigation not started — rate limit/)]);

    // A restart does not reset the limit: the ledger says what ran in the last hour.
    const restarted = (): InvestigationJobs =>
      new InvestigationJobs({
        engine,
        ledger: h.ledger,
        clock: h.clock,
        logger: recordingLogger([]),
        options: { investigateAfterMs: 0, outcomeFloor: 0.5, maxPerHour: 2 },
        handle: (i) => h.bot.handle(i),
      });
    ref.jobs = restarted();
    h.clock.advance(HOUR / 2);
    await h.bot.handle(incidentIntents([crit('d')]));
    await ref.jobs.idle();
    expect(runs).toHaveLength(2);

    h.clock.advance(HOUR / 2);
    ref.jobs = restarted();
    await h.bot.handle(incidentIntents([crit('e')]));
    await ref.jobs.idle();
    expect(runs.map((r) => r.incident.fingerprint).sort()).toEqual(['a', 'b', 'e']);
  });
});
