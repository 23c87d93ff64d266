import { existsSync, mkdirSync } from 'node:fs';
import { userInfo } from 'node:os';
import { basename, dirname } from 'node:path';
import { pino } from 'pino';
import type { StoreLock } from '../adapters/keyv/store-lock.js';
import type { Config } from '../config/schema.js';
import { incidentEvents } from '../core/bot/bot-event.js';
import { RepriseBot, type BotOutcome } from '../core/bot/reprise-bot.js';
import { Routing } from '../core/bot/routing.js';
import { TriggerPolicy } from '../core/bot/trigger-policy.js';
import { AlertmanagerApi } from '../adapters/alertmanager/alertmanager-api.js';
import { noiseOptions, startNoiseTimers } from './noise-timers.js';
import { OutboxWorker } from '../core/outbox/outbox-worker.js';
import type { CurationWorker } from '../core/curate/curation-worker.js';
import { noteRequest } from './note.js';
import type { Ledger } from '../core/ledger/ledger.js';
import { startControlServer, type ControlServer } from '../http/control-server.js';
import { createHttpServer, type HttpServer } from '../http/create-server.js';
import { createBotMetrics } from '../http/metrics.js';
import { registerCatalogSyncMetrics } from '../http/catalog-metrics.js';
import { registerLoopMetrics, type LoopMetrics } from '../http/loop-metrics.js';
import { registerModelMetrics } from '../http/model-metrics.js';
import { utcDay } from '../core/investigate/budget.js';
import { combineReadiness, type Readiness, type ReadinessCheck } from '../http/readiness.js';
import { systemClock, type Clock } from '../ports/clock.js';
import type { Logger } from '../ports/logger.js';
import type { KeyValueStore } from '../ports/store.js';
import { parseCli } from './args.js';
import { buildSurfaces } from './build-surfaces.js';
import { startModel } from './start-model.js';
import { startCuration } from './start-curation.js';
import { loadCliConfig } from './cli-config.js';
import { BUNDLED_CATALOG } from './catalog-context.js';
import { gitCatalog, staticCatalog, type ServedCatalog } from './served-catalog.js';
import { serveCuration } from './serve-curation.js';
import type { CliCommand, CliIO } from './io.js';
import { recallOptions } from './recall-options.js';
import { controlSocketPath, removeServeOwner, writeServeOwner } from './serve-owner.js';
import { describeStore, isSharedStore, lockStore, openLedger, StoreLockedError, storeWarnings } from './store-context.js';
import { Replicas, TxIds } from './serve-replicas.js';

const USAGE = `reprise serve [--config FILE] [--port N] [--host H]

Runs the bot: webhooks, health and metrics on the HTTP port; the local control API (used by
\`reprise feedback\` and \`reprise catalog sync\`) on a Unix socket in the data dir, mode 0600.
One serve per store.`;

/** How long a shutdown waits for queued chat messages before leaving them for the next start. */
const DRAIN_MS = 5000;

/** Key the store probe writes; harmless to overwrite, never read by the ledger. */
const PROBE_KEY = 'health:probe';

export interface RunningBot {
  port: number;
  bot: RepriseBot;
  ledger: Ledger;
  outbox: OutboxWorker;
  /** The curation worker, when a forge is configured. */
  curation?: CurationWorker;
  readiness(): Readiness;
  stop(): Promise<void>;
}

/**
 * The catalog folder to serve: the configured one, or the bundled starter catalog when the
 * default `catalog` folder (beside the config file, or in the working directory) does not
 * exist — `catalog/` defaults to the bundled catalog (issue: embedded defaults).
 */
export function catalogDir(config: Config): { dir: string; bundled: boolean } {
  const dir = config.catalog.dir;
  if (!existsSync(dir) && basename(dir) === 'catalog') return { dir: BUNDLED_CATALOG, bundled: true };
  return { dir, bundled: false };
}

function outcomeSummary(o: BotOutcome): Record<string, unknown> {
  if (o.status === 'posted') return { status: o.status, triggerKey: o.triggerKey, answer: o.answer };
  return { ...o };
}

/** The surfaces a config turns on, for the start banner. */
function surfacesOf(config: Config): string[] {
  const out: string[] = [];
  if (config.transport.slack.bot_token) out.push(config.transport.slack.app_token ? 'Slack, Socket Mode' : 'Slack');
  if (config.transport.matrix.homeserver_url && config.transport.matrix.access_token) out.push('Matrix');
  if (config.transport.console === 'on' || (config.transport.console === 'auto' && out.length === 0)) out.push('console transport');
  return out;
}

/** Where the server listens, said plainly: 0.0.0.0 is every interface, not localhost. */
export function describeListen(host: string, port: number): string {
  if (host === '0.0.0.0' || host === '::') return `port ${port} on all interfaces (${host}); locally http://127.0.0.1:${port}`;
  const h = host.includes(':') ? `[${host}]` : host;
  return `http://${h}:${port}`;
}

/** The catalog to serve: synced from git when `catalog.git` is set, else the folder. */
async function servedCatalog(config: Config, clock: Clock, logger: Logger): Promise<ServedCatalog> {
  if (config.catalog.git) return gitCatalog(config, clock, logger);
  const { dir, bundled } = catalogDir(config);
  if (bundled) logger.warn({ configured: config.catalog.dir, serving: dir }, 'catalog.dir does not exist; serving the bundled starter catalog');
  return staticCatalog(dir, bundled, logger);
}

/** Builds and starts everything `serve` runs; tests call this in-process. */
export async function startBot(config: Config, io: CliIO, logger: Logger, clock: Clock = systemClock): Promise<RunningBot> {
  // A folder read once, or a git remote re-indexed when its HEAD moves (/readyz waits for the first index).
  const served = await servedCatalog(config, clock, logger);

  // One writer per store: the lock comes before anything is opened for writing.
  const lock: StoreLock | undefined = lockStore(config, 'reprise serve');
  for (const w of storeWarnings(config)) logger.warn({ store: describeStore(config) }, w);
  let store: KeyValueStore;
  let ledger: Ledger;
  // On Redis, replicas elect a leader; only its writes carry a current fencing token.
  let replicas: Replicas | undefined;
  const shared = isSharedStore(config);
  // Registered once the surfaces are known; nothing is appended before then.
  let loop: LoopMetrics | undefined;
  try {
    ({ store, ledger } = await openLedger(config, logger.child({ component: 'ledger' }), {
      ...(shared ? { fence: () => replicas?.fence() } : {}),
      onAppend: (events) => loop?.ledgerAppended(events),
    }));
  } catch (err) {
    lock?.release();
    throw err;
  }
  logger.info({ seq: ledger.seq, skipped: ledger.read.skipped, dataDir: config.store.data_dir }, 'ledger opened');

  // Can the store still be written? Checked now and every probe_interval; /readyz says so.
  let probe: { ok: boolean; at: string; error?: string } = { ok: false, at: clock.now().toISOString(), error: 'not probed yet' };
  const runProbe = async (): Promise<void> => {
    const at = clock.now().toISOString();
    try {
      await store.set(PROBE_KEY, { pid: process.pid, at });
      if (!probe.ok) logger.info('store is writable');
      probe = { ok: true, at };
    } catch (err) {
      const error = err instanceof Error ? err.message : String(err);
      if (probe.ok || probe.error !== error) logger.error({ err }, 'store cannot be written; /readyz reports not ready');
      probe = { ok: false, at, error };
    }
  };
  await runProbe();
  const probeTimer = setInterval(() => void runProbe(), config.store.probe_interval_ms);
  probeTimer.unref();

  const readiness = (): Readiness => {
    // A failed ledger write counts until a later probe proves the store takes writes again.
    const lastError = ledger.lastWriteError;
    const writeError = lastError && !(probe.ok && Date.parse(probe.at) > Date.parse(lastError.at)) ? lastError : undefined;
    const checks: ReadinessCheck[] = [
      served.check(),
      {
        name: 'store',
        ok: probe.ok && writeError === undefined,
        ...(probe.ok
          ? writeError
            ? { reason: `last write failed at ${writeError.at}: ${writeError.message}` }
            : {}
          : { reason: `cannot write ${describeStore(config)}: ${probe.error ?? 'unknown error'}` }),
        detail: { store: describeStore(config), lastProbe: probe.at },
      },
      {
        name: 'ledger',
        ok: true,
        detail: { seq: ledger.seq, skippedRecords: ledger.read.skipped, ...(ledger.corruptRecords.length > 0 ? { corrupt: ledger.corruptRecords } : {}) },
      },
      // Undelivered messages are retried, never lost: reported, not a reason to stop taking alerts.
      { name: 'outbox', ok: true, detail: { surfaces: [...transports.keys()], ...outbox.status() } },
      // Forge work waits out an outage (kept, retried): reported, never a reason to stop taking alerts.
      ...(curation ? [{ name: 'forge', ok: true, detail: { repo: curation.repo, ...curation.worker.status() } }] : []),
      // Leadership is not readiness: a follower takes webhooks as well as the leader does.
      { name: 'replica', ok: true, detail: replicas ? replicas.status() : { role: 'leader', store: 'embedded (one writer)' } },
    ];
    return combineReadiness(checks);
  };

  let surfaces;
  try {
    surfaces = await buildSurfaces(config, { write: io.stdout, logger, clock, store });
  } catch (err) {
    await ledger.close().catch(() => undefined);
    await store.close().catch(() => undefined);
    lock?.release();
    throw err;
  }
  const transports = new Map(surfaces.transports.map((t) => [t.name, t]));
  const metrics = createBotMetrics({
    ledgerSeq: () => ledger.seq,
    ledgerSkipped: () => ledger.read.skipped,
    isReady: () => readiness().ready,
    outboxPending: () => outbox.status().pending,
    outboxStatus: () => outbox.status(),
    now: () => clock.now(),
    catalogEntries: () => served.current().entries.length,
    isLeader: () => (replicas ? replicas.isLeader : true),
  });
  loop = registerLoopMetrics(metrics.registry, [...transports.keys()]);
  const modelMetrics = config.model
    ? registerModelMetrics(metrics.registry, { budget: config.model.daily_token_budget, spentToday: () => ledger.read.tokensSpent(utcDay(clock.now())) })
    : undefined;
  const outbox = new OutboxWorker({
    ledger: ledger,
    transports,
    clock,
    logger: logger.child({ component: 'outbox' }),
    options: {
      concurrency: config.outbox.concurrency,
      baseDelayMs: config.outbox.retry_base_ms,
      maxDelayMs: config.outbox.retry_max_ms,
      maxAgeMs: config.outbox.max_age_ms,
    },
    observer: loop,
  });
  const policy = new TriggerPolicy({ match: config.trigger.match, ignore: config.trigger.ignore, dedupWindowMs: config.trigger.dedup_window_ms });
  const txIds = new TxIds();
  const botLedger = shared ? txIds.botLedger(ledger) : ledger;
  const alertmanager = config.alertmanager.url ? new AlertmanagerApi({ url: config.alertmanager.url, timeoutMs: config.alertmanager.timeout_ms }) : undefined;
  const curation = startCuration(config, { ledger, botLedger, catalog: () => served.current(), clock, logger, outbox });
  const model = config.model
    ? await startModel(config, {
        catalog: () => served.current(),
        ledger,
        botLedger,
        clock,
        logger,
        kick: () => outbox.kick(),
        ...(curation ? { curation: curation.jobs } : {}),
        observer: loop,
        ...(modelMetrics ? { meterModels: modelMetrics.meter } : {}),
      })
    : undefined;
  const bot = new RepriseBot({
    catalog: () => served.current(),
    ledger: botLedger,
    clock,
    logger: logger.child({ component: 'bot' }),
    recall: recallOptions(config),
    policy,
    routing: new Routing(surfaces.routing),
    surfaces: transports,
    outbox,
    allow: surfaces.allow,
    investigateAfterMs: config.trigger.investigate_after_ms,
    noise: noiseOptions(config),
    observer: loop,
    ...(alertmanager ? { alertmanager } : {}),
    ...(model ? { jobs: model.jobs, investigate: model.command } : {}),
    ...(curation ? { curation: curation.worker } : {}),
  });
  // Work only the loop's owner does (the leader, on a shared store): held firings released,
  // Alertmanager reconciled, forge work filed. Started on gaining the lead, stopped on losing it.
  let noiseTimers: { stop(): Promise<void> } | undefined;
  const leaderWork = {
    start: (): void => {
      noiseTimers ??= startNoiseTimers({ bot, config, clock, logger: logger.child({ component: 'noise' }), ...(alertmanager ? { alertmanager } : {}) });
      curation?.worker.start();
      // Investigations an earlier run (or the previous leader) left without a finding.
      const resumed = bot.resumeInvestigations();
      if (resumed > 0) logger.info({ resumed }, 'investigations interrupted by a restart are resumed');
    },
    stop: async (): Promise<void> => {
      const timers = noiseTimers;
      noiseTimers = undefined;
      await timers?.stop();
      await curation?.worker.stop();
    },
  };
  if (shared) {
    replicas = new Replicas({
      store,
      ledger,
      outbox,
      clock,
      logger,
      leaseTtlMs: config.store.lease_ttl_ms,
      bot: () => bot,
      txIds,
      stopJobs: async () => model?.jobs.stop(),
      onOutcomes: (outcomes) => countOutcomes(outcomes),
      // The rest of the loop runs on the leader only: noise timers, forge work.
      onLead: () => leaderWork.start(),
      onFollow: () => leaderWork.stop(),
    });
  }

  const countOutcomes = (outcomes: BotOutcome[]): void => {
    for (const o of outcomes) metrics.incidents.inc({ outcome: o.status === 'posted' ? (o.answer ? `recall_${o.answer.kind}` : 'fall_through') : o.status });
  };
  if (served.sync) registerCatalogSyncMetrics(metrics.registry, () => served.sync!.status(), clock);
  const grooming = serveCuration({ config, logger, served, ledger, store, clock, isLeader: () => (replicas ? replicas.isLeader : true) });
  const http: HttpServer = createHttpServer({
    ...(config.server.bearer_token ? { bearerToken: config.server.bearer_token } : {}),
    ...(config.server.pagerduty_secret ? { pagerDutySecret: config.server.pagerduty_secret } : {}),
    ...(config.server.generic_webhooks ? { genericSources: config.server.generic_webhooks } : {}),
    bodyLimitBytes: config.server.body_limit_bytes,
    maxPendingWebhooks: config.server.max_pending_webhooks,
    fieldLimit: config.server.field_limit_chars,
    logger,
    clock,
    readiness,
    metrics,
    mount: (app) => {
      for (const m of surfaces.mounts) m(app);
    },
    onAlertmanager: async (incidents, _requestId, route) => {
      // Several replicas: recorded in the shared inbox first, then the leader handles it.
      if (replicas) return replicas.webhook(incidents, route);
      const outcomes = await bot.handle(incidentEvents(incidents, { channel: route.channel, room: route.room }));
      countOutcomes(outcomes);
      return { accepted: incidents.length, results: outcomes.map(outcomeSummary) };
    },
  });

  let control: ControlServer | undefined;
  const release = async (): Promise<void> => {
    clearInterval(probeTimer);
    await leaderWork.stop();
    await served.stop();
    await grooming.stop();
    await control?.close();
    await http.close();
    // Steps down (outbox and jobs stopped) and releases the lease: another replica leads at once.
    await replicas?.stop();
    await model?.stop();
    await outbox.drain(DRAIN_MS);
    await outbox.stop();
    for (const t of transports.values()) await t.close().catch((err: unknown) => logger.warn({ err, transport: t.name }, 'closing a transport failed'));
    await ledger.close();
    await store.close();
    removeServeOwner(config.store.data_dir, process.pid);
    lock?.release();
  };

  let port: number;
  try {
    ({ port } = await http.listen(config.server.port, config.server.host));
  } catch (err) {
    await release().catch(() => undefined);
    const code = (err as NodeJS.ErrnoException).code;
    const hint = code === 'EADDRINUSE' ? '; another process holds it — pick a free port with --port N or PORT' : '';
    throw new Error(`cannot listen on ${config.server.host}:${config.server.port}: ${(err as Error).message}${hint}`, { cause: err });
  }
  const socketPath = controlSocketPath(config.store.data_dir);
  try {
    mkdirSync(dirname(socketPath), { recursive: true });
    control = await startControlServer(
      socketPath,
      {
        // The socket is the CLI's channel: whatever the body says, it came through the CLI.
        feedback: async (body) => bot.feedback({ ...(typeof body === 'object' && body !== null ? body : {}), via: 'cli' }),
        status: async () => ({ pid: process.pid, port, seq: ledger.seq, readiness: readiness(), ...(replicas ? { replica: replicas.status() } : {}) }),
        note: async (body) => bot.note(noteRequest(body)),
        catalogSync: () => served.syncNow(),
        curate: async (body) => grooming.run(typeof body === 'object' && body !== null && (body as { apply?: unknown }).apply === true),
      },
      logger,
    );
  } catch (err) {
    await release().catch(() => undefined);
    throw new Error(
      `cannot open the control socket ${socketPath}: ${(err as Error).message}; store.data_dir (REPRISE_DATA_DIR) must be a folder this user can write`,
      { cause: err },
    );
  }
  try {
    for (const t of transports.values()) await t.start(replicas ? replicas.chat : bot.onChat);
  } catch (err) {
    await release().catch(() => undefined);
    throw new Error(`cannot start a chat transport: ${(err as Error).message}`, { cause: err });
  }
  // Undelivered messages of earlier runs (a chat outage, a crash) go out now — on Redis, once
  // this replica leads (it replays the ledger and drains the inbox first). Held firings and
  // forge work of earlier runs are picked up by the leader too.
  if (replicas) {
    try {
      await replicas.start();
    } catch (err) {
      await release().catch(() => undefined);
      throw err;
    }
  } else {
    outbox.start();
    leaderWork.start();
  }
  served.start();
  grooming.start();
  writeServeOwner(config.store.data_dir, {
    pid: process.pid,
    socket: control.path,
    port,
    host: config.server.host,
    user: userInfo().username,
    startedAt: clock.now().toISOString(),
  });
  logger.info({ port, host: config.server.host, socket: control.path }, `listening on ${describeListen(config.server.host, port)}`);
  return { port, bot, ledger, outbox, ...(curation ? { curation: curation.worker } : {}), readiness, stop: release };
}

/** `reprise serve`: the bot on its embedded defaults unless a config file says otherwise. */
export const serve: CliCommand = async (argv, io) => {
  const parsed = parseCli(argv, { config: { type: 'string', short: 'c' }, port: { type: 'string' }, host: { type: 'string' } }, USAGE, io);
  if ('exit' in parsed) return parsed.exit;
  const { values } = parsed;
  const loaded = loadCliConfig(values.config, io);
  if ('exit' in loaded) return loaded.exit;
  const { config } = loaded;
  if (values.port !== undefined) {
    const port = Number(values.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535) {
      io.stderr(`reprise serve: --port must be an integer 0–65535, got ${JSON.stringify(values.port)}\n`);
      return 2;
    }
    config.server.port = port;
  }
  if (values.host) config.server.host = values.host;
  const logger = pino(
    {
      level: config.log.level,
      base: { app: 'reprise' },
      redact: ['*.bearer_token', '*.pagerduty_secret', '*.hmac_secret', '*.api_key', '*.access_token', '*.bot_token'],
    },
    pino.destination(2),
  );
  let running: RunningBot;
  try {
    running = await startBot(config, io, logger);
  } catch (err) {
    if (err instanceof StoreLockedError) {
      io.stderr(`${err.message}\n`);
      return 1;
    }
    throw err;
  }
  const where = describeListen(config.server.host, running.port);
  const local = `http://127.0.0.1:${running.port}`;
  io.stderr(
    `\nReprise is listening on ${where} (${surfacesOf(config).join(', ')}${config.transport.transcript ? `, transcript ${config.transport.transcript}` : ''}).\n` +
      `Send an alert:  curl -s -XPOST -H 'Content-Type: application/json' --data @manifests/alertmanager/sample-firing.json ${config.server.host === '0.0.0.0' || config.server.host === '::' ? local : where}/webhook/alertmanager\n` +
      (config.server.bearer_token
        ? '\n'
        : 'No bearer token: webhooks are accepted from this host only. Set REPRISE_BEARER_TOKEN to accept them from Alertmanager or Grafana elsewhere.\n\n'),
  );
  await new Promise<void>((resolve) => {
    const stop = (signal: string): void => {
      logger.info({ signal }, 'shutting down');
      running.stop().then(resolve, (err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        resolve();
      });
    };
    process.once('SIGINT', () => stop('SIGINT'));
    process.once('SIGTERM', () => stop('SIGTERM'));
  });
  // Everything is closed and flushed. A request left in flight must not hold the exit: the
  // Matrix client's /sync long-poll waits up to 30 s, and the SDK cannot abort it.
  setTimeout(() => process.exit(), 1000).unref();
  return 0;
};
