/**
 * Nothing acknowledged is lost (SPEC §8) for investigations: an open the model investigates
 * whose finding is not in the ledger when the process dies — queued, waiting out
 * `investigate_after`, or running — is resumed exactly once by the next start. A restart here is
 * a new ledger, bot and scheduler on the same store; the "crash" leaves the old engine hanging.
 */
import { incidentIntents } from '../../../src/core/bot/intent.js';
import { describe, expect, it } from 'vitest';
import { createStore } from '../../../src/adapters/keyv/keyv-store.js';
import type { InvestigationJobsPort } from '../../../src/core/bot/bot-context.js';
import { InvestigationJobs, type InvestigationEngine, type JobsOptions } from '../../../src/core/bot/investigation-jobs.js';
import type { CoalesceOptions } from '../../../src/core/bot/noise-control.js';
import type { NoticeView } from '../../../src/core/chat/thread-view.js';
import type { InvestigationRequest, InvestigationResult } from '../../../src/core/investigate/investigation-types.js';
import { emptyTally } from '../../../src/core/investigate/model-call.js';
import type { FindingEvent, LedgerEvent } from '../../../src/core/ledger-events.js';
import { pendingInvestigations, replayEvents } from '../../../src/core/ledger/ledger-state.js';
import type { Incident } from '../../../src/core/types.js';
import { ManualClock } from '../../../src/ports/clock.js';
import type { InvestigationEnd } from '../../../src/ports/loop-observer.js';
import type { Logger } from '../../../src/ports/logger.js';
import type { KeyValueStore } from '../../../src/ports/store.js';
import { alert, fixedSnapshot } from '../recall/recall-fixtures.js';
import { botHarness, tick, resume } from './bot-harness.js';
import { waitFor } from '../../helpers/wait-for.js';

const SEC = 1000;
const MIN = 60 * SEC;
const HOUR = 60 * MIN;

function completed(req: InvestigationRequest): InvestigationResult {
  const at = new Date().toISOString();
  return {
    id: `run-${req.incident.fingerprint}`,
    status: 'completed',
    detail: 'done',
    kind: 'fresh',
    finding: {
      summary: `cause of ${req.incident.fingerprint}`,
      verdict: 'action_required',
      confidence: 0.8,
      rootCauses: [{ cause: 'a bad rollout', confidence: 0.8, evidence: ['events'], entities: [] }],
      suggestedActions: [],
      ruledOut: [],
      openQuestions: [],
      dataGaps: [],
      investigator: { model: 'fake', promptHash: 'h', allowlist: [] },
      partial: false,
    },
    trace: [],
    usage: { ...emptyTally(), calls: 1, input: 100, output: 10 },
    steps: [],
    version: { model: 'fake', promptHash: 'h', allowlist: [] },
    startedAt: at,
    endedAt: at,
    queuedMs: 0,
  } as InvestigationResult;
}

/** An engine that records each run; `hang` runs never answer (the process dies under them). */
function scriptedEngine(mode: 'answer' | 'hang') {
  const runs: InvestigationRequest[] = [];
  const engine: InvestigationEngine = {
    run: (req) => {
      runs.push(req);
      return mode === 'answer' ? Promise.resolve(completed(req)) : new Promise<InvestigationResult>(() => undefined);
    },
  };
  return { engine, runs };
}

function infoLogger(infos: Array<{ obj: unknown; msg: string }>): Logger {
  const l: Logger = {
    debug() {},
    info: (obj: unknown, msg?: string) => void infos.push({ obj, msg: msg ?? '' }),
    warn() {},
    error() {},
    child: () => l,
  } as unknown as Logger;
  return l;
}

const warn = (fp: string, extra: Record<string, string> = {}): Incident =>
  alert({
    alertname: 'KubePodCrashLooping',
    fingerprint: fp,
    labels: { namespace: 'payments', pod: `api-${fp}-7d9f8c6b5-x2k4q`, severity: 'warning', cluster: 'prod-eu-1', ...extra },
  });
const crit = (fp: string): Incident => alert({ alertname: 'NodeDown', fingerprint: fp, labels: { instance: `node-${fp}`, severity: 'critical' } });

/** One "process": a bot and its scheduler on `store`, reading the ledger afresh. */
async function boot(
  store: KeyValueStore,
  clock: ManualClock,
  engine: InvestigationEngine,
  options: Partial<JobsOptions> = {},
  extra: { coalesce?: CoalesceOptions } = {},
) {
  const ref: { jobs?: InvestigationJobs } = {};
  const port: InvestigationJobsPort = { start: (j) => ref.jobs!.start(j), cancel: (fp) => ref.jobs!.cancel(fp), resume: (j, r) => ref.jobs!.resume(j, r) };
  /** What metrics would count: each investigation's end with its reason code. */
  const ends: string[] = [];
  const observer = { investigationEnded: (e: InvestigationEnd) => void ends.push(`${e.status}/${e.reason}`), recallDecided: () => {}, deliveryEnded: () => {} };
  const h = await botHarness({
    snapshot: fixedSnapshot([], {}),
    store,
    clock,
    jobs: port,
    observer,
    ...(extra.coalesce ? { noise: { debounceMs: 0, cooldownMs: 0, coalesce: extra.coalesce } } : {}),
  });
  const infos: Array<{ obj: unknown; msg: string }> = [];
  const jobs = new InvestigationJobs({
    engine,
    ledger: h.ledger,
    clock,
    logger: infoLogger(infos),
    options: { investigateAfterMs: MIN, outcomeFloor: 0.5, ...options },
    handle: (i) => h.bot.handle(i),
    observer,
  });
  ref.jobs = jobs;
  return { ...h, jobs, infos, ends };
}

const findings = (events: LedgerEvent[]): FindingEvent[] => events.filter((e): e is FindingEvent => e.type === 'finding');

describe('resuming investigations after a restart', () => {
  it('re-runs a job the crash interrupted exactly once, marked resumed; a second restart does not run it again', async () => {
    const store = createStore('memory://', '');
    const clock = new ManualClock('2026-01-01T00:00:00Z');
    const dead = scriptedEngine('hang');
    const first = await boot(store, clock, dead.engine);
    await first.bot.handle(incidentIntents([crit('a')]));
    await waitFor(() => (dead.runs.length === 1 ? true : undefined), 'the first run to start');
    // The process dies here: the run never answers, nothing is recorded.
    expect(findings(await first.events())).toEqual([]);

    clock.advance(5 * MIN);
    const live = scriptedEngine('answer');
    const second = await boot(store, clock, live.engine);
    expect((await resume(second.bot)).investigations).toBe(1);
    // Asked again while it runs (the lead regained): not doubled.
    expect((await resume(second.bot)).investigations).toBe(0);
    await second.jobs.idle();
    expect(live.runs.map((r) => r.incident.fingerprint)).toEqual(['a']);
    expect(live.runs[0]!.incident).toMatchObject({ alertname: 'NodeDown', severity: 'critical', labels: { instance: 'node-a' } });
    const f = findings(await second.events());
    expect(f).toHaveLength(1);
    expect(f[0]).toMatchObject({ fingerprint: 'a', status: 'completed', resumed: true, summary: 'cause of a' });
    expect(second.infos.map((i) => i.msg)).toContain('investigation resumed after a restart');

    const again = scriptedEngine('answer');
    const third = await boot(store, clock, again.engine);
    expect((await resume(third.bot)).investigations).toBe(0);
    await third.jobs.idle();
    expect(again.runs).toEqual([]);
    expect(findings(await third.events())).toHaveLength(1);
  });

  it('does not re-run a job whose finding was recorded just before the crash', async () => {
    const store = createStore('memory://', '');
    const clock = new ManualClock('2026-01-01T00:00:00Z');
    const first = await boot(store, clock, scriptedEngine('answer').engine);
    await first.bot.handle(incidentIntents([crit('a')]));
    await first.jobs.idle();
    expect(findings(await first.events())).toHaveLength(1);
    const next = scriptedEngine('answer');
    const second = await boot(store, clock, next.engine);
    expect((await resume(second.bot)).investigations).toBe(0);
    await second.jobs.idle();
    expect(next.runs).toEqual([]);
    expect(findings(await second.events())).toHaveLength(1);
  });

  it('a graceful stop records nothing for a waiting job, and the restart waits only what is left of investigate_after', async () => {
    const store = createStore('memory://', '');
    const clock = new ManualClock('2026-01-01T00:00:00Z');
    const first = await boot(store, clock, scriptedEngine('answer').engine);
    await first.bot.handle(incidentIntents([warn('w')]));
    await first.jobs.stop();
    expect(findings(await first.events())).toEqual([]);

    clock.advance(20 * SEC);
    const waiting = await boot(store, clock, scriptedEngine('answer').engine);
    expect((await resume(waiting.bot)).investigations).toBe(1);
    const resumed = waiting.infos.find((i) => i.msg === 'investigation resumed after a restart')!;
    expect(resumed.obj).toMatchObject({ waitMs: 40 * SEC });
    await waiting.jobs.stop();
    expect(findings(await waiting.events())).toEqual([]);

    // Restarted once its window has passed: it runs at once.
    clock.advance(50 * SEC);
    const live = scriptedEngine('answer');
    const late = await boot(store, clock, live.engine);
    expect((await resume(late.bot)).investigations).toBe(1);
    expect(late.infos.find((i) => i.msg === 'investigation resumed after a restart')!.obj).toMatchObject({ waitMs: 0 });
    await late.jobs.idle();
    expect(live.runs).toHaveLength(1);
    expect(findings(await late.events())).toEqual([expect.objectContaining({ fingerprint: 'w', status: 'completed', resumed: true })]);
  });

  it('records a job older than resume_max_age as skipped and says so in the thread, without a model call', async () => {
    const store = createStore('memory://', '');
    const clock = new ManualClock('2026-01-01T00:00:00Z');
    const first = await boot(store, clock, scriptedEngine('hang').engine);
    await first.bot.handle(incidentIntents([crit('old')]));
    clock.advance(2 * HOUR);
    const live = scriptedEngine('answer');
    const second = await boot(store, clock, live.engine, { resumeMaxAgeMs: HOUR });
    expect((await resume(second.bot)).investigations).toBe(0);
    await second.jobs.idle();
    expect(live.runs).toEqual([]);
    const f = findings(await second.events());
    expect(f).toEqual([
      expect.objectContaining({
        fingerprint: 'old',
        status: 'skipped',
        resumed: true,
        calls: 0,
        reason: 'not resumed: older than 1 h (model.resume_max_age) when Reprise restarted',
      }),
    ]);
    expect(second.ends).toEqual(['skipped/too_old']);
    await second.settle();
    const notices = second.transport.replies.map((r) => r.view as NoticeView).filter((v) => v.kind === 'notice');
    expect(notices.map((n) => n.text.join(''))).toContain(
      'investigation not started — not resumed: older than 1 h (model.resume_max_age) when Reprise restarted',
    );
    // Recorded: the next restart has nothing left to resume.
    const third = await boot(store, clock, live.engine, { resumeMaxAgeMs: HOUR });
    expect((await resume(third.bot)).investigations).toBe(0);
    await third.jobs.idle();
    expect(findings(await third.events())).toHaveLength(1);
  });

  it('records a job whose alert resolved while the bot was down as cancelled, and does not run it', async () => {
    const store = createStore('memory://', '');
    const clock = new ManualClock('2026-01-01T00:00:00Z');
    const first = await boot(store, clock, scriptedEngine('hang').engine);
    const a = crit('gone');
    await first.bot.handle(incidentIntents([a]));
    const live = scriptedEngine('answer');
    const second = await boot(store, clock, live.engine);
    // The resolve arrived before the leader resumed (a follower recorded it in the inbox).
    await second.bot.handle(incidentIntents([{ ...a, status: 'resolved' }]));
    expect((await resume(second.bot)).investigations).toBe(0);
    await second.jobs.idle();
    expect(live.runs).toEqual([]);
    expect(findings(await second.events())).toEqual([expect.objectContaining({ fingerprint: 'gone', status: 'cancelled', resumed: true, calls: 0 })]);
    expect(second.ends).toEqual(['cancelled/resolved']);
  });

  it('keeps the hourly rate limit for resumed jobs', async () => {
    const store = createStore('memory://', '');
    const clock = new ManualClock('2026-01-01T00:00:00Z');
    const first = await boot(store, clock, scriptedEngine('hang').engine);
    await first.bot.handle(incidentIntents([crit('a'), crit('b'), crit('c')]));
    const live = scriptedEngine('answer');
    const second = await boot(store, clock, live.engine, { maxPerHour: 2 });
    expect((await resume(second.bot)).investigations).toBe(3);
    await second.jobs.idle();
    expect(live.runs).toHaveLength(2);
    const f = findings(await second.events());
    expect(f.map((e) => e.status).sort()).toEqual(['completed', 'completed', 'skipped']);
    expect(f.find((e) => e.status === 'skipped')!.reason).toMatch(/^rate limit: 2 investigations already started in the last hour/);
  });

  it('gives a storm thread its one investigation, over every workload of the batch', async () => {
    const store = createStore('memory://', '');
    const clock = new ManualClock('2026-01-01T00:00:00Z');
    const coalesce: CoalesceOptions = { group: true, labels: [], debounceMs: 30 * SEC, maxWaitMs: 2 * MIN, maxAlerts: 50 };
    const first = await boot(store, clock, scriptedEngine('hang').engine, {}, { coalesce });
    const storm = ['s1', 's2', 's3'].map((fp) => ({ ...warn(fp), groupKey: '{}:{alertname="KubePodCrashLooping"}' }));
    const outs = await first.bot.handle(incidentIntents(storm));
    expect(outs.map((o) => o.status)).toEqual(['posted', 'merged', 'merged']);
    await first.jobs.stop();
    clock.advance(3 * MIN);
    await tick(first.bot); // the batch's window closes (flushed)
    const live = scriptedEngine('answer');
    const second = await boot(store, clock, live.engine, {}, { coalesce });
    expect((await resume(second.bot)).investigations).toBe(1);
    await second.jobs.idle();
    expect(live.runs).toHaveLength(1);
    expect(live.runs[0]!.storm).toHaveLength(3);
    expect(findings(await second.events())).toEqual([expect.objectContaining({ fingerprint: 's1', status: 'completed', resumed: true })]);
  });

  it('lists pending investigations the same after a replay and from a snapshot', async () => {
    const store = createStore('memory://', '');
    const clock = new ManualClock('2026-01-01T00:00:00Z');
    const first = await boot(store, clock, scriptedEngine('hang').engine);
    await first.bot.handle(incidentIntents([crit('a'), crit('b')]));
    const events = await first.events();
    const replayed = replayEvents(events);
    expect(pendingInvestigations(replayed).map((p) => p.fingerprint)).toEqual(['a', 'b']);
    expect(first.ledger.read.pendingInvestigations()).toEqual(pendingInvestigations(replayed));
    // An open recorded without a model has nothing to resume.
    const plain = await botHarness({ snapshot: fixedSnapshot([], {}) });
    await plain.bot.handle(incidentIntents([crit('c')]));
    expect(plain.ledger.read.pendingInvestigations()).toEqual([]);
  });
});
