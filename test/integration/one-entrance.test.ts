/**
 * One entrance, effects out (issue 18): a chat surface hands the bot what a person meant and
 * never waits on the model. Through `reprise serve` on the Matrix homeserver fake, with a model
 * that never answers: `!reprise investigate …` is acknowledged at once, and a 👎 on the card
 * typed while the model still works is recorded and rewrites the card in place with its tally —
 * on the embedded store, and on Redis, where chat events go through the leader's inbox.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisAvailable, startRedis, type RedisServer } from '../helpers/redis-server.js';
import { startMatrixFake, type MatrixFake, type RecordedSend } from '../fakes/matrix-homeserver.js';
import { crashLoopPayload, postAlert } from './helpers/alerts.js';
import { ledgerEvents, ofType, writeConfig } from './helpers/chat-e2e.js';
import { fake, serveModelConfig, useModelAndTools } from './helpers/investigation.js';
import { cleanup, makeTmpDir, spawnBot, type BotProcess } from './helpers/spawn-bot.js';
import { waitFor } from '../helpers/wait-for.js';

useModelAndTools();

const ALICE = '@alice:fake.test';

for (const storeKind of ['embedded', 'redis'] as const) {
  describe.skipIf(storeKind === 'redis' && !redisAvailable())(`one entrance: chat keeps flowing while the model works (${storeKind} store)`, () => {
    let matrix: MatrixFake;
    let dataDir: string;
    let bot: BotProcess;
    let redis: RedisServer | undefined;
    let storeEnv: Record<string, string> = {};

    beforeAll(async () => {
      if (storeKind === 'redis') {
        redis = await startRedis({ durable: false });
        storeEnv = { REPRISE_STORE_URL: redis.url };
      }
      matrix = await startMatrixFake({ rooms: [{}] });
      dataDir = makeTmpDir();
      // Every model call hangs far longer than the test: the model never answers.
      fake.respond(() => ({ delayMs: 600_000, content: '{}' }));
      bot = await spawnBot({
        dataDir,
        args: ['--config', writeConfig(dataDir, serveModelConfig({ trigger: ['  investigate_after: 0s'], requestTimeout: '10m' }))],
        env: { MATRIX_HOMESERVER_URL: matrix.url, MATRIX_ACCESS_TOKEN: matrix.botToken, MATRIX_ROOM_ID: matrix.room, ...storeEnv },
      });
      await bot.waitForLog((l) => l.msg === 'matrix: syncing', 15_000);
    }, 60_000);

    afterAll(async () => {
      // The model goes away now (it never answers): serve's stop waits for an on-demand
      // investigation in flight, and would wait out its 10 m request timeout.
      fake.respond(() => ({ status: 503 }));
      fake.hangUp();
      await cleanup();
      await matrix?.close();
      await redis?.stop();
    });

    const fresh = (): RecordedSend[] => matrix.sent.filter((s) => !s.replay && s.room === matrix.room && s.type === 'm.room.message');
    const rel = (s: RecordedSend): { rel_type?: string; event_id?: string } => (s.content['m.relates_to'] ?? {}) as { rel_type?: string; event_id?: string };
    const text = (s: RecordedSend): string =>
      `${String(s.content['body'])}\n${String((s.content['m.new_content'] as { body?: string } | undefined)?.body ?? '')}`;

    it('records a 👎 and rewrites the card while `!reprise investigate` waits on a model that never answers', { timeout: 60_000 }, async () => {
      expect((await postAlert(bot.url, crashLoopPayload({ status: 'firing' }), { authorization: 'Bearer test-token-for-investigations' })).status).toBe(202);
      const card = await waitFor(() => fresh().find((s) => rel(s).rel_type === undefined && /KubePodCrashLooping/.test(text(s))), 'the card');
      // The model is asked (the alert's investigation) and does not answer.
      await waitFor(() => (fake.requests.length > 0 ? true : undefined), 'a model call in flight');

      matrix.say(matrix.room, ALICE, '!reprise investigate why does checkout-api restart');
      await waitFor(() => fresh().find((s) => /investigation has started/.test(text(s))), 'the command acknowledged while the model works');

      matrix.react(matrix.room, ALICE, card.eventId, '👎');
      const feedback = await waitFor(async () => ofType(await ledgerEvents(dataDir, storeEnv), 'feedback')[0], 'the 👎 recorded');
      expect(feedback).toMatchObject({ vote: 'down', user: `matrix:${ALICE}`, via: 'matrix' });
      const edit = await waitFor(
        () => fresh().find((s) => rel(s).rel_type === 'm.replace' && rel(s).event_id === card.eventId && /👎 1/.test(text(s))),
        'the card rewritten with the vote',
      );
      expect(text(edit)).toMatch(/votes on this alert: 👍 0 👎 1/);
      // Still no finding: the model never answered, and nothing waited for it.
      expect(ofType(await ledgerEvents(dataDir, storeEnv), 'finding')).toEqual([]);
    });
  });
}
