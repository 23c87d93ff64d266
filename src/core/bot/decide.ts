/**
 * `decide(ctx, intent)`: what one intent means — the ledger events it records (through
 * `ctx.tx`, applied at once so the next intent of the same batch sees them) and the effects it
 * asks for (in `ctx.effects`), plus an outcome for whoever handed it in. Pure apart from those:
 * it reads the ledger only through `ctx.read`, the time only as `ctx.now`, and never waits on
 * anything. Every flow of the loop is one case here.
 */
import type { RoutedOnCall } from '../oncall/oncall-view.js';
import { decideOnCallAnswered, remindOnCall } from './oncall-reminder.js';
import type { Incident } from '../types.js';
import { answer, type Ctx } from './bot-context.js';
import { decideAmSilenceOutcome, decideReconcile } from './alertmanager-flow.js';
import type { ChatOutcome } from './bot-context.js';
import { decideNote, decideSilence, decideVote } from './chat-actions.js';
import { decideCommand, type CommandOutcome } from './command-answer.js';
import { decideCuration } from './curation-flow.js';
import { decideAck } from './ack-flow.js';
import { decidePagerDutyCall } from './pagerduty-flow.js';
import type { ResumeTally } from './effects.js';
import { decideInvestigationEnded } from './finding-flow.js';
import { decideFiring, jobFor, type FiringOutcome } from './firing-flow.js';
import { decideFixed } from './fix-flow.js';
import { decideQuestion, decideQuestionAnswered } from './question-flow.js';
import { decidePostmortem } from './postmortem-flow.js';
import type { Intent } from './intent.js';
import { batchDue, NO_NOISE_CONTROL } from './noise-control.js';
import { flushStorm, recordDrop } from './noise-gate.js';
import { decideResolve, type ResolveOutcome } from './resolve-flow.js';

/** Held firings released (and storm batches flushed) per tick. */
const TICK_BATCH = 500;

export type IncidentOutcome = FiringOutcome | ResolveOutcome;

export type BotOutcome =
  | IncidentOutcome
  | ChatOutcome
  | CommandOutcome
  | { status: 'ticked'; released: IncidentOutcome[]; flushed: number }
  | { status: 'reconciled'; marked: number }
  | ({ status: 'resumed' } & ResumeTally)
  | { status: 'answered' }
  | { status: 'recorded'; finding?: string; decision?: string; reason?: string };

export function decide(c: Ctx, intent: Intent): BotOutcome {
  switch (intent.type) {
    case 'firing':
    case 'resolve':
      return decideIncident(
        c,
        intent.incident,
        intent.type === 'firing' ? (intent.route ?? {}) : undefined,
        intent.type === 'firing' ? intent.onCall : undefined,
      );
    case 'vote':
      return decideVote(c, intent);
    case 'silence':
      return decideSilence(c, intent);
    case 'note':
      return decideNote(c, intent);
    case 'fixed':
      return decideFixed(c, intent);
    case 'question':
      return decideQuestion(c, intent);
    case 'postmortem':
      return decidePostmortem(c, intent);
    case 'question_answered':
      return decideQuestionAnswered(c, intent);
    case 'ack':
      return decideAck(c, intent);
    case 'pagerduty_call_result':
      return decidePagerDutyCall(c, intent);
    case 'command':
      return decideCommand(c, intent);
    case 'tick':
      return decideTick(c);
    case 'reconcile':
      return decideReconcile(c, intent.alerts, intent.listedAt, intent.seen);
    case 'resume':
      return decideResume(c);
    case 'oncall_answered':
      return { status: 'recorded', decision: `${decideOnCallAnswered(c, intent)} card(s) told who is on call` };
    case 'answer':
      // A command answered late (`oncall`) is the command's one answer: a re-read of it answered nothing twice.
      if (intent.eventId !== undefined && c.read.seenChatEvent(intent.eventId))
        return { status: 'duplicate', reason: `event ${intent.eventId} was already answered` };
      answer(c, intent.via, intent.replyTo, intent.view, intent.eventId);
      return { status: 'answered' };
    case 'investigation_ended':
      return decideInvestigationEnded(c, intent);
    case 'curation_result':
    case 'curation_retrying':
      return decideCuration(c, intent);
    case 'am_silence_result':
      return decideAmSilenceOutcome(c, intent);
  }
}

/** A firing or a resolve: the trigger policy first (match / ignore rules, the dedup window). */
function decideIncident(c: Ctx, incident: Incident, route: Record<string, string | undefined> | undefined, onCall?: RoutedOnCall): IncidentOutcome {
  const policy = c.d.policy;
  const window = policy?.dedupWindowMs ?? 0;
  const admission = policy?.admit(incident, c.now, window > 0 ? c.read.lastAdmitted(incident.fingerprint, incident.status) : undefined) ?? { admitted: true };
  if (!admission.admitted) {
    c.log.info({ reason: admission.reason, status: incident.status }, 'dropped by trigger policy');
    return recordDrop(c.tx, c.now, incident, 'policy', admission.reason);
  }
  if (window > 0 && incident.fingerprint) {
    // Recorded with the rest of the decision: a write that fails leaves no trace of it.
    c.tx.record({
      type: 'noise',
      action: 'admit',
      fingerprint: incident.fingerprint,
      triggerKey: incident.triggerKey || '(none)',
      reason: incident.status,
      detail: 'admitted; a re-send of it inside the dedup window is dropped',
      at: c.now.toISOString(),
    });
  }
  return route === undefined ? decideResolve(c, incident) : decideFiring(c, incident, route, false, onCall);
}

/**
 * Releases held firings whose debounce has lapsed and closes storm batches whose window has
 * (issue 12). `serve` sends a tick on a timer and at start, so holds recorded before a restart
 * are re-armed from the ledger; tests send one after moving their clock.
 */
function decideTick(c: Ctx): BotOutcome {
  const coalesce = (c.d.noise ?? NO_NOISE_CONTROL).coalesce;
  const due = c.read.dueHolds(c.now, TICK_BATCH);
  const storms = coalesce
    ? c.read
        .unflushedStorms()
        .filter((t) => t.storm && batchDue(t.storm, c.now, coalesce))
        .slice(0, TICK_BATCH)
    : [];
  for (const t of storms) flushStorm(c.tx, c.now, t, c.out);
  remindOnCall(c);
  const released: IncidentOutcome[] = [];
  for (const h of due) {
    const incident = h.incident as unknown as Incident;
    c.tx.record({
      type: 'noise',
      action: 'release',
      fingerprint: h.fingerprint,
      triggerKey: h.triggerKey,
      reason: 'debounce',
      detail: 'no resolve inside the debounce window: the firing goes on',
      holdId: h.holdId,
      at: c.now.toISOString(),
    });
    const log = c.log.child({ incident: h.fingerprint, trigger: h.triggerKey });
    released.push(decideFiring({ ...c, log }, incident, { ...(h.route ?? {}) }, true));
  }
  return { status: 'ticked', released, flushed: storms.length };
}

/**
 * Work an earlier run (a restart, a `kill -9`, a previous leader) left unfinished: the model's
 * jobs whose finding was never recorded, and Alertmanager silences whose outcome was not. Each
 * is taken up again once, by its effect; the outcome counts what was started.
 */
function decideResume(c: Ctx): BotOutcome {
  // The outcome is the tally its effects count into as they start.
  const tally: { status: 'resumed' } & ResumeTally = { status: 'resumed', investigations: 0, amSilences: 0 };
  if (c.d.jobs?.resume) {
    for (const p of c.read.pendingInvestigations()) {
      try {
        const incident = p.incident as unknown as Incident;
        c.effects.push({ type: 'resume_investigation', job: { ...jobFor(c, p.openId, incident, p.coalesceKey), openedAt: p.at }, resolved: p.resolved, tally });
      } catch (err) {
        // A damaged record must not stop the others from resuming.
        c.log.error({ err, openId: p.openId }, 'an investigation could not be resumed');
      }
    }
  }
  for (const r of c.read.pendingAmSilences()) c.effects.push({ type: 'am_silence', req: { ...r }, tally });
  for (const p of c.read.pendingPagerDutyCalls())
    c.effects.push({
      type: 'pagerduty_ack',
      req: { requestId: p.requestId, incidentId: p.incidentId, ...(p.openId ? { openId: p.openId } : {}), attempt: p.attempts + 1 },
    });
  return tally;
}
