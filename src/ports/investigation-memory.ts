/**
 * What an investigation may remember, behind ports the bot backs with its ledger: earlier
 * Findings, the trigger's recurrence, and the day's token spend.
 */
import type { Incident } from '../core/types.js';
import type { Verdict } from '../core/verdict.js';

/** A Finding as kept for later runs: what was concluded, and what was checked then. */
export interface PriorFinding {
  triggerKey: string;
  at: string;
  summary: string;
  verdict: Verdict;
  confidence: number;
  topCause?: string;
  /** Tools called then, with a one-line result each. */
  checked: readonly string[];
  entry?: string;
}

/** Earlier Findings: same trigger first, then similar incidents. */
export interface FindingStore {
  /** Newest first. */
  forTrigger(triggerKey: string, limit: number): Promise<PriorFinding[]>;
  /** Findings of other triggers whose text resembles `text`, best first. */
  similar(text: string, limit: number, excludeTrigger?: string): Promise<PriorFinding[]>;
  /** Keeps a Finding for later runs. */
  add(finding: PriorFinding): Promise<void>;
}

/** How often a trigger fired and what was concluded before (SPEC §8 Occurrences). */
export interface RecurrenceFacts {
  triggerKey: string;
  count: number;
  lastSeen?: string;
  /** Catalog entry the previous answer came from. */
  previousEntry?: string;
}

export type RecurrenceSource = (incident: Incident) => Promise<RecurrenceFacts | undefined>;

/** The day's token spend across investigations (SPEC §7 daily budget). Days are UTC `YYYY-MM-DD`. */
export interface TokenMeter {
  spent(day: string): Promise<number>;
  add(day: string, tokens: number): Promise<void>;
}
