/**
 * PagerDuty and Grafana webhooks against the real `reprise serve`, with the vendors' documented
 * payloads (test/fixtures/sources): opens and resolves land in the ledger; a forged or missing
 * PagerDuty signature, a missing secret, a missing bearer token or a malformed body is refused
 * with a clear 4xx and records nothing.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { genericSignature } from '../../src/core/generic-source.js';
import { pagerDutySignature } from '../../src/core/pagerduty.js';
import { request, type RawResponse } from './helpers/alerts.js';
import { cleanup, makeTmpDir, REPO_ROOT, runCli, spawnBot } from './helpers/spawn-bot.js';

afterEach(cleanup);

const SECRET = 'pd-webhook-secret';
const TOKEN = 'hook-token-for-the-tests';
const fixture = (name: string): Buffer => readFileSync(new URL(`../fixtures/sources/${name}`, import.meta.url));
/** A PagerDuty fixture as PagerDuty would send it now: `occurred_at` inside the replay window, optionally another event id. */
const fresh = (name: string, opts: { id?: string; at?: Date } = {}): Buffer => {
  const body = JSON.parse(fixture(name).toString('utf8')) as { event: { id: string; occurred_at: string } };
  body.event.occurred_at = (opts.at ?? new Date()).toISOString();
  if (opts.id) body.event.id = opts.id;
  return Buffer.from(JSON.stringify(body));
};

function postPagerDuty(url: string, body: Buffer | string, signature?: string, path = '/webhook/pagerduty'): Promise<RawResponse> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (signature !== undefined) headers['x-pagerduty-signature'] = signature;
  return request(url, { path, headers, body });
}

function postGrafana(url: string, body: Buffer | string, token = TOKEN): Promise<RawResponse> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (token) headers['authorization'] = `Bearer ${token}`;
  return request(url, { path: '/webhook/grafana', headers, body });
}

/** The ledger's open / resolve events, read back through the CLI. */
async function ledgerEvents(dir: string, types: readonly string[] = ['open', 'resolve']): Promise<Array<Record<string, unknown>>> {
  const out = await runCli(['ledger', 'events', '--json'], { env: { REPRISE_DATA_DIR: dir }, timeoutMs: 60_000 });
  expect(out.code, out.stderr).toBe(0);
  return out.stdout
    .split('\n')
    .filter((l) => l.trim().startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((e) => types.includes(String(e['type'])));
}

describe('POST /webhook/pagerduty', () => {
  it(
    'records triggered as an open, acknowledged as an ack, annotated as a note, resolved as its resolve; other event types are acknowledged and ignored',
    { timeout: 60_000 },
    async () => {
      const dir = makeTmpDir();
      const bot = await spawnBot({ dataDir: dir, env: { REPRISE_PAGERDUTY_SECRET: SECRET } });
      const triggered = fresh('pagerduty-incident-triggered.json');
      const r1 = await postPagerDuty(bot.url, triggered, `v1=${'0'.repeat(64)},${pagerDutySignature(SECRET, triggered)}`);
      expect(r1.status, r1.text).toBe(202);
      expect(r1.json).toMatchObject({ accepted: 1 });

      const acked = fresh('pagerduty-incident-acknowledged.json');
      const r2 = await postPagerDuty(bot.url, acked, pagerDutySignature(SECRET, acked));
      expect(r2.status, r2.text).toBe(202);
      expect(r2.json).toMatchObject({ accepted: 1 });
      const annotated = fresh('pagerduty-incident-annotated.json');
      expect((await postPagerDuty(bot.url, annotated, pagerDutySignature(SECRET, annotated))).status).toBe(202);
      const other = fresh('pagerduty-incident-priority-updated.json');
      const r4 = await postPagerDuty(bot.url, other, pagerDutySignature(SECRET, other));
      expect(r4.status, r4.text).toBe(202);
      expect(r4.json).toMatchObject({ accepted: 0, ignored: expect.stringContaining('incident.priority_updated') });
      await bot.waitForLog((l) => typeof l.msg === 'string' && l.msg.startsWith('pagerduty webhook ignored'));

      const resolved = fresh('pagerduty-incident-resolved.json');
      const r3 = await postPagerDuty(bot.url, resolved, pagerDutySignature(SECRET, resolved));
      expect(r3.status, r3.text).toBe(202);
      await bot.stop();

      const mine = await ledgerEvents(dir, ['open', 'ack', 'note', 'resolve']);
      expect(mine.map((e) => e['type'])).toEqual(['open', 'ack', 'note', 'resolve']);
      // One trigger throughout: the PagerDuty service's; the ack and the note by PagerDuty's users.
      expect(new Set(mine.map((e) => e['triggerKey']))).toEqual(new Set([mine[0]!['triggerKey']]));
      expect(String(mine[0]!['triggerKey'])).toContain('pagerduty_service');
      expect(mine[1]).toMatchObject({ via: 'pagerduty', user: expect.stringMatching(/^pagerduty:/) });
      expect(mine[2]).toMatchObject({ via: 'pagerduty' });
    },
  );

  it('a replayed signed event opens nothing, across a restart; an old one is refused with the reason', { timeout: 90_000 }, async () => {
    const dir = makeTmpDir();
    let bot = await spawnBot({ dataDir: dir, env: { REPRISE_PAGERDUTY_SECRET: SECRET } });
    const triggered = fresh('pagerduty-incident-triggered.json', { id: 'EV-TRIGGER-1' });
    const resolved = fresh('pagerduty-incident-resolved.json', { id: 'EV-RESOLVE-1' });
    expect((await postPagerDuty(bot.url, triggered, pagerDutySignature(SECRET, triggered))).status).toBe(202);
    expect((await postPagerDuty(bot.url, resolved, pagerDutySignature(SECRET, resolved))).status).toBe(202);
    // The captured trigger, replayed after its resolve: acknowledged, and ignored.
    const replay = await postPagerDuty(bot.url, triggered, pagerDutySignature(SECRET, triggered));
    expect(replay.status, replay.text).toBe(202);
    expect(replay.json).toMatchObject({ accepted: 0, ignored: expect.stringContaining('duplicate delivery: event EV-TRIGGER-1 was already accepted') });
    await bot.stop();
    // The memory is in the store: a restarted bot still knows the id.
    bot = await spawnBot({ dataDir: dir, env: { REPRISE_PAGERDUTY_SECRET: SECRET } });
    const again = await postPagerDuty(bot.url, triggered, pagerDutySignature(SECRET, triggered));
    expect(again.status, again.text).toBe(202);
    expect(again.json).toMatchObject({ accepted: 0 });
    // A genuine event signed long ago (a capture older than the window) is refused, whatever its id.
    const old = fresh('pagerduty-incident-triggered.json', { id: 'EV-OLD', at: new Date(Date.now() - 2 * 3_600_000) });
    const refused = await postPagerDuty(bot.url, old, pagerDutySignature(SECRET, old));
    expect(refused.status).toBe(400);
    expect(refused.json).toMatchObject({
      error: { message: expect.stringMatching(/event\.occurred_at is 7\d{3} s old, older than server\.replay_window \(3600 s\)/) },
    });
    await bot.stop();
    expect((await ledgerEvents(dir)).map((e) => e['type'])).toEqual(['open', 'resolve']);
  });

  it('refuses a forged, missing or wrong-secret signature and a malformed body, recording nothing', { timeout: 60_000 }, async () => {
    const dir = makeTmpDir();
    const bot = await spawnBot({ dataDir: dir, env: { REPRISE_PAGERDUTY_SECRET: SECRET } });
    const body = fixture('pagerduty-incident-triggered.json');
    const missing = await postPagerDuty(bot.url, body);
    expect(missing.status).toBe(401);
    expect(missing.json).toMatchObject({ error: { code: 'unauthorized', message: expect.stringContaining('missing X-PagerDuty-Signature') } });
    const forged = await postPagerDuty(bot.url, body, `v1=${'f'.repeat(64)}`);
    expect(forged.status).toBe(401);
    expect((await postPagerDuty(bot.url, body, pagerDutySignature('not-the-secret', body))).status).toBe(401);
    // Signed for another body: a tampered payload.
    const tampered = Buffer.from(body.toString('utf8').replace('P1', 'P5'));
    expect((await postPagerDuty(bot.url, tampered, pagerDutySignature(SECRET, body))).status).toBe(401);

    const notJson = Buffer.from('{"event": ');
    const bad = await postPagerDuty(bot.url, notJson, pagerDutySignature(SECRET, notJson));
    expect(bad.status, bad.text).toBe(400);
    const noId = Buffer.from(JSON.stringify({ event: { event_type: 'incident.triggered', data: { title: 'x' } } }));
    const invalid = await postPagerDuty(bot.url, noId, pagerDutySignature(SECRET, noId));
    expect(invalid.status, invalid.text).toBe(400);
    expect(invalid.json).toMatchObject({ error: { code: 'invalid_payload', message: expect.stringContaining('event.data.id') } });
    await bot.stop();
    expect(await ledgerEvents(dir)).toEqual([]);
  });

  it('refuses everything with a clear message when no secret is configured (secure by default)', { timeout: 60_000 }, async () => {
    const dir = makeTmpDir();
    const bot = await spawnBot({ dataDir: dir });
    const body = fixture('pagerduty-incident-triggered.json');
    const r = await postPagerDuty(bot.url, body, pagerDutySignature('', body));
    expect(r.status).toBe(401);
    expect(r.json).toMatchObject({ error: { code: 'unauthorized', message: expect.stringContaining('REPRISE_PAGERDUTY_SECRET') } });
    await bot.stop();
    expect(await ledgerEvents(dir)).toEqual([]);
  });
});

describe('POST /webhook/grafana', () => {
  it('records a firing alert and its resolve, behind the bearer token; malformed bodies get 400', { timeout: 60_000 }, async () => {
    const dir = makeTmpDir();
    const bot = await spawnBot({ dataDir: dir, env: { REPRISE_BEARER_TOKEN: TOKEN } });
    const firing = fixture('grafana-firing.json');
    expect((await postGrafana(bot.url, firing, '')).status).toBe(401);
    expect((await postGrafana(bot.url, firing, 'wrong')).status).toBe(401);
    const bad = await postGrafana(bot.url, JSON.stringify({ receiver: 'reprise', alerts: [{ status: 'pending', labels: {} }] }));
    expect(bad.status, bad.text).toBe(400);
    expect(bad.json).toMatchObject({ error: { code: 'invalid_payload', message: expect.stringContaining('alerts[0]') } });

    const r1 = await postGrafana(bot.url, firing);
    expect(r1.status, r1.text).toBe(202);
    expect(r1.json).toMatchObject({ accepted: 1 });
    const r2 = await postGrafana(bot.url, fixture('grafana-resolved.json'));
    expect(r2.status, r2.text).toBe(202);
    await bot.stop();
    const events = await ledgerEvents(dir);
    expect(events.map((e) => e['type'])).toEqual(['open', 'resolve']);
    expect(JSON.stringify(events[0])).toContain('b3c1e2f4a5d6c7e8');
    expect(JSON.stringify(events[0])).toContain('grafana');
  });
});

describe('POST /webhook/grafana: what Grafana sends, on the card', () => {
  it("answers the contact point's Test button 202 with the reason and records nothing", { timeout: 60_000 }, async () => {
    const dir = makeTmpDir();
    const bot = await spawnBot({ dataDir: dir, env: { REPRISE_BEARER_TOKEN: TOKEN } });
    for (const name of ['grafana-test-notification.json', 'grafana-test-notification-custom.json']) {
      const r = await postGrafana(bot.url, fixture(name));
      expect(r.status, r.text).toBe(202);
      expect(r.json).toMatchObject({ accepted: 0, ignored: expect.stringContaining('Grafana contact-point test notification') });
    }
    await bot.waitForLog((l) => typeof l.msg === 'string' && l.msg.startsWith('grafana webhook ignored'));
    await bot.stop();
    expect(await ledgerEvents(dir)).toEqual([]);
    expect(bot.transcriptLines()).toEqual([]);
  });

  it(
    'posts two rules sharing an alertname as two threads whose cards carry the dashboard, the silence link and the value; links.allowed_hosts holds',
    { timeout: 90_000 },
    async () => {
      const dir = makeTmpDir();
      const config = join(dir, 'reprise.yaml');
      // Two threads, one per rule: grouping (one thread per notification) is tested on its own.
      writeFileSync(
        config,
        `catalog:\n  dir: ${JSON.stringify(join(REPO_ROOT, 'catalog'))}\nlinks:\n  allowed_hosts: [grafana.example.org]\ntrigger:\n  coalesce:\n    enabled: false\n`,
      );
      const bot = await spawnBot({ dataDir: dir, env: { REPRISE_BEARER_TOKEN: TOKEN }, args: ['--config', config] });
      const r = await postGrafana(bot.url, fixture('grafana-two-rules.json'));
      expect(r.status, r.text).toBe(202);
      expect(r.json).toMatchObject({ accepted: 2 });
      const lines = await bot.waitForTranscript((ls) => ls.filter((l) => l.kind === 'rca').length === 2, 30_000);
      const cards = lines.filter((l) => l.kind === 'rca');
      expect(new Set(cards.map((c) => c.triggerKey)).size).toBe(2);
      const orders = cards.find((c) => c.text.includes('No orders recorded for 10 minutes'))!;
      expect(orders.text).toContain('The orders-per-minute query returned no data');
      expect(orders.text).toContain('Value: A=0, B=14.2031');
      expect(orders.text).toContain('dashboard https://grafana.example.org/d/shop-overview?orgId=1');
      expect(orders.text).toContain('silence https://grafana.example.org/alerting/silence/new?');
      expect(orders.text).toContain('image https://grafana.example.org/public/img/attachments/9f2c1d0e.png');
      // runbooks.example.org is not on the list: not linked, and the thread says so.
      expect(orders.text).not.toContain('https://runbooks.example.org');
      expect(orders.text).toContain('links not shown runbook_url: its host is not in links.allowed_hosts');
      // Each card names its rule: two DatasourceNoData cards read apart.
      expect(orders.text.split('\n')[0]).toBe('🔍 DatasourceNoData — Shop/Orders per minute · severity warning · 🚨 firing');
      const payments = cards.find((c) => c !== orders)!;
      expect(payments.text).toContain('[FIRING:2] DatasourceNoData Shop (prom-shop A)');
      expect(payments.text.split('\n')[0]).toBe('🔍 DatasourceNoData — Shop/Payments per minute · severity warning · 🚨 firing');
      await bot.stop();
    },
  );
});

describe('POST /webhook/generic/<name>', () => {
  const mapping = (extra: string) =>
    `      alerts: checks\n      alertname: name\n      status: status\n      resolved_values: [up]\n      fingerprint: id\n      title: summary\n      message: detail.reason\n      severity: level\n      starts_at: detail.since\n      labels:\n        namespace: namespace\n        service: service\n${extra}`;

  function configFile(dir: string): string {
    const file = join(dir, 'reprise.yaml');
    writeFileSync(
      file,
      `catalog:\n  dir: ${JSON.stringify(join(REPO_ROOT, 'catalog'))}\nserver:\n  bearer_token: ${TOKEN}\n  generic_webhooks:\n    uptime:\n${mapping('')}    signed:\n${mapping(`      hmac_secret: ${SECRET}\n      hmac_header: x-hub-signature-256\n`)}    stamped:\n${mapping(`      hmac_secret: ${SECRET}\n      hmac_header: x-hub-signature-256\n      timestamp_header: x-hub-timestamp\n`)}`,
    );
    return file;
  }

  it('maps a body by dot-paths: bearer for a plain source, HMAC for a signed one; forged or unknown refused', { timeout: 60_000 }, async () => {
    const dir = makeTmpDir();
    const bot = await spawnBot({ dataDir: dir, args: ['--config', configFile(dir)] });
    const down = fixture('generic-uptime-down.json');
    const post = (name: string, body: Buffer | string, headers: Record<string, string>) =>
      request(bot.url, { path: `/webhook/generic/${name}`, headers: { 'content-type': 'application/json', ...headers }, body });
    expect((await post('uptime', down, {})).status).toBe(401);
    expect((await post('nope', down, { authorization: `Bearer ${TOKEN}` })).status).toBe(404);
    expect((await post('signed', down, { 'x-hub-signature-256': `sha256=${genericSignature('forged', down)}` })).status).toBe(401);
    expect((await post('signed', down, { authorization: `Bearer ${TOKEN}` })).status).toBe(401);
    const bad = await post('uptime', JSON.stringify({ checks: [{ id: 'x' }] }), { authorization: `Bearer ${TOKEN}` });
    expect(bad.status, bad.text).toBe(400);
    expect(bad.json).toMatchObject({ error: { code: 'invalid_payload', message: expect.stringContaining('alertname') } });

    const r1 = await post('uptime', down, { authorization: `Bearer ${TOKEN}` });
    expect(r1.status, r1.text).toBe(202);
    expect(r1.json).toMatchObject({ accepted: 1 });
    const up = fixture('generic-uptime-up.json');
    const r2 = await post('uptime', up, { authorization: `Bearer ${TOKEN}` });
    expect(r2.status, r2.text).toBe(202);
    const signedDown = Buffer.from(down.toString('utf8').replace('chk-4821', 'chk-9999'));
    const r3 = await post('signed', signedDown, { 'x-hub-signature-256': `sha256=${genericSignature(SECRET, signedDown)}` });
    expect(r3.status, r3.text).toBe(202);
    await bot.stop();
    const events = await ledgerEvents(dir);
    expect(events.map((e) => e['type'])).toEqual(['open', 'resolve', 'open']);
    expect(JSON.stringify(events[0])).toContain('chk-4821');
    expect(JSON.stringify(events[1])).toContain('chk-4821');
    expect(JSON.stringify(events[2])).toContain('chk-9999');
  });

  it('with timestamp_header: a signed timestamp inside the window, each signed delivery once; stale or unstamped refused', { timeout: 60_000 }, async () => {
    const dir = makeTmpDir();
    const bot = await spawnBot({ dataDir: dir, args: ['--config', configFile(dir)] });
    const down = fixture('generic-uptime-down.json');
    const post = (body: Buffer, ts: string | undefined, signature: string) =>
      request(bot.url, {
        path: '/webhook/generic/stamped',
        headers: { 'content-type': 'application/json', 'x-hub-signature-256': `sha256=${signature}`, ...(ts === undefined ? {} : { 'x-hub-timestamp': ts }) },
        body,
      });
    const now = String(Math.floor(Date.now() / 1000));
    const first = await post(down, now, genericSignature(SECRET, down, now));
    expect(first.status, first.text).toBe(202);
    expect(first.json).toMatchObject({ accepted: 1 });
    const replay = await post(down, now, genericSignature(SECRET, down, now));
    expect(replay.status, replay.text).toBe(202);
    expect(replay.json).toMatchObject({ accepted: 0, ignored: expect.stringContaining('duplicate delivery') });
    // The timestamp is signed: moving it forward to look fresh breaks the signature.
    const later = String(Number(now) + 60);
    expect((await post(down, later, genericSignature(SECRET, down, now))).status).toBe(401);
    const stale = String(Number(now) - 600);
    const old = await post(down, stale, genericSignature(SECRET, down, stale));
    expect(old.status).toBe(401);
    expect(old.json).toMatchObject({
      error: { message: expect.stringMatching(/x-hub-timestamp is 60\d s old, older than server\.generic_webhooks\.stamped\.replay_window/) },
    });
    expect((await post(down, undefined, genericSignature(SECRET, down))).status).toBe(401);
    await bot.stop();
    expect((await ledgerEvents(dir)).map((e) => e['type'])).toEqual(['open']);
  });
});
