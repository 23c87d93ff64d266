/**
 * Mattermost end to end (issue 32 item 1 "Done when"): `reprise serve` with only `MATTERMOST_*`
 * set, against the Mattermost stand-in on 127.0.0.1 (REST v4 + the WebSocket protocol). An
 * Alertmanager webhook posts a card and its thread, the resolve edits the card in place; 👍 👎 🔕 👀
 * and a `@reprise fixed:` reply are recorded once each — also when they happen while the
 * WebSocket is down (caught up after the reconnect) and when a catch-up reads them again — and
 * an alert's `@channel` never reaches the channel as a mention.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMattermostFake, type FakePost, type MattermostFake } from '../fakes/mattermost-server.js';
import { CHECKOUT_ENTRY, crashLoopPayload, postAlert, request } from './helpers/alerts.js';
import { eventsOf, ledgerEvents, ofType, searchPayload } from './helpers/chat-e2e.js';
import { cleanup, makeTmpDir, spawnBot, type BotProcess } from './helpers/spawn-bot.js';
import { waitFor } from '../helpers/wait-for.js';

const HOSTILE = {
  summary: '@channel @here @all <!channel> the indexer is down',
  description: [
    '# not a heading',
    '| a | b |',
    '|---|---|',
    '```',
    'not a fence',
    '![pixel](https://evil.example/p.png) [click](https://evil.example/) https://evil.example/raw www.evil.example',
    '@alice **bold** <script>alert(1)</script>',
  ].join('\n'),
};

let fake: MattermostFake;
let dataDir: string;
let bot: BotProcess;

beforeAll(async () => {
  fake = await startMattermostFake();
  dataDir = makeTmpDir();
  bot = await spawnBot({
    dataDir,
    env: { MATTERMOST_URL: fake.url, MATTERMOST_TOKEN: fake.botToken, MATTERMOST_CHANNEL: `${fake.team}/incidents` },
  });
  await bot.waitForLog((l) => l.msg === 'mattermost: WebSocket connected', 15_000);
}, 60_000);

afterAll(async () => {
  await cleanup();
  await fake?.close();
});

const countOf = async (type: string): Promise<number> => ofType(await ledgerEvents(dataDir), type).length;
/**
 * Every mention the server would notify for: `@word` in the message's text after markdown (a
 * backslash escape is text too), code spans and blocks skipped — the server's own reading.
 */
const mentions = (text: string): string[] =>
  [
    ...text
      .replace(/^(`{3,})\n[\s\S]*?\n\1$/gm, '')
      .replace(/(?<!\\)(`+) [\s\S]*? \1/g, '')
      .replace(/\\(?=[!-/:-@[-`{-~])/g, '')
      .matchAll(/\B@([a-z0-9][a-z0-9._-]*)/gi),
  ].map((m) => m[1]!.toLowerCase());

let card: FakePost;
let other: FakePost;

describe('Mattermost, end to end through reprise serve', () => {
  it('posts a card for an alert as a root post with the analysis in its thread, its outbox id in props', { timeout: 30_000 }, async () => {
    expect((await postAlert(bot.url, crashLoopPayload({ status: 'firing' }))).status).toBe(202);
    card = await waitFor(() => fake.roots(fake.channels.incidents)[0], 'the card');
    const detail = await waitFor(() => fake.thread(card.id)[0], 'the analysis in the thread');
    expect(card.message).toContain('KubePodCrashLooping');
    expect(card.message).toContain('Instant recall');
    expect(detail.root_id).toBe(card.id);
    // Escaped markdown: the entry's name with its backslashes taken out.
    expect(detail.message.replace(/\\/g, '')).toContain(CHECKOUT_ENTRY);
    // Zero ingress without a public URL: no buttons on the card, no route on the bot.
    expect(card.props['attachments']).toBeUndefined();
    expect((await request(bot.url, { path: '/mattermost/actions', headers: { 'content-type': 'application/json' }, body: '{}' })).status).toBe(404);
    expect((await request(bot.url, { path: '/mattermost/command', body: 'token=x' })).status).toBe(404);
    for (const p of [card, detail]) {
      expect(typeof p.props['reprise_outbox_id']).toBe('string');
      expect(p.props['disable_group_highlight']).toBe(true);
    }
  });

  it('never shows an alert’s @channel, links, images or markdown as markup', { timeout: 30_000 }, async () => {
    expect((await postAlert(bot.url, searchPayload({ status: 'firing', annotations: HOSTILE }))).status).toBe(202);
    other = await waitFor(() => fake.roots(fake.channels.incidents).find((p) => p.id !== card.id), 'the second card');
    const detail = await waitFor(() => fake.thread(other.id)[0], 'its analysis');
    for (const p of [other, detail]) {
      expect(mentions(p.message)).toEqual([]);
      // Unescaped markup only: `\<script\>` is text on screen.
      expect(p.message).not.toMatch(/(?<!\\)\]\(https:\/\/evil|https:\/\/evil|www\.evil|(?<!\\)<script|^#|^\|/m);
    }
    // The card makes no code block of its own: a fence there would be the alert's.
    expect(other.message).not.toMatch(/^```/m);
    // Shown as text: the words are there, inert.
    expect(other.message).toContain('＠channel ＠here ＠all');
    expect(other.message).toContain('\\# not a heading');
  });

  it('records 👍 👎 👀 on the card and a @reprise fixed: reply once each, and edits the card on resolve', { timeout: 40_000 }, async () => {
    const { alice, bob } = fake.users;
    fake.react(alice.id, card.id, '+1');
    fake.react(bob.id, card.id, '-1');
    fake.react(bob.id, card.id, 'eyes');
    // Someone else's post and the bot's own reactions count for nothing.
    const chatter = fake.say(fake.channels.incidents, bob.id, 'is anyone looking?');
    fake.react(alice.id, chatter.id, '-1');
    fake.react(fake.bot.id, card.id, '-1');
    fake.say(fake.channels.incidents, alice.id, '@reprise fixed: raised the memory limit to 1.5Gi', card.id);
    await eventsOf(dataDir, 'feedback', 2);
    await eventsOf(dataDir, 'ack', 1);
    await eventsOf(dataDir, 'fix', 1);
    const votes = ofType(await ledgerEvents(dataDir), 'feedback');
    expect(votes.map((v) => `${String(v['vote'])}:${String(v['user'])}`).sort()).toEqual([`down:mattermost:${bob.id}`, `up:mattermost:${alice.id}`]);

    expect((await postAlert(bot.url, crashLoopPayload({ status: 'resolved' }))).status).toBe(202);
    await waitFor(() => (fake.post(card.id)!.message.includes('✅ resolved') ? true : undefined), 'the card edited to resolved');
    expect(fake.post(card.id)!.edit_at).toBeGreaterThan(0);
    expect(fake.roots(fake.channels.incidents)).toHaveLength(2);
  });

  it('catches up what happened while the WebSocket was down, once, and again after a second drop changes nothing', { timeout: 60_000 }, async () => {
    const { alice, bob } = fake.users;
    const connections = fake.authenticated;
    const before = { feedback: await countOf('feedback'), silence: await countOf('silence'), ack: await countOf('ack'), fix: await countOf('fix') };
    fake.setBehaviour({ refuseSockets: true });
    fake.dropSockets();
    await waitFor(() => fake.open === 0 || undefined, 'the socket closed');
    // While the bot cannot hear: a vote taken back, a silence, an ack and a fix on the second card.
    fake.unreact(alice.id, card.id, '+1');
    fake.react(alice.id, other.id, 'no_bell');
    fake.react(bob.id, other.id, 'eyes');
    fake.say(fake.channels.incidents, bob.id, '@reprise fixed: restarted the indexer', other.id);
    fake.setBehaviour({ refuseSockets: false });
    await waitFor(() => fake.authenticated > connections || undefined, 'the bot reconnected', 30_000);
    await eventsOf(dataDir, 'silence', before.silence + 1);
    await eventsOf(dataDir, 'fix', before.fix + 1);
    await eventsOf(dataDir, 'feedback', before.feedback + 1);
    await eventsOf(dataDir, 'ack', before.ack + 1);
    const cleared = ofType(await ledgerEvents(dataDir), 'feedback').at(-1)!;
    expect(cleared).toMatchObject({ vote: 'clear', user: `mattermost:${alice.id}` });
    await bot.settled();

    // A second drop and catch-up reads the same posts and reactions again: nothing new is recorded.
    const again = fake.authenticated;
    fake.dropSockets();
    await waitFor(() => fake.authenticated > again || undefined, 'the bot reconnected again', 30_000);
    // A fresh event after the reconnect proves the catch-up before it was handled.
    fake.react(bob.id, other.id, '+1');
    await eventsOf(dataDir, 'feedback', before.feedback + 2);
    await bot.settled();
    expect(await countOf('silence')).toBe(before.silence + 1);
    expect(await countOf('fix')).toBe(before.fix + 1);
    expect(await countOf('ack')).toBe(before.ack + 1);
    expect(await countOf('feedback')).toBe(before.feedback + 2);
  });

  it('posts a card once when the server stored it but the answer was lost, and waits out a 429', { timeout: 40_000 }, async () => {
    const before = fake.roots(fake.channels.incidents).length;
    fake.setBehaviour({ failPosts: { times: 1, status: 502, afterStore: true } });
    expect(
      (await postAlert(bot.url, crashLoopPayload({ status: 'firing', pod: 'checkout-api-7d9f8c6b5-lost1', startsAt: '2026-11-29T05:00:00Z' }))).status,
    ).toBe(202);
    const lost = await waitFor(() => fake.roots(fake.channels.incidents)[before], 'the card the server stored');
    // The analysis goes under the card the lookup found: nothing is posted twice.
    await waitFor(() => fake.thread(lost.id)[0], 'its analysis');
    fake.setBehaviour({ rateLimit: { times: 1, resetSeconds: 1 } });
    expect(
      (await postAlert(bot.url, crashLoopPayload({ status: 'resolved', pod: 'checkout-api-7d9f8c6b5-lost1', startsAt: '2026-11-29T05:00:00Z' }))).status,
    ).toBe(202);
    await waitFor(() => (fake.post(lost.id)!.message.includes('✅ resolved') ? true : undefined), 'the card edited after the 429');
    await bot.settled();
    expect(fake.roots(fake.channels.incidents)).toHaveLength(before + 1);
    expect(fake.requests.some((r) => r.status === 429)).toBe(true);
    const keys = fake.posts.filter((p) => p.user_id === fake.bot.id).map((p) => String(p.props['reprise_outbox_id']));
    expect(new Set(keys).size).toBe(keys.length);
  });
});
