import type { ChatTransport } from '../../ports/chat-transport.js';
import type { Clock } from '../../ports/clock.js';
import type { Logger } from '../../ports/logger.js';
import type { FeedbackEvent, LedgerEvent, SilenceEvent, Verdict } from '../ledger-events.js';
import { feedbackEvent } from './feedback-request.js';
import type { TriggerPolicy } from './trigger-policy.js';
import { RepriseError } from '../errors.js';
import type { CatalogSnapshot } from '../recall/catalog-snapshot.js';
import { recall, type RecallOptions, type RecallResult, type TrackLookup } from '../recall/recall.js';
import { renderResolved, renderThread } from '../render/render-thread.js';
import type { Answer, Incident } from '../types.js';
import { dupFingerprint } from './dup-fingerprint.js';

/** What the bot needs from the ledger; `ledgerForBot` adapts core/ledger's Ledger. */
export interface BotLedger {
  /** Append durably; `closed` is the episode a resolve paired with. */
  record(event: LedgerEvent): Promise<{ seq: number; closed?: { threadId?: string; openedAt: string; resolvedAt?: string; triggerKey: string } }>;
  track: TrackLookup;
  /** Recurrence facts for a trigger, before the current firing is recorded. */
  occurrences(triggerKey: string): { count: number; lastSeen?: string; previousEntry?: string };
  /** The active silence on a trigger, if any. */
  activeSilence(triggerKey: string, now: Date): { until: string; user: string } | null;
  /** Thread of the trigger's newest open, if it was delivered. */
  newestThread(triggerKey: string): string | undefined;
  /** The newest unresolved open of a fingerprint, if any. */
  unresolvedOpen(fingerprint: string): { startsAt?: string; threadId?: string } | undefined;
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
  clock: Clock;
  logger: Logger;
  recall: RecallOptions;
  /** match / ignore rules and the dedup window; everything is admitted without one. */
  policy?: TriggerPolicy;
}

/**
 * The loop's entry point (SPEC §3), independent of any transport or source: tests and the
 * HTTP ingress call `handle`. Incidents are handled one at a time so ledger order is arrival
 * order; every ledger event is durable before `handle` resolves.
 */
export class RepriseBot {
  readonly #d: RepriseBotDeps;
  #chain: Promise<unknown> = Promise.resolve();

  constructor(deps: RepriseBotDeps) {
    this.#d = deps;
  }

  /** Handles a batch in order; resolves when every event is on disk. */
  handle(incidents: readonly Incident[]): Promise<IncidentOutcome[]> {
    const run = this.#chain.then(async () => {
      const out: IncidentOutcome[] = [];
      for (const i of incidents) out.push(await this.#one(i));
      return out;
    });
    this.#chain = run.catch(() => undefined);
    return run;
  }

  /**
   * Records 👍 / 👎 / clear / 🔕 for a trigger (validated), in ledger order with incidents.
   * A silence is announced in the trigger's newest thread, if it has one.
   */
  feedback(input: unknown): Promise<{ seq: number; event: FeedbackEvent | SilenceEvent }> {
    const run = this.#chain.then(async () => {
      const event = feedbackEvent(input, this.#d.clock.now());
      const { seq } = await this.#d.ledger.record(event);
      this.#d.logger.info({ trigger: event.triggerKey, user: event.user, kind: event.type, ...(event.type === 'feedback' ? { vote: event.vote } : { until: event.until }) }, 'feedback recorded');
      const threadId = this.#d.ledger.newestThread(event.triggerKey);
      if (event.type === 'silence' && threadId) {
        await this.#d.transport
          .reply(threadId, { kind: 'silenced', triggerKey: event.triggerKey, answer: null, text: `🔕 silenced by @${event.user} until ${event.until}` })
          .catch((err: unknown) => this.#d.logger.error({ err }, 'announcing the silence failed'));
      }
      return { seq, event };
    });
    this.#chain = run.catch(() => undefined);
    return run;
  }

  /** Recall only: what the bot would answer, without recording or posting anything. */
  preview(incident: Incident): RecallResult {
    return recall(incident, this.#d.catalog(), this.#d.ledger.track, this.#d.recall, this.#d.clock.now());
  }

  async #one(incident: Incident): Promise<IncidentOutcome> {
    const log = this.#d.logger.child({ incident: incident.fingerprint, trigger: incident.triggerKey });
    const admission = this.#d.policy?.admit(incident, this.#d.clock.now()) ?? { admitted: true };
    if (!admission.admitted) {
      log.info({ reason: admission.reason, status: incident.status }, 'dropped by trigger policy');
      return { status: 'dropped', fingerprint: incident.fingerprint, triggerKey: incident.triggerKey, reason: admission.reason };
    }
    return incident.status === 'resolved' ? this.#resolved(incident, log) : this.#firing(incident, log);
  }

  async #firing(incident: Incident, log: Logger): Promise<IncidentOutcome> {
    const { ledger, transport, clock } = this.#d;
    const now = clock.now();
    const at = now.toISOString();
    const silence = ledger.activeSilence(incident.triggerKey, now);
    if (silence) {
      if (incident.severity !== 'critical') {
        log.info({ until: silence.until }, 'silenced: no message, no ledger open');
        return { status: 'silenced', fingerprint: incident.fingerprint, triggerKey: incident.triggerKey, until: silence.until };
      }
      // A critical firing ends the silence (SPEC §8): record it so a replay agrees.
      await ledger.record({ type: 'silence', triggerKey: incident.triggerKey, user: 'reprise:critical', until: at, at });
      log.info('critical firing ended an active silence');
    }
    if (!incident.fingerprint || !incident.triggerKey) {
      // Refuse before posting: a thread whose open cannot be recorded could never resolve.
      throw new RepriseError('invalid_payload', 'incident has no fingerprint or trigger key');
    }
    const standing = ledger.unresolvedOpen(incident.fingerprint);
    if (standing && standing.startsAt !== undefined && standing.startsAt === incident.startsAt) {
      // Alertmanager re-sends a firing group every group/repeat interval: the same firing
      // (same fingerprint, same start) is not a new incident and must not count as a recall.
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
    let threadId: string | undefined;
    try {
      ({ threadId } = await transport.post({ kind: 'rca', triggerKey: incident.triggerKey, answer: result.answer, text }));
    } catch (err) {
      // The open is still recorded: a resolve must pair and the track record must count.
      log.error({ err }, 'delivering the RCA thread failed');
    }
    const lead = result.instant ?? result.runbook;
    const verdict: Verdict = result.instant ? 'action_suggested' : 'inconclusive';
    const { closed } = await ledger.record({
      type: 'open',
      fingerprint: incident.fingerprint,
      triggerKey: incident.triggerKey,
      kind: result.instant ? 'recall' : 'fresh',
      ...(lead ? { entry: lead.entry.id, answerKind: lead.kind } : {}),
      dupFingerprint: dupFingerprint(incident),
      verdict,
      resolvable: true,
      ...(threadId ? { threadId } : {}),
      startsAt: incident.startsAt,
      at,
    });
    if (closed && threadId) {
      // The resolve arrived before this firing (out of order): the alert is already over.
      await transport
        .reply(threadId, { kind: 'resolved', triggerKey: incident.triggerKey, answer: null, text: renderResolved(closed.openedAt, closed.resolvedAt ?? at) })
        .catch((err: unknown) => log.error({ err }, 'posting the resolve into the thread failed'));
    }
    log.info({ answer: result.answer, nearMiss: result.nearMiss, threadId }, result.answer ? `recalled ${result.answer.kind} ${result.answer.entry}` : 'no trusted memory: fell through');
    return { status: 'posted', fingerprint: incident.fingerprint, triggerKey: incident.triggerKey, ...(threadId ? { threadId } : {}), answer: result.answer, recall: result };
  }

  async #resolved(incident: Incident, log: Logger): Promise<IncidentOutcome> {
    const { ledger, transport, clock } = this.#d;
    // Ledger time is when we learned of it, so durations agree with the open's clock.
    const at = clock.now().toISOString();
    const { closed: open } = await ledger.record({ type: 'resolve', fingerprint: incident.fingerprint, at });
    if (!open) {
      log.info('resolve buffered: no open for this fingerprint yet');
      return { status: 'resolved', fingerprint: incident.fingerprint, triggerKey: incident.triggerKey, paired: false };
    }
    if (open.threadId) {
      try {
        await transport.reply(open.threadId, { kind: 'resolved', triggerKey: open.triggerKey, answer: null, text: renderResolved(open.openedAt, at) });
      } catch (err) {
        log.error({ err }, 'posting the resolve into the thread failed');
      }
    }
    log.info({ threadId: open.threadId }, 'resolved');
    return { status: 'resolved', fingerprint: incident.fingerprint, triggerKey: open.triggerKey, ...(open.threadId ? { threadId: open.threadId } : {}), paired: true };
  }
}
