/**
 * How often each human fix of a trigger worked, as the outcome ledger tells it (issue 31 item 2):
 * the episode a fix was said in ended and the alert did not come back within a day (held), came
 * back within a day (did not hold), or it is too early to say (pending). The same words said in
 * several episodes are one fix with their counts summed; said twice in one episode, once. This
 * is what orders the entry's "What has fixed it" list. Reads the ledger's read model only.
 */
import { spanEnd, spanStart } from '../chat/incident-span.js';
import { HELD_WINDOW_MS, type PastEpisode } from '../chat/seen-before.js';
import type { FixOutcome } from '../ledger-events.js';
import { fixKey } from './amend-entry.js';
import { neutraliseLine } from './neutralise-markdown.js';

/** What the tally reads of the ledger: a narrow view of its reader. */
export interface FixOutcomeReads {
  recentEpisodes(triggerKey: string): ReadonlyArray<PastEpisode>;
  occurrences(triggerKey: string): { newestOpen?: { id?: string | undefined; at: string; startsAt?: string | undefined } | undefined };
  thread(openId: string): { openId: string } | undefined;
  humanFixes(triggerKey: string): ReadonlyArray<{ user: string; via?: string; text: string; at: string; openId?: string | undefined }>;
}

/** A ledger user without its surface (`slack:U0ANN` → `U0ANN`). */
const bare = (u: string): string => u.replace(/^[a-z][a-z0-9_-]*:(?=.)/, '').replace(/^@+/, '');

/**
 * The trigger's fixes with their counts, oldest first; `current` (the fix being filed, not in the
 * ledger yet) is counted with its own episode, `openId`.
 */
export function fixOutcomes(
  read: FixOutcomeReads,
  triggerKey: string,
  now: Date,
  current?: { name: string; via: string; text: string; at: string; openId: string },
): FixOutcome[] {
  const lead = (id: string): string => read.thread(id)?.openId ?? id;
  // Each thread's span (a storm thread is one episode) and every start the trigger had.
  const spans = new Map<string, { end?: string | undefined }>();
  const starts: number[] = [];
  for (const e of read.recentEpisodes(triggerKey)) {
    const start = spanStart({ startsAt: e.startsAt, openedAt: e.openedAt });
    if (start !== undefined) starts.push(Date.parse(start));
    if (e.openId === undefined) continue;
    const id = lead(e.openId);
    const end = spanEnd({ endsAt: e.endsAt, resolvedAt: e.resolvedAt });
    const had = spans.get(id);
    spans.set(id, { end: had && (had.end === undefined || end === undefined || had.end > end) ? had.end : end });
  }
  const open = read.occurrences(triggerKey).newestOpen;
  if (open) {
    const start = spanStart({ startsAt: open.startsAt, openedAt: open.at });
    if (start !== undefined) starts.push(Date.parse(start));
    // Still firing: no end yet, so nothing to grade.
    if (open.id !== undefined && !spans.has(lead(open.id))) spans.set(lead(open.id), {});
  }
  const grade = (openId: string | undefined): 'held' | 'cameBack' | 'pending' => {
    const end = openId === undefined ? undefined : spans.get(lead(openId))?.end;
    if (end === undefined) return 'pending';
    const endMs = Date.parse(end);
    const next = starts.filter((s) => s >= endMs).sort((a, b) => a - b)[0];
    if (next !== undefined && next - endMs < HELD_WINDOW_MS) return 'cameBack';
    return now.getTime() - endMs >= HELD_WINDOW_MS ? 'held' : 'pending';
  };
  const said = [
    ...read.humanFixes(triggerKey).map((f) => ({ name: bare(f.user), via: f.via ?? f.user.split(':')[0] ?? 'chat', text: f.text, at: f.at, openId: f.openId })),
    ...(current ? [current] : []),
  ];
  const out = new Map<string, FixOutcome & { episodes: Set<string> }>();
  for (const f of said) {
    const key = fixKey(neutraliseLine(f.text, 1000));
    if (key === '') continue;
    const episode = f.openId === undefined ? `?${f.at}` : lead(f.openId);
    const o = out.get(key) ?? { text: f.text, name: f.name, via: f.via, at: f.at, held: 0, cameBack: 0, pending: 0, episodes: new Set<string>() };
    out.set(key, o);
    if (o.episodes.has(episode)) continue;
    o.episodes.add(episode);
    o[grade(f.openId)] += 1;
  }
  return [...out.values()].map(({ episodes: _episodes, ...o }) => o);
}
