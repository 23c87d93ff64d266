/**
 * Ledger event kinds (SPEC §8). The ledger is append-only; every read model is derived from
 * these events, incrementally, and can be rebuilt by replaying them.
 */
import type { ResponseTarget } from './chat/chat-types.js';
import type { CardPatch, MessageView, ReplyView } from './chat/thread-view.js';

export type OpenKind = 'recall' | 'fresh';
export type Verdict = 'action_required' | 'action_suggested' | 'inconclusive' | 'no_action';

export interface OpenEvent {
  type: 'open';
  /** Unique id of this open: what a later `delivered` event refers to. */
  id?: string;
  fingerprint: string;
  triggerKey: string;
  kind: OpenKind;
  /** Catalog entry id the answer came from (recall), if any. */
  entry?: string;
  /** Kind of answer shown: an instant recall claims to resolve, a runbook does not. */
  answerKind?: 'incident' | 'runbook';
  dupFingerprint: string;
  curatedUrl?: string;
  verdict: Verdict;
  /** False for synthetic fingerprints (gitops, re-investigate): never enter entry aggregates. */
  resolvable: boolean;
  /** Thread the message was posted in (older ledgers; newer ones record `delivered` after posting). */
  threadId?: string;
  /** The source's start time of this firing: a re-notification carries the same one. */
  startsAt?: string;
  /** Where the alert came from (`alertmanager`, `pagerduty`, …): the Alertmanager reconciler reads only its own. */
  source?: string;
  /** Storm coalescing (issue 12): the key this open was batched under (Alertmanager group or correlation labels). */
  coalesceKey?: string;
  /** A storm member: the open whose thread it joined (its own ledger open still pairs its resolve). */
  threadOf?: string;
  /**
   * The model investigates this open (a job was started for it): the incident as it arrived,
   * so a restart or a new leader resumes the job until its `finding` is recorded.
   */
  investigate?: { incident: Record<string, unknown> };
  /** What the alert said (capped): a human fix's entry draft and a question's answer quote it. */
  alert?: OpenAlert;
  at: string;
}

/** The alert of an open as a fix's entry draft needs it: its name, title and message (capped), its workload. */
export interface OpenAlert {
  alertname: string;
  title: string;
  message?: string;
  /** `namespace/name` (or `host/node`, a cloud id) as a catalog entry's `resource` names it. */
  resource?: string;
  /** `cluster/namespace/name`, the card header's location. */
  where?: string;
}
export interface ResolveEvent {
  type: 'resolve';
  fingerprint: string;
  /** The resolved alert's trigger key, when the source said: ends a silence even when the firing was never opened. */
  triggerKey?: string;
  /** When the source says the alert ended (Alertmanager `endsAt`), if it said. */
  endsAt?: string;
  at: string;
}
export interface FeedbackEvent {
  type: 'feedback';
  triggerKey: string;
  user: string;
  vote: 'up' | 'down' | 'clear';
  /** The thread it was cast in: it weighs on that thread's entry (else the trigger's newest). */
  openId?: string;
  /** Where it came from: `cli`, `slack`, `matrix`, … */
  via?: string;
  /** The surface's id of the click / reaction: a retried delivery of it is recognised. */
  eventId?: string;
  at: string;
}
export interface SilenceEvent {
  type: 'silence';
  triggerKey: string;
  user: string;
  until: string;
  /** The thread it was set on (its open id): that thread reads silenced. */
  openId?: string;
  via?: string;
  eventId?: string;
  /** "Silence in Alertmanager too" (issue 12): made after this is durable, re-tried after a restart until its outcome is recorded. */
  alertmanager?: { requestId: string; openId: string; who: string };
  at: string;
}
export interface ConfirmEvent {
  type: 'confirm';
  entry: string;
  dupFingerprint: string;
  at: string;
}

/** A message about an open reached a chat surface: recorded after delivery, never before. */
export interface DeliveredEvent {
  type: 'delivered';
  /** The open (its `id`) the message belongs to; absent for a private answer (it belongs to no thread). */
  openId?: string;
  fingerprint?: string;
  transport: string;
  /** The surface's id of the message (console thread id, Slack ts, Matrix event id). */
  messageRef: string;
  /** Where it was posted (Slack channel, Matrix room); absent in older ledgers. */
  channel?: string;
  /** The outbox item this delivered; absent in older ledgers. */
  outboxId?: string;
  /** True for the thread root (the card); replies are registered too, so reactions on them count. */
  root?: boolean;
  at: string;
}

/** The operations the outbox performs on a surface: a thread's card, replies and edits, and private answers. */
export type OutboxOp = 'post' | 'reply' | 'update' | 'answer';

/**
 * Intent to deliver one message, recorded in the same transaction as what it is about, so a
 * crash or a chat outage never loses it: the outbox worker delivers it (with retries, across
 * restarts) and records `delivered` or `outbox_failed`.
 */
export interface OutboxEvent {
  type: 'outbox';
  /** Unique; the idempotency key of the delivery (Matrix transaction id). */
  id: string;
  transport: string;
  op: OutboxOp;
  /** The incident (open id) whose thread this belongs to; replies and updates wait for its root. */
  openId?: string;
  /** post: the channel / room to post in. */
  channel?: string;
  /** The message: a card (post), a reply, a change to the card (update), or a private answer. */
  view: MessageView | CardPatch;
  /** post on a surface that shows the detail inline: the detail view. */
  detail?: ReplyView;
  /** answer: whom it is for, as the surface gave it. */
  to?: ResponseTarget;
  /** answer: the chat event (a command) it answers: applied once, however often it is read again. */
  eventId?: string;
  at: string;
}

/** The outbox gave up on an item (the surface refused it for good, or it aged out). */
export interface OutboxFailedEvent {
  type: 'outbox_failed';
  id: string;
  reason: string;
  at: string;
}

/** An operator note from a thread (SPEC §9): filed to the knowledge base, never evidence. */
export interface NoteEvent {
  type: 'note';
  triggerKey: string;
  /** The incident whose thread it was written in. */
  openId?: string;
  user: string;
  text: string;
  via: string;
  eventId?: string;
  at: string;
}

/**
 * What fixed it, in a person's words (issue 21 item 4): `@reprise fixed: …`, `!reprise fixed …`,
 * `reprise fixed <trigger> …`. Becomes an Incident entry draft through the curator.
 */
export interface FixEvent {
  type: 'fix';
  triggerKey: string;
  openId?: string;
  user: string;
  text: string;
  via: string;
  eventId?: string;
  at: string;
}

/** A question asked in an incident thread (issue 21 item 3): counted for the per-thread hourly limit. */
export interface QuestionEvent {
  type: 'question';
  triggerKey: string;
  openId: string;
  user: string;
  via: string;
  /** Whether a model answers it (counted in the daily budget when it does). */
  model: boolean;
  eventId?: string;
  at: string;
}

export type FindingStatus = 'completed' | 'exhausted' | 'failed' | 'skipped' | 'cancelled' | 'degraded';

/**
 * What an investigation (or a recall's confirm and verify) concluded for an open (SPEC §7):
 * kept with the open. A verified recall (`kind: recall` with its entry) is what counts the open
 * as a recall of that entry when a model decides recall.
 */
export interface FindingEvent {
  type: 'finding';
  openId: string;
  fingerprint: string;
  triggerKey: string;
  kind: 'recall' | 'fresh';
  status: FindingStatus;
  /** The recalled entry (recall). */
  entry?: string;
  confidence?: number;
  verdict?: Verdict;
  summary?: string;
  topCause?: string;
  /** What was checked (tools), one line each: the next run's "what was checked then". */
  checked?: string[];
  /** Why it is not `completed`. */
  reason?: string;
  calls: number;
  tokensIn: number;
  tokensOut: number;
  costUsd?: number;
  /** The job was resumed after a restart or a change of leader. */
  resumed?: boolean;
  at: string;
}

/** What noise control did with an alert (issue 12), recorded with its reason so a replay agrees. */
export type NoiseAction = 'hold' | 'release' | 'drop' | 'flush' | 'mark' | 'am_silence' | 'admit';

/**
 * A hold (debounce), its release, a drop (policy, silence, cooldown, a resolve inside the
 * debounce window, a re-notification), a storm batch closing (`flush`), a thread marked from
 * Alertmanager's state (`mark`), the outcome of an Alertmanager silence a 🔕 asked for, or — while
 * the fingerprint dedup window is on — an alert admitted (`admit`, `reason` its status), which the
 * window measures from. Nothing noise control decides goes unrecorded.
 */
export interface NoiseEvent {
  type: 'noise';
  action: NoiseAction;
  fingerprint: string;
  triggerKey: string;
  /** Short code: debounce, policy, silence, cooldown, renotification, coalesce, am_silenced, am_inhibited, am_gone. */
  reason: string;
  /** One sentence for people. */
  detail: string;
  /** hold / release / drop of a held firing. */
  holdId?: string;
  /** hold: when the firing is released unless its resolve comes first. */
  until?: string;
  /** hold: the held incident, replayed into the loop after a restart. */
  incident?: Record<string, unknown>;
  /** hold: the webhook's routing hint. */
  route?: Record<string, string>;
  /** flush / mark / am_silence: the thread (its open id). */
  openId?: string;
  /** am_silence: the silence event's `alertmanager.requestId` this is the outcome of. */
  requestId?: string;
  at: string;
}

/** File-time curation outcomes of a Finding (SPEC §10): a closed set. */
export type CurationDecision = 'recalled' | 'below_bar' | 'duplicate_entry' | 'duplicate_pr' | 'suppressed' | 'novel';
/** Where an operator note went: a comment on the finding's open KB PR, or a new Concept PR. */
export type NoteFiling = 'pr_comment' | 'concept_pr';
/** Where a human fix went: a new Incident entry PR, or a comment on the trigger's open draft (`pr_comment`). */
export type FixFiling = 'fix_pr';
/** The forge refused an item for good (credentials, permissions, validation); `detail` says why. */
export type CurationFailure = 'failed';

/** What a KB draft is written from: the Finding and its incident, as recorded at file time. */
export interface DraftMaterial {
  title: string;
  alertname: string;
  /** `namespace/name` (or a cloud id) of the workload, when there is one. */
  resource?: string;
  /** Header line of the incident (`cluster/namespace/name`). */
  where: string;
  /** What was seen: the alert's own title and message. */
  symptom: string;
  summary: string;
  verdict: Verdict;
  confidence: number;
  causes: Array<{ cause: string; confidence: number; evidence: string[] }>;
  actions: Array<{ action: string; reversible: boolean }>;
  ruledOut: Array<{ cause: string; reason: string }>;
  changeRef?: string;
  /** `model · prompt hash`. */
  investigator: string;
  /** "🔁 #4 · last 2 d ago", when the trigger fired before. */
  recurrence?: string;
}

/** What a human fix's Incident entry draft is written from (issue 21 item 4), gathered when it was said. */
export interface FixMaterial {
  /** Ledger user, display name and surface of whoever said it. */
  user: string;
  name: string;
  via: string;
  text: string;
  /** When it was said. */
  at: string;
  alert: OpenAlert;
  /** From a `cause:` note, else the standing finding's cause; absent: "not recorded". */
  cause?: string;
  /** 👎'd answers and notes that say something did not work. */
  triedAndFailed: string[];
}

/**
 * Intent to file something on the forge (SPEC §10): recorded with what it is about, performed
 * afterwards by the curation worker (retried across restarts), settled by `curated`.
 */
export interface CurateEvent {
  type: 'curate';
  id: string;
  subject: 'finding' | 'note' | 'fix';
  openId: string;
  triggerKey: string;
  dupFingerprint: string;
  /** subject fix: the human's fix and the incident it ends, as recorded when it was said. */
  fix?: FixMaterial;
  /** subject finding: the material of the draft. */
  draft?: DraftMaterial;
  /** subject note: who wrote what, and the finding it was written on. */
  note?: { user: string; name: string; via: string; text: string; finding?: string };
  at: string;
}

/** A curation decision or a note's filing, with where it went; settles the `curate` intent `id`. */
export interface CuratedEvent {
  type: 'curated';
  /** The intent settled (absent for decisions made at file time without the forge). */
  id?: string;
  subject: 'finding' | 'note' | 'fix';
  openId: string;
  triggerKey: string;
  decision: CurationDecision | NoteFiling | FixFiling | CurationFailure;
  /** Which criterion (below_bar), which entry (duplicate_entry), why (failed). */
  detail?: string;
  url?: string;
  number?: number;
  at: string;
}

export type LedgerEvent =
  | NoiseEvent
  | CurateEvent
  | CuratedEvent
  | FindingEvent
  | OpenEvent
  | ResolveEvent
  | FeedbackEvent
  | SilenceEvent
  | ConfirmEvent
  | DeliveredEvent
  | OutboxEvent
  | OutboxFailedEvent
  | NoteEvent
  | FixEvent
  | QuestionEvent;
export type LedgerEventType = LedgerEvent['type'];
export const LEDGER_EVENT_TYPES: readonly LedgerEventType[] = [
  'open',
  'resolve',
  'feedback',
  'silence',
  'confirm',
  'delivered',
  'outbox',
  'outbox_failed',
  'note',
  'finding',
  'noise',
  'curate',
  'curated',
  'fix',
  'question',
];
