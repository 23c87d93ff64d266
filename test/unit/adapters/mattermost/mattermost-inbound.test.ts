import { describe, expect, it } from 'vitest';
import type { MmPost } from '../../../../src/adapters/mattermost/mattermost-api.js';
import {
  addressed,
  fromAcknowledgement,
  fromPost,
  fromReaction,
  jsonField,
  reactionMeaning,
  type InboundContext,
  type PostInfo,
} from '../../../../src/adapters/mattermost/mattermost-inbound.js';

const BOT = 'b'.repeat(26);
const ALICE = 'a'.repeat(26);
const CH = 'c'.repeat(26);
const OTHER_CH = 'd'.repeat(26);
const CARD = 'p'.repeat(26);
const THEIRS = 'q'.repeat(26);

const known: Record<string, PostInfo> = {
  [CARD]: { user_id: BOT, channel_id: CH },
  [THEIRS]: { user_id: ALICE, channel_id: CH },
};
const ctx: InboundContext = {
  botUserId: BOT,
  botUsername: 'reprise',
  channels: new Set([CH]),
  channelName: (id) => (id === CH ? 'ops/incidents' : id),
  lookup: (id) => Promise.resolve(known[id]),
};
const post = (over: Partial<MmPost>): MmPost => ({ id: 'x'.repeat(26), channel_id: CH, user_id: ALICE, message: '', create_at: 1, ...over });
const intentOf = (t: Awaited<ReturnType<typeof fromPost>>) => ('intent' in t ? t.intent : undefined);

describe('mattermost inbound translation', () => {
  it('reads 👍 👎 🔕 👀 by their Mattermost names, skin tones folded', () => {
    expect(['+1', 'thumbsup_tone3', '-1', 'thumbsdown_dark_skin_tone', 'no_bell', 'eyes', 'fire'].map(reactionMeaning)).toEqual([
      'up',
      'up',
      'down',
      'down',
      'silence',
      'ack',
      undefined,
    ]);
  });

  it('turns a reaction on a bot post into a vote, silence or ack, and its removal into a cleared vote', async () => {
    const r = (emoji: string) => ({ user_id: ALICE, post_id: CARD, emoji_name: emoji, create_at: 5 });
    expect(intentOf(await fromReaction(r('+1'), false, ctx))).toMatchObject({
      type: 'vote',
      vote: 'up',
      eventId: `reaction:${CARD}:${ALICE}:+1:5`,
      actor: { id: ALICE, via: 'mattermost' },
      target: { message: { transport: 'mattermost', channel: CH, id: CARD } },
    });
    expect(intentOf(await fromReaction(r('no_bell'), false, ctx))).toMatchObject({ type: 'silence', duration: '4h' });
    expect(intentOf(await fromReaction(r('eyes'), false, ctx))).toMatchObject({ type: 'ack' });
    expect(intentOf(await fromReaction(r('-1'), true, ctx, 5))).toMatchObject({ type: 'vote', vote: 'clear', eventId: `unreaction:${CARD}:${ALICE}:-1:5` });
    // A silence or an ack is not taken back by removing the reaction.
    expect(await fromReaction(r('no_bell'), true, ctx)).toHaveProperty('skip');
  });

  it('ignores reactions on other people’s posts, the bot’s own reactions and garbage', async () => {
    expect(await fromReaction({ user_id: ALICE, post_id: THEIRS, emoji_name: '+1', create_at: 1 }, false, ctx)).toHaveProperty('skip');
    expect(await fromReaction({ user_id: BOT, post_id: CARD, emoji_name: '+1', create_at: 1 }, false, ctx)).toHaveProperty('skip');
    expect(await fromReaction({ user_id: ALICE, post_id: 'nope', emoji_name: '+1', create_at: 1 }, false, ctx)).toHaveProperty('skip');
    expect(await fromReaction({ user_id: 42, post_id: null, emoji_name: {} } as never, false, ctx)).toHaveProperty('skip');
  });

  it('takes a native acknowledgement of a bot post as an ack', async () => {
    expect(intentOf(await fromAcknowledgement({ user_id: ALICE, post_id: CARD, acknowledged_at: 9 }, ctx))).toMatchObject({
      type: 'ack',
      eventId: `acknowledgement:${CARD}:${ALICE}:9`,
    });
    expect(await fromAcknowledgement({ user_id: ALICE, post_id: THEIRS, acknowledged_at: 9 }, ctx)).toHaveProperty('skip');
  });

  it('reads a mention in a bot thread as note, fixed, ack, silence or a question', async () => {
    const reply = (message: string) => fromPost(post({ message, root_id: CARD }), ctx);
    expect(intentOf(await reply('@reprise fixed: raised the limit'))).toMatchObject({
      type: 'fixed',
      text: 'raised the limit',
      target: { message: { id: CARD } },
    });
    expect(intentOf(await reply('@reprise note: pool exhausted'))).toMatchObject({ type: 'note', text: 'pool exhausted' });
    expect(intentOf(await reply('@Reprise ack'))).toMatchObject({ type: 'command', name: 'ack' });
    expect(intentOf(await reply('on it, ack @reprise'))).toMatchObject({ type: 'question' });
    expect(intentOf(await reply('@reprise silence 4h am'))).toMatchObject({ type: 'command', name: 'silence', args: '4h am' });
    expect(intentOf(await reply('@reprise why is it failing?'))).toMatchObject({ type: 'question', text: 'why is it failing?' });
    // Not addressed, or in someone else's thread: nothing.
    expect(await reply('fixed: it')).toHaveProperty('skip');
    expect(await fromPost(post({ message: '@reprise note: x', root_id: THEIRS }), ctx)).toHaveProperty('skip');
    // @repriser is someone else.
    expect(await reply('@repriser note: x')).toHaveProperty('skip');
  });

  it('reads @reprise <command> anywhere in a served channel, answered privately, gated by the configured name', async () => {
    const c = intentOf(await fromPost(post({ id: 'k'.repeat(26), message: '@reprise recall KubePodCrashLooping' }), ctx));
    expect(c).toMatchObject({
      type: 'command',
      name: 'recall',
      args: 'KubePodCrashLooping',
      channel: 'ops/incidents',
      replyTo: { kind: 'ephemeral', channel: CH, user: ALICE },
    });
    expect(await fromPost(post({ message: '@reprise hello there' }), ctx)).toHaveProperty('skip');
    const oncall = intentOf(await fromPost(post({ id: 'o'.repeat(26), message: '@reprise oncall payments' }), ctx));
    expect(oncall).toMatchObject({ type: 'command', name: 'oncall', args: 'payments' });
  });

  it('ignores the bot, other bots, webhooks, system messages, deleted posts and other channels', async () => {
    for (const p of [
      post({ user_id: BOT, message: '@reprise status' }),
      post({ message: '@reprise status', props: { from_bot: 'true' } }),
      post({ message: '@reprise status', props: { from_webhook: 'true' } }),
      post({ message: '@reprise status', type: 'system_join_channel' }),
      post({ message: '@reprise status', delete_at: 3 }),
      post({ message: '@reprise status', channel_id: OTHER_CH }),
    ])
      expect(await fromPost(p, ctx)).toHaveProperty('skip');
  });

  it('strips the mention wherever it is, and not inside another name', () => {
    expect(addressed('thanks @reprise, note: done', 'reprise')).toEqual({ addressed: true, prefixed: false, text: 'thanks , note: done' });
    expect(addressed('mail me@reprise.example', 'reprise').addressed).toBe(false);
  });

  it('reads WebSocket data fields that are JSON strings, and survives garbage', () => {
    expect(jsonField({ post: '{"id":"x"}' }, 'post')).toEqual({ id: 'x' });
    expect(jsonField({ post: '{nope' }, 'post')).toBeUndefined();
    expect(jsonField(undefined, 'post')).toBeUndefined();
  });
});
