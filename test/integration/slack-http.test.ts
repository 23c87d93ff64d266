/**
 * Slack in HTTP mode, on the wire: the real Bolt app behind the bot's real hono server, signed
 * requests as Slack sends them, the Web API fake answering the bot's calls.
 */
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createSlackTransport, type SlackTransport } from '../../src/adapters/slack/slack-transport.js';
import type { ChatIntent } from '../../src/core/chat/chat-types.js';
import { createHttpServer, type HttpServer } from '../../src/http/create-server.js';
import { createBotMetrics } from '../../src/http/metrics.js';
import { combineReadiness } from '../../src/http/readiness.js';
import { startSlackFake, type SlackFake } from '../fakes/slack-fake.js';
import { recordingLogger, type LogLine } from '../fakes/slack-recording-logger.js';
import { appMentionEvent, deliver, messageEvent, reactionEvent, sign } from '../fakes/slack-requests.js';
import { card } from '../unit/adapters/slack/thread-fixtures.js';

let fake: SlackFake;
let http: HttpServer;
let transport: SlackTransport;
let eventsUrl: string;
const logs: LogLine[] = [];
const received: ChatIntent[] = [];
let sink: (e: ChatIntent) => Promise<void>;
const ACK_MS = 300;
const BOT = 'U0REPRISE';
const CHANNEL = 'C0INCIDENTS';

beforeAll(async () => {
  fake = await startSlackFake({ botUserId: BOT });
  const logger = recordingLogger(logs);
  const slack = createSlackTransport({
    botToken: fake.botToken,
    signingSecret: fake.signingSecret,
    apiUrl: fake.apiUrl,
    defaultChannel: CHANNEL,
    logger,
    retries: 0,
    ackTimeoutMs: ACK_MS,
  });
  transport = slack.transport;
  http = createHttpServer({
    bodyLimitBytes: 1024 * 1024,
    logger,
    onAlertmanager: async () => ({ accepted: 0 }),
    readiness: () => combineReadiness([]),
    metrics: createBotMetrics({ defaults: false }),
    ...(slack.mount ? { mount: slack.mount } : {}),
  });
  const { port } = await http.listen(0, '127.0.0.1');
  eventsUrl = `http://127.0.0.1:${port}/slack/events`;
  await transport.start((e) => sink(e));
});

afterAll(async () => {
  await transport?.close();
  await http?.close();
  await fake?.close();
});

beforeEach(() => {
  received.length = 0;
  logs.length = 0;
  sink = async (e) => {
    received.push(e);
  };
});

/** A card the bot really posted through the fake: reactions and clicks target it. */
async function postedCard(): Promise<{ ts: string; blockId: string }> {
  const ref = await transport.post({ transport: 'slack', channel: CHANNEL }, card(), undefined, { idempotencyKey: 'k' });
  const msg = fake.message(ref.channel, ref.id)!;
  const actions = (msg.blocks as Array<{ type: string; block_id?: string }>).find((b) => b.type === 'actions')!;
  return { ts: ref.id, blockId: actions.block_id! };
}

describe('Slack HTTP mode: security', () => {
  it('answers the url_verification challenge', async () => {
    const res = await deliver(
      eventsUrl,
      sign(fake.signingSecret, JSON.stringify({ token: 'x', challenge: 'c-123', type: 'url_verification' }), 'application/json'),
    );
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ challenge: 'c-123' });
  });

  it('rejects a forged signature with 401, logged, and the sink is never called', async () => {
    const { ts } = await postedCard();
    const req = fake.signed.event(reactionEvent({ user: 'U0ANN', reaction: '+1', channel: CHANNEL, ts, itemUser: BOT }), { secret: 'not-the-secret' });
    const res = await deliver(eventsUrl, req);
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('unauthorized');
    expect(received).toEqual([]);
    expect(logs.some((l) => l.level === 'warn' && /signature mismatch/.test(l.msg ?? ''))).toBe(true);
  });

  it('rejects a stale or future timestamp (five-minute window) and a missing signature', async () => {
    const event = reactionEvent({ user: 'U0ANN', reaction: '+1', channel: CHANNEL, ts: '1.1', itemUser: BOT });
    const now = Math.floor(Date.now() / 1000);
    for (const timestamp of [now - 301, now + 301]) {
      const res = await deliver(eventsUrl, fake.signed.event(event, { timestamp }));
      expect(res.status).toBe(401);
    }
    const unsigned = fake.signed.event(event);
    delete unsigned.headers['x-slack-signature'];
    expect((await deliver(eventsUrl, unsigned)).status).toBe(401);
    // A body altered after signing is a forgery too.
    const tampered = fake.signed.event(event);
    expect((await deliver(eventsUrl, { ...tampered, body: tampered.body.replace('+1', '-1') })).status).toBe(401);
    expect(received).toEqual([]);
    expect(logs.filter((l) => l.level === 'warn' && /stale request/.test(l.msg ?? '')).length).toBe(2);
  });

  it('answers a correctly signed but malformed payload 400 (never 500, which Slack would retry), and the sink is never called', async () => {
    const json = (v: unknown) => sign(fake.signingSecret, JSON.stringify(v), 'application/json');
    const form = (v: Record<string, string>) => sign(fake.signingSecret, new URLSearchParams(v).toString(), 'application/x-www-form-urlencoded');
    const cases: Array<[string, ReturnType<typeof sign>, RegExp]> = [
      ['not JSON', sign(fake.signingSecret, '{"type": "event_callback", ', 'application/json'), /not valid/],
      ['a JSON list', json([1, 2]), /not an object/],
      ['event as a string', json({ type: 'event_callback', event: 'reaction_added' }), /event must be an object/],
      ['event without a type', json({ type: 'event_callback', event: { user: 'U0ANN' } }), /event\.type must be a string/],
      ['event.item not an object', json({ type: 'event_callback', event: { type: 'reaction_added', item: 7 } }), /event\.item must be an object/],
      ['event.channel null', json({ type: 'event_callback', event: { type: 'message', channel: null } }), /event\.channel/],
      ['authorizations of nulls', json({ type: 'event_callback', event: { type: 'message' }, authorizations: [null] }), /authorizations/],
      [
        'a click with no user',
        form({ payload: JSON.stringify({ type: 'block_actions', actions: [{ action_id: 'reprise_vote_up' }], user: null }) }),
        /user must be an object/,
      ],
      ['actions not a list', form({ payload: JSON.stringify({ type: 'block_actions', actions: 'x', user: { id: 'U1' } }) }), /actions must be a list/],
      [
        'a click with channel null',
        form({ payload: JSON.stringify({ type: 'block_actions', actions: [{}], user: { id: 'U1' }, channel: null }) }),
        /channel must be an object/,
      ],
      ['interactivity payload not JSON', form({ payload: '{oops' }), /not valid/],
      ['a view without a view', json({ type: 'view_submission', user: { id: 'U1' } }), /view must be an object/],
      ['a shortcut without a user', json({ type: 'shortcut', callback_id: 'x' }), /user must be an object/],
    ];
    for (const [what, req, reason] of cases) {
      const res = await deliver(eventsUrl, req);
      expect(res.status, what).toBe(400);
      expect(((await res.json()) as { error: { code: string; message: string } }).error, what).toMatchObject({
        code: 'bad_request',
        message: expect.stringMatching(reason),
      });
    }
    // Signed bytes that are not UTF-8: verified on the raw bytes, then refused, not mangled.
    const ts = Math.floor(Date.now() / 1000);
    const bytes = Buffer.concat([Buffer.from('{"type":"event_callback","event":{"type":"message","text":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}}')]);
    const signature = `v0=${createHmac('sha256', fake.signingSecret).update(`v0:${ts}:`).update(bytes).digest('hex')}`;
    const res = await fetch(eventsUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-slack-request-timestamp': String(ts), 'x-slack-signature': signature },
      body: bytes,
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/not valid UTF-8/);
    expect(received).toEqual([]);
    expect(logs.some((l) => l.level === 'error')).toBe(false);
  });

  it('accepts a request signed just inside the window', async () => {
    const { ts } = await postedCard();
    const res = await deliver(
      eventsUrl,
      fake.signed.event(reactionEvent({ user: 'U0ANN', reaction: '+1', channel: CHANNEL, ts, itemUser: BOT }), {
        timestamp: Math.floor(Date.now() / 1000) - 280,
      }),
    );
    expect(res.status).toBe(200);
    expect(received).toHaveLength(1);
  });
});

describe('Slack HTTP mode: events to the sink', () => {
  it('a 👍 reaction on the bot’s card is a vote, a removed 👎 clears it, each carrying Slack’s event_id', async () => {
    const { ts } = await postedCard();
    const up = fake.signed.event(reactionEvent({ user: 'U0ANN', reaction: 'thumbsup::skin-tone-3', channel: CHANNEL, ts, itemUser: BOT }));
    expect((await deliver(eventsUrl, up)).status).toBe(200);
    const down = fake.signed.event(reactionEvent({ user: 'U0BOB', reaction: '-1', channel: CHANNEL, ts, itemUser: BOT, removed: true }));
    expect((await deliver(eventsUrl, down)).status).toBe(200);
    expect(received).toEqual([
      {
        type: 'vote',
        eventId: up.eventId,
        actor: { id: 'U0ANN', via: 'slack' },
        vote: 'up',
        target: { message: { transport: 'slack', channel: CHANNEL, id: ts } },
      },
      {
        type: 'vote',
        eventId: down.eventId,
        actor: { id: 'U0BOB', via: 'slack' },
        vote: 'clear',
        target: { message: { transport: 'slack', channel: CHANNEL, id: ts } },
      },
    ]);
  });

  it('never counts a reaction on a message the bot did not send, or the bot’s own reaction', async () => {
    const { ts } = await postedCard();
    const someoneElses = fake.signed.event(reactionEvent({ user: 'U0ANN', reaction: '-1', channel: CHANNEL, ts: '1700000000.000100', itemUser: 'U0BOB' }));
    const botsOwn = fake.signed.event(reactionEvent({ user: BOT, reaction: '+1', channel: CHANNEL, ts, itemUser: BOT }));
    expect((await deliver(eventsUrl, someoneElses)).status).toBe(200);
    expect((await deliver(eventsUrl, botsOwn)).status).toBe(200);
    expect(received).toEqual([]);
  });

  it('a Slack retry (X-Slack-Retry-Num) carries the same eventId, so the bot can drop it', async () => {
    const { ts } = await postedCard();
    const event = reactionEvent({ user: 'U0ANN', reaction: '-1', channel: CHANNEL, ts, itemUser: BOT });
    const first = fake.signed.event(event, { eventId: 'Ev0RETRY01' });
    const retry = fake.signed.event(event, { eventId: 'Ev0RETRY01', retryNum: 1, retryReason: 'http_timeout' });
    await deliver(eventsUrl, first);
    await deliver(eventsUrl, retry);
    expect(received.map((e) => e.eventId)).toEqual(['Ev0RETRY01', 'Ev0RETRY01']);
  });

  it('a mention in the thread is a note, with the mention stripped; a reply that does not address the bot is nothing', async () => {
    const { ts } = await postedCard();
    const reply = fake.signed.event(messageEvent({ user: 'U0ANN', text: 'was it the &lt;disk&gt;? <@U0BOB>', channel: CHANNEL, ts: `${ts}1`, threadTs: ts }));
    const mentionAsMessage = fake.signed.event(
      messageEvent({ user: 'U0ANN', text: `<@${BOT}> note: disk was full`, channel: CHANNEL, ts: `${ts}2`, threadTs: ts }),
    );
    const mention = fake.signed.event(appMentionEvent({ user: 'U0ANN', text: `<@${BOT}> note: disk was full`, channel: CHANNEL, ts: `${ts}2`, threadTs: ts }));
    const topLevel = fake.signed.event(messageEvent({ user: 'U0ANN', text: 'lunch?', channel: CHANNEL, ts: `${ts}3` }));
    const botMessage = fake.signed.event(messageEvent({ user: BOT, text: 'echo', channel: CHANNEL, ts: `${ts}4`, threadTs: ts, botId: 'B0REPRISE' }));
    const edit = fake.signed.event({ ...messageEvent({ user: 'U0ANN', text: 'x', channel: CHANNEL, ts: `${ts}5`, threadTs: ts }), subtype: 'message_changed' });
    for (const r of [reply, mentionAsMessage, mention, topLevel, botMessage, edit]) expect((await deliver(eventsUrl, r)).status).toBe(200);
    const thread = { transport: 'slack', channel: CHANNEL, id: ts };
    expect(received).toEqual([
      { type: 'note', eventId: mention.eventId, actor: { id: 'U0ANN', via: 'slack' }, text: 'disk was full', target: { message: thread } },
    ]);
  });

  it('answers 500 when the bot fails an event, so Slack delivers it again', async () => {
    const { ts } = await postedCard();
    sink = async () => {
      throw new Error('store is down');
    };
    const event = reactionEvent({ user: 'U0ANN', reaction: '+1', channel: CHANNEL, ts, itemUser: BOT });
    const res = await deliver(eventsUrl, fake.signed.event(event, { eventId: 'Ev0FAIL01' }));
    expect(res.status).toBe(500);
    sink = async (e) => {
      received.push(e);
    };
    const again = await deliver(eventsUrl, fake.signed.event(event, { eventId: 'Ev0FAIL01', retryNum: 1 }));
    expect(again.status).toBe(200);
    expect(received.map((e) => e.eventId)).toEqual(['Ev0FAIL01']);
  });

  it('acknowledges within the window when the bot is slow, and logs it', async () => {
    const { ts } = await postedCard();
    let release!: () => void;
    sink = (e) =>
      new Promise<void>((resolve) => {
        received.push(e);
        release = resolve;
      });
    const started = Date.now();
    const res = await deliver(eventsUrl, fake.signed.event(reactionEvent({ user: 'U0ANN', reaction: '+1', channel: CHANNEL, ts, itemUser: BOT })));
    const took = Date.now() - started;
    expect(res.status).toBe(200);
    // It waited for the bot's window (a lower bound: load only makes it later)…
    expect(took).toBeGreaterThanOrEqual(ACK_MS - 20);
    // …and answered while the bot still holds the event (release() has not run): no upper
    // bound on the clock is needed to show it did not wait for the bot.
    expect(received).toHaveLength(1);
    expect(logs.some((l) => l.level === 'warn' && /acknowledged to Slack anyway/.test(l.msg ?? ''))).toBe(true);
    release();
  });
});

describe('Slack HTTP mode: commands and controls', () => {
  it('/reprise … is a command answered through its response_url', async () => {
    const req = fake.signed.command({ text: 'recall checkout oom', triggerId: '111.222.abc' });
    const res = await deliver(eventsUrl, req);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('');
    const [ev] = received;
    expect(ev).toMatchObject({
      type: 'command',
      eventId: 'command:111.222.abc',
      actor: { id: 'U0ANN', via: 'slack' },
      channel: CHANNEL,
      name: 'recall',
      args: 'checkout oom',
      replyTo: { kind: 'response_url' },
    });
    // The payload's legacy user_name is not taken as a name: a person is their id, named by users.info.
    if (ev?.type !== 'command') throw new Error('not a command');
    expect(ev.actor).not.toHaveProperty('name');
    await transport.ephemeral(
      ev.replyTo,
      { kind: 'ephemeral', title: 'Recall', body: [['Best: ', { code: 'incidents/checkout-oom' }]] },
      { idempotencyKey: 'test-answer' },
    );
    const [answer] = fake.calls('response_url');
    expect(answer?.path).toBe(new URL((ev.replyTo as { url: string }).url).pathname);
    expect(answer?.body).toMatchObject({ response_type: 'ephemeral', replace_original: false, text: 'Recall' });
  });

  it('tells the user, privately, when the bot cannot take a command', async () => {
    sink = async () => {
      throw new Error('down');
    };
    const res = await deliver(eventsUrl, fake.signed.command({ text: 'status' }));
    expect(res.status).toBe(200);
    const body = (await res.json()) as { response_type: string; text: string };
    expect(body.response_type).toBe('ephemeral');
    expect(body.text).toMatch(/could not take that command/);
  });

  it('👍 / 👎 buttons and the 🔕 select are actions on the card, carrying its controlsId', async () => {
    const { ts, blockId } = await postedCard();
    const up = await deliver(eventsUrl, fake.signed.action({ messageTs: ts, actionId: 'reprise_vote_up', blockId, value: 'x', user: 'U0ANN' }));
    const silence = await deliver(eventsUrl, fake.signed.action({ messageTs: ts, actionId: 'reprise_silence', blockId, selected: '4h', user: 'U0ANN' }));
    const bogus = await deliver(eventsUrl, fake.signed.action({ messageTs: ts, actionId: 'reprise_silence', blockId, selected: '99y', user: 'U0ANN' }));
    expect([up.status, silence.status, bogus.status]).toEqual([200, 200, 200]);
    const target = { transport: 'slack', channel: CHANNEL, id: ts };
    expect(received).toMatchObject([
      {
        type: 'vote',
        vote: 'up',
        target: { message: target, controlsId: 'inc-42' },
        actor: { id: 'U0ANN', via: 'slack' },
        replyTo: { kind: 'response_url' },
      },
      { type: 'silence', duration: '4h', target: { message: target, controlsId: 'inc-42' } },
    ]);
    expect(new Set(received.map((e) => e.eventId)).size).toBe(2);
  });

  it('a double click counts once; a later change of mind counts again', async () => {
    const { ts, blockId } = await postedCard();
    const click = (actionId: string) => deliver(eventsUrl, fake.signed.action({ messageTs: ts, actionId, blockId, user: 'U0CAROL' }));
    await click('reprise_vote_down');
    await click('reprise_vote_down');
    await click('reprise_vote_up');
    expect(received.map((e) => (e.type === 'vote' ? e.vote : e.type))).toEqual(['down', 'up']);
  });

  it('a click the bot fails is answered 500 so Slack shows the user it did not work', async () => {
    const { ts, blockId } = await postedCard();
    sink = async () => {
      throw new Error('down');
    };
    const res = await deliver(eventsUrl, fake.signed.action({ messageTs: ts, actionId: 'reprise_vote_up', blockId, user: 'U0DAVE' }));
    expect(res.status).toBe(500);
  });
});

describe('Slack HTTP mode: lifecycle', () => {
  it('started while Slack was unreachable: events are answered 500 until the bot can identify itself', async () => {
    const late = createSlackTransport({
      botToken: fake.botToken,
      signingSecret: fake.signingSecret,
      apiUrl: fake.apiUrl,
      defaultChannel: CHANNEL,
      logger: recordingLogger(logs),
      retries: 0,
    });
    const app = createHttpServer({
      bodyLimitBytes: 1024 * 1024,
      logger: recordingLogger(logs),
      onAlertmanager: async () => ({ accepted: 0 }),
      readiness: () => combineReadiness([]),
      metrics: createBotMetrics({ defaults: false }),
      ...(late.mount ? { mount: late.mount } : {}),
    }).app;
    const got: ChatIntent[] = [];
    await fake.down();
    try {
      await late.transport.start(async (e) => {
        got.push(e);
      });
      const event = reactionEvent({ user: 'U0ANN', reaction: '+1', channel: CHANNEL, ts: '1700000000.000100', itemUser: BOT });
      const first = fake.signed.event(event, { eventId: 'Ev0EARLY1' });
      expect((await app.request('/slack/events', { method: 'POST', headers: first.headers, body: first.body })).status).toBe(500);
      await fake.up();
      const retry = fake.signed.event(event, { eventId: 'Ev0EARLY1', retryNum: 1 });
      expect((await app.request('/slack/events', { method: 'POST', headers: retry.headers, body: retry.body })).status).toBe(200);
      expect(got.map((e) => e.eventId)).toEqual(['Ev0EARLY1']);
    } finally {
      if (
        !(await fetch(fake.url).then(
          () => true,
          () => false,
        ))
      )
        await fake.up();
      await late.transport.close();
    }
  });

  it('answers 503 once closed, so Slack retries later (the challenge still works)', async () => {
    await transport.close();
    const res = await deliver(eventsUrl, fake.signed.event(reactionEvent({ user: 'U0ANN', reaction: '+1', channel: CHANNEL, ts: '1.1', itemUser: BOT })));
    expect(res.status).toBe(503);
    expect(received).toEqual([]);
    const challenge = await deliver(eventsUrl, sign(fake.signingSecret, JSON.stringify({ challenge: 'c', type: 'url_verification' }), 'application/json'));
    expect(challenge.status).toBe(200);
  });
});
