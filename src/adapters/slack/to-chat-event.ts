/**
 * Slack payloads (Events API envelopes, slash commands, block actions) as the bot's
 * {@link ChatEvent}s, or the reason one is not for the bot. Pure: tests call these directly.
 * Payloads are read defensively — a field that is missing or of the wrong type skips the
 * event rather than throwing.
 */
import type { ChatEvent, ChatUser, MessageRef } from '../../core/chat/chat-types.js';
import { controlFor, isSilenceChoice, parseControlsBlockId } from './slack-controls.js';
import { mentionsUser, slackTextToPlain } from './slack-text.js';

export const TRANSPORT = 'slack';

/** Who the bot is in Slack (from `auth.test`): its user id and bot id. */
export interface SlackSelf {
  userId: string;
  botId?: string;
}

export type Translation = { event: ChatEvent } | { skip: string };

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

/** `reaction_added` / `reaction_removed`: only on the bot's own messages, never the bot's own. */
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
  return {
    event: {
      type: 'reaction',
      eventId: eventIdOf(body, `reaction:${channel}:${ts}:${user}:${reaction}:${removed ? 'removed' : 'added'}:${str(ev, 'event_ts') ?? ''}`),
      transport: TRANSPORT,
      user: { id: user },
      target: { transport: TRANSPORT, channel, id: ts },
      reaction: normaliseReaction(reaction),
      removed,
    },
  };
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
 * `app_mention` (Slack sends both for it), and top-level chatter is not the bot's business.
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
  return {
    event: {
      type: 'message',
      eventId: eventIdOf(body, `message:${channel}:${ts}`),
      transport: TRANSPORT,
      user: { id: user },
      thread,
      channel,
      text,
      addressed,
    },
  };
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
  const event: ChatEvent = {
    type: 'message',
    eventId: eventIdOf(body, `message:${channel}:${ts}`),
    transport: TRANSPORT,
    user: { id: user },
    channel,
    text,
    addressed: true,
  };
  return { event: thread ? { ...event, thread } : event };
}

/** `/reprise …`: answered later through its `response_url`. */
export function fromCommand(body: Obj): Translation {
  const user = str(body, 'user_id');
  const channel = str(body, 'channel_id');
  const url = str(body, 'response_url');
  const trigger = str(body, 'trigger_id');
  if (!user || !channel || !url || !trigger) return { skip: 'slash command without user, channel, response_url or trigger_id' };
  const name = str(body, 'user_name');
  const who: ChatUser = name ? { id: user, name } : { id: user };
  const text = slackTextToPlain(typeof body['text'] === 'string' ? body['text'] : '').text;
  return { event: { type: 'command', eventId: `command:${trigger}`, transport: TRANSPORT, user: who, channel, text, respond: { kind: 'response_url', url } } };
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
  const name = str(userObj, 'username') ?? str(userObj, 'name');
  const controlsId = parseControlsBlockId(str(action, 'block_id'));
  const event: ChatEvent = {
    type: 'action',
    eventId: `action:${channel}:${ts}:${user}:${actionId}:${value ?? ''}:${str(action, 'action_ts') ?? str(body, 'trigger_id') ?? ''}`,
    transport: TRANSPORT,
    user: name ? { id: user, name } : { id: user },
    action: control,
    target: { transport: TRANSPORT, channel, id: ts },
    respond: { kind: 'response_url', url },
    ...(controlsId ? { controlsId } : {}),
    ...(value ? { value } : {}),
  };
  return { event };
}
