/**
 * Matrix timeline events → what the person meant (the bot's intents). What counts:
 * - `m.reaction` (`m.annotation`) by someone else on a message the bot sent: 👍 / 👎 a vote,
 *   🔕 a silence; the later redaction of a 👍 / 👎 clears the vote;
 * - `!reprise recall|silence|status|help|investigate …` anywhere → a command, answered in the
 *   thread it was typed in (or a new thread on the command itself);
 * - a reply in a thread, addressed to the bot (`!reprise …` or a mention, which is stripped):
 *   `silence 4h` silences, anything else is an operator note.
 * Everything else — the bot's own events, other bots' notices, edits, other rooms — is nothing.
 */
import type { Actor, ChatIntent, MessageRef } from '../../core/chat/chat-types.js';
import { commandIntent, threadReplyIntent } from '../../core/chat/thread-text.js';
import type { RememberedReaction } from './matrix-store.js';
import type { RawEvent } from './sync-client.js';

export const TRANSPORT = 'matrix';
/** Words after `!reprise` that make a command; anything else addressed to the bot is a message (a note). */
export const COMMANDS: ReadonlySet<string> = new Set(['recall', 'silence', 'status', 'help', 'investigate', 'ack', 'postmortem', 'oncall']);

/** Who sent an event and which thread it is in, as the homeserver says. */
export interface EventInfo {
  sender: string;
  thread?: string;
}

export interface InboundContext {
  botUserId: string;
  botDisplayName?: string;
  /** Command prefix, `!reprise`. */
  prefix: string;
  /** `undefined` when the event does not exist or the bot cannot see it. */
  lookup(room: string, eventId: string): Promise<EventInfo | undefined>;
  rememberReaction(eventId: string, r: RememberedReaction): Promise<void>;
  recallReaction(eventId: string): Promise<RememberedReaction | undefined>;
}

/** What a reaction on the bot's message means. */
export type ReactionMeaning = 'up' | 'down' | 'silence' | 'ack';

const REACTIONS: Record<string, ReactionMeaning> = { '👍': 'up', '👎': 'down', '🔕': 'silence', '👀': 'ack' };
/** What an older build stored for a remembered reaction. */
const LEGACY: Record<string, ReactionMeaning> = { '+1': 'up', '-1': 'down', no_bell: 'silence' };

/** 👍 / 👎 / 🔕 / 👀, with variation selectors and skin tones ignored; undefined for any other key. */
export function reactionMeaning(key: string): ReactionMeaning | undefined {
  const bare = key
    .replace(/[\uFE0E\uFE0F]/g, '')
    .replace(/[\u{1F3FB}-\u{1F3FF}]/gu, '')
    .trim();
  return REACTIONS[bare];
}

/** The silence a 🔕 reaction sets. */
export const REACTION_SILENCE = '4h';

interface Relation {
  rel_type?: unknown;
  event_id?: unknown;
  key?: unknown;
  'm.in_reply_to'?: { event_id?: unknown };
}

function relation(e: RawEvent): Relation | undefined {
  const r = e.content?.['m.relates_to'];
  return typeof r === 'object' && r !== null ? (r as Relation) : undefined;
}

const ref = (room: string, id: string, thread?: string): MessageRef => ({ transport: TRANSPORT, channel: room, id, ...(thread ? { thread } : {}) });

/** Translates one timeline event of a configured room; `undefined` when it means nothing to the bot. */
export async function translate(room: string, e: RawEvent, ctx: InboundContext): Promise<ChatIntent | undefined> {
  if (!e.event_id || !e.sender || e.sender === ctx.botUserId) return undefined;
  switch (e.type) {
    case 'm.reaction':
      return reaction(room, e as RawEvent & { event_id: string; sender: string }, ctx);
    case 'm.room.redaction':
      return redaction(room, e as RawEvent & { event_id: string; sender: string }, ctx);
    case 'm.room.message':
      return message(room, e as RawEvent & { event_id: string; sender: string }, ctx);
    default:
      return undefined;
  }
}

async function reaction(room: string, e: RawEvent & { event_id: string; sender: string }, ctx: InboundContext): Promise<ChatIntent | undefined> {
  const r = relation(e);
  if (r?.rel_type !== 'm.annotation' || typeof r.event_id !== 'string' || typeof r.key !== 'string') return undefined;
  const meaning = reactionMeaning(r.key);
  if (!meaning) return undefined;
  const target = await ctx.lookup(room, r.event_id);
  if (target?.sender !== ctx.botUserId) return undefined;
  const remembered: RememberedReaction = { room, user: e.sender, target: r.event_id, reaction: meaning, ...(target.thread ? { thread: target.thread } : {}) };
  // Remembered before it is delivered: a redaction strips the reaction's content, and this is
  // then the only record of what was taken back.
  await ctx.rememberReaction(e.event_id, remembered);
  const actor: Actor = { id: e.sender, via: TRANSPORT };
  const on = { message: ref(room, r.event_id, target.thread) };
  if (meaning === 'silence') return { type: 'silence', eventId: e.event_id, actor, duration: REACTION_SILENCE, target: on };
  if (meaning === 'ack') return { type: 'ack', eventId: e.event_id, actor, target: on };
  return { type: 'vote', eventId: e.event_id, actor, vote: meaning, target: on };
}

async function redaction(room: string, e: RawEvent & { event_id: string; sender: string }, ctx: InboundContext): Promise<ChatIntent | undefined> {
  const redacts = typeof e.redacts === 'string' ? e.redacts : typeof e.content?.['redacts'] === 'string' ? (e.content['redacts'] as string) : undefined;
  if (!redacts) return undefined;
  const r = await ctx.recallReaction(redacts);
  if (!r || r.room !== room) return undefined;
  const meaning = LEGACY[r.reaction] ?? (r.reaction as ReactionMeaning);
  // A 🔕 taken back does not end the silence (as on Slack); a vote taken back is cleared.
  if (meaning !== 'up' && meaning !== 'down') return undefined;
  // The vote belongs to whoever reacted, even when a moderator removed the reaction.
  return { type: 'vote', eventId: e.event_id, actor: { id: r.user, via: TRANSPORT }, vote: 'clear', target: { message: ref(room, r.target, r.thread) } };
}

async function message(room: string, e: RawEvent & { event_id: string; sender: string }, ctx: InboundContext): Promise<ChatIntent | undefined> {
  const c = e.content ?? {};
  // Other bots speak in notices; answering them is how bots loop.
  if (c['msgtype'] !== 'm.text' && c['msgtype'] !== 'm.emote') return undefined;
  if (typeof c['body'] !== 'string') return undefined;
  const r = relation(e);
  if (r?.rel_type === 'm.replace') return undefined;

  const root = await threadRoot(room, r, ctx);
  const body = stripReplyFallback(c['body'], r);
  const address = addressed(body, e, ctx);
  const actor: Actor = { id: e.sender, via: TRANSPORT };
  const thread = root ? ref(room, root.id) : undefined;

  if (address.prefixed) {
    const verb = /^(\S+)/.exec(address.text)?.[1]?.toLowerCase() ?? '';
    if (verb === '' || COMMANDS.has(verb))
      return commandIntent(address.text, {
        eventId: e.event_id,
        actor,
        channel: room,
        ...(thread ? { thread } : {}),
        replyTo: { kind: 'thread', ref: thread ?? ref(room, e.event_id) },
      });
  }
  if (!address.addressed || !thread) return undefined;
  return threadReplyIntent(address.text, { eventId: e.event_id, actor, thread });
}

/** The thread an event is in (a thread relation, or a rich reply to a message in one), and whether the bot started it. */
async function threadRoot(room: string, r: Relation | undefined, ctx: InboundContext): Promise<{ id: string; bots: boolean } | undefined> {
  let id: string | undefined;
  if (r?.rel_type === 'm.thread' && typeof r.event_id === 'string') id = r.event_id;
  else if (typeof r?.['m.in_reply_to']?.event_id === 'string') {
    // A client without threads answers with a plain reply: follow it to the thread it is about.
    const replied = await ctx.lookup(room, r['m.in_reply_to'].event_id);
    if (!replied) return undefined;
    id = replied.thread ?? (replied.sender === ctx.botUserId ? r['m.in_reply_to'].event_id : undefined);
  }
  if (!id) return undefined;
  const info = await ctx.lookup(room, id);
  return { id, bots: info?.sender === ctx.botUserId };
}

/** Drops the `> <@user> quoted` lines a rich reply puts before its text (spec: reply fallbacks). */
export function stripReplyFallback(body: string, r: Relation | undefined): string {
  if (!r?.['m.in_reply_to'] || !body.startsWith('> ')) return body;
  const lines = body.split('\n');
  let i = 0;
  while (i < lines.length && lines[i]!.startsWith('>')) i++;
  if (lines[i] === '') i++;
  return lines.slice(i).join('\n');
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Whether the message is for the bot — `!reprise …`, a mention (`m.mentions`, the user id in
 * the text, or a pill whose text is the display name) — and its text with that stripped.
 */
export function addressed(body: string, e: RawEvent, ctx: InboundContext): { addressed: boolean; prefixed: boolean; text: string } {
  const trimmed = body.trim();
  const prefix = new RegExp(`^${escapeRegExp(ctx.prefix)}(?=$|[\\s:,])[:,]?\\s*`, 'i');
  const p = prefix.exec(trimmed);
  if (p) return { addressed: true, prefixed: true, text: trimmed.slice(p[0].length).trim() };

  const mentions = e.content?.['m.mentions'];
  const ids = typeof mentions === 'object' && mentions !== null ? (mentions as { user_ids?: unknown }).user_ids : undefined;
  const byMentions = Array.isArray(ids) && ids.includes(ctx.botUserId);
  const html = typeof e.content?.['formatted_body'] === 'string' ? (e.content['formatted_body'] as string) : '';
  const byPill = html.includes(`matrix.to/#/${ctx.botUserId}`) || html.includes(`matrix.to/#/${encodeURIComponent(ctx.botUserId)}`);
  const byId = trimmed.includes(ctx.botUserId);
  const localpart = /^@([^:]+):/.exec(ctx.botUserId)?.[1];
  const names = [ctx.botUserId, ...(localpart ? [`@${localpart}`] : []), ...(ctx.botDisplayName ? [ctx.botDisplayName] : [])];
  const lead = new RegExp(`^(?:${names.map(escapeRegExp).join('|')})(?=$|[\\s:,])[:,]?\\s*`, 'i');
  const leading = lead.exec(trimmed);
  // A display name alone is not a mention (anyone can be called "Reprise"); at the start of a
  // message that also mentions the bot, it is the pill's text.
  const byLead = leading !== null && (leading[0].startsWith('@') || byMentions || byPill);
  if (!(byMentions || byPill || byId || byLead)) return { addressed: false, prefixed: false, text: trimmed };
  let text = leading && byLead ? trimmed.slice(leading[0].length) : trimmed;
  text = text
    .split(ctx.botUserId)
    .join('')
    .replace(/[ \t]{2,}/g, ' ')
    .trim();
  // "@reprise !reprise silence 4h" and "Reprise: !reprise …" are still commands.
  const again = prefix.exec(text);
  if (again) return { addressed: true, prefixed: true, text: text.slice(again[0].length).trim() };
  return { addressed: true, prefixed: false, text };
}
