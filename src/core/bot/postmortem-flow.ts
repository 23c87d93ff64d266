/**
 * A postmortem draft from what the ledger recorded of an incident (issue 21 item 5):
 * `@reprise postmortem` / `!reprise postmortem` in its thread, `/reprise postmortem <trigger>`
 * (`!reprise postmortem <trigger>`) anywhere, or `reprise postmortem <trigger>` from the CLI —
 * the last two on the trigger's newest thread. With a forge it becomes a PR adding
 * `postmortems/<date>-<alert>.md` (through the curator, like a fix; the thread gets the link);
 * without one the draft is the answer: replied in the thread, answered privately to a command,
 * returned to the CLI.
 */
import { randomUUID } from 'node:crypto';
import type { ChatIntent, ResponseTarget } from '../chat/chat-types.js';
import type { RichText } from '../chat/thread-view.js';
import { spanEnd, spanStart } from '../chat/incident-span.js';
import { renderPostmortem, type PostmortemDraft } from '../curate/postmortem.js';
import { RepriseError } from '../errors.js';
import type { PostmortemMaterial } from '../ledger-events.js';
import { notify, answer, actorRun, ledgerUser, type Ctx, type ThreadInfo } from './bot-context.js';
import type { ChatOutcome } from './bot-context.js';
import { plainAnswer } from './commands.js';
import { episodeFacts } from './episode-facts.js';
import { fixMaterial } from './fix-flow.js';

/** A postmortem asked for in a thread, by a command (with where to answer) or from the CLI (no event id). */
type Postmortem = Omit<Extract<ChatIntent, { type: 'postmortem' }>, 'eventId'> & { eventId?: string; replyTo?: ResponseTarget };

/** A recorded postmortem request; without a forge, the draft itself (what the CLI prints). */
export type PostmortemOutcome = ChatOutcome | (Extract<ChatOutcome, { status: 'recorded' }> & { draft?: PostmortemDraft; filed?: boolean });

/** Longest draft replied in a thread (or answered privately) when no forge is configured. */
const REPLY_CAP = 3500;

export function postmortemMaterial(c: Pick<Ctx, 'read' | 'now'>, thread: ThreadInfo, e: Pick<Postmortem, 'actor'>): PostmortemMaterial {
  const base = fixMaterial(c, thread, { actor: e.actor, text: '-' });
  // This episode's facts only (issue 28): its notes, fixes and acks; the 👎 come through fixMaterial, per episode too.
  const facts = episodeFacts(thread);
  const mine = facts.owns;
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
  // Its newest episode's end (a reopened incident has several in one thread; the draft spans them).
  const current = thread.episodes?.at(-1) ?? thread.openId;
  const episode = c.read.recentEpisodes(thread.triggerKey).find((ep) => ep.openId === current);
  const openedAt = thread.openedAt ?? episode?.openedAt;
  const span = {
    startsAt: facts.since ?? thread.firedAt ?? episode?.startsAt,
    openedAt,
    endsAt: episode?.endsAt,
    resolvedAt: episode?.resolvedAt,
    group: facts.since ? undefined : thread.storm,
  };
  const startsAt = spanStart(span);
  const endsAt = episode ? spanEnd(span) : undefined;
  return {
    user: ledgerUser(e.actor),
    at: c.now.toISOString(),
    triggerKey: thread.triggerKey,
    alert: base.alert,
    ...(openedAt ? { openedAt } : {}),
    ...(episode?.resolvedAt ? { resolvedAt: episode.resolvedAt } : {}),
    ...(startsAt ? { startsAt } : {}),
    ...(endsAt ? { endsAt } : {}),
    ...(facts.acks.length > 0 ? { acks: facts.acks.slice(0, 10).map((a) => ({ user: a.name ?? a.user, at: a.at })) } : {}),
    ...(base.cause ? { cause: base.cause } : {}),
    said: said.slice(-20),
    triedAndFailed: base.triedAndFailed,
  };
}

/** The thread a postmortem is about: the one it was asked in, else the trigger's newest. */
function threadOf(c: Ctx, e: Postmortem): ThreadInfo | undefined {
  if (e.target.message) return c.read.threadByMessage(e.target.message);
  return e.target.triggerKey ? c.read.newestThread(e.target.triggerKey) : undefined;
}

/**
 * @throws RepriseError `not_found` when a command or the CLI names a trigger with no incident thread.
 */
export function decidePostmortem(c: Ctx, e: Postmortem): PostmortemOutcome {
  if (e.eventId !== undefined && c.read.seenChatEvent(e.eventId)) return { status: 'duplicate', reason: `event ${e.eventId} was already recorded` };
  if (!(c.d.allow ?? (() => true))(e.actor)) return { status: 'refused', reason: `${e.actor.via} user ${e.actor.id} is not on the allowlist` };
  const thread = threadOf(c, e);
  if (!thread) {
    if (e.target.message || !e.target.triggerKey) return { status: 'ignored', reason: 'not a thread the bot started' };
    throw new RepriseError(
      'not_found',
      `no incident thread for trigger ${e.target.triggerKey.slice(0, 200)}: a postmortem is drafted from an incident the bot posted (\`status\` lists open incidents)`,
    );
  }
  // In the thread it was asked in; a command or the CLI is answered on its own, the thread told only of a PR.
  const inThread = e.target.message?.transport;
  const reply = (icon: string, text: RichText, transports: readonly string[]): void => notify(c, thread.openId, transports, { topic: 'note', icon, text });
  const material = postmortemMaterial(c, thread, e);
  const at = c.now.toISOString();
  const index = c.tx.size;
  c.tx.record({
    type: 'postmortem',
    triggerKey: thread.triggerKey,
    openId: thread.openId,
    user: ledgerUser(e.actor),
    via: e.actor.via,
    ...(e.eventId ? { eventId: e.eventId } : {}),
    at,
  });
  const recorded = { status: 'recorded' as const, kind: 'postmortem' as const, triggerKey: thread.triggerKey, event: { type: 'postmortem' as const }, index };
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
    reply(
      '📄',
      ['postmortem asked for by ', actorRun(e.actor), ': drafting it as a pull request under postmortems/'],
      inThread ? [inThread] : thread.transports,
    );
    if (e.replyTo && !inThread)
      answer(
        c,
        e.actor.via,
        e.replyTo,
        plainAnswer(
          'Postmortem',
          `📄 drafting the postmortem of ${thread.triggerKey} as a pull request under postmortems/; its link follows in the incident's thread`,
        ),
        e.eventId,
      );
    return { ...recorded, filed: true };
  }
  const draft = renderPostmortem(material, thread.openId.replace(/[^0-9a-f]/gi, '').toLowerCase() || '00000000');
  const body = draft.content.length > REPLY_CAP ? `${draft.content.slice(0, REPLY_CAP - 1)}…` : draft.content;
  if (inThread) reply('📄', [`postmortem draft (no forge is configured, so here it is; save it as `, { code: draft.path }, `):\n`, body], [inThread]);
  else if (e.replyTo)
    answer(
      c,
      e.actor.via,
      e.replyTo,
      {
        kind: 'ephemeral',
        title: `Postmortem of ${thread.triggerKey.slice(0, 120)}`,
        body: [['No forge is configured, so here is the draft; save it as ', { code: draft.path }, ':'], [body]],
      },
      e.eventId,
    );
  return { ...recorded, draft };
}
