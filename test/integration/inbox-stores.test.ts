/**
 * One inbox in front of the loop (issue 30 item 1), the same suite on every store: the memory
 * store, the embedded SQLite file and Redis. A webhook, a control-socket request and a resolve
 * go in through the inbox and come back with the same answer, field for field; on Redis a
 * follower's webhook is decided by the leader and answered with the leader's outcome.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { controlRequest } from '../../src/runtime/control-client.js';
import { controlSocketPath } from '../../src/runtime/serve-owner.js';
import { redisAvailable, startRedis, type RedisServer } from '../helpers/redis-server.js';
import { CHECKOUT_ENTRY, crashLoopPayload, postAlert, type WebhookAccepted } from './helpers/alerts.js';
import { startInProcess, type InProcessBot } from './helpers/in-process-bot.js';
import { cleanup, makeTmpDir } from './helpers/spawn-bot.js';

const TRIGGER = 'kubepodcrashlooping|payments|deployment|checkout-api|prod-eu-1';
const STORES = ['memory', 'sqlite', 'redis'] as const;

/** What every store answered, compared across them at the end. */
const answers = new Map<string, unknown[]>();

/** The keys of an answer, recursively: the shape, whatever the values. */
function shape(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(shape);
  if (v === null || typeof v !== 'object') return typeof v;
  return Object.fromEntries(
    Object.keys(v)
      .sort()
      .map((k) => [k, k === 'requestId' || k === 'seq' || k === 'at' || k === 'until' ? 'id' : shape((v as Record<string, unknown>)[k])]),
  );
}

for (const kind of STORES) {
  describe.skipIf(kind === 'redis' && !redisAvailable())(`the inbox on the ${kind} store`, () => {
    let redis: RedisServer | undefined;
    let env: Record<string, string> = {};
    let bot: InProcessBot;

    beforeAll(async () => {
      if (kind === 'redis') {
        redis = await startRedis({ durable: false });
        env = { REPRISE_STORE_URL: redis.url };
      } else if (kind === 'memory') env = { REPRISE_STORE_URL: 'memory://' };
      bot = await startInProcess({ dataDir: makeTmpDir(), env });
    }, 60_000);
    afterAll(async () => {
      await cleanup();
      await redis?.stop();
    });

    it('a webhook is answered with its decision once recorded, and the thread follows', { timeout: 60_000 }, async () => {
      expect((await bot.readyz()).checks.replica.role).toBe('leader');
      const res = await postAlert(bot.url, crashLoopPayload({ status: 'firing' }));
      expect(res.status, res.text).toBe(202);
      const body = res.json as WebhookAccepted;
      expect(body).toMatchObject({ accepted: 1, results: [{ status: 'posted', triggerKey: TRIGGER, answer: { kind: 'incident', entry: CHECKOUT_ENTRY } }] });
      await bot.waitForTranscript((ls) => ls.some((l) => l.kind === 'rca'));
      answers.set(kind, [body]);
    });

    it('a control-socket request goes through the same inbox and says where its event landed', { timeout: 60_000 }, async () => {
      const socket = controlSocketPath(bot.dataDir);
      const reply = await controlRequest(socket, 'POST', '/v1/feedback', { triggerKey: TRIGGER, action: 'down', user: 'ann' });
      expect(reply).toMatchObject({ ok: true, status: 200 });
      const result = (reply as { body: { result: { seq: number; event: Record<string, unknown> } } }).body.result;
      expect(result.seq).toBeGreaterThan(0);
      expect(result.event).toMatchObject({ type: 'feedback', triggerKey: TRIGGER, user: 'ann', vote: 'down', via: 'cli' });
      // A trigger nobody saw is refused with its reason, as the CLI shows it.
      const unknown = await controlRequest(socket, 'POST', '/v1/feedback', { triggerKey: 'nope|x', action: 'up', user: 'ann' });
      expect(unknown).toMatchObject({ ok: true, status: 404 });
      answers.get(kind)!.push(result, (unknown as { body: unknown }).body);
    });

    it('a resolve pairs with its open and the bot settles', { timeout: 60_000 }, async () => {
      const res = await postAlert(bot.url, crashLoopPayload({ status: 'resolved' }));
      expect(res.status, res.text).toBe(202);
      expect((res.json as WebhookAccepted).results[0]).toMatchObject({ status: 'resolved', paired: true });
      answers.get(kind)!.push(res.json);
      await bot.settled();
      expect(bot.transcriptLines().filter((l) => l.kind === 'rca')).toHaveLength(1);
    });

    it.runIf(kind === 'redis')('a follower is answered with the outcome the leader decided', { timeout: 60_000 }, async () => {
      const follower = await startInProcess({ dataDir: makeTmpDir(), env });
      expect((await follower.readyz()).checks.replica.role).toBe('follower');
      const res = await postAlert(follower.url, crashLoopPayload({ status: 'firing', pod: 'checkout-api-7d9f8c6b5-abcde', fingerprint: 'fp-follower' }));
      expect(res.status, res.text).toBe(202);
      expect((res.json as WebhookAccepted).results).toEqual([expect.objectContaining({ status: expect.stringMatching(/^(posted|reopened)$/) })]);
      expect((res.json as WebhookAccepted).results[0]?.status).not.toBe('queued');
      await follower.stop();
    });
  });
}

describe('one answer shape', () => {
  it('every store answered the same requests with the same fields', () => {
    const ran = STORES.filter((k) => answers.has(k));
    expect(ran.length).toBeGreaterThanOrEqual(2);
    const [first, ...rest] = ran;
    for (const k of rest) expect([k, shape(answers.get(k))]).toEqual([k, shape(answers.get(first!))]);
  });
});
