/**
 * The local control API (SPEC §11): how `reprise feedback` (later `note`, `catalog sync`,
 * `status`) reaches the running bot so one process owns the store. It listens on a Unix
 * socket created with mode 0600 — only the user running the bot (and root) can connect — and
 * never on the network. JSON in and out, the same coded errors as the public port.
 */
import { randomUUID } from 'node:crypto';
import { chmodSync, existsSync, rmSync } from 'node:fs';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import { RepriseError } from '../core/errors.js';
import type { Logger } from '../ports/logger.js';
import { toHttpError } from './errors.js';
import { assertJsonContentType, decodeUtf8, parseJson, readBody } from './read-body.js';

/** Longest path a Unix socket may have on Linux (sun_path is 108 bytes with the NUL). */
export const MAX_SOCKET_PATH = 107;
const BODY_LIMIT = 64 * 1024;

export interface ControlHandlers {
  /** `POST /v1/feedback`: a vote or silence on behalf of a CLI user. */
  feedback: (body: unknown) => Promise<unknown>;
  /** `GET /v1/status`: what the bot is and how it is doing. */
  status: () => Promise<unknown>;
  /** `POST /v1/catalog/sync`: fetch the catalog now; answers once the index is rebuilt. */
  catalogSync?: () => Promise<unknown>;
  /** `POST /v1/curate` `{apply}`: run the grooming sweeps now; answers with the report. */
  curate?: (body: unknown) => Promise<unknown>;
  /** `POST /v1/note`: an operator note on a trigger's newest thread (`reprise note`). */
  note?: (body: unknown) => Promise<unknown>;
}

export interface ControlServer {
  readonly path: string;
  close(): Promise<void>;
}

type Handler = (req: IncomingMessage) => Promise<unknown>;

/**
 * Listens on `path`. A socket file left by a crashed bot is replaced: callers hold the store
 * lock first, so no live bot can own it. The socket is created under a 0177 umask (no window
 * in which another user could connect) and then chmod-ed 0600 for good measure.
 * @throws Error when the path is too long for a Unix socket.
 */
export async function startControlServer(path: string, handlers: ControlHandlers, logger: Logger): Promise<ControlServer> {
  if (Buffer.byteLength(path) > MAX_SOCKET_PATH) {
    throw new Error(`control socket path ${path} is longer than ${MAX_SOCKET_PATH} bytes`);
  }
  const log = logger.child({ component: 'control' });
  const routes: Record<string, { method: string; handle: Handler }> = {
    '/v1/feedback': {
      method: 'POST',
      handle: async (req) => {
        assertJsonContentType(req.headers['content-type']);
        return handlers.feedback(parseJson(decodeUtf8(await readBody(req, BODY_LIMIT))));
      },
    },
    '/v1/status': { method: 'GET', handle: async () => handlers.status() },
    '/v1/catalog/sync': {
      method: 'POST',
      handle: async () => {
        if (!handlers.catalogSync) throw new RepriseError('not_found', 'catalog sync is not available in this bot');
        return handlers.catalogSync();
      },
    },
    '/v1/curate': {
      method: 'POST',
      handle: async (req) => {
        if (!handlers.curate) throw new RepriseError('not_found', 'grooming is not available in this bot');
        assertJsonContentType(req.headers['content-type']);
        return handlers.curate(parseJson(decodeUtf8(await readBody(req, BODY_LIMIT))));
      },
    },
  };
  const note = handlers.note;
  if (note) {
    routes['/v1/note'] = {
      method: 'POST',
      handle: async (req) => {
        assertJsonContentType(req.headers['content-type']);
        return note(parseJson(decodeUtf8(await readBody(req, BODY_LIMIT))));
      },
    };
  }

  const server = http.createServer((req, res) => {
    void handle(req, res);
  });
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const requestId = randomUUID();
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    let status = 200;
    let body: unknown;
    try {
      const route = Object.hasOwn(routes, path) ? routes[path] : undefined;
      if (!route) throw new RepriseError('not_found', `no control route ${path.slice(0, 100)}`);
      if (req.method !== route.method) throw new RepriseError('method_not_allowed', `use ${route.method} on ${path}`);
      body = { requestId, result: await route.handle(req) };
    } catch (err) {
      const e = toHttpError(err, requestId);
      status = e.status;
      body = e.body;
      if (e.serverFault) log.error({ err, path }, 'control request failed');
      else log.info({ status, code: e.body.error.code, path }, `control request refused: ${e.body.error.message}`);
    }
    if (res.headersSent || res.destroyed) return;
    const text = JSON.stringify(body);
    res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(text) });
    res.end(text);
  };

  if (existsSync(path)) rmSync(path, { force: true });
  const previous = process.umask(0o177);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(path, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } finally {
    process.umask(previous);
  }
  chmodSync(path, 0o600);
  log.info({ socket: path }, 'control socket listening');
  return {
    path,
    close: () =>
      new Promise((resolve) => {
        server.close(() => {
          rmSync(path, { force: true });
          resolve();
        });
        server.closeAllConnections();
      }),
  };
}
