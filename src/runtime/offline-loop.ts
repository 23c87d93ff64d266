/**
 * The loop as the CLI runs it when no bot does (`reprise feedback`, `note` with the store lock
 * held): the same `buildLoop`, the same decisions, the same ledger events — a 👎 rewrites the
 * card, a 🔕 restates it, a note is answered in its thread — with no chat surface running and no
 * outbox worker started: what must be shown waits in the outbox, and the bot delivers it when it
 * next runs. Forge work is recorded the same way and filed then. Requests go in through the same
 * kind of inbox as `serve`'s on the embedded store (the caller holds the store lock).
 */
import type { Config } from '../config/schema.js';
import { Routing } from '../core/bot/routing.js';
import type { Ledger } from '../core/ledger/ledger.js';
import { buildCatalogSnapshot } from '../core/recall/catalog-snapshot.js';
import { PostingsIndex } from '../core/search/postings-index.js';
import type { Inbox } from '../core/inbox/inbox.js';
import { LocalInbox } from '../core/inbox/local-inbox.js';
import { systemClock, type Clock } from '../ports/clock.js';
import { silentLogger, type Logger } from '../ports/logger.js';
import { buildLoop, type Loop } from './build-loop.js';
import { loopOptions } from './loop-options.js';

export function offlineLoop(config: Config, ledger: Ledger, opts: { clock?: Clock; logger?: Logger } = {}): Loop & { inbox: Inbox } {
  // Votes, silences and notes read no catalog; recall (which does) needs the running bot.
  const empty = buildCatalogSnapshot([], new PostingsIndex([]));
  const forge = config.forge !== undefined && config.catalog.git?.url !== undefined;
  const clock = opts.clock ?? systemClock;
  const loop = buildLoop({
    ...loopOptions(config),
    ledger,
    catalog: () => empty,
    clock,
    logger: opts.logger ?? silentLogger,
    routing: new Routing({ transports: [], rules: [], mentions: [] }),
    // Filed by the bot's curation worker at its next start: nothing to wake here.
    ...(forge ? { curation: { worker: () => ({ kick: () => undefined }), minConfidence: config.forge!.min_confidence } } : {}),
  });
  // Nothing runs beside the request: no outbox, no timers, no reload (the ledger was just opened).
  const inbox = new LocalInbox(clock);
  inbox.attach({ handle: (intents, o) => loop.bot.handle(intents, o), reload: async () => undefined, lead: () => undefined, follow: async () => undefined });
  return { ...loop, inbox };
}
