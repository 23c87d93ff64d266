/**
 * Votes, silences and notes from chat (and the CLI), decided inside a ledger transaction:
 * duplicates (a retried Slack event, a re-synced Matrix event, a double click) count once, only
 * allowed users change anything, and each change is announced through the outbox.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from '../../ports/logger.js';
import { RepriseError } from '../errors.js';
import type { FeedbackEvent, SilenceEvent } from '../ledger-events.js';
import {
  displayName,
  enqueue,
  ledgerUser,
  restate,
  shortTime,
  type BotLedger,
  type BotTx,
  type Enqueued,
  type NoteLimits,
  type ThreadInfo,
} from './bot-context.js';
import type { Actor, BotEvent, Target } from './bot-event.js';
import { feedbackEvent } from './feedback-request.js';

export type ChatOutcome =
  | { status: 'recorded'; kind: 'vote' | 'silence' | 'note'; triggerKey: string; event: FeedbackEvent | SilenceEvent | { type: 'note' } }
  | { status: 'duplicate' | 'ignored' | 'refused'; reason: string };

export interface ActionContext {
  ledger: BotLedger;
  now: Date;
  log: Logger;
  allow: (actor: Actor) => boolean;
  notes: NoteLimits;
  out: Enqueued;
  /** Set when a forge is configured: notes become curate intents (counted here). */
  curate?: { intents: number };
}

/** The thread and trigger a vote or silence is about. */
function resolveTarget(ctx: ActionContext, target: Target): { thread?: ThreadInfo; triggerKey?: string } {
  const thread =
    (target.controlsId ? ctx.ledger.read.thread(target.controlsId) : undefined) ??
    (target.message ? ctx.ledger.read.threadByMessage(target.message) : undefined);
  if (thread) return { thread, triggerKey: thread.triggerKey };
  if (target.triggerKey) {
    const newest = ctx.ledger.read.newestThread(target.triggerKey);
    return newest ? { thread: newest, triggerKey: target.triggerKey } : { triggerKey: target.triggerKey };
  }
  return {};
}

/** Checks shared by every chat action; a reason when it must not count. */
function gate(ctx: ActionContext, actor: Actor, eventId: string | undefined): ChatOutcome | undefined {
  if (eventId !== undefined && ctx.ledger.read.seenChatEvent(eventId)) return { status: 'duplicate', reason: `event ${eventId} was already recorded` };
  if (!ctx.allow(actor)) return { status: 'refused', reason: `${actor.via} user ${actor.id} is not on the allowlist` };
  return undefined;
}

type Vote = Extract<BotEvent, { type: 'vote' }>;
type Silence = Extract<BotEvent, { type: 'silence' }>;
type Note = Extract<BotEvent, { type: 'note' }>;

export function applyVote(ctx: ActionContext, tx: BotTx, e: Vote): ChatOutcome {
  const stop = gate(ctx, e.actor, e.eventId);
  if (stop) return stop;
  const { thread, triggerKey } = resolveTarget(ctx, e.target);
  if (!triggerKey) return { status: 'ignored', reason: 'not a message the bot sent' };
  const event: FeedbackEvent = {
    type: 'feedback',
    triggerKey,
    user: ledgerUser(e.actor),
    vote: e.vote,
    ...(thread ? { openId: thread.openId } : {}),
    via: e.actor.via,
    ...(e.eventId ? { eventId: e.eventId } : {}),
    at: ctx.now.toISOString(),
  };
  tx.record(event);
  ctx.log.info({ trigger: triggerKey, user: event.user, vote: e.vote, via: e.actor.via }, 'feedback recorded');
  return { status: 'recorded', kind: 'vote', triggerKey, event };
}

/** `alsoAlertmanager`: the user asked to silence in Alertmanager too; the request is recorded with the silence. */
export function applySilence(ctx: ActionContext, tx: BotTx, e: Silence, alsoAlertmanager = false): ChatOutcome {
  const stop = gate(ctx, e.actor, e.eventId);
  if (stop) return stop;
  const { thread, triggerKey } = resolveTarget(ctx, e.target);
  if (!triggerKey) return { status: 'ignored', reason: 'not a message the bot sent' };
  // The same rules as the CLI: a duration like 1h, at most 30 days.
  const parsed = feedbackEvent({ triggerKey, user: 'x', action: 'silence', duration: e.duration }, ctx.now);
  const event: SilenceEvent = {
    type: 'silence',
    triggerKey,
    user: ledgerUser(e.actor),
    until: (parsed as SilenceEvent).until,
    via: e.actor.via,
    ...(e.eventId ? { eventId: e.eventId } : {}),
    ...(alsoAlertmanager && thread ? { alertmanager: { requestId: randomUUID(), openId: thread.openId, who: displayName(e.actor) } } : {}),
    at: ctx.now.toISOString(),
  };
  tx.record(event);
  ctx.log.info({ trigger: triggerKey, user: event.user, until: event.until, via: e.actor.via }, 'silence recorded');
  if (thread)
    restate(
      tx,
      ctx.now,
      thread,
      { state: 'silenced', note: `silenced by @${displayName(e.actor)} until ${shortTime(event.until, ctx.now)}`, icon: '🔕', topic: 'silenced' },
      ctx.out,
    );
  return { status: 'recorded', kind: 'silence', triggerKey, event };
}

export function applyNote(ctx: ActionContext, tx: BotTx, e: Note): ChatOutcome {
  const stop = gate(ctx, e.actor, e.eventId);
  if (stop) return stop;
  const thread = ctx.ledger.read.threadByMessage(e.thread);
  if (!thread) return { status: 'ignored', reason: 'not a thread the bot started' };
  return recordNote(ctx, tx, thread, e, [e.thread.transport]);
}

/**
 * `reprise note <triggerKey> <text…>`: a note on the trigger's newest thread, told on every
 * surface the thread is on.
 * @throws RepriseError `not_found` when the trigger has no thread.
 */
export function applyCliNote(ctx: ActionContext, tx: BotTx, e: { triggerKey: string; actor: Actor; text: string }): ChatOutcome {
  const stop = gate(ctx, e.actor, undefined);
  if (stop) return stop;
  const thread = ctx.ledger.read.newestThread(e.triggerKey);
  if (!thread) throw new RepriseError('not_found', `no incident thread for trigger ${e.triggerKey}; notes are written on an incident the bot posted`);
  return recordNote(ctx, tx, thread, { actor: e.actor, text: e.text }, thread.transports);
}

function recordNote(
  ctx: ActionContext,
  tx: BotTx,
  thread: ThreadInfo,
  e: { actor: Actor; text: string; eventId?: string },
  tell: readonly string[],
): ChatOutcome {
  const reply = (text: string, icon: string): void => {
    for (const transport of tell)
      enqueue(tx, ctx.now, { transport, op: 'reply', openId: thread.openId, view: { kind: 'notice', topic: 'note', icon, text: [text] } }, ctx.out);
  };
  if (e.text.trim() === '') return { status: 'refused', reason: 'empty note' };
  if (Buffer.byteLength(e.text) > ctx.notes.maxBytes) {
    reply(`note not saved: it is longer than ${Math.round(ctx.notes.maxBytes / 1024)} KiB; shorten it or link to a document`, '⚠️');
    return { status: 'refused', reason: `note too long: more than ${Math.round(ctx.notes.maxBytes / 1024)} KiB` };
  }
  if (thread.notes >= ctx.notes.perThread) {
    reply(`note not saved: this thread already has ${ctx.notes.perThread} notes`, '⚠️');
    return { status: 'refused', reason: 'too many notes in this thread' };
  }
  const at = ctx.now.toISOString();
  const user = ledgerUser(e.actor);
  tx.record({
    type: 'note',
    triggerKey: thread.triggerKey,
    openId: thread.openId,
    user,
    text: e.text,
    via: e.actor.via,
    ...(e.eventId ? { eventId: e.eventId } : {}),
    at,
  });
  if (ctx.curate) {
    const finding = ctx.ledger.read.standing(thread.triggerKey)?.cause;
    tx.record({
      type: 'curate',
      id: randomUUID(),
      subject: 'note',
      openId: thread.openId,
      triggerKey: thread.triggerKey,
      dupFingerprint: thread.dupFingerprint ?? '',
      note: { user, name: displayName(e.actor), via: e.actor.via, text: e.text, ...(finding ? { finding } : {}) },
      at,
    });
    ctx.curate.intents += 1;
    reply(`saved — note from @${displayName(e.actor)} recorded; filing it to the knowledge base`, '📝');
  } else reply(`saved — note from @${displayName(e.actor)} filed with this incident`, '📝');
  ctx.log.info({ trigger: thread.triggerKey, user, bytes: Buffer.byteLength(e.text) }, 'note recorded');
  return { status: 'recorded', kind: 'note', triggerKey: thread.triggerKey, event: { type: 'note' } };
}

/** A bad silence duration from chat: a clear message for the user, nothing recorded. */
export function isUserError(err: unknown): err is RepriseError {
  return err instanceof RepriseError && (err.code === 'invalid_payload' || err.code === 'not_found');
}
