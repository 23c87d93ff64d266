/**
 * "I'm on it" (SPEC §8 Acknowledgement, issue 21 item 1): 👀 on the card, its On it button,
 * `ack` in the thread, `/reprise ack`, `reprise ack`, or PagerDuty's `incident.acknowledged`.
 * An ack is recorded once per person and thread, edits the card ("👀 @alice is on it · 4 min
 * after it fired"), never silences and never counts as a vote. On a PagerDuty-sourced incident,
 * with PagerDuty's REST API configured, a chat ack also acknowledges it there — an effect after
 * the ack is durable, re-tried until its outcome is recorded.
 */
import { randomUUID } from 'node:crypto';
import type { Actor, ChatIntent, ResponseTarget, Target } from '../chat/chat-types.js';
import { spanStart } from '../chat/incident-span.js';
import { RepriseError } from '../errors.js';
import type { AckEvent } from '../ledger-events.js';
import { richText, type RichText } from '../chat/thread-view.js';
import { peopleList } from '../people.js';
import { actorRun, notify, answer, enqueue, ledgerUser, recordedRun, type ChatOutcome, type Ctx, type ThreadInfo } from './bot-context.js';
import { shortDuration } from '../duration.js';
import { plainAnswer } from './commands.js';

type Ack = Extract<ChatIntent, { type: 'ack' }>;
type LooseAck = Omit<Ack, 'eventId'> & { eventId?: string };

/** The PagerDuty incident id behind a thread, when it came from PagerDuty. */
export function pagerDutyIncidentId(thread: Pick<ThreadInfo, 'source' | 'fingerprint'>): string | undefined {
  if (thread.source !== 'pagerduty' || !thread.fingerprint.startsWith('pagerduty:')) return undefined;
  const id = thread.fingerprint.slice('pagerduty:'.length);
  return id === '' ? undefined : id;
}

/** The card's ack line: who is on it (person runs), and how long after the alert fired the first said so. */
export function ackLine(
  acks: ReadonlyArray<{ user: string; name?: string | undefined; via?: string | undefined; at: string }>,
  firedAt: string | undefined,
): RichText | undefined {
  const first = acks[0];
  if (!first) return undefined;
  const after = firedAt ? ` · ${shortDuration(Date.parse(first.at) - Date.parse(firedAt))} after it fired` : '';
  return ['👀 ', ...peopleList(acks.map(recordedRun)), ` ${acks.length === 1 ? 'is' : 'are'} on it${after}`];
}

function resolveThread(c: Ctx, target: Target): ThreadInfo | undefined {
  return (
    (target.controlsId ? c.read.thread(target.controlsId) : undefined) ??
    (target.message ? c.read.threadByMessage(target.message) : undefined) ??
    (target.fingerprint ? c.read.threadOfFingerprint(target.fingerprint) : undefined) ??
    (target.triggerKey ? c.read.newestThread(target.triggerKey) : undefined)
  );
}

/**
 * An ack from a chat surface or the CLI.
 * @throws RepriseError `not_found` when the CLI names a trigger without a thread.
 */
export function decideAck(c: Ctx, e: LooseAck): ChatOutcome {
  const o = recordAck(c, e);
  tell(c, e.actor, e.replyTo, o);
  return o;
}

function tell(c: Ctx, actor: Actor, to: ResponseTarget | undefined, o: ChatOutcome): void {
  if (!to || o.status === 'duplicate') return;
  if (o.status === 'recorded') {
    // A thread reply is answered by the card and the thread's notice.
    if (to.kind !== 'thread') answer(c, actor.via, to, plainAnswer('On it', `👀 recorded: you are on ${o.triggerKey}`));
    return;
  }
  answer(c, actor.via, to, plainAnswer('Not recorded', o.reason));
}

function recordAck(c: Ctx, e: LooseAck): ChatOutcome {
  if (e.eventId !== undefined && c.read.seenChatEvent(e.eventId)) return { status: 'duplicate', reason: `event ${e.eventId} was already recorded` };
  if (!(c.d.allow ?? (() => true))(e.actor)) return { status: 'refused', reason: `${e.actor.via} user ${e.actor.id} is not on the allowlist` };
  const thread = resolveThread(c, e.target);
  if (!thread) {
    if (e.target.message || e.target.controlsId) return { status: 'ignored', reason: 'not a message the bot sent' };
    if (e.target.fingerprint) return { status: 'ignored', reason: `no incident thread for alert ${e.target.fingerprint.slice(0, 120)}` };
    throw new RepriseError('not_found', `no incident thread for trigger ${e.target.triggerKey ?? '?'}; an ack is on an incident the bot posted`);
  }
  return recordOn(c, thread, e.actor, e.eventId);
}

/** Records `actor` on `thread` (once per person), edits the card, says it in the thread, asks PagerDuty when it should. */
export function recordOn(c: Ctx, thread: ThreadInfo, actor: Actor, eventId: string | undefined): ChatOutcome {
  const user = ledgerUser(actor);
  const acks = thread.acks ?? [];
  // PagerDuty telling us of the acknowledgement Reprise asked it for is not a second person.
  if (actor.via === 'pagerduty' && thread.pagerDutyAsked) return { status: 'ignored', reason: 'PagerDuty acknowledged what a chat ack asked it to (its echo)' };
  if (acks.some((a) => a.user === user)) return { status: 'ignored', reason: `${richText([actorRun(actor)])} is already on it` };
  const incidentId = pagerDutyIncidentId(thread);
  // PagerDuty's own acks are not sent back to it; and it is asked once per incident.
  const mirror = actor.via !== 'pagerduty' && incidentId !== undefined && c.d.pagerDuty !== undefined && !thread.pagerDutyAsked;
  const event: AckEvent = {
    type: 'ack',
    triggerKey: thread.triggerKey,
    user,
    ...(actor.name ? { name: actor.name.slice(0, 200) } : {}),
    via: actor.via,
    openId: thread.openId,
    ...(eventId ? { eventId } : {}),
    ...(mirror ? { pagerduty: { requestId: randomUUID(), incidentId: incidentId! } } : {}),
    at: c.now.toISOString(),
  };
  const index = c.tx.size;
  c.tx.record(event);
  const after = c.read.thread(thread.openId) ?? thread;
  // From when the alert fired: a group's earliest alert (a reopened thread: its reopen, in firedAt).
  const reopened = (after.episodes?.length ?? 0) > 0;
  const firedAt = reopened ? after.firedAt : spanStart({ startsAt: after.firedAt, group: after.storm });
  const line = ackLine(after.acks ?? [], firedAt);
  for (const transport of thread.transports) {
    enqueue(c.tx, c.now, { transport, op: 'update', openId: thread.openId, view: { kind: 'card_patch', ack: line ?? [] } }, c.out);
    if (line) notify(c, thread.openId, [transport], { topic: 'status', icon: '👀', text: [actorRun(actor), ' is on it'] });
  }
  if (acks.length === 0 && firedAt) c.effects.push({ type: 'acknowledged', seconds: Math.max(0, (c.now.getTime() - Date.parse(firedAt)) / 1000) });
  if (event.pagerduty) c.effects.push({ type: 'pagerduty_ack', req: { ...event.pagerduty, openId: thread.openId, attempt: 1 } });
  c.log.info({ trigger: thread.triggerKey, user, via: actor.via, pagerduty: event.pagerduty !== undefined }, 'ack recorded');
  return { status: 'recorded', kind: 'ack', triggerKey: thread.triggerKey, event, index };
}
