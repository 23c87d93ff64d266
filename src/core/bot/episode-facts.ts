/**
 * What people did in one episode of an incident (issue 28 item 2, per-episode facts): the 👎
 * still standing on it, the notes and fixes said in its thread, who acknowledged it. A fix draft
 * or a postmortem reports these, never a trigger's lifetime: a postmortem of an episode nobody
 * voted on mentions no 👎, a second occurrence's draft none of the first one's notes. A thread
 * its source reopened holds several episodes; only what came after its newest reopen counts.
 */
import type { ThreadInfo } from './bot-context.js';

export interface EpisodeFacts {
  /** When this episode began in its thread: the newest reopen, else undefined (the whole thread). */
  since?: string;
  /** People whose standing vote in this episode is 👎 (their last vote in it). */
  downVoters: string[];
  upVoters: string[];
  /** Who acknowledged it (👀, `ack`), in order. */
  acks: ReadonlyArray<{ user: string; name?: string | undefined; at: string }>;
  /** Whether a note or fix record belongs to this episode. */
  owns(r: { openId?: string | undefined; at: string }): boolean;
}

export function episodeFacts(thread: ThreadInfo): EpisodeFacts {
  const items = thread.timeline ?? [];
  const reopenedAt = items.findLast((i) => i.kind === 'reopened')?.at;
  const since = reopenedAt;
  const inside = (at: string): boolean => since === undefined || at >= since;
  const last = new Map<string, string>();
  for (const i of items) if (i.kind === 'vote' && i.user !== undefined && inside(i.at)) last.set(i.user, i.detail ?? '');
  const voters = (v: string): string[] => [...last].filter(([, d]) => d === v).map(([u]) => u);
  const ids = new Set([thread.openId, ...(thread.episodes ?? [])]);
  return {
    ...(since !== undefined ? { since } : {}),
    downVoters: voters('down'),
    upVoters: voters('up'),
    acks: (thread.acks ?? []).filter((a) => inside(a.at)),
    owns: (r) => r.openId !== undefined && ids.has(r.openId) && inside(r.at),
  };
}
