/**
 * Ledger event kinds (SPEC §8). The ledger is append-only; every read model is derived from
 * these events, incrementally, and can be rebuilt by replaying them.
 */
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
  at: string;
}
export interface ResolveEvent {
  type: 'resolve';
  fingerprint: string;
  /** When the source says the alert ended (Alertmanager `endsAt`), if it said. */
  endsAt?: string;
  at: string;
}
export interface FeedbackEvent {
  type: 'feedback';
  triggerKey: string;
  user: string;
  vote: 'up' | 'down' | 'clear';
  /** Where it came from: `cli`, `slack`, `matrix`, … */
  via?: string;
  at: string;
}
export interface SilenceEvent {
  type: 'silence';
  triggerKey: string;
  user: string;
  until: string;
  via?: string;
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
  /** The open (its `id`) the message belongs to. */
  openId: string;
  fingerprint: string;
  transport: string;
  /** The surface's reference of the thread root (console thread id, Slack ts, Matrix event id). */
  messageRef: string;
  at: string;
}

export type LedgerEvent = OpenEvent | ResolveEvent | FeedbackEvent | SilenceEvent | ConfirmEvent | DeliveredEvent;
export type LedgerEventType = LedgerEvent['type'];
export const LEDGER_EVENT_TYPES: readonly LedgerEventType[] = ['open', 'resolve', 'feedback', 'silence', 'confirm', 'delivered'];
