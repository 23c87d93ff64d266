/**
 * No starvation by unauthenticated senders (issue 20 item 5), on the real public port with the
 * real Slack receiver mounted: 200 slow senders — each announcing a 1 MiB body, sending a few
 * bytes, then stalling, from 200 addresses — on any route leave signed webhooks served; one
 * address cannot hold more than its share; a body that does not arrive in time is cut off.
 * Outcomes only: who was answered what, and how many bodies were being read at once (never
 * more than the verify pool's slots, which is what bounds their memory). Figures of memory and
 * latency are in the benchmark (`npm run bench`), not here.
 */
import { connect, type Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createSlackTransport, type SlackTransport } from '../../src/adapters/slack/slack-transport.js';
import { genericSignature } from '../../src/core/generic-source.js';
import { pagerDutySignature } from '../../src/core/pagerduty.js';
import { createHttpServer, type HttpServer } from '../../src/http/create-server.js';
import { createBotMetrics, type BotMetrics } from '../../src/http/metrics.js';
import { combineReadiness } from '../../src/http/readiness.js';
import { ManualClock } from '../../src/ports/clock.js';
import { silentLogger } from '../../src/ports/logger.js';
import { startSlackFake, type SlackFake } from '../fakes/slack-fake.js';
import { sign } from '../fakes/slack-requests.js';

const TOKEN = 'bearer-token-for-starvation';
const PD_SECRET = 'pagerduty-secret-for-starvation';
const HMAC_SECRET = 'generic-secret-for-starvation';
const SLOTS = 16;
const SENDERS = 200;

let fake: SlackFake;
let slack: SlackTransport;
let http: HttpServer;
let metrics: BotMetrics;
let port: number;
const clock = new ManualClock(new Date());
const accepted: string[] = [];

beforeAll(async () => {
  fake = await startSlackFake({ botUserId: 'U0REPRISE' });
  const handle = createSlackTransport({
    botToken: fake.botToken,
    signingSecret: fake.signingSecret,
    apiUrl: fake.apiUrl,
    defaultChannel: 'C0INCIDENTS',
    logger: silentLogger,
    retries: 0,
  });
  slack = handle.transport;
  metrics = createBotMetrics({ defaults: false });
  http = createHttpServer({
    bearerToken: TOKEN,
    pagerDutySecret: PD_SECRET,
    genericSources: {
      signed: { alertname: 'name', resolved_values: ['ok'], labels: {}, hmac_secret: HMAC_SECRET, hmac_header: 'x-signature' },
    },
    bodyLimitBytes: 1 << 20,
    // The senders name the Service (`Host: reprise`), as in-cluster ones do.
    hosts: { names: ['reprise'] },
    verifyPoolSlots: SLOTS,
    // One address may hold more than the pool: here the attack comes from many addresses.
    maxPendingPerPeer: SENDERS * 2,
    logger: silentLogger,
    metrics,
    clock,
    readiness: () => combineReadiness([]),
    ...(handle.mount ? { mount: handle.mount } : {}),
    onAlertmanager: async (incidents) => {
      accepted.push(...incidents.map((i) => i.source));
      return { accepted: incidents.length };
    },
  });
  ({ port } = await http.listen(0, '127.0.0.1'));
  await slack.start(async () => undefined);
});

afterAll(async () => {
  await slack?.close();
  await http?.close();
  await fake?.close();
});

interface Slow {
  socket: Socket;
  /** The status line once answered (`HTTP/1.1 503 …`), or undefined while still held. */
  answer(): number | undefined;
  closed(): boolean;
}

const attackers: Slow[] = [];
afterEach(() => {
  for (const a of attackers.splice(0)) a.socket.destroy();
});

/** A sender announcing a 1 MiB body, sending its first bytes and then nothing, from `localAddress`. */
function slowSender(path: string, headers: Record<string, string>, localAddress: string): Slow {
  const socket = connect({ port, host: '127.0.0.1', localAddress });
  let text = '';
  let closed = false;
  socket.setEncoding('utf8');
  socket.on('data', (d: string) => (text += d));
  socket.on('error', () => undefined);
  socket.on('close', () => (closed = true));
  const head = Object.entries({ 'content-type': 'application/json', 'content-length': String(1 << 20), ...headers })
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  socket.write(`POST ${path} HTTP/1.1\r\nhost: reprise\r\n${head}\r\n{"event":{"id":"`);
  const slow: Slow = {
    socket,
    answer: () => {
      const m = /^HTTP\/1\.1 (\d{3})/.exec(text);
      return m ? Number(m[1]) : undefined;
    },
    closed: () => closed,
  };
  attackers.push(slow);
  return slow;
}

const now = (): string => String(Math.floor(Date.now() / 1000));
/** Headers that pass each route's early checks (a signature of the right shape, a fresh timestamp): only the body can fail them. */
const ROUTES: Record<string, { path: string; headers: () => Record<string, string> }> = {
  pagerduty: { path: '/webhook/pagerduty', headers: () => ({ 'x-pagerduty-signature': `v1=${'a'.repeat(64)}` }) },
  generic: { path: '/webhook/generic/signed', headers: () => ({ 'x-signature': 'b'.repeat(64) }) },
  slack: { path: '/slack/events', headers: () => ({ 'x-slack-request-timestamp': now(), 'x-slack-signature': `v0=${'c'.repeat(64)}` }) },
  alertmanager: { path: '/webhook/alertmanager', headers: () => ({ authorization: 'Bearer not-the-token-at-all' }) },
};

async function gauge(name: string, labels = ''): Promise<number> {
  const text = await metrics.render();
  const m = new RegExp(`^${name}${labels.replace(/[{}]/g, '\\$&')} (\\S+)$`, 'm').exec(text);
  return m ? Number(m[1]) : Number.NaN;
}

/** The signed webhooks that must be served whatever the slow senders do. */
async function signedWebhooks(): Promise<Record<string, number>> {
  const pd = JSON.stringify({
    event: {
      id: `EV-${Math.random()}`,
      event_type: 'incident.triggered',
      occurred_at: clock.now().toISOString(),
      data: { id: `P${Math.random()}`, title: 'checkout-api down', created_at: clock.now().toISOString() },
    },
  });
  // A new delivery each time: the same signed body again is a replay (acknowledged, not recorded).
  const generic = JSON.stringify({ name: 'UptimeCheckFailed', status: 'down', check: `${Math.random()}` });
  const am = JSON.stringify({
    version: '4',
    status: 'firing',
    alerts: [{ status: 'firing', labels: { alertname: 'KubePodCrashLooping', namespace: 'shop' }, annotations: {}, startsAt: clock.now().toISOString() }],
  });
  const challenge = sign(fake.signingSecret, JSON.stringify({ type: 'url_verification', challenge: 'still-here' }), 'application/json');
  const base = `http://127.0.0.1:${port}`;
  const json = { 'content-type': 'application/json' };
  const [p, g, a, s] = await Promise.all([
    fetch(`${base}/webhook/pagerduty`, { method: 'POST', headers: { ...json, 'x-pagerduty-signature': pagerDutySignature(PD_SECRET, pd) }, body: pd }),
    fetch(`${base}/webhook/generic/signed`, { method: 'POST', headers: { ...json, 'x-signature': genericSignature(HMAC_SECRET, generic) }, body: generic }),
    fetch(`${base}/webhook/alertmanager`, { method: 'POST', headers: { ...json, authorization: `Bearer ${TOKEN}` }, body: am }),
    fetch(`${base}/slack/events`, { method: 'POST', headers: challenge.headers, body: challenge.body }),
  ]);
  expect(await s.json()).toEqual({ challenge: 'still-here' });
  return { pagerduty: p.status, generic: g.status, alertmanager: a.status, slack: s.status };
}

describe('200 slow senders on one route', () => {
  it.each(Object.keys(ROUTES))('on %s: signed webhooks are still served, and at most the pool is read at once', { timeout: 60_000 }, async (route) => {
    const { path, headers } = ROUTES[route]!;
    const shed = async (): Promise<number> =>
      (await gauge('reprise_http_shed_total', `{route="${route}",reason="pool_full"}`)) +
      (await gauge('reprise_http_shed_total', `{route="${route}",reason="slowest"}`));
    const shedBefore = await shed();
    const slow = Array.from({ length: SENDERS }, (_, i) => slowSender(path, headers(), `127.0.${1 + Math.floor(i / 250)}.${1 + (i % 250)}`));
    // Every sender was either answered (refused early, or the pool was full) or is being read.
    await expect
      .poll(async () => slow.filter((s) => s.answer() !== undefined).length + (await gauge('reprise_http_unverified_bodies')), { timeout: 20_000 })
      .toBe(SENDERS);
    const reading = await gauge('reprise_http_unverified_bodies');
    expect(reading).toBeLessThanOrEqual(SLOTS);
    if (route === 'alertmanager') {
      // A bearer route refuses a wrong token before reading a byte: nothing is held at all.
      expect(reading).toBe(0);
      expect(slow.every((s) => s.answer() === 401)).toBe(true);
    } else {
      expect(reading).toBe(SLOTS);
      expect(slow.filter((s) => s.answer() === 503)).toHaveLength(SENDERS - SLOTS);
      // Each newcomer past the slots was refused, or took the slot of one furthest from done.
      expect((await shed()) - shedBefore).toBe(SENDERS - SLOTS);
    }
    // A signed webhook takes the slot of the sender furthest from done.
    clock.advance(2000);
    const before = accepted.length;
    expect(await signedWebhooks()).toEqual({ pagerduty: 202, generic: 202, alertmanager: 202, slack: 200 });
    expect(accepted.slice(before).sort()).toEqual(['alertmanager', 'generic:signed', 'pagerduty']);
    // Those cut off (refused while the pool was full, or shed as the slowest to make room) were
    // told so and disconnected; the pool never held more than its slots.
    expect(await gauge('reprise_http_unverified_bodies')).toBeLessThanOrEqual(SLOTS);
    if (route !== 'alertmanager') {
      expect((await shed()) - shedBefore).toBeGreaterThanOrEqual(SENDERS - SLOTS + 1);
      await expect.poll(() => slow.filter((s) => s.closed()).length).toBeGreaterThanOrEqual(SENDERS - SLOTS + 1);
    }
  });
});

describe('one address', () => {
  it('holds at most server.max_pending_per_peer requests in progress; other addresses are served', { timeout: 60_000 }, async () => {
    const peerCap = createHttpServer({
      bearerToken: TOKEN,
      pagerDutySecret: PD_SECRET,
      bodyLimitBytes: 1 << 20,
      hosts: { names: ['reprise'] },
      maxPendingPerPeer: 10,
      logger: silentLogger,
      metrics: createBotMetrics({ defaults: false }),
      readiness: () => combineReadiness([]),
      onAlertmanager: async (incidents) => ({ accepted: incidents.length }),
    });
    const other = await peerCap.listen(0, '127.0.0.1');
    const was = port;
    port = other.port;
    try {
      const slow = Array.from({ length: 50 }, () => slowSender('/webhook/pagerduty', ROUTES['pagerduty']!.headers(), '127.0.0.9'));
      await expect.poll(() => slow.filter((s) => s.answer() === 503).length, { timeout: 20_000 }).toBe(40);
      const pd = JSON.stringify({ event: { id: 'EV-PEER', event_type: 'incident.triggered', occurred_at: new Date().toISOString(), data: { id: 'PX' } } });
      const res = await fetch(`http://127.0.0.1:${port}/webhook/pagerduty`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-pagerduty-signature': pagerDutySignature(PD_SECRET, pd) },
        body: pd,
      });
      expect(res.status).toBe(202);
    } finally {
      port = was;
      for (const a of attackers.splice(0)) a.socket.destroy();
      await peerCap.close();
    }
  });
});

describe('the body deadline', () => {
  it('cuts off an authenticated sender whose body does not arrive in time (408, disconnected) and goes on serving', { timeout: 60_000 }, async () => {
    const deadline = createHttpServer({
      bearerToken: TOKEN,
      bodyLimitBytes: 1 << 20,
      hosts: { names: ['reprise'] },
      bodyTimeoutMs: 200,
      logger: silentLogger,
      metrics: createBotMetrics({ defaults: false }),
      readiness: () => combineReadiness([]),
      onAlertmanager: async (incidents) => ({ accepted: incidents.length }),
    });
    const other = await deadline.listen(0, '127.0.0.1');
    const was = port;
    port = other.port;
    try {
      const slow = slowSender('/webhook/alertmanager', { authorization: `Bearer ${TOKEN}` }, '127.0.0.1');
      await expect.poll(() => slow.answer(), { timeout: 10_000 }).toBe(408);
      await expect.poll(() => slow.closed(), { timeout: 10_000 }).toBe(true);
      const health = await fetch(`http://127.0.0.1:${port}/healthz`);
      expect(health.status).toBe(200);
    } finally {
      port = was;
      await deadline.close();
    }
  });
});
