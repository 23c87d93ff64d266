/**
 * The loop's series (issue 7 item 3) on prom-client, fed by the core through the
 * {@link LoopObserver} port and the ledger's append listener: recall decisions, investigations,
 * chat deliveries, ledger appends. Every label comes from a closed set; a value outside it is
 * counted as `other`, so nothing an alert or a chat user sends can mint a new series.
 */
import { Counter, Histogram, type Registry } from 'prom-client';
import { LEDGER_EVENT_TYPES, type LedgerEvent } from '../core/ledger-events.js';
import { INVESTIGATION_STATUSES } from '../core/investigate/investigation-types.js';
import type { DeliveryEnd, InvestigationEnd, LoopObserver, RecallDecision } from '../ports/loop-observer.js';

export const RECALL_ANSWERS = ['incident', 'runbook', 'none'] as const;
/** The gates that can stop an instant recall (structural = no candidate agreed). */
export const STOPPING_GATES = ['structural', 'margin', 'outcome', 'rerank', 'confirm', 'verify'] as const;
export const INVESTIGATION_REASONS = [
  'none',
  'max_steps',
  'max_tokens',
  'wall_time',
  'daily_budget',
  'model_error',
  'malformed',
  'no_usage',
  'cancelled',
  'internal',
  'resolved',
  'rate_limit',
  'too_old',
] as const;
export const DELIVERY_OPS = ['post', 'reply', 'update'] as const;
export const DELIVERY_FAILURES = ['refused', 'expired', 'orphaned'] as const;

/** `value` when it is one of `allowed`, else `other`. */
export function bounded(value: string, allowed: readonly string[]): string {
  return allowed.includes(value) ? value : 'other';
}

export interface LoopMetrics extends LoopObserver {
  /** The ledger's append listener: counts what this process wrote, by event type. */
  ledgerAppended(events: readonly LedgerEvent[]): void;
}

/**
 * Registers the loop's series on `registry`. `surfaces` are the chat transports this process
 * runs (their names are the only `surface` values besides `other`); their series start at 0.
 */
export function registerLoopMetrics(registry: Registry, surfaces: readonly string[]): LoopMetrics {
  const decisions = new Counter({
    name: 'reprise_recall_decisions_total',
    help: 'Recall decisions by the answer the thread leads with: incident (instant recall), runbook, none. Settled at intake without a model, after the match gate with one.',
    labelNames: ['answer'] as const,
    registers: [registry],
  });
  const stopped = new Counter({
    name: 'reprise_recall_stopped_total',
    help: 'Recall decisions without an instant recall, by the gate that stopped the best instant candidate (structural = none agreed with the resource).',
    labelNames: ['gate'] as const,
    registers: [registry],
  });
  const investigations = new Counter({
    name: 'reprise_investigations_total',
    help: 'Investigations of incidents by the status of their recorded finding and its reason code.',
    labelNames: ['status', 'reason'] as const,
    registers: [registry],
  });
  const deliveries = new Counter({
    name: 'reprise_chat_deliveries_total',
    help: 'Chat messages delivered by the outbox, by surface and operation (post, reply, update).',
    labelNames: ['surface', 'op'] as const,
    registers: [registry],
  });
  const retries = new Counter({
    name: 'reprise_chat_delivery_retries_total',
    help: 'Chat delivery attempts that failed and will be retried with backoff, by surface.',
    labelNames: ['surface'] as const,
    registers: [registry],
  });
  const failures = new Counter({
    name: 'reprise_chat_delivery_failures_total',
    help: 'Chat messages given up, by surface and reason: refused (the surface said a retry cannot help), expired (outbox.max_age), orphaned (its thread was never delivered).',
    labelNames: ['surface', 'reason'] as const,
    registers: [registry],
  });
  const duplicates = new Counter({
    name: 'reprise_duplicates_removed_total',
    help: 'Duplicate chat messages deleted, by surface: a send that reached the surface after its process lost the lead (docs/operations.md "Exactly once on Slack").',
    labelNames: ['surface'] as const,
    registers: [registry],
  });
  const appended = new Counter({
    name: 'reprise_ledger_appended_total',
    help: 'Ledger events this process appended durably, by event type.',
    labelNames: ['type'] as const,
    registers: [registry],
  });

  // Known series start at 0, so rate() and the dashboard see them before the first event.
  for (const answer of RECALL_ANSWERS) decisions.inc({ answer }, 0);
  for (const gate of STOPPING_GATES) stopped.inc({ gate }, 0);
  for (const type of LEDGER_EVENT_TYPES) appended.inc({ type }, 0);
  const toAck = new Histogram({
    name: 'reprise_time_to_acknowledge_seconds',
    help: 'Seconds from an incident firing to the first person saying they are on it (👀, On it, ack, PagerDuty).',
    buckets: [30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 14400],
    registers: [registry],
  });
  for (const surface of surfaces) {
    for (const op of DELIVERY_OPS) deliveries.inc({ surface, op }, 0);
    retries.inc({ surface }, 0);
    duplicates.inc({ surface }, 0);
    for (const reason of DELIVERY_FAILURES) failures.inc({ surface, reason }, 0);
  }
  const surface = (name: string): string => bounded(name, surfaces);

  return {
    recallDecided(d: RecallDecision): void {
      decisions.inc({ answer: bounded(d.answer, RECALL_ANSWERS) });
      if (d.stoppedBy !== null) stopped.inc({ gate: bounded(d.stoppedBy, STOPPING_GATES) });
    },
    investigationEnded(e: InvestigationEnd): void {
      investigations.inc({ status: bounded(e.status, INVESTIGATION_STATUSES), reason: bounded(e.reason, INVESTIGATION_REASONS) });
    },
    deliveryEnded(d: DeliveryEnd): void {
      const s = surface(d.transport);
      if (d.outcome === 'failed') failures.inc({ surface: s, reason: bounded(d.reason, DELIVERY_FAILURES) });
      else if (d.outcome === 'retry') retries.inc({ surface: s });
      else deliveries.inc({ surface: s, op: bounded(d.op, DELIVERY_OPS) });
    },
    duplicateRemoved(d: { transport: string }): void {
      duplicates.inc({ surface: surface(d.transport) });
    },
    acknowledged(seconds: number): void {
      if (Number.isFinite(seconds) && seconds >= 0) toAck.observe(seconds);
    },
    ledgerAppended(events: readonly LedgerEvent[]): void {
      const counts = new Map<string, number>();
      for (const e of events) {
        const type = bounded(e.type, LEDGER_EVENT_TYPES);
        counts.set(type, (counts.get(type) ?? 0) + 1);
      }
      for (const [type, n] of counts) appended.inc({ type }, n);
    },
  };
}
