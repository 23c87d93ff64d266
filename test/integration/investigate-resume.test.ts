/**
 * Nothing acknowledged is lost, for investigations (SPEC §8): `reprise serve` is SIGKILLed while
 * the model is still answering an investigation; the next start (or, on Redis, the follower
 * that takes the lead) resumes it, and the ledger ends with exactly one finding for that open,
 * marked resumed, delivered into the same thread.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { redisAvailable, startRedis, type RedisServer } from '../helpers/redis-server.js';
import { crashLoopPayload, postAlert } from './helpers/alerts.js';
import { byRole, fake, finding, serveModelConfig, useModelAndTools, verdict } from './helpers/investigation.js';
import { cleanup, makeTmpDir, runCli, spawnBot, type BotProcess } from './helpers/spawn-bot.js';
import { waitFor } from '../helpers/wait-for.js';

useModelAndTools();

afterEach(async () => {
  await cleanup();
});

function writeConfig(dir: string, extra: string[] = []): string {
  const config = join(dir, 'reprise.yaml');
  writeFileSync(config, serveModelConfig({ before: extra, requestTimeout: '60s' }));
  return config;
}

async function ledgerEvents(dir: string, env: Record<string, string> = {}): Promise<Array<Record<string, unknown>>> {
  const r = await runCli(['ledger', 'events', '--json'], { env: { REPRISE_DATA_DIR: dir, ...env } });
  expect(r.code, r.stderr).toBe(0);
  return r.stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('serve resumes an investigation a crash interrupted', () => {
  it('SIGKILL while the model answers → restart → exactly one finding for that open, resumed', { timeout: 90_000 }, async () => {
    const SUMMARY = 'billing-api keeps restarting: its config map is missing a key';
    // The first answer never comes in time: the process dies while waiting for it.
    fake.respond(
      byRole({
        investigate: [{ ...finding({ summary: 'never delivered' }), delayMs: 120_000 }, finding({ summary: SUMMARY, verdict: 'action_suggested' })],
        verify: [verdict('supported', 0.8)],
      }),
    );
    const dir = makeTmpDir();
    const config = writeConfig(dir);
    const bot: BotProcess = await spawnBot({ dataDir: dir, args: ['--config', config], process: true }); // killed below
    // Critical and no catalog entry for it: investigated at once.
    const res = await postAlert(bot.url, crashLoopPayload({ status: 'firing', severity: 'critical', pod: 'billing-api-7d9f8c6b5-x2k4q' }), {
      authorization: 'Bearer test-token-for-investigations',
    });
    expect(res.status, res.text).toBe(202);
    await waitFor(() => (fake.requests.length >= 1 ? true : undefined), { what: 'the investigation to call the model', timeoutMs: 20_000 });
    expect((await bot.kill()).signal).toBe('SIGKILL');

    const before = await ledgerEvents(dir);
    const open = before.find((e) => e['type'] === 'open')!;
    expect(open['investigate']).toBeDefined();
    expect(before.filter((e) => e['type'] === 'finding')).toEqual([]);

    const again = await spawnBot({ dataDir: dir, args: ['--config', config], transcript: join(dir, 't2.jsonl') });
    await again.waitForLog((l) => l.msg === 'work interrupted by a restart is resumed' && l['investigations'] === 1, 20_000);
    const done = await again.waitForLog(
      (l) => typeof l.msg === 'string' && l.msg.startsWith('investigation ') && l['resumed'] === true && l['status'] !== undefined,
      30_000,
    );
    expect(done['status']).toBe('completed');
    const lines = await again.waitForTranscript((ls) => ls.some((l) => l.kind === 'detail'), 20_000);
    expect(lines.find((l) => l.kind === 'detail')!.text).toContain(SUMMARY);
    expect(await again.stop()).toEqual({ code: 0, signal: null });

    const after = await ledgerEvents(dir);
    const found = after.filter((e) => e['type'] === 'finding' && e['openId'] === open['id']);
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ status: 'completed', resumed: true, summary: SUMMARY });
    // A third start finds nothing left to resume.
    const third = await spawnBot({ dataDir: dir, args: ['--config', config], transcript: join(dir, 't3.jsonl') });
    await third.waitForLog((l) => typeof l.msg === 'string' && l.msg.startsWith('listening on'));
    expect(third.logs().some((l) => l.msg === 'work interrupted by a restart is resumed')).toBe(false);
    expect(await third.stop()).toEqual({ code: 0, signal: null });
    expect((await ledgerEvents(dir)).filter((e) => e['type'] === 'finding')).toHaveLength(1);
  });
});

const HAS_REDIS = redisAvailable();
const LEASE_TTL_MS = 2000;

async function isLeader(bot: BotProcess): Promise<boolean | undefined> {
  try {
    const m = /^reprise_leader (\d)$/m.exec(await (await fetch(`${bot.url}/metrics`)).text());
    return m ? m[1] === '1' : undefined;
  } catch {
    return undefined;
  }
}

describe.skipIf(!HAS_REDIS)('a new leader resumes an investigation the dead one was running', () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await startRedis({ durable: true });
  });
  afterAll(async () => {
    await redis?.stop();
  });

  it('SIGKILL the leader mid-investigation → the follower leads and resumes it → exactly one finding', { timeout: 90_000 }, async () => {
    const SUMMARY = 'billing-api keeps restarting after the failover too';
    fake.respond(
      byRole({
        investigate: [{ ...finding({ summary: 'never delivered' }), delayMs: 120_000 }, finding({ summary: SUMMARY, verdict: 'action_suggested' })],
        verify: [verdict('supported', 0.8)],
      }),
    );
    const config = writeConfig(makeTmpDir(), ['store:', `  lease_ttl: ${LEASE_TTL_MS}ms`]);
    const env = { REPRISE_STORE_URL: redis.url };
    const a = await spawnBot({ dataDir: makeTmpDir(), env, args: ['--config', config], process: true }); // killed below
    await waitFor(async () => (await isLeader(a)) === true, 'the first replica to lead');
    const b = await spawnBot({ dataDir: makeTmpDir(), env, args: ['--config', config] });
    await waitFor(async () => (await isLeader(b)) === false, 'the second replica to follow');

    // Sent to the follower: recorded in the shared inbox, handled by the leader.
    const res = await postAlert(b.url, crashLoopPayload({ status: 'firing', severity: 'critical', pod: 'billing-api-7d9f8c6b5-x2k4q' }), {
      authorization: 'Bearer test-token-for-investigations',
    });
    expect(res.status, res.text).toBe(202);
    await waitFor(() => (fake.requests.length >= 1 ? true : undefined), { what: 'the leader to call the model', timeoutMs: 20_000 });
    expect((await a.kill()).signal).toBe('SIGKILL');

    await b.waitForLog((l) => l.msg === 'work interrupted by a restart is resumed' && l['investigations'] === 1, 10 * LEASE_TTL_MS);
    const done = await b.waitForLog(
      (l) => typeof l.msg === 'string' && l.msg.startsWith('investigation ') && l['resumed'] === true && l['status'] !== undefined,
      30_000,
    );
    expect(done['status']).toBe('completed');
    expect(await b.stop()).toEqual({ code: 0, signal: null });

    const events = await ledgerEvents(b.dataDir, env);
    const opens = events.filter((e) => e['type'] === 'open');
    expect(opens).toHaveLength(1);
    const found = events.filter((e) => e['type'] === 'finding');
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ openId: opens[0]!['id'], status: 'completed', resumed: true, summary: SUMMARY });
  });
});
