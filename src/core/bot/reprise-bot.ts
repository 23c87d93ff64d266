import { randomUUID } from 'node:crypto';
import type { Logger } from '../../ports/logger.js';
import { buildCard, buildDetail, resolvedNote } from '../chat/build-thread-view.js';
import type { ChatEvent, ResponseTarget } from '../chat/chat-types.js';
import type { EphemeralView } from '../chat/thread-view.js';
import { RepriseError } from '../errors.js';
import type { FeedbackEvent, SilenceEvent, Verdict } from '../ledger-events.js';
import { recall, type RecallResult } from '../recall/recall.js';
import { recallDecision } from '../recall/recall-decision.js';
import type { RecallDecision } from '../../ports/loop-observer.js';
import type { Answer, Incident } from '../types.js';
import { enqueue, previousEntry, restate, type BotTx, type Enqueued, type JobRequest, type RepriseBotDeps } from './bot-context.js';
import { fromChatEvent, type Actor, type BotEvent } from './bot-event.js';
import type { AlertmanagerAlertState } from './alertmanager-reconcile.js';
import { reconcileThreads, silenceInAlertmanager, type AmSilenceRequest } from './alertmanager-flow.js';
import { flushStorm, noiseGate, recordDrop, type NoiseOutcome } from './noise-gate.js';
import { resolveIncident } from './resolve-flow.js';
import { parseSilenceChoice } from './silence-choice.js';
import { applyCliNote, applyNote, applySilence, applyVote, isUserError, type ActionContext, type ChatOutcome } from './chat-actions.js';
import { answerCommand, clickAnswer } from './command-answer.js';
import { plainAnswer } from './commands.js';
import { dupFingerprint } from './dup-fingerprint.js';
import { batchDue, NO_NOISE_CONTROL } from './noise-control.js';
import { feedbackForKnownTrigger } from './feedback-request.js';

export type { BotLedger, BotSurface, BotTx, ClosedEpisode, RepriseBotDeps, ThreadInfo } from './bot-context.js';

/** Held firings released (and storm batches flushed) per `tick` transaction. */
const TICK_BATCH = 500;

export type IncidentOutcome =
  | { status: 'posted'; fingerprint: string; triggerKey: string; threadId?: string; answer: Answer | null; recall: RecallResult }
  | { status: 'silenced'; fingerprint: string; triggerKey: string; until: string }
  | NoiseOutcome
  | { status: 'resolved'; fingerprint: string; triggerKey: string; threadId?: string; paired: boolean };

export type BotOutcome = IncidentOutcome | ChatOutcome | { status: 'answered' };

/** What a transaction decided that must happen once it is durable. */
interface AfterCommit {
  start: JobRequest[];
  cancel: string[];
  /** 🔕 "in Alertmanager too": made once the silence is durable here. */
  amSilences?: AmSilenceRequest[];
  /** Recall decisions settled here, counted once durable. */
  decided?: RecallDecision[];
}

/** Incidents decided between two yields to the event loop: a 10k-alert group must not starve /healthz. */
const YIELD_EVERY = 64;
const yieldToLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
export const DEFAULT_NOTES = { maxBytes: 8 * 1024, perThread: 20 };

/**
 * The loop's entry point (SPEC §3): events in, effects out. Every event — a webhook's firings
 * and resolves, a vote, a silence, a note, a command, a click — is decided and recorded in one
 * ledger transaction, with the messages it calls for as outbox items; `handle` resolves once
 * that is durable, without waiting for any chat service. The outbox worker delivers.
 */
export class RepriseBot {
  readonly #d: RepriseBotDeps;
  /** Background calls to Alertmanager still running. */
  readonly #background = new Set<Promise<void>>();
  /** Fingerprints Alertmanager has listed (only those can be marked "no longer firing"). */
  readonly #amListed = new Set<string>();
  /** Alertmanager silence requests being made now (a resume must not make them twice). */
  readonly #amInFlight = new Set<string>();

  constructor(deps: RepriseBotDeps) {
    this.#d = deps;
  }

  /** Resolves once background work (Alertmanager silences) has finished (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.#background.size > 0) await Promise.allSettled([...this.#background]);
  }

  /** Handles events in order (an Incident is shorthand for its firing or resolve). */
  async handle(items: ReadonlyArray<BotEvent | Incident>): Promise<BotOutcome[]> {
    const events = items.map((i): BotEvent => ('type' in i ? i : i.status === 'resolved' ? { type: 'resolve', incident: i } : { type: 'firing', incident: i }));
    const answers: Array<{ to: ResponseTarget; via: string; view: EphemeralView }> = [];
    const out: Enqueued = { count: 0 };
    const after: AfterCommit = { start: [], cancel: [], amSilences: [] };
    const { result } = await this.#d.ledger.transaction(async (tx) => {
      const outcomes: BotOutcome[] = [];
      for (let i = 0; i < events.length; i++) {
        if (i > 0 && i % YIELD_EVERY === 0) await yieldToLoop();
        outcomes.push(this.#one(events[i]!, tx, out, answers, after));
      }
      return outcomes;
    });
    if (out.count > 0) this.#d.outbox?.kick();
    if (out.count > 0) this.#d.curation?.kick();
    // Model work starts only once its open is durable, and never inside the transaction.
    for (const fp of after.cancel) this.#d.jobs?.cancel(fp);
    for (const job of after.start) this.#d.jobs?.start(job);
    for (const req of after.amSilences ?? []) this.#amSilence(req);
    for (const d of after.decided ?? []) this.#d.observer?.recallDecided(d);
    for (const a of answers) await this.#answer(a.via, a.to, a.view);
    return result;
  }

  #inBackground(p: Promise<void>): void {
    const tracked = p.catch((err: unknown) => this.#d.logger.error({ err }, 'background work failed'));
    this.#background.add(tracked);
    void tracked.finally(() => this.#background.delete(tracked));
  }

  /**
   * Marks threads from what Alertmanager holds (issue 12): silenced or inhibited there, or no
   * longer firing; each mark is recorded and the card rewritten in place. `listedAt` is when the
   * list was read: threads opened after it are left for the next round.
   */
  async reconcile(alerts: readonly AlertmanagerAlertState[], listedAt: Date): Promise<number> {
    return reconcileThreads(this.#d, alerts, listedAt, this.#amListed);
  }

  /** The sink a chat transport hands inbound events to. */
  readonly onChat = async (event: ChatEvent): Promise<void> => {
    const e = fromChatEvent(event);
    if (!e) return;
    if (e.type === 'command') {
      await this.#command(e);
      return;
    }
    await this.handle([e]);
  };

  /**
   * 👍 / 👎 / clear / 🔕 from the CLI (validated; the trigger must be one the ledger has seen).
   * @throws RepriseError `invalid_payload` for a bad request, `not_found` for an unknown trigger.
   */
  async feedback(input: unknown): Promise<{ seq: number; event: FeedbackEvent | SilenceEvent }> {
    const event = feedbackForKnownTrigger(this.#d.ledger, input, this.#d.clock.now());
    const actor: Actor = { id: event.user, via: event.via ?? 'cli' };
    const bot: BotEvent =
      event.type === 'feedback'
        ? { type: 'vote', actor, vote: event.vote, target: { triggerKey: event.triggerKey } }
        : { type: 'silence', actor, duration: (input as { duration: string }).duration, target: { triggerKey: event.triggerKey } };
    const out: Enqueued = { count: 0 };
    let recorded: FeedbackEvent | SilenceEvent | undefined;
    const { first } = await this.#d.ledger.transaction(async (tx) => {
      const o = bot.type === 'vote' ? applyVote(this.#ctx(out), tx, bot) : applySilence(this.#ctx(out), tx, bot as Extract<BotEvent, { type: 'silence' }>);
      if (o.status === 'recorded' && (o.event.type === 'feedback' || o.event.type === 'silence')) recorded = o.event;
    });
    if (out.count > 0) this.#d.outbox?.kick();
    if (!recorded) throw new RepriseError('invalid_payload', 'feedback was not recorded');
    return { seq: first, event: recorded };
  }

  /**
   * `reprise note <triggerKey> <text…>`: an operator note on the trigger's newest thread, filed
   * like one written in the thread.
   * @throws RepriseError `not_found` for a trigger without a thread, `invalid_payload` when refused.
   */
  async note(input: { triggerKey: string; text: string; user?: string }): Promise<{ seq: number; outcome: ChatOutcome }> {
    const actor: Actor = { id: input.user ?? 'cli', via: 'cli' };
    const out: Enqueued = { count: 0 };
    const { result, first } = await this.#d.ledger.transaction(async (tx) =>
      applyCliNote(this.#ctx(out), tx, { triggerKey: input.triggerKey, actor, text: input.text }),
    );
    if (out.count > 0) this.#d.outbox?.kick();
    if (out.count > 0) this.#d.curation?.kick();
    if (result.status !== 'recorded') throw new RepriseError('invalid_payload', `note not saved: ${result.reason}`);
    return { seq: first, outcome: result };
  }

  /** Recall only: what the bot would answer, without recording or posting anything. */
  preview(incident: Incident): RecallResult {
    const now = this.#d.clock.now();
    return recall(incident, this.#d.catalog(), (id, kind) => this.#d.ledger.read.trackRecord(id, kind, now), this.#d.recall, now);
  }

  #ctx(out: Enqueued): ActionContext {
    return {
      ledger: this.#d.ledger,
      now: this.#d.clock.now(),
      log: this.#d.logger,
      allow: this.#d.allow ?? (() => true),
      notes: this.#d.notes ?? DEFAULT_NOTES,
      out,
      ...(this.#d.curation ? { curate: { intents: 0 } } : {}),
    };
  }

  #one(e: BotEvent, tx: BotTx, out: Enqueued, answers: Array<{ to: ResponseTarget; via: string; view: EphemeralView }>, after: AfterCommit): BotOutcome {
    switch (e.type) {
      case 'firing':
      case 'resolve': {
        const log = this.#d.logger.child({ incident: e.incident.fingerprint, trigger: e.incident.triggerKey });
        const admission = this.#d.policy?.admit(e.incident, this.#d.clock.now()) ?? { admitted: true };
        if (!admission.admitted) {
          log.info({ reason: admission.reason, status: e.incident.status }, 'dropped by trigger policy');
          return this.#drop(tx, e.incident, 'policy', admission.reason);
        }
        return e.type === 'resolve'
          ? resolveIncident(this.#d, e.incident, tx, out, log, after.cancel)
          : this.#firing(e.incident, e.route ?? {}, tx, out, log, after);
      }
      case 'vote':
        return applyVote(this.#ctx(out), tx, e);
      case 'silence': {
        const choice = parseSilenceChoice(e.duration);
        const o = this.#guarded(e.respond, e.actor.via, answers, () =>
          applySilence(this.#ctx(out), tx, { ...e, duration: choice.duration }, choice.alertmanager),
        );
        this.#wantAmSilence(o, e.actor, after);
        return o;
      }
      case 'note':
        return applyNote(this.#ctx(out), tx, e);
      case 'button': {
        const ctx = this.#ctx(out);
        const choice = parseSilenceChoice(e.value ?? '4h');
        const o =
          e.action === 'silence'
            ? this.#guarded(e.respond, e.actor.via, answers, () =>
                applySilence(
                  ctx,
                  tx,
                  { type: 'silence', actor: e.actor, duration: choice.duration, target: e.target, eventId: e.eventId },
                  choice.alertmanager,
                ),
              )
            : applyVote(ctx, tx, { type: 'vote', actor: e.actor, vote: e.action === 'vote_up' ? 'up' : 'down', target: e.target, eventId: e.eventId });
        this.#wantAmSilence(o, e.actor, after);
        answers.push({ to: e.respond, via: e.actor.via, view: clickAnswer(e.action, o) });
        return o;
      }
      case 'command':
        // Commands need the surface's answer channel; `onChat` runs them (a command in a batch is a no-op).
        return { status: 'ignored', reason: 'commands are answered through onChat' };
    }
  }

  /** A recorded 🔕 that asked for Alertmanager too: made once the silence is durable. */
  #wantAmSilence(o: ChatOutcome, actor: Actor, after: AfterCommit): void {
    if (o.status !== 'recorded' || o.event.type !== 'silence' || !o.event.alertmanager) return;
    const { requestId, openId, who } = o.event.alertmanager;
    (after.amSilences ??= []).push({ requestId, openId, until: o.event.until, who, via: actor.via });
  }

  /** Alertmanager silences asked for before a restart whose outcome was never recorded: made now. */
  resumeAmSilences(): number {
    const pending = this.#d.ledger.read.pendingAmSilences().filter((r) => !this.#amInFlight.has(r.requestId));
    for (const req of pending) this.#amSilence(req);
    return pending.length;
  }

  #amSilence(req: AmSilenceRequest): void {
    if (this.#amInFlight.has(req.requestId)) return;
    this.#amInFlight.add(req.requestId);
    this.#inBackground(silenceInAlertmanager(this.#d, req).finally(() => this.#amInFlight.delete(req.requestId)));
  }

  /** Runs a chat action whose input may be wrong (a bad duration): the user is told, nothing recorded. */
  #guarded(
    respond: ResponseTarget | undefined,
    via: string,
    answers: Array<{ to: ResponseTarget; via: string; view: EphemeralView }>,
    run: () => ChatOutcome,
  ): ChatOutcome {
    try {
      return run();
    } catch (err) {
      if (!isUserError(err)) throw err;
      if (respond) answers.push({ to: respond, via, view: plainAnswer('Not recorded', err.message) });
      return { status: 'refused', reason: err.message };
    }
  }

  /**
   * Releases held firings whose debounce has lapsed and closes storm batches whose window has
   * (issue 12). `serve` calls it on a timer and at start, so holds recorded before a restart are
   * re-armed from the ledger; tests call it after moving their clock.
   */
  async tick(): Promise<BotOutcome[]> {
    const now = this.#d.clock.now();
    const coalesce = this.#noise().coalesce;
    const due = this.#d.ledger.read.dueHolds(now, TICK_BATCH);
    const storms = coalesce
      ? this.#d.ledger.read
          .unflushedStorms()
          .filter((t) => t.storm && batchDue(t.storm, now, coalesce))
          .slice(0, TICK_BATCH)
      : [];
    if (due.length === 0 && storms.length === 0) return [];
    const out: Enqueued = { count: 0 };
    const after: AfterCommit = { start: [], cancel: [] };
    const { result } = await this.#d.ledger.transaction(async (tx) => {
      const outcomes: BotOutcome[] = [];
      for (const t of storms) flushStorm(tx, this.#d.clock.now(), t, out);
      for (const h of due) {
        const incident = h.incident as unknown as Incident;
        const at = this.#d.clock.now().toISOString();
        tx.record({
          type: 'noise',
          action: 'release',
          fingerprint: h.fingerprint,
          triggerKey: h.triggerKey,
          reason: 'debounce',
          detail: 'no resolve inside the debounce window: the firing goes on',
          holdId: h.holdId,
          at,
        });
        const log = this.#d.logger.child({ incident: h.fingerprint, trigger: h.triggerKey });
        outcomes.push(this.#firing(incident, h.route ?? {}, tx, out, log, after, true));
      }
      return outcomes;
    });
    if (out.count > 0) this.#d.outbox?.kick();
    for (const job of after.start) this.#d.jobs?.start(job);
    for (const d of after.decided ?? []) this.#d.observer?.recallDecided(d);
    return result;
  }

  #noise() {
    return this.#d.noise ?? NO_NOISE_CONTROL;
  }

  #drop(tx: BotTx, incident: Incident, reason: string, detail: string): IncidentOutcome {
    return recordDrop(tx, this.#d.clock.now(), incident, reason, detail);
  }

  #firing(
    incident: Incident,
    route: Record<string, string | undefined>,
    tx: BotTx,
    out: Enqueued,
    log: Logger,
    after: AfterCommit,
    released = false,
  ): IncidentOutcome {
    const { ledger, clock } = this.#d;
    const now = clock.now();
    const at = now.toISOString();
    const silenced = ledger.read.silence(incident.triggerKey, now);
    const silence = silenced.active ? silenced.silence : undefined;
    if (silence) {
      if (incident.severity !== 'critical') {
        log.info({ until: silence.until }, 'silenced: no message, no ledger open');
        this.#drop(tx, incident, 'silence', `silenced by ${silence.user} until ${silence.until}: no message, no ledger open`);
        return { status: 'silenced', fingerprint: incident.fingerprint, triggerKey: incident.triggerKey, until: silence.until };
      }
      // A critical firing ends the silence (SPEC §8): record it so a replay agrees.
      tx.record({ type: 'silence', triggerKey: incident.triggerKey, user: 'reprise:critical', until: at, at });
      log.info('critical firing ended an active silence');
    }
    if (!incident.fingerprint || !incident.triggerKey) {
      // Refuse before anything is recorded: a thread whose open has no identity could never resolve.
      throw new RepriseError('invalid_payload', 'incident has no fingerprint or trigger key');
    }
    const standing = ledger.read.openEpisodes(incident.fingerprint)[0];
    // Alertmanager re-sends a firing group every group/repeat interval: the same firing (same
    // fingerprint, same start — or no start of its own) is not a new incident.
    if (standing && (incident.startsAtEstimated === true || (standing.startsAt !== undefined && standing.startsAt === incident.startsAt))) {
      log.info('re-notification of an open firing: no new thread');
      return this.#drop(tx, incident, 'renotification', 're-notification of an open firing');
    }
    const gate = noiseGate({ ledger, noise: this.#noise(), now }, incident, route, tx, out, log, released);
    if ('status' in gate) return gate;
    const recalled = this.preview(incident);
    // With a model, the match gate is the model's (rerank, then confirm and verify): until it
    // answers, only the runbook is shown, and the thread says the model is on it.
    const modelDecides = this.#d.jobs !== undefined;
    const result: RecallResult = modelDecides
      ? {
          ...recalled,
          instant: null,
          answer: recalled.runbook ? { kind: 'runbook', entry: recalled.runbook.entry.id, confidence: recalled.runbook.confidence } : null,
        }
      : recalled;
    const occ = ledger.read.occurrences(incident.triggerKey);
    const lead = result.instant ?? result.runbook;
    const verdict: Verdict = result.instant ? 'action_suggested' : 'inconclusive';
    const openId = randomUUID();
    const { closed } = tx.record({
      type: 'open',
      id: openId,
      fingerprint: incident.fingerprint,
      triggerKey: incident.triggerKey,
      kind: result.instant ? 'recall' : 'fresh',
      ...(lead ? { entry: lead.entry.id, answerKind: lead.kind } : {}),
      dupFingerprint: dupFingerprint(incident),
      verdict,
      resolvable: true,
      startsAt: incident.startsAt,
      source: incident.source,
      ...(gate.key ? { coalesceKey: gate.key } : {}),
      // The model's job for it is started below: kept so a restart resumes it until its finding.
      ...(modelDecides ? { investigate: { incident: incident as unknown as Record<string, unknown> } } : {}),
      at,
    });
    const checking = modelDecides ? this.#checkingNote(incident, recalled.instantCandidates.length > 0) : undefined;
    const input = {
      incident,
      recall: result,
      recurrence: {
        previousCount: occ.count,
        ...(occ.lastSeen ? { lastSeen: occ.lastSeen } : {}),
        ...(previousEntry(occ) ? { previousEntry: previousEntry(occ)! } : {}),
      },
      now,
      controlsId: openId,
      ...(this.#d.linkFor ? { linkFor: this.#d.linkFor } : {}),
      ...(checking ? { fallThroughNote: checking } : {}),
    };
    const detail = buildDetail(input);
    for (const dest of this.#d.routing.destinations(incident, route)) {
      const surface = this.#d.surfaces.get(dest.transport);
      const card = buildCard({ ...input, mentions: this.#d.routing.mentions(incident, dest.transport) });
      if (checking && card.headline.answer === 'none') card.headline = { answer: 'checking', title: checking };
      if (this.#d.alertmanager && incident.source === 'alertmanager') card.amSilence = true;
      enqueue(tx, now, { transport: dest.transport, op: 'post', openId, channel: dest.channel, view: card, ...(surface?.inlineDetail ? { detail } : {}) }, out);
      if (!surface?.inlineDetail) enqueue(tx, now, { transport: dest.transport, op: 'reply', openId, view: detail }, out);
    }
    if (closed) {
      // The resolve arrived before this firing (out of order): the alert is already over.
      const thread = ledger.read.thread(openId);
      if (thread)
        restate(
          tx,
          now,
          thread,
          {
            state: 'resolved',
            note: resolvedNote(closed.startsAt ?? closed.openedAt, closed.endsAt ?? closed.resolvedAt ?? at),
            icon: '✅',
            topic: 'resolved',
          },
          out,
        );
    }
    if (modelDecides) after.start.push(this.#job(openId, incident, gate.key, recalled));
    // With a model and an instant candidate, the match gate is the job's: it reports the decision.
    if (!modelDecides || recalled.instantCandidates.length === 0) (after.decided ??= []).push(recallDecision(result));
    log.info(
      { answer: result.answer, nearMiss: result.nearMiss },
      result.answer ? `recalled ${result.answer.kind} ${result.answer.entry}` : modelDecides ? 'the model decides' : 'no trusted memory: fell through',
    );
    return { status: 'posted', fingerprint: incident.fingerprint, triggerKey: incident.triggerKey, answer: result.answer, recall: result };
  }

  /** The model's job for an open: what rerank sees, the standing answer, a storm's workloads. */
  #job(openId: string, incident: Incident, coalesceKey: string | undefined, recalled: RecallResult = this.preview(incident)): JobRequest {
    const { ledger } = this.#d;
    const standing = ledger.read.standing(incident.triggerKey);
    const storm = coalesceKey ? (): string[] => [...(ledger.read.thread(openId)?.storm?.workloads ?? [])] : undefined;
    return {
      openId,
      incident,
      candidates: recalled.instantCandidates,
      ...(standing ? { standing } : {}),
      ...(storm ? { storm } : {}),
      ...(recalled.runbook ? { runbook: true } : {}),
    };
  }

  /**
   * Jobs of earlier runs (a restart, a `kill -9`, a new leader) whose finding was never recorded:
   * each is started again once, with what is left of its wait, or recorded as not resumed
   * (resolved meanwhile, too old). `serve` calls it when this process starts leading.
   */
  resumeInvestigations(): number {
    const jobs = this.#d.jobs;
    if (!jobs?.resume) return 0;
    let resumed = 0;
    for (const p of this.#d.ledger.read.pendingInvestigations()) {
      const incident = p.incident as unknown as Incident;
      try {
        if (jobs.resume({ ...this.#job(p.openId, incident, p.coalesceKey), openedAt: p.at }, p.resolved)) resumed += 1;
      } catch (err) {
        // A damaged record must not stop the others from resuming.
        this.#d.logger.error({ err, openId: p.openId }, 'an investigation could not be resumed');
      }
    }
    return resumed;
  }

  /** What the thread says while the model works. */
  #checkingNote(incident: Incident, candidates: boolean): string {
    if (candidates) return 'the model is checking whether memory answers this (rerank, live-state confirm, review); its answer follows in this thread';
    const wait = incident.severity === 'critical' ? 0 : (this.#d.investigateAfterMs ?? 0);
    if (wait <= 0) return 'an investigation has started; its finding follows in this thread';
    return `an investigation starts in ${Math.round(wait / 1000)} s unless the alert resolves first; its finding follows in this thread`;
  }

  async #command(e: Extract<BotEvent, { type: 'command' }>): Promise<void> {
    const view = await answerCommand(e, {
      now: this.#d.clock.now(),
      ledger: this.#d.ledger,
      preview: (incident) => this.preview(incident),
      ...(this.#d.investigate ? { investigate: this.#d.investigate } : {}),
      silence: async (req) => (await this.handle([req]))[0],
    });
    await this.#answer(e.actor.via, e.respond, view);
  }

  /** A private answer goes straight to the user (they are waiting; a retry later helps nobody). */
  async #answer(via: string, to: ResponseTarget, view: EphemeralView): Promise<void> {
    const surface = this.#d.surfaces.get(via);
    if (!surface) return;
    await surface.ephemeral(to, view).catch((err: unknown) => this.#d.logger.warn({ err, via }, 'a private answer could not be delivered'));
  }
}
