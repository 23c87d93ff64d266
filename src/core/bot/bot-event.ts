/**
 * Everything the bot is told, from any source, as one union (events in): webhooks give firings
 * and resolves, chat surfaces votes, silences, notes, commands and button clicks, the CLI votes
 * and silences. `RepriseBot.handle` records what each means, then effects go out through the
 * outbox.
 */
import type { ChatEvent, ControlAction, MessageRef, ResponseTarget } from '../chat/chat-types.js';
import type { Incident } from '../types.js';
import type { RouteHint } from './routing.js';

/** Who acted, and through which surface (`cli`, `slack`, `matrix`, `console`). */
export interface Actor {
  /** The surface's stable id (Slack `U…`, Matrix `@u:hs`, the CLI's user name). */
  id: string;
  /** A display name, when the surface gave one. */
  name?: string;
  via: string;
}

/** Where a vote or silence points: a thread (by one of its messages or its controls id) or a trigger key. */
export interface Target {
  triggerKey?: string;
  message?: MessageRef;
  controlsId?: string;
}

export type BotEvent =
  | { type: 'firing'; incident: Incident; route?: RouteHint }
  | { type: 'resolve'; incident: Incident }
  | { type: 'vote'; actor: Actor; vote: 'up' | 'down' | 'clear'; target: Target; eventId?: string; respond?: ResponseTarget }
  | { type: 'silence'; actor: Actor; duration: string; target: Target; eventId?: string; respond?: ResponseTarget }
  | { type: 'note'; actor: Actor; text: string; thread: MessageRef; eventId?: string }
  | { type: 'command'; actor: Actor; text: string; channel: string; thread?: MessageRef; respond: ResponseTarget; eventId: string }
  | { type: 'button'; actor: Actor; action: ControlAction; value?: string; target: Target; eventId: string; respond: ResponseTarget };

/** A webhook's incidents as events. */
export function incidentEvents(incidents: readonly Incident[], route?: RouteHint): BotEvent[] {
  return incidents.map((incident) =>
    incident.status === 'resolved' ? { type: 'resolve', incident } : { type: 'firing', incident, ...(route ? { route } : {}) },
  );
}

/** The default silence a 🔕 reaction sets (a select offers 1 h / 4 h / 24 h). */
export const REACTION_SILENCE = '4h';

/**
 * What a chat event means for the bot, or undefined when it means nothing (another emoji, a
 * reply that does not address the bot, a removed 🔕). In a thread addressed to the bot:
 * `silence 4h` / `silence: 4h` silences, `note: …` (or anything else) is an operator note.
 */
export function fromChatEvent(e: ChatEvent): BotEvent | undefined {
  const actor: Actor = { id: e.user.id, ...(e.user.name ? { name: e.user.name } : {}), via: e.transport };
  switch (e.type) {
    case 'reaction': {
      const target: Target = { message: e.target };
      if (e.reaction === '+1' || e.reaction === '-1') {
        const vote = e.removed ? 'clear' : e.reaction === '+1' ? 'up' : 'down';
        return { type: 'vote', actor, vote, target, eventId: e.eventId };
      }
      if (e.reaction === 'no_bell' && !e.removed) return { type: 'silence', actor, duration: REACTION_SILENCE, target, eventId: e.eventId };
      return undefined;
    }
    case 'message': {
      if (!e.addressed || !e.thread) return undefined;
      const text = e.text.trim();
      const silence = afterKeyword(text, 'silence');
      if (silence !== undefined && silence !== '' && /^\S+(\s+am)?$/i.test(silence))
        return { type: 'silence', actor, duration: silence, target: { message: e.thread }, eventId: e.eventId };
      const note = afterKeyword(text, 'note') ?? text;
      if (note === '') return undefined;
      return { type: 'note', actor, text: note, thread: e.thread, eventId: e.eventId };
    }
    case 'command':
      return { type: 'command', actor, text: e.text, channel: e.channel, ...(e.thread ? { thread: e.thread } : {}), respond: e.respond, eventId: e.eventId };
    case 'action':
      return {
        type: 'button',
        actor,
        action: e.action,
        ...(e.value ? { value: e.value } : {}),
        target: { message: e.target, ...(e.controlsId ? { controlsId: e.controlsId } : {}) },
        eventId: e.eventId,
        respond: e.respond,
      };
  }
}

/**
 * The text after a leading keyword and an optional colon (`note: x`, `note x`, `silence 4h`),
 * trimmed; undefined when the text does not start with the keyword as a word. Plain string
 * operations: chat text is untrusted and may be long.
 */
function afterKeyword(text: string, keyword: string): string | undefined {
  if (text.slice(0, keyword.length).toLowerCase() !== keyword) return undefined;
  let rest = text.slice(keyword.length);
  if (rest !== '' && !/^[\s:]/.test(rest)) return undefined;
  rest = rest.trimStart();
  if (rest.startsWith(':')) rest = rest.slice(1);
  return rest.trim();
}
