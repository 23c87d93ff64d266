/**
 * The ledger as a reader beside the running bot sees it (`reprise mcp`): the embedded sqlite
 * file opened read-only (nothing created, any write refused by sqlite itself), Redis read and
 * never written. The bot is the single writer; this view follows it by re-reading the log when
 * the stored head moved, at most once per `refresh`.
 */
import { existsSync } from 'node:fs';
import { embeddedStoreFile } from '../adapters/keyv/keyv-store.js';
import type { Config } from '../config/schema.js';
import { LedgerReader } from '../core/ledger/ledger-reader.js';
import { readHead } from '../core/ledger/ledger-records.js';
import { Ledger } from '../core/ledger/ledger.js';
import type { Logger } from '../ports/logger.js';
import type { KeyValueStore } from '../ports/store.js';
import { describeStore, openStore } from './open-store.js';
import { maskUrl } from '../core/redact.js';

export interface ReadOnlyLedger {
  /** Where it reads (a Redis password masked). */
  readonly source: string;
  /** The ledger's reader as last read (an empty ledger while there is none yet). */
  readonly read: LedgerReader;
  /** Re-read the store when the bot appended since; a failing store keeps the last good view. */
  refresh(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Opens the configured store (or `storeUrl`) for reading. An embedded file that does not exist
 * yet is an empty ledger until the bot creates it, never created here.
 */
export function openReadOnlyLedger(config: Config, logger: Logger, storeUrl?: string): ReadOnlyLedger {
  const url = storeUrl ?? config.store.url;
  const file = embeddedStoreFile(url, config.store.data_dir);
  const source = storeUrl === undefined ? describeStore(config) : (file ?? (url === undefined ? '' : maskUrl(url)));
  const windowMs = config.ledger.resolve_window_ms;
  const empty = LedgerReader.empty(windowMs);
  let store: KeyValueStore | undefined;
  let ledger: Ledger | undefined;
  let refreshing: Promise<void> | undefined;

  const load = async (): Promise<void> => {
    if (!store && file !== undefined && !existsSync(file)) return;
    try {
      store ??= openStore(config, 'read', url);
      if (ledger && (await readHead(store)) === ledger.seq) return;
      // Ledger.open only reads (snapshot, then the log after it); its writer side is never used.
      ledger = await Ledger.open(store, { resolveWindowMs: windowMs, logger });
    } catch (err) {
      logger.warn({ err, store: source }, `cannot read the ledger (${(err as Error).message}); serving the last good view`);
    }
  };

  return {
    source,
    get read() {
      return ledger?.read ?? empty;
    },
    refresh: () => {
      // Concurrent tool calls share one re-read.
      refreshing ??= load().finally(() => (refreshing = undefined));
      return refreshing;
    },
    // The store is closed without `ledger.close()`, which would write a snapshot.
    close: async () => {
      await store?.close();
    },
  };
}
