/**
 * What a person's words addressed to the bot mean, read the same way on every surface: the
 * adapters call these while translating their payloads into intents. Plain string operations:
 * chat text is untrusted and may be long.
 */
import type { Actor, ChatIntent, MessageRef, ResponseTarget } from './chat-types.js';

/** `4h`, `4h am`, `4h+am` → the duration and whether Alertmanager should silence too. */
export function parseSilenceChoice(value: string): { duration: string; alertmanager: boolean } {
  const v = value.trim();
  const m = /^(\S+?)(?:\s+|\+)am$/i.exec(v);
  return m ? { duration: m[1]!, alertmanager: true } : { duration: v, alertmanager: false };
}

/** `status`, `recall KubePodCrashLooping`, `silence 4h am` → the command word (lower-case) and the rest. */
export function splitCommand(text: string): { name: string; args: string } {
  const t = text.trim();
  const space = t.search(/\s/);
  const word = space < 0 ? t : t.slice(0, space);
  return { name: word.toLowerCase(), args: space < 0 ? '' : t.slice(space).trim() };
}

/**
 * The text after a leading keyword and an optional colon (`note: x`, `note x`, `silence 4h`),
 * trimmed; undefined when the text does not start with the keyword as a word.
 */
export function afterKeyword(text: string, keyword: string): string | undefined {
  if (text.slice(0, keyword.length).toLowerCase() !== keyword) return undefined;
  let rest = text.slice(keyword.length);
  if (rest !== '' && !/^[\s:]/.test(rest)) return undefined;
  rest = rest.trimStart();
  if (rest.startsWith(':')) rest = rest.slice(1);
  return rest.trim();
}

/**
 * A reply in a bot thread that addresses the bot: `ack` acknowledges, `silence 4h` / `silence: 4h am` silences,
 * `note: …` is an operator note, `fixed: …` says what fixed it, `postmortem` drafts a postmortem,
 * and anything else is a question (issue 21 item 3). Undefined when there is nothing to record.
 */
export function threadReplyIntent(
  text: string,
  ctx: { eventId: string; actor: Actor; thread: MessageRef },
): Extract<ChatIntent, { type: 'silence' | 'note' | 'ack' | 'fixed' | 'question' | 'postmortem' }> | undefined {
  const t = text.trim();
  const target = { message: ctx.thread };
  // `ack`, `ack: on it`: the person is on it (the rest is theirs to say; nothing is filed).
  if (afterKeyword(t, 'ack') !== undefined)
    return { type: 'ack', eventId: ctx.eventId, actor: ctx.actor, target, replyTo: { kind: 'thread', ref: ctx.thread } };
  const silence = afterKeyword(t, 'silence');
  if (silence !== undefined && silence !== '' && /^\S+(\s+am)?$/i.test(silence)) {
    const choice = parseSilenceChoice(silence);
    return {
      type: 'silence',
      eventId: ctx.eventId,
      actor: ctx.actor,
      duration: choice.duration,
      ...(choice.alertmanager ? { alertmanager: true } : {}),
      target,
      replyTo: { kind: 'thread', ref: ctx.thread },
    };
  }
  if (/^postmortem[.!]?$/i.test(t)) return { type: 'postmortem', eventId: ctx.eventId, actor: ctx.actor, target };
  const fixed = afterKeyword(t, 'fixed');
  if (fixed !== undefined) return { type: 'fixed', eventId: ctx.eventId, actor: ctx.actor, text: fixed, target };
  const note = afterKeyword(t, 'note');
  if (note !== undefined) return note === '' ? undefined : { type: 'note', eventId: ctx.eventId, actor: ctx.actor, text: note, target };
  if (t === '') return undefined;
  return { type: 'question', eventId: ctx.eventId, actor: ctx.actor, text: t, target };
}

/**
 * A reply in a thread that does not address the bot (README "On it", "What fixed it"): only
 * `ack` (alone) and `fixed: …` (with its colon and some words) count — ordinary chatter in a
 * thread is people talking to each other. No `replyTo`: in a thread that is not the bot's the
 * bot records nothing and says nothing.
 */
export function plainThreadReplyIntent(
  text: string,
  ctx: { eventId: string; actor: Actor; thread: MessageRef },
): Extract<ChatIntent, { type: 'ack' | 'fixed' }> | undefined {
  const t = text.trim();
  const target = { message: ctx.thread };
  if (/^ack[.!]?$/i.test(t)) return { type: 'ack', eventId: ctx.eventId, actor: ctx.actor, target };
  const m = /^fixed\s*:\s*([\s\S]*\S[\s\S]*)$/i.exec(t);
  return m ? { type: 'fixed', eventId: ctx.eventId, actor: ctx.actor, text: m[1]!.trim(), target } : undefined;
}

/** A command typed on a surface (`/reprise …`, `!reprise …`). */
export function commandIntent(
  text: string,
  ctx: { eventId: string; actor: Actor; channel: string; thread?: MessageRef; replyTo: ResponseTarget },
): Extract<ChatIntent, { type: 'command' }> {
  const { name, args } = splitCommand(text);
  return {
    type: 'command',
    eventId: ctx.eventId,
    actor: ctx.actor,
    name,
    args,
    channel: ctx.channel,
    ...(ctx.thread ? { thread: ctx.thread } : {}),
    replyTo: ctx.replyTo,
  };
}
