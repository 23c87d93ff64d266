/**
 * Slack end to end (issue 10): `reprise serve` as users run it — Slack configured by the
 * ecosystem's environment variables, the real Bolt app on the bot's port — against the Slack
 * Web API fake on 127.0.0.1. Alertmanager webhooks in, signed Slack requests for what people do,
 * the ledger read back through the CLI.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSlackFake, type PostedMessage, type SlackFake } from '../fakes/slack-fake.js';
import { appMentionEvent, deliver, eventEnvelope, messageEvent, reactionEvent } from '../fakes/slack-requests.js';
import { CHECKOUT_ENTRY, crashLoopPayload, postAlert, type WebhookAccepted } from './helpers/alerts.js';
import { eventsOf, HOSTILE_ANNOTATIONS, ledgerEvents, ofType, searchPayload, settledEvents, writeConfig } from './helpers/chat-e2e.js';
import { cleanup, makeTmpDir, spawnBot, type BotProcess } from './helpers/spawn-bot.js';
import { waitFor } from '../helpers/wait-for.js';

const BOT = 'U0REPRISE';
const ANN = 'U0ANN';
const PAYMENTS = 'C0PAYMENTS';
const SEARCH = 'C0SEARCH';
const CONFIG = `transport:
  slack:
    allow_users: [${ANN}, U0BOB]
routing:
  rules:
    - match: { namespace: payments }
      slack: ${PAYMENTS}
    - match: { namespace: search }
      slack: ${SEARCH}
`;

let fake: SlackFake;
let dataDir: string;
let bot: BotProcess;
let eventsUrl: string;

async function startBot(): Promise<void> {
  bot = await spawnBot({
    dataDir,
    args: ['--config', writeConfig(dataDir, CONFIG)],
    env: { SLACK_BOT_TOKEN: fake.botToken, SLACK_SIGNING_SECRET: fake.signingSecret, SLACK_CHANNEL: 'C0DEFAULT', SLACK_API_URL: fake.apiUrl },
  });
  eventsUrl = `${bot.url}/slack/events`;
}

beforeAll(async () => {
  fake = await startSlackFake({ botUserId: BOT });
  dataDir = makeTmpDir();
  await startBot();
}, 60_000);

afterAll(async () => {
  await cleanup();
  await fake?.close();
});

const roots = (channel: string): PostedMessage[] => fake.messages.filter((m) => m.channel === channel && !m.thread_ts);
const replies = (root: PostedMessage): PostedMessage[] => fake.messages.filter((m) => m.thread_ts === root.ts);
/** Everything a message shows: its notification text and every text in its blocks. */
const shown = (m: { text: unknown; blocks: unknown }): string => `${String(m.text)}\n${JSON.stringify(m.blocks)}`;

/** The `type` of every node in a Block Kit tree. */
function nodeTypes(tree: unknown): string[] {
  if (Array.isArray(tree)) return tree.flatMap(nodeTypes);
  if (tree === null || typeof tree !== 'object') return [];
  const own = typeof (tree as { type?: unknown }).type === 'string' ? [(tree as { type: string }).type] : [];
  return [...own, ...Object.values(tree).flatMap(nodeTypes)];
}

let card: PostedMessage;

describe('Slack, end to end through reprise serve', () => {
  it('turns an Alertmanager webhook into a card in the routed channel with the analysis in its thread', { timeout: 30_000 }, async () => {
    const res = await postAlert(bot.url, crashLoopPayload({ status: 'firing' }));
    expect(res.status, res.text).toBe(202);
    card = await waitFor(() => roots(PAYMENTS)[0], 'the card');
    const detail = await waitFor(() => replies(card)[0], 'the analysis in the thread');
    expect(shown(card)).toContain('KubePodCrashLooping');
    expect(shown(card)).toContain('Instant recall');
    expect(shown(detail)).toContain(CHECKOUT_ENTRY);
    const [open] = await eventsOf(dataDir, 'open', 1);
    expect(open).toMatchObject({ entry: CHECKOUT_ENTRY });
  });

  it('rejects a forged or stale signature with 401 and records nothing', { timeout: 30_000 }, async () => {
    const before = (await settledEvents(dataDir)).length;
    const forged = await deliver(
      eventsUrl,
      fake.signed.event(reactionEvent({ user: ANN, reaction: '-1', channel: PAYMENTS, ts: card.ts, itemUser: BOT }), { secret: 'guessed' }),
    );
    const stale = await deliver(
      eventsUrl,
      fake.signed.event(reactionEvent({ user: ANN, reaction: '-1', channel: PAYMENTS, ts: card.ts, itemUser: BOT }), {
        timestamp: Math.floor(Date.now() / 1000) - 600,
      }),
    );
    expect([forged.status, stale.status]).toEqual([401, 401]);
    await bot.waitForLog((l) => l.level === 40 && /signature/i.test(String(l.msg)));
    expect((await ledgerEvents(dataDir)).length).toBe(before);
  });

  it('ignores reactions on messages the bot did not send, the bot’s own, and users outside the allowlist', { timeout: 30_000 }, async () => {
    const before = (await settledEvents(dataDir)).length;
    const tries = [
      reactionEvent({ user: ANN, reaction: '-1', channel: PAYMENTS, ts: '1700000000.000100', itemUser: 'U0SOMEONE' }),
      reactionEvent({ user: BOT, reaction: '-1', channel: PAYMENTS, ts: card.ts, itemUser: BOT }),
      reactionEvent({ user: 'U0EVE', reaction: '-1', channel: PAYMENTS, ts: card.ts, itemUser: BOT }),
    ];
    for (const ev of tries) expect((await deliver(eventsUrl, fake.signed.event(ev))).status).toBe(200);
    // Slack is answered once the event was handled: by then nothing was recorded, and once the
    // bot has settled nothing will be (an outsider's click is answered privately, not recorded).
    await bot.settled();
    expect((await ledgerEvents(dataDir)).length).toBe(before);
  });

  it('counts 👎 on the card once, as a vote on the thread’s recalled entry, even when Slack retries it', { timeout: 30_000 }, async () => {
    const req = fake.signed.event(reactionEvent({ user: ANN, reaction: '-1', channel: PAYMENTS, ts: card.ts, itemUser: BOT }));
    expect((await deliver(eventsUrl, req)).status).toBe(200);
    expect((await deliver(eventsUrl, req)).status).toBe(200); // Slack's retry: same event_id
    const [vote] = await eventsOf(dataDir, 'feedback', 1);
    const [open] = ofType(await ledgerEvents(dataDir), 'open');
    expect(vote).toMatchObject({ vote: 'down', user: `slack:${ANN}`, via: 'slack', openId: open!['id'] });
    expect(open!['entry']).toBe(CHECKOUT_ENTRY);
    await bot.settled();
    expect(ofType(await ledgerEvents(dataDir), 'feedback')).toHaveLength(1);
  });

  it('records a note addressed to the bot in the thread and acknowledges it there', { timeout: 30_000 }, async () => {
    const ts = `${Math.floor(Date.now() / 1000)}.000200`;
    const mention = appMentionEvent({
      user: ANN,
      text: `<@${BOT}> note: the pool was exhausted after the 02:40 deploy`,
      channel: PAYMENTS,
      ts,
      threadTs: card.ts,
    });
    expect((await deliver(eventsUrl, fake.signed.event(mention))).status).toBe(200);
    // Slack also sends the plain message event for the same post: it must not make a second note.
    const plain = await deliver(
      eventsUrl,
      fake.signed.event(messageEvent({ user: ANN, text: mention['text'] as string, channel: PAYMENTS, ts, threadTs: card.ts })),
    );
    expect(plain.status).toBe(200);
    const [note] = await eventsOf(dataDir, 'note', 1);
    expect(note).toMatchObject({ user: `slack:${ANN}`, via: 'slack', text: 'the pool was exhausted after the 02:40 deploy' });
    await waitFor(() => replies(card).find((m) => shown(m).includes('📝')), 'the 📝 acknowledgement in the thread');
    await bot.settled();
    expect(ofType(await ledgerEvents(dataDir), 'note')).toHaveLength(1);
  });

  it('answers /reprise recall privately with the ranked answer and its gate trace', { timeout: 30_000 }, async () => {
    const res = await deliver(eventsUrl, fake.signed.command({ text: 'recall KubePodCrashLooping', user: ANN, channel: PAYMENTS }));
    expect(res.status).toBe(200);
    const answer = await waitFor(() => fake.calls('response_url').at(-1) ?? fake.calls('chat.postEphemeral').at(-1), 'the private answer');
    const text = JSON.stringify(answer.body);
    expect(text).toContain(CHECKOUT_ENTRY);
    expect(text).toContain('Gate trace');
  });

  it('silences the trigger for 4 h from the card: the next firing posts nothing and opens nothing', { timeout: 30_000 }, async () => {
    const actions = (card.blocks as Array<{ type: string; block_id?: string }>).find((b) => b.type === 'actions')!;
    const res = await deliver(
      eventsUrl,
      fake.signed.action({ messageTs: card.ts, channel: PAYMENTS, actionId: 'reprise_silence', blockId: actions.block_id!, selected: '4h', user: ANN }),
    );
    expect(res.status).toBe(200);
    const [silence] = await eventsOf(dataDir, 'silence', 1);
    expect(Date.parse(silence!['until'] as string) - Date.now()).toBeGreaterThan(3.9 * 3_600_000);
    // The click is acknowledged privately and the card rewritten in place.
    await waitFor(() => fake.message(PAYMENTS, card.ts)?.updates.find((u) => /silenced by/i.test(shown(u))), 'the card rewritten as silenced');
    const posted = fake.messages.length;
    const opens = ofType(await ledgerEvents(dataDir), 'open').length;
    // The same trigger, another pod: a new firing the silence covers.
    const again = await postAlert(bot.url, crashLoopPayload({ status: 'firing', pod: 'checkout-api-7d9f8c6b5-zzzzz' }));
    expect(again.status).toBe(202);
    expect((again.json as WebhookAccepted).results[0]).toMatchObject({ status: 'silenced' });
    // Decided before the 202; once the outbox is empty, anything it asked to post has been posted.
    await bot.settled();
    expect(ofType(await ledgerEvents(dataDir), 'open')).toHaveLength(opens);
    expect(fake.messages.filter((m) => !m.thread_ts && fake.messages.indexOf(m) >= posted)).toEqual([]);
  });

  it(
    'routes two alerts to two channels, each resolve editing its own card and replying in its thread; hostile annotations stay text',
    { timeout: 30_000 },
    async () => {
      expect((await postAlert(bot.url, searchPayload({ status: 'firing', annotations: HOSTILE_ANNOTATIONS }))).status).toBe(202);
      const other = await waitFor(() => roots(SEARCH)[0], 'the second card');
      await waitFor(() => replies(other)[0], 'its analysis');
      for (const m of [other, ...replies(other)]) {
        const types = nodeTypes(m.blocks);
        for (const live of ['broadcast', 'user', 'usergroup', 'channel', 'mrkdwn']) expect(types, live).not.toContain(live);
        expect(JSON.stringify(m.blocks)).not.toContain('"url":"https://evil');
        // The notification text is mrkdwn: Slack's control sequences arrive escaped.
        expect(String(m.text)).not.toMatch(/<!channel>|<@U0BOSS>|<script>|<https:/);
      }
      // What the alert says is on the card, summary and description both, shown as text.
      expect(shown(other)).toContain('<!channel> @room @here the indexer is down');
      expect(shown(other)).toContain('<script>alert(1)</script>');
      expect(shown(other)).toContain('*bold* <@U0BOSS>');

      expect((await postAlert(bot.url, crashLoopPayload({ status: 'resolved' }))).status).toBe(202);
      expect((await postAlert(bot.url, searchPayload({ status: 'resolved' }))).status).toBe(202);
      for (const [root, channel] of [
        [card, PAYMENTS],
        [other, SEARCH],
      ] as const) {
        const edited = await waitFor(() => fake.message(channel, root.ts)?.updates.find((u) => shown(u).includes('Resolved')), 'the card edited to resolved');
        expect(shown(edited)).toContain('Resolved');
        await waitFor(() => replies(root).find((m) => /resolved/i.test(String(m.text))), 'a resolve line in the thread');
      }
      expect(roots(PAYMENTS)).toHaveLength(1);
      expect(roots(SEARCH)).toHaveLength(1);
    },
  );

  it('counts a reaction Slack redelivers after a restart once', { timeout: 60_000 }, async () => {
    const req = fake.signed.event(reactionEvent({ user: 'U0BOB', reaction: '+1', channel: PAYMENTS, ts: card.ts, itemUser: BOT }));
    expect((await deliver(eventsUrl, req)).status).toBe(200);
    await eventsOf(dataDir, 'feedback', 2);
    expect(await bot.stop()).toEqual({ code: 0, signal: null });
    await startBot();
    // Slack retries a delivery it thinks failed with the same event_id (signed anew).
    const retry = fake.signed.event(reactionEvent({ user: 'U0BOB', reaction: '+1', channel: PAYMENTS, ts: card.ts, itemUser: BOT }), { eventId: req.eventId });
    expect((await deliver(eventsUrl, retry)).status).toBe(200);
    // And one made while the bot was down reaches it once it is back.
    const late = fake.signed.event(reactionEvent({ user: ANN, reaction: '+1', channel: PAYMENTS, ts: card.ts, itemUser: BOT }));
    expect((await deliver(eventsUrl, late)).status).toBe(200);
    const votes = await eventsOf(dataDir, 'feedback', 3);
    await bot.settled();
    expect(ofType(await ledgerEvents(dataDir), 'feedback')).toHaveLength(3);
    expect(votes.map((v) => [v['user'], v['vote']])).toEqual([
      [`slack:${ANN}`, 'down'],
      ['slack:U0BOB', 'up'],
      [`slack:${ANN}`, 'up'],
    ]);
  });
});

describe('Slack slow or away', () => {
  it(
    'acknowledges a 40-alert group while every Slack call is held unanswered, and delivers once Slack is back from an outage',
    { timeout: 120_000 },
    async () => {
      // Slack takes every call and answers none until released: a webhook answered meanwhile
      // cannot have waited on a chat call, however fast or slow this machine is.
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      const shownBefore = fake.messages.length;
      fake.setBehaviour({ failures: [{ hold: held, times: Infinity }] });
      const group = crashLoopPayload({ status: 'firing' }) as { alerts: Array<Record<string, unknown>> };
      const template = group.alerts[0]!;
      group.alerts = Array.from({ length: 40 }, (_, i) => ({
        ...template,
        fingerprint: `storm-${i}`,
        labels: { ...(template['labels'] as object), namespace: 'search', pod: `indexer-${i}` },
      }));
      const res = await postAlert(bot.url, group);
      expect(res.status).toBe(202);
      expect((res.json as WebhookAccepted).accepted).toBe(40);
      // The chat calls happen after the acknowledgement: Slack has been asked, and has done nothing yet.
      await waitFor(() => fake.calls('chat.postMessage').length > 0, 'the card asked of Slack, held');
      expect(fake.messages.length, 'nothing was posted while Slack held every call').toBe(shownBefore);
      const opens = ofType(await ledgerEvents(dataDir), 'open').filter((o) => String(o['fingerprint']).startsWith('storm-'));
      expect(opens).toHaveLength(40);
      fake.setBehaviour({ failures: [] });
      release();
      await waitFor(() => fake.messages.length > shownBefore, 'the held card posted once released');

      await fake.down();
      const away = await postAlert(bot.url, searchPayload({ status: 'firing', pod: 'indexer-away', fingerprint: 'away-1' }));
      expect(away.status).toBe(202);
      // It tried while Slack was away and will try again: /readyz counts it among the retrying.
      await waitFor(async () => (await bot.readyz()).checks.outbox.retrying > 0, 'a failed delivery waiting for its retry');
      await fake.up();
      await waitFor(() => fake.messages.find((m) => shown(m).includes('indexer-away')), { what: 'the thread posted after the outage', timeoutMs: 60_000 });
      await bot.settled(60_000); // every retry has run: a duplicate would have been posted by now
      // Delivered once: no message of that thread was posted twice.
      const hits = fake.messages.filter((m) => shown(m).includes('indexer-away')).map(shown);
      expect(new Set(hits).size).toBe(hits.length);
    },
  );
});

describe('Slack in Socket Mode, through reprise serve', () => {
  it('posts the thread and counts a 👎 that arrives over the WebSocket, with no Slack route on the public port', { timeout: 60_000 }, async () => {
    const socketFake = await startSlackFake({ botUserId: BOT });
    const dir = makeTmpDir();
    try {
      const socketBot = await spawnBot({
        dataDir: dir,
        env: { SLACK_BOT_TOKEN: socketFake.botToken, SLACK_APP_TOKEN: socketFake.appToken, SLACK_CHANNEL: 'C0SOCKET', SLACK_API_URL: socketFake.apiUrl },
      });
      await socketFake.socket.waitForConnection();
      expect((await postAlert(socketBot.url, crashLoopPayload({ status: 'firing' }))).status).toBe(202);
      const root = await waitFor(() => socketFake.messages.find((m) => m.channel === 'C0SOCKET' && !m.thread_ts), 'the Socket Mode card');
      const id = socketFake.socket.send(
        'events_api',
        eventEnvelope(socketFake.workspace, reactionEvent({ user: ANN, reaction: '-1', channel: 'C0SOCKET', ts: root.ts, itemUser: BOT })),
      );
      await socketFake.socket.waitForAck(id);
      const vote = await waitFor(async () => ofType(await ledgerEvents(dir), 'feedback')[0], 'the vote');
      expect(vote).toMatchObject({ vote: 'down', user: `slack:${ANN}`, via: 'slack' });
      // Socket Mode needs no ingress: nothing answers Slack requests on the bot's port.
      expect(
        (
          await deliver(
            `${socketBot.url}/slack/events`,
            socketFake.signed.event(reactionEvent({ user: ANN, reaction: '+1', channel: 'C0SOCKET', ts: root.ts, itemUser: BOT })),
          )
        ).status,
      ).toBe(404);
      expect(await socketBot.stop()).toEqual({ code: 0, signal: null });
    } finally {
      await socketFake.close();
    }
  });
});

describe('Slack and Matrix at once', () => {
  it('posts each incident to both, and a resolve edits both cards', { timeout: 60_000 }, async () => {
    const { startMatrixFake } = await import('../fakes/matrix-homeserver.js');
    const both = await startSlackFake({ botUserId: BOT });
    const matrix = await startMatrixFake();
    const dir = makeTmpDir();
    try {
      const twin = await spawnBot({
        dataDir: dir,
        env: {
          SLACK_BOT_TOKEN: both.botToken,
          SLACK_SIGNING_SECRET: both.signingSecret,
          SLACK_CHANNEL: 'C0BOTH',
          SLACK_API_URL: both.apiUrl,
          MATRIX_HOMESERVER_URL: matrix.url,
          MATRIX_ACCESS_TOKEN: matrix.botToken,
          MATRIX_ROOM_ID: matrix.room,
        },
      });
      await twin.waitForLog((l) => l.msg === 'matrix: syncing', 15_000);
      expect((await postAlert(twin.url, crashLoopPayload({ status: 'firing' }))).status).toBe(202);
      const slackCard = await waitFor(() => both.messages.find((m) => m.channel === 'C0BOTH' && !m.thread_ts), 'the Slack card');
      const matrixCard = await waitFor(
        () => matrix.sent.find((s) => s.room === matrix.room && s.type === 'm.room.message' && !s.content['m.relates_to']),
        'the Matrix card',
      );
      expect((await postAlert(twin.url, crashLoopPayload({ status: 'resolved' }))).status).toBe(202);
      await waitFor(() => both.message('C0BOTH', slackCard.ts)?.updates.find((u) => shown(u).includes('Resolved')), 'the Slack card edited to resolved');
      await waitFor(() => (String(matrix.current(matrixCard.eventId)?.['body']).includes('✅ resolved') ? true : undefined), 'the Matrix card edited');
      // One open, delivered to each surface.
      const rows = await ledgerEvents(dir);
      expect(ofType(rows, 'open')).toHaveLength(1);
      expect(new Set(ofType(rows, 'delivered').flatMap((d) => (d['channel'] ? [d['channel']] : [])))).toEqual(new Set(['C0BOTH', matrix.room]));
      expect(await twin.stop()).toEqual({ code: 0, signal: null });
    } finally {
      await both.close();
      await matrix.close();
    }
  });
});
