/**
 * Matrix end to end (issue 10): `reprise serve` configured by the environment, the real
 * matrix-bot-sdk client against the homeserver fake on 127.0.0.1. Alertmanager webhooks in;
 * reactions, thread replies and `!reprise` commands as people in the room make them; the ledger
 * read back through the CLI.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMatrixFake, type MatrixFake, type RecordedSend } from '../fakes/matrix-homeserver.js';
import { CHECKOUT_ENTRY, crashLoopPayload, postAlert, type WebhookAccepted } from './helpers/alerts.js';
import { eventsOf, HOSTILE_ANNOTATIONS, ledgerEvents, ofType, searchPayload, settledEvents, writeConfig } from './helpers/chat-e2e.js';
import { cleanup, makeTmpDir, spawnBot, type BotProcess } from './helpers/spawn-bot.js';
import { waitFor } from '../helpers/wait-for.js';

const ALICE = '@alice:fake.test';
const BOB = '@bob:fake.test';
const EVE = '@eve:fake.test';
const PAYMENTS = '!payments:fake.test';
const SEARCH = '!search:fake.test';
const CONFIG = `transport:
  matrix:
    allow_users: ['${ALICE}', '${BOB}']
routing:
  rules:
    - match: { namespace: payments }
      matrix: '${PAYMENTS}'
    - match: { namespace: search }
      matrix: '${SEARCH}'
`;

let fake: MatrixFake;
let dataDir: string;
let bot: BotProcess;

async function startBot(): Promise<void> {
  bot = await spawnBot({
    dataDir,
    args: ['--config', writeConfig(dataDir, CONFIG)],
    env: { MATRIX_HOMESERVER_URL: fake.url, MATRIX_ACCESS_TOKEN: fake.botToken, MATRIX_ROOM_ID: fake.room },
  });
  // The client is listening once it has synced (from "now" on a first start).
  await bot.waitForLog((l) => l.msg === 'matrix: syncing', 15_000);
}

beforeAll(async () => {
  fake = await startMatrixFake({ rooms: [{}, { id: PAYMENTS }, { id: SEARCH }] });
  dataDir = makeTmpDir();
  await startBot();
}, 60_000);

afterAll(async () => {
  await cleanup();
  await fake?.close();
});

type Relation = { rel_type?: string; event_id?: string };
const relation = (s: RecordedSend): Relation => (s.content['m.relates_to'] ?? {}) as Relation;
const fresh = (room: string): RecordedSend[] => fake.sent.filter((s) => !s.replay && s.room === room && s.type === 'm.room.message');
/** The bot's thread roots in a room (not edits, not thread replies). */
const roots = (room: string): RecordedSend[] => fresh(room).filter((s) => relation(s).rel_type === undefined);
const threadOf = (root: RecordedSend): RecordedSend[] =>
  fresh(root.room).filter((s) => relation(s).rel_type === 'm.thread' && relation(s).event_id === root.eventId);
const body = (c: Record<string, unknown> | undefined): string => `${String(c?.['body'])}\n${String(c?.['formatted_body'])}`;

let card: RecordedSend;

describe('Matrix, end to end through reprise serve', () => {
  it('turns an Alertmanager webhook into a card in the routed room with the analysis in its thread', { timeout: 30_000 }, async () => {
    expect((await postAlert(bot.url, crashLoopPayload({ status: 'firing' }))).status).toBe(202);
    card = await waitFor(() => roots(PAYMENTS)[0], 'the card');
    const detail = await waitFor(() => threadOf(card)[0], 'the analysis in the thread');
    expect(body(card.content)).toContain('KubePodCrashLooping');
    expect(body(card.content)).toContain('Instant recall');
    expect(body(detail.content)).toContain(CHECKOUT_ENTRY);
    expect(roots(fake.room)).toEqual([]);
  });

  it('ignores reactions on other people’s messages, the bot’s own, and users outside the allowlist', { timeout: 30_000 }, async () => {
    const before = (await settledEvents(dataDir)).length;
    const someone = fake.say(PAYMENTS, BOB, 'is anyone looking at this?');
    fake.react(PAYMENTS, ALICE, someone, '👎');
    fake.react(PAYMENTS, fake.botUserId, card.eventId, '👎');
    fake.react(PAYMENTS, EVE, card.eventId, '👎');
    // A later event from an allowed user proves the batch before it was read.
    fake.react(PAYMENTS, ALICE, card.eventId, '👎');
    const [vote] = await eventsOf(dataDir, 'feedback', 1);
    expect(vote).toMatchObject({ vote: 'down', user: `matrix:${ALICE}`, via: 'matrix' });
    const open = ofType(await ledgerEvents(dataDir), 'open')[0]!;
    expect(vote!['openId']).toBe(open['id']);
    expect(open['entry']).toBe(CHECKOUT_ENTRY);
    const after = await ledgerEvents(dataDir);
    // Alice's vote, and the card rewritten with its tally (an edit in place): nothing for the others.
    const recorded = after.filter((e) => e.seq > before && e.type !== 'delivered');
    expect(recorded.map((e) => `${String(e.type)}${e.type === 'outbox' ? `:${String(e['op'])}` : ''}`)).toEqual(['feedback', 'outbox:update']);
    const edit = await waitFor(
      () => fresh(PAYMENTS).find((s) => relation(s).rel_type === 'm.replace' && relation(s).event_id === card.eventId && body(s.content).includes('👎 1')),
      'the card edited with the 👎',
    );
    expect(body(edit.content)).toContain('votes on this alert: 👍 0 👎 1');
  });

  it('records a thread note addressed to the bot and acknowledges it in the thread', { timeout: 30_000 }, async () => {
    fake.replyInThread(PAYMENTS, ALICE, card.eventId, '!reprise note the pool was exhausted after the 02:40 deploy');
    const [note] = await eventsOf(dataDir, 'note', 1);
    expect(note).toMatchObject({ user: `matrix:${ALICE}`, via: 'matrix', text: 'the pool was exhausted after the 02:40 deploy' });
    await waitFor(() => threadOf(card).find((s) => body(s.content).includes('📝')), '📝 in the thread');
  });

  it('answers !reprise recall with the ranked answer and its gate trace', { timeout: 30_000 }, async () => {
    const asked = fake.say(PAYMENTS, ALICE, '!reprise recall KubePodCrashLooping');
    const answer = await waitFor(() => fresh(PAYMENTS).find((s) => relation(s).event_id === asked), 'the recall answer');
    expect(body(answer.content)).toContain(CHECKOUT_ENTRY);
    expect(body(answer.content)).toMatch(/gate trace/i);
  });

  it('silences the trigger with 🔕: the next firing posts nothing and opens nothing', { timeout: 30_000 }, async () => {
    fake.react(PAYMENTS, ALICE, card.eventId, '🔕');
    const [silence] = await eventsOf(dataDir, 'silence', 1);
    expect(Date.parse(silence!['until'] as string) - Date.now()).toBeGreaterThan(3.9 * 3_600_000);
    const sent = fake.sent.length;
    const opens = ofType(await ledgerEvents(dataDir), 'open').length;
    const again = await postAlert(bot.url, crashLoopPayload({ status: 'firing', pod: 'checkout-api-7d9f8c6b5-zzzzz' }));
    expect((again.json as WebhookAccepted).results[0]).toMatchObject({ status: 'silenced' });
    // Decided before the 202; once the outbox is empty, anything it asked to post has been posted.
    await bot.settled();
    expect(ofType(await ledgerEvents(dataDir), 'open')).toHaveLength(opens);
    expect(fake.sent.slice(sent).filter((s) => relation(s).rel_type === undefined && s.type === 'm.room.message')).toEqual([]);
  });

  it(
    'routes two alerts to two rooms, each resolve editing its own card and replying in its thread; hostile annotations stay text',
    { timeout: 30_000 },
    async () => {
      expect((await postAlert(bot.url, searchPayload({ status: 'firing', annotations: HOSTILE_ANNOTATIONS }))).status).toBe(202);
      const other = await waitFor(() => roots(SEARCH)[0], 'the second card');
      const detail = await waitFor(() => threadOf(other)[0], 'its analysis');
      for (const s of [other, detail]) {
        expect(s.content['m.mentions']).toEqual({});
        expect(String(s.content['formatted_body'])).not.toMatch(/<script|<a href="https:\/\/evil|@room<\/a>|<!channel>/);
      }
      // Shown as text, with `@room` broken by a word joiner so no client's push rule fires on it.
      // What the alert says is on the card, summary and description both.
      expect(String(other.content['formatted_body'])).toContain('&lt;!channel&gt; @\u2060room @here the indexer is down');
      expect(String(other.content['formatted_body'])).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
      for (const s of [other, detail]) expect(body(s.content)).not.toMatch(/@room/);

      expect((await postAlert(bot.url, crashLoopPayload({ status: 'resolved' }))).status).toBe(202);
      expect((await postAlert(bot.url, searchPayload({ status: 'resolved' }))).status).toBe(202);
      for (const root of [card, other]) {
        await waitFor(() => (body(fake.current(root.eventId)).includes('✅ resolved') ? true : undefined), 'the card edited to resolved');
        await waitFor(() => threadOf(root).find((s) => /resolved/i.test(String(s.content['body']))), 'a resolve line in the thread');
      }
      expect(roots(PAYMENTS)).toHaveLength(1);
      expect(roots(SEARCH)).toHaveLength(1);
    },
  );

  it('counts a reaction made while the bot was down once after it restarts', { timeout: 60_000 }, async () => {
    const votesBefore = ofType(await ledgerEvents(dataDir), 'feedback').length;
    expect(await bot.stop()).toEqual({ code: 0, signal: null });
    fake.react(PAYMENTS, BOB, card.eventId, '👍');
    await startBot();
    const votes = await eventsOf(dataDir, 'feedback', votesBefore + 1);
    expect(votes.at(-1)).toMatchObject({ vote: 'up', user: `matrix:${BOB}` });
    // A second restart replays nothing.
    expect(await bot.stop()).toEqual({ code: 0, signal: null });
    await startBot();
    fake.react(PAYMENTS, ALICE, card.eventId, '👍');
    await eventsOf(dataDir, 'feedback', votesBefore + 2);
    // A replay of Bob's reaction would come from the same catch-up sync, before Alice's: by now
    // it would be recorded, and so would anything it set off once the bot has settled.
    await bot.settled();
    expect(
      ofType(await ledgerEvents(dataDir), 'feedback')
        .map((v) => [v['user'], v['vote']])
        .slice(votesBefore),
    ).toEqual([
      [`matrix:${BOB}`, 'up'],
      [`matrix:${ALICE}`, 'up'],
    ]);
  });
});
