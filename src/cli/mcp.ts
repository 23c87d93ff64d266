import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { configRedactor } from '../config/config-secrets.js';
import { createLogger } from '../runtime/create-logger.js';
import { createCatalogMcpServer } from '../adapters/mcp/catalog-mcp-server.js';
import { hostNames } from '../http/host-guard.js';
import { createMcpHttpServer, isLoopbackHost, MCP_PATH } from '../http/mcp-endpoint.js';
import { weakTokenReason } from '../config/token-rule.js';
import { parseCli } from './args.js';
import { loadCliConfig } from './cli-config.js';
import { onProcessStop, type CliCommand } from '../runtime/cli-io.js';
import { mcpCatalogFolder, openMcpCatalog } from '../runtime/mcp-catalog.js';
import { openReadOnlyLedger } from '../runtime/read-only-ledger.js';
import { recallOptions } from '../runtime/recall-options.js';

const USAGE = `reprise mcp [--catalog DIR] [--config FILE] [--store URL] [--http [HOST:]PORT]

Serves the catalog to other agents as a read-only MCP server: tools kb_search, kb_get,
recall (with its gate trace) and track_record (an entry's outcomes from the ledger).

  (default)            MCP over stdio: an MCP client starts \`reprise mcp\` as a command
  --http [HOST:]PORT   Streamable HTTP at http://HOST:PORT${MCP_PATH} (HOST defaults to 127.0.0.1)
  --catalog DIR        catalog folder (default: the config's catalog, its git clone, or the bundled one)
  --store URL          ledger store to read (default: the config's store)

Never writes: the ledger is opened read-only beside the running bot, the single writer.
A non-loopback HOST needs REPRISE_MCP_TOKEN (at least 16 characters, not an example from the
docs: \`openssl rand -hex 24\`); every HTTP request
must then send Authorization: Bearer <token>. Logs go to standard error.
`;

/** `--http` value: `PORT`, `HOST:PORT`, `[v6]:PORT`. */
export function parseListen(value: string): { host: string; port: number } | undefined {
  const m = /^(?:(\[[^\]]+\]|[^:[\]]+|[^[\]]*:[^[\]]*)?:)?(\d{1,5})$/.exec(value.trim());
  if (!m) return undefined;
  const port = Number(m[2]);
  if (port > 65535) return undefined;
  const host = (m[1] ?? '127.0.0.1').replace(/^\[|\]$/g, '');
  return host === '' ? undefined : { host, port };
}

/** `reprise mcp`: the catalog as a read-only MCP server over stdio or Streamable HTTP. */
export const mcpCommand: CliCommand = async (argv, io) => {
  const parsed = parseCli(
    argv,
    {
      catalog: { type: 'string', description: 'catalog directory (default: the configured or bundled catalog)', valueName: 'DIR' },
      config: { type: 'string', short: 'c', description: 'config file (default: $REPRISE_CONFIG, else ./reprise.yaml)', valueName: 'FILE' },
      store: { type: 'string', description: 'ledger store URL (default: the configured store)', valueName: 'URL' },
      http: { type: 'string', description: 'serve MCP over HTTP on [HOST:]PORT instead of stdio', valueName: '[HOST:]PORT' },
    },
    USAGE,
    io,
  );
  if ('exit' in parsed) return parsed.exit;
  const { values, positionals } = parsed;
  if (positionals.length > 0) {
    io.stderr(`reprise mcp: unexpected argument ${JSON.stringify(positionals[0])}\nusage: ${USAGE}`);
    return 2;
  }
  const listen = values.http === undefined ? undefined : parseListen(values.http);
  if (values.http !== undefined && !listen) {
    io.stderr(`reprise mcp: --http must be PORT or HOST:PORT (e.g. 8765, 127.0.0.1:8765, [::1]:8765), got ${JSON.stringify(values.http)}\n`);
    return 2;
  }
  const token = io.env['REPRISE_MCP_TOKEN']?.trim() || undefined;
  const weak = token === undefined ? undefined : weakTokenReason(token);
  if (listen && weak !== undefined) {
    io.stderr(`reprise mcp: REPRISE_MCP_TOKEN ${weak}\n`);
    return 2;
  }
  if (listen && !isLoopbackHost(listen.host) && token === undefined) {
    io.stderr(
      `reprise mcp: refusing to serve on ${listen.host}, which other machines can reach, without a token. ` +
        `Set REPRISE_MCP_TOKEN (e.g. \`export REPRISE_MCP_TOKEN=$(openssl rand -hex 32)\`) and give it to the clients as ` +
        `"Authorization: Bearer <token>", or bind 127.0.0.1 (--http 127.0.0.1:${listen.port}).\n`,
    );
    return 2;
  }
  const loaded = loadCliConfig(values.config, io);
  if ('exit' in loaded) return loaded.exit;
  const { config } = loaded;
  // stdout is the stdio protocol channel: every log line goes to standard error.
  const logger = createLogger({ level: config.log.level, env: io.env, redactor: configRedactor(config), ...(io.log ? { destination: io.log } : {}) });

  const where = mcpCatalogFolder(values.catalog, config, io.cwd);
  if (typeof where === 'string') {
    io.stderr(`reprise mcp: ${where}\n`);
    return 2;
  }
  const catalog = await openMcpCatalog(where, config, logger);

  const ledger = openReadOnlyLedger(config, logger.child({ component: 'ledger' }), values.store);
  await ledger.refresh();
  logger.info({ store: ledger.source, seq: ledger.read.seq }, 'ledger opened read-only');
  const createServer = () =>
    createCatalogMcpServer({
      catalog: catalog.current,
      ledger,
      recallOptions: recallOptions(config),
      fieldLimit: config.server.field_limit_chars,
      identity: { labels: config.identity.labels },
      logger,
    });

  let stop: () => Promise<void>;
  let stopped: Promise<void>;
  if (listen) {
    const http = createMcpHttpServer({
      createServer,
      ...(token ? { token } : {}),
      bodyLimitBytes: config.server.body_limit_bytes,
      hosts: hostNames({ publicUrl: config.server.public_url, allowedHosts: config.ui.allowed_hosts }),
      logger,
    });
    let port: number;
    try {
      ({ port } = await http.listen(listen.port, listen.host));
    } catch (err) {
      catalog.stop();
      await ledger.close();
      io.stderr(`reprise mcp: cannot listen on ${listen.host}:${listen.port}: ${(err as Error).message}; choose another port with --http\n`);
      return 1;
    }
    const host = listen.host.includes(':') ? `[${listen.host}]` : listen.host;
    logger.info({ host: listen.host, port, path: MCP_PATH, auth: token ? 'bearer' : 'loopback-only' }, `listening on http://${host}:${port}${MCP_PATH}`);
    let done!: () => void;
    stopped = new Promise<void>((r) => (done = r));
    stop = async () => {
      await http.close();
      done();
    };
  } else {
    const server = createServer();
    const transport = new StdioServerTransport(process.stdin, process.stdout, { maxBufferSize: config.server.body_limit_bytes + 64 * 1024 });
    let done!: () => void;
    stopped = new Promise<void>((r) => (done = r));
    await server.connect(transport);
    // The client closing our stdin ends the session (and this process).
    process.stdin.once('end', () => void transport.close());
    const chained = transport.onclose;
    transport.onclose = () => {
      chained?.();
      done();
    };
    logger.info({ transport: 'stdio' }, 'serving MCP on stdio');
    stop = async () => {
      await server.close();
      done();
    };
  }
  const off = (io.onStop ?? onProcessStop)((signal) => {
    logger.info({ signal }, 'stopping');
    void stop();
  });
  await stopped;
  off();
  catalog.stop();
  await ledger.close();
  logger.info('mcp server stopped');
  logger.flush();
  return 0;
};
