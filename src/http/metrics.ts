/**
 * The bot's Prometheus metrics on prom-client: one registry per running bot (tests start
 * several in one process), with the default process, GC and event-loop series.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** Latency buckets in seconds (webhook handling, recall, model calls). */
export const DEFAULT_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

export interface BotMetrics {
  readonly registry: Registry;
  readonly httpRequests: Counter<'route' | 'method' | 'status'>;
  readonly httpDuration: Histogram<'route'>;
  readonly incidents: Counter<'outcome'>;
  readonly ledgerEvents: Gauge;
  readonly ledgerSkipped: Gauge;
  readonly ready: Gauge;
  readonly outboxPending: Gauge;
  readonly leader: Gauge;
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
  /** Whether this replica runs the loop (always, on the embedded store). */
  isLeader?: () => boolean;
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
  const incidents = new Counter({ name: 'reprise_incidents_total', help: 'Incidents handled, by outcome.', labelNames: ['outcome'] as const, registers: [registry] });
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
    leader,
    httpRequests,
    httpDuration,
    incidents,
    ledgerEvents,
    ledgerSkipped,
    ready,
    render: () => registry.metrics(),
    contentType: registry.contentType,
  };
}
