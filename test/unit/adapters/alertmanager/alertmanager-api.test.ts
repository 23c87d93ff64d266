/**
 * Alertmanager's v2 API client against a real HTTP server on 127.0.0.1 that answers like
 * Alertmanager — or like a broken one: every failure is a coded error, never a crash or a hang,
 * and the reconcile timer logs it and tries again next round.
 */
import { createServer, type Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { AlertmanagerApi } from '../../../../src/adapters/alertmanager/alertmanager-api.js';
import { RepriseError } from '../../../../src/core/errors.js';
import { startNoiseTimers } from '../../../../src/runtime/noise-timers.js';
import { configSchema } from '../../../../src/config/schema.js';
import { fixedSnapshot } from '../../recall/recall-fixtures.js';
import { botHarness, recordingLogger } from '../../bot/bot-harness.js';

type Handler = (method: string, url: string, body: string) => { status: number; body: string } | 'hang';
let server: Server | undefined;
const received: Array<{ method: string; url: string; body: string }> = [];

async function fakeAm(handler: Handler): Promise<string> {
  received.length = 0;
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      received.push({ method: req.method ?? '', url: req.url ?? '', body });
      const r = handler(req.method ?? '', req.url ?? '', body);
      if (r === 'hang') return;
      res.writeHead(r.status, { 'content-type': 'application/json' }).end(r.body);
    });
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
}

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r) ?? r(undefined));
  server = undefined;
});

const ALERTS = [
  { fingerprint: 'aaa', labels: { alertname: 'X', pod: 'p-1' }, status: { state: 'suppressed', silencedBy: ['s1'], inhibitedBy: [] } },
  { fingerprint: 'bbb', labels: { alertname: 'Y' }, status: { state: 'suppressed', silencedBy: [], inhibitedBy: ['ccc'] } },
  { fingerprint: 'ddd', labels: { alertname: 'Z' }, status: { state: 'active', silencedBy: [], inhibitedBy: [] } },
  { labels: { alertname: 'no fingerprint' } },
];

describe('AlertmanagerApi', () => {
  it('reads alerts with their silenced / inhibited state, and silences one alert by its exact labels', async () => {
    const url = await fakeAm((method, path) => {
      if (method === 'GET' && path.startsWith('/api/v2/alerts')) return { status: 200, body: JSON.stringify(ALERTS) };
      if (method === 'POST' && path === '/api/v2/silences') return { status: 200, body: JSON.stringify({ silenceID: 'sil-9' }) };
      return { status: 404, body: '{}' };
    });
    const api = new AlertmanagerApi({ url, timeoutMs: 2000 });
    expect(await api.alerts()).toEqual([
      { fingerprint: 'aaa', state: 'suppressed', silenced: true, inhibited: false },
      { fingerprint: 'bbb', state: 'suppressed', silenced: false, inhibited: true },
      { fingerprint: 'ddd', state: 'active', silenced: false, inhibited: false },
    ]);
    expect(
      await api.silenceAlert({
        fingerprint: 'aaa',
        endsAt: '2030-01-01T00:00:00.000Z',
        createdBy: 'ann via Reprise (slack)',
        comment: 'Silenced from Reprise by ann.',
      }),
    ).toEqual({ id: 'sil-9', matchers: ['alertname="X"', 'pod="p-1"'], alerts: 1 });
    const post = JSON.parse(received.at(-1)!.body) as Record<string, unknown>;
    expect(post).toMatchObject({ endsAt: '2030-01-01T00:00:00.000Z', createdBy: 'ann via Reprise (slack)', comment: 'Silenced from Reprise by ann.' });
    expect(post['matchers']).toEqual([
      { name: 'alertname', value: 'X', isRegex: false, isEqual: true },
      { name: 'pod', value: 'p-1', isRegex: false, isEqual: true },
    ]);
  });

  it('silences the alerts of a trigger by the labels they all share', async () => {
    // The alerts of a trigger (pods of one deployment): the labels they all share, so the
    // silence covers the same alerts as the Reprise one; one it no longer holds is left out.
    const pods = [
      { fingerprint: 'p1', labels: { alertname: 'K', namespace: 'shop', pod: 'web-1', container: 'web' }, status: { state: 'active' } },
      { fingerprint: 'p2', labels: { alertname: 'K', namespace: 'shop', pod: 'web-2', container: 'web' }, status: { state: 'active' } },
      { fingerprint: 'other', labels: { alertname: 'K', namespace: 'cart', pod: 'cart-1', container: 'web' }, status: { state: 'active' } },
    ];
    const url2 = await fakeAm((method, path) => {
      if (method === 'GET' && path.startsWith('/api/v2/alerts')) return { status: 200, body: JSON.stringify(pods) };
      if (method === 'POST' && path === '/api/v2/silences') return { status: 200, body: JSON.stringify({ silenceID: 'sil-10' }) };
      return { status: 404, body: '{}' };
    });
    const two = await new AlertmanagerApi({ url: url2, timeoutMs: 2000 }).silenceAlert({
      fingerprint: 'p1',
      fingerprints: ['p1', 'p2', 'resolved-already'],
      endsAt: '2030-01-01T00:00:00.000Z',
      createdBy: 'a',
      comment: 'c',
    });
    expect(two).toEqual({ id: 'sil-10', matchers: ['alertname="K"', 'namespace="shop"', 'container="web"'], alerts: 2 });
  });

  it('turns every failure into a coded error: down, 500, not JSON, not a list, an unknown alert, a hang', async () => {
    const down = new AlertmanagerApi({ url: 'http://127.0.0.1:9', timeoutMs: 2000 });
    await expect(down.alerts()).rejects.toMatchObject({ code: 'unavailable' });
    const cases: Array<[Handler, RegExp]> = [
      [() => ({ status: 500, body: 'boom' }), /answered 500/],
      [() => ({ status: 200, body: '<html>' }), /not JSON/],
      [() => ({ status: 200, body: '{"alerts":[]}' }), /did not answer a list/],
      [() => 'hang', /did not answer/],
    ];
    for (const [handler, message] of cases) {
      const url = await fakeAm(handler);
      const err = await new AlertmanagerApi({ url, timeoutMs: 300 }).alerts().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(RepriseError);
      expect((err as RepriseError).message).toMatch(message);
      server?.closeAllConnections();
      await new Promise((r) => server!.close(r));
      server = undefined;
    }
    const url = await fakeAm(() => ({ status: 200, body: JSON.stringify(ALERTS) }));
    await expect(
      new AlertmanagerApi({ url, timeoutMs: 2000 }).silenceAlert({ fingerprint: 'gone', endsAt: '2030-01-01T00:00:00Z', createdBy: 'a', comment: 'c' }),
    ).rejects.toMatchObject({ code: 'not_found' });
  });

  it('an unreachable Alertmanager is logged once and retried each round; the bot goes on', async () => {
    let calls = 0;
    const warnings: unknown[] = [];
    const h = await botHarness({ snapshot: fixedSnapshot([], {}) });
    const config = configSchema.parse({ alertmanager: { url: 'http://127.0.0.1:9', reconcile_interval: '50ms' } });
    const timers = startNoiseTimers({
      push: (intents) => h.bot.handle(intents),
      idle: () => h.bot.idle(),
      config,
      clock: h.clock,
      logger: recordingLogger([], warnings),
      alertmanager: {
        alerts: async () => {
          calls += 1;
          throw new RepriseError('unavailable', 'Alertmanager at http://127.0.0.1:9 did not answer');
        },
      },
    });
    // One round at start, then three more stepped on the bot's clock.
    await h.clock.advanceAsync(0);
    expect(calls).toBe(1);
    for (let n = 1; n <= 3; n++) {
      await h.clock.advanceAsync(50);
      expect(calls).toBe(n + 1);
    }
    await timers.stop();
    expect(warnings).toHaveLength(1);
    expect(h.errors).toEqual([]);
  });
});
