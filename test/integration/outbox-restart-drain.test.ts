/**
 * Restart mid-drain with a small outbox window (issue 30 item 5): a backlog of groups recorded
 * while Slack refused every post is being drained a page at a time when `reprise serve` is
 * killed (-9) half-way; started again on the same store, it drains the rest. The Slack stand-in
 * counts what it was sent: every card and every reply exactly once, each card before its reply,
 * none lost.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSlackFake, type PostedMessage, type SlackFake } from '../fakes/slack-fake.js';
import { waitFor } from '../helpers/wait-for.js';
import { ownGroupAlert, postAlert } from './helpers/alerts.js';
import { writeConfig } from './helpers/chat-e2e.js';
import { cleanup, makeTmpDir, spawnBot } from './helpers/spawn-bot.js';

const CHANNEL = 'C0DRAIN';
const GROUPS = 24;
let fake: SlackFake;

beforeAll(async () => {
  fake = await startSlackFake();
});
afterAll(async () => {
  await cleanup();
  await fake?.close();
});

const outboxIdOf = (m: PostedMessage): string | undefined => (m.metadata as { event_payload?: { outbox_id?: string } } | undefined)?.event_payload?.outbox_id;
const cards = (): PostedMessage[] => fake.messages.filter((m) => m.thread_ts === undefined && m.channel === CHANNEL);

describe('a restart half-way through draining a backlog, window of 4', () => {
  it('sends every card and reply exactly once, each card before its reply', { timeout: 180_000 }, async () => {
    const dataDir = makeTmpDir();
    const opts = {
      dataDir,
      args: ['--config', writeConfig(dataDir, 'outbox:\n  window: 4\n  concurrency: 2\ntransport:\n  slack:\n    allow_users: [U0ANN]\n')],
      env: { SLACK_BOT_TOKEN: fake.botToken, SLACK_SIGNING_SECRET: fake.signingSecret, SLACK_CHANNEL: CHANNEL, SLACK_API_URL: fake.apiUrl },
    };
    // The backlog: every group recorded while Slack refuses posts.
    fake.setBehaviour({ failures: [{ method: 'chat.postMessage', status: 503, times: Number.POSITIVE_INFINITY }] });
    const first = await spawnBot({ ...opts, process: true });
    for (let n = 0; n < GROUPS; n++) {
      const res = await postAlert(first.url, ownGroupAlert(n, 'drain'));
      expect(res.status, res.text).toBe(202);
    }
    // Slack is back, slowly: the drain is under way, a page at a time, when the bot dies.
    fake.setBehaviour({ failures: [], latencyMs: 60 });
    await waitFor(() => (cards().length >= GROUPS / 2 ? true : undefined), { what: 'half of the cards', timeoutMs: 90_000 });
    await first.kill();
    const atCrash = cards().length;
    expect(atCrash).toBeLessThan(GROUPS);

    fake.setBehaviour({ latencyMs: 0 });
    const again = await spawnBot({ ...opts, transcript: `${dataDir}/t2.jsonl` });
    await waitFor(() => (cards().length >= GROUPS ? true : undefined), { what: `${GROUPS} cards`, timeoutMs: 90_000 });
    await waitFor(() => (cards().every((c) => fake.messages.some((m) => m.thread_ts === c.ts)) ? true : undefined), {
      what: 'every reply',
      timeoutMs: 90_000,
    });
    await again.settled(60_000);
    await again.stop();

    for (let n = 0; n < GROUPS; n++) {
      expect(
        cards().filter((c) => new RegExp(`drain-${n}(?!\\d)`).test(String(c.text))),
        `group drain-${n}`,
      ).toHaveLength(1);
    }
    expect(cards()).toHaveLength(GROUPS);
    const ids = fake.messages.map(outboxIdOf);
    expect(ids.every((id) => id !== undefined)).toBe(true);
    expect(new Set(ids).size, 'no outbox item shown twice (cards and replies)').toBe(ids.length);
    // Order per lane: each reply is in the thread of a card posted before it.
    for (const m of fake.messages.filter((x) => x.thread_ts !== undefined))
      expect(fake.messages.findIndex((c) => c.ts === m.thread_ts)).toBeGreaterThanOrEqual(0);
  });
});
