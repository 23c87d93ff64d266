/**
 * HTTP ingress (SPEC §4, §11) on hono: the Alertmanager webhook, health, readiness, metrics,
 * and whatever routes a transport mounts (Slack's `/slack/events`). Nothing else: the local
 * control API (feedback from the CLI) is on a Unix socket (control-server.ts), never on this
 * port. hono's body limit and bearer auth guard the webhook; one error handler turns anything
 * thrown into a JSON error with a request id, logged; input never crashes the process.
 */
import { randomUUID } from 'node:crypto';
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAdaptorServer } from '@hono/node-server';
import { Hono, type Context, type MiddlewareHandler } from 'hono';
import { bearerAuth } from 'hono/bearer-auth';
import { bodyLimit } from 'hono/body-limit';
import { HTTPException } from 'hono/http-exception';
import type { LinkPolicy } from '../core/alert-links.js';
import { parseAlertmanagerPayloadYielding, type SkippedAlert, type TruncatedField } from '../core/alertmanager.js';
import { RepriseError } from '../core/errors.js';
import { parseGenericPayload, verifyGenericSignature, type GenericMapping } from '../core/generic-source.js';
import { parseGrafanaPayloadYielding, type GrafanaBatch } from '../core/grafana.js';
import type { IdentityOptions } from '../core/identity.js';
import { parsePagerDutyPayload, verifyPagerDutySignature } from '../core/pagerduty.js';
import type { Incident, RefusedLink } from '../core/types.js';
import type { Clock } from '../ports/clock.js';
import type { Logger } from '../ports/logger.js';
import { toHttpError } from './errors.js';
import { WEBHOOK_SOURCES, type BotMetrics } from './metrics.js';
import type { Readiness } from './readiness.js';
import { assertJsonContentType, decodeUtf8, parseJson } from './read-body.js';

export interface AlertmanagerHandlerResult {
  accepted: number;
  /** Echoed in the 202 body when present (e.g. per-incident outcome). */
  results?: unknown;
}

/** Where the webhook's query string routes an incident (`?channel=…&room=…`). */
export interface WebhookRoute {
  channel?: string;
  room?: string;
}

/** What a source's parser hands the shared webhook path. */
interface ParsedWebhook {
  incidents: Incident[];
  truncated: TruncatedField[];
  /** Why nothing was recorded (e.g. a PagerDuty event type we do not act on); logged and echoed. */
  ignored?: string;
  /** Source context for the log line. */
  context?: Record<string, unknown>;
  /** Malformed alerts left out of an otherwise good body (logged, and listed in the 202). */
  skipped?: SkippedAlert[];
  /** Links the alerts carried that their cards will not show, with why (logged; the thread says it too). */
  refusedLinks?: Array<RefusedLink & { alert: number }>;
}

/** Skipped alerts listed in one 202 answer; the log line carries the exact count. */
const SKIPPED_LISTED = 20;

/** Per-request context the routes read: hono's variables. */
export interface HttpVars {
  requestId: string;
  log: Logger;
}
export type HttpEnv = { Variables: HttpVars };
export type HttpApp = Hono<HttpEnv>;

export interface HttpServerOptions {
  /**
   * When set, webhooks require `Authorization: Bearer <token>`; health and metrics do not.
   * When unset, webhooks are accepted from loopback peers only (401 from anywhere else).
   */
  bearerToken?: string;
  /** Secret that verifies `X-PagerDuty-Signature`; without it `/webhook/pagerduty` refuses everything. */
  pagerDutySecret?: string;
  /** `POST /webhook/generic/<name>` sources by name: HMAC-checked when `hmac_secret` is set, bearer-guarded otherwise. */
  genericSources?: Record<string, GenericMapping & { hmac_secret?: string | undefined; hmac_header: string }>;
  bodyLimitBytes: number;
  logger: Logger;
  /** Called with the normalized incidents; the 202 is sent once it resolves. */
  onAlertmanager: (incidents: Incident[], requestId: string, route: WebhookRoute) => Promise<AlertmanagerHandlerResult>;
  /** What `/readyz` reports: 200 when ready, 503 with the reasons otherwise. */
  readiness: () => Readiness;
  /** The registry `/metrics` exposes; request counts and latencies are recorded in it. */
  metrics: BotMetrics;
  /** More routes on the same port (a transport's callbacks); they get the same ids, logs and errors. */
  mount?: (app: HttpApp) => void;
  /** Longest label or annotation value kept (characters); longer ones are cut with a marker and logged. */
  fieldLimit?: number;
  /** How alerts' identities are derived (`identity.labels`). */
  identity?: IdentityOptions;
  /** Which hosts the cards' links may point to (`links.allowed_hosts`). */
  links?: LinkPolicy;
  /** Time source for `receivedAt` (alerts without `startsAt`). Defaults to the system clock. */
  clock?: Clock;
  /** Whole-request deadline against slow senders. Default 30 s. */
  requestTimeoutMs?: number;
  /**
   * Webhook requests of one source in progress at once; more are answered 503 with `Retry-After` at once,
   * before their body is read (Alertmanager re-sends them), instead of queueing until they
   * time out unanswered. Default {@link DEFAULT_MAX_PENDING_WEBHOOKS}.
   */
  maxPendingWebhooks?: number;
}

export const DEFAULT_MAX_PENDING_WEBHOOKS = 256;
/** Seconds a shed sender is asked to wait. */
const SHED_RETRY_AFTER_S = 5;

export interface HttpServer {
  server: http.Server;
  /** The hono app (tests may call `app.request()` in-process). */
  app: HttpApp;
  listen(port: number, host?: string): Promise<{ port: number }>;
  /** Stop accepting, let in-flight requests finish, drop idle keep-alive sockets. */
  close(): Promise<void>;
}

const REQUEST_ID = /^[\w.:-]{1,128}$/;
const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
/** Route label for anything no route matched: scanners must not explode metric cardinality. */
const UNMATCHED = 'unmatched';

/** The JSON error reply for anything thrown while handling a request; logged once here. */
/** The peer's address as the Node server saw it (no proxy header is trusted). */
function remoteAddress(c: Context<HttpEnv>): string | undefined {
  const env = c.env as { incoming?: http.IncomingMessage } | undefined;
  return env?.incoming?.socket?.remoteAddress;
}

/** 127.0.0.0/8, ::1 and their IPv4-mapped form; an unknown peer is not loopback. */
export function isLoopback(address: string | undefined): boolean {
  if (address === undefined) return false;
  const v4 = address.startsWith('::ffff:') ? address.slice(7) : address;
  return v4 === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4);
}

function errorResponse(c: Context<HttpEnv>, err: unknown): Response {
  const requestId = c.get('requestId') ?? randomUUID();
  const log = c.get('log');
  const e = toHttpError(err, requestId);
  const fields = { status: e.status, code: e.body.error.code, userAgent: c.req.header('user-agent') };
  if (e.serverFault) log?.error({ ...fields, err }, `request failed: ${err instanceof Error ? err.message : String(err)}`);
  else log?.warn(fields, `rejected: ${e.body.error.message}`);
  const headers: Record<string, string> = { 'Cache-Control': 'no-store' };
  if (e.status === 401) headers['WWW-Authenticate'] = 'Bearer realm="reprise"';
  // A body we refused to read may still be arriving; closing is cheaper than draining it.
  if (e.status === 413) headers['Connection'] = 'close';
  return c.json(e.body, e.status as 400, headers);
}

/** Build the ingress server. Nothing listens until `listen` is called. */
export function createHttpServer(opts: HttpServerOptions): HttpServer {
  const log = opts.logger.child({ component: 'http' });
  const clock = opts.clock ?? { now: () => new Date() };
  const app: HttpApp = new Hono<HttpEnv>();

  // Request id, per-request logger, metrics: around everything, errors included.
  app.use(async (c, next) => {
    const started = performance.now();
    const incoming = c.req.header('x-request-id');
    const requestId = incoming !== undefined && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    c.set('requestId', requestId);
    c.set('log', log.child({ requestId, method: c.req.method, path: c.req.path.slice(0, 200) }));
    await next();
    c.res.headers.set('X-Request-Id', requestId);
    if (!c.res.headers.has('Cache-Control')) c.res.headers.set('Cache-Control', 'no-store');
    const route = c.req.routePath && c.req.routePath !== '/*' ? c.req.routePath : UNMATCHED;
    const method = KNOWN_METHODS.has(c.req.method) ? c.req.method : 'OTHER';
    opts.metrics.httpRequests.inc({ route, method, status: String(c.res.status) });
    opts.metrics.httpDuration.observe({ route }, (performance.now() - started) / 1000);
  });

  const unauthorized = (message: string) => (c: Context<HttpEnv>) => errorResponse(c, new RepriseError('unauthorized', message));
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
          return errorResponse(
            c,
            new RepriseError(
              'unauthorized',
              'webhooks from other hosts need a bearer token: set REPRISE_BEARER_TOKEN (server.bearer_token) and send it as Authorization: Bearer <token>',
            ),
          );
        }
        await next();
        return undefined;
      };
  const limit = bodyLimit({
    maxSize: opts.bodyLimitBytes,
    onError: (c) => {
      const declared = c.req.header('content-length');
      const what = declared !== undefined && /^\d+$/.test(declared) ? `of ${declared} bytes` : 'stream';
      return errorResponse(
        c as Context<HttpEnv>,
        new RepriseError('payload_too_large', `request body ${what} exceeds the limit of ${opts.bodyLimitBytes} bytes`),
      );
    },
  });

  const jsonOnly: MiddlewareHandler<HttpEnv> = async (c, next) => {
    assertJsonContentType(c.req.header('content-type'));
    await next();
  };
  const parseOptions = () => ({
    receivedAt: clock.now().toISOString(),
    ...(opts.fieldLimit ? { fieldLimit: opts.fieldLimit } : {}),
    ...(opts.identity ? { identity: opts.identity } : {}),
    ...(opts.links ? { links: opts.links } : {}),
  });

  /**
   * The one webhook path every source shares: raw body (under the limit) → source parser →
   * field-limit log → `?channel=`/`?room=` routing → the handler's durable record → 202.
   * `parse` may throw (400, 401) before anything is recorded.
   */
  const ingest =
    (source: string, parse: (raw: Uint8Array, c: Context<HttpEnv>) => Promise<ParsedWebhook>) =>
    async (c: Context<HttpEnv>): Promise<Response> => {
      const raw = new Uint8Array(await c.req.arrayBuffer());
      const parsed = await parse(raw, c);
      const rlog = c.get('log');
      if (parsed.truncated.length > 0) {
        rlog.warn(
          { truncated: parsed.truncated.slice(0, 20), count: parsed.truncated.length },
          `cut ${parsed.truncated.length} oversized label/annotation value(s) to ${opts.fieldLimit ?? 'the'} characters`,
        );
      }
      const refused = parsed.refusedLinks ?? [];
      if (refused.length > 0) {
        rlog.warn({ source, refusedLinks: refused.slice(0, 20), count: refused.length }, `${source} webhook: ${refused.length} link(s) not shown on the card`);
      }
      const skipped = parsed.skipped ?? [];
      if (skipped.length > 0) {
        rlog.warn(
          { source, skipped: skipped.length, first: skipped.slice(0, 5) },
          `${source} webhook: skipped ${skipped.length} malformed alert(s), kept the rest`,
        );
      }
      if (parsed.incidents.length === 0) {
        rlog.info({ source, ...parsed.context, ignored: parsed.ignored }, `${source} webhook ignored: ${parsed.ignored ?? 'no incidents'}`);
        return c.json({ accepted: 0, ignored: parsed.ignored ?? 'no incidents', requestId: c.get('requestId') }, 202);
      }
      rlog.info({ source, alerts: parsed.incidents.length, ...parsed.context }, `${source} webhook parsed`);
      const route: WebhookRoute = {};
      const channel = c.req.query('channel');
      const room = c.req.query('room');
      if (channel) route.channel = channel.slice(0, 200);
      if (room) route.room = room.slice(0, 300);
      const result = await opts.onAlertmanager(parsed.incidents, c.get('requestId'), route);
      if (Number.isFinite(result.accepted) && result.accepted > 0) opts.metrics.webhookAlerts.inc({ source: sourceLabel(source) }, result.accepted);
      const body: Record<string, unknown> = { accepted: result.accepted, requestId: c.get('requestId') };
      if (result.results !== undefined) body['results'] = result.results;
      if (skipped.length > 0) {
        body['skipped'] = skipped.length;
        body['skippedAlerts'] = skipped.slice(0, SKIPPED_LISTED);
      }
      return c.json(body, 202);
    };

  /**
   * Load shedding: a webhook past the in-progress cap is answered 503 + Retry-After before its
   * body is read, and nothing is recorded — it was never acknowledged, so nothing is lost.
   * Logged at most once per 10 s with the count, so a storm does not flood the log.
   */
  const maxPending = opts.maxPendingWebhooks ?? DEFAULT_MAX_PENDING_WEBHOOKS;
  // Per source: a sender that must be read before it can be verified (PagerDuty, an HMAC source)
  // and trickles bodies cannot take the slots Alertmanager's webhooks need.
  const inProgress = new Map<string, number>();
  let shedSinceLog = 0;
  let lastShedLog = 0;
  const shed: MiddlewareHandler<HttpEnv> = async (c, next) => {
    const source = sourceLabel(c.req.path.split('/')[2] ?? 'other');
    const pending = inProgress.get(source) ?? 0;
    if (pending >= maxPending) {
      opts.metrics.webhooksShed.inc({ source });
      shedSinceLog += 1;
      const now = Date.now();
      if (now - lastShedLog >= 10_000) {
        c.get('log').warn(
          { source, pending, maxPending, shed: shedSinceLog },
          `busy: ${shedSinceLog} webhook(s) answered 503 (server.max_pending_webhooks = ${maxPending} in progress for one source); senders retry`,
        );
        lastShedLog = now;
        shedSinceLog = 0;
      }
      const body = {
        error: {
          code: 'unavailable',
          message: `busy: ${pending} webhooks in progress (server.max_pending_webhooks); retry in ${SHED_RETRY_AFTER_S} s`,
          requestId: c.get('requestId'),
        },
      };
      return c.json(body, 503, { 'Retry-After': String(SHED_RETRY_AFTER_S), 'Cache-Control': 'no-store', Connection: 'close' });
    }
    inProgress.set(source, pending + 1);
    try {
      await next();
    } finally {
      inProgress.set(source, (inProgress.get(source) ?? 1) - 1);
    }
    return undefined;
  };

  /** Times a webhook by source, errors included (hono's error handler answers after it). */
  const timed =
    (source: string, handler: (c: Context<HttpEnv>) => Promise<Response>) =>
    async (c: Context<HttpEnv>): Promise<Response> => {
      const end = opts.metrics.webhookDuration.startTimer({ source: sourceLabel(source) });
      try {
        return await handler(c);
      } finally {
        end();
      }
    };

  const alertmanagerLike =
    (source: 'alertmanager' | 'grafana') =>
    async (raw: Uint8Array): Promise<ParsedWebhook> => {
      const body = parseJson(decodeUtf8(raw));
      const batch: GrafanaBatch =
        source === 'grafana' ? await parseGrafanaPayloadYielding(body, parseOptions()) : await parseAlertmanagerPayloadYielding(body, parseOptions());
      const context = { groupKey: batch.groupKey, receiver: batch.receiver, truncatedAlerts: batch.group?.truncatedAlerts };
      // Grafana's contact-point test: answered 202 with the reason, recorded nowhere.
      if (batch.test) return { incidents: [], truncated: [], ignored: batch.test.reason, context: { ...context, receiver: batch.test.receiver } };
      return { incidents: batch.incidents, truncated: batch.truncated, skipped: batch.skipped, refusedLinks: batch.refusedLinks, context };
    };

  app.use('/webhook/*', shed);
  app.post('/webhook/alertmanager', guard, jsonOnly, limit, timed('alertmanager', ingest('alertmanager', alertmanagerLike('alertmanager'))));
  // Grafana unified alerting sends Alertmanager's alert shape (plus orgId, state, title…).
  app.post('/webhook/grafana', guard, jsonOnly, limit, timed('grafana', ingest('grafana', alertmanagerLike('grafana'))));
  // PagerDuty signs its body instead of sending a bearer token; no secret → refused, never open.
  const pagerDutySecret = opts.pagerDutySecret;
  app.post(
    '/webhook/pagerduty',
    async (_c, next) => {
      if (!pagerDutySecret)
        throw new RepriseError(
          'unauthorized',
          'PagerDuty webhook disabled: no signing secret configured (set REPRISE_PAGERDUTY_SECRET or server.pagerduty_secret)',
        );
      await next();
    },
    jsonOnly,
    limit,
    timed(
      'pagerduty',
      ingest('pagerduty', async (raw, c) => {
        const check = verifyPagerDutySignature(pagerDutySecret!, raw, c.req.header('x-pagerduty-signature'));
        if (!check.ok) throw new RepriseError('unauthorized', check.reason);
        const p = parsePagerDutyPayload(parseJson(decodeUtf8(raw)), parseOptions());
        const context = { eventType: p.eventType, eventId: p.eventId };
        if (p.kind !== 'incident') return { incidents: [], truncated: [], ignored: p.reason, context };
        return { incidents: [p.incident], truncated: [], context, refusedLinks: (p.incident.refusedLinks ?? []).map((r) => ({ alert: 0, ...r })) };
      }),
    ),
  );

  const generic = opts.genericSources ?? {};
  const genericOf = (c: Context<HttpEnv>) => {
    const name = c.req.param('name') ?? '';
    if (!Object.prototype.hasOwnProperty.call(generic, name))
      throw new RepriseError('not_found', `no generic webhook source named ${name.slice(0, 64)} (configure server.generic_webhooks)`);
    return { name, source: generic[name]! };
  };
  app.post(
    '/webhook/generic/:name',
    async (c, next) => {
      // An HMAC source signs its body instead of sending the bearer token.
      const { source } = genericOf(c);
      return source.hmac_secret ? next() : guard(c, next);
    },
    jsonOnly,
    limit,
    timed('generic', async (c) => {
      const { name, source } = genericOf(c);
      return ingest(`generic:${name}`, async (raw) => {
        if (source.hmac_secret) {
          const check = verifyGenericSignature(source.hmac_secret, raw, c.req.header(source.hmac_header), source.hmac_header);
          if (!check.ok) throw new RepriseError('unauthorized', check.reason);
        }
        const batch = await parseGenericPayload(parseJson(decodeUtf8(raw)), source, { ...parseOptions(), source: `generic:${name}` });
        return { incidents: batch.incidents, truncated: batch.truncated, skipped: batch.skipped, refusedLinks: batch.refusedLinks };
      })(c);
    }),
  );

  app.on(['GET', 'HEAD'], '/healthz', (c) => c.json({ status: 'ok' }));
  app.on(['GET', 'HEAD'], '/readyz', (c) => {
    const r = opts.readiness();
    return r.ready ? c.json({ status: 'ready', checks: r.checks }) : c.json({ status: 'not_ready', reasons: r.reasons, checks: r.checks }, 503);
  });
  app.on(['GET', 'HEAD'], '/metrics', async (c) => c.body(await opts.metrics.render(), 200, { 'Content-Type': opts.metrics.contentType }));

  opts.mount?.(app);

  // A known path with the wrong method: 405 naming the right one.
  const allowed: Record<string, string> = {
    '/webhook/alertmanager': 'POST',
    '/webhook/grafana': 'POST',
    '/webhook/pagerduty': 'POST',
    '/healthz': 'GET, HEAD',
    '/readyz': 'GET, HEAD',
    '/metrics': 'GET, HEAD',
  };
  for (const [path, allow] of Object.entries(allowed)) {
    app.all(path, (c) => {
      const res = errorResponse(c, new RepriseError('method_not_allowed', `method ${c.req.method} not allowed on ${path}; use ${allow}`));
      res.headers.set('Allow', allow);
      return res;
    });
  }
  app.notFound((c) => errorResponse(c, new RepriseError('not_found', `no route for ${c.req.method} ${c.req.path.slice(0, 200)}`)));
  app.onError((err, c) => (err instanceof HTTPException && err.res ? err.res : errorResponse(c, err)));

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

  return {
    server,
    app,
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

/** A webhook source as a label: every generic source is `generic` (its name is configuration, not a label). */
function sourceLabel(source: string): string {
  const kind = source.startsWith('generic:') ? 'generic' : source;
  return (WEBHOOK_SOURCES as readonly string[]).includes(kind) ? kind : 'other';
}
