/**
 * The on-call reminder (issue 32): a critical thread nobody acknowledged `oncall.remind_after`
 * after its card went out mentions the person on call once more, in the thread. Once: the
 * `oncall_reminder` event is recorded with the notice, so a restart (a replay) does not say it
 * again; an ack or a resolve before it is due means it is never said. Decided on the tick.
 */
import type { OnCallAnswer } from '../../ports/oncall.js';
import { onCallIds, onCallText, onCallView, reminderNotice } from '../oncall/oncall-view.js';
import { enqueue, notify, type Ctx } from './bot-context.js';

/** Reminders said per tick at most (the rest the next tick). */
const PER_TICK = 50;

/** Says every due reminder; how many were said. */
export function remindOnCall(c: Pick<Ctx, 'd' | 'read' | 'tx' | 'now' | 'out' | 'log'>): number {
  const due = c.read.dueOnCallReminders(c.now, PER_TICK);
  const after = c.d.onCall?.remindAfterMs ?? 0;
  const waited = after < 60_000 ? `${Math.round(after / 1000)} s` : `${Math.round(after / 60_000)} min`;
  for (const t of due) {
    c.tx.record({ type: 'oncall_reminder', triggerKey: t.triggerKey, openId: t.openId, at: c.now.toISOString() });
    for (const transport of t.transports) {
      const card = t.remind?.cards[transport];
      if (!card) continue;
      notify(c, t.openId, [transport], reminderNotice({ people: card.people.map((p) => ({ ...p })), detail: card.detail }, transport, waited));
    }
    c.log.info({ trigger: t.triggerKey, openId: t.openId }, 'nobody acknowledged: reminded the person on call');
  }
  return due.length;
}

/**
 * A late on-call answer (issue 32): every firing thread that waited for this route (and service)
 * and went out saying "unknown" gets its cards edited to name the person, and a line in the
 * thread that mentions them (an edit notifies nobody); its reminder counts from now. Once per
 * thread: `oncall_found` ends the wait. The number of threads told.
 */
export function decideOnCallAnswered(
  c: Pick<Ctx, 'd' | 'read' | 'tx' | 'now' | 'out' | 'log'>,
  e: { route: string; service?: string; answer: OnCallAnswer },
): number {
  if (!e.answer.known) return 0;
  const threads = c.read.awaitingOnCall(e.route, e.service, PER_TICK);
  const remindMs = c.d.onCall?.remindAfterMs ?? 0;
  for (const t of threads) {
    const cards = Object.fromEntries(t.transports.map((transport) => [transport, onCallView(e.answer, transport, c.now)]));
    c.tx.record({
      type: 'oncall_found',
      triggerKey: t.triggerKey,
      openId: t.openId,
      ...(remindMs > 0 ? { remind: { at: new Date(c.now.getTime() + remindMs).toISOString(), cards } } : {}),
      at: c.now.toISOString(),
    });
    for (const transport of t.transports) {
      const view = cards[transport]!;
      enqueue(c.tx, c.now, { transport, op: 'update', openId: t.openId, view: { kind: 'card_patch', onCall: view } }, c.out);
      const ids = onCallIds(view);
      notify(c, t.openId, [transport], { topic: 'info', icon: '📟', text: onCallText(view, transport), ...(ids.length > 0 ? { mentions: ids } : {}) });
    }
  }
  if (threads.length > 0) c.log.info({ route: e.route, threads: threads.length }, 'who is on call came in late: cards edited');
  return threads.length;
}
