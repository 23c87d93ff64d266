/**
 * An on-call answer as a surface shows it (issue 32): the card's "📟 on call:" line for one
 * surface (each person's id there, when known), the reminder in the thread, and the answer to
 * `/reprise oncall`. Everything a provider said is text here; renderers escape it.
 */
import type { OnCallAnswer } from '../../ports/oncall.js';
import { ON_CALL_LABEL, onCallTail, type NoticeView, type OnCallView, type RichText } from '../chat/thread-view.js';

/** An answer and the on-call route it is for, as a firing intent carries it to the decision. */
export interface RoutedOnCall {
  route: string;
  /** The PagerDuty service asked about, when the incident named one. */
  service?: string;
  answer: OnCallAnswer;
  /** The answer did not come within the budget: a late one edits the cards (`oncall_answered`). */
  late?: boolean;
}

const SOURCE_LABEL: Record<string, string> = { rotation: 'rotation', pagerduty: 'PagerDuty', grafana: 'Grafana OnCall' };

/** "PagerDuty", "rotation", or the source as it is. */
export function sourceLabel(source: string): string {
  return SOURCE_LABEL[source] ?? source;
}

/** "17:00 UTC" today, "2026-12-03 09:00 UTC" another day. */
function untilText(iso: string, now: Date): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  const day = d.toISOString().slice(0, 10);
  const hm = d.toISOString().slice(11, 16);
  return day === now.toISOString().slice(0, 10) ? `${hm} UTC` : `${day} ${hm} UTC`;
}

/** The card's on-call line for `transport`: people with their id there, or unknown with why. */
export function onCallView(answer: OnCallAnswer, transport: string, now: Date): OnCallView {
  if (!answer.known) return { people: [], detail: sourceLabel(answer.source), unknown: answer.reason };
  const until = answer.until ? untilText(answer.until, now) : '';
  return {
    people: answer.people.map((p) => (p.chat[transport] ? { name: p.name, id: p.chat[transport] } : { name: p.name })),
    detail: until ? `${sourceLabel(answer.source)} · until ${until}` : sourceLabel(answer.source),
  };
}

/** The ids a card on `transport` pings for its on-call line. */
export function onCallIds(view: OnCallView | undefined): string[] {
  return (view?.people ?? []).flatMap((p) => (p.id ? [p.id] : []));
}

/** The on-call line as rich text: mentions as person runs on their surface, names as text elsewhere. */
export function onCallText(view: OnCallView, via: string): RichText {
  if (view.unknown !== undefined || view.people.length === 0) return [`${ON_CALL_LABEL}${onCallTail(view)}`];
  const people = view.people.flatMap((p, i): RichText => [...(i > 0 ? [', '] : []), p.id ? { person: { via, id: p.id, name: p.name } } : p.name]);
  return [ON_CALL_LABEL, ...people, onCallTail(view)];
}

/** The thread's one reminder: nobody acknowledged; the person on call, mentioned again. */
export function reminderNotice(view: OnCallView, via: string, waited: string): Omit<NoticeView, 'kind'> {
  const ids = onCallIds(view);
  return {
    topic: 'info',
    icon: '⏰',
    text: [`nobody has acknowledged after ${waited} · `, ...onCallText(view, via)],
    ...(ids.length > 0 ? { mentions: ids } : {}),
  };
}
