/**
 * Replay protection of signed webhooks (issue 20 item 4), on the real HTTP server: a PagerDuty
 * event id seen before is acknowledged and ignored; an event older than the window is refused
 * with the reason; PagerDuty's redelivery of a delivery we failed is handled, once; a delivery
 * in flight is not handled twice; the memory is in the store (the embedded file survives a
 * restart, two replicas share Redis), and when the store fails the request is refused 503 —
 * nothing acknowledged, nothing lost.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createStore } from '../../../src/adapters/keyv/keyv-store.js';
import { pagerDutySignature } from '../../../src/core/pagerduty.js';
import type { Incident } from '../../../src/core/types.js';
import { createHttpServer, type HttpServer } from '../../../src/http/create-server.js';
import { createBotMetrics } from '../../../src/http/metrics.js';
import { memoryReplayStore, type ReplayStore } from '../../../src/http/replay-guard.js';
import { ManualClock } from '../../../src/ports/clock.js';
import { silentLogger } from '../../../src/ports/logger.js';
import type { KeyValueStore } from '../../../src/ports/store.js';
import { redisAvailable, startRedis, type RedisServer } from '../../helpers/redis-server.js';

const SECRET = 'pd-secret-for-replay-tests';
const NOW = '2026-12-01T12:00:00.000Z';

function event(id: string, opts: { type?: string; at?: string; incident?: string } = {}): string {
  return JSON.stringify({
    event: {
      id,
      event_type: opts.type ?? 'incident.triggered',
      resource_type: 'incident',
      occurred_at: opts.at ?? NOW,
      data: { id: opts.incident ?? 'PINC1', type: 'incident', title: 'checkout-api down', created_at: NOW, urgency: 'high' },
    },
  });
}

interface Harness {
  server: HttpServer;
  clock: ManualClock;
  handled: Incident[][];
  post(body: string): Promise<{ status: number; json: Record<string, unknown>; headers: Headers }>;
  fail: { next: number };
  hold?: Promise<void>;
}

const servers: HttpServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

function harness(replayStore: ReplayStore | undefined, clock = new ManualClock(NOW)): Harness {
  const h = { clock, handled: [], fail: { next: 0 } } as unknown as Harness;
  h.server = createHttpServer({
    pagerDutySecret: SECRET,
    bodyLimitBytes: 1 << 20,
    logger: silentLogger,
    metrics: createBotMetrics({ defaults: false }),
    readiness: () => ({ ready: true, reasons: [], checks: {} }),
    clock,
    ...(replayStore ? { replayStore } : {}),
    onAlertmanager: async (incidents) => {
      if (h.fail.next > 0) {
        h.fail.next -= 1;
        throw new Error('ledger write failed');
      }
      await h.hold;
      h.handled.push(incidents);
      return { accepted: incidents.length };
    },
  });
  servers.push(h.server);
  h.post = async (body) => {
    const res = await h.server.app.request('/webhook/pagerduty', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-pagerduty-signature': pagerDutySignature(SECRET, body) },
      body,
    });
    return { status: res.status, json: (await res.json()) as Record<string, unknown>, headers: res.headers };
  };
  return h;
}

describe('PagerDuty replay protection', () => {
  it('acknowledges a replayed event id and ignores it; a new id for the same incident is handled', async () => {
    const h = harness(memoryReplayStore());
    expect((await h.post(event('EV1'))).status).toBe(202);
    const replay = await h.post(event('EV1'));
    expect(replay.status).toBe(202);
    expect(replay.json).toMatchObject({ accepted: 0, ignored: 'duplicate delivery: event EV1 was already accepted at 2026-12-01T12:00:00.000Z' });
    expect((await h.post(event('EV2', { type: 'incident.resolved' }))).status).toBe(202);
    expect(h.handled.map((b) => b[0]!.status)).toEqual(['firing', 'resolved']);
  });

  it('refuses an event older (or further ahead) than the window, with the reason, and handles nothing', async () => {
    const h = harness(memoryReplayStore());
    const body = event('EV-LATE');
    h.clock.advance(3_600_000 + 1000);
    const old = await h.post(body);
    expect(old.status).toBe(400);
    expect(old.json).toMatchObject({
      error: { code: 'bad_request', message: expect.stringContaining('event.occurred_at is 3601 s old, older than server.replay_window (3600 s)') },
    });
    const ahead = await h.post(event('EV-AHEAD', { at: '2026-12-01T15:00:00Z' }));
    expect(ahead.status).toBe(400);
    const none = JSON.parse(event('EV-NONE')) as { event: Record<string, unknown> };
    delete none.event['occurred_at'];
    const missing = await h.post(JSON.stringify(none));
    expect(missing.json).toMatchObject({ error: { message: expect.stringContaining('event.occurred_at is required (replay protection)') } });
    expect(h.handled).toEqual([]);
    // Inside the window, either way, it is fresh.
    h.clock.set(NOW);
    expect((await h.post(event('EV-EDGE', { at: '2026-12-01T12:59:59Z' }))).status).toBe(202);
  });

  it("handles PagerDuty's redelivery of a delivery that failed, exactly once", async () => {
    const h = harness(memoryReplayStore());
    h.fail.next = 1;
    const body = event('EV-RETRY');
    expect((await h.post(body)).status).toBe(500);
    expect(h.handled).toHaveLength(0);
    expect((await h.post(body)).status).toBe(202);
    expect(h.handled).toHaveLength(1);
    const third = await h.post(body);
    expect(third.json).toMatchObject({ accepted: 0, ignored: expect.stringContaining('already accepted') });
    expect(h.handled).toHaveLength(1);
  });

  it('answers a second attempt while the first is being handled 503 + Retry-After, so the two are never both handled', async () => {
    const h = harness(memoryReplayStore());
    let release!: () => void;
    h.hold = new Promise((r) => (release = r));
    const first = h.post(event('EV-BUSY'));
    await expect.poll(async () => (await h.post(event('EV-BUSY'))).status).toBe(503);
    const second = await h.post(event('EV-BUSY'));
    expect(second.headers.get('retry-after')).toBe('10');
    expect(second.json).toMatchObject({ error: { code: 'unavailable', message: expect.stringContaining('being handled by another attempt') } });
    release();
    expect((await first).status).toBe(202);
    expect((await h.post(event('EV-BUSY'))).json).toMatchObject({ accepted: 0 });
    expect(h.handled).toHaveLength(1);
  });

  it('fails closed: when the store cannot be written the event is refused 503 (not acknowledged) and handled once it recovers', async () => {
    const inner = memoryReplayStore();
    let down = true;
    const flaky: ReplayStore = {
      ...inner,
      setIfAbsent: async (k, v, ttl) => {
        if (down) throw new Error('SQLITE_FULL: database or disk is full');
        return inner.setIfAbsent(k, v, ttl);
      },
    };
    const h = harness(flaky);
    const refused = await h.post(event('EV-DISK'));
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('5');
    expect(refused.json).toMatchObject({ error: { message: expect.stringContaining('replay memory cannot be read or written') } });
    expect(h.handled).toEqual([]);
    down = false;
    expect((await h.post(event('EV-DISK'))).status).toBe(202);
    expect(h.handled).toHaveLength(1);
  });

  it('never claims an event type it ignores (nothing is recorded for it)', async () => {
    const h = harness(memoryReplayStore());
    const ack = await h.post(event('EV-ACK', { type: 'incident.acknowledged' }));
    expect(ack.json).toMatchObject({ accepted: 0, ignored: expect.stringContaining('incident.acknowledged') });
    expect(h.handled).toEqual([]);
  });
});

describe('replay memory in the store', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'reprise-replay-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('the embedded store remembers accepted ids across a restart', async () => {
    const url = `sqlite://${join(dir, 'replay.sqlite')}`;
    let store = createStore(url, dir) as KeyValueStore & ReplayStore;
    expect((await harness(store).post(event('EV-DURABLE'))).status).toBe(202);
    await store.close();
    store = createStore(url, dir) as KeyValueStore & ReplayStore;
    const h = harness(store);
    expect((await h.post(event('EV-DURABLE'))).json).toMatchObject({ accepted: 0, ignored: expect.stringContaining('already accepted') });
    expect(h.handled).toEqual([]);
    await store.close();
  });

  it('set-if-absent holds one claim per key until it expires', async () => {
    const store = createStore(`sqlite://${join(dir, 'claims.sqlite')}`, dir);
    expect(await store.setIfAbsent!('k', { a: 1 }, 60_000)).toBe(true);
    expect(await store.setIfAbsent!('k', { a: 2 }, 60_000)).toBe(false);
    expect(await store.get('k')).toEqual({ a: 1 });
    expect(await store.setIfAbsent!('short', 1, 1)).toBe(true);
    await expect.poll(() => store.setIfAbsent!('short', 2, 60_000)).toBe(true);
    expect(await store.get('short')).toBe(2);
    await store.setExpiring!('k', { a: 3 }, 60_000);
    expect(await store.get('k')).toEqual({ a: 3 });
    await store.close();
  });
});

describe.skipIf(!redisAvailable())('replay memory on Redis, shared by two replicas', () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await startRedis({ durable: false });
  });
  afterAll(async () => redis?.stop());

  it('an event one replica accepted is a duplicate on the other; two concurrent deliveries are handled once', async () => {
    const a = createStore(redis.url, '') as KeyValueStore & ReplayStore;
    const b = createStore(redis.url, '') as KeyValueStore & ReplayStore;
    try {
      const one = harness(a);
      const two = harness(b);
      expect((await one.post(event('EV-HA'))).status).toBe(202);
      expect((await two.post(event('EV-HA'))).json).toMatchObject({ accepted: 0, ignored: expect.stringContaining('already accepted') });
      // Both held inside the handler: whichever claims second must not be handled too.
      let release!: () => void;
      one.hold = two.hold = new Promise((r) => (release = r));
      const racing = [one.post(event('EV-RACE')), two.post(event('EV-RACE'))];
      const loser = await Promise.race(racing);
      expect(loser.status).toBe(503);
      release();
      const both = await Promise.all(racing);
      expect(both.map((r) => r.status).sort()).toEqual([202, 503]);
      expect(one.handled.length + two.handled.length).toBe(2);
      expect(await a.setIfAbsent('raw', 1, 60_000)).toBe(true);
      expect(await b.setIfAbsent('raw', 2, 60_000)).toBe(false);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
