import http from 'node:http';

export type ControlReply = { ok: true; status: number; body: unknown } | { ok: false; reason: 'absent' | 'denied' | 'failed'; message: string };

/**
 * One request to a running bot's control socket. `absent` means nothing listens there (no
 * bot, or one that died): the caller may fall back to writing directly *if* it can take the
 * store lock. `denied` means a bot runs as another user: never a reason to write directly.
 */
export function controlRequest(socketPath: string, method: 'GET' | 'POST', path: string, body?: unknown, timeoutMs = 15_000): Promise<ControlReply> {
  return new Promise((resolve) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request(
      {
        socketPath,
        method,
        path,
        headers: payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
        timeout: timeoutMs,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => {
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            // keep the raw text
          }
          resolve({ ok: true, status: res.statusCode ?? 0, body: parsed });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer from ${socketPath} within ${timeoutMs} ms`)));
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT' || err.code === 'ECONNREFUSED') resolve({ ok: false, reason: 'absent', message: err.message });
      else if (err.code === 'EACCES' || err.code === 'EPERM') resolve({ ok: false, reason: 'denied', message: err.message });
      else resolve({ ok: false, reason: 'failed', message: err.message });
    });
    req.end(payload);
  });
}
