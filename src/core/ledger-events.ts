/**
 * Ledger event kinds (SPEC §8). The ledger is append-only; every read model is derived from
 * these events, incrementally, and can be rebuilt by replaying them.
 *
 * One zod schema per kind, joined in {@link ledgerEventSchema} (a discriminated union on
 * `type`); the types are `z.infer` of them. The schema is what `Ledger.append` enforces, what a
 * replay skips by and what an export or import checks a line with (`ledgerEventProblem`).
 *
 * What it accepts is what the ledger has always accepted, so old ledgers keep loading:
 * - unknown fields are tolerated, and the event is kept as read — use the schema to check a
 *   value, never its parsed output (a zod object drops keys it does not know);
 * - a field marked "typed, not checked" was never checked when read: its type says what the
 *   writer puts there, the schema does not hold a stored record to it (a stricter rule would
 *   make replay skip an old record it applies today).
 *
 * Over 450 lines on purpose: one schema per event kind, joined in one union that a replay, an
 * append and an export line are all checked by; a kind kept in another file is a kind that can be
 * left out of the union.
 */
import { z } from 'zod';
import type { ResponseTarget } from './chat/chat-types.js';
import type { CardPatch, MessageView, OnCallView, ReplyView } from './chat/thread-view.js';
import { verdictSchema, type Verdict } from './verdict.js';

function isObject(v: unknown): v is object {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const nonEmpty = z.string({ error: 'must be a non-empty string' }).min(1, { error: 'must be a non-empty string' });
const anyString = z.string({ error: 'must be a string' });
const timestamp = z.string({ error: 'must be an ISO timestamp' }).refine((v) => !Number.isNaN(Date.parse(v)), { error: 'must be an ISO timestamp' });
const boolean = z.boolean({ error: 'must be a boolean' });
const counter = z.number({ error: 'must be a number ≥ 0' }).nonnegative({ error: 'must be a number ≥ 0' });
const oneOf = <const T extends readonly [string, ...string[]]>(values: T) => z.enum(values, { error: `must be one of ${values.join('|')}` });
/** Checked to be a (non-array) object; typed as what the writer puts there. */
const objectOf = <T extends object>() => z.custom<T>(isObject, { error: 'must be an object' });
/** Typed, not checked (see the module comment). */
const unchecked = <T>() => z.custom<T>();

export const openKindSchema = oneOf(['recall', 'fresh']);

export const openEventSchema = z.object({
  type: z.literal('open'),
  /** Unique id of this open: what a later `delivered` event refers to. */
  id: nonEmpty.optional(),
  fingerprint: nonEmpty,
  triggerKey: nonEmpty,
  kind: openKindSchema,
  /** Catalog entry id the answer came from (recall), if any. */
  entry: nonEmpty.optional(),
  /** Kind of answer shown: an instant recall claims to resolve, a runbook does not. */
  answerKind: oneOf(['incident', 'runbook']).optional(),
  dupFingerprint: anyString,
  curatedUrl: nonEmpty.optional(),
  verdict: verdictSchema,
  /** False for synthetic fingerprints (gitops, re-investigate): never enter entry aggregates. */
  resolvable: boolean,
  /** Thread the message was posted in (older ledgers; newer ones record `delivered` after posting). */
  threadId: nonEmpty.optional(),
  /** The source's start time of this firing: a re-notification carries the same one. */
  startsAt: nonEmpty.optional(),
  /** Where the alert came from (`alertmanager`, `pagerduty`, …): the Alertmanager reconciler reads only its own. */
  source: nonEmpty.optional(),
  /** Storm coalescing (issue 12): the key this open was batched under (Alertmanager group or correlation labels). */
  coalesceKey: nonEmpty.optional(),
  /** A storm member: the open whose thread it joined (its own ledger open still pairs its resolve). */
  threadOf: nonEmpty.optional(),
  /**
   * The source reopened the incident this open's thread is about (PagerDuty `incident.reopened`):
   * a new episode in that thread (the open id of it), whose card is edited back to firing instead
   * of a new one posted; what is said in the thread from then on is this episode's.
   */
  reopens: nonEmpty.optional(),
  /** Alerts its Alertmanager notification left out (`truncatedAlerts`, past the receiver's `max_alerts`), when it said. */
  truncatedAlerts: z.number({ error: 'must be a non-negative integer' }).int().nonnegative().optional(),
  /**
   * The model investigates this open (a job was started for it): the incident as it arrived,
   * so a restart or a new leader resumes the job until its `finding` is recorded.
   */
  investigate: z.object({ incident: objectOf<Record<string, unknown>>() }, { error: 'must be an object' }).optional(),
  /**
   * What recall decided for this open, compact (issue 23, the memory view's "why didn't it
   * recall"): the answer, the gate that stopped the best instant candidate, the top candidates
   * with their scores, the margin between the first two. Absent in older ledgers.
   */
  trace: z
    .object(
      {
        answer: oneOf(['incident', 'runbook', 'none']),
        /** The gate that stopped the best instant candidate (`structural` when none agreed); absent when an instant recall fired. */
        stoppedBy: nonEmpty.optional(),
        /** A model decides the instant part afterwards (rerank, confirm, verify): this is the local recall's view. */
        model: boolean.optional(),
        /** Score of the best candidate less the runner-up's. Typed, not checked. */
        margin: unchecked<number>().optional(),
        /** The best candidates, best first (at most 5). Typed, not checked. */
        candidates: unchecked<OpenTraceCandidate[]>(),
        /** The candidate a gate stopped, as the thread's near-miss line says. Typed, not checked. */
        nearMiss: unchecked<{ entry: string; gate: string; reason: string }>().optional(),
        /** The refusals of the gate trace (at most 8). Typed, not checked. */
        steps: unchecked<OpenTraceStep[]>().optional(),
      },
      { error: 'must be an object' },
    )
    .optional(),
  /**
   * Who was on call on its cards (issue 32), per surface, and when nobody having acknowledged
   * means the thread mentions them once more (`oncall.remind_after`). Typed, not checked beyond the time.
   */
  remind: z.object({ at: timestamp, cards: unchecked<Record<string, OnCallView>>() }, { error: 'must be an object' }).optional(),
  /**
   * The on-call route asked for its cards and the answer was not in within the budget (issue 32):
   * when it comes late, the cards are edited and the person mentioned in the thread (`oncall_found`).
   */
  oncallLate: z.object({ route: nonEmpty, service: nonEmpty.optional() }, { error: 'must be an object' }).optional(),
  /** What the alert said (capped): a human fix's entry draft and a question's answer quote it. */
  alert: z
    .object(
      {
        alertname: nonEmpty,
        /** Typed, not checked beyond the name (a capped copy of what the source said). */
        title: unchecked<string>(),
        message: unchecked<string>().optional(),
        /** `namespace/name` (or `host/node`, a cloud id) as a catalog entry's `resource` names it. */
        resource: unchecked<string>().optional(),
        /** `cluster/namespace/name`, the card header's location. */
        where: unchecked<string>().optional(),
      },
      { error: 'must be an object' },
    )
    .optional(),
  at: timestamp,
});
export type OpenEvent = z.infer<typeof openEventSchema>;
/** One candidate of an open's recall trace. */
export interface OpenTraceCandidate {
  entry: string;
  score: number;
}
/** One refusal of an open's recall trace. */
export interface OpenTraceStep {
  gate: string;
  entry: string | null;
  value: number | string | null;
  threshold: number | string | null;
  reason: string;
}
/** What recall decided for an open (see `trace` on the open event). */
export type OpenTrace = NonNullable<OpenEvent['trace']>;
/** The alert of an open as a fix's entry draft needs it: its name, title and message (capped), its workload. */
export type OpenAlert = NonNullable<OpenEvent['alert']>;

export const resolveEventSchema = z.object({
  type: z.literal('resolve'),
  fingerprint: nonEmpty,
  /** The resolved alert's trigger key, when the source said: ends a silence even when the firing was never opened. */
  triggerKey: nonEmpty.optional(),
  /** When the source says the alert ended (Alertmanager `endsAt`), if it said. */
  endsAt: timestamp.optional(),
  /** Who concluded it when the source sent no resolve: `am_gone` (Alertmanager stopped listing it). */
  reason: nonEmpty.optional(),
  at: timestamp,
});
export type ResolveEvent = z.infer<typeof resolveEventSchema>;

/**
 * What every human action carries (a vote, a silence, a note, a fix, a question, a postmortem
 * request, an ack): on which trigger and thread, who did it and through which surface, the
 * surface's id of it (so a retried delivery is applied once), and when.
 */
const humanActionSchema = z.object({
  triggerKey: nonEmpty,
  /** The thread it was said in or set on (its open id). */
  openId: nonEmpty.optional(),
  /** Surface-qualified (`slack:U1`, `pagerduty:P1`), or the CLI user. */
  user: nonEmpty,
  /** Where it came from: `cli`, `slack`, `matrix`, … */
  via: nonEmpty,
  /** The surface's id of the click / reaction / message: a retried delivery of it is recognised. */
  eventId: nonEmpty.optional(),
  at: timestamp,
});

export const feedbackEventSchema = humanActionSchema.extend({
  type: z.literal('feedback'),
  vote: oneOf(['up', 'down', 'clear']),
  /** The thread it was cast in: it weighs on that thread's entry (else the trigger's newest). */
  openId: nonEmpty.optional(),
  /** Absent in events recorded before the surface was. */
  via: nonEmpty.optional(),
});
export type FeedbackEvent = z.infer<typeof feedbackEventSchema>;

export const silenceEventSchema = humanActionSchema.extend({
  type: z.literal('silence'),
  until: timestamp,
  /** The thread it was set on (its open id): that thread reads silenced. */
  openId: nonEmpty.optional(),
  /** Absent in events recorded before the surface was. */
  via: nonEmpty.optional(),
  /** "Silence in Alertmanager too" (issue 12): made after this is durable, re-tried after a restart until its outcome is recorded. */
  alertmanager: z.object({ requestId: nonEmpty, openId: nonEmpty, who: nonEmpty }, { error: 'must be an object' }).optional(),
});
export type SilenceEvent = z.infer<typeof silenceEventSchema>;

export const confirmEventSchema = z.object({
  type: z.literal('confirm'),
  entry: nonEmpty,
  dupFingerprint: anyString,
  at: timestamp,
});
export type ConfirmEvent = z.infer<typeof confirmEventSchema>;

/** A message about an open reached a chat surface: recorded after delivery, never before. */
export const deliveredEventSchema = z
  .object({
    type: z.literal('delivered'),
    /** The open (its `id`) the message belongs to; absent for a private answer (it belongs to no thread). */
    openId: nonEmpty.optional(),
    fingerprint: nonEmpty.optional(),
    transport: nonEmpty,
    /** The surface's id of the message (console thread id, Slack ts, Matrix event id). */
    messageRef: nonEmpty,
    /** Where it was posted (Slack channel, Matrix room); absent in older ledgers. */
    channel: nonEmpty.optional(),
    /** The outbox item this delivered; absent in older ledgers. */
    outboxId: nonEmpty.optional(),
    /** True for the thread root (the card); replies are registered too, so reactions on them count. Typed, not checked. */
    root: unchecked<boolean>().optional(),
    at: timestamp,
  })
  .superRefine((e, ctx) => {
    // A private answer (an outbox item with no open) belongs to no thread; every other delivery names its open.
    if (e.openId === undefined && e.outboxId !== undefined) return;
    if (e.openId === undefined) ctx.addIssue({ code: 'custom', path: ['openId'], message: 'must be a non-empty string' });
    if (e.fingerprint === undefined) ctx.addIssue({ code: 'custom', path: ['fingerprint'], message: 'must be a non-empty string' });
  });
export type DeliveredEvent = z.infer<typeof deliveredEventSchema>;

/** The operations the outbox performs on a surface: a thread's card, replies and edits, and private answers. */
export const outboxOpSchema = oneOf(['post', 'reply', 'update', 'answer']);
export type OutboxOp = z.infer<typeof outboxOpSchema>;

/**
 * Intent to deliver one message, recorded in the same transaction as what it is about, so a
 * crash or a chat outage never loses it: the outbox worker delivers it (with retries, across
 * restarts) and records `delivered` or `outbox_failed`. The views are checked to be objects
 * (the renderers read them by their `kind`); their types are core/chat's.
 */
export const outboxEventSchema = z
  .object({
    type: z.literal('outbox'),
    /** Unique; the idempotency key of the delivery (Matrix transaction id). */
    id: nonEmpty,
    transport: nonEmpty,
    op: outboxOpSchema,
    /** The incident (open id) whose thread this belongs to; replies and updates wait for its root. */
    openId: nonEmpty.optional(),
    /** post: the channel / room to post in. */
    channel: nonEmpty.optional(),
    /** The message: a card (post), a reply, a change to the card (update), or a private answer. */
    view: objectOf<MessageView | CardPatch>(),
    /** post on a surface that shows the detail inline: the detail view. */
    detail: objectOf<ReplyView>().optional(),
    /** answer: whom it is for, as the surface gave it (checked on an answer only). */
    to: unchecked<ResponseTarget>().optional(),
    /** answer: the chat event (a command) it answers: applied once, however often it is read again. */
    eventId: nonEmpty.optional(),
    at: timestamp,
  })
  .superRefine((e, ctx) => {
    if (e.op === 'answer') {
      if (!isObject(e.to)) ctx.addIssue({ code: 'custom', path: ['to'], message: 'must be an object' });
    } else if (e.openId === undefined) ctx.addIssue({ code: 'custom', path: ['openId'], message: 'must be a non-empty string' });
  });
export type OutboxEvent = z.infer<typeof outboxEventSchema>;

/** The outbox gave up on an item (the surface refused it for good, or it aged out). */
export const outboxFailedEventSchema = z.object({
  type: z.literal('outbox_failed'),
  id: nonEmpty,
  reason: nonEmpty,
  at: timestamp,
});
export type OutboxFailedEvent = z.infer<typeof outboxFailedEventSchema>;

/** An operator note from a thread (SPEC §9): filed to the knowledge base, never evidence. */
export const noteEventSchema = humanActionSchema.extend({
  type: z.literal('note'),
  text: nonEmpty,
});
export type NoteEvent = z.infer<typeof noteEventSchema>;

/**
 * What fixed it, in a person's words (issue 21 item 4): `@reprise fixed: …`, `!reprise fixed …`,
 * `reprise fixed <trigger> …`. Becomes an Incident entry draft through the curator.
 */
export const fixEventSchema = humanActionSchema.extend({
  type: z.literal('fix'),
  /** Absent from the CLI when the trigger has no thread. */
  openId: nonEmpty.optional(),
  text: nonEmpty,
});
export type FixEvent = z.infer<typeof fixEventSchema>;

/** A question asked in an incident thread (issue 21 item 3): counted for the per-thread hourly limit. */
export const questionEventSchema = humanActionSchema.extend({
  type: z.literal('question'),
  openId: nonEmpty,
  /** Whether a model answers it (counted in the daily budget when it does). */
  model: boolean,
});
export type QuestionEvent = z.infer<typeof questionEventSchema>;

/**
 * A refusal told to someone in a thread (issue 29 item 5): a note, fix or question past its cap
 * (or unusable). Further refusals to that person in that thread inside the window are not said.
 */
export const refusalEventSchema = z.object({
  type: z.literal('refusal'),
  triggerKey: nonEmpty,
  openId: nonEmpty,
  user: nonEmpty,
  via: nonEmpty,
  /** What was refused: `note`, `fix`, `question`. */
  kind: nonEmpty,
  eventId: nonEmpty.optional(),
  at: timestamp,
});
export type RefusalEvent = z.infer<typeof refusalEventSchema>;

/** The on-call reminder was said in the thread (issue 32): once, a restart does not say it again. */
export const onCallReminderEventSchema = z.object({
  type: z.literal('oncall_reminder'),
  triggerKey: nonEmpty,
  openId: nonEmpty,
  at: timestamp,
});

/** A late on-call answer reached a thread (issue 32): its cards were edited; `remind` as an open's. */
export const onCallFoundEventSchema = z.object({
  type: z.literal('oncall_found'),
  triggerKey: nonEmpty,
  openId: nonEmpty,
  remind: z.object({ at: timestamp, cards: unchecked<Record<string, OnCallView>>() }, { error: 'must be an object' }).optional(),
  at: timestamp,
});

/** `@reprise postmortem` in a thread (issue 21 item 5): a draft was asked for (the chat event, applied once). */
export const postmortemEventSchema = humanActionSchema.extend({
  type: z.literal('postmortem'),
  openId: nonEmpty,
});

/**
 * A model's answer to a thread question came back (issue 21 item 3): what it cost, counted in the
 * day's token budget like an investigation's (`failed`: the call did not answer; its tokens, if any).
 */
export const questionAnsweredEventSchema = z.object({
  type: z.literal('question_answered'),
  triggerKey: nonEmpty,
  openId: nonEmpty,
  status: oneOf(['answered', 'failed']),
  model: nonEmpty.optional(),
  calls: counter,
  tokensIn: counter,
  tokensOut: counter,
  /** Unset when the model has no price configured. Typed, not checked. */
  costUsd: unchecked<number>().optional(),
  at: timestamp,
});

export const findingStatusSchema = oneOf(['completed', 'exhausted', 'failed', 'skipped', 'cancelled', 'degraded']);
export type FindingStatus = z.infer<typeof findingStatusSchema>;

/**
 * What an investigation (or a recall's confirm and verify) concluded for an open (SPEC §7):
 * kept with the open. A verified recall (`kind: recall` with its entry) is what counts the open
 * as a recall of that entry when a model decides recall.
 */
export const findingEventSchema = z.object({
  type: z.literal('finding'),
  openId: nonEmpty,
  fingerprint: nonEmpty,
  triggerKey: nonEmpty,
  kind: openKindSchema,
  status: findingStatusSchema,
  /** The recalled entry (recall). */
  entry: nonEmpty.optional(),
  /** Typed, not checked. */
  confidence: unchecked<number>().optional(),
  verdict: verdictSchema.optional(),
  /** Typed, not checked. */
  summary: unchecked<string>().optional(),
  /** Typed, not checked. */
  topCause: unchecked<string>().optional(),
  /** What was checked (tools), one line each: the next run's "what was checked then". Typed, not checked. */
  checked: unchecked<string[]>().optional(),
  /** Why it is not `completed`. Typed, not checked. */
  reason: unchecked<string>().optional(),
  calls: counter,
  tokensIn: counter,
  tokensOut: counter,
  /** Typed, not checked. */
  costUsd: unchecked<number>().optional(),
  /** The job was resumed after a restart or a change of leader. */
  resumed: boolean.optional(),
  at: timestamp,
});
export type FindingEvent = z.infer<typeof findingEventSchema>;

/** What noise control did with an alert (issue 12), recorded with its reason so a replay agrees. */
export const noiseActionSchema = oneOf(['hold', 'release', 'drop', 'flush', 'mark', 'am_silence', 'admit']);

/**
 * A hold (debounce), its release, a drop (policy, silence, cooldown, a resolve inside the
 * debounce window, a re-notification), a storm batch closing (`flush`), a thread marked from
 * Alertmanager's state (`mark`), the outcome of an Alertmanager silence a 🔕 asked for, or — while
 * the fingerprint dedup window is on — an alert admitted (`admit`, `reason` its status), which the
 * window measures from. Nothing noise control decides goes unrecorded.
 */
export const noiseEventSchema = z
  .object({
    type: z.literal('noise'),
    action: noiseActionSchema,
    fingerprint: nonEmpty,
    triggerKey: nonEmpty,
    /** Short code: debounce, policy, silence, cooldown, renotification, coalesce, am_silenced, am_inhibited, am_gone. */
    reason: nonEmpty,
    /** One sentence for people. */
    detail: anyString,
    /** hold / release / drop of a held firing. */
    holdId: nonEmpty.optional(),
    /** hold: when the firing is released unless its resolve comes first. */
    until: timestamp.optional(),
    /** hold: the held incident, replayed into the loop after a restart. */
    incident: objectOf<Record<string, unknown>>().optional(),
    /** hold: the webhook's routing hint (checked to be an object). */
    route: objectOf<Record<string, string>>().optional(),
    /** flush / mark / am_silence: the thread (its open id). */
    openId: nonEmpty.optional(),
    /** am_silence: the silence event's `alertmanager.requestId` this is the outcome of. */
    requestId: nonEmpty.optional(),
    at: timestamp,
  })
  .superRefine((e, ctx) => {
    if (e.action === 'hold' && (e.holdId === undefined || e.until === undefined || e.incident === undefined))
      ctx.addIssue({ code: 'custom', message: 'a hold needs holdId, until and incident' });
  });
export type NoiseEvent = z.infer<typeof noiseEventSchema>;

/** File-time curation outcomes of a Finding (SPEC §10): a closed set. */
export type CurationDecision = 'recalled' | 'below_bar' | 'duplicate_entry' | 'duplicate_pr' | 'suppressed' | 'novel';
/** Where an operator note went: a comment on the finding's open KB PR, or a new Concept PR. */
export type NoteFiling = 'pr_comment' | 'concept_pr';
/** The forge refused an item for good (credentials, permissions, validation); `detail` says why. */
export type CurationFailure = 'failed';
/**
 * Where a human fix went: a new Incident entry PR, or a comment on the trigger's open draft
 * (`pr_comment`); a PR editing the catalog's existing entry (`amend_pr`), or an edit of the
 * entry on the PR already open for it (`pr_update`) — a cause note goes the same two ways.
 */
export type FixFiling = 'fix_pr' | 'postmortem_pr' | 'amend_pr' | 'pr_update';

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
  /** Who said the cause: the person of the `cause:` note, or (`model`, may be empty) the verified finding standing for the trigger. */
  causeBy?: { name: string; via: string } | { model: string };
  /** 👎'd answers and notes that say something did not work. */
  triedAndFailed: string[];
  /** The trigger's fixes (this one included) with how often each worked: what orders an entry's "What has fixed it". */
  outcomes?: FixOutcome[];
}

/** One human fix of a trigger as the outcome ledger counts it (issue 31 item 2). */
export interface FixOutcome {
  /** The person's words. */
  text: string;
  /** Display name and surface of whoever said it first. */
  name: string;
  via: string;
  /** When it was first said. */
  at: string;
  /** Episodes it ended whose alert did not come back within a day. */
  held: number;
  /** Episodes it ended whose alert came back within a day. */
  cameBack: number;
  /** Episodes too recent (or still firing) to say. */
  pending: number;
}

/** What a postmortem draft is written from (issue 21 item 5), gathered when it was asked for. */
export interface PostmortemMaterial {
  /** Ledger user of whoever asked. */
  user: string;
  at: string;
  triggerKey: string;
  alert: OpenAlert;
  /** When Reprise opened it and heard it resolved (ledger time). */
  openedAt?: string;
  resolvedAt?: string;
  /** The alert's own start and end (a group's earliest and latest): what the durations count. */
  startsAt?: string;
  endsAt?: string;
  /** Who acknowledged this episode, in order. */
  acks?: Array<{ user: string; at: string }>;
  cause?: string;
  /** The thread's notes and fixes, oldest first. */
  said: Array<{ kind: 'note' | 'fix'; user: string; text: string; at: string }>;
  triedAndFailed: string[];
}

const curateSubjectSchema = oneOf(['finding', 'note', 'fix', 'postmortem']);

/**
 * Intent to file something on the forge (SPEC §10): recorded with what it is about, performed
 * afterwards by the curation worker (retried across restarts), settled by `curated`. The draft
 * and the note are checked to be objects, for their subject only.
 */
export const curateEventSchema = z
  .object({
    type: z.literal('curate'),
    id: nonEmpty,
    subject: curateSubjectSchema,
    openId: nonEmpty,
    triggerKey: nonEmpty,
    dupFingerprint: anyString,
    /** subject finding: the material of the draft. */
    draft: unchecked<DraftMaterial>().optional(),
    /** subject fix: the human's fix and the incident it ends, as recorded when it was said. */
    fix: unchecked<FixMaterial>().optional(),
    /** subject postmortem: the incident's record as it stood when the draft was asked for. */
    postmortem: unchecked<PostmortemMaterial>().optional(),
    /** subject note: who wrote what, and the finding it was written on. */
    note: unchecked<{ user: string; name: string; via: string; text: string; finding?: string }>().optional(),
    at: timestamp,
  })
  .superRefine((e, ctx) => {
    if (e.subject === 'finding' && !isObject(e.draft)) ctx.addIssue({ code: 'custom', path: ['draft'], message: 'must be an object' });
    if (e.subject === 'note' && !isObject(e.note)) ctx.addIssue({ code: 'custom', path: ['note'], message: 'must be an object' });
    if (e.subject === 'fix' && !isObject(e.fix)) ctx.addIssue({ code: 'custom', path: ['fix'], message: 'must be an object' });
    if (e.subject === 'postmortem' && !isObject(e.postmortem)) ctx.addIssue({ code: 'custom', path: ['postmortem'], message: 'must be an object' });
  });
export type CurateEvent = z.infer<typeof curateEventSchema>;

const CURATED_DECISIONS = [
  'recalled',
  'below_bar',
  'duplicate_entry',
  'duplicate_pr',
  'suppressed',
  'novel',
  'pr_comment',
  'concept_pr',
  'fix_pr',
  'postmortem_pr',
  'amend_pr',
  'pr_update',
  'failed',
] as const satisfies ReadonlyArray<CurationDecision | NoteFiling | FixFiling | CurationFailure>;

/** A curation decision or a note's filing, with where it went; settles the `curate` intent `id`. */
export const curatedEventSchema = z.object({
  type: z.literal('curated'),
  /** The intent settled (absent for decisions made at file time without the forge). */
  id: nonEmpty.optional(),
  subject: curateSubjectSchema,
  openId: nonEmpty,
  triggerKey: nonEmpty,
  decision: oneOf(CURATED_DECISIONS),
  /** Which criterion (below_bar), which entry (duplicate_entry), why (failed). */
  detail: nonEmpty.optional(),
  url: nonEmpty.optional(),
  number: z.number({ error: 'must be an integer' }).int({ error: 'must be an integer' }).optional(),
  at: timestamp,
});
export type CuratedEvent = z.infer<typeof curatedEventSchema>;

/**
 * Someone is on it (SPEC §8 Acknowledgement, issue 21): 👀, the card's "On it" button, `ack` in
 * the thread or the CLI, or PagerDuty's `incident.acknowledged`. Never silences, never a vote.
 */
export const ackEventSchema = humanActionSchema.extend({
  type: z.literal('ack'),
  /** The display name the surface gave (text, never markup). */
  name: nonEmpty.optional(),
  /** Acknowledge the PagerDuty incident too: performed after this is durable, re-tried after a restart until its outcome is recorded. */
  pagerduty: z.object({ requestId: nonEmpty, incidentId: nonEmpty }, { error: 'must be an object' }).optional(),
});
export type AckEvent = z.infer<typeof ackEventSchema>;

/** One attempt of a PagerDuty REST call an ack asked for: `retry` keeps it pending, `done` / `failed` settle it. */
export const pagerDutyCallEventSchema = z.object({
  type: z.literal('pagerduty_call'),
  requestId: nonEmpty,
  incidentId: nonEmpty,
  action: oneOf(['acknowledge']),
  outcome: oneOf(['done', 'retry', 'failed']),
  attempt: counter,
  detail: nonEmpty.optional(),
  openId: nonEmpty.optional(),
  at: timestamp,
});
export type PagerDutyCallEvent = z.infer<typeof pagerDutyCallEventSchema>;

/** Every ledger event: one schema per `type`. Check with it (`ledgerEventProblem`); keep the value read. */
export const ledgerEventSchema = z.discriminatedUnion('type', [
  openEventSchema,
  resolveEventSchema,
  feedbackEventSchema,
  silenceEventSchema,
  confirmEventSchema,
  deliveredEventSchema,
  outboxEventSchema,
  outboxFailedEventSchema,
  noteEventSchema,
  findingEventSchema,
  noiseEventSchema,
  curateEventSchema,
  curatedEventSchema,
  fixEventSchema,
  questionEventSchema,
  questionAnsweredEventSchema,
  postmortemEventSchema,
  ackEventSchema,
  pagerDutyCallEventSchema,
  refusalEventSchema,
  onCallReminderEventSchema,
  onCallFoundEventSchema,
]);
export type LedgerEvent = z.infer<typeof ledgerEventSchema>;
export type LedgerEventType = LedgerEvent['type'];
export const LEDGER_EVENT_TYPES: readonly LedgerEventType[] = ledgerEventSchema.options.map((o) => o.shape.type.value);
