import { describe, expect, it } from 'vitest';
import {
  addressed,
  reactionMeaning,
  stripReplyFallback,
  translate,
  type EventInfo,
  type InboundContext,
} from '../../../../src/adapters/matrix/matrix-inbound.js';
import type { RememberedReaction } from '../../../../src/adapters/matrix/matrix-store.js';

const BOT = '@reprise:hs';
const ROOM = '!r:hs';

/** An in-memory context: events the "homeserver" knows, reactions remembered. */
function ctx(known: Record<string, EventInfo> = {}): InboundContext & { remembered: Map<string, RememberedReaction> } {
  const remembered = new Map<string, RememberedReaction>();
  return {
    botUserId: BOT,
    botDisplayName: 'Reprise',
    prefix: '!reprise',
    lookup: async (_room, id) => known[id],
    rememberReaction: async (id, r) => void remembered.set(id, r),
    recallReaction: async (id) => remembered.get(id),
    remembered,
  };
}

const msg = (body: string, extra: Record<string, unknown> = {}) => ({
  event_id: '$m',
  sender: '@ann:hs',
  type: 'm.room.message',
  content: { msgtype: 'm.text', body, ...extra },
});

describe('reactionMeaning', () => {
  it('maps 👍 👎 🔕 with variation selectors and skin tones, and passes others through', () => {
    expect(['👍', '👍️', '👍🏿', '👎', '👎🏻', '🔕', '🔕️'].map(reactionMeaning)).toEqual(['up', 'up', 'up', 'down', 'down', 'silence', 'silence']);
    expect(reactionMeaning('🎉')).toBeUndefined();
    // Another surface's names mean nothing here.
    expect(reactionMeaning('+1')).toBeUndefined();
  });
});

describe('addressed', () => {
  const c = ctx();
  it('strips the !reprise prefix, any case, with or without a colon', () => {
    expect(addressed('!reprise recall foo', msg(''), c)).toEqual({ addressed: true, prefixed: true, text: 'recall foo' });
    expect(addressed('  !Reprise: silence 4h', msg(''), c)).toEqual({ addressed: true, prefixed: true, text: 'silence 4h' });
    expect(addressed('!reprisely', msg(''), c).addressed).toBe(false);
  });

  it('recognises a pill, m.mentions, the user id, and a typed @localpart; not a bare name', () => {
    const pill = msg('Reprise: note: x', { formatted_body: `<a href="https://matrix.to/#/${BOT}">Reprise</a>: note: x` });
    expect(addressed('Reprise: note: x', pill, c)).toEqual({ addressed: true, prefixed: false, text: 'note: x' });
    expect(addressed('Reprise, note: y', msg('', { 'm.mentions': { user_ids: [BOT] } }), c).text).toBe('note: y');
    expect(addressed(`hey ${BOT} look`, msg(''), c)).toEqual({ addressed: true, prefixed: false, text: 'hey look' });
    expect(addressed('@reprise silence: 4h', msg(''), c)).toEqual({ addressed: true, prefixed: false, text: 'silence: 4h' });
    expect(addressed('Reprise: is that you?', msg(''), c).addressed).toBe(false);
    expect(addressed('@reprise !reprise status', msg(''), c)).toEqual({ addressed: true, prefixed: true, text: 'status' });
  });

  it('keeps the newlines of a note', () => {
    expect(addressed('!reprise note: line one\nline two', msg(''), c).text).toBe('note: line one\nline two');
  });
});

describe('stripReplyFallback', () => {
  it('drops the quoted lines of a rich reply, only for replies', () => {
    const rel = { 'm.in_reply_to': { event_id: '$x' } };
    expect(stripReplyFallback('> <@reprise:hs> 🔍 card\n> more\n\n!reprise silence 4h', rel)).toBe('!reprise silence 4h');
    expect(stripReplyFallback('> quoting someone\n\nmine', undefined)).toBe('> quoting someone\n\nmine');
  });
});

describe('translate', () => {
  it('ignores the bot’s own events, notices, edits and unknown types', async () => {
    const c = ctx({ $card: { sender: BOT } });
    expect(await translate(ROOM, { ...msg('!reprise status'), sender: BOT }, c)).toBeUndefined();
    expect(await translate(ROOM, msg('!reprise status', { msgtype: 'm.notice' }), c)).toBeUndefined();
    expect(await translate(ROOM, msg('* !reprise status', { 'm.relates_to': { rel_type: 'm.replace', event_id: '$m0' } }), c)).toBeUndefined();
    expect(await translate(ROOM, { event_id: '$t', sender: '@ann:hs', type: 'm.room.topic', content: { topic: '!reprise help' } }, c)).toBeUndefined();
  });

  it('follows a plain reply to the bot’s card into its thread', async () => {
    const c = ctx({ $card: { sender: BOT }, $detail: { sender: BOT, thread: '$card' } });
    const e = await translate(ROOM, msg('> <@reprise:hs> detail\n\n!reprise silence 4h', { 'm.relates_to': { 'm.in_reply_to': { event_id: '$detail' } } }), c);
    expect(e).toMatchObject({ type: 'command', name: 'silence', args: '4h', thread: { id: '$card' }, replyTo: { kind: 'thread', ref: { id: '$card' } } });
  });

  it('remembers a counted reaction (a 👎 is a vote down) and turns its redaction into the reactor clearing the vote', async () => {
    const c = ctx({ $card: { sender: BOT } });
    const r = await translate(
      ROOM,
      { event_id: '$re', sender: '@ann:hs', type: 'm.reaction', content: { 'm.relates_to': { rel_type: 'm.annotation', event_id: '$card', key: '👎' } } },
      c,
    );
    expect(r).toMatchObject({ type: 'vote', vote: 'down', actor: { id: '@ann:hs', via: 'matrix' } });
    const gone = await translate(ROOM, { event_id: '$red', sender: '@mod:hs', type: 'm.room.redaction', redacts: '$re', content: {} }, c);
    expect(gone).toEqual({
      type: 'vote',
      eventId: '$red',
      actor: { id: '@ann:hs', via: 'matrix' },
      vote: 'clear',
      target: { message: { transport: 'matrix', channel: ROOM, id: '$card' } },
    });
    // A 🔕 is a silence; taking it back does not end the silence.
    const bell = await translate(
      ROOM,
      { event_id: '$bell', sender: '@ann:hs', type: 'm.reaction', content: { 'm.relates_to': { rel_type: 'm.annotation', event_id: '$card', key: '🔕' } } },
      c,
    );
    expect(bell).toMatchObject({ type: 'silence', duration: '4h' });
    expect(await translate(ROOM, { event_id: '$red3', sender: '@ann:hs', type: 'm.room.redaction', redacts: '$bell', content: {} }, c)).toBeUndefined();
    // A redaction of anything else (a message, an uncounted reaction) is nothing.
    expect(await translate(ROOM, { event_id: '$red2', sender: '@ann:hs', type: 'm.room.redaction', content: { redacts: '$other' } }, c)).toBeUndefined();
  });

  it('does not count a reaction on someone else’s message or on an event it cannot see', async () => {
    const c = ctx({ $theirs: { sender: '@bob:hs' } });
    for (const target of ['$theirs', '$unknown']) {
      expect(
        await translate(
          ROOM,
          { event_id: '$re', sender: '@ann:hs', type: 'm.reaction', content: { 'm.relates_to': { rel_type: 'm.annotation', event_id: target, key: '👍' } } },
          c,
        ),
      ).toBeUndefined();
    }
    expect(c.remembered.size).toBe(0);
  });

  it('ignores an unaddressed reply in a thread the bot did not start', async () => {
    const c = ctx({ $theirs: { sender: '@bob:hs' } });
    expect(await translate(ROOM, msg('me too', { 'm.relates_to': { rel_type: 'm.thread', event_id: '$theirs' } }), c)).toBeUndefined();
  });
});

describe('acknowledge on Matrix (issue 21)', () => {
  it('👀 on the bot’s card is an ack; its redaction takes nothing back', async () => {
    expect(['👀', '👀️'].map(reactionMeaning)).toEqual(['ack', 'ack']);
    const c = ctx({ $card: { sender: BOT } });
    const r = await translate(
      ROOM,
      { event_id: '$eyes', sender: '@ann:hs', type: 'm.reaction', content: { 'm.relates_to': { rel_type: 'm.annotation', event_id: '$card', key: '👀' } } },
      c,
    );
    expect(r).toEqual({
      type: 'ack',
      eventId: '$eyes',
      actor: { id: '@ann:hs', via: 'matrix' },
      target: { message: { transport: 'matrix', channel: ROOM, id: '$card' } },
    });
    expect(await translate(ROOM, { event_id: '$red', sender: '@ann:hs', type: 'm.room.redaction', redacts: '$eyes', content: {} }, c)).toBeUndefined();
  });

  it('!reprise ack in a thread is the ack command on that thread; a mention with ack is an ack', async () => {
    const c = ctx({ $card: { sender: BOT } });
    const inThread = { 'm.relates_to': { rel_type: 'm.thread', event_id: '$card' } };
    expect(await translate(ROOM, msg('!reprise ack', inThread), c)).toMatchObject({ type: 'command', name: 'ack', thread: { id: '$card' } });
    expect(await translate(ROOM, msg('@reprise ack', inThread), c)).toMatchObject({ type: 'ack', target: { message: { id: '$card' } } });
  });

  it('!reprise postmortem <trigger> anywhere is the postmortem command; in a thread, on that thread', async () => {
    const c = ctx({ $card: { sender: BOT } });
    expect(await translate(ROOM, msg('!reprise postmortem kubepodcrashlooping|payments'), c)).toMatchObject({
      type: 'command',
      name: 'postmortem',
      args: 'kubepodcrashlooping|payments',
    });
    const inThread = { 'm.relates_to': { rel_type: 'm.thread', event_id: '$card' } };
    expect(await translate(ROOM, msg('!reprise postmortem', inThread), c)).toMatchObject({ type: 'command', name: 'postmortem', thread: { id: '$card' } });
  });
});
