/**
 * Votes, silences and notes — from a chat surface or the CLI, decided the same way: an event
 * already applied counts once (a retried Slack event, a re-read Matrix event, a double click),
 * only allowed people change anything, the card says what changed, and whoever asked for an
 * acknowledgement gets one.
 */
import { randomUUID } from 'node:crypto';
import { feedbackLine } from '../chat/build-thread-view.js';
import type { Actor, ChatIntent, MessageRef, ResponseTarget, Target } from '../chat/chat-types.js';
import { tellRefusal } from './refusal.js';
import type { EphemeralView, RichText } from '../chat/thread-view.js';
import { RepriseError } from '../errors.js';
import type { FeedbackEvent, SilenceEvent } from '../ledger-events.js';
import {
  actorRun,
  notify,
  answer,
  displayName,
  enqueue,
  ledgerUser,
  restate,
  shortTime,
  type ChatOutcome,
  type Ctx,
  type NoteLimits,
  type ThreadInfo,
} from './bot-context.js';
import { plainAnswer } from './commands.js';
import { feedbackEvent } from './feedback-request.js';

export const DEFAULT_NOTES: NoteLimits = { maxBytes: 8 * 1024, perThread: 20 };

type Vote = Extract<ChatIntent, { type: 'vote' }>;
type Silence = Extract<ChatIntent, { type: 'silence' }>;
type Note = Extract<ChatIntent, { type: 'note' }>;
/** The CLI's intents have no surface event id. */
type Loose<T> = Omit<T, 'eventId'> & { eventId?: string };

/** The thread and trigger an action is about: the card's controls id, a bot message, or a trigger key. */
function resolveTarget(c: Ctx, target: Target): { thread?: ThreadInfo; triggerKey?: string } {
  const thread = (target.controlsId ? c.read.thread(target.controlsId) : undefined) ?? (target.message ? c.read.threadByMessage(target.message) : undefined);
  if (thread) return { thread, triggerKey: thread.triggerKey };
  const byAlert = target.fingerprint ? c.read.threadOfFingerprint(target.fingerprint) : undefined;
  if (byAlert) return { thread: byAlert, triggerKey: byAlert.triggerKey };
  if (target.triggerKey) {
    const newest = c.read.newestThread(target.triggerKey);
    return newest ? { thread: newest, triggerKey: target.triggerKey } : { triggerKey: target.triggerKey };
  }
  return {};
}

/** Checks shared by every action; a reason when it must not count. */
function gate(c: Ctx, actor: Actor, eventId: string | undefined): ChatOutcome | undefined {
  if (eventId !== undefined && c.read.seenChatEvent(eventId)) return { status: 'duplicate', reason: `event ${eventId} was already recorded` };
  if (!(c.d.allow ?? (() => true))(actor)) return { status: 'refused', reason: `${actor.via} user ${actor.id} is not on the allowlist` };
  return undefined;
}

/** A private acknowledgement is for clicks (their ephemeral reply) and refusals; a thread reply is acknowledged in the thread. */
function acknowledge(c: Ctx, actor: Actor, to: ResponseTarget | undefined, o: ChatOutcome, ok: () => EphemeralView): void {
  if (!to) return;
  if (o.status === 'recorded') {
    if (to.kind !== 'thread') answer(c, actor.via, to, ok());
    return;
  }
  // A duplicate delivery was answered the first time.
  if (o.status === 'duplicate') return;
  answer(c, actor.via, to, plainAnswer('Not recorded', o.reason));
}

export function decideVote(c: Ctx, e: Loose<Vote>): ChatOutcome {
  const o = recordVote(c, e);
  acknowledge(c, e.actor, e.replyTo, o, () =>
    plainAnswer(
      'Thanks',
      e.vote === 'up' ? '👍 recorded as accurate' : e.vote === 'down' ? '👎 recorded as off-base; the entry behind this answer loses trust' : 'vote cleared',
    ),
  );
  return o;
}

function recordVote(c: Ctx, e: Loose<Vote>): ChatOutcome {
  const stop = gate(c, e.actor, e.eventId);
  if (stop) return stop;
  const { thread, triggerKey } = resolveTarget(c, e.target);
  if (!triggerKey) return { status: 'ignored', reason: 'not a message the bot sent' };
  const event: FeedbackEvent = {
    type: 'feedback',
    triggerKey,
    user: ledgerUser(e.actor),
    vote: e.vote,
    ...(thread ? { openId: thread.openId } : {}),
    via: e.actor.via,
    ...(e.eventId ? { eventId: e.eventId } : {}),
    at: c.now.toISOString(),
  };
  const silenced = thread?.state === 'silenced';
  const index = c.tx.size;
  c.tx.record(event);
  c.log.info({ trigger: triggerKey, user: event.user, vote: e.vote, via: e.actor.via }, 'feedback recorded');
  // The card shows the vote at once: its tally and the track record it moved — and, when a 👎
  // ended the silence it was under, that it pages again (the card must say what `status` says).
  if (thread) {
    const after = c.read.thread(thread.openId) ?? thread;
    if (silenced && after.state === 'firing')
      restate(
        c.tx,
        c.now,
        thread,
        {
          state: 'firing',
          note: ['silence ended by a 👎 from ', actorRun(e.actor)],
          icon: '🔔',
          topic: 'silenced',
          patch: { feedback: cardFeedback(c, thread) },
        },
        c.out,
      );
    else
      for (const transport of thread.transports)
        enqueue(c.tx, c.now, { transport, op: 'update', openId: thread.openId, view: { kind: 'card_patch', feedback: cardFeedback(c, thread) } }, c.out);
  }
  return { status: 'recorded', kind: 'vote', triggerKey, event, index };
}

/** The card's feedback line as the ledger stands: the thread's 👍/👎 and, when it recalled an entry, that entry's track record. */
export function cardFeedback(c: Pick<Ctx, 'read' | 'now'>, thread: ThreadInfo): string {
  const votes = c.read.occurrences(thread.triggerKey);
  const track = thread.entry ? c.read.trackRecord(thread.entry, thread.answerKind ?? 'incident', c.now) : undefined;
  return feedbackLine({ up: votes.up, down: votes.down }, thread.entry && track ? { kind: thread.answerKind ?? 'incident', track } : undefined);
}

export function decideSilence(c: Ctx, e: Loose<Silence>): ChatOutcome {
  let o: ChatOutcome;
  try {
    o = recordSilence(c, e);
  } catch (err) {
    if (!isUserError(err)) throw err;
    o = { status: 'refused', reason: err.message };
  }
  acknowledge(c, e.actor, e.replyTo, o, () => plainAnswer('Silenced', `🔕 until ${shortTime((o as { event: SilenceEvent }).event.until, c.now)}`));
  return o;
}

/** @throws RepriseError `invalid_payload` for a duration that is not one (the person is told). */
function recordSilence(c: Ctx, e: Loose<Silence>): ChatOutcome {
  const stop = gate(c, e.actor, e.eventId);
  if (stop) return stop;
  const { thread, triggerKey } = resolveTarget(c, e.target);
  if (!triggerKey) return { status: 'ignored', reason: 'not a message the bot sent' };
  // The same rules as the CLI: a duration like 1h, at most 30 days.
  const parsed = feedbackEvent({ triggerKey, user: 'x', action: 'silence', duration: e.duration }, c.now) as SilenceEvent;
  const event: SilenceEvent = {
    type: 'silence',
    triggerKey,
    user: ledgerUser(e.actor),
    until: parsed.until,
    ...(thread ? { openId: thread.openId } : {}),
    via: e.actor.via,
    ...(e.eventId ? { eventId: e.eventId } : {}),
    ...(e.alertmanager && thread ? { alertmanager: { requestId: randomUUID(), openId: thread.openId, who: displayName(e.actor) } } : {}),
    at: c.now.toISOString(),
  };
  const index = c.tx.size;
  c.tx.record(event);
  c.log.info({ trigger: triggerKey, user: event.user, until: event.until, via: e.actor.via }, 'silence recorded');
  if (thread)
    restate(
      c.tx,
      c.now,
      thread,
      { state: 'silenced', note: ['silenced by ', actorRun(e.actor), ` until ${shortTime(event.until, c.now)}`], icon: '🔕', topic: 'silenced' },
      c.out,
    );
  if (event.alertmanager) {
    const { requestId, openId, who } = event.alertmanager;
    c.effects.push({ type: 'am_silence', req: { requestId, openId, until: event.until, who, via: e.actor.via } });
  }
  return { status: 'recorded', kind: 'silence', triggerKey, event, index };
}

/**
 * A note on a thread: the one it was written in, or — from the CLI, by trigger key — the
 * trigger's newest thread, told on every surface the thread is on.
 * @throws RepriseError `not_found` when the CLI names a trigger without a thread.
 */
export function decideNote(c: Ctx, e: Loose<Note>): ChatOutcome {
  const stop = gate(c, e.actor, e.eventId);
  if (stop) return stop;
  const { thread } = resolveTarget(c, e.target.message ? { message: e.target.message } : e.target);
  if (!thread) {
    if (e.target.message || e.target.fingerprint) return { status: 'ignored', reason: 'not a thread the bot started' };
    throw new RepriseError('not_found', `no incident thread for trigger ${e.target.triggerKey ?? '?'}; notes are written on an incident the bot posted`);
  }
  return recordNote(c, thread, e, e.target.message ? [e.target.message.transport] : thread.transports, e.target.message);
}

function recordNote(c: Ctx, thread: ThreadInfo, e: { actor: Actor; text: string; eventId?: string }, tell: readonly string[], where?: MessageRef): ChatOutcome {
  const notes = c.d.notes ?? DEFAULT_NOTES;
  const reply = (text: RichText, icon: string): void => notify(c, thread.openId, tell, { topic: 'note', icon, text });
  const refuse = (line: string, reason: string): ChatOutcome => {
    tellRefusal(c, { thread, actor: e.actor, ...(where ? { where } : {}), kind: 'note', ...(e.eventId ? { eventId: e.eventId } : {}), text: [`⚠️ ${line}`] });
    return { status: 'refused', reason };
  };
  if (e.text.trim() === '') return { status: 'refused', reason: 'empty note' };
  if (Buffer.byteLength(e.text) > notes.maxBytes)
    return refuse(
      `note not saved: it is longer than ${Math.round(notes.maxBytes / 1024)} KiB; shorten it or link to a document`,
      `note too long: more than ${Math.round(notes.maxBytes / 1024)} KiB`,
    );
  if (thread.notes >= notes.perThread) return refuse(`note not saved: this thread already has ${notes.perThread} notes`, 'too many notes in this thread');
  const at = c.now.toISOString();
  const user = ledgerUser(e.actor);
  const index = c.tx.size;
  c.tx.record({
    type: 'note',
    triggerKey: thread.triggerKey,
    openId: thread.openId,
    user,
    text: e.text,
    via: e.actor.via,
    ...(e.eventId ? { eventId: e.eventId } : {}),
    at,
  });
  if (c.d.curation) {
    const finding = c.read.standing(thread.triggerKey)?.cause;
    c.tx.record({
      type: 'curate',
      id: randomUUID(),
      subject: 'note',
      openId: thread.openId,
      triggerKey: thread.triggerKey,
      dupFingerprint: thread.dupFingerprint ?? '',
      note: { user, name: displayName(e.actor), via: e.actor.via, text: e.text, ...(finding ? { finding } : {}) },
      at,
    });
    c.effects.push({ type: 'curate' });
    reply(['saved — note from ', actorRun(e.actor), ' recorded; filing it to the knowledge base'], '📝');
  } else reply(['saved — note from ', actorRun(e.actor), ' filed with this incident'], '📝');
  c.log.info({ trigger: thread.triggerKey, user, bytes: Buffer.byteLength(e.text) }, 'note recorded');
  return { status: 'recorded', kind: 'note', triggerKey: thread.triggerKey, event: { type: 'note' }, index };
}

/** A bad duration or an unknown trigger: a clear message for the person, nothing recorded. */
export function isUserError(err: unknown): err is RepriseError {
  return err instanceof RepriseError && (err.code === 'invalid_payload' || err.code === 'not_found');
}
