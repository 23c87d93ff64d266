/**
 * Ledger event kinds (SPEC §8). The ledger is append-only; every read model is derived from
 * these events, incrementally, and can be rebuilt by replaying them.
 */
export type OpenKind = 'recall' | 'fresh';
export type Verdict = 'action_required' | 'action_suggested' | 'inconclusive' | 'no_action';

export interface OpenEvent {
  type: 'open';
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
  /** Thread the message was posted in, so a resolve can reply into it. */
  threadId?: string;
  /** The source's start time of this firing: a re-notification carries the same one. */
  startsAt?: string;
  at: string;
}
export interface ResolveEvent {
  type: 'resolve';
  fingerprint: string;
  at: string;
}
export interface FeedbackEvent {
  type: 'feedback';
  triggerKey: string;
  user: string;
  vote: 'up' | 'down' | 'clear';
  at: string;
}
export interface SilenceEvent {
  type: 'silence';
  triggerKey: string;
  user: string;
  until: string;
  at: string;
}
export interface ConfirmEvent {
  type: 'confirm';
  entry: string;
  dupFingerprint: string;
  at: string;
}

export type LedgerEvent = OpenEvent | ResolveEvent | FeedbackEvent | SilenceEvent | ConfirmEvent;
