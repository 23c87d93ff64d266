/**
 * Bad input against the real server (issue 2 "Done when"): each is a 4xx JSON error naming the
 * problem, one warn log line carrying the request id, and the server keeps serving.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crashLoopPayload, postAlert, request, requestOversize, type RawRequest, type RawResponse } from './helpers/alerts.js';
import { cleanup, makeTmpDir, spawnBot, type BotProcess } from './helpers/spawn-bot.js';

const TWO_MIB = 2 * 1024 * 1024;
const JSON_CT = { 'content-type': 'application/json' };
const valid = (): string => JSON.stringify(crashLoopPayload({ status: 'firing' }));

interface Case {
  name: string;
  req: Omit<RawRequest, 'path'> & { path?: string };
  status: number;
  code: string;
  message: RegExp;
}

const CASES: Case[] = [
  { name: 'malformed JSON', req: { headers: JSON_CT, body: '{"version":"4","alerts":[' }, status: 400, code: 'bad_request', message: /malformed JSON/ },
  {
    name: 'wrong content type',
    req: { headers: { 'content-type': 'text/plain' }, body: valid() },
    status: 415,
    code: 'unsupported_media_type',
    message: /application\/json.*text\/plain/,
  },
  { name: 'no content type', req: { body: valid() }, status: 415, code: 'unsupported_media_type', message: /application\/json/ },
  {
    name: 'missing alerts',
    req: { headers: JSON_CT, body: JSON.stringify({ version: '4', status: 'firing', receiver: 'reprise' }) },
    status: 400,
    code: 'invalid_payload',
    message: /alerts/,
  },
  {
    name: 'an alert without alertname',
    req: {
      headers: JSON_CT,
      body: JSON.stringify({ version: '4', alerts: [{ status: 'firing', labels: { namespace: 'payments' }, startsAt: '2026-11-29T03:00:00Z' }] }),
    },
    status: 400,
    code: 'invalid_payload',
    message: /alertname/,
  },
  {
    name: 'unknown status "pending"',
    req: {
      headers: JSON_CT,
      body: JSON.stringify({
        ...crashLoopPayload({ status: 'firing' }),
        alerts: [{ ...(crashLoopPayload({ status: 'firing' }).alerts as object[])[0], status: 'pending' }],
      }),
    },
    status: 400,
    code: 'invalid_payload',
    message: /alerts\[0\]\.status.*pending/,
  },
  {
    name: 'invalid UTF-8',
    req: { headers: JSON_CT, body: Buffer.concat([Buffer.from('{"version":"4","receiver":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]) },
    status: 400,
    code: 'bad_request',
    message: /not valid UTF-8.*offset 27/,
  },
  { name: 'a GET on the webhook', req: { method: 'GET' }, status: 405, code: 'method_not_allowed', message: /GET not allowed/ },
  { name: 'an unknown route', req: { path: '/webhook/nope', headers: JSON_CT, body: valid() }, status: 404, code: 'not_found', message: /\/webhook\/nope/ },
];

/** Asserts the JSON error shape, and that a warn line with this request id was logged. */
async function expectRejected(bot: BotProcess, res: RawResponse, requestId: string, status: number, code: string, message: RegExp): Promise<void> {
  expect(res.status, res.text).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  const body = res.json as { error: { code: string; message: string; requestId: string } };
  expect(body?.error?.code, res.text).toBe(code);
  expect(body.error.message).toMatch(message);
  expect(body.error.requestId).toBe(requestId);
  const line = await bot.waitForLog((l) => l.requestId === requestId && l.level === 40);
  expect(line.msg).toMatch(/^rejected: /);
  expect(line.code).toBe(code);
  expect(line.status).toBe(status);
}

describe('bad input against the real server', () => {
  let bot: BotProcess;
  beforeAll(async () => {
    bot = await spawnBot({ dataDir: makeTmpDir() });
  });
  afterAll(cleanup);

  it('serves /healthz and /readyz', async () => {
    const h = await request(bot.url, { method: 'GET', path: '/healthz' });
    expect(h.status).toBe(200);
    expect(h.json).toEqual({ status: 'ok' });
    const r = await request(bot.url, { method: 'GET', path: '/readyz' });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({
      status: 'ready',
      checks: {
        catalog: { ok: true, entries: expect.any(Number) },
        store: { ok: true, lastProbe: expect.any(String) },
        ledger: { ok: true, seq: expect.any(Number), skippedRecords: 0 },
      },
    });
  });

  it.each(CASES)('$name → $status $code, a warn log line, and the server keeps serving', async (c) => {
    const requestId = `bad-${c.name.replace(/[^\w]+/g, '-')}`;
    const res = await request(bot.url, { path: '/webhook/alertmanager', ...c.req, headers: { ...c.req.headers, 'x-request-id': requestId } });
    await expectRejected(bot, res, requestId, c.status, c.code, c.message);
    const ok = await postAlert(bot.url, crashLoopPayload({ status: 'firing' }));
    expect(ok.status, ok.text).toBe(202);
  });

  it.each(['declared', 'chunked'] as const)('a 2 MiB body (%s) → 413 payload_too_large, a warn log line, and the server keeps serving', async (mode) => {
    const requestId = `bad-2mib-${mode}`;
    const res = await requestOversize(bot.url, {
      path: '/webhook/alertmanager',
      headers: { ...JSON_CT, 'x-request-id': requestId },
      totalBytes: TWO_MIB,
      mode,
    });
    await expectRejected(
      bot,
      res,
      requestId,
      413,
      'payload_too_large',
      mode === 'declared' ? /request body of 2097152 bytes exceeds the limit of 1048576 bytes/ : /exceeds the limit of 1048576 bytes/,
    );
    const ok = await postAlert(bot.url, crashLoopPayload({ status: 'firing' }));
    expect(ok.status, ok.text).toBe(202);
  });

  it('counts incidents in /metrics after a firing, and never logged at error level', async () => {
    const ok = await postAlert(bot.url, crashLoopPayload({ status: 'firing', pod: 'checkout-api-7d9f8c6b5-m4t7z' }));
    expect(ok.status).toBe(202);
    const m = await request(bot.url, { method: 'GET', path: '/metrics' });
    expect(m.status).toBe(200);
    expect(m.headers['content-type']).toMatch(/^text\/plain/);
    expect(m.text).toMatch(/^reprise_incidents_total\{outcome="[a-z_]+"\} [1-9]\d*$/m);
    expect(m.text).toMatch(/reprise_http_requests_total\{[^}]*status="413"[^}]*\} [1-9]/);
    expect(bot.logs().filter((l) => (l.level ?? 0) >= 50)).toEqual([]);
    expect(bot.alive()).toBe(true);
  });
});

describe('a server with a bearer token', () => {
  const TOKEN = 's3cret-token-for-tests';
  let bot: BotProcess;
  beforeAll(async () => {
    bot = await spawnBot({ dataDir: makeTmpDir(), env: { REPRISE_BEARER_TOKEN: TOKEN } });
  });
  afterAll(cleanup);

  it.each([
    { name: 'no token', auth: undefined, message: /missing bearer token/ },
    { name: 'a wrong token', auth: 'Bearer not-the-token', message: /invalid bearer token/ },
    { name: 'not a bearer scheme', auth: `Basic ${Buffer.from('a:b').toString('base64')}`, message: /not a bearer token/ },
  ])('$name → 401 unauthorized, a warn log line, and the server keeps serving', async ({ name, auth, message }) => {
    const requestId = `auth-${name.replace(/[^\w]+/g, '-')}`;
    const res = await request(bot.url, {
      path: '/webhook/alertmanager',
      headers: { ...JSON_CT, 'x-request-id': requestId, ...(auth ? { authorization: auth } : {}) },
      body: valid(),
    });
    await expectRejected(bot, res, requestId, 401, 'unauthorized', message);
    expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
    expect(res.text).not.toContain(TOKEN);
    const ok = await postAlert(bot.url, crashLoopPayload({ status: 'firing' }), { authorization: `Bearer ${TOKEN}` });
    expect(ok.status, ok.text).toBe(202);
  });

  it('keeps health and metrics open, and never logs the token', async () => {
    expect((await request(bot.url, { method: 'GET', path: '/healthz' })).status).toBe(200);
    expect((await request(bot.url, { method: 'GET', path: '/readyz' })).status).toBe(200);
    expect((await request(bot.url, { method: 'GET', path: '/metrics' })).text).toContain('reprise_incidents_total');
    expect(bot.stderr()).not.toContain(TOKEN);
    expect(bot.stdout()).not.toContain(TOKEN);
  });
});
