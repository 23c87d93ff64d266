/**
 * A generic HMAC source without `timestamp_header` (issue 29 deliverable 8): a captured signed
 * request replayed inside the window changes nothing — recognised by its body — unless the
 * operator turned that off; and no GET or HEAD body is ever read: one that announces a body is
 * answered at once and its connection closed, however slowly the body trickles.
 */
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { configSchema } from '../../../src/config/schema.js';
import { genericSignature } from '../../../src/core/generic-source.js';
import type { Incident } from '../../../src/core/types.js';
import { createHttpServer, type GenericSource, type HttpServer } from '../../../src/http/create-server.js';
import { createBotMetrics } from '../../../src/http/metrics.js';
import { ManualClock } from '../../../src/ports/clock.js';
import { silentLogger } from '../../../src/ports/logger.js';

const SECRET = 'c0ffee-generic-secret-0123456789';
const mapping = { alerts: 'checks', alertname: 'name', fingerprint: 'id', status: 'status', resolved_values: ['up'], labels: {} };
const body = (id: string, status = 'down') => JSON.stringify({ checks: [{ id, name: 'CheckoutHealthcheckFailing', status }] });

let srv: HttpServer | undefined;
let recorded: Incident[] = [];
afterEach(async () => {
  await srv?.close();
  srv = undefined;
});

function server(source: Partial<GenericSource>, clock: ManualClock): HttpServer {
  recorded = [];
  return createHttpServer({
    bodyLimitBytes: 1 << 20,
    logger: silentLogger,
    clock,
    genericSources: { uptime: { ...mapping, hmac_secret: SECRET, hmac_header: 'x-signature', replay_window_ms: 300_000, ...source } as GenericSource },
    onAlertmanager: async (incidents) => {
      recorded.push(...incidents);
      return { accepted: incidents.length };
    },
    readiness: () => ({ ready: true, reasons: [], checks: {} }),
    metrics: createBotMetrics({ defaults: false }),
  });
}

async function post(s: HttpServer, text: string, signature = genericSignature(SECRET, text)): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await s.app.request('/webhook/generic/uptime', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-signature': `sha256=${signature}` },
    body: text,
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

describe('a signed generic source without timestamp_header', () => {
  it('acknowledges a replayed body and records it once; other bodies go through; the window ends', async () => {
    const clock = new ManualClock('2026-03-01T10:00:00Z');
    srv = server({}, clock);
    const first = await post(srv, body('chk-1'));
    expect(first).toMatchObject({ status: 202, json: { accepted: 1 } });
    const replay = await post(srv, body('chk-1'));
    expect(replay.status).toBe(202);
    expect(replay.json).toMatchObject({ accepted: 0, ignored: expect.stringMatching(/^duplicate delivery: .*replay_window/) });
    // Its resolve is another body; so is another check.
    expect((await post(srv, body('chk-1', 'up'))).json).toMatchObject({ accepted: 1 });
    expect((await post(srv, body('chk-2'))).json).toMatchObject({ accepted: 1 });
    // The same bytes with an uppercase signature are the same body.
    expect((await post(srv, body('chk-2'), genericSignature(SECRET, body('chk-2')).toUpperCase())).json).toMatchObject({ accepted: 0 });
    expect(recorded.map((i) => `${i.fingerprint}:${i.status}`)).toEqual(['chk-1:firing', 'chk-1:resolved', 'chk-2:firing']);
    clock.advance(300_001);
    expect((await post(srv, body('chk-1'))).json).toMatchObject({ accepted: 1 });
    expect(recorded).toHaveLength(4);
  });

  it('a forged signature claims nothing: the real delivery after it still goes through', async () => {
    srv = server({}, new ManualClock('2026-03-01T10:00:00Z'));
    expect((await post(srv, body('chk-1'), genericSignature('not-the-secret-at-all', body('chk-1')))).status).toBe(401);
    expect((await post(srv, body('chk-1'))).json).toMatchObject({ accepted: 1 });
  });

  it('with replay_by_digest: false, the same body is taken again (the operator chose it)', async () => {
    srv = server({ replay_by_digest: false }, new ManualClock('2026-03-01T10:00:00Z'));
    expect((await post(srv, body('chk-1'))).json).toMatchObject({ accepted: 1 });
    expect((await post(srv, body('chk-1'))).json).toMatchObject({ accepted: 1 });
    expect(recorded).toHaveLength(2);
  });

  it('is on by default in the config, and can be turned off per source', () => {
    const src = (extra: Record<string, unknown>) =>
      configSchema.parse({ server: { generic_webhooks: { uptime: { alertname: 'name', hmac_secret: SECRET, ...extra } } } }).server.generic_webhooks![
        'uptime'
      ]!;
    expect(src({}).replay_by_digest).toBe(true);
    expect(src({ replay_by_digest: false }).replay_by_digest).toBe(false);
    expect(src({}).replay_window_ms).toBe(300_000);
  });
});

describe('GET and HEAD bodies', () => {
  /** Headers announcing a big body, then one byte: the answer must come without the rest. */
  function trickle(port: number, method: string, path: string, extra: string): Promise<{ head: string; closed: boolean }> {
    return new Promise((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1');
      let data = '';
      const timer = setTimeout(() => {
        socket.destroy();
        resolve({ head: data, closed: false });
      }, 5000);
      socket.on('data', (d) => (data += d.toString('utf8')));
      socket.on('close', () => {
        clearTimeout(timer);
        resolve({ head: data, closed: true });
      });
      socket.on('error', reject);
      socket.write(`${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n${extra}\r\nx`);
    });
  }

  it('answers a GET that announces a body 400 at once and closes the connection, on any route', async () => {
    srv = server({}, new ManualClock('2026-03-01T10:00:00Z'));
    const { port } = await srv.listen(0, '127.0.0.1');
    for (const [method, path] of [
      ['GET', '/healthz'],
      ['GET', '/metrics'],
      ['HEAD', '/readyz'],
      ['GET', '/webhook/generic/uptime'],
    ] as const) {
      const r = await trickle(port, method, path, 'Content-Length: 100000000\r\n');
      expect(r.head, `${method} ${path}`).toMatch(/^HTTP\/1\.1 400 /);
      expect(r.head.toLowerCase(), `${method} ${path}`).toContain('connection: close');
      expect(r.closed, `${method} ${path}`).toBe(true);
    }
    const chunked = await trickle(port, 'GET', '/healthz', 'Transfer-Encoding: chunked\r\n');
    expect(chunked.head).toMatch(/^HTTP\/1\.1 400 /);
    expect(chunked.closed).toBe(true);
    // Without a body, the same GET is answered as always.
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
  });
});
