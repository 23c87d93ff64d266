/**
 * Refusals said once (issue 29 item 5): a note, fix or question refused in a thread — past its
 * cap, too long, empty — is answered to the person who sent it, privately (a Slack ephemeral;
 * on Matrix a thread reply addressed to them), once per thread per window, saying that further
 * ones are ignored; the rest are recorded as refused and not answered. So 40 questions are one
 * answer, not 36 public posts on the channel's rate limit that incident cards need, and every
 * surface (Slack, Matrix, the CLI, PagerDuty) meets the same caps and the same rule.
 */
import type { Actor, MessageRef } from '../chat/chat-types.js';
import type { RichText } from '../chat/thread-view.js';
import { answer, ledgerUser, type Ctx, type ThreadInfo } from './bot-context.js';

export const DEFAULT_REFUSAL_WINDOW_MS = 10 * 60_000;

export interface Refusal {
  thread: ThreadInfo;
  actor: Actor;
  /** The thread message it came in on (absent from the CLI: its caller prints the reason). */
  where?: MessageRef;
  kind: 'note' | 'fix' | 'question';
  text: RichText;
  eventId?: string;
}

/** Says the refusal to its person unless they were told one in this thread inside the window; whether it was said. */
export function tellRefusal(c: Pick<Ctx, 'd' | 'tx' | 'now' | 'out' | 'log'>, r: Refusal): boolean {
  const user = ledgerUser(r.actor);
  const windowMs = c.d.refusalWindowMs ?? DEFAULT_REFUSAL_WINDOW_MS;
  const last = r.thread.refusalsTold?.[user];
  if (last !== undefined && c.now.getTime() - Date.parse(last) < windowMs) {
    c.log.info({ trigger: r.thread.triggerKey, user, kind: r.kind }, 'refusal not said again inside the window');
    return false;
  }
  c.tx.record({
    type: 'refusal',
    triggerKey: r.thread.triggerKey,
    openId: r.thread.openId,
    user,
    via: r.actor.via,
    kind: r.kind,
    ...(r.eventId ? { eventId: r.eventId } : {}),
    at: c.now.toISOString(),
  });
  if (r.where) {
    const minutes = Math.max(1, Math.round(windowMs / 60_000));
    answer(
      c,
      r.actor.via,
      { kind: 'ephemeral', channel: r.where.channel, user: r.actor.id, thread: r.where.thread ?? r.where.id },
      { kind: 'ephemeral', title: 'Not saved', body: [r.text, [`Further refusals to you in this thread are not answered for ${minutes} min.`]] },
      r.eventId,
    );
  }
  return true;
}
