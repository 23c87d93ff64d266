import { describe, expect, it } from 'vitest';
import { createStore } from '../../../../src/adapters/keyv/keyv-store.js';
import type { MmPost } from '../../../../src/adapters/mattermost/mattermost-api.js';
import { MattermostReceiver } from '../../../../src/adapters/mattermost/mattermost-receiver.js';
import { MattermostStore } from '../../../../src/adapters/mattermost/mattermost-store.js';
import type { ChatIntent } from '../../../../src/core/chat/chat-types.js';
import { silentLogger } from '../../../../src/ports/logger.js';
import type { KeyValueStore } from '../../../../src/ports/store.js';

const BOT = 'b'.repeat(26);
const ALICE = 'a'.repeat(26);
const CH = 'c'.repeat(26);
const CARD = 'p'.repeat(26);

/** The server's posts, as `GET /channels/{id}/posts?since=` answers them. */
function server() {
  const posts: MmPost[] = [{ id: CARD, channel_id: CH, user_id: BOT, message: 'card', create_at: Date.now(), update_at: Date.now(), metadata: {} }];
  return {
    posts,
    api: {
      post: (id: string) => Promise.resolve(posts.find((p) => p.id === id)),
      postsSince: (_c: string, since: number) => Promise.resolve(posts.filter((p) => (p.update_at ?? p.create_at) >= since).reverse()),
    },
  };
}

async function receiver(store: KeyValueStore, s: ReturnType<typeof server>, sink: (e: ChatIntent) => Promise<void>) {
  const mm = new MattermostStore(store);
  mm.bind(BOT);
  await mm.advance(Date.now() - 1000);
  const r = new MattermostReceiver({ api: s.api, store: mm, log: silentLogger, retryMs: 60_000 });
  r.identify({ botUserId: BOT, botUsername: 'reprise', channels: new Set([CH]), channelName: (id) => id });
  r.sink = sink;
  return r;
}

const posted = (p: MmPost) => ({ event: 'posted', data: { post: JSON.stringify(p) }, seq: 1 });
const reaction = (event: string, emoji: string, at: number) => ({
  event,
  data: { reaction: JSON.stringify({ user_id: ALICE, post_id: CARD, emoji_name: emoji, create_at: at }) },
});

describe('mattermost receiver: each event once', () => {
  it('delivers a post seen on the WebSocket and again by a catch-up once, across a restart too', async () => {
    const store = createStore('memory://', '/nonexistent');
    const s = server();
    const got: ChatIntent[] = [];
    const r = await receiver(store, s, async (e) => void got.push(e));
    const reply: MmPost = {
      id: 'r'.repeat(26),
      channel_id: CH,
      user_id: ALICE,
      root_id: CARD,
      message: '@reprise fixed: restarted',
      create_at: Date.now(),
      update_at: Date.now(),
    };
    s.posts.push(reply);
    r.onEvent(posted(reply));
    r.onEvent(posted(reply));
    r.catchUp();
    await r.idle;
    // A new process on the same store reads the channel again.
    const again = await receiver(store, s, async (e) => void got.push(e));
    again.catchUp();
    await again.idle;
    expect(got.map((e) => e.type)).toEqual(['fixed']);
  });

  it('notices a reaction made and one taken back while it was away, and counts each once', async () => {
    const store = createStore('memory://', '/nonexistent');
    const s = server();
    const got: ChatIntent[] = [];
    const r = await receiver(store, s, async (e) => void got.push(e));
    r.onEvent(reaction('reaction_added', '+1', 10));
    await r.idle;
    // Away: the 👍 is taken back and a 🔕 made; the post changed.
    s.posts[0]!.metadata = { reactions: [{ user_id: ALICE, post_id: CARD, emoji_name: 'no_bell', create_at: 20 }] };
    s.posts[0]!.update_at = Date.now();
    r.catchUp();
    r.catchUp();
    await r.idle;
    expect(got.map((e) => (e.type === 'vote' ? `vote:${e.vote}` : e.type))).toEqual(['vote:up', 'silence', 'vote:clear']);
  });

  it('reads an event again after the sink failed on it', async () => {
    const store = createStore('memory://', '/nonexistent');
    const s = server();
    let fail = true;
    const got: ChatIntent[] = [];
    const r = await receiver(store, s, async (e) => {
      if (fail) throw new Error('ledger unavailable');
      got.push(e);
    });
    const reply: MmPost = {
      id: 'r'.repeat(26),
      channel_id: CH,
      user_id: ALICE,
      root_id: CARD,
      message: '@reprise note: pool',
      create_at: Date.now(),
      update_at: Date.now(),
    };
    s.posts.push(reply);
    r.onEvent(posted(reply));
    await r.idle;
    expect(got).toEqual([]);
    fail = false;
    r.catchUp();
    await r.idle;
    expect(got.map((e) => e.type)).toEqual(['note']);
    r.close();
  });

  it('survives garbage on the WebSocket', async () => {
    const store = createStore('memory://', '/nonexistent');
    const got: ChatIntent[] = [];
    const r = await receiver(store, server(), async (e) => void got.push(e));
    for (const e of [
      { event: 'posted', data: { post: '{broken' } },
      { event: 'posted', data: { post: JSON.stringify({ id: 3 }) } },
      { event: 'reaction_added', data: { reaction: 'null' } },
      { event: 'post_acknowledgement_added', data: {} },
      { event: 'typing' },
    ])
      r.onEvent(e);
    await r.idle;
    expect(got).toEqual([]);
  });
});
