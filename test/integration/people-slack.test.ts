/**
 * People on Slack through `reprise serve` (issue 28 item 2), with `users.info` rate limited the
 * whole time: the card and its notices name the person as a mention at once (no lookup is
 * waited for), the bot keeps running, and the transcript — which cannot mention — names them
 * by id. A plain `ack` / `fixed: …` reply in the bot's thread counts; chatter does not.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSlackFake, type PostedMessage, type SlackFake } from '../fakes/slack-fake.js';
import { deliver, messageEvent, reactionEvent } from '../fakes/slack-requests.js';
import { crashLoopPayload, postAlert } from './helpers/alerts.js';
import { eventsOf, writeConfig } from './helpers/chat-e2e.js';
import { cleanup, makeTmpDir, spawnBot, type BotProcess } from './helpers/spawn-bot.js';
import { waitFor } from '../helpers/wait-for.js';

const BOT = 'U0REPRISE';
const ANN = 'U0ANN';
const BOB = 'U0BOB';
const PAYMENTS = 'C0PAYMENTS';

let fake: SlackFake;
let dataDir: string;
let bot: BotProcess;

beforeAll(async () => {
  fake = await startSlackFake({ botUserId: BOT, users: { [ANN]: { displayName: 'Ann Example' } } });
  fake.failNext({ method: 'users.info', status: 429, retryAfterSec: 120, times: Infinity });
  dataDir = makeTmpDir();
  bot = await spawnBot({
    dataDir,
    args: ['--config', writeConfig(dataDir, `routing:\n  rules:\n    - match: { namespace: payments }\n      slack: ${PAYMENTS}\n`)],
    env: { SLACK_BOT_TOKEN: fake.botToken, SLACK_SIGNING_SECRET: fake.signingSecret, SLACK_CHANNEL: 'C0DEFAULT', SLACK_API_URL: fake.apiUrl },
  });
}, 60_000);

afterAll(async () => {
  await cleanup();
  await fake?.close();
});

const replies = (root: PostedMessage): PostedMessage[] => fake.messages.filter((m) => m.thread_ts === root.ts);

describe('people on Slack while users.info is rate limited', () => {
  it(
    'names the acker as a mention at once, counts a plain ack and fixed: in the thread, ignores chatter, and transcribes Slack too',
    { timeout: 60_000 },
    async () => {
      expect((await postAlert(bot.url, crashLoopPayload({ status: 'firing' }))).status).toBe(202);
      const card = await waitFor(() => fake.messages.find((m) => m.channel === PAYMENTS && !m.thread_ts), 'the card');
      const events = `${bot.url}/slack/events`;

      expect(
        (await deliver(events, fake.signed.event(reactionEvent({ user: ANN, reaction: 'eyes', channel: PAYMENTS, ts: card.ts, itemUser: BOT })))).status,
      ).toBe(200);
      const acked = await waitFor(
        () => fake.message(PAYMENTS, card.ts)?.updates.find((u) => JSON.stringify(u.blocks).includes('is on it')),
        'the ack on the card',
      );
      expect(JSON.stringify(acked.blocks)).toContain(`{"type":"user","user_id":"${ANN}"}`);
      // The rate limit was met (a lookup was tried) and changed nothing a person sees.
      await waitFor(() => (fake.calls('users.info').length > 0 ? true : undefined), 'a users.info lookup');

      // A plain reply in the bot's thread: `ack` is Bob on it; chatter is nothing; `fixed: …` is a fix.
      const ts = (n: number): string => `${Math.floor(Date.now() / 1000)}.00${n}00`;
      const reply = (user: string, text: string, n: number) =>
        deliver(events, fake.signed.event(messageEvent({ user, text, channel: PAYMENTS, ts: ts(n), threadTs: card.ts })));
      expect((await reply(BOB, 'ack', 1)).status).toBe(200);
      expect((await reply(BOB, 'ack the rollback first?', 2)).status).toBe(200);
      expect((await reply(BOB, 'fixed: rolled back `deploy/checkout-api` to 4f2a1c', 3)).status).toBe(200);
      const acks = await eventsOf(dataDir, 'ack', 2);
      expect(acks.map((a) => a['user'])).toEqual([`slack:${ANN}`, `slack:${BOB}`]);
      const [fix] = await eventsOf(dataDir, 'fix', 1);
      expect(fix).toMatchObject({ user: `slack:${BOB}`, via: 'slack' });
      const both = await waitFor(
        () => fake.message(PAYMENTS, card.ts)?.updates.find((u) => JSON.stringify(u.blocks).includes(`"user_id":"${BOB}"`)),
        'both on the card',
      );
      expect(JSON.stringify(both.blocks)).toMatch(new RegExp(`"user_id":"${ANN}"\\}.*"text":" and "\\}.*"user_id":"${BOB}"\\}.*are on it`));
      // The thread's reply goes out in its own lane, after the card's edit: waited for, not assumed.
      const said = await waitFor(() => replies(card).find((m) => String(m.text).includes('is on it') && String(m.text).includes(`<@${BOB}>`)), 'the ack reply');
      expect(String(said.text)).toBe(`👀 <@${BOB}> is on it`);
      expect(replies(card).some((m) => String(m.text).includes('ack the rollback'))).toBe(false);

      // REPRISE_TRANSCRIPT records what Slack took, people by id (their name is not known: 429).
      const lines = await bot.waitForTranscript((ls) => ls.some((l) => l.surface === 'slack' && l.text.includes(`${BOB} is on it`)));
      expect(lines.filter((l) => l.surface === 'slack').map((l) => l.kind)).toEqual(expect.arrayContaining(['rca', 'detail', 'update', 'status']));
      expect(lines.every((l) => l.surface === 'slack')).toBe(true);
      expect(lines.find((l) => l.kind === 'rca')?.threadId).toBe(card.ts);
      // Still serving: a rate-limited directory never stops the bot.
      expect((await fetch(`${bot.url}/healthz`)).status).toBe(200);
    },
  );
});
