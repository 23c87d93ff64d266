import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Incident } from '../../../src/core/types.js';
import { createHttpServer, type HttpServer } from '../../../src/http/create-server.js';
import { createBotMetrics } from '../../../src/http/metrics.js';
import { combineReadiness } from '../../../src/http/readiness.js';
import type { Logger } from '../../../src/ports/logger.js';
import { waitFor } from '../../helpers/wait-for.js';

interface LogLine {
  level: 'debug' | 'info' | 'warn' | 'error';
  fields: Record<string, unknown>;
  msg: string | undefined;
}

/** A Logger that records what it was told, bindings merged in, so tests assert on log lines. */
function recordingLogger(lines: LogLine[], bindings: Record<string, unknown> = {}): Logger {
  const at =
    (level: LogLine['level']) =>
    (obj: object | string, msg?: string): void => {
      if (typeof obj === 'string') lines.push({ level, fields: { ...bindings }, msg: obj });
      else lines.push({ level, fields: { ...bindings, ...(obj as Record<string, unknown>) }, msg });
    };
  return {
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: (b) => recordingLogger(lines, { ...bindings, ...b }),
  };
}

const TOKEN = 'test-token-123';
const alert = (status = 'firing', alertname = 'KubePodCrashLooping') => ({
  status,
  labels: { alertname, namespace: 'shop', pod: 'web-7d9f8c6b5-x2k4q', severity: 'critical' },
  annotations: { summary: 'Pod is crash looping.' },
  startsAt: '2026-11-29T03:12:00Z',
  endsAt: '0001-01-01T00:00:00Z',
  fingerprint: 'abc123',
});
const goodBody = JSON.stringify({ version: '4', status: 'firing', receiver: 'reprise', alerts: [alert()] });

let srv: HttpServer;
let base: string;
const logs: LogLine[] = [];
const received: Incident[][] = [];
let handler: (incidents: Incident[], requestId: string) => Promise<{ accepted: number; results?: unknown }>;
let ready = true;

const metrics = createBotMetrics({ defaults: false });

beforeAll(async () => {
  metrics.incidents.inc({ outcome: 'recall_incident' }, 3);
  srv = createHttpServer({
    bearerToken: TOKEN,
    bodyLimitBytes: 1024 * 1024,
    logger: recordingLogger(logs),
    onAlertmanager: (incidents, requestId) => handler(incidents, requestId),
    readiness: () =>
      combineReadiness([
        {
          name: 'store',
          ok: ready,
          ...(ready ? {} : { reason: 'cannot write /data/reprise.sqlite: disk I/O error' }),
          detail: { store: '/data/reprise.sqlite' },
        },
      ]),
    metrics,
  });
  const { port } = await srv.listen(0, '127.0.0.1');
  base = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  await srv.close();
});

beforeEach(() => {
  logs.length = 0;
  received.length = 0;
  ready = true;
  handler = async (incidents) => {
    received.push(incidents);
    return { accepted: incidents.length };
  };
});

function post(body: NonNullable<RequestInit['body']>, headers: Record<string, string> = {}, path = '/webhook/alertmanager'): Promise<Response> {
  return fetch(base + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}`, ...headers },
    body,
    // Streams need half-duplex; harmless for buffers.
    duplex: 'half',
  } as RequestInit);
}

async function expectError(res: Response, status: number, code: string, message?: RegExp): Promise<void> {
  const text = await res.text();
  expect(res.status, text).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  const requestId = res.headers.get('x-request-id');
  expect(requestId).toMatch(/^[\w.:-]+$/);
  const body = JSON.parse(text) as { error: { code: string; message: string; requestId: string } };
  expect(body.error.code).toBe(code);
  expect(body.error.requestId).toBe(requestId);
  if (message) expect(body.error.message).toMatch(message);
  expect(text).not.toMatch(/\bat .*\.(ts|js):\d+/);
  // Every rejection is logged at warn, naming the problem.
  const line = logs.find((l) => l.level === 'warn' && l.fields.requestId === requestId);
  expect(line?.msg).toContain(body.error.message.slice(0, 40));
}

async function expectStillServes(): Promise<void> {
  const res = await post(goodBody);
  expect(res.status).toBe(202);
  expect(await res.json()).toMatchObject({ accepted: 1 });
}

function streamOf(totalBytes: number, chunk = 64 * 1024): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (sent >= totalBytes) return controller.close();
      const n = Math.min(chunk, totalBytes - sent);
      sent += n;
      controller.enqueue(new Uint8Array(n).fill(0x20));
    },
  });
}

describe('POST /webhook/alertmanager', () => {
  it('accepts a valid payload with 202 after the handler resolves', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let calledWith: string | undefined;
    handler = async (incidents, requestId) => {
      calledWith = requestId;
      received.push(incidents);
      await gate;
      return { accepted: incidents.length };
    };
    let answered = false;
    const pending = post(goodBody, { 'x-request-id': 'req-42' }).then((r) => {
      answered = true;
      return r;
    });
    await waitFor(() => calledWith, 'the handler to be called');
    // The server gets every chance to answer early, which it must not take: it serves a later
    // request to its end while this one's handler still holds.
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    expect(answered).toBe(false);
    release();
    const res = await pending;
    expect(res.status).toBe(202);
    expect(res.headers.get('x-request-id')).toBe('req-42');
    expect(await res.json()).toEqual({ accepted: 1, requestId: 'req-42' });
    expect(calledWith).toBe('req-42');
    const incident = received[0]?.[0];
    expect(incident).toMatchObject({
      source: 'alertmanager',
      fingerprint: 'abc123',
      severity: 'critical',
      triggerKey: 'kubepodcrashlooping|shop|deployment|web|',
    });
  });

  it('splits a group into one incident per alert and accepts charset=utf-8', async () => {
    const body = JSON.stringify({ alerts: [alert(), alert('resolved', 'Other'), alert()] });
    const res = await post(body, { 'content-type': 'application/json; charset=UTF-8' });
    expect(res.status).toBe(202);
    expect(await res.json()).toMatchObject({ accepted: 3 });
    expect(received[0]?.map((i) => i.status)).toEqual(['firing', 'resolved', 'firing']);
  });

  it('keeps the good alerts of a group with a malformed one: 202, the bad one skipped, named and logged', async () => {
    const body = JSON.stringify({
      alerts: [alert(), alert('pending'), { ...alert('firing', 'Other'), labels: { alertname: '' } }, alert('resolved', 'Other')],
    });
    const res = await post(body);
    expect(res.status).toBe(202);
    expect(await res.json()).toMatchObject({
      accepted: 2,
      skipped: 2,
      skippedAlerts: [
        { index: 1, reason: 'alerts[1].status must be "firing" or "resolved", got "pending"' },
        { index: 2, reason: 'alerts[2].labels.alertname must not be empty' },
      ],
    });
    expect(received[0]?.map((i) => `${i.alertname}:${i.status}`)).toEqual(['KubePodCrashLooping:firing', 'Other:resolved']);
    expect(logs.some((l) => l.level === 'warn' && /skipped 2 malformed alert\(s\), kept the rest/.test(l.msg ?? ''))).toBe(true);
  });

  it.each([
    ['malformed JSON', () => post('{"alerts": ['), 400, 'bad_request', /^malformed JSON: /],
    ['wrong content type', () => post(goodBody, { 'content-type': 'text/plain' }), 415, 'unsupported_media_type', /text\/plain/],
    ['non-utf-8 charset', () => post(goodBody, { 'content-type': 'application/json; charset=latin1' }), 415, 'unsupported_media_type', /charset/],
    ['2 MiB body (Content-Length)', () => post(Buffer.alloc(2 * 1024 * 1024, 0x20)), 413, 'payload_too_large', /limit of 1048576/],
    ['2 MiB streamed body', () => post(streamOf(2 * 1024 * 1024)), 413, 'payload_too_large', /limit of 1048576/],
    ['missing alerts', () => post(JSON.stringify({ version: '4' })), 400, 'invalid_payload', /^alerts is required$/],
    [
      'unknown status (no good alert left)',
      () => post(JSON.stringify({ alerts: [alert('pending')] })),
      400,
      'invalid_payload',
      /^alerts\[0\]\.status must be "firing" or "resolved", got "pending"$/,
    ],
    [
      'invalid UTF-8 bytes',
      () => post(Buffer.concat([Buffer.from('{"alerts": "'), Buffer.from([0xc3, 0x28]), Buffer.from('"}')])),
      400,
      'bad_request',
      /not valid UTF-8 \(first bad byte at offset 12\)/,
    ],
    ['missing bearer token', () => post(goodBody, { authorization: '' }), 401, 'unauthorized', /missing bearer/],
    ['wrong bearer token', () => post(goodBody, { authorization: 'Bearer nope' }), 401, 'unauthorized', /invalid bearer/],
    ['basic auth instead of bearer', () => post(goodBody, { authorization: 'Basic dTpw' }), 401, 'unauthorized', /not a bearer/],
    ['wrong method', () => fetch(`${base}/webhook/alertmanager`), 405, 'method_not_allowed', /use POST/],
    ['unknown path', () => post(goodBody, {}, '/webhook/nope'), 404, 'not_found', /\/webhook\/nope/],
  ] as const)('rejects %s, then still serves', async (_name, send, status, code, message) => {
    const res = await send();
    await expectError(res, status, code, message);
    if (status === 401) expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
    if (status === 405) expect(res.headers.get('allow')).toBe('POST');
    expect(received).toHaveLength(0);
    await expectStillServes();
  });

  it('answers 500 with a correlation id and no stack when the handler throws', async () => {
    handler = async () => {
      throw new Error('ledger exploded at /secret/path.ts:12');
    };
    const res = await post(goodBody);
    const text = await res.text();
    expect(res.status).toBe(500);
    const requestId = res.headers.get('x-request-id') ?? 'missing';
    expect(JSON.parse(text)).toEqual({
      error: { code: 'internal', message: `internal error; quote correlation id ${requestId}`, requestId },
    });
    expect(text).not.toContain('exploded');
    expect(text).not.toContain('stack');
    const line = logs.find((l) => l.level === 'error' && l.fields.requestId === requestId);
    expect(line?.fields.err).toBeInstanceOf(Error);
    handler = async (incidents) => ({ accepted: incidents.length });
    await expectStillServes();
  });
});

describe('POST /webhook/grafana', () => {
  const fixture = (name: string): string => readFileSync(new URL(`../../fixtures/sources/${name}`, import.meta.url), 'utf8');

  it.each(['grafana-test-notification.json', 'grafana-test-notification-custom.json'])(
    "answers a contact point's test (%s) 202 with the reason, records nothing and logs it",
    async (name) => {
      const res = await post(fixture(name), {}, '/webhook/grafana');
      const text = await res.text();
      expect(res.status, text).toBe(202);
      expect(JSON.parse(text)).toMatchObject({ accepted: 0, ignored: expect.stringContaining('Grafana contact-point test notification') });
      expect(received).toEqual([]);
      expect(logs.find((l) => l.level === 'info' && l.msg?.startsWith('grafana webhook ignored'))?.fields).toMatchObject({
        source: 'grafana',
        receiver: 'reprise',
      });
    },
  );

  it('hands the incidents of a real notification to the handler, and logs the links their cards will not show', async () => {
    const body = JSON.parse(fixture('grafana-two-rules.json')) as { alerts: Array<Record<string, unknown>> };
    body.alerts[0]!['dashboardURL'] = 'javascript:alert(1)';
    const res = await post(JSON.stringify(body), {}, '/webhook/grafana');
    expect(res.status, await res.text()).toBe(202);
    expect(received[0]?.map((i) => i.source)).toEqual(['grafana', 'grafana']);
    const line = logs.find((l) => l.level === 'warn' && l.msg?.includes('not shown on the card'));
    expect(line?.fields).toMatchObject({ count: 1, refusedLinks: [{ alert: 0, field: 'dashboardURL', reason: 'not a web link (javascript: scheme)' }] });
  });
});

describe('malformed HTTP', () => {
  it('answers garbage on the socket with a JSON 400 and keeps serving', async () => {
    const { port } = new URL(base);
    const raw = await new Promise<string>((resolve, reject) => {
      const sock = connect(Number(port), '127.0.0.1', () => sock.write('NOT HTTP AT ALL\r\n\r\n'));
      let data = '';
      sock.on('data', (d) => (data += d.toString()));
      sock.on('end', () => resolve(data));
      sock.on('error', reject);
    });
    expect(raw).toMatch(/^HTTP\/1\.1 400 /);
    expect(raw).toContain('"code":"bad_request"');
    await expectStillServes();
  });
});

describe('health, readiness and metrics', () => {
  it('reports health and readiness', async () => {
    const health = await fetch(`${base}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });
    const readyRes = await fetch(`${base}/readyz`);
    expect(readyRes.status).toBe(200);
    expect(await readyRes.json()).toEqual({ status: 'ready', checks: { store: { ok: true, store: '/data/reprise.sqlite' } } });
    ready = false;
    const notReady = await fetch(`${base}/readyz`);
    expect(notReady.status).toBe(503);
    expect(await notReady.json()).toEqual({
      status: 'not_ready',
      reasons: ['store: cannot write /data/reprise.sqlite: disk I/O error'],
      checks: { store: { ok: false, reason: 'cannot write /data/reprise.sqlite: disk I/O error', store: '/data/reprise.sqlite' } },
    });
  });

  it('serves no control API on the public port: /api/* is 404 and records nothing', async () => {
    for (const path of ['/api/feedback', '/api/note', '/api/']) {
      const res = await post(JSON.stringify({ triggerKey: 'x', action: 'down', user: 'mallory' }), {}, path);
      expect(res.status, path).toBe(404);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('not_found');
    }
    expect(received).toEqual([]);
  });

  it('counts requests by route and status and appends the app metrics', async () => {
    await expectStillServes();
    await post('{', {});
    await fetch(`${base}/random/${Math.random()}`);
    const res = await fetch(`${base}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    expect(text).toMatch(/^reprise_http_requests_total\{route="\/webhook\/alertmanager",method="POST",status="202"\} \d+$/m);
    expect(text).toMatch(/^reprise_http_requests_total\{route="\/webhook\/alertmanager",method="POST",status="400"\} \d+$/m);
    // Unknown paths share one label value: no cardinality explosion from scanners.
    expect(text).toMatch(/^reprise_http_requests_total\{route="unmatched",method="GET",status="404"\} \d+$/m);
    expect(text).not.toContain('/random/');
    expect(text).toMatch(/^reprise_http_request_duration_seconds_count\{route="\/webhook\/alertmanager"\} \d+$/m);
    expect(text).toContain('reprise_incidents_total{outcome="recall_incident"} 3\n');
  });
});
