/**
 * Who is on call, end to end through `reprise serve` (issue 32 "Done when"): with a rotation in
 * the config, a critical alert's card mentions the person on call on Slack and on Matrix (their
 * stand-ins on loopback; the Slack id found by email with users.lookupByEmail, the Matrix id from
 * the config map), a warning's card names nobody; with the PagerDuty stand-in, the person
 * `GET /oncalls` returns; a failing or hanging provider gives "on call: unknown (…)" and the card
 * is posted anyway; nobody acking means one reminder in the thread, mentioning them.
 */
import { createServer, type Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { startMatrixFake, type MatrixFake, type RecordedSend } from '../fakes/matrix-homeserver.js';
import { startMattermostFake, type MattermostFake } from '../fakes/mattermost-server.js';
import { startPagerDutyFake, type PagerDutyFake } from '../fakes/pagerduty-fake.js';
import { startSlackFake, type PostedMessage, type SlackFake } from '../fakes/slack-fake.js';
import { deliver } from '../fakes/slack-requests.js';
import { crashLoopPayload, postAlert } from './helpers/alerts.js';
import { ledgerEvents, ofType, until, writeConfig } from './helpers/chat-e2e.js';
import { cleanup, makeTmpDir, spawnBot } from './helpers/spawn-bot.js';

const BOT = 'U0REPRISE';
const ANN_SLACK = 'U0ANN';
const ANN_MATRIX = '@ann:fake.test';
const CHANNEL = 'C0ONCALL';
const PD_TOKEN = 'pd-rest-token-0123456789';

let slack: SlackFake | undefined;
let matrix: MatrixFake | undefined;
let pd: PagerDutyFake | undefined;
let mm: MattermostFake | undefined;
let hang: Server | undefined;
afterEach(async () => {
  await cleanup();
  await slack?.close();
  await matrix?.close();
  await pd?.close();
  await mm?.close();
  hang?.closeAllConnections();
  await new Promise<void>((r) => (hang ? hang.close(() => r()) : r()));
  slack = matrix = pd = hang = mm = undefined;
});

const shown = (m: { text: unknown; blocks: unknown }): string => `${String(m.text)}\n${JSON.stringify(m.blocks)}`;
const cardsOf = (s: SlackFake): PostedMessage[] => s.messages.filter((m) => m.channel === CHANNEL && !m.thread_ts);
const slackEnv = (s: SlackFake): Record<string, string> => ({
  SLACK_BOT_TOKEN: s.botToken,
  SLACK_SIGNING_SECRET: s.signingSecret,
  SLACK_CHANNEL: CHANNEL,
  SLACK_API_URL: s.apiUrl,
});
const critical = (pod: string) => crashLoopPayload({ status: 'firing', severity: 'critical', pod });

const ROTATION = `oncall:
  rotation:
    people: [ann]
    start: "2026-01-05"
    timezone: Europe/Berlin
  people:
    - name: ann
      email: ann@example.org
      matrix: "${ANN_MATRIX}"
  remind_after: 1s
`;

describe('who is on call on critical cards, through reprise serve', () => {
  it(
    'a rotation in config: the card mentions the person on call on Slack (id by email) and Matrix (pill, m.mentions); a warning names nobody; /reprise and !reprise oncall name her; one reminder',
    { timeout: 120_000 },
    async () => {
      const s = (slack = await startSlackFake({ botUserId: BOT, emails: { 'ann@example.org': ANN_SLACK } }));
      const m = (matrix = await startMatrixFake({}));
      const dir = makeTmpDir();
      const bot = await spawnBot({
        dataDir: dir,
        args: ['--config', writeConfig(dir, ROTATION)],
        env: { ...slackEnv(s), MATRIX_HOMESERVER_URL: m.url, MATRIX_ACCESS_TOKEN: m.botToken, MATRIX_ROOM_ID: m.room },
      });
      await bot.waitForLog((l) => l.msg === 'matrix: syncing', 15_000);
      expect((await postAlert(bot.url, crashLoopPayload({ status: 'firing', severity: 'warning', pod: 'checkout-api-1-x' }))).status).toBe(202);
      expect((await postAlert(bot.url, critical('checkout-api-2-x'))).status).toBe(202);
      const cards = await s.waitFor(() => (cardsOf(s).length === 2 ? cardsOf(s) : undefined));
      const [warn, crit] = cards.sort((a, b) => (shown(a).includes('critical') ? 1 : shown(b).includes('critical') ? -1 : 0));
      expect(shown(warn!)).not.toContain('on call');
      expect(String(crit!.text).startsWith(`<@${ANN_SLACK}> `)).toBe(true);
      expect(shown(crit!)).toContain('📟 on call: ');
      expect(JSON.stringify(crit!.blocks)).toContain(`{"type":"user","user_id":"${ANN_SLACK}"}`);
      expect(s.calls('users.lookupByEmail').map((c) => c.body['email'])).toEqual(['ann@example.org']);

      const roots = (): RecordedSend[] =>
        m.sent.filter((x) => !x.replay && x.type === 'm.room.message' && (x.content['m.relates_to'] as { rel_type?: string } | undefined) === undefined);
      const mcard = await until('the Matrix critical card', () => roots().find((x) => String(x.content['body']).includes('📟 on call')), 30_000);
      expect(mcard.content['m.mentions']).toEqual({ user_ids: [ANN_MATRIX] });
      expect(String(mcard.content['formatted_body'])).toContain('https://matrix.to/#/%40ann%3Afake.test');

      // Nobody acked: one reminder in the critical thread on each surface, mentioning her again.
      const reminders = (): PostedMessage[] => s.messages.filter((x) => x.thread_ts === crit!.ts && shown(x).includes('nobody has acknowledged'));
      const [reminder] = await s.waitFor(() => (reminders().length > 0 ? reminders() : undefined), 30_000);
      expect(String(reminder!.text).startsWith(`<@${ANN_SLACK}> `)).toBe(true);
      // /reprise oncall (Slack, privately) and !reprise oncall (Matrix, in a thread on the command) name her too.
      const res = await deliver(`${bot.url}/slack/events`, s.signed.command({ text: 'oncall', user: 'U0BOB', channel: CHANNEL }));
      expect(res.status).toBe(200);
      const privately = await s.waitFor(() => s.calls('response_url').at(-1) ?? s.calls('chat.postEphemeral').at(-1), 30_000);
      expect(JSON.stringify(privately.body)).toContain('On call · default');
      expect(JSON.stringify(privately.body)).toContain(`"user_id":"${ANN_SLACK}"`);
      const asked = m.say(m.room, '@bob:fake.test', '!reprise oncall');
      const said = await until(
        'the !reprise oncall answer',
        () => m.sent.find((x) => !x.replay && (x.content['m.relates_to'] as { event_id?: string } | undefined)?.event_id === asked),
        30_000,
      );
      // The body names her as a client shows a pill (her name); the formatted body is the pill.
      expect(String(said.content['body'])).toContain('📟 on call: ann (rotation');
      expect(String(said.content['formatted_body'])).toContain('https://matrix.to/#/%40ann%3Afake.test');
      await bot.settled();
      expect(ofType(await ledgerEvents(dir), 'oncall_reminder')).toHaveLength(1);
      expect(reminders()).toHaveLength(1);
      expect(s.messages.filter((x) => x.thread_ts === warn!.ts && shown(x).includes('nobody has acknowledged'))).toEqual([]);
      expect(await bot.stop()).toEqual({ code: 0, signal: null });
    },
  );

  it('PagerDuty: the card mentions the person GET /oncalls returns for the escalation policy', { timeout: 60_000 }, async () => {
    const s = (slack = await startSlackFake({ botUserId: BOT, emails: { 'pat@example.org': 'U0PAT' } }));
    const rest = (pd = await startPagerDutyFake({
      token: PD_TOKEN,
      oncalls: {
        PPOL1: [
          { escalation_level: 1, user: { id: 'PU1', name: 'Pat <!here> Primary', email: 'pat@example.org' }, end: '2099-01-01T00:00:00Z' },
          { escalation_level: 2, user: { id: 'PU2', name: 'Max Manager', email: 'max@example.org' }, end: null },
        ],
      },
    }));
    const dir = makeTmpDir();
    const bot = await spawnBot({
      dataDir: dir,
      args: ['--config', writeConfig(dir, 'oncall:\n  pagerduty: { escalation_policy: PPOL1 }\n')],
      env: { ...slackEnv(s), REPRISE_PAGERDUTY_TOKEN: PD_TOKEN, REPRISE_PAGERDUTY_FROM: 'oncall-bot@example.org', REPRISE_PAGERDUTY_API_URL: rest.apiUrl },
    });
    expect((await postAlert(bot.url, critical('checkout-api-3-x'))).status).toBe(202);
    const card = await s.waitFor(() => cardsOf(s)[0]);
    expect(String(card.text).startsWith('<@U0PAT> ')).toBe(true);
    expect(shown(card)).toContain('PagerDuty · until 2099-01-01 00:00 UTC');
    expect(shown(card)).not.toContain('Max Manager');
    // The name is text: its <!here> notifies nobody (Slack would read it only in mrkdwn or `text`).
    expect(String(card.text)).not.toContain('<!here>');
    const asked = new URL(rest.requests.find((r) => r.path.startsWith('/oncalls'))!.path, 'http://x');
    expect(asked.searchParams.getAll('escalation_policy_ids[]')).toEqual(['PPOL1']);
    expect(asked.searchParams.get('earliest')).toBe('true');
    expect(await bot.stop()).toEqual({ code: 0, signal: null });
  });

  it('a failing provider, and a hanging one: the card is posted, saying "on call: unknown (why)", pinging nobody', { timeout: 60_000 }, async () => {
    const s = (slack = await startSlackFake({ botUserId: BOT }));
    const rest = (pd = await startPagerDutyFake({ token: PD_TOKEN, oncalls: {} }));
    rest.script(() => ({ status: 500 }));
    const dir = makeTmpDir();
    const bot = await spawnBot({
      dataDir: dir,
      args: ['--config', writeConfig(dir, 'oncall:\n  pagerduty: { escalation_policy: PPOL1 }\n  timeout: 300ms\n')],
      env: { ...slackEnv(s), REPRISE_PAGERDUTY_TOKEN: PD_TOKEN, REPRISE_PAGERDUTY_FROM: 'oncall-bot@example.org', REPRISE_PAGERDUTY_API_URL: rest.apiUrl },
    });
    expect((await postAlert(bot.url, critical('checkout-api-4-x'))).status).toBe(202);
    const card = await s.waitFor(() => cardsOf(s)[0]);
    expect(shown(card)).toContain('📟 on call: unknown (PagerDuty answered 500)');
    expect(String(card.text)).not.toMatch(/^<@/);
    await bot.stop();

    // A provider that accepts the connection and never answers: the budget, not the provider, decides.
    hang = createServer(() => undefined);
    await new Promise<void>((r) => hang!.listen(0, '127.0.0.1', r));
    const port = (hang.address() as { port: number }).port;
    const s2 = await startSlackFake({ botUserId: BOT });
    const dir2 = makeTmpDir();
    const bot2 = await spawnBot({
      dataDir: dir2,
      args: ['--config', writeConfig(dir2, 'oncall:\n  pagerduty: { escalation_policy: PPOL1 }\n  timeout: 300ms\n')],
      env: {
        ...slackEnv(s2),
        REPRISE_PAGERDUTY_TOKEN: PD_TOKEN,
        REPRISE_PAGERDUTY_FROM: 'oncall-bot@example.org',
        REPRISE_PAGERDUTY_API_URL: `http://127.0.0.1:${port}`,
      },
    });
    expect((await postAlert(bot2.url, critical('checkout-api-5-x'))).status).toBe(202);
    const card2 = await s2.waitFor(() => cardsOf(s2)[0]);
    expect(shown(card2)).toContain('📟 on call: unknown (PagerDuty did not answer within 300 ms)');
    await bot2.stop();
    await s2.close();
    hang.closeAllConnections();
  });

  it('an answer that comes after the budget edits the card that said unknown and mentions the person in its thread', { timeout: 60_000 }, async () => {
    const s = (slack = await startSlackFake({ botUserId: BOT, emails: { 'pat@example.org': 'U0PAT' } }));
    // A PagerDuty that holds its /oncalls answer until the test lets it go (a slow provider, by state, not by time).
    const held: Array<import('node:http').ServerResponse> = [];
    hang = createServer((req, res) => {
      if (req.url?.startsWith('/oncalls')) held.push(res);
      else res.writeHead(404).end('{}');
    });
    await new Promise<void>((r) => hang!.listen(0, '127.0.0.1', r));
    const port = (hang.address() as { port: number }).port;
    const dir = makeTmpDir();
    const bot = await spawnBot({
      dataDir: dir,
      args: ['--config', writeConfig(dir, 'oncall:\n  pagerduty: { escalation_policy: PSLOW }\n  timeout: 200ms\n')],
      env: {
        ...slackEnv(s),
        REPRISE_PAGERDUTY_TOKEN: PD_TOKEN,
        REPRISE_PAGERDUTY_FROM: 'oncall-bot@example.org',
        REPRISE_PAGERDUTY_API_URL: `http://127.0.0.1:${port}`,
      },
    });
    expect((await postAlert(bot.url, critical('checkout-api-6-x'))).status).toBe(202);
    const card = await s.waitFor(() => cardsOf(s)[0]);
    expect(shown(card)).toContain('📟 on call: unknown (PagerDuty did not answer within 200 ms)');
    expect(held).toHaveLength(1);
    held[0]!.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        oncalls: [{ escalation_level: 1, end: '2099-01-01T00:00:00Z', user: { id: 'PU1', type: 'user', name: 'Pat Primary', email: 'pat@example.org' } }],
      }),
    );
    await s.waitFor(() => (card.updates.some((u) => shown(u).includes('PagerDuty · until 2099-01-01 00:00 UTC')) ? true : undefined), 30_000);
    const told = await s.waitFor(() => s.messages.find((m) => m.thread_ts === card.ts && shown(m).includes('📟 on call')), 30_000);
    expect(String(told.text).startsWith('<@U0PAT> ')).toBe(true);
    expect(JSON.stringify(card.updates.at(-1)!.blocks)).toContain('{"type":"user","user_id":"U0PAT"}');
    await bot.settled();
    expect(ofType(await ledgerEvents(dir), 'oncall_found')).toHaveLength(1);
    expect(await bot.stop()).toEqual({ code: 0, signal: null });
  });

  it(
    'Mattermost: the critical card mentions the person on call by the username their email finds; one reminder in the thread mentions them again',
    { timeout: 60_000 },
    async () => {
      const f = (mm = await startMattermostFake());
      const dir = makeTmpDir();
      const bot = await spawnBot({
        dataDir: dir,
        args: ['--config', writeConfig(dir, ROTATION)],
        env: { MATTERMOST_URL: f.url, MATTERMOST_TOKEN: f.botToken, MATTERMOST_CHANNEL: `${f.team}/incidents` },
      });
      await bot.waitForLog((l) => l.msg === 'mattermost: WebSocket connected', 15_000);
      expect((await postAlert(bot.url, crashLoopPayload({ status: 'firing', severity: 'warning', pod: 'checkout-api-1-x' }))).status).toBe(202);
      expect((await postAlert(bot.url, critical('checkout-api-2-x'))).status).toBe(202);
      const roots = (): ReturnType<MattermostFake['roots']> => f.roots(f.channels.incidents);
      await until('both Mattermost cards', () => (roots().length === 2 ? roots() : undefined), 30_000);
      const crit = roots().find((p) => p.message.includes('critical'))!;
      const warn = roots().find((p) => p.id !== crit.id)!;
      expect(warn.message).not.toContain('on call');
      // Mattermost mentions by username: the line pings @ann (not her user id, not escaped).
      const unescaped = (t: string): string => t.replace(/\\(?=[!-/:-@[-`{-~])/g, '');
      expect(unescaped(crit.message)).toMatch(/📟 on call: @ann \(rotation · until /);
      expect(crit.message).not.toContain('\\@ann');
      expect(crit.message).not.toContain(f.users.ann.id);
      const reminder = await until('the reminder', () => f.thread(crit.id).find((p) => p.message.includes('nobody has acknowledged')), 30_000);
      expect(reminder.message).toMatch(/(^|\s)@ann(\s|$)/);
      await bot.settled();
      expect(ofType(await ledgerEvents(dir), 'oncall_reminder')).toHaveLength(1);
      expect(f.thread(crit.id).filter((p) => p.message.includes('nobody has acknowledged'))).toHaveLength(1);
      expect(f.thread(warn.id).filter((p) => p.message.includes('nobody has acknowledged'))).toEqual([]);
      expect(await bot.stop()).toEqual({ code: 0, signal: null });
    },
  );
});
