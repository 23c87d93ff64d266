/**
 * HTTP ingress (SPEC §4, §11): the Alertmanager webhook, health, readiness and metrics, on
 * plain node:http. Nothing else: the local control API (feedback from the CLI) is on a Unix
 * socket (control-server.ts), never on this port. Every request is handled inside one
 * try/catch: input never crashes the process, every rejection is a JSON error with a request
 * id, and is logged.
 */
import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseAlertmanagerPayloadYielding } from '../core/alertmanager.js';
import { RepriseError } from '../core/errors.js';
import type { Incident } from '../core/types.js';
import type { Clock } from '../ports/clock.js';
import type { Logger } from '../ports/logger.js';
import { toHttpError } from './errors.js';
import type { BotMetrics } from './metrics.js';
import type { Readiness } from './readiness.js';
import { assertJsonContentType, decodeUtf8, parseJson, readBody } from './read-body.js';

export interface AlertmanagerHandlerResult {
  accepted: number;
  /** Echoed in the 202 body when present (e.g. per-incident outcome). */
  results?: unknown;
}

export interface HttpServerOptions {
  /** When set, webhooks require `Authorization: Bearer <token>`; health and metrics do not. */
  bearerToken?: string;
  bodyLimitBytes: number;
  logger: Logger;
  /** Called with the normalized incidents; the 202 is sent only after it resolves. */
  onAlertmanager: (incidents: Incident[], requestId: string) => Promise<AlertmanagerHandlerResult>;
  /** What `/readyz` reports: 200 when ready, 503 with the reasons otherwise. */
  readiness: () => Readiness;
  /** The registry `/metrics` exposes; request counts and latencies are recorded in it. */
  metrics: BotMetrics;
  /** Time source for `receivedAt` (alerts without `startsAt`). Defaults to the system clock. */
  clock?: Clock;
  /** Longest label or annotation value kept (characters); longer ones are cut with a marker and logged. */
  fieldLimit?: number;
  /** Whole-request deadline against slow senders. Default 30 s. */
  requestTimeoutMs?: number;
}

export interface HttpServer {
  server: http.Server;
  listen(port: number, host?: string): Promise<{ port: number }>;
  /** Stop accepting, let in-flight requests finish, drop idle keep-alive sockets. */
  close(): Promise<void>;
}

interface Reply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
  /** Pre-rendered text (metrics); otherwise `body` is sent as JSON. */
  text?: string;
}

interface Ctx {
  req: IncomingMessage;
  requestId: string;
  log: Logger;
}

interface Route {
  methods: readonly string[];
  handle: (ctx: Ctx) => Promise<Reply>;
}

const REQUEST_ID = /^[\w.:-]{1,128}$/;
const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

const sha256 = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();

/**
 * Compare digests rather than raw strings: equal length for timingSafeEqual, and the token's
 * length does not leak through timing either.
 */
function checkBearer(header: string | undefined, expectedDigest: Buffer): void {
  if (!header) throw new RepriseError('unauthorized', 'missing bearer token (Authorization: Bearer <token>)');
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!m?.[1]) throw new RepriseError('unauthorized', 'authorization header is not a bearer token');
  if (!timingSafeEqual(sha256(m[1]), expectedDigest)) throw new RepriseError('unauthorized', 'invalid bearer token');
}

/** Build the ingress server. Nothing listens until `listen` is called. */
export function createHttpServer(opts: HttpServerOptions): HttpServer {
  const log = opts.logger.child({ component: 'http' });
  const clock = opts.clock ?? { now: () => new Date() };
  const tokenDigest = opts.bearerToken ? sha256(opts.bearerToken) : undefined;

  const requests = opts.metrics.httpRequests;
  const duration = opts.metrics.httpDuration;

  const alertmanager = async ({ req, requestId, log: rlog }: Ctx): Promise<Reply> => {
    if (tokenDigest) checkBearer(req.headers.authorization, tokenDigest);
    assertJsonContentType(req.headers['content-type']);
    const raw = await readBody(req, opts.bodyLimitBytes);
    const json = parseJson(decodeUtf8(raw));
    const batch = await parseAlertmanagerPayloadYielding(json, { receivedAt: clock.now().toISOString(), fieldLimit: opts.fieldLimit });
    if (batch.truncated.length > 0) {
      rlog.warn({ truncated: batch.truncated.slice(0, 20), count: batch.truncated.length }, `cut ${batch.truncated.length} oversized label/annotation value(s) to ${opts.fieldLimit ?? 'the'} characters`);
    }
    rlog.info(
      { alerts: batch.incidents.length, groupKey: batch.groupKey, receiver: batch.receiver },
      'alertmanager webhook parsed',
    );
    const result = await opts.onAlertmanager(batch.incidents, requestId);
    const body: Record<string, unknown> = { accepted: result.accepted, requestId };
    if (result.results !== undefined) body.results = result.results;
    return { status: 202, body };
  };

  const routes: Record<string, Route> = {
    '/webhook/alertmanager': { methods: ['POST'], handle: alertmanager },
    '/healthz': { methods: ['GET', 'HEAD'], handle: async () => ({ status: 200, body: { status: 'ok' } }) },
    '/readyz': {
      methods: ['GET', 'HEAD'],
      handle: async () => {
        const r = opts.readiness();
        return r.ready
          ? { status: 200, body: { status: 'ready', checks: r.checks } }
          : { status: 503, body: { status: 'not_ready', reasons: r.reasons, checks: r.checks } };
      },
    },
    '/metrics': {
      methods: ['GET', 'HEAD'],
      handle: async () => ({ status: 200, body: null, text: await opts.metrics.render(), headers: { 'Content-Type': opts.metrics.contentType } }),
    },
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const started = performance.now();
    const incoming = req.headers['x-request-id'];
    const requestId = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    const method = req.method ?? 'GET';
    let path = '/';
    try {
      path = new URL(req.url ?? '/', 'http://localhost').pathname;
    } catch {
      path = (req.url ?? '/').slice(0, 200);
    }
    const route = Object.hasOwn(routes, path) ? routes[path] : undefined;
    const routeLabel = route ? path : 'unmatched';
    const rlog = log.child({ requestId, method, path: path.slice(0, 200) });

    let reply: Reply;
    try {
      if (!route) throw new RepriseError('not_found', `no route for ${method} ${path.slice(0, 200)}`);
      if (!route.methods.includes(method)) {
        const err = new RepriseError('method_not_allowed', `method ${method} not allowed on ${path}; use ${route.methods.join(', ')}`);
        reply = errorReply(err, requestId, rlog, req);
        reply.headers = { ...reply.headers, Allow: route.methods.join(', ') };
      } else {
        reply = await route.handle({ req, requestId, log: rlog });
      }
    } catch (err) {
      reply = errorReply(err, requestId, rlog, req);
    }

    send(res, reply, requestId, rlog);
    const statusLabel = String(reply.status);
    const methodLabel = KNOWN_METHODS.has(method) ? method : 'OTHER';
    requests.inc({ route: routeLabel, method: methodLabel, status: statusLabel });
    duration.observe({ route: routeLabel }, (performance.now() - started) / 1000);
  };

  const server = http.createServer((req, res) => {
    // handle() catches everything itself; this is the last line of defence for the process.
    handle(req, res).catch((err: unknown) => {
      log.error({ err }, 'unexpected failure outside request handling');
      if (!res.headersSent) res.destroy();
    });
  });
  server.requestTimeout = opts.requestTimeoutMs ?? 30_000;
  server.headersTimeout = Math.min(server.requestTimeout, 20_000);
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    log.warn({ code: err.code, err: err.message }, 'rejected malformed HTTP request');
    if (!socket.writable || (err.code === 'ECONNRESET')) {
      socket.destroy();
      return;
    }
    const body = JSON.stringify({ error: { code: 'bad_request', message: 'malformed HTTP request' } });
    socket.end(
      `HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });

  return {
    server,
    listen: (port, host = '0.0.0.0') =>
      new Promise((resolve, reject) => {
        const onError = (err: Error): void => reject(err);
        server.once('error', onError);
        server.listen(port, host, () => {
          server.off('error', onError);
          const addr = server.address() as AddressInfo;
          log.info({ port: addr.port, host }, 'http server listening');
          resolve({ port: addr.port });
        });
      }),
    close: () =>
      new Promise((resolve, reject) => {
        if (!server.listening) return resolve();
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeIdleConnections();
      }),
  };
}

function errorReply(err: unknown, requestId: string, log: Logger, req: IncomingMessage): Reply {
  const e = toHttpError(err, requestId);
  const fields = { status: e.status, code: e.body.error.code, userAgent: req.headers['user-agent'] };
  if (e.serverFault) log.error({ ...fields, err }, `request failed: ${err instanceof Error ? err.message : String(err)}`);
  else log.warn(fields, `rejected: ${e.body.error.message}`);
  const reply: Reply = { status: e.status, body: e.body };
  if (e.status === 401) reply.headers = { 'WWW-Authenticate': 'Bearer realm="reprise"' };
  // A body we refused to read may still be arriving; closing is cheaper than draining it.
  if (e.status === 413) reply.headers = { Connection: 'close' };
  return reply;
}

function send(res: ServerResponse, reply: Reply, requestId: string, log: Logger): void {
  if (res.headersSent || res.destroyed) return;
  try {
    const payload = reply.text ?? JSON.stringify(reply.body);
    res.statusCode = reply.status;
    res.setHeader('X-Request-Id', requestId);
    res.setHeader('Cache-Control', 'no-store');
    if (reply.text === undefined) res.setHeader('Content-Type', 'application/json; charset=utf-8');
    for (const [k, v] of Object.entries(reply.headers ?? {})) res.setHeader(k, v);
    res.setHeader('Content-Length', Buffer.byteLength(payload));
    res.end(payload);
  } catch (err) {
    log.error({ err }, 'could not write response');
    res.destroy();
  }
}
