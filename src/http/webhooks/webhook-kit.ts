/**
 * What every webhook sub-app shares (one sub-app per source, mounted on the public app): the
 * bearer guard, the bounded body reads, the replay memory, and the one path from parsed
 * incidents to the bot's durable record and the 202.
 */
import type { MiddlewareHandler } from 'hono';
import type { SkippedAlert, TruncatedField } from '../../core/alertmanager.js';
import type { LinkPolicy } from '../../core/alert-links.js';
import type { IdentityOptions } from '../../core/identity.js';
import type { Incident, RefusedLink } from '../../core/types.js';
import type { ChatIntent } from '../../core/chat/chat-types.js';
import type { Clock } from '../../ports/clock.js';
import type { VerifyPool } from '../admission.js';
import type { HttpContext, HttpEnv } from '../http-app.js';
import type { BotMetrics } from '../metrics.js';
import { WEBHOOK_SOURCES } from '../metrics.js';
import { assertJsonContentType, readRequestBody } from '../read-body.js';
import type { ReplayGuard } from '../replay-guard.js';

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

/** Called with the normalized incidents; the 202 is sent once it resolves (the record is durable). */
export type IncidentHandler = (incidents: Incident[], requestId: string, route: WebhookRoute) => Promise<AlertmanagerHandlerResult>;

/** What a source's parser hands the shared webhook path. */
export interface ParsedWebhook {
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

export interface WebhookKit {
  /** Bearer token check, or loopback-only without a token. */
  guard: MiddlewareHandler<HttpEnv>;
  /** 415 unless the body is JSON. */
  jsonOnly: MiddlewareHandler<HttpEnv>;
  /**
   * The raw body under the size limit and the body deadline. `unverified`: the source checks a
   * signature over these bytes, so the read takes a slot of the verify pool.
   */
  readBody(c: HttpContext, route: string, opts?: { unverified?: boolean }): Promise<Uint8Array>;
  /** Claims of signed deliveries (PagerDuty event ids, generic signatures). */
  replay: ReplayGuard;
  clock: Clock;
  fieldLimit: number | undefined;
  /** Options every parser takes: arrival time for alerts without a start, the field limit. */
  parseOptions(): { receivedAt: string; fieldLimit?: number; identity?: IdentityOptions; links?: LinkPolicy };
  /**
   * The shared tail: log cut and skipped fields, route by `?channel=`/`?room=`, hand the
   * incidents to the bot (whose record is durable when it resolves), 202 with the outcome.
   */
  ingest(c: HttpContext, source: string, parsed: ParsedWebhook): Promise<Response>;
  /**
   * What a person meant, from a source's webhook (PagerDuty's acknowledgements and notes): handed
   * to the bot's entrance like a chat surface's; 202 once recorded. Absent: not served here.
   */
  chat?: (c: HttpContext, source: string, intents: ChatIntent[], context?: Record<string, unknown>) => Promise<Response>;
  /** Times a webhook by source, errors included. */
  timed(source: string, handler: (c: HttpContext) => Promise<Response>): (c: HttpContext) => Promise<Response>;
}

/** Skipped alerts listed in one 202 answer; the log line carries the exact count. */
const SKIPPED_LISTED = 20;

export interface WebhookKitOptions {
  guard: MiddlewareHandler<HttpEnv>;
  bodyLimitBytes: number;
  bodyTimeoutMs: number;
  pool: VerifyPool;
  replay: ReplayGuard;
  clock: Clock;
  fieldLimit?: number;
  /** How alerts' identities are derived (`identity.labels`). */
  identity?: IdentityOptions;
  /** Which hosts the cards' links may point to (`links.allowed_hosts`). */
  links?: LinkPolicy;
  metrics: BotMetrics;
  onIncidents: IncidentHandler;
  /** Where a source's chat intents go (PagerDuty acks and notes); absent: they are ignored with a reason. */
  onChat?: (intents: ChatIntent[]) => Promise<unknown[]>;
}

export function webhookKit(opts: WebhookKitOptions): WebhookKit {
  const { metrics } = opts;
  return {
    guard: opts.guard,
    jsonOnly: async (c, next) => {
      assertJsonContentType(c.req.header('content-type'));
      await next();
    },
    readBody: async (c, route, o = {}) => {
      const read = { limitBytes: opts.bodyLimitBytes, deadlineMs: opts.bodyTimeoutMs };
      if (!o.unverified) return readRequestBody(c, read);
      const declared = Number(c.req.header('content-length'));
      const ticket = opts.pool.enter(route, Number.isSafeInteger(declared) && declared >= 0 ? Math.min(declared, opts.bodyLimitBytes) : opts.bodyLimitBytes);
      try {
        return await readRequestBody(c, { ...read, signal: ticket.signal, onChunk: (n) => ticket.chunk(n) });
      } finally {
        ticket.leave();
      }
    },
    replay: opts.replay,
    clock: opts.clock,
    fieldLimit: opts.fieldLimit,
    parseOptions: () => ({
      receivedAt: opts.clock.now().toISOString(),
      ...(opts.fieldLimit ? { fieldLimit: opts.fieldLimit } : {}),
      ...(opts.identity ? { identity: opts.identity } : {}),
      ...(opts.links ? { links: opts.links } : {}),
    }),
    ingest: async (c, source, parsed) => {
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
      const result = await opts.onIncidents(parsed.incidents, c.get('requestId'), route);
      if (Number.isFinite(result.accepted) && result.accepted > 0) metrics.webhookAlerts.inc({ source: sourceLabel(source) }, result.accepted);
      const body: Record<string, unknown> = { accepted: result.accepted, requestId: c.get('requestId') };
      if (result.results !== undefined) body['results'] = result.results;
      if (skipped.length > 0) {
        body['skipped'] = skipped.length;
        body['skippedAlerts'] = skipped.slice(0, SKIPPED_LISTED);
      }
      return c.json(body, 202);
    },
    ...(opts.onChat
      ? {
          chat: async (c: HttpContext, source: string, intents: ChatIntent[], context?: Record<string, unknown>) => {
            const outcomes = await opts.onChat!(intents);
            c.get('log').info({ source, intents: intents.map((i) => i.type), ...context }, `${source} webhook: recorded what a person did`);
            return c.json({ accepted: intents.length, results: outcomes, requestId: c.get('requestId') }, 202);
          },
        }
      : {}),
    timed: (source, handler) => async (c) => {
      const end = metrics.webhookDuration.startTimer({ source: sourceLabel(source) });
      try {
        return await handler(c);
      } finally {
        end();
      }
    },
  };
}

/** A webhook source as a label: every generic source is `generic` (its name is configuration, not a label). */
export function sourceLabel(source: string): string {
  const kind = source.startsWith('generic:') ? 'generic' : source;
  return (WEBHOOK_SOURCES as readonly string[]).includes(kind) ? kind : 'other';
}
