/**
 * The on-call reminder (issue 32): a critical thread nobody acknowledged `oncall.remind_after`
 * after its card went out mentions the person on call once more, in the thread. Once: the
 * `oncall_reminder` event is recorded with the notice, so a restart (a replay) does not say it
 * again; an ack or a resolve before it is due means it is never said. Decided on the tick.
 */
import { reminderNotice } from '../oncall/oncall-view.js';
import { notify, type Ctx } from './bot-context.js';

/** Reminders said per tick at most (the rest the next tick). */
const PER_TICK = 50;

/** Says every due reminder; how many were said. */
export function remindOnCall(c: Pick<Ctx, 'd' | 'read' | 'tx' | 'now' | 'out' | 'log'>): number {
  const due = c.read.dueOnCallReminders(c.now, PER_TICK);
  const minutes = Math.max(1, Math.round((c.d.onCall?.remindAfterMs ?? 0) / 60_000));
  for (const t of due) {
    c.tx.record({ type: 'oncall_reminder', triggerKey: t.triggerKey, openId: t.openId, at: c.now.toISOString() });
    for (const transport of t.transports) {
      const card = t.remind?.cards[transport];
      if (!card) continue;
      notify(c, t.openId, [transport], reminderNotice({ people: card.people.map((p) => ({ ...p })), detail: card.detail }, transport, minutes));
    }
    c.log.info({ trigger: t.triggerKey, openId: t.openId }, 'nobody acknowledged: reminded the person on call');
  }
  return due.length;
}
