/**
 * Issue 29 "Done when": a PagerDuty API stand-in that echoes the request's Authorization header
 * in its 401 leaves the token in no chat message, no ledger event and no log line — the one
 * redactor masks upstream error text on every way out of the process.
 */
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { pagerDutySignature } from '../../src/core/pagerduty.js';
import { startPagerDutyFake, type PagerDutyFake } from '../fakes/pagerduty-fake.js';
import { startSlackFake, type SlackFake } from '../fakes/slack-fake.js';
import { deliver, reactionEvent } from '../fakes/slack-requests.js';
import { request } from './helpers/alerts.js';
import { ledgerEvents, ofType, until } from './helpers/chat-e2e.js';
import { cleanup, makeTmpDir, spawnBot } from './helpers/spawn-bot.js';

const SECRET = 'pd-webhook-secret-0123';
// The bot's token is not the one the stand-in takes: every acknowledge is refused with a 401.
const BOT_PD_TOKEN = 'u+Zx9Qm2Lr7Tk4Wp1Vn8';
const CHANNEL = 'C0ONCALL';
const BOT = 'U0REPRISE';

let slack: SlackFake | undefined;
let pd: PagerDutyFake | undefined;
afterEach(async () => {
  await cleanup();
  await slack?.close();
  await pd?.close();
  slack = pd = undefined;
});

function triggered(id: string): Buffer {
  const body = JSON.parse(readFileSync(new URL('../fixtures/sources/pagerduty-incident-triggered.json', import.meta.url), 'utf8')) as {
    event: { id: string; occurred_at: string };
  };
  body.event.id = id;
  body.event.occurred_at = new Date().toISOString();
  return Buffer.from(JSON.stringify(body));
}

describe('upstream error text echoing a secret', () => {
  it('a PagerDuty 401 quoting `Authorization: Token token=…` leaves the token in no chat message, ledger event or log line', { timeout: 120_000 }, async () => {
    const s = (slack = await startSlackFake({ botUserId: BOT }));
    const rest = (pd = await startPagerDutyFake({ token: 'the-right-token-0000', echo: true }));
    const dir = makeTmpDir();
    const bot = await spawnBot({
      dataDir: dir,
      env: {
        REPRISE_LOG_LEVEL: 'debug',
        REPRISE_PAGERDUTY_SECRET: SECRET,
        REPRISE_PAGERDUTY_TOKEN: BOT_PD_TOKEN,
        REPRISE_PAGERDUTY_FROM: 'oncall-bot@example.com',
        REPRISE_PAGERDUTY_API_URL: rest.apiUrl,
        SLACK_BOT_TOKEN: s.botToken,
        SLACK_SIGNING_SECRET: s.signingSecret,
        SLACK_CHANNEL: CHANNEL,
        SLACK_API_URL: s.apiUrl,
      },
    });
    const body = triggered('EV-SECRET-1');
    const posted = await request(bot.url, {
      path: '/webhook/pagerduty',
      headers: { 'content-type': 'application/json', 'x-pagerduty-signature': pagerDutySignature(SECRET, body) },
      body,
    });
    expect(posted.status).toBe(202);
    const card = await s.waitFor(() => s.messages.find((m) => m.channel === CHANNEL && !m.thread_ts));
    const eyes = reactionEvent({ user: 'U0ANN', reaction: 'eyes', channel: CHANNEL, ts: card.ts, itemUser: BOT });
    expect((await deliver(`${bot.url}/slack/events`, s.signed.event(eyes))).status).toBe(200);

    const shown = (m: { text: unknown; blocks: unknown }): string => `${String(m.text)} ${JSON.stringify(m.blocks)}`;
    const refusal = await s.waitFor(() => s.messages.find((m) => m.thread_ts === card.ts && shown(m).includes('not acknowledged in PagerDuty')));
    // The stand-in did echo it: the token was on the wire back to the bot.
    expect(rest.requests.some((r) => r.status === 401)).toBe(true);
    expect(shown(refusal)).toContain('401');
    expect(shown(refusal)).toContain('[redacted]');
    await until('the failed call recorded', async () => (ofType(await ledgerEvents(dir), 'pagerduty_call').length > 0 ? true : undefined), 30_000);
    expect(await bot.stop()).toEqual({ code: 0, signal: null });

    const everything = [...s.messages.flatMap((m) => [shown(m), ...m.updates.map(shown)]), JSON.stringify(await ledgerEvents(dir)), bot.stderr()].join('\n');
    expect(everything).toContain('PagerDuty answered 401');
    expect(everything).not.toContain(BOT_PD_TOKEN);
    expect(everything).not.toContain(encodeURIComponent(BOT_PD_TOKEN));
    // The webhook's signing secret and the Slack credentials stay out too.
    expect(everything).not.toContain(SECRET);
    expect(everything).not.toContain(s.signingSecret);
    expect(JSON.stringify(await ledgerEvents(dir))).not.toContain(s.botToken);
  });
});
