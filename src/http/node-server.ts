/**
 * A hono app on a Node HTTP server, the same way for every surface (the public port, the
 * control socket, `reprise mcp --http`): whole-request and header deadlines against slow
 * senders, a malformed request answered 400 and logged (never a crash), and a close that lets
 * requests in flight finish.
 */
import { chmodSync, existsSync, rmSync } from 'node:fs';
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAdaptorServer } from '@hono/node-server';
import type { Hono } from 'hono';
import type { Logger } from '../ports/logger.js';

/** Longest path a Unix socket may have on Linux (sun_path is 108 bytes with the NUL). */
export const MAX_SOCKET_PATH = 107;

export interface NodeServerOptions {
  logger: Logger;
  /** Whole-request deadline (headers and body) against slow senders. Default 30 s. */
  requestTimeoutMs?: number;
}

export interface NodeServer {
  readonly server: http.Server;
  /** TCP: resolves with the port bound (0 = any free port). */
  listen(port: number, host: string): Promise<{ port: number }>;
  /**
   * A Unix socket at `path`, mode 0600 from its creation (under a 0177 umask, so no other user
   * can ever connect); a socket file left by a crashed process is replaced.
   * @throws Error when the path is too long for a Unix socket.
   */
  listenSocket(path: string): Promise<void>;
  /** Stop accepting, let requests in flight finish (all connections are dropped when `force`). */
  close(opts?: { force?: boolean }): Promise<void>;
}

// hono's generic parameters vary per surface; the server only calls `fetch`.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function serveNode(app: Hono<any>, opts: NodeServerOptions): NodeServer {
  const log = opts.logger;
  const server = createAdaptorServer({ fetch: app.fetch }) as http.Server;
  server.requestTimeout = opts.requestTimeoutMs ?? 30_000;
  server.headersTimeout = Math.min(server.requestTimeout, 20_000);
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    log.warn({ code: err.code, err: err.message }, 'rejected malformed HTTP request');
    if (!socket.writable || err.code === 'ECONNRESET') {
      socket.destroy();
      return;
    }
    const body = JSON.stringify({ error: { code: 'bad_request', message: 'malformed HTTP request' } });
    socket.end(`HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  });
  let socketPath: string | undefined;

  const listening = (start: (done: () => void) => void): Promise<void> =>
    new Promise((resolve, reject) => {
      const onError = (err: Error): void => reject(err);
      server.once('error', onError);
      start(() => {
        server.off('error', onError);
        resolve();
      });
    });

  return {
    server,
    listen: async (port, host) => {
      await listening((done) => server.listen(port, host, done));
      return { port: (server.address() as AddressInfo).port };
    },
    listenSocket: async (path) => {
      if (Buffer.byteLength(path) > MAX_SOCKET_PATH) throw new Error(`control socket path ${path} is longer than ${MAX_SOCKET_PATH} bytes`);
      if (existsSync(path)) rmSync(path, { force: true });
      const previous = process.umask(0o177);
      try {
        await listening((done) => server.listen(path, done));
      } finally {
        process.umask(previous);
      }
      chmodSync(path, 0o600);
      socketPath = path;
    },
    close: (o = {}) =>
      new Promise((resolve, reject) => {
        if (!server.listening) return resolve();
        server.close((err) => {
          if (socketPath) rmSync(socketPath, { force: true });
          if (err) reject(err);
          else resolve();
        });
        if (o.force) server.closeAllConnections();
        else server.closeIdleConnections();
      }),
  };
}
