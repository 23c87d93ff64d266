/** Opening the configured store for the read-only ledger commands, and how they report it. */
import { existsSync } from 'node:fs';
import { embeddedStoreFile } from '../adapters/keyv/keyv-store.js';
import type { Config } from '../config/schema.js';
import { isRepriseError } from '../core/errors.js';
import type { LedgerVerification } from '../core/ledger/ledger-verify.js';
import { checkStoreSchemaForReading, STORE_SCHEMA_VERSION, type StoreSchemaStatus } from '../core/ledger/store-schema.js';
import type { KeyValueStore } from '../ports/store.js';
import type { CliIO } from './cli-io.js';
import { describeStore, openStore } from './open-store.js';

/**
 * Opens the configured store for reading, after checking its schema version: `exit` (with a
 * message) when there is no ledger yet (0) or the store is of a newer build (1).
 */
export async function openForReading(
  config: Config,
  io: CliIO,
  command = 'reprise ledger',
): Promise<{ store: KeyValueStore; schema: StoreSchemaStatus } | { exit: number }> {
  const file = embeddedStoreFile(config.store.url, config.store.data_dir);
  if (file !== undefined && !existsSync(file)) {
    io.stderr(`${command}: no ledger at ${file} yet (nothing recorded); set REPRISE_DATA_DIR or --config to read another\n`);
    return { exit: 0 };
  }
  const store = openStore(config, 'read');
  try {
    return { store, schema: await checkStoreSchemaForReading(store) };
  } catch (err) {
    await store.close().catch(() => undefined);
    if (!isRepriseError(err)) throw err;
    io.stderr(`${command}: ${describeStore(config)}: ${err.message}\n`);
    return { exit: 1 };
  }
}

/** The store's schema, as `verify` reports it. */
export function describeSchema(s: StoreSchemaStatus): string {
  if (s.recorded)
    return `store schema version ${s.version}${s.pending.length > 0 ? ` (this build writes ${STORE_SCHEMA_VERSION}; the bot migrates it at its next start)` : ''}`;
  if (s.empty) return `store schema version not recorded yet (an empty store; the bot records ${STORE_SCHEMA_VERSION} at its first start)`;
  return `store schema version not recorded (a store written before versions were recorded: read as version ${s.version}; the bot records ${STORE_SCHEMA_VERSION} at its next start)`;
}

/** The snapshot check, in one line (also what `ledger import` prints after writing). */
export function describeVerification(v: LedgerVerification): string {
  switch (v.snapshot) {
    case 'none':
      return 'no stored snapshot yet: nothing to compare (the bot writes one every store.snapshot_every events and on shutdown)';
    case 'old_format':
      return `the stored snapshot (seq ${v.snapshotSeq}) is of an older format: it is ignored at load, and rewritten at the next snapshot`;
    case 'past_end':
      return `the stored snapshot claims seq ${v.snapshotSeq}, past the log's end (${v.total}): it is ignored at load`;
    case 'mismatch':
      return `MISMATCH between the stored aggregates (seq ${v.snapshotSeq}) and a replay: ${v.mismatch}`;
    case 'match':
      return `stored aggregates at seq ${v.snapshotSeq} match a replay of the log`;
  }
}
