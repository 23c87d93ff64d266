/**
 * The public port (SPEC §4, §11) on hono: one sub-app per webhook source (webhooks/), health,
 * readiness, metrics, and whatever routes a transport mounts (Slack's `/slack/events`). Nothing
 * else: the local control API is on a Unix socket (control-server.ts), never on this port.
 * Request ids, logs and the one error handler are shared with it (http-app.ts); admission caps
 * and the verify pool (admission.ts) keep slow or unauthenticated senders from starving the
 * ones that matter; input never crashes the process.
 */
import type http from 'node:http';
import type { MiddlewareHandler } from 'hono';
import { bearerAuth } from 'hono/bearer-auth';
import { RepriseError } from '../core/errors.js';
import type { ChatIntent } from '../core/chat/chat-types.js';
import type { LinkPolicy } from '../core/alert-links.js';
import type { IdentityOptions } from '../core/identity.js';
import { systemClock, type Clock } from '../ports/clock.js';
import type { Logger } from '../ports/logger.js';
import { admission, VerifyPool } from './admission.js';
import { hostGuard, type HostNames } from './host-guard.js';
import { createHttpApp, EdgeError, finishHttpApp, isLoopback, remoteAddress, type HttpApp, type HttpContext, type HttpEnv } from './http-app.js';
import { SHED_ROUTES, type BotMetrics } from './metrics.js';
import { serveNode } from './node-server.js';
import type { Readiness } from './readiness.js';
import { readRequestBody } from './read-body.js';
import { memoryReplayStore, ReplayGuard, type ReplayStore } from './replay-guard.js';
import { alertmanagerWebhook } from './webhooks/alertmanager-webhook.js';
import { genericWebhook, type GenericSource } from './webhooks/generic-webhook.js';
import { pagerDutyWebhook } from './webhooks/pagerduty-webhook.js';
import { sourceLabel, webhookKit, type IncidentHandler } from './webhooks/webhook-kit.js';

export { isLoopback } from './http-app.js';
export type { HttpApp, HttpEnv } from './http-app.js';
export type { GenericSource } from './webhooks/generic-webhook.js';

export interface HttpServerOptions {
  /**
   * When set, webhooks require `Authorization: Bearer <token>`; health and metrics do not.
   * When unset, webhooks are accepted from loopback peers only (401 from anywhere else).
   */
  bearerToken?: string;
  /** Secret that verifies `X-PagerDuty-Signature`; without it `/webhook/pagerduty` refuses everything. */
  pagerDutySecret?: string;
  /** `POST /webhook/generic/<name>` sources by name: HMAC-checked when `hmac_secret` is set, bearer-guarded otherwise. */
  genericSources?: Record<string, GenericSource>;
  bodyLimitBytes: number;
  logger: Logger;
  /** Called with the normalized incidents; the 202 is sent once it resolves. */
  onAlertmanager: IncidentHandler;
  /** What a person did in a source (PagerDuty acks and notes), for the bot's entrance; the 202 is sent once it resolves. */
  onChat?: (intents: ChatIntent[]) => Promise<unknown[]>;
  /** What `/readyz` reports: 200 when ready, 503 with the reasons otherwise. */
  readiness: () => Readiness;
  /** The registry `/metrics` exposes; request counts and latencies are recorded in it. */
  metrics: BotMetrics;
  /** More routes on the same port (a transport's callbacks); they get the same ids, logs, errors and admission caps. */
  mount?: (app: HttpApp) => void;
  /** Longest label or annotation value kept (characters); longer ones are cut with a marker and logged. */
  fieldLimit?: number;
  /** How alerts' identities are derived (`identity.labels`). */
  identity?: IdentityOptions;
  /** Which hosts the cards' links may point to (`links.allowed_hosts`). */
  links?: LinkPolicy;
  /** Time source for `receivedAt`, replay windows and the verify pool's pace. Defaults to the system clock. */
  clock?: Clock;
  /** Whole-request deadline (headers and body) against slow senders. Default 30 s. */
  requestTimeoutMs?: number;
  /** The body must have arrived this long after the headers were read. Default 10 s. */
  bodyTimeoutMs?: number;
  /** Requests of one route (a webhook source, `/slack/events`) in progress at once. Default {@link DEFAULT_MAX_PENDING_WEBHOOKS}. */
  maxPendingWebhooks?: number;
  /** Requests from one address in progress at once, across routes. Default 64. */
  maxPendingPerPeer?: number;
  /** Bodies read before their signature can be checked, at once. Default 64. */
  verifyPoolSlots?: number;
  /** PagerDuty events further than this from now are refused; accepted ids are remembered twice as long. Default 1 h. */
  replayWindowMs?: number;
  /** Where accepted signed deliveries are remembered (the bot's store: survives restarts, shared by replicas). Default: this process only. */
  replayStore?: ReplayStore;
  /** The public names every request must name in `Host` (and `Origin`) besides loopback ones (host-guard.ts). Default: none. */
  hosts?: HostNames;
}

export const DEFAULT_MAX_PENDING_WEBHOOKS = 256;

export interface HttpServer {
  server: http.Server;
  /** The hono app (tests may call `app.request()` in-process). */
  app: HttpApp;
  listen(port: number, host?: string): Promise<{ port: number }>;
  /** Stop accepting, let in-flight requests finish, drop idle keep-alive sockets. */
  close(): Promise<void>;
}

const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
/** Route label for anything no route matched: scanners must not explode metric cardinality. */
const UNMATCHED = 'unmatched';

/** The admission route of a request: webhooks by source, other POSTs by their first path segment (`slack`). */
function routeOf(method: string, path: string): string | undefined {
  if (method !== 'POST') return undefined;
  const [, first = '', second = ''] = path.split('/');
  const route = first === 'webhook' ? sourceLabel(second) : first;
  return (SHED_ROUTES as readonly string[]).includes(route) ? route : 'other';
}

/** What a body will weigh: its declared length, else the limit. */
function expectedBytes(c: HttpContext, limit: number): number {
  const declared = Number(c.req.header('content-length'));
  return Number.isSafeInteger(declared) && declared >= 0 ? Math.min(declared, limit) : limit;
}

/** Build the ingress server. Nothing listens until `listen` is called. */
export function createHttpServer(opts: HttpServerOptions): HttpServer {
  const log = opts.logger.child({ component: 'http' });
  const clock = opts.clock ?? systemClock;
  const nowMs = (): number => clock.now().getTime();
  const { app, errorResponse } = createHttpApp({ logger: log, authenticate: 'Bearer realm="reprise"', trustRequestId: true });

  // Metrics around everything, errors included.
  app.use(async (c, next) => {
    const started = performance.now();
    await next();
    const route = c.req.routePath && c.req.routePath !== '/*' ? c.req.routePath : (c.get('routeLabel') ?? UNMATCHED);
    const method = KNOWN_METHODS.has(c.req.method) ? c.req.method : 'OTHER';
    opts.metrics.httpRequests.inc({ route, method, status: String(c.res.status) });
    opts.metrics.httpDuration.observe({ route }, (performance.now() - started) / 1000);
  });
  // Before anything else: a request that does not name this bot (DNS rebinding) is refused.
  app.use(hostGuard(opts.hosts ?? { names: [] }));
  // No route reads the body of a GET or HEAD: one that announces a body is refused at once and
  // its connection closed, rather than drained (a trickled body would hold the socket).
  app.use(async (c, next) => {
    if (c.req.method !== 'GET' && c.req.method !== 'HEAD') return next();
    const length = c.req.header('content-length');
    if ((length !== undefined && length.trim() !== '0') || c.req.header('transfer-encoding') !== undefined)
      throw new EdgeError('bad_request', `${c.req.method} requests carry no body here; send it without one`, { closeConnection: true });
    return next();
  });
  const onShed = (route: string, reason: string): void => opts.metrics.requestsShed.inc({ route, reason });
  app.use(
    admission({
      maxPerRoute: opts.maxPendingWebhooks ?? DEFAULT_MAX_PENDING_WEBHOOKS,
      maxPerPeer: opts.maxPendingPerPeer ?? 64,
      routeOf,
      onShed,
      logger: log,
      now: nowMs,
    }),
  );
  const pool = new VerifyPool({
    slots: opts.verifyPoolSlots ?? 64,
    now: nowMs,
    onShed,
    onSize: (n) => opts.metrics.unverifiedBodies.set(n),
    logger: log,
  });
  const bodyTimeoutMs = opts.bodyTimeoutMs ?? 10_000;
  // Routes mounted by transports (Slack) read their signed bodies the same way.
  app.use(async (c, next) => {
    c.set('readSigned', async (ctx: HttpContext, route: string, limitBytes?: number) => {
      const ticket = pool.enter(route, expectedBytes(ctx, limitBytes ?? opts.bodyLimitBytes));
      try {
        return await readRequestBody(ctx, {
          limitBytes: limitBytes ?? opts.bodyLimitBytes,
          deadlineMs: bodyTimeoutMs,
          signal: ticket.signal,
          onChunk: (n) => ticket.chunk(n),
        });
      } finally {
        ticket.leave();
      }
    });
    await next();
  });

  const unauthorized = (message: string) => (c: HttpContext) => errorResponse(c, new RepriseError('unauthorized', message));
  const guard: MiddlewareHandler<HttpEnv> = opts.bearerToken
    ? bearerAuth({
        token: opts.bearerToken,
        realm: 'reprise',
        noAuthenticationHeader: { message: unauthorized('missing bearer token (Authorization: Bearer <token>)') },
        invalidAuthenticationHeader: { message: unauthorized('authorization header is not a bearer token') },
        invalidToken: { message: unauthorized('invalid bearer token') },
      })
    : async (c, next) => {
        // No token: a webhook changes state (opens, resolves that grade the catalog), so only
        // this host may send one. The quickstart's curl works; the network needs the token.
        if (!isLoopback(remoteAddress(c))) {
          throw new RepriseError(
            'unauthorized',
            'webhooks from other hosts need a bearer token: set REPRISE_BEARER_TOKEN (server.bearer_token) and send it as Authorization: Bearer <token>',
          );
        }
        await next();
        return undefined;
      };

  const replayWindowMs = opts.replayWindowMs ?? 3_600_000;
  const kit = webhookKit({
    guard,
    bodyLimitBytes: opts.bodyLimitBytes,
    bodyTimeoutMs,
    pool,
    replay: new ReplayGuard(opts.replayStore ?? memoryReplayStore(nowMs), { now: () => clock.now(), logger: log }),
    clock,
    ...(opts.fieldLimit ? { fieldLimit: opts.fieldLimit } : {}),
    ...(opts.identity ? { identity: opts.identity } : {}),
    ...(opts.links ? { links: opts.links } : {}),
    metrics: opts.metrics,
    onIncidents: opts.onAlertmanager,
    ...(opts.onChat ? { onChat: opts.onChat } : {}),
  });
  app.route('/webhook/alertmanager', alertmanagerWebhook(kit, 'alertmanager'));
  app.route('/webhook/grafana', alertmanagerWebhook(kit, 'grafana'));
  app.route('/webhook/pagerduty', pagerDutyWebhook(kit, { secret: opts.pagerDutySecret, replayWindowMs }));
  app.route('/webhook/generic', genericWebhook(kit, opts.genericSources ?? {}));
  for (const [name, s] of Object.entries(opts.genericSources ?? {}))
    if (s.hmac_secret && !s.timestamp_header && s.replay_by_digest === false)
      log.warn(
        { source: name },
        `generic webhook ${name}: replay_by_digest is off and no timestamp_header is set, so a captured signed request can be replayed`,
      );

  app.on(['GET', 'HEAD'], '/healthz', (c) => c.json({ status: 'ok' }));
  app.on(['GET', 'HEAD'], '/readyz', (c) => {
    const r = opts.readiness();
    return r.ready ? c.json({ status: 'ready', checks: r.checks }) : c.json({ status: 'not_ready', reasons: r.reasons, checks: r.checks }, 503);
  });
  app.on(['GET', 'HEAD'], '/metrics', async (c) => c.body(await opts.metrics.render(), 200, { 'Content-Type': opts.metrics.contentType }));

  opts.mount?.(app);

  finishHttpApp(app, errorResponse, {
    '/webhook/alertmanager': 'POST',
    '/webhook/grafana': 'POST',
    '/webhook/pagerduty': 'POST',
    '/healthz': 'GET, HEAD',
    '/readyz': 'GET, HEAD',
    '/metrics': 'GET, HEAD',
  });

  const node = serveNode(app, { logger: log, requestTimeoutMs: Math.max(opts.requestTimeoutMs ?? 30_000, bodyTimeoutMs) });
  return {
    server: node.server,
    app,
    listen: async (port, host = '0.0.0.0') => {
      const bound = await node.listen(port, host);
      log.info({ port: bound.port, host }, 'http server listening');
      return bound;
    },
    close: () => node.close(),
  };
}
