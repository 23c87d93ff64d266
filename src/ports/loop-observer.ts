/**
 * What the loop reports as it works, for metrics: typed, bounded values only — never alert
 * text, trigger keys, fingerprints or entry ids, so an implementation can turn each field into
 * a label without exploding cardinality. The shell backs it with prom-client (src/http); the
 * core only calls it. An implementation must not throw.
 */
import type { InvestigationStatus, StatusReason } from '../core/investigate/investigation-types.js';
import type { OutboxOp } from '../core/ledger-events.js';
import type { AnswerKind, GateName } from '../core/types.js';

/** A firing's recall, once settled: at intake without a model, after the model's match gate with one. */
export interface RecallDecision {
  /** What the thread leads with: an instant recall, else a runbook, else nothing. */
  answer: AnswerKind | 'none';
  /**
   * When no instant recall was given: the gate that stopped the best instant candidate
   * (`structural` = none agreed with the incident's resource). Null when one was given.
   */
  stoppedBy: GateName | null;
}

/** Why an investigation of an incident ended as it did (the engine's codes, plus the scheduler's). */
export type InvestigationEndReason = StatusReason | 'none' | 'resolved' | 'rate_limit' | 'too_old';

export interface InvestigationEnd {
  status: InvestigationStatus;
  reason: InvestigationEndReason;
}

export type DeliveryOp = OutboxOp;

/** One outbox delivery attempt that ended: sent, to be retried, or given up (and why). */
export type DeliveryEnd =
  | { transport: string; op: DeliveryOp; outcome: 'delivered' | 'retry' }
  | { transport: string; op: DeliveryOp; outcome: 'failed'; reason: 'refused' | 'expired' | 'orphaned' };

export interface LoopObserver {
  recallDecided(d: RecallDecision): void;
  /** An incident's investigation recorded its finding (completed, degraded, skipped, cancelled…). */
  investigationEnded(e: InvestigationEnd): void;
  deliveryEnded(d: DeliveryEnd): void;
  /** A duplicate of a recorded message was deleted from a surface (a send that went out after its process lost the lead). */
  duplicateRemoved?(d: { transport: string }): void;
  /** A thread's first ack, `seconds` after its alert fired (time to acknowledge). */
  acknowledged?(seconds: number): void;
}
