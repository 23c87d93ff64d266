/**
 * `reprise mcp --http`: the catalog's MCP server over Streamable HTTP at `/mcp` (hono, like the
 * webhook ingress). Stateless: each POST gets a fresh server and transport, so no session state
 * grows with clients and a broken request cannot poison the next one. A bearer token (compared
 * in constant time by hono's bearerAuth) guards every request when set; whether or not it is,
 * Host and Origin must name this server (host-guard.ts, the public port's rule: no DNS
 * rebinding from a browser page).
 * Bodies over the limit get 413 before anything is parsed.
 */
import { randomUUID } from 'node:crypto';
import type http from 'node:http';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { Hono, type Context, type MiddlewareHandler } from 'hono';
import { bearerAuth } from 'hono/bearer-auth';
import { bodyLimit } from 'hono/body-limit';
import { HTTPException } from 'hono/http-exception';
import { RepriseError } from '../core/errors.js';
import type { Logger } from '../ports/logger.js';
import { toHttpError } from './errors.js';
import { refusalOf, type HostNames } from './host-guard.js';
import { serveNode } from './node-server.js';

export const MCP_PATH = '/mcp';

export { isLoopbackHost } from './host-guard.js';

export interface McpHttpOptions {
  /** A fresh server per request (its tools share the caller's catalog and ledger). */
  createServer: () => McpServer;
  /** Required bearer token; absent only on a loopback bind. */
  token?: string;
  /** Largest request body, bytes (`server.body_limit_bytes`). */
  bodyLimitBytes: number;
  /** Names besides loopback ones the server answers to (`server.public_url`, `ui.allowed_hosts`). Default: none. */
  hosts?: HostNames;
  logger: Logger;
  requestTimeoutMs?: number;
}

export interface McpHttpServer {
  server: http.Server;
  app: Hono;
  listen(port: number, host: string): Promise<{ port: number }>;
  close(): Promise<void>;
}

function errorResponse(c: Context, err: unknown, log: Logger): Response {
  const e = toHttpError(err, randomUUID());
  if (e.serverFault) log.error({ err, status: e.status }, `mcp request failed: ${err instanceof Error ? err.message : String(err)}`);
  else log.warn({ status: e.status, code: e.body.error.code }, `mcp request rejected: ${e.body.error.message}`);
  const headers: Record<string, string> = { 'Cache-Control': 'no-store' };
  if (e.status === 401) headers['WWW-Authenticate'] = 'Bearer realm="reprise-mcp"';
  if (e.status === 405) headers['Allow'] = 'POST';
  if (e.status === 413) headers['Connection'] = 'close';
  return c.json(e.body, e.status as 400, headers);
}

export function createMcpHttpServer(opts: McpHttpOptions): McpHttpServer {
  const log = opts.logger.child({ component: 'mcp-http' });
  const app = new Hono();
  const reject = (code: 'unauthorized' | 'forbidden', message: string) => (c: Context) => errorResponse(c, new RepriseError(code, message), log);

  // A browser page reaching this server through a rebinding DNS name still sends its own Host
  // and Origin: refused first, token or not (without one, that is all that keeps pages out).
  const hosts = opts.hosts ?? { names: [] };
  const bearer: MiddlewareHandler | undefined = opts.token
    ? bearerAuth({
        token: opts.token,
        realm: 'reprise-mcp',
        noAuthenticationHeader: { message: reject('unauthorized', 'missing bearer token (Authorization: Bearer <REPRISE_MCP_TOKEN>)') },
        invalidAuthenticationHeader: { message: reject('unauthorized', 'authorization header is not a bearer token') },
        invalidToken: { message: reject('unauthorized', 'invalid bearer token') },
      })
    : undefined;
  const auth: MiddlewareHandler = async (c, next) => {
    const why = refusalOf(c, hosts);
    if (why !== undefined) return reject('forbidden', why)(c);
    return bearer ? bearer(c, next) : next();
  };
  const limit = bodyLimit({
    maxSize: opts.bodyLimitBytes,
    onError: (c) => errorResponse(c, new RepriseError('payload_too_large', `request body exceeds the limit of ${opts.bodyLimitBytes} bytes`), log),
  });

  app.post(MCP_PATH, auth, limit, async (c) => {
    const server = opts.createServer();
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
      maxRequestBodySize: opts.bodyLimitBytes,
    });
    try {
      await server.connect(transport);
      return await transport.handleRequest(c.req.raw);
    } finally {
      // JSON responses are complete once handleRequest resolves: nothing is left to stream.
      await transport.close().catch(() => undefined);
      await server.close().catch(() => undefined);
    }
  });
  // Stateless: no standalone SSE stream (GET) and no session to end (DELETE).
  app.all(MCP_PATH, auth, (c) =>
    errorResponse(c, new RepriseError('method_not_allowed', `method ${c.req.method} not allowed on ${MCP_PATH}; use POST (stateless Streamable HTTP)`), log),
  );
  app.notFound((c) =>
    errorResponse(c, new RepriseError('not_found', `no route for ${c.req.method} ${c.req.path.slice(0, 200)}; the MCP endpoint is POST ${MCP_PATH}`), log),
  );
  // bearerAuth rejects by throwing an HTTPException carrying our own 401 response.
  app.onError((err, c) => (err instanceof HTTPException && err.res ? err.res : errorResponse(c, err, log)));

  // The same Node server plumbing as the public port: deadlines, malformed requests answered 400.
  const node = serveNode(app, { logger: log, ...(opts.requestTimeoutMs ? { requestTimeoutMs: opts.requestTimeoutMs } : {}) });
  return {
    server: node.server,
    app,
    listen: (port, host) => node.listen(port, host),
    close: () => node.close({ force: true }),
  };
}
