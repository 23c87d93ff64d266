/**
 * Webhook latency by source: every request that reaches a source's parser is timed under its
 * source (a bad body too), alerts are counted only once accepted, and a generic source's name —
 * configuration, or whatever a scanner puts in the path — never becomes a label.
 */
import { describe, expect, it } from 'vitest';
import { createHttpServer } from '../../../src/http/create-server.js';
import { createBotMetrics } from '../../../src/http/metrics.js';
import { combineReadiness } from '../../../src/http/readiness.js';
import { silentLogger } from '../../../src/ports/logger.js';
import { parseExposition } from '../../helpers/prom-text.js';

const TOKEN = 'metrics-test-token';
const amBody = (n: number) =>
  JSON.stringify({
    version: '4',
    status: 'firing',
    receiver: 'reprise',
    alerts: Array.from({ length: n }, (_, i) => ({
      status: 'firing',
      labels: { alertname: 'KubePodCrashLooping', namespace: 'shop', pod: `web-7d9f8c6b5-x2k4${i}` },
      annotations: {},
      startsAt: '2026-11-29T03:12:00Z',
      fingerprint: `fp${i}`,
    })),
  });

function server() {
  const metrics = createBotMetrics({ defaults: false });
  const srv = createHttpServer({
    bearerToken: TOKEN,
    bodyLimitBytes: 1024 * 1024,
    logger: silentLogger,
    genericSources: {
      'uptime-prod': { alertname: 'name', resolved_values: ['up'], status: 'state', labels: { service: 'service' }, hmac_header: 'x-signature' },
    },
    onAlertmanager: async (incidents) => ({ accepted: incidents.length }),
    readiness: () => combineReadiness([]),
    metrics,
  });
  const post = (path: string, body: string, auth = true) =>
    srv.app.request(path, { method: 'POST', headers: { 'content-type': 'application/json', ...(auth ? { authorization: `Bearer ${TOKEN}` } : {}) }, body });
  return { metrics, post, scrape: async () => parseExposition(await metrics.render()) };
}

describe('webhook metrics', () => {
  it('times each source under its own label and counts the alerts it accepted', async () => {
    const s = server();
    expect((await s.post('/webhook/alertmanager', amBody(3))).status).toBe(202);
    expect((await s.post('/webhook/alertmanager', amBody(1))).status).toBe(202);
    expect((await s.post('/webhook/grafana', amBody(2))).status).toBe(202);
    expect((await s.post('/webhook/generic/uptime-prod', JSON.stringify({ name: 'SiteDown', state: 'down', service: 'shop' }))).status).toBe(202);
    const m = await s.scrape();
    expect(m.value('reprise_webhook_duration_seconds_count', { source: 'alertmanager' })).toBe(2);
    expect(m.value('reprise_webhook_duration_seconds_bucket', { source: 'alertmanager', le: '+Inf' })).toBe(2);
    expect(m.value('reprise_webhook_alerts_total', { source: 'alertmanager' })).toBe(4);
    expect(m.value('reprise_webhook_duration_seconds_count', { source: 'grafana' })).toBe(1);
    expect(m.value('reprise_webhook_alerts_total', { source: 'grafana' })).toBe(2);
    expect(m.value('reprise_webhook_duration_seconds_count', { source: 'generic' })).toBe(1);
    expect(m.value('reprise_webhook_alerts_total', { source: 'generic' })).toBe(1);
    expect(m.value('reprise_webhook_duration_seconds_count', { source: 'pagerduty' })).toBe(0);
    expect(m.samples.some((x) => Object.values(x.labels).some((v) => v.includes('uptime')))).toBe(false);
  });

  it('times a refused body, counts no alerts for it, and leaves unauthenticated and unknown sources out', async () => {
    const s = server();
    expect((await s.post('/webhook/alertmanager', '{"alerts": 7}')).status).toBe(400);
    expect((await s.post('/webhook/alertmanager', amBody(1), false)).status).toBe(401);
    expect((await s.post('/webhook/generic/nope', '{}')).status).toBe(404);
    expect((await s.post('/webhook/pagerduty', '{}')).status).toBe(401);
    const m = await s.scrape();
    expect(m.value('reprise_webhook_duration_seconds_count', { source: 'alertmanager' })).toBe(1);
    expect(m.value('reprise_webhook_alerts_total')).toBe(0);
    expect(m.value('reprise_webhook_duration_seconds_count', { source: 'generic' })).toBe(0);
    expect(m.value('reprise_webhook_duration_seconds_count', { source: 'pagerduty' })).toBe(0);
    expect(m.samples.some((x) => Object.values(x.labels).includes('nope'))).toBe(false);
  });
});
