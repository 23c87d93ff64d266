/**
 * The control socket on the same HTTP stack as the public port (hono, one error handler): the
 * same coded JSON errors with a request id, 405 naming the method, bounded bodies, and a socket
 * only its owner can open — whatever the umask.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startControlServer, type ControlServer } from '../../../src/http/control-server.js';
import { silentLogger } from '../../../src/ports/logger.js';

let dir: string;
let control: ControlServer;
const got: unknown[] = [];

function call(
  method: string,
  path: string,
  body?: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: http.IncomingHttpHeaders; json: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { socketPath: control.path, method, path, headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, json: JSON.parse(text) as Record<string, unknown> }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'reprise-control-'));
  const previous = process.umask(0o022);
  try {
    control = await startControlServer(
      join(dir, 'control.sock'),
      {
        feedback: async (b) => {
          got.push(b);
          return { recorded: true };
        },
        status: async () => ({ pid: 1 }),
      },
      silentLogger,
    );
  } finally {
    process.umask(previous);
  }
});

afterAll(async () => {
  await control?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('control socket', () => {
  it('is 0600 under a 022 umask', () => {
    expect(statSync(control.path).mode & 0o777).toBe(0o600);
  });

  it('answers {requestId, result} and hands the body on', async () => {
    const ok = await call('POST', '/v1/feedback', JSON.stringify({ triggerKey: 'a|b', vote: 'down' }));
    expect(ok.status).toBe(200);
    expect(ok.json).toMatchObject({ requestId: expect.any(String), result: { recorded: true } });
    expect(got.at(-1)).toEqual({ triggerKey: 'a|b', vote: 'down' });
    expect((await call('GET', '/v1/status')).json).toMatchObject({ result: { pid: 1 } });
  });

  it('refuses with the coded errors of the public port', async () => {
    const unknown = await call('GET', '/v1/nope');
    expect(unknown.status).toBe(404);
    expect(unknown.json).toMatchObject({ error: { code: 'not_found', requestId: expect.any(String) } });
    const wrong = await call('GET', '/v1/feedback');
    expect(wrong.status).toBe(405);
    expect(wrong.headers['allow']).toBe('POST');
    const text = await call('POST', '/v1/feedback', 'x', { 'content-type': 'text/plain' });
    expect(text.status).toBe(415);
    const bad = await call('POST', '/v1/feedback', '{');
    expect(bad).toMatchObject({ status: 400, json: { error: { code: 'bad_request', message: expect.stringContaining('malformed JSON') } } });
    const big = await call('POST', '/v1/feedback', JSON.stringify({ text: 'x'.repeat(70_000) }));
    expect(big.status).toBe(413);
    const absent = await call('POST', '/v1/curate', '{}');
    expect(absent).toMatchObject({ status: 404, json: { error: { message: 'grooming is not available in this bot' } } });
    const sync = await call('POST', '/v1/catalog/sync');
    expect(sync).toMatchObject({ status: 404, json: { error: { message: 'catalog sync is not available in this bot' } } });
  });
});
