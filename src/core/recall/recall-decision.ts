/**
 * A recall reduced to what metrics may count (ports/loop-observer): the answer kind the thread
 * leads with and, when no instant recall was given, the gate that stopped the best instant
 * candidate — read from the gate trace, so "why didn't it recall?" has a countable answer too.
 */
import type { RecallDecision } from '../../ports/loop-observer.js';
import type { AnswerKind, GateName, GateTraceStep } from '../types.js';
import type { RecallResult } from './recall.js';

/** The gates that can stop an instant candidate once it agreed structurally. */
const DECIDING: ReadonlySet<GateName> = new Set(['margin', 'outcome', 'rerank', 'confirm', 'verify']);

/**
 * The first deciding gate that refused one of `entries` in `trace`: the one that stopped the
 * best candidate. (After an outcome refusal recall tries the runner-up, which may fail the
 * margin gate; the answer to "why not the best one?" is still the outcome gate.)
 */
export function stoppingGate(trace: readonly GateTraceStep[], entries: ReadonlySet<string>, fallback: GateName): GateName {
  const s = trace.find((t) => !t.passed && DECIDING.has(t.gate) && (t.entry === null || entries.has(t.entry)));
  return s ? s.gate : fallback;
}

/** Recall decided alone (the margin gate, no model). */
export function recallDecision(r: RecallResult): RecallDecision {
  const answer: AnswerKind | 'none' = r.answer?.kind ?? 'none';
  if (r.instant) return { answer, stoppedBy: null };
  const ids = new Set(r.instantCandidates.map((c) => c.entry.id));
  return { answer, stoppedBy: ids.size === 0 ? 'structural' : stoppingGate(r.trace, ids, 'margin') };
}

/** With a model: the instant part settled by the model's match gate (rerank, outcome, confirm, verify). */
export function modelRecallDecision(o: { delivered: boolean; runbook: boolean; stoppedBy: GateName }): RecallDecision {
  if (o.delivered) return { answer: 'incident', stoppedBy: null };
  return { answer: o.runbook ? 'runbook' : 'none', stoppedBy: o.stoppedBy };
}
