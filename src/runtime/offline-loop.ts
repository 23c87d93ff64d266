/**
 * The loop as the CLI runs it when no bot does (`reprise feedback`, `note` with the store lock
 * held): the same `buildLoop`, the same decisions, the same ledger events — a 👎 rewrites the
 * card, a 🔕 restates it, a note is answered in its thread — with no chat surface running and no
 * outbox worker started: what must be shown waits in the outbox, and the bot delivers it when it
 * next runs. Forge work is recorded the same way and filed then.
 */
import type { Config } from '../config/schema.js';
import { Routing } from '../core/bot/routing.js';
import type { Ledger } from '../core/ledger/ledger.js';
import { buildCatalogSnapshot } from '../core/recall/catalog-snapshot.js';
import { PostingsIndex } from '../core/search/postings-index.js';
import { systemClock, type Clock } from '../ports/clock.js';
import { silentLogger, type Logger } from '../ports/logger.js';
import { buildLoop, type Loop } from './build-loop.js';
import { loopOptions } from './loop-options.js';

export function offlineLoop(config: Config, ledger: Ledger, opts: { clock?: Clock; logger?: Logger } = {}): Loop {
  // Votes, silences and notes read no catalog; recall (which does) needs the running bot.
  const empty = buildCatalogSnapshot([], new PostingsIndex([]));
  const forge = config.forge !== undefined && config.catalog.git?.url !== undefined;
  return buildLoop({
    ...loopOptions(config),
    ledger,
    catalog: () => empty,
    clock: opts.clock ?? systemClock,
    logger: opts.logger ?? silentLogger,
    routing: new Routing({ transports: [], rules: [], mentions: [] }),
    // Filed by the bot's curation worker at its next start: nothing to wake here.
    ...(forge ? { curation: { worker: () => ({ kick: () => undefined }), minConfidence: config.forge!.min_confidence } } : {}),
  });
}
