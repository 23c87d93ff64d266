/**
 * Exactly once through a crash (issue 20 "Done when"): Slack acts on each call on arrival and
 * answers 0.3 s, 1.5 s or 2 s later; `reprise serve` is killed (-9) while deliveries are in
 * flight and started again on the same store (and answered at once: only the dead process's
 * calls were slow). Every acknowledged alert is exactly one thread, none lost: the restarted
 * process looks up what the dead one may have sent (by the outbox id each message carries) and
 * adopts it instead of posting it again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSlackFake, type PostedMessage, type SlackFake } from '../fakes/slack-fake.js';
import { ownGroupAlert, postAlert } from './helpers/alerts.js';
import { writeConfig } from './helpers/chat-e2e.js';
import { cleanup, makeTmpDir, spawnBot } from './helpers/spawn-bot.js';
import { waitFor } from '../helpers/wait-for.js';

const CHANNEL = 'C0INCIDENTS';
const ALERTS = 8;
let fake: SlackFake;

beforeAll(async () => {
  fake = await startSlackFake();
});
afterAll(async () => {
  await cleanup();
  await fake?.close();
});

const outboxIdOf = (m: PostedMessage): string | undefined => (m.metadata as { event_payload?: { outbox_id?: string } } | undefined)?.event_payload?.outbox_id;

describe('exactly one thread per alert through kill -9', () => {
  for (const latencyMs of [300, 1500, 2000]) {
    it(`with Slack answering ${latencyMs} ms after it acted`, { timeout: 120_000 }, async () => {
      fake.messages.length = 0;
      fake.setBehaviour({ answerLatencyMs: latencyMs, failures: [] });
      const dataDir = makeTmpDir();
      const opts = {
        dataDir,
        args: ['--config', writeConfig(dataDir, 'transport:\n  slack:\n    allow_users: [U0ANN]\n')],
        env: { SLACK_BOT_TOKEN: fake.botToken, SLACK_SIGNING_SECRET: fake.signingSecret, SLACK_CHANNEL: CHANNEL, SLACK_API_URL: fake.apiUrl },
      };
      const bot = await spawnBot({ ...opts, process: true }); // killed below
      for (let n = 0; n < ALERTS; n++) {
        const res = await postAlert(bot.url, ownGroupAlert(n));
        expect(res.status, res.text).toBe(202);
      }
      // Deliveries are in flight: Slack has acted on some, the bot has heard of none or few.
      await waitFor(() => (fake.messages.length > 0 ? true : undefined), { what: 'a first call reached Slack', timeoutMs: 20_000 });
      await bot.kill();
      // The crash is over: the restarted process is under no fault, so Slack answers it at once
      // (the dead process's calls were acted on at arrival, answered or not).
      fake.setBehaviour({ answerLatencyMs: 0 });

      const again = await spawnBot({ ...opts, transcript: `${dataDir}/t2.jsonl` });
      const cards = (): PostedMessage[] => fake.messages.filter((m) => m.thread_ts === undefined && m.channel === CHANNEL);
      await waitFor(() => (cards().length >= ALERTS ? true : undefined), { what: `${ALERTS} cards`, timeoutMs: 60_000 });
      // Everything pending has gone out: each card has its analysis.
      await waitFor(() => (cards().every((c) => fake.messages.some((m) => m.thread_ts === c.ts)) ? true : undefined), {
        what: 'every analysis',
        timeoutMs: 60_000,
      });
      // Nothing left to send or retry: a duplicate would have reached Slack before its item was settled.
      await again.settled(60_000);
      await again.stop();

      const shown = cards().map((c) => String(c.text));
      for (let n = 0; n < ALERTS; n++)
        expect(
          shown.filter((t) => t.includes(`crash-${n}`)),
          `alert crash-${n}`,
        ).toHaveLength(1);
      expect(cards()).toHaveLength(ALERTS);
      const ids = fake.messages.map(outboxIdOf);
      expect(ids.every((id) => id !== undefined)).toBe(true);
      expect(new Set(ids).size, 'no outbox item shown twice (cards and replies)').toBe(ids.length);
    });
  }
});
