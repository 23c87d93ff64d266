/**
 * What the Slack transport sends, asserted on the wire of the Web API fake: posts, thread
 * replies, in-place card updates, private answers — and how each failure comes back as a
 * DeliveryError the outbox can act on.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createSlackTransport, type SlackTransport } from '../../src/adapters/slack/slack-transport.js';
import { DeliveryError, type MessageRef } from '../../src/core/chat/chat-types.js';
import { silentLogger } from '../../src/ports/logger.js';
import { startSlackFake, type SlackFake } from '../fakes/slack-fake.js';
import { card, detail } from '../unit/adapters/slack/thread-fixtures.js';

let fake: SlackFake;
let slack: SlackTransport;
const OPTS = { idempotencyKey: 'outbox-1' };
const dest = { transport: 'slack', channel: 'C0INCIDENTS' };

function transport(over: Partial<Parameters<typeof createSlackTransport>[0]> = {}): SlackTransport {
  return createSlackTransport({
    botToken: fake.botToken,
    signingSecret: fake.signingSecret,
    apiUrl: fake.apiUrl,
    defaultChannel: 'C0INCIDENTS',
    logger: silentLogger,
    retries: 0,
    ...over,
  }).transport;
}

async function failure(p: Promise<unknown>): Promise<DeliveryError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DeliveryError);
  return err as DeliveryError;
}

beforeAll(async () => {
  fake = await startSlackFake();
  slack = transport();
  await slack.start(async () => {});
});

afterAll(async () => {
  await slack?.close();
  await fake?.close();
});

beforeEach(() => {
  fake.requests.length = 0;
  fake.setBehaviour({ latencyMs: 0, failures: [] });
});

describe('Slack delivery: what reaches Slack', () => {
  it('identifies the bot once with auth.test on start, with the bot token', async () => {
    const fresh = transport();
    await fresh.start(async () => {});
    const calls = fake.calls('auth.test');
    expect(calls).toHaveLength(1);
    expect(calls[0]?.headers.authorization).toBe(`Bearer ${fake.botToken}`);
    await fresh.close();
  });

  it('posts the card as the thread root and returns Slack’s channel id and ts', async () => {
    const ref = await slack.post({ transport: 'slack', channel: '#incidents' }, card(), detail(), OPTS);
    const [call] = fake.calls('chat.postMessage');
    expect(call?.body).toMatchObject({ channel: '#incidents', unfurl_links: 'false', unfurl_media: 'false' });
    expect(call?.body['text']).toContain('KubePodCrashLooping');
    expect((call?.body['blocks'] as Array<{ type: string }>).map((b) => b.type)).toEqual(['header', 'context', 'rich_text', 'actions']);
    expect(call?.body['thread_ts']).toBeUndefined();
    // Slack names the channel by id in its answer: the id is what chat.update needs later.
    expect(ref).toEqual({ transport: 'slack', channel: fake.messages.at(-1)!.channel, id: fake.messages.at(-1)!.ts });
    expect(ref.channel).toMatch(/^C\d+/);
  });

  it('posts to the default channel when the destination names none', async () => {
    await slack.post({ transport: 'slack', channel: '' }, card(), undefined, OPTS);
    expect(fake.calls('chat.postMessage')[0]?.body['channel']).toBe('C0INCIDENTS');
  });

  it('replies in the card’s thread: the detail and the resolve notice', async () => {
    const root = await slack.post(dest, card(), undefined, OPTS);
    const d = await slack.reply(root, detail(), OPTS);
    const n = await slack.reply(root, { kind: 'notice', topic: 'resolved', icon: '✅', text: ['resolved after 23 min'] }, OPTS);
    const [, detailCall, noticeCall] = fake.calls('chat.postMessage');
    expect(detailCall?.body['thread_ts']).toBe(root.id);
    expect(noticeCall?.body).toMatchObject({ thread_ts: root.id, text: '✅ resolved after 23 min' });
    expect(d).toEqual({ transport: 'slack', channel: root.channel, id: fake.messages.at(-2)!.ts, thread: root.id });
    // Replying to a reply stays in the same thread.
    await slack.reply(n, { kind: 'notice', topic: 'note', icon: '📝', text: ['saved'] }, OPTS);
    expect(fake.calls('chat.postMessage')[3]?.body['thread_ts']).toBe(root.id);
  });

  it('rewrites the card in place with chat.update when its state changes', async () => {
    const root = await slack.post(dest, card(), undefined, OPTS);
    await slack.update(root, card({ state: 'silenced', stateNote: 'silenced by ann until 14:00 UTC' }), OPTS);
    await slack.update(root, card({ state: 'resolved', stateNote: 'resolved after 23 min', controls: false }), OPTS);
    const updates = fake.calls('chat.update');
    expect(updates.map((u) => [u.body['channel'], u.body['ts']])).toEqual([
      [root.channel, root.id],
      [root.channel, root.id],
    ]);
    const msg = fake.message(root.channel, root.id)!;
    expect(msg.updates).toHaveLength(2);
    expect(JSON.stringify(msg.blocks)).toContain('✅ Resolved — resolved after 23 min');
    expect((msg.blocks as Array<{ type: string }>).some((b) => b.type === 'actions')).toBe(false);
  });

  it('answers privately: chat.postEphemeral to one user, or a reply in a thread', async () => {
    const view = { kind: 'ephemeral' as const, title: '🔕 Silenced for 4 h', body: [['until 14:00 UTC']] };
    await slack.ephemeral({ kind: 'ephemeral', channel: 'C0INCIDENTS', user: 'U0ANN', thread: '1700000000.000100' }, view, { idempotencyKey: 'test-answer' });
    expect(fake.calls('chat.postEphemeral')[0]?.body).toMatchObject({
      channel: 'C0INCIDENTS',
      user: 'U0ANN',
      thread_ts: '1700000000.000100',
      text: '🔕 Silenced for 4 h',
    });
    const ref: MessageRef = { transport: 'slack', channel: 'C0INCIDENTS', id: '1700000000.000200' };
    await slack.ephemeral({ kind: 'thread', ref }, view, { idempotencyKey: 'test-answer' });
    expect(fake.calls('chat.postMessage').at(-1)?.body).toMatchObject({ channel: 'C0INCIDENTS', thread_ts: ref.id });
  });

  it('an alert full of <!channel>, <!here>, <@U1> and <script> reaches Slack as text only', async () => {
    const evil = '<!channel> <!here> <@U1> <script>alert(1)</script> <http://evil.example.com|click>';
    await slack.post(dest, card({ alertname: evil, where: evil, headline: { answer: 'runbook', title: evil } }), undefined, OPTS);
    await slack.reply({ transport: 'slack', channel: 'C0INCIDENTS', id: '1.1' }, detail({ labels: [['summary', evil]], facts: [['Alert', evil]] }), OPTS);
    for (const call of fake.calls('chat.postMessage')) {
      const wire = JSON.stringify(call.body['blocks']);
      expect(wire).not.toMatch(/"type":"(broadcast|user|usergroup|channel|mrkdwn)"/);
      expect(wire).not.toContain('evil.example.com"');
      expect(String(call.body['text'])).not.toMatch(/[<>]/);
    }
  });
});

describe('Slack delivery: failures the outbox can act on', () => {
  it('429 → retryable with the Retry-After delay, and the SDK does not wait or retry itself', async () => {
    fake.failNext({ method: 'chat.postMessage', status: 429, retryAfterSec: 7 });
    const e = await failure(slack.post(dest, card(), undefined, OPTS));
    expect(e.retryable).toBe(true);
    expect(e.retryAfterMs).toBe(7000);
    expect(fake.calls('chat.postMessage')).toHaveLength(1);
  });

  it('channel_not_found, not_in_channel, invalid_auth → not retryable', async () => {
    for (const error of ['channel_not_found', 'not_in_channel', 'invalid_auth']) {
      fake.failNext({ method: 'chat.postMessage', error });
      const e = await failure(slack.post(dest, card(), undefined, OPTS));
      expect(e.retryable, error).toBe(false);
      expect(e.message).toContain(error);
    }
    fake.failNext({ method: 'chat.update', error: 'message_not_found' });
    expect((await failure(slack.update({ transport: 'slack', channel: 'C0INCIDENTS', id: '9.9' }, card(), OPTS))).retryable).toBe(false);
  });

  it('5xx, a reset connection and Slack’s own internal_error → retryable', async () => {
    fake.failNext({ method: 'chat.postMessage', status: 503 });
    expect((await failure(slack.post(dest, card(), undefined, OPTS))).retryable).toBe(true);
    fake.failNext({ method: 'chat.postMessage', reset: true });
    expect((await failure(slack.post(dest, card(), undefined, OPTS))).retryable).toBe(true);
    fake.failNext({ method: 'chat.postMessage', error: 'internal_error' });
    expect((await failure(slack.post(dest, card(), undefined, OPTS))).retryable).toBe(true);
  });

  it('Slack down (connection refused) → retryable; back up → delivered', async () => {
    await fake.down();
    try {
      const e = await failure(slack.post(dest, card(), undefined, OPTS));
      expect(e.retryable).toBe(true);
    } finally {
      await fake.up();
    }
    const ref = await slack.post(dest, card(), undefined, OPTS);
    expect(fake.message(ref.channel, ref.id)).toBeDefined();
  });

  it('a Slack slower than the request timeout → retryable', async () => {
    const impatient = transport({ requestTimeoutMs: 100 });
    fake.setBehaviour({ latencyMs: 400 });
    expect((await failure(impatient.post(dest, card(), undefined, OPTS))).retryable).toBe(true);
    await impatient.close();
  });

  it('response_url: used up (404 used_url) is final, 429 and 5xx are retryable', async () => {
    const url = fake.responseUrl();
    const view = { kind: 'ephemeral' as const, title: 't', body: [] };
    for (let i = 0; i < 5; i++) await slack.ephemeral({ kind: 'response_url', url }, view, { idempotencyKey: 'test-answer' });
    const used = await failure(slack.ephemeral({ kind: 'response_url', url }, view, { idempotencyKey: 'test-answer' }));
    expect(used.retryable).toBe(false);
    expect(used.message).toContain('used_url');
    fake.failNext({ method: 'response_url', status: 429, retryAfterSec: 3 });
    const limited = await failure(slack.ephemeral({ kind: 'response_url', url: fake.responseUrl() }, view, { idempotencyKey: 'test-answer' }));
    expect([limited.retryable, limited.retryAfterMs]).toEqual([true, 3000]);
    fake.failNext({ method: 'response_url', status: 502 });
    expect((await failure(slack.ephemeral({ kind: 'response_url', url: fake.responseUrl() }, view, { idempotencyKey: 'test-answer' }))).retryable).toBe(true);
    expect((await failure(slack.ephemeral({ kind: 'response_url', url: 'file:///etc/passwd' }, view, { idempotencyKey: 'test-answer' }))).retryable).toBe(
      false,
    );
  });
});

describe('Slack start-up', () => {
  it('a rejected bot token fails start with how to fix it', async () => {
    const bad = transport({ botToken: 'xoxb-revoked' });
    await expect(bad.start(async () => {})).rejects.toThrow(/SLACK_BOT_TOKEN.*invalid_auth.*Bot User OAuth Token/);
    await bad.close();
  });

  it('Slack unreachable at start does not stop the bot from starting', async () => {
    await fake.down();
    const early = transport();
    try {
      await early.start(async () => {});
    } finally {
      await fake.up();
    }
    const ref = await early.post(dest, card(), undefined, OPTS);
    expect(ref.id).toBeTruthy();
    await early.close();
  });

  it('refuses a configuration with neither a signing secret nor an app token', () => {
    expect(() => createSlackTransport({ botToken: 'xoxb-1', defaultChannel: 'C1', logger: silentLogger })).toThrow(/SLACK_SIGNING_SECRET.*SLACK_APP_TOKEN/);
  });
});
