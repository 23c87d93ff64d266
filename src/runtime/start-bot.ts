/**
 * Everything `reprise serve` runs, built and started: the served catalog, the store and its
 * ledger (one writer: the file lock, or the Redis lease), the chat surfaces, the loop
 * (`buildLoop`), the HTTP edge, the control socket, and the leader's timers. `serve` calls it;
 * tests call it in-process.
 */
import { mkdirSync } from 'node:fs';
import { userInfo } from 'node:os';
import { dirname } from 'node:path';
import { ensurePrivateDir, looseModes } from '../adapters/keyv/private-files.js';
import type { StoreLock } from '../adapters/keyv/store-lock.js';
import { AlertmanagerApi } from '../adapters/alertmanager/alertmanager-api.js';
import { textIndexFor } from '../adapters/flexsearch/text-index.js';
import { pagerDutyRest } from '../adapters/pagerduty/pagerduty-rest.js';
import type { Config } from '../config/schema.js';
import { ackRequest, feedbackIntent, noteRequest, recordedOrThrow } from '../core/bot/feedback-request.js';
import { ackIntent, fixedIntent, incidentIntents, noteIntent, postmortemIntent, type Intent } from '../core/bot/intent.js';
import type { BotOutcome, RepriseBot } from '../core/bot/reprise-bot.js';
import { Routing } from '../core/bot/routing.js';
import type { ChatIntent } from '../core/chat/chat-types.js';
import type { Inbox, Intake } from '../core/inbox/inbox.js';
import type { CurationWorker } from '../core/curate/curation-worker.js';
import { utcDay } from '../core/investigate/budget.js';
import type { Ledger } from '../core/ledger/ledger.js';
import type { OutboxWorker } from '../core/outbox/outbox-worker.js';
import type { CatalogSnapshot } from '../core/recall/catalog-snapshot.js';
import { registerCatalogSyncMetrics } from '../http/catalog-metrics.js';
import { startControlServer, type ControlServer } from '../http/control-server.js';
import { createHttpServer, type HttpServer } from '../http/create-server.js';
import { hostNames } from '../http/host-guard.js';
import { memoryView, uiSignIn, UI_SIGN_IN } from '../http/ui/memory-view.js';
import { isReplayStore } from '../http/replay-guard.js';
import { registerLoopMetrics, type LoopMetrics } from '../http/loop-metrics.js';
import { createBotMetrics } from '../http/metrics.js';
import { registerModelMetrics } from '../http/model-metrics.js';
import { combineReadiness, type Readiness, type ReadinessCheck } from '../http/readiness.js';
import { systemClock, type Clock } from '../ports/clock.js';
import type { Logger } from '../ports/logger.js';
import type { KeyValueStore } from '../ports/store.js';
import type { CliIO } from '../cli/io.js';
import { buildLoop } from './build-loop.js';
import { buildSurfaces } from './build-surfaces.js';
import { loopOptions, pagerDutyOptions } from './loop-options.js';
import { startNoiseTimers } from './noise-timers.js';
import { catalogFolder } from './open-catalog.js';
import { createStore } from '../adapters/keyv/keyv-store.js';
import { openInbox } from './open-inbox.js';
import { describeStore, lockStore, openLedger, storeWarnings } from './open-store.js';
import { gitCatalog, staticCatalog, type ServedCatalog } from './served-catalog.js';
import { serveCuration } from './serve-curation.js';
import { controlSocketPath, removeServeOwner, writeServeOwner } from './serve-owner.js';
import { startCuration } from './start-curation.js';
import { startModel } from './start-model.js';

/** How long a shutdown waits for queued chat messages before leaving them for the next start. */
const DRAIN_MS = 5000;

/** Key the store probe writes; harmless to overwrite, never read by the ledger. */
const PROBE_KEY = 'health:probe';

export interface RunningBot {
  port: number;
  bot: RepriseBot;
  /** The loop's one way in: what the HTTP edge, the control socket, chat and timers push. */
  inbox: Inbox;
  ledger: Ledger;
  outbox: OutboxWorker;
  /** The curation worker, when a forge is configured. */
  curation?: CurationWorker;
  readiness(): Readiness;
  stop(): Promise<void>;
}

/** The one outcome of a control request, or why it was not recorded; `{}` while queued for the leader. */
function recordedOf(o: Intake | undefined, what: string): ReturnType<typeof recordedOrThrow> | Record<string, never> {
  if (o?.status === 'queued') return {};
  return recordedOrThrow(o, what);
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
  const { dir, bundled } = catalogFolder(config);
  if (bundled) logger.warn({ configured: config.catalog.dir, serving: dir }, 'catalog.dir does not exist; serving the bundled starter catalog');
  return staticCatalog(dir, bundled, logger);
}

/** Builds and starts everything `serve` runs; tests call this in-process. */
export async function startBot(config: Config, io: CliIO, logger: Logger, clock: Clock = systemClock): Promise<RunningBot> {
  // Before anything writes there (the catalog clone comes first): 0700 when new.
  ensurePrivateDir(config.store.data_dir);
  // A folder read once, or a git remote re-indexed when its HEAD moves (/readyz waits for the first index).
  const served = await servedCatalog(config, clock, logger);

  // One writer per store: the lock comes before anything is opened for writing.
  const lock: StoreLock | undefined = lockStore(config, 'reprise serve');
  for (const w of storeWarnings(config)) logger.warn({ store: describeStore(config) }, w);
  let store: KeyValueStore;
  let ledger: Ledger;
  // The one way into the loop, chosen with the store: the embedded store's one writer runs the
  // loop itself; on Redis, replicas elect a leader, and only its writes carry a current fence.
  let inbox: Inbox;
  // Registered once the surfaces are known; nothing is appended before then.
  let loop: LoopMetrics | undefined;
  try {
    store = createStore(config.store.url, config.store.data_dir);
    inbox = openInbox(config, store, clock, logger);
    ({ ledger } = await openLedger(config, logger.child({ component: 'ledger' }), {
      store,
      ...(inbox.fence ? { fence: inbox.fence } : {}),
      onAppend: (events) => loop?.ledgerAppended(events),
    }));
  } catch (err) {
    lock?.release();
    throw err;
  }
  logger.info({ seq: ledger.seq, skipped: ledger.read.skipped, dataDir: config.store.data_dir }, 'ledger opened');
  // The store's own files are 0600 by now; whatever else others can read is said, with the fix.
  for (const l of looseModes(config.store.data_dir)) logger.warn({ path: l.path, mode: l.mode }, `others can read ${l.path} (mode ${l.mode}); fix: ${l.fix}`);

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
    // A push the inbox could not record counts until a later probe proves the store takes writes again.
    const lastError = inbox.lastWriteError;
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
      { name: 'replica', ok: true, detail: inbox.status() },
    ];
    return combineReadiness(checks);
  };

  // On a shared store only the leader sends, and only while its lease holds with margin:
  // checked by the outbox before each item and by the Slack client right before each request.
  const mayDeliver = (): boolean => inbox.mayDeliver();
  let surfaces;
  try {
    surfaces = await buildSurfaces(config, { write: io.stdout, logger, clock, store, mayDeliver });
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
    isLeader: () => inbox.isLeader,
  });
  loop = registerLoopMetrics(metrics.registry, [...transports.keys()]);
  const modelMetrics = config.model
    ? registerModelMetrics(metrics.registry, { budget: config.model.daily_token_budget, spentToday: () => ledger.read.tokensSpent(utcDay(clock.now())) })
    : undefined;
  const alertmanager = config.alertmanager.url ? new AlertmanagerApi({ url: config.alertmanager.url, timeoutMs: config.alertmanager.timeout_ms }) : undefined;
  const pdRules = pagerDutyOptions(config);
  const pagerDuty = pdRules
    ? {
        ...pdRules,
        port: pagerDutyRest({
          apiUrl: config.pagerduty.api_url,
          token: config.pagerduty.token!,
          from: config.pagerduty.from!,
          timeoutMs: config.pagerduty.timeout_ms,
        }),
      }
    : undefined;
  const catalog = (): CatalogSnapshot => served.current();
  const curationPart = startCuration(config, { ledger, catalog, clock, logger });
  const model = config.model
    ? await startModel(config, { catalog, ledger, clock, logger, observer: loop, ...(modelMetrics ? { meterModels: modelMetrics.meter } : {}) })
    : undefined;
  const built = buildLoop({
    ...loopOptions(config),
    ledger,
    catalog,
    clock,
    logger,
    routing: new Routing(surfaces.routing),
    transports,
    mayDeliver,
    allow: surfaces.allow,
    observer: loop,
    ...(alertmanager ? { alertmanager } : {}),
    ...(pagerDuty ? { pagerDuty } : {}),
    ...(model ? { model } : {}),
    ...(curationPart ? { curation: curationPart } : {}),
  });
  const { bot, outbox } = built;
  const curation = curationPart && built.curation ? { repo: curationPart.repo, worker: built.curation } : undefined;
  // Work only the loop's owner does (the leader, on a shared store): held firings released,
  // Alertmanager reconciled, forge work filed. Started on gaining the lead, stopped on losing it.
  let noiseTimers: { stop(): Promise<void> } | undefined;
  const leaderWork = {
    start: (): void => {
      noiseTimers ??= startNoiseTimers({
        push: (intents) => inbox.push(intents),
        idle: () => bot.idle(),
        config,
        clock,
        logger: logger.child({ component: 'noise' }),
        ...(alertmanager ? { alertmanager } : {}),
      });
      curation?.worker.start();
      // Work an earlier run (or the previous leader) left unfinished: investigations without a
      // finding, Alertmanager silences without an outcome.
      inbox.push([{ type: 'resume' }]).then(
        ([o]) => {
          if (o?.status === 'resumed' && o.investigations + o.amSilences > 0)
            logger.info({ investigations: o.investigations, amSilences: o.amSilences }, 'work interrupted by a restart is resumed');
        },
        (err: unknown) => logger.error({ err }, 'resuming interrupted work failed; it is retried when this process next leads'),
      );
    },
    stop: async (): Promise<void> => {
      const timers = noiseTimers;
      noiseTimers = undefined;
      await timers?.stop();
      await curation?.worker.stop();
    },
  };
  // What the inbox drains into, wherever it was pushed: an alert's outcome is counted where it is decided.
  const handle = async (intents: readonly Intent[], opts: { txId?: string }): Promise<BotOutcome[]> => {
    const outcomes = await bot.handle(intents, opts);
    outcomes.forEach((o, i) => {
      const t = intents[i]?.type;
      if (t === 'firing' || t === 'resolve')
        metrics.incidents.inc({ outcome: o.status === 'posted' ? (o.answer ? `recall_${o.answer.kind}` : 'fall_through') : o.status });
    });
    return outcomes;
  };
  inbox.attach({
    handle,
    reload: (why) => ledger.reload(why),
    // The rest of the loop runs where the loop does (the leader, on Redis): outbox, noise timers, forge work.
    lead: () => {
      outbox.start();
      leaderWork.start();
    },
    follow: async () => {
      await outbox.stop();
      await leaderWork.stop();
      await built.jobs?.stop();
    },
  });
  if (served.sync) registerCatalogSyncMetrics(metrics.registry, () => served.sync!.status(), clock);
  const grooming = serveCuration({ config, logger, served, ledger, store, clock, isLeader: () => inbox.isLeader });
  const http: HttpServer = createHttpServer({
    ...(config.server.bearer_token ? { bearerToken: config.server.bearer_token } : {}),
    ...(config.server.pagerduty_secret ? { pagerDutySecret: config.server.pagerduty_secret } : {}),
    ...(config.server.generic_webhooks ? { genericSources: config.server.generic_webhooks } : {}),
    bodyLimitBytes: config.server.body_limit_bytes,
    bodyTimeoutMs: config.server.body_timeout_ms,
    maxPendingWebhooks: config.server.max_pending_webhooks,
    maxPendingPerPeer: config.server.max_pending_per_peer,
    verifyPoolSlots: config.server.verify_pool_slots,
    replayWindowMs: config.server.replay_window_ms,
    // Accepted signed deliveries are remembered in the store: across restarts, and by every replica.
    ...(isReplayStore(store) ? { replayStore: store } : {}),
    fieldLimit: config.server.field_limit_chars,
    identity: { labels: config.identity.labels },
    links: { allowedHosts: config.links.allowed_hosts },
    hosts: hostNames({ publicUrl: config.server.public_url, allowedHosts: config.ui.allowed_hosts }),
    logger,
    clock,
    readiness,
    metrics,
    mount: (app) => {
      for (const m of surfaces.mounts) m(app);
      // The read-only memory view (issue 23): loopback only unless ui.token / ui.trusted_header.
      if (config.ui.enabled) {
        app.route(UI_SIGN_IN, uiSignIn(config.ui.token ? { token: config.ui.token } : {}));
        app.route(
          '/ui',
          memoryView({
            read: ledger.read,
            catalog,
            clock,
            logger: logger.child({ component: 'ui' }),
            outcomeFloor: config.recall.outcome_floor,
            staleAfterMs: config.recall.stale_after_ms,
            textIndex: textIndexFor(),
            ...(config.ui.token ? { token: config.ui.token } : {}),
            ...(config.ui.trusted_header ? { trustedHeader: config.ui.trusted_header, trustedProxies: config.ui.trusted_proxies } : {}),
          }),
        );
      }
    },
    onChat: (intents) => inbox.push(intents),
    onAlertmanager: async (incidents, _requestId, route) => ({
      accepted: incidents.length,
      results: await inbox.push(incidentIntents(incidents, { ...route })),
    }),
  });

  let control: ControlServer | undefined;
  const release = async (): Promise<void> => {
    clearInterval(probeTimer);
    await leaderWork.stop();
    await served.stop();
    await grooming.stop();
    await control?.close();
    await http.close();
    // Takes no more pushes; on Redis, steps down (outbox and jobs stopped) and releases the lease: another replica leads at once.
    await inbox.stop();
    await built.jobs?.stop();
    await model?.close();
    await outbox.drain(DRAIN_MS);
    await outbox.stop();
    await outbox.dispose();
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
        feedback: async (body) => {
          const o = recordedOf(
            (await inbox.push([feedbackIntent(ledger, { ...(typeof body === 'object' && body !== null ? body : {}), via: 'cli' }, clock.now())]))[0],
            'feedback',
          );
          return { seq: o.seq, event: o.event };
        },
        status: async () => ({ pid: process.pid, port, seq: ledger.seq, readiness: readiness(), replica: inbox.status() }),
        note: async (body) => {
          const o = recordedOf((await inbox.push([noteIntent(noteRequest(body))]))[0], 'note');
          return { seq: o.seq, outcome: o };
        },
        fixed: async (body) => {
          const o = recordedOf((await inbox.push([fixedIntent(noteRequest(body))]))[0], 'fix');
          return { seq: o.seq, outcome: o };
        },
        ack: async (body) => {
          const o = recordedOf((await inbox.push([ackIntent(ackRequest(body))]))[0], 'ack');
          return { seq: o.seq, outcome: o };
        },
        // The outcome carries the draft when no forge is configured: the CLI prints it.
        postmortem: async (body) => {
          const o = recordedOf((await inbox.push([postmortemIntent(ackRequest(body))]))[0], 'postmortem');
          const { draft } = o as { draft?: { path: string; content: string } };
          return { seq: o.seq, event: o.event, ...(draft ? { draft: { path: draft.path, content: draft.content } } : {}) };
        },
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
    // Recorded is enough for a surface: what it shows comes back through the outbox.
    const sink = async (intent: ChatIntent): Promise<void> => void (await inbox.push([intent], { until: 'recorded' }));
    for (const t of transports.values()) await t.start(sink);
  } catch (err) {
    await release().catch(() => undefined);
    throw new Error(`cannot start a chat transport: ${(err as Error).message}`, { cause: err });
  }
  // Undelivered messages of earlier runs (a chat outage, a crash) go out now — on Redis, once
  // this replica leads (it replays the ledger and drains the inbox first). Held firings and
  // forge work of earlier runs are picked up by the leader too.
  try {
    await inbox.start();
  } catch (err) {
    await release().catch(() => undefined);
    throw err;
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
  return { port, bot, inbox, ledger, outbox, ...(curation ? { curation: curation.worker } : {}), readiness, stop: release };
}
