/**
 * The compact gate trace an open records (issue 23): enough to answer "why didn't it recall?"
 * on the memory view long after the recall ran — the answer shown, the gate that stopped the
 * best instant candidate, the best candidates with their scores, the margin between the first
 * two, and the gates' refusals — bounded so an open stays small.
 */
import type { OpenTrace } from '../ledger-events.js';
import { recallDecision } from './recall-decision.js';
import type { RecallResult } from './recall.js';

/** Candidates kept. */
export const TRACE_CANDIDATES = 5;
/** Refusals kept. */
export const TRACE_STEPS = 8;
/** Longest reason kept (characters). */
const REASON_CHARS = 200;

const round = (n: number): number => Math.round(n * 1000) / 1000;
const cut = (s: string): string => (s.length > REASON_CHARS ? `${s.slice(0, REASON_CHARS)}…` : s);

/**
 * The trace of `recalled` (the local recall); `shown` is what the thread leads with (with a
 * model the instant part is the model's to decide, `model` says so).
 */
export function openTrace(recalled: RecallResult, shown: RecallResult, model: boolean): OpenTrace {
  const decision = recallDecision(recalled);
  const [first, second] = recalled.scored;
  const refusals = recalled.trace.filter((t) => !t.passed).slice(0, TRACE_STEPS);
  return {
    answer: shown.answer?.kind ?? 'none',
    ...(decision.stoppedBy ? { stoppedBy: decision.stoppedBy } : {}),
    ...(model ? { model: true } : {}),
    ...(first && second ? { margin: round(first.score - second.score) } : {}),
    candidates: recalled.scored.slice(0, TRACE_CANDIDATES).map((c) => ({ entry: c.entry.id, score: round(c.score) })),
    ...(recalled.nearMiss ? { nearMiss: { entry: recalled.nearMiss.entry, gate: recalled.nearMiss.gate, reason: cut(recalled.nearMiss.reason) } } : {}),
    ...(refusals.length > 0
      ? {
          steps: refusals.map((t) => ({
            gate: t.gate,
            entry: t.entry,
            value: typeof t.value === 'number' ? round(t.value) : t.value,
            threshold: typeof t.threshold === 'number' ? round(t.threshold) : t.threshold,
            reason: cut(t.reason),
          })),
        }
      : {}),
  };
}
