import { existsSync } from 'node:fs';
import { basename } from 'node:path';
import { pino } from 'pino';
import { ConsoleTransport } from '../adapters/console/console-transport.js';
import { createStore } from '../adapters/keyv/keyv-store.js';
import { CONFIG_EXIT_CODE } from '../config/config-error.js';
import type { Config } from '../config/schema.js';
import { ledgerForBot } from '../core/bot/ledger-for-bot.js';
import { RepriseBot, type IncidentOutcome } from '../core/bot/reprise-bot.js';
import { TriggerPolicy } from '../core/bot/trigger-policy.js';
import { Ledger } from '../core/ledger/ledger.js';
import type { CatalogSnapshot } from '../core/recall/catalog-snapshot.js';
import { createHttpServer, type HttpServer } from '../http/create-server.js';
import { MetricsRegistry } from '../http/metrics.js';
import { systemClock, type Clock } from '../ports/clock.js';
import type { Logger } from '../ports/logger.js';
import { parseCli } from './args.js';
import { loadCliConfig } from './cli-config.js';
import { BUNDLED_CATALOG, loadSnapshot } from './catalog-context.js';
import type { CliCommand, CliIO } from './io.js';
import { recallOptions } from './recall-options.js';
import { writeServeLock, removeServeLock } from './serve-lock.js';

const USAGE = 'reprise serve [--config FILE] [--port N] [--host H]';

export interface RunningBot {
  port: number;
  bot: RepriseBot;
  ledger: Ledger;
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

/** Config keys that validate but whose feature is not built yet: say so rather than ignore them. */
export function notYetBuilt(config: Config): string[] {
  const keys: string[] = [];
  if (config.catalog.git) keys.push('catalog.git');
  if (config.model) keys.push('model');
  if (config.trigger.debounce_ms > 0) keys.push('trigger.debounce');
  if (config.ledger.recurrence_cooldown_ms > 0) keys.push('ledger.recurrence_cooldown');
  return keys;
}

function outcomeSummary(o: IncidentOutcome): Record<string, unknown> {
  if (o.status === 'posted') return { status: o.status, triggerKey: o.triggerKey, answer: o.answer, threadId: o.threadId ?? null };
  return { ...o };
}

/** Builds and starts everything `serve` runs; tests call this in-process. */
export async function startBot(config: Config, io: CliIO, logger: Logger, clock: Clock = systemClock): Promise<RunningBot> {
  const { dir, bundled } = catalogDir(config);
  if (bundled) logger.warn({ configured: config.catalog.dir, serving: dir }, 'catalog.dir does not exist; serving the bundled starter catalog');
  const { snapshot, problems, skipped } = await loadSnapshot(dir);
  for (const p of skipped) logger.warn({ file: p.file, line: p.line, rule: p.rule }, `catalog entry skipped: ${p.message}`);
  const skippedFiles = new Set(skipped.map((p) => p.file)).size;
  logger.info({ catalog: dir, entries: snapshot.entries.length, skippedFiles, problems: problems.length }, 'catalog indexed');
  // Swapped whole when catalog sync lands; readiness follows the first successful index.
  const current: CatalogSnapshot = snapshot;
  const ready = true;

  let store: ReturnType<typeof createStore>;
  let ledger: Ledger;
  try {
    store = createStore(config.store.url, config.store.data_dir);
    ledger = await Ledger.open(store, { snapshotEvery: config.store.snapshot_every, logger: logger.child({ component: 'ledger' }) });
  } catch (err) {
    const where = config.store.url ?? `the data dir ${config.store.data_dir}`;
    throw new Error(`cannot open the ledger store (${where}): ${(err as Error).message}; set store.data_dir (REPRISE_DATA_DIR) or store.url`, { cause: err });
  }
  logger.info({ seq: ledger.seq, dataDir: config.store.data_dir }, 'ledger opened');

  const transport = new ConsoleTransport({ write: io.stdout, ...(config.transport.transcript ? { transcriptFile: config.transport.transcript } : {}) });
  const policy = new TriggerPolicy({ match: config.trigger.match, ignore: config.trigger.ignore, dedupWindowMs: config.trigger.dedup_window_ms });
  const bot = new RepriseBot({ catalog: () => current, ledger: ledgerForBot(ledger), transport, clock, logger: logger.child({ component: 'bot' }), recall: recallOptions(config), policy });
  for (const key of notYetBuilt(config)) logger.warn({ key }, `${key} is configured but not implemented in this build; it has no effect yet`);

  const metrics = new MetricsRegistry();
  const recalls = metrics.counter('reprise_incidents_total', 'Incidents handled, by outcome.', ['outcome']);
  const http: HttpServer = createHttpServer({
    ...(config.server.bearer_token ? { bearerToken: config.server.bearer_token } : {}),
    bodyLimitBytes: config.server.body_limit_bytes,
    logger,
    clock,
    isReady: () => ready,
    metricsText: () => metrics.render(),
    onAlertmanager: async (incidents) => {
      const outcomes = await bot.handle(incidents);
      for (const o of outcomes) recalls.inc({ outcome: o.status === 'posted' ? (o.answer ? `recall_${o.answer.kind}` : 'fall_through') : o.status });
      return { accepted: incidents.length, results: outcomes.map(outcomeSummary) };
    },
    onFeedback: async (body) => {
      const { seq, event } = await bot.feedback(body);
      return { seq, event };
    },
  });
  let port: number;
  try {
    ({ port } = await http.listen(config.server.port, config.server.host));
  } catch (err) {
    await store.close();
    const code = (err as NodeJS.ErrnoException).code;
    const hint = code === 'EADDRINUSE' ? '; another process holds it — pick a free port with --port N or PORT' : '';
    throw new Error(`cannot listen on ${config.server.host}:${config.server.port}: ${(err as Error).message}${hint}`, { cause: err });
  }
  writeServeLock(config.store.data_dir, { pid: process.pid, port, host: config.server.host });
  logger.info({ port }, `listening on http://${config.server.host}:${port}`);
  return {
    port,
    bot,
    ledger,
    stop: async () => {
      await http.close();
      await ledger.close();
      await store.close();
      await transport.close();
      removeServeLock(config.store.data_dir, process.pid);
    },
  };
}

/** `reprise serve`: the bot on its embedded defaults unless a config file says otherwise. */
export const serve: CliCommand = async (argv, io) => {
  let values;
  try {
    ({ values } = parseCli(argv, { config: { type: 'string', short: 'c' }, port: { type: 'string' }, host: { type: 'string' } }, USAGE));
  } catch (err) {
    io.stderr(`${(err as Error).message}\n`);
    return 2;
  }
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
  if (config.transport.kind !== 'console') {
    io.stderr(`reprise serve: transport.kind "${config.transport.kind}" is not available in this build yet; use "console"\n`);
    return CONFIG_EXIT_CODE;
  }
  const logger = pino({ level: config.log.level, base: { app: 'reprise' }, redact: ['*.bearer_token', '*.api_key', '*.access_token', '*.bot_token'] }, pino.destination(2));
  const running = await startBot(config, io, logger);
  io.stderr(
    `\nReprise is listening on http://127.0.0.1:${running.port} (console transport${config.transport.transcript ? `, transcript ${config.transport.transcript}` : ''}).\n` +
      `Send an alert:  curl -s -XPOST -H 'Content-Type: application/json' --data @manifests/alertmanager/sample-firing.json http://127.0.0.1:${running.port}/webhook/alertmanager\n\n`,
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
  return 0;
};
