import { createStore } from '../adapters/keyv/keyv-store.js';
import { feedbackEvent } from '../core/bot/feedback-request.js';
import { isRepriseError } from '../core/errors.js';
import { Ledger } from '../core/ledger/ledger.js';
import { parseCli } from './args.js';
import { loadCliConfig } from './cli-config.js';
import type { CliCommand } from './io.js';
import { liveServeLock } from './serve-lock.js';

const USAGE = 'reprise feedback <triggerKey> up|down|clear [--user U]\n       reprise feedback <triggerKey> silence <duration> [--user U]';

/**
 * `reprise feedback`: drive the loop without chat. When a `serve` is running on the same data
 * directory the request goes through its control API (one process owns the ledger); otherwise
 * the event is appended to the local ledger directly.
 */
export const feedback: CliCommand = async (argv, io) => {
  let parsed;
  try {
    parsed = parseCli(argv, { user: { type: 'string' }, config: { type: 'string', short: 'c' } }, USAGE);
  } catch (err) {
    io.stderr(`${(err as Error).message}\n`);
    return 2;
  }
  const [triggerKey, action, duration] = parsed.positionals;
  if (!triggerKey || !action || !['up', 'down', 'clear', 'silence'].includes(action) || (action === 'silence') !== (duration !== undefined)) {
    io.stderr(`usage: ${USAGE}\n`);
    return 2;
  }
  const request = { triggerKey, action, user: parsed.values.user ?? io.env['USER'] ?? 'cli', ...(duration ? { duration } : {}) };
  const loaded = loadCliConfig(parsed.values.config, io);
  if ('exit' in loaded) return loaded.exit;
  const { config } = loaded;
  try {
    feedbackEvent(request, new Date()); // validate before touching anything
  } catch (err) {
    io.stderr(`reprise feedback: ${isRepriseError(err) ? err.message : String(err)}\n`);
    return 2;
  }
  const lock = liveServeLock(config.store.data_dir);
  if (lock) {
    const host = lock.host === '0.0.0.0' || lock.host === '::' ? '127.0.0.1' : lock.host;
    const res = await fetch(`http://${host}:${lock.port}/api/feedback`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(config.server.bearer_token ? { authorization: `Bearer ${config.server.bearer_token}` } : {}) },
      body: JSON.stringify(request),
    });
    const body = await res.text();
    if (!res.ok) {
      io.stderr(`reprise feedback: the running bot (pid ${lock.pid}) refused: ${res.status} ${body}\n`);
      return 1;
    }
    io.stdout(`recorded via the running bot (pid ${lock.pid}): ${body}\n`);
    return 0;
  }
  const store = createStore(config.store.url, config.store.data_dir);
  try {
    const ledger = await Ledger.open(store, { snapshotEvery: config.store.snapshot_every });
    const event = feedbackEvent(request, new Date());
    const seq = await ledger.append(event);
    await ledger.close();
    io.stdout(`recorded ${event.type === 'silence' ? `silence until ${event.until}` : event.vote} on ${triggerKey} as event #${seq}\n`);
    return 0;
  } finally {
    await store.close();
  }
};
