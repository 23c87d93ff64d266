/**
 * Issue 21 item 5's postmortem outside the thread, through a real `reprise serve` with the Slack
 * stand-in and no forge: `/reprise postmortem <trigger>` answers privately with the draft of the
 * trigger's newest incident (nothing is posted in the thread); a trigger with no incident gets a
 * clear answer. `reprise postmortem <trigger>` prints the same draft, through the running bot's
 * control socket and, with no bot running, directly; an unknown trigger is refused (exit 2).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startSlackFake, type SlackFake } from '../fakes/slack-fake.js';
import { deliver } from '../fakes/slack-requests.js';
import { crashLoopPayload, postAlert } from './helpers/alerts.js';
import { eventsOf, ledgerEvents, ofType } from './helpers/chat-e2e.js';
import { cleanup, makeTmpDir, runCli, spawnBot } from './helpers/spawn-bot.js';

const TRIGGER = 'kubepodcrashlooping|payments|deployment|checkout-api|prod-eu-1';
const CHANNEL = 'C0ONCALL';

let slack: SlackFake | undefined;
afterEach(async () => {
  await cleanup();
  await slack?.close();
  slack = undefined;
});

describe('a postmortem asked for outside the thread (no forge)', () => {
  it(
    '/reprise postmortem <trigger> answers with the draft privately; reprise postmortem prints it, via the bot and offline',
    { timeout: 120_000 },
    async () => {
      const s = (slack = await startSlackFake({ botUserId: 'U0REPRISE' }));
      const dir = makeTmpDir();
      const env = { REPRISE_DATA_DIR: dir };
      const bot = await spawnBot({
        dataDir: dir,
        env: { SLACK_BOT_TOKEN: s.botToken, SLACK_SIGNING_SECRET: s.signingSecret, SLACK_CHANNEL: CHANNEL, SLACK_API_URL: s.apiUrl },
      });
      expect((await postAlert(bot.url, crashLoopPayload({ status: 'firing', pod: 'checkout-api-7d9f8c6b5-aaaa1' }))).status).toBe(202);
      const card = await s.waitFor(() => s.messages.find((m) => m.channel === CHANNEL && !m.thread_ts));
      expect((await eventsOf(dir, 'open', 1))[0]).toMatchObject({ triggerKey: TRIGGER });
      const threadBefore = (): number => s.messages.filter((m) => m.thread_ts === card.ts).length;
      await s.waitFor(() => (threadBefore() > 0 ? true : undefined));
      const inThread = threadBefore();

      const ask = async (text: string): Promise<string> => {
        const before = s.calls('response_url').length + s.calls('chat.postEphemeral').length;
        expect((await deliver(`${bot.url}/slack/events`, s.signed.command({ text, user: 'U0ANN', channel: CHANNEL }))).status).toBe(200);
        const answer = await s.waitFor(() => [...s.calls('response_url'), ...s.calls('chat.postEphemeral')][before]);
        return JSON.stringify(answer.body);
      };
      const draft = await ask(`postmortem ${TRIGGER}`);
      expect(draft).toContain('No forge is configured, so here is the draft');
      expect(draft).toContain('# Postmortem: KubePodCrashLooping on payments/checkout-api');
      expect(await ask('postmortem nosuchalert|x')).toContain('No trigger is named “nosuchalert|x”');
      expect(await ask('postmortem')).toContain('Name the trigger');
      expect(threadBefore()).toBe(inThread);

      const online = await runCli(['postmortem', TRIGGER, '--user', 'alice'], { env });
      expect(online.code, online.stderr).toBe(0);
      expect(online.stdout).toMatch(/^# Postmortem: KubePodCrashLooping on payments\/checkout-api \\\(\d{4}-\d{2}-\d{2}\\\)\n/);
      expect(online.stdout).toContain('## Timeline');
      expect(online.stderr).toMatch(/no forge is configured, so here is the draft of .*; save it as postmortems\/\S+\.md/);
      const unknown = await runCli(['postmortem', 'nosuchalert|x'], { env });
      expect(unknown.code).toBe(2);
      expect(unknown.stderr).toMatch(/No trigger is named “nosuchalert\|x”/);
      expect(await bot.stop()).toEqual({ code: 0, signal: null });

      const offline = await runCli(['postmortem', TRIGGER, '--user', 'bob'], { env });
      expect(offline.code, offline.stderr).toBe(0);
      expect(offline.stdout).toMatch(/^# Postmortem: KubePodCrashLooping/);
      const offlineUnknown = await runCli(['postmortem', 'nosuchalert|x'], { env });
      expect(offlineUnknown.code).toBe(2);
      expect(offlineUnknown.stderr).toMatch(/^reprise postmortem: No trigger is named “nosuchalert\|x”/);
      // Each drafted request is recorded once, by whom and through what.
      expect(ofType(await ledgerEvents(dir), 'postmortem').map((e) => [e['user'], e['via']])).toEqual([
        ['slack:U0ANN', 'slack'],
        ['alice', 'cli'],
        ['bob', 'cli'],
      ]);
    },
  );
});
