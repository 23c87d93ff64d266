/**
 * The bot's Prometheus metrics on prom-client: one registry per running bot (tests start
 * several in one process), with the default process, GC and event-loop series.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** Latency buckets in seconds (webhook handling, recall, model calls). */
export const DEFAULT_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** Webhook sources (`generic` covers every `/webhook/generic/<name>`: names are not labels). */
export const WEBHOOK_SOURCES = ['alertmanager', 'grafana', 'pagerduty', 'generic'] as const;
/** Routes whose requests are counted and shed (admission.ts): every webhook source and Slack's events. */
export const SHED_ROUTES = [...WEBHOOK_SOURCES, 'slack', 'other'] as const;
export const SHED_REASONS = ['route_busy', 'peer_busy', 'pool_full', 'slowest'] as const;

export interface BotMetrics {
  readonly registry: Registry;
  readonly httpRequests: Counter<'route' | 'method' | 'status'>;
  readonly httpDuration: Histogram<'route'>;
  readonly incidents: Counter<'outcome'>;
  readonly ledgerEvents: Gauge;
  readonly ledgerSkipped: Gauge;
  readonly ready: Gauge;
  readonly outboxPending: Gauge;
  readonly outboxRetrying: Gauge;
  readonly outboxOldest: Gauge;
  readonly leader: Gauge;
  /** Webhook handling time by source, from the first byte read to the 202 (or the error). */
  readonly webhookDuration: Histogram<'source'>;
  /** Alerts the webhooks accepted (parsed and handed to the bot), by source. */
  readonly webhookAlerts: Counter<'source'>;
  /**
   * Requests answered 503 + Retry-After by load shedding, by route (a webhook source or `slack`)
   * and reason: `route_busy`, `peer_busy`, `pool_full` (the verify pool held only new senders),
   * `slowest` (cut off to make room in the verify pool).
   */
  readonly requestsShed: Counter<'route' | 'reason'>;
  /** Request bodies being read before their signature can be checked (the verify pool). */
  readonly unverifiedBodies: Gauge;
  /** The exposition text. */
  render(): Promise<string>;
  readonly contentType: string;
}

export interface BotMetricsOptions {
  /** Collect the process / GC / event-loop defaults (on for `serve`, off where it only adds noise). */
  defaults?: boolean;
  /** Read at scrape time. */
  ledgerSeq?: () => number;
  ledgerSkipped?: () => number;
  isReady?: () => boolean;
  outboxPending?: () => number;
  /** Outbox items waiting for a retry, and when the oldest pending one was recorded. */
  outboxStatus?: () => { retrying: number; oldestAt?: string };
  /** Scrape time, for the oldest item's age. */
  now?: () => Date;
  /** Entries in the catalog being served (a folder or a git clone). */
  catalogEntries?: () => number;
  /** Whether this replica runs the loop (always, on the embedded store). */
  isLeader?: () => boolean;
  /** Masks secrets in the exposition (a label value quoting an upstream error); default: as is. */
  redact?: (text: string) => string;
}

/** Builds the registry and every series the bot exposes. */
export function createBotMetrics(opts: BotMetricsOptions = {}): BotMetrics {
  const registry = new Registry();
  if (opts.defaults ?? true) collectDefaultMetrics({ register: registry });
  const httpRequests = new Counter({
    name: 'reprise_http_requests_total',
    help: 'HTTP requests by route, method and status.',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [registry],
  });
  const httpDuration = new Histogram({
    name: 'reprise_http_request_duration_seconds',
    help: 'HTTP request handling time.',
    labelNames: ['route'] as const,
    buckets: DEFAULT_BUCKETS,
    registers: [registry],
  });
  const incidents = new Counter({
    name: 'reprise_incidents_total',
    help: 'Incidents handled, by outcome.',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const ledgerEvents = new Gauge({
    name: 'reprise_ledger_events',
    help: 'Events in the ledger (its head sequence number).',
    registers: [registry],
    collect() {
      if (opts.ledgerSeq) this.set(opts.ledgerSeq());
    },
  });
  const ledgerSkipped = new Gauge({
    name: 'reprise_ledger_skipped_records',
    help: 'Ledger records skipped at load because they were missing or corrupt.',
    registers: [registry],
    collect() {
      if (opts.ledgerSkipped) this.set(opts.ledgerSkipped());
    },
  });
  const ready = new Gauge({
    name: 'reprise_ready',
    help: '1 when /readyz answers ready, else 0.',
    registers: [registry],
    collect() {
      if (opts.isReady) this.set(opts.isReady() ? 1 : 0);
    },
  });
  const outboxPending = new Gauge({
    name: 'reprise_outbox_pending',
    help: 'Chat messages recorded but not delivered yet (retried with backoff).',
    registers: [registry],
    collect() {
      if (opts.outboxPending) this.set(opts.outboxPending());
    },
  });
  const outboxRetrying = new Gauge({
    name: 'reprise_outbox_retrying',
    help: 'Pending chat messages whose last delivery attempt failed (waiting out a backoff).',
    registers: [registry],
    collect() {
      if (opts.outboxStatus) this.set(opts.outboxStatus().retrying);
    },
  });
  const outboxOldest = new Gauge({
    name: 'reprise_outbox_oldest_pending_age_seconds',
    help: 'Age of the oldest undelivered chat message (0 when nothing is pending).',
    registers: [registry],
    collect() {
      if (!opts.outboxStatus) return;
      const at = opts.outboxStatus().oldestAt;
      const age = at ? ((opts.now?.() ?? new Date()).getTime() - Date.parse(at)) / 1000 : 0;
      this.set(Number.isFinite(age) ? Math.max(0, age) : 0);
    },
  });
  new Gauge({
    name: 'reprise_catalog_entries',
    help: 'Entries in the catalog being served (0 until the first index).',
    registers: [registry],
    collect() {
      if (opts.catalogEntries) this.set(opts.catalogEntries());
    },
  });
  const webhookDuration = new Histogram({
    name: 'reprise_webhook_duration_seconds',
    help: 'Webhook handling time by source: body read, verified, parsed and durably recorded (the 202), or refused.',
    labelNames: ['source'] as const,
    buckets: DEFAULT_BUCKETS,
    registers: [registry],
  });
  const webhookAlerts = new Counter({
    name: 'reprise_webhook_alerts_total',
    help: 'Alerts the webhooks accepted and handed to the bot, by source.',
    labelNames: ['source'] as const,
    registers: [registry],
  });
  const requestsShed = new Counter({
    name: 'reprise_http_shed_total',
    help: 'Requests answered 503 + Retry-After by load shedding, by route (webhook source or slack) and reason (route_busy, peer_busy, pool_full, slowest).',
    labelNames: ['route', 'reason'] as const,
    registers: [registry],
  });
  for (const source of WEBHOOK_SOURCES) {
    webhookDuration.zero({ source });
    webhookAlerts.inc({ source }, 0);
  }
  for (const route of SHED_ROUTES) for (const reason of SHED_REASONS) requestsShed.inc({ route, reason }, 0);
  const unverifiedBodies = new Gauge({
    name: 'reprise_http_unverified_bodies',
    help: 'Request bodies being read before their signature can be checked (server.verify_pool_slots at most).',
    registers: [registry],
  });
  const leader = new Gauge({
    name: 'reprise_leader',
    help: '1 on the replica that runs the loop (holds the leader lease), 0 on the others.',
    registers: [registry],
    collect() {
      if (opts.isLeader) this.set(opts.isLeader() ? 1 : 0);
    },
  });
  return {
    registry,
    outboxPending,
    outboxRetrying,
    outboxOldest,
    webhookDuration,
    requestsShed,
    unverifiedBodies,
    webhookAlerts,
    leader,
    httpRequests,
    httpDuration,
    incidents,
    ledgerEvents,
    ledgerSkipped,
    ready,
    render: async () => (opts.redact ?? ((t: string) => t))(await registry.metrics()),
    contentType: registry.contentType,
  };
}
