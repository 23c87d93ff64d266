/**
 * The Mattermost transport against the stand-in, on the wire: props on every post, edits that
 * keep them, ephemeral answers, the lookup that settles a send of unknown outcome, 429 with
 * `X-Ratelimit-Reset`, a refused token.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createStore } from '../../src/adapters/keyv/keyv-store.js';
import { createMattermostTransport, OUTBOX_PROP } from '../../src/adapters/mattermost/mattermost-transport.js';
import { DeliveryError, type ChatIntent } from '../../src/core/chat/chat-types.js';
import type { ChatTransport } from '../../src/ports/chat-transport.js';
import { silentLogger } from '../../src/ports/logger.js';
import { startMattermostFake, type MattermostFake } from '../fakes/mattermost-server.js';
import { card } from '../unit/adapters/matrix/views.js';
import { waitFor } from '../helpers/wait-for.js';

let fake: MattermostFake;
let transport: ChatTransport;
const events: ChatIntent[] = [];

beforeEach(async () => {
  fake = await startMattermostFake();
  events.length = 0;
  ({ transport } = createMattermostTransport({
    url: fake.url,
    token: fake.botToken,
    channels: [`${fake.team}/incidents`, fake.channels.payments],
    store: createStore('memory://', '/nonexistent'),
    logger: silentLogger,
    backoff: { initialMs: 50, maxMs: 200 },
  }));
  await transport.start(async (e) => void events.push(e));
  await waitFor(() => fake.open > 0 || undefined, 'the WebSocket');
});

afterEach(async () => {
  await transport.close();
  await fake.close();
});

const caught = async (p: Promise<unknown>): Promise<DeliveryError> => {
  try {
    await p;
  } catch (e) {
    if (e instanceof DeliveryError) return e;
    throw e;
  }
  throw new Error('expected a DeliveryError');
};

describe('Mattermost transport on the wire', () => {
  it('posts to a channel named team/name, replies by root_id, edits in place keeping the props', async () => {
    const ref = await transport.post({ transport: 'mattermost', channel: '' }, card(), undefined, { idempotencyKey: 'ob-1' });
    expect(ref.channel).toBe(fake.channels.incidents);
    const reply = await transport.reply(ref, { kind: 'notice', topic: 'info', icon: 'ℹ️', text: ['hello'] }, { idempotencyKey: 'ob-2' });
    expect(fake.post(reply.id)).toMatchObject({ root_id: ref.id, props: { [OUTBOX_PROP]: 'ob-2', disable_group_highlight: true } });
    await transport.update(ref, card({ state: 'resolved' }), { idempotencyKey: 'ob-3' });
    expect(fake.post(ref.id)!.message).toContain('✅ resolved');
    expect(fake.post(ref.id)!.props).toEqual({ [OUTBOX_PROP]: 'ob-1', disable_group_highlight: true });
    expect(fake.requests.some((r) => r.method === 'PUT' && r.path === `/api/v4/posts/${ref.id}/patch`)).toBe(true);
  });

  it('answers privately with an ephemeral post in the thread', async () => {
    await transport.ephemeral(
      { kind: 'ephemeral', channel: fake.channels.incidents, user: fake.users.alice.id, thread: 'r'.repeat(26) },
      { kind: 'ephemeral', title: 'Status', body: [['all quiet']] },
      { idempotencyKey: 'ob-4' },
    );
    expect(fake.ephemerals).toEqual([expect.objectContaining({ user_id: fake.users.alice.id, channel_id: fake.channels.incidents, root_id: 'r'.repeat(26) })]);
  });

  it('finds a post whose answer was lost by the outbox id in its props, so it is not posted twice', async () => {
    const since = new Date();
    fake.setBehaviour({ failPosts: { times: 1, status: 502, afterStore: true } });
    const err = await caught(transport.post({ transport: 'mattermost', channel: fake.channels.payments }, card(), undefined, { idempotencyKey: 'ob-lost' }));
    expect(err).toMatchObject({ retryable: true, outcomeUnknown: true });
    const found = await transport.find!({ channel: fake.channels.payments }, since);
    expect([...found.keys()]).toEqual(['ob-lost']);
    expect(found.get('ob-lost')![0]!.id).toBe(fake.roots(fake.channels.payments)[0]!.id);
  });

  it('honours a 429 with X-Ratelimit-Reset', async () => {
    fake.setBehaviour({ rateLimit: { times: 1, resetSeconds: 3 } });
    const err = await caught(transport.post({ transport: 'mattermost', channel: '' }, card(), undefined, { idempotencyKey: 'ob-5' }));
    expect(err).toMatchObject({ retryable: true, retryAfterMs: 3000, outcomeUnknown: false });
  });

  it('refuses channels it does not serve, and a message of another surface', async () => {
    expect(
      await caught(transport.post({ transport: 'mattermost', channel: fake.channels.elsewhere }, card(), undefined, { idempotencyKey: 'x' })),
    ).toMatchObject({
      retryable: false,
    });
    expect(await caught(transport.update({ transport: 'slack', channel: fake.channels.incidents, id: 'x' }, card(), { idempotencyKey: 'y' }))).toMatchObject({
      retryable: false,
    });
  });

  it('fails to start with a refused token, saying what to do', async () => {
    const { transport: bad } = createMattermostTransport({
      url: fake.url,
      token: 'nope',
      channels: [fake.channels.incidents],
      store: createStore('memory://', '/nonexistent'),
      logger: silentLogger,
    });
    await expect(bad.start(async () => {})).rejects.toThrow(/refused MATTERMOST_TOKEN/);
    await bad.close();
  });

  it('catches up after a gap in the WebSocket sequence numbers', async () => {
    const ref = await transport.post({ transport: 'mattermost', channel: '' }, card(), undefined, { idempotencyKey: 'ob-6' });
    const catchUps = (): number => fake.requests.filter((r) => r.path.startsWith(`/api/v4/channels/${fake.channels.incidents}/posts?since=`)).length;
    // The first connection's catch-up is done once the hello has been handled.
    const before = await waitFor(() => catchUps() || undefined, 'the first catch-up');
    fake.setBehaviour({ skipSeq: true });
    fake.react(fake.users.alice.id, ref.id, '+1');
    await waitFor(() => events.find((e) => e.type === 'vote'), 'the vote');
    // The gap made it read the channel back through REST.
    await waitFor(() => catchUps() > before || undefined, 'a catch-up after the gap');
    expect(events.filter((e) => e.type === 'vote')).toHaveLength(1);
  });
});
