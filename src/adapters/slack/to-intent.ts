/**
 * Slack payloads (Events API envelopes, slash commands, block actions) as what the person
 * meant — a vote, a silence, a note, a command — or the reason one is not for the bot. The one
 * place Slack's names (`+1`, `no_bell`, action ids) are read. Pure: tests call these directly.
 * Payloads are read defensively — a field that is missing or of the wrong type skips the event
 * rather than throwing.
 */
import type { Actor, ChatIntent, MessageRef } from '../../core/chat/chat-types.js';
import { commandIntent, parseSilenceChoice, plainThreadReplyIntent, threadReplyIntent } from '../../core/chat/thread-text.js';
import { controlFor, isSilenceChoice, parseControlsBlockId } from './slack-controls.js';
import { mentionsUser, slackTextToPlain } from './slack-text.js';

export const TRANSPORT = 'slack';

/** Who the bot is in Slack (from `auth.test`): its user id and bot id. */
export interface SlackSelf {
  userId: string;
  botId?: string;
}

export type Translation = { intent: ChatIntent } | { skip: string };

/** The silence a 🔕 reaction sets (the card's select offers 1 h / 4 h / 24 h). */
export const REACTION_SILENCE = '4h';

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj | undefined => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : undefined);
const str = (o: Obj | undefined, k: string): string | undefined => {
  const v = o?.[k];
  return typeof v === 'string' && v !== '' ? v : undefined;
};

/** 👍 `+1`, 👎 `-1`, 🔕 `no_bell`: Slack's aliases and skin tones folded into one name each. */
export function normaliseReaction(name: string): string {
  const base = name.split('::')[0] ?? name;
  if (base === 'thumbsup') return '+1';
  if (base === 'thumbsdown') return '-1';
  return base;
}

/** Slack's id for an Events API delivery: the same on every retry of it. */
function eventIdOf(body: Obj, fallback: string): string {
  return str(body, 'event_id') ?? fallback;
}

/** `reaction_added` / `reaction_removed` on the bot's own messages (never the bot's own): 👍 / 👎 vote, 🔕 silences, 👀 acknowledges. */
export function fromReaction(body: Obj, removed: boolean, self: SlackSelf): Translation {
  const ev = obj(body['event']);
  const item = obj(ev?.['item']);
  const user = str(ev, 'user');
  const reaction = str(ev, 'reaction');
  const channel = str(item, 'channel');
  const ts = str(item, 'ts');
  if (str(item, 'type') !== 'message' || !channel || !ts) return { skip: 'reaction on something other than a message' };
  if (!user || !reaction) return { skip: 'reaction without a user or a name' };
  if (user === self.userId) return { skip: "the bot's own reaction" };
  if (str(ev, 'item_user') !== self.userId) return { skip: 'reaction on a message the bot did not send' };
  const name = normaliseReaction(reaction);
  const eventId = eventIdOf(body, `reaction:${channel}:${ts}:${user}:${reaction}:${removed ? 'removed' : 'added'}:${str(ev, 'event_ts') ?? ''}`);
  const actor: Actor = { id: user, via: TRANSPORT };
  const target = { message: { transport: TRANSPORT, channel, id: ts } };
  if (name === '+1' || name === '-1') return { intent: { type: 'vote', eventId, actor, vote: removed ? 'clear' : name === '+1' ? 'up' : 'down', target } };
  if (name === 'eyes') return removed ? { skip: 'a removed 👀 (an ack is not taken back by a reaction)' } : { intent: { type: 'ack', eventId, actor, target } };
  if (name === 'no_bell')
    return removed
      ? { skip: 'a removed 🔕 (a silence is not taken back by a reaction)' }
      : { intent: { type: 'silence', eventId, actor, duration: REACTION_SILENCE, target } };
  return { skip: `reaction :${name}: means nothing to the bot` };
}

/** Subtypes that are still a person writing (everything else is an edit, a join, a bot…). */
const PERSON_SUBTYPES = new Set(['thread_broadcast', 'file_share']);

function threadOf(ev: Obj | undefined, channel: string): MessageRef | undefined {
  const threadTs = str(ev, 'thread_ts');
  return threadTs && threadTs !== str(ev, 'ts') ? { transport: TRANSPORT, channel, id: threadTs } : undefined;
}

function fromBot(ev: Obj | undefined, self: SlackSelf): boolean {
  return str(ev, 'bot_id') !== undefined || str(ev, 'user') === self.userId;
}

/**
 * `message`: a person's reply in a thread. A message that mentions the bot is left to
 * `app_mention` (Slack sends both for it), top-level chatter is not the bot's business, and a
 * reply that does not mention it counts only as `ack` or `fixed: …`.
 */
export function fromMessage(body: Obj, self: SlackSelf): Translation {
  const ev = obj(body['event']);
  const subtype = str(ev, 'subtype');
  if (subtype !== undefined && !PERSON_SUBTYPES.has(subtype)) return { skip: `message subtype ${subtype}` };
  if (fromBot(ev, self)) return { skip: 'message from a bot' };
  const user = str(ev, 'user');
  const channel = str(ev, 'channel');
  const ts = str(ev, 'ts');
  const raw = typeof ev?.['text'] === 'string' ? ev['text'] : '';
  if (!user || !channel || !ts) return { skip: 'message without a user, channel or ts' };
  if (mentionsUser(raw, self.userId)) return { skip: 'mentions the bot: handled as app_mention' };
  const thread = threadOf(ev, channel);
  if (!thread) return { skip: 'top-level message that does not address the bot' };
  const { text, addressed } = slackTextToPlain(raw, self.userId);
  const ctx = { eventId: eventIdOf(body, `message:${channel}:${ts}`), actor: { id: user, via: TRANSPORT }, thread };
  if (!addressed) {
    // `ack` and `fixed: …` count in a bot thread without the mention (the bot ignores them elsewhere).
    const plain = plainThreadReplyIntent(text, ctx);
    return plain ? { intent: plain } : { skip: 'thread reply that does not address the bot' };
  }
  return reply(text, ctx);
}

/** A reply addressed to the bot in a thread: a silence or an operator note. */
function reply(text: string, ctx: { eventId: string; actor: Actor; thread: MessageRef }): Translation {
  const intent = threadReplyIntent(text, ctx);
  return intent ? { intent } : { skip: 'an empty message to the bot' };
}

/** `app_mention`: `@reprise note: …` in a thread, or anywhere the bot is. */
export function fromMention(body: Obj, self: SlackSelf): Translation {
  const ev = obj(body['event']);
  if (fromBot(ev, self)) return { skip: 'mention from a bot' };
  const user = str(ev, 'user');
  const channel = str(ev, 'channel');
  const ts = str(ev, 'ts');
  if (!user || !channel || !ts) return { skip: 'mention without a user, channel or ts' };
  const { text } = slackTextToPlain(typeof ev?.['text'] === 'string' ? ev['text'] : '', self.userId);
  const thread = threadOf(ev, channel);
  if (!thread) return { skip: 'a mention outside an incident thread (commands are /reprise …)' };
  return reply(text, { eventId: eventIdOf(body, `message:${channel}:${ts}`), actor: { id: user, via: TRANSPORT }, thread });
}

/** `/reprise …`: answered later through its `response_url`. */
export function fromCommand(body: Obj): Translation {
  const user = str(body, 'user_id');
  const channel = str(body, 'channel_id');
  const url = str(body, 'response_url');
  const trigger = str(body, 'trigger_id');
  if (!user || !channel || !url || !trigger) return { skip: 'slash command without user, channel, response_url or trigger_id' };
  // `user_name` is the legacy handle, not the name people see: a person is their id (core/people.ts).
  const actor: Actor = { id: user, via: TRANSPORT };
  const text = slackTextToPlain(typeof body['text'] === 'string' ? body['text'] : '').text;
  return { intent: commandIntent(text, { eventId: `command:${trigger}`, actor, channel, replyTo: { kind: 'response_url', url } }) };
}

/** A click on the card's 👍 / 👎 buttons or a choice in its 🔕 select. */
export function fromBlockAction(body: Obj): Translation {
  const actions = Array.isArray(body['actions']) ? body['actions'] : [];
  const action = obj(actions[0]);
  const actionId = str(action, 'action_id');
  const control = actionId ? controlFor(actionId) : undefined;
  if (!control) return { skip: `not one of the card's controls (${actionId ?? 'no action_id'})` };
  const container = obj(body['container']);
  if (container?.['is_ephemeral'] === true) return { skip: 'click on an ephemeral message' };
  const userObj = obj(body['user']);
  const user = str(userObj, 'id');
  const channel = str(obj(body['channel']), 'id') ?? str(container, 'channel_id');
  const ts = str(container, 'message_ts') ?? str(obj(body['message']), 'ts');
  const url = str(body, 'response_url');
  if (!user || !channel || !ts || !url) return { skip: 'click without user, channel, message or response_url' };
  const value = control === 'silence' ? str(obj(action?.['selected_option']), 'value') : undefined;
  if (control === 'silence' && !isSilenceChoice(value)) return { skip: `silence choice ${value ?? '(none)'} is not one the card offers` };
  const controlsId = parseControlsBlockId(str(action, 'block_id'));
  const eventId = `action:${channel}:${ts}:${user}:${actionId}:${value ?? ''}:${str(action, 'action_ts') ?? str(body, 'trigger_id') ?? ''}`;
  const actor: Actor = { id: user, via: TRANSPORT };
  const target = { message: { transport: TRANSPORT, channel, id: ts }, ...(controlsId ? { controlsId } : {}) };
  const replyTo = { kind: 'response_url', url } as const;
  if (control === 'silence') {
    const choice = parseSilenceChoice(value ?? '4h');
    return { intent: { type: 'silence', eventId, actor, duration: choice.duration, ...(choice.alertmanager ? { alertmanager: true } : {}), target, replyTo } };
  }
  if (control === 'ack') return { intent: { type: 'ack', eventId, actor, target, replyTo } };
  return { intent: { type: 'vote', eventId, actor, vote: control === 'vote_up' ? 'up' : 'down', target, replyTo } };
}
