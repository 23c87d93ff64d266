/**
 * Who may ask what, where (issue 29 item 3): a command acts only in the channels and rooms the
 * bot is configured for (a surface's default and its routing rules' channels — or the thread of
 * an incident the bot posted), and an answer that shows incident content goes only to people the
 * surface's allowlist admits, when one is set. A command from anywhere else is refused with one
 * line that says where to ask; nothing it asked for is read, recorded or shown.
 */
import type { ChatIntent } from '../chat/chat-types.js';
import type { RichText } from '../chat/thread-view.js';
import type { Ctx } from './bot-context.js';

type Command = Extract<ChatIntent, { type: 'command' }>;

/** Why a command is refused, and the one line the person is told. */
export interface CommandRefusal {
  kind: 'channel' | 'allowlist';
  reason: string;
  title: string;
  line: RichText;
}

/** Commands whose answer shows no incident content: anyone in a configured channel may ask. */
const OPEN_TO_ALL: ReadonlySet<string> = new Set(['help', '']);

/** A Slack direct message (`D…`); other surfaces' room ids say nothing of DMs (they are refused as any other room). */
const isDirect = (via: string, channel: string): boolean => via === 'slack' && /^D[A-Z0-9]+$/.test(channel);

/** The refusal for this command, or undefined when it may act. */
export function commandRefusal(c: Pick<Ctx, 'd' | 'read'>, e: Command): CommandRefusal | undefined {
  const configured = c.d.routing.configuredChannels(e.actor.via);
  if (configured !== undefined && !configured.includes(e.channel)) {
    // Typed in the thread of an incident the bot posted (a channel a webhook routed it to): that thread is the bot's.
    const inThread = e.thread !== undefined && c.read.threadByMessage(e.thread) !== undefined;
    if (!inThread) {
      const where = configured.slice(0, 3).flatMap((ch, i): RichText => (i === 0 ? [{ code: ch }] : [', ', { code: ch }]));
      const more = configured.length > 3 ? [` (or ${configured.length - 3} more)`] : [];
      const direct = isDirect(e.actor.via, e.channel);
      return {
        kind: 'channel',
        reason: `${e.actor.via} ${direct ? 'direct message' : `channel ${e.channel}`} is not a configured incident channel`,
        title: 'Not here',
        line: [
          direct ? 'Reprise takes no commands in direct messages: ask in ' : 'Reprise takes commands only in its incident channels: ask in ',
          ...where,
          ...more,
          '.',
        ],
      };
    }
  }
  if (!OPEN_TO_ALL.has(e.name.trim().toLowerCase()) && !(c.d.allow ?? (() => true))(e.actor)) {
    return {
      kind: 'allowlist',
      reason: `${e.actor.via} user ${e.actor.id} is not on the allowlist`,
      title: 'Not allowed',
      line: [
        'Reprise shows incidents only to people on its allowlist: ask whoever runs Reprise to add ',
        { code: e.actor.id },
        ' to ',
        { code: `transport.${e.actor.via}.allow_users` },
        '.',
      ],
    };
  }
  return undefined;
}
