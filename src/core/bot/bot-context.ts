/**
 * What the bot's flows share: the narrow ledger view, the surfaces, and the helpers that turn
 * decisions into outbox items inside a ledger transaction.
 */
import { randomUUID } from 'node:crypto';
import type { Clock } from '../../ports/clock.js';
import type { Logger } from '../../ports/logger.js';
import type { LoopObserver } from '../../ports/loop-observer.js';
import type { CardPatch, EphemeralView, CardView, ReplyView } from '../chat/thread-view.js';
import type { MessageRef, ResponseTarget } from '../chat/chat-types.js';
import type { LedgerEvent } from '../ledger-events.js';
import type { PendingInvestigation } from '../ledger/ledger-types.js';
import type { CatalogSnapshot } from '../recall/catalog-snapshot.js';
import type { RecallOptions, TrackLookup } from '../recall/recall.js';
import type { AnswerKind } from '../types.js';
import type { Actor } from './bot-event.js';
import type { NoiseOptions, RecurrenceFacts } from './noise-control.js';
import type { Routing } from './routing.js';
import type { TriggerPolicy } from './trigger-policy.js';

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

/** One incident's thread, as the registry knows it. */
export interface ThreadInfo {
  openId: string;
  triggerKey: string;
  fingerprint: string;
  dupFingerprint?: string;
  entry?: string;
  answerKind?: AnswerKind;
  state: 'firing' | 'resolved' | 'silenced';
  transports: string[];
  roots: Record<string, { channel: string; id: string }>;
  notes: number;
  source?: string;
  /** When its open was recorded. */
  openedAt?: string;
  /** Alerts coalesced into this thread (issue 12). */
  storm?: { key: string; count: number; open: number; firstAt: string; lastAt: string; workloads: string[]; flushed?: boolean };
  /** What the Alertmanager reconciler last marked it. */
  amMark?: string;
  /** The file-time curation decision of its Finding, once made. */
  curation?: { decision: string; detail?: string; url?: string; number?: number };
}

/** A firing held by the debounce. */
export interface HeldFiring {
  holdId: string;
  fingerprint: string;
  triggerKey: string;
  until: string;
  incident: Record<string, unknown>;
  route?: Record<string, string>;
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
  /** The newest unresolved open of a fingerprint, if any. */
  unresolvedOpen(fingerprint: string): { startsAt?: string; openId?: string } | undefined;
  /** Whether the ledger has ever seen this trigger key (an open, a vote or a silence). */
  knowsTrigger(triggerKey: string): boolean;
  /** Every trigger key the ledger has seen (for "did you mean"). */
  triggerKeys(): Iterable<string>;
  thread(openId: string): ThreadInfo | undefined;
  /** The thread a bot message belongs to (a reaction's or a click's target). */
  threadByMessage(ref: MessageRef): ThreadInfo | undefined;
  /** The thread of the trigger's newest open. */
  newestThread(triggerKey: string): ThreadInfo | undefined;
  /** True when this inbound chat event was already recorded. */
  seenChatEvent(eventId: string): boolean;
  /** Unresolved incidents, newest first. */
  openIncidents(limit: number): Array<{ triggerKey: string; openedAt: string }>;
  /** Silences in force, soonest to end first. */
  activeSilences(now: Date, limit: number): Array<{ triggerKey: string; until: string; user: string }>;
  /** The debounce hold of a fingerprint, if one is pending. */
  holdOf(fingerprint: string): HeldFiring | undefined;
  /** Holds due at `now`, oldest first. */
  dueHolds(now: Date, limit: number): HeldFiring[];
  /** The newest storm thread opened under a coalesce key. */
  stormThread(key: string): ThreadInfo | undefined;
  /** Storm threads whose batch has not been flushed yet. */
  unflushedStorms(): ThreadInfo[];
  /** Threads whose card still says firing, newest first (the Alertmanager reconciler). */
  firingThreads(limit: number): ThreadInfo[];
  /** Alertmanager silences asked for whose outcome is not recorded (a restart came in between). */
  pendingAmSilences(): Array<{ requestId: string; openId: string; until: string; who: string; via?: string }>;
  /** When fresh investigations ended since `since` (ISO, oldest first): seeds the hourly limit after a restart. */
  investigationsSince(since: Date): string[];
  /** Opens the model investigates whose finding is not recorded yet (a restart came in between), oldest first. */
  pendingInvestigations(): PendingJob[];
  /** What the recurrence cooldown reads about a trigger. */
  recurrence(triggerKey: string): RecurrenceFacts;
  /** The trigger's standing answer (its newest finding), quoted to the next investigation. */
  standing(triggerKey: string): { cause: string; verdict: import('../ledger-events.js').Verdict; concludedAt: string; entry?: string } | undefined;
}

/** A surface as the bot sees it: how it shows a thread, and how to answer one user privately. */
export interface BotSurface {
  name: string;
  inlineDetail: boolean;
  ephemeral(to: ResponseTarget, view: EphemeralView): Promise<void>;
}

export interface NoteLimits {
  /** Longest note, in bytes (SPEC §9: 8 KiB). */
  maxBytes: number;
  /** Notes per thread (SPEC §9: 20). */
  perThread: number;
}

export interface RepriseBotDeps {
  catalog: () => CatalogSnapshot;
  ledger: BotLedger;
  clock: Clock;
  logger: Logger;
  recall: RecallOptions;
  /** match / ignore rules and the dedup window; everything is admitted without one. */
  policy?: TriggerPolicy;
  /** Where incidents go and whom they ping; no surface, no messages. */
  routing: Routing;
  surfaces: ReadonlyMap<string, BotSurface>;
  /** Told after each transaction that recorded outbox items. */
  outbox?: { kick(): void };
  /** The curation worker, when a forge is configured: notes become curate intents it files. */
  curation?: { kick(): void };
  /** Who may vote, silence and write notes (default: everyone). */
  allow?: (actor: Actor) => boolean;
  /** Web link of a catalog entry, when one is configured. */
  linkFor?: (entryId: string) => string | undefined;
  notes?: NoteLimits;
  /** `/reprise investigate <text>`: runs one and answers with its Finding (absent: says no model is configured). */
  investigate?: (text: string, actor: Actor) => Promise<EphemeralView>;
  /**
   * The model's part (rerank, confirm, verify, investigations), run after the open is recorded.
   * Absent: recall decides alone with the margin gate (SPEC §6 without a model).
   */
  jobs?: InvestigationJobsPort;
  /** `trigger.investigate_after`, for what the thread says about a waiting investigation. */
  investigateAfterMs?: number;
  /** Debounce, storm coalescing and the recurrence cooldown (default: all off). */
  noise?: NoiseOptions;
  /** Alertmanager's v2 API, when `alertmanager.url` is set: a 🔕 can silence there too. */
  alertmanager?: AlertmanagerSilencer;
  /** Told each settled recall decision (metrics); absent: nobody counts. */
  observer?: Pick<LoopObserver, 'recallDecided'>;
}

/** What the bot asks of Alertmanager (issue 12): a silence matching one alert. */
export interface AlertmanagerSilencer {
  /**
   * Creates a silence for the alert with this fingerprint (matchers from its labels) until
   * `endsAt`; resolves with the silence id. Rejects when Alertmanager is down or has no such alert.
   */
  silenceAlert(req: { fingerprint: string; endsAt: string; createdBy: string; comment: string }): Promise<string>;
}

/** An open whose investigation never recorded its finding (see `BotLedger.pendingInvestigations`). */
export interface PendingJob extends PendingInvestigation {
  /** Its incident is over (a storm thread: every alert of it). */
  resolved: boolean;
}

/** A job as the bot hands it to the scheduler. */
export interface JobRequest {
  openId: string;
  incident: import('../types.js').Incident;
  candidates: import('../types.js').Candidate[];
  standing?: import('../investigate/prompts.js').StandingAnswer;
  storm?: () => string[];
  /** When its open was recorded: a wait counts from then (a resumed job waits only what is left). */
  openedAt?: string;
  /** A runbook answer is on the thread: what it leads with when the model's match gate misses. */
  runbook?: boolean;
}

/** What the bot asks of the investigation scheduler. */
export interface InvestigationJobsPort {
  start(job: JobRequest): void;
  cancel(fingerprint: string): boolean;
  /**
   * A job of an earlier run (a restart, a new leader) that never recorded its finding: started
   * again once, or recorded as not resumed (resolved meanwhile, too old). Returns whether it was
   * started; a job this scheduler already runs is left alone.
   */
  resume?(job: JobRequest & { openedAt: string }, resolved: boolean): boolean;
}

/** Outbox items a flow recorded, so the caller knows to wake the worker. */
export interface Enqueued {
  count: number;
}

/** Records one outbox item in the transaction. */
export function enqueue(
  tx: BotTx,
  now: Date,
  item: { transport: string; op: 'post' | 'reply' | 'update'; openId: string; channel?: string; view: CardView | ReplyView | CardPatch; detail?: ReplyView },
  out: Enqueued,
): void {
  tx.record({
    type: 'outbox',
    id: randomUUID(),
    transport: item.transport,
    op: item.op,
    openId: item.openId,
    ...(item.channel !== undefined ? { channel: item.channel } : {}),
    view: item.view as unknown as Record<string, unknown>,
    ...(item.detail ? { detail: item.detail as unknown as Record<string, unknown> } : {}),
    at: now.toISOString(),
  });
  out.count += 1;
}

/**
 * Rewrites a thread's card everywhere it was posted and says why in the thread: the state
 * change (resolved, silenced) is both an edit in place and a reply, as on-call expects. The
 * update carries only what changes; the outbox applies it to the card as it was posted.
 */
export function restate(
  tx: BotTx,
  now: Date,
  thread: ThreadInfo,
  change: { state: CardView['state']; note: string; icon: string; topic: 'resolved' | 'silenced' },
  out: Enqueued,
): void {
  for (const transport of thread.transports) {
    const patch: CardPatch = { kind: 'card_patch', state: change.state, stateNote: change.note };
    enqueue(tx, now, { transport, op: 'update', openId: thread.openId, view: patch }, out);
    enqueue(
      tx,
      now,
      { transport, op: 'reply', openId: thread.openId, view: { kind: 'notice', topic: change.topic, icon: change.icon, text: [change.note] } },
      out,
    );
  }
}

/** `@name` for notices: the display name when the surface gave one. */
export function displayName(actor: Actor): string {
  return actor.name ?? actor.id;
}

/** The ledger's `user` for a chat actor: surface-qualified, so one person's vote is one vote. */
export function ledgerUser(actor: Actor): string {
  return actor.via === 'cli' ? actor.id : `${actor.via}:${actor.id}`;
}

/** "14:05 UTC" (today) or "2026-12-01 14:05 UTC". */
export function shortTime(iso: string, now: Date): string {
  const d = new Date(iso);
  const day = d.toISOString().slice(0, 10);
  const hm = d.toISOString().slice(11, 16);
  return day === now.toISOString().slice(0, 10) ? `${hm} UTC` : `${day} ${hm} UTC`;
}

export type { Clock, Logger };
