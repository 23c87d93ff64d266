import type { Config } from '../config/schema.js';
import { describeListen, startBot, type RunningBot } from '../runtime/start-bot.js';
import { StoreLockedError } from '../runtime/open-store.js';
import { configRedactor } from '../config/config-secrets.js';
import { createLogger } from '../runtime/create-logger.js';
import { parseCli } from './args.js';
import { loadCliConfig } from './cli-config.js';
import { onProcessStop, type CliCommand } from '../runtime/cli-io.js';

const USAGE = `reprise serve [--config FILE] [--port N] [--host H]

Runs the bot: webhooks, health and metrics on the HTTP port; the local control API (used by
\`reprise feedback\` and \`reprise catalog sync\`) on a Unix socket in the data dir, mode 0600.
One serve per store.`;

/** The surfaces a config turns on, for the start banner. */
function surfacesOf(config: Config): string[] {
  const out: string[] = [];
  if (config.transport.slack.bot_token) out.push(config.transport.slack.app_token ? 'Slack, Socket Mode' : 'Slack');
  if (config.transport.matrix.homeserver_url && config.transport.matrix.access_token) out.push('Matrix');
  if (config.transport.console === 'on' || (config.transport.console === 'auto' && out.length === 0)) out.push('console transport');
  return out;
}

/** `reprise serve`: the bot on its embedded defaults unless a config file says otherwise. */
export const serve: CliCommand = async (argv, io) => {
  const parsed = parseCli(
    argv,
    {
      config: { type: 'string', short: 'c', description: 'config file (default: $REPRISE_CONFIG, else ./reprise.yaml)', valueName: 'FILE' },
      port: { type: 'string', description: 'port for webhooks and health (default 8080, 0 = any free port)', valueName: 'N' },
      host: { type: 'string', description: 'address to listen on', valueName: 'HOST' },
    },
    USAGE,
    io,
  );
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
  const logger = createLogger({ level: config.log.level, redactor: configRedactor(config), ...(io.log ? { destination: io.log } : {}) });
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
    (io.onStop ?? onProcessStop)((signal) => {
      logger.info({ signal }, 'shutting down');
      running.stop().then(resolve, (err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        resolve();
      });
    });
  });
  return 0;
};
