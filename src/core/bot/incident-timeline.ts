/**
 * An episode's timeline (issue 21 item 5): fired, posted, acknowledged, votes, notes, silences,
 * finding, resolved (and reopened, when its source reopened it: one thread, every episode), with the durations on-call asks about (time to acknowledge, to resolve).
 * One reader function over the ledger's read API — `reprise incident show`, `/reprise status
 * <trigger>` and a postmortem draft all read it the same way.
 */
import { richText, type RichText, type EphemeralView } from '../chat/thread-view.js';
import type { PersonRun } from '../people.js';
import { recordedRun, shortTime } from './bot-context.js';
import type { LedgerReader } from '../ledger/ledger-reader.js';
import type { TimelineItem } from '../ledger/ledger-types.js';
import { shortDuration } from '../duration.js';
import { spanStart } from '../chat/incident-span.js';

export interface IncidentTimeline {
  triggerKey: string;
  /** The thread of the trigger's newest episode, when there is one. */
  openId?: string;
  state?: 'firing' | 'resolved' | 'silenced';
  firedAt?: string;
  items: ReadonlyArray<Readonly<TimelineItem>>;
  /** Who is on it, in order (person runs: each surface names them its way). */
  ackers: PersonRun[];
  /** ms from firing to the first ack / to the resolve, once they happened. */
  toAckMs?: number;
  toResolveMs?: number;
}

/** The timeline of the trigger's newest episode (empty `items` when the ledger has no thread for it). */
export function incidentTimeline(read: Pick<LedgerReader, 'newestThread'>, triggerKey: string): IncidentTimeline {
  const thread = read.newestThread(triggerKey);
  if (!thread) return { triggerKey, items: [], ackers: [] };
  const items = thread.timeline ?? [];
  // A reopened episode counts from its reopen (firedAt); a group from its earliest alert.
  const reopened = items.some((i) => i.kind === 'reopened');
  const firedAt = reopened ? (thread.firedAt ?? thread.openedAt) : spanStart({ startsAt: thread.firedAt, openedAt: thread.openedAt, group: thread.storm });
  const since = (at: string | undefined): number | undefined => {
    if (!at || !firedAt) return undefined;
    const ms = Date.parse(at) - Date.parse(firedAt);
    return Number.isFinite(ms) ? Math.max(0, ms) : undefined;
  };
  const toAckMs = since(thread.acks?.[0]?.at);
  // A reopened incident's durations are its newest episode's: from the reopen to the resolve after it.
  const from = items.findLastIndex((i) => i.kind === 'reopened');
  // A group is over once its last alert ended: the newest resolve (a reopened incident's, after its reopen).
  const toResolveMs = thread.state === 'firing' ? undefined : since(items.slice(Math.max(0, from)).findLast((i) => i.kind === 'resolved')?.at);
  return {
    triggerKey,
    openId: thread.openId,
    state: thread.state,
    ...(firedAt ? { firedAt } : {}),
    items,
    ackers: (thread.acks ?? []).map(recordedRun),
    ...(toAckMs !== undefined ? { toAckMs } : {}),
    ...(toResolveMs !== undefined ? { toResolveMs } : {}),
  };
}

const ICON: Record<TimelineItem['kind'], string> = {
  fired: '🚨',
  opened: '🧾',
  posted: '💬',
  ack: '👀',
  vote: '🗳',
  note: '📝',
  fix: '🛠',
  silence: '🔕',
  finding: '🧭',
  pagerduty: '📟',
  resolved: '✅',
  reopened: '🔁',
};

/** One item as runs: people as person runs (each surface names them its way), notes as the people's own text. */
export function timelineRuns(i: Readonly<TimelineItem>, firedAt: string | undefined): RichText {
  const offset = firedAt ? `+${shortDuration(Date.parse(i.at) - Date.parse(firedAt))}` : '';
  // An ack's detail is the name its event carried.
  const who: RichText = i.user ? [' ', recordedRun({ user: i.user, via: i.via, name: i.kind === 'ack' ? i.detail : undefined })] : [];
  const via = i.via && i.kind !== 'fired' ? ` via ${i.via}` : '';
  let what: RichText;
  switch (i.kind) {
    case 'fired':
      what = [`fired${i.via ? ` (${i.via})` : ''}`];
      break;
    case 'opened':
      what = [`opened (${i.detail ?? 'fresh'})`];
      break;
    case 'posted':
      what = [`posted to ${i.detail ?? 'chat'}`];
      break;
    case 'ack':
      what = ['acknowledged by', ...who, via];
      break;
    case 'vote':
      what = [`vote ${i.detail === 'up' ? '👍' : i.detail === 'down' ? '👎' : 'cleared'} by`, ...who, via];
      break;
    case 'note':
      what = ['note by', ...who, `${via}: ${i.detail ?? ''}`];
      break;
    case 'fix':
      what = ['what fixed it, by', ...who, `${via}: ${i.detail ?? ''}`];
      break;
    case 'silence':
      // The end as people read times here (`10:06 UTC`, the date too when it is another day), not an ISO stamp.
      what = [
        'silenced by',
        ...who,
        `${via} until ${i.detail && Number.isFinite(Date.parse(i.detail)) ? shortTime(i.detail, new Date(i.at)) : (i.detail ?? '?')}`,
      ];
      break;
    case 'finding':
      what = [`finding ${i.detail ?? ''}`.trim()];
      break;
    case 'pagerduty':
      what = [`PagerDuty ${i.detail ?? ''}`.trim()];
      break;
    case 'resolved':
      what = ['resolved'];
      break;
    case 'reopened':
      what = [`reopened${i.via ? ` in ${i.via}` : ''}`];
      break;
  }
  return [`${i.at.slice(0, 19).replace('T', ' ')}Z ${offset.padEnd(9)} ${ICON[i.kind]} `, ...what.filter((r) => r !== '')];
}

/** One item as a line of text (people by name, else id). */
export function timelineLine(i: Readonly<TimelineItem>, firedAt: string | undefined): string {
  return richText(timelineRuns(i, firedAt));
}

/** The durations line: "acknowledged after 4 min · resolved after 23 min · on it: Ann", people as person runs. */
export function timelineSummary(t: IncidentTimeline): RichText {
  const parts = [
    t.toAckMs !== undefined ? `acknowledged after ${shortDuration(t.toAckMs)}` : 'not acknowledged',
    t.toResolveMs !== undefined ? `resolved after ${shortDuration(t.toResolveMs)}` : t.state === 'silenced' ? 'silenced' : 'still firing',
  ];
  if (t.ackers.length === 0) return [parts.join(' · ')];
  return [`${parts.join(' · ')} · on it: `, ...t.ackers.flatMap((a, n) => (n > 0 ? [', ', a] : [a]))];
}

/** `/reprise status <trigger>`: the timeline as a private answer. */
export function timelineAnswer(t: IncidentTimeline, _now: Date): EphemeralView {
  if (t.items.length === 0)
    return {
      kind: 'ephemeral',
      title: `Timeline of ${t.triggerKey.slice(0, 120)}`,
      body: [['No incident thread for this trigger key; ', { code: 'status' }, ' lists open incidents.']],
    };
  const body: RichText[] = [timelineSummary(t)];
  for (const i of t.items.slice(-40)) body.push(timelineRuns(i, t.firedAt));
  return { kind: 'ephemeral', title: `Timeline of ${t.triggerKey.slice(0, 120)}`, body };
}
