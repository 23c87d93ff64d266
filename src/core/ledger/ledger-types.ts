/**
 * Shapes of the ledger's read model (SPEC §8). Plain JSON throughout so snapshots round-trip.
 */
import type { AnswerKind } from '../types.js';
import type { CardPatch } from '../chat/thread-view.js';
import type { CurateEvent, OpenAlert, OpenEvent, OutboxEvent } from '../ledger-events.js';
import type { MemoryViewState } from './memory-view-state.js';

/** Bumped whenever the shape or the folding rules change: older snapshots are then ignored. */
export const LEDGER_STATE_VERSION = 14;

/** Bounds that keep memory finite however long the ledger runs. */
export interface LedgerLimits {
  /** Unresolved opens kept per fingerprint; the oldest go first (LIFO pairing reaches them last). */
  maxOpenPerFingerprint: number;
  /** Fingerprints tracked at once; the least recently touched is forgotten first. */
  maxFingerprints: number;
  /** A resolve that arrives before its open pairs only with an open at most this much later. */
  resolveBufferMs: number;
  /** Closed episodes kept per trigger key. */
  episodesPerTrigger: number;
  /** Closed episodes kept overall (newest). */
  recentEpisodes: number;
  /** Distinct seconds of unresolved recalls remembered per entry; the oldest past this count as failures. */
  inFlightPerEntry: number;
  /** Threads kept in the registry (message ↔ incident ↔ entry); the least recently opened go first. */
  threads: number;
  /**
   * How long an applied chat event's id is remembered (from the newest one's time): a redelivery,
   * or a batch read again after a crash or a failover, inside it is applied once.
   */
  chatEventRetentionMs: number;
  /** A memory guard past the retention: at most this many ids are kept (oldest forgotten first). */
  chatEvents: number;
}

export const DEFAULT_LEDGER_LIMITS: LedgerLimits = {
  maxOpenPerFingerprint: 20,
  maxFingerprints: 50_000,
  resolveBufferMs: 60 * 60 * 1000,
  episodesPerTrigger: 10,
  recentEpisodes: 200,
  inFlightPerEntry: 500,
  threads: 10_000,
  chatEventRetentionMs: 7 * 24 * 3_600_000,
  chatEvents: 1_000_000,
};

/** An open as recorded (the event without its `type`). */
export type OpenRecord = Omit<OpenEvent, 'type'>;

/** One open, paired with its resolve once that arrives. */
export interface Episode {
  fingerprint: string;
  triggerKey: string;
  kind: OpenEvent['kind'];
  entry?: string;
  answerKind?: AnswerKind;
  dupFingerprint: string;
  resolvable: boolean;
  openedAt: string;
  resolvedAt?: string;
  /** The source's end time of the alert, when it sent one. */
  endsAt?: string;
  threadId?: string;
  /** The source's start time of the firing (re-notifications carry the same one). */
  startsAt?: string;
  /** Id of the open (links `delivered` events). */
  openId?: string;
}

export interface FingerprintState {
  /** Trigger key of the newest open seen for this fingerprint (lets a late resolve end a silence). */
  triggerKey?: string;
  /** Unresolved opens, oldest first. */
  open: OpenRecord[];
  /** A resolve that arrived before any open, waiting for the next one. */
  pendingResolveAt?: string;
  /** Its newest firing was suppressed (🔕 or the cooldown): its resolve ends, it does not wait for an open. */
  suppressed?: boolean;
  pendingResolveEndsAt?: string;
  /** Its newest resolve that closed an open: a re-sent resolve of the same firing changes nothing. */
  lastResolved?: { at: string; startsAt?: string };
  /** When a firing / a resolve of it was last admitted while the dedup window was on. */
  admittedFiringAt?: string;
  admittedResolveAt?: string;
}

export interface EntryAggregate {
  /** Recall opens of the entry (concluded or not). */
  recalls: number;
  resolved: number;
  /**
   * Recalls not resolved yet, counted per second of their open (`[YYYY-MM-DDTHH:MM:SS, n]`,
   * oldest first): each becomes a failure once older than the resolve window. Read time
   * decides, so replay needs no clock; buckets keep a storm of opens to a handful of entries.
   */
  inFlight: Array<[string, number]>;
  /** Unresolved recalls pushed out of `inFlight` by its bound (the oldest second): failures. */
  expired: number;
  up: number;
  down: number;
  confirmations: number;
  lastResolved?: string;
}

export interface Vote {
  vote: 'up' | 'down';
  /** Entry the vote was attributed to when cast; it stays there. */
  entry?: string;
  at: string;
}

export interface SilenceRecord {
  user: string;
  at: string;
  until: string;
  endedAt?: string;
  endedBy?: 'resolve' | 'down';
}

/** A firing held by the debounce (issue 12): released at `until` unless its resolve comes first. */
export interface HoldRecord {
  holdId: string;
  fingerprint: string;
  triggerKey: string;
  until: string;
  at: string;
  /** The incident as it arrived (plain JSON). */
  incident: Record<string, unknown>;
  route?: Record<string, string>;
}

/** A storm thread: the alerts coalesced into one thread (issue 12). */
export interface StormRecord {
  key: string;
  /** Alerts in the thread (the lead included). */
  count: number;
  /** Of those, still unresolved. */
  open: number;
  firstAt: string;
  lastAt: string;
  /** The earliest `startsAt` its alerts gave, and the latest `endsAt` of those resolved: the incident's span. */
  startsAt?: string;
  endsAt?: string;
  /** Affected workloads, in arrival order, distinct. */
  workloads: string[];
  /** Member open ids (not the lead). */
  members: string[];
  /** The batch window was closed (recorded by a `noise` flush). */
  flushed?: boolean;
  /** Its alerts still firing: fingerprint → open id (the reconciler judges them one by one). */
  firing: Record<string, string>;
  /** Alerts Alertmanager's newest notification of the group left out (`truncatedAlerts`). */
  truncated?: number;
}

/** A finding as the next investigation of the trigger is told about it. */
export interface PriorFindingRecord {
  at: string;
  summary: string;
  verdict: OpenEvent['verdict'];
  confidence: number;
  topCause?: string;
  checked?: string[];
  entry?: string;
}

export interface TriggerState {
  count: number;
  resolved: number;
  firstSeen?: string;
  lastSeen?: string;
  newestOpen?: OpenRecord;
  previousOpen?: OpenRecord;
  newestConcludedOpen?: OpenRecord;
  /** Newest KB link (curatedUrl, else entry) carried by any open of this trigger. */
  lastKbLink?: string;
  /** Live votes by user. */
  votes: Record<string, Vote>;
  up: number;
  down: number;
  silence?: SilenceRecord;
  /**
   * Its alerts firing now — opened, or kept from opening by the silence or the cooldown — by
   * fingerprint: a 🔕 ends when the last of them resolves, not the first.
   */
  firing?: Record<string, true>;
  /** Newest closed episodes, oldest first. */
  episodes: Episode[];
  /** Latest findings, oldest first. */
  findings?: PriorFindingRecord[];
  /** Latest human fixes, oldest first (bounded). */
  fixes?: HumanTextRecord[];
  /** Latest operator notes, oldest first (bounded): a `cause:` note, "tried … did not work". */
  notes?: HumanTextRecord[];
}

/** A fix or a note as the trigger keeps it: who, what, when, on which open. */
export interface HumanTextRecord {
  user: string;
  via: string;
  text: string;
  at: string;
  openId?: string;
}

export interface DupStats {
  opens: number;
  resolved: number;
  confirmations: number;
  lastResolvedAt?: string;
  triggerKey?: string;
}

/**
 * An outbox item not yet delivered nor given up. Only what scheduling needs is kept in memory
 * (and in snapshots); the message itself stays in the event log at `seq`, read when it is sent.
 */
export type OutboxItem = Omit<OutboxEvent, 'type' | 'view' | 'detail'> & {
  /** The outbox event's place in the log (set once the transaction that recorded it commits). */
  seq?: number;
};

/** A `curate` intent still to perform: the whole event (drafts and notes are small and few). */
export type CurateItem = Omit<CurateEvent, 'type'>;

/** One incident's thread across surfaces: the registry a reaction or a click is looked up in. */
export interface ThreadRecord {
  openId: string;
  triggerKey: string;
  fingerprint: string;
  /** The open's DupFingerprint: the finding's KB draft carries it (absent in older ledgers). */
  dupFingerprint?: string;
  entry?: string;
  answerKind?: AnswerKind;
  /** The thread root per transport, once delivered. */
  roots: Record<string, { channel: string; id: string }>;
  /** Where each surface's card (the `post` outbox event) is in the log: a state change rewrites it from there. */
  cardSeqs: Record<string, number>;
  state: 'firing' | 'resolved' | 'silenced';
  /** Surfaces the thread was (or is being) posted to. */
  transports: string[];
  /** Keys in `LedgerState.messages` that point here (dropped with the thread). */
  messageKeys: string[];
  notes: number;
  /** Human fixes said in it (issue 21 item 4); absent: none. */
  fixes?: number;
  /** When questions were asked in it, recent ones only (the per-thread hourly limit). */
  questionTimes?: string[];
  /** When each person (ledger user) was last told a refusal in it (issue 29 item 5); recent people only. */
  refusalsTold?: Record<string, string>;
  /** What the alert said, when the open recorded it. */
  alert?: OpenAlert;
  /** The alert's source (`alertmanager`, …), when the open said. */
  source?: string;
  /** When the open was recorded. */
  openedAt?: string;
  /** Set when alerts were coalesced into this thread. */
  storm?: StormRecord;
  /** What the Alertmanager reconciler last marked it (so it marks once). */
  amMark?: string;
  /**
   * The configured Alertmanager holds this thread's alerts: it listed them silenced or inhibited,
   * or accepted a silence Reprise made for them. Its alerts no longer listed are then gone even
   * when no reconcile round listed them first (an alert silenced and resolved between two rounds).
   */
  amHeld?: boolean;
  /** The file-time curation decision of its Finding (SPEC §10), once made. */
  curation?: { decision: string; detail?: string; url?: string; number?: number };
  /**
   * Per surface, every card change recorded since the post merged into one (later fields win):
   * an update starts from the posted card with these applied, so a later change (the KB line,
   * a resolve) does not drop an earlier one (the finding's headline).
   */
  cardPatches?: Record<string, Omit<CardPatch, 'kind'>>;
  /** When the alert fired (the source's start, else the open): acks and the timeline count from it. */
  firedAt?: string;
  /** An ack asked PagerDuty to acknowledge this incident (its echo is not a second person). */
  pagerDutyAsked?: boolean;
  /** Who is on it, in the order they said so (issue 21). */
  acks?: AckRecord[];
  /** Who was on call on its cards, and when the reminder is due (issue 32). */
  remind?: { at: string; cards: Record<string, import('../chat/thread-view.js').OnCallView> };
  /** When the on-call reminder was said (it is said once). */
  reminded?: string;
  /** Its on-call answer was late: the route (and service) a late answer is for, until it came. */
  oncallLate?: { route: string; service?: string };
  /** What happened in the thread, oldest first, bounded (see `ledger-timeline.ts`). */
  timeline?: TimelineItem[];
  /**
   * Opens of the later episodes in this thread, oldest first (its source reopened the incident,
   * `open.reopens`); the last is the episode the thread is about now. Absent: only its own.
   */
  episodes?: string[];
}

/** One person on it. */
export interface AckRecord {
  user: string;
  name?: string;
  via: string;
  at: string;
}

/** One thing that happened to an incident, as the timeline shows it (texts are the people's own, shown as text). */
export interface TimelineItem {
  kind: 'fired' | 'opened' | 'posted' | 'ack' | 'vote' | 'note' | 'fix' | 'silence' | 'finding' | 'pagerduty' | 'resolved' | 'reopened';
  at: string;
  user?: string;
  via?: string;
  /** vote: up/down/clear; silence: until; posted: the surface; finding: its status; pagerduty: the call's outcome; note: its first line. */
  detail?: string;
}

/** A PagerDuty call an ack asked for whose outcome is not settled yet. */
export interface PagerDutyPending {
  requestId: string;
  incidentId: string;
  openId?: string;
  /** Attempts recorded so far. */
  attempts: number;
}

export interface LedgerState {
  version: number;
  limits: LedgerLimits;
  /** Valid events folded in. */
  applied: number;
  /** Malformed events skipped (never crash a replay). */
  skipped: number;
  resolves: number;
  lastResolveAt?: string;
  fingerprints: Record<string, FingerprintState>;
  fingerprintCount: number;
  entries: Record<string, EntryAggregate>;
  triggers: Record<string, TriggerState>;
  dups: Record<string, DupStats>;
  /** Newest closed episodes overall, oldest first. */
  recentEpisodes: Episode[];
  /** Outbox items pending delivery, in the order they were recorded. */
  outbox: Record<string, OutboxItem>;
  outboxCount: number;
  /** Thread registry by open id, least recently opened first. */
  threads: Record<string, ThreadRecord>;
  threadCount: number;
  /** Forge work (`curate` intents) not yet settled, in the order it was recorded; absent in older snapshots. */
  curate?: Record<string, CurateItem>;
  /** `transport|channel|id` of every bot message delivered → its open id. */
  messages: Record<string, string>;
  /** Inbound chat event ids already recorded (dedup), with their order for eviction. */
  chatEventSeen: Record<string, true>;
  /** Remembered ids with the time (ms) of the event that applied them, oldest first. */
  chatEventOrder: Array<[string, number]>;
  /** Model tokens spent per UTC day (the daily budget), recent days only. */
  tokensByDay: Record<string, number>;
  /** Firings held by the debounce, in the order they were held. */
  holds: Record<string, HoldRecord>;
  holdCount: number;
  /** Fingerprint → its hold id. */
  holdByFingerprint: Record<string, string>;
  /** Storm member open id → the thread's (lead) open id; also a reopened episode's open → the thread it reopened. */
  stormMembers: Record<string, string>;
  /** Coalesce key → the newest storm thread opened under it. */
  stormByKey: Record<string, string>;
  /** Noise-control decisions per `action:reason` (drops, holds, …), for status and metrics. */
  noiseCounts: Record<string, number>;
  /** When recent fresh investigations that called the model ended, oldest first (the hourly limit survives restarts). */
  investigationTimes: string[];
  /** Alertmanager silences a 🔕 asked for whose outcome is not recorded yet, by request id. */
  amSilences: Record<string, AmSilencePending>;
  /** Opens the model investigates whose `finding` is not recorded yet, by open id, oldest first; absent in older snapshots. */
  investigations?: Record<string, PendingInvestigation>;
  /** PagerDuty acknowledgements an ack asked for, not yet done or given up, by request id; absent in older snapshots. */
  pagerDutyCalls?: Record<string, PagerDutyPending>;
  /** Seconds from firing to the first ack, newest last (bounded): `/reprise status` figures. */
  ackSeconds?: number[];
  /** What the memory view (`/ui`) shows, folded as events arrive (ledger-view.ts); absent in older snapshots. */
  view?: MemoryViewState;
}

/** An open whose investigation has not recorded its finding yet: a restart resumes it. */
export interface PendingInvestigation {
  openId: string;
  fingerprint: string;
  triggerKey: string;
  /** When the open was recorded. */
  at: string;
  /** The incident as it arrived (plain JSON). */
  incident: Record<string, unknown>;
  coalesceKey?: string;
}

export interface AmSilencePending {
  requestId: string;
  triggerKey: string;
  openId: string;
  until: string;
  who: string;
  via?: string;
}
