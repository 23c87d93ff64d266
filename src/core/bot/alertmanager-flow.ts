/**
 * The bot's side of Alertmanager as a partner (issue 12): the silence a 🔕 asked for — made by
 * an effect once the Reprise silence is durable, its outcome handed back to the loop and said in
 * the thread — and the marks the reconciler records on threads Alertmanager has silenced,
 * inhibited or dropped.
 */
import type { Logger } from '../../ports/logger.js';
import { notify, restate, shortTime, type AlertmanagerSilencer, type Ctx, type ThreadInfo } from './bot-context.js';
import { threadMarks, type AlertmanagerAlertState } from './alertmanager-reconcile.js';
import type { AmSilenceRequest } from './effects.js';
import { stormCard } from './noise-gate.js';
import { silenceComment } from './silence-choice.js';

/** Threads still firing checked per reconcile round (newest first). */
const RECONCILE_THREADS = 5000;

/** What became of an Alertmanager silence a 🔕 asked for: recorded, and said in the thread. */
export interface AmSilenceOutcome {
  type: 'am_silence_result';
  req: AmSilenceRequest;
  /** `created`, `failed`, `no_thread`, `not_configured`, `other_source`. */
  reason: string;
  text: string;
  icon: string;
}

/**
 * Makes the Alertmanager silence a 🔕 asked for (the effect's network half); never throws — a
 * failure is an outcome like any other, recorded so a request whose outcome is missing after a
 * restart is made then.
 */
export async function silenceInAlertmanager(
  d: { alertmanager: AlertmanagerSilencer | undefined; logger: Logger; now: () => Date },
  thread: ThreadInfo | undefined,
  req: AmSilenceRequest,
  firing: readonly string[] = [],
): Promise<AmSilenceOutcome> {
  const am = d.alertmanager;
  const result = (reason: string, text: string, icon = '⚠️'): AmSilenceOutcome => ({ type: 'am_silence_result', req, reason, text, icon });
  if (!thread) return result('no_thread', 'not silenced in Alertmanager: the thread is no longer known');
  if (!am)
    return result(
      'not_configured',
      'not silenced in Alertmanager: no Alertmanager is configured (alertmanager.url / REPRISE_ALERTMANAGER_URL); silenced in Reprise only',
    );
  if (thread.source !== 'alertmanager')
    return result('other_source', `not silenced in Alertmanager: this alert came from ${thread.source ?? 'another source'}; silenced in Reprise only`);
  try {
    // The trigger's alerts firing now (the Reprise silence covers them all), the thread's own first.
    const fingerprints = [thread.fingerprint, ...firing.filter((f) => f !== thread.fingerprint)];
    const made = await am.silenceAlert({
      fingerprint: thread.fingerprint,
      ...(fingerprints.length > 1 ? { fingerprints } : {}),
      endsAt: req.until,
      createdBy: `${req.who} via Reprise (${req.via ?? 'cli'})`,
      comment: silenceComment(thread, req.who),
    });
    const id = typeof made === 'string' ? made : made.id;
    d.logger.info({ trigger: thread.triggerKey, silence: id }, 'silenced in Alertmanager');
    // Say which alerts it covers: the same ones the Reprise silence does.
    const which =
      typeof made === 'string'
        ? ''
        : `: ${made.matchers.join(', ').slice(0, 600)} — the ${made.alerts === 1 ? 'alert' : `${made.alerts} alerts`} of this trigger firing now, as in Reprise`;
    return result('created', `also silenced in Alertmanager until ${shortTime(req.until, d.now())} (silence ${id})${which}`, '🔕');
  } catch (err) {
    d.logger.warn({ err, trigger: thread.triggerKey }, 'Alertmanager silence failed');
    return result('failed', `not silenced in Alertmanager: ${(err as Error).message.slice(0, 300)}; silenced in Reprise only`);
  }
}

/** Records the outcome of an Alertmanager silence and tells the thread. */
export function decideAmSilenceOutcome(c: Ctx, o: AmSilenceOutcome): { status: 'recorded'; reason: string } {
  const thread = c.read.thread(o.req.openId);
  c.tx.record({
    type: 'noise',
    action: 'am_silence',
    fingerprint: thread?.fingerprint ?? '(none)',
    triggerKey: thread?.triggerKey ?? '(none)',
    reason: o.reason,
    detail: o.text,
    requestId: o.req.requestId,
    openId: o.req.openId,
    at: c.now.toISOString(),
  });
  notify(c, o.req.openId, thread?.transports ?? [], { topic: 'silenced', icon: o.icon, text: [o.text] });
  return { status: 'recorded', reason: o.reason };
}

/**
 * Records and announces the marks Alertmanager's alert list calls for. `seen`: fingerprints this
 * Alertmanager has listed before (only those can be called "no longer firing").
 */
export function decideReconcile(
  c: Ctx,
  alerts: readonly AlertmanagerAlertState[],
  listedAt: Date,
  seen: ReadonlySet<string>,
): { status: 'reconciled'; marked: number } {
  const firingOf = (t: ThreadInfo): string[] =>
    t.storm ? Object.keys(t.storm.firing) : c.read.openEpisodes(t.fingerprint).some((e) => e.openId === t.openId) ? [t.fingerprint] : [];
  const marks = threadMarks(c.read.liveThreads(RECONCILE_THREADS), alerts, listedAt, seen, firingOf);
  const at = c.now.toISOString();
  for (const m of marks) {
    if (m.reason === 'am_gone') {
      // Each alert it no longer lists is over: its open concluded, so `status` no longer counts it.
      for (const fingerprint of m.gone ?? []) c.tx.record({ type: 'resolve', fingerprint, reason: 'am_gone', at });
      c.log.info({ openId: m.thread.openId, gone: m.gone?.length, all: m.all }, 'alerts no longer listed by Alertmanager concluded');
      const now = c.read.thread(m.thread.openId);
      if (!m.all) {
        if (now?.storm && now.state === 'firing') stormCard(c.tx, c.now, now, c.out);
        continue;
      }
      c.effects.push({ type: 'cancel_investigation', fingerprint: m.thread.fingerprint });
    }
    c.tx.record({
      type: 'noise',
      action: 'mark',
      fingerprint: m.thread.fingerprint,
      triggerKey: m.thread.triggerKey,
      reason: m.reason,
      detail: m.note,
      openId: m.thread.openId,
      at: c.now.toISOString(),
    });
    restate(
      c.tx,
      c.now,
      m.thread,
      { state: m.state, note: m.note, icon: m.state === 'silenced' ? '🔕' : '⏹', topic: m.state === 'silenced' ? 'silenced' : 'resolved' },
      c.out,
    );
  }
  return { status: 'reconciled', marked: marks.length };
}
