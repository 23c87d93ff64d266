/**
 * Load shedding: past `maxPendingWebhooks` requests in progress, a webhook is answered 503 with
 * Retry-After at once, unread and unrecorded (so nothing acknowledged is lost: the sender
 * re-sends it), and the requests in progress finish normally.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createHttpServer, type HttpServer } from '../../../src/http/create-server.js';
import { createBotMetrics } from '../../../src/http/metrics.js';
import { silentLogger } from '../../../src/ports/logger.js';

const body = (name: string) =>
  JSON.stringify({
    version: '4',
    status: 'firing',
    alerts: [{ status: 'firing', labels: { alertname: name, namespace: 'shop' }, annotations: {}, startsAt: '2026-11-29T03:12:00Z' }],
  });

let srv: HttpServer | undefined;
afterEach(async () => {
  await srv?.close();
  srv = undefined;
});

describe('load shedding', () => {
  it('answers 503 + Retry-After past the cap, records nothing for it, and serves again once below', async () => {
    const handled: string[] = [];
    const release: Array<() => void> = [];
    const metrics = createBotMetrics({ defaults: false });
    srv = createHttpServer({
      bodyLimitBytes: 1 << 20,
      maxPendingWebhooks: 2,
      logger: silentLogger,
      metrics,
      readiness: () => ({ ready: true, reasons: [], checks: {} }),
      onAlertmanager: async (incidents) => {
        handled.push(incidents[0]!.alertname);
        await new Promise<void>((r) => release.push(r));
        return { accepted: incidents.length };
      },
    });
    const { port } = await srv.listen(0, '127.0.0.1');
    const post = (name: string, path = '/webhook/alertmanager') =>
      fetch(`http://127.0.0.1:${port}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: body(name) });

    const first = post('A');
    const second = post('B');
    await expect.poll(() => handled.length).toBe(2);

    const shed = await post('C');
    expect(shed.status).toBe(503);
    expect(shed.headers.get('retry-after')).toBe('5');
    expect(((await shed.json()) as { error: { code: string; message: string } }).error).toMatchObject({
      code: 'unavailable',
      message: expect.stringMatching(/busy: 2 webhooks in progress \(server\.max_pending_webhooks\)/),
    });
    expect(handled).toEqual(['A', 'B']);
    // Per source: Alertmanager's full slots do not hold Grafana back (nor would a trickling sender hold Alertmanager).
    const grafana = post('D', '/webhook/grafana');
    await expect.poll(() => handled.length).toBe(3);
    expect(handled).toEqual(['A', 'B', 'D']);

    // Health and metrics are not webhooks: never shed.
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(text).toMatch(/reprise_http_shed_total\{route="alertmanager",reason="route_busy"\} 1/);
    expect(text).toMatch(/reprise_http_shed_total\{route="grafana",reason="route_busy"\} 0/);
    expect(text).toMatch(/reprise_http_requests_total\{route="\/webhook\/alertmanager",method="POST",status="503"\} 1/);

    for (const r of release.splice(0)) r();
    expect((await first).status).toBe(202);
    expect((await second).status).toBe(202);
    expect((await grafana).status).toBe(202);

    const later = post('E');
    await expect.poll(() => handled.length).toBe(4);
    for (const r of release.splice(0)) r();
    expect((await later).status).toBe(202);
    expect(handled).toEqual(['A', 'B', 'D', 'E']);
  });

  it('frees the slot of a request that failed, so errors cannot wedge the server', async () => {
    srv = createHttpServer({
      bodyLimitBytes: 1 << 20,
      maxPendingWebhooks: 1,
      logger: silentLogger,
      metrics: createBotMetrics({ defaults: false }),
      readiness: () => ({ ready: true, reasons: [], checks: {} }),
      onAlertmanager: async () => {
        throw new Error('store down');
      },
    });
    const { port } = await srv.listen(0, '127.0.0.1');
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`http://127.0.0.1:${port}/webhook/alertmanager`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: body('X'),
      });
      expect(res.status).toBe(500);
    }
    const bad = await fetch(`http://127.0.0.1:${port}/webhook/alertmanager`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{' });
    expect(bad.status).toBe(400);
  });
});
