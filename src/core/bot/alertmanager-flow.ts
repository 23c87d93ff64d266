/**
 * The bot's side of Alertmanager as a partner (issue 12): the silence a 🔕 asked for, made
 * once the Reprise silence is durable and reported in the thread; and the marks the
 * reconciler records on threads Alertmanager has silenced, inhibited or dropped.
 */
import { enqueue, restate, shortTime, type Enqueued, type RepriseBotDeps } from './bot-context.js';
import { rememberListed, threadMarks, type AlertmanagerAlertState } from './alertmanager-reconcile.js';
import { silenceComment } from './silence-choice.js';

/** Threads still firing checked per reconcile round (newest first). */
const RECONCILE_THREADS = 5000;

/** A recorded 🔕 that asked for Alertmanager too (its silence event's `alertmanager`, with the end). */
export interface AmSilenceRequest {
  requestId: string;
  openId: string;
  until: string;
  who: string;
  via?: string;
}

/**
 * Makes the Alertmanager silence a 🔕 asked for; its outcome (made, failed, not possible) is
 * recorded with the notice that tells the thread, so a request whose outcome is missing after a
 * restart is made then.
 */
export async function silenceInAlertmanager(d: RepriseBotDeps, req: AmSilenceRequest): Promise<void> {
  const thread = d.ledger.read.thread(req.openId);
  const am = d.alertmanager;
  let text: string;
  let reason: string;
  let icon = '⚠️';
  if (!thread) {
    reason = 'no_thread';
    text = 'not silenced in Alertmanager: the thread is no longer known';
  } else if (!am) {
    reason = 'not_configured';
    text = 'not silenced in Alertmanager: no Alertmanager is configured (alertmanager.url / REPRISE_ALERTMANAGER_URL); silenced in Reprise only';
  } else if (thread.source !== 'alertmanager') {
    reason = 'other_source';
    text = `not silenced in Alertmanager: this alert came from ${thread.source ?? 'another source'}; silenced in Reprise only`;
  } else {
    try {
      const id = await am.silenceAlert({
        fingerprint: thread.fingerprint,
        endsAt: req.until,
        createdBy: `${req.who} via Reprise (${req.via ?? 'cli'})`,
        comment: silenceComment(thread, req.who),
      });
      reason = 'created';
      text = `also silenced in Alertmanager until ${shortTime(req.until, d.clock.now())} (silence ${id})`;
      icon = '🔕';
      d.logger.info({ trigger: thread.triggerKey, silence: id }, 'silenced in Alertmanager');
    } catch (err) {
      d.logger.warn({ err, trigger: thread.triggerKey }, 'Alertmanager silence failed');
      reason = 'failed';
      text = `not silenced in Alertmanager: ${(err as Error).message.slice(0, 300)}; silenced in Reprise only`;
    }
  }
  const out: Enqueued = { count: 0 };
  await d.ledger.transaction(async (tx) => {
    const now = d.clock.now();
    tx.record({
      type: 'noise',
      action: 'am_silence',
      fingerprint: thread?.fingerprint ?? '(none)',
      triggerKey: thread?.triggerKey ?? '(none)',
      reason,
      detail: text,
      requestId: req.requestId,
      openId: req.openId,
      at: now.toISOString(),
    });
    for (const transport of thread?.transports ?? [])
      enqueue(tx, now, { transport, op: 'reply', openId: req.openId, view: { kind: 'notice', topic: 'silenced', icon, text: [text] } }, out);
  });
  if (out.count > 0) d.outbox?.kick();
}

/** Records and announces the marks Alertmanager's alert list calls for; returns how many. */
export async function reconcileThreads(d: RepriseBotDeps, alerts: readonly AlertmanagerAlertState[], listedAt: Date, seen: Set<string>): Promise<number> {
  const out: Enqueued = { count: 0 };
  const { result } = await d.ledger.transaction(async (tx) => {
    const marks = threadMarks(d.ledger.read.firingThreads(RECONCILE_THREADS), alerts, listedAt, seen);
    rememberListed(seen, alerts);
    const now = d.clock.now();
    for (const m of marks) {
      tx.record({
        type: 'noise',
        action: 'mark',
        fingerprint: m.thread.fingerprint,
        triggerKey: m.thread.triggerKey,
        reason: m.reason,
        detail: m.note,
        openId: m.thread.openId,
        at: now.toISOString(),
      });
      restate(
        tx,
        now,
        m.thread,
        { state: m.state, note: m.note, icon: m.state === 'silenced' ? '🔕' : '⏹', topic: m.state === 'silenced' ? 'silenced' : 'resolved' },
        out,
      );
    }
    return marks.length;
  });
  if (out.count > 0) d.outbox?.kick();
  return result;
}
