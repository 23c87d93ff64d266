/**
 * The ledger's contract with its callers: how it is opened, what a transaction can do, and
 * what an append returns (the writer itself is ledger.ts).
 */
import type { Fence } from '../../ports/store.js';
import type { Logger } from '../../ports/logger.js';
import type { LedgerEvent } from '../ledger-events.js';
import type { Episode, LedgerLimits } from './ledger-state.js';

export interface LedgerOptions {
  /** Write a snapshot every this many events (default 1000); 0 disables periodic snapshots. */
  snapshotEvery?: number;
  /** Characters of snapshot text per stored part (default `SNAPSHOT_PART_CHARS`, 4 Mi). */
  snapshotPartChars?: number;
  /** Bounds of the read model (part of the state; changing them invalidates older snapshots). */
  limits?: Partial<LedgerLimits>;
  /** A recall still unresolved this long after its open counts as a failure (default 24 h). */
  resolveWindowMs?: number;
  /** Told the events of each durable append this process made (metrics); must not throw. */
  onAppend?: (events: readonly LedgerEvent[]) => void;
  logger?: Logger;
  /**
   * On a store several replicas share: the leader's fencing token, read at each write
   * (`undefined` while this replica does not lead — its writes are refused, nothing written).
   * Absent: this process owns the store (the embedded file lock) and always writes.
   */
  fence?: () => Fence | undefined;
  /**
   * This ledger is the store's writer: bring the store's schema up to this build's before the
   * first write (at open when it may write, else when it takes the lead or first writes).
   * Without it the ledger only checks the schema (a newer store is refused either way).
   */
  migrate?: boolean;
  /**
   * `reprise ledger import` writing into the store it marked as being imported; every other
   * open refuses a store with that mark (a half-finished import).
   */
  importing?: boolean;
  /**
   * Masks secrets in each event as it is recorded (the one redactor's `value`): what the ledger
   * keeps — and the chat messages its outbox events become — never carries a known secret.
   */
  redact?: (event: LedgerEvent) => LedgerEvent;
}

/** Options of one {@link Ledger.transaction}. */
export interface TransactionOptions {
  /**
   * Idempotency key: a transaction with an id the store already appended writes nothing
   * (and the read model is reloaded from the store, which holds the first one's events).
   */
  id?: string;
}

export const DEFAULT_RESOLVE_WINDOW_MS = 24 * 3_600_000;

/** What one append produced: its sequence number and the episode it closed, if any. */
export interface AppendResult {
  seq: number;
  closed?: Episode;
}

/** Events recorded together: applied to the read model as they are staged, durable together. */
export interface LedgerTx {
  /** Validate and apply `event` now; it becomes durable when the transaction commits. */
  record(event: LedgerEvent): { closed?: Episode };
  /** Events staged so far. */
  readonly size: number;
}
