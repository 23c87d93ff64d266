/**
 * PagerDuty both ways through ONE real `reprise serve`, with the Slack stand-in and the PagerDuty
 * REST stand-in on loopback and PagerDuty's documented webhook payloads, signed (issue 21 item 2
 * "Done when"): `incident.acknowledged` edits the card in place; a 👀 in chat is one acknowledge
 * call; `incident.annotated` is a note; a resolve renamed in PagerDuty resolves the thread;
 * `incident.reopened` reopens it — the same card edited back to firing and one reply, no new
 * card — a replay of it does nothing, and its resolve resolves the thread again. The reopen on
 * the Matrix stand-in too (the card replaced in place, one thread reply).
 */
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { pagerDutySignature } from '../../src/core/pagerduty.js';
import { startMatrixFake, type MatrixFake, type RecordedSend } from '../fakes/matrix-homeserver.js';
import { startPagerDutyFake, type PagerDutyFake } from '../fakes/pagerduty-fake.js';
import { startSlackFake, type PostedMessage, type SlackFake } from '../fakes/slack-fake.js';
import { deliver, reactionEvent } from '../fakes/slack-requests.js';
import { request, type RawResponse } from './helpers/alerts.js';
import { ledgerEvents, ofType, until } from './helpers/chat-e2e.js';
import { cleanup, makeTmpDir, spawnBot } from './helpers/spawn-bot.js';

const SECRET = 'pd-webhook-secret';
const PD_TOKEN = 'pd-rest-token';
const BOT = 'U0REPRISE';
const ANN = 'U0ANN';
const CHANNEL = 'C0ONCALL';

let slack: SlackFake | undefined;
let pd: PagerDutyFake | undefined;
let matrix: MatrixFake | undefined;
afterEach(async () => {
  await cleanup();
  await slack?.close();
  await pd?.close();
  await matrix?.close();
  slack = pd = matrix = undefined;
});

/** A PagerDuty fixture as PagerDuty would send it now, with its own event id. */
function event(name: string, id: string, edit?: (e: { event_type: string; occurred_at: string; data: Record<string, unknown> }) => void): Buffer {
  const body = JSON.parse(readFileSync(new URL(`../fixtures/sources/${name}`, import.meta.url), 'utf8')) as {
    event: { id: string; event_type: string; occurred_at: string; data: Record<string, unknown> };
  };
  body.event.id = id;
  body.event.occurred_at = new Date().toISOString();
  edit?.(body.event);
  return Buffer.from(JSON.stringify(body));
}

function post(url: string, body: Buffer): Promise<RawResponse> {
  return request(url, {
    path: '/webhook/pagerduty',
    headers: { 'content-type': 'application/json', 'x-pagerduty-signature': pagerDutySignature(SECRET, body) },
    body,
  });
}

const shown = (m: { text: unknown; blocks: unknown }): string => `${String(m.text)}\n${JSON.stringify(m.blocks)}`;

describe('PagerDuty both ways, end to end through reprise serve with the Slack stand-in', () => {
  it(
    'acknowledged → the card edited; chat 👀 → one acknowledge call; annotated → a note; reopened → the same card back to firing, one reply; a replay does nothing; its resolve resolves it',
    { timeout: 120_000 },
    async () => {
      const s = (slack = await startSlackFake({ botUserId: BOT }));
      const rest = (pd = await startPagerDutyFake({ token: PD_TOKEN }));
      const dir = makeTmpDir();
      const bot = await spawnBot({
        dataDir: dir,
        env: {
          REPRISE_PAGERDUTY_SECRET: SECRET,
          REPRISE_PAGERDUTY_TOKEN: PD_TOKEN,
          REPRISE_PAGERDUTY_FROM: 'oncall-bot@example.com',
          REPRISE_PAGERDUTY_API_URL: rest.apiUrl,
          SLACK_BOT_TOKEN: s.botToken,
          SLACK_SIGNING_SECRET: s.signingSecret,
          SLACK_CHANNEL: CHANNEL,
          SLACK_API_URL: s.apiUrl,
        },
      });
      const cards = (): PostedMessage[] => s.messages.filter((m) => m.channel === CHANNEL && !m.thread_ts);
      const replies = (root: PostedMessage): PostedMessage[] => s.messages.filter((m) => m.thread_ts === root.ts);
      const lastEdit = (m: PostedMessage): string => {
        const u = m.updates.at(-1);
        return u ? shown(u) : '';
      };

      expect((await post(bot.url, event('pagerduty-incident-triggered.json', 'EV-1'))).status).toBe(202);
      const card = await s.waitFor(() => cards()[0]);

      // PagerDuty's incident.acknowledged: the card, edited in place, names the PagerDuty user.
      expect((await post(bot.url, event('pagerduty-incident-acknowledged.json', 'EV-ACK'))).status).toBe(202);
      await s.waitFor(() => (lastEdit(card).includes('{"type":"text","text":"Tenex Engineer"},{"type":"text","text":" is on it') ? true : undefined));
      expect(rest.requests).toHaveLength(0);

      // A 👀 in chat: the card names the acker too, and PagerDuty gets one acknowledge call.
      const eyes = reactionEvent({ user: ANN, reaction: 'eyes', channel: CHANNEL, ts: card.ts, itemUser: BOT });
      expect((await deliver(`${bot.url}/slack/events`, s.signed.event(eyes))).status).toBe(200);
      await until('the acknowledge call', () => (rest.acknowledged.length > 0 ? true : undefined), 30_000);
      await s.waitFor(() =>
        lastEdit(card).includes('{"type":"text","text":"Tenex Engineer"},{"type":"text","text":" and "},{"type":"user","user_id":"' + ANN + '"}')
          ? true
          : undefined,
      );
      expect(rest.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['PUT /incidents/PGR0VU2']);
      expect(rest.requests[0]!.headers['from']).toBe('oncall-bot@example.com');
      await s.waitFor(() => (replies(card).some((m) => shown(m).includes('also acknowledged in PagerDuty')) ? true : undefined));
      const annotated = event('pagerduty-incident-annotated.json', 'EV-NOTE', (e) => {
        e.data['content'] = 'rolled back <!channel> @org/team';
      });
      expect((await post(bot.url, annotated)).status).toBe(202);
      await until('the note', async () => (ofType(await ledgerEvents(dir), 'note').length === 1 ? true : undefined), 30_000);

      // Resolved in PagerDuty under a new title: still this thread.
      const renamed = event('pagerduty-incident-resolved.json', 'EV-2', (e) => {
        e.data['title'] = 'checkout-api renamed while it burned';
      });
      expect((await post(bot.url, renamed)).status).toBe(202);
      await s.waitFor(() => (lastEdit(card).includes('Resolved') ? true : undefined));

      // Reopened: the same card back to firing, one reply; no new card.
      const reopenReplies = (): PostedMessage[] => replies(card).filter((m) => shown(m).includes('reopened in PagerDuty'));
      const reopened = event('pagerduty-incident-triggered.json', 'EV-3', (e) => {
        e.event_type = 'incident.reopened';
      });
      const r = await post(bot.url, reopened);
      expect(r.status, r.text).toBe(202);
      await s.waitFor(() => (lastEdit(card).includes('🔁 reopened in PagerDuty') ? true : undefined));
      await s.waitFor(() => (reopenReplies().length > 0 ? true : undefined));
      expect(lastEdit(card)).not.toContain('is on it');
      expect(shown(reopenReplies()[0]!)).toContain('a new episode of this incident');
      expect(cards()).toHaveLength(1);

      // A replay of the reopen (same signed delivery) is acknowledged and does nothing.
      const replay = await post(bot.url, reopened);
      expect(replay.status).toBe(202);
      expect(replay.json).toMatchObject({ accepted: 0, ignored: expect.stringContaining('duplicate delivery: event EV-3') });

      // A 👀 on the reopened episode asks PagerDuty again; its resolve resolves the same thread.
      const eyes2 = reactionEvent({ user: 'U0BOB', reaction: 'eyes', channel: CHANNEL, ts: card.ts, itemUser: BOT });
      expect((await deliver(`${bot.url}/slack/events`, s.signed.event(eyes2))).status).toBe(200);
      await until('the second acknowledge call', () => (rest.acknowledged.length === 2 ? true : undefined), 30_000);
      expect((await post(bot.url, event('pagerduty-incident-resolved.json', 'EV-4'))).status).toBe(202);
      await s.waitFor(() => (lastEdit(card).includes('Resolved') ? true : undefined));
      expect(await bot.stop()).toEqual({ code: 0, signal: null });
      expect(reopenReplies()).toHaveLength(1);

      expect(cards()).toHaveLength(1);
      const rows = await ledgerEvents(dir);
      const opens = ofType(rows, 'open');
      expect(opens).toHaveLength(2);
      expect(opens[1]).toMatchObject({ reopens: opens[0]!['id'], triggerKey: opens[0]!['triggerKey'] });
      expect(ofType(rows, 'resolve')).toHaveLength(2);
      expect(ofType(rows, 'ack').map((a) => a['user'])).toEqual(['pagerduty:PLH1HKV', `slack:${ANN}`, 'slack:U0BOB']);
      expect(ofType(rows, 'note')).toMatchObject([{ text: 'rolled back <!channel> @org/team', via: 'pagerduty' }]);
      // Nothing a PagerDuty user wrote pings the channel.
      for (const m of replies(card)) expect(String(m.text)).not.toMatch(/<!channel>/);
    },
  );

  it('Matrix: reopened → the same card replaced back to firing, one thread reply, no new card; its resolve resolves it', { timeout: 120_000 }, async () => {
    const m = (matrix = await startMatrixFake());
    const dir = makeTmpDir();
    const bot = await spawnBot({
      dataDir: dir,
      env: { REPRISE_PAGERDUTY_SECRET: SECRET, MATRIX_HOMESERVER_URL: m.url, MATRIX_ACCESS_TOKEN: m.botToken, MATRIX_ROOM_ID: m.room },
    });
    await bot.waitForLog((l) => l.msg === 'matrix: syncing', 30_000);
    type Relation = { rel_type?: string; event_id?: string };
    const relation = (x: RecordedSend): Relation => (x.content['m.relates_to'] ?? {}) as Relation;
    const sent = (): RecordedSend[] => m.sent.filter((x) => !x.replay && x.room === m.room && x.type === 'm.room.message');
    const cards = (): RecordedSend[] => sent().filter((x) => relation(x).rel_type === undefined);
    const body = (x: RecordedSend): string => `${String(x.content['body'])}\n${String(x.content['formatted_body'])}`;
    const edits = (card: RecordedSend): RecordedSend[] => sent().filter((x) => relation(x).rel_type === 'm.replace' && relation(x).event_id === card.eventId);
    const inThread = (card: RecordedSend): RecordedSend[] => sent().filter((x) => relation(x).rel_type === 'm.thread' && relation(x).event_id === card.eventId);

    expect((await post(bot.url, event('pagerduty-incident-triggered.json', 'EV-M1'))).status).toBe(202);
    const card = await until('the card', () => cards()[0]);
    expect((await post(bot.url, event('pagerduty-incident-resolved.json', 'EV-M2'))).status).toBe(202);
    await until('the resolved card', () => edits(card).find((x) => body(x).includes('resolved after')));
    const reopened = event('pagerduty-incident-triggered.json', 'EV-M3', (e) => {
      e.event_type = 'incident.reopened';
    });
    expect((await post(bot.url, reopened)).status).toBe(202);
    const edit = await until('the reopened card', () => edits(card).find((x) => body(x).includes('🔁 reopened in PagerDuty')));
    expect(body(edit)).toContain('🚨 firing');
    await until('the reply', () => inThread(card).find((x) => body(x).includes('a new episode of this incident')));
    expect((await post(bot.url, reopened)).json).toMatchObject({ accepted: 0 });
    expect((await post(bot.url, event('pagerduty-incident-resolved.json', 'EV-M4'))).status).toBe(202);
    await until('resolved again', () => (edits(card).filter((x) => body(x).includes('resolved after')).length >= 2 ? true : undefined));
    expect(await bot.stop()).toEqual({ code: 0, signal: null });
    expect(cards()).toHaveLength(1);
    expect(inThread(card).filter((x) => body(x).includes('reopened in PagerDuty'))).toHaveLength(1);
    expect(ofType(await ledgerEvents(dir), 'open')).toHaveLength(2);
  });
});
