/**
 * The wiring of `reprise serve`: what is built, and how it is connected, before anything listens
 * — the served catalog, the store and its ledger (one writer: the file lock, or the Redis lease)
 * behind the inbox chosen with it, the chat surfaces, the loop (`buildLoop`) and the leader's
 * work, metrics and readiness, and the HTTP edge. `startBot` starts what this builds.
 */
import { join } from 'node:path';
import { ensurePrivateDir, looseModes } from '../adapters/keyv/private-files.js';
import type { StoreLock } from '../adapters/keyv/store-lock.js';
import { AlertmanagerApi } from '../adapters/alertmanager/alertmanager-api.js';
import { pagerDutyRest } from '../adapters/pagerduty/pagerduty-rest.js';
import type { Config } from '../config/schema.js';
import { incidentIntents, type Intent } from '../core/bot/intent.js';
import type { BotOutcome, RepriseBot } from '../core/bot/reprise-bot.js';
import { Routing } from '../core/bot/routing.js';
import type { ChatTransport } from '../ports/chat-transport.js';
import type { Inbox } from '../core/inbox/inbox.js';
import type { CurationWorker } from '../core/curate/curation-worker.js';
import { utcDay } from '../core/investigate/budget.js';
import type { Ledger } from '../core/ledger/ledger.js';
import type { OutboxWorker } from '../core/outbox/outbox-worker.js';
import type { CatalogSnapshot } from '../core/recall/catalog-snapshot.js';
import { registerCatalogSyncMetrics } from '../http/catalog-metrics.js';
import { createHttpServer, type HttpServer } from '../http/create-server.js';
import { hostNames } from '../http/host-guard.js';
import { memoryView, transportPermalinks, uiSignIn, UI_SIGN_IN } from '../http/ui/memory-view.js';
import { ServedSince } from './served-since.js';
import { textIndexFor } from '../adapters/flexsearch/text-index.js';
import { SignInLimiter } from '../http/ui/sign-in-limiter.js';
import { UiSessions } from '../http/ui/ui-sessions.js';
import { configRedactor } from '../config/config-secrets.js';
import { isReplayStore } from '../http/replay-guard.js';
import { registerLoopMetrics, type LoopMetrics } from '../http/loop-metrics.js';
import { createBotMetrics } from '../http/metrics.js';
import { registerModelMetrics } from '../http/model-metrics.js';
import { combineReadiness, type Readiness } from '../http/readiness.js';
import type { Clock } from '../ports/clock.js';
import type { Logger } from '../ports/logger.js';
import type { KeyValueStore } from '../ports/store.js';
import type { CliIO } from './cli-io.js';
import { buildLoop } from './build-loop.js';
import { buildOnCall } from './build-oncall.js';
import { buildSurfaces } from './build-surfaces.js';
import { leaderWork } from './leader-work.js';
import { loopOptions, pagerDutyOptions } from './loop-options.js';
import { catalogFolder } from './open-catalog.js';
import { openInbox } from './open-inbox.js';
import { describeStore, lockStore, openLedger, openStore, storeWarnings } from './open-store.js';
import { gitCatalog, staticCatalog, type ServedCatalog } from './served-catalog.js';
import { CATALOG_INDEX_FILE } from './catalog-index-file.js';
import { serveCuration, type ServeCuration } from './serve-curation.js';
import { removeServeOwner } from './serve-owner.js';
import { startCuration } from './start-curation.js';
import { startModel } from './start-model.js';
import { startStoreProbe, type StoreProbe } from './store-probe.js';
import { learnOnMiss } from './people-directory.js';
import { TranscriptFile } from '../adapters/console/transcript-file.js';
import type { PeopleDirectory } from '../ports/people.js';

/** How long a shutdown waits for queued chat messages before leaving them for the next start. */
const DRAIN_MS = 5000;

/** What `wireBot` built: nothing listens yet, and no chat surface or inbox is started. */
export interface WiredBot {
  served: ServedCatalog;
  ledger: Ledger;
  inbox: Inbox;
  bot: RepriseBot;
  outbox: OutboxWorker;
  curation?: CurationWorker;
  transports: ReadonlyMap<string, ChatTransport>;
  /** Display names of the surfaces' people: whoever acts is looked up as they act. */
  people: PeopleDirectory;
  grooming: ServeCuration;
  /** The memory view's sign-in sessions (`reprise ui sessions` through the control socket). */
  uiSessions: UiSessions;
  http: HttpServer;
  readiness(): Readiness;
  /** Stops and closes everything built, in order; the store lock goes last. */
  release(): Promise<void>;
}

/** The catalog to serve: synced from git when `catalog.git` is set, else the folder. */
async function servedCatalog(config: Config, clock: Clock, logger: Logger): Promise<ServedCatalog> {
  if (config.catalog.git) return gitCatalog(config, clock, logger);
  const { dir, bundled } = catalogFolder(config);
  if (bundled) logger.warn({ configured: config.catalog.dir, serving: dir }, 'catalog.dir does not exist; serving the bundled starter catalog');
  return staticCatalog(dir, bundled, logger, join(config.store.data_dir, CATALOG_INDEX_FILE));
}

/** The store, its ledger and the inbox in front of the loop, opened under the store's one-writer lock. */
async function openStoreAndInbox(
  config: Config,
  clock: Clock,
  logger: Logger,
  onAppend: (events: Parameters<LoopMetrics['ledgerAppended']>[0]) => void,
): Promise<{ store: KeyValueStore; ledger: Ledger; inbox: Inbox; lock: StoreLock | undefined }> {
  // One writer per store: the lock comes before anything is opened for writing.
  const lock = lockStore(config, 'reprise serve');
  for (const w of storeWarnings(config)) logger.warn({ store: describeStore(config) }, w);
  try {
    const store = openStore(config, 'write');
    // The one way into the loop, chosen with the store: the embedded store's one writer runs the
    // loop itself; on Redis, replicas elect a leader, and only its writes carry a current fence.
    const inbox = openInbox(config, store, clock, logger);
    const { ledger } = await openLedger(config, logger.child({ component: 'ledger' }), {
      store,
      ...(inbox.fence ? { fence: inbox.fence } : {}),
      onAppend,
    });
    return { store, ledger, inbox, lock };
  } catch (err) {
    lock?.release();
    throw err;
  }
}

/** /readyz: the catalog, the store's writes (probe and the inbox's last write error), and what is reported beside them. */
function botReadiness(deps: {
  config: Config;
  served: ServedCatalog;
  probe: StoreProbe;
  inbox: Inbox;
  ledger: Ledger;
  transports: ReadonlyMap<string, ChatTransport>;
  outbox: () => OutboxWorker;
  curation: () => { repo: string; worker: CurationWorker } | undefined;
}): () => Readiness {
  const { config, served, probe: storeProbe, inbox, ledger, transports } = deps;
  return () => {
    const probe = storeProbe.last();
    // A push the inbox could not record counts until a later probe proves the store takes writes again.
    const lastError = inbox.lastWriteError;
    const writeError = lastError && !(probe.ok && Date.parse(probe.at) > Date.parse(lastError.at)) ? lastError : undefined;
    const curation = deps.curation();
    return combineReadiness([
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
      { name: 'outbox', ok: true, detail: { surfaces: [...transports.keys()], ...deps.outbox().status() } },
      // Forge work waits out an outage (kept, retried): reported, never a reason to stop taking alerts.
      ...(curation ? [{ name: 'forge', ok: true, detail: { repo: curation.repo, ...curation.worker.status() } }] : []),
      // Leadership is not readiness: a follower takes webhooks as well as the leader does.
      { name: 'replica', ok: true, detail: inbox.status() },
    ]);
  };
}

/** Builds everything `serve` runs and connects it; a failure part-way closes what was built. */
export async function wireBot(config: Config, io: CliIO, logger: Logger, clock: Clock): Promise<WiredBot> {
  // Before anything writes there (the catalog clone comes first): 0700 when new.
  ensurePrivateDir(config.store.data_dir);
  // Registered once the surfaces are known; nothing is appended before then.
  let loop: LoopMetrics | undefined;
  // The catalog (a folder read once, or a git remote re-indexed when its HEAD moves; /readyz
  // waits for the first index) and the store load side by side: one's file reads overlap the
  // other's work. The store's lock is taken before either writes anything.
  const [catalogOpened, storeOpened] = await Promise.allSettled([
    servedCatalog(config, clock, logger),
    openStoreAndInbox(config, clock, logger, (events) => loop?.ledgerAppended(events)),
  ]);
  if (catalogOpened.status === 'rejected' || storeOpened.status === 'rejected') {
    if (storeOpened.status === 'fulfilled') {
      await storeOpened.value.ledger.close().catch(() => undefined);
      await storeOpened.value.store.close().catch(() => undefined);
      storeOpened.value.lock?.release();
    }
    if (catalogOpened.status === 'fulfilled') await catalogOpened.value.stop().catch(() => undefined);
    // The store's refusal (held by another serve, newer schema) first: it is what to fix before anything else.
    throw storeOpened.status === 'rejected' ? storeOpened.reason : (catalogOpened as PromiseRejectedResult).reason;
  }
  const served = catalogOpened.value;
  const { store, ledger, inbox, lock } = storeOpened.value;
  logger.info({ seq: ledger.seq, skipped: ledger.read.skipped, dataDir: config.store.data_dir }, 'ledger opened');
  // The store's own files are 0600 by now; whatever else others can read is said, with the fix.
  for (const l of looseModes(config.store.data_dir)) logger.warn({ path: l.path, mode: l.mode }, `others can read ${l.path} (mode ${l.mode}); fix: ${l.fix}`);
  const probe = await startStoreProbe(store, config.store.probe_interval_ms, clock, logger);

  // On a shared store only the leader sends, and only while its lease holds with margin:
  // checked by the outbox before each item and by the Slack client right before each request.
  const mayDeliver = (): boolean => inbox.mayDeliver();
  let surfaces;
  try {
    surfaces = await buildSurfaces(config, { write: io.stdout, logger, clock, store, mayDeliver });
  } catch (err) {
    probe.stop();
    await ledger.close().catch(() => undefined);
    await store.close().catch(() => undefined);
    lock?.release();
    throw err;
  }
  const transports = new Map(surfaces.transports.map((t) => [t.name, t]));
  let outbox: OutboxWorker | undefined;
  let curation: { repo: string; worker: CurationWorker } | undefined;
  const readiness = botReadiness({ config, served, probe, inbox, ledger, transports, outbox: () => outbox!, curation: () => curation });
  // The one redactor of everything this process says: logs (serve's logger), the ledger (and so
  // chat), /metrics and /ui know the same secrets.
  const redactor = configRedactor(config);
  const metrics = createBotMetrics({
    redact: redactor.text,
    ledgerSeq: () => ledger.seq,
    ledgerSkipped: () => ledger.read.skipped,
    isReady: () => readiness().ready,
    outboxPending: () => outbox!.status().pending,
    outboxStatus: () => outbox!.status(),
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
  // When each entry was first served: the memory view's stale flag counts from it (a bundled entry is not stale on day one).
  const servedSince = await ServedSince.open(store, logger.child({ component: 'ui' }));
  const catalog: () => CatalogSnapshot = servedSince.serving(() => served.current(), clock);
  catalog();
  const curationPart = await startCuration(config, { ledger, catalog, clock, logger, people: surfaces.people });
  const model = config.model
    ? await startModel(config, { catalog, ledger, clock, logger, observer: loop, ...(modelMetrics ? { meterModels: modelMetrics.meter } : {}) })
    : undefined;
  // Who is on call (issue 32): asked before a critical firing is decided, within its budget.
  const onCall = buildOnCall(config, {
    transports: surfaces.transports,
    clock,
    logger,
    // A late answer edits the cards that said "unknown": through the inbox, like every intent.
    onLate: (late) =>
      void inbox
        .push([{ type: 'oncall_answered', ...late }], { until: 'recorded' })
        .catch((err: unknown) => logger.warn({ err }, 'a late on-call answer was not recorded')),
  });
  const built = buildLoop({
    ...loopOptions(config),
    ...(onCall ? { whoIsOnCall: (route: string | undefined, via: string) => onCall.answerFor(route, via) } : {}),
    ledger,
    catalog,
    clock,
    logger,
    routing: new Routing(surfaces.routing),
    transports,
    mayDeliver,
    allow: surfaces.allow,
    observer: loop,
    people: learnOnMiss(surfaces.people),
    ...(config.transport.transcript ? { transcript: new TranscriptFile(config.transport.transcript, logger.child({ component: 'transcript' })) } : {}),
    ...(alertmanager ? { alertmanager } : {}),
    ...(pagerDuty ? { pagerDuty } : {}),
    ...(model ? { model } : {}),
    ...(curationPart ? { curation: curationPart } : {}),
  });
  const { bot } = built;
  outbox = built.outbox;
  curation = curationPart && built.curation ? { repo: curationPart.repo, worker: built.curation } : undefined;
  const leader = leaderWork({ inbox, idle: () => bot.idle(), config, clock, logger, alertmanager, curation: curation?.worker });
  // What the inbox drains into, wherever it was pushed: an alert's outcome is counted where it is decided.
  const handle = async (intents: readonly Intent[], opts: { txId?: string }): Promise<BotOutcome[]> => {
    const outcomes = await bot.handle(onCall ? await onCall.enrich(intents) : intents, opts);
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
      outbox!.start();
      leader.start();
    },
    follow: async () => {
      await outbox!.stop();
      await leader.stop();
      await built.jobs?.stop();
    },
  });
  if (served.sync) registerCatalogSyncMetrics(metrics.registry, () => served.sync!.status(), clock);
  // Memory-view sign-ins: one session per sign-in in the configured store (durable when it is),
  // and wrong tokens slowed per address — the form's and the bearer header's alike.
  const uiLog = logger.child({ component: 'ui' });
  const uiAuth = {
    sessions: new UiSessions(store, { idleMs: config.ui.session_idle_ms, maxMs: config.ui.session_max_ms }),
    limiter: new SignInLimiter({ freeAttempts: config.ui.sign_in_attempts, maxBackoffMs: config.ui.sign_in_backoff_max_ms }),
  };
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
        app.route(UI_SIGN_IN, uiSignIn({ ...(config.ui.token ? { token: config.ui.token } : {}), ...uiAuth, clock, logger: uiLog }));
        app.route(
          '/ui',
          memoryView({
            read: ledger.read,
            catalog,
            clock,
            logger: uiLog,
            ...uiAuth,
            outcomeFloor: config.recall.outcome_floor,
            staleAfterMs: config.recall.stale_after_ms,
            redact: redactor.text,
            servedSince,
            textIndex: textIndexFor(),
            permalink: transportPermalinks(transports.values()),
            people: learnOnMiss(surfaces.people),
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

  const release = async (): Promise<void> => {
    probe.stop();
    await leader.stop();
    await served.stop();
    await grooming.stop();
    await http.close();
    // Takes no more pushes; on Redis, steps down (outbox and jobs stopped) and releases the lease: another replica leads at once.
    await inbox.stop();
    await built.jobs?.stop();
    await model?.close();
    await outbox!.drain(DRAIN_MS);
    await outbox!.stop();
    await outbox!.dispose();
    for (const t of transports.values()) await t.close().catch((err: unknown) => logger.warn({ err, transport: t.name }, 'closing a transport failed'));
    await servedSince.flushed();
    await ledger.close();
    await store.close();
    removeServeOwner(config.store.data_dir, process.pid);
    lock?.release();
  };
  return {
    served,
    ledger,
    inbox,
    bot,
    outbox,
    ...(curation ? { curation: curation.worker } : {}),
    transports,
    people: surfaces.people,
    grooming,
    uiSessions: uiAuth.sessions,
    http,
    readiness,
    release,
  };
}
