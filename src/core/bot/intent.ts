/**
 * Everything the loop is told, as one union (SPEC §3): what an alert source sent (firings and
 * resolves), what a person meant (votes, silences, notes, commands — from a chat surface or the
 * CLI), what time brought (a tick, Alertmanager's list of alerts, a restart to resume from), and
 * what the loop's own background work came back with (an investigation's finding, a forge
 * filing, an Alertmanager silence, an answer to a command). `RepriseBot.handle` decides each
 * in one ledger transaction, then runs the effects.
 */
import type { ChatIntent, ResponseTarget } from '../chat/chat-types.js';
import type { EphemeralView } from '../chat/thread-view.js';
import type { Incident } from '../types.js';
import type { AlertmanagerAlertState } from './alertmanager-reconcile.js';
import type { AmSilenceOutcome } from './alertmanager-flow.js';
import type { CurationResult } from './curation-flow.js';
import type { InvestigationEnded } from './finding-flow.js';
import type { QuestionAnswered } from './question-flow.js';
import type { RouteHint } from './routing.js';
import type { PagerDutyCallOutcome } from './pagerduty-flow.js';
import type { RoutedOnCall } from '../oncall/oncall-view.js';
import type { OnCallAnswer } from '../../ports/oncall.js';

export type { ChatIntent } from '../chat/chat-types.js';

/** What a person asked for from the CLI or the control socket: a chat intent without a surface event. */
export type CliIntent = {
  [K in 'vote' | 'silence' | 'note' | 'ack' | 'fixed' | 'postmortem']: Omit<Extract<ChatIntent, { type: K }>, 'eventId'> & { eventId?: undefined };
}['vote' | 'silence' | 'note' | 'ack' | 'fixed' | 'postmortem'];

export type Intent =
  /** `onCall`: who is on call for it, looked up (within its budget) before the decision, critical firings only. */
  | { type: 'firing'; incident: Incident; route?: RouteHint; onCall?: RoutedOnCall }
  | { type: 'resolve'; incident: Incident }
  | ChatIntent
  | CliIntent
  /** Held firings whose debounce lapsed are released, storm batches whose window closed are flushed. */
  | { type: 'tick' }
  /**
   * What Alertmanager listed at `listedAt`: threads are marked silenced, inhibited or no longer
   * firing. `seen`: fingerprints it listed before (only those can be "no longer firing").
   */
  | { type: 'reconcile'; alerts: readonly AlertmanagerAlertState[]; listedAt: Date; seen: ReadonlySet<string> }
  /** This process starts leading: work an earlier run left unfinished is taken up again. */
  | { type: 'resume' }
  /** A command's answer that took a while (an on-demand investigation), for the one who asked. */
  | { type: 'answer'; via: string; replyTo: ResponseTarget; view: EphemeralView; eventId?: string }
  | InvestigationEnded
  | CurationResult
  | AmSilenceOutcome
  | QuestionAnswered
  /** What became of one attempt of a PagerDuty call an ack asked for. */
  | PagerDutyCallOutcome
  /** Who is on call, come in after the cards that waited for it were posted (issue 32): they are edited. */
  | { type: 'oncall_answered'; route: string; service?: string; answer: OnCallAnswer };

/** A webhook's incidents as intents. */
export function incidentIntents(incidents: readonly Incident[], route?: RouteHint): Intent[] {
  return incidents.map((incident) =>
    incident.status === 'resolved' ? { type: 'resolve', incident } : { type: 'firing', incident, ...(route ? { route } : {}) },
  );
}

/** An operator note from the CLI or the control socket, on the trigger's newest thread. */
export function noteIntent(req: { triggerKey: string; text: string; user?: string }): CliIntent {
  return { type: 'note', actor: { id: req.user ?? 'cli', via: 'cli' }, text: req.text, target: { triggerKey: req.triggerKey } };
}

/** What fixed it, from the CLI or the control socket, on the trigger's newest thread. */
export function fixedIntent(req: { triggerKey: string; text: string; user?: string }): CliIntent {
  return { type: 'fixed', actor: { id: req.user ?? 'cli', via: 'cli' }, text: req.text, target: { triggerKey: req.triggerKey } };
}

/** An ack from the CLI or the control socket, on the trigger's newest thread. */
export function ackIntent(req: { triggerKey: string; user?: string }): CliIntent {
  return { type: 'ack', actor: { id: req.user ?? 'cli', via: 'cli' }, target: { triggerKey: req.triggerKey } };
}

/** A postmortem draft from the CLI or the control socket, of the trigger's newest thread. */
export function postmortemIntent(req: { triggerKey: string; user?: string }): CliIntent {
  return { type: 'postmortem', actor: { id: req.user ?? 'cli', via: 'cli' }, target: { triggerKey: req.triggerKey } };
}
