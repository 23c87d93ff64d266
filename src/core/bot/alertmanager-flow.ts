/**
 * The bot's side of Alertmanager as a partner (issue 12): the silence a 🔕 asked for, made
 * once the Reprise silence is durable and reported in the thread; and the marks the
 * reconciler records on threads Alertmanager has silenced, inhibited or dropped.
 */
import { enqueue, restate, shortTime, type Enqueued, type RepriseBotDeps, type ThreadInfo } from './bot-context.js';
import { rememberListed, threadMarks, type AlertmanagerAlertState } from './alertmanager-reconcile.js';
import { silenceComment } from './silence-choice.js';

/** Threads still firing checked per reconcile round (newest first). */
const RECONCILE_THREADS = 5000;

/** A recorded 🔕 that asked for Alertmanager too. */
export interface AmSilenceRequest {
  thread: ThreadInfo | undefined;
  until: string;
  who: string;
  via: string;
}

/** Makes the Alertmanager silence a 🔕 asked for, and says in the thread how it went. */
export async function silenceInAlertmanager(d: RepriseBotDeps, req: AmSilenceRequest): Promise<void> {
  const { thread } = req;
  if (!thread) return;
  const am = d.alertmanager;
  let text: string;
  let icon = '⚠️';
  if (!am) text = 'not silenced in Alertmanager: no Alertmanager is configured (alertmanager.url / REPRISE_ALERTMANAGER_URL); silenced in Reprise only';
  else if (thread.source !== 'alertmanager') text = `not silenced in Alertmanager: this alert came from ${thread.source ?? 'another source'}; silenced in Reprise only`;
  else {
    try {
      const id = await am.silenceAlert({ fingerprint: thread.fingerprint, endsAt: req.until, createdBy: `${req.who} via Reprise (${req.via})`, comment: silenceComment(thread, req.who) });
      text = `also silenced in Alertmanager until ${shortTime(req.until, d.clock.now())} (silence ${id})`;
      icon = '🔕';
      d.logger.info({ trigger: thread.triggerKey, silence: id }, 'silenced in Alertmanager');
    } catch (err) {
      d.logger.warn({ err, trigger: thread.triggerKey }, 'Alertmanager silence failed');
      text = `not silenced in Alertmanager: ${(err as Error).message.slice(0, 300)}; silenced in Reprise only`;
    }
  }
  const out: Enqueued = { count: 0 };
  await d.ledger.transaction(async (tx) => {
    const now = d.clock.now();
    for (const transport of thread.transports) enqueue(tx, now, { transport, op: 'reply', openId: thread.openId, view: { kind: 'notice', topic: 'silenced', icon, text: [text] } }, out);
  });
  if (out.count > 0) d.outbox?.kick();
}

/** Records and announces the marks Alertmanager's alert list calls for; returns how many. */
export async function reconcileThreads(d: RepriseBotDeps, alerts: readonly AlertmanagerAlertState[], listedAt: Date, seen: Set<string>): Promise<number> {
  const out: Enqueued = { count: 0 };
  const { result } = await d.ledger.transaction(async (tx) => {
    const marks = threadMarks(d.ledger.firingThreads(RECONCILE_THREADS), alerts, listedAt, seen);
    rememberListed(seen, alerts);
    const now = d.clock.now();
    for (const m of marks) {
      tx.record({ type: 'noise', action: 'mark', fingerprint: m.thread.fingerprint, triggerKey: m.thread.triggerKey, reason: m.reason, detail: m.note, openId: m.thread.openId, at: now.toISOString() });
      restate(tx, now, m.thread, { state: m.state, note: m.note, icon: m.state === 'silenced' ? '🔕' : '⏹', topic: m.state === 'silenced' ? 'silenced' : 'resolved' }, out);
    }
    return marks.length;
  });
  if (out.count > 0) d.outbox?.kick();
  return result;
}
