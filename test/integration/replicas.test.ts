/**
 * Two `reprise serve` processes on one Redis (issue 12, SPEC §8): exactly one leads; both take
 * webhooks; SIGKILL the leader in the middle of a stream sent to both, and the other takes
 * over — every webhook that got a 2xx is in the ledger exactly once.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { redisAvailable, startRedis, type RedisServer } from '../helpers/redis-server.js';
import { crashLoopPayload, postAlert } from './helpers/alerts.js';
import { cleanup, makeTmpDir, runCli, spawnBot, type BotProcess } from './helpers/spawn-bot.js';
import { waitFor } from '../helpers/wait-for.js';

const HAS_REDIS = redisAvailable();
const LEASE_TTL_MS = 2000;

async function leaderGauge(bot: BotProcess): Promise<number | undefined> {
  try {
    const text = await (await fetch(`${bot.url}/metrics`)).text();
    const m = /^reprise_leader (\d)$/m.exec(text);
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** Polls until `bot` reports `want` on reprise_leader. */
async function untilLeader(bot: BotProcess, want: number, timeoutMs?: number): Promise<void> {
  try {
    await waitFor(async () => (await leaderGauge(bot)) === want, {
      what: `replica on ${bot.port} to report reprise_leader ${want}`,
      ...(timeoutMs ? { timeoutMs } : {}),
    });
  } catch (err) {
    throw new Error(`${(err as Error).message}\n${bot.stderr().slice(-3000)}`, { cause: err });
  }
}

/** The ledger's opens once every fingerprint of `fps` is among them (or as they are at the timeout, for the assertion to show). */
async function opensOnceRecorded(redis: RedisServer, fps: readonly string[], what: string, timeoutMs?: number): Promise<Map<string, number>> {
  const read = (): Promise<Map<string, number>> => ledgerOpens(redis, makeTmpDir());
  return waitFor(
    async () => {
      const opens = await read();
      return fps.every((fp) => opens.has(fp)) ? opens : undefined;
    },
    { what, ...(timeoutMs ? { timeoutMs } : {}) },
  ).catch(read);
}

/** A firing of its own workload (own trigger, own fingerprint): one ledger open each. */
function alert(i: number): { payload: Record<string, unknown>; fingerprint: string } {
  const fingerprint = `storm-fp-${i}`;
  return { payload: crashLoopPayload({ status: 'firing', pod: `svc${i}-7d9f8c6b5-x2k4q`, fingerprint }), fingerprint };
}

async function ledgerOpens(redis: RedisServer, dataDir: string): Promise<Map<string, number>> {
  const r = await runCli(['ledger', 'events', '--json'], { env: { REPRISE_STORE_URL: redis.url, REPRISE_DATA_DIR: dataDir } });
  expect(r.code, r.stderr).toBe(0);
  const counts = new Map<string, number>();
  for (const line of r.stdout.split('\n')) {
    if (!line.startsWith('{')) continue;
    const e = JSON.parse(line) as { type: string; fingerprint?: string };
    if (e.type === 'open' && e.fingerprint) counts.set(e.fingerprint, (counts.get(e.fingerprint) ?? 0) + 1);
  }
  return counts;
}

describe.skipIf(!HAS_REDIS)('two replicas on one Redis', () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await startRedis({ durable: true });
  });
  afterAll(async () => {
    await redis?.stop();
  });
  afterEach(cleanup);

  it('one leads; SIGKILL it mid-stream, the other leads, and every acknowledged webhook is recorded exactly once', { timeout: 90_000 }, async () => {
    const config = join(makeTmpDir(), 'reprise.yaml');
    writeFileSync(config, `store:\n  lease_ttl: ${LEASE_TTL_MS}ms\n`);
    const env = { REPRISE_STORE_URL: redis.url };
    const a = await spawnBot({ dataDir: makeTmpDir(), env, args: ['--config', config], process: true }); // killed below
    await untilLeader(a, 1);
    const b = await spawnBot({ dataDir: makeTmpDir(), env, args: ['--config', config] });
    await untilLeader(b, 0);
    expect(await leaderGauge(a)).toBe(1);
    // Readiness is warmth and store health, never leadership: the follower is ready too.
    for (const bot of [a, b]) expect((await fetch(`${bot.url}/readyz`)).status).toBe(200);

    const TOTAL = 120;
    const KILL_AT = 50;
    const acked: string[] = [];
    const refused: string[] = [];
    let next = 0;
    let killed: Promise<unknown> | undefined;
    let killedAt = 0;
    // Four senders, alternating replicas: a stream across both while the leader dies.
    const sender = async (): Promise<void> => {
      for (;;) {
        const i = next++;
        if (i >= TOTAL) return;
        if (i === KILL_AT) {
          killedAt = Date.now();
          killed = a.kill();
        }
        const { payload, fingerprint } = alert(i);
        const target = i % 2 === 0 ? a : b;
        try {
          const res = await postAlert(target.url, payload);
          if (res.status === 202) acked.push(fingerprint);
          else refused.push(`${fingerprint}:${res.status}`);
        } catch {
          refused.push(`${fingerprint}:connection`);
        }
      }
    };
    await Promise.all([sender(), sender(), sender(), sender()]);
    await killed;

    await untilLeader(b, 1, 10 * LEASE_TTL_MS);
    console.log(`failover: replica ${b.port} leads ${Date.now() - killedAt} ms after the leader was killed (lease TTL ${LEASE_TTL_MS} ms)`);
    // Every webhook to the survivor was answered, before and after the kill.
    expect(acked.length).toBeGreaterThanOrEqual(TOTAL / 2);
    expect(refused.every((r) => r.endsWith(':connection'))).toBe(true);

    // The new leader drains what both replicas recorded; the CLI reads the same Redis. Once it
    // has nothing left in hand, a second handling of any webhook would be recorded.
    await opensOnceRecorded(redis, acked, 'every acknowledged webhook in the ledger', 30_000);
    await b.settled();
    const opens = await ledgerOpens(redis, makeTmpDir());
    const missing = acked.filter((fp) => !opens.has(fp));
    expect(missing, `acknowledged but not in the ledger:\n${b.stderr().slice(-3000)}`).toEqual([]);
    const twice = [...opens].filter(([, n]) => n > 1);
    expect(twice).toEqual([]);
    // Nothing the ledger holds was invented: every open is one of the webhooks sent.
    for (const fp of opens.keys()) expect(fp).toMatch(/^storm-fp-\d+$/);
  });

  it(
    'a leader whose lease is taken steps down at its next renewal, keeps taking webhooks, and they are handled once it leads again',
    { timeout: 90_000 },
    async () => {
      redis.cli('FLUSHALL');
      const config = join(makeTmpDir(), 'reprise.yaml');
      writeFileSync(config, `store:\n  lease_ttl: ${LEASE_TTL_MS}ms\n`);
      const a = await spawnBot({ dataDir: makeTmpDir(), env: { REPRISE_STORE_URL: redis.url }, args: ['--config', config] });
      await untilLeader(a, 1);
      // Another owner holds the lease now (as after a pause longer than the TTL), until the test
      // lets it go: how long the checks below take on a loaded machine cannot end it early.
      const leaseKey = redis.cli('KEYS', '*leader:lease*').trim();
      expect(leaseKey).not.toBe('');
      redis.cli('SET', leaseKey, 'someone-else|999', 'PX', String(120_000));
      await untilLeader(a, 0);
      await a.waitForLog((l) => typeof l.msg === 'string' && l.msg.startsWith('stepped down as leader'));
      // Recorded in the inbox, each waits a lease's time for a leader to decide it, then says `queued`.
      const sent = await Promise.all(
        [0, 1, 2, 3, 4].map(async (i) => {
          const { payload, fingerprint } = alert(1000 + i);
          return { res: await postAlert(a.url, payload), fingerprint };
        }),
      );
      for (const { res } of sent) {
        expect(res.status).toBe(202);
        expect(res.json).toMatchObject({ accepted: 1, results: [{ status: 'queued' }] });
      }
      const fps = sent.map((s) => s.fingerprint);
      expect((await fetch(`${a.url}/readyz`)).status).toBe(200);
      // Nobody leads until that lease lapses; the inbox keeps what was acknowledged meanwhile.
      expect([...(await ledgerOpens(redis, makeTmpDir())).keys()].filter((fp) => fps.includes(fp))).toEqual([]);
      redis.cli('DEL', leaseKey); // the other owner's lease lapses
      await untilLeader(a, 1, 10 * LEASE_TTL_MS);
      await opensOnceRecorded(redis, fps, 'the webhooks taken while following, handled');
      await a.settled();
      const opens = await ledgerOpens(redis, makeTmpDir());
      expect(fps.map((fp) => opens.get(fp))).toEqual([1, 1, 1, 1, 1]);
    },
  );
});
