/**
 * The shape of the memory view's read model (what `/ui` shows; folded by ledger-view.ts): a
 * leaf, so the ledger's state type and the fold both name it without importing each other.
 */
import type { OpenTrace } from '../ledger-events.js';
import type { AnswerKind } from '../types.js';

/** How an open was answered, as the overview counts it. */
export type AnswerClass = 'instant' | 'runbook' | 'investigation' | 'degraded';

/** What one UTC day adds up to. */
export interface ViewDay {
  /** Opens answered by an instant recall (the model's verified recalls included). */
  instant: number;
  /** Of those, recalled with no model at all: what the avoided tokens are estimated from. */
  instantNoModel: number;
  runbook: number;
  investigation: number;
  degraded: number;
  /** Firings a 🔕 kept quiet (no message, no open). */
  silenced: number;
  modelCalls: number;
  tokens: number;
  /** Fresh investigations that called the model, and their tokens: the mean an avoided one is worth. */
  investigations: number;
  investigationTokens: number;
  /** First acks of threads that day, and a sample of their delays (s). */
  acks: number;
  ackSeconds: number[];
  /** Episodes resolved that day, and a sample of their durations (s, from the firing's start). */
  resolves: number;
  resolveSeconds: number[];
  /** Live 👍/👎 on instant recalls opened that day. */
  recalledUp: number;
  recalledDown: number;
}

/** One open as the incidents pages show it. */
export interface ViewIncident {
  openId: string;
  triggerKey: string;
  fingerprint: string;
  at: string;
  cls: AnswerClass;
  entry?: string;
  answerKind?: AnswerKind;
  alertname?: string;
  title?: string;
  source?: string;
  /** The storm thread it joined. */
  threadOf?: string;
  trace?: OpenTrace;
  resolvedAt?: string;
  findingStatus?: string;
  calls: number;
  tokens: number;
  /** Live votes cast in its thread, by user. */
  votes?: Record<string, 'up' | 'down'>;
  /** KB pull requests its curation filed or commented on. */
  prs?: string[];
}

/** `[week (Monday, YYYY-MM-DD), answers, resolves, 👍, 👎]`. */
export type ViewWeek = [string, number, number, number, number];

export interface ViewEntry {
  lastRecalled?: string;
  /** Opens it answered, newest last. */
  opens: string[];
  weeks: ViewWeek[];
}

export interface ViewTrigger {
  opens: number;
  /** Opens that showed an answer (instant or runbook). */
  answered: number;
  firstAt: string;
  lastAt: string;
  alertname?: string;
  /** Near misses by the gate that stopped them. */
  nearMiss: Record<string, number>;
}

export interface ViewCuration {
  at: string;
  subject: string;
  decision: string;
  triggerKey: string;
  openId: string;
  url?: string;
  number?: number;
  detail?: string;
}

export interface MemoryViewState {
  days: Record<string, ViewDay>;
  incidents: Record<string, ViewIncident>;
  /** Open ids in the order they were recorded (eviction and the newest-first listing read it, never a `for…in`). */
  incidentOrder: string[];
  entries: Record<string, ViewEntry>;
  triggers: Record<string, ViewTrigger>;
  /** Trigger keys in the order they were first seen. */
  triggerOrder: string[];
  /** Newest curation decisions, oldest first. */
  curation: ViewCuration[];
  decisions: Record<string, number>;
  /** KB PRs filed (a new draft, a fix, a postmortem, a concept), by URL, oldest first. */
  prs: Record<string, ViewCuration>;
  prOrder: string[];
}
