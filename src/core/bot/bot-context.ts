/**
 * What the bot's flows share: the narrow ledger view, the surfaces, and the helpers that turn
 * decisions into outbox items inside a ledger transaction.
 */
import { randomUUID } from 'node:crypto';
import type { Clock } from '../../ports/clock.js';
import type { Logger } from '../../ports/logger.js';
import type { LoopObserver } from '../../ports/loop-observer.js';
import type { CardPatch, EphemeralView, CardView, NoticeView, ReplyView, RichText } from '../chat/thread-view.js';
import type { ResponseTarget } from '../chat/chat-types.js';
import type { LedgerEvent } from '../ledger-events.js';
import type { LedgerReader, Occurrences, Thread } from '../ledger/ledger-reader.js';
import type { CatalogSnapshot } from '../recall/catalog-snapshot.js';
import type { FuzzyTextIndex } from '../search/text-query.js';
import type { RecallOptions } from '../recall/recall.js';
import type { Actor } from '../chat/chat-types.js';
import type { Effect, JobRequest } from './effects.js';
import type { ChatMessage } from '../../ports/model.js';
import type { AckEvent, FeedbackEvent, SilenceEvent } from '../ledger-events.js';
import { cleanName, personFromKey, personKey, type PersonRun } from '../people.js';
import type { NoiseOptions } from './noise-control.js';
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
  /** Events this transaction staged so far (the next one's place in it). */
  readonly size: number;
}

/** One incident's thread, as the registry knows it. */
export type ThreadInfo = Thread;

/** What the bot reads of the ledger: a narrow view of its one reader. */
export type BotReads = Pick<
  LedgerReader,
  | 'trackRecord'
  | 'occurrences'
  | 'silence'
  | 'openEpisodes'
  | 'knowsTrigger'
  | 'triggerKeys'
  | 'siblingTriggers'
  | 'thread'
  | 'threadByMessage'
  | 'newestThread'
  | 'seenChatEvent'
  | 'openIncidents'
  | 'activeSilences'
  | 'holdOf'
  | 'lastAdmitted'
  | 'dueHolds'
  | 'stormThread'
  | 'unflushedStorms'
  | 'firingThreads'
  | 'liveThreads'
  | 'lastResolved'
  | 'firingAlerts'
  | 'pendingAmSilences'
  | 'investigationsSince'
  | 'pendingInvestigations'
  | 'recurrence'
  | 'standing'
  | 'humanFixes'
  | 'humanNotes'
  | 'recentEpisodes'
  | 'tokensSpent'
  | 'threadOfFingerprint'
  | 'ackSeconds'
  | 'pendingPagerDutyCalls'
  | 'dueOnCallReminders'
  | 'awaitingOnCall'
>;

/** What the bot needs of the ledger: its reader, and transactions. */
export interface BotLedger {
  read: BotReads;
  /**
   * Runs `fn` with exclusive use of the ledger; what it records is written in one durable
   * transaction when it returns, or not at all (and the read model rolled back) if it throws.
   * `opts.id` makes it idempotent: a transaction with an id already recorded writes nothing.
   */
  transaction<T>(fn: (tx: BotTx) => Promise<T>, opts?: { id?: string }): Promise<{ result: T; first: number; count: number }>;
}

/** A surface as the bot's decisions see it: how it shows a thread. */
export interface BotSurface {
  name: string;
  inlineDetail: boolean;
}

export interface NoteLimits {
  /** Longest note, in bytes (SPEC §9: 8 KiB). */
  maxBytes: number;
  /** Notes per thread (SPEC §9: 20). */
  perThread: number;
}

export interface RepriseBotDeps {
  catalog: () => CatalogSnapshot;
  /** The typo-tolerant, prefix-matching index for text people type (`/reprise recall <words>`), per snapshot. */
  textIndex?: (snapshot: CatalogSnapshot) => FuzzyTextIndex;
  ledger: BotLedger;
  clock: Clock;
  logger: Logger;
  recall: RecallOptions;
  /** match / ignore rules and the dedup window; everything is admitted without one. */
  policy?: TriggerPolicy;
  /** Where incidents go and whom they ping; no surface, no messages. */
  routing: Routing;
  surfaces: ReadonlyMap<string, BotSurface>;
  /** Told after each transaction that recorded outbox items (messages, answers). */
  outbox?: { kick(): void };
  /** The curation worker, when a forge is configured: notes become curate intents it files. */
  curation?: { kick(): void };
  /** Who may vote, silence and write notes (default: everyone). */
  allow?: (actor: Actor) => boolean;
  /** Web link of a catalog entry, when one is configured. */
  linkFor?: (entryId: string) => string | undefined;
  /** Absolute link to a `/ui` path (`server.public_url`), when one is configured: the card's "N more". */
  uiLink?: (path: string) => string | undefined;
  notes?: NoteLimits;
  /** Human fixes (issue 21 item 4): the ask on resolve, size and count limits (default: {@link DEFAULT_FIXES}). */
  fixes?: FixOptions;
  /** Questions in a thread (issue 21 item 3): the per-thread hourly limit, and the model's answer when one is configured. */
  questions?: QuestionOptions;
  /** A refused note, fix or question is said to its person once per thread in this window (default {@link DEFAULT_REFUSAL_WINDOW_MS}). */
  refusalWindowMs?: number;
  /** A model that answers thread questions (absent: answered from the ledger and the catalog only). */
  questionModel?: QuestionModel;
  /**
   * `/reprise investigate <text>`: runs one and resolves with its Finding as an answer (absent: the
   * bot says no model is configured). Run in the background; its answer goes through the outbox.
   */
  investigate?: (text: string, actor: Actor) => Promise<EphemeralView>;
  /**
   * The model's part (rerank, confirm, verify, investigations), run after the open is recorded.
   * Absent: recall decides alone with the margin gate (SPEC §6 without a model).
   */
  jobs?: InvestigationJobsPort;
  /** Who is on call (issue 32): the reminder's delay (`oncall.remind_after`; 0 or absent: no reminder). */
  onCall?: { remindAfterMs: number };
  /** `/reprise oncall [route]`: who is on call, as an answer for the asker (absent: none configured). */
  whoIsOnCall?: (route: string | undefined, via: string) => Promise<EphemeralView>;
  /** `trigger.investigate_after`, for what the thread says about a waiting investigation. */
  investigateAfterMs?: number;
  /** Debounce, storm coalescing and the recurrence cooldown (default: all off). */
  noise?: NoiseOptions;
  /** Alertmanager's v2 API, when `alertmanager.url` is set: a 🔕 can silence there too. */
  alertmanager?: AlertmanagerSilencer;
  /** File-time curation of Findings (SPEC §10), when a forge is configured: the quality bar's confidence floor. */
  fileTimeCuration?: { minConfidence: number };
  /** Told each settled recall decision and ended investigation (metrics); absent: nobody counts. */
  observer?: Pick<LoopObserver, 'recallDecided' | 'investigationEnded' | 'acknowledged'>;
  /**
   * PagerDuty's REST API, when a token and a `From` address are configured: a chat ack of a
   * PagerDuty-sourced incident acknowledges it there too (issue 21).
   */
  pagerDuty?: {
    /** Absent in the offline CLI: the request is recorded and the serving bot makes it when it next starts. */
    port?: PagerDutyPort;
    /** Attempts per acknowledge before it is given up (recorded, said in the thread). */
    maxAttempts: number;
    backoff: import('../backoff.js').BackoffPolicy;
    /** How a retry waits (tests pass one that does not). */
    sleep?: (ms: number) => Promise<void>;
  };
}

/** What the bot asks of Alertmanager (issue 12): a silence matching the alerts a 🔕 silenced. */
export interface AlertmanagerSilencer {
  /**
   * Creates a silence until `endsAt` matching the alert with this fingerprint — or, given
   * `fingerprints` (the trigger's alerts firing now), the labels all of them share, so it covers
   * the alerts the Reprise silence does; resolves with the silence id (and its matchers, when
   * said). Rejects when Alertmanager is down or holds none of the alerts.
   */
  silenceAlert(req: {
    fingerprint: string;
    fingerprints?: readonly string[];
    endsAt: string;
    createdBy: string;
    comment: string;
  }): Promise<string | { id: string; matchers: string[]; alerts: number }>;
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
    view: item.view,
    ...(item.detail ? { detail: item.detail } : {}),
    at: now.toISOString(),
  });
  out.count += 1;
}

/**
 * A notice in an incident's thread, one reply per surface in `transports`, through the outbox:
 * the one way flows tell a thread something ("✅ resolved", "📝 saved", "👀 on it").
 */
export function notify(c: Pick<Ctx, 'tx' | 'now' | 'out'>, openId: string, transports: readonly string[], notice: Omit<NoticeView, 'kind'>): void {
  for (const transport of transports) enqueue(c.tx, c.now, { transport, op: 'reply', openId, view: { kind: 'notice', ...notice } }, c.out);
}

/**
 * Everything one decision works with (SPEC §3 "events in, effects out"): the loop's
 * configuration, the ledger as it stands (with what this transaction recorded so far), where
 * events are recorded, the time of the decision, and where effects go. Decisions read nothing
 * else — no clock, no network — so the same intent on the same ledger decides the same.
 */
export interface Ctx {
  d: RepriseBotDeps;
  read: BotReads;
  tx: BotTx;
  now: Date;
  log: Logger;
  out: Enqueued;
  effects: Effect[];
}

/**
 * A private answer for the person who asked (a command's result, a click's acknowledgement),
 * delivered by the outbox like every other message: intake never waits on a chat service.
 * A surface the bot does not run (the CLI) gets none.
 */
export function answer(c: Pick<Ctx, 'd' | 'tx' | 'now' | 'out'>, via: string, to: ResponseTarget, view: EphemeralView, eventId?: string): void {
  if (!c.d.surfaces.has(via)) return;
  c.tx.record({ type: 'outbox', id: randomUUID(), transport: via, op: 'answer', to, view, ...(eventId ? { eventId } : {}), at: c.now.toISOString() });
  c.out.count += 1;
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
  change: {
    state: CardView['state'];
    note: string | RichText;
    icon: string;
    topic: 'resolved' | 'silenced';
    /** More of the card that changed with it (the track record a resolve moved): one edit, not two. */
    patch?: Omit<CardPatch, 'kind' | 'state' | 'stateNote'>;
    /** The thread's one notice, per surface, when it says more than the note (a resolve asking what fixed it). */
    notice?: (transport: string) => RichText;
  },
  out: Enqueued,
): void {
  for (const transport of thread.transports) {
    const note = typeof change.note === 'string' ? [change.note] : change.note;
    const patch: CardPatch = { ...change.patch, kind: 'card_patch', state: change.state, stateNote: change.note };
    enqueue(tx, now, { transport, op: 'update', openId: thread.openId, view: patch }, out);
    const text = change.notice?.(transport) ?? note;
    notify({ tx, now, out }, thread.openId, [transport], { topic: change.topic, icon: change.icon, text });
  }
}

/** The KB link the trigger's newest open carried (its curated PR, else its entry): "previous: …" on the next card. */
export function previousEntry(o: Pick<Occurrences, 'newestOpen'>): string | undefined {
  return o.newestOpen?.curatedUrl ?? o.newestOpen?.entry;
}

/**
 * The name recorded with an event: the display name the surface's event carried (PagerDuty's
 * agent, the CLI's user), else the id. Kept for the ledger and old readers; views name people
 * with {@link actorRun}, and renderers look their display names up.
 */
export function displayName(actor: Actor): string {
  return actor.name ?? actor.id;
}

/** The person run naming a chat actor in a view (each surface shows it its own way: core/people.ts). */
export function actorRun(actor: Actor): PersonRun {
  const name = cleanName(actor.name);
  return { person: { via: actor.via, id: actor.id, ...(name ? { name } : {}) } };
}

/** The person run for someone the ledger recorded (`user` is {@link ledgerUser}'s, `name` what the event carried). */
export function recordedRun(r: { user: string; via?: string | undefined; name?: string | undefined }): PersonRun {
  const p = personFromKey(r.user, r.via);
  const name = cleanName(r.name);
  // A recorded name equal to the id says nothing (displayName's fallback).
  return { person: { ...p, ...(name && name !== p.id ? { name } : {}) } };
}

/** The ledger's `user` for a chat actor: surface-qualified, so one person's vote is one vote. */
export function ledgerUser(actor: Actor): string {
  return personKey(actor);
}

/** "14:05 UTC" (today) or "2026-12-01 14:05 UTC". */
export function shortTime(iso: string, now: Date): string {
  const d = new Date(iso);
  const day = d.toISOString().slice(0, 10);
  const hm = d.toISOString().slice(11, 16);
  return day === now.toISOString().slice(0, 10) ? `${hm} UTC` : `${day} ${hm} UTC`;
}

export type { Clock, Logger };

/** What became of a chat or CLI action (a vote, a silence, a note, an ack, a fix, a question). */
export type ChatOutcome =
  | {
      status: 'recorded';
      kind: 'vote' | 'silence' | 'note' | 'ack' | 'fixed' | 'question' | 'postmortem';
      triggerKey: string;
      event: FeedbackEvent | SilenceEvent | AckEvent | { type: 'note' } | { type: 'fix' } | { type: 'question' } | { type: 'postmortem' };
      /** Where the event landed in the log (set by `handle` once the transaction is durable). */
      seq?: number;
      /** Its place in the transaction, until then. */
      index?: number;
    }
  | { status: 'duplicate' | 'ignored' | 'refused'; reason: string };

export interface FixOptions {
  /** Ask "what fixed it?" when an incident no instant recall answered resolves. */
  ask: boolean;
  /** Longest fix, in bytes. */
  maxBytes: number;
  /** Fixes per thread. */
  perThread: number;
}

export interface QuestionOptions {
  /** Questions answered per thread per rolling hour. */
  perThreadPerHour: number;
}

/** What one model call for a question came back with. */
export interface QuestionReply {
  content: string | null;
  model: string;
  tokensIn: number;
  tokensOut: number;
  /** Null when the model has no price configured. */
  costUsd: number | null;
}

/** The model that answers thread questions: one call, no tools; the day's token budget it shares with investigations. */
export interface QuestionModel {
  ask(messages: readonly ChatMessage[]): Promise<QuestionReply>;
  /** `model.daily_token_budget`: past it, questions are answered without the model. */
  dailyTokenBudget?: number;
}

/** What the bot asks of PagerDuty's REST API (v2). */
export interface PagerDutyPort {
  /** Acknowledges the incident. Rejects with a {@link PagerDutyCallError} (or any error: retried). */
  acknowledge(incidentId: string): Promise<void>;
}
