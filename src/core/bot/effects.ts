/**
 * What a decision asks for beyond its ledger events — run only once those are durable, and never
 * awaited by whoever handed the loop its intent (a webhook, a chat surface, the Redis inbox): a
 * model call, an Alertmanager call or a forge write can take minutes, and intake must not wait.
 * Messages to chat are ledger events themselves (outbox items), so their only effect is waking
 * the outbox worker.
 */
import type { Actor, ResponseTarget } from '../chat/chat-types.js';
import type { InvestigationEnd, RecallDecision } from '../../ports/loop-observer.js';
import type { ChatMessage } from '../../ports/model.js';

/** A job as the bot hands it to the scheduler. */
export interface JobRequest {
  openId: string;
  incident: import('../types.js').Incident;
  candidates: import('../types.js').Candidate[];
  standing?: import('../investigate/prompts.js').StandingAnswer;
  storm?: () => string[];
  /** When its open was recorded: a wait counts from then (a resumed job waits only what is left). */
  openedAt?: string;
  /** A runbook answer is on the thread: what it leads with when the model's match gate misses. */
  runbook?: boolean;
}

/** A recorded 🔕 that asked for Alertmanager too (its silence event's `alertmanager`, with the end). */
export interface AmSilenceRequest {
  requestId: string;
  openId: string;
  until: string;
  who: string;
  via?: string;
}

/** What the `ask_question` effect sends: built in decide, so the effect only calls. */
export interface QuestionAsk {
  openId: string;
  triggerKey: string;
  transport: string;
  messages: ChatMessage[];
}

/** One attempt of the acknowledge call an ack asked for. */
export interface PagerDutyAckRequest {
  requestId: string;
  incidentId: string;
  openId?: string;
  /** 1 for the first attempt. */
  attempt: number;
  /** A wait the server asked for before this attempt (429 Retry-After). */
  retryAfterMs?: number;
}

/** What a `resume` started, counted as its effects run (its outcome is this object). */
export interface ResumeTally {
  investigations: number;
  amSilences: number;
}

export type Effect =
  /** Start the model's part for an open (rerank, confirm, verify, investigate). */
  | { type: 'investigate'; job: JobRequest }
  /** The incident resolved: a queued investigation for it is cancelled. */
  | { type: 'cancel_investigation'; fingerprint: string }
  /** A job an earlier run left without a finding: started again once, or recorded as not resumed. */
  | { type: 'resume_investigation'; job: JobRequest & { openedAt: string }; resolved: boolean; tally?: ResumeTally }
  /** `/reprise investigate <text>`: run in the background, answered through the outbox. */
  | { type: 'investigate_text'; text: string; actor: Actor; replyTo: ResponseTarget }
  /** `/reprise oncall [route]`: who is on call, looked up in the background and answered as the command's `eventId`. */
  | { type: 'oncall_text'; route?: string; actor: Actor; replyTo: ResponseTarget; eventId: string }
  /** The Alertmanager silence a 🔕 asked for. */
  | { type: 'am_silence'; req: AmSilenceRequest; tally?: ResumeTally }
  /** A thread question a model answers: one budgeted call, its answer handed back as `question_answered`. */
  | { type: 'ask_question'; ask: QuestionAsk }
  /** Forge work was recorded: wake the curation worker. */
  | { type: 'curate' }
  /** A recall decision settled (metrics). */
  | { type: 'recall_decided'; decision: RecallDecision }
  /** An investigation ended (metrics). */
  | { type: 'investigation_ended'; end: InvestigationEnd }
  /** A thread's first ack, this long after it fired (metrics). */
  | { type: 'acknowledged'; seconds: number }
  /** Acknowledge a PagerDuty incident (one attempt; its outcome comes back as an intent). */
  | { type: 'pagerduty_ack'; req: PagerDutyAckRequest };
