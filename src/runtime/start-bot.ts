/**
 * Everything `reprise serve` runs, started: `wireBot` builds and connects it (the store and its
 * inbox, the loop, the HTTP edge), this listens, opens the control socket (`controlApi`), starts
 * the chat surfaces and the inbox, and says where the bot is. `serve` calls it; tests call it
 * in-process.
 */
import { mkdirSync } from 'node:fs';
import { userInfo } from 'node:os';
import { dirname } from 'node:path';
import type { Config } from '../config/schema.js';
import type { RepriseBot } from '../core/bot/reprise-bot.js';
import type { ChatIntent } from '../core/chat/chat-types.js';
import type { Inbox } from '../core/inbox/inbox.js';
import type { CurationWorker } from '../core/curate/curation-worker.js';
import type { Ledger } from '../core/ledger/ledger.js';
import type { OutboxWorker } from '../core/outbox/outbox-worker.js';
import { startControlServer, type ControlServer } from '../http/control-server.js';
import type { Readiness } from '../http/readiness.js';
import { systemClock, type Clock } from '../ports/clock.js';
import type { ChatTransport } from '../ports/chat-transport.js';
import type { Logger } from '../ports/logger.js';
import type { CliIO } from './cli-io.js';
import { controlApi } from './control-api.js';
import { controlSocketPath, writeServeOwner } from './serve-owner.js';
import { wireBot } from './wire-bot.js';

export interface RunningBot {
  port: number;
  bot: RepriseBot;
  /** The loop's one way in: what the HTTP edge, the control socket, chat and timers push. */
  inbox: Inbox;
  ledger: Ledger;
  outbox: OutboxWorker;
  /** The curation worker, when a forge is configured. */
  curation?: CurationWorker;
  /** The chat surfaces it runs, by name. */
  transports: ReadonlyMap<string, ChatTransport>;
  readiness(): Readiness;
  stop(): Promise<void>;
}

/** Where the server listens, said plainly: 0.0.0.0 is every interface, not localhost. */
export function describeListen(host: string, port: number): string {
  if (host === '0.0.0.0' || host === '::') return `port ${port} on all interfaces (${host}); locally http://127.0.0.1:${port}`;
  const h = host.includes(':') ? `[${host}]` : host;
  return `http://${h}:${port}`;
}

/** Builds and starts everything `serve` runs; tests call this in-process. */
export async function startBot(config: Config, io: CliIO, logger: Logger, clock: Clock = systemClock): Promise<RunningBot> {
  const wired = await wireBot(config, io, logger, clock);
  const { inbox, ledger, served, grooming, http, readiness, transports, people } = wired;
  let control: ControlServer | undefined;
  const release = async (): Promise<void> => {
    await control?.close();
    await wired.release();
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
      controlApi({ inbox, ledger, clock, served, grooming, uiSessions: wired.uiSessions, readiness, port }),
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
    // Whoever acts is looked up at once, so their name is known when a surface or document
    // shows it. A Slack person is shown as a mention the client names itself, and Slack wants
    // its answer within 3 s: looked up in the background. Elsewhere (a Matrix card edit names
    // them in text) the first sight of a person waits for the lookup — once, bounded by
    // `people.lookup_timeout`, cached after — so the card and its thread name them the same way.
    const sink = async (intent: ChatIntent): Promise<void> => {
      if (intent.actor.via === 'slack') people.learn(intent.actor);
      else await people.resolve([intent.actor]);
      await inbox.push([intent], { until: 'recorded' });
    };
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
  const { bot, outbox, curation } = wired;
  return { port, bot, inbox, ledger, outbox, ...(curation ? { curation } : {}), transports, readiness, stop: release };
}
