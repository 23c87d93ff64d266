/**
 * The investigation engine's public types: what the bot passes in (deps, options, request)
 * and what it gets back (the result with its status, Finding, Steps and cost).
 */
import type { Clock } from '../../ports/clock.js';
import type { Logger } from '../../ports/logger.js';
import type { ModelSet } from '../../ports/model.js';
import type { FindingStore, RecurrenceSource, TokenMeter } from '../../ports/investigation-memory.js';
import type { ToolProvider } from '../../ports/tools.js';
import type { CatalogSnapshot } from '../recall/catalog-snapshot.js';
import type { Entry, GateTraceStep, Incident } from '../types.js';
import type { DegradedAnswer } from './answers.js';
import type { BreachReason } from './budget.js';
import type { Finding, InvestigatorVersion } from './finding.js';
import type { PriceTable, UsageTally } from './model-call.js';
import type { StandingAnswer } from './prompts.js';
import type { ScopeRule } from './scope.js';
import type { Step } from './step.js';
import type { VerifyOutcome } from './verify.js';

export const INVESTIGATION_STATUSES = ['completed', 'exhausted', 'failed', 'skipped', 'cancelled', 'degraded'] as const;
export type InvestigationStatus = (typeof INVESTIGATION_STATUSES)[number];
export type StatusReason = BreachReason | 'model_error' | 'malformed' | 'no_usage' | 'cancelled' | 'internal';

/** Every number the engine enforces (config `model.*` and `tools.*`). */
export interface InvestigatorOptions {
  maxSteps: number;
  maxTokens: number;
  wallTimeMs: number;
  /** Unset = no daily budget. */
  dailyTokenBudget?: number;
  maxConcurrent: number;
  maxOutputTokens: number;
  stepCapBytes: number;
  tools: {
    allow: readonly string[];
    scope: readonly ScopeRule[];
    callTimeoutMs: number;
    resultCapBytes: number;
    /** 1–2 tool names run to confirm an instant recall. */
    confirm: readonly string[];
    /** Bytes of confirm (or investigation) output the reviewer sees in all. */
    reviewCapBytes: number;
  };
  /** Cap on a recall whose confirm could not run (`recall.unconfirmed_cap`). */
  unconfirmedCap: number;
  prices: PriceTable;
  /** Secret values to mask in Steps (API keys, tokens). */
  secrets: readonly string[];
}

export interface InvestigatorDeps {
  models: ModelSet;
  /** Long-lived tool servers (MCP); the built-ins are added per run. */
  tools: readonly ToolProvider[];
  /** The current catalog (it is swapped whole on reload). */
  catalog: () => CatalogSnapshot;
  findings: FindingStore;
  recurrence?: RecurrenceSource;
  meter: TokenMeter;
  clock: Clock;
  logger: Logger;
  options: InvestigatorOptions;
}

/** An instant recall to confirm and verify before it is trusted. */
export interface RecalledCandidate {
  entry: Entry;
  confidence: number;
}

export interface InvestigationRequest {
  incident: Incident;
  /** An instant recall (after rerank or the margin gate): confirm → verify → deliver, or fall through. */
  recall?: RecalledCandidate;
  /** The trigger's standing answer on a recurrence, quoted as data. */
  standing?: StandingAnswer;
  /** A storm thread (issue 12): the workloads of every alert coalesced with this one, quoted as data. */
  storm?: string[];
  /** Cancels the run (e.g. the alert resolved); waiting in the queue counts too. */
  signal?: AbortSignal;
  /** Run id (default: a random UUID). */
  id?: string;
}

export interface RecallOutcome {
  entry: string;
  /** After the confirm cap and the verify review. */
  confidence: number;
  confirmed: boolean;
  verify: VerifyOutcome | null;
  /** True when the recalled answer is the result; false when it fell through. */
  delivered: boolean;
}

export interface InvestigationResult {
  id: string;
  status: InvestigationStatus;
  /** Why it is not `completed` (always set then). */
  reason?: StatusReason;
  /** One sentence for people. */
  detail: string;
  kind: 'recall' | 'fresh';
  /** Present for completed and exhausted runs (partial when exhausted). */
  finding: Finding | null;
  recall?: RecallOutcome;
  /** Fresh-path verify (augments only). */
  verify?: VerifyOutcome;
  /** For degraded runs: recurrence facts and the closest catalog entries, marked as such. */
  degraded?: DegradedAnswer;
  /** confirm and verify decisions, in recall's gate-trace vocabulary. */
  trace: GateTraceStep[];
  usage: UsageTally;
  steps: Step[];
  version: InvestigatorVersion;
  startedAt: string;
  endedAt: string;
  /** Time spent waiting for a concurrency slot. */
  queuedMs: number;
}
