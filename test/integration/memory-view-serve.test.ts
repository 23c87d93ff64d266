/**
 * `/ui` as a lead reads it (issue 28 item 4), through a real `reprise serve` with Slack in HTTP
 * mode against the Web API stand-in and the bundled starter catalog: an alert that started
 * 3 h 20 min before it reached the bot is acked with 👀 and resolved; its incident page links
 * the Slack thread with the permalink `chat.getPermalink` gave (asked once, then cached), says
 * "on it … after it fired" and "resolved after 3 h 20 min" from the alert's own start, and the
 * overview shows the resolve time in words, never as seconds. The bundled entries — written
 * in 2025 — are not stale on the day the bot first serves them, and still are not after a
 * restart; with a `stale_after` of seconds they go stale that long after first being served. A
 * Matrix thread links through `matrix.to`; a Slack message the Web API does not know is named,
 * not linked, and not asked about again at once.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createSlackTransport } from '../../src/adapters/slack/slack-transport.js';
import { startMatrixFake } from '../fakes/matrix-homeserver.js';
import { startSlackFake, type SlackFake } from '../fakes/slack-fake.js';
import { recordingLogger } from '../fakes/slack-recording-logger.js';
import { deliver, reactionEvent } from '../fakes/slack-requests.js';
import { waitFor } from '../helpers/wait-for.js';
import { crashLoopPayload, postAlert } from './helpers/alerts.js';
import { eventsOf } from './helpers/chat-e2e.js';
import { cleanup, makeTmpDir, spawnBot, type BotProcess } from './helpers/spawn-bot.js';

const CHANNEL = 'C0ONCALL';
const START_AGO_MS = (3 * 60 + 20) * 60_000;

let slack: SlackFake | undefined;
afterEach(async () => {
  await cleanup();
  await slack?.close();
  slack = undefined;
});

const page = async (bot: BotProcess, path: string): Promise<string> => {
  const res = await fetch(bot.url + path);
  const text = await res.text();
  expect(res.status, `${path}: ${text.slice(0, 300)}`).toBe(200);
  return text;
};

/** What a person reads: the page's text with the markup dropped (the `value`s a test reads are not shown). */
const shown = (html: string): string =>
  html
    .replace(/<(title|style)[^>]*>[\s\S]*?<\/\1>/g, ' ')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ');

function slackEnv(s: SlackFake): Record<string, string> {
  return { SLACK_BOT_TOKEN: s.botToken, SLACK_SIGNING_SECRET: s.signingSecret, SLACK_CHANNEL: CHANNEL, SLACK_API_URL: s.apiUrl };
}

describe('/ui through a real reprise serve, read as a lead reads it', () => {
  it(
    'links the Slack thread by its permalink (cached), says durations in words from the alert start, and calls no bundled entry stale on day one',
    { timeout: 120_000 },
    async () => {
      const s = (slack = await startSlackFake({ botUserId: 'U0REPRISE' }));
      const dir = makeTmpDir();
      const bot = await spawnBot({ dataDir: dir, env: slackEnv(s) });
      const startsAt = new Date(Date.now() - START_AGO_MS).toISOString();
      const firing = crashLoopPayload({ status: 'firing', pod: 'checkout-api-7d9f8c6b5-aaaa1', startsAt });
      expect((await postAlert(bot.url, firing)).status).toBe(202);
      const card = await s.waitFor(() => s.messages.find((m) => m.channel === CHANNEL && !m.thread_ts));
      const [open] = await eventsOf(dir, 'open', 1);
      const openId = String(open!['id']);

      // 👀 on the card, then the resolve (ending now).
      const ack = s.signed.event(reactionEvent({ user: 'U0ANN', reaction: 'eyes', channel: CHANNEL, ts: card.ts, itemUser: 'U0REPRISE' }));
      expect((await deliver(`${bot.url}/slack/events`, ack)).status).toBe(200);
      await eventsOf(dir, 'ack', 1);
      const resolved = crashLoopPayload({ status: 'resolved', pod: 'checkout-api-7d9f8c6b5-aaaa1', startsAt });
      (resolved['alerts'] as Array<Record<string, unknown>>)[0]!['endsAt'] = new Date().toISOString();
      expect((await postAlert(bot.url, resolved)).status).toBe(202);
      await eventsOf(dir, 'resolve', 1);

      const incident = await page(bot, `/ui/incidents/${encodeURIComponent(openId)}`);
      const permalink = `https://reprise-test.slack.com/archives/${CHANNEL}/p${card.ts.replace('.', '')}`;
      expect(incident).toContain(`href="${permalink}"`);
      const text = shown(incident);
      expect(text).toMatch(/on it 3 h 2\d min after it fired/);
      expect(text).toMatch(/resolved after 3 h 20 min/);
      expect(text).not.toMatch(/\b1[12]\d{3}\b/); // ~12000 seconds, shown as seconds nowhere
      // A link does not change: the second view asks Slack nothing.
      await page(bot, `/ui/incidents/${encodeURIComponent(openId)}`);
      expect(s.calls('chat.getPermalink')).toHaveLength(1);
      expect(s.calls('chat.getPermalink')[0]!.body).toMatchObject({ channel: CHANNEL, message_ts: card.ts });

      // The overview: the resolve time in words, its seconds only in the <data> value.
      const overview = await page(bot, '/ui');
      expect(overview).toMatch(/<data data-figure="resolve-median-s" value="1[12]\d{3}(\.\d+)?">3 h 20 min<\/data>/);
      expect(shown(overview)).not.toMatch(/\b1[12]\d{3}\b/);

      // The bundled catalog (entries dated 2025) is not stale on the day it is first served.
      const knowledge = await page(bot, '/ui/knowledge?flag=stale');
      expect(knowledge).toContain('data-figure="entries-shown">0<');
      expect(await bot.stop()).toEqual({ code: 0, signal: null });
      // Nor after a restart: when it was first served is kept in the store.
      const again = await spawnBot({ dataDir: dir, env: slackEnv(s) });
      expect(await page(again, '/ui/knowledge?flag=stale')).toContain('data-figure="entries-shown">0<');
      expect(await again.stop()).toEqual({ code: 0, signal: null });
    },
  );

  it('with stale_after of seconds, bundled entries go stale that long after the bot first served them, not before', { timeout: 60_000 }, async () => {
    const dir = makeTmpDir();
    const config = join(dir, 'reprise.yaml');
    writeFileSync(config, 'recall:\n  stale_after: 4s\n');
    const bot = await spawnBot({ dataDir: dir, args: ['--config', config] });
    const fresh = await page(bot, '/ui/knowledge?flag=stale');
    expect(fresh).toContain('data-figure="entries-shown">0<');
    // Then waited for (not slept on): every entry shown is flagged once 4 s have passed.
    const totalOf = (html: string): number => Number(/data-figure="entries-total">(\d+)</.exec(html)?.[1]);
    const later = await waitFor(
      async () => {
        const html = await page(bot, '/ui/knowledge');
        return (html.match(/data-flag="stale"/g) ?? []).length === Math.min(totalOf(html), 50) ? html : undefined;
      },
      { what: 'every bundled entry shown flagged stale (stale_after: 4s)', intervalMs: 250 },
    );
    const total = totalOf(later);
    expect(total).toBeGreaterThan(10);
    expect(later.match(/data-flag="stale"/g) ?? []).toHaveLength(Math.min(total, 50));
    expect(await bot.stop()).toEqual({ code: 0, signal: null });
  });

  it('a Slack message the Web API does not know gets no link, and a failure is not asked again at once', { timeout: 30_000 }, async () => {
    const s = (slack = await startSlackFake({ botUserId: 'U0REPRISE' }));
    const { transport } = createSlackTransport({
      botToken: s.botToken,
      signingSecret: s.signingSecret,
      apiUrl: s.apiUrl,
      defaultChannel: CHANNEL,
      logger: recordingLogger([]),
      retries: 0,
    });
    expect(await transport.permalink({ channel: CHANNEL, id: '1700000000.000100' })).toBeUndefined();
    expect(await transport.permalink({ channel: CHANNEL, id: '1700000000.000100' })).toBeUndefined();
    expect(s.calls('chat.getPermalink')).toHaveLength(1);
    s.failNext({ method: 'chat.getPermalink', status: 500 });
    expect(await transport.permalink({ channel: CHANNEL, id: '1700000000.000200' })).toBeUndefined();
    await transport.close();
  });

  it('links a Matrix thread through matrix.to', { timeout: 60_000 }, async () => {
    const fake = await startMatrixFake({ rooms: [{}] });
    try {
      const dir = makeTmpDir();
      const bot = await spawnBot({ dataDir: dir, env: { MATRIX_HOMESERVER_URL: fake.url, MATRIX_ACCESS_TOKEN: fake.botToken, MATRIX_ROOM_ID: fake.room } });
      await bot.waitForLog((l) => l.msg === 'matrix: syncing', 15_000);
      expect((await postAlert(bot.url, crashLoopPayload({ status: 'firing', startsAt: new Date(Date.now() - 90_000).toISOString() }))).status).toBe(202);
      const card = await waitFor(
        () => fake.sent.find((x) => !x.replay && x.room === fake.room && x.type === 'm.room.message' && x.content['m.relates_to'] === undefined),
        'the card',
      );
      const [open] = await eventsOf(dir, 'open', 1);
      const html = await page(bot, `/ui/incidents/${encodeURIComponent(String(open!['id']))}`);
      const link = `https://matrix.to/#/${encodeURIComponent(fake.room).replace(/!/g, '%21')}/${encodeURIComponent(card.eventId)}?via=${encodeURIComponent(fake.room.slice(fake.room.indexOf(':') + 1))}`;
      expect(html).toContain(`href="${link.replace(/&/g, '&amp;')}"`);
      expect(await bot.stop()).toEqual({ code: 0, signal: null });
    } finally {
      await fake.close();
    }
  });
});
