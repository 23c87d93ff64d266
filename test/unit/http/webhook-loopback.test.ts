/**
 * Secure by default: with no bearer token configured, a webhook (which changes state: it opens
 * incidents and its resolves grade the catalog) is accepted from this host only.
 */
import { networkInterfaces } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { createHttpServer, isLoopback, type HttpServer } from '../../../src/http/create-server.js';
import { createBotMetrics } from '../../../src/http/metrics.js';
import { silentLogger } from '../../../src/ports/logger.js';

const body = JSON.stringify({
  version: '4',
  status: 'firing',
  receiver: 'reprise',
  alerts: [
    {
      status: 'firing',
      labels: { alertname: 'KubePodCrashLooping', namespace: 'shop' },
      annotations: {},
      startsAt: '2026-11-29T03:12:00Z',
      fingerprint: 'abc',
    },
  ],
});

let srv: HttpServer | undefined;
let calls = 0;
afterEach(async () => {
  await srv?.close();
  srv = undefined;
});

function server(bearerToken?: string): HttpServer {
  calls = 0;
  return createHttpServer({
    ...(bearerToken ? { bearerToken } : {}),
    bodyLimitBytes: 1 << 20,
    logger: silentLogger,
    onAlertmanager: async (incidents) => {
      calls += 1;
      return { accepted: incidents.length };
    },
    readiness: () => ({ ready: true, reasons: [], checks: {} }),
    metrics: createBotMetrics({ defaults: false }),
  });
}

/** An address of this machine that is not loopback, if it has one. */
function externalIPv4(): string | undefined {
  for (const list of Object.values(networkInterfaces())) for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  return undefined;
}

const post = (url: string, headers: Record<string, string> = {}) =>
  fetch(`${url}/webhook/alertmanager`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });

describe('webhooks without a bearer token', () => {
  it('tells loopback peers from the rest', () => {
    for (const a of ['127.0.0.1', '127.8.9.10', '::1', '::ffff:127.0.0.1']) expect(isLoopback(a), a).toBe(true);
    for (const a of [undefined, '', '10.0.0.5', '::ffff:10.0.0.5', '192.0.2.2', 'fd00::2', '1127.0.0.1', '127.0.0.1.evil'])
      expect(isLoopback(a), String(a)).toBe(false);
  });

  it('accepts a webhook from this host', async () => {
    srv = server();
    const { port } = await srv.listen(0, '127.0.0.1');
    const res = await post(`http://127.0.0.1:${port}`);
    expect(res.status, await res.clone().text()).toBe(202);
    expect(calls).toBe(1);
  });

  it('refuses one from another peer with 401 saying how to fix it, and records nothing', async () => {
    srv = server();
    // The peer as the Node server reports it; no proxy header can change it.
    const res = await srv.app.request(
      '/webhook/alertmanager',
      { method: 'POST', headers: { 'content-type': 'application/json', 'x-forwarded-for': '127.0.0.1' }, body },
      { incoming: { socket: { remoteAddress: '10.1.2.3' } } },
    );
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/set REPRISE_BEARER_TOKEN/);
    expect(calls).toBe(0);
  });

  it.runIf(externalIPv4() !== undefined)('refuses one that arrives over a real non-loopback interface', async () => {
    srv = server();
    const ip = externalIPv4()!;
    const { port } = await srv.listen(0, '0.0.0.0');
    const res = await post(`http://${ip}:${port}`);
    expect(res.status).toBe(401);
    expect(calls).toBe(0);
    // The same peer with the token configured and sent is accepted.
    await srv.close();
    srv = server('s3cret-token');
    const again = await srv.listen(0, '0.0.0.0');
    const ok = await post(`http://${ip}:${again.port}`, { authorization: 'Bearer s3cret-token' });
    expect(ok.status).toBe(202);
    expect(calls).toBe(1);
  });

  it('health, readiness and metrics stay open to any peer', async () => {
    srv = server();
    for (const path of ['/healthz', '/readyz', '/metrics']) {
      const res = await srv.app.request(path, {}, { incoming: { socket: { remoteAddress: '10.1.2.3' } } });
      expect(res.status, path).toBe(200);
    }
  });
});
