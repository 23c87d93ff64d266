import { describe, expect, it } from 'vitest';
import { ERROR_CODES, RepriseError } from '../../../src/core/errors.js';
import { HTTP_STATUS_BY_CODE, toHttpError } from '../../../src/http/errors.js';
import { createBotMetrics } from '../../../src/http/metrics.js';

describe('bot metrics (prom-client)', () => {
  it('keeps the series names and adds the process, GC and event-loop defaults', async () => {
    let seq = 41;
    const m = createBotMetrics({ ledgerSeq: () => seq, ledgerSkipped: () => 2, isReady: () => false });
    m.httpRequests.inc({ route: '/webhook/alertmanager', method: 'POST', status: '202' });
    m.httpDuration.observe({ route: '/webhook/alertmanager' }, 0.02);
    m.incidents.inc({ outcome: 'recall_incident' });
    seq = 42;
    const text = await m.render();
    expect(text).toContain('reprise_http_requests_total{route="/webhook/alertmanager",method="POST",status="202"} 1');
    expect(text).toContain('reprise_http_request_duration_seconds_bucket{le="0.025",route="/webhook/alertmanager"} 1');
    expect(text).toContain('reprise_incidents_total{outcome="recall_incident"} 1');
    // Read at scrape time, not when created.
    expect(text).toContain('reprise_ledger_events 42');
    expect(text).toContain('reprise_ledger_skipped_records 2');
    expect(text).toContain('reprise_ready 0');
    expect(text).toMatch(/^process_cpu_user_seconds_total /m);
    expect(text).toMatch(/^nodejs_eventloop_lag_seconds /m);
    expect(text).toMatch(/^# TYPE nodejs_gc_duration_seconds histogram/m);
    expect(m.contentType).toMatch(/^text\/plain; version=0\.0\.4/);
  });

  it("reads the outbox at scrape time: retrying items and the oldest pending one's age", async () => {
    let status: { retrying: number; oldestAt?: string } = { retrying: 2, oldestAt: '2026-01-01T00:00:00.000Z' };
    const m = createBotMetrics({ defaults: false, outboxStatus: () => status, now: () => new Date('2026-01-01T00:05:00.000Z') });
    let text = await m.render();
    expect(text).toContain('reprise_outbox_retrying 2\n');
    expect(text).toContain('reprise_outbox_oldest_pending_age_seconds 300\n');
    status = { retrying: 0 };
    text = await m.render();
    expect(text).toContain('reprise_outbox_retrying 0\n');
    expect(text).toContain('reprise_outbox_oldest_pending_age_seconds 0\n');
    // A timestamp that does not parse reads as nothing pending, not NaN.
    status = { retrying: 0, oldestAt: 'yesterday' };
    expect(await m.render()).toContain('reprise_outbox_oldest_pending_age_seconds 0\n');
  });

  it('gives each bot its own registry (two bots in one process do not mix counts)', async () => {
    const a = createBotMetrics({ defaults: false });
    const b = createBotMetrics({ defaults: false });
    a.incidents.inc({ outcome: 'silenced' });
    expect(await a.render()).toContain('reprise_incidents_total{outcome="silenced"} 1');
    expect(await b.render()).not.toContain('outcome="silenced"');
  });
});

describe('HTTP error map', () => {
  it('maps every code to a status', () => {
    for (const code of ERROR_CODES) expect(HTTP_STATUS_BY_CODE[code]).toBeGreaterThanOrEqual(400);
    expect(HTTP_STATUS_BY_CODE.invalid_payload).toBe(400);
    expect(HTTP_STATUS_BY_CODE.payload_too_large).toBe(413);
  });

  it('never shows a server-side message, only a correlation id', () => {
    const e = toHttpError(new RepriseError('internal', 'db password wrong'), 'rid-1');
    expect(e).toMatchObject({ status: 500, serverFault: true });
    expect(e.body.error.message).not.toContain('password');
    expect(e.body.error.message).toContain('rid-1');
    expect(toHttpError(new TypeError('x is undefined'), 'rid-2').body.error).toEqual({
      code: 'internal',
      message: 'internal error; quote correlation id rid-2',
      requestId: 'rid-2',
    });
    expect(toHttpError(new RepriseError('not_found', 'no route'), 'r').body.error.message).toBe('no route');
  });
});
