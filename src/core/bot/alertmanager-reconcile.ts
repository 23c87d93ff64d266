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
}

/**
 * What to mark among threads still firing: a thread whose alert Alertmanager holds silenced or
 * inhibited, or no longer holds at all. Only threads of Alertmanager alerts opened before the
 * list was read are judged (a newer one may simply not be in it yet); a thread is marked once.
 * "No longer firing" needs the alert to have been listed by this Alertmanager before (`seen`):
 * an alert another Alertmanager sent was never in this one's list, and is left alone.
 */
export function threadMarks(
  threads: readonly ThreadInfo[],
  alerts: readonly AlertmanagerAlertState[],
  listedAt: Date,
  seen: ReadonlySet<string>,
): ThreadMark[] {
  const byFp = new Map(alerts.map((a) => [a.fingerprint, a]));
  const out: ThreadMark[] = [];
  for (const t of threads) {
    if (t.source !== 'alertmanager' || t.state !== 'firing') continue;
    if (t.openedAt === undefined || Date.parse(t.openedAt) >= listedAt.getTime()) continue;
    const a = byFp.get(t.fingerprint);
    if (!a) {
      // A storm thread is over only when every alert in it is; its members are not listed here.
      if (t.storm && t.storm.count > 1) continue;
      if (t.amMark !== 'am_gone' && seen.has(t.fingerprint))
        out.push({ thread: t, reason: 'am_gone', state: 'resolved', note: 'no longer firing in Alertmanager (no resolve was received)' });
      continue;
    }
    if (a.silenced && t.amMark !== 'am_silenced') out.push({ thread: t, reason: 'am_silenced', state: 'silenced', note: 'silenced in Alertmanager' });
    else if (!a.silenced && a.inhibited && t.amMark !== 'am_inhibited')
      out.push({ thread: t, reason: 'am_inhibited', state: 'silenced', note: 'inhibited in Alertmanager (a related alert suppresses it)' });
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
