/**
 * What recall decided for one incident, as `reprise recall --json` prints it and `reprise mcp`'s
 * `recall` tool returns it: the answer, the near miss, the top of the ranking and the full gate
 * trace. One shape for both, so an agent and an operator read the same decision.
 */
import type { Answer, GateTraceStep, Incident, NearMiss } from '../types.js';
import type { RecallResult } from './recall.js';

/** Ranked candidate ids kept in the report: the ones a reader compares the answer against. */
export const REPORT_RANKED = 5;

export interface RecallReport {
  triggerKey: string;
  fingerprint: string;
  status: Incident['status'];
  answer: Answer | null;
  nearMiss: NearMiss | null;
  ranked: string[];
  trace: GateTraceStep[];
}

export function recallReport(incident: Incident, r: RecallResult): RecallReport {
  return {
    triggerKey: incident.triggerKey,
    fingerprint: incident.fingerprint,
    status: incident.status,
    answer: r.answer,
    nearMiss: r.nearMiss,
    ranked: r.ranked.slice(0, REPORT_RANKED),
    trace: r.trace,
  };
}
