import { describe, expect, it } from 'vitest';
import { ERROR_CODES, RepriseError } from '../../../src/core/errors.js';
import { HTTP_STATUS_BY_CODE, toHttpError } from '../../../src/http/errors.js';
import { MetricsRegistry } from '../../../src/http/metrics.js';

describe('MetricsRegistry', () => {
  it('renders counters with escaped labels in exposition format', () => {
    const r = new MetricsRegistry();
    const c = r.counter('reprise_recall_total', 'Recall outcomes.', ['outcome']);
    c.inc({ outcome: 'fire' });
    c.inc({ outcome: 'fire' }, 2);
    c.inc({ outcome: 'say "hi"\\\n' });
    expect(c.get({ outcome: 'fire' })).toBe(3);
    expect(r.render()).toBe(
      [
        '# HELP reprise_recall_total Recall outcomes.',
        '# TYPE reprise_recall_total counter',
        'reprise_recall_total{outcome="fire"} 3',
        'reprise_recall_total{outcome="say \\"hi\\"\\\\\\n"} 1',
        '',
      ].join('\n'),
    );
  });

  it('renders cumulative histogram buckets, sum and count', () => {
    const r = new MetricsRegistry();
    const h = r.histogram('lat_seconds', 'Latency.', ['route'], [0.1, 1]);
    h.observe({ route: '/a' }, 0.05);
    h.observe({ route: '/a' }, 0.5);
    h.observe({ route: '/a' }, 5);
    expect(r.render()).toBe(
      [
        '# HELP lat_seconds Latency.',
        '# TYPE lat_seconds histogram',
        'lat_seconds_bucket{route="/a",le="0.1"} 1',
        'lat_seconds_bucket{route="/a",le="1"} 2',
        'lat_seconds_bucket{route="/a",le="+Inf"} 3',
        'lat_seconds_sum{route="/a"} 5.55',
        'lat_seconds_count{route="/a"} 3',
        '',
      ].join('\n'),
    );
  });

  it('supports gauges and unlabelled metrics', () => {
    const r = new MetricsRegistry();
    const g = r.gauge('queue_depth', 'Queued.');
    g.set(undefined, 4);
    g.dec();
    expect(r.render()).toContain('queue_depth 3\n');
  });

  it('rejects programming errors loudly', () => {
    const r = new MetricsRegistry();
    const c = r.counter('a_total', 'A.', ['x']);
    expect(r.counter('a_total', 'A.', ['x'])).toBe(c);
    expect(() => r.gauge('a_total', 'A.', ['x'])).toThrow(/already registered/);
    expect(() => r.counter('a_total', 'A.', ['y'])).toThrow(/already registered/);
    expect(() => c.inc({ y: '1' })).toThrow(/no label "y"/);
    expect(() => c.inc({ x: '1' }, -1)).toThrow(/cannot decrease/);
    expect(() => r.counter('bad-name', 'B.')).toThrow(/invalid metric name/);
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
