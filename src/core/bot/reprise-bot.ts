import { randomUUID } from 'node:crypto';
import type { LegacyChatTransport as ChatTransport, OutboundMessage } from '../../ports/chat-transport.js';
import type { Clock } from '../../ports/clock.js';
import type { Logger } from '../../ports/logger.js';
import type { FeedbackEvent, LedgerEvent, SilenceEvent, Verdict } from '../ledger-events.js';
import { feedbackForKnownTrigger } from './feedback-request.js';
import type { TriggerPolicy } from './trigger-policy.js';
import { RepriseError } from '../errors.js';
import type { CatalogSnapshot } from '../recall/catalog-snapshot.js';
import { recall, type RecallOptions, type RecallResult, type TrackLookup } from '../recall/recall.js';
import { renderResolved, renderThread } from '../render/render-thread.js';
import type { AnswerKind, Answer, Incident } from '../types.js';
import { dupFingerprint } from './dup-fingerprint.js';

/** An episode a resolve (or an open meeting a buffered resolve) closed. */
export interface ClosedEpisode {
  openId?: string;
  threadId?: string;
  triggerKey: string;
  openedAt: string;
  resolvedAt?: string;
  /** Source times, when the source sent them: durations are the alert's own. */
  startsAt?: string;
  endsAt?: string;
}

/** Events recorded together: applied at once, durable when the transaction ends. */
export interface BotTx {
  record(event: LedgerEvent): { closed?: ClosedEpisode };
}

/** What the bot needs from the ledger; `ledgerForBot` adapts core/ledger's Ledger. */
export interface BotLedger {
  /**
   * Runs `fn` with exclusive use of the ledger; what it records is written in one durable
   * transaction when it returns, or not at all (and the read model rolled back) if it throws.
   */
  transaction<T>(fn: (tx: BotTx) => Promise<T>): Promise<{ result: T; first: number; count: number }>;
  /** An entry's track record at `now`. */
  track(entryId: string, kind: AnswerKind, now: Date): ReturnType<TrackLookup>;
  /** Recurrence facts for a trigger, before the current firing is recorded. */
  occurrences(triggerKey: string): { count: number; lastSeen?: string; previousEntry?: string };
  /** The active silence on a trigger, if any. */
  activeSilence(triggerKey: string, now: Date): { until: string; user: string } | null;
  /** Thread of the trigger's newest open, if it was delivered. */
  newestThread(triggerKey: string): string | undefined;
  /** The newest unresolved open of a fingerprint, if any. */
  unresolvedOpen(fingerprint: string): { startsAt?: string; threadId?: string } | undefined;
  /** Whether the ledger has ever seen this trigger key (an open, a vote or a silence). */
  knowsTrigger(triggerKey: string): boolean;
  /** Every trigger key the ledger has seen (for "did you mean"). */
  triggerKeys(): Iterable<string>;
}

export type IncidentOutcome =
  | { status: 'posted'; fingerprint: string; triggerKey: string; threadId?: string; answer: Answer | null; recall: RecallResult }
  | { status: 'silenced'; fingerprint: string; triggerKey: string; until: string }
  | { status: 'dropped'; fingerprint: string; triggerKey: string; reason: string }
  | { status: 'resolved'; fingerprint: string; triggerKey: string; threadId?: string; paired: boolean };

export interface RepriseBotDeps {
  catalog: () => CatalogSnapshot;
  ledger: BotLedger;
  transport: ChatTransport;
  /** Name of the transport, recorded with each delivery. */
  transportName?: string;
  clock: Clock;
  logger: Logger;
  recall: RecallOptions;
  /** match / ignore rules and the dedup window; everything is admitted without one. */
  policy?: TriggerPolicy;
}

/** Incidents decided between two yields to the event loop: a 10k-alert group must not starve /healthz. */
const YIELD_EVERY = 64;
const yieldToLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** A message to send once the ledger holds what it is about. */
type Delivery =
  | { op: 'post'; openId: string; fingerprint: string; message: OutboundMessage; outcome: IncidentOutcome & { status: 'posted' }; closed?: ClosedEpisode }
  | { op: 'reply'; threadId?: string; openId?: string; message: OutboundMessage; outcome?: { threadId?: string } };

/**
 * The loop's entry point (SPEC §3), independent of any transport or source: tests and the
 * HTTP ingress call `handle`. A batch is decided and recorded in one ledger transaction —
 * nothing is shown that was not recorded first — then delivered; each delivered thread is
 * recorded in turn so a later resolve can reply into it.
 */
export class RepriseBot {
  readonly #d: RepriseBotDeps;
  #chain: Promise<unknown> = Promise.resolve();

  constructor(deps: RepriseBotDeps) {
    this.#d = deps;
  }

  /** Handles a batch in order; resolves when every event is on disk and delivery was tried. */
  handle(incidents: readonly Incident[]): Promise<IncidentOutcome[]> {
    return this.#serial(async () => {
      const deliveries: Delivery[] = [];
      const { result: outcomes } = await this.#d.ledger.transaction(async (tx) => {
        const out: IncidentOutcome[] = [];
        for (let i = 0; i < incidents.length; i++) {
          if (i > 0 && i % YIELD_EVERY === 0) await yieldToLoop();
          out.push(this.#one(incidents[i]!, tx, deliveries));
        }
        return out;
      });
      await this.#deliver(deliveries);
      return outcomes;
    });
  }

  /**
   * Records 👍 / 👎 / clear / 🔕 for a trigger (validated; the trigger must be one the ledger
   * has seen), in ledger order with incidents. A silence is announced in the trigger's newest
   * thread, if it has one.
   * @throws RepriseError `invalid_payload` for a bad request, `not_found` for an unknown trigger.
   */
  feedback(input: unknown): Promise<{ seq: number; event: FeedbackEvent | SilenceEvent }> {
    return this.#serial(async () => {
      const { ledger, clock, logger } = this.#d;
      const event = feedbackForKnownTrigger(ledger, input, clock.now());
      const { first: seq } = await ledger.transaction(async (tx) => {
        tx.record(event);
      });
      logger.info({ trigger: event.triggerKey, user: event.user, via: event.via, kind: event.type, ...(event.type === 'feedback' ? { vote: event.vote } : { until: event.until }) }, 'feedback recorded');
      const threadId = ledger.newestThread(event.triggerKey);
      if (event.type === 'silence' && threadId) {
        await this.#deliver([{ op: 'reply', threadId, message: { kind: 'silenced', triggerKey: event.triggerKey, answer: null, text: `🔕 silenced by @${event.user} until ${event.until}` } }]);
      }
      return { seq, event };
    });
  }

  /** Recall only: what the bot would answer, without recording or posting anything. */
  preview(incident: Incident): RecallResult {
    const now = this.#d.clock.now();
    return recall(incident, this.#d.catalog(), (id, kind) => this.#d.ledger.track(id, kind, now), this.#d.recall, now);
  }

  #serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#chain.then(fn);
    this.#chain = run.catch(() => undefined);
    return run;
  }

  #one(incident: Incident, tx: BotTx, deliveries: Delivery[]): IncidentOutcome {
    const log = this.#d.logger.child({ incident: incident.fingerprint, trigger: incident.triggerKey });
    const admission = this.#d.policy?.admit(incident, this.#d.clock.now()) ?? { admitted: true };
    if (!admission.admitted) {
      log.info({ reason: admission.reason, status: incident.status }, 'dropped by trigger policy');
      return { status: 'dropped', fingerprint: incident.fingerprint, triggerKey: incident.triggerKey, reason: admission.reason };
    }
    return incident.status === 'resolved' ? this.#resolved(incident, tx, deliveries, log) : this.#firing(incident, tx, deliveries, log);
  }

  #firing(incident: Incident, tx: BotTx, deliveries: Delivery[], log: Logger): IncidentOutcome {
    const { ledger, clock } = this.#d;
    const now = clock.now();
    const at = now.toISOString();
    const silence = ledger.activeSilence(incident.triggerKey, now);
    if (silence) {
      if (incident.severity !== 'critical') {
        log.info({ until: silence.until }, 'silenced: no message, no ledger open');
        return { status: 'silenced', fingerprint: incident.fingerprint, triggerKey: incident.triggerKey, until: silence.until };
      }
      // A critical firing ends the silence (SPEC §8): record it so a replay agrees.
      tx.record({ type: 'silence', triggerKey: incident.triggerKey, user: 'reprise:critical', until: at, at });
      log.info('critical firing ended an active silence');
    }
    if (!incident.fingerprint || !incident.triggerKey) {
      // Refuse before posting: a thread whose open cannot be recorded could never resolve.
      throw new RepriseError('invalid_payload', 'incident has no fingerprint or trigger key');
    }
    const standing = ledger.unresolvedOpen(incident.fingerprint);
    // Alertmanager re-sends a firing group every group/repeat interval: the same firing (same
    // fingerprint, same start — or no start of its own, so nothing says it is a new one) is not
    // a new incident and must not count as a recall.
    if (standing && (incident.startsAtEstimated === true || (standing.startsAt !== undefined && standing.startsAt === incident.startsAt))) {
      log.info({ threadId: standing.threadId }, 're-notification of an open firing: no new thread');
      return { status: 'dropped', fingerprint: incident.fingerprint, triggerKey: incident.triggerKey, reason: 're-notification of an open firing' };
    }
    const result = this.preview(incident);
    const occ = ledger.occurrences(incident.triggerKey);
    const text = renderThread({
      incident,
      recall: result,
      recurrence: { previousCount: occ.count, ...(occ.lastSeen ? { lastSeen: occ.lastSeen } : {}), ...(occ.previousEntry ? { previousEntry: occ.previousEntry } : {}) },
      now,
    });
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
      at,
    });
    const outcome: IncidentOutcome & { status: 'posted' } = { status: 'posted', fingerprint: incident.fingerprint, triggerKey: incident.triggerKey, answer: result.answer, recall: result };
    deliveries.push({ op: 'post', openId, fingerprint: incident.fingerprint, message: { kind: 'rca', triggerKey: incident.triggerKey, answer: result.answer, text }, outcome, ...(closed ? { closed } : {}) });
    log.info({ answer: result.answer, nearMiss: result.nearMiss }, result.answer ? `recalled ${result.answer.kind} ${result.answer.entry}` : 'no trusted memory: fell through');
    return outcome;
  }

  #resolved(incident: Incident, tx: BotTx, deliveries: Delivery[], log: Logger): IncidentOutcome {
    // Ledger time is when we learned of it; the alert's own endsAt, when sent, dates the end.
    const at = this.#d.clock.now().toISOString();
    const { closed: open } = tx.record({ type: 'resolve', fingerprint: incident.fingerprint, ...(incident.endsAt ? { endsAt: incident.endsAt } : {}), at });
    if (!open) {
      log.info('resolve buffered: no open for this fingerprint yet');
      return { status: 'resolved', fingerprint: incident.fingerprint, triggerKey: incident.triggerKey, paired: false };
    }
    const outcome: IncidentOutcome & { status: 'resolved' } = { status: 'resolved', fingerprint: incident.fingerprint, triggerKey: open.triggerKey, paired: true };
    if (open.threadId) outcome.threadId = open.threadId;
    // An open of this same batch has no thread yet: the reply follows its post.
    deliveries.push({ op: 'reply', ...(open.threadId ? { threadId: open.threadId } : {}), ...(open.openId ? { openId: open.openId } : {}), message: resolvedMessage(open, at), outcome });
    log.info({ threadId: open.threadId }, 'resolved');
    return outcome;
  }

  /**
   * Sends what a transaction recorded, in order, then records each delivered thread (one more
   * transaction). A failed post leaves the open without a thread; a failed reply is logged.
   */
  async #deliver(deliveries: readonly Delivery[]): Promise<void> {
    const { transport, logger, clock } = this.#d;
    const transportName = this.#d.transportName ?? 'console';
    const threads = new Map<string, string>();
    const delivered: LedgerEvent[] = [];
    for (let i = 0; i < deliveries.length; i++) {
      if (i > 0 && i % YIELD_EVERY === 0) await yieldToLoop();
      const d = deliveries[i]!;
      const log = logger.child({ trigger: d.message.triggerKey });
      if (d.op === 'post') {
        try {
          const { threadId } = await transport.post(d.message);
          threads.set(d.openId, threadId);
          d.outcome.threadId = threadId;
          delivered.push({ type: 'delivered', openId: d.openId, fingerprint: d.fingerprint, transport: transportName, messageRef: threadId, at: clock.now().toISOString() });
          if (d.closed) {
            // The resolve arrived before this firing (out of order): the alert is already over.
            await transport.reply(threadId, resolvedMessage(d.closed, d.closed.resolvedAt ?? clock.now().toISOString())).catch((err: unknown) => log.error({ err }, 'posting the resolve into the thread failed'));
          }
        } catch (err) {
          log.error({ err }, 'delivering the RCA thread failed');
        }
        continue;
      }
      const threadId = d.threadId ?? (d.openId ? threads.get(d.openId) : undefined);
      if (!threadId) continue;
      if (d.outcome) d.outcome.threadId = threadId;
      try {
        await transport.reply(threadId, d.message);
      } catch (err) {
        log.error({ err }, `posting the ${d.message.kind} reply into the thread failed`);
      }
    }
    if (delivered.length === 0) return;
    try {
      await this.#d.ledger.transaction(async (tx) => {
        for (const e of delivered) tx.record(e);
      });
    } catch (err) {
      logger.error({ err, threads: delivered.length }, 'recording delivered threads failed; their resolves will not reply into them');
    }
  }
}

function resolvedMessage(open: ClosedEpisode, resolvedAt: string): OutboundMessage {
  return { kind: 'resolved', triggerKey: open.triggerKey, answer: null, text: renderResolved(open.startsAt ?? open.openedAt, open.endsAt ?? resolvedAt) };
}
