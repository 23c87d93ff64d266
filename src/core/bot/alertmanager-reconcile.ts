/**
 * Reconciling threads with Alertmanager (issue 12). Alertmanager sends no resolve for an alert
 * that gets silenced or inhibited, and a receiver without `send_resolved` never sends one at
 * all: without this, such threads would say "firing" forever. Pure decisions; the bot records
 * and announces them.
 */
import type { ThreadInfo } from './bot-context.js';

/** One alert as Alertmanager's `GET /api/v2/alerts` reports it. */
export interface AlertmanagerAlertState {
  fingerprint: string;
  /** `active`, `suppressed` or `unprocessed`. */
  state: string;
  silenced: boolean;
  inhibited: boolean;
}

/** The read half of Alertmanager's API. */
export interface AlertmanagerAlerts {
  alerts(): Promise<AlertmanagerAlertState[]>;
}

export interface ThreadMark {
  thread: ThreadInfo;
  reason: 'am_silenced' | 'am_inhibited' | 'am_gone';
  state: 'silenced' | 'resolved';
  note: string;
  /** `am_gone`: the thread's alerts Alertmanager no longer lists (each one's open is concluded). */
  gone?: string[];
  /** `am_gone`: none of the thread's alerts is left firing (the thread reads resolved). */
  all?: boolean;
}

/**
 * What to mark among threads Alertmanager may still hold (firing or silenced): alerts it no
 * longer lists — each concluded, alert by alert for a storm or group thread, whatever the
 * thread's state (it sends no resolve for a silenced alert) — and, on a firing thread, alerts
 * it holds silenced or inhibited. Only threads of Alertmanager alerts opened before the list was
 * read are judged (a newer one may simply not be in it yet). "No longer listed" needs the alert
 * to have been listed by this Alertmanager before (`seen`), or the thread to be held by it
 * (`amHeld`: it accepted a silence for it, or listed it silenced): an alert another Alertmanager
 * sent was never in this one's list, and is left alone. `firingOf`: the thread's alerts still open.
 */
export function threadMarks(
  threads: readonly ThreadInfo[],
  alerts: readonly AlertmanagerAlertState[],
  listedAt: Date,
  seen: ReadonlySet<string>,
  firingOf: (t: ThreadInfo) => string[],
): ThreadMark[] {
  const byFp = new Map(alerts.map((a) => [a.fingerprint, a]));
  const out: ThreadMark[] = [];
  for (const t of threads) {
    if (t.source !== 'alertmanager' || t.state === 'resolved') continue;
    if (t.openedAt === undefined || Date.parse(t.openedAt) >= listedAt.getTime()) continue;
    const fps = firingOf(t);
    if (fps.length === 0) continue;
    const gone = fps.filter((fp) => !byFp.has(fp) && (seen.has(fp) || t.amHeld === true));
    if (gone.length > 0) {
      const all = gone.length === fps.length;
      out.push({
        thread: t,
        reason: 'am_gone',
        state: 'resolved',
        note: 'no longer firing in Alertmanager (no resolve was received)',
        gone,
        all,
      });
      if (all) continue;
    }
    if (t.state !== 'firing') continue;
    const listed = fps.map((fp) => byFp.get(fp)).filter((a): a is AlertmanagerAlertState => a !== undefined);
    if (listed.length === 0) continue;
    if (listed.every((a) => a.silenced)) {
      if (t.amMark !== 'am_silenced') out.push({ thread: t, reason: 'am_silenced', state: 'silenced', note: 'silenced in Alertmanager' });
    } else if (listed.every((a) => a.silenced || a.inhibited)) {
      if (t.amMark !== 'am_inhibited')
        out.push({ thread: t, reason: 'am_inhibited', state: 'silenced', note: 'inhibited in Alertmanager (a related alert suppresses it)' });
    }
  }
  return out;
}

/** Most fingerprints remembered as listed by Alertmanager; past it the memory starts over. */
const SEEN_MAX = 200_000;

/** Remembers the fingerprints a list held (bounded). */
export function rememberListed(seen: Set<string>, alerts: readonly AlertmanagerAlertState[]): void {
  if (seen.size + alerts.length > SEEN_MAX) seen.clear();
  for (const a of alerts) seen.add(a.fingerprint);
}
