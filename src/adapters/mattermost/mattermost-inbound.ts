/**
 * Mattermost posts, reactions and acknowledgements → what the person meant (the bot's intents).
 * The one place Mattermost's names (`+1`, `no_bell`, `root_id`, `from_bot`) are read. What counts:
 * - a reaction by someone else on a post the bot made: 👍 / 👎 a vote (removing it clears the
 *   vote), 🔕 a silence, 👀 an ack; the native acknowledgement (`post_acknowledgement_added`) an ack;
 * - `@reprise recall|silence|status|help|investigate|ack|postmortem|oncall …` → a command, answered
 *   privately (an ephemeral post) in the channel or thread it was typed in;
 * - a reply in a thread the bot started that mentions the bot: `ack`, `silence 4h`, `note: …`,
 *   `fixed: …`, `postmortem`, anything else a question.
 * Everything else — the bot's own posts, other bots' and webhooks' posts, system messages,
 * channels not configured — is nothing. Pure but for `lookup`; fields are read defensively.
 */
import type { Actor, ChatIntent, MessageRef } from '../../core/chat/chat-types.js';
import { commandIntent, threadReplyIntent } from '../../core/chat/thread-text.js';
import type { MmAcknowledgement, MmPost, MmReaction } from './mattermost-api.js';

export const TRANSPORT = 'mattermost';
/** Words after `@reprise` that make a command; anything else addressed to the bot in a thread is a note or a question. */
export const COMMANDS: ReadonlySet<string> = new Set(['recall', 'silence', 'status', 'help', 'investigate', 'ack', 'postmortem', 'oncall']);
/** The silence a 🔕 reaction sets. */
export const REACTION_SILENCE = '4h';

export type ReactionMeaning = 'up' | 'down' | 'silence' | 'ack';
const REACTIONS: Record<string, ReactionMeaning> = { '+1': 'up', thumbsup: 'up', '-1': 'down', thumbsdown: 'down', no_bell: 'silence', eyes: 'ack' };

/** `+1`, `thumbsup_tone3`, `-1_medium_skin_tone` … → what it means; undefined for any other emoji. */
export function reactionMeaning(emoji: string): ReactionMeaning | undefined {
  const bare = emoji
    .toLowerCase()
    .replace(/_tone[1-5]$/, '')
    .replace(/_(?:light|medium_light|medium|medium_dark|dark)_skin_tone$/, '');
  return REACTIONS[bare];
}

/** Who made a post and which thread it is in, as the server says. */
export interface PostInfo {
  user_id: string;
  channel_id: string;
  root_id?: string;
}

export interface InboundContext {
  botUserId: string;
  botUsername: string;
  /** Channels the bot serves (ids); posts elsewhere are ignored. */
  channels: ReadonlySet<string>;
  /** The name a channel was configured by (`team/name`), for the command gate; else the id. */
  channelName(id: string): string;
  /** Undefined when the post does not exist or the bot cannot see it. */
  lookup(postId: string): Promise<PostInfo | undefined>;
  /** A user's username (what cards and credit lines show), when the server says. */
  userName?(userId: string): Promise<string | undefined>;
}

/** Who did it: the user id, and the username when it can be had (never trusted as markup). */
async function actorOf(user: string, ctx: InboundContext): Promise<Actor> {
  const name = await ctx.userName?.(user).catch(() => undefined);
  return name ? { id: user, name, via: TRANSPORT } : { id: user, via: TRANSPORT };
}

export type Translation = { intent: ChatIntent } | { skip: string };

const ref = (channel: string, id: string, thread?: string): MessageRef => ({ transport: TRANSPORT, channel, id, ...(thread ? { thread } : {}) });
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Whether the text is for the bot — it starts with `@<bot>` (`prefixed`: a command may follow)
 * or mentions `@<bot>` anywhere — and the text with the mention taken out.
 */
export function addressed(text: string, botUsername: string): { addressed: boolean; prefixed: boolean; text: string } {
  const t = text.trim();
  const name = escapeRegExp(botUsername);
  const lead = new RegExp(`^@${name}(?![a-z0-9._-])[:,]?\\s*`, 'i');
  const p = lead.exec(t);
  if (p) return { addressed: true, prefixed: true, text: t.slice(p[0].length).trim() };
  const anywhere = new RegExp(`(^|[^a-z0-9._-])@${name}(?![a-z0-9._-])`, 'gi');
  if (!anywhere.test(t)) return { addressed: false, prefixed: false, text: t };
  return {
    addressed: true,
    prefixed: false,
    text: t
      .replace(anywhere, '$1')
      .replace(/[ \t]{2,}/g, ' ')
      .trim(),
  };
}

/** A post someone wrote (WebSocket `posted`, or read back by a catch-up). */
export async function fromPost(post: MmPost, ctx: InboundContext): Promise<Translation> {
  if (post.user_id === ctx.botUserId) return { skip: "the bot's own post" };
  if (!ctx.channels.has(post.channel_id)) return { skip: 'a channel the bot does not serve' };
  if (str(post.type) !== undefined) return { skip: `system message ${String(post.type)}` };
  const props = post.props ?? {};
  // Other bots and webhooks: answering them is how bots loop.
  if (props['from_bot'] === 'true' || props['from_bot'] === true || props['from_webhook'] === 'true') return { skip: 'a post from a bot or a webhook' };
  if ((post.delete_at ?? 0) > 0) return { skip: 'a deleted post' };
  const a = addressed(post.message, ctx.botUsername);
  if (!a.addressed) return { skip: 'a post that does not address the bot' };
  const rootId = str(post.root_id);
  let thread: MessageRef | undefined;
  if (rootId) {
    const root = await ctx.lookup(rootId);
    if (root?.user_id === ctx.botUserId) thread = ref(post.channel_id, rootId);
  }
  const actor = await actorOf(post.user_id, ctx);
  const eventId = `post:${post.id}`;
  if (a.prefixed) {
    const verb = /^(\S+)/.exec(a.text)?.[1]?.toLowerCase() ?? '';
    if (verb === '' || COMMANDS.has(verb))
      return {
        intent: commandIntent(a.text, {
          eventId,
          actor,
          channel: ctx.channelName(post.channel_id),
          ...(thread ? { thread } : {}),
          replyTo: { kind: 'ephemeral', channel: post.channel_id, user: post.user_id, ...(rootId ? { thread: rootId } : {}) },
        }),
      };
  }
  if (!thread) return { skip: 'a mention outside an incident thread (commands are @reprise <command>)' };
  const intent = threadReplyIntent(a.text, { eventId, actor, thread });
  return intent ? { intent } : { skip: 'an empty message to the bot' };
}

/** A reaction added or removed. `since` is when a removed reaction had been made (from the store), for its event id. */
export async function fromReaction(r: MmReaction, removed: boolean, ctx: InboundContext, since?: number): Promise<Translation> {
  const user = str(r.user_id);
  const postId = str(r.post_id);
  const emoji = str(r.emoji_name);
  if (!user || !postId || !emoji) return { skip: 'a reaction without a user, post or emoji' };
  if (user === ctx.botUserId) return { skip: "the bot's own reaction" };
  const meaning = reactionMeaning(emoji);
  if (!meaning) return { skip: `reaction :${emoji}: means nothing to the bot` };
  if (removed && meaning !== 'up' && meaning !== 'down') return { skip: `a removed ${meaning} (not taken back by a reaction)` };
  const post = await ctx.lookup(postId);
  if (post?.user_id !== ctx.botUserId) return { skip: 'a reaction on a post the bot did not make' };
  if (!ctx.channels.has(post.channel_id)) return { skip: 'a channel the bot does not serve' };
  const at = removed ? (since ?? 0) : typeof r.create_at === 'number' ? r.create_at : 0;
  const eventId = `${removed ? 'unreaction' : 'reaction'}:${postId}:${user}:${emoji}:${at}`;
  const actor = await actorOf(user, ctx);
  const target = { message: ref(post.channel_id, postId, str(post.root_id)) };
  if (removed) return { intent: { type: 'vote', eventId, actor, vote: 'clear', target } };
  if (meaning === 'silence') return { intent: { type: 'silence', eventId, actor, duration: REACTION_SILENCE, target } };
  if (meaning === 'ack') return { intent: { type: 'ack', eventId, actor, target } };
  return { intent: { type: 'vote', eventId, actor, vote: meaning, target } };
}

/** The native acknowledgement (Mattermost 9.3+, a post's "Acknowledge" button) on a bot post: an ack. */
export async function fromAcknowledgement(a: MmAcknowledgement, ctx: InboundContext): Promise<Translation> {
  const user = str(a.user_id);
  const postId = str(a.post_id);
  if (!user || !postId) return { skip: 'an acknowledgement without a user or post' };
  if (user === ctx.botUserId) return { skip: "the bot's own acknowledgement" };
  const post = await ctx.lookup(postId);
  if (post?.user_id !== ctx.botUserId) return { skip: 'an acknowledgement of a post the bot did not make' };
  if (!ctx.channels.has(post.channel_id)) return { skip: 'a channel the bot does not serve' };
  const at = typeof a.acknowledged_at === 'number' ? a.acknowledged_at : 0;
  return {
    intent: {
      type: 'ack',
      eventId: `acknowledgement:${postId}:${user}:${at}`,
      actor: await actorOf(user, ctx),
      target: { message: ref(post.channel_id, postId, str(post.root_id)) },
    },
  };
}

/** A JSON string field of a WebSocket event's `data` (Mattermost sends objects as strings). */
export function jsonField<T>(data: Record<string, unknown> | undefined, key: string): T | undefined {
  const v = data?.[key];
  if (typeof v !== 'string') return typeof v === 'object' && v !== null ? (v as T) : undefined;
  try {
    return JSON.parse(v) as T;
  } catch {
    return undefined;
  }
}
