/**
 * The memory view on the bot's public port (createHttpServer's mount, as `serve` wires it): a
 * request over a real non-loopback interface is refused without credentials and let in with
 * the bearer token, the peer comes from the socket (a forged X-Forwarded-For changes nothing),
 * and the `ui` config section has safe defaults and refuses what would open it by accident.
 */
import http from 'node:http';
import { networkInterfaces } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { configSchema } from '../../../src/config/schema.js';
import { LedgerReader } from '../../../src/core/ledger/ledger-reader.js';
import { createHttpServer, type HttpServer } from '../../../src/http/create-server.js';
import { createBotMetrics } from '../../../src/http/metrics.js';
import { memoryView } from '../../../src/http/ui/memory-view.js';
import { ManualClock } from '../../../src/ports/clock.js';
import { recordingLogger } from '../bot/bot-harness.js';
import { fixedSnapshot } from '../recall/recall-fixtures.js';

const TOKEN = '9c1d7e5b24680aa11cc33ee55ff77f3a';
let srv: HttpServer | undefined;
afterEach(async () => {
  await srv?.close();
  srv = undefined;
});

function server(token?: string, proxy?: { trustedHeader: string; trustedProxies: string[] }): HttpServer {
  const logger = recordingLogger([]);
  return createHttpServer({
    bodyLimitBytes: 1 << 20,
    logger,
    onAlertmanager: async (incidents) => ({ accepted: incidents.length }),
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
          ...(token ? { token } : {}),
          ...(proxy ?? {}),
        }),
      ),
  });
}

function externalIPv4(): string | undefined {
  for (const list of Object.values(networkInterfaces())) for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  return undefined;
}

describe('/ui on the public port', () => {
  it('serves loopback, with its headers, next to the webhooks', async () => {
    srv = server();
    const { port } = await srv.listen(0, '127.0.0.1');
    const res = await fetch(`http://127.0.0.1:${port}/ui`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(await res.text()).toContain('data-figure="answers-instant">0<');
    const put = await fetch(`http://127.0.0.1:${port}/ui/knowledge`, { method: 'PUT' });
    expect(put.status).toBe(405);
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
  });

  it.runIf(externalIPv4() !== undefined)(
    'refuses a real non-loopback peer without credentials, whatever X-Forwarded-For says; the token lets it in',
    async () => {
      const ip = externalIPv4()!;
      srv = server(TOKEN);
      const { port } = await srv.listen(0, '0.0.0.0');
      const denied = await fetch(`http://${ip}:${port}/ui`, { headers: { 'x-forwarded-for': '127.0.0.1' } });
      expect(denied.status).toBe(401);
      expect(await denied.text()).toContain('/ui/login');
      const ok = await fetch(`http://${ip}:${port}/ui`, { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(ok.status).toBe(200);
      // Loopback still gets in without the token.
      expect((await fetch(`http://127.0.0.1:${port}/ui`)).status).toBe(200);
    },
  );
});

/** GET from a chosen local address (127.0.0.2 is loopback too, on Linux). */
function getFrom(localAddress: string, host: string, port: number, path: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host, port, path, localAddress, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('a sidecar proxy listed as 127.0.0.1, over real sockets', () => {
  const sidecar = { trustedHeader: 'X-Forwarded-User', trustedProxies: ['127.0.0.1'] };
  it.runIf(process.platform === 'linux')('refuses 127.0.0.2 with or without the header; believes 127.0.0.1 with it', async () => {
    srv = server(undefined, sidecar);
    const { port } = await srv.listen(0, '0.0.0.0');
    expect(await getFrom('127.0.0.2', '127.0.0.1', port, '/ui')).toBe(401);
    expect(await getFrom('127.0.0.2', '127.0.0.1', port, '/ui', { 'x-forwarded-user': 'mallory' })).toBe(401);
    expect(await getFrom('127.0.0.1', '127.0.0.1', port, '/ui')).toBe(401);
    expect(await getFrom('127.0.0.1', '127.0.0.1', port, '/ui', { 'x-forwarded-user': 'dave' })).toBe(200);
  });

  it('refuses [::1] on a server bound to ::', async () => {
    srv = server(undefined, sidecar);
    let port: number;
    try {
      ({ port } = await srv.listen(0, '::'));
    } catch {
      return; // no IPv6 on this machine
    }
    expect(await getFrom('::1', '::1', port, '/ui')).toBe(401);
    expect(await getFrom('::1', '::1', port, '/ui', { 'x-forwarded-user': 'mallory' })).toBe(401);
  });
});

describe('the ui config section', () => {
  const parse = (ui: unknown) => configSchema.safeParse({ ui });
  it('defaults to on, loopback only', () => {
    const r = configSchema.parse({});
    expect(r.ui).toMatchObject({
      enabled: true,
      allowed_hosts: [],
      trusted_proxies: [],
      session_idle_ms: 7_200_000,
      session_max_ms: 43_200_000,
      sign_in_attempts: 5,
    });
    expect(r.ui.token).toBeUndefined();
  });
  it('refuses a weak token, a trusted header without proxies, and a proxy that is not an address', () => {
    expect(parse({ token: 'short' }).success).toBe(false);
    expect(parse({ token: 'change-me-change-me-change-me' }).success).toBe(false);
    expect(parse({ trusted_header: 'X-Forwarded-User' }).success).toBe(false);
    expect(parse({ trusted_proxies: ['127.0.0.1'] }).success).toBe(false);
    expect(parse({ trusted_header: 'X-Forwarded-User', trusted_proxies: ['proxy.example.org'] }).success).toBe(false);
    expect(parse({ trusted_header: 'X-Forwarded-User', trusted_proxies: ['10.0.0.0/33'] }).success).toBe(false);
    expect(parse({ trusted_header: 'X Forwarded', trusted_proxies: ['10.0.0.1'] }).success).toBe(false);
    expect(parse({ token: TOKEN, trusted_header: 'X-Forwarded-User', trusted_proxies: ['10.0.0.0/8', '::1', 'fd00::/8'] }).success).toBe(true);
  });
});
