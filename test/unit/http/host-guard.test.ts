/**
 * The public port answers only requests that name it (issue 29 deliverable 1): from loopback, a
 * page on a rebinding name (`Host: evil.example`) gets nothing on any route, token or not; a
 * browser's foreign `Origin` or `Sec-Fetch-Site: cross-site` is refused; the configured public
 * names, loopback names and the address the connection arrived on are answered.
 */
import http from 'node:http';
import { networkInterfaces } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { configSchema } from '../../../src/config/schema.js';
import { LedgerReader } from '../../../src/core/ledger/ledger-reader.js';
import { createHttpServer, type HttpServer } from '../../../src/http/create-server.js';
import { hostNames, hostOfHeader, hostRefusal, isLoopbackHost, namesThisBot } from '../../../src/http/host-guard.js';
import { createBotMetrics } from '../../../src/http/metrics.js';
import { memoryView } from '../../../src/http/ui/memory-view.js';
import { ManualClock } from '../../../src/ports/clock.js';
import { recordingLogger, type LogLine } from '../../fakes/slack-recording-logger.js';
import { fixedSnapshot } from '../recall/recall-fixtures.js';

const TOKEN = '5b24680aa11cc33ee55ff77f3a9c1d7e';
const ALERT = JSON.stringify({
  version: '4',
  status: 'firing',
  receiver: 'reprise',
  alerts: [{ status: 'firing', labels: { alertname: 'KubePodCrashLooping', namespace: 'shop' }, annotations: {}, startsAt: '2026-11-29T03:12:00Z' }],
});

let srv: HttpServer | undefined;
let accepted = 0;
let lines: LogLine[] = [];
afterEach(async () => {
  await srv?.close();
  srv = undefined;
});

function server(opts: { bearerToken?: string; names?: string[] } = {}): HttpServer {
  accepted = 0;
  lines = [];
  const logger = recordingLogger(lines);
  return createHttpServer({
    ...(opts.bearerToken ? { bearerToken: opts.bearerToken } : {}),
    bodyLimitBytes: 1 << 20,
    logger,
    hosts: { names: opts.names ?? [] },
    onAlertmanager: async (incidents) => {
      accepted += incidents.length;
      return { accepted: incidents.length };
    },
    readiness: () => ({ ready: true, reasons: [], checks: {} }),
    metrics: createBotMetrics({ defaults: false }),
    mount: (app) =>
      app.route(
        '/ui',
        memoryView({
          read: LedgerReader.empty(),
          catalog: () => fixedSnapshot([], {}),
          clock: new ManualClock('2026-01-01T00:00:00Z'),
          logger,
          outcomeFloor: 0.5,
          staleAfterMs: 86_400_000,
        }),
      ),
  });
}

/** A raw request with exactly the headers given (fetch would set Host itself). */
function raw(
  port: number,
  opts: { method?: string; path: string; headers: Record<string, string>; body?: string; address?: string },
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: opts.address ?? '127.0.0.1', port, method: opts.method ?? 'GET', path: opts.path, headers: opts.headers, setHost: false },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end(opts.body);
  });
}

const json = { 'content-type': 'application/json' };

describe('the Host rule', () => {
  it('reads Host headers strictly', () => {
    expect(hostOfHeader('Reprise.Example.org:8080')).toBe('reprise.example.org');
    expect(hostOfHeader('[::1]:8080')).toBe('::1');
    expect(hostOfHeader('127.0.0.1')).toBe('127.0.0.1');
    expect(hostOfHeader('localhost.')).toBe('localhost');
    for (const bad of ['', ' ', 'a b', 'evil.example@127.0.0.1', 'http://localhost', '[evil]:80', 'localhost:99999x', 'localhost/x'])
      expect(hostOfHeader(bad), bad).toBeUndefined();
  });

  it('knows loopback names and no look-alikes', () => {
    for (const h of ['localhost', 'LOCALHOST', '127.0.0.1', '127.200.3.4', '::1', '[::1]', '::ffff:127.0.0.1', '0:0:0:0:0:0:0:1'])
      expect(isLoopbackHost(h), h).toBe(true);
    for (const h of ['localhost.evil.example', '127.0.0.1.nip.io', '0.0.0.0', '::', '::ffff:10.0.0.1', '10.0.0.1', 'evil.example', '1270.0.0.1'])
      expect(isLoopbackHost(h), h).toBe(false);
  });

  it('answers configured names, wildcards below a domain, and an address only when the connection arrived on it', () => {
    const rule = hostNames({ publicUrl: 'https://Reprise.Example.org/base', allowedHosts: ['reprise.monitoring.svc', '*.ops.example.org'] });
    expect(rule.names).toEqual(['reprise.example.org', 'reprise.monitoring.svc', '*.ops.example.org']);
    for (const h of ['reprise.example.org', 'reprise.monitoring.svc', 'a.ops.example.org', 'b.a.ops.example.org']) expect(namesThisBot(h, rule), h).toBe(true);
    for (const h of ['ops.example.org', 'evil-ops.example.org', 'reprise.example.org.evil.example', 'example.org', 'reprise.monitoring'])
      expect(namesThisBot(h, rule), h).toBe(false);
    expect(namesThisBot('10.1.2.3', rule, '10.1.2.3')).toBe(true);
    expect(namesThisBot('10.1.2.3', rule, '::ffff:10.1.2.3')).toBe(true);
    expect(namesThisBot('10.1.2.4', rule, '10.1.2.3')).toBe(false);
    expect(namesThisBot('10.1.2.3', rule)).toBe(false);
  });

  it('refuses foreign origins, null origins and cross-site requests that are not a navigation', () => {
    const rule = hostNames({ publicUrl: 'https://reprise.example.org' });
    const ask = (headers: Record<string, string>, method = 'GET') => hostRefusal({ method, header: (n) => headers[n] }, rule);
    expect(ask({ host: 'reprise.example.org' })).toBeUndefined();
    expect(ask({ host: 'reprise.example.org', origin: 'https://reprise.example.org' }, 'POST')).toBeUndefined();
    expect(ask({ host: 'localhost:8080', origin: 'http://localhost:3000' }, 'POST')).toBeUndefined();
    expect(ask({ host: 'reprise.example.org', origin: 'https://evil.example' }, 'POST')).toMatch(/cross-origin/);
    expect(ask({ host: 'reprise.example.org', origin: 'null' }, 'POST')).toMatch(/cross-origin/);
    expect(ask({ host: 'reprise.example.org', origin: 'file://' }, 'POST')).toMatch(/cross-origin/);
    expect(ask({ host: 'reprise.example.org', 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'no-cors' })).toMatch(/cross-site/);
    expect(ask({ host: 'reprise.example.org', 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate' }, 'POST')).toMatch(/cross-site/);
    // A link from a wiki or a chat message to a page of the view.
    expect(ask({ host: 'reprise.example.org', 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate' })).toBeUndefined();
    expect(ask({})).toMatch(/missing/);
    expect(ask({ host: 'evil.example' })).toMatch(/server\.public_url/);
  });
});

describe('on the public port, from loopback', () => {
  const hostile = [
    'evil.example',
    'evil.example:8080',
    'localhost.evil.example',
    '127.0.0.1.nip.io',
    '0.0.0.0',
    '10.9.9.9',
    'reprise.example.org.evil.example',
  ];

  it('refuses a rebinding Host on every route, webhooks with or without a token included, and records nothing', async () => {
    srv = server({ names: ['reprise.example.org'] });
    const { port } = await srv.listen(0, '127.0.0.1');
    for (const host of hostile) {
      for (const path of ['/ui', '/ui/incidents', '/ui/login', '/ui/static/ui.css', '/healthz', '/readyz', '/metrics', '/nope']) {
        const r = await raw(port, { path, headers: { host } });
        expect(r.status, `${host} ${path}`).toBe(403);
        expect(r.body, `${host} ${path}`).not.toContain('data-figure');
      }
      const hook = await raw(port, { method: 'POST', path: '/webhook/alertmanager', headers: { host, ...json }, body: ALERT });
      expect(hook.status, host).toBe(403);
      expect(JSON.parse(hook.body)).toMatchObject({ error: { code: 'forbidden', requestId: expect.any(String) } });
    }
    expect(accepted).toBe(0);
    // Every refusal is logged with its request id.
    const refusals = lines.filter((l) => l.msg?.startsWith('rejected: this bot does not answer to the host'));
    expect(refusals.length).toBe(hostile.length * 9);
    expect(refusals.every((l) => typeof l.fields['requestId'] === 'string')).toBe(true);
  });

  it('refuses it with the bearer token too, and takes the token under a name it answers to', async () => {
    srv = server({ bearerToken: TOKEN, names: ['reprise.example.org'] });
    const { port } = await srv.listen(0, '127.0.0.1');
    const auth = { authorization: `Bearer ${TOKEN}`, ...json };
    expect((await raw(port, { method: 'POST', path: '/webhook/alertmanager', headers: { host: 'evil.example', ...auth }, body: ALERT })).status).toBe(403);
    const ok = await raw(port, { method: 'POST', path: '/webhook/alertmanager', headers: { host: 'Reprise.Example.org', ...auth }, body: ALERT });
    expect(ok.status, ok.body).toBe(202);
    expect(accepted).toBe(1);
  });

  it('keeps the quickstart: curl to 127.0.0.1, localhost and [::1]', async () => {
    srv = server();
    const { port } = await srv.listen(0, '127.0.0.1');
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, 'localhost']) {
      expect((await raw(port, { path: '/ui', headers: { host } })).status, host).toBe(200);
      expect((await raw(port, { method: 'POST', path: '/webhook/alertmanager', headers: { host, ...json }, body: ALERT })).status, host).toBe(202);
    }
    const res = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(res.status).toBe(200);
  });

  it('refuses a browser page of another site: a foreign or null Origin, or cross-site', async () => {
    srv = server();
    const { port } = await srv.listen(0, '127.0.0.1');
    const host = `127.0.0.1:${port}`;
    for (const origin of ['http://evil.example', 'null', `http://evil.example:${port}`, 'http://127.0.0.1.evil.example'])
      expect((await raw(port, { method: 'POST', path: '/webhook/alertmanager', headers: { host, origin, ...json }, body: ALERT })).status, origin).toBe(403);
    expect((await raw(port, { path: '/ui', headers: { host, 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'no-cors' } })).status).toBe(403);
    expect((await raw(port, { path: '/ui', headers: { host, 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'cors' } })).status).toBe(403);
    expect(
      (
        await raw(port, {
          method: 'POST',
          path: '/webhook/alertmanager',
          headers: { host, 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate', ...json },
          body: ALERT,
        })
      ).status,
    ).toBe(403);
    expect(accepted).toBe(0);
    expect((await raw(port, { path: '/ui', headers: { host, 'sec-fetch-site': 'same-origin', origin: `http://${host}` } })).status).toBe(200);
  });
});

function externalIPv4(): string | undefined {
  for (const list of Object.values(networkInterfaces())) for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  return undefined;
}

describe('probes by address', () => {
  it.runIf(externalIPv4() !== undefined)('answers a Host that is the address the connection arrived on (kubelet, Prometheus), not another', async () => {
    const ip = externalIPv4()!;
    srv = server();
    const { port } = await srv.listen(0, '0.0.0.0');
    expect((await raw(port, { address: ip, path: '/healthz', headers: { host: `${ip}:${port}` } })).status).toBe(200);
    expect((await raw(port, { address: '127.0.0.1', path: '/healthz', headers: { host: `${ip}:${port}` } })).status).toBe(403);
  });
});

describe('the config keys', () => {
  it('takes a public URL and host names, and refuses what is not one', () => {
    const ok = configSchema.parse({
      server: { public_url: 'https://reprise.example.org' },
      ui: { allowed_hosts: ['reprise.monitoring.svc', '*.example.org'] },
    });
    expect(ok.server.public_url).toBe('https://reprise.example.org');
    expect(ok.ui.allowed_hosts).toEqual(['reprise.monitoring.svc', '*.example.org']);
    expect(configSchema.safeParse({ server: { public_url: 'reprise.example.org' } }).success).toBe(false);
    for (const bad of ['https://reprise.example.org', 'reprise.example.org:8080', 'a b', '*'])
      expect(configSchema.safeParse({ ui: { allowed_hosts: [bad] } }).success, bad).toBe(false);
  });
});
