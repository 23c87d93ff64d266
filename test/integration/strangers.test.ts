/**
 * Issue 29 "Done when", through one real `reprise serve` and the Slack stand-in: a slash command
 * from a DM is refused with one line saying where to ask; `status` asked by someone outside
 * `transport.slack.allow_users` shows no incident content, and `silence` from them silences
 * nothing; the admitted on-call in the incident channel is answered with the incident.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startSlackFake, type SlackFake } from '../fakes/slack-fake.js';
import { deliver } from '../fakes/slack-requests.js';
import { crashLoopPayload, postAlert } from './helpers/alerts.js';
import { eventsOf, ledgerEvents, ofType, writeConfig } from './helpers/chat-e2e.js';
import { cleanup, makeTmpDir, spawnBot } from './helpers/spawn-bot.js';

const TRIGGER = 'kubepodcrashlooping|payments|deployment|checkout-api|prod-eu-1';
const CHANNEL = 'C0ONCALL';

let slack: SlackFake | undefined;
afterEach(async () => {
  await cleanup();
  await slack?.close();
  slack = undefined;
});

describe('commands from strangers and from anywhere', () => {
  it('a DM is refused with where to ask; status and silence from outside the allowlist show and change nothing', { timeout: 120_000 }, async () => {
    const s = (slack = await startSlackFake({ botUserId: 'U0REPRISE' }));
    const dir = makeTmpDir();
    const config = writeConfig(dir, 'transport:\n  slack:\n    allow_users: [U0ANN]\n');
    const bot = await spawnBot({
      dataDir: dir,
      args: ['--config', config],
      env: { SLACK_BOT_TOKEN: s.botToken, SLACK_SIGNING_SECRET: s.signingSecret, SLACK_CHANNEL: CHANNEL, SLACK_API_URL: s.apiUrl },
    });
    expect((await postAlert(bot.url, crashLoopPayload({ status: 'firing', pod: 'checkout-api-7d9f8c6b5-aaaa1' }))).status).toBe(202);
    await s.waitFor(() => s.messages.find((m) => m.channel === CHANNEL && !m.thread_ts));
    expect((await eventsOf(dir, 'open', 1))[0]).toMatchObject({ triggerKey: TRIGGER });

    const ask = async (text: string, user: string, channel: string): Promise<string> => {
      const before = s.calls('response_url').length;
      expect((await deliver(`${bot.url}/slack/events`, s.signed.command({ text, user, channel }))).status).toBe(200);
      return JSON.stringify((await s.waitFor(() => s.calls('response_url')[before])).body);
    };
    for (const text of ['status', `status ${TRIGGER}`, `silence ${TRIGGER} 4h`]) {
      const dm = await ask(text, 'U0ANN', 'D0ANNDM');
      expect(dm).toContain('Reprise takes no commands in direct messages: ask in');
      expect(dm).toContain(CHANNEL);
      expect(dm).not.toContain('checkout-api');
      const stranger = await ask(text, 'U0EVE', CHANNEL);
      expect(stranger).toContain('allowlist');
      expect(stranger).not.toContain('checkout-api');
      expect(stranger).not.toContain('payments');
    }
    expect(ofType(await ledgerEvents(dir), 'silence')).toEqual([]);
    const admitted = await ask('status', 'U0ANN', CHANNEL);
    expect(admitted).toContain('checkout-api');
    expect(await bot.stop()).toEqual({ code: 0, signal: null });
    const logs = bot.logs().filter((l) => l.msg === 'command refused');
    expect(logs.length).toBe(6);
  });
});
