/**
 * When to investigate (SPEC §3, §7; issue 11): model work runs as jobs *after* the open is
 * recorded and the thread is posted — never inside a ledger transaction. An instant-recall
 * candidate is reranked, then confirmed and verified at once (2 model calls when it holds; a
 * rejection falls through to a full investigation). A miss waits `investigate_after` (never
 * for critical) while the runbook answer is already in the channel; a resolve meanwhile
 * cancels it, recorded. The result is recorded as a `finding` event with the open and goes to
 * the thread through the outbox.
 */
import type { Logger } from '../../ports/logger.js';
import type { Clock, Timer } from '../../ports/clock.js';
import type { InvestigationRequest, InvestigationResult } from '../investigate/investigation-types.js';
import type { RerankResult } from '../investigate/rerank.js';
import type { StandingAnswer } from '../investigate/prompts.js';
import type { Candidate, Entry, GateTraceStep, Incident } from '../types.js';
import type { BotReads } from './bot-context.js';
import type { Intent } from './intent.js';
import { modelRecallDecision, stoppingGate } from '../recall/recall-decision.js';
import { HourlyStartLimit } from './hourly-start-limit.js';
import type { InvestigationEndReason, LoopObserver } from '../../ports/loop-observer.js';

/** The engine as the bot uses it. */
export interface InvestigationEngine {
  run(req: InvestigationRequest): Promise<InvestigationResult>;
  /** The match gate with a model; absent = margin gate only (no rerank call). */
  rerank?(incident: Incident, candidates: readonly Candidate[], signal: AbortSignal): Promise<RerankResult>;
}

export interface JobsOptions {
  /** Wait before investigating a miss (`trigger.investigate_after`); 0 for critical. */
  investigateAfterMs: number;
  /** The outcome gate still applies to a reranked entry. */
  outcomeFloor: number;
  /** Investigations started per rolling hour (`trigger.max_investigations_per_hour`); 0 or absent = no limit. */
  maxPerHour?: number;
  /** A job of an earlier run older than this is not resumed but recorded as skipped (`model.resume_max_age`; default 1 h). */
  resumeMaxAgeMs?: number;
}

const HOUR_MS = 3_600_000;

export interface JobInput {
  openId: string;
  incident: Incident;
  /** Structurally agreeing instant-recall candidates, best BM25 first (what rerank sees). */
  candidates: Candidate[];
  standing?: StandingAnswer;
  /** A storm thread: the affected workloads, read when the investigation starts. */
  storm?: () => string[];
  /** When the open was recorded: the `investigate_after` wait counts from then (default: now). */
  openedAt?: string;
  /** Started again after a restart or a change of leader (said in the finding). */
  resumed?: boolean;
  /** A runbook answer is on the thread (what the recall decision reports when the model misses). */
  runbook?: boolean;
}

interface Pending {
  controller: AbortController;
  timer?: Timer;
  openId: string;
  triggerKey: string;
  fingerprint: string;
  incident: Incident;
  /** Stopped by `stop` (shutdown, lost lead), not cancelled: nothing is recorded, the next leader resumes it. */
  stopped?: boolean;
}

/** "1 h", "90 min", "45 s": a duration as an operator reads it. */
function humanMs(ms: number): string {
  if (ms >= HOUR_MS && ms % HOUR_MS === 0) return `${ms / HOUR_MS} h`;
  if (ms >= 60_000) return `${Math.round(ms / 60_000)} min`;
  return `${Math.round(ms / 1000)} s`;
}

export class InvestigationJobs {
  readonly #engine: InvestigationEngine;
  readonly #ledger: { read: Pick<BotReads, 'trackRecord' | 'investigationsSince'> };
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #opts: JobsOptions;
  readonly #handle: (intent: Intent) => Promise<unknown>;
  readonly #observer: Pick<LoopObserver, 'recallDecided'> | undefined;
  /** By fingerprint: a resolve cancels the job of its firing. */
  readonly #pending = new Map<string, Pending>();
  /** By open id: every job from `start` until it is recorded (or stopped), waiting or running. */
  readonly #active = new Map<string, Pending>();
  readonly #running = new Set<Promise<void>>();
  /** Start times of investigations in the last hour, oldest first (the rate limit). */
  readonly #hourly: HourlyStartLimit;

  constructor(deps: {
    engine: InvestigationEngine;
    ledger: { read: Pick<BotReads, 'trackRecord' | 'investigationsSince'> };
    clock: Clock;
    logger: Logger;
    options: JobsOptions;
    /** The loop's entrance: what a job ends with is handed back to it, decided and recorded there. */
    handle: (intent: Intent) => Promise<unknown>;
    observer?: Pick<LoopObserver, 'recallDecided'>;
  }) {
    this.#engine = deps.engine;
    this.#ledger = deps.ledger;
    this.#clock = deps.clock;
    this.#log = deps.logger;
    this.#opts = deps.options;
    this.#handle = deps.handle;
    this.#observer = deps.observer;
    this.#hourly = new HourlyStartLimit(this.#opts.maxPerHour ?? 0, this.#clock, (since) => this.#ledger.read.investigationsSince(since));
  }

  /** Schedules the model's part for a freshly recorded open (a job already scheduled for it is left alone). */
  start(job: JobInput): void {
    if (this.#active.has(job.openId)) return;
    const controller = new AbortController();
    const pending: Pending = {
      controller,
      openId: job.openId,
      triggerKey: job.incident.triggerKey,
      fingerprint: job.incident.fingerprint,
      incident: job.incident,
    };
    this.#pending.get(job.incident.fingerprint)?.controller.abort();
    this.#pending.set(job.incident.fingerprint, pending);
    this.#active.set(job.openId, pending);
    const go = (): void => this.#track(this.#run(job, pending).finally(() => this.#done(pending)));
    if (job.candidates.length > 0 && this.#engine.rerank) go();
    else {
      const wait = this.#waitLeft(job);
      if (wait <= 0) go();
      else {
        pending.timer = this.#clock.setTimeout(go, wait).unref();
      }
    }
  }

  /**
   * A job of an earlier run whose finding was never recorded (SPEC §8: nothing acknowledged is
   * lost): started again with what is left of its wait, under the same hourly limit — unless
   * this scheduler already has it, its incident is over (recorded as cancelled), or it is older
   * than `resumeMaxAgeMs` (recorded as skipped, said in the thread). Returns whether it started.
   */
  resume(job: JobInput & { openedAt: string }, resolved: boolean): boolean {
    if (this.#active.has(job.openId)) return false;
    const log = { trigger: job.incident.triggerKey, openId: job.openId, openedAt: job.openedAt };
    const maxAge = this.#opts.resumeMaxAgeMs ?? HOUR_MS;
    const age = this.#clock.now().getTime() - Date.parse(job.openedAt);
    if (resolved || !(age <= maxAge)) {
      // Recorded once: the open counts as taken until its finding is in the ledger.
      const p: Pending = {
        controller: new AbortController(),
        openId: job.openId,
        triggerKey: job.incident.triggerKey,
        fingerprint: job.incident.fingerprint,
        incident: job.incident,
      };
      this.#active.set(job.openId, p);
      const record = resolved
        ? this.#recordCancel(p, 'the alert resolved before the interrupted investigation could resume', true)
        : this.#skip({ ...job, resumed: true }, `not resumed: older than ${humanMs(maxAge)} (model.resume_max_age) when Reprise restarted`, 'too_old');
      this.#track(record.finally(() => this.#done(p)));
      return false;
    }
    this.#log.info({ ...log, waitMs: Math.max(0, this.#waitLeft(job)) }, 'investigation resumed after a restart');
    this.start({ ...job, resumed: true });
    return true;
  }

  /** What is left of the `investigate_after` wait (never for critical). */
  #waitLeft(job: JobInput): number {
    const wait = job.incident.severity === 'critical' ? 0 : this.#opts.investigateAfterMs;
    if (wait <= 0) return 0;
    if (job.openedAt === undefined) return wait;
    const since = this.#clock.now().getTime() - Date.parse(job.openedAt);
    return Number.isFinite(since) ? Math.min(wait, wait - Math.max(0, since)) : wait;
  }

  #done(p: Pending): void {
    if (this.#active.get(p.openId) === p) this.#active.delete(p.openId);
  }

  /**
   * The incident resolved: a job still waiting is cancelled (and that is recorded); one already
   * running is told to stop. Returns whether there was one.
   */
  cancel(fingerprint: string): boolean {
    const p = this.#pending.get(fingerprint);
    if (!p) return false;
    this.#pending.delete(fingerprint);
    p.controller.abort();
    if (p.timer) {
      this.#clock.clearTimeout(p.timer);
      this.#track(this.#recordCancel(p).finally(() => this.#done(p)));
    }
    return true;
  }

  /** Resolves when every started job has finished (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.#running.size > 0) await Promise.allSettled([...this.#running]);
  }

  /**
   * Stops every job, waiting or running, and waits for running ones to notice. Nothing is
   * recorded for them: their findings are still missing, so the next start (or the next
   * leader) resumes them.
   */
  async stop(): Promise<void> {
    for (const p of this.#active.values()) {
      p.stopped = true;
      this.#clock.clearTimeout(p.timer);
      p.controller.abort();
    }
    this.#pending.clear();
    this.#active.clear();
    await this.idle();
  }

  #track(p: Promise<void>): void {
    const tracked = p.catch((err: unknown) => this.#log.error({ err }, 'investigation job failed'));
    this.#running.add(tracked);
    void tracked.finally(() => this.#running.delete(tracked));
  }

  async #recordCancel(p: Pick<Pending, 'openId' | 'incident'>, reason = 'the alert resolved before the investigation started', resumed = false): Promise<void> {
    await this.#handle({
      type: 'investigation_ended',
      job: { openId: p.openId, incident: p.incident, ...(resumed ? { resumed } : {}) },
      outcome: 'cancelled',
      reason,
    });
  }

  async #run(job: JobInput, p: Pending): Promise<void> {
    if (p.controller.signal.aborted) return;
    const { incident } = job;
    let recalled: Entry | undefined;
    /** An entry the model matched but its track record refused (a standing 👎): a fresh run may confirm it. */
    let refused: Entry | undefined;
    let req: InvestigationRequest = { incident, signal: p.controller.signal, ...(job.standing ? { standing: job.standing } : {}) };
    let trace: GateTraceStep[] = [];
    let rerankCalls = { calls: 0, input: 0, output: 0, costUsd: 0 };
    if (job.candidates.length > 0 && this.#engine.rerank) {
      const r = await this.#engine.rerank(incident, job.candidates, p.controller.signal);
      trace = r.trace;
      rerankCalls = { calls: r.usage.calls, input: r.usage.input, output: r.usage.output, costUsd: r.usage.costUsd };
      if (r.hit) {
        const track = this.#ledger.read.trackRecord(r.entry.id, 'incident', this.#clock.now());
        if (track.withheld || track.rate >= this.#opts.outcomeFloor) {
          recalled = r.entry;
          // The track record weighs on a reranked entry as on any recall.
          req = { ...req, recall: { entry: r.entry, confidence: r.confidence * (track.withheld ? 1 : track.factor) } };
        } else {
          refused = r.entry;
          this.#log.info({ entry: r.entry.id, rate: track.rate }, 'reranked entry refused by the outcome gate');
        }
      }
      if (!recalled) this.#decided(job, false, r.hit ? 'outcome' : 'rerank');
      if (!recalled && !p.controller.signal.aborted) {
        // A miss: the investigation proper waits like any other (never for critical).
        const wait = this.#waitLeft(job);
        if (wait > 0) {
          await new Promise<void>((resolve) => {
            p.timer = this.#clock.setTimeout(resolve, wait).unref();
            p.controller.signal.addEventListener('abort', () => resolve(), { once: true });
          });
          p.timer = undefined;
          // Cancelled while waiting: `cancel` found the timer and recorded it.
          if (p.controller.signal.aborted) return;
        }
      }
    }
    this.#pending.delete(incident.fingerprint);
    if (!req.recall) {
      const refusal = this.#hourly.tryStart();
      if (refusal) {
        await this.#skip(job, refusal, 'rate_limit');
        return;
      }
      const storm = job.storm?.();
      if (storm && storm.length > 1) req = { ...req, storm };
    }
    const result = await this.#engine.run(req);
    if (p.stopped) {
      // Shutdown or a lost lead, not a resolve: no finding, so the next leader resumes it.
      this.#log.info({ trigger: incident.triggerKey, openId: job.openId }, 'investigation interrupted by a shutdown; resumed at the next start');
      return;
    }
    result.usage.calls += rerankCalls.calls;
    result.usage.input += rerankCalls.input;
    result.usage.output += rerankCalls.output;
    result.usage.costUsd += rerankCalls.costUsd;
    result.trace = [...trace, ...result.trace];
    if (recalled && result.status !== 'cancelled')
      this.#decided(job, result.recall?.delivered === true, stoppingGate(result.trace, new Set([recalled.id]), 'verify'));
    await this.#deliver(job, result, result.recall?.delivered ? recalled : undefined, refused);
  }

  /** The model's match gate settled this job's instant recall. */
  #decided(job: JobInput, delivered: boolean, stoppedBy: GateTraceStep['gate']): void {
    this.#observer?.recallDecided(modelRecallDecision({ delivered, runbook: job.runbook === true, stoppedBy }));
  }

  /** An investigation that did not start, recorded with its reason and said in the thread. */
  async #skip(job: JobInput, reason: string, code: InvestigationEndReason): Promise<void> {
    await this.#handle({
      type: 'investigation_ended',
      job: { openId: job.openId, incident: job.incident, ...(job.resumed ? { resumed: true } : {}) },
      outcome: 'skipped',
      reason,
      code,
    });
  }

  async #deliver(job: JobInput, r: InvestigationResult, recalled: Entry | undefined, refused?: Entry): Promise<void> {
    await this.#handle({
      type: 'investigation_ended',
      job: { openId: job.openId, incident: job.incident, ...(job.resumed ? { resumed: true } : {}) },
      outcome: 'result',
      result: r,
      ...(recalled ? { recalled } : {}),
      ...(refused ? { refused } : {}),
    });
  }
}
