import { statSync } from 'node:fs';
import { createStore, embeddedStoreFile } from '../adapters/keyv/keyv-store.js';
import { storeLockPath, tryLockStore, type StoreLock } from '../adapters/keyv/store-lock.js';
import { configRedactor } from '../config/config-secrets.js';
import type { Config } from '../config/schema.js';
import { maskUrl } from '../core/redact.js';
import { isRepriseError } from '../core/errors.js';
import { Ledger } from '../core/ledger/ledger.js';
import type { LedgerEvent } from '../core/ledger-events.js';
import type { Logger } from '../ports/logger.js';
import type { Fence, KeyValueStore } from '../ports/store.js';
import { readServeOwner } from './serve-owner.js';

/** Where the configured store lives, for messages (`store.url` or the embedded file). */
export function describeStore(config: Config): string {
  // A Redis URL may carry a password (redis://:secret@host): never into a log or a message.
  const url = config.store.url === undefined ? undefined : maskUrl(config.store.url);
  return url ?? embeddedStoreFile(undefined, config.store.data_dir) ?? config.store.data_dir;
}

/** Why the store may be wrong, said before it is opened (an empty file starts an empty ledger). */
export function storeWarnings(config: Config): string[] {
  const file = embeddedStoreFile(config.store.url, config.store.data_dir);
  if (file === undefined) return [];
  try {
    if (statSync(file).size === 0) {
      return [`the store file ${file} is empty (0 bytes): starting with an empty ledger. If it held events, stop and restore it from a backup.`];
    }
  } catch {
    // absent: a first start
  }
  return [];
}

export class StoreLockedError extends Error {
  readonly holderPid: number | undefined;
  constructor(holderPid: number | undefined, message: string) {
    super(message);
    this.name = 'StoreLockedError';
    this.holderPid = holderPid;
  }
}

/**
 * Take the store's writer lock (embedded store only; `undefined` when the store needs none).
 * @throws StoreLockedError naming the holder and the fix when another process holds it.
 */
export function lockStore(config: Config, command: string): StoreLock | undefined {
  const path = storeLockPath(config.store.url, config.store.data_dir);
  if (path === undefined) return undefined;
  const lock = tryLockStore(path);
  if (lock) return lock;
  const owner = readServeOwner(config.store.data_dir);
  const who = owner ? `reprise serve (pid ${owner.pid}, user ${owner.user || '?'}, since ${owner.startedAt || '?'})` : 'another reprise process';
  throw new StoreLockedError(
    owner?.pid,
    `${command}: the store ${describeStore(config)} is in use by ${who}. One process writes a store at a time: ` +
      `stop it${owner ? ` (kill ${owner.pid})` : ''}, or give this one its own data dir (REPRISE_DATA_DIR or store.data_dir in --config).`,
  );
}

/** A store several replicas share (Redis): they elect a leader instead of taking a file lock. */
export function isSharedStore(config: Config): boolean {
  return /^rediss?:/i.test(config.store.url?.trim() ?? '');
}

/** How a process uses the store it opens. */
export type StoreMode = 'write' | 'read';

/**
 * The one way to open the configured store. `write`: the process that writes it (serve, an
 * offline CLI write, an import — under the store lock or a replica's lease). `read`: a reader
 * beside the bot — the embedded file opened read-only (nothing created, any write refused by
 * sqlite itself), Redis never written. `url` opens another store than the configured one
 * (`--store`).
 */
export function openStore(config: Config, mode: StoreMode, url: string | undefined = config.store.url): KeyValueStore {
  return createStore(url, config.store.data_dir, mode === 'read' ? { readOnly: true } : {});
}

/**
 * Opens the configured store (or takes `opts.store`, already opened) and its ledger (the caller
 * holds the lock when it will write); the store is closed again when the ledger cannot open.
 * `fence`: on a shared store, the leader's fencing token for every write (see LedgerOptions).
 */
export async function openLedger(
  config: Config,
  logger?: Logger,
  opts: { store?: KeyValueStore; fence?: () => Fence | undefined; onAppend?: (events: readonly LedgerEvent[]) => void } = {},
): Promise<{ store: KeyValueStore; ledger: Ledger }> {
  const store = opts.store ?? openStore(config, 'write');
  try {
    const ledger = await Ledger.open(store, {
      snapshotEvery: config.store.snapshot_every,
      resolveWindowMs: config.ledger.resolve_window_ms,
      // Every caller writes (under the store lock, or as a replica's leader): it keeps the schema current.
      migrate: true,
      ...(logger ? { logger } : {}),
      ...(opts.fence ? { fence: opts.fence } : {}),
      ...(opts.onAppend ? { onAppend: opts.onAppend } : {}),
      // Every event (chat messages are outbox events) is masked before it is kept or sent.
      redact: configRedactor(config).value,
    });
    return { store, ledger };
  } catch (err) {
    await store.close().catch(() => undefined);
    // A schema refusal carries its own fix ("upgrade reprise"); another store is not it.
    const hint = isRepriseError(err) && err.userMessage !== undefined ? '' : '; set store.data_dir (REPRISE_DATA_DIR) or store.url';
    throw new Error(`cannot open the ledger store (${describeStore(config)}): ${(err as Error).message}${hint}`, { cause: err });
  }
}
