/**
 * `@reprise postmortem` / `!reprise postmortem` in an incident thread (issue 21 item 5): a
 * postmortem draft from what the ledger recorded of the incident. With a forge it becomes a PR
 * adding `postmortems/<date>-<alert>.md` (through the curator, like a fix); without one the
 * draft is replied in the thread.
 */
import { randomUUID } from 'node:crypto';
import type { ChatIntent } from '../chat/chat-types.js';
import type { RichText } from '../chat/thread-view.js';
import { renderPostmortem } from '../curate/postmortem.js';
import type { PostmortemMaterial } from '../ledger-events.js';
import { atName, enqueue, ledgerUser, type Ctx, type ThreadInfo } from './bot-context.js';
import type { ChatOutcome } from './chat-actions.js';
import { fixMaterial } from './fix-flow.js';

type Postmortem = Extract<ChatIntent, { type: 'postmortem' }>;

/** Longest draft replied in a thread when no forge is configured. */
const REPLY_CAP = 3500;

export function postmortemMaterial(c: Ctx, thread: ThreadInfo, e: Postmortem): PostmortemMaterial {
  const base = fixMaterial(c, thread, { actor: e.actor, text: '-' });
  const mine = (r: { openId?: string }): boolean => r.openId === thread.openId;
  const said = [
    ...c.read
      .humanNotes(thread.triggerKey)
      .filter(mine)
      .map((n) => ({ kind: 'note' as const, user: n.user, text: n.text.slice(0, 1000), at: n.at })),
    ...c.read
      .humanFixes(thread.triggerKey)
      .filter(mine)
      .map((f) => ({ kind: 'fix' as const, user: f.user, text: f.text.slice(0, 2000), at: f.at })),
  ].sort((a, b) => a.at.localeCompare(b.at));
  const episode = c.read.recentEpisodes(thread.triggerKey).find((ep) => ep.openId === thread.openId);
  const openedAt = thread.openedAt ?? episode?.openedAt;
  return {
    user: ledgerUser(e.actor),
    at: c.now.toISOString(),
    triggerKey: thread.triggerKey,
    alert: base.alert,
    ...(openedAt ? { openedAt } : {}),
    ...(episode?.resolvedAt ? { resolvedAt: episode.resolvedAt } : {}),
    ...(base.cause ? { cause: base.cause } : {}),
    said: said.slice(-20),
    triedAndFailed: base.triedAndFailed,
  };
}

export function decidePostmortem(c: Ctx, e: Postmortem): ChatOutcome {
  if (c.read.seenChatEvent(e.eventId)) return { status: 'duplicate', reason: `event ${e.eventId} was already recorded` };
  if (!(c.d.allow ?? (() => true))(e.actor)) return { status: 'refused', reason: `${e.actor.via} user ${e.actor.id} is not on the allowlist` };
  const thread = e.target.message ? c.read.threadByMessage(e.target.message) : undefined;
  if (!thread || !e.target.message) return { status: 'ignored', reason: 'not a thread the bot started' };
  const transport = e.target.message.transport;
  const reply = (icon: string, text: RichText): void =>
    enqueue(c.tx, c.now, { transport, op: 'reply', openId: thread.openId, view: { kind: 'notice', topic: 'note', icon, text } }, c.out);
  const material = postmortemMaterial(c, thread, e);
  const at = c.now.toISOString();
  const index = c.tx.size;
  c.tx.record({
    type: 'postmortem',
    triggerKey: thread.triggerKey,
    openId: thread.openId,
    user: ledgerUser(e.actor),
    via: e.actor.via,
    eventId: e.eventId,
    at,
  });
  if (c.d.curation) {
    c.tx.record({
      type: 'curate',
      id: randomUUID(),
      subject: 'postmortem',
      openId: thread.openId,
      triggerKey: thread.triggerKey,
      dupFingerprint: thread.dupFingerprint ?? '',
      postmortem: material,
      at,
    });
    c.effects.push({ type: 'curate' });
    reply('📄', [`postmortem asked for by ${atName(e.actor)}: drafting it as a pull request under postmortems/`]);
  } else {
    const draft = renderPostmortem(material, thread.openId.replace(/[^0-9a-f]/gi, '').toLowerCase() || '00000000');
    const body = draft.content.length > REPLY_CAP ? `${draft.content.slice(0, REPLY_CAP - 1)}…` : draft.content;
    reply('📄', [`postmortem draft (no forge is configured, so here it is; save it as `, { code: draft.path }, `):\n`, body]);
  }
  return { status: 'recorded', kind: 'postmortem', triggerKey: thread.triggerKey, event: { type: 'postmortem' }, index };
}
